/*
 * shirod - the daemon that owns one chat home: the store, the planner,
 * the workers and the attached clients.  main() only reads the command
 * line and the settings, detaches when asked, and hands over to the
 * broker (broker/broker.c), as Postfix's programs hand a service to their
 * skeleton.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/log.h"
#include "proto/path.h"
#include "proto/xmalloc.h"

#include "broker.h"
#include "doctor.h"
#include "provider.h"
#include "shirod.h"

extern char **environ;

/* shirod_usage - the help text, to f. */
static void
shirod_usage(FILE *f)
{
	fputs(
	    "usage: shirod [--home DIR] [--daemon] [--check-config] "
	    "[--trace FILE]\n"
	    "       shirod [--home DIR] --doctor [--json]\n"
	    "\n"
	    "Runs the daemon of one shiro chat home ($SHIRO_HOME, default "
	    "~/.shiro).\n"
	    "Normally `shiro` starts it for you.\n"
	    "\n"
	    "  --home DIR      the chat home (created with mode 0700)\n"
	    "  --daemon        detach; log to HOME/shirod.log; the first\n"
	    "                  process exits once the daemon serves (0),\n"
	    "                  or with the daemon's exit code\n"
	    "  --check-config  read HOME/config.json, report, exit\n"
	    "  --doctor        which providers serve turns and compactions\n"
	    "                  with these settings and this environment, and\n"
	    "                  whether their endpoints answer; then exit\n"
	    "  --json          with --doctor: one JSON object\n"
	    "  --trace FILE    write the planner's events to FILE, in\n"
	    "                  the language of build/shiro-plan (tests)\n"
	    "\n"
	    "Exit codes: 0 stopped cleanly, 1 could not start, 2 bad "
	    "config.json,\n"
	    "3 another shirod already serves this home, 4 the chat's store\n"
	    "failed while serving (restart it; nothing acknowledged is "
	    "lost),\n"
	    "64 bad usage.\n",
	    f);
}

/* shirod_home - the absolute home directory (made if missing); malloc'd. */
static char *
shirod_home(const char *arg, char *msg, size_t msglen)
{
	char *home, real[PATH_MAX];
	const char *h;

	if (arg != NULL) {
		home = xstrdup(arg);
	} else if ((h = getenv("SHIRO_HOME")) != NULL && *h != '\0') {
		home = xstrdup(h);
	} else if ((h = getenv("HOME")) != NULL && *h != '\0') {
		home = xasprintf("%s/.shiro", h);
	} else {
		snprintf(msg, msglen, "no home: set SHIRO_HOME or HOME");
		return NULL;
	}
	if (mkdir(home, 0700) != 0 && errno != EEXIST) {
		snprintf(
		    msg, msglen, "cannot make %s: %s", home, strerror(errno));
		free(home);
		return NULL;
	}
	if (realpath(home, real) == NULL) {
		snprintf(msg, msglen, "%s: %s", home, strerror(errno));
		free(home);
		return NULL;
	}
	free(home);
	return xstrdup(real);
}

/* shirod_bindir - where the workers are: beside this program in a build
 * tree, PREFIX/libexec/shiro once installed (proto/path.h). */
static char *
shirod_bindir(const char *argv0)
{
	char *self = path_self_dir(argv0), *dir;

	dir = path_libexec_dir(self);
	free(self);
	return dir;
}

/*
 * shirod_detach - fork; the parent waits on a pipe for the child's start
 * result (one byte, then a message) and exits with it.  The child starts
 * a new session and sends its output to HOME/shirod.log.  Returns the
 * pipe's write end in the child.
 */
static int
shirod_detach(const char *home)
{
	char buf[1024], *logpath;
	int p[2], fd;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		fatal("pipe");
	pid = fork();
	if (pid < 0)
		fatal("fork");
	if (pid > 0) {
		close(p[1]);
		n = read(p[0], buf, sizeof(buf) - 1);
		if (n <= 0) {
			fprintf(stderr,
			    "shirod: the daemon died while "
			    "starting; see %s/shirod.log\n",
			    home);
			exit(BROKER_EXIT_ERROR);
		}
		buf[n] = '\0';
		if (buf[0] != 0 && n > 1)
			fprintf(stderr, "shirod: %s\n", buf + 1);
		exit((unsigned char)buf[0]);
	}
	close(p[0]);
	setsid();
	logpath = xasprintf("%s/shirod.log", home);
	fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(logpath);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	if (chdir("/") != 0)
		log_warn("chdir /");
	return p[1];
}

/* shirod_providers_log - one line each for who serves turns and
 * compactions, and the notes of the resolution (never a key). */
static void
shirod_providers_log(const struct config *cfg, const char *notes)
{
	const struct config_provider *tp = NULL, *mp;

	if (cfg->turn_provider != NULL)
		tp = config_provider(cfg, cfg->turn_provider);
	mp = config_provider(cfg, cfg->memory.provider);
	if (tp == NULL)
		log_info("turns: no provider (set ANTHROPIC_API_KEY or "
			 "OPENAI_API_KEY, or name one in config.json)");
	else
		log_info("turns: %s (%s at %s, model %s, key %s)", tp->name,
		    tp->wire, tp->base_url,
		    cfg->turns.model ? cfg->turns.model : "none",
		    tp->key != NULL	? tp->key_from
			: tp->needs_key ? "MISSING"
					: "not needed");
	if (mp != NULL)
		log_info("compactions: %s%s%s", mp->name,
		    cfg->memory.model ? ", model " : "",
		    cfg->memory.model ? cfg->memory.model : "");
	if (cfg->env_note != NULL)
		log_info("%s", cfg->env_note);
	if (notes != NULL)
		log_info("%s", notes);
}

/* shirod_report - tell the waiting parent (if any) how start-up went. */
static void
shirod_report(int fd, int code, const char *msg)
{
	char buf[1024];
	size_t n;

	if (fd < 0)
		return;
	buf[0] = (char)code;
	n = (size_t)snprintf(buf + 1, sizeof(buf) - 1, "%s", msg);
	if (n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	(void)write(fd, buf, n + 1);
	close(fd);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"home", required_argument, NULL, 'H'},
	    {"daemon", no_argument, NULL, 'd'},
	    {"check-config", no_argument, NULL, 'c'},
	    {"trace", required_argument, NULL, 't'},
	    {"doctor", no_argument, NULL, 'D'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct shirod_opts o;
	struct broker b;
	char msg[1024], *home, *err = NULL;
	int ch, rc, report = -1, doctor = 0, json = 0;

	log_init("shirod", LOG_LEVEL_INFO);
	memset(&o, 0, sizeof(o));
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'H':
			o.home = optarg;
			break;
		case 'd':
			o.daemon = 1;
			break;
		case 'c':
			o.check_config = 1;
			break;
		case 't':
			o.trace = optarg;
			break;
		case 'D':
			doctor = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			shirod_usage(stdout);
			return 0;
		default:
			shirod_usage(stderr);
			return BROKER_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		shirod_usage(stderr);
		return BROKER_EXIT_USAGE;
	}
	msg[0] = '\0';
	home = shirod_home(o.home, msg, sizeof(msg));
	if (home == NULL) {
		fprintf(stderr, "shirod: %s\n", msg);
		return BROKER_EXIT_ERROR;
	}
	memset(&b, 0, sizeof(b));
	b.sigfd = -1;
	rc = config_load(home, &b.cfg, &err);
	/* The providers: config.json, then the environment of the shiro
	 * that started this daemon (docs/providers.md). */
	if (rc == 0 && (rc = provider_resolve(&b.cfg, environ, &err)) != 0)
		config_free(&b.cfg);
	if (rc != 0) {
		fprintf(stderr, "shirod: %s/config.json: %s\n", home,
		    err ? err : "cannot be read");
		free(err);
		free(home);
		return BROKER_EXIT_CONFIG;
	}
	if (doctor) {
		b.bindir = shirod_bindir(argv[0]);
		provider_load_keys(&b.cfg, &err);
		rc = doctor_run(&b.cfg, b.bindir, err, json);
		free(err);
		free(b.bindir);
		config_free(&b.cfg);
		free(home);
		return rc;
	}
	if (o.check_config) {
		printf("shirod: %s/config.json is valid\n", home);
		config_free(&b.cfg);
		free(home);
		return 0;
	}
	/* The keys are read once, before anything else can run, and their
	 * variables erased before the daemon's parent waits around: those
	 * the resolution found in the environment, then keyFile's. */
	provider_load_keys(&b.cfg, &err);
	(void)secret_load(&b.secrets, &b.cfg);
	b.bindir = shirod_bindir(argv[0]);
	if (o.daemon)
		report = shirod_detach(home);
	shirod_providers_log(&b.cfg, err);
	free(err);
	err = NULL;
	rc = broker_open(&b, &o, msg, sizeof(msg));
	if (rc != BROKER_EXIT_OK) {
		if (report < 0)
			fprintf(stderr, "shirod: %s\n", msg);
		else if (rc == BROKER_EXIT_RUNNING)
			log_info("%s", msg);
		else
			log_warnx("%s", msg);
		shirod_report(report, rc, msg);
		broker_close(&b);
		free(home);
		return rc;
	}
	shirod_report(report, 0, "");
	rc = broker_run(&b);
	log_info("stopped");
	broker_close(&b);
	free(home);
	return rc;
}
