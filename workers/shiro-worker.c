/*
 * shiro-worker - run a model worker on this machine for a shirod on
 * another one, over tcp and CURVE (docs/remote.md).
 *
 *	shiro-worker --connect tcp://HOST:PORT --role model --provider NAME
 *	             --server-key KEY [--type PRESET] [--wire W]
 *	             [--base-url URL] [--jobs N] [--key-env VAR]
 *	             [--key-file FILE] [--home DIR] [--heartbeat-ms N]
 *	             [--give-up-ms N]
 *	shiro-worker --show-key [--home DIR]
 *
 * It is a launcher: it reads this machine's own key pair for shirod
 * (HOME/keys/worker.key, made on first use, mode 0600) and this
 * machine's own key for the provider (a file or a variable, never
 * shirod's: shirod sends a remote worker no key), resolves the
 * provider's wire and base URL from its preset, and runs
 * shiro-model-worker with both on pipes that only it reads (--cred-fd
 * and --secret-fd, never argv or the environment), in an environment
 * without the key's variable.  The model worker connects, locks itself
 * down, says READY and serves shirod's jobs; over tcp it reconnects by
 * itself (with back-off) when the connection is lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/keys.h"
#include "proto/log.h"
#include "proto/path.h"
#include "proto/provider_preset.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

/* Exit statuses besides the model worker's own (it replaces us). */
#define SW_EXIT_FATAL 1
#define SW_EXIT_USAGE 64

/* The descriptors the model worker reads its credential and key from. */
#define SW_CRED_FD 3
#define SW_SECRET_FD 4

/* The provider key's bound, as the model worker's. */
#define SW_SECRET_MAX 8192

extern char **environ;

/* What the command line says. */
struct sw_opts {
	const char *connect, *role, *provider, *server_key, *type, *wire;
	const char *base_url, *jobs, *key_env, *key_file, *home;
	const char *heartbeat_ms, *give_up_ms;
	int show_key;
};

static const char sw_usage_text[] =
    "usage: shiro-worker --connect tcp://HOST:PORT --role model\n"
    "                    --provider NAME --server-key KEY [OPTIONS]\n"
    "       shiro-worker --show-key [--home DIR]\n"
    "Runs a model worker on this machine for the shirod at HOST:PORT,\n"
    "over CURVE: shirod admits this machine's key (shiro keys add worker\n"
    "NAME KEY there), and this machine calls the provider with its own\n"
    "provider key.\n"
    "  --connect URL       shirod's tcp endpoint for workers\n"
    "  --role model        the role (remote workers are model workers)\n"
    "  --provider NAME     the provider it serves, named as in shirod's\n"
    "                      config.json\n"
    "  --server-key KEY    shirod's public key (shiro keys prints it)\n"
    "  --type PRESET       the provider's preset or wire (default: NAME)\n"
    "  --wire W            its wire, when the preset's is not wanted\n"
    "  --base-url URL      its base URL (default: the preset's, or its\n"
    "                      SDK variable such as ANTHROPIC_BASE_URL)\n"
    "  --jobs N            calls in flight at once (default 4)\n"
    "  --key-file FILE     this machine's provider key: the first line\n"
    "  --key-env VAR       or the variable holding it (default: the\n"
    "                      preset's, such as ANTHROPIC_API_KEY)\n"
    "  --home DIR          where keys/worker.key lives (default\n"
    "                      $SHIRO_HOME, else ~/.shiro)\n"
    "  --heartbeat-ms N    heartbeats (shirod's heartbeat.intervalMs;\n"
    "                      default 1000)\n"
    "  --give-up-ms N      exit after this long without shirod (default:\n"
    "                      never; it reconnects with back-off)\n"
    "  --show-key          print this machine's public key and exit\n";

/* sw_usage - say what is wrong and exit 64. */
static void __attribute__((noreturn, format(printf, 1, 2)))
sw_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "shiro-worker: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", sw_usage_text);
	exit(SW_EXIT_USAGE);
}

/* sw_home - --home, $SHIRO_HOME or ~/.shiro (caller frees). */
static char *
sw_home(const char *opt)
{
	const char *env;

	if (opt != NULL)
		return xstrdup(opt);
	env = getenv("SHIRO_HOME");
	if (env != NULL && env[0] != '\0')
		return xstrdup(env);
	env = getenv("HOME");
	if (env == NULL || env[0] == '\0') {
		fprintf(stderr,
		    "shiro-worker: neither SHIRO_HOME nor HOME is "
		    "set: give --home DIR\n");
		exit(SW_EXIT_FATAL);
	}
	return xasprintf("%s/.shiro", env);
}

/* sw_pair - this machine's key pair (made on first use); exits on error. */
static void
sw_pair(const char *home, struct zsock_keypair *kp)
{
	struct buf why = BUF_INIT;
	char *path = keys_path(home, KEYS_WORKER);

	if (keys_pair(path, 1, kp, &why) < 0) {
		fprintf(stderr, "shiro-worker: %s\n",
		    why.data != NULL ? why.data : path);
		exit(SW_EXIT_FATAL);
	}
	buf_free(&why);
	free(path);
}

/* sw_local - whether url is a server on this machine (needs no key). */
static int
sw_local(const char *url)
{
	const char *h = strstr(url, "://");

	if (h == NULL)
		return 0;
	h += 3;
	return strncmp(h, "127.", 4) == 0 || strncmp(h, "localhost", 9) == 0 ||
	    strncmp(h, "[::1]", 5) == 0;
}

/*
 * sw_key - this machine's provider key into key (*lenp bytes): the first
 * line of --key-file, else the value of --key-env or the preset's
 * variable.  0, or 1 when there is none.  Exits when a named source
 * cannot be read.
 */
static int
sw_key(const struct sw_opts *o, const struct provider_preset *pr,
    unsigned char *key, size_t *lenp)
{
	const char *var = o->key_env, *v;
	char line[SW_SECRET_MAX + 2];
	size_t n;
	FILE *f;

	*lenp = 0;
	if (o->key_file != NULL) {
		f = fopen(o->key_file, "re");
		if (f == NULL) {
			fprintf(stderr, "shiro-worker: --key-file %s: %s\n",
			    o->key_file, strerror(errno));
			exit(SW_EXIT_FATAL);
		}
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		fclose(f);
		n = strcspn(line, "\r\n");
		if (n == 0 || n > SW_SECRET_MAX) {
			fprintf(stderr,
			    "shiro-worker: --key-file %s: no key on its "
			    "first line (1 to %d bytes)\n",
			    o->key_file, SW_SECRET_MAX);
			exit(SW_EXIT_FATAL);
		}
		memcpy(key, line, n);
		explicit_bzero(line, sizeof(line));
		*lenp = n;
		return 0;
	}
	if (var == NULL && pr != NULL)
		var = pr->key_env;
	if (var == NULL)
		return 1;
	v = getenv(var);
	if (v == NULL || v[0] == '\0') {
		if (o->key_env != NULL) {
			fprintf(stderr, "shiro-worker: --key-env %s: not set\n",
			    var);
			exit(SW_EXIT_FATAL);
		}
		return 1;
	}
	n = strlen(v);
	if (n > SW_SECRET_MAX) {
		fprintf(stderr, "shiro-worker: %s: longer than %d bytes\n", var,
		    SW_SECRET_MAX);
		exit(SW_EXIT_FATAL);
	}
	memcpy(key, v, n);
	*lenp = n;
	return 0;
}

/* sw_env_keep - whether a variable goes to the model worker: the
 * locale, the time zone, PATH, HOME and where the CA certificates are;
 * never one that may hold a key. */
static int
sw_env_keep(const char *entry)
{
	static const char *const names[] = {"PATH", "HOME", "LANG", "LANGUAGE",
	    "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR", "SHIRO_HOME"};
	const char *eq = strchr(entry, '=');
	size_t nl, k;

	if (eq == NULL || eq == entry || strlen(eq + 1) > 4096)
		return 0;
	nl = (size_t)(eq - entry);
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strlen(names[k]) == nl && memcmp(entry, names[k], nl) == 0)
			return 1;
	return nl > 3 && strncmp(entry, "LC_", 3) == 0;
}

/*
 * sw_pipe - a pipe whose read end is fd target for the program exec'd
 * next, holding cred (when not NULL) or len bytes of data: both are
 * small, so one write into the empty pipe never blocks.  Exits on error.
 */
static void
sw_pipe(const struct zsock_cred *cred, const void *data, size_t len, int target)
{
	int fds[2], ok;

	if (pipe(fds) != 0) {
		perror("shiro-worker: pipe");
		exit(SW_EXIT_FATAL);
	}
	ok = cred != NULL ? zsock_cred_write(fds[1], cred) == 0
			  : write(fds[1], data, len) == (ssize_t)len;
	close(fds[1]);
	if (!ok) {
		fprintf(stderr, "shiro-worker: cannot fill a pipe\n");
		exit(SW_EXIT_FATAL);
	}
	if (fds[0] != target) {
		if (dup2(fds[0], target) != target) {
			perror("shiro-worker: dup2");
			exit(SW_EXIT_FATAL);
		}
		close(fds[0]);
	}
	(void)fcntl(target, F_SETFD, 0);
}

/* sw_parse - the command line into *o. */
static void
sw_parse(int argc, char **argv, struct sw_opts *o)
{
	enum {
		O_CONNECT = 256,
		O_ROLE,
		O_PROVIDER,
		O_SERVER_KEY,
		O_TYPE,
		O_WIRE,
		O_BASE_URL,
		O_JOBS,
		O_KEY_ENV,
		O_KEY_FILE,
		O_HOME,
		O_HB,
		O_GIVE_UP,
		O_SHOW_KEY,
	};
	static const struct option opts[] = {
	    {"connect", required_argument, NULL, O_CONNECT},
	    {"role", required_argument, NULL, O_ROLE},
	    {"provider", required_argument, NULL, O_PROVIDER},
	    {"server-key", required_argument, NULL, O_SERVER_KEY},
	    {"type", required_argument, NULL, O_TYPE},
	    {"wire", required_argument, NULL, O_WIRE},
	    {"base-url", required_argument, NULL, O_BASE_URL},
	    {"jobs", required_argument, NULL, O_JOBS},
	    {"key-env", required_argument, NULL, O_KEY_ENV},
	    {"key-file", required_argument, NULL, O_KEY_FILE},
	    {"home", required_argument, NULL, O_HOME},
	    {"heartbeat-ms", required_argument, NULL, O_HB},
	    {"give-up-ms", required_argument, NULL, O_GIVE_UP},
	    {"show-key", no_argument, NULL, O_SHOW_KEY},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char **slot;
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		slot = NULL;
		switch (c) {
		case O_CONNECT:
			slot = &o->connect;
			break;
		case O_ROLE:
			slot = &o->role;
			break;
		case O_PROVIDER:
			slot = &o->provider;
			break;
		case O_SERVER_KEY:
			slot = &o->server_key;
			break;
		case O_TYPE:
			slot = &o->type;
			break;
		case O_WIRE:
			slot = &o->wire;
			break;
		case O_BASE_URL:
			slot = &o->base_url;
			break;
		case O_JOBS:
			slot = &o->jobs;
			break;
		case O_KEY_ENV:
			slot = &o->key_env;
			break;
		case O_KEY_FILE:
			slot = &o->key_file;
			break;
		case O_HOME:
			slot = &o->home;
			break;
		case O_HB:
			slot = &o->heartbeat_ms;
			break;
		case O_GIVE_UP:
			slot = &o->give_up_ms;
			break;
		case O_SHOW_KEY:
			o->show_key = 1;
			break;
		case 'h':
			printf("%s", sw_usage_text);
			exit(0);
		default:
			sw_usage("the option %s is unknown or lacks its value",
			    argv[optind - 1]);
		}
		if (slot != NULL)
			*slot = optarg;
	}
	if (optind != argc)
		sw_usage("unexpected argument %s", argv[optind]);
}

/* sw_check - what a worker needs; exits with usage otherwise. */
static void
sw_check(const struct sw_opts *o, char server[ZSOCK_KEY_Z85 + 1])
{
	if (o->connect == NULL || strncmp(o->connect, "tcp://", 6) != 0)
		sw_usage("give shirod's endpoint: --connect tcp://HOST:PORT");
	if (o->role == NULL || strcmp(o->role, "model") != 0)
		sw_usage("--role model: a remote worker is a model worker (the "
			 "tool and fs workers run beside shirod, in its "
			 "workspace)");
	if (o->provider == NULL)
		sw_usage("give the provider it serves: --provider NAME");
	if (o->server_key == NULL ||
	    keys_pub_parse(o->server_key, strlen(o->server_key), server) < 0)
		sw_usage("give shirod's public key: --server-key KEY, the 40 "
			 "characters 'shiro keys' prints on its machine (in "
			 "single quotes)");
}

/* main - resolve, read the keys, run the model worker. */
int
main(int argc, char **argv)
{
	const struct provider_preset *pr;
	struct zsock_cred cred;
	struct sw_opts o;
	unsigned char secret[SW_SECRET_MAX];
	const char *argvv[32], *wire, *url;
	char *home, *self, *prog, where[1024], **envp;
	size_t slen = 0, n = 0, k;
	int i = 0, has_key;

	log_init("shiro-worker", LOG_LEVEL_INFO);
	sw_parse(argc, argv, &o);
	home = sw_home(o.home);
	memset(&cred, 0, sizeof(cred));
	if (o.show_key) {
		sw_pair(home, &cred.own);
		printf("%s\n", cred.own.pub);
		explicit_bzero(&cred, sizeof(cred));
		free(home);
		return 0;
	}
	sw_check(&o, cred.server);
	pr = provider_preset_find(o.type != NULL ? o.type : o.provider);
	wire = o.wire != NULL ? o.wire : pr != NULL ? pr->wire : NULL;
	if (wire == NULL)
		sw_usage(
		    "provider %s is no preset: give --type PRESET or --wire "
		    "W (%s)",
		    o.provider, provider_preset_names());
	url = o.base_url;
	if (url == NULL && pr != NULL && pr->url_env != NULL &&
	    getenv(pr->url_env) != NULL && getenv(pr->url_env)[0] != '\0')
		url = getenv(pr->url_env);
	if (url == NULL && pr != NULL)
		url = pr->base_url;
	has_key = sw_key(&o, pr, secret, &slen) == 0;
	if (!has_key && pr != NULL && !pr->local && pr->key_env != NULL &&
	    (url == NULL || !sw_local(url))) {
		fprintf(stderr,
		    "shiro-worker: provider %s needs this machine's key for "
		    "it: "
		    "set %s, or give --key-env VAR or --key-file FILE\n",
		    o.provider, o.key_env != NULL ? o.key_env : pr->key_env);
		return SW_EXIT_FATAL;
	}
	sw_pair(home, &cred.own);
	free(home);

	self = path_self_dir(argv[0]);
	prog = path_program(
	    self, "SHIRO_LIBEXEC", "shiro-model-worker", where, sizeof(where));
	free(self);
	if (prog == NULL) {
		fprintf(stderr,
		    "shiro-worker: shiro-model-worker is in none of %s\n",
		    where);
		return SW_EXIT_FATAL;
	}
	/* Nothing else of ours reaches the worker; both secrets travel on
	 * pipes that only it reads. */
	(void)syscall(SYS_close_range, SW_CRED_FD, ~0U, 0);
	sw_pipe(&cred, NULL, 0, SW_CRED_FD);
	explicit_bzero(&cred, sizeof(cred));
	if (has_key) {
		sw_pipe(NULL, secret, slen, SW_SECRET_FD);
		explicit_bzero(secret, sizeof(secret));
	}

	argvv[i++] = prog;
	argvv[i++] = "--endpoint";
	argvv[i++] = o.connect;
	argvv[i++] = "--provider";
	argvv[i++] = o.provider;
	argvv[i++] = "--wire";
	argvv[i++] = wire;
	if (url != NULL) {
		argvv[i++] = "--base-url";
		argvv[i++] = url;
	}
	argvv[i++] = "--jobs";
	argvv[i++] = o.jobs != NULL		       ? o.jobs
	    : strcmp(wire, PROVIDER_WIRE_OFFLINE) == 0 ? "1"
						       : "4";
	argvv[i++] = "--heartbeat-ms";
	argvv[i++] = o.heartbeat_ms != NULL ? o.heartbeat_ms : "1000";
	argvv[i++] = "--give-up-ms";
	argvv[i++] = o.give_up_ms != NULL ? o.give_up_ms : "2147483647";
	argvv[i++] = "--cred-fd";
	argvv[i++] = "3";
	if (has_key) {
		argvv[i++] = "--secret-fd";
		argvv[i++] = "4";
	}
	argvv[i] = NULL;

	for (k = 0; environ != NULL && environ[k] != NULL; k++)
		n++;
	envp = xcalloc(n + 1, sizeof(*envp));
	n = 0;
	for (k = 0; environ != NULL && environ[k] != NULL; k++)
		if (sw_env_keep(environ[k]))
			envp[n++] = environ[k];
	envp[n] = NULL;
	execve(prog, (char *const *)argvv, envp);
	fprintf(
	    stderr, "shiro-worker: cannot run %s: %s\n", prog, strerror(errno));
	return SW_EXIT_FATAL;
}
