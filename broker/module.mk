# broker/: shirod and the planner.

# --- planner (docs/planner.md): the pure planner library, the renderer, the
# --- scenario runner build/shiro-plan, its tests, mutants and bench.
# The planner and the renderer are pure C: libshiroplan holds them.
PLAN_SRCS := broker/plan.c broker/render.c
PLAN_OBJS := $(PLAN_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(PLAN_OBJS) $(BUILD)/broker/shiro-plan.o
$(PLAN_LIB): $(PLAN_OBJS)

BINS += $(BUILD)/shiro-plan
$(BUILD)/shiro-plan: $(BUILD)/broker/shiro-plan.o $(PLAN_LIB) $(UTIL_LIB)
	$(link)

TESTS += $(BUILD)/tests/test_plan
OBJS += $(BUILD)/tests/test_plan.o
$(BUILD)/tests/test_plan: $(BUILD)/tests/test_plan.o $(HARNESS_OBJ) \
    $(PLAN_LIB) $(UTIL_LIB)
	$(link)

# Each planner mutant must fail a test (MUTANTS_FULL=1 for every suite).
SCRIPT_TESTS += tests/mutants.sh

BENCHES += $(BUILD)/tests/bench_plan
OBJS += $(BUILD)/tests/bench_plan.o
$(BUILD)/tests/bench_plan: $(BUILD)/tests/bench_plan.o $(PLAN_LIB) $(UTIL_LIB) \
    | $(BUILD)/shiro-plan
	$(link)

# plan-demo: the planner on a chat of 3,000 messages at the gist's sizes
# (tests/scenarios/demo.txt): one line per batch, then the final view.
PLAN_DEMO_AWK := / batch=1 / { split($$0, a, " [|] "); n = split(a[2], f, " "); \
	m = f[5]; sub("merges=", "", m); nm = (m == "-") ? 0 : split(m, x, ","); \
	printf "batch at %s: %s %s, %d merges, %d lines\n", f[1], f[2], f[3], nm, n - 6 } \
	{ last = $$0 } END { print "final view:"; print last }
plan-demo: $(BUILD)/shiro-plan
	@$(BUILD)/shiro-plan tests/scenarios/demo.txt | awk '$(PLAN_DEMO_AWK)'
.PHONY: plan-demo
# --- end of the planner's block

# shirod
# --- shirod (docs/architecture.md): the daemon.  Its parts go into
# --- libshirod so that the unit tests link them; shirod.c holds only
# --- main().
SHIROD_LIB := $(BUILD)/libshirod.a
SHIROD_SRCS := broker/config.c broker/timer.c broker/pool.c broker/out.c \
	broker/clients.c broker/broker.c broker/serve.c broker/compact.c \
	broker/supervise.c broker/zap.c broker/remote.c broker/secret.c \
	broker/lograte.c \
	broker/procstat.c broker/provider.c broker/prompt.c broker/request.c \
	broker/gate.c broker/usage.c broker/turn.c broker/call.c broker/runs.c \
	broker/doctor.c broker/notes.c
SHIROD_OBJS := $(SHIROD_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(SHIROD_OBJS)
$(SHIROD_LIB): $(SHIROD_OBJS)
# shirod decides every tool call's permission with the catalogue's own
# engine (tools/perm.h): what links libshirod links the catalogue too.
SHIROD_TOOLS := $(TOOLS_LIB) $(SANDBOX_LIB)
SHIROD_TOOLS_LDLIBS := $(LIBS_JSON) $(LIBS_SECCOMP) -lpthread

BINS += $(BUILD)/shirod
OBJS += $(BUILD)/broker/shirod.o
$(BUILD)/shirod: LDLIBS += $(LIBS_ZMQ) $(LIBS_LMDB) $(SHIROD_TOOLS_LDLIBS)
$(BUILD)/shirod: $(BUILD)/broker/shirod.o $(SHIROD_LIB) $(BUILD)/broker/fold.o \
	$(PLAN_LIB) $(STORE_LIB) $(PROTO_LIB) $(SHIROD_TOOLS) $(UTIL_LIB)
	$(link)

TESTS += $(BUILD)/tests/test_shirod_parts $(BUILD)/tests/test_shirod \
	$(BUILD)/tests/test_shirod_hostile
OBJS += $(BUILD)/tests/test_shirod_parts.o $(BUILD)/tests/test_shirod.o \
	$(BUILD)/tests/test_shirod_util.o $(BUILD)/tests/test_shirod_hostile.o
$(BUILD)/tests/test_shirod_parts: LDLIBS += $(LIBS_ZMQ) $(LIBS_LMDB) \
	$(SHIROD_TOOLS_LDLIBS)
$(BUILD)/tests/test_shirod_parts: $(BUILD)/tests/test_shirod_parts.o \
	$(HARNESS_OBJ) $(SHIROD_LIB) $(BUILD)/broker/fold.o $(PLAN_LIB) \
	$(STORE_LIB) $(PROTO_LIB) $(SHIROD_TOOLS) $(UTIL_LIB)
	$(link)
# test_shirod runs build/shirod, the offline model worker and shiro-plan.
$(BUILD)/tests/test_shirod: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/tests/test_shirod: $(BUILD)/tests/test_shirod.o \
	$(BUILD)/tests/test_shirod_util.o $(HARNESS_OBJ) $(PROTO_LIB) \
	$(UTIL_LIB) | $(BUILD)/shirod $(BUILD)/shiro-plan
	$(link)
# test_shirod_hostile: odd requests, broken configs, a corrupt chat.
$(BUILD)/tests/test_shirod_hostile: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/tests/test_shirod_hostile: $(BUILD)/tests/test_shirod_hostile.o \
	$(BUILD)/tests/test_shirod_util.o $(HARNESS_OBJ) $(PROTO_LIB) \
	$(UTIL_LIB) | $(BUILD)/shirod $(BUILD)/shiro-plan
	$(link)

# test_shirod_trust: forged READY, a stolen key, workers and other uids
# as clients, keys in environments and shirod's memory; it is also the
# worker program those tests run.
TESTS += $(BUILD)/tests/test_shirod_trust
OBJS += $(BUILD)/tests/test_shirod_trust.o
$(BUILD)/tests/test_shirod_trust: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/tests/test_shirod_trust: $(BUILD)/tests/test_shirod_trust.o \
	$(BUILD)/tests/test_shirod_util.o $(HARNESS_OBJ) $(PROTO_LIB) \
	$(UTIL_LIB) | $(BUILD)/shirod
	$(link)

# test_shirod_fault: shirod under tests/fault/fault.so (LD_PRELOAD).
TESTS += $(BUILD)/tests/test_shirod_fault
OBJS += $(BUILD)/tests/test_shirod_fault.o
$(BUILD)/tests/test_shirod_fault: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/tests/test_shirod_fault: $(BUILD)/tests/test_shirod_fault.o \
	$(BUILD)/tests/test_shirod_util.o $(HARNESS_OBJ) $(PROTO_LIB) \
	$(UTIL_LIB) | $(BUILD)/shirod $(BUILD)/tests/fault.so
	$(link)

# make bench: round trips against raw ZeroMQ and the fsync floor, the
# ingest of 100,000 messages (SHIRO_BENCH_N), shirod's RSS.
BENCHES += $(BUILD)/tests/bench_shirod
OBJS += $(BUILD)/tests/bench_shirod.o
$(BUILD)/tests/bench_shirod: LDLIBS += $(LIBS_ZMQ)
$(BUILD)/tests/bench_shirod: $(BUILD)/tests/bench_shirod.o \
	$(BUILD)/tests/test_shirod_util.o $(PROTO_LIB) $(UTIL_LIB) \
	| $(BUILD)/shirod
	$(link)
# --- end of shirod's block

# store tools (fold, shiro-store)
# --- the fold of the planner from the store (broker/fold.c, which shirod
# --- links too: add $(FOLD_OBJ) to its prerequisites) and the command
# --- build/shiro-store (broker/shiro-store.c: fsck, export, import, gen).
FOLD_OBJ := $(BUILD)/broker/fold.o
OBJS += $(FOLD_OBJ) $(BUILD)/broker/shiro-store.o

BINS += $(BUILD)/shiro-store
$(BUILD)/shiro-store: LDLIBS += $(STORE_LDLIBS)
$(BUILD)/shiro-store: $(BUILD)/broker/shiro-store.o $(FOLD_OBJ) $(PLAN_LIB) \
	$(STORE_LIB) $(UTIL_LIB)
	$(link)

TESTS += $(BUILD)/tests/test_store_fold
OBJS += $(BUILD)/tests/test_store_fold.o
$(BUILD)/tests/test_store_fold: LDLIBS += $(STORE_LDLIBS)
$(BUILD)/tests/test_store_fold: $(BUILD)/tests/test_store_fold.o \
	$(FOLD_OBJ) $(HARNESS_OBJ) $(PLAN_LIB) $(STORE_LIB) $(UTIL_LIB)
	$(link)
SCRIPT_TESTS += tests/store_tool.sh tests/test_fsck_live.sh

# The crash torture: 200 SIGKILLs (SHIRO_TORTURE=N for more; make torture
# runs 2,000).  It execs build/shiro-store fsck after each restart.
TESTS += $(BUILD)/tests/test_store_torture
OBJS += $(BUILD)/tests/test_store_torture.o
$(BUILD)/tests/test_store_torture: LDLIBS += $(STORE_LDLIBS)
$(BUILD)/tests/test_store_torture: $(BUILD)/tests/test_store_torture.o \
	$(FOLD_OBJ) $(HARNESS_OBJ) $(PLAN_LIB) $(STORE_LIB) $(UTIL_LIB) \
	| $(BUILD)/shiro-store
	$(link)
torture: $(BUILD)/tests/test_store_torture $(BUILD)/shiro-store
	SHIRO_TORTURE=$${SHIRO_TORTURE:-2000} $(BUILD)/tests/test_store_torture
.PHONY: torture
# Fault injection: the test re-runs itself under tests/fault/fault.so, an
# LD_PRELOAD shim built without sanitizers.
TESTS += $(BUILD)/tests/test_store_fault
OBJS += $(BUILD)/tests/test_store_fault.o
$(BUILD)/tests/test_store_fault: LDLIBS += $(STORE_LDLIBS)
$(BUILD)/tests/test_store_fault: $(BUILD)/tests/test_store_fault.o \
	$(HARNESS_OBJ) $(STORE_LIB) $(UTIL_LIB) | $(BUILD)/tests/fault.so
	$(link)
$(BUILD)/tests/fault.so: tests/fault/fault.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O2 -Wall -o $@ $< -ldl
# make bench: append latency against the fsync floor, group commit, node
# writes, cold open of a 1,000,000-message chat (made once, reused).
BENCHES += $(BUILD)/tests/bench_store
OBJS += $(BUILD)/tests/bench_store.o
$(BUILD)/tests/bench_store: LDLIBS += $(STORE_LDLIBS) -lpthread
$(BUILD)/tests/bench_store: $(BUILD)/tests/bench_store.o $(FOLD_OBJ) \
	$(PLAN_LIB) $(STORE_LIB) $(UTIL_LIB) | $(BUILD)/shiro-store
	$(link)
# --- end of the store tools' block

# --- model calls (the broker's half): providers, the prompt,
# --- requests for the cache, the prefix gate, usage, turns.
TESTS += $(BUILD)/tests/test_models
OBJS += $(BUILD)/tests/test_models.o
$(BUILD)/tests/test_models: LDLIBS += $(LIBS_ZMQ) $(LIBS_LMDB) \
	$(SHIROD_TOOLS_LDLIBS)
$(BUILD)/tests/test_models: $(BUILD)/tests/test_models.o $(HARNESS_OBJ) \
	$(SHIROD_LIB) $(STORE_LIB) $(PLAN_LIB) $(PROTO_LIB) $(SHIROD_TOOLS) \
	$(UTIL_LIB)
	$(link)
# --- end of the model calls' block
# test_turn: turns through a real shirod against a scripted fake worker.
TESTS += $(BUILD)/tests/test_turn
OBJS += $(BUILD)/tests/test_turn.o
$(BUILD)/tests/test_turn: LDLIBS += $(LIBS_ZMQ) $(LIBS_JSON)
$(BUILD)/tests/test_turn: $(BUILD)/tests/test_turn.o \
	$(BUILD)/tests/test_shirod_util.o $(HARNESS_OBJ) $(PROTO_LIB) \
	$(UTIL_LIB) | $(BUILD)/shirod $(BUILD)/shiro-model-worker
	$(link)
# make bench: the prompt cache replayed over 3,000 scripted messages, and
# the system prompt plus tools per request.
BENCHES += $(BUILD)/tests/bench_cache
OBJS += $(BUILD)/tests/bench_cache.o
$(BUILD)/tests/bench_cache: LDLIBS += $(LIBS_ZMQ) $(SHIROD_TOOLS_LDLIBS)
$(BUILD)/tests/bench_cache: $(BUILD)/tests/bench_cache.o $(SHIROD_LIB) \
	$(PLAN_LIB) $(PROTO_LIB) $(SHIROD_TOOLS) $(UTIL_LIB)
	$(link)
# test_e2e: shirod, the real model worker and the mock provider together
# (a turn on the wire, zero configuration, the doctor's probe, the
# 3,000-message run with late, failed and cut compactions and a restart).
TESTS += $(BUILD)/tests/test_e2e
OBJS += $(BUILD)/tests/test_e2e.o
$(BUILD)/tests/test_e2e: LDLIBS += $(LIBS_ZMQ) $(LIBS_JSON)
$(BUILD)/tests/test_e2e: $(BUILD)/tests/test_e2e.o $(BUILD)/tests/mock_util.o \
	$(BUILD)/tests/test_shirod_util.o $(HARNESS_OBJ) $(PROTO_LIB) \
	$(UTIL_LIB) | $(BUILD)/shirod $(BUILD)/shiro-model-worker \
	$(BUILD)/shiro-plan $(BUILD)/shiro-store
	$(link)
# test_notes: remember, recall, forget, todo_write and the per-turn state
# on the wire (shirod, the real model worker, the mock), and NOTES.
TESTS += $(BUILD)/tests/test_notes
OBJS += $(BUILD)/tests/test_notes.o
$(BUILD)/tests/test_notes: LDLIBS += $(LIBS_ZMQ) $(LIBS_JSON)
$(BUILD)/tests/test_notes: $(BUILD)/tests/test_notes.o \
	$(BUILD)/tests/mock_util.o $(BUILD)/tests/test_shirod_util.o \
	$(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB) | $(BUILD)/shirod \
	$(BUILD)/shiro-model-worker $(BUILD)/shiro
	$(link)
# make bench: a turn's overhead (SEND to the request at the mock, shiro -p
# against curl) and compaction throughput through shirod, 1 to 8 workers.
BENCHES += $(BUILD)/tests/bench_turn
OBJS += $(BUILD)/tests/bench_turn.o
$(BUILD)/tests/bench_turn: LDLIBS += $(LIBS_ZMQ) $(LIBS_JSON)
$(BUILD)/tests/bench_turn: $(BUILD)/tests/bench_turn.o \
	$(BUILD)/tests/bench_util.o $(BUILD)/tests/mock_util.o \
	$(BUILD)/tests/test_shirod_util.o $(HARNESS_OBJ) $(PROTO_LIB) \
	$(UTIL_LIB) | $(BUILD)/shirod \
	$(BUILD)/shiro-model-worker $(BUILD)/shiro
	$(link)
# test_agent: turns with the workspace's tools through real processes:
# shirod, the model worker and the strict mock, the tool and fs workers
# it starts for the working directory, clients that approve, steer and
# interrupt; shiro -p for the exit codes.
TESTS += $(BUILD)/tests/test_agent
OBJS += $(BUILD)/tests/test_agent.o
$(BUILD)/tests/test_agent: LDLIBS += $(LIBS_ZMQ) $(LIBS_JSON)
$(BUILD)/tests/test_agent: $(BUILD)/tests/test_agent.o \
	$(BUILD)/tests/mock_util.o $(BUILD)/tests/test_shirod_util.o \
	$(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB) | $(BUILD)/shirod \
	$(BUILD)/shiro-model-worker $(BUILD)/shiro-tool-worker \
	$(BUILD)/shiro-fs-worker $(BUILD)/shiro
	$(link)
# make bench: a scripted 20-step tool turn, shiro's overhead per step, the
# system prompt and tools in bytes beside other agents'.
BENCHES += $(BUILD)/tests/bench_agent
OBJS += $(BUILD)/tests/bench_agent.o
$(BUILD)/tests/bench_agent: LDLIBS += $(LIBS_ZMQ) $(LIBS_JSON)
$(BUILD)/tests/bench_agent: $(BUILD)/tests/bench_agent.o \
	$(BUILD)/tests/mock_util.o $(BUILD)/tests/test_shirod_util.o \
	$(HARNESS_OBJ) $(PROTO_LIB) $(UTIL_LIB) | $(BUILD)/shirod \
	$(BUILD)/shiro-model-worker $(BUILD)/shiro-tool-worker \
	$(BUILD)/shiro-fs-worker
	$(link)
