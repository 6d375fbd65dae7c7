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
#include "proto/xmalloc.h"
#include "proto/zsock.h"

#include "attach.h"
#include "cmd.h"
#include "conn.h"
#include "daemon.h"
#include "edit.h"
#include "hist.h"
#include "render.h"

/* How long the session tries to get its daemon back before it gives up. */
#define ATTACH_RECONNECT_MS 30000
/* How often at most the status line asks for the view's size. */
#define ATTACH_SIZE_MS 1000
#define ATTACH_SIZE_TIMEOUT_MS 5000

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
};

static const char attach_help[] =
    "Type a message and press Enter to send it as a turn.  Commands:\n"
    "  /memory            the status and every line of the view\n"
    "  /memory zoom ID N  what node ID+N covers (N = 1: the message)\n"
    "  /status            the daemon's state\n"
    "  /log [N]           the daemon's last log lines\n"
    "  /help              this list\n"
    "  /exit              leave (the daemon keeps running; Ctrl-D too)\n";

/* attach_say - print lines above the prompt. */
static void
attach_say(struct attach *a, const char *text)
{
	size_t len = strlen(text);

	if (a->e != NULL) {
		edit_print(a->e, text);
		return;
	}
	/* Events replayed while attaching come before the editor exists. */
	fputs(text, stdout);
	if (len == 0 || text[len - 1] != '\n')
		fputc('\n', stdout);
	fflush(stdout);
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

/*
 * attach_reconnect - get the daemon back after it stopped answering:
 * attach again, with the last event seen, to the daemon that listens
 * next (within ATTACH_RECONNECT_MS).  0, or the exit code to end with.
 */
static int
attach_reconnect(struct attach *a)
{
	struct conn_handler h = {attach_event, a};
	volatile sig_atomic_t *stop = cmd_stop_flag();
	uint64_t last_seq = a->c != NULL ? a->c->last_seq : 0;
	long long deadline = zsock_now_ms() + ATTACH_RECONNECT_MS;
	char line[256];
	int rc;

	conn_close(&a->c);
	a->lost = 0;
	attach_say(a,
	    "shiro: shirod stopped answering; reconnecting "
	    "(Ctrl-C gives up)...");
	while (zsock_now_ms() < deadline && !*stop) {
		/* Never start a daemon here: one that was stopped on purpose
		 * stays stopped until someone starts it. */
		rc =
		    a->s->sock_path != NULL ? daemon_probe(a->s->sock_path) : 0;
		if (rc == 0)
			rc = conn_open(
			    a->s->endpoint, a->s->dead_ms, last_seq, &h, &a->c);
		if (rc == 0 && a->c != NULL) {
			snprintf(line, sizeof(line),
			    "shiro: attached again to shirod (pid %d)%s",
			    (int)a->c->daemon_pid,
			    last_seq == 0 || a->c->replay
				? ""
				: "; events it sent meanwhile are lost "
				  "(it could not replay them)");
			attach_say(a, line);
			return 0;
		}
		attach_sleep_ms(500);
	}
	*stop = 0;
	return cmd_lost(a->s, -SHIRO_ERR_TIMEOUT);
}

/* attach_wait - the editor's waiter: serve the daemon until input. */
static int
attach_wait(void *arg, int fd)
{
	struct attach *a = arg;
	volatile sig_atomic_t *stop = cmd_stop_flag();
	int rc;

	for (;;) {
		if (a->stopped)
			return -SHIRO_ERR_STATE;
		if (a->lost || a->c == NULL) {
			rc = attach_reconnect(a);
			if (rc != 0)
				return -SHIRO_ERR_TIMEOUT;
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

	if (a->c == NULL && attach_reconnect(a) != 0)
		goto out;
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
	char *words[5], *save = NULL, *w;
	struct msg *req = NULL;
	uint64_t id, n;
	int nw = 0;

	for (w = strtok_r(line, " \t", &save); w != NULL && nw < 5;
	     w = strtok_r(NULL, " \t", &save))
		words[nw++] = w;
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

/* attach_send_turn - send a typed message as a turn and wait for it. */
static void
attach_send_turn(struct attach *a, const char *line)
{
	int rc;

	if (a->c == NULL && attach_reconnect(a) != 0)
		return;
	rc = cmd_turn(a->c, &a->turn, line);
	if (rc == SHIRO_EXIT_UNREACHABLE)
		a->lost = 1;
	else if (rc == SHIRO_EXIT_INTERRUPTED)
		*cmd_stop_flag() = 0;
	attach_status(a, 1);
}

/* attach_run - the interactive session (see attach.h). */
int
attach_run(struct shiro *s)
{
	struct attach a;
	struct conn_handler h;
	struct edit_waiter w;
	char cwd[PATH_MAX], *line = NULL, banner[256];
	const char *text;
	int rc;

	memset(&a, 0, sizeof(a));
	a.s = s;
	a.ceiling = RENDER_CEILING;
	a.turn.home = s->home;
	a.turn.endpoint = s->endpoint;
	h.event = attach_event;
	h.arg = &a;
	w.wait = attach_wait;
	w.arg = &a;
	cmd_catch_signals();
	rc = cmd_connect(s, 1, 0, &h, &a.c);
	if (rc != SHIRO_EXIT_OK)
		return rc;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		snprintf(cwd, sizeof(cwd), "/");
	a.hist = hist_open(s->home, cwd);
	a.e = edit_new("shiro", a.hist, &w);
	snprintf(banner, sizeof(banner),
	    "shiro: attached to shirod (pid %d) for %s; /help lists the "
	    "commands",
	    (int)a.c->daemon_pid, s->home);
	attach_say(&a, banner);
	/* The first status line. */
	a.size_stale = 1;
	attach_refresh_size(&a);
	attach_status(&a, 1);
	rc = SHIRO_EXIT_OK;
	for (;;) {
		free(line);
		line = NULL;
		rc = edit_read(a.e, "shiro> ", &line);
		if (cmd_terminated()) {
			rc = SHIRO_EXIT_INTERRUPTED;
			break;
		}
		if (rc == -SHIRO_ERR_CANCELED || rc == -SHIRO_ERR_AGAIN) {
			rc = SHIRO_EXIT_OK;
			continue;
		}
		if (rc == -SHIRO_ERR_TOOBIG) {
			attach_say(&a,
			    "shiro: that line is too long for one "
			    "message; it was not sent");
			continue;
		}
		if (rc == -SHIRO_ERR_NOENT) {
			rc = SHIRO_EXIT_OK;
			break;
		}
		if (rc == -SHIRO_ERR_STATE) {
			attach_say(&a,
			    "shiro: shirod stopped; start it again "
			    "with 'shiro'");
			rc = SHIRO_EXIT_OK;
			break;
		}
		if (rc == -SHIRO_ERR_TIMEOUT) {
			rc = SHIRO_EXIT_UNREACHABLE;
			break;
		}
		if (rc < 0) {
			attach_say(&a, "shiro: cannot read the input");
			rc = SHIRO_EXIT_FAIL;
			break;
		}
		text = line;
		while (*text == ' ' || *text == '\t')
			text++;
		if (*text == '\0')
			continue;
		if (*text == '/') {
			if (attach_command(&a, line + (text - line)))
				break;
			continue;
		}
		attach_send_turn(&a, line);
		if (cmd_terminated()) {
			rc = SHIRO_EXIT_INTERRUPTED;
			break;
		}
	}
	free(line);
	if (a.c != NULL && !a.stopped)
		conn_bye(a.c);
	conn_close(&a.c);
	edit_destroy(&a.e);
	hist_destroy(&a.hist);
	return rc;
}
