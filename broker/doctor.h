/*
 * doctor.h - `shirod --doctor [--json]`: the providers these settings and
 * this environment select, and whether their endpoints answer.
 */
#ifndef SHIRO_BROKER_DOCTOR_H
#define SHIRO_BROKER_DOCTOR_H

#include "config.h"

/*
 * doctor_run - print which provider serves turns and compactions (never
 * a key: where it came from), probe each endpoint with bindir's
 * shiro-model-worker --probe, say whether a shirod already runs for the
 * home, and the notes of the resolution (notes: keyFile problems, may be
 * NULL).  One JSON object with json.  Returns 0 when turns have a usable
 * provider whose endpoint answers, else 1.
 */
int doctor_run(
    const struct config *cfg, const char *bindir, const char *notes, int json);

#endif
