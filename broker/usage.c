/*
 * usage.c - tokens per provider and model (see usage.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "usage.h"

/* usage_row - the row of provider and model, made if missing. */
static struct usage_row *
usage_row(struct usage *u, const char *provider, const char *model)
{
	struct usage_row *r;
	size_t k;

	if (model == NULL || model[0] == '\0')
		model = "-";
	for (k = 0; k < u->n; k++)
		if (strcmp(u->rows[k].total.provider, provider) == 0 &&
		    strcmp(u->rows[k].total.model, model) == 0)
			return &u->rows[k];
	if (u->n == u->cap) {
		u->cap = u->cap ? 2 * u->cap : 8;
		u->rows = xreallocarray(u->rows, u->cap, sizeof(*u->rows));
	}
	r = &u->rows[u->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->total.provider, sizeof(r->total.provider), "%s", provider);
	snprintf(r->total.model, sizeof(r->total.model), "%s", model);
	memcpy(r->pending.provider, r->total.provider,
	    sizeof(r->pending.provider));
	memcpy(r->pending.model, r->total.model, sizeof(r->pending.model));
	return r;
}

/* usage_load - the stored records. */
int
usage_load(struct usage *u, struct store *s)
{
	struct store_usage *v;
	size_t n, k;
	int rc;

	memset(u, 0, sizeof(*u));
	rc = store_usage_list(s, &v, &n);
	if (rc != 0)
		return rc;
	for (k = 0; k < n; k++)
		usage_row(u, v[k].provider, v[k].model)->total = v[k];
	free(v);
	return 0;
}

/* usage_free - release u's memory. */
void
usage_free(struct usage *u)
{
	free(u->rows);
	memset(u, 0, sizeof(*u));
}

/* usage_read - a RESULT's token counts, checked. */
int
usage_read(const struct msg *result, struct usage_tokens *t)
{
	static const char *const keys[4] = {
	    "input", "output", "cache_read", "cache_write"};
	const struct msg_val *map;
	int64_t v;
	size_t k;

	memset(t, 0, sizeof(*t));
	if (msg_get_map(result, "usage", &map) != 0)
		return 0;
	for (k = 0; k < 4; k++) {
		const struct msg_val *x = msg_val_get(map, keys[k]);

		if (x == NULL)
			continue;
		if (x->type != MSG_V_INT ||
		    msg_val_int(map, keys[k], &v) != 0 || v < 0 ||
		    (uint64_t)v > USAGE_MAX_TOKENS)
			return -SHIRO_ERR_PROTO;
		t->v[k] = (uint64_t)v;
	}
	return 0;
}

/* usage_take - a RESULT's tokens, nothing for a map that does not read. */
void
usage_take(const struct msg *result, unsigned worker, struct usage_tokens *t)
{
	if (usage_read(result, t) == 0)
		return;
	log_info("worker %u: a usage map that does not read, counted as "
		 "nothing",
	    worker);
	memset(t, 0, sizeof(*t));
}

/* usage_add - one call's tokens. */
void
usage_add(struct usage *u, const char *provider, const char *model,
    const struct usage_tokens *t)
{
	struct usage_row *r = usage_row(u, provider, model);

	r->total.input += t->v[0];
	r->total.output += t->v[1];
	r->total.cache_read += t->v[2];
	r->total.cache_write += t->v[3];
	r->total.calls++;
	r->pending.input += t->v[0];
	r->pending.output += t->v[1];
	r->pending.cache_read += t->v[2];
	r->pending.cache_write += t->v[3];
	r->pending.calls++;
	r->dirty = 1;
}

/* usage_flush - the pending counts, in one commit. */
int
usage_flush(struct usage *u, struct store *s)
{
	struct store_usage *v;
	size_t k, n = 0;
	int rc;

	for (k = 0; k < u->n; k++)
		n += u->rows[k].dirty;
	if (n == 0)
		return 0;
	v = xcalloc(n, sizeof(*v));
	n = 0;
	for (k = 0; k < u->n; k++)
		if (u->rows[k].dirty)
			v[n++] = u->rows[k].pending;
	rc = store_usage_add(s, v, n);
	free(v);
	if (rc != 0)
		return rc;
	for (k = 0; k < u->n; k++) {
		struct usage_row *r = &u->rows[k];

		if (!r->dirty)
			continue;
		r->pending.input = r->pending.output = 0;
		r->pending.cache_read = r->pending.cache_write = 0;
		r->pending.calls = 0;
		r->dirty = 0;
	}
	return 0;
}
