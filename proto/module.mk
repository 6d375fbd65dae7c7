# proto/: the messages between processes and the small utilities every
# binary links.

PROTO_UTIL_SRCS := proto/log.c proto/xmalloc.c proto/buf.c proto/err.c \
	proto/mono.c proto/path.c
PROTO_UTIL_OBJS := $(PROTO_UTIL_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(PROTO_UTIL_OBJS)

# libshiroutil: the generic utilities, linked by every program.
$(UTIL_LIB): $(PROTO_UTIL_OBJS)

# libshiroproto: the messages (catalog.def, msg.c) and the sockets
# (zsock.c).  Programs that link it add $(LIBS_ZMQ) to their LDLIBS.
PROTO_MSG_OBJS := $(BUILD)/proto/msg.o $(BUILD)/proto/zsock.o
OBJS += $(PROTO_MSG_OBJS)
$(PROTO_LIB): $(PROTO_MSG_OBJS)

TESTS += $(BUILD)/tests/test_proto
OBJS += $(BUILD)/tests/test_proto.o
$(BUILD)/tests/test_proto: LDLIBS += $(LIBS_ZMQ) $(LIBS_MSGPACK)
$(BUILD)/tests/test_proto: $(BUILD)/tests/test_proto.o $(HARNESS_OBJ) \
    $(PROTO_LIB) $(UTIL_LIB)
	$(link)

# make fuzz: the decoder under libFuzzer (clang), for FUZZ_TIME seconds,
# starting from one seed per message type in tests/fuzz/corpus/.  New
# inputs go to $(BUILD)/fuzz/corpus; crashes to $(BUILD)/fuzz/.
FUZZ_TIME ?= 60
FUZZ_SRCS := tests/fuzz/fuzz_msg.c proto/msg.c proto/utf8.c proto/buf.c \
	proto/xmalloc.c proto/log.c proto/err.c
$(BUILD)/fuzz/fuzz_msg: $(FUZZ_SRCS) proto/msg.h proto/catalog.def
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -I. -g -O1 \
		-fsanitize=fuzzer,address,undefined -o $@ $(FUZZ_SRCS) -lzmq

fuzz: $(BUILD)/fuzz/fuzz_msg
	@mkdir -p $(BUILD)/fuzz/corpus
	cd $(BUILD)/fuzz && ./fuzz_msg -max_total_time=$(FUZZ_TIME) \
		-max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
		corpus $(CURDIR)/tests/fuzz/corpus
