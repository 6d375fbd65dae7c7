/*
 * lograte.h - log lines about untrusted peers, at most one a second.
 *
 * A peer that misbehaves in a loop (a client sending garbage, a process
 * knocking at a socket it may not use, a worker repeating what it may
 * not say) must not fill shirod's log: the first line goes out, the ones
 * within the next second are counted, and the next line that goes out
 * says how many were left out.
 */
#ifndef SHIRO_BROKER_LOGRATE_H
#define SHIRO_BROKER_LOGRATE_H

#include <stdint.h>

#define LOGRATE_MS 1000 /* at most one line per this many ms */

struct lograte {
	uint64_t last_ms; /* when the last line went out; 0: never */
	uint64_t held; /* lines left out since then */
};

/*
 * lograte_info - log_info(fmt, ...) unless a line of r went out less
 * than LOGRATE_MS before now; then it is only counted.  The line that
 * goes out next ends with "(N more like it left out)".
 */
void lograte_info(struct lograte *r, uint64_t now, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
