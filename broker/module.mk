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
# --- end of the planner's block
