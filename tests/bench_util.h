/*
 * bench_util.h - what the benches of make bench share: their settings
 * from the environment and percentiles of their samples.
 */
#ifndef SHIRO_BENCH_UTIL_H
#define SHIRO_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* bench_env - a positive number from variable name, or def. */
long bench_env(const char *name, long def);

/* bench_pct - the p-th percentile (0 to 1) of v[0..n), sorted here;
 * 0 when n is 0. */
double bench_pct(double *v, size_t n, double p);

/*
 * bench_send - send n messages of 1000 bytes (words of 6 letters; each
 * message differs in its second and third letters) to shirod on sock,
 * as fast as they are acknowledged; the tsd_now_ms() of the first.
 */
uint64_t bench_send(void *sock, long n);

#endif
