/* test_util - the generic utilities of proto/: buffers, errors, logging. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/mono.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"

/* A buffer grows past its first block, keeps every byte and stays NUL-ended. */
static void
buf_grows_and_keeps_bytes(void)
{
	struct buf b = BUF_INIT;
	size_t i, len;
	char *p;

	for (i = 0; i < 10000; i++)
		buf_addc(&b, (char)('a' + i % 26));
	CHECK_EQ_INT(b.len, 10000);
	CHECK(b.data[10000] == '\0');
	for (i = 0; i < 10000; i++)
		CHECK(b.data[i] == (char)('a' + i % 26));
	buf_truncate(&b, 3);
	CHECK_EQ_STR(b.data, "abc");
	buf_printf(&b, "-%d-%s", 42, "x");
	CHECK_EQ_STR(b.data, "abc-42-x");
	p = buf_steal(&b, &len);
	CHECK_EQ_INT(len, 8);
	CHECK(b.data == NULL && b.len == 0);
	CHECK_EQ_STR(p, "abc-42-x");
	free(p);
}

/* Binary data with NULs goes in whole. */
static void
buf_holds_binary(void)
{
	struct buf b = BUF_INIT;
	const char bytes[] = {'a', '\0', 'b', '\0'};

	buf_add(&b, bytes, sizeof(bytes));
	CHECK_EQ_INT(b.len, 4);
	CHECK(memcmp(b.data, bytes, 4) == 0);
	buf_reset(&b);
	CHECK_EQ_INT(b.len, 0);
	buf_free(&b);
}

/* Error codes name themselves, with either sign, and errno maps over. */
static void
err_codes_have_names(void)
{
	CHECK_EQ_STR(err_str(-SHIRO_ERR_CORRUPT), "corrupt data");
	CHECK_EQ_STR(err_str(SHIRO_ERR_CORRUPT), "corrupt data");
	CHECK_EQ_STR(err_str(9999), "unknown error");
	CHECK_EQ_INT(err_from_errno(ENOSPC), -SHIRO_ERR_NOSPC);
	CHECK_EQ_INT(err_from_errno(ENOENT), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(err_from_errno(EIO), -SHIRO_ERR_IO);
	CHECK_EQ_INT(err_from_errno(0), 0);
}

/* A log line names the program and pid; log_warn appends errno's text. */
static void
log_lines_have_prefix_and_errno(void)
{
	char line[512], want[128];
	int fds[2];
	ssize_t n;

	CHECK(pipe(fds) == 0);
	log_init("/usr/bin/shiro-test", LOG_LEVEL_INFO);
	log_set_fd(fds[1]);
	errno = ENOENT;
	log_warn("opening %s", "x");
	log_debug("hidden");
	log_warnx("plain");
	close(fds[1]);
	n = read(fds[0], line, sizeof(line) - 1);
	CHECK(n > 0);
	line[n] = '\0';
	snprintf(want, sizeof(want),
	    "shiro-test[%d]: opening x: No such file or directory\n"
	    "shiro-test[%d]: plain\n",
	    (int)getpid(), (int)getpid());
	CHECK_EQ_STR(line, want);
}

/* fatalx ends the process with status 1. */
static void
fatalx_exits_one(void)
{
	pid_t pid;
	int st;

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		log_set_fd(devnull);
		fatalx("bye");
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
}

/* xasprintf and xstrndup make the expected strings. */
static void
xmalloc_strings(void)
{
	char *s = xasprintf("%s+%d", "id", 7);
	char *t = xstrndup("abcdef", 3);

	CHECK_EQ_STR(s, "id+7");
	CHECK_EQ_STR(t, "abc");
	free(s);
	free(t);
}

/* The monotonic clock never goes back and sees a 20 ms sleep pass. */
static void
mono_ms_moves_forward(void)
{
	uint64_t a, b;

	a = mono_ms();
	usleep(20000);
	b = mono_ms();
	CHECKF(b >= a + 19 && b < a + 5000, "%llu then %llu",
	    (unsigned long long)a, (unsigned long long)b);
}

static const struct harness_test tests[] = {
    HT(buf_grows_and_keeps_bytes),
    HT(buf_holds_binary),
    HT(err_codes_have_names),
    HT(log_lines_have_prefix_and_errno),
    HT(fatalx_exits_one),
    HT(xmalloc_strings),
    HT(mono_ms_moves_forward),
};

HARNESS_MAIN(tests)
