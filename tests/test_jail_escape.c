/*
 * test_jail_escape - the escape suite: what a hostile command tries
 * when it runs the way the tool worker runs it (jail_run() with the
 * workspace), and proof on the host side that nothing got out.
 *
 * Each test makes a fake home with secrets and a chat, a workspace, a
 * directory outside it, and host-side listeners or processes as
 * needed; runs the attack inside the jail; then checks the host.
 */
#include <errno.h>
#include <termios.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "proto/buf.h"
#include "proto/xmalloc.h"
#include "sandbox/jail.h"
#include "tests/harness.h"
#include "tests/test_jail_lib.h"

extern char **environ;

/* The layout every test starts from. */
struct world {
	char ws[512], out[512], home[512], shiro[512];
};

/* world_make - workspace, outside dir, fake home with secrets. */
static void
world_make(struct world *w)
{
	const char *t = harness_tmpdir();

	memset(w, 0, sizeof(*w));
	snprintf(w->ws, sizeof(w->ws), "%s/ws", t);
	snprintf(w->out, sizeof(w->out), "%s/outside", t);
	snprintf(w->home, sizeof(w->home), "%s/home", t);
	snprintf(w->shiro, sizeof(w->shiro), "%s/home/.shiro", t);
	CHECK(mkdir(w->ws, 0755) == 0);
	CHECK(mkdir(w->out, 0755) == 0);
	CHECK(mkdir(w->home, 0755) == 0);
	CHECK(mkdir(jt_path(w->home, ".ssh"), 0700) == 0);
	jt_write(jt_path(w->home, ".ssh/id_rsa"), "SECRET-SSH-KEY\n");
	CHECK(mkdir(jt_path(w->home, ".aws"), 0700) == 0);
	jt_write(jt_path(w->home, ".aws/credentials"), "SECRET-AWS\n");
	CHECK(mkdir(w->shiro, 0700) == 0);
	CHECK(mkdir(jt_path(w->shiro, "chat"), 0700) == 0);
	CHECK(mkdir(jt_path(w->shiro, "chat/main"), 0700) == 0);
	jt_write(jt_path(w->shiro, "chat/main/2026-11-30.jsonl"),
	    "{\"text\":\"SECRET-CHAT\"}\n");
	CHECK(mkdir(jt_path(w->shiro, "run"), 0700) == 0);
	CHECK(mkdir(jt_path(w->ws, ".git"), 0755) == 0);
	jt_write(jt_path(w->ws, ".git/config"), "ORIGINAL\n");
	jt_write(jt_path(w->out, "data"), "OUTSIDE-DATA\n");
	setenv("HOME", w->home, 1);
	setenv("SHIRO_HOME", w->shiro, 1);
}

/* world_sh - run script (printf-formatted) in the world's workspace. */
static void __attribute__((format(printf, 3, 4)))
world_sh(const struct world *w, struct jt_run *r, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	jt_sh(w->ws, b.data, r);
	CHECKF(r->rc == 0, "jail_run: %s", r->res.error);
	buf_free(&b);
}

/* file_is - whether path holds exactly text. */
static int
file_is(const char *path, const char *text)
{
	char buf[256];
	size_t n;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strcmp(buf, text) == 0;
}

/* exists - whether path exists on the host (without following links). */
static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* No write lands outside the workspace; inside it writes work. */
static void
escape_write_outside(void)
{
	struct world w;
	struct jt_run r;
	struct stat before, after;

	world_make(&w);
	CHECK(stat("/etc/passwd", &before) == 0);
	world_sh(&w, &r,
	    "for p in /etc/shiro-x /usr/shiro-x /shiro-x /opt/shiro-x "
	    "/bin/shiro-x %s/x %s/data /proc/shiro-x /dev/shiro-x; do "
	    "  (echo pwned > $p) 2>/dev/null && echo WROTE $p; done; "
	    "(echo pwned >> /etc/passwd) 2>/dev/null && echo WROTE passwd; "
	    "mkdir -p %s 2>/dev/null; (echo pwned > %s/x) 2>/dev/null "
	    "&& echo PRIVATE-TMP; "
	    "ln -s /etc/passwd link && (echo pwned >> link) 2>/dev/null "
	    "&& echo WROTE via-link; echo inside > inside",
	    w.out, w.out, w.out, w.out);
	CHECKF(strstr(r.out.data, "WROTE") == NULL, "%s", r.out.data);
	CHECK(!exists("/etc/shiro-x") && !exists("/usr/shiro-x") &&
	    !exists("/shiro-x") && !exists("/opt/shiro-x"));
	CHECK(!exists(jt_path(w.out, "x")));
	CHECK(file_is(jt_path(w.out, "data"), "OUTSIDE-DATA\n"));
	CHECK(stat("/etc/passwd", &after) == 0);
	CHECK(before.st_size == after.st_size &&
	    before.st_mtime == after.st_mtime);
	/* The control: the workspace itself is writable. */
	CHECK(file_is(jt_path(w.ws, "inside"), "inside\n"));
	jt_free(&r);
}

/* ~/.ssh, ~/.aws, $SHIRO_HOME and the chat are not there. */
static void
escape_read_secrets(void)
{
	struct world w;
	struct jt_run r;

	world_make(&w);
	world_sh(&w, &r,
	    "cat %s/.ssh/id_rsa %s/.aws/credentials; "
	    "cat %s/chat/main/*.jsonl; ls -la %s %s; "
	    "cat /proc/self/root%s/.ssh/id_rsa; cat "
	    "/proc/1/root%s/.ssh/id_rsa; "
	    "grep -rsl SECRET /tmp /etc /dev /opt 2>/dev/null | head; "
	    "echo done",
	    w.home, w.home, w.shiro, w.home, w.shiro, w.home, w.home);
	CHECK(strstr(r.out.data, "done") != NULL);
	CHECKF(strstr(r.out.data, "SECRET") == NULL, "%s", r.out.data);
	CHECK(strstr(r.err.data, "SECRET") == NULL);
	jt_free(&r);
}

/* Even when the workspace is the home directory itself, the secrets
 * and the chat are covered, and cannot be replaced. */
static void
escape_secrets_in_workspace(void)
{
	struct world w;
	struct jail_spec spec;
	struct jt_run r;
	const char *argv[] = {"sh", "-c",
	    "cat .ssh/id_rsa .aws/credentials .shiro/chat/main/*.jsonl; "
	    "ls -A .ssh .aws .shiro; (echo evil > .ssh/authorized_keys) "
	    "2>/dev/null && echo WROTE; rm -rf .ssh 2>/dev/null; "
	    "echo ok > note; echo done",
	    NULL};

	world_make(&w);
	jt_spec(&spec, w.home, argv);
	jt_exec(&spec, &r);
	CHECKF(r.rc == 0, "%s", r.res.error);
	CHECK(strstr(r.out.data, "done") != NULL);
	CHECKF(strstr(r.out.data, "SECRET") == NULL, "%s", r.out.data);
	CHECK(strstr(r.out.data, "WROTE") == NULL);
	CHECK(!exists(jt_path(w.home, ".ssh/authorized_keys")));
	CHECK(file_is(jt_path(w.home, ".ssh/id_rsa"), "SECRET-SSH-KEY\n"));
	CHECK(file_is(jt_path(w.home, "note"), "ok\n"));
	jt_free(&r);
}

/* .git is read-only inside: no edit, no hook, no removal. */
static void
escape_git_readonly(void)
{
	struct world w;
	struct jt_run r;

	world_make(&w);
	world_sh(&w, &r,
	    "(echo pwned > .git/config) 2>/dev/null && echo WROTE config; "
	    "mkdir -p .git/hooks 2>/dev/null && echo WROTE hooks; "
	    "rm -rf .git 2>/dev/null; mv .git g2 2>/dev/null && echo MOVED; "
	    "echo done");
	CHECK(strstr(r.out.data, "done") != NULL);
	CHECKF(strstr(r.out.data, "WROTE") == NULL &&
		strstr(r.out.data, "MOVED") == NULL,
	    "%s", r.out.data);
	CHECK(file_is(jt_path(w.ws, ".git/config"), "ORIGINAL\n"));
	CHECK(!exists(jt_path(w.ws, ".git/hooks")));
	jt_free(&r);
}

/* A .git that is a symlink to a directory outside is not followed by
 * any mount: its target stays out of sight. */
static void
escape_symlink_git(void)
{
	struct world w;
	struct jt_run r;

	world_make(&w);
	CHECK(rename(jt_path(w.ws, ".git"), jt_path(w.ws, "oldgit")) == 0);
	CHECK(symlink(w.out, jt_path(w.ws, ".git")) == 0);
	world_sh(&w, &r,
	    "cat .git/data; ls .git/; (echo pwned > .git/data) 2>/dev/null "
	    "&& echo WROTE; echo done");
	CHECK(strstr(r.out.data, "done") != NULL);
	CHECKF(strstr(r.out.data, "OUTSIDE-DATA") == NULL, "%s", r.out.data);
	CHECK(strstr(r.out.data, "WROTE") == NULL);
	CHECK(file_is(jt_path(w.out, "data"), "OUTSIDE-DATA\n"));
	jt_free(&r);
}

/* Secrets and .git reached through symlinks inside the workspace are
 * protected where they really are. */
static void
escape_symlinked_secrets(void)
{
	struct world w;
	struct jail_spec spec;
	struct jt_run r;
	const char *argv[] = {"sh", "-c",
	    "cat .ssh/id_rsa dotfiles/ssh/id_rsa; ls -A dotfiles/ssh; "
	    "(echo pwned > .git/config) 2>/dev/null && echo WROTE; "
	    "(echo pwned > repo.git/config) 2>/dev/null && echo WROTE; "
	    "echo done",
	    NULL};

	world_make(&w);
	/* ~/.ssh -> dotfiles/ssh, inside the home that is the workspace. */
	CHECK(mkdir(jt_path(w.home, "dotfiles"), 0755) == 0);
	CHECK(rename(jt_path(w.home, ".ssh"),
		  jt_path(w.home, "dotfiles/ssh")) == 0);
	CHECK(symlink("dotfiles/ssh", jt_path(w.home, ".ssh")) == 0);
	/* .git -> repo.git, also inside. */
	CHECK(mkdir(jt_path(w.home, "repo.git"), 0755) == 0);
	jt_write(jt_path(w.home, "repo.git/config"), "ORIGINAL\n");
	CHECK(symlink("repo.git", jt_path(w.home, ".git")) == 0);
	jt_spec(&spec, w.home, argv);
	jt_exec(&spec, &r);
	CHECKF(r.rc == 0, "%s", r.res.error);
	CHECK(strstr(r.out.data, "done") != NULL);
	CHECKF(strstr(r.out.data, "SECRET") == NULL, "%s", r.out.data);
	CHECK(strstr(r.out.data, "WROTE") == NULL);
	CHECK(file_is(jt_path(w.home, "repo.git/config"), "ORIGINAL\n"));
	jt_free(&r);
}

/* Hard links to files outside cannot be made; /proc/self/root and
 * /proc/1 lead nowhere new. */
static void
escape_links_and_proc(void)
{
	struct world w;
	struct jt_run r;

	world_make(&w);
	setenv("SHIRO_ESCAPE_MARK", "SECRET-ENV", 1);
	world_sh(&w, &r,
	    "ln /etc/passwd pw 2>/dev/null && echo LINKED; "
	    "ln /usr/bin/true t 2>/dev/null && echo LINKED; "
	    "cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'; "
	    "readlink /proc/1/root 2>/dev/null && echo ROOTLINK; "
	    "ls /proc/self/root/ | tr '\\n' ' '; echo; "
	    "ls /proc | grep -c '^[0-9]'; echo done");
	CHECK(strstr(r.out.data, "done") != NULL);
	CHECKF(strstr(r.out.data, "LINKED") == NULL, "%s", r.out.data);
	CHECK(strstr(r.out.data, "SECRET-ENV") == NULL);
	CHECK(strstr(r.out.data, "ROOTLINK") == NULL);
	CHECK(!exists(jt_path(w.ws, "pw")) && !exists(jt_path(w.ws, "t")));
	/* The root holds only the jail's own directories. */
	CHECK(strstr(r.out.data, "home") == NULL);
	CHECK(strstr(r.out.data, "root ") == NULL);
	CHECK(strstr(r.out.data, "run ") == NULL);
	jt_free(&r);
}

/* No TCP, UDP or DNS gets out; with --net (a person's setting) the same
 * TCP connect reaches the host, so the check can see a leak. */
static void
escape_network(void)
{
	struct world w;
	struct jt_run r;
	struct jail_spec spec;
	int tcp, udp, tport, uport, c;
	char buf[16], script[1024];
	const char *argv[] = {"python3", "-c", script, NULL, NULL};

	world_make(&w);
	tcp = jt_listen_tcp(SOCK_STREAM, &tport);
	udp = jt_listen_tcp(SOCK_DGRAM, &uport);
	snprintf(script, sizeof(script),
	    "import socket\n"
	    "def t(name, f):\n"
	    "  try:\n"
	    "    f(); print('REACHED', name)\n"
	    "  except Exception as e: print('blocked', name, "
	    "type(e).__name__)\n"
	    "t('tcp', lambda: socket.create_connection(('127.0.0.1', %d), 2))\n"
	    "t('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
	    ".sendto(b'x', ('127.0.0.1', %d)))\n"
	    "import sys\n"
	    "if len(sys.argv) < 2:\n"
	    "  t('dns', lambda: socket.getaddrinfo('example.com', 80))\n"
	    "t('tcp6', lambda: socket.create_connection(('::1', %d), 2))\n",
	    tport, uport, tport);
	jt_spec(&spec, w.ws, argv);
	jt_exec(&spec, &r);
	CHECKF(r.res.exited && r.res.exit_code == 0, "python: %s", r.err.data);
	CHECKF(strstr(r.out.data, "REACHED") == NULL, "%s", r.out.data);
	CHECK(strstr(r.out.data, "blocked dns") != NULL);
	c = accept(tcp, NULL, NULL);
	CHECK(c < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
	CHECK(recv(udp, buf, sizeof(buf), 0) < 0 && errno == EAGAIN);
	jt_free(&r);

	/* Underneath seccomp, the network namespace: only loopback, and
	 * no sight of the host's listeners. */
	{
		char hexport[16];
		const char *nargv[] = {"sh", "-c",
		    "grep -c : /proc/net/dev; grep -o ' lo:' /proc/net/dev; "
		    "cat /proc/net/tcp /proc/net/udp",
		    NULL};
		struct jail_spec nspec;
		jt_spec(&nspec, w.ws, nargv);
		jt_exec(&nspec, &r);
		CHECKF(
		    strncmp(r.out.data, "1\n lo:\n", 7) == 0, "%s", r.out.data);
		snprintf(hexport, sizeof(hexport), ":%04X ", tport);
		CHECK(strstr(r.out.data, hexport) == NULL);
		snprintf(hexport, sizeof(hexport), ":%04X ", uport);
		CHECK(strstr(r.out.data, hexport) == NULL);
		jt_free(&r);
	}

	/* The control, with the network on (and no DNS: this machine may
	 * have no resolver to answer). */
	argv[3] = "net";
	spec.net = 1;
	jt_exec(&spec, &r);
	CHECKF(strstr(r.out.data, "REACHED tcp") != NULL, "%s", r.out.data);
	c = accept(tcp, NULL, NULL);
	CHECK(c >= 0);
	close(c);
	jt_free(&r);
	close(tcp);
	close(udp);
}

/* listen_unix - a Unix listener at path (abstract when path[0] is '@'). */
static int
listen_unix(const char *path)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	CHECK(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	CHECK(strlen(path) < sizeof(a.sun_path));
	memcpy(a.sun_path, path, strlen(path));
	len =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	if (path[0] == '@')
		a.sun_path[0] = '\0';
	CHECK(bind(fd, (struct sockaddr *)&a, len) == 0);
	CHECK(listen(fd, 8) == 0);
	return fd;
}

/* Neither shirod's ipc socket nor an abstract socket outside can be
 * reached: the path is not in the jail, abstract names are per network
 * namespace, and with the network on Landlock scopes them. */
static void
escape_unix_sockets(void)
{
	struct world w;
	struct jt_run r;
	struct jail_spec spec;
	struct jail_features f;
	char ipc[600], abs[64], script[1500];
	const char *argv[] = {"python3", "-c", script, NULL};
	int pfd, afd, c;

	world_make(&w);
	snprintf(ipc, sizeof(ipc), "%s/run/shirod.sock", w.shiro);
	snprintf(abs, sizeof(abs), "@shiro-escape-%ld", (long)getpid());
	pfd = listen_unix(ipc);
	afd = listen_unix(abs);
	snprintf(script, sizeof(script),
	    "import socket\n"
	    "def t(name, addr):\n"
	    "  s = socket.socket(socket.AF_UNIX)\n"
	    "  try:\n"
	    "    s.connect(addr); print('REACHED', name)\n"
	    "  except Exception as e: print('blocked', name, "
	    "type(e).__name__)\n"
	    "t('ipc', '%s')\n"
	    "t('abstract', '\\0%s')\n",
	    ipc, abs + 1);
	jt_spec(&spec, w.ws, argv);
	jt_exec(&spec, &r);
	CHECKF(r.res.exited && r.res.exit_code == 0, "python: %s", r.err.data);
	CHECKF(strstr(r.out.data, "blocked ipc") != NULL &&
		strstr(r.out.data, "blocked abstract") != NULL,
	    "%s", r.out.data);
	c = accept(pfd, NULL, NULL);
	CHECK(c < 0 && errno == EAGAIN);
	c = accept(afd, NULL, NULL);
	CHECK(c < 0 && errno == EAGAIN);
	jt_free(&r);

	jail_probe(&f);
	if (f.landlock_abi >= 6) {
		spec.net = 1;
		jt_exec(&spec, &r);
		CHECKF(strstr(r.out.data, "blocked abstract PermissionError") !=
			NULL,
		    "%s", r.out.data);
		c = accept(afd, NULL, NULL);
		CHECK(c < 0 && errno == EAGAIN);
		jt_free(&r);
	}
	close(pfd);
	close(afd);
}

/* A process outside can be neither signalled nor traced. */
static void
escape_signal_outside(void)
{
	struct world w;
	struct jt_run r;
	char *const argv[] = {"sleep", "30", NULL};
	pid_t victim;
	int st;

	world_make(&w);
	CHECK(posix_spawnp(&victim, "sleep", NULL, NULL, argv, environ) == 0);
	world_sh(&w, &r,
	    "kill -9 %ld 2>/dev/null && echo KILLED; kill -9 -1 2>/dev/null; "
	    "python3 -c 'import ctypes; l = ctypes.CDLL(None); "
	    "print(\"ptrace\", l.ptrace(16, %ld, 0, 0))'; echo done",
	    (long)victim, (long)victim);
	CHECK(strstr(r.out.data, "KILLED") == NULL);
	CHECK(strstr(r.out.data, "ptrace -1") != NULL);
	CHECK(waitpid(victim, &st, WNOHANG) == 0);
	CHECK(kill(victim, 0) == 0);
	kill(victim, SIGKILL);
	waitpid(victim, &st, 0);
	jt_free(&r);
}

/* mount and unshare fail inside, as programs would call them. */
static void
escape_mount_unshare(void)
{
	struct world w;
	struct jt_run r;

	world_make(&w);
	world_sh(&w, &r,
	    "unshare -Ur true 2>/dev/null && echo UNSHARED; "
	    "unshare -m true 2>/dev/null && echo UNSHARED; "
	    "mount -t tmpfs none %s 2>/dev/null && echo MOUNTED; "
	    "umount -l /usr 2>/dev/null && echo UNMOUNTED; "
	    "mount -o remount,rw /usr 2>/dev/null && echo MOUNTED; "
	    "echo done",
	    w.ws);
	CHECK(strstr(r.out.data, "done") != NULL);
	CHECKF(strstr(r.out.data, "UNSHARED") == NULL &&
		strstr(r.out.data, "MOUNTED") == NULL,
	    "%s", r.out.data);
	jt_free(&r);
}

/* A fork bomb hits the process bound and dies with the command. */
static void
escape_fork_bomb(void)
{
	struct world w;
	struct jail_spec spec;
	struct jt_run r;
	const char *argv[] = {"python3", "-c",
	    "import os, sys, time\n"
	    "n = 0\n"
	    "try:\n"
	    "  while n < 3000:\n"
	    "    if os.fork() == 0:\n"
	    "      time.sleep(60); os._exit(0)\n"
	    "    n += 1\n"
	    "  print('unbounded', n)\n"
	    "except OSError as e:\n"
	    "  print('stopped', n)\n",
	    "shiro-bomb-marker", NULL};
	int n = -1;

	world_make(&w);
	jt_spec(&spec, w.ws, argv);
	spec.limits.nproc = 64;
	jt_exec(&spec, &r);
	CHECKF(r.rc == 0, "%s", r.res.error);
	CHECKF(sscanf(r.out.data, "stopped %d", &n) == 1, "%s / %s", r.out.data,
	    r.err.data);
	CHECKF(n > 0 && n <= 300, "forked %d", n);
	CHECK(!jt_host_has("shiro-bomb-marker"));
	jt_free(&r);
}

/* A memory bomb meets the address-space limit. */
static void
escape_memory_bomb(void)
{
	struct world w;
	struct jail_spec spec;
	struct jt_run r;
	const char *argv[] = {"python3", "-c",
	    "try:\n"
	    "  b = bytearray(2 << 30); print('allocated')\n"
	    "except MemoryError: print('refused')\n",
	    NULL};

	world_make(&w);
	jt_spec(&spec, w.ws, argv);
	spec.limits.as_bytes = 512ull << 20;
	jt_exec(&spec, &r);
	CHECKF(strstr(r.out.data, "refused") != NULL, "%s / %s", r.out.data,
	    r.err.data);
	jt_free(&r);
}

/* Filling the disk stops at the file-size limit, and /tmp is a small
 * private tmpfs. */
static void
escape_fill_disk(void)
{
	struct world w;
	struct jail_spec spec;
	struct jt_run r;
	struct stat st;
	const char *argv1[] = {
	    "sh", "-c", "head -c 8000000 /dev/zero > big; echo rc=$?", NULL};
	const char *argv2[] = {"sh", "-c",
	    "head -c 8000000 /dev/zero > /tmp/big 2>/dev/null; "
	    "echo rc=$?; du -k /tmp/big",
	    NULL};
	long kb = -1;
	char *p;

	world_make(&w);
	jt_spec(&spec, w.ws, argv1);
	spec.limits.fsize_bytes = 1 << 20;
	jt_exec(&spec, &r);
	CHECK(stat(jt_path(w.ws, "big"), &st) == 0);
	CHECKF(st.st_size <= (1 << 20), "big is %lld bytes",
	    (long long)st.st_size);
	CHECK(strstr(r.out.data, "rc=0") == NULL);
	jt_free(&r);

	jt_spec(&spec, w.ws, argv2);
	spec.limits.tmp_bytes = 2 << 20;
	jt_exec(&spec, &r);
	CHECK(strstr(r.out.data, "rc=0") == NULL);
	p = strchr(r.out.data, '\n');
	CHECK(p != NULL && sscanf(p + 1, "%ld", &kb) == 1);
	CHECKF(kb <= 2048, "/tmp/big is %ld KiB", kb);
	jt_free(&r);
}

/* Background processes, even in a new session, die with the command. */
static void
escape_background(void)
{
	struct world w;
	struct jt_run r;
	struct timespec ts = {1, 200000000};

	world_make(&w);
	world_sh(&w, &r,
	    "(sleep 0.81; echo leaked > bg1) & "
	    "setsid sh -c 'sleep 0.82; echo leaked > bg2' & "
	    "nohup sh -c 'sleep 0.83; echo leaked > bg3' >/dev/null 2>&1 & "
	    "echo started");
	CHECK(strstr(r.out.data, "started") != NULL);
	CHECK(r.res.exited && r.res.exit_code == 0);
	CHECK(!jt_host_has("sleep 0.81") && !jt_host_has("sleep 0.82") &&
	    !jt_host_has("sleep 0.83"));
	nanosleep(&ts, NULL);
	CHECK(!exists(jt_path(w.ws, "bg1")));
	CHECK(!exists(jt_path(w.ws, "bg2")));
	CHECK(!exists(jt_path(w.ws, "bg3")));
	jt_free(&r);
}

/* TIOCSTI into the terminal the command was given: refused, and
 * nothing arrives at the terminal's other end. */
static void
escape_tiocsti(void)
{
	struct world w;
	struct jail_spec spec;
	struct jt_run r;
	const char *argv[] = {"python3", "-c",
	    "import fcntl, termios\n"
	    "try:\n"
	    "  for c in b'id\\n': fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\n"
	    "  print('INJECTED')\n"
	    "except OSError as e: print('refused', e.errno)\n",
	    NULL};
	char buf[64];
	int master, slave;
	ssize_t n;

	world_make(&w);
	master = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(master >= 0);
	CHECK(grantpt(master) == 0 && unlockpt(master) == 0);
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	CHECK(slave >= 0);
	jt_spec(&spec, w.ws, argv);
	spec.stdin_fd = slave;
	jt_exec(&spec, &r);
	CHECKF(strstr(r.out.data, "refused 1\n") != NULL, "%s / %s", r.out.data,
	    r.err.data);
	/* Anything pushed would be readable from the terminal's input. */
	CHECK(fcntl(slave, F_SETFL, O_NONBLOCK) == 0);
	n = read(slave, buf, sizeof(buf));
	CHECK(n < 0 && errno == EAGAIN);
	close(slave);
	close(master);
	jt_free(&r);
}

/* /dev holds only the harmless nodes; no terminal, no disks. */
static void
escape_devices(void)
{
	struct world w;
	struct jt_run r;

	world_make(&w);
	world_sh(&w, &r,
	    "ls /dev | tr '\\n' ' '; echo; (echo x > /dev/tty) 2>/dev/null "
	    "&& echo TTY; cat /etc/shadow 2>/dev/null | grep -c root; "
	    "ls /sys 2>/dev/null | wc -l; echo done");
	CHECK(strstr(r.out.data, "done") != NULL);
	CHECKF(
	    strstr(r.out.data,
		"fd full null random shm stderr stdin stdout urandom zero ") !=
		NULL,
	    "%s", r.out.data);
	CHECK(strstr(r.out.data, "TTY") == NULL);
	/* /etc/shadow is empty (covered) when the jail runs as root. */
	CHECK(strstr(r.out.data, "\n0\n0\ndone") != NULL);
	jt_free(&r);
}

static const struct harness_test tests[] = {
    HT(escape_write_outside),
    HT(escape_read_secrets),
    HT(escape_secrets_in_workspace),
    HT(escape_git_readonly),
    HT(escape_symlink_git),
    HT(escape_symlinked_secrets),
    HT(escape_links_and_proc),
    HT(escape_network),
    HT(escape_unix_sockets),
    HT(escape_signal_outside),
    HT(escape_mount_unshare),
    HT(escape_fork_bomb),
    HT(escape_memory_bomb),
    HT(escape_fill_disk),
    HT(escape_background),
    HT(escape_tiocsti),
    HT(escape_devices),
};

HARNESS_MAIN(tests)
