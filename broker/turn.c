/*
 * turn.c - the turn: settle, call, tools, next step, done (see turn.h).
 *
 * Everything a worker sends back is untrusted: a reply's parts are
 * checked before they are passed on to the next call (request.c), its
 * usage before it is counted (usage.c), a tool call's input is parsed as
 * JSON and its arguments checked before the store is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/render.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "broker.h"
#include "notes.h"
#include "out.h"
#include "provider.h"
#include "request.h"
#include "turn.h"

/* The most bytes of an image zoom(id, 1) passes on (one BIN value). */
#define TURN_IMAGE_MAX (1u << 20)
/* The most bytes of a tool's result shown in its event. */
#define TURN_EVENT_RESULT 2048

enum turn_state { TURN_SETTLE, TURN_CALL, TURN_DONE };

/* A SEND that asked for this turn; each gets the turn's end. */
struct turn_asker {
	struct msg_ident from;
	uint64_t rid;
	uint64_t id;
};

/* A user's message handed to the turn while it ran (rule 46). */
struct turn_handed {
	uint64_t id;
	char *text;
	size_t len;
};

/* An image of a zoomed message. */
struct turn_image {
	const char *media;
	char *data;
	size_t len;
};

/* The result of one tool call. */
struct turn_out {
	char *id; /* the tool_use id it answers */
	char *text;
	size_t len;
	int error;
	struct turn_image *images;
	size_t nimages;
};

/* One step: the model's reply, then what went back to it. */
struct turn_step {
	struct msg *reply; /* a holder of data.content: the checked parts */
	struct turn_out *outs;
	size_t nouts;
	struct turn_handed *handed;
	size_t nhanded;
};

struct turn {
	enum turn_state state;
	uint64_t id; /* the first message answered */
	struct turn_asker *askers;
	size_t naskers;
	struct plan_line *pinned; /* the view before the message */
	size_t npinned;
	char *text; /* the message whole */
	size_t len;
	uint64_t deadline;
	struct turn_handed *early; /* handed before the first call */
	size_t nearly;
	struct turn_handed *handed; /* waiting for the next step */
	size_t nhanded;
	struct request_view view; /* rendered once settled */
	size_t extra; /* the view's lookback mark, decided once */
	size_t cut_lines; /* lines shown from their cut input (D10) */
	struct turn_step *steps;
	size_t nsteps;
	uint64_t job; /* the call in flight, 0 when none */
	int worker; /* its slot, -1 while it waits for one */
	uint64_t sent_at;
	int started, streamed, resent;
	unsigned calls; /* calls sent */
	struct buf reply; /* the text of every step */
	struct usage_tokens usage;
	const char *stop;
	struct notes_turn *notes; /* its project's notes and tasks (notes.c) */
};

/* turn_handed_free - release a list of handed messages. */
static void
turn_handed_free(struct turn_handed *v, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		free(v[k].text);
	free(v);
}

/* turn_destroy - free *tp and everything in it. */
static void
turn_destroy(struct turn **tp)
{
	struct turn *t = *tp;
	size_t k, j, i;

	if (t == NULL)
		return;
	for (k = 0; k < t->nsteps; k++) {
		struct turn_step *s = &t->steps[k];

		msg_destroy(&s->reply);
		for (j = 0; j < s->nouts; j++) {
			free(s->outs[j].id);
			free(s->outs[j].text);
			for (i = 0; i < s->outs[j].nimages; i++)
				free(s->outs[j].images[i].data);
			free(s->outs[j].images);
		}
		free(s->outs);
		turn_handed_free(s->handed, s->nhanded);
	}
	free(t->steps);
	turn_handed_free(t->early, t->nearly);
	turn_handed_free(t->handed, t->nhanded);
	request_view_free(&t->view);
	notes_turn_destroy(&t->notes);
	buf_free(&t->reply);
	free(t->askers);
	free(t->pinned);
	free(t->text);
	free(t);
	*tp = NULL;
}

/* turn_provider - the turns' provider, or NULL. */
static const struct config_provider *
turn_provider(const struct broker *b)
{
	if (b->cfg.turn_provider == NULL)
		return NULL;
	return config_provider(&b->cfg, b->cfg.turn_provider);
}

/* turn_hand_add - append a handed message to a list. */
static void
turn_hand_add(struct turn_handed **v, size_t *n, uint64_t id, const char *text,
    size_t len)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n].id = id;
	(*v)[*n].text = xmemdup(text, len + 1);
	(*v)[*n].text[len] = '\0';
	(*v)[*n].len = len;
	(*n)++;
}

/* turn_event - a new EVENT ev of the turn t. */
static struct msg *
turn_event(const struct turn *t, const char *ev)
{
	struct msg *m = msg_new(MSG_EVENT);

	msg_set_str(m, "ev", ev);
	msg_set_int(m, "id", (int64_t)t->id);
	return m;
}

/* turn_notice - publish a notice of the turn. */
static void
turn_notice(
    struct broker *b, const struct turn *t, const char *code, const char *text)
{
	struct msg *ev = turn_event(t, "notice");

	msg_set_str(ev, "code", code);
	msg_set_str(ev, "text", text);
	out_publish(b, &ev);
}

/* turn_usage_map - the turn's tokens as a map in mapv. */
static void
turn_usage_map(struct msg_val *mapv, const struct usage_tokens *u)
{
	msg_val_set_int(mapv, "input", (int64_t)u->v[0]);
	msg_val_set_int(mapv, "output", (int64_t)u->v[1]);
	msg_val_set_int(mapv, "cache_read", (int64_t)u->v[2]);
	msg_val_set_int(mapv, "cache_write", (int64_t)u->v[3]);
}

/* turn_done_event - the `done` event: the outcome, the reply, usage. */
static struct msg *
turn_done_event(
    struct broker *b, const struct turn *t, const char *code, const char *text)
{
	const struct config_provider *p = turn_provider(b);
	struct msg *ev = turn_event(t, "done");
	struct msg_val *d, *arr;
	size_t k;

	msg_set_str(ev, "code", code);
	if (strcmp(code, "ok") == 0)
		msg_set_strn(ev, "text", t->reply.data ? t->reply.data : "",
		    compact_cut(t->reply.data ? t->reply.data : "",
			t->reply.len, MSG_MAX_TEXT));
	else
		msg_set_strn(ev, "text", text,
		    compact_cut(text, strlen(text), MSG_MAX_TEXT));
	d = msg_set_map(ev, "data");
	turn_usage_map(msg_val_set_map(d, "usage"), &t->usage);
	msg_val_set_int(d, "steps", (int64_t)t->nsteps);
	if (t->stop != NULL)
		msg_val_set_str(d, "stop", t->stop);
	if (p != NULL) {
		msg_val_set_str(d, "provider", p->name);
		if (b->cfg.turns.model != NULL)
			msg_val_set_str(d, "model", b->cfg.turns.model);
	}
	if (strcmp(code, "ok") == 0 && t->reply.len > 0)
		msg_val_set_str(d, "reply", "logged");
	arr = msg_val_set_arr(d, "messages");
	for (k = 0; k < t->naskers; k++)
		msg_val_add_int(arr, (int64_t)t->askers[k].id);
	return ev;
}

/*
 * turn_end - the turn ends with code (ok, no_model, unreachable, model,
 * stopping): every attached client gets the `done` event, and an asker
 * that is not attached gets it too.
 */
static void
turn_end(struct broker *b, const char *code, const char *text)
{
	struct turn *t = b->turn;
	struct msg *ev;
	size_t k;

	if (t == NULL)
		return;
	if (t->job != 0) {
		(void)gate_done(&b->gate, t->job);
		if (t->worker >= 0 && (unsigned)t->worker < b->pool.n &&
		    pool_holds(&b->pool.w[t->worker], t->job)) {
			struct msg *c = msg_new(MSG_CANCEL);

			msg_set_int(c, "job", (int64_t)t->job);
			(void)msg_send(
			    b->wsock, c, &b->pool.w[t->worker].ident);
			msg_destroy(&c);
			(void)pool_done(&b->pool.w[t->worker], t->job);
		}
	}
	t->state = TURN_DONE;
	ev = turn_done_event(b, t, code, text);
	out_publish(b, &ev);
	for (k = 0; k < t->naskers; k++) {
		struct clients_client *cl =
		    clients_find(&b->clients, &t->askers[k].from);

		if (cl != NULL && cl->attached)
			continue;
		ev = turn_done_event(b, t, code, text);
		msg_set_int(ev, "seq", (int64_t)b->clients.seq);
		msg_set_int(ev, "rid", (int64_t)t->askers[k].rid);
		(void)out_send_client(b, &t->askers[k].from, ev);
		msg_destroy(&ev);
	}
	log_info("turn of message %llu: %s after %zu steps (%llu in, %llu "
		 "out, %llu cached)",
	    (unsigned long long)t->id, code, t->nsteps,
	    (unsigned long long)t->usage.v[0],
	    (unsigned long long)t->usage.v[1],
	    (unsigned long long)t->usage.v[2]);
	b->turns_done++;
	turn_destroy(&b->turn);
	if (b->nturns > 0) {
		b->nturns = 0;
		plan_work_wait(b->plan, 0);
	}
}

/* turn_no_model - no provider can answer: each asker gets ERROR
 * no_model saying how to configure one. */
static void
turn_no_model(struct broker *b, int settled)
{
	const struct config_provider *p = turn_provider(b);
	struct turn *t = b->turn;
	char why[1024];
	size_t k;

	if (p == NULL)
		snprintf(why, sizeof(why),
		    "no model is configured for turns. Set ANTHROPIC_API_KEY "
		    "or OPENAI_API_KEY (or SHIRO_PROVIDER=ollama for a local "
		    "server) where you run shiro, then restart shirod with "
		    "'shiro stop'; or name a provider in turns.provider of "
		    "%s/config.json (docs/providers.md)",
		    b->cfg.home);
	else if (b->cfg.turns.model == NULL)
		snprintf(why, sizeof(why),
		    "provider %s has no model for turns: set SHIRO_MODEL "
		    "where you run shiro and restart shirod ('shiro stop'), "
		    "or turns.model in %s/config.json",
		    p->name, b->cfg.home);
	else
		snprintf(why, sizeof(why),
		    "provider %s needs an API key and has none: set %s where "
		    "you run shiro and restart shirod ('shiro stop'), or "
		    "providers.%s.keyFile in %s/config.json",
		    p->name,
		    p->key_env != NULL ? p->key_env
			: provider_preset_find(p->preset) &&
			    provider_preset_find(p->preset)->key_env
			? provider_preset_find(p->preset)->key_env
			: "SHIRO_API_KEY",
		    p->name, b->cfg.home);
	for (k = 0; k < t->naskers; k++)
		out_error(b, &t->askers[k].from, t->askers[k].rid, "no_model",
		    "%s. Message %llu was logged and %s.", why,
		    (unsigned long long)t->askers[k].id,
		    settled ? "summarized" : "will be summarized");
	turn_destroy(&b->turn);
	if (b->nturns > 0) {
		b->nturns = 0;
		plan_work_wait(b->plan, 0);
	}
}

/* turn_settled - whether every pinned line is built. */
static int
turn_settled(const struct broker *b, const struct turn *t)
{
	size_t k;

	for (k = 0; k < t->npinned; k++)
		if (!t->pinned[k].built &&
		    !plan_is_built(b->plan, t->pinned[k].l, t->pinned[k].i))
			return 0;
	return 1;
}

/*
 * turn_render - the pinned view as the model reads it: each built line
 * its node's text, each line still unbuilt its message flattened and
 * cut to 512 bytes (D10).
 */
static int
turn_render(struct broker *b, struct turn *t)
{
	struct buf line = BUF_INIT;
	struct store_msg sm;
	const char *s;
	size_t len, k;
	int rc = 0;

	request_view_init(&t->view);
	for (k = 0; k < t->npinned; k++) {
		const struct plan_line *ln = &t->pinned[k];

		if (ln->built || plan_is_built(b->plan, ln->l, ln->i)) {
			rc = compact_line_text(b, ln->l, ln->i, &s, &len);
			if (rc != 0)
				break;
			request_view_add(&t->view, s, len);
			continue;
		}
		rc = store_read(b->store, ln->i, &sm);
		if (rc != 0)
			break;
		buf_reset(&line);
		render_name(&line, ln->l, ln->i);
		buf_addc(&line, '|');
		{
			struct buf flat = BUF_INIT;

			render_flatten(&flat, sm.text, sm.len);
			if (flat.len > 0)
				buf_add(&line, flat.data,
				    render_cut(
					flat.data, flat.len, PLAN_NODE_SIZE));
			buf_free(&flat);
		}
		store_msg_free(&sm);
		request_view_add(&t->view, line.data, line.len);
		t->cut_lines++;
	}
	buf_free(&line);
	if (rc != 0)
		log_warnx("turn of message %llu: the view cannot be read "
			  "(%s): %s",
		    (unsigned long long)t->id, err_str(rc),
		    store_errmsg(b->store));
	return rc;
}

/* turn_tail - the first message's last part: the view's end, the
 * per-turn state, the Turn: line and the message whole (rules 49, 51,
 * D11). */
static void
turn_tail(const struct turn *t, struct buf *out)
{
	size_t k;

	buf_adds(out, "</chat>\n\n");
	notes_turn_state(t->notes, out);
	prompt_turn_line(out);
	buf_addc(out, '\n');
	buf_add(out, t->text, t->len);
	for (k = 0; k < t->nearly; k++) {
		buf_printf(out,
		    "\n\nThe user sent one more message (%llu) while this turn "
		    "waited:\n",
		    (unsigned long long)t->early[k].id);
		buf_add(out, t->early[k].text, t->early[k].len);
	}
}

/* turn_job - the JOB of the turn's next call. */
static struct msg *
turn_job(struct broker *b, struct turn *t, uint64_t *keys, size_t *nkeys)
{
	const struct config_provider *p = turn_provider(b);
	struct msg_val *data, *req, *msgs, *content, *part, *last;
	struct buf tail = BUF_INIT;
	struct msg *m;
	uint64_t markhash, mh;
	size_t k, j, i;

	m = msg_new(MSG_JOB);
	msg_set_int(m, "job", (int64_t)t->job);
	msg_set_str(m, "kind", "call");
	msg_set_int(m, "deadline_ms", TURN_CALL_DEADLINE_MS);
	data = msg_set_map(m, "data");
	req = msg_val_set_map(data, "request");
	request_head(req, &b->rb, b->cfg.turns.model, b->cfg.turns.max_tokens,
	    b->cfg.turns.thinking);
	msgs = msg_val_set_arr(req, "messages");
	content = request_message(msgs, "user");
	(void)request_view_parts(
	    content, &t->view, t->extra, &b->rb, &markhash);
	turn_tail(t, &tail);
	last = request_text_part(content, tail.data, tail.len, 0);
	buf_free(&tail);
	for (k = 0; k < t->nsteps; k++) {
		const struct turn_step *s = &t->steps[k];
		const struct msg_val *d, *parts;

		if (msg_get_map(s->reply, "data", &d) == 0 &&
		    (parts = msg_val_get(d, "content")) != NULL &&
		    parts->u.a.n > 0)
			(void)request_copy_parts(
			    request_message(msgs, "assistant"), parts);
		if (s->nouts == 0 && s->nhanded == 0)
			continue;
		content = request_message(msgs, "user");
		for (j = 0; j < s->nouts; j++) {
			part = msg_val_add_map(content);
			msg_val_set_str(part, "type", "tool_result");
			msg_val_set_str(part, "id", s->outs[j].id);
			msg_val_set_strn(
			    part, "text", s->outs[j].text, s->outs[j].len);
			if (s->outs[j].error)
				msg_val_set_bool(part, "error", true);
			last = part;
		}
		for (j = 0; j < s->nouts; j++) {
			for (i = 0; i < s->outs[j].nimages; i++) {
				part = msg_val_add_map(content);
				msg_val_set_str(part, "type", "image");
				msg_val_set_str(
				    part, "media", s->outs[j].images[i].media);
				msg_val_set_bin(part, "data",
				    s->outs[j].images[i].data,
				    s->outs[j].images[i].len);
				last = part;
			}
		}
		for (j = 0; j < s->nhanded; j++) {
			struct buf h = BUF_INIT;

			buf_printf(&h,
			    "The user sent this message (%llu) while you "
			    "were working:\n",
			    (unsigned long long)s->handed[j].id);
			buf_add(&h, s->handed[j].text, s->handed[j].len);
			last = request_text_part(content, h.data, h.len, 0);
			buf_free(&h);
		}
	}
	/* One mark at the request's end: the next step reads all of this
	 * one from the cache (the earlier end's entry is a few parts back,
	 * well within the lookback).  With the system's, the view's and the
	 * lookback's that makes four at most. */
	msg_val_set_bool(last, "cache", true);
	/* After the mark: the task list as todo_write changed it. */
	notes_turn_tail(t->notes, msgs);
	/* The gate's keys: the same prefixes the compactions mark, mixed
	 * with provider and model (each has its own cache). */
	*nkeys = 0;
	mh = request_hash(
	    request_hash(0xcbf29ce484222325ULL, p->name, strlen(p->name) + 1),
	    b->cfg.turns.model, strlen(b->cfg.turns.model));
	keys[(*nkeys)++] = b->rb.hash ^ mh;
	keys[(*nkeys)++] = markhash ^ mh;
	return m;
}

/* turn_send - send the turn's next call to a worker of its provider, or
 * leave it waiting for one. */
static void
turn_send(struct broker *b, uint64_t now)
{
	const struct config_provider *p = turn_provider(b);
	struct turn *t = b->turn;
	struct pool_worker *w;
	uint64_t keys[GATE_KEYS];
	size_t nkeys;
	struct msg *m;
	int rc;

	if (t->job == 0)
		t->job = ++b->next_job;
	t->worker = -1;
	t->started = t->streamed = 0;
	w = pool_idle(&b->pool, CONFIG_ROLE_MODEL, p->name);
	if (w == NULL)
		return;
	m = turn_job(b, t, keys, &nkeys);
	rc = msg_send(b->wsock, m, &w->ident);
	msg_destroy(&m);
	if (rc == -SHIRO_ERR_NOENT || rc == -SHIRO_ERR_AGAIN) {
		(void)pool_kill(&b->pool, w, "cannot take a call", now);
		return;
	}
	if (rc != 0) {
		turn_end(b, "model",
		    "the request could not be sent to a model worker: it is "
		    "larger than one message may be (4 MiB); start a new "
		    "turn with less to read");
		return;
	}
	t->worker = (int)w->idx;
	t->sent_at = now;
	t->calls++;
	pool_assign(w, t->job, now);
	gate_sent(&b->gate, t->job, keys, nkeys, now);
}

/* turn_begin_calls - the view settled (or its time is up): render it and
 * make the first call. */
static void
turn_begin_calls(struct broker *b, uint64_t now, int settled)
{
	const struct config_provider *p = turn_provider(b);
	struct turn *t = b->turn;
	struct msg *ev;
	char note[160];

	if (b->nturns > 0) {
		b->nturns = 0;
		plan_work_wait(b->plan, 0);
	}
	if (p == NULL || !provider_usable(p) || b->cfg.turns.model == NULL) {
		turn_no_model(b, settled);
		return;
	}
	if (turn_render(b, t) != 0) {
		turn_end(b, "model",
		    "the view could not be read from the store; see shirod's "
		    "log");
		return;
	}
	t->extra = request_lookback(&t->view, &b->rb, &b->tmark);
	request_mark_set(&b->tmark, &t->view, &b->rb);
	t->state = TURN_CALL;
	ev = turn_event(t, "turn");
	msg_set_str(ev, "code", "start");
	{
		struct msg_val *d = msg_set_map(ev, "data");

		msg_val_set_str(d, "provider", p->name);
		msg_val_set_str(d, "model", b->cfg.turns.model);
		msg_val_set_int(d, "view_lines", (int64_t)t->view.nlines);
		msg_val_set_int(d, "view_bytes", (int64_t)t->view.text.len);
		msg_val_set_int(d, "cut", (int64_t)t->cut_lines);
	}
	out_publish(b, &ev);
	if (t->cut_lines > 0) {
		snprintf(note, sizeof(note),
		    "%zu lines of the view were not summarized in time; they "
		    "show the start of their messages",
		    t->cut_lines);
		turn_notice(b, t, "unsettled", note);
	}
	turn_send(b, now);
}

/* turn_asked - a SEND asked for a turn (see turn.h). */
void
turn_asked(struct broker *b, const struct msg_ident *from, uint64_t rid,
    uint64_t id, const char *text, size_t len, const char *cwd,
    const struct plan_line *pinned, size_t npinned, uint64_t now)
{
	struct turn *t = b->turn;
	struct turn_asker *a;

	if (t != NULL) {
		/* A turn runs: the message joins it (rule 46). */
		if (t->calls == 0)
			turn_hand_add(&t->early, &t->nearly, id, text, len);
		else
			turn_hand_add(&t->handed, &t->nhanded, id, text, len);
		t->askers = xreallocarray(
		    t->askers, t->naskers + 1, sizeof(*t->askers));
		a = &t->askers[t->naskers++];
		a->from = *from;
		a->rid = rid;
		a->id = id;
		{
			struct msg *ev = turn_event(t, "notice");
			char note[96];

			snprintf(note, sizeof(note),
			    "message %llu is handed to the running turn",
			    (unsigned long long)id);
			msg_set_str(ev, "code", "handed");
			msg_set_str(ev, "text", note);
			msg_val_set_int(
			    msg_set_map(ev, "data"), "message", (int64_t)id);
			out_publish(b, &ev);
		}
		return;
	}
	t = xcalloc(1, sizeof(*t));
	t->state = TURN_SETTLE;
	t->id = id;
	t->worker = -1;
	t->askers = xcalloc(1, sizeof(*t->askers));
	t->askers[0].from = *from;
	t->askers[0].rid = rid;
	t->askers[0].id = id;
	t->naskers = 1;
	t->npinned = npinned;
	t->pinned = xcalloc(npinned ? npinned : 1, sizeof(*t->pinned));
	if (npinned > 0)
		memcpy(t->pinned, pinned, npinned * sizeof(*t->pinned));
	t->text = xmemdup(text, len + 1);
	t->text[len] = '\0';
	t->len = len;
	t->deadline = now + b->cfg.memory.settle_ms;
	t->notes = notes_turn_new(b, cwd);
	b->turn = t;
	b->nturns = 1;
	(void)timer_add(&b->timers, t->deadline, BROKER_T_SETTLE, 0);
	/* This dispatches, which ticks the turn: it may end (and be freed)
	 * there already, so only b->turn is looked at from here on. */
	compact_turn_waits(b, now);
	turn_tick(b, now);
}

/* turn_tick - advance the turn (see turn.h). */
void
turn_tick(struct broker *b, uint64_t now)
{
	struct turn *t = b->turn;
	int settled;

	if (t == NULL)
		return;
	if (t->state == TURN_SETTLE) {
		settled = turn_settled(b, t);
		if (settled || now >= t->deadline)
			turn_begin_calls(b, now, settled);
		return;
	}
	if (t->state == TURN_CALL && t->worker < 0 && !b->stopping)
		turn_send(b, now);
}

/* turn_owns - job is the turn's call. */
int
turn_owns(const struct broker *b, uint64_t job)
{
	return b->turn != NULL && job != 0 && b->turn->job == job;
}

/* turn_slot - the slot of the turn's call, or -1. */
int
turn_slot(const struct broker *b, uint64_t job)
{
	return turn_owns(b, job) ? b->turn->worker : -1;
}

/* turn_from_worker - the turn, if w holds its call named in m. */
static struct turn *
turn_from_worker(struct broker *b, struct pool_worker *w, const struct msg *m)
{
	uint64_t job = 0;

	if (msg_get_uint(m, "job", &job) != 0 || !turn_owns(b, job) ||
	    b->turn->worker != (int)w->idx)
		return NULL;
	return b->turn;
}

/* turn_call_ended - w answered the turn's call: it holds it no more. */
static void
turn_call_ended(struct broker *b, struct turn *t, struct pool_worker *w)
{
	(void)pool_done(w, t->job);
	(void)gate_done(&b->gate, t->job);
	t->job = 0;
	t->worker = -1;
}

/* turn_chunk - a streamed piece of the turn's call. */
void
turn_chunk(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	struct turn *t = turn_from_worker(b, w, m);
	const char *part = "text", *text = "";
	size_t len = 0;
	struct msg *ev;

	if (t == NULL)
		return;
	(void)msg_get_str(m, "part", &part, NULL);
	(void)msg_get_str(m, "text", &text, &len);
	if (strcmp(part, "start") == 0) {
		t->started = 1;
		if (gate_started(&b->gate, t->job, now))
			compact_dispatch(b, now);
		return;
	}
	if (strcmp(part, "retry") == 0) {
		turn_notice(b, t, "retry", text);
		return;
	}
	if (strcmp(part, "text") != 0 && strcmp(part, "thinking") != 0)
		return;
	if (len == 0)
		return;
	/* Thinking is shown, never logged (rule 8). */
	if (part[1] == 'e')
		t->streamed = 1;
	ev = turn_event(t, part[1] == 'e' ? "text" : "thinking");
	msg_set_strn(ev, "text", text, len);
	out_publish(b, &ev);
}

/* turn_json_uint - key of obj as a whole number into *v; 0 or -1. */
static int
turn_json_uint(json_t *obj, const char *key, uint64_t *v)
{
	json_t *x = json_object_get(obj, key);

	if (x == NULL || !json_is_integer(x) || json_integer_value(x) < 0)
		return -1;
	*v = (uint64_t)json_integer_value(x);
	return 0;
}

/* turn_media - the media type of an image file by its extension. */
static const char *
turn_media(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot == NULL)
		return NULL;
	if (strcmp(dot, ".png") == 0)
		return "image/png";
	if (strcmp(dot, ".jpg") == 0 || strcmp(dot, ".jpeg") == 0)
		return "image/jpeg";
	if (strcmp(dot, ".gif") == 0)
		return "image/gif";
	if (strcmp(dot, ".webp") == 0)
		return "image/webp";
	return NULL;
}

/* turn_images - the images of message id into out (rule 53). */
static void
turn_images(
    struct broker *b, uint64_t id, struct turn_out *out, struct buf *text)
{
	char **paths = NULL;
	size_t n = 0, k, got;
	struct stat st;
	const char *media;
	ssize_t r;
	int fd;

	if (store_image_list(b->store, id, &paths, &n) != 0)
		return;
	for (k = 0; k < n; k++) {
		media = turn_media(paths[k]);
		fd = media ? open(paths[k], O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
			   : -1;
		if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_size <= 0 || st.st_size > TURN_IMAGE_MAX) {
			buf_printf(text,
			    "\n(image %zu of this message cannot "
			    "be shown)",
			    k + 1);
			if (fd >= 0)
				close(fd);
			free(paths[k]);
			continue;
		}
		out->images = xreallocarray(
		    out->images, out->nimages + 1, sizeof(*out->images));
		out->images[out->nimages].media = media;
		out->images[out->nimages].data = xmalloc((size_t)st.st_size);
		got = 0;
		while (got < (size_t)st.st_size) {
			r = read(fd, out->images[out->nimages].data + got,
			    (size_t)st.st_size - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		close(fd);
		out->images[out->nimages].len = got;
		out->nimages++;
		free(paths[k]);
	}
	free(paths);
	if (out->nimages > 0)
		buf_printf(text, "\n(%zu image%s of this message follow%s)",
		    out->nimages, out->nimages == 1 ? "" : "s",
		    out->nimages == 1 ? "s" : "");
}

/* turn_zoom_half - one half of a zoomed node, as a line. */
static void
turn_zoom_half(struct broker *b, unsigned l, uint64_t i, struct buf *out)
{
	struct store_node nd;
	struct store_msg sm;
	struct buf flat = BUF_INIT;

	render_name(out, l, i);
	buf_addc(out, '|');
	if (compact_node_get(b, l, i, &nd) == 0) {
		render_flatten(out, nd.text, nd.len);
		free(nd.text);
	} else if (l == 0 && store_read(b->store, i, &sm) == 0) {
		/* Not summarized yet: its start, as in the view (D10). */
		render_flatten(&flat, sm.text, sm.len);
		if (flat.len > 0)
			buf_add(out, flat.data,
			    render_cut(flat.data, flat.len, PLAN_NODE_SIZE));
		store_msg_free(&sm);
	} else {
		buf_printf(out,
		    "(not summarized yet: zoom(%llu, %llu) opens its halves)",
		    (unsigned long long)(i << l),
		    (unsigned long long)(1ULL << l));
	}
	buf_addc(out, '\n');
	buf_free(&flat);
}

/* turn_zoom - zoom(id, n): a message whole, or a node's two halves. */
static int
turn_zoom(struct broker *b, json_t *in, struct buf *text, struct turn_out *out)
{
	uint64_t id, n, T = store_count(b->store);
	struct store_msg sm;
	char date[64];
	unsigned l = 0;

	if (turn_json_uint(in, "id", &id) != 0 ||
	    turn_json_uint(in, "n", &n) != 0) {
		buf_adds(text,
		    "zoom needs id and n, whole numbers (n at "
		    "least 1), as {\"id\": 8, \"n\": 8}");
		return -1;
	}
	if (n == 0 || (n & (n - 1)) != 0 || id % n != 0) {
		buf_printf(text,
		    "zoom(%llu, %llu): n must be a power of 2 and id a "
		    "multiple of n, as in the view's names id+n",
		    (unsigned long long)id, (unsigned long long)n);
		return -1;
	}
	if (id >= T || n > T - id) {
		buf_printf(text,
		    "zoom(%llu, %llu): the chat has messages 0 to %llu",
		    (unsigned long long)id, (unsigned long long)n,
		    (unsigned long long)(T ? T - 1 : 0));
		return -1;
	}
	while ((1ULL << l) < n)
		l++;
	if (l == 0) {
		if (store_read(b->store, id, &sm) != 0) {
			buf_printf(text,
			    "zoom(%llu, 1): message %llu cannot "
			    "be read",
			    (unsigned long long)id, (unsigned long long)id);
			return -1;
		}
		if (store_date(b->store, id, date, sizeof(date)) != 0)
			snprintf(date, sizeof(date), "date unknown");
		buf_printf(text, "message %llu, kind %s, %s:\n",
		    (unsigned long long)id, store_kind_name(sm.kind), date);
		buf_add(text, sm.text, sm.len);
		store_msg_free(&sm);
		turn_images(b, id, out, text);
		return 0;
	}
	buf_printf(text, "%llu+%llu is made of:\n", (unsigned long long)id,
	    (unsigned long long)n);
	turn_zoom_half(b, l - 1, id >> (l - 1), text);
	turn_zoom_half(b, l - 1, (id >> (l - 1)) + 1, text);
	return 0;
}

/* turn_date - date(id): when message id was logged. */
static int
turn_date(struct broker *b, json_t *in, struct buf *text, struct turn_out *out)
{
	uint64_t id, T = store_count(b->store);
	char date[64];

	(void)out;
	if (turn_json_uint(in, "id", &id) != 0) {
		buf_adds(
		    text, "date needs id, a whole number, as {\"id\": 12}");
		return -1;
	}
	if (id >= T) {
		buf_printf(text, "date(%llu): the chat has messages 0 to %llu",
		    (unsigned long long)id,
		    (unsigned long long)(T ? T - 1 : 0));
		return -1;
	}
	if (store_date(b->store, id, date, sizeof(date)) != 0) {
		buf_printf(text, "date(%llu): the date cannot be read",
		    (unsigned long long)id);
		return -1;
	}
	buf_printf(text, "message %llu: %s", (unsigned long long)id, date);
	return 0;
}

/* turn_remember, turn_recall, turn_forget, turn_todo_write - the
 * project's notes and task list (notes.c). */
static int
turn_remember(
    struct broker *b, json_t *in, struct buf *text, struct turn_out *out)
{
	(void)out;
	return notes_remember(b->turn->notes, in, text);
}

static int
turn_recall(
    struct broker *b, json_t *in, struct buf *text, struct turn_out *out)
{
	(void)out;
	return notes_recall(b->turn->notes, in, text);
}

static int
turn_forget(
    struct broker *b, json_t *in, struct buf *text, struct turn_out *out)
{
	(void)out;
	return notes_forget(b->turn->notes, in, text);
}

static int
turn_todo_write(
    struct broker *b, json_t *in, struct buf *text, struct turn_out *out)
{
	(void)out;
	return notes_todo_write(b->turn->notes, in, text);
}

/* The tools the broker serves itself, by name. */
static const struct {
	const char *name;
	int (*serve)(struct broker *b, json_t *in, struct buf *text,
	    struct turn_out *out);
} turn_tools[] = {
    {"zoom", turn_zoom},
    {"date", turn_date},
    {"remember", turn_remember},
    {"recall", turn_recall},
    {"forget", turn_forget},
    {"todo_write", turn_todo_write},
};

/* turn_call_tool - serve one tool_use part into out; log and show it. */
static void
turn_call_tool(struct broker *b, struct turn *t, const struct msg_val *part,
    struct turn_out *out)
{
	const char *name = msg_val_str(part, "name");
	const char *input = msg_val_str(part, "input");
	struct buf text = BUF_INIT, logline = BUF_INIT;
	json_error_t jerr;
	json_t *in;
	struct msg *ev;
	size_t k;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->id = xstrdup(msg_val_str(part, "id"));
	in = json_loads(input, JSON_REJECT_DUPLICATES, &jerr);
	for (k = 0; k < sizeof(turn_tools) / sizeof(turn_tools[0]); k++)
		if (strcmp(name, turn_tools[k].name) == 0)
			break;
	if (k == sizeof(turn_tools) / sizeof(turn_tools[0]))
		buf_printf(&text,
		    "there is no tool %.100s; the tools are zoom, date, "
		    "remember, recall, forget and todo_write",
		    name);
	else if (in == NULL || !json_is_object(in))
		buf_printf(&text, "%s: its input is not a JSON object (%.200s)",
		    name, in == NULL ? jerr.text : "another JSON value");
	else
		rc = turn_tools[k].serve(b, in, &text, out);
	json_decref(in);
	out->error = rc != 0;
	out->text = buf_steal(&text, &out->len);
	if (out->text == NULL)
		out->text = xstrdup("");
	/* The call and its result, as one message of kind tool (rule 48). */
	buf_printf(&logline, "%.100s %.1000s%s\n", name, input,
	    out->error ? " failed" : "");
	buf_add(&logline, out->text, out->len);
	(void)serve_append_own(
	    b, STORE_KIND_TOOL, logline.data, logline.len, NULL);
	ev = turn_event(t, "tool");
	msg_set_strn(ev, "text", logline.data,
	    compact_cut(logline.data, logline.len, TURN_EVENT_RESULT));
	msg_set_str(ev, "code", out->error ? "error" : "ok");
	msg_val_set_str(msg_set_map(ev, "data"), "name", name);
	out_publish(b, &ev);
	buf_free(&logline);
}

/* turn_result - the turn's call answered. */
void
turn_result(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	struct turn *t = turn_from_worker(b, w, m);
	const struct config_provider *p = turn_provider(b);
	const struct msg_val *data = NULL, *parts = NULL;
	struct usage_tokens u;
	struct turn_step *s;
	const char *text = "", *stop = "end";
	struct msg_val *hold;
	size_t len = 0, k, ntools = 0;

	if (t == NULL)
		return;
	turn_call_ended(b, t, w);
	usage_take(m, w->idx, &u);
	usage_add(&b->usage, p->name, b->cfg.turns.model, &u);
	for (k = 0; k < 4; k++)
		t->usage.v[k] += u.v[k];
	(void)msg_get_str(m, "text", &text, &len);
	if (msg_get_map(m, "data", &data) == 0) {
		parts = msg_val_get(data, "content");
		if (msg_val_str(data, "stop") != NULL)
			stop = msg_val_str(data, "stop");
	}
	if (parts != NULL && !request_parts_ok(parts)) {
		turn_end(b, "model",
		    "the model worker's reply was malformed (its content "
		    "parts); see shirod's log");
		log_warnx("worker %u: a reply whose content does not read, "
			  "refused",
		    w->idx);
		return;
	}
	t->steps = xreallocarray(t->steps, t->nsteps + 1, sizeof(*t->steps));
	s = &t->steps[t->nsteps++];
	memset(s, 0, sizeof(*s));
	s->reply = msg_new(MSG_JOB);
	hold = msg_val_set_arr(msg_set_map(s->reply, "data"), "content");
	if (parts != NULL)
		(void)request_copy_parts(hold, parts);
	else if (len > 0)
		request_text_part(hold, text, len, 0);
	if (strcmp(stop, "end") == 0 || strcmp(stop, "tool_use") == 0 ||
	    strcmp(stop, "max_tokens") == 0 || strcmp(stop, "refusal") == 0)
		t->stop = strcmp(stop, "end") == 0    ? "end"
		    : strcmp(stop, "tool_use") == 0   ? "tool_use"
		    : strcmp(stop, "max_tokens") == 0 ? "max_tokens"
						      : "refusal";
	else
		t->stop = "other";
	/* This step's reply text is logged now, as the agent's (rule 48). */
	if (len > 0) {
		if (t->reply.len > 0)
			buf_adds(&t->reply, "\n\n");
		buf_add(&t->reply, text, len);
		(void)serve_append_own(b, STORE_KIND_SHIRO, text, len, NULL);
	}
	for (k = 0; k < hold->u.a.n; k++)
		if (strcmp(msg_val_str(hold->u.a.items[k], "type"),
			"tool_use") == 0)
			ntools++;
	if (ntools > 0) {
		s->outs = xcalloc(ntools, sizeof(*s->outs));
		for (k = 0; k < hold->u.a.n; k++)
			if (strcmp(msg_val_str(hold->u.a.items[k], "type"),
				"tool_use") == 0)
				turn_call_tool(b, t, hold->u.a.items[k],
				    &s->outs[s->nouts++]);
	}
	s->handed = t->handed;
	s->nhanded = t->nhanded;
	t->handed = NULL;
	t->nhanded = 0;
	if (b->turn != t)
		return;
	if (s->nouts == 0 && s->nhanded == 0) {
		turn_end(b, "ok", "");
		compact_dispatch(b, now);
		return;
	}
	if (t->nsteps >= b->cfg.turns.max_steps) {
		t->stop = "steps";
		turn_notice(b, t, "steps",
		    "the turn reached turns.maxSteps model calls and ends "
		    "here");
		turn_end(b, "ok", "");
		compact_dispatch(b, now);
		return;
	}
	turn_send(b, now);
	compact_dispatch(b, now);
}

/* turn_code - the done code of a worker's FAIL code. */
static const char *
turn_code(const char *fail)
{
	if (strcmp(fail, "unreachable") == 0)
		return "unreachable";
	if (strcmp(fail, "nokey") == 0)
		return "no_model";
	return "model";
}

/* turn_fail - the turn's call failed. */
void
turn_fail(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	struct turn *t = turn_from_worker(b, w, m);
	const char *code = "failed", *text = "";
	char why[4200];

	if (t == NULL)
		return;
	turn_call_ended(b, t, w);
	(void)msg_get_str(m, "code", &code, NULL);
	(void)msg_get_str(m, "text", &text, NULL);
	snprintf(
	    why, sizeof(why), "the model call failed (%s): %s", code, text);
	turn_end(b, turn_code(code), why);
	compact_dispatch(b, now);
}

/* turn_lost - the worker of the turn's call died. */
void
turn_lost(struct broker *b, int slot, uint64_t now)
{
	struct turn *t = b->turn;

	if (t == NULL || t->state != TURN_CALL || t->worker != slot || slot < 0)
		return;
	(void)gate_done(&b->gate, t->job);
	if (!t->streamed && !t->resent) {
		log_info("the turn's call goes to another worker");
		t->resent = 1;
		t->worker = -1;
		t->job = 0;
		turn_send(b, now);
		return;
	}
	t->job = 0;
	t->worker = -1;
	turn_end(b, "model",
	    "the model worker died during the call; the reply so far was "
	    "shown but is not logged");
}

/* turn_overdue - the call's deadline (D9). */
void
turn_overdue(struct broker *b, uint64_t now)
{
	struct turn *t = b->turn;

	if (t == NULL || t->state != TURN_CALL || t->worker < 0 ||
	    now - t->sent_at <= TURN_CALL_DEADLINE_MS)
		return;
	turn_end(b, "model",
	    "the model call did not end within 10 minutes and was canceled");
}

/* turn_stop - shirod stops. */
void
turn_stop(struct broker *b)
{
	if (b->turn != NULL)
		turn_end(b, "stopping",
		    "shirod is stopping; the turn ends without a reply");
}

/* turn_waiting - a turn waits for its view. */
int
turn_waiting(const struct broker *b)
{
	return b->turn != NULL && b->turn->state == TURN_SETTLE;
}

/* turn_free - release the turn (shutdown). */
void
turn_free(struct broker *b)
{
	turn_destroy(&b->turn);
}
