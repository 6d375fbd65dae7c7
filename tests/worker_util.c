/*
 * worker_util.c - a test playing the broker to one worker (worker_util.h).
 */
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/zsock.h"
#include "tests/harness.h"
#include "tests/worker_util.h"

/* tw_bin - the path of a program built next to this test. */
void
tw_bin(const char *rel, char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	CHECK(n > 0);
	self[n] = '\0';
	snprintf(out, size, "%s/%s", dirname(self), rel);
	CHECKF(access(out, X_OK) == 0, "%s is not built", out);
}

/* tw_start - bind the ROUTER and start prog against it. */
void
tw_start(struct tw *t, const char *prog, long hb, long give_up,
    const char *secret, const char *const *extra)
{
	char path[PATH_MAX], hbs[32], gus[32];
	static unsigned serial; /* one socket per worker of a test */
	const char *argv[64];
	int fds[2] = {-1, -1}, n = 0, k;

	tw_bin(prog, path, sizeof(path));
	snprintf(t->endpoint, sizeof(t->endpoint), "ipc://%s/w%u.sock",
	    harness_tmpdir(), serial++);
	CHECK(zsock_router(t->endpoint, NULL, &t->router) == 0);
	t->hb_ms = hb;
	t->next_beat = 0;
	snprintf(hbs, sizeof(hbs), "%ld", hb);
	snprintf(gus, sizeof(gus), "%ld", give_up);
	argv[n++] = path;
	argv[n++] = "--endpoint";
	argv[n++] = t->endpoint;
	argv[n++] = "--heartbeat-ms";
	argv[n++] = hbs;
	argv[n++] = "--give-up-ms";
	argv[n++] = gus;
	if (secret != NULL) {
		argv[n++] = "--secret-fd";
		argv[n++] = "3";
		CHECK(pipe(fds) == 0);
		CHECK(write(fds[1], secret, strlen(secret)) ==
		    (ssize_t)strlen(secret));
		close(fds[1]);
	}
	for (k = 0; extra != NULL && extra[k] != NULL && n < 63; k++)
		argv[n++] = extra[k];
	argv[n] = NULL;
	t->pid = fork();
	CHECK(t->pid >= 0);
	if (t->pid == 0) {
		if (secret != NULL)
			dup2(fds[0], 3);
		if (t->err_path[0] != '\0') {
			int fd = open(
			    t->err_path, O_WRONLY | O_CREAT | O_APPEND, 0600);

			if (fd > 2) {
				dup2(fd, 2);
				close(fd);
			}
		}
		execv(path, (char *const *)argv);
		_exit(127);
	}
	if (secret != NULL)
		close(fds[0]);
}

/* tw_next - the next message of any type within ms. */
bool
tw_next(struct tw *t, long ms, struct msg **mp)
{
	long long end = zsock_now_ms() + ms;
	struct zsock_poll it = {t->router, -1, ZSOCK_IN, 0};
	struct msg_ident from;

	long long now, wait;

	for (;;) {
		if (msg_recv(t->router, mp, &from) == 0) {
			t->id = from;
			return true;
		}
		now = zsock_now_ms();
		if (t->beat && t->id.len > 0 && now >= t->next_beat) {
			struct msg *hb = msg_new(MSG_HEARTBEAT);

			(void)msg_send(t->router, hb, &t->id);
			msg_destroy(&hb);
			t->next_beat = now + t->hb_ms;
		}
		if (now >= end)
			return false;
		wait = end - now;
		if (t->beat && t->id.len > 0 && t->next_beat - now < wait)
			wait = t->next_beat - now;
		zsock_poll(&it, 1, (long)wait);
	}
}

/* tw_recv - the next message of type want within ms. */
struct msg *
tw_recv(struct tw *t, enum msg_type want, long ms)
{
	long long end = zsock_now_ms() + ms;
	struct msg *m;

	while (tw_next(t, (long)(end - zsock_now_ms()), &m)) {
		if (msg_type(m) == want)
			return m;
		msg_destroy(&m);
	}
	harness_fail(
	    __FILE__, __LINE__, "no %s within %ld ms", msg_type_name(want), ms);
}

/* tw_drop - destroy a message we only waited for. */
void
tw_drop(struct msg *m)
{
	msg_destroy(&m);
}

/* tw_send - send m to the worker and destroy it. */
void
tw_send(struct tw *t, struct msg *m)
{
	int rc = msg_send(t->router, m, &t->id);

	if (rc != 0 && t->err_path[0] != '\0') {
		/* The worker is gone: its log says why. */
		FILE *fp = fopen(t->err_path, "r");
		char line[1024];

		while (fp != NULL && fgets(line, sizeof(line), fp) != NULL)
			fputs(line, stderr);
		if (fp != NULL)
			fclose(fp);
	}
	CHECKF(rc == 0, "sending %s: %d", msg_type_name(msg_type(m)), rc);
	msg_destroy(&m);
}

/* tw_exit - the worker's exit status within ms, or -1. */
int
tw_exit(struct tw *t, long ms)
{
	long long end = zsock_now_ms() + ms;
	struct timespec tick = {0, 5 * 1000 * 1000};
	int status;

	for (;;) {
		if (waitpid(t->pid, &status, WNOHANG) == t->pid) {
			t->pid = -1;
			return WIFEXITED(status) ? WEXITSTATUS(status)
						 : 128 + WTERMSIG(status);
		}
		if (zsock_now_ms() >= end)
			return -1;
		nanosleep(&tick, NULL);
	}
}

/* tw_status_has - whether the worker's /proc status has line. */
bool
tw_status_has(const struct tw *t, const char *line)
{
	char path[64], buf[4096];
	FILE *fp;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->pid);
	fp = fopen(path, "r");
	CHECK(fp != NULL);
	while (!found && fgets(buf, sizeof(buf), fp) != NULL)
		found = strncmp(buf, line, strlen(line)) == 0;
	fclose(fp);
	return found;
}

/* tw_end - kill the worker if it still runs, and close its socket. */
void
tw_end(struct tw *t)
{
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		t->pid = -1;
	}
	zsock_close(&t->router);
}

/* tw_stop - tw_end(), then end ZeroMQ's context. */
void
tw_stop(struct tw *t)
{
	tw_end(t);
	zsock_term();
}
