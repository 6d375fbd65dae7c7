# workers/: the worker skeleton (libshiroworker) and the model worker.

OBJS += $(BUILD)/workers/worker.o
$(WORKER_LIB): $(BUILD)/workers/worker.o

MODEL_OBJS := $(BUILD)/workers/model/model.o $(BUILD)/workers/model/offline.o
OBJS += $(MODEL_OBJS)
BINS += $(BUILD)/shiro-model-worker
$(BUILD)/shiro-model-worker: LDLIBS += $(LIBS_ZMQ) $(LIBS_SECCOMP)
$(BUILD)/shiro-model-worker: $(MODEL_OBJS) $(WORKER_LIB) $(SANDBOX_LIB) \
    $(PROTO_LIB) $(UTIL_LIB)
	$(link)

# Tests: the offline summarizer on its own, and the skeleton with real
# processes (the model worker, and a test role that exercises the rest).
TESTS += $(BUILD)/tests/test_worker_offline $(BUILD)/tests/test_worker
OBJS += $(BUILD)/tests/test_worker_offline.o $(BUILD)/tests/test_worker.o \
	$(BUILD)/tests/worker_testrole.o
$(BUILD)/tests/test_worker_offline: $(BUILD)/tests/test_worker_offline.o \
    $(BUILD)/workers/model/offline.o $(HARNESS_OBJ) $(UTIL_LIB)
	$(link)
$(BUILD)/tests/worker_testrole: LDLIBS += $(LIBS_ZMQ) $(LIBS_SECCOMP)
$(BUILD)/tests/worker_testrole: $(BUILD)/tests/worker_testrole.o \
    $(WORKER_LIB) $(SANDBOX_LIB) $(PROTO_LIB) $(UTIL_LIB)
	$(link)
$(BUILD)/tests/test_worker: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/tests/test_worker: $(BUILD)/tests/test_worker.o $(HARNESS_OBJ) \
    $(PROTO_LIB) $(UTIL_LIB) | $(BUILD)/shiro-model-worker \
    $(BUILD)/tests/worker_testrole
	$(link)

# The worker escape suite: a payload that real shirod starts as a worker
# program of each role, which locks down with the role's own code and
# then attacks; the test judges by the host's state.
ESCAPE_OBJS := $(BUILD)/tests/worker_escape.o $(BUILD)/tests/test_worker_escape.o
OBJS += $(ESCAPE_OBJS)
$(BUILD)/tests/worker_escape: $(BUILD)/tests/worker_escape.o $(WORKERS_LINK)
	$(link)
$(BUILD)/tests/worker_escape: LDLIBS += $(TOOLS_LDLIBS) $(LIBS_ZMQ) \
	$(LIBS_CURL) -lpthread
TESTS += $(BUILD)/tests/test_worker_escape
$(BUILD)/tests/test_worker_escape: $(BUILD)/tests/test_worker_escape.o \
	$(BUILD)/tests/test_shirod_util.o $(JAIL_TEST_LIB) $(HARNESS_OBJ) \
	$(PROTO_LIB) $(SANDBOX_LIB) $(UTIL_LIB) | $(BUILD)/shirod \
	$(BUILD)/shiro-model-worker $(BUILD)/tests/worker_escape
	$(link)
$(BUILD)/tests/test_worker_escape: LDLIBS += $(LIBS_ZMQ) $(LIBS_SECCOMP)
