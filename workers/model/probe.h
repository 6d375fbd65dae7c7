/*
 * probe.h - `shiro-model-worker --probe`: does the endpoint answer?
 *
 * One short GET without a key (the wire's model list) to the base URL.
 * Any HTTP status counts as an answer.  One line on stdout says what
 * happened; the exit status is 0 when it answered, 1 when not.  `shiro
 * doctor` runs it, since only this program may speak HTTP.
 */
#ifndef SHIRO_PROBE_H
#define SHIRO_PROBE_H

#include "workers/model/loop.h"

/* probe_run - probe the endpoint of o; the exit status. */
int probe_run(const struct model_opts *o);

#endif
