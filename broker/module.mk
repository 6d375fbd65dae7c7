# broker/: shirod and the planner.

# --- planner (issue 2): the pure planner library, the renderer, the
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

BENCHES += $(BUILD)/tests/bench_plan
OBJS += $(BUILD)/tests/bench_plan.o
$(BUILD)/tests/bench_plan: $(BUILD)/tests/bench_plan.o $(PLAN_LIB) $(UTIL_LIB)
	$(link)
# --- end of the planner's block

# shirod
# --- shirod (issue 4): the daemon.  Its parts go into libshirod so that
# --- the unit tests link them; shirod.c holds only main().
SHIROD_LIB := $(BUILD)/libshirod.a
SHIROD_SRCS := broker/config.c broker/timer.c broker/pool.c \
	broker/clients.c broker/broker.c broker/serve.c broker/compact.c \
	broker/supervise.c
SHIROD_OBJS := $(SHIROD_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(SHIROD_OBJS)
$(SHIROD_LIB): $(SHIROD_OBJS)

BINS += $(BUILD)/shirod
OBJS += $(BUILD)/broker/shirod.o
$(BUILD)/shirod: LDLIBS += $(LIBS_ZMQ) $(LIBS_JSON) $(LIBS_LMDB)
$(BUILD)/shirod: $(BUILD)/broker/shirod.o $(SHIROD_LIB) $(PLAN_LIB) \
	$(STORE_LIB) $(PROTO_LIB) $(UTIL_LIB)
	$(link)

# (tests follow once proto/msg.c is in libshiroproto)
# --- end of shirod's block
