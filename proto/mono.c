#include <time.h>

#include "mono.h"

/* mono_ms - CLOCK_MONOTONIC in milliseconds. */
uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
