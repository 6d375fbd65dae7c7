/*
 * harness.h - shiro's small test harness.
 *
 * A test program lists its tests in a table and hands it to
 * harness_main().  Each test runs in a forked child with a time limit,
 * so a crash, a hang or a jail test that kills itself fails only that
 * test.  The parent prints one line per test:
 *
 *	PASS name
 *	FAIL name: reason
 *	SKIP name: reason
 *
 * tests/run adds these lines up over the whole suite.
 */
#ifndef SHIRO_HARNESS_H
#define SHIRO_HARNESS_H

#include <stdio.h>
#include <string.h>

struct harness_test {
	const char *name;
	void (*fn)(void);
	unsigned timeout_s; /* 0 means the default, 60 s */
};

#define HT(fn) \
	{ \
#fn, fn, 0 \
	}
#define HT_SLOW(fn, secs) \
	{ \
#fn, fn, secs \
	}

/*
 * harness_main - run every test in tests[] (or those named in argv) and
 * return the exit status: 0 if none failed.
 */
int harness_main(
    const struct harness_test *tests, size_t n, int argc, char **argv);

/* harness_fail - report a failed check from inside a test; never returns. */
void harness_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* harness_skip - end the test as skipped, with a reason. */
void harness_skip(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* harness_tmpdir - a fresh directory removed after the test; borrowed. */
const char *harness_tmpdir(void);

#define CHECK(cond) \
	do { \
		if (!(cond)) \
			harness_fail(__FILE__, __LINE__, "%s", #cond); \
	} while (0)

#define CHECKF(cond, ...) \
	do { \
		if (!(cond)) \
			harness_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define CHECK_EQ_INT(a, b) \
	do { \
		long long check_a_ = (long long)(a); \
		long long check_b_ = (long long)(b); \
		if (check_a_ != check_b_) \
			harness_fail(__FILE__, __LINE__, \
			    "%s == %s: %lld != %lld", #a, #b, check_a_, \
			    check_b_); \
	} while (0)

#define CHECK_EQ_STR(a, b) \
	do { \
		const char *check_a_ = (a); \
		const char *check_b_ = (b); \
		if (check_a_ == NULL || check_b_ == NULL || \
		    strcmp(check_a_, check_b_) != 0) \
			harness_fail(__FILE__, __LINE__, \
			    "%s == %s: \"%s\" != \"%s\"", #a, #b, \
			    check_a_ ? check_a_ : "(null)", \
			    check_b_ ? check_b_ : "(null)"); \
	} while (0)

#define HARNESS_MAIN(table) \
	int main(int argc, char **argv) \
	{ \
		return harness_main( \
		    table, sizeof(table) / sizeof(table[0]), argc, argv); \
	}

#endif
