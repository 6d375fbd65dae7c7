/*
 * lograte.c - log lines about untrusted peers, at most one a second.
 */
#include <stdarg.h>
#include <stdio.h>

#include "proto/log.h"

#include "lograte.h"
#include "timer.h"

/* lograte_info - one line now, or counted for the next one. */
void
lograte_info(struct lograte *r, uint64_t now, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (r->last_ms != 0 && timer_since(now, r->last_ms) < LOGRATE_MS) {
		r->held++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (r->held > 0)
		log_info("%s (%llu more like it left out)", line,
		    (unsigned long long)r->held);
	else
		log_info("%s", line);
	r->last_ms = now != 0 ? now : 1;
	r->held = 0;
}
