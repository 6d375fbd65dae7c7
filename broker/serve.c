/*
 * serve.c - what clients ask of shirod: hello, send, status, memory, zoom,
 * log, stop, ping, bye, and a turn's approve and interrupt.  Answers are documents (REPLY doc) whose fields
 * docs/architecture.md lists; events go through out_publish().
 *
 * SENDs read in one poll round are logged together (one fsync for all,
 * the store's group commit) and each is acknowledged only once that fsync
 * returned.  Any other request first flushes the SENDs before it, so a
 * client always sees its own messages in what it asks next.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/render.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"

#include "broker.h"
#include "notes.h"
#include "out.h"
#include "provider.h"
#include "runs.h"

/* The most text bytes a "message" event carries. */
#define SERVE_EVENT_TEXT 4096

/* Most view lines a MEMORY page carries, and most text bytes (a line is
 * at most a node, 512 bytes): a page is well under MSG_MAX_BODY and
 * MSG_MAX_VALUES whatever the view. */
#define SERVE_MEMORY_LINES 4096
#define SERVE_MEMORY_BYTES (1u << 20)

/* Most messages a LOG reply carries, and most text bytes in all. */
#define SERVE_LOG_MAX 1000
#define SERVE_LOG_BYTES (2u << 20)

/* serve_reply - a new REPLY for rid; *docp gets its document map. */
static struct msg *
serve_reply(uint64_t rid, struct msg_val **docp)
{
	struct msg *m = msg_new(MSG_REPLY);

	msg_set_int(m, "rid", (int64_t)rid);
	*docp = msg_set_map(m, "doc");
	return m;
}

/* serve_answer - send m to a client and free it. */
static void
serve_answer(struct broker *b, const struct msg_ident *to, struct msg **mp)
{
	(void)out_send_client(b, to, *mp);
	msg_destroy(mp);
}

/* serve_hello_replay - send one kept event to the client being welcomed. */
static void
serve_hello_replay(void *arg, const struct msg *ev)
{
	void **ctx = arg;

	(void)out_send_client(ctx[0], ctx[1], ev);
}

/* serve_hello - HELLO: attach, and replay what the client missed. */
static void
serve_hello(struct broker *b, struct clients_client *cl,
    const struct msg_ident *from, const struct msg *m, uint64_t rid)
{
	const char *name = "";
	uint64_t version = 0, last = 0;
	struct msg *w;
	int replay = 0;
	void *ctx[2];

	(void)msg_get_str(m, "client", &name, NULL);
	(void)msg_get_uint(m, "version", &version);
	if (version != MSG_VERSION) {
		out_error(b, from, rid, "version",
		    "this shirod speaks protocol version %d, not %llu; "
		    "use a shiro client of the same release",
		    MSG_VERSION, (unsigned long long)version);
		return;
	}
	snprintf(cl->name, sizeof(cl->name), "%s", name);
	cl->attached = 1;
	if (msg_get_uint(m, "last_seq", &last) == 0)
		replay = clients_replay(&b->clients, last, NULL, NULL) == 0;
	w = msg_new(MSG_WELCOME);
	msg_set_int(w, "rid", (int64_t)rid);
	msg_set_int(w, "seq", (int64_t)b->clients.seq);
	msg_set_bool(w, "replay", replay != 0);
	msg_set_int(w, "pid", getpid());
	msg_set_int(w, "version", MSG_VERSION);
	msg_set_str(w, "daemon", "shirod");
	if (out_send_client(b, from, w) == 0 && replay) {
		ctx[0] = b;
		ctx[1] = (void *)from;
		(void)clients_replay(
		    &b->clients, last, serve_hello_replay, ctx);
	}
	msg_destroy(&w);
}

/* serve_queue_send - keep a SEND for this round's group commit. */
static void
serve_queue_send(struct broker *b, const struct msg_ident *from,
    struct msg **mp, uint64_t rid)
{
	const char *kind = "", *key, *text;
	struct serve_send *s;
	size_t tlen;
	bool turn = false;

	(void)msg_get_str(*mp, "kind", &kind, NULL);
	if (strcmp(kind, "user") != 0 && strcmp(kind, "note") != 0) {
		out_error(b, from, rid, "kind",
		    "a client may send kind user or note, not \"%.16s\"", kind);
		return;
	}
	/* The client's rule for an empty message holds for any peer: a
	 * blank text is refused, never logged (docs/client.md). */
	if (msg_get_str(*mp, "text", &text, &tlen) != 0 ||
	    utf8_blank(text, tlen)) {
		out_error(b, from, rid, "text",
		    "a message may not be empty or only white space");
		return;
	}
	/* The store takes no empty key: refused here, alone, rather than
	 * in the group commit, where it would spoil the others' SENDs.  A
	 * '/' is kept for the keys of a long text's pages ("key/1"). */
	if (msg_get_str(*mp, "key", &key, NULL) == 0 &&
	    (key[0] == '\0' || strchr(key, '/') != NULL)) {
		out_error(b, from, rid, "key",
		    "a message key may not be empty or hold '/'");
		return;
	}
	if (msg_get_str(*mp, "approvals", &key, NULL) == 0 &&
	    strcmp(key, "ask") != 0 && strcmp(key, "deny") != 0 &&
	    strcmp(key, "yolo") != 0) {
		out_error(b, from, rid, "approvals",
		    "approvals is ask, deny or yolo, not \"%.8s\"", key);
		return;
	}
	(void)msg_get_bool(*mp, "turn", &turn);
	if (b->nsends == b->sends_cap) {
		b->sends_cap = b->sends_cap ? 2 * b->sends_cap : 64;
		b->sends =
		    xreallocarray(b->sends, b->sends_cap, sizeof(*b->sends));
	}
	s = &b->sends[b->nsends++];
	s->from = *from;
	s->m = *mp;
	*mp = NULL;
	s->rid = rid;
	s->turn = turn && strcmp(kind, "user") == 0;
}

/* serve_ack - ACK {rid, id, key, dup} to the sender of s. */
static void
serve_ack(struct broker *b, const struct serve_send *s, uint64_t id, int dup)
{
	struct msg *a = msg_new(MSG_ACK);
	const char *key;

	msg_set_int(a, "rid", (int64_t)s->rid);
	msg_set_int(a, "id", (int64_t)id);
	if (msg_get_str(s->m, "key", &key, NULL) == 0)
		msg_set_str(a, "key", key);
	if (dup)
		msg_set_bool(a, "dup", true);
	serve_answer(b, &s->from, &a);
}

/* serve_pin - a copy of the view as it is now (caller frees): a turn's
 * view is the one before its message (rule 49). */
static struct plan_line *
serve_pin(struct broker *b, size_t *np)
{
	const struct plan_line *lines;
	struct plan_line *v;

	plan_view(b->plan, &lines, np);
	v = xcalloc(*np ? *np : 1, sizeof(*v));
	if (*np > 0)
		memcpy(v, lines, *np * sizeof(*v));
	return v;
}

/* serve_logged - message id (of kind) was logged: planner, event. */
static void
serve_logged(struct broker *b, const char *kind, uint64_t id, int built,
    const char *text, size_t len)
{
	struct msg *ev;

	(void)compact_appended(
	    b, id, built, (uint32_t)render_flat_size(text, len));
	ev = msg_new(MSG_EVENT);
	msg_set_str(ev, "ev", "message");
	msg_set_int(ev, "id", (int64_t)id);
	msg_set_str(ev, "kind", kind);
	/* The event is a notice, kept in the replay ring: a long text is
	 * clipped there (LOG and ZOOM give it whole). */
	msg_set_strn(
	    ev, "text", text, compact_cut(text, len, SERVE_EVENT_TEXT));
	if (len > SERVE_EVENT_TEXT) {
		struct msg_val *d = msg_set_map(ev, "data");

		msg_val_set_bool(d, "clipped", true);
		msg_val_set_int(d, "size", (int64_t)len);
	}
	out_publish(b, &ev);
}

/* serve_pages - messages first .. first+count-1 (of kind) were logged
 * by store_append_long: read each back for the planner and the event; a
 * page that fits a node is its own leaf (rule 12). */
static void
serve_pages(struct broker *b, const char *kind, uint64_t first, size_t count)
{
	struct store_msg sm;
	size_t k, llen;
	char *leaf;

	for (k = 0; k < count; k++) {
		if (store_read(b->store, first + k, &sm) != 0) {
			log_warnx("message %llu: cannot read it back: %s",
			    (unsigned long long)(first + k),
			    store_errmsg(b->store));
			continue;
		}
		leaf = compact_leaf_text(sm.text, sm.len, &llen);
		if (leaf != NULL)
			compact_node_put(b, 0, first + k, leaf, llen,
			    (uint32_t)render_flat_size(leaf, llen));
		serve_logged(b, kind, first + k, leaf != NULL, sm.text, sm.len);
		free(leaf);
		store_msg_free(&sm);
	}
}

/* serve_turn - s's message (first id) is logged and asks for a turn. */
static void
serve_turn(struct broker *b, const struct serve_send *s, uint64_t id,
    struct plan_line *pinned, size_t npinned, uint64_t now)
{
	const char *text = "";
	struct turn_ask a = {NULL, NULL};
	size_t len = 0;

	(void)msg_get_str(s->m, "text", &text, &len);
	if (msg_get_str(s->m, "cwd", &a.cwd, NULL) != 0)
		a.cwd = NULL;
	if (msg_get_str(s->m, "approvals", &a.approvals, NULL) != 0)
		a.approvals = NULL;
	turn_asked(
	    b, &s->from, s->rid, id, text, len, pinned, npinned, &a, now);
}

/* serve_hand - s's user message (first id) was logged without turn: a
 * running turn gets it between its steps (rule 46). */
static void
serve_hand(struct broker *b, const struct serve_send *s, uint64_t id)
{
	const char *text = "", *kind = "";
	size_t len = 0;

	(void)msg_get_str(s->m, "kind", &kind, NULL);
	if (strcmp(kind, "user") != 0)
		return;
	(void)msg_get_str(s->m, "text", &text, &len);
	(void)turn_hand(b, id, text, len);
}

/* serve_append_keyed - log what shirod itself writes, with a key (see
 * broker.h). */
int
serve_append_keyed(struct broker *b, enum store_kind kind, const char *text,
    size_t len, const char *key, uint64_t *firstp, int *dupp)
{
	struct store_msg_in in;
	uint64_t first = 0, t0 = store_count(b->store);
	size_t count = 0;
	int rc;

	memset(&in, 0, sizeof(in));
	in.kind = kind;
	in.text = text;
	in.len = len;
	in.key = key;
	if (dupp != NULL)
		*dupp = 0;
	rc = store_append_long(b->store, &in, &first, &count);
	if (rc != 0) {
		log_warnx("a %s message of %zu bytes was not logged: %s",
		    store_kind_name(kind), len, store_errmsg(b->store));
		return rc;
	}
	if (firstp != NULL)
		*firstp = first;
	if (first < t0 || count == 0) {
		/* Its key was logged before: nothing new. */
		if (dupp != NULL)
			*dupp = 1;
		return 0;
	}
	serve_pages(b, store_kind_name(kind), first, count);
	return 0;
}

/* serve_append_own - log what shirod itself writes (see broker.h). */
int
serve_append_own(struct broker *b, enum store_kind kind, const char *text,
    size_t len, uint64_t *firstp)
{
	return serve_append_keyed(b, kind, text, len, NULL, firstp, NULL);
}

/* serve_flush_long - log one SEND too long for a page (rule 10). */
static void
serve_flush_long(struct broker *b, struct serve_send *s, uint64_t now)
{
	struct store_msg_in in;
	const char *kind = "user";
	size_t count = 0, npinned = 0;
	uint64_t first, t0 = store_count(b->store);
	struct plan_line *pinned = NULL;
	int rc;

	memset(&in, 0, sizeof(in));
	(void)msg_get_str(s->m, "kind", &kind, NULL);
	(void)store_kind_parse(kind, &in.kind);
	(void)msg_get_str(s->m, "text", &in.text, &in.len);
	if (msg_get_str(s->m, "key", &in.key, NULL) != 0)
		in.key = NULL;
	rc = store_append_long(b->store, &in, &first, &count);
	if (rc != 0) {
		out_error(b, &s->from, s->rid, "store",
		    "the message was not logged: %s", store_errmsg(b->store));
		/* Pages that became durable before the failure are in the
		 * log all the same: the planner must have them too. */
		if (count > 0)
			log_warnx("%zu pages of a long message were logged "
				  "before the failure",
			    count);
	} else {
		serve_ack(b, s, first, first < t0);
	}
	if (count == 0 || first < t0)
		return;
	if (s->turn)
		pinned = serve_pin(b, &npinned);
	serve_pages(b, kind, first, count);
	if (s->turn)
		serve_turn(b, s, first, pinned, npinned, now);
	else
		serve_hand(b, s, first);
	free(pinned);
}

/* serve_flush_batch - log sends[0..n) (each within a page) together. */
static void
serve_flush_batch(
    struct broker *b, struct serve_send *v, size_t n, uint64_t now)
{
	struct store_msg_in *in = xcalloc(n, sizeof(*in));
	struct store_node_in *nodes = xcalloc(n, sizeof(*nodes));
	char **leaf = xcalloc(n, sizeof(*leaf));
	size_t *same = xcalloc(n, sizeof(*same)); /* index of the first */
	size_t *slot = xcalloc(n, sizeof(*slot)); /* its place in in[] */
	uint64_t *ids = xcalloc(n, sizeof(*ids)), t0;
	size_t k, j, nin = 0, nnodes = 0, llen, durable = 0;
	const char *kind;
	int rc;

	t0 = store_count(b->store);
	for (k = 0; k < n; k++) {
		kind = "user";
		same[k] = k;
		(void)msg_get_str(v[k].m, "kind", &kind, NULL);
		memset(&in[nin], 0, sizeof(in[nin]));
		(void)store_kind_parse(kind, &in[nin].kind);
		(void)msg_get_str(v[k].m, "text", &in[nin].text, &in[nin].len);
		if (msg_get_str(v[k].m, "key", &in[nin].key, NULL) != 0)
			in[nin].key = NULL;
		/* A key twice in one round: the second is the first's. */
		for (j = 0; in[nin].key != NULL && j < k; j++) {
			if (same[j] == j && in[slot[j]].key != NULL &&
			    strcmp(in[slot[j]].key, in[nin].key) == 0) {
				same[k] = j;
				break;
			}
		}
		if (same[k] == k)
			slot[k] = nin++;
	}
	rc = store_append_batch(b->store, in, nin, ids, &durable);
	if ((rc == -SHIRO_ERR_INVAL || rc == -SHIRO_ERR_TOOBIG) && n > 1 &&
	    durable == 0) {
		/* The store refused one message's content before writing
		 * anything: log each alone, so that only that one fails. */
		log_info("a batch of %zu messages was refused (%s): logging "
			 "them one by one",
		    n, store_errmsg(b->store));
		for (k = 0; k < n; k++)
			serve_flush_batch(b, &v[k], 1, now);
		goto out;
	}
	/* Only the first durable of in[] were logged: those are
	 * acknowledged and go to the planner, exactly those; the others
	 * are refused. */
	if (rc != 0) {
		log_warnx("%zu of %zu messages not logged: %s", nin - durable,
		    nin, store_errmsg(b->store));
		for (k = 0; k < n; k++)
			if (slot[same[k]] >= durable)
				out_error(b, &v[k].from, v[k].rid, "store",
				    "the message was not logged: %s",
				    store_errmsg(b->store));
	}
	/* The leaves that fit a node are nodes at once (rule 12). */
	for (k = 0; k < n; k++) {
		size_t s = slot[k];

		if (same[k] != k || s >= durable || ids[s] < t0)
			continue;
		leaf[k] = compact_leaf_text(in[s].text, in[s].len, &llen);
		if (leaf[k] == NULL)
			continue;
		nodes[nnodes].l = 0;
		nodes[nnodes].i = ids[s];
		nodes[nnodes].text = leaf[k];
		nodes[nnodes].len = llen;
		nodes[nnodes].size = (uint32_t)render_flat_size(leaf[k], llen);
		nnodes++;
	}
	/* Acknowledged as soon as the log's fsync returned; the leaves go
	 * to the store with the next tree commit. */
	for (k = 0; k < n; k++) {
		uint64_t id = ids[slot[same[k]]];

		if (slot[same[k]] < durable)
			serve_ack(b, &v[k], id, same[k] != k || id < t0);
	}
	for (k = 0; k < nnodes; k++)
		compact_node_put(b, 0, nodes[k].i, nodes[k].text, nodes[k].len,
		    nodes[k].size);
	for (k = 0; k < n; k++) {
		size_t s = slot[k], npinned = 0;
		struct plan_line *pinned = NULL;

		if (same[k] != k || s >= durable || ids[s] < t0)
			continue;
		if (v[k].turn)
			pinned = serve_pin(b, &npinned);
		kind = "user";
		(void)msg_get_str(v[k].m, "kind", &kind, NULL);
		serve_logged(
		    b, kind, ids[s], leaf[k] != NULL, in[s].text, in[s].len);
		if (v[k].turn)
			serve_turn(b, &v[k], ids[s], pinned, npinned, now);
		else
			serve_hand(b, &v[k], ids[s]);
		free(pinned);
	}
out:
	for (k = 0; k < n; k++)
		free(leaf[k]);
	free(leaf);
	free(nodes);
	free(in);
	free(same);
	free(slot);
	free(ids);
}

/* serve_flush - log the SENDs of this round in one group commit. */
void
serve_flush(struct broker *b)
{
	uint64_t now = timer_now();
	size_t k, start = 0;
	size_t len;
	const char *text;

	if (b->nsends == 0)
		return;
	for (k = 0; b->broken && k < b->nsends; k++)
		out_error(b, &b->sends[k].from, b->sends[k].rid, "stopping",
		    "shirod is stopping; the message was not logged");
	for (k = 0; !b->broken && k <= b->nsends; k++) {
		len = 0;
		if (k < b->nsends)
			(void)msg_get_str(b->sends[k].m, "text", &text, &len);
		if (k < b->nsends && len <= STORE_PAGE)
			continue;
		if (k > start)
			serve_flush_batch(b, &b->sends[start], k - start, now);
		if (k < b->nsends)
			serve_flush_long(b, &b->sends[k], now);
		start = k + 1;
	}
	for (k = 0; k < b->nsends; k++)
		msg_destroy(&b->sends[k].m);
	b->nsends = 0;
	if (b->broken)
		return;
	/* Limping on would lose messages: a log that refuses every append
	 * until reopened, or a planner whose ids left the log's. */
	if (store_poisoned(b->store)) {
		broker_fail(b, "the log refuses appends until reopened: %s",
		    store_errmsg(b->store));
		return;
	}
	if (broker_check_counts(b) != 0)
		return;
	/* A failed node is tried again at the next message (rule 38). */
	compact_retry(b);
	compact_dispatch(b, now);
	serve_turns(b, now);
}

/* serve_turns - advance the turn (a view that settled, a deadline). */
void
serve_turns(struct broker *b, uint64_t now)
{
	turn_tick(b, now);
	if (b->nruns > 0)
		runs_kick(b, now);
}

/* serve_providers - the providers in the status: never a key, only
 * where it came from. */
static void
serve_providers(struct broker *b, struct msg_val *doc)
{
	struct msg_val *arr, *v;
	size_t k;

	arr = msg_val_set_arr(doc, "providers");
	for (k = 0; k < b->cfg.nproviders; k++) {
		const struct config_provider *p = &b->cfg.providers[k];

		v = msg_val_add_map(arr);
		msg_val_set_str(v, "name", p->name);
		msg_val_set_str(v, "wire", p->wire ? p->wire : "?");
		msg_val_set_str(v, "preset", p->preset ? p->preset : "?");
		if (p->base_url != NULL)
			msg_val_set_str(v, "base_url", p->base_url);
		else
			msg_val_set_nil(v, "base_url");
		if (p->model != NULL)
			msg_val_set_str(v, "model", p->model);
		else
			msg_val_set_nil(v, "model");
		if (p->key != NULL)
			msg_val_set_str(v, "key", p->key_from);
		else
			msg_val_set_nil(v, "key");
		msg_val_set_bool(v, "needs_key", p->needs_key != 0);
		msg_val_set_bool(v, "usable", provider_usable(p) != 0);
		msg_val_set_bool(v, "from_env", p->from_env != 0);
	}
}

/* serve_usage - tokens and estimated cost per provider and model. */
static void
serve_usage(struct broker *b, struct msg_val *doc)
{
	struct msg_val *arr, *v;
	unsigned long long tok[4], uusd, total = 0;
	size_t k;
	int all = 1;

	arr = msg_val_set_arr(doc, "usage");
	for (k = 0; k < b->usage.n; k++) {
		const struct store_usage *u = &b->usage.rows[k].total;

		v = msg_val_add_map(arr);
		msg_val_set_str(v, "provider", u->provider);
		msg_val_set_str(v, "model", u->model);
		msg_val_set_int(v, "calls", (int64_t)u->calls);
		msg_val_set_int(v, "input", (int64_t)u->input);
		msg_val_set_int(v, "output", (int64_t)u->output);
		msg_val_set_int(v, "cache_read", (int64_t)u->cache_read);
		msg_val_set_int(v, "cache_write", (int64_t)u->cache_write);
		tok[PROVIDER_TOK_INPUT] = u->input;
		tok[PROVIDER_TOK_OUTPUT] = u->output;
		tok[PROVIDER_TOK_CACHE_READ] = u->cache_read;
		tok[PROVIDER_TOK_CACHE_WRITE] = u->cache_write;
		if (provider_cost(&b->cfg,
			config_provider(&b->cfg, u->provider), u->model, tok,
			&uusd)) {
			msg_val_set_int(v, "cost_uusd", (int64_t)uusd);
			total += uusd;
		} else {
			msg_val_set_nil(v, "cost_uusd");
			all = 0;
		}
	}
	v = msg_val_set_map(doc, "cost");
	msg_val_set_int(v, "uusd", (int64_t)total);
	msg_val_set_bool(v, "complete", all != 0);
}

/* serve_status - fill doc with the status document. */
void
serve_status(struct broker *b, struct msg_val *doc)
{
	const struct plan_line *lines;
	struct msg_val *v, *arr;
	uint64_t size, now = timer_now();
	size_t n, k;

	msg_val_set_int(doc, "pid", getpid());
	msg_val_set_int(doc, "version", MSG_VERSION);
	msg_val_set_str(doc, "home", b->cfg.home);
	msg_val_set_int(doc, "uptime_ms", (int64_t)(now - b->started_at));
	msg_val_set_int(doc, "messages", (int64_t)plan_count(b->plan));
	plan_view(b->plan, &lines, &n);
	v = msg_val_set_map(doc, "view");
	msg_val_set_int(v, "bytes", (int64_t)plan_view_size(b->plan));
	msg_val_set_int(v, "lines", (int64_t)n);
	msg_val_set_int(v, "ceiling", (int64_t)b->cfg.memory.ceiling);
	msg_val_set_int(v, "floor", (int64_t)b->cfg.memory.floor);
	msg_val_set_bool(v, "shrinking", plan_shrinking(b->plan) != 0);
	plan_cview(b->plan, &lines, &n, &size);
	v = msg_val_set_map(doc, "cview");
	msg_val_set_int(v, "bytes", (int64_t)size);
	msg_val_set_int(v, "lines", (int64_t)n);
	msg_val_set_int(v, "ceiling", (int64_t)b->cfg.memory.cceiling);
	msg_val_set_int(v, "floor", (int64_t)b->cfg.memory.cfloor);
	msg_val_set_int(doc, "unbuilt", (int64_t)plan_unbuilt(b->plan));
	{
		unsigned waiting, running;

		runs_count(b, &waiting, &running);
		v = msg_val_set_map(doc, "runs");
		msg_val_set_int(v, "waiting", waiting);
		msg_val_set_int(v, "running", running);
		msg_val_set_int(v, "done", (int64_t)b->runs_done);
	}
	msg_val_set_int(
	    doc, "in_flight", (int64_t)(b->njobs - compact_waiting(b)));
	v = msg_val_set_map(doc, "queues");
	msg_val_set_int(v, "running", (int64_t)plan_work_running(b->plan));
	msg_val_set_int(v, "waiting_for_worker", (int64_t)compact_waiting(b));
	msg_val_set_int(v, "turns_waiting", (int64_t)b->nturns);
	msg_val_set_int(
	    v, "tree_pending", (int64_t)(b->ntnodes + b->ntbatches));
	v = msg_val_set_map(doc, "failures");
	msg_val_set_int(v, "total", (int64_t)b->failures_total);
	msg_val_set_int(v, "nodes", (int64_t)b->nfailed);
	msg_val_set_int(v, "cut", (int64_t)b->nodes_cut);
	msg_val_set_int(doc, "jobs_done", (int64_t)b->jobs_done);
	msg_val_set_int(doc, "workers_ready",
	    (int64_t)(pool_count(&b->pool, CONFIG_ROLE_MODEL, NULL, POOL_IDLE) +
		pool_count(&b->pool, CONFIG_ROLE_MODEL, NULL, POOL_BUSY)));
	arr = msg_val_set_arr(doc, "workers");
	for (k = 0; k < b->pool.n; k++) {
		const struct pool_worker *w = &b->pool.w[k];

		v = msg_val_add_map(arr);
		msg_val_set_int(v, "slot", w->idx);
		msg_val_set_str(v, "role", config_role_name(w->role));
		if (w->provider != NULL)
			msg_val_set_str(v, "provider", w->provider);
		else
			msg_val_set_nil(v, "provider");
		msg_val_set_str(v, "state",
		    w->retired ? "retired" : pool_state_name(w->state));
		if (w->workspace != NULL && !w->retired)
			msg_val_set_str(v, "workspace", w->workspace);
		msg_val_set_int(v, "pid", w->pid);
		if (w->remote)
			msg_val_set_str(v, "remote",
			    w->user + strlen(ZAP_USER_REMOTE_WORKER));
		msg_val_set_int(v, "starts", w->starts);
		msg_val_set_int(v, "jobs", w->jobs_done);
	}
	v = msg_val_set_map(doc, "clients");
	msg_val_set_int(v, "attached", (int64_t)clients_attached(&b->clients));
	msg_val_set_int(v, "known", (int64_t)b->clients.n);
	msg_val_set_int(v, "refused", (int64_t)b->n_refused);
	msg_val_set_int(v, "bad", (int64_t)b->n_bad);
	v = msg_val_set_map(doc, "auth");
	msg_val_set_int(v, "admitted", (int64_t)b->zap.admitted);
	msg_val_set_int(v, "refused", (int64_t)b->zap.refused);
	remote_status(b, doc);
	msg_val_set_int(doc, "seq", (int64_t)b->clients.seq);
	v = msg_val_set_map(doc, "turns");
	if (b->cfg.turn_provider != NULL)
		msg_val_set_str(v, "provider", b->cfg.turn_provider);
	else
		msg_val_set_nil(v, "provider");
	if (b->cfg.turns.model != NULL)
		msg_val_set_str(v, "model", b->cfg.turns.model);
	else
		msg_val_set_nil(v, "model");
	msg_val_set_str(v, "compaction_provider", b->cfg.memory.provider);
	if (b->cfg.memory.model != NULL)
		msg_val_set_str(v, "compaction_model", b->cfg.memory.model);
	else
		msg_val_set_nil(v, "compaction_model");
	msg_val_set_bool(v, "running", b->turn != NULL);
	msg_val_set_int(v, "done", (int64_t)b->turns_done);
	msg_val_set_int(v, "tool_calls", (int64_t)b->tool_calls);
	msg_val_set_int(v, "spend_today_uusd", (int64_t)b->spend_uusd);
	msg_val_set_int(v, "prompt_bytes", (int64_t)request_base_bytes(&b->rb));
	v = msg_val_set_map(doc, "gate");
	msg_val_set_int(v, "writing", (int64_t)gate_writing(&b->gate));
	msg_val_set_int(v, "waits", (int64_t)b->gate.waits);
	serve_providers(b, doc);
	serve_usage(b, doc);
}

/* serve_node_text - node (l, i)'s text flattened into out; 0 if built. */
static int
serve_node_text(struct broker *b, unsigned l, uint64_t i, struct buf *out)
{
	struct store_node nd;

	if (compact_node_get(b, l, i, &nd) != 0)
		return -SHIRO_ERR_NOENT;
	render_flatten(out, nd.text, nd.len);
	free(nd.text);
	return 0;
}

/* serve_memory - MEMORY [offset]: the status and one page of the view's
 * lines, from line offset on; next says where the following page starts
 * (absent on the last).  An offset past the view is an ERROR. */
static void
serve_memory(struct broker *b, const struct msg_ident *from,
    const struct msg *m, uint64_t rid)
{
	const struct plan_line *lines;
	struct msg_val *arr, *v, *doc;
	struct buf t = BUF_INIT;
	uint64_t offset = 0;
	size_t n, k, bytes = 0;
	struct msg *r;

	(void)msg_get_uint(m, "offset", &offset);
	plan_view(b->plan, &lines, &n);
	if (offset > n) {
		out_error(b, from, rid, "memory",
		    "offset %llu is past the view's %zu lines",
		    (unsigned long long)offset, n);
		return;
	}
	r = serve_reply(rid, &doc);
	serve_status(b, msg_val_set_map(doc, "status"));
	msg_val_set_int(doc, "offset", (int64_t)offset);
	msg_val_set_int(doc, "total", (int64_t)n);
	arr = msg_val_set_arr(doc, "lines");
	for (k = (size_t)offset; k < n; k++) {
		/* A page stays far inside one message's limits. */
		if (k - offset >= SERVE_MEMORY_LINES ||
		    bytes >= SERVE_MEMORY_BYTES) {
			msg_val_set_int(doc, "next", (int64_t)k);
			break;
		}
		v = msg_val_add_map(arr);
		msg_val_set_int(v, "id", (int64_t)(lines[k].i << lines[k].l));
		msg_val_set_int(v, "n", (int64_t)(1ULL << lines[k].l));
		msg_val_set_bool(v, "built", lines[k].built != 0);
		msg_val_set_int(
		    v, "size", (int64_t)plan_line_size(b->plan, &lines[k]));
		buf_reset(&t);
		if (!lines[k].built ||
		    serve_node_text(b, lines[k].l, lines[k].i, &t) != 0)
			buf_adds(&t, RENDER_PLACEHOLDER);
		msg_val_set_strn(v, "text", t.data, t.len);
		bytes += t.len;
	}
	buf_free(&t);
	serve_answer(b, from, &r);
}

/* serve_zoom_part - one part of a zoom: a message or a node. */
static void
serve_zoom_part(struct broker *b, struct msg_val *v, unsigned l, uint64_t i)
{
	struct store_msg sm;
	struct buf t = BUF_INIT;
	char date[64];

	msg_val_set_int(v, "id", (int64_t)(i << l));
	msg_val_set_int(v, "n", (int64_t)(1ULL << l));
	if (l == 0 && store_read(b->store, i, &sm) == 0) {
		msg_val_set_str(v, "kind", store_kind_name(sm.kind));
		msg_val_set_strn(v, "text", sm.text, sm.len);
		if (store_date(b->store, i, date, sizeof(date)) == 0)
			msg_val_set_str(v, "date", date);
		msg_val_set_bool(v, "built", plan_is_built(b->plan, 0, i));
		store_msg_free(&sm);
		return;
	}
	if (serve_node_text(b, l, i, &t) == 0) {
		msg_val_set_bool(v, "built", true);
		msg_val_set_strn(v, "text", t.data, t.len);
	} else {
		msg_val_set_bool(v, "built", false);
		msg_val_set_nil(v, "text");
	}
	buf_free(&t);
}

/* serve_zoom - ZOOM id n: the node and its two halves, or the message. */
static void
serve_zoom(struct broker *b, const struct msg_ident *from, const struct msg *m,
    uint64_t rid)
{
	struct msg *r;
	struct msg_val *doc, *arr;
	uint64_t id = 0, n = 0, T = plan_count(b->plan);
	unsigned l = 0, k;

	(void)msg_get_uint(m, "id", &id);
	(void)msg_get_uint(m, "n", &n);
	if (n == 0 || (n & (n - 1)) != 0 || id % n != 0) {
		out_error(b, from, rid, "zoom",
		    "zoom %llu %llu: n must be a power of 2 and id a multiple "
		    "of n",
		    (unsigned long long)id, (unsigned long long)n);
		return;
	}
	while ((1ULL << l) < n)
		l++;
	if (id >= T || n > T - id) {
		out_error(b, from, rid, "zoom",
		    "zoom %llu %llu: the chat has %llu messages",
		    (unsigned long long)id, (unsigned long long)n,
		    (unsigned long long)T);
		return;
	}
	r = serve_reply(rid, &doc);
	serve_zoom_part(b, msg_val_set_map(doc, "node"), l, id >> l);
	if (l > 0) {
		arr = msg_val_set_arr(doc, "parts");
		for (k = 0; k < 2; k++)
			serve_zoom_part(b, msg_val_add_map(arr), l - 1,
			    (id >> (l - 1)) + k);
	}
	serve_answer(b, from, &r);
}

/* serve_log - LOG [tail]: the last messages, oldest first.  When their
 * texts exceed SERVE_LOG_BYTES, the newest that fit are given and the
 * older ones are left out (truncated). */
static void
serve_log(struct broker *b, const struct msg *m, struct msg_val *doc)
{
	uint64_t tail = 20, T = store_count(b->store), first, id;
	struct store_msg_info info;
	struct store_msg sm;
	struct msg_val *arr, *v;
	size_t bytes = 0;
	char date[64];
	int truncated = 0;

	(void)msg_get_uint(m, "tail", &tail);
	if (tail > SERVE_LOG_MAX)
		tail = SERVE_LOG_MAX;
	first = T > tail ? T - tail : 0;
	/* Walk back from the newest while the texts fit. */
	for (id = T; id > first; id--) {
		if (store_info(b->store, id - 1, &info) != 0)
			continue;
		if (bytes + info.size > SERVE_LOG_BYTES) {
			truncated = 1;
			break;
		}
		bytes += info.size;
	}
	first = id;
	msg_val_set_int(doc, "messages", (int64_t)T);
	arr = msg_val_set_arr(doc, "log");
	for (id = first; id < T; id++) {
		if (store_read(b->store, id, &sm) != 0)
			continue;
		v = msg_val_add_map(arr);
		msg_val_set_int(v, "id", (int64_t)id);
		msg_val_set_str(v, "kind", store_kind_name(sm.kind));
		if (store_date(b->store, id, date, sizeof(date)) == 0)
			msg_val_set_str(v, "date", date);
		msg_val_set_strn(v, "text", sm.text, sm.len);
		store_msg_free(&sm);
	}
	msg_val_set_bool(doc, "truncated", truncated != 0);
}

/* serve_is_run - whether INTERRUPT m is for a RUN (what "run"). */
static int
serve_is_run(const struct msg *m)
{
	const char *what = NULL;

	return msg_get_str(m, "what", &what, NULL) == 0 &&
	    strcmp(what, "run") == 0;
}

/* serve_client - handle one message from a client (takes *mp). */
void
serve_client(struct broker *b, const struct msg_ident *from, struct msg **mp)
{
	struct msg *m = *mp, *r;
	struct msg_val *doc;
	struct clients_client *cl;
	uint64_t rid = 0;
	enum msg_type t = msg_type(m);

	(void)msg_get_uint(m, "rid", &rid);
	if (t != MSG_SEND)
		serve_flush(b);
	/* Looked up after the flush: its events may have dropped a client
	 * whose queue was full, this one too. */
	cl = clients_get(&b->clients, from, timer_now());
	switch (t) {
	case MSG_HELLO:
		if (cl != NULL)
			serve_hello(b, cl, from, m, rid);
		break;
	case MSG_SEND:
		if (b->stopping) {
			out_error(b, from, rid, "stopping",
			    "shirod is stopping; the message was not logged");
			break;
		}
		serve_queue_send(b, from, mp, rid);
		break;
	case MSG_STATUS:
		r = serve_reply(rid, &doc);
		serve_status(b, doc);
		serve_answer(b, from, &r);
		break;
	case MSG_MEMORY:
		serve_memory(b, from, m, rid);
		break;
	case MSG_ZOOM:
		serve_zoom(b, from, m, rid);
		break;
	case MSG_LOG:
		r = serve_reply(rid, &doc);
		serve_log(b, m, doc);
		serve_answer(b, from, &r);
		break;
	case MSG_STOP:
		/* Only a client that said HELLO: one the clients' socket
		 * admitted (the user's own, no worker's) and that speaks the
		 * protocol of this release. */
		if (cl == NULL || !cl->attached) {
			out_error(b, from, rid, "hello",
			    "only an attached client may stop shirod: say "
			    "HELLO first");
			break;
		}
		r = serve_reply(rid, &doc);
		msg_val_set_bool(doc, "stopping", true);
		msg_val_set_int(doc, "pid", getpid());
		serve_answer(b, from, &r);
		log_info("stop asked by a client");
		if (!b->stopping)
			b->stop_why = "shiro stop";
		b->stopping = 1;
		break;
	case MSG_NOTES:
		notes_serve(b, from, m, rid);
		break;
	case MSG_PING:
		if (msg_has(m, "run"))
			runs_read(b, from, m, timer_now());
		r = msg_new(MSG_PONG);
		msg_set_int(r, "rid", (int64_t)rid);
		msg_set_int(r, "seq", (int64_t)b->clients.seq);
		serve_answer(b, from, &r);
		break;
	case MSG_APPROVE:
	case MSG_INTERRUPT:
	case MSG_RUN:
		/* A person at an attached client decides (as for STOP): one
		 * that said HELLO on this connection. */
		if (cl == NULL || !cl->attached) {
			out_error(b, from, rid, "hello",
			    "only an attached client may %s: say HELLO first",
			    t == MSG_APPROVE   ? "answer an approval"
				: t == MSG_RUN ? "run a tool"
					       : "interrupt a turn");
			break;
		}
		if (t == MSG_APPROVE)
			turn_approve(b, from, cl->name, rid, m, timer_now());
		else if (t == MSG_RUN)
			runs_request(b, from, cl, rid, m, timer_now());
		else if (serve_is_run(m))
			runs_interrupt(b, from, rid, m, timer_now());
		else
			turn_interrupt(b, from, rid, m, timer_now());
		break;
	case MSG_BYE:
		if (cl != NULL)
			clients_drop(&b->clients, cl);
		break;
	default:
		b->n_bad++;
		out_error(b, from, rid, "type", "a client may not send %s",
		    msg_type_name(t));
		break;
	}
	msg_destroy(mp);
}
