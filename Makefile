# shiro - one non-recursive Makefile.
#
# Each directory adds its sources, programs and tests in its own
# module.mk, included below.  Build output goes under $(BUILD).
#
#   make            build everything
#   make check      run the whole test suite; ends with "N passed, N failed"
#   make asan       the same suite under ASan+UBSan (in build/asan)
#   make lint       formatting, cppcheck and the include rules
#   make bench      the benchmark table
#   make fuzz       every parser of untrusted input under libFuzzer, for
#                   FUZZ_TIME seconds each (in build/fuzz)
#   make deps       install the Debian packages the build and tests need
#   make install    install into $(DESTDIR)$(PREFIX); make uninstall
#
# "make deps GOAL..." installs the packages before it starts any goal.

# The goals of one command line run side by side under the -j below: with
# "make deps check" the compiler would start while apt-get still
# installs, and with "make deps run" the client would start beside the
# build without the terminal.  So when deps comes with other goals, this
# make only runs them one after the other, deps first, each in a make of
# its own (which reads the module files afresh, packages installed).
ifneq ($(and $(filter deps,$(MAKECMDGOALS)),$(filter-out deps,$(MAKECMDGOALS))),)
.NOTPARALLEL:
.PHONY: $(MAKECMDGOALS)
deps:
	@$(MAKE) --no-print-directory deps
$(filter-out deps,$(MAKECMDGOALS)): deps
	@$(MAKE) --no-print-directory $@
else

BUILD ?= build
CC ?= cc
AR ?= ar
SAN ?=

WARN := -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Wno-unused-result
HARDEN := -fstack-protector-strong -fstack-clash-protection -fPIE \
	-D_FORTIFY_SOURCE=2
OPT := -O2 -g

ifeq ($(SAN),1)
HARDEN := -fPIE
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
SANLD := -fsanitize=address,undefined
endif

# SAN=fuzz: the build of make fuzz (clang, in build/fuzz).  Every object
# carries libFuzzer's coverage hooks and ASan+UBSan; the fuzz targets
# link libFuzzer itself (tests/module.mk).  Warnings stay warnings: the
# ordinary build already makes them errors.
ifeq ($(SAN),fuzz)
WARN := $(filter-out -Werror,$(WARN))
HARDEN := -fPIE
OPT := -O1 -g -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined
SANLD := -fsanitize=address,undefined
endif

ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(HARDEN) $(OPT) -I. -MMD -MP \
	$(CFLAGS)
ALL_LDFLAGS := -pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack $(SANLD) $(LDFLAGS)

# link: the recipe for every program; libraries come last.
link = $(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o %.a,$^) $(LDLIBS)

# The libraries, named here so that every module.mk can use them whatever
# the order of inclusion.  A module adds objects to its own library with
# "$(X_LIB): objects" (prerequisites add up across rules).
UTIL_LIB := $(BUILD)/libshiroutil.a
PROTO_LIB := $(BUILD)/libshiroproto.a
PLAN_LIB := $(BUILD)/libshiroplan.a
STORE_LIB := $(BUILD)/libshirostore.a
SANDBOX_LIB := $(BUILD)/libshirosandbox.a
TOOLS_LIB := $(BUILD)/libshirotools.a
WORKER_LIB := $(BUILD)/libshiroworker.a
HARNESS_OBJ := $(BUILD)/tests/harness.o

# External libraries, for LDLIBS of the programs that need them.
LIBS_ZMQ := -lzmq
LIBS_MSGPACK := -lmsgpackc
LIBS_JSON := -ljansson
LIBS_LMDB := -llmdb
LIBS_SECCOMP := -lseccomp
LIBS_CURL := -lcurl
LIBS_EDIT := -ledit

BINS :=
TESTS :=
SCRIPT_TESTS :=
BENCHES :=
OBJS :=

MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)

all: build-all

include $(sort $(wildcard */module.mk))

build-all: $(BINS) $(TESTS) $(BENCHES)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/lib%.a:
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

check: build-all
	tests/run $(TESTS) $(SCRIPT_TESTS)

asan:
	$(MAKE) BUILD=build/asan SAN=1 check

bench: build-all
	@for b in $(BENCHES); do $$b || exit 1; done

# Sources that lint and format look at: everything we wrote in C.
C_SOURCES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

lint:
	@echo "lint: clang-format"
	@clang-format --dry-run --Werror $(C_SOURCES)
	@echo "lint: cppcheck"
	@cppcheck -q --error-exitcode=1 --enable=warning,portability \
		--inline-suppr --std=c11 -D_GNU_SOURCE -I. \
		--suppress=missingIncludeSystem --suppress=unknownMacro $(C_SOURCES)
	@echo "lint: include rules"
	@tests/check-includes.sh
	@echo "lint: clean"

format:
	clang-format -i $(C_SOURCES)

DEBS := build-essential pkg-config python3 libzmq3-dev libmsgpack-dev \
	liblmdb-dev libcurl4-openssl-dev libseccomp-dev libjansson-dev \
	libedit-dev clang libclang-rt-14-dev clang-format cppcheck bubblewrap util-linux \
	iproute2 nftables procps ripgrep groff-base

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

deps:
	@missing=$$(for p in $(DEBS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
		grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
			$$missing >/dev/null; \
	else \
		echo "deps: every Debian package is installed"; \
	fi

# demo: the planner on a chat of 3,000 messages at the design's sizes.
demo: plan-demo

# run: build everything and attach the client (it starts shirod).
run: build-all
	$(BUILD)/shiro

# install: shiro, shirod and shiro-worker (a worker on another machine,
# docs/remote.md) in bin, the programs they run in
# libexec/shiro (they find one another from their own place, see
# proto/path.h), the man pages and a systemd user unit for shirod.
PREFIX ?= /usr/local
BINDIR := $(PREFIX)/bin
LIBEXECDIR := $(PREFIX)/libexec/shiro
MAN1DIR := $(PREFIX)/share/man/man1
UNITDIR := $(PREFIX)/lib/systemd/user
INSTALL_BINS := shiro shirod shiro-worker
INSTALL_LIBEXEC := shiro-client shiro-store shiro-jail shiro-tool-worker \
	shiro-fs-worker shiro-model-worker shiro-plan
INSTALL_MAN1 := docs/man/shiro.1 docs/man/shirod.1
INSTALL_ALL := $(INSTALL_BINS:%=$(BINDIR)/%) \
	$(INSTALL_LIBEXEC:%=$(LIBEXECDIR)/%) \
	$(INSTALL_MAN1:docs/man/%=$(MAN1DIR)/%) $(UNITDIR)/shirod.service

install: $(INSTALL_BINS:%=$(BUILD)/%) $(INSTALL_LIBEXEC:%=$(BUILD)/%)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) \
		$(DESTDIR)$(MAN1DIR) $(DESTDIR)$(UNITDIR)
	install -m 0755 $(INSTALL_BINS:%=$(BUILD)/%) $(DESTDIR)$(BINDIR)
	install -m 0755 $(INSTALL_LIBEXEC:%=$(BUILD)/%) \
		$(DESTDIR)$(LIBEXECDIR)
	install -m 0644 $(INSTALL_MAN1) $(DESTDIR)$(MAN1DIR)
	sed 's|@BINDIR@|$(BINDIR)|g' docs/shirod.service.in \
		>$(DESTDIR)$(UNITDIR)/shirod.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/shirod.service

uninstall:
	rm -f $(INSTALL_ALL:%=$(DESTDIR)%)
	-rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null

clean:
	rm -rf $(BUILD)

.PHONY: all build-all check asan bench lint format deps clean fuzz demo run \
	install uninstall

-include $(OBJS:.o=.d)

endif
