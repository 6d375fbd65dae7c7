/*
 * log.h - one-line logging for every shiro binary.
 *
 * Lines go to stderr as "prog[pid]: text".  The _warn variants append
 * ": strerror(errno)", the _warnx variants do not; fatal/fatalx log and
 * exit(1); panic logs and abort()s, for broken invariants only.
 */
#ifndef SHIRO_LOG_H
#define SHIRO_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG
};

/* log_init - name the program in every line and set the verbosity. */
void log_init(const char *prog, enum log_level level);

/* log_set_fd - send lines to fd instead of stderr (a daemon's log file). */
void log_set_fd(int fd);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
void panic(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

#endif
