# sandbox/: the tool jail, the worker lockdowns, and shiro-jail.

SANDBOX_SRCS := sandbox/jail.c sandbox/jailinit.c sandbox/filter.c \
	sandbox/landlock.c sandbox/cgroup.c sandbox/sandbox.c
SANDBOX_OBJS := $(SANDBOX_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(SANDBOX_OBJS) $(BUILD)/sandbox/shiro-jail.o

$(SANDBOX_LIB): $(SANDBOX_OBJS)

BINS += $(BUILD)/shiro-jail
$(BUILD)/shiro-jail: $(BUILD)/sandbox/shiro-jail.o $(SANDBOX_LIB) $(UTIL_LIB)
	$(link)
$(BUILD)/shiro-jail: LDLIBS += $(LIBS_SECCOMP)

BENCHES += $(BUILD)/bench/bench_jail
OBJS += $(BUILD)/bench/bench_jail.o
$(BUILD)/bench/bench_jail.o: tests/bench_jail.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/bench/bench_jail: $(BUILD)/bench/bench_jail.o $(SANDBOX_LIB) \
	$(UTIL_LIB) | $(BUILD)/shiro-jail
	$(link)
$(BUILD)/bench/bench_jail: LDLIBS += $(LIBS_SECCOMP)
