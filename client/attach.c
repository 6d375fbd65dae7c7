#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

#include "attach.h"
#include "cmd.h"
#include "conn.h"
#include "daemon.h"
#include "edit.h"
#include "hist.h"
#include "project.h"
#include "render.h"

/* How long the session tries to get its daemon back before it gives up,
 * unless $SHIRO_RECONNECT_SECONDS says otherwise (1 to 3600). */
#define ATTACH_RECONNECT_MS 30000
/* How often it tries meanwhile. */
#define ATTACH_RETRY_MS 500
/* How often at most the status line asks for the view's size. */
#define ATTACH_SIZE_MS 1000
#define ATTACH_SIZE_TIMEOUT_MS 5000

/* A message typed while the daemon was away, sent once it is back. */
struct attach_kept {
	char *text;
	char key[40]; /* its idempotency key: a resend is logged once */
};

/* One interactive session. */
struct attach {
	struct shiro *s;
	struct conn *c; /* NULL while reconnecting */
	struct edit *e;
	struct hist *hist;
	struct cmd_turn turn; /* the turn being waited for, if any */
	uint64_t view_bytes; /* for the status line */
	uint64_t ceiling;
	int have_size; /* view_bytes is known */
	int stopped; /* the daemon said it stops */
	int lost; /* the connection is dead: reconnect */
	int size_stale; /* the view changed since the last status */
	long long size_at; /* when the status was last asked for */
	long long lost_at; /* when the connection was lost (c == NULL) */
	long long retry_at; /* when to try to attach again */
	uint64_t last_seq; /* the last event seen before it was lost */
	struct attach_kept *kept; /* typed while away, oldest first */
	size_t nkept;
	int sending_kept; /* attach_send_kept runs */
	char *ws; /* the workspace its SENDs and NOTES name, or NULL */
};

static const char attach_help[] =
    "Type a message and press Enter to send it as a turn; a pasted block\n"
    "is one message.  While a turn runs, its tool calls that ask are\n"
    "put to you (y, a for always, n [reason]); Ctrl-C interrupts the\n"
    "running command, a second Ctrl-C the turn.  Commands:\n"
    "  /memory            the status and every line of the view\n"
    "  /memory zoom ID N  what node ID+N covers (N = 1: the message)\n"
    "  /status            the daemon's state\n"
    "  /log [N]           the chat's last N messages\n"
    "  /notes             the agent's notes on this directory's project\n"
    "  /todos             its task list (shown here whenever it changes)\n"
    "  /approve ID yes|always|no [REASON]\n"
    "                     answer a tool call that asks (any client's turn)\n"
    "  /interrupt [turn]  stop the running command (or the whole turn)\n"
    "  /help              this list\n"
    "  /exit              leave (the daemon keeps running; Ctrl-D too)\n";

/* attach_say - print lines above the prompt, every control in them
 * shown as text (render_escape): chat content never drives the
 * terminal. */
static void
attach_say(struct attach *a, const char *text)
{
	struct buf b = BUF_INIT;

	render_escape(&b, text, strlen(text));
	buf_add(&b, "", 0);
	if (a->e != NULL) {
		edit_print(a->e, b.data);
	} else {
		/* Events replayed while attaching come before the editor. */
		fputs(b.data, stdout);
		if (b.len == 0 || b.data[b.len - 1] != '\n')
			fputc('\n', stdout);
		fflush(stdout);
	}
	buf_free(&b);
}

/* attach_status - redraw the status line (and print it without a tty). */
static void
attach_status(struct attach *a, int print_plain)
{
	struct buf b = BUF_INIT;

	if (!a->have_size || a->e == NULL)
		return;
	render_status_line(&b, a->view_bytes, a->ceiling);
	edit_set_status(a->e, b.data);
	if (print_plain && !edit_is_tty(a->e))
		attach_say(a, b.data);
	buf_free(&b);
}

/* attach_uint_at - the unsigned number at key in map v, or under a
 * sub-map: "view.bytes" looks in v["view"]["bytes"]. */
static int
attach_uint_at(const struct msg_val *v, const char *path, uint64_t *out)
{
	char key[64];
	const char *dot;
	int64_t i;

	while (v != NULL && v->type == MSG_V_MAP) {
		dot = strchr(path, '.');
		if (dot == NULL) {
			if (msg_val_int(v, path, &i) < 0 || i < 0)
				return -1;
			*out = (uint64_t)i;
			return 0;
		}
		if ((size_t)(dot - path) >= sizeof(key))
			return -1;
		memcpy(key, path, (size_t)(dot - path));
		key[dot - path] = '\0';
		v = msg_val_get(v, key);
		path = dot + 1;
	}
	return -1;
}

/* attach_size_from_doc - take the view's size from a status document. */
static void
attach_size_from_doc(struct attach *a, const struct msg_val *doc)
{
	static const char *bytes_keys[] = {
	    "view.bytes", "status.view.bytes", "view_bytes"};
	static const char *ceiling_keys[] = {
	    "ceiling", "view.ceiling", "memory.ceiling", "view_ceiling"};
	size_t k;

	for (k = 0; k < sizeof(bytes_keys) / sizeof(bytes_keys[0]); k++)
		if (attach_uint_at(doc, bytes_keys[k], &a->view_bytes) == 0) {
			a->have_size = 1;
			break;
		}
	for (k = 0; k < sizeof(ceiling_keys) / sizeof(ceiling_keys[0]); k++)
		if (attach_uint_at(doc, ceiling_keys[k], &a->ceiling) == 0)
			break;
}

/* attach_event - the connection's handler: show one event or answer. */
static void
attach_event(void *arg, const struct msg *m)
{
	struct attach *a = arg;
	struct buf b = BUF_INIT;
	const char *name = "", *code = "", *text = "";
	uint64_t bytes;

	if (cmd_turn_take(&a->turn, m))
		goto out;
	if (msg_type(m) == MSG_ERROR) {
		(void)msg_get_str(m, "code", &code, NULL);
		(void)msg_get_str(m, "text", &text, NULL);
		buf_printf(&b, "shiro: shirod says (%s): %s", code, text);
		attach_say(a, b.data);
		goto out;
	}
	if (msg_type(m) != MSG_EVENT)
		goto out;
	if (msg_get_uint(m, "view_bytes", &bytes) == 0) {
		a->view_bytes = bytes;
		a->have_size = 1;
	}
	(void)msg_get_str(m, "ev", &name, NULL);
	(void)msg_get_str(m, "code", &code, NULL);
	if (strcmp(name, "notice") == 0 && strcmp(code, "stopping") == 0)
		a->stopped = 1;
	/* The task list, above the input, each time a turn changes it. */
	if (project_live(&b, m) == 0) {
		attach_say(a, b.data);
		goto out;
	}
	/* A new message or node changes the view's size: ask soon. */
	if (strcmp(name, "message") == 0 || strcmp(name, "node") == 0)
		a->size_stale = 1;
	render_event(&b, m);
	attach_say(a, b.data);
	attach_status(a, 0);
out:
	buf_free(&b);
}

/* attach_refresh_size - ask for the status when the size went stale. */
static void
attach_refresh_size(struct attach *a)
{
	struct msg *req, *ans = NULL;
	const struct msg_val *doc;
	long long now = zsock_now_ms();

	if (!a->size_stale || now - a->size_at < ATTACH_SIZE_MS)
		return;
	a->size_stale = 0;
	a->size_at = now;
	req = msg_new(MSG_STATUS);
	if (conn_request(a->c, req, ATTACH_SIZE_TIMEOUT_MS, NULL, &ans) == 0 &&
	    msg_type(ans) == MSG_REPLY && msg_get_map(ans, "doc", &doc) == 0) {
		attach_size_from_doc(a, doc);
		attach_status(a, 0);
	}
	msg_destroy(&req);
	msg_destroy(&ans);
}

/* attach_sleep_ms - sleep about ms milliseconds (a signal cuts it short). */
static void
attach_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	(void)nanosleep(&ts, NULL);
}

static void attach_send_kept(struct attach *a);

/* attach_window_ms - the time to get the daemon back, in ms. */
static long long
attach_window_ms(void)
{
	const char *env = getenv("SHIRO_RECONNECT_SECONDS");
	char *end;
	long v;

	if (env == NULL || *env == '\0')
		return ATTACH_RECONNECT_MS;
	errno = 0;
	v = strtol(env, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > 3600)
		return ATTACH_RECONNECT_MS;
	return (long long)v * 1000;
}

/* attach_lose - the daemon stopped answering: drop the connection and
 * start trying to get it back, input still read meanwhile. */
static void
attach_lose(struct attach *a)
{
	char line[256];

	a->last_seq = a->c != NULL ? a->c->last_seq : a->last_seq;
	conn_close(&a->c);
	a->lost = 0;
	a->lost_at = zsock_now_ms();
	a->retry_at = a->lost_at;
	snprintf(line, sizeof(line),
	    "shiro: shirod stopped answering; trying to attach again for %d "
	    "s.  What you type meanwhile is kept and sent once it is back; "
	    "/exit leaves.",
	    (int)(attach_window_ms() / 1000));
	attach_say(a, line);
}

/*
 * attach_try - one try to attach again, when one is due.  Returns 0
 * (attached, or not yet due, or this try failed: a->c says), or
 * -SHIRO_ERR_TIMEOUT once the window (attach_window_ms) has passed.
 */
static int
attach_try(struct attach *a)
{
	struct conn_handler h = {attach_event, a};
	long long now = zsock_now_ms();
	char line[256];
	int rc;

	if (now - a->lost_at >= attach_window_ms())
		return -SHIRO_ERR_TIMEOUT;
	if (now < a->retry_at)
		return 0;
	a->retry_at = now + ATTACH_RETRY_MS;
	/* Never start a daemon here: one that was stopped on purpose stays
	 * stopped until someone starts it. */
	rc = a->s->sock_path != NULL ? daemon_probe(a->s->sock_path) : 0;
	if (rc == 0)
		rc = conn_open(a->s->endpoint, a->s->cred, a->s->dead_ms,
		    a->last_seq, &h, &a->c);
	if (rc != 0 || a->c == NULL)
		return 0;
	snprintf(line, sizeof(line),
	    "shiro: attached again to shirod (pid %d)%s", (int)a->c->daemon_pid,
	    a->last_seq == 0 || a->c->replay
		? ""
		: "; events it sent meanwhile are lost (it could not replay "
		  "them)");
	attach_say(a, line);
	a->size_stale = 1;
	attach_send_kept(a);
	return 0;
}

/* attach_reconnect - try to attach again until it works or the time is
 * up (for a command that cannot wait for input).  0, or the exit code. */
static int
attach_reconnect(struct attach *a)
{
	volatile sig_atomic_t *stop = cmd_stop_flag();

	if (a->c != NULL && a->lost)
		attach_lose(a);
	while (a->c == NULL && !*stop && !a->stopped) {
		if (attach_try(a) < 0)
			return cmd_lost(a->s, -SHIRO_ERR_TIMEOUT);
		if (a->c == NULL)
			attach_sleep_ms(ATTACH_RETRY_MS / 5);
	}
	if (*stop) {
		*stop = 0;
		return SHIRO_EXIT_INTERRUPTED;
	}
	return a->c != NULL ? 0 : SHIRO_EXIT_UNREACHABLE;
}

/* attach_keep - keep text (sent under key, or a fresh one) for when the
 * daemon is back, and say so. */
static void
attach_keep(struct attach *a, const char *text, const char *key)
{
	struct attach_kept *k;
	char line[160];

	a->kept = xreallocarray(a->kept, a->nkept + 1, sizeof(*a->kept));
	k = &a->kept[a->nkept++];
	k->text = xstrdup(text);
	snprintf(k->key, sizeof(k->key), "%s", key != NULL ? key : "");
	snprintf(line, sizeof(line),
	    "shiro: not attached to shirod; the message is kept and sent "
	    "once it is back (%zu waiting)",
	    a->nkept);
	attach_say(a, line);
}

/*
 * attach_send_turn - send one message as a turn and wait for it.  A
 * message the daemon did not acknowledge (it was away, or went away
 * meanwhile) is kept, with its key, and sent again once it is back.
 * Returns 0 when it was acknowledged.
 */
static int
attach_send_turn(struct attach *a, const char *text, const char *key)
{
	int rc;

	if (a->c == NULL || a->lost) {
		if (a->c != NULL)
			attach_lose(a);
		attach_keep(a, text, key);
		return -1;
	}
	snprintf(
	    a->turn.key, sizeof(a->turn.key), "%s", key != NULL ? key : "");
	rc = cmd_turn(a->c, &a->turn, text);
	if (rc == SHIRO_EXIT_UNREACHABLE)
		a->lost = 1;
	else if (rc == SHIRO_EXIT_INTERRUPTED)
		*cmd_stop_flag() = 0;
	if (!a->turn.acked && rc == SHIRO_EXIT_UNREACHABLE) {
		attach_lose(a);
		attach_keep(a, text, a->turn.key);
		return -1;
	}
	attach_status(a, 1);
	return a->turn.acked ? 0 : -1;
}

/* attach_send_kept - send what was typed while the daemon was away, in
 * order; what still cannot go stays kept. */
static void
attach_send_kept(struct attach *a)
{
	struct attach_kept k;
	char line[96];

	if (a->sending_kept || a->nkept == 0)
		return;
	a->sending_kept = 1;
	snprintf(line, sizeof(line), "shiro: sending the %zu message%s kept",
	    a->nkept, a->nkept == 1 ? "" : "s");
	attach_say(a, line);
	while (a->nkept > 0 && a->c != NULL && !a->lost && !a->stopped) {
		k = a->kept[0];
		memmove(
		    a->kept, a->kept + 1, (a->nkept - 1) * sizeof(*a->kept));
		a->nkept--;
		/* Kept again, at the end, if the daemon went away again:
		 * put it back in front, where it was. */
		if (attach_send_turn(a, k.text, k.key) != 0 && a->nkept > 1) {
			struct attach_kept last = a->kept[a->nkept - 1];

			memmove(a->kept + 1, a->kept,
			    (a->nkept - 1) * sizeof(*a->kept));
			a->kept[0] = last;
		}
		free(k.text);
	}
	a->sending_kept = 0;
}

/* attach_unsent - say which typed messages were never sent; the exit
 * code to end with (3 when there were any, else rc). */
static int
attach_unsent(struct attach *a, const char *partial, int rc)
{
	struct buf b = BUF_INIT;
	size_t k;

	if (a->nkept == 0 && partial == NULL)
		return rc;
	if (a->nkept > 0) {
		buf_printf(&b,
		    "shiro: %zu message%s you typed could not be sent (they "
		    "are in the history):\n",
		    a->nkept, a->nkept == 1 ? "" : "s");
		for (k = 0; k < a->nkept; k++)
			buf_printf(&b, "  %s\n", a->kept[k].text);
	}
	if (partial != NULL)
		buf_printf(&b,
		    "shiro: the line being typed was not sent:\n  %s\n",
		    partial);
	attach_say(a, b.data);
	buf_free(&b);
	return SHIRO_EXIT_UNREACHABLE;
}

/* attach_wait - the editor's waiter: serve the daemon until input,
 * trying to get it back meanwhile when it went away. */
static int
attach_wait(void *arg, int fd)
{
	struct attach *a = arg;
	volatile sig_atomic_t *stop = cmd_stop_flag();
	struct zsock_poll item;
	long long wait;
	int rc;

	for (;;) {
		if (a->stopped)
			return -SHIRO_ERR_STATE;
		if (a->lost && a->c != NULL)
			attach_lose(a);
		if (a->c == NULL) {
			if (attach_try(a) < 0)
				return -SHIRO_ERR_TIMEOUT;
		}
		if (a->c == NULL) {
			/* Away: read what is typed until the next try. */
			wait = a->retry_at - zsock_now_ms();
			memset(&item, 0, sizeof(item));
			item.fd = fd;
			item.events = ZSOCK_IN;
			rc = zsock_poll(&item, 1, wait > 0 ? (long)wait : 0);
			if (rc > 0 && (item.revents & (ZSOCK_IN | ZSOCK_ERR)))
				return 1;
			if (*stop) {
				*stop = 0;
				return -SHIRO_ERR_CANCELED;
			}
			continue;
		}
		attach_refresh_size(a);
		rc = conn_pump(
		    a->c, fd, a->size_stale ? ATTACH_SIZE_MS : SHIRO_PING_MS);
		if (rc == 1)
			return 1;
		if (rc == -SHIRO_ERR_AGAIN) {
			if (*stop) {
				*stop = 0;
				return -SHIRO_ERR_CANCELED;
			}
			continue;
		}
		if (rc == -SHIRO_ERR_TIMEOUT) {
			a->lost = 1;
			continue;
		}
		if (rc < 0)
			return rc;
	}
}

/* attach_request - one query from a slash command; print its answer. */
static void
attach_request(struct attach *a, struct msg **reqp)
{
	struct msg *ans = NULL;
	const struct msg_val *doc = NULL;
	const char *code = "error", *text = "";
	struct buf b = BUF_INIT;
	enum msg_type t = msg_type(*reqp);
	int rc;

	if (a->c == NULL || a->lost) {
		attach_say(a,
		    "shiro: not attached to shirod (trying again); ask once "
		    "it is back");
		goto out;
	}
	rc = conn_request(a->c, *reqp, 30000, cmd_stop_flag(), &ans);
	if (rc < 0) {
		if (rc == -SHIRO_ERR_CANCELED) {
			*cmd_stop_flag() = 0;
			attach_say(a, "shiro: stopped waiting");
		} else {
			a->lost = 1;
		}
		goto out;
	}
	if (msg_type(ans) == MSG_ERROR) {
		(void)msg_get_str(ans, "code", &code, NULL);
		(void)msg_get_str(ans, "text", &text, NULL);
		buf_printf(&b, "shiro: shirod refused it (%s): %s", code, text);
	} else if (msg_type(ans) == MSG_REPLY &&
	    msg_get_map(ans, "doc", &doc) == 0) {
		if (t == MSG_STATUS || t == MSG_MEMORY)
			attach_size_from_doc(a, doc);
		render_reply(&b, t, doc);
	} else {
		buf_printf(&b, "shiro: shirod answered with %s",
		    msg_type_name(msg_type(ans)));
	}
	attach_say(a, b.data != NULL ? b.data : "");
	attach_status(a, 1);
out:
	buf_free(&b);
	msg_destroy(reqp);
	msg_destroy(&ans);
}

/* attach_todos - show the project's task list, when it has one, as the
 * session begins. */
static void
attach_todos(struct attach *a)
{
	struct msg *req = cmd_new_notes("todos", a->ws), *ans = NULL;
	const struct msg_val *doc = NULL;
	struct buf b = BUF_INIT;
	int64_t total = 0;

	if (req == NULL || a->c == NULL)
		goto out;
	if (conn_request(a->c, req, ATTACH_SIZE_TIMEOUT_MS, cmd_stop_flag(),
		&ans) == 0 &&
	    msg_type(ans) == MSG_REPLY && msg_get_map(ans, "doc", &doc) == 0 &&
	    msg_val_int(doc, "total", &total) == 0 && total > 0) {
		project_render(&b, doc);
		attach_say(a, b.data);
	}
out:
	buf_free(&b);
	msg_destroy(&req);
	msg_destroy(&ans);
}

/* attach_parse_uint - a decimal number; 0 or -1. */
static int
attach_parse_uint(const char *s, uint64_t *vp)
{
	char *end;

	if (s == NULL || s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	*vp = strtoull(s, &end, 10);
	return errno != 0 || *end != '\0' || *vp > INT64_MAX ? -1 : 0;
}

/* attach_command - a line that starts with '/'; 1 when it ends the session. */
static int
attach_command(struct attach *a, char *line)
{
	char *words[5], *save = NULL, *w, *reason = NULL;
	struct msg *req = NULL;
	uint64_t id, n;
	int nw = 0;

	/* The reason of /approve ID no REASON is the rest of the line. */
	if (strncmp(line, "/approve", 8) == 0) {
		char *r = line;
		int k;

		for (k = 0; k < 3 && r != NULL; k++) {
			r += strspn(r, " \t");
			r = strpbrk(r, " \t");
		}
		if (r != NULL) {
			*r++ = '\0';
			r += strspn(r, " \t");
			reason = *r ? r : NULL;
		}
	}
	for (w = strtok_r(line, " \t", &save); w != NULL && nw < 5;
	     w = strtok_r(NULL, " \t", &save))
		words[nw++] = w;
	if (reason != NULL && nw < 5)
		words[nw++] = reason;
	if (nw == 0)
		return 0;
	if (strcmp(words[0], "/exit") == 0 || strcmp(words[0], "/quit") == 0)
		return 1;
	if (strcmp(words[0], "/help") == 0) {
		attach_say(a, attach_help);
	} else if (strcmp(words[0], "/status") == 0 && nw == 1) {
		req = msg_new(MSG_STATUS);
	} else if (strcmp(words[0], "/memory") == 0 && nw == 1) {
		req = msg_new(MSG_MEMORY);
	} else if (strcmp(words[0], "/memory") == 0 && nw == 4 &&
	    strcmp(words[1], "zoom") == 0 &&
	    attach_parse_uint(words[2], &id) == 0 &&
	    attach_parse_uint(words[3], &n) == 0 && n > 0 &&
	    (n & (n - 1)) == 0 && id % n == 0) {
		req = msg_new(MSG_ZOOM);
		msg_set_int(req, "id", (int64_t)id);
		msg_set_int(req, "n", (int64_t)n);
	} else if (strcmp(words[0], "/memory") == 0) {
		attach_say(a,
		    "shiro: use /memory, or /memory zoom ID N with N "
		    "a power of two and ID a multiple of N");
	} else if ((strcmp(words[0], "/notes") == 0 ||
		       strcmp(words[0], "/todos") == 0) &&
	    nw == 1) {
		req = cmd_new_notes(words[0] + 1, a->ws);
		if (req == NULL)
			attach_say(a,
			    "shiro: the project is the workspace, and this "
			    "session names none: attach again with "
			    "--workspace DIR (a directory on shirod's "
			    "machine)");
	} else if (strcmp(words[0], "/approve") == 0 && nw >= 3 &&
	    attach_parse_uint(words[1], &id) == 0 &&
	    (strcmp(words[2], "yes") == 0 || strcmp(words[2], "always") == 0 ||
		strcmp(words[2], "no") == 0)) {
		req = msg_new(MSG_APPROVE);
		msg_set_int(req, "approval", (int64_t)id);
		msg_set_str(req, "answer", words[2]);
		if (nw >= 4)
			msg_set_str(req, "reason", reason);
	} else if (strcmp(words[0], "/approve") == 0) {
		attach_say(a,
		    "shiro: use /approve ID yes, /approve ID always or "
		    "/approve ID no [REASON]");
	} else if (strcmp(words[0], "/interrupt") == 0 &&
	    (nw == 1 || (nw == 2 && strcmp(words[1], "turn") == 0))) {
		req = msg_new(MSG_INTERRUPT);
		msg_set_str(req, "what", nw == 2 ? "turn" : "command");
	} else if (strcmp(words[0], "/log") == 0 && nw <= 2) {
		req = msg_new(MSG_LOG);
		if (nw == 2 && attach_parse_uint(words[1], &n) == 0)
			msg_set_int(req, "tail", (int64_t)n);
		else if (nw == 2)
			attach_say(a, "shiro: /log takes a number of lines");
	} else {
		attach_say(a,
		    "shiro: unknown command; /help lists them (a "
		    "message that starts with '/' needs a space "
		    "before it)");
	}
	if (req != NULL)
		attach_request(a, &req);
	return 0;
}

/*
 * attach_leave - the session ends: what was typed and kept is sent
 * first when the daemon can still be reached (within the time left to
 * reconnect), and what cannot be sent is listed.  The exit code.
 */
static int
attach_leave(struct attach *a, int rc)
{
	if (a->nkept > 0 && !a->stopped) {
		attach_say(a,
		    "shiro: sending what was kept before leaving "
		    "(Ctrl-C leaves without it)");
		if (a->c != NULL && !a->lost)
			attach_send_kept(a);
		while (a->nkept > 0 && !a->stopped && attach_reconnect(a) == 0)
			attach_send_kept(a);
	}
	return attach_unsent(a, NULL, rc);
}

/* attach_loop - read lines and act on them until the session ends;
 * the exit code. */
static int
attach_loop(struct attach *a)
{
	char *line = NULL;
	const char *text;
	int rc;

	for (;;) {
		free(line);
		line = NULL;
		rc = edit_read(a->e, "shiro> ", &line);
		if (cmd_terminated()) {
			rc = attach_unsent(
			    a, edit_partial(a->e), SHIRO_EXIT_INTERRUPTED);
			break;
		}
		if (rc == -SHIRO_ERR_CANCELED || rc == -SHIRO_ERR_AGAIN)
			continue;
		if (rc == -SHIRO_ERR_TOOBIG) {
			attach_say(a,
			    "shiro: that line is too long for one "
			    "message; it was not sent");
			continue;
		}
		if (rc == -SHIRO_ERR_INVAL) {
			char why[128];

			snprintf(why, sizeof(why),
			    "shiro: that line was not sent: %s",
			    edit_refused(a->e));
			attach_say(a, why);
			continue;
		}
		if (rc == -SHIRO_ERR_NOENT) {
			rc = attach_leave(a, SHIRO_EXIT_OK);
			break;
		}
		if (rc == -SHIRO_ERR_STATE) {
			attach_say(a,
			    "shiro: shirod was stopped; this session ends.  "
			    "Start it again with 'shiro'.");
			rc =
			    attach_unsent(a, edit_partial(a->e), SHIRO_EXIT_OK);
			break;
		}
		if (rc == -SHIRO_ERR_TIMEOUT) {
			attach_say(
			    a, "shiro: shirod did not come back; giving up");
			rc = attach_unsent(
			    a, edit_partial(a->e), SHIRO_EXIT_UNREACHABLE);
			break;
		}
		if (rc < 0) {
			attach_say(a, "shiro: cannot read the input");
			rc = attach_unsent(
			    a, edit_partial(a->e), SHIRO_EXIT_FAIL);
			break;
		}
		text = line;
		while (*text == ' ' || *text == '\t')
			text++;
		/* The one rule of empty messages (cmd_check_text): white
		 * space alone is no message, so nothing is sent. */
		if (utf8_blank(text, strlen(text)))
			continue;
		if (*text == '/') {
			if (attach_command(a, line + (text - line))) {
				rc = attach_leave(a, SHIRO_EXIT_OK);
				break;
			}
			continue;
		}
		(void)attach_send_turn(a, line, NULL);
		if (cmd_terminated()) {
			rc = attach_unsent(a, NULL, SHIRO_EXIT_INTERRUPTED);
			break;
		}
	}
	free(line);
	return rc;
}

/* attach_run - the interactive session (see attach.h). */
int
attach_run(struct shiro *s)
{
	struct attach a;
	struct conn_handler h;
	struct edit_waiter w;
	char cwd[PATH_MAX], banner[256];
	size_t k;
	int rc;

	memset(&a, 0, sizeof(a));
	a.s = s;
	a.ceiling = RENDER_CEILING;
	a.turn.home = s->home;
	a.turn.endpoint = s->endpoint;
	/* The person here is asked about the turn's calls (on a terminal;
	 * without one another attached client may answer). */
	a.turn.approvals = "ask";
	a.turn.interactive = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
	rc = cmd_workspace(s, "attach", &a.ws);
	if (rc != SHIRO_EXIT_OK)
		return rc;
	a.turn.cwd = a.ws;
	a.turn.ws_hint = a.ws == NULL;
	h.event = attach_event;
	h.arg = &a;
	w.wait = attach_wait;
	w.arg = &a;
	cmd_catch_signals();
	rc = cmd_connect(s, 1, 0, &h, &a.c);
	if (rc != SHIRO_EXIT_OK) {
		free(a.ws);
		return rc;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		snprintf(cwd, sizeof(cwd), "/");
	a.hist = hist_open(s->home, cwd);
	a.e = edit_new("shiro", a.hist, &w);
	snprintf(banner, sizeof(banner),
	    "shiro: attached to shirod (pid %d) for %s; /help lists the "
	    "commands",
	    (int)a.c->daemon_pid, s->home);
	attach_say(&a, banner);
	if (a.ws != NULL && strncmp(s->endpoint, "tcp://", 6) == 0) {
		snprintf(banner, sizeof(banner),
		    "shiro: the turns' workspace is %.180s on shirod's "
		    "machine",
		    a.ws);
		attach_say(&a, banner);
	} else if (a.ws == NULL) {
		attach_say(&a,
		    "shiro: no workspace: the turns' tools have no "
		    "directory to work in");
		attach_say(&a, CMD_WS_HINT);
	}
	attach_todos(&a);
	/* The first status line. */
	a.size_stale = 1;
	attach_refresh_size(&a);
	attach_status(&a, 1);
	rc = attach_loop(&a);
	if (a.c != NULL && !a.stopped)
		conn_bye(a.c);
	conn_close(&a.c);
	edit_destroy(&a.e);
	hist_destroy(&a.hist);
	for (k = 0; k < a.nkept; k++)
		free(a.kept[k].text);
	free(a.kept);
	free(a.ws);
	return rc;
}
