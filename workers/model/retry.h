/*
 * retry.h - when and how long to wait before trying a call again, as
 * the official Anthropic and OpenAI SDKs decide it.
 *
 * Retried: 408, 409, 429 and every 5xx status (Anthropic's 529 among
 * them), and connection failures.  A response's `x-should-retry: true`
 * or `false` overrides the status.  The wait before retry n (0 for the
 * first) is min(0.5 s * 2^n, 8 s) times a jitter in [0.75, 1]; but a
 * `retry-after-ms` header (milliseconds), else a `retry-after` header
 * (seconds, or an HTTP date) of more than 0 and at most 60 s is taken
 * as is.  Pure functions: no clock, no randomness of their own.
 */
#ifndef SHIRO_RETRY_H
#define SHIRO_RETRY_H

#include <stdbool.h>
#include <time.h>

#define RETRY_MAX_DEFAULT 2 /* retries after the first try */
#define RETRY_BASE_MS 500
#define RETRY_CAP_MS 8000
#define RETRY_AFTER_MAX_MS 60000

/*
 * retry_status - whether an HTTP status may be retried; should is the
 * x-should-retry header: 1 true, 0 false, -1 absent or other.
 */
bool retry_status(long status, int should);

/* retry_should - the x-should-retry header value: 1, 0 or -1. */
int retry_should(const char *value);

/*
 * retry_after_ms - the wait the headers ask for, in ms, or -1 when they
 * ask for none within (0, 60 s].  retry_after_ms and retry_after are the
 * header values (NULL when absent); now is the wall clock, for a date.
 */
long retry_after_ms(
    const char *retry_after_ms, const char *retry_after, time_t now);

/*
 * retry_backoff_ms - the computed wait before retry n (0-based) with a
 * jitter draw r in [0, 1): min(500 * 2^n, 8000) * (1 - 0.25 r).
 */
long retry_backoff_ms(unsigned n, double r);

#endif
