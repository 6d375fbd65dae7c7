/*
 * shiro-jail - run one command in the tool jail, or say what the jail
 * has on this machine.  `shiro run` and `shiro doctor` exec this
 * program, so its command line and exit codes are a stable interface
 * (docs/jail.md).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/log.h"

#include "filter.h"
#include "jail.h"

static volatile sig_atomic_t shiro_jail_stop;

static const char shiro_jail_usage[] =
    "usage: shiro-jail [--net] [--workspace DIR] [--timeout SECONDS]\n"
    "                  [--env NAME=VALUE]... [--unjailed] -- COMMAND [ARG...]\n"
    "       shiro-jail --doctor [--json]\n"
    "       shiro-jail --policy jail|jail-net|model|fs|tool|tool-net\n"
    "\n"
    "Runs COMMAND in a fresh jail: new user, mount, pid, ipc, uts, cgroup\n"
    "and network namespaces; the system read-only; DIR (default: the\n"
    "current directory) read-write, with .git read-only; private /tmp;\n"
    "no home directory, no secrets; seccomp and Landlock.  Output passes\n"
    "through.\n"
    "\n"
    "  --net             share the host's network (off by default)\n"
    "  --workspace DIR   the directory the command may change\n"
    "  --timeout S       kill the whole tree after S seconds\n"
    "  --env NAME=VALUE  set a variable in the command's environment,\n"
    "                    which otherwise holds only PATH, HOME=/tmp,\n"
    "                    locale and terminal settings\n"
    "  --unjailed        run without namespaces, seccomp and Landlock\n"
    "                    (limits and the tree kill still apply); only for\n"
    "                    a person who has decided to\n"
    "  --doctor          list what the jail has on this machine\n"
    "  --json            the doctor's answer as JSON\n"
    "  --policy P        list the system calls policy P refuses, and why\n"
    "\n"
    "Exit status: the command's; 128+N if signal N killed it; 124 on\n"
    "timeout; 125 if the jail could not be set up (or bad usage); 126 or\n"
    "127 if the command could not be run; 130 if interrupted.\n";

#define SHIRO_JAIL_MAX_ENV 64

/* shiro_jail_env - the default environment with the --env settings
 * added (a later one replaces an earlier one of the same name); the
 * array lives until exit. */
static const char *const *
shiro_jail_env(const char **extra, int n)
{
	static const char *env[2 * SHIRO_JAIL_MAX_ENV + 1];
	const char *const *def = jail_default_env();
	size_t k = 0, len;
	int i, j;

	for (i = 0; def[i] != NULL && k < SHIRO_JAIL_MAX_ENV; i++) {
		len = strcspn(def[i], "=") + 1;
		for (j = 0; j < n; j++)
			if (strncmp(extra[j], def[i], len) == 0)
				break;
		if (j == n)
			env[k++] = def[i];
	}
	for (j = 0; j < n; j++) {
		len = strcspn(extra[j], "=") + 1;
		for (i = j + 1; i < n; i++)
			if (strncmp(extra[i], extra[j], len) == 0)
				break;
		if (i == n)
			env[k++] = extra[j];
	}
	env[k] = NULL;
	return env;
}

/* shiro_jail_signal - SIGINT, SIGTERM, SIGHUP: kill the jail's tree. */
static void
shiro_jail_signal(int sig)
{
	(void)sig;
	shiro_jail_stop = 1;
}

/* shiro_jail_yes - "yes" or "no". */
static const char *
shiro_jail_yes(int v)
{
	return v ? "yes" : "no";
}

/* shiro_jail_doctor - print the jail's features; exit 0 if it works. */
static int
shiro_jail_doctor(int json)
{
	static const char *const argv[] = {"true", NULL};
	struct jail_features f;
	struct jail_result res;
	struct jail_spec spec;
	int rc, ok;

	jail_probe(&f);
	jail_spec_init(&spec);
	spec.argv = argv;
	spec.timeout_ms = 10000;
	rc = f.missing[0] == '\0' ? jail_run(&spec, &res) : -SHIRO_ERR_UNSUPP;
	ok = rc == 0 && res.exited && res.exit_code == 0;
	if (json) {
		printf("{\"userns\":%s,\"mntns\":%s,\"pidns\":%s,\"ipcns\":%s,"
		       "\"utsns\":%s,\"netns\":%s,\"cgroupns\":%s,"
		       "\"seccomp\":%s,\"mount_api\":%s,\"landlock_abi\":%d,"
		       "\"cgroup_pids\":%s,\"cgroup_memory\":%s,"
		       "\"pid_max\":%s,\"cgroup\":\"%s\","
		       "\"missing\":\"%s\",\"selftest\":%s,\"ok\":%s}\n",
		    f.userns ? "true" : "false", f.mntns ? "true" : "false",
		    f.pidns ? "true" : "false", f.ipcns ? "true" : "false",
		    f.utsns ? "true" : "false", f.netns ? "true" : "false",
		    f.cgroupns ? "true" : "false", f.seccomp ? "true" : "false",
		    f.mount_api ? "true" : "false", f.landlock_abi,
		    f.cgroup_pids ? "true" : "false",
		    f.cgroup_memory ? "true" : "false",
		    f.pid_max ? "true" : "false", f.cgroup_how, f.missing,
		    ok ? "true" : "false", ok ? "true" : "false");
		return ok ? 0 : 1;
	}
	printf("user namespaces:     %s\n", shiro_jail_yes(f.userns));
	printf("mount namespaces:    %s\n", shiro_jail_yes(f.mntns));
	printf("pid namespaces:      %s\n", shiro_jail_yes(f.pidns));
	printf("ipc namespaces:      %s\n", shiro_jail_yes(f.ipcns));
	printf("uts namespaces:      %s\n", shiro_jail_yes(f.utsns));
	printf("network namespaces:  %s\n", shiro_jail_yes(f.netns));
	printf("cgroup namespaces:   %s\n", shiro_jail_yes(f.cgroupns));
	printf("new mount API:       %s\n", shiro_jail_yes(f.mount_api));
	printf("seccomp filters:     %s\n", shiro_jail_yes(f.seccomp));
	if (f.landlock_abi > 0)
		printf("Landlock:            ABI %d\n", f.landlock_abi);
	else
		printf("Landlock:            no (the second file layer is "
		       "missing; mounts still apply)\n");
	printf("process limit:       %s\n",
	    f.pid_max ? "the pid namespace's own pid_max"
		: f.cgroup_pids
		? "cgroup v2 pids.max"
		: "RLIMIT_NPROC only (it does not bind root: run the "
		  "tool worker as an ordinary user)");
	printf("memory limit:        RLIMIT_AS per process%s\n",
	    f.cgroup_memory ? ", cgroup v2 memory.max for the tree"
			    : " (no limit for the whole tree)");
	printf("cgroup per run:      %s\n", f.cgroup_how);
	if (f.missing[0] != '\0')
		printf("missing:             %s\n", f.missing);
	if (ok)
		printf("self-test:           ok (true ran in the jail in "
		       "%llu ms)\n",
		    (unsigned long long)res.wall_ms);
	else
		printf("self-test:           FAILED%s%s\n",
		    rc != 0 && res.error[0] ? ": " : "",
		    rc != 0 ? res.error : "");
	printf("%s\n",
	    ok ? "The jail works here."
	       : "The jail cannot run here: commands are refused unless a "
		 "person sets unjailed.");
	return ok ? 0 : 1;
}

/* shiro_jail_row - print one refusal of a policy. */
static void
shiro_jail_row(void *arg, const char *call, const char *reply, const char *why)
{
	(void)arg;
	printf("%-40s %-12s %s\n", call, reply, why);
}

/* shiro_jail_policy - list the refusals of the named policy. */
static int
shiro_jail_policy(const char *name)
{
	static const struct {
		const char *name;
		enum filter_policy p;
	} names[] = {{"jail", FILTER_JAIL}, {"jail-net", FILTER_JAIL_NET},
	    {"model", FILTER_MODEL}, {"fs", FILTER_FS}, {"tool", FILTER_TOOL},
	    {"tool-net", FILTER_TOOL_NET}};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i].name, name) == 0) {
			filter_each(names[i].p, shiro_jail_row, NULL);
			return 0;
		}
	fprintf(stderr, "shiro-jail: unknown policy %s\n", name);
	return JAIL_EXIT_SETUP;
}

/* shiro_jail_timeout - parse seconds (may have a fraction) into ms. */
static int
shiro_jail_timeout(const char *s, unsigned *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0) ||
	    v > 7 * 24 * 3600)
		return -1;
	*ms = (unsigned)(v * 1000 + 0.5);
	if (*ms == 0)
		*ms = 1;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {{"net", no_argument, NULL, 'n'},
	    {"workspace", required_argument, NULL, 'w'},
	    {"timeout", required_argument, NULL, 't'},
	    {"unjailed", no_argument, NULL, 'u'},
	    {"env", required_argument, NULL, 'e'},
	    {"doctor", no_argument, NULL, 'd'},
	    {"json", no_argument, NULL, 'j'},
	    {"policy", required_argument, NULL, 'p'},
	    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	struct jail_result res;
	struct jail_spec spec;
	struct sigaction sa;
	char cwd[PATH_MAX], *workspace = NULL;
	const char *policy = NULL;
	const char *extra_env[SHIRO_JAIL_MAX_ENV];
	int c, doctor = 0, json = 0, rc, nenv = 0;

	log_init("shiro-jail", LOG_LEVEL_WARN);
	jail_spec_init(&spec);
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			spec.net = 1;
			break;
		case 'w':
			workspace = optarg;
			break;
		case 't':
			if (shiro_jail_timeout(optarg, &spec.timeout_ms) != 0) {
				fprintf(stderr, "shiro-jail: bad timeout %s\n",
				    optarg);
				return JAIL_EXIT_SETUP;
			}
			break;
		case 'u':
			spec.unjailed = 1;
			break;
		case 'e':
			if (strchr(optarg, '=') == NULL || optarg[0] == '=' ||
			    nenv >= SHIRO_JAIL_MAX_ENV) {
				fprintf(stderr, "shiro-jail: bad --env %s\n",
				    optarg);
				return JAIL_EXIT_SETUP;
			}
			extra_env[nenv++] = optarg;
			break;
		case 'd':
			doctor = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'h':
			fputs(shiro_jail_usage, stdout);
			return 0;
		default:
			fputs(shiro_jail_usage, stderr);
			return JAIL_EXIT_SETUP;
		}
	}
	if (doctor)
		return shiro_jail_doctor(json);
	if (policy != NULL)
		return shiro_jail_policy(policy);
	if (optind >= argc) {
		fputs(shiro_jail_usage, stderr);
		return JAIL_EXIT_SETUP;
	}
	if (workspace == NULL) {
		/* The current directory, unless that is one a jail cannot
		 * use read-write (/, /usr, /tmp, ...): then none. */
		struct stat st;
		if (getcwd(cwd, sizeof(cwd)) != NULL &&
		    jail_workspace_usable(cwd) && stat(cwd, &st) == 0)
			workspace = cwd;
	} else if (workspace[0] != '/') {
		if (realpath(workspace, cwd) == NULL) {
			fprintf(stderr, "shiro-jail: workspace %s: %s\n",
			    workspace, strerror(errno));
			return JAIL_EXIT_SETUP;
		}
		workspace = cwd;
	}
	spec.workspace = workspace;
	spec.argv = (const char *const *)argv + optind;
	if (nenv > 0)
		spec.envp = shiro_jail_env(extra_env, nenv);
	spec.stdin_fd = 0;
	spec.stdout_fd = 1;
	spec.stderr_fd = 2;
	spec.cancel = &shiro_jail_stop;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = shiro_jail_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	rc = jail_run(&spec, &res);
	if (rc != 0) {
		fprintf(stderr, "shiro-jail: %s\n",
		    res.error[0] ? res.error : err_str(rc));
		return JAIL_EXIT_SETUP;
	}
	if (res.timed_out)
		fprintf(stderr,
		    "shiro-jail: timed out after %u ms; the whole "
		    "tree was killed\n",
		    spec.timeout_ms);
	return jail_status(&res);
}
