#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"

#include "daemon.h"
#include "helper.h"
#include "render.h"

/*
 * The exit status with which shirod says that another shirod already
 * owns this home (it holds the chat lock): the start lost a race, and
 * the winner's socket is the one to wait for.
 */
#define DAEMON_EXIT_RUNNING 3

/* daemon_probe - whether something listens on path (see daemon.h). */
int
daemon_probe(const char *path)
{
	struct sockaddr_un sa;
	int fd, rc = 0;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -SHIRO_ERR_TOOBIG;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_from_errno(errno);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			rc = -SHIRO_ERR_NOENT;
		else if (errno == ECONNREFUSED)
			rc = -SHIRO_ERR_AGAIN;
		else
			rc = err_from_errno(errno);
	}
	close(fd);
	return rc;
}

/* daemon_sleep_ms - sleep about ms milliseconds. */
static void
daemon_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* daemon_log_size - the size of the daemon's log now (0 if none). */
static off_t
daemon_log_size(const char *log_path)
{
	struct stat st;

	return stat(log_path, &st) == 0 ? st.st_size : 0;
}

/* daemon_log_tail - print the end of what the daemon wrote to its log
 * after byte from (where the log ended when it was started), so that
 * lines of earlier runs are not taken for this one's. */
static void
daemon_log_tail(const char *log_path, off_t from)
{
	char chunk[2048];
	ssize_t r;
	off_t size;
	int fd;

	fd = open(log_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	if (size < from)
		from = 0; /* the log was replaced meanwhile */
	if (size - from > (off_t)sizeof(chunk) - 1)
		from = size - (off_t)sizeof(chunk) + 1;
	(void)lseek(fd, from, SEEK_SET);
	r = read(fd, chunk, sizeof(chunk) - 1);
	close(fd);
	if (r <= 0) {
		fprintf(stderr, "It wrote nothing to %s.\n", log_path);
		return;
	}
	chunk[r] = '\0';
	fprintf(stderr, "What it wrote to %s:\n", log_path);
	render_puts(stderr, chunk);
	if (chunk[r - 1] != '\n')
		fputc('\n', stderr);
}

/* daemon_spawn - fork and exec shirod in its own session; 0 and *pidp. */
static int
daemon_spawn(
    const struct shiro *s, const char *prog, const char *log_path, pid_t *pidp)
{
	pid_t pid;
	int logfd, nullfd;

	logfd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (logfd < 0) {
		fprintf(stderr, "shiro: cannot open %s: %s\n", log_path,
		    strerror(errno));
		return err_from_errno(errno);
	}
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nullfd < 0) {
		close(logfd);
		return err_from_errno(errno);
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(logfd);
		close(nullfd);
		fprintf(stderr, "shiro: cannot start shirod: %s\n",
		    strerror(errno));
		return err_from_errno(errno);
	}
	if (pid == 0) {
		/*
		 * The daemon gets its own session, so that the terminal's
		 * signals (Ctrl-C, hang-up) do not reach it, and writes
		 * only to its log.
		 */
		(void)setsid();
		if (dup2(nullfd, STDIN_FILENO) < 0 ||
		    dup2(logfd, STDOUT_FILENO) < 0 ||
		    dup2(logfd, STDERR_FILENO) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		setenv("SHIRO_HOME", s->home, 1);
		execl(prog, "shirod", (char *)NULL);
		dprintf(STDERR_FILENO, "shiro: cannot run %s: %s\n", prog,
		    strerror(errno));
		_exit(127);
	}
	close(logfd);
	close(nullfd);
	*pidp = pid;
	return 0;
}

/* daemon_start - start shirod and wait for its socket (see daemon.h). */
int
daemon_start(const struct shiro *s)
{
	char *prog = NULL, *log_path = NULL;
	pid_t pid = -1;
	off_t log_from;
	int rc, status, waited = 0, lost_race = 0;
	long slept = 0, step = 10;

	if (s->sock_path == NULL) {
		fprintf(stderr,
		    "shiro: %s is not a local socket, so shiro cannot start "
		    "the daemon; start shirod on that machine.\n",
		    s->endpoint);
		return -SHIRO_ERR_UNSUPP;
	}
	if (mkdir(s->home, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr,
		    "shiro: cannot create the chat home %s: %s.\n"
		    "Pick another with --home DIR or SHIRO_HOME.\n",
		    s->home, strerror(errno));
		return err_from_errno(errno);
	}
	prog = helper_find(s, "shirod");
	if (prog == NULL) {
		rc = -SHIRO_ERR_NOENT;
		goto out;
	}
	log_path = xasprintf("%s/shirod.log", s->home);
	log_from = daemon_log_size(log_path);
	rc = daemon_spawn(s, prog, log_path, &pid);
	if (rc < 0)
		goto out;
	for (;;) {
		rc = daemon_probe(s->sock_path);
		if (rc == 0)
			goto out;
		if (!waited && waitpid(pid, &status, WNOHANG) == pid) {
			waited = 1;
			if (WIFEXITED(status) &&
			    WEXITSTATUS(status) == DAEMON_EXIT_RUNNING) {
				lost_race = 1; /* wait for the winner */
			} else {
				fprintf(stderr,
				    "shiro: shirod stopped right after it "
				    "started (%s %d).\n",
				    WIFEXITED(status) ? "exit status"
						      : "signal",
				    WIFEXITED(status) ? WEXITSTATUS(status)
						      : WTERMSIG(status));
				daemon_log_tail(log_path, log_from);
				fprintf(stderr,
				    "Fix what the log says, or run %s "
				    "yourself to see it.\n",
				    prog);
				rc = -SHIRO_ERR_FAILED;
				goto out;
			}
		}
		if (slept >= SHIRO_START_MS)
			break;
		daemon_sleep_ms(step);
		slept += step;
		if (step < 100)
			step *= 2;
	}
	fprintf(stderr, "shiro: %s did not open its socket %s within %d s.\n",
	    lost_race ? "the shirod that owns this home" : "the new shirod",
	    s->sock_path, SHIRO_START_MS / 1000);
	daemon_log_tail(log_path, log_from);
	fprintf(stderr, "See %s, or run %s yourself.\n", log_path, prog);
	rc = -SHIRO_ERR_TIMEOUT;
out:
	free(prog);
	free(log_path);
	return rc;
}
