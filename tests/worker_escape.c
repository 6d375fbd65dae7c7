/*
 * worker_escape - the payload of test_worker_escape: a worker program
 * that a real shirod starts (named as a worker program in the test's
 * config.json), that goes through the real start-up of its role
 * (worker_start: set-up, confinement, connection, lockdown, READY), and
 * then attacks from its main thread and from a thread it started before
 * the lockdown, as a compromised worker would.
 *
 * Its role is the end of its name: escape-model, escape-fs, escape-tool,
 * or escape-none (no sandbox: the control, whose attacks must succeed).
 * What it needs to know (the test's listeners, the workspace, the paths
 * it attacks) is in HOME/escape.conf, read before the confinement; HOME
 * is the directory holding $SHIRO_HOME, which its --endpoint names.
 *
 * It reports on stderr, which is shirod's log, one line per attempt:
 *
 *	escape: ROLE THREAD ATTEMPT RESULT [what it got]
 *
 * and prints what it managed to read, so that a secret it reached shows
 * in the log; "escape: ROLE done" ends the report.  The test judges by
 * the host's state, never by this report alone.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "proto/err.h"
#include "proto/msg.h"
#include "sandbox/sandbox.h"
#include "workers/tool/service.h"
#include "workers/worker.h"

/* What escape.conf says, and what the payload derived. */
struct esc {
	const char *role; /* "model", "fs", "tool", "none" */
	char home[PATH_MAX]; /* HOME */
	char shome[PATH_MAX]; /* $SHIRO_HOME */
	char ws[PATH_MAX]; /* the workspace */
	char outside[PATH_MAX]; /* a directory outside it */
	int egress; /* a TCP listener that must hear nothing (fs, tool) */
	int http; /* an HTTP server (model) */
	int tls; /* a listener that answers TLS with garbage (model) */
	pid_t shirod;
	struct worker *w;
	void *zctx; /* the payload's own ZeroMQ context */
	void *client, *forger; /* sockets made before the lockdown */
	int go[2]; /* the thread waits on it */
	pthread_t thread;
};

static struct esc E;

/* say - one report line. */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "escape: %s ", E.role);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	(void)write(2, line, (size_t)n);
}

/* res - "ok", or the name of errno as the call that returned rc left
 * it (read here, after the call: never pass errno alongside a call in
 * one argument list, whose order C leaves open). */
static const char *
res(long rc)
{
	static __thread char buf[32];
	int e = errno;

	if (rc >= 0)
		return "ok";
	switch (e) {
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case EROFS:
		return "EROFS";
	case ENOENT:
		return "ENOENT";
	case EAFNOSUPPORT:
		return "EAFNOSUPPORT";
	case ENOSYS:
		return "ENOSYS";
	case ECONNREFUSED:
		return "ECONNREFUSED";
	case ESRCH:
		return "ESRCH";
	}
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

/* keep_alive - heartbeat the broker while an attempt waits (main thread
 * only: the worker is not thread-safe). */
static void
keep_alive(long ms)
{
	struct timespec t = {0, 20 * 1000 * 1000};
	long k;

	for (k = 0; k < ms / 20; k++) {
		(void)worker_poll(E.w);
		nanosleep(&t, NULL);
	}
}

/* conf_read - HOME/escape.conf into E; before the confinement. */
static int
conf_read(const char *endpoint)
{
	const char *p = strncmp(endpoint, "ipc://", 6) == 0 ? endpoint + 6 : "";
	const char *run = strstr(p, "/run/");
	char path[PATH_MAX + 16], line[PATH_MAX + 32], *v;
	FILE *f;

	if (run == NULL || (size_t)(run - p) >= sizeof(E.shome))
		return -1;
	memcpy(E.shome, p, (size_t)(run - p));
	E.shome[run - p] = '\0';
	snprintf(E.home, sizeof(E.home), "%s", E.shome);
	if ((v = strrchr(E.home, '/')) == NULL)
		return -1;
	*v = '\0';
	snprintf(path, sizeof(path), "%s/escape.conf", E.home);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((v = strchr(line, '=')) == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(line, "workspace") == 0)
			snprintf(E.ws, sizeof(E.ws), "%s", v);
		else if (strcmp(line, "outside") == 0)
			snprintf(E.outside, sizeof(E.outside), "%s", v);
		else if (strcmp(line, "egress") == 0)
			E.egress = atoi(v);
		else if (strcmp(line, "http") == 0)
			E.http = atoi(v);
		else if (strcmp(line, "tls") == 0)
			E.tls = atoi(v);
	}
	fclose(f);
	return 0;
}

/* show - print what was read from path (n bytes of buf), where a
 * secret would show. */
static void
show(const char *who, const char *what, const char *buf, ssize_t n)
{
	char clean[160];
	ssize_t i, k = 0;

	for (i = 0; i < n && k < (ssize_t)sizeof(clean) - 1; i++)
		clean[k++] = buf[i] >= 0x20 && buf[i] < 0x7f ? buf[i] : '.';
	clean[k] = '\0';
	say("%s read %s ok %s", who, what, clean);
}

/* try_read - read path; a success prints what came (around "secret" if
 * it is there). */
static void
try_read(const char *who, const char *what, const char *path)
{
	static __thread char buf[1 << 16];
	char *hit;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		say("%s read %s %s", who, what, res(-1));
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		say("%s read %s %s", who, what, res(-1));
		return;
	}
	buf[n] = '\0';
	hit = memmem(buf, (size_t)n, "secret-", 7);
	if (hit != NULL && hit - buf > 16)
		hit -= 16;
	show(who, what, hit ? hit : buf, hit ? n - (hit - buf) : n);
}

/* try_read_dir - read every file of dir (the chat's log). */
static void
try_read_dir(const char *who, const char *what, const char *dir)
{
	char path[PATH_MAX * 2];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL) {
		say("%s read %s %s", who, what, res(-1));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    strlen(dir) + strlen(de->d_name) + 2 > sizeof(path))
			continue;
		memcpy(path, dir, strlen(dir));
		path[strlen(dir)] = '/';
		memcpy(
		    path + strlen(dir) + 1, de->d_name, strlen(de->d_name) + 1);
		try_read(who, what, path);
	}
	closedir(d);
}

/* try_write - create path (with text in it). */
static void
try_write(const char *who, const char *what, const char *path, int flags)
{
	int fd = open(path, flags | O_WRONLY | O_CLOEXEC, 0644);

	if (fd >= 0) {
		(void)write(fd, "pwned\n", 6);
		close(fd);
	}
	say("%s write %s %s", who, what, res(fd));
}

/* unix_to - socket(AF_UNIX) and connect it to path. */
static void
unix_to(const char *who, const char *what, const char *path)
{
	struct sockaddr_un a;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc, e;

	if (fd < 0) {
		say("%s unix %s socket %s", who, what, res(-1));
		return;
	}
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
	e = errno;
	close(fd);
	errno = e;
	say("%s unix %s connect %s", who, what, res(rc));
}

/* tcp_to - connect to 127.0.0.1:port. */
static void
tcp_to(const char *who, int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc, e;

	if (fd < 0) {
		say("%s tcp socket %s", who, res(-1));
		return;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((unsigned short)port);
	rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
	e = errno;
	close(fd);
	errno = e;
	say("%s tcp connect %s", who, res(rc));
}

/* attack_files - the chat, the tree, ~/.ssh, shirod's environment and
 * memory; writes outside the workspace; metadata of a file outside. */
static void
attack_files(const char *who)
{
	char p[PATH_MAX * 2], victim[PATH_MAX + 16];
	struct iovec l, r;
	char buf[64];
	long rc;

	snprintf(p, sizeof(p), "%s/chat/main", E.shome);
	try_read_dir(who, "chat", p);
	snprintf(p, sizeof(p), "%s/chat/tree.lmdb/data.mdb", E.shome);
	try_read(who, "tree", p);
	snprintf(p, sizeof(p), "%s/chat/tree.lmdb", E.shome);
	try_read(who, "tree", p);
	snprintf(p, sizeof(p), "%s/.ssh/id_rsa", E.home);
	try_read(who, "ssh", p);
	snprintf(p, sizeof(p), "/proc/%d/environ", (int)E.shirod);
	try_read(who, "environ", p);
	snprintf(p, sizeof(p), "/proc/%d/mem", (int)E.shirod);
	try_read(who, "mem", p);
	l.iov_base = buf;
	l.iov_len = sizeof(buf);
	r.iov_base = (void *)0x10000;
	r.iov_len = sizeof(buf);
	rc = process_vm_readv(E.shirod, &l, 1, &r, 1, 0);
	say("%s process_vm_readv %s", who, res(rc));
	snprintf(p, sizeof(p), "%s/pwned-%s-%s", E.outside, E.role, who);
	try_write(who, "outside", p, O_CREAT);
	snprintf(p, sizeof(p), "%s/pwned-%s-%s", E.shome, E.role, who);
	try_write(who, "shiro_home", p, O_CREAT);
	snprintf(p, sizeof(p), "%s/.bashrc", E.home);
	try_write(who, "bashrc", p, O_APPEND);
	snprintf(victim, sizeof(victim), "%s/victim", E.outside);
	say("%s chmod %s", who, res(chmod(victim, 0777)));
	say("%s chown %s", who, res(chown(victim, 65534, 65534)));
	say("%s utimensat %s", who, res(utimensat(AT_FDCWD, victim, NULL, 0)));
	say("%s setxattr %s", who,
	    res(setxattr(victim, "user.pwned", "1", 1, 0)));
	snprintf(p, sizeof(p), "%s/victim-link", E.outside);
	say("%s symlink %s", who, res(symlink(victim, p)));
}

/* attack_processes - signals and tracing of shirod, new namespaces. */
static void
attack_processes(const char *who, int control)
{
	int sig = control ? 0 : SIGTERM;
	long rc, pidfd;
	siginfo_t si;
	int st;

	say("%s kill %s", who, res(kill(E.shirod, sig)));
	say("%s tgkill %s", who,
	    res(syscall(SYS_tgkill, E.shirod, E.shirod, sig)));
	say("%s tkill %s", who, res(syscall(SYS_tkill, E.shirod, sig)));
	memset(&si, 0, sizeof(si));
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	say("%s rt_sigqueueinfo %s", who,
	    res(syscall(SYS_rt_sigqueueinfo, E.shirod, sig, &si)));
	pidfd = syscall(SYS_pidfd_open, E.shirod, 0);
	say("%s pidfd_open %s", who, res(pidfd));
	if (pidfd >= 0) {
		say("%s pidfd_send_signal %s", who,
		    res(syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0)));
		close((int)pidfd);
	}
	if (!control) {
		rc = ptrace(PTRACE_ATTACH, E.shirod, NULL, NULL);
		say("%s ptrace %s", who, res(rc));
		if (rc == 0)
			ptrace(PTRACE_DETACH, E.shirod, NULL, NULL);
	}
	/* A new user namespace, which would give every capability back. */
	rc = syscall(
	    SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
	if (rc == 0)
		_exit(0);
	if (rc > 0)
		waitpid((pid_t)rc, &st, 0);
	say("%s clone_newuser %s", who, res(rc));
	say("%s unshare %s", who, res(unshare(CLONE_NEWUSER)));
}

/* escape_thread - the thread started before the lockdown: waits for the
 * go, then attacks with plain system calls. */
static void *
escape_thread(void *arg)
{
	char p[PATH_MAX + 32];
	char c;

	(void)arg;
	if (read(E.go[0], &c, 1) != 1)
		return NULL;
	snprintf(p, sizeof(p), "%s/run/shirod.sock", E.shome);
	unix_to("thread", "shirod", p);
	snprintf(p, sizeof(p), "%s/run/workers.sock", E.shome);
	unix_to("thread", "workers", p);
	attack_files("thread");
	attack_processes("thread", c == 'c');
	if (strcmp(E.role, "model") != 0)
		tcp_to("thread", E.egress);
	say("thread finished");
	return NULL;
}

/* confined - the role's hook after the confinement, before the
 * connection: the thread and the ZeroMQ sockets of the attacks. */
static int
confined(struct worker *w)
{
	(void)w;
	if (pipe(E.go) != 0)
		return -SHIRO_ERR_IO;
	if (pthread_create(&E.thread, NULL, escape_thread, NULL) != 0)
		return -SHIRO_ERR_FAILED;
	E.zctx = zmq_ctx_new();
	if (E.zctx == NULL)
		return -SHIRO_ERR_FAILED;
	E.client = zmq_socket(E.zctx, ZMQ_DEALER);
	E.forger = zmq_socket(E.zctx, ZMQ_DEALER);
	return E.client && E.forger ? 0 : -SHIRO_ERR_FAILED;
}

/* zwait - heartbeating, wait up to ms for a message on sock; how many
 * came. */
static int
zwait(void *sock, long ms)
{
	struct msg *m;
	int got = 0;
	long k;

	for (k = 0; k < ms / 50; k++) {
		while (msg_recv(sock, &m, NULL) == 0) {
			got++;
			msg_destroy(&m);
		}
		keep_alive(50);
	}
	return got;
}

/* zsend - send m on sock and destroy it. */
static void
zsend(void *sock, struct msg *m)
{
	(void)msg_send(sock, m, NULL);
	msg_destroy(&m);
}

/* attack_client - be shirod's client over a new connection: SEND a
 * marker, LOG, and (stop) STOP. */
static void
attack_client(int stop)
{
	char ep[PATH_MAX + 32], text[128];
	struct msg *m;
	int got;

	snprintf(ep, sizeof(ep), "ipc://%s/run/shirod.sock", E.shome);
	say("main zmq shirod connect %s", res(zmq_connect(E.client, ep)));
	m = msg_new(MSG_HELLO);
	msg_set_int(m, "rid", 1);
	msg_set_str(m, "client", "escape");
	msg_set_int(m, "version", MSG_VERSION);
	zsend(E.client, m);
	m = msg_new(MSG_SEND);
	msg_set_int(m, "rid", 2);
	snprintf(text, sizeof(text), "escape-send-%s", E.role);
	msg_set_str(m, "text", text);
	msg_set_str(m, "kind", "user");
	zsend(E.client, m);
	m = msg_new(MSG_LOG);
	msg_set_int(m, "rid", 3);
	zsend(E.client, m);
	got = zwait(E.client, 1500);
	say("main zmq shirod answers %d", got);
	if (stop) {
		m = msg_new(MSG_STOP);
		msg_set_int(m, "rid", 4);
		zsend(E.client, m);
		say("main zmq shirod stop answers %d", zwait(E.client, 1000));
	}
}

/* attack_ready - READY over a new connection, for the pids near ours
 * (another slot's worker is among them). */
static void
attack_ready(void)
{
	char ep[PATH_MAX + 32];
	struct msg *m;
	int d;

	snprintf(ep, sizeof(ep), "ipc://%s/run/workers.sock", E.shome);
	say("main zmq workers connect %s", res(zmq_connect(E.forger, ep)));
	for (d = -12; d <= 12; d++) {
		if (d == 0)
			continue;
		m = msg_new(MSG_READY);
		msg_set_str(m, "role", "model");
		msg_set_str(m, "provider", "offline");
		msg_set_int(m, "pid", getpid() + d);
		msg_set_int(m, "jobs", 1);
		msg_set_int(m, "version", MSG_VERSION);
		zsend(E.forger, m);
	}
	say("main zmq workers answers %d", zwait(E.forger, 1500));
}

/* attack_exec - run a program that would leave a file outside. */
static void
attack_exec(void)
{
	char cmd[PATH_MAX + 64];
	char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	int st;
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "touch %s/exec-%s", E.outside, E.role);
	pid = fork();
	if (pid < 0) {
		/* No process: try in place (it never returns if it works). */
		say("main fork %s", res(-1));
		say("main execve %s", res(execve(argv[0], argv, NULL)));
		return;
	}
	if (pid == 0) {
		execve(argv[0], argv, NULL);
		_exit(126);
	}
	waitpid(pid, &st, 0);
	say("main execve %s",
	    WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "refused");
}

/* discard - libcurl's body callback. */
static size_t
discard(void *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* fetch - one URL with libcurl (the default CA file): its CURLcode. */
static int
fetch(const char *url, long *codep)
{
	CURL *c = curl_easy_init();
	int rc;

	if (c == NULL)
		return -1;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	rc = (int)curl_easy_perform(c);
	*codep = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, codep);
	curl_easy_cleanup(c);
	return rc;
}

/* resolve_thread - a name looked up in a thread made after the
 * lockdown, as libcurl's resolver does. */
static void *
resolve_thread(void *arg)
{
	struct addrinfo hints, *ai = NULL;
	int *rc = arg;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	*rc = getaddrinfo("localhost", "80", &hints, &ai);
	if (ai != NULL)
		freeaddrinfo(ai);
	return NULL;
}

/* model_work - what the model role must still do: HTTP and HTTPS with
 * libcurl, names through the resolver's files. */
static void
model_work(void)
{
	char url[128];
	pthread_t t;
	long code;
	int rc = -1;

	say("main curl_init %d", (int)curl_global_init(CURL_GLOBAL_ALL));
	if (pthread_create(&t, NULL, resolve_thread, &rc) == 0)
		pthread_join(t, NULL);
	say("main getaddrinfo %d", rc);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/escape-model", E.http);
	rc = fetch(url, &code);
	say("main http %d %ld", rc, code);
	snprintf(url, sizeof(url), "http://localhost:%d/escape-model", E.http);
	rc = fetch(url, &code);
	say("main http-localhost %d %ld", rc, code);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/", E.tls);
	rc = fetch(url, &code);
	say("main https %d", rc);
}

/* escape_service - any JOB fails for another worker to do. */
static int
escape_service(struct worker *w, const struct msg *job, struct msg *result)
{
	(void)job;
	(void)result;
	worker_failure(w, "provider", true, "the escape payload does no job");
	return -SHIRO_ERR_FAILED;
}

int
main(int argc, char **argv)
{
	static struct worker_role role;
	const char *base = strrchr(argv[0], '/'), *ep = NULL;
	char *args[32], wsopt[] = "--workspace";
	int i, n = 0, control, has_ws = 0;
	char c;

	base = base ? base + 1 : argv[0];
	if (strncmp(base, "escape-", 7) != 0)
		return 64;
	E.role = base + 7;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			ep = argv[i + 1];
		if (strcmp(argv[i], "--workspace") == 0)
			has_ws = 1;
	}
	if (ep == NULL || conf_read(ep) != 0 || argc > 28)
		return 64;
	E.shirod = getppid();
	control = strcmp(E.role, "none") == 0;
	if (strcmp(E.role, "fs") == 0)
		role = service_fs_role;
	else if (strcmp(E.role, "tool") == 0)
		role = service_tool_role;
	else {
		role.role = "model";
		role.provider = "offline";
		role.jobs = 1;
		role.sandbox = control ? WORKER_NO_SANDBOX : SANDBOX_ROLE_MODEL;
	}
	role.confined = confined;
	role.service = escape_service;
	/* shirod gives a worker its workspace on the command line once its
	 * settings have one; until then the payload adds the test's. */
	for (i = 0; i < argc; i++) {
		/* The model worker's own options (its wire, base URL and
		 * calls in flight) are not the skeleton's: skip them. */
		if (i + 1 < argc &&
		    (strcmp(argv[i], "--wire") == 0 ||
			strcmp(argv[i], "--base-url") == 0 ||
			strcmp(argv[i], "--jobs") == 0)) {
			i++;
			continue;
		}
		args[n++] = argv[i];
	}
	if (!has_ws && E.ws[0] != '\0' && role.sandbox != SANDBOX_ROLE_MODEL &&
	    !control) {
		args[n++] = wsopt;
		args[n++] = E.ws;
	}
	args[n] = NULL;
	E.w = worker_start(n, args, &role);
	say("pid %d locked %d", (int)getpid(), worker_locked(E.w) ? 1 : 0);
	/* Its seccomp mode as prctl says it: 2, or a refusal of prctl
	 * itself (model, fs), which also only a filter gives. */
	{
		long mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
		if (mode >= 0)
			say("seccomp %ld", mode);
		else
			say("seccomp %s", res(mode));
	}
	/* A probe only a confined process fails. */
	{
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		say("probe unix %s", res(fd));
		if (fd >= 0)
			close(fd);
	}
	c = control ? 'c' : 'g';
	if (write(E.go[1], &c, 1) != 1)
		return 1;
	{
		char p[PATH_MAX + 32];
		snprintf(p, sizeof(p), "%s/run/shirod.sock", E.shome);
		unix_to("main", "shirod", p);
		snprintf(p, sizeof(p), "%s/run/workers.sock", E.shome);
		unix_to("main", "workers", p);
	}
	attack_ready();
	attack_files("main");
	attack_processes("main", control);
	if (strcmp(E.role, "tool") != 0)
		attack_exec();
	if (strcmp(E.role, "model") == 0 || control)
		model_work();
	if (strcmp(E.role, "model") != 0)
		tcp_to("main", E.egress);
	/* STOP too: it stops shirod if it is served, which the control
	 * shows, so the control asks only after its report is complete. */
	attack_client(!control);
	pthread_join(E.thread, NULL);
	say("done");
	if (control)
		attack_client(1);
	worker_serve(E.w);
}
