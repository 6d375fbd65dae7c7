/*
 * compact.c - the compactor's side of shirod: the planner's ready nodes go
 * to model workers as JOBs, their RESULTs become tree nodes, and nodes
 * that keep failing are built from their input cut to 512 bytes (D5).
 *
 * The planner decides what is ready (rules 39-42); this file only moves
 * jobs between the planner, the store and the workers.  A worker's text
 * is untrusted: it is cut to 512 bytes at a character boundary (the
 * decoder already checked it is UTF-8), an empty one counts as a failure.
 */
#include <stdlib.h>
#include <string.h>

#include "broker/render.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "broker.h"
#include "out.h"
#include "prompt.h"
#include "runs.h"

/* compact_leaf_text - the node text of a message, or NULL if too long. */
char *
compact_leaf_text(const char *text, size_t len, size_t *outlen)
{
	struct buf b = BUF_INIT;

	if (len <= PLAN_NODE_SIZE) {
		*outlen = len;
		return xmemdup(text, len + 1);
	}
	if (render_flat_size(text, len) > PLAN_NODE_SIZE)
		return NULL;
	/* Only the flat form fits (many "\r\n"): the node is that form. */
	render_flatten(&b, text, len);
	return buf_steal(&b, outlen);
}

/* compact_cut - the longest prefix of valid UTF-8 s within max bytes that
 * ends at a character boundary. */
size_t
compact_cut(const char *s, size_t len, size_t max)
{
	size_t cut;

	if (len <= max)
		return len;
	cut = max;
	while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	return cut;
}

/* compact_name - "id+n" of node (l, i) into a fixed buffer. */
static const char *
compact_name(unsigned l, uint64_t i, char *out, size_t outlen)
{
	snprintf(out, outlen, "%llu+%llu", (unsigned long long)(i << l),
	    (unsigned long long)(1ULL << l));
	return out;
}

/* compact_find - the job with wire id, or NULL. */
static struct compact_job *
compact_find(struct broker *b, uint64_t id)
{
	size_t k;

	for (k = 0; k < b->njobs; k++)
		if (b->jobs[k].id == id)
			return &b->jobs[k];
	return NULL;
}

/* compact_forget - remove job j from the table. */
static void
compact_forget(struct broker *b, struct compact_job *j)
{
	size_t k = (size_t)(j - b->jobs);

	memmove(&b->jobs[k], &b->jobs[k + 1],
	    (b->njobs - k - 1) * sizeof(*b->jobs));
	b->njobs--;
}

/* compact_failure - the failure record of (l, i), created if create. */
static struct compact_failure *
compact_failure(struct broker *b, unsigned l, uint64_t i, int create)
{
	size_t k;

	for (k = 0; k < b->nfailed; k++)
		if (b->failed[k].l == l && b->failed[k].i == i)
			return &b->failed[k];
	if (!create)
		return NULL;
	if (b->nfailed == b->failed_cap) {
		b->failed_cap = b->failed_cap ? 2 * b->failed_cap : 8;
		b->failed =
		    xreallocarray(b->failed, b->failed_cap, sizeof(*b->failed));
	}
	b->failed[b->nfailed].l = l;
	b->failed[b->nfailed].i = i;
	b->failed[b->nfailed].count = 0;
	return &b->failed[b->nfailed++];
}

/* compact_view_event - add the view's size and lines to an event. */
static void
compact_view_event(struct broker *b, struct msg *ev)
{
	const struct plan_line *lines;
	size_t n;

	plan_view(b->plan, &lines, &n);
	msg_set_int(ev, "view_bytes", (int64_t)plan_view_size(b->plan));
	msg_set_int(ev, "view_lines", (int64_t)n);
}

/* compact_arm - make sure a tree commit is due soon. */
static void
compact_arm(struct broker *b)
{
	if (b->ntnodes + b->ntbatches >= 4096) {
		compact_commit(b);
		return;
	}
	if (!b->tree_armed) {
		b->tree_armed = 1;
		(void)timer_add(
		    &b->timers, timer_now() + BROKER_TREE_MS, BROKER_T_TREE, 0);
	}
}

/* compact_node_put - keep node (l, i) for the next tree commit. */
void
compact_node_put(struct broker *b, unsigned l, uint64_t i, const char *text,
    size_t len, uint32_t size)
{
	struct compact_node *n;

	if (b->ntnodes == b->tnodes_cap) {
		b->tnodes_cap = b->tnodes_cap ? 2 * b->tnodes_cap : 64;
		b->tnodes =
		    xreallocarray(b->tnodes, b->tnodes_cap, sizeof(*b->tnodes));
	}
	n = &b->tnodes[b->ntnodes++];
	n->l = l;
	n->i = i;
	n->text = xmalloc(len + 1);
	memcpy(n->text, text, len);
	n->text[len] = '\0';
	n->len = len;
	n->size = size;
	compact_arm(b);
}

/* compact_batch_put - keep a batch record for the next tree commit. */
static void
compact_batch_put(
    struct broker *b, uint64_t t, int open, struct store_merge *mv, size_t n)
{
	struct store_batch *bt;

	if (b->ntbatches == b->tbatches_cap) {
		b->tbatches_cap = b->tbatches_cap ? 2 * b->tbatches_cap : 16;
		b->tbatches = xreallocarray(
		    b->tbatches, b->tbatches_cap, sizeof(*b->tbatches));
	}
	bt = &b->tbatches[b->ntbatches++];
	memset(bt, 0, sizeof(*bt));
	bt->t = t;
	bt->open = open;
	bt->n = n;
	bt->merges = mv;
	compact_arm(b);
}

/*
 * compact_commit - the nodes and batch records made since the last
 * commit, in one LMDB commit (store_tree_commit), in the order they were
 * made.  A crash loses at most this tail: its nodes are built again, and
 * a lost batch runs again at the next message (D8).  A failed commit is
 * tried again a second later; nothing is written twice.
 */
void
compact_commit(struct broker *b)
{
	struct store_node_in *v;
	size_t k;
	int rc;

	b->tree_armed = 0;
	if (b->broken)
		return;
	/* The tokens used ride along: a crash loses at most this moment's. */
	if ((rc = usage_flush(&b->usage, b->store)) != 0)
		log_warnx("usage not stored (%s): %s; trying again later",
		    err_str(rc), store_errmsg(b->store));
	if (b->ntnodes == 0 && b->ntbatches == 0)
		return;
	v = xcalloc(b->ntnodes ? b->ntnodes : 1, sizeof(*v));
	for (k = 0; k < b->ntnodes; k++) {
		v[k].l = b->tnodes[k].l;
		v[k].i = b->tnodes[k].i;
		v[k].text = b->tnodes[k].text;
		v[k].len = b->tnodes[k].len;
		v[k].size = b->tnodes[k].size;
	}
	rc = store_tree_commit(
	    b->store, v, b->ntnodes, b->tbatches, b->ntbatches);
	free(v);
	if (rc != 0) {
		/* A refused commit leaves LMDB poisoned or full: trying
		 * again forever would only hold the nodes in memory.  They
		 * are built again after the restart (D8). */
		broker_fail(b,
		    "the tree refused a commit of %zu nodes and %zu batch "
		    "records (%s): %s",
		    b->ntnodes, b->ntbatches, err_str(rc),
		    store_errmsg(b->store));
		return;
	}
	b->tree_commits++;
	for (k = 0; k < b->ntnodes; k++)
		free(b->tnodes[k].text);
	for (k = 0; k < b->ntbatches; k++)
		free(b->tbatches[k].merges);
	b->ntnodes = 0;
	b->ntbatches = 0;
}

/* compact_node_get - node (l, i) from the pending commit or the store. */
int
compact_node_get(
    struct broker *b, unsigned l, uint64_t i, struct store_node *out)
{
	size_t k;

	for (k = b->ntnodes; k-- > 0;) {
		const struct compact_node *n = &b->tnodes[k];

		if (n->l == l && n->i == i) {
			memset(out, 0, sizeof(*out));
			out->l = l;
			out->i = i;
			out->text = xmalloc(n->len + 1);
			memcpy(out->text, n->text, n->len + 1);
			out->len = n->len;
			out->size = n->size;
			return 0;
		}
	}
	return store_node_get(b->store, l, i, out);
}

/* compact_appended - message id was logged: the planner and its batch. */
int
compact_appended(struct broker *b, uint64_t id, int built, uint32_t size)
{
	struct plan_batch bt;
	struct store_merge *mv = NULL;
	struct msg *ev;
	struct msg_val *arr;
	char name[48];
	size_t k;
	int rc, was;

	rc = plan_append(b->plan, built, size);
	if (rc != 0) {
		log_warnx("planner refused message %llu: %s",
		    (unsigned long long)id, err_str(rc));
		return rc;
	}
	if (built)
		out_trace(b, "msg %u", size);
	else
		out_trace(b, "msg");
	was = plan_shrinking(b->plan);
	plan_sawtooth(b->plan, &bt);
	/* A batch that merged nothing and left the view shrinking as it was
	 * changes nothing a restart needs: the last record already says the
	 * view is open, and the fold leaves the next lines appended as the
	 * live batch did.  Only batches that merge or that open or close the
	 * view are logged (F1, D8). */
	if (!bt.ran || (bt.nmerges == 0 && (bt.shrinking != 0) == (was != 0))) {
		out_view_changed(b, 0);
		return 0;
	}
	if (bt.nmerges > 0)
		mv = xcalloc(bt.nmerges, sizeof(*mv));
	ev = msg_new(MSG_EVENT);
	msg_set_str(ev, "ev", "batch");
	arr = msg_set_arr(ev, "merges");
	for (k = 0; k < bt.nmerges; k++) {
		mv[k].l = bt.merges[k].l;
		mv[k].i = bt.merges[k].i;
		msg_val_add_str(arr,
		    compact_name(
			bt.merges[k].l, bt.merges[k].i, name, sizeof(name)));
	}
	compact_batch_put(b, plan_count(b->plan), bt.shrinking, mv, bt.nmerges);
	compact_view_event(b, ev);
	msg_val_set_bool(
	    msg_set_map(ev, "data"), "shrinking", bt.shrinking != 0);
	out_publish(b, &ev);
	out_view_changed(b, bt.nmerges > 0);
	return 0;
}

/* compact_build - node (l, i) is built with text: the planner, the next
 * tree commit, an event. */
static void
compact_build(struct broker *b, unsigned l, uint64_t i, const char *text,
    size_t len, int cut)
{
	struct compact_failure *f;
	struct msg *ev;
	struct buf flat = BUF_INIT;
	size_t size;
	int rc;

	size = render_flat_size(text, len);
	rc = plan_built(b->plan, l, i, (uint32_t)size);
	if (rc != 0) {
		log_warnx("planner refused node %u:%llu: %s", l,
		    (unsigned long long)i, err_str(rc));
		return;
	}
	compact_node_put(b, l, i, text, len, (uint32_t)size);
	out_trace(b, "built %u %llu %zu", l, (unsigned long long)i, size);
	f = compact_failure(b, l, i, 0);
	if (f != NULL)
		*f = b->failed[--b->nfailed];
	ev = msg_new(MSG_EVENT);
	msg_set_str(ev, "ev", "node");
	msg_set_int(ev, "id", (int64_t)(i << l));
	msg_set_int(ev, "n", (int64_t)(1ULL << l));
	render_flatten(&flat, text, len);
	msg_set_strn(ev, "text", flat.data ? flat.data : "", flat.len);
	buf_free(&flat);
	compact_view_event(b, ev);
	if (cut)
		msg_val_set_bool(msg_set_map(ev, "data"), "cut", true);
	out_publish(b, &ev);
}

/* compact_inputs - the texts a job of (l, i) works on: the message, or
 * the two children.  0, or a store error. */
static int
compact_inputs(struct broker *b, unsigned l, uint64_t i, char **texts,
    size_t *lens, size_t *n, enum store_kind *kindp)
{
	struct store_msg sm;
	struct store_node nd;
	unsigned k;
	int rc;

	*n = 0;
	if (l == 0) {
		rc = store_read(b->store, i, &sm);
		if (rc != 0)
			return rc;
		texts[0] = sm.text;
		lens[0] = sm.len;
		if (kindp != NULL)
			*kindp = sm.kind;
		sm.text = NULL;
		store_msg_free(&sm);
		*n = 1;
		return 0;
	}
	for (k = 0; k < 2; k++) {
		rc = compact_node_get(b, l - 1, 2 * i + k, &nd);
		if (rc != 0) {
			if (k == 1)
				free(texts[0]);
			return rc;
		}
		texts[k] = nd.text;
		lens[k] = nd.len;
	}
	*n = 2;
	return 0;
}

/* compact_join - the source of a node: one input, or two with a newline. */
static char *
compact_join(char **texts, size_t *lens, size_t n, size_t *lenp)
{
	struct buf s = BUF_INIT;

	buf_add(&s, texts[0], lens[0]);
	if (n == 2) {
		buf_addc(&s, '\n');
		buf_add(&s, texts[1], lens[1]);
	}
	if (s.data == NULL)
		buf_adds(&s, "");
	return buf_steal(&s, lenp);
}

/* compact_free_job - a source that fits is its own node (rule 12). */
static void
compact_free_job(struct broker *b, const struct plan_job *job)
{
	char *texts[2], *src, *node;
	size_t lens[2], n, len, nlen;
	int rc;

	rc = compact_inputs(b, job->l, job->i, texts, lens, &n, NULL);
	if (rc != 0) {
		log_warnx("node %u:%llu: cannot read its input (%s): %s",
		    job->l, (unsigned long long)job->i, err_str(rc),
		    store_errmsg(b->store));
		(void)plan_work_fail(b->plan, job->l, job->i);
		return;
	}
	src = compact_join(texts, lens, n, &len);
	node = compact_leaf_text(src, len, &nlen);
	if (node == NULL) {
		/* The planner's size said it fits; cut it to be safe. */
		nlen = compact_cut(src, len, PLAN_NODE_SIZE);
		node = xmemdup(src, nlen + 1);
		node[nlen] = '\0';
	}
	compact_build(b, job->l, job->i, node, nlen, 0);
	free(node);
	free(src);
	free(texts[0]);
	if (n == 2)
		free(texts[1]);
}

/* compact_cut_build - the last failure: the input cut to 512 bytes. */
static void
compact_cut_build(struct broker *b, unsigned l, uint64_t i)
{
	char *texts[2], *src;
	size_t lens[2], n, len, cut;
	int rc;

	rc = compact_inputs(b, l, i, texts, lens, &n, NULL);
	if (rc != 0) {
		log_warnx("node %u:%llu: cannot read its input (%s)", l,
		    (unsigned long long)i, err_str(rc));
		(void)plan_work_fail(b->plan, l, i);
		return;
	}
	src = compact_join(texts, lens, n, &len);
	cut = compact_cut(src, len, PLAN_NODE_SIZE);
	b->nodes_cut++;
	compact_build(b, l, i, src, cut, 1);
	free(src);
	free(texts[0]);
	if (n == 2)
		free(texts[1]);
}

/*
 * compact_line - the context line "id+n|text" of built node (l, i),
 * borrowed from a direct-mapped cache of rendered lines: nodes are never
 * rebuilt, so an entry never goes stale, and the compaction view changes
 * slowly, so most jobs find their whole context there.  NULL if the node
 * cannot be read.
 */
static const struct compact_cached *
compact_line(struct broker *b, unsigned l, uint64_t i)
{
	struct compact_cached *c;
	struct store_node nd;
	struct buf line = BUF_INIT;
	uint64_t h;

	if (b->lines == NULL)
		b->lines = xcalloc(COMPACT_CACHE, sizeof(*b->lines));
	h = (i * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)l * 0xc2b2ae3d27d4eb4fULL);
	c = &b->lines[(h >> 20) % COMPACT_CACHE];
	if (c->text != NULL && c->l == l && c->i == i)
		return c;
	if (compact_node_get(b, l, i, &nd) != 0)
		return NULL;
	render_name(&line, l, i);
	buf_addc(&line, '|');
	render_flatten(&line, nd.text, nd.len);
	free(nd.text);
	free(c->text);
	c->l = l;
	c->i = i;
	c->text = buf_steal(&line, &c->len);
	return c;
}

/* compact_line_text - the line of built node (l, i), borrowed. */
int
compact_line_text(
    struct broker *b, unsigned l, uint64_t i, const char **sp, size_t *lenp)
{
	const struct compact_cached *c = compact_line(b, l, i);

	if (c == NULL)
		return -SHIRO_ERR_NOENT;
	*sp = c->text;
	*lenp = c->len;
	return 0;
}

/* compact_context - the lines of (l, i)'s context (rule 34) into arr
 * (may be NULL) and into the view v (may be NULL). */
static void
compact_context(struct broker *b, unsigned l, uint64_t i, struct msg_val *arr,
    struct request_view *v)
{
	const struct plan_line *lines;
	const struct compact_cached *c;
	uint64_t size;
	size_t n, total, k;

	if (plan_context(b->plan, l, i, &n) != 0)
		return;
	plan_cview(b->plan, &lines, &total, &size);
	for (k = 0; k < n && k < total; k++) {
		c = compact_line(b, lines[k].l, lines[k].i);
		if (c == NULL)
			break;
		if (arr != NULL)
			msg_val_add_strn(arr, c->text, c->len);
		if (v != NULL)
			request_view_add(v, c->text, c->len);
	}
}

/* compact_offline - whether compactions go to the offline summarizer. */
static int
compact_offline(const struct broker *b)
{
	const struct config_provider *p =
	    config_provider(&b->cfg, b->cfg.memory.provider);

	return p == NULL || p->wire == NULL ||
	    strcmp(p->wire, CONFIG_OFFLINE) == 0 || b->cfg.memory.model == NULL;
}

/* compact_model_hash - the provider and model, mixed into gate keys: each
 * model has a cache of its own. */
static uint64_t
compact_model_hash(const char *provider, const char *model)
{
	uint64_t h =
	    request_hash(0xcbf29ce484222325ULL, provider, strlen(provider) + 1);

	return request_hash(h, model, strlen(model));
}

/* compact_task - the task of job j's node: its message, or its halves. */
static void
compact_task(struct buf *out, const struct compact_job *j, char **texts,
    size_t *lens, size_t n, enum store_kind kind)
{
	struct buf a = BUF_INIT, c = BUF_INIT;

	buf_adds(out, "</chat>\n\n");
	if (j->l == 0 || n < 2) {
		prompt_compress_task(out, j->i, store_kind_name(kind), texts[0],
		    lens[0], PLAN_NODE_SIZE);
		return;
	}
	render_flatten(&a, texts[0], lens[0]);
	render_flatten(&c, texts[1], lens[1]);
	prompt_merge_task(out, j->l, j->i, a.data ? a.data : "", a.len,
	    c.data ? c.data : "", c.len, PLAN_NODE_SIZE);
	buf_free(&a);
	buf_free(&c);
}

/* compact_unread - the bytes of v's marked prefix the cache lacks. */
static size_t
compact_unread(
    struct broker *b, const struct request_view *v, uint64_t mh, uint64_t now)
{
	size_t max = v->nlines / REQUEST_BLOCK + 1, n, unread;
	uint64_t *keys = xcalloc(max, sizeof(*keys));
	size_t *bytes = xcalloc(max, sizeof(*bytes));

	n = request_boundaries(v, &b->rb, mh, keys, bytes, max);
	unread = gate_unread(&b->gate, keys, bytes, n, now);
	free(keys);
	free(bytes);
	return unread;
}

/* compact_send returns this when the prefix gate holds the job back. */
#define COMPACT_GATED 1

/*
 * compact_send - send job j to the worker w, which has room: 0, or
 * msg_send's code, or COMPACT_GATED when another call is writing the
 * prefix its request marks (rule 30).
 */
static int
compact_send(struct broker *b, struct compact_job *j, struct pool_worker *w,
    uint64_t now)
{
	char *texts[2];
	size_t lens[2], n, k, nkeys = 0, extra = 0, whole = 0;
	enum store_kind kind = STORE_KIND_USER;
	struct request_view v;
	struct msg *m;
	struct msg_val *arr, *in, *data, *req, *content;
	struct buf tail = BUF_INIT;
	uint64_t keys[GATE_KEYS], markhash = 0, mh = 0;
	unsigned cl = j->l ? j->l - 1 : 0;
	int rc, model = !compact_offline(b);

	rc = compact_inputs(b, j->l, j->i, texts, lens, &n, &kind);
	if (rc != 0) {
		log_warnx("node %u:%llu: cannot read its input (%s): %s", j->l,
		    (unsigned long long)j->i, err_str(rc),
		    store_errmsg(b->store));
		return rc;
	}
	request_view_init(&v);
	if (model) {
		/* The request's marks decide whether the gate lets it go. */
		compact_context(b, j->l, j->i, NULL, &v);
		extra = request_lookback(&v, &b->rb, &b->cmark);
		whole = v.nlines - v.nlines % REQUEST_BLOCK;
		mh = compact_model_hash(
		    b->cfg.memory.provider, b->cfg.memory.model);
		keys[nkeys++] = b->rb.hash ^ mh;
		if (extra > 0)
			keys[nkeys++] =
			    request_prefix_hash(&v, &b->rb, extra) ^ mh;
		if (whole > 0)
			keys[nkeys++] =
			    request_prefix_hash(&v, &b->rb, whole) ^ mh;
		/* Wait for another call's prefix only when the cache lacks
		 * enough of this one's to make the wait worth it. */
		if (compact_unread(b, &v, mh, now) >=
			b->cfg.memory.gate_bytes &&
		    !gate_may_go(&b->gate, keys, nkeys, now)) {
			rc = COMPACT_GATED;
			goto out;
		}
	}
	m = msg_new(MSG_JOB);
	msg_set_int(m, "job", (int64_t)j->id);
	msg_set_str(m, "kind", "compact");
	msg_set_int(m, "l", j->l);
	msg_set_int(m, "i", (int64_t)j->i);
	msg_set_int(m, "limit", PLAN_NODE_SIZE);
	msg_set_int(m, "deadline_ms", COMPACT_DEADLINE_MS);
	arr = msg_set_arr(m, "inputs");
	for (k = 0; k < n; k++) {
		/* The message, or the two children (left first). */
		uint64_t ci = j->l ? 2 * j->i + k : j->i;

		in = msg_val_add_map(arr);
		msg_val_set_int(in, "id", (int64_t)(ci << cl));
		msg_val_set_int(in, "n", (int64_t)(1ULL << cl));
		if (j->l == 0)
			msg_val_set_str(in, "kind", store_kind_name(kind));
		msg_val_set_strn(in, "text", texts[k], lens[k]);
	}
	/* The context and the request are for a model; the built-in
	 * extractive summarizer reads only the inputs, so it is not sent
	 * the 16-32 KB. */
	if (model) {
		compact_context(b, j->l, j->i, msg_set_arr(m, "context"), NULL);
		data = msg_set_map(m, "data");
		req = msg_val_set_map(data, "request");
		request_head(req, &b->rb, b->cfg.memory.model,
		    REQUEST_COMPACT_TOKENS, 0);
		content =
		    request_message(msg_val_set_arr(req, "messages"), "user");
		(void)request_view_parts(content, &v, extra, &b->rb, &markhash);
		compact_task(&tail, j, texts, lens, n, kind);
		request_text_part(content, tail.data, tail.len, 1);
		msg_val_set_int(data, "tries", COMPACT_TRIES);
	}
	rc = msg_send(b->wsock, m, &w->ident);
	msg_destroy(&m);
	if (rc == 0) {
		j->worker = (int)w->idx;
		j->sent_at = now;
		pool_assign(w, j->id, now);
		if (model) {
			request_mark_set(&b->cmark, &v, &b->rb);
			gate_sent(&b->gate, j->id, keys, nkeys, now);
		}
	}
out:
	for (k = 0; k < n; k++)
		free(texts[k]);
	request_view_free(&v);
	buf_free(&tail);
	return rc;
}

/* compact_dispatch - start every ready job the workers can take. */
void
compact_dispatch(struct broker *b, uint64_t now)
{
	struct plan_job pj;
	struct compact_job *j;
	struct pool_worker *w;
	size_t k;
	int rc;

	if (b->stopping)
		return;
	/* A turn's call goes first: it is what someone waits for. */
	turn_tick(b, now);
	while (plan_work_take(b->plan, &pj) == 0) {
		if (pj.free) {
			compact_free_job(b, &pj);
			continue;
		}
		if (b->njobs == b->jobs_cap) {
			b->jobs_cap = b->jobs_cap ? 2 * b->jobs_cap : 16;
			b->jobs = xreallocarray(
			    b->jobs, b->jobs_cap, sizeof(*b->jobs));
		}
		j = &b->jobs[b->njobs++];
		j->id = ++b->next_job;
		j->l = pj.l;
		j->i = pj.i;
		j->src_size = pj.src_size;
		j->worker = -1;
		j->sent_at = 0;
		j->gated = 0;
	}
	for (k = 0; k < b->njobs; k++) {
		j = &b->jobs[k];
		if (j->worker >= 0)
			continue;
		w = pool_idle(
		    &b->pool, CONFIG_ROLE_MODEL, b->cfg.memory.provider);
		if (w == NULL)
			break;
		rc = compact_send(b, j, w, now);
		/* Counted once per call held back, not per look. */
		if (rc == COMPACT_GATED && !j->gated)
			b->gate.waits++;
		j->gated = rc == COMPACT_GATED;
		if (rc == COMPACT_GATED)
			continue;
		if (rc == -SHIRO_ERR_NOENT || rc == -SHIRO_ERR_AGAIN) {
			/* The worker is gone or stuck: restart it. */
			(void)pool_kill(&b->pool, w, "cannot take a job", now);
			k--;
		} else if (rc != 0) {
			(void)plan_work_fail(b->plan, j->l, j->i);
			compact_forget(b, j);
			k--;
		}
	}
}

/* compact_job_of - the job m names, sent to w; NULL (logged) if not. */
static struct compact_job *
compact_job_of(struct broker *b, struct pool_worker *w, const struct msg *m)
{
	struct compact_job *j;
	uint64_t id;

	if (msg_get_uint(m, "job", &id) != 0)
		return NULL;
	j = compact_find(b, id);
	if (j == NULL || j->worker != (int)w->idx) {
		log_info("worker %u: %s for job %llu it does not hold, ignored",
		    w->idx, msg_type_name(msg_type(m)), (unsigned long long)id);
		return NULL;
	}
	return j;
}

/* compact_failed - count a failure of j; the last one cuts the input. */
static void
compact_failed(
    struct broker *b, struct compact_job *j, const char *code, const char *text)
{
	struct compact_failure *f;
	struct msg *ev;
	unsigned l = j->l;
	uint64_t i = j->i;

	b->failures_total++;
	f = compact_failure(b, l, i, 1);
	f->count++;
	ev = msg_new(MSG_EVENT);
	msg_set_str(ev, "ev", "failure");
	msg_set_int(ev, "id", (int64_t)(i << l));
	msg_set_int(ev, "n", (int64_t)(1ULL << l));
	msg_set_str(ev, "code", code);
	msg_set_strn(ev, "text", text, compact_cut(text, strlen(text), 1024));
	msg_val_set_int(msg_set_map(ev, "data"), "failures", f->count);
	out_publish(b, &ev);
	log_info("node %u:%llu failed (%u of %u): %s: %.200s", l,
	    (unsigned long long)i, f->count, b->cfg.memory.failures, code,
	    text);
	compact_forget(b, j);
	if (f->count >= b->cfg.memory.failures)
		compact_cut_build(b, l, i);
	else
		(void)plan_work_fail(b->plan, l, i);
}

/* compact_result - RESULT for a job from worker w. */
void
compact_result(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	struct compact_job *j;
	struct usage_tokens u;
	const char *text = NULL;
	size_t len = 0, cut;
	uint64_t id = 0;

	if (msg_get_uint(m, "job", &id) == 0 && turn_owns(b, id)) {
		turn_result(b, w, m, now);
		return;
	}
	if (runs_owns(b, id)) {
		runs_result(b, w, m, now);
		return;
	}
	j = compact_job_of(b, w, m);
	if (j == NULL)
		return;
	(void)pool_done(w, j->id);
	if (gate_done(&b->gate, j->id))
		compact_dispatch(b, now);
	if (!compact_offline(b)) {
		usage_take(m, w->idx, &u);
		usage_add(
		    &b->usage, b->cfg.memory.provider, b->cfg.memory.model, &u);
	}
	if (msg_get_str(m, "text", &text, &len) != 0 || len == 0) {
		compact_failed(b, j, "empty", "the worker returned no text");
	} else {
		cut = len > PLAN_NODE_SIZE
		    ? compact_cut(text, len, PLAN_NODE_SIZE)
		    : len;
		if (cut < len)
			log_info("worker %u: a %zu-byte line for node "
				 "%u:%llu, cut to %zu",
			    w->idx, len, j->l, (unsigned long long)j->i, cut);
		b->jobs_done++;
		{
			unsigned l = j->l;
			uint64_t i = j->i;

			compact_forget(b, j);
			compact_build(b, l, i, text, cut, 0);
		}
	}
	compact_dispatch(b, now);
}

/* compact_fail - FAIL for a job from worker w. */
void
compact_fail(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	struct compact_job *j;
	const char *code = "failed", *text = "";
	uint64_t id = 0;

	if (msg_get_uint(m, "job", &id) == 0 && turn_owns(b, id)) {
		turn_fail(b, w, m, now);
		return;
	}
	if (runs_owns(b, id)) {
		runs_fail(b, w, m, now);
		return;
	}
	j = compact_job_of(b, w, m);
	if (j == NULL)
		return;
	(void)pool_done(w, j->id);
	(void)gate_done(&b->gate, j->id);
	(void)msg_get_str(m, "code", &code, NULL);
	(void)msg_get_str(m, "text", &text, NULL);
	compact_failed(b, j, code, text);
	compact_dispatch(b, now);
}

/* compact_chunk - a CHUNK: the start of a compaction's response opens
 * the gate for the calls that wait on its prefix (rule 30). */
void
compact_chunk(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	const struct compact_job *j;
	const char *part = "text";
	uint64_t id = 0;

	if (msg_get_uint(m, "job", &id) != 0)
		return;
	if (turn_owns(b, id)) {
		turn_chunk(b, w, m, now);
		return;
	}
	if (runs_owns(b, id)) {
		runs_chunk(b, w, m);
		return;
	}
	j = compact_find(b, id);
	if (j == NULL || j->worker != (int)w->idx)
		return;
	(void)msg_get_str(m, "part", &part, NULL);
	if (strcmp(part, "start") == 0 && gate_started(&b->gate, id, now))
		compact_dispatch(b, now);
}

/* compact_cancel - send CANCEL for job j to its worker, which is idle for
 * shirod from now on (a late answer is ignored). */
static void
compact_cancel(struct broker *b, struct compact_job *j)
{
	struct pool_worker *w;
	struct msg *m;

	if (j->worker < 0 || (unsigned)j->worker >= b->pool.n)
		return;
	w = &b->pool.w[j->worker];
	m = msg_new(MSG_CANCEL);
	msg_set_int(m, "job", (int64_t)j->id);
	if (pool_holds(w, j->id)) {
		(void)msg_send(b->wsock, m, &w->ident);
		(void)pool_done(w, j->id);
	}
	msg_destroy(&m);
	(void)gate_done(&b->gate, j->id);
	j->worker = -1;
}

/* compact_overdue - a job past its deadline is canceled and counts as a
 * failure (a worker that heartbeats but never answers). */
void
compact_overdue(struct broker *b, uint64_t now)
{
	size_t k = 0;

	turn_overdue(b, now);
	while (k < b->njobs) {
		struct compact_job *j = &b->jobs[k];

		if (j->worker < 0 ||
		    timer_since(now, j->sent_at) <= COMPACT_DEADLINE_MS) {
			k++;
			continue;
		}
		compact_cancel(b, j);
		compact_failed(b, j, "timeout",
		    "the worker did not answer before the deadline");
	}
}

/* compact_turn_waits - a turn started to wait (D5): jobs for nodes that
 * are not unbuilt lines of the view stop, without a failure, so that the
 * view's lines go first. */
void
compact_turn_waits(struct broker *b, uint64_t now)
{
	size_t k = 0;

	plan_work_wait(b->plan, 1);
	while (k < b->njobs) {
		struct compact_job *j = &b->jobs[k];

		if (plan_work_needed(b->plan, j->l, j->i)) {
			k++;
			continue;
		}
		compact_cancel(b, j);
		(void)plan_work_drop(b->plan, j->l, j->i);
		compact_forget(b, j);
	}
	compact_dispatch(b, now);
}

/* compact_requeue - the worker that held job is gone: its jobs wait for
 * another one (a worker holds several, the pool hands back the first). */
void
compact_requeue(struct broker *b, uint64_t job)
{
	struct compact_job *j = compact_find(b, job);
	int slot = j != NULL ? j->worker : turn_slot(b, job);
	size_t k;

	if (slot < 0)
		slot = runs_slot(b, job);
	if (slot < 0)
		return;
	for (k = 0; k < b->njobs; k++) {
		j = &b->jobs[k];
		if (j->worker != slot)
			continue;
		log_info("job %llu (node %u:%llu) goes to another worker",
		    (unsigned long long)j->id, j->l, (unsigned long long)j->i);
		(void)gate_done(&b->gate, j->id);
		j->worker = -1;
	}
	turn_lost(b, slot, timer_now());
	runs_lost(b, slot, timer_now());
}

/* compact_retry - every failed node is ready again. */
void
compact_retry(struct broker *b)
{
	if (b->nfailed > 0)
		plan_work_retry(b->plan);
}

/* compact_waiting - jobs waiting for a worker. */
size_t
compact_waiting(const struct broker *b)
{
	size_t k, n = 0;

	for (k = 0; k < b->njobs; k++)
		n += b->jobs[k].worker < 0;
	return n;
}
