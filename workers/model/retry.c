/*
 * retry.c - the retry policy (retry.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "workers/model/retry.h"

/* retry_status - whether status may be retried. */
bool
retry_status(long status, int should)
{
	if (should == 1)
		return true;
	if (should == 0)
		return false;
	return status == 408 || status == 409 || status == 429 || status >= 500;
}

/* retry_should - x-should-retry: 1 true, 0 false, -1 other. */
int
retry_should(const char *value)
{
	if (value == NULL)
		return -1;
	if (strcasecmp(value, "true") == 0)
		return 1;
	if (strcasecmp(value, "false") == 0)
		return 0;
	return -1;
}

/* retry_number - a non-negative decimal (fraction allowed), or -1. */
static double
retry_number(const char *s)
{
	char *end;
	double v;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	while (isspace((unsigned char)*end))
		end++;
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0)
		return -1;
	return v;
}

/* retry_date - an HTTP date (RFC 9110 IMF-fixdate) as time_t, or -1. */
static time_t
retry_date(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (end == NULL || *end != '\0')
		return -1;
	return timegm(&tm);
}

/* retry_after_ms - the wait the headers ask for, or -1. */
long
retry_after_ms(const char *ms, const char *after, time_t now)
{
	double v = -1;
	time_t when;

	if (ms != NULL && (v = retry_number(ms)) >= 0) {
		/* milliseconds */
	} else if (after != NULL && (v = retry_number(after)) >= 0) {
		v *= 1000;
	} else if (after != NULL && (when = retry_date(after)) >= 0) {
		v = ((double)when - (double)now) * 1000;
	} else {
		return -1;
	}
	if (v <= 0 || v > RETRY_AFTER_MAX_MS)
		return -1;
	return (long)ceil(v);
}

/* retry_backoff_ms - the computed wait before retry n. */
long
retry_backoff_ms(unsigned n, double r)
{
	double base = RETRY_BASE_MS;

	if (r < 0 || r >= 1)
		r = 0;
	while (n-- > 0 && base < RETRY_CAP_MS)
		base *= 2;
	if (base > RETRY_CAP_MS)
		base = RETRY_CAP_MS;
	return (long)(base * (1.0 - 0.25 * r));
}
