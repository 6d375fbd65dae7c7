# proto/: the messages between processes and the small utilities every
# binary links.

PROTO_UTIL_SRCS := proto/log.c proto/xmalloc.c proto/buf.c proto/err.c \
	proto/mono.c proto/path.c proto/sha256.c \
	proto/provider_preset.c
PROTO_UTIL_OBJS := $(PROTO_UTIL_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(PROTO_UTIL_OBJS)

# libshiroutil: the generic utilities, linked by every program.
$(UTIL_LIB): $(PROTO_UTIL_OBJS)

# libshiroproto: the messages (catalog.def, msg.c), the sockets
# (zsock.c) and the CURVE keys on disk (keys.c).  Programs that link it add $(LIBS_ZMQ) to their LDLIBS.
PROTO_MSG_OBJS := $(BUILD)/proto/msg.o $(BUILD)/proto/zsock.o \
	$(BUILD)/proto/keys.o
OBJS += $(PROTO_MSG_OBJS)
$(PROTO_LIB): $(PROTO_MSG_OBJS)

TESTS += $(BUILD)/tests/test_proto
OBJS += $(BUILD)/tests/test_proto.o
$(BUILD)/tests/test_proto: LDLIBS += $(LIBS_ZMQ) $(LIBS_MSGPACK)
$(BUILD)/tests/test_proto: $(BUILD)/tests/test_proto.o $(HARNESS_OBJ) \
    $(PROTO_LIB) $(UTIL_LIB)
	$(link)

# The CURVE keys on disk (keys.c): pairs, lists, remotes.
TESTS += $(BUILD)/tests/test_remote_keys
OBJS += $(BUILD)/tests/test_remote_keys.o
$(BUILD)/tests/test_remote_keys: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/tests/test_remote_keys: $(BUILD)/tests/test_remote_keys.o \
    $(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB)
	$(link)
