/*
 * usage.c - the tokens and estimated cost of `shiro status`, as lines a
 * person reads (docs/client.md): one per provider and model, then the
 * total.  The cost is the daemon's estimate from its price table
 * (docs/providers.md); a model without a price says so.
 */
#include <stdio.h>
#include <string.h>

#include "proto/buf.h"

#include "render.h"

/* usage_int - key of map as a number, 0 when absent. */
static long long
usage_int(const struct msg_val *map, const char *key)
{
	int64_t v = 0;

	(void)msg_val_int(map, key, &v);
	return (long long)v;
}

/* usage_dollars - millionths of a dollar as "$1.234567" (cents and
 * more digits while they matter). */
static void
usage_dollars(struct buf *out, long long uusd)
{
	if (uusd >= 10000)
		buf_printf(out, "$%lld.%02lld", uusd / 1000000,
		    (uusd % 1000000 + 5000) / 10000 % 100);
	else
		buf_printf(out, "$0.%06lld", uusd);
}

/* render_usage - the usage rows and the estimated cost of a STATUS
 * document, as lines. */
void
render_usage(struct buf *out, const struct msg_val *doc)
{
	const struct msg_val *rows = msg_val_get(doc, "usage");
	const struct msg_val *cost = msg_val_get(doc, "cost");
	const struct msg_val *c;
	size_t k;

	if (rows == NULL || rows->type != MSG_V_ARR || rows->u.a.n == 0) {
		buf_adds(out, "usage: no model call yet\n");
		return;
	}
	buf_adds(out, "usage (tokens; cost estimated):\n");
	for (k = 0; k < rows->u.a.n; k++) {
		const struct msg_val *r = rows->u.a.items[k];
		const char *p = msg_val_str(r, "provider");
		const char *m = msg_val_str(r, "model");

		if (r->type != MSG_V_MAP)
			continue;
		buf_printf(out,
		    "  %s %s: %lld call%s, %lld in + %lld cache read + %lld "
		    "cache write, %lld out, ",
		    p ? p : "?", m ? m : "?", usage_int(r, "calls"),
		    usage_int(r, "calls") == 1 ? "" : "s",
		    usage_int(r, "input"), usage_int(r, "cache_read"),
		    usage_int(r, "cache_write"), usage_int(r, "output"));
		c = msg_val_get(r, "cost_uusd");
		if (c != NULL && c->type == MSG_V_INT)
			usage_dollars(out, (long long)c->u.i);
		else
			buf_adds(out, "no price known (add it to prices)");
		buf_addc(out, '\n');
	}
	if (cost != NULL && cost->type == MSG_V_MAP) {
		buf_adds(out, "  total: ");
		usage_dollars(out, usage_int(cost, "uusd"));
		c = msg_val_get(cost, "complete");
		if (c != NULL && c->type == MSG_V_BOOL && !c->u.b)
			buf_adds(
			    out, " and the calls of models without a price");
		buf_addc(out, '\n');
	}
}
