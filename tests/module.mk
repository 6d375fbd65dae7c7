# tests/: the harness, and the tests of the generic utilities.

OBJS += $(HARNESS_OBJ) $(BUILD)/tests/test_util.o

TESTS += $(BUILD)/tests/test_util
$(BUILD)/tests/test_util: $(BUILD)/tests/test_util.o $(HARNESS_OBJ) $(UTIL_LIB)
	$(link)

SCRIPT_TESTS += tests/test_runner.sh

# The bridge: the independent Python model against build/shiro-plan, and
# push's agreement over 20,001 steps.  SHIRO_PLAN points both at the
# runner of this build (the sanitizer build under make asan).
SCRIPT_TESTS += tests/bridge.py tests/push.py
export SHIRO_PLAN = $(BUILD)/shiro-plan

# --- The fuzz targets: one libFuzzer target per parser of untrusted
# input, tests/fuzz/fuzz_NAME.c, with its seeds in tests/fuzz/corpus/NAME/.
# A new target is one more word in FUZZ_TARGETS; a target whose parser
# is in none of the libraries of FUZZ_LINK also sets FUZZ_OBJS_NAME to
# the objects it needs.  The ordinary build links each target with
# tests/fuzz/replay.c as build/tests/fuzz_NAME, a test that feeds it its
# seeds once; make fuzz builds them again with clang and libFuzzer in
# build/fuzz and runs each for FUZZ_TIME seconds (docs/protocol.md).
FUZZ_TARGETS := msg log_line view config tool_args apply_patch shwords \
	sse anthropic responses chat
# The model worker's stream parsers are in no library (workers/module.mk
# is read after this file, so its lists cannot be used here).
FUZZ_MODEL_OBJS := $(addprefix $(BUILD)/workers/model/,sse.o mjson.o \
	wire.o anthropic.o responses.o chat.o reply.o request.o)
FUZZ_OBJS_sse := $(BUILD)/workers/model/sse.o
FUZZ_OBJS_anthropic := $(FUZZ_MODEL_OBJS)
FUZZ_OBJS_responses := $(FUZZ_MODEL_OBJS)
FUZZ_OBJS_chat := $(FUZZ_MODEL_OBJS)
FUZZ_TIME ?= 60
FUZZ_MAX_LEN ?= 65536

FUZZ_LINK := $(SHIROD_LIB) $(PLAN_LIB) $(STORE_LIB) $(WORKER_LIB) \
	$(TOOLS_LIB) $(SANDBOX_LIB) $(PROTO_LIB) $(UTIL_LIB)
FUZZ_LDLIBS := $(LIBS_ZMQ) $(LIBS_JSON) $(LIBS_LMDB) $(LIBS_SECCOMP) \
	$(LIBS_CURL) -lpthread
FUZZ_UTIL_OBJ := $(BUILD)/tests/fuzz/fuzz_util.o
OBJS += $(FUZZ_UTIL_OBJ) $(BUILD)/tests/fuzz/replay.o \
	$(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/fuzz_%.o)

# fuzz_link: link a target; the libraries go in one group, so that their
# order does not matter.
fuzz_link = $(CC) $(ALL_LDFLAGS) $(1) -o $@ $(filter %.o,$^) \
	-Wl,--start-group $(filter %.a,$^) -Wl,--end-group $(FUZZ_LDLIBS)

$(foreach t,$(FUZZ_TARGETS),$(eval $(BUILD)/tests/fuzz_$(t) \
	$(BUILD)/fuzz_$(t): $(BUILD)/tests/fuzz/fuzz_$(t).o $(FUZZ_OBJS_$(t)) \
	$(FUZZ_UTIL_OBJ) $(FUZZ_LINK)))

ifneq ($(SAN),fuzz)
TESTS += $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz_%)
$(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz_%): $(BUILD)/tests/fuzz/replay.o
	$(call fuzz_link,)
endif

# make fuzz: the same targets under libFuzzer, one at a time (the
# machine may be shared), each for FUZZ_TIME seconds from its seeds and
# what earlier runs found (build/fuzz/corpus/NAME).  An input that
# crashes a parser or breaks a check is kept as build/fuzz/crash/NAME-*
# and fails the run, after every target had its turn.
fuzz:
	$(MAKE) BUILD=$(BUILD)/fuzz SAN=fuzz CC=clang fuzz-run

ifeq ($(SAN),fuzz)
$(FUZZ_TARGETS:%=$(BUILD)/fuzz_%):
	$(call fuzz_link,-fsanitize=fuzzer)

fuzz-run: $(FUZZ_TARGETS:%=$(BUILD)/fuzz_%)
	@mkdir -p $(BUILD)/crash; failed=""; \
	for t in $(FUZZ_TARGETS); do \
		mkdir -p $(BUILD)/corpus/$$t; \
		echo "fuzz: $$t for $(FUZZ_TIME) s"; \
		if ! $(BUILD)/fuzz_$$t -max_total_time=$(FUZZ_TIME) \
		    -max_len=$(FUZZ_MAX_LEN) -timeout=20 -rss_limit_mb=2048 \
		    -print_final_stats=1 -artifact_prefix=$(BUILD)/crash/$$t- \
		    $(BUILD)/corpus/$$t tests/fuzz/corpus/$$t \
		    >$(BUILD)/fuzz_$$t.log 2>&1; then \
			failed="$$failed $$t"; \
			tail -n 40 $(BUILD)/fuzz_$$t.log; \
		fi; \
		grep -E '^#[0-9]+.*DONE|^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' \
		    $(BUILD)/fuzz_$$t.log | tr '\n' ' ' | sed 's/^/fuzz: /'; echo; \
	done; \
	if [ -n "$$failed" ]; then \
		echo "fuzz: FAILED:$$failed (inputs in $(BUILD)/crash/)"; exit 1; \
	fi; \
	echo "fuzz: every target ran $(FUZZ_TIME) s without a finding"
.PHONY: fuzz-run
endif
