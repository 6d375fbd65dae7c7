/*
 * fold.c - the planner rebuilt from the store's records (D1, D8, F1), and
 * the synthetic chat generator that writes those records the way a live
 * chat does.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/fold.h"
#include "broker/render.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#define FOLD_LEVELS 64

/* The state of one fold. */
struct fold_ctx {
	struct store *s;
	struct plan *p;
	struct fold_report *r;
	uint64_t count; /* messages in the log */
	uint64_t done; /* messages given to the planner */
	unsigned maxl; /* the highest level a node can have */
	struct store_node_cursor *cur[FOLD_LEVELS];
	uint64_t next_i[FOLD_LEVELS];
	uint32_t next_size[FOLD_LEVELS];
	int has[FOLD_LEVELS];
	/* fold_view_live: records past count are newer than the read;
	 * view.json (saved, ns lines) covers the first saved_t messages and
	 * is compared once the fold has them and their records. */
	int live;
	struct store_line *saved;
	size_t ns;
	uint64_t saved_t;
	int compared;
	/* What view.json's comparison found, put into the report's msg only
	 * once the fold succeeded (msg says why a fold failed). */
	char vmsg[sizeof(((struct fold_report *)0)->msg)];
};

/* What a record callback returns to end the walk early, without error. */
#define FOLD_STOP 1

/* fold_fail - say why in the report and return code. */
static int fold_fail(struct fold_ctx *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fold_fail(struct fold_ctx *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->r->msg, sizeof(c->r->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* fold_next - move level l's cursor to its next stored node. */
static int
fold_next(struct fold_ctx *c, unsigned l)
{
	int ret;

	ret =
	    store_node_cursor_next(c->cur[l], &c->next_i[l], &c->next_size[l]);
	if (ret == -SHIRO_ERR_NOENT) {
		c->has[l] = 0;
		return 0;
	}
	if (ret != 0)
		return fold_fail(c, ret, "reading nodes of level %u: %s", l,
		    store_errmsg(c->s));
	c->has[l] = 1;
	return 0;
}

/* fold_leaf - message id to the planner, built or with its text's size. */
static int
fold_leaf(struct fold_ctx *c, uint64_t id)
{
	struct store_msg m;
	int ret;

	if (c->has[0] && c->next_i[0] < id)
		return fold_fail(c, -SHIRO_ERR_CORRUPT,
		    "node (0, %llu) is out of order",
		    (unsigned long long)c->next_i[0]);
	if (c->has[0] && c->next_i[0] == id) {
		ret = plan_append(c->p, 1, c->next_size[0]);
		if (ret != 0)
			return fold_fail(c, ret, "message %llu: %s",
			    (unsigned long long)id, err_str(ret));
		c->r->nodes++;
		return fold_next(c, 0);
	}
	/* Not summarized yet: its size decides whether it needs a call. */
	if ((ret = store_read(c->s, id, &m)) != 0)
		return fold_fail(c, ret, "message %llu: %s",
		    (unsigned long long)id, store_errmsg(c->s));
	c->r->texts++;
	ret = plan_append(c->p, 0, (uint32_t)render_flat_size(m.text, m.len));
	store_msg_free(&m);
	if (ret != 0)
		return fold_fail(c, ret, "message %llu: %s",
		    (unsigned long long)id, err_str(ret));
	return 0;
}

/* fold_upto - append messages until the planner has t of them, each
 * stored node going in once its last message is there. */
static int
fold_upto(struct fold_ctx *c, uint64_t t)
{
	uint64_t now;
	unsigned l;
	int ret;

	while (c->done < t) {
		if ((ret = fold_leaf(c, c->done)) != 0)
			return ret;
		now = ++c->done;
		/* A node of level l completes only when T is a multiple of
		 * 2^l, so only those levels can have one ready. */
		for (l = 1;
		     l <= c->maxl && (now & ((UINT64_C(1) << l) - 1)) == 0;
		     l++) {
			while (c->has[l] && ((c->next_i[l] + 1) << l) <= now) {
				ret = plan_built(
				    c->p, l, c->next_i[l], c->next_size[l]);
				if (ret != 0)
					return fold_fail(c, -SHIRO_ERR_CORRUPT,
					    "node (%u, %llu): the planner "
					    "refuses it: %s",
					    l, (unsigned long long)c->next_i[l],
					    err_str(ret));
				c->r->nodes++;
				if ((ret = fold_next(c, l)) != 0)
					return ret;
			}
		}
	}
	return 0;
}

static void fold_compare_lines(
    struct fold_ctx *c, const struct store_line *saved, size_t ns);

/* fold_batch - replay one record: its merges in order, then its flag. */
static int
fold_batch(void *arg, const struct store_batch *b)
{
	struct fold_ctx *c = arg;
	size_t k;
	int ret;

	if (c->live && b->t > c->count)
		return FOLD_STOP; /* made after the log was read */
	if (c->live && !c->compared && b->t > c->saved_t) {
		if ((ret = fold_upto(c, c->saved_t)) != 0)
			return ret;
		fold_compare_lines(c, c->saved, c->ns);
	}
	if (b->t > c->count || b->t < c->done)
		return fold_fail(c, -SHIRO_ERR_CORRUPT,
		    "batch record %llu ran at T=%llu, outside 0..%llu after "
		    "T=%llu",
		    (unsigned long long)b->seq, (unsigned long long)b->t,
		    (unsigned long long)c->count, (unsigned long long)c->done);
	if ((ret = fold_upto(c, b->t)) != 0)
		return ret;
	for (k = 0; k < b->n; k++) {
		ret = plan_merge(c->p, b->merges[k].l, b->merges[k].i);
		if (ret != 0)
			return fold_fail(c, -SHIRO_ERR_CORRUPT,
			    "batch record %llu, merge %zu into (%u, %llu): %s",
			    (unsigned long long)b->seq, k, b->merges[k].l,
			    (unsigned long long)b->merges[k].i, err_str(ret));
	}
	ret = plan_restore(c->p, b->t, b->open);
	if (ret != 0)
		return fold_fail(c, -SHIRO_ERR_CORRUPT, "batch record %llu: %s",
		    (unsigned long long)b->seq, err_str(ret));
	c->r->batches++;
	c->r->merges += b->n;
	return 0;
}

/* fold_compare_lines - how saved (ns lines of view.json) stands
 * against the view the fold has now. */
static void
fold_compare_lines(
    struct fold_ctx *c, const struct store_line *saved, size_t ns)
{
	const struct plan_line *lines;
	size_t n, k;

	c->compared = 1;
	plan_view(c->p, &lines, &n);
	c->r->saved_lines = ns;
	for (k = 0; k < n && k < ns; k++)
		if (saved[k].l != lines[k].l || saved[k].i != lines[k].i)
			break;
	if (k == n && k == ns) {
		c->r->saved = FOLD_SAVED_SAME;
	} else {
		c->r->saved = FOLD_SAVED_STALE;
		snprintf(c->vmsg, sizeof(c->vmsg),
		    "view.json differs from the fold at line %zu (%zu lines "
		    "saved, %zu folded)",
		    k, ns, n);
	}
}

/* fold_load_saved - view.json into saved and ns; 0, or why not in the
 * report (r->saved MISSING or BAD, and why). */
static int
fold_load_saved(struct fold_ctx *c, struct store_line **saved, size_t *ns)
{
	int ret;

	ret = store_view_load(c->s, saved, ns);
	if (ret == -SHIRO_ERR_NOENT) {
		c->r->saved = FOLD_SAVED_MISSING;
		snprintf(c->vmsg, sizeof(c->vmsg), "no view.json");
		return ret;
	}
	if (ret != 0) {
		c->r->saved = FOLD_SAVED_BAD;
		snprintf(c->vmsg, sizeof(c->vmsg), "view.json: %s",
		    store_errmsg(c->s));
		return ret;
	}
	return 0;
}

/* fold_compare - how view.json stands against the folded view. */
static void
fold_compare(struct fold_ctx *c)
{
	struct store_line *saved;
	size_t ns;

	if (fold_load_saved(c, &saved, &ns) != 0)
		return;
	fold_compare_lines(c, saved, ns);
	free(saved);
}

/* fold_saved_end - the messages saved[0..ns) covers, or -1 when its
 * lines are not a run of nodes from message 0 on. */
static int64_t
fold_saved_end(const struct store_line *saved, size_t ns)
{
	uint64_t next = 0;
	size_t k;

	for (k = 0; k < ns; k++) {
		if (saved[k].l > STORE_LEVEL_MAX ||
		    saved[k].i > (UINT64_MAX >> saved[k].l) ||
		    (saved[k].i << saved[k].l) != next)
			return -1;
		next += UINT64_C(1) << saved[k].l;
		if (next > (uint64_t)INT64_MAX)
			return -1;
	}
	return (int64_t)next;
}

/* fold_run - fold_view and fold_view_live (live says which). */
static int
fold_run(struct store *s, const struct plan_settings *ps, int live,
    struct plan **out, struct fold_report *r)
{
	struct fold_report local;
	struct fold_ctx c;
	int64_t end;
	unsigned l;
	int ret;

	*out = NULL;
	if (r == NULL)
		r = &local;
	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.r = r;
	c.count = store_count(s);
	c.live = live;
	while (c.maxl + 1 < FOLD_LEVELS && (c.count >> (c.maxl + 1)) > 0)
		c.maxl++;
	if (live && fold_load_saved(&c, &c.saved, &c.ns) == 0) {
		end = fold_saved_end(c.saved, c.ns);
		if (end < 0) {
			r->saved = FOLD_SAVED_BAD;
			snprintf(c.vmsg, sizeof(c.vmsg),
			    "view.json: its %zu lines are not a run of nodes "
			    "from message 0",
			    c.ns);
			c.compared = 1;
		} else if ((uint64_t)end > c.count) {
			r->saved = FOLD_SAVED_STALE;
			snprintf(c.vmsg, sizeof(c.vmsg),
			    "view.json covers %lld messages, more than the "
			    "log's %llu",
			    (long long)end, (unsigned long long)c.count);
			c.compared = 1;
		}
		c.saved_t = end < 0 ? 0 : (uint64_t)end;
		r->saved_t = c.saved_t;
	} else if (live) {
		c.compared = 1; /* missing or bad: the report says which */
	}
	/* A cold start waits for many small reads: have them in parallel. */
	store_prefetch(s);
	if ((ret = plan_new(ps, &c.p)) != 0) {
		fold_fail(&c, ret, "bad planner settings");
		goto out;
	}
	for (l = 0; l <= c.maxl; l++) {
		if ((ret = store_node_cursor_open(s, l, &c.cur[l])) != 0) {
			fold_fail(&c, ret, "nodes: %s", store_errmsg(s));
			goto out;
		}
		if ((ret = fold_next(&c, l)) != 0)
			goto out;
	}
	ret = store_batch_iter(s, 0, fold_batch, &c);
	if (ret == FOLD_STOP)
		ret = 0;
	if (ret != 0) {
		if (r->msg[0] == '\0')
			fold_fail(
			    &c, ret, "batch records: %s", store_errmsg(s));
		goto out;
	}
	if (live && !c.compared) {
		if ((ret = fold_upto(&c, c.saved_t)) != 0)
			goto out;
		fold_compare_lines(&c, c.saved, c.ns);
	}
	/* Messages after the last record: no batch at start (D8). */
	if ((ret = fold_upto(&c, c.count)) != 0)
		goto out;
	r->t = c.count;
	r->shrinking = plan_shrinking(c.p);
	if (!live)
		fold_compare(&c);
	memcpy(r->msg, c.vmsg, sizeof(r->msg));
	*out = c.p;
	c.p = NULL;
out:
	for (l = 0; l < FOLD_LEVELS; l++)
		store_node_cursor_close(&c.cur[l]);
	plan_destroy(&c.p);
	free(c.saved);
	return ret;
}

/* fold_view - see fold.h. */
int
fold_view(struct store *s, const struct plan_settings *ps, struct plan **out,
    struct fold_report *r)
{
	return fold_run(s, ps, 0, out, r);
}

/* fold_view_live - see fold.h. */
int
fold_view_live(struct store *s, const struct plan_settings *ps,
    struct plan **out, struct fold_report *r)
{
	return fold_run(s, ps, 1, out, r);
}

/* fold_save - view.json from the planner's view. */
int
fold_save(struct store *s, const struct plan *p)
{
	const struct plan_line *lines;
	struct store_line *v;
	size_t n, k;
	int ret;

	plan_view(p, &lines, &n);
	v = xcalloc(n ? n : 1, sizeof(*v));
	for (k = 0; k < n; k++) {
		v[k].l = lines[k].l;
		v[k].i = lines[k].i;
	}
	ret = store_view_save(s, v, n);
	free(v);
	return ret;
}

/* Texts lent to the renderer, freed once it is done. */
struct fold_texts {
	struct store *s;
	char **v;
	size_t n, cap;
};

/* fold_text - render_source callback: a node's text from the store. */
static int
fold_text(void *arg, unsigned l, uint64_t i, const char **sp, size_t *lenp)
{
	struct fold_texts *t = arg;
	struct store_node nd;
	int ret;

	if ((ret = store_node_get(t->s, l, i, &nd)) != 0)
		return ret;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->v = xreallocarray(t->v, t->cap, sizeof(*t->v));
	}
	t->v[t->n++] = nd.text;
	*sp = nd.text;
	*lenp = nd.len;
	return 0;
}

/* fold_render - the view as the model reads it. */
int
fold_render(struct store *s, const struct plan *p, struct buf *out)
{
	struct fold_texts t = {s, NULL, 0, 0};
	struct render_source src;
	const struct plan_line *lines;
	size_t n, k;
	int ret;

	/* By field: the renderer may grow fields we leave at zero. */
	memset(&src, 0, sizeof(src));
	src.text = fold_text;
	src.arg = &t;
	plan_view(p, &lines, &n);
	ret = render_view(out, lines, n, &src, NULL);
	for (k = 0; k < t.n; k++)
		free(t.v[k]);
	free(t.v);
	return ret;
}

/* ---- The generator ---- */

/* fold_rand - splitmix64: a small, good, seedable generator. */
static uint64_t
fold_rand(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* fold_between - a number in lo..hi. */
static uint32_t
fold_between(uint64_t *st, uint32_t lo, uint32_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + (uint32_t)(fold_rand(st) % (hi - lo + 1));
}

#define FOLD_POOL (1 << 18) /* bytes of pre-made text */

/* Text to copy synthetic messages and summaries from. */
struct fold_pool {
	char *msg; /* words, newlines, "\r\n", two-byte characters */
	char *node; /* words and newlines only: flat size = length */
};

/* fold_pool_make - fill both pools from the generator's state. */
static void
fold_pool_make(struct fold_pool *pl, uint64_t *st)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz";
	size_t k;
	uint64_t r;

	pl->msg = xmalloc(FOLD_POOL);
	pl->node = xmalloc(FOLD_POOL);
	for (k = 0; k < FOLD_POOL; k++) {
		r = fold_rand(st) % 64;
		pl->node[k] = r == 0 ? '\n' : r < 10 ? ' ' : letters[r % 26];
		pl->msg[k] = pl->node[k];
		if (r == 1 && k + 1 < FOLD_POOL) {
			pl->msg[k] = '\r';
			pl->msg[++k] = '\n';
			pl->node[k] = ' ';
		} else if (r == 2 && k + 1 < FOLD_POOL) {
			pl->msg[k] = (char)0xc3; /* e acute */
			pl->msg[++k] = (char)0xa9;
			pl->node[k] = 'e';
		}
	}
}

/* fold_pool_free - release both pools. */
static void
fold_pool_free(struct fold_pool *pl)
{
	free(pl->msg);
	free(pl->node);
}

/* fold_synth_msg - about len bytes of message text, whole characters. */
static void
fold_synth_msg(
    struct buf *b, const struct fold_pool *pl, uint64_t *st, uint32_t len)
{
	size_t off, end;

	if (len > FOLD_POOL / 2)
		len = FOLD_POOL / 2;
	off = (size_t)(fold_rand(st) % (FOLD_POOL - len));
	/* Start and end outside a two-byte character. */
	if (((unsigned char)pl->msg[off] & 0xc0) == 0x80)
		off++;
	end = off + len;
	if (end < FOLD_POOL && ((unsigned char)pl->msg[end] & 0xc0) == 0x80)
		end--;
	buf_add(b, pl->msg + off, end - off);
}

/* fold_synth_node - summary text whose flattened size is exactly flat. */
static void
fold_synth_node(
    struct buf *b, const struct fold_pool *pl, uint64_t *st, uint32_t flat)
{
	size_t off = (size_t)(fold_rand(st) % (FOLD_POOL - flat));

	buf_add(b, pl->node + off, flat);
}

/* A compactor job the generator is running. */
struct fold_job {
	struct plan_job job;
};

/* The generator's state. */
struct fold_gen_ctx {
	struct store *s;
	struct plan *p;
	const struct fold_gen_opts *o;
	uint64_t rng;
	struct fold_job run[64];
	size_t nrun;
	struct fold_pool pool;
	/* Records waiting for the chunk's commit. */
	struct store_node_in *nodes;
	struct buf *texts; /* one buffer per queued node */
	size_t nnodes, capnodes;
	struct store_batch *batches;
	size_t nbatches, capbatches;
};

/* fold_gen_node - a node is built: stored (now or with the chunk) and
 * told to the planner. */
static int
fold_gen_node(struct fold_gen_ctx *g, unsigned l, uint64_t i, const char *text,
    size_t len, uint32_t size, int tell)
{
	struct store_node_in *nd;
	int ret;

	if (g->o->chunk <= 1) {
		ret = store_node_put(g->s, l, i, text, len, size, 0);
		if (ret != 0)
			return ret;
	} else {
		if (g->nnodes == g->capnodes) {
			size_t k, old = g->capnodes;

			g->capnodes = old ? old * 2 : 256;
			g->nodes = xreallocarray(
			    g->nodes, g->capnodes, sizeof(*g->nodes));
			g->texts = xreallocarray(
			    g->texts, g->capnodes, sizeof(*g->texts));
			for (k = old; k < g->capnodes; k++)
				buf_init(&g->texts[k]);
		}
		buf_reset(&g->texts[g->nnodes]);
		buf_add(&g->texts[g->nnodes], text, len);
		nd = &g->nodes[g->nnodes++];
		nd->l = l;
		nd->i = i;
		nd->len = len;
		nd->size = size;
		nd->date_ms = 0;
	}
	return tell ? plan_built(g->p, l, i, size) : 0;
}

/* fold_gen_finish - one running job ends with a synthetic summary. */
static int
fold_gen_finish(struct fold_gen_ctx *g, const struct plan_job *job)
{
	struct buf b = BUF_INIT;
	uint32_t flat;
	int ret;

	if (job->free)
		flat = job->src_size;
	else
		flat = fold_between(&g->rng, g->o->min_node, g->o->max_node);
	if (flat > STORE_NODE_MAX)
		flat = STORE_NODE_MAX;
	fold_synth_node(&b, &g->pool, &g->rng, flat);
	ret = fold_gen_node(
	    g, job->l, job->i, b.data != NULL ? b.data : "", b.len, flat, 1);
	buf_free(&b);
	return ret;
}

/* fold_gen_work - the compactor's turn after a message: running jobs
 * finish (unless late), and ready ones start. */
static int
fold_gen_work(struct fold_gen_ctx *g)
{
	struct plan_job job;
	size_t k;
	int ret, again = 1;

	while (again) {
		again = 0;
		for (k = 0; k < g->nrun;) {
			if (g->o->late > 0 &&
			    fold_rand(&g->rng) % 1000 < g->o->late) {
				k++;
				continue;
			}
			job = g->run[k].job;
			g->run[k] = g->run[--g->nrun];
			if ((ret = fold_gen_finish(g, &job)) != 0)
				return ret;
			again = g->o->late == 0;
		}
		while (g->nrun < sizeof(g->run) / sizeof(g->run[0]) &&
		    plan_work_take(g->p, &job) == 0) {
			g->run[g->nrun++].job = job;
			again = g->o->late == 0;
		}
	}
	return 0;
}

/* fold_gen_batch - a batch ran: its record, now or with the chunk. */
static int
fold_gen_batch(struct fold_gen_ctx *g, const struct plan_batch *bt)
{
	struct store_merge *mv;
	struct store_batch *b;
	size_t k;
	int ret;

	mv = xcalloc(bt->nmerges ? bt->nmerges : 1, sizeof(*mv));
	for (k = 0; k < bt->nmerges; k++) {
		mv[k].l = bt->merges[k].l;
		mv[k].i = bt->merges[k].i;
	}
	if (g->o->chunk <= 1) {
		ret = store_batch_append(g->s, plan_count(g->p), bt->shrinking,
		    mv, bt->nmerges, NULL);
		free(mv);
		if (ret == 0 && g->o->save_view)
			ret = fold_save(g->s, g->p);
		return ret;
	}
	if (g->nbatches == g->capbatches) {
		g->capbatches = g->capbatches ? g->capbatches * 2 : 64;
		g->batches = xreallocarray(
		    g->batches, g->capbatches, sizeof(*g->batches));
	}
	b = &g->batches[g->nbatches++];
	b->seq = 0;
	b->t = plan_count(g->p);
	b->open = bt->shrinking;
	b->n = bt->nmerges;
	b->merges = mv;
	return 0;
}

/* fold_gen_flush - commit the chunk's nodes and records together. */
static int
fold_gen_flush(struct fold_gen_ctx *g)
{
	size_t k;
	int ret;

	for (k = 0; k < g->nnodes; k++)
		g->nodes[k].text =
		    g->texts[k].data != NULL ? g->texts[k].data : "";
	ret = store_tree_commit(
	    g->s, g->nodes, g->nnodes, g->batches, g->nbatches);
	for (k = 0; k < g->nbatches; k++)
		free(g->batches[k].merges);
	g->nnodes = 0;
	g->nbatches = 0;
	return ret;
}

/* fold_gen - see fold.h. */
int
fold_gen(struct store *s, struct plan *p, const struct fold_gen_opts *o)
{
	struct fold_gen_ctx g;
	struct store_msg_in *m = NULL;
	struct buf *tx = NULL;
	struct plan_batch bt;
	uint64_t *ids = NULL, left = o->n;
	size_t chunk = o->chunk ? o->chunk : 1, k, n;
	char **keys = NULL;
	uint32_t flat, node_max = plan_get_settings(p)->node_size;
	int ret = 0, built;

	memset(&g, 0, sizeof(g));
	g.s = s;
	g.p = p;
	g.o = o;
	g.rng = o->seed ^ (store_count(s) * UINT64_C(0x2545f4914f6cdd1d));
	fold_pool_make(&g.pool, &g.rng);
	m = xcalloc(chunk, sizeof(*m));
	tx = xcalloc(chunk, sizeof(*tx));
	keys = xcalloc(chunk, sizeof(*keys));
	ids = xcalloc(chunk, sizeof(*ids));
	while (left > 0) {
		n = left < chunk ? (size_t)left : chunk;
		for (k = 0; k < n; k++) {
			buf_reset(&tx[k]);
			fold_synth_msg(&tx[k], &g.pool, &g.rng,
			    fold_between(&g.rng, o->min_msg, o->max_msg));
			m[k].kind = (enum store_kind)(
			    fold_rand(&g.rng) % STORE_KIND_COUNT);
			m[k].text = tx[k].data != NULL ? tx[k].data : "";
			m[k].len = tx[k].len;
			m[k].date_ms = 0;
			free(keys[k]);
			keys[k] = NULL;
			if (o->keys)
				keys[k] = xasprintf("gen-%llu",
				    (unsigned long long)(store_count(s) + k));
			m[k].key = keys[k];
		}
		if ((ret = store_append_batch(s, m, n, ids, NULL)) != 0)
			goto out;
		for (k = 0; k < n; k++) {
			if (o->acked != NULL)
				o->acked(o->arg, ids[k]);
			flat = (uint32_t)render_flat_size(m[k].text, m[k].len);
			/* A short message is its own leaf (rule 12). */
			built = flat <= node_max && m[k].len <= STORE_NODE_MAX;
			ret = plan_append(p, built, flat);
			/* plan_append has counted the leaf built already. */
			if (ret == 0 && built)
				ret = fold_gen_node(&g, 0, ids[k], m[k].text,
				    m[k].len, flat, 0);
			if (ret != 0)
				goto out;
			plan_sawtooth(p, &bt);
			if (bt.ran && (ret = fold_gen_batch(&g, &bt)) != 0)
				goto out;
			if ((ret = fold_gen_work(&g)) != 0)
				goto out;
		}
		if (chunk > 1 && (ret = fold_gen_flush(&g)) != 0)
			goto out;
		left -= n;
	}
out:
	/* Jobs still running go back to the queue for the next call. */
	for (k = 0; k < g.nrun; k++)
		(void)plan_work_drop(p, g.run[k].job.l, g.run[k].job.i);
	if (chunk > 1 && ret != 0) {
		for (k = 0; k < g.nbatches; k++)
			free(g.batches[k].merges);
	}
	for (k = 0; k < g.capnodes; k++)
		buf_free(&g.texts[k]);
	free(g.texts);
	free(g.nodes);
	fold_pool_free(&g.pool);
	free(g.batches);
	for (k = 0; k < chunk; k++) {
		buf_free(&tx[k]);
		free(keys[k]);
	}
	free(tx);
	free(keys);
	free(m);
	free(ids);
	return ret;
}
