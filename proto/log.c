#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static const char *log_prog = "shiro";
static enum log_level log_level = LOG_LEVEL_INFO;
static int log_fd = STDERR_FILENO;

/* log_init - name the program in every line and set the verbosity. */
void
log_init(const char *prog, enum log_level level)
{
	const char *slash;

	slash = strrchr(prog, '/');
	log_prog = slash != NULL ? slash + 1 : prog;
	log_level = level;
}

/* log_set_fd - send lines to fd instead of stderr. */
void
log_set_fd(int fd)
{
	log_fd = fd;
}

/* log_vline - format one line, with strerror(err) appended when err != 0. */
static void
log_vline(int err, const char *fmt, va_list ap)
{
	char line[2048];
	int n, m;

	n = snprintf(line, sizeof(line), "%s[%d]: ", log_prog, (int)getpid());
	if (n < 0)
		n = 0;
	m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (m > 0)
		n += m;
	if ((size_t)n >= sizeof(line) - 64)
		n = sizeof(line) - 64;
	if (err != 0)
		n += snprintf(
		    line + n, sizeof(line) - (size_t)n, ": %s", strerror(err));
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line, so lines of several processes do not mix. */
	(void)write(log_fd, line, (size_t)n);
}

/* log_warn - log a warning with errno's text appended. */
void
log_warn(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	if (log_level < LOG_LEVEL_WARN)
		return;
	va_start(ap, fmt);
	log_vline(err, fmt, ap);
	va_end(ap);
	errno = err;
}

/* log_warnx - log a warning. */
void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_LEVEL_WARN)
		return;
	va_start(ap, fmt);
	log_vline(0, fmt, ap);
	va_end(ap);
}

/* log_info - log a line of normal operation. */
void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_LEVEL_INFO)
		return;
	va_start(ap, fmt);
	log_vline(0, fmt, ap);
	va_end(ap);
}

/* log_debug - log a line only a developer wants. */
void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_LEVEL_DEBUG)
		return;
	va_start(ap, fmt);
	log_vline(0, fmt, ap);
	va_end(ap);
}

/* fatal - log with errno's text and exit(1). */
void
fatal(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	va_start(ap, fmt);
	log_vline(err, fmt, ap);
	va_end(ap);
	exit(1);
}

/* fatalx - log and exit(1). */
void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(0, fmt, ap);
	va_end(ap);
	exit(1);
}

/* panic - log a broken invariant and abort() for a core dump. */
void
panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(0, fmt, ap);
	va_end(ap);
	abort();
}
