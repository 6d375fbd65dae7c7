# client/: shiro, the client (docs/client.md).

# Everything but main() goes into a library, so the tests can link the
# parts they test (the JSON writer, the history file).
CLIENT_LIB := $(BUILD)/libshiroclient.a
CLIENT_SRCS := client/attach.c client/cmd.c client/conn.c client/daemon.c \
	client/edit.c client/helper.c client/hist.c client/json_out.c \
	client/project.c client/remote.c client/render.c client/run.c \
	client/turn.c \
	client/usage.c
CLIENT_OBJS := $(CLIENT_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(CLIENT_OBJS) $(BUILD)/client/shiro.o
$(CLIENT_LIB): $(CLIENT_OBJS)

# shiro-client is the whole client.  build/shiro is the front: the same
# shiro.c built with SHIRO_FRONT and without ZeroMQ or libedit (whose
# libraries take some 3.5 ms to load), which runs the helper commands
# itself and execs shiro-client for the rest.  The front stays dynamic:
# static glibc cannot look a user up without HOME.
BINS += $(BUILD)/shiro-client $(BUILD)/shiro
$(BUILD)/shiro-client: LDLIBS += $(LIBS_EDIT) $(LIBS_ZMQ)
$(BUILD)/shiro-client: $(BUILD)/client/shiro.o $(CLIENT_LIB) $(PROTO_LIB) \
    $(UTIL_LIB)
	$(link)

OBJS += $(BUILD)/client/shiro-front.o
$(BUILD)/client/shiro-front.o: client/shiro.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DSHIRO_FRONT -c -o $@ $<

$(BUILD)/shiro: $(BUILD)/client/shiro-front.o $(CLIENT_LIB) $(UTIL_LIB) \
    | $(BUILD)/shiro-client
	$(link)

TESTS += $(BUILD)/tests/test_client
OBJS += $(BUILD)/tests/test_client.o
$(BUILD)/tests/test_client: LDLIBS += $(LIBS_EDIT) $(LIBS_ZMQ)
$(BUILD)/tests/test_client: $(BUILD)/tests/test_client.o $(HARNESS_OBJ) \
    $(CLIENT_LIB) $(PROTO_LIB) $(UTIL_LIB)
	$(link)

# The client's scripts run the programs of the build being checked (the
# sanitizer build under make asan).
export SHIRO_BIN = $(BUILD)/shiro
SCRIPT_TESTS += tests/test_client_cli.sh
SCRIPT_TESTS += tests/test_client_daemon.sh
SCRIPT_TESTS += tests/test_client_turn.sh
# The first run through a pseudo-terminal, the commands a new user meets,
# make deps run; make install into temporary directories.
SCRIPT_TESTS += tests/test_client_first.py tests/test_install.sh
# A turn with tools at the prompt: approvals answered y and n, Ctrl-C
# interrupting a command.
SCRIPT_TESTS += tests/test_client_agent.py
