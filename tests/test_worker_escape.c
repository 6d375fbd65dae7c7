/*
 * test_worker_escape - the worker escape suite, the counterpart of
 * test_jail_escape.  A real shirod starts build/tests/worker_escape as a
 * worker program of each role (next to a real offline model worker);
 * the payload goes through the role's real start-up and lockdown and
 * then attacks from its main thread and from a thread it started before
 * the lockdown (tests/worker_escape.c lists the attempts).  Each attempt
 * is judged by the state of the host: the marker absent from the chat's
 * log, shirod alive and serving, files outside unwritten and unchanged,
 * no secret in shirod's log (the payload prints what it read), no
 * forged READY seen by shirod, no connection on the test's listener.
 * The suite fails closed: a payload must be in seccomp filter mode with
 * no_new_privs, as read from its /proc status, and its probe must have
 * been refused.  A control runs the same attacks unconfined and must
 * succeed at them, which shows the attempts are real.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/msg.h"
#include "sandbox/landlock.h"
#include "tests/harness.h"
#include "tests/test_jail_lib.h"
#include "tests/test_shirod_util.h"

/* One run of the suite for one role. */
struct esc {
	const char *role; /* "model", "fs", "tool" or "none" */
	char root[1024];
	char home[1100], shome[1200], ws[1100];
	char outside[1100], bin[1100];
	char ssh_secret[48], chat_secret[48], env_secret[48];
	int egress, egress_port; /* must hear nothing from fs and tool */
	int http, http_port; /* the model's HTTP server */
	int tls, tls_port; /* answers TLS with garbage */
	int egress_hits, http_hits, tls_hellos;
	struct stat victim; /* outside/victim before */
	long log_start; /* where the second shirod's log begins */
	pid_t shirod;
};

/* esc_path - dir/name, allocated (the test's process ends soon after). */
static const char *
esc_path(const char *dir, const char *name)
{
	char *p = NULL;

	CHECK(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

/* esc_slurp_from - path from byte off on (malloc'd, a NUL byte in it
 * shown as '?'), "" when absent. */
static char *
esc_slurp_from(const char *path, long off)
{
	struct buf b = BUF_INIT;
	char chunk[8192];
	size_t n, i;
	FILE *f = fopen(path, "r");

	if (f != NULL) {
		if (off > 0)
			(void)fseek(f, off, SEEK_SET);
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			for (i = 0; i < n; i++)
				if (chunk[i] == '\0')
					chunk[i] = '?';
			buf_add(&b, chunk, n);
		}
		fclose(f);
	}
	buf_add(&b, "", 1);
	return b.data;
}

/* esc_slurp - the whole of path. */
static char *
esc_slurp(const char *path)
{
	return esc_slurp_from(path, 0);
}

/* esc_random - a random token of hex digits into out. */
static void
esc_random(char *out, size_t size, const char *prefix)
{
	unsigned char r[8];
	FILE *f = fopen("/dev/urandom", "r");
	size_t i, n;

	CHECK(f != NULL && fread(r, 1, sizeof(r), f) == sizeof(r));
	fclose(f);
	n = (size_t)snprintf(out, size, "%s", prefix);
	for (i = 0; i < sizeof(r) && n + 2 < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%02x", r[i]);
}

/* esc_setup - the home, its secrets, the workspace, the listeners. */
static void
esc_setup(struct esc *e, const char *role)
{
	char target[PATH_MAX];

	memset(e, 0, sizeof(*e));
	e->role = role;
	snprintf(e->root, sizeof(e->root), "%s", harness_tmpdir());
	snprintf(e->home, sizeof(e->home), "%s/home", e->root);
	snprintf(e->shome, sizeof(e->shome), "%s/.shiro", e->home);
	snprintf(e->ws, sizeof(e->ws), "%s/ws", e->root);
	snprintf(e->outside, sizeof(e->outside), "%s/outside", e->root);
	snprintf(e->bin, sizeof(e->bin), "%s/bin", e->root);
	CHECK(mkdir(e->home, 0755) == 0 && mkdir(e->shome, 0700) == 0 &&
	    mkdir(e->ws, 0755) == 0 && mkdir(e->outside, 0755) == 0 &&
	    mkdir(e->bin, 0755) == 0 &&
	    mkdir(esc_path(e->home, ".ssh"), 0700) == 0);
	esc_random(e->ssh_secret, sizeof(e->ssh_secret), "ssh-secret-");
	esc_random(e->chat_secret, sizeof(e->chat_secret), "chat-secret-");
	esc_random(e->env_secret, sizeof(e->env_secret), "env-secret-");
	snprintf(target, sizeof(target), "-----BEGIN KEY %s\n", e->ssh_secret);
	jt_write(esc_path(e->home, ".ssh/id_rsa"), target);
	jt_write(esc_path(e->home, ".bashrc"), "# the user's own\n");
	jt_write(esc_path(e->ws, "a.txt"), "in the workspace\n");
	jt_write(esc_path(e->outside, "victim"), "victim\n");
	CHECK(chmod(esc_path(e->outside, "victim"), 0600) == 0);
	CHECK(stat(esc_path(e->outside, "victim"), &e->victim) == 0);
	snprintf(target, sizeof(target), "escape-%s", role);
	CHECK(symlink(tsd_bin("tests/worker_escape"),
		  esc_path(e->bin, target)) == 0);
	e->egress = jt_listen_tcp(SOCK_STREAM, &e->egress_port);
	e->http = jt_listen_tcp(SOCK_STREAM, &e->http_port);
	e->tls = jt_listen_tcp(SOCK_STREAM, &e->tls_port);
	/* shirod's environment, which its workers inherit: the home, and a
	 * secret the payload tries to read from /proc/<shirod>/environ. */
	setenv("HOME", e->home, 1);
	setenv("SHIRO_ESCAPE_SECRET", e->env_secret, 1);
	unsetenv("SHIRO_HOME");
}

/* esc_chat - a first shirod (two offline model workers) logs the chat's
 * secret and builds its tree, so that the log and tree.lmdb hold it. */
static void
esc_chat(struct esc *e)
{
	void *sock;
	pid_t pid;
	int st;

	pid = tsd_start(e->shome, NULL, &st);
	CHECKF(pid > 0, "shirod did not start (%d)", st);
	sock = tsd_connect(e->shome);
	CHECK(tsd_send_text(sock, e->chat_secret, NULL, NULL) >= 0);
	CHECK(tsd_settle(sock, 20000, NULL) == 0);
	tsd_close(&sock);
	CHECK_EQ_INT(tsd_stop(pid), 0);
	/* The second shirod's log is what comes after. */
	{
		struct stat ls;
		CHECK(stat(esc_path(e->shome, "shirod.err"), &ls) == 0);
		e->log_start = (long)ls.st_size;
	}
}

/* esc_config - config.json: a real offline model worker and the payload
 * as a worker of its role; escape.conf for the payload. */
static void
esc_config(struct esc *e)
{
	char text[4 * PATH_MAX];
	const char *cfgrole = strcmp(e->role, "none") == 0 ? "model" : e->role;
	int model = strcmp(cfgrole, "model") == 0;

	snprintf(text, sizeof(text),
	    "{\"workers\": [{\"role\": \"model\", \"provider\": \"offline\", "
	    "\"count\": 1}, {\"role\": \"%s\", \"path\": \"%s/escape-%s\", "
	    "\"count\": 1%s}], \"heartbeat\": {\"intervalMs\": 1000, "
	    "\"liveness\": 30}}\n",
	    cfgrole, e->bin, e->role,
	    model ? ", \"provider\": \"offline\"" : "");
	jt_write(esc_path(e->shome, "config.json"), text);
	snprintf(text, sizeof(text),
	    "workspace=%s\noutside=%s\negress=%d\nhttp=%d\ntls=%d\n", e->ws,
	    e->outside, e->egress_port, e->http_port, e->tls_port);
	jt_write(esc_path(e->home, "escape.conf"), text);
}

/* esc_serve - answer what came on the listeners. */
static void
esc_serve(struct esc *e)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
				 "Connection: close\r\n\r\nok";
	unsigned char first = 0;
	char req[4096];
	int fd;

	while ((fd = accept(e->egress, NULL, NULL)) >= 0) {
		e->egress_hits++;
		close(fd);
	}
	while ((fd = accept(e->http, NULL, NULL)) >= 0) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 5000) > 0 && read(fd, req, sizeof(req)) > 0) {
			e->http_hits++;
			(void)write(fd, ok, sizeof(ok) - 1);
		}
		close(fd);
	}
	while ((fd = accept(e->tls, NULL, NULL)) >= 0) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 5000) > 0 && read(fd, &first, 1) == 1 &&
		    first == 0x16)
			e->tls_hellos++;
		(void)write(fd, "not TLS at all\r\n", 16);
		close(fd);
	}
}

/* esc_run - start shirod with the payload and serve the listeners until
 * the payload says done (and, for the control, until shirod stopped);
 * returns shirod's log. */
static char *
esc_run(struct esc *e, int control)
{
	char done[64];
	char *log = NULL;
	uint64_t end;
	int st = -1;

	esc_config(e);
	e->shirod = tsd_start(e->shome, NULL, &st);
	CHECKF(e->shirod > 0, "shirod did not start (%d)", st);
	snprintf(done, sizeof(done), "escape: %s done", e->role);
	end = tsd_now_ms() + 60000;
	while (tsd_now_ms() < end) {
		esc_serve(e);
		free(log);
		log = esc_slurp_from(
		    esc_path(e->shome, "shirod.err"), e->log_start);
		if (strstr(log, done) != NULL && !control)
			break;
		if (control && waitpid(e->shirod, &st, WNOHANG) == e->shirod) {
			e->shirod = 0;
			break;
		}
		usleep(20000);
	}
	esc_serve(e);
	if (getenv("ESCAPE_DEBUG") != NULL)
		fputs(log, stderr);
	CHECKF(strstr(log, done) != NULL,
	    "the payload never finished; the log ends:\n%s",
	    strlen(log) > 1000 ? log + strlen(log) - 1000 : log);
	return log;
}

/* esc_line - whether the log has "escape: ROLE what". */
static int
esc_line(const struct esc *e, const char *log, const char *what)
{
	char want[256];

	snprintf(want, sizeof(want), "escape: %s %s\n", e->role, what);
	return strstr(log, want) != NULL;
}

/* esc_count - how many times needle is in hay. */
static int
esc_count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)) != NULL; hay += strlen(needle))
		n++;
	return n;
}

/* esc_chat_has - whether any file of the chat's log holds text. */
static int
esc_chat_has(const struct esc *e, const char *text)
{
	char cmd[PATH_MAX + 128];

	snprintf(cmd, sizeof(cmd), "grep -rqs -- '%s' '%s/chat/main'", text,
	    e->shome);
	return system(cmd) == 0;
}

/* esc_payload_pid - the payload's pid, from its report. */
static pid_t
esc_payload_pid(const struct esc *e, const char *log)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), "escape: %s pid ", e->role);
	p = strstr(log, want);
	CHECKF(p != NULL, "no pid in the report");
	return (pid_t)atoi(p + strlen(want));
}

/* esc_status_has - whether /proc/pid/status has line. */
static int
esc_status_has(pid_t pid, const char *line)
{
	char path[64], *s;
	int found;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = esc_slurp(path);
	found = strstr(s, line) != NULL;
	free(s);
	return found;
}

/* esc_judge - the host after a confined payload's attacks. */
static void
esc_judge(struct esc *e, const char *log, const char *unix_refusal)
{
	char want[128];
	struct stat st;
	pid_t pid = esc_payload_pid(e, log);
	void *sock;

	/* One payload, which neither died nor was restarted. */
	CHECKF(strstr(log, " died ") == NULL, "a worker died:\n%s", log);
	/* It ran locked down, or nothing below means anything. */
	CHECKF(esc_status_has(pid, "Seccomp:\t2\n"),
	    "the payload is not in seccomp filter mode");
	CHECK(esc_status_has(pid, "NoNewPrivs:\t1\n"));
	CHECK(esc_status_has(pid, "CapEff:\t0000000000000000\n") ||
	    (strcmp(e->role, "tool") == 0 && geteuid() == 0));
	CHECK(strstr(log, " locked 1\n") != NULL);
	CHECKF(
	    esc_line(e, log, "seccomp 2") || esc_line(e, log, "seccomp EPERM"),
	    "the payload's own seccomp mode");
	snprintf(want, sizeof(want), "probe unix %s", unix_refusal);
	CHECKF(esc_line(e, log, want), "the probe was not refused");
	CHECK(esc_line(e, log, "thread finished"));
	/* shirod is alive, serving, and was never a client's to stop. */
	CHECK(kill(e->shirod, 0) == 0);
	sock = tsd_connect(e->shome);
	CHECK(tsd_status_int(sock, "pid") == e->shirod);
	tsd_close(&sock);
	CHECK(esc_line(e, log, "main zmq shirod answers 0"));
	CHECK(esc_line(e, log, "main zmq shirod stop answers 0"));
	CHECK(!esc_chat_has(e, "escape-send-"));
	/* No forged READY reached it: two workers, each ready once. */
	CHECK(esc_line(e, log, "main zmq workers answers 0"));
	CHECKF(strstr(log, "READY from pid") == NULL, "%s", log);
	CHECK_EQ_INT(esc_count(log, ") is ready"), 2);
	/* Nothing read: no secret got out into its report. */
	CHECK(strstr(log, e->ssh_secret) == NULL);
	CHECK(strstr(log, e->chat_secret) == NULL);
	CHECK(strstr(log, e->env_secret) == NULL);
	CHECK(!esc_line(e, log, "main read chat ok") &&
	    !esc_line(e, log, "thread read chat ok"));
	/* Nothing written or changed outside the workspace. */
	CHECK(access(esc_path(e->outside, "pwned-model-main"), F_OK) != 0);
	snprintf(want, sizeof(want), "pwned-%s-main", e->role);
	CHECK(access(esc_path(e->outside, want), F_OK) != 0);
	CHECK(access(esc_path(e->shome, want), F_OK) != 0);
	snprintf(want, sizeof(want), "pwned-%s-thread", e->role);
	CHECK(access(esc_path(e->outside, want), F_OK) != 0);
	CHECK(access(esc_path(e->shome, want), F_OK) != 0);
	snprintf(want, sizeof(want), "exec-%s", e->role);
	CHECK(access(esc_path(e->outside, want), F_OK) != 0);
	CHECK(access(esc_path(e->outside, "victim-link"), F_OK) != 0);
	{
		char *rc = esc_slurp(esc_path(e->home, ".bashrc"));
		CHECK_EQ_STR(rc, "# the user's own\n");
		free(rc);
	}
	CHECK(stat(esc_path(e->outside, "victim"), &st) == 0);
	CHECK(st.st_mode == e->victim.st_mode &&
	    st.st_uid == e->victim.st_uid &&
	    st.st_mtim.tv_sec == e->victim.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == e->victim.st_mtim.tv_nsec);
	CHECK(getxattr(esc_path(e->outside, "victim"), "user.pwned", NULL, 0) <
	    0);
	/* No new namespace, no program. */
	CHECK(esc_line(e, log, "main clone_newuser EPERM"));
	CHECK(esc_line(e, log, "thread clone_newuser EPERM"));
	CHECK(esc_line(e, log, "main unshare EPERM"));
	CHECK(esc_line(e, log, "main ptrace EPERM"));
	if (strcmp(e->role, "tool") != 0)
		CHECK(esc_line(e, log, "main execve EPERM"));
	/* Signals: shirod is alive (above); where the kernel scopes them the
	 * tool role is refused too. */
	if (strcmp(e->role, "tool") != 0 || landlock_abi() >= 6)
		CHECK(esc_line(e, log, "main kill EPERM") &&
		    esc_line(e, log, "thread kill EPERM"));
}

/* esc_end - stop shirod, close the listeners. */
static void
esc_end(struct esc *e)
{
	if (e->shirod > 0)
		CHECK_EQ_INT(tsd_stop(e->shirod), 0);
	close(e->egress);
	close(e->http);
	close(e->tls);
}

/* The model role: nothing of the chat, the home or shirod, no Unix
 * socket; yet HTTP and HTTPS with libcurl work, names resolve. */
static void
escape_model(void)
{
	struct esc e;
	char *log;

	if (landlock_abi() == 0)
		harness_skip("no Landlock here: the model role's file rules "
			     "are not there to check");
	esc_setup(&e, "model");
	esc_chat(&e);
	log = esc_run(&e, 0);
	esc_judge(&e, log, "EPERM");
	CHECK(esc_line(&e, log, "main getaddrinfo 0"));
	CHECK(esc_line(&e, log, "main http 0 200"));
	CHECK(esc_line(&e, log, "main http-localhost 0 200"));
	CHECK_EQ_INT(e.http_hits, 2);
	/* The CA file loaded (77 otherwise) and a ClientHello went out; the
	 * garbage that came back failed the handshake (35). */
	CHECKF(esc_line(&e, log, "main https 35"), "%s", log);
	CHECK_EQ_INT(e.tls_hellos, 1);
	free(log);
	esc_end(&e);
}

/* The fs role: the same, and no TCP at all. */
static void
escape_fs(void)
{
	struct esc e;
	char *log;

	if (landlock_abi() == 0)
		harness_skip("no Landlock here: the fs role's file rules are "
			     "not there to check");
	esc_setup(&e, "fs");
	esc_chat(&e);
	log = esc_run(&e, 0);
	esc_judge(&e, log, "EPERM");
	CHECK(esc_line(&e, log, "main tcp socket EPERM"));
	CHECK(esc_line(&e, log, "thread tcp socket EPERM"));
	CHECK_EQ_INT(e.egress_hits, 0);
	free(log);
	esc_end(&e);
}

/* The tool role: the same, and no TCP without the network. */
static void
escape_tool(void)
{
	struct esc e;
	char *log;

	esc_setup(&e, "tool");
	esc_chat(&e);
	log = esc_run(&e, 0);
	esc_judge(&e, log, "EAFNOSUPPORT");
	CHECK(esc_line(&e, log, "main tcp socket EAFNOSUPPORT"));
	CHECK(esc_line(&e, log, "thread tcp socket EAFNOSUPPORT"));
	CHECK_EQ_INT(e.egress_hits, 0);
	free(log);
	esc_end(&e);
}

/* The control: the same payload without a sandbox succeeds at what the
 * others are refused by their lockdown, so every attempt above is a real
 * one; only what shirod itself refuses (a worker as a client, a READY
 * without a slot's key) stays refused. */
static void
escape_control(void)
{
	struct esc e;
	char *log;

	esc_setup(&e, "none");
	esc_chat(&e);
	log = esc_run(&e, 1);
	CHECK(esc_status_has(esc_payload_pid(&e, log), "Seccomp:\t0\n") ||
	    e.shirod == 0);
	CHECK(strstr(log, " locked 0\n") != NULL);
	CHECK(esc_line(&e, log, "seccomp 0"));
	CHECK(esc_line(&e, log, "probe unix ok"));
	CHECK(esc_line(&e, log, "main unix shirod connect ok"));
	/* Past the sandbox, shirod's own checks still hold: a worker's
	 * pid is no client (its SEND is not logged), and a READY on a new
	 * connection without a live slot's CURVE key never reaches it. */
	CHECK(!esc_chat_has(&e, "escape-send-none"));
	CHECK(strstr(log, "READY from pid") == NULL);
	CHECK(strstr(log, e.ssh_secret) != NULL);
	CHECK(strstr(log, e.chat_secret) != NULL);
	CHECK(strstr(log, e.env_secret) != NULL);
	CHECK(access(esc_path(e.outside, "pwned-none-main"), F_OK) == 0);
	CHECK(access(esc_path(e.outside, "exec-none"), F_OK) == 0);
	CHECK(esc_line(&e, log, "main kill ok"));
	CHECK(esc_line(&e, log, "main clone_newuser ok"));
	CHECK(e.egress_hits >= 1);
	/* And its STOP, on a client connection, did not stop shirod. */
	CHECKF(e.shirod != 0, "STOP from the control stopped shirod");
	free(log);
	esc_end(&e);
}

static const struct harness_test tests[] = {
    HT_SLOW(escape_model, 120),
    HT_SLOW(escape_fs, 120),
    HT_SLOW(escape_tool, 120),
    HT_SLOW(escape_control, 120),
};

HARNESS_MAIN(tests)
