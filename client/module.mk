# client/: shiro, the client (docs/client.md).

# Everything but main() goes into a library, so the tests can link the
# parts they test (the JSON writer, the history file, SHA-256).
CLIENT_LIB := $(BUILD)/libshiroclient.a
CLIENT_SRCS := client/attach.c client/cmd.c client/conn.c client/daemon.c \
	client/edit.c client/helper.c client/hist.c client/json_out.c \
	client/render.c client/sha256.c
CLIENT_OBJS := $(CLIENT_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(CLIENT_OBJS) $(BUILD)/client/shiro.o
$(CLIENT_LIB): $(CLIENT_OBJS)

BINS += $(BUILD)/shiro
$(BUILD)/shiro: LDLIBS += $(LIBS_EDIT) $(LIBS_ZMQ)
$(BUILD)/shiro: $(BUILD)/client/shiro.o $(CLIENT_LIB) $(PROTO_LIB) \
    $(UTIL_LIB)
	$(link)

TESTS += $(BUILD)/tests/test_client
OBJS += $(BUILD)/tests/test_client.o
$(BUILD)/tests/test_client: LDLIBS += $(LIBS_EDIT) $(LIBS_ZMQ)
$(BUILD)/tests/test_client: $(BUILD)/tests/test_client.o $(HARNESS_OBJ) \
    $(CLIENT_LIB) $(PROTO_LIB) $(UTIL_LIB)
	$(link)

SCRIPT_TESTS += tests/test_client_cli.sh
SCRIPT_TESTS += tests/test_client_daemon.sh
