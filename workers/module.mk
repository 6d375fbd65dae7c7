# workers/: the worker skeleton (libshiroworker) and the model worker.

OBJS += $(BUILD)/workers/worker.o
$(WORKER_LIB): $(BUILD)/workers/worker.o

# The model worker: the wires and their parsers (no libcurl) go in
# MODEL_CORE, which the fuzz targets and unit tests link too; http.c,
# probe.c and loop.c drive libcurl.
MODEL_CORE := $(BUILD)/workers/model/sse.o $(BUILD)/workers/model/mjson.o \
	$(BUILD)/workers/model/wire.o $(BUILD)/workers/model/anthropic.o \
	$(BUILD)/workers/model/responses.o $(BUILD)/workers/model/chat.o \
	$(BUILD)/workers/model/reply.o $(BUILD)/workers/model/request.o \
	$(BUILD)/workers/model/retry.o $(BUILD)/workers/model/tries.o \
	$(BUILD)/workers/model/offline.o
MODEL_OBJS := $(MODEL_CORE) $(BUILD)/workers/model/model.o \
	$(BUILD)/workers/model/loop.o $(BUILD)/workers/model/http.o \
	$(BUILD)/workers/model/probe.o
OBJS += $(MODEL_OBJS)
BINS += $(BUILD)/shiro-model-worker
$(BUILD)/shiro-model-worker: LDLIBS += $(LIBS_CURL) $(LIBS_JSON) $(LIBS_ZMQ) \
	$(LIBS_SECCOMP) -lm
$(BUILD)/shiro-model-worker: $(MODEL_OBJS) $(WORKER_LIB) $(SANDBOX_LIB) \
    $(PROTO_LIB) $(UTIL_LIB)
	$(link)

# shiro-worker: a model worker on another machine, over tcp and CURVE
# (docs/remote.md); it runs shiro-model-worker with its own keys.
BINS += $(BUILD)/shiro-worker
OBJS += $(BUILD)/workers/shiro-worker.o
$(BUILD)/shiro-worker: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/shiro-worker: $(BUILD)/workers/shiro-worker.o $(PROTO_LIB) \
    $(UTIL_LIB) | $(BUILD)/shiro-model-worker
	$(link)

# Remote attach and remote workers in network namespaces the test makes
# (tests/test_remote.c), with the peers of tests/remote_peer.c.
OBJS += $(BUILD)/tests/remote_peer.o $(BUILD)/tests/test_remote.o
$(BUILD)/tests/remote_peer: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/tests/remote_peer: $(BUILD)/tests/remote_peer.o $(PROTO_LIB) \
    $(UTIL_LIB)
	$(link)
TESTS += $(BUILD)/tests/test_remote
$(BUILD)/tests/test_remote: LDLIBS += $(LIBS_JSON) $(LIBS_ZMQ)
$(BUILD)/tests/test_remote: $(BUILD)/tests/test_remote.o \
    $(BUILD)/tests/mock_util.o $(BUILD)/tests/test_shirod_util.o \
    $(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB) | $(BUILD)/shirod \
    $(BUILD)/shiro $(BUILD)/shiro-client $(BUILD)/shiro-worker \
    $(BUILD)/shiro-model-worker $(BUILD)/tests/remote_peer
	$(link)

# make bench: STATUS over tcp+CURVE against ipc, and compaction
# throughput with 1, 2 and 4 remote workers.
BENCHES += $(BUILD)/tests/bench_remote
OBJS += $(BUILD)/tests/bench_remote.o $(BUILD)/tests/bench_util.o
$(BUILD)/tests/bench_remote: LDLIBS += $(LIBS_JSON) $(LIBS_ZMQ)
$(BUILD)/tests/bench_remote: $(BUILD)/tests/bench_remote.o \
    $(BUILD)/tests/bench_util.o $(BUILD)/tests/mock_util.o \
    $(BUILD)/tests/test_shirod_util.o $(HARNESS_OBJ) $(PROTO_LIB) \
    $(UTIL_LIB) | $(BUILD)/shirod \
    $(BUILD)/shiro-worker $(BUILD)/shiro-model-worker
	$(link)

# Tests: the offline summarizer on its own, and the skeleton with real
# processes (the model worker, and a test role that exercises the rest).
TESTS += $(BUILD)/tests/test_worker_offline $(BUILD)/tests/test_worker
OBJS += $(BUILD)/tests/test_worker_offline.o $(BUILD)/tests/test_worker.o \
	$(BUILD)/tests/worker_testrole.o $(BUILD)/tests/worker_util.o
$(BUILD)/tests/test_worker_offline: $(BUILD)/tests/test_worker_offline.o \
    $(BUILD)/workers/model/offline.o $(HARNESS_OBJ) $(UTIL_LIB)
	$(link)
$(BUILD)/tests/worker_testrole: LDLIBS += $(LIBS_ZMQ) $(LIBS_SECCOMP)
$(BUILD)/tests/worker_testrole: $(BUILD)/tests/worker_testrole.o \
    $(WORKER_LIB) $(SANDBOX_LIB) $(PROTO_LIB) $(UTIL_LIB)
	$(link)
$(BUILD)/tests/test_worker: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/tests/test_worker: $(BUILD)/tests/test_worker.o \
    $(BUILD)/tests/worker_util.o $(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB) | \
    $(BUILD)/shiro-model-worker \
    $(BUILD)/tests/worker_testrole
	$(link)

# The model worker against the mock provider (tests/mock_provider.py).
MODEL_TEST_UTIL := $(BUILD)/tests/model_util.o $(BUILD)/tests/mock_util.o \
	$(BUILD)/tests/worker_util.o
TESTS += $(BUILD)/tests/test_model
OBJS += $(BUILD)/tests/test_model.o $(BUILD)/tests/model_util.o \
	$(BUILD)/tests/mock_util.o
$(BUILD)/tests/test_model: LDLIBS += $(LIBS_JSON) $(LIBS_ZMQ)
$(BUILD)/tests/test_model: $(BUILD)/tests/test_model.o $(MODEL_TEST_UTIL) \
    $(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB) | $(BUILD)/shiro-model-worker
	$(link)
TESTS += $(BUILD)/tests/test_model_faults
OBJS += $(BUILD)/tests/test_model_faults.o
$(BUILD)/tests/test_model_faults: LDLIBS += $(LIBS_JSON) $(LIBS_ZMQ)
$(BUILD)/tests/test_model_faults: $(BUILD)/tests/test_model_faults.o \
    $(MODEL_TEST_UTIL) $(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB) | \
    $(BUILD)/shiro-model-worker
	$(link)
TESTS += $(BUILD)/tests/test_model_units
OBJS += $(BUILD)/tests/test_model_units.o
$(BUILD)/tests/test_model_units: LDLIBS += -lm $(LIBS_JSON) $(LIBS_ZMQ)
$(BUILD)/tests/test_model_units: $(BUILD)/tests/test_model_units.o \
    $(MODEL_CORE) $(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB)
	$(link)

# make bench: compaction throughput and CANCEL latency at the worker.
BENCHES += $(BUILD)/tests/bench_model
OBJS += $(BUILD)/tests/bench_model.o
$(BUILD)/tests/bench_model: LDLIBS += $(LIBS_JSON) $(LIBS_ZMQ)
$(BUILD)/tests/bench_model: $(BUILD)/tests/bench_model.o $(MODEL_TEST_UTIL) \
    $(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB) | $(BUILD)/shiro-model-worker
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
