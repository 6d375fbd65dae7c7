/*
 * mono.h - the one monotonic clock of shiro's processes.
 */
#ifndef SHIRO_MONO_H
#define SHIRO_MONO_H

#include <stdint.h>

/* mono_ms - CLOCK_MONOTONIC in milliseconds: for timers and deadlines,
 * never for dates. */
uint64_t mono_ms(void);

#endif
