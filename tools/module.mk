# tools/: the catalogue of tools the model may call, the permission
# engine and the guard.

TOOLS_SRCS := tools/tool.c tools/text.c tools/ws.c tools/match.c \
	tools/walk.c tools/shwords.c tools/perm.c tools/vec.c \
	tools/read_file.c tools/read_many_files.c tools/write_file.c \
	tools/edit_file.c tools/multi_edit.c tools/apply_patch.c \
	tools/move_file.c tools/delete_file.c tools/list_dir.c tools/glob.c \
	tools/grep.c tools/rg.c tools/bash.c
TOOLS_OBJS := $(TOOLS_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(TOOLS_OBJS)

$(TOOLS_LIB): $(TOOLS_OBJS)

# Every program that links the catalogue: the jail (for bash), jansson.
TOOLS_LINK := $(TOOLS_LIB) $(SANDBOX_LIB) $(UTIL_LIB)
TOOLS_LDLIBS := $(LIBS_JSON) $(LIBS_SECCOMP)

TOOLS_TESTS := test_perm test_tools test_tools_escape test_tools_atomic \
	test_tools_bash
TESTS += $(TOOLS_TESTS:%=$(BUILD)/tests/%)
OBJS += $(TOOLS_TESTS:%=$(BUILD)/tests/%.o)

# The helpers every catalogue test links.
TOOLS_TEST_UTIL := $(BUILD)/tests/test_tools_util.o
OBJS += $(TOOLS_TEST_UTIL)
$(foreach t,$(TOOLS_TESTS),$(eval $(BUILD)/tests/$(t): \
	$(BUILD)/tests/$(t).o $(TOOLS_TEST_UTIL) $(HARNESS_OBJ) $(TOOLS_LINK)))
$(TOOLS_TESTS:%=$(BUILD)/tests/%): LDLIBS += $(TOOLS_LDLIBS) -lpthread
$(TOOLS_TESTS:%=$(BUILD)/tests/%):
	$(link)

# The worker programs that run the catalogue live in workers/tool/ and
# workers/fs/; their rules are here because the top Makefile includes
# only one level of module.mk.
TOOL_SERVICE_OBJ := $(BUILD)/workers/tool/service.o
TOOL_WORKER_OBJS := $(BUILD)/workers/tool/main.o $(BUILD)/workers/tool/once.o
FS_WORKER_OBJS := $(BUILD)/workers/fs/main.o
OBJS += $(TOOL_SERVICE_OBJ) $(TOOL_WORKER_OBJS) $(FS_WORKER_OBJS)
BINS += $(BUILD)/shiro-tool-worker $(BUILD)/shiro-fs-worker
WORKERS_LINK := $(TOOL_SERVICE_OBJ) $(WORKER_LIB) $(PROTO_LIB) $(TOOLS_LINK)
$(BUILD)/shiro-tool-worker: $(TOOL_WORKER_OBJS) $(WORKERS_LINK)
$(BUILD)/shiro-fs-worker: $(FS_WORKER_OBJS) $(WORKERS_LINK)
$(BUILD)/shiro-tool-worker $(BUILD)/shiro-fs-worker: \
    LDLIBS += $(TOOLS_LDLIBS) $(LIBS_ZMQ)
$(BUILD)/shiro-tool-worker $(BUILD)/shiro-fs-worker:
	$(link)

SCRIPT_TESTS += tests/tools_once.sh

# The workers as processes, with the test as their broker.
TESTS += $(BUILD)/tests/test_tools_worker
OBJS += $(BUILD)/tests/test_tools_worker.o
$(BUILD)/tests/test_tools_worker: LDLIBS += $(TOOLS_LDLIBS) $(LIBS_ZMQ)
$(BUILD)/tests/test_tools_worker: $(BUILD)/tests/test_tools_worker.o \
    $(TOOLS_TEST_UTIL) $(HARNESS_OBJ) $(PROTO_LIB) $(TOOLS_LINK) | \
    $(BUILD)/shiro-fs-worker $(BUILD)/shiro-tool-worker
	$(link)
