/*
 * out.c - what shirod sends out: answers and errors to one client, events
 * to every attached client, the planner trace, and the view.json timer.
 *
 * serve.c and compact.c reach the clients through these calls only, so
 * they depend on this file and not on the event loop in broker.c.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "broker.h"
#include "out.h"

/* out_trace - write one planner event line to the trace, if any. */
void
out_trace(struct broker *b, const char *fmt, ...)
{
	va_list ap;

	if (b->trace == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(b->trace, fmt, ap);
	va_end(ap);
	fputc('\n', b->trace);
}

/* out_send_client - send m to a client; forget one that cannot take it. */
int
out_send_client(
    struct broker *b, const struct msg_ident *to, const struct msg *m)
{
	struct clients_client *cl;
	int rc;

	rc = msg_send(b->csock, m, to);
	if (rc == -SHIRO_ERR_NOENT || rc == -SHIRO_ERR_AGAIN) {
		/* Gone, or too slow to read its queue: it must HELLO again
		 * (with its last seq, to get what it missed). */
		cl = clients_find(&b->clients, to);
		if (cl != NULL) {
			/* A client that left is normal; one too slow is not. */
			if (rc == -SHIRO_ERR_AGAIN && b->n_slow++ % 1000 == 0)
				log_info("client %s: its queue is full, "
					 "forgotten (%llu so far)",
				    cl->name[0] ? cl->name : "(unnamed)",
				    (unsigned long long)b->n_slow);
			clients_drop(&b->clients, cl);
		}
	} else if (rc != 0) {
		log_warnx("sending %s to a client: %s",
		    msg_type_name(msg_type(m)), err_str(rc));
	}
	return rc;
}

/* out_error - send ERROR {rid, code, text} to a client. */
void
out_error(struct broker *b, const struct msg_ident *to, uint64_t rid,
    const char *code, const char *fmt, ...)
{
	struct msg *m = msg_new(MSG_ERROR);
	struct buf t = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&t, fmt, ap);
	va_end(ap);
	if (t.len > 4000)
		buf_truncate(&t, 4000);
	if (rid != 0)
		msg_set_int(m, "rid", (int64_t)rid);
	msg_set_str(m, "code", code);
	msg_set_strn(m, "text", t.data ? t.data : "", t.len);
	(void)out_send_client(b, to, m);
	msg_destroy(&m);
	buf_free(&t);
}

/* out_publish - number an event, keep it, send it to attached clients. */
void
out_publish(struct broker *b, struct msg **evp)
{
	const struct msg *ev;
	size_t k;

	ev = clients_publish(&b->clients, evp);
	b->n_events++;
	for (k = 0; k < b->clients.n;) {
		struct clients_client *cl = b->clients.v[k];
		size_t before = b->clients.n;

		if (cl->attached)
			(void)out_send_client(b, &cl->ident, ev);
		if (b->clients.n == before)
			k++;
	}
}

/* out_view_save - write view.json from the planner's view. */
void
out_view_save(struct broker *b)
{
	const struct plan_line *lines;
	struct store_line *v;
	size_t n, k;
	int rc;

	plan_view(b->plan, &lines, &n);
	v = xcalloc(n ? n : 1, sizeof(*v));
	for (k = 0; k < n; k++) {
		v[k].l = lines[k].l;
		v[k].i = lines[k].i;
	}
	rc = store_view_save(b->store, v, n);
	if (rc != 0)
		log_warnx("view.json not saved (%s): %s", err_str(rc),
		    store_errmsg(b->store));
	free(v);
	b->view_dirty = 0;
}

/*
 * out_view_changed - the view changed.  view.json is written at most
 * every BROKER_VIEW_MS: 200 ms after a batch that merged, a second after
 * a message that only appended a line, and at stop.  The view a restart
 * starts from does not depend on it: the fold replays the merge records
 * (D1) and checks view.json against them.
 */
void
out_view_changed(struct broker *b, int merged)
{
	uint64_t due = timer_now() + (merged ? 200 : 1000);

	if (b->view_dirty && b->view_due <= due)
		return;
	if (b->view_dirty)
		(void)timer_cancel(&b->timers, b->view_timer);
	b->view_dirty = 1;
	b->view_due = due;
	b->view_timer = timer_add(&b->timers, due, BROKER_T_VIEW, 0);
}
