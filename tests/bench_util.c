/*
 * bench_util.c - settings and percentiles of the benches (bench_util.h).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/xmalloc.h"
#include "tests/bench_util.h"
#include "tests/test_shirod_util.h"

/* bench_env - a positive number from the environment, or def. */
long
bench_env(const char *name, long def)
{
	const char *s = getenv(name);
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 ? v : def;
}

/* bench_cmp - for qsort of doubles. */
static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* bench_pct - the p-th percentile of v[0..n). */
double
bench_pct(double *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), bench_cmp);
	return v[(size_t)(p * (double)(n - 1) + 0.5)];
}

/* bench_send - n messages of 1000 bytes; when the first went. */
uint64_t
bench_send(void *sock, long n)
{
	char *text = xmalloc(1001);
	uint64_t t0;
	long k;

	memset(text, 'w', 1000);
	for (k = 0; k < 1000; k += 7)
		text[k] = ' ';
	text[1000] = '\0';
	t0 = tsd_now_ms();
	for (k = 0; k < n; k++) {
		text[1] = (char)('a' + k % 26);
		text[2] = (char)('a' + (k / 26) % 26);
		(void)tsd_send_text(sock, text, NULL, NULL);
	}
	free(text);
	return t0;
}
