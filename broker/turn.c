/*
 * turn.c - the turn: settle, call, tools, next step, done (see turn.h);
 * its requests, pruned on the wire when long; its limits; the broker's
 * own tools.  The tool calls themselves are call.c's.
 *
 * Everything a worker sends back is untrusted: a reply's parts are
 * checked before they are passed on to the next call (request.c), its
 * usage before it is counted (usage.c), a tool call's input is parsed as
 * JSON and its arguments checked before the store is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "broker/render.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "tools/perm.h"

#include "broker.h"
#include "notes.h"
#include "out.h"
#include "provider.h"
#include "request.h"
#include "turn.h"
#include "turn_int.h"

/* The most bytes of an image zoom(id, 1) passes on (one BIN value). */
#define TURN_IMAGE_MAX (1u << 20)

/* turn_us - a monotonic clock in microseconds. */
uint64_t
turn_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

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
	size_t k, j;

	if (t == NULL)
		return;
	for (k = 0; k < t->nsteps; k++) {
		struct turn_step *s = &t->steps[k];

		msg_destroy(&s->reply);
		for (j = 0; j < s->ncalls; j++)
			call_free(&s->calls[j]);
		free(s->calls);
		turn_handed_free(s->handed, s->nhanded);
	}
	free(t->steps);
	turn_handed_free(t->early, t->nearly);
	turn_handed_free(t->handed, t->nhanded);
	request_view_free(&t->view);
	notes_turn_destroy(&t->notes);
	buf_free(&t->reply);
	perm_turn_destroy(&t->pt);
	free(t->workspace);
	free(t->ws_why);
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
struct msg *
turn_event(const struct turn *t, const char *ev)
{
	struct msg *m = msg_new(MSG_EVENT);

	msg_set_str(m, "ev", ev);
	msg_set_int(m, "id", (int64_t)t->id);
	return m;
}

/* turn_notice - publish a notice of the turn. */
void
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
	msg_val_set_int(d, "tool_calls", (int64_t)t->ncalls);
	msg_val_set_int(d, "denied", (int64_t)t->denied);
	msg_val_set_int(d, "tool_us", (int64_t)t->tool_us);
	msg_val_set_int(d, "model_us", (int64_t)t->model_us);
	msg_val_set_int(d, "cost_uusd", (int64_t)t->spent_uusd);
	if (t->stop != NULL)
		msg_val_set_str(d, "stop", t->stop);
	if (t->limit != NULL)
		msg_val_set_str(d, "limit", t->limit);
	if (t->workspace != NULL)
		msg_val_set_str(d, "workspace", t->workspace);
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

/* turn_cancel_call - the model call in flight is canceled (its worker
 * takes it as over; a late answer is ignored). */
static void
turn_cancel_call(struct broker *b, struct turn *t)
{
	if (t->job == 0)
		return;
	(void)gate_done(&b->gate, t->job);
	if (t->worker >= 0 && (unsigned)t->worker < b->pool.n &&
	    pool_holds(&b->pool.w[t->worker], t->job)) {
		struct msg *c = msg_new(MSG_CANCEL);

		msg_set_int(c, "job", (int64_t)t->job);
		(void)msg_send(b->wsock, c, &b->pool.w[t->worker].ident);
		msg_destroy(&c);
		(void)pool_done(&b->pool.w[t->worker], t->job);
	}
	t->job = 0;
	t->worker = -1;
}

/*
 * turn_end - the turn ends with code (ok, no_model, unreachable, model,
 * stopping, stopped, limit, jail): every attached client gets the `done`
 * event, and an asker that is not attached gets it too.
 */
void
turn_end(struct broker *b, const char *code, const char *text)
{
	struct turn *t = b->turn;
	struct msg *ev;
	size_t k;

	if (t == NULL)
		return;
	turn_cancel_call(b, t);
	/* Whatever still runs ends here, with its echo logged. */
	call_abandon(b, t);
	/* The turn's tool lines are all answered now; the day's spend is
	 * kept for the next start. */
	if (t->first_tool != TURN_NONE || b->spend_saved != b->spend_uusd)
		call_state_save(b, TURN_NONE);
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
	log_info("turn of message %llu: %s after %zu steps and %u tool calls "
		 "(%llu in, %llu out, %llu cached)",
	    (unsigned long long)t->id, code, t->nsteps, t->ncalls,
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

/*
 * turn_state - the per-turn state, after the view and before the Turn:
 * line (rule 51): never in the system prompt, so the cache's prefix
 * through the view holds.  Each part of the state is one paragraph.
 */
static void
turn_state(const struct turn *t, struct buf *out)
{
	if (t->workspace != NULL)
		buf_printf(out,
		    "Working directory: %s (the file tools' paths are "
		    "relative to it; commands run in it).\n\n",
		    t->workspace);
	else
		buf_printf(out,
		    "No working directory: %s. The file tools and commands "
		    "cannot run in this turn.\n\n",
		    t->ws_why != NULL ? t->ws_why : "none was given");
}

/* turn_tail - the first message's last part: the view's end, the
 * per-turn state, the Turn: line and the message whole (rules 49, 51,
 * D11). */
static void
turn_tail(const struct turn *t, struct buf *out)
{
	size_t k;

	buf_adds(out, "</chat>\n\n");
	turn_state(t, out);
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

/* The text a pruned result is replaced by, at most. */
#define TURN_PRUNED_TEXT 120

/* What a request leaves out of the turn's own messages (spec 000's
 * pruning): thinking of every step but the last, then the results of
 * the oldest steps (replaced by where the chat has them), then the
 * oldest steps whole; never the last step, never half of a call and its
 * result. */
struct turn_prune {
	int thinking; /* leave out the thinking of steps before the last */
	size_t shrunk; /* steps [0, shrunk) have their results replaced */
	size_t dropped; /* steps [0, dropped) are left out */
	size_t bytes; /* the turn's own bytes as sent */
};

/* turn_step_bytes - what step s adds to a request, by part: its
 * thinking, the rest of its reply, its results, its handed texts. */
static void
turn_step_bytes(const struct turn_step *s, size_t *thinking, size_t *rest,
    size_t *results, size_t *handed)
{
	const struct msg_val *d, *parts;
	size_t k, i;

	*thinking = *rest = *results = *handed = 0;
	if (msg_get_map(s->reply, "data", &d) == 0 &&
	    (parts = msg_val_get(d, "content")) != NULL) {
		for (k = 0; k < parts->u.a.n; k++) {
			const struct msg_val *p = parts->u.a.items[k];
			const char *type = msg_val_str(p, "type");
			static const char *const keys[] = {
			    "text", "signature", "name", "input", "id"};

			for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
				const struct msg_val *v =
				    msg_val_get(p, keys[i]);

				if (v == NULL || v->type != MSG_V_STR)
					continue;
				if (strcmp(type, "thinking") == 0)
					*thinking += v->u.s.len;
				else
					*rest += v->u.s.len;
			}
		}
	}
	for (k = 0; k < s->ncalls; k++) {
		*results += s->calls[k].out.len;
		for (i = 0; i < s->calls[k].out.nimages; i++)
			*results += s->calls[k].out.images[i].len;
	}
	for (k = 0; k < s->nhanded; k++)
		*handed += s->handed[k].len;
}

/* turn_prune_plan - what to leave out so that the turn's own parts fit
 * in limit bytes (as far as leaving out can take them). */
static void
turn_prune_plan(const struct turn *t, size_t limit, struct turn_prune *pr)
{
	size_t k, th, rest, res, hd, total = 0, n = t->nsteps;

	memset(pr, 0, sizeof(*pr));
	for (k = 0; k < n; k++) {
		turn_step_bytes(&t->steps[k], &th, &rest, &res, &hd);
		total += th + rest + res + hd;
	}
	if (total > limit && n > 1) {
		pr->thinking = 1;
		for (k = 0; k + 1 < n; k++) {
			turn_step_bytes(&t->steps[k], &th, &rest, &res, &hd);
			total -= th;
		}
	}
	for (k = 0; total > limit && k + 1 < n; k++) {
		turn_step_bytes(&t->steps[k], &th, &rest, &res, &hd);
		total -= res;
		total += t->steps[k].ncalls * TURN_PRUNED_TEXT;
		pr->shrunk = k + 1;
	}
	for (k = 0; total > limit && k + 1 < n; k++) {
		turn_step_bytes(&t->steps[k], &th, &rest, &res, &hd);
		total -= rest + hd + t->steps[k].ncalls * TURN_PRUNED_TEXT;
		pr->dropped = k + 1;
	}
	pr->bytes = total;
}

/* turn_prune_note - tell the model what this request leaves out, and
 * give it the user's words of the steps left out. */
static void
turn_prune_note(
    const struct turn *t, const struct turn_prune *pr, struct buf *out)
{
	uint64_t lo = TURN_NONE, hi = 0;
	size_t k, j;

	buf_printf(out,
	    "\n\n(shiro: this turn has made %zu model calls. To keep this "
	    "request short, the thinking of the steps before the last is "
	    "left out",
	    t->nsteps);
	if (pr->shrunk > pr->dropped)
		buf_printf(out,
		    "; the results of the tool calls of steps %zu to %zu are "
		    "replaced by the number of the chat message that holds "
		    "each (zoom(id, 1) shows it)",
		    pr->dropped + 1, pr->shrunk);
	for (k = 0; k < pr->dropped; k++)
		for (j = 0; j < t->steps[k].ncalls; j++) {
			const struct turn_call *c = &t->steps[k].calls[j];

			if (c->msg != TURN_NONE && c->msg < lo)
				lo = c->msg;
			if (c->echo != TURN_NONE && c->echo > hi)
				hi = c->echo;
		}
	if (pr->dropped > 0 && lo != TURN_NONE && hi >= lo)
		buf_printf(out,
		    "; steps 1 to %zu are left out whole: their tool calls "
		    "and results are messages %llu to %llu of the chat",
		    pr->dropped, (unsigned long long)lo,
		    (unsigned long long)hi);
	else if (pr->dropped > 0)
		buf_printf(
		    out, "; steps 1 to %zu are left out whole", pr->dropped);
	buf_adds(out, ". Nothing is lost: the chat keeps all of it.)");
	for (k = 0; k < pr->dropped; k++)
		for (j = 0; j < t->steps[k].nhanded; j++) {
			buf_printf(out,
			    "\n\nThe user sent this message (%llu) while you "
			    "were working:\n",
			    (unsigned long long)t->steps[k].handed[j].id);
			buf_add(out, t->steps[k].handed[j].text,
			    t->steps[k].handed[j].len);
		}
}

/* turn_step_parts - step k of t as an assistant message and a user
 * message, as pr leaves it; the last part added into *lastp. */
static void
turn_step_parts(const struct turn *t, size_t k, const struct turn_prune *pr,
    struct msg_val *msgs, struct msg_val **lastp)
{
	const struct turn_step *s = &t->steps[k];
	const struct msg_val *d, *parts;
	struct msg_val *content = NULL, *part;
	int last_step = k + 1 == t->nsteps;
	size_t j, i;

	if (msg_get_map(s->reply, "data", &d) == 0 &&
	    (parts = msg_val_get(d, "content")) != NULL && parts->u.a.n > 0) {
		for (j = 0; j < parts->u.a.n; j++) {
			const struct msg_val *p = parts->u.a.items[j];

			/* Left out, the thinking's text and tool calls go on
			 * as they are: they carry no item of the provider's
			 * that needs it (spec 000's first 400). */
			if (pr->thinking && !last_step &&
			    strcmp(msg_val_str(p, "type"), "thinking") == 0)
				continue;
			if (content == NULL)
				content = request_message(msgs, "assistant");
			(void)msg_val_add_copy(content, p);
		}
	}
	if (s->ncalls == 0 && s->nhanded == 0)
		return;
	if (content == NULL) {
		/* A reply that was only thinking, left out: an empty
		 * assistant message would be refused. */
		content = request_message(msgs, "assistant");
		request_text_part(content, "(thinking)", 10, 0);
	}
	content = request_message(msgs, "user");
	for (j = 0; j < s->ncalls; j++) {
		const struct turn_call *c = &s->calls[j];
		char note[TURN_PRUNED_TEXT];

		part = msg_val_add_map(content);
		msg_val_set_str(part, "type", "tool_result");
		msg_val_set_str(part, "id", c->out.id);
		if (k < pr->shrunk) {
			if (c->echo != TURN_NONE)
				snprintf(note, sizeof(note),
				    "(left out of this request to keep it "
				    "short: it is message %llu of the chat)",
				    (unsigned long long)c->echo);
			else
				snprintf(note, sizeof(note),
				    "(left out of this request to keep it "
				    "short)");
			msg_val_set_str(part, "text", note);
		} else {
			msg_val_set_strn(part, "text", c->out.text, c->out.len);
		}
		if (c->out.error)
			msg_val_set_bool(part, "error", true);
		*lastp = part;
	}
	for (j = 0; k >= pr->shrunk && j < s->ncalls; j++) {
		const struct turn_out *o = &s->calls[j].out;

		for (i = 0; i < o->nimages; i++) {
			part = msg_val_add_map(content);
			msg_val_set_str(part, "type", "image");
			msg_val_set_str(part, "media", o->images[i].media);
			msg_val_set_bin(
			    part, "data", o->images[i].data, o->images[i].len);
			*lastp = part;
		}
	}
	for (j = 0; j < s->nhanded; j++) {
		struct buf h = BUF_INIT;

		buf_printf(&h,
		    "The user sent this message (%llu) while you "
		    "were working:\n",
		    (unsigned long long)s->handed[j].id);
		buf_add(&h, s->handed[j].text, s->handed[j].len);
		*lastp = request_text_part(content, h.data, h.len, 0);
		buf_free(&h);
	}
}

/* turn_pruned_notice - tell the clients when the pruning goes a stage
 * further (thinking, then results, then whole steps). */
static void
turn_pruned_notice(
    struct broker *b, struct turn *t, const struct turn_prune *pr)
{
	int level = pr->thinking + (pr->shrunk > 0) + (pr->dropped > 0);
	struct msg *ev;
	struct msg_val *d;
	char text[240];

	if (level <= t->prune_level)
		return;
	t->prune_level = level;
	snprintf(text, sizeof(text),
	    "the turn's %zu steps are pruned on the wire to %zu bytes: "
	    "thinking left out%s%s; the chat keeps everything",
	    t->nsteps, pr->bytes,
	    pr->shrunk > 0 ? ", the oldest results replaced by pointers" : "",
	    pr->dropped > 0 ? ", the oldest steps left out" : "");
	ev = turn_event(t, "notice");
	msg_set_str(ev, "code", "pruned");
	msg_set_str(ev, "text", text);
	d = msg_set_map(ev, "data");
	msg_val_set_int(d, "steps", (int64_t)t->nsteps);
	msg_val_set_int(d, "shrunk", (int64_t)pr->shrunk);
	msg_val_set_int(d, "dropped", (int64_t)pr->dropped);
	msg_val_set_int(d, "bytes", (int64_t)pr->bytes);
	out_publish(b, &ev);
}

/* turn_job - the JOB of the turn's next call. */
static struct msg *
turn_job(struct broker *b, struct turn *t, uint64_t *keys, size_t *nkeys)
{
	const struct config_provider *p = turn_provider(b);
	struct msg_val *data, *req, *msgs, *content, *last;
	struct buf tail = BUF_INIT;
	struct turn_prune pr;
	struct msg *m;
	uint64_t markhash, mh;
	size_t k;

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
	turn_prune_plan(t, b->cfg.turns.prune_bytes, &pr);
	if (pr.thinking)
		turn_prune_note(t, &pr, &tail);
	last = request_text_part(content, tail.data, tail.len, 0);
	buf_free(&tail);
	for (k = pr.dropped; k < t->nsteps; k++)
		turn_step_parts(t, k, &pr, msgs, &last);
	turn_pruned_notice(b, t, &pr);
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

	t->state = TURN_CALL;
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
	t->model_us -= turn_us();
	pool_assign(w, t->job, now);
	gate_sent(&b->gate, t->job, keys, nkeys, now);
}

/* turn_today - the local date as YYYY-MM-DD into out (16 bytes). */
static void
turn_today(char *out, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	if (localtime_r(&now, &tm) == NULL ||
	    strftime(out, len, "%Y-%m-%d", &tm) == 0)
		snprintf(out, len, "unknown");
}

/* turn_spend_day - the day's spend so far (a new day starts at 0). */
static unsigned long long
turn_spend_day(struct broker *b)
{
	char today[16];

	turn_today(today, sizeof(today));
	if (strcmp(today, b->spend_day) != 0) {
		snprintf(b->spend_day, sizeof(b->spend_day), "%s", today);
		b->spend_uusd = 0;
	}
	return b->spend_uusd;
}

/* turn_over_limit - the limit the turn has reached, or NULL: its step
 * cap, its token budget, its spend ceiling, the day's. */
static const char *
turn_over_limit(struct broker *b, const struct turn *t, char *why, size_t len)
{
	const struct config_limits *l = &b->cfg.limits;
	unsigned long long tokens =
	    t->usage.v[0] + t->usage.v[1] + t->usage.v[2] + t->usage.v[3];

	if (t->nsteps >= b->cfg.turns.max_steps) {
		snprintf(why, len,
		    "the turn made %zu model calls, turns.maxSteps, and ends "
		    "here",
		    t->nsteps);
		return "steps";
	}
	if (l->turn_tokens != 0 && tokens >= l->turn_tokens) {
		snprintf(why, len,
		    "the turn used %llu tokens, limits.maxTurnTokens is %llu; "
		    "it ends here",
		    tokens, l->turn_tokens);
		return "tokens";
	}
	if (l->turn_uusd != 0 && t->spent_uusd >= l->turn_uusd) {
		snprintf(why, len,
		    "the turn spent about $%.4f, limits.maxSpendUsd.turn is "
		    "$%.4f; it ends here",
		    (double)t->spent_uusd / 1e6, (double)l->turn_uusd / 1e6);
		return "spend";
	}
	if (l->day_uusd != 0 && turn_spend_day(b) >= l->day_uusd) {
		snprintf(why, len,
		    "today's turns spent about $%.4f, limits.maxSpendUsd.day "
		    "is $%.4f; no more model calls today",
		    (double)b->spend_uusd / 1e6, (double)l->day_uusd / 1e6);
		return "spend_day";
	}
	return NULL;
}

/* turn_limit_end - end t at limit (why): a notice, then done limit. */
static void
turn_limit_end(
    struct broker *b, struct turn *t, const char *limit, const char *why)
{
	struct msg *ev = turn_event(t, "notice");

	t->limit = limit;
	t->stop = "limit";
	msg_set_str(ev, "code", "limit");
	msg_set_str(ev, "text", why);
	msg_val_set_str(msg_set_map(ev, "data"), "limit", limit);
	out_publish(b, &ev);
	turn_end(b, "limit", why);
}

/* turn_workspace - the workspace cwd names (see turn.h). */
char *
turn_workspace(const struct broker *b, const char *cwd, char **whyp)
{
	char real[PATH_MAX], home[PATH_MAX];
	struct stat st;
	size_t n;

	*whyp = NULL;
	if (cwd == NULL || cwd[0] == '\0') {
		*whyp = xstrdup("the client sent no working directory");
		return NULL;
	}
	if (cwd[0] != '/' || realpath(cwd, real) == NULL ||
	    stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		*whyp =
		    xasprintf("%.200s is not a directory shirod can find", cwd);
		return NULL;
	}
	if (strcmp(real, "/") == 0) {
		*whyp = xstrdup(
		    "the working directory is /, which is no workspace");
		return NULL;
	}
	if (realpath(b->cfg.home, home) == NULL)
		snprintf(home, sizeof(home), "%s", b->cfg.home);
	n = strlen(home);
	if (strncmp(real, home, n) == 0 &&
	    (real[n] == '\0' || real[n] == '/')) {
		*whyp = xasprintf("%.200s is inside the chat's home %.200s, "
				  "which the workers hide",
		    real, home);
		return NULL;
	}
	return xstrdup(real);
}

/* turn_resolve_workspace - the turn's workspace from the SEND's cwd. */
static void
turn_resolve_workspace(struct broker *b, struct turn *t, const char *cwd)
{
	t->workspace = turn_workspace(b, cwd, &t->ws_why);
}

/* turn_begin_calls - the view settled (or its time is up): render it and
 * make the first call. */
static void
turn_begin_calls(struct broker *b, uint64_t now, int settled)
{
	const struct config_provider *p = turn_provider(b);
	struct turn *t = b->turn;
	struct msg *ev;
	const char *limit;
	char note[512];

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
		if (t->workspace != NULL)
			msg_val_set_str(d, "workspace", t->workspace);
		msg_val_set_str(d, "approvals",
		    t->mode == TURN_MODE_ASK	    ? "ask"
			: t->mode == TURN_MODE_DENY ? "deny"
						    : "yolo");
	}
	out_publish(b, &ev);
	if (t->cut_lines > 0) {
		snprintf(note, sizeof(note),
		    "%zu lines of the view were not summarized in time; they "
		    "show the start of their messages",
		    t->cut_lines);
		turn_notice(b, t, "unsettled", note);
	}
	if (t->workspace == NULL) {
		snprintf(note, sizeof(note),
		    "no workspace for this turn's tools: %s", t->ws_why);
		turn_notice(b, t, "workspace", note);
	}
	limit = turn_over_limit(b, t, note, sizeof(note));
	if (limit != NULL) {
		turn_limit_end(b, t, limit, note);
		return;
	}
	turn_send(b, now);
}

/* turn_hand_in - message id joins the running turn t (rule 46). */
static void
turn_hand_in(
    struct broker *b, struct turn *t, uint64_t id, const char *text, size_t len)
{
	struct msg *ev = turn_event(t, "notice");
	char note[96];

	if (t->calls == 0)
		turn_hand_add(&t->early, &t->nearly, id, text, len);
	else
		turn_hand_add(&t->handed, &t->nhanded, id, text, len);
	snprintf(note, sizeof(note),
	    "message %llu is handed to the running turn",
	    (unsigned long long)id);
	msg_set_str(ev, "code", "handed");
	msg_set_str(ev, "text", note);
	msg_val_set_int(msg_set_map(ev, "data"), "message", (int64_t)id);
	out_publish(b, &ev);
}

/* turn_hand - a user message logged without turn set (see turn.h). */
int
turn_hand(struct broker *b, uint64_t id, const char *text, size_t len)
{
	struct turn *t = b->turn;

	if (t == NULL || t->state == TURN_STOPPING || t->state == TURN_DONE)
		return 0;
	turn_hand_in(b, t, id, text, len);
	return 1;
}

/* turn_mode_of - the approvals mode a SEND named (NULL: ask). */
static enum turn_mode
turn_mode_of(const char *approvals)
{
	if (approvals != NULL && strcmp(approvals, "deny") == 0)
		return TURN_MODE_DENY;
	if (approvals != NULL && strcmp(approvals, "yolo") == 0)
		return TURN_MODE_YOLO;
	return TURN_MODE_ASK;
}

/* turn_asked - a SEND asked for a turn (see turn.h). */
void
turn_asked(struct broker *b, const struct msg_ident *from, uint64_t rid,
    uint64_t id, const char *text, size_t len, const struct plan_line *pinned,
    size_t npinned, const struct turn_ask *ask, uint64_t now)
{
	struct turn *t = b->turn;
	struct turn_asker *a;

	if (t != NULL) {
		/* A turn runs: the message joins it (rule 46). */
		turn_hand_in(b, t, id, text, len);
		t->askers = xreallocarray(
		    t->askers, t->naskers + 1, sizeof(*t->askers));
		a = &t->askers[t->naskers++];
		a->from = *from;
		a->rid = rid;
		a->id = id;
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
	t->mode = turn_mode_of(ask != NULL ? ask->approvals : NULL);
	t->first_tool = TURN_NONE;
	t->pt = perm_turn_new();
	turn_resolve_workspace(b, t, ask != NULL ? ask->cwd : NULL);
	if (t->workspace != NULL) {
		/* A new turn tries again a workspace whose workers could not
		 * start before. */
		pool_ws_reset(&b->pool, t->workspace);
		perm_set_workspace(b->perm, t->workspace);
	}
	/* The project of its notes: the directory as the client sent it,
	 * as NOTES takes it (notes.c). */
	t->notes = notes_turn_new(b, ask != NULL ? ask->cwd : NULL);
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
	else if ((t->state == TURN_TOOLS || t->state == TURN_STOPPING) &&
	    !b->stopping)
		call_run(b, t, now);
}

/* turn_owns - job is the turn's model call or one of its tool calls. */
int
turn_owns(const struct broker *b, uint64_t job)
{
	if (b->turn == NULL || job == 0)
		return 0;
	return b->turn->job == job || call_of_job(b->turn, job) != NULL;
}

/* turn_slot - the slot of the turn's job, or -1. */
int
turn_slot(const struct broker *b, uint64_t job)
{
	const struct turn_call *c;

	if (!turn_owns(b, job))
		return -1;
	if (b->turn->job == job)
		return b->turn->worker;
	c = call_of_job(b->turn, job);
	return c != NULL ? c->worker : -1;
}

/* turn_from_worker - the turn, if w holds its model call named in m. */
static struct turn *
turn_from_worker(struct broker *b, struct pool_worker *w, const struct msg *m)
{
	uint64_t job = 0;

	if (msg_get_uint(m, "job", &job) != 0 || b->turn == NULL ||
	    b->turn->job != job || b->turn->job == 0 ||
	    b->turn->worker != (int)w->idx)
		return NULL;
	return b->turn;
}

/* turn_call_of - the turn's tool call that w runs, named in m. */
static struct turn_call *
turn_call_of(struct broker *b, struct pool_worker *w, const struct msg *m)
{
	struct turn_call *c;
	uint64_t job = 0;

	if (msg_get_uint(m, "job", &job) != 0 || b->turn == NULL)
		return NULL;
	c = call_of_job(b->turn, job);
	if (c == NULL || c->worker != (int)w->idx)
		return NULL;
	return c;
}

/* turn_call_ended - w answered the turn's call: it holds it no more. */
static void
turn_call_ended(struct broker *b, struct turn *t, struct pool_worker *w)
{
	(void)pool_done(w, t->job);
	(void)gate_done(&b->gate, t->job);
	t->job = 0;
	t->worker = -1;
	t->model_us += turn_us();
}

/* turn_chunk - a streamed piece of the turn's call or of a command. */
void
turn_chunk(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	struct turn *t = turn_from_worker(b, w, m);
	const char *part = "text", *text = "";
	struct turn_call *c;
	size_t len = 0;
	struct msg *ev;

	if (t == NULL) {
		if ((c = turn_call_of(b, w, m)) != NULL)
			call_chunk(b, b->turn, c, m);
		return;
	}
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

/* The tools the broker serves itself, by name: they read the chat (or
 * the store's notes), never the workspace, and need no permission. */
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

/* turn_is_chat_tool - whether name is one of turn_tools. */
int
turn_is_chat_tool(const char *name)
{
	size_t k;

	for (k = 0; k < sizeof(turn_tools) / sizeof(turn_tools[0]); k++)
		if (strcmp(name, turn_tools[k].name) == 0)
			return 1;
	return 0;
}

/* turn_chat_tools - "zoom, date", for an error text (static). */
const char *
turn_chat_tools(void)
{
	static char names[256];
	size_t k, n = 0;

	if (names[0] != '\0')
		return names;
	for (k = 0; k < sizeof(turn_tools) / sizeof(turn_tools[0]); k++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
		    k ? ", " : "", turn_tools[k].name);
	return names;
}

/* turn_serve_chat - serve a broker tool into c->out (see turn_int.h). */
int
turn_serve_chat(struct broker *b, struct turn_call *c)
{
	struct buf text = BUF_INIT;
	size_t k;
	int rc = -1;

	for (k = 0; k < sizeof(turn_tools) / sizeof(turn_tools[0]); k++)
		if (strcmp(c->name, turn_tools[k].name) == 0)
			break;
	if (k == sizeof(turn_tools) / sizeof(turn_tools[0]))
		buf_printf(&text, "there is no tool %.100s", c->name);
	else if (c->args == NULL || !json_is_object(c->args))
		buf_printf(
		    &text, "%s: its input is not a JSON object", c->name);
	else
		rc = turn_tools[k].serve(b, c->args, &text, &c->out);
	free(c->out.text);
	c->out.text = buf_steal(&text, &c->out.len);
	if (c->out.text == NULL)
		c->out.text = xstrdup("");
	c->out.error = rc != 0;
	return rc;
}

/* turn_step_done - the step's calls are all done (see turn_int.h). */
void
turn_step_done(struct broker *b, uint64_t now)
{
	struct turn *t = b->turn;
	struct turn_step *s;
	const char *limit;
	char why[512];
	size_t k;

	if (t == NULL || t->nsteps == 0)
		return;
	s = &t->steps[t->nsteps - 1];
	/* What was handed in while the step ran goes back with it. */
	for (k = 0; k < t->nhanded; k++)
		turn_hand_add(&s->handed, &s->nhanded, t->handed[k].id,
		    t->handed[k].text, t->handed[k].len);
	turn_handed_free(t->handed, t->nhanded);
	t->handed = NULL;
	t->nhanded = 0;
	if (t->state == TURN_STOPPING) {
		turn_end(b, "stopped",
		    "the turn was interrupted; what it did so far is logged");
		return;
	}
	if (s->ncalls == 0 && s->nhanded == 0) {
		turn_end(b, "ok", "");
		return;
	}
	limit = turn_over_limit(b, t, why, sizeof(why));
	if (limit != NULL) {
		turn_limit_end(b, t, limit, why);
		return;
	}
	turn_send(b, now);
}

/* turn_count_spend - one call's tokens u as estimated dollars for the
 * turn and the day. */
static void
turn_count_spend(struct broker *b, struct turn *t, const struct usage_tokens *u)
{
	const struct config_provider *p = turn_provider(b);
	unsigned long long tok[4], uusd = 0;
	size_t k;

	for (k = 0; k < 4; k++)
		tok[k] = u->v[k];
	if (b->cfg.turns.model == NULL ||
	    !provider_cost(&b->cfg, p, b->cfg.turns.model, tok, &uusd))
		return;
	t->spent_uusd += uusd;
	(void)turn_spend_day(b);
	b->spend_uusd += uusd;
}

/* turn_model_result - the turn's model call answered. */
static void
turn_model_result(struct broker *b, struct turn *t, struct pool_worker *w,
    const struct msg *m, uint64_t now)
{
	const struct config_provider *p = turn_provider(b);
	const struct msg_val *data = NULL, *parts = NULL;
	struct usage_tokens u;
	struct turn_step *s;
	const char *text = "", *stop = "end";
	struct msg_val *hold;
	size_t len = 0, k, ntools = 0;
	unsigned slot = w->idx;

	turn_call_ended(b, t, w);
	usage_take(m, slot, &u);
	usage_add(&b->usage, p->name, b->cfg.turns.model, &u);
	for (k = 0; k < 4; k++)
		t->usage.v[k] += u.v[k];
	turn_count_spend(b, t, &u);
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
		    slot);
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
	if (ntools == 0 || b->stopping) {
		turn_step_done(b, now);
		compact_dispatch(b, now);
		return;
	}
	t->state = TURN_TOOLS;
	call_begin(b, t, now);
	compact_dispatch(b, now);
}

/* turn_result - a job of the turn answered. */
void
turn_result(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	struct turn *t = turn_from_worker(b, w, m);
	struct turn_call *c;

	if (t != NULL) {
		turn_model_result(b, t, w, m, now);
		return;
	}
	if ((c = turn_call_of(b, w, m)) != NULL)
		call_result(b, b->turn, c, m, now);
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

/* turn_fail - a job of the turn failed. */
void
turn_fail(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	struct turn *t = turn_from_worker(b, w, m);
	const char *code = "failed", *text = "";
	struct turn_call *c;
	char why[4200];

	if (t == NULL) {
		if ((c = turn_call_of(b, w, m)) != NULL)
			call_fail(b, b->turn, c, m, now);
		return;
	}
	turn_call_ended(b, t, w);
	(void)msg_get_str(m, "code", &code, NULL);
	(void)msg_get_str(m, "text", &text, NULL);
	snprintf(
	    why, sizeof(why), "the model call failed (%s): %s", code, text);
	turn_end(b, turn_code(code), why);
	compact_dispatch(b, now);
}

/* turn_lost - a worker of the turn died. */
void
turn_lost(struct broker *b, int slot, uint64_t now)
{
	struct turn *t = b->turn;

	if (t == NULL || slot < 0)
		return;
	if (t->state == TURN_TOOLS || t->state == TURN_STOPPING) {
		call_lost(b, t, slot, now);
		return;
	}
	if (t->state != TURN_CALL || t->worker != slot)
		return;
	(void)gate_done(&b->gate, t->job);
	t->model_us += turn_us();
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

/* turn_overdue - the deadlines of the turn's calls (D9). */
void
turn_overdue(struct broker *b, uint64_t now)
{
	struct turn *t = b->turn;

	if (t == NULL)
		return;
	if (t->state == TURN_TOOLS || t->state == TURN_STOPPING) {
		call_overdue(b, t, now);
		return;
	}
	if (t->state != TURN_CALL || t->worker < 0 ||
	    timer_since(now, t->sent_at) <= TURN_CALL_DEADLINE_MS)
		return;
	turn_end(b, "model",
	    "the model call did not end within 10 minutes and was canceled");
}

/* turn_approve - a person's answer to an asked call (see turn.h). */
void
turn_approve(struct broker *b, const struct msg_ident *from, const char *name,
    uint64_t rid, const struct msg *m, uint64_t now)
{
	struct turn *t = b->turn;
	struct turn_call *c = NULL;
	const char *answer = "", *reason = NULL;
	uint64_t approval = 0;
	struct msg *r, *ev;
	struct msg_val *doc, *d;
	char *why = NULL;
	struct buf text = BUF_INIT;
	size_t k;

	(void)msg_get_uint(m, "approval", &approval);
	(void)msg_get_str(m, "answer", &answer, NULL);
	if (msg_get_str(m, "reason", &reason, NULL) != 0)
		reason = NULL;
	if (strcmp(answer, "yes") != 0 && strcmp(answer, "always") != 0 &&
	    strcmp(answer, "no") != 0) {
		out_error(b, from, rid, "approval",
		    "an answer is yes, always or no, not \"%.8s\"", answer);
		return;
	}
	for (k = 0;
	     t != NULL && t->nsteps > 0 && k < t->steps[t->nsteps - 1].ncalls;
	     k++) {
		struct turn_call *x = &t->steps[t->nsteps - 1].calls[k];

		if (x->state == TURN_C_ASK && x->approval == approval)
			c = x;
	}
	if (c == NULL) {
		out_error(b, from, rid, "approval",
		    "approval %llu is not waiting for an answer: it was "
		    "answered already (the first answer wins), or its turn "
		    "ended",
		    (unsigned long long)approval);
		return;
	}
	if (strcmp(answer, "always") == 0 &&
	    perm_always(b->perm, c->name, c->args, &why) != 0) {
		/* Nothing to remember (a command the guard could not read):
		 * this call is allowed, the next one asks again. */
		buf_printf(&text, "allowed this once: %s", why);
		free(why);
	}
	ev = turn_event(t, "approval");
	msg_set_str(ev, "code", "resolved");
	msg_set_str(ev, "text",
	    text.len > 0 ? text.data
			 : (strcmp(answer, "no") == 0 ? "denied" : "allowed"));
	d = msg_set_map(ev, "data");
	msg_val_set_int(d, "approval", (int64_t)approval);
	msg_val_set_str(d, "answer", answer);
	msg_val_set_str(d, "by", name[0] ? name : "a client");
	msg_val_set_str(d, "name", c->name);
	if (reason != NULL)
		msg_val_set_str(d, "reason", reason);
	out_publish(b, &ev);
	r = msg_new(MSG_REPLY);
	msg_set_int(r, "rid", (int64_t)rid);
	doc = msg_set_map(r, "doc");
	msg_val_set_int(doc, "approval", (int64_t)approval);
	msg_val_set_str(doc, "answer", answer);
	msg_val_set_bool(doc, "resolved", true);
	(void)out_send_client(b, from, r);
	msg_destroy(&r);
	buf_free(&text);
	if (strcmp(answer, "no") == 0) {
		char say[1300];

		snprintf(say, sizeof(say), "the person said no%s%s",
		    reason != NULL && reason[0] ? ": " : "",
		    reason != NULL ? reason : "");
		c->state = TURN_C_WAIT; /* call_deny takes a waiting call */
		call_deny_person(b, t, c, say);
	} else {
		c->state = TURN_C_WAIT;
	}
	if (b->turn == t)
		call_run(b, t, now);
}

/* turn_interrupt - stop the running command or the turn (see turn.h). */
void
turn_interrupt(struct broker *b, const struct msg_ident *from, uint64_t rid,
    const struct msg *m, uint64_t now)
{
	struct turn *t = b->turn;
	const char *what = "";
	uint64_t id = 0;
	struct msg *r;
	struct msg_val *doc;
	size_t n = 0;
	int whole;

	(void)msg_get_str(m, "what", &what, NULL);
	whole = strcmp(what, "turn") == 0;
	if (!whole && strcmp(what, "command") != 0) {
		out_error(b, from, rid, "interrupt",
		    "what is command, turn or run, not \"%.8s\"", what);
		return;
	}
	if (t == NULL || t->state == TURN_DONE ||
	    (msg_get_uint(m, "id", &id) == 0 && id != t->id)) {
		out_error(b, from, rid, "interrupt", "no turn runs%s",
		    t != NULL ? " with that id" : "");
		return;
	}
	if (!whole && t->state != TURN_TOOLS) {
		out_error(b, from, rid, "interrupt",
		    "no command runs now (the turn is %s); interrupt the "
		    "turn to stop it",
		    t->state == TURN_SETTLE	? "waiting for its view"
			: t->state == TURN_CALL ? "calling the model"
						: "stopping already");
		return;
	}
	id = t->id;
	r = msg_new(MSG_REPLY);
	msg_set_int(r, "rid", (int64_t)rid);
	doc = msg_set_map(r, "doc");
	msg_val_set_str(doc, "interrupted", whole ? "turn" : "command");
	msg_val_set_int(doc, "turn", (int64_t)id);
	if (t->state == TURN_TOOLS) {
		if (whole)
			t->state = TURN_STOPPING;
		n = call_interrupt(b, t, now);
	}
	msg_val_set_int(doc, "calls", (int64_t)n);
	(void)out_send_client(b, from, r);
	msg_destroy(&r);
	log_info("turn of message %llu: %s interrupted by a client (%zu "
		 "calls)",
	    (unsigned long long)id, whole ? "the turn" : "the command", n);
	if (whole && b->turn == t &&
	    (t->state == TURN_SETTLE || t->state == TURN_CALL)) {
		turn_end(b, "stopped",
		    "the turn was interrupted; what it did so far is logged");
		return;
	}
	if (b->turn == t)
		call_run(b, t, now);
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

/* turn_init - the engine, the day's spend, the interrupted calls. */
void
turn_init(struct broker *b)
{
	json_t *cfg;
	char *why = NULL;

	b->perm = perm_new();
	if (b->cfg.permissions != NULL) {
		cfg = json_loads(b->cfg.permissions, 0, NULL);
		/* config_load checked it: a failure here is a bug, and the
		 * engine then keeps its defaults (ask for every write). */
		if (cfg == NULL || perm_load(b->perm, cfg, &why) != 0)
			log_warnx("permissions: %s", why ? why : "unreadable");
		free(why);
		json_decref(cfg);
	}
	call_recover(b);
}

/* turn_free - release the turn (shutdown). */
void
turn_free(struct broker *b)
{
	turn_destroy(&b->turn);
	perm_destroy(&b->perm);
}
