# sandbox/: the tool jail, the worker lockdowns, and shiro-jail.

SANDBOX_SRCS := sandbox/jail.c sandbox/jailinit.c sandbox/filter.c sandbox/caps.c \
	sandbox/landlock.c sandbox/cgroup.c sandbox/sandbox.c
SANDBOX_OBJS := $(SANDBOX_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(SANDBOX_OBJS) $(BUILD)/sandbox/shiro-jail.o \
	$(BUILD)/sandbox/filter-gen.o

$(SANDBOX_LIB): $(SANDBOX_OBJS) $(BUILD)/sandbox/filter_bpf.o

# The jail's seccomp programs are compiled once, at build time, by
# libseccomp through filter-gen: a jail start then costs no compilation.
$(BUILD)/sandbox/filter-gen: $(BUILD)/sandbox/filter-gen.o \
	$(BUILD)/sandbox/filter.o $(UTIL_LIB)
	$(link)
$(BUILD)/sandbox/filter-gen: LDLIBS += $(LIBS_SECCOMP)
$(BUILD)/sandbox/filter_bpf.c: $(BUILD)/sandbox/filter-gen
	$< > $@.tmp && mv $@.tmp $@
$(BUILD)/sandbox/filter_bpf.o: $(BUILD)/sandbox/filter_bpf.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# shiro-jail is linked statically (still position-independent, so still
# placed at random): `shiro run` and every jailed command start it, and
# without the dynamic loader it starts in half the CPU time, and the
# fork of its init copies fewer mappings.  Sanitizer builds cannot link
# statically and keep the ordinary recipe.
BINS += $(BUILD)/shiro-jail
$(BUILD)/shiro-jail: $(BUILD)/sandbox/shiro-jail.o $(SANDBOX_LIB) $(UTIL_LIB)
ifeq ($(SAN),1)
	$(link)
else
	$(CC) -static-pie $(filter-out -pie,$(ALL_LDFLAGS)) -o $@ \
	    $(filter %.o %.a,$^) $(LDLIBS)
endif
$(BUILD)/shiro-jail: LDLIBS += $(LIBS_SECCOMP)

# The probe runs inside the jail: built without sanitizers, whose
# runtimes use ptrace and personality, which the jail refuses.
BINS += $(BUILD)/try-syscall
$(BUILD)/try-syscall: tests/try-syscall.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o $@ $<

JAIL_TEST_LIB := $(BUILD)/tests/test_jail_lib.o
OBJS += $(JAIL_TEST_LIB) $(BUILD)/tests/test_jail.o

TESTS += $(BUILD)/tests/test_jail
$(BUILD)/tests/test_jail: $(BUILD)/tests/test_jail.o $(JAIL_TEST_LIB) \
	$(HARNESS_OBJ) $(SANDBOX_LIB) $(UTIL_LIB) | $(BUILD)/try-syscall
	$(link)
$(BUILD)/tests/test_jail: LDLIBS += $(LIBS_SECCOMP)

TESTS += $(BUILD)/tests/test_jail_escape
OBJS += $(BUILD)/tests/test_jail_escape.o
$(BUILD)/tests/test_jail_escape: $(BUILD)/tests/test_jail_escape.o \
	$(JAIL_TEST_LIB) $(HARNESS_OBJ) $(SANDBOX_LIB) $(UTIL_LIB)
	$(link)
$(BUILD)/tests/test_jail_escape: LDLIBS += $(LIBS_SECCOMP)

BENCHES += $(BUILD)/bench/bench_jail
OBJS += $(BUILD)/bench/bench_jail.o
$(BUILD)/bench/bench_jail.o: tests/bench_jail.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/bench/bench_jail: $(BUILD)/bench/bench_jail.o $(SANDBOX_LIB) \
	$(UTIL_LIB) | $(BUILD)/shiro-jail
	$(link)
$(BUILD)/bench/bench_jail: LDLIBS += $(LIBS_SECCOMP)
SCRIPT_TESTS += tests/jail_cli.sh

# The worker roles' confinement, in forked children of the test.
TESTS += $(BUILD)/tests/test_sandbox
OBJS += $(BUILD)/tests/test_sandbox.o
$(BUILD)/tests/test_sandbox: $(BUILD)/tests/test_sandbox.o \
	$(JAIL_TEST_LIB) $(HARNESS_OBJ) $(SANDBOX_LIB) $(UTIL_LIB) | \
	$(BUILD)/try-syscall
	$(link)
$(BUILD)/tests/test_sandbox: LDLIBS += $(LIBS_SECCOMP) -lpthread
