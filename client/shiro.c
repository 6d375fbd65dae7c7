/*
 * shiro - the client of shirod: attach to the chat, send messages, ask
 * about the memory, and run the helper programs.  See docs/client.md.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/log.h"
#include "proto/msg.h"
#include "proto/keys.h"
#include "proto/path.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#ifndef SHIRO_FRONT
#include "proto/zsock.h"
#endif

#include "attach.h"
#include "cmd.h"
#include "helper.h"
#include "json_out.h"
#include "remote.h"
#include "run.h"
#include "shiro.h"

#define SHIRO_VERSION "0.1"

#ifdef SHIRO_FRONT
/*
 * This file builds two programs.  build/shiro, the front (SHIRO_FRONT),
 * runs the commands that only start a helper program (run, doctor, tool,
 * fsck, export, import) and help, and hands every other command to
 * shiro-client, the same source built with ZeroMQ and libedit, found
 * next to it.  Loading those libraries and theirs costs a few
 * milliseconds at every start, which `shiro run -- true` would otherwise
 * pay on each call (docs/jail.md's bench).
 */
static char **shiro_argv;
static int shiro_front_exec(struct shiro *s, int argc, char **argv);
#define SHIRO_DAEMON_CMD(fn) shiro_front_exec
#else
#define SHIRO_DAEMON_CMD(fn) fn
#endif

/* One subcommand: its name, how it is used, and what it does. */
struct shiro_cmd {
	const char *name;
	int (*run)(struct shiro *s, int argc, char **argv);
	const char *usage;
	const char *help;
};

static const struct shiro_cmd *shiro_find(const char *name);

static const char shiro_usage[] =
    "usage: shiro [GLOBAL OPTIONS]                 attach to the chat\n"
    "       shiro [GLOBAL OPTIONS] -p [--json] [--yolo] [TEXT...]  one turn, "
    "headless\n"
    "       shiro [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n";

static const char shiro_help[] =
    "\n"
    "shiro talks to shirod, the daemon that keeps one chat that never ends\n"
    "and compresses it into one-line summaries.  Without a command it\n"
    "attaches: type messages, /help lists the commands of that mode.\n"
    "It starts shirod in the background when none runs.\n"
    "\n"
    "Commands:\n"
    "  send      append a message without starting a turn; prints its id\n"
    "  status    the daemon's state: messages, view sizes, workers, queues\n"
    "  memory    the status and every line of the view; memory zoom ID N\n"
    "  zoom      the messages or summaries under node ID+N\n"
    "  log       the chat's latest messages\n"
    "  notes     the agent's notes on this project (the current directory)\n"
    "  todos     the agent's task list for this project\n"
    "  stop      stop the daemon\n"
    "  attach    attach to the chat here, or to a shirod on another "
    "machine\n"
    "  keys      the keys of remote clients and workers (docs/remote.md)\n"
    "  fsck      check (and repair) the chat on disk        (shiro-store)\n"
    "  export    write the chat as the gist's files          (shiro-store)\n"
    "  import    read a chat in the gist's files             (shiro-store)\n"
    "  run       run a command in the tool jail              (shiro-jail)\n"
    "  doctor    the jail and the model providers on this machine\n"
    "  tool      run one tool call, as the model would (shiro-tool-worker)\n"
    "  help      help on a command\n"
    "\n"
    "Global options:\n"
    "  --home DIR       the chat home (else $SHIRO_HOME, else ~/.shiro)\n"
    "  --endpoint E     the daemon's socket (else $SHIRO_ENDPOINT, else\n"
    "                   ipc://HOME/run/shirod.sock)\n"
    "  --no-start       never start shirod; fail when none answers\n"
    "  --server-key KEY shirod's public key, for a tcp:// endpoint (else\n"
    "                   $SHIRO_SERVER_KEY)\n"
    "  --remote NAME    the endpoint and key of a saved remote\n"
    "  --workspace DIR  the turns' workspace, else the working directory\n"
    "                   (over tcp: a path on shirod's machine, else the\n"
    "                   saved remote's, else none)\n"
    "  -p, --print      headless: send TEXT (or stdin) as a turn, print the\n"
    "                   reply; --json prints one JSON event per line\n"
    "  --json           print JSON instead of text (most commands)\n"
    "  -h, --help       this help; COMMAND --help for a command's\n"
    "  --version        the client's version and protocol revision\n"
    "\n"
    "Exit codes: 0 completed, 1 the daemon refused or failed the request,\n"
    "2 bad usage, 3 no daemon answered, 4 no model is configured for\n"
    "turns (the message was logged), 5 the model failed, 127 a helper\n"
    "program is missing, 130 interrupted.  See docs/client.md.\n";

/* shiro_usage_error - say what is wrong with the command line; exit 2. */
static int __attribute__((format(printf, 2, 3)))
shiro_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "shiro%s%s: ", cmd != NULL ? " " : "",
	    cmd != NULL ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nRun 'shiro %s%s--help' for the usage.\n",
	    cmd != NULL ? cmd : "", cmd != NULL ? " " : "");
	return SHIRO_EXIT_USAGE;
}

/* shiro_cmd_help - print the help of one command on stdout. */
static int
shiro_cmd_help(const struct shiro_cmd *c)
{
	printf("usage: shiro %s\n\n%s", c->usage, c->help);
	return SHIRO_EXIT_OK;
}

/* The long options that every command understands. */
enum {
	OPT_HOME = 256,
	OPT_ENDPOINT,
	OPT_NO_START,
	OPT_JSON,
	OPT_VERSION,
	OPT_KIND,
	OPT_TAIL,
	OPT_REPAIR,
	OPT_GIST,
	OPT_NET,
	OPT_WORKSPACE,
	OPT_TIMEOUT,
	OPT_LIST,
	OPT_SERVER_KEY,
	OPT_REMOTE,
	OPT_SAVE,
	OPT_YOLO,
	OPT_WS,
};

/* shiro_global_opt - apply a global option; 1 if c was one. */
static int
shiro_global_opt(struct shiro *s, int c, const char *arg)
{
	switch (c) {
	case OPT_HOME:
		free(s->home);
		s->home = xstrdup(arg);
		return 1;
	case OPT_ENDPOINT:
		free(s->endpoint);
		s->endpoint = xstrdup(arg);
		return 1;
	case OPT_NO_START:
		s->autostart = 0;
		return 1;
	case OPT_SERVER_KEY:
		free(s->server_key);
		s->server_key = xstrdup(arg);
		return 1;
	case OPT_REMOTE:
		free(s->remote);
		s->remote = xstrdup(arg);
		s->remote_late = s->resolved;
		return 1;
	case OPT_JSON:
		s->json = 1;
		return 1;
	case OPT_WS:
		free(s->workspace);
		s->workspace = xstrdup(arg);
		return 1;
	default:
		return 0;
	}
}

/* --workspace DIR of the commands that send or ask about the chat
 * (send, notes, todos, attach, -p and the bare session); run and tool
 * have their own, for the local jail. */
#define SHIRO_WS_LONGOPT \
	{ \
		"workspace", required_argument, NULL, OPT_WS \
	}

#define SHIRO_GLOBAL_LONGOPTS \
	{"home", required_argument, NULL, OPT_HOME}, \
	    {"endpoint", required_argument, NULL, OPT_ENDPOINT}, \
	    {"no-start", no_argument, NULL, OPT_NO_START}, \
	    {"json", no_argument, NULL, OPT_JSON}, \
	    {"server-key", required_argument, NULL, OPT_SERVER_KEY}, \
	    {"remote", required_argument, NULL, OPT_REMOTE}, \
	{ \
		"help", no_argument, NULL, 'h' \
	}

/* shiro_is_key - whether arg has the form of a CURVE key in Z85: 40
 * characters of its alphabet (which holds '-'; no option is that). */
static int
shiro_is_key(const char *arg)
{
	static const char z85[] = "0123456789abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()"
				  "[]{}@%$#";

	return strlen(arg) == 40 && strspn(arg, z85) == 40;
}

/*
 * shiro_is_option - whether arg is written as an option: "--" or "-"
 * followed by a letter.  "- a list item", "-5 degrees", "-" and "--->"
 * are text, so a message may start with a dash; so is a key, which may
 * too ('shiro keys add client NAME -Ab...').
 */
static int
shiro_is_option(const char *arg)
{
	if (arg[0] != '-' || shiro_is_key(arg))
		return 0;
	if (arg[1] == '-')
		return isalpha((unsigned char)arg[2]) != 0;
	return isalpha((unsigned char)arg[1]) != 0;
}

/*
 * shiro_takes_value - whether the option arg ("--name", a unique
 * abbreviation, not "--name=value") takes the next argument as its value.
 */
static int
shiro_takes_value(const char *arg, const struct option *longopts)
{
	const char *name = arg + 2;
	const struct option *o, *hit = NULL;
	size_t len = strcspn(name, "=");
	int n = 0;

	if (arg[1] != '-' || name[len] == '=')
		return 0;
	for (o = longopts; o->name != NULL; o++) {
		if (strncmp(o->name, name, len) != 0)
			continue;
		hit = o;
		n++;
		if (strlen(o->name) == len) {
			n = 1;
			break;
		}
	}
	return n == 1 && hit->has_arg == required_argument;
}

/*
 * shiro_order_args - move the options in argv[1..argc), each with its
 * value, before the operands, keeping the order of each; a "--" ends the
 * options and is put between the two.  With stop_at_operand everything
 * from the first operand on is an operand.  Returns the index of the
 * first operand: getopt parses argv[0..that) and nothing after it.
 */
static int
shiro_order_args(
    int argc, char **argv, const struct option *longopts, int stop_at_operand)
{
	char **opts, **ops;
	int k, nopt = 0, nops = 0, dashdash = 0;

	if (argc <= 1)
		return argc;
	opts = xcalloc((size_t)argc, sizeof(*opts));
	ops = xcalloc((size_t)argc, sizeof(*ops));
	for (k = 1; k < argc; k++) {
		if (dashdash || (stop_at_operand && nops > 0)) {
			ops[nops++] = argv[k];
		} else if (strcmp(argv[k], "--") == 0) {
			dashdash = 1;
		} else if (!shiro_is_option(argv[k])) {
			ops[nops++] = argv[k];
		} else {
			opts[nopt++] = argv[k];
			if (shiro_takes_value(argv[k], longopts) &&
			    k + 1 < argc)
				opts[nopt++] = argv[++k];
		}
	}
	memcpy(argv + 1, opts, (size_t)nopt * sizeof(*argv));
	if (dashdash)
		argv[1 + nopt] = "--";
	memcpy(argv + 1 + nopt + dashdash, ops, (size_t)nops * sizeof(*argv));
	free(opts);
	free(ops);
	return 1 + nopt + dashdash;
}

/*
 * shiro_parse - parse a command's options with longopts (the global ones
 * are always understood); handle calls back for the others and returns
 * 0, -1 for an option it does not take, or an exit code after saying
 * what is wrong.  Returns -1 when the command may go on (optind is at
 * the operands), or the exit code.
 */
static int
shiro_parse(struct shiro *s, const struct shiro_cmd *cmd, int argc, char **argv,
    const struct option *extra,
    int (*handle)(void *arg, int c, const char *optarg), void *arg,
    int stop_at_operand)
{
	struct option longopts[24];
	size_t n = 0, k;
	const struct option global[] = {SHIRO_GLOBAL_LONGOPTS};
	char bad[64];
	int c, rc, first;

	for (k = 0; k < sizeof(global) / sizeof(global[0]); k++)
		longopts[n++] = global[k];
	for (k = 0; extra != NULL && extra[k].name != NULL && n < 23; k++)
		longopts[n++] = extra[k];
	memset(&longopts[n], 0, sizeof(longopts[n]));
	first = shiro_order_args(argc, argv, longopts, stop_at_operand);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(first, argv, "+h", longopts, NULL)) != -1) {
		if (c == 'h')
			return shiro_cmd_help(cmd);
		if (shiro_global_opt(s, c, optarg))
			continue;
		if (c == '?' || c == ':') {
			if (optopt != 0)
				snprintf(bad, sizeof(bad), "-%c", optopt);
			else
				snprintf(
				    bad, sizeof(bad), "%s", argv[optind - 1]);
			return shiro_usage_error(cmd->name,
			    "the option %s is unknown or lacks its value (text "
			    "that starts with '-' goes after '--')",
			    bad);
		}
		rc = handle != NULL ? handle(arg, c, optarg) : -1;
		if (rc > 0)
			return rc;
		if (rc < 0)
			return shiro_usage_error(cmd->name,
			    "the option %s is not understood here",
			    argv[optind - 1]);
	}
	optind = first;
#ifndef SHIRO_FRONT
	/* A remote, a tcp endpoint or its key given after the command. */
	if (s->remote_late) {
		s->remote_late = 0;
		free(s->endpoint);
		s->endpoint = NULL;
		if ((rc = remote_resolve(s)) >= 0)
			return rc;
	}
	if (s->endpoint != NULL && strncmp(s->endpoint, "tcp://", 6) == 0) {
		free(s->sock_path);
		s->sock_path = NULL;
		if (s->cred == NULL && (rc = remote_credential(s)) >= 0)
			return rc;
	}
#endif
	return -1;
}

#ifndef SHIRO_FRONT
/* shiro_parse_uint - a decimal number in 0..2^63-1; 0 or -1. */
static int
shiro_parse_uint(const char *s, uint64_t *vp)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > (unsigned long long)INT64_MAX)
		return -1;
	*vp = v;
	return 0;
}

/* shiro_join - the operands joined by spaces (caller frees). */
static char *
shiro_join(int argc, char **argv)
{
	struct buf b = BUF_INIT;
	int k;

	for (k = 0; k < argc; k++) {
		if (k > 0)
			buf_addc(&b, ' ');
		buf_adds(&b, argv[k]);
	}
	return buf_steal(&b, NULL);
}

/*
 * shiro_text - the operands, or stdin when there are none, checked by
 * cmd_check_text; NULL after saying why (exit 2).
 */
static char *
shiro_text(const char *cmd, int argc, char **argv)
{
	const char *what = "the text";
	char *text;
	size_t len;

	if (argc > 0) {
		text = shiro_join(argc, argv);
		len = strlen(text);
	} else if (isatty(STDIN_FILENO)) {
		shiro_usage_error(
		    cmd, "give the text as arguments or on stdin");
		return NULL;
	} else {
		what = "the text on stdin";
		text = cmd_read_stdin(&len);
		if (text == NULL)
			return NULL;
	}
	if (cmd_check_text(cmd, what, text, len) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* shiro_send_opt - the options of send. */
static int
shiro_send_opt(void *arg, int c, const char *optarg)
{
	const char **kind = arg;

	if (c != OPT_KIND)
		return -1;
	*kind = optarg;
	return 0;
}

/* shiro_run_send - shiro send [--kind user|note] [TEXT...]. */
static int
shiro_run_send(struct shiro *s, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"kind", required_argument, NULL, OPT_KIND}, SHIRO_WS_LONGOPT,
	    {NULL, 0, NULL, 0}};
	const char *kind = "user";
	char *text;
	int rc;

	rc = shiro_parse(
	    s, shiro_find("send"), argc, argv, opts, shiro_send_opt, &kind, 0);
	if (rc >= 0)
		return rc;
	if (strcmp(kind, "user") != 0 && strcmp(kind, "note") != 0)
		return shiro_usage_error(
		    "send", "--kind must be user or note, not '%s'", kind);
	text = shiro_text("send", argc - optind, argv + optind);
	if (text == NULL)
		return SHIRO_EXIT_USAGE;
	rc = cmd_send(s, kind, text);
	free(text);
	return rc;
}

/* shiro_run_simple - status, stop, notes and todos: a request without
 * arguments. */
static int
shiro_run_simple(struct shiro *s, int argc, char **argv)
{
	static const struct option ws[] = {
	    SHIRO_WS_LONGOPT, {NULL, 0, NULL, 0}};
	const struct shiro_cmd *cmd = shiro_find(argv[0]);
	struct cmd_query q = {.type = MSG_STATUS};
	int rc;

	if (strcmp(cmd->name, "stop") == 0)
		q.type = MSG_STOP;
	if (strcmp(cmd->name, "notes") == 0 ||
	    strcmp(cmd->name, "todos") == 0) {
		q.type = MSG_NOTES;
		q.what = cmd->name;
	}
	rc = shiro_parse(
	    s, cmd, argc, argv, q.type == MSG_NOTES ? ws : NULL, NULL, NULL, 0);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return shiro_usage_error(cmd->name,
		    "%s takes no operand ('%s')", cmd->name, argv[optind]);
	return cmd_query(s, &q);
}

/* shiro_zoom_args - ID N into q; an exit code or -1. */
static int
shiro_zoom_args(const char *cmd, int argc, char **argv, struct cmd_query *q)
{
	if (argc != 2)
		return shiro_usage_error(cmd, "zoom needs ID and N");
	if (shiro_parse_uint(argv[0], &q->id) < 0)
		return shiro_usage_error(
		    cmd, "ID must be a message number, not '%s'", argv[0]);
	if (shiro_parse_uint(argv[1], &q->n) < 0 || q->n == 0 ||
	    (q->n & (q->n - 1)) != 0)
		return shiro_usage_error(cmd,
		    "N must be a power of two (1, 2, 4, ...), not '%s'",
		    argv[1]);
	if (q->id % q->n != 0)
		return shiro_usage_error(cmd,
		    "ID must be a multiple of N (a node is ID+N), see '%s'",
		    argv[0]);
	q->type = MSG_ZOOM;
	return -1;
}

/* shiro_run_memory - shiro memory [zoom ID N]. */
static int
shiro_run_memory(struct shiro *s, int argc, char **argv)
{
	struct cmd_query q = {.type = MSG_MEMORY};
	int rc;

	rc = shiro_parse(
	    s, shiro_find("memory"), argc, argv, NULL, NULL, NULL, 0);
	if (rc >= 0)
		return rc;
	if (optind < argc) {
		if (strcmp(argv[optind], "zoom") != 0)
			return shiro_usage_error("memory",
			    "the only subcommand is zoom, not '%s'",
			    argv[optind]);
		rc = shiro_zoom_args(
		    "memory", argc - optind - 1, argv + optind + 1, &q);
		if (rc >= 0)
			return rc;
	}
	return cmd_query(s, &q);
}

/* shiro_run_zoom - shiro zoom ID N. */
static int
shiro_run_zoom(struct shiro *s, int argc, char **argv)
{
	struct cmd_query q = {.type = MSG_ZOOM};
	int rc;

	rc =
	    shiro_parse(s, shiro_find("zoom"), argc, argv, NULL, NULL, NULL, 0);
	if (rc >= 0)
		return rc;
	rc = shiro_zoom_args("zoom", argc - optind, argv + optind, &q);
	if (rc >= 0)
		return rc;
	return cmd_query(s, &q);
}

/* shiro_log_opt - the options of log. */
static int
shiro_log_opt(void *arg, int c, const char *optarg)
{
	struct cmd_query *q = arg;

	if (c != OPT_TAIL)
		return -1;
	if (shiro_parse_uint(optarg, &q->tail) < 0)
		return shiro_usage_error(
		    "log", "--tail needs a number of lines, not '%s'", optarg);
	q->has_tail = 1;
	return 0;
}

/* shiro_run_log - shiro log [--tail N]. */
static int
shiro_run_log(struct shiro *s, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"tail", required_argument, NULL, OPT_TAIL}, {NULL, 0, NULL, 0}};
	struct cmd_query q = {.type = MSG_LOG};
	int rc;

	rc = shiro_parse(
	    s, shiro_find("log"), argc, argv, opts, shiro_log_opt, &q, 0);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return shiro_usage_error(
		    "log", "log takes no operand ('%s')", argv[optind]);
	return cmd_query(s, &q);
}

/* shiro_attach_opt - the options of attach: --save NAME. */
static int
shiro_attach_opt(void *arg, int c, const char *optarg)
{
	const char **save = arg;

	if (c != OPT_SAVE)
		return -1;
	*save = optarg;
	return 0;
}

/* shiro_run_attach - shiro attach [TARGET] [--server-key KEY] [--save N]. */
static int
shiro_run_attach(struct shiro *s, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"save", required_argument, NULL, OPT_SAVE}, SHIRO_WS_LONGOPT,
	    {NULL, 0, NULL, 0}};
	const char *save = NULL;
	int rc;

	rc = shiro_parse(s, shiro_find("attach"), argc, argv, opts,
	    shiro_attach_opt, &save, 0);
	if (rc >= 0)
		return rc;
	if (argc - optind > 1)
		return shiro_usage_error("attach",
		    "attach takes one target: tcp://HOST:PORT or a saved "
		    "remote's name");
	return remote_attach(s, optind < argc ? argv[optind] : NULL, save);
}

/* shiro_run_keys - shiro keys [add|revoke client|worker NAME [KEY]]. */
static int
shiro_run_keys(struct shiro *s, int argc, char **argv)
{
	int rc;

	rc =
	    shiro_parse(s, shiro_find("keys"), argc, argv, NULL, NULL, NULL, 0);
	if (rc >= 0)
		return rc;
	return remote_keys(s, argc - optind, argv + optind);
}

#endif /* !SHIRO_FRONT */

/* The options of the helper commands, collected to pass them on. */
struct shiro_pass {
	char **argv; /* what the helper gets, argv[0] left free */
	int argc;
	const char *gist; /* export and import: --gist DIR */
};

/* shiro_pass_add - append one argument for the helper. */
static void
shiro_pass_add(struct shiro_pass *p, const char *arg)
{
	p->argv = xreallocarray(p->argv, (size_t)p->argc + 2, sizeof(char *));
	p->argv[p->argc++] = (char *)arg;
	p->argv[p->argc] = NULL;
}

/* shiro_pass_opt - pass a helper command's option on. */
static int
shiro_pass_opt(void *arg, int c, const char *optarg)
{
	struct shiro_pass *p = arg;

	switch (c) {
	case OPT_REPAIR:
		shiro_pass_add(p, "--repair");
		return 0;
	case OPT_GIST:
		p->gist = optarg;
		return 0;
	case OPT_NET:
		shiro_pass_add(p, "--net");
		return 0;
	case OPT_WORKSPACE:
		shiro_pass_add(p, "--workspace");
		shiro_pass_add(p, optarg);
		return 0;
	case OPT_TIMEOUT:
		shiro_pass_add(p, "--timeout");
		shiro_pass_add(p, optarg);
		return 0;
	default:
		return -1;
	}
}

/* shiro_is_remote - whether s names a shirod on another machine
 * (--remote, or a tcp:// endpoint): run and tool then go to it. */
static int
shiro_is_remote(const struct shiro *s)
{
	return s->remote != NULL ||
	    (s->endpoint != NULL && strncmp(s->endpoint, "tcp://", 6) == 0);
}

/* shiro_here_only - fsck, export, import and doctor work on this
 * machine (its store, its jail): with a remote shirod named they would
 * check or copy something else than asked, so they are refused; 2, or
 * -1 to go on. */
static int
shiro_here_only(const struct shiro *s, const char *cmd)
{
	if (!shiro_is_remote(s))
		return -1;
	return shiro_usage_error(cmd,
	    "%s works on this machine (%s), not on the shirod at %s: run "
	    "'shiro %s' on that machine",
	    cmd,
	    strcmp(cmd, "doctor") == 0 ? "its jail and providers" : s->home,
	    s->remote != NULL ? s->remote : s->endpoint, cmd);
}

/*
 * shiro_run_store - fsck, export and import: shiro-store with the
 * command, its options and the home.
 */
static int
shiro_run_store(struct shiro *s, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"repair", no_argument, NULL, OPT_REPAIR},
	    {"gist", required_argument, NULL, OPT_GIST}, {NULL, 0, NULL, 0}};
	const struct shiro_cmd *cmd = shiro_find(argv[0]);
	struct shiro_pass p = {NULL, 0, NULL};
	int rc, fsck = strcmp(cmd->name, "fsck") == 0;

	shiro_pass_add(&p, NULL);
	shiro_pass_add(&p, cmd->name);
	rc = shiro_parse(s, cmd, argc, argv, opts, shiro_pass_opt, &p, 0);
	if (rc < 0)
		rc = shiro_here_only(s, cmd->name);
	if (rc >= 0)
		goto out;
	rc = SHIRO_EXIT_USAGE;
	if (optind < argc) {
		shiro_usage_error(
		    cmd->name, "unexpected operand '%s'", argv[optind]);
		goto out;
	}
	if (fsck && p.gist != NULL) {
		shiro_usage_error(cmd->name,
		    "--gist is for export and "
		    "import");
		goto out;
	}
	if (!fsck && p.argc > 2) {
		shiro_usage_error(cmd->name, "--repair is for fsck");
		goto out;
	}
	if (!fsck && p.gist == NULL) {
		shiro_usage_error(cmd->name, "--gist DIR is required");
		goto out;
	}
	if (p.gist != NULL) {
		shiro_pass_add(&p, "--gist");
		shiro_pass_add(&p, p.gist);
	}
	shiro_pass_add(&p, s->home);
	rc = helper_exec(s, "shiro-store", p.argv);
out:
	free(p.argv);
	return rc;
}

#ifndef SHIRO_FRONT
/* shiro_remote_ws - the workspace on shirod's machine for run or tool:
 * the command's --workspace, else the saved remote's; NULL after saying
 * what to give. */
static const char *
shiro_remote_ws(const struct shiro *s, const char *cmd, const char *ws)
{
	if (ws == NULL)
		ws = s->remote_ws;
	if (ws == NULL) {
		(void)shiro_usage_error(cmd,
		    "name the directory on shirod's machine to %s in: "
		    "--workspace DIR (an absolute path there), or save it "
		    "with the remote (shiro attach ... --save NAME "
		    "--workspace DIR)",
		    strcmp(cmd, "run") == 0 ? "run the command"
					    : "call the tool");
		return NULL;
	}
	if (!keys_workspace_ok(ws)) {
		(void)shiro_usage_error(cmd,
		    "--workspace names a directory on shirod's machine: give "
		    "its absolute path (at most %d bytes, no control "
		    "characters)",
		    KEYS_WORKSPACE_MAX);
		return NULL;
	}
	return ws;
}

/*
 * shiro_run_remote - shiro run against another machine's shirod: the
 * words after -- as one bash command line in the workspace there, with
 * --timeout S (1..600, default 120, the bash tool's).  There is no
 * network in that jail, as for its turns' commands: --net is refused.
 */
static int
shiro_run_remote(
    struct shiro *s, const struct shiro_pass *p, int argc, char **argv)
{
	const char *ws = NULL, *timeout = NULL;
	struct buf args = BUF_INIT;
	struct json_out j;
	char *cmdline, *end;
	long secs = 120;
	int k, rc;

	for (k = 1; k < p->argc; k++) {
		if (strcmp(p->argv[k], "--net") == 0)
			return shiro_usage_error("run",
			    "--net: a command on shirod's machine runs without "
			    "network, as its turns' commands do");
		if (strcmp(p->argv[k], "--workspace") == 0 && k + 1 < p->argc)
			ws = p->argv[++k];
		else if (strcmp(p->argv[k], "--timeout") == 0 &&
		    k + 1 < p->argc)
			timeout = p->argv[++k];
	}
	if (timeout != NULL) {
		errno = 0;
		secs = strtol(timeout, &end, 10);
		if (errno != 0 || *end != '\0' || end == timeout || secs < 1 ||
		    secs > 600)
			return shiro_usage_error("run",
			    "--timeout S: on shirod's machine a command runs "
			    "1 to 600 seconds ('%s')",
			    timeout);
	}
	if ((ws = shiro_remote_ws(s, "run", ws)) == NULL)
		return SHIRO_EXIT_USAGE;
	cmdline = run_quote(argv + optind, argc - optind);
	if (!utf8_valid(cmdline, strlen(cmdline))) {
		free(cmdline);
		return shiro_usage_error("run",
		    "the command's words must be UTF-8 text to travel to "
		    "shirod's machine");
	}
	json_out_init(&j, &args);
	json_out_begin_object(&j);
	json_out_key(&j, "command");
	json_out_str(&j, cmdline);
	json_out_key(&j, "timeout");
	json_out_int(&j, secs);
	json_out_end_object(&j);
	free(cmdline);
	rc = run_remote(s, "bash", args.data, ws, 1);
	buf_free(&args);
	return rc;
}
#endif

/* shiro_run_run - shiro run [--net] [--workspace DIR] [--timeout S] --. */
static int
shiro_run_run(struct shiro *s, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"net", no_argument, NULL, OPT_NET},
	    {"workspace", required_argument, NULL, OPT_WORKSPACE},
	    {"timeout", required_argument, NULL, OPT_TIMEOUT},
	    {NULL, 0, NULL, 0}};
	struct shiro_pass p = {NULL, 0, NULL};
	int rc, k;

	shiro_pass_add(&p, NULL);
	rc = shiro_parse(
	    s, shiro_find("run"), argc, argv, opts, shiro_pass_opt, &p, 1);
	if (rc >= 0)
		goto out;
	if (optind >= argc) {
		rc = shiro_usage_error(
		    "run", "name the command to run, after --");
		goto out;
	}
	if (shiro_is_remote(s)) {
#ifdef SHIRO_FRONT
		rc = shiro_front_exec(s, argc, argv);
#else
		rc = shiro_run_remote(s, &p, argc, argv);
#endif
		goto out;
	}
	shiro_pass_add(&p, "--");
	for (k = optind; k < argc; k++)
		shiro_pass_add(&p, argv[k]);
	rc = helper_exec(s, "shiro-jail", p.argv);
out:
	free(p.argv);
	return rc;
}

/*
 * shiro_run_doctor - shiro doctor [--json]: what the jail can use here
 * (shiro-jail --doctor), then which providers serve turns and
 * compactions with this environment and whether they answer (shirod
 * --doctor).  With --json, one object {"jail": ..., "models": ...}.
 */
static int
shiro_run_doctor(struct shiro *s, int argc, char **argv)
{
	char *jargv[4] = {NULL, "--doctor", NULL, NULL};
	char *dargv[6] = {NULL, "--home", s->home, "--doctor", NULL, NULL};
	struct buf jail = BUF_INIT, models = BUF_INIT;
	int rc, jrc, mrc;

	rc = shiro_parse(
	    s, shiro_find("doctor"), argc, argv, NULL, NULL, NULL, 0);
	if (rc < 0)
		rc = shiro_here_only(s, "doctor");
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return shiro_usage_error(
		    "doctor", "doctor takes no operand ('%s')", argv[optind]);
	if (s->json) {
		jargv[2] = "--json";
		dargv[4] = "--json";
	}
	jrc = helper_run(s, "shiro-jail", jargv, s->json ? &jail : NULL);
	if (!s->json)
		fputs("\n", stdout);
	mrc = helper_run(s, "shirod", dargv, s->json ? &models : NULL);
	if (s->json) {
		/* Each helper printed one JSON object on one line. */
		while (jail.len > 0 && jail.data[jail.len - 1] == '\n')
			buf_truncate(&jail, jail.len - 1);
		while (models.len > 0 && models.data[models.len - 1] == '\n')
			buf_truncate(&models, models.len - 1);
		printf("{\"jail\":%s,\"models\":%s,\"ok\":%s}\n",
		    jail.len ? jail.data : "null",
		    models.len ? models.data : "null",
		    jrc == 0 && mrc == 0 ? "true" : "false");
	}
	buf_free(&jail);
	buf_free(&models);
	/* The first helper that found a problem gives the exit code. */
	return jrc != 0 ? jrc : mrc;
}

/* shiro_tool_opt - the options of tool: --workspace DIR, --list. */
static int
shiro_tool_opt(void *arg, int c, const char *optarg)
{
	struct shiro_pass *p = arg;

	if (c != OPT_LIST)
		return shiro_pass_opt(arg, c, optarg);
	p->gist = "--list"; /* the one flag tool keeps here */
	return 0;
}

/* shiro_run_tool - shiro tool NAME JSON [--workspace DIR] | --list. */
static int
shiro_run_tool(struct shiro *s, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"workspace", required_argument, NULL, OPT_WORKSPACE},
	    {"list", no_argument, NULL, OPT_LIST}, {NULL, 0, NULL, 0}};
	struct shiro_pass p = {NULL, 0, NULL}, ws = {NULL, 0, NULL};
	int rc, k;

	rc = shiro_parse(
	    s, shiro_find("tool"), argc, argv, opts, shiro_tool_opt, &ws, 0);
	if (rc >= 0)
		goto out;
	shiro_pass_add(&p, NULL);
	if (ws.gist != NULL) {
		if (argc - optind != 0 || ws.argc != 0) {
			rc = shiro_usage_error(
			    "tool", "--list takes no other argument");
			goto out;
		}
		shiro_pass_add(&p, "--list");
		rc = helper_exec(s, "shiro-tool-worker", p.argv);
		goto out;
	}
	if (argc - optind != 2) {
		rc = shiro_usage_error("tool",
		    "give the tool's NAME and its arguments as one JSON "
		    "object ('shiro tool --list' lists the tools)");
		goto out;
	}
	if (shiro_is_remote(s)) {
#ifdef SHIRO_FRONT
		rc = shiro_front_exec(s, argc, argv);
#else
		const char *dir = shiro_remote_ws(
		    s, "tool", ws.argc == 2 ? ws.argv[1] : NULL);

		if (dir == NULL)
			rc = SHIRO_EXIT_USAGE;
		else if (!utf8_valid(argv[optind], strlen(argv[optind])) ||
		    !utf8_valid(argv[optind + 1], strlen(argv[optind + 1])))
			rc = shiro_usage_error("tool",
			    "the tool's name and arguments must be UTF-8 "
			    "text");
		else
			rc = run_remote(
			    s, argv[optind], argv[optind + 1], dir, 0);
#endif
		goto out;
	}
	shiro_pass_add(&p, "--once");
	shiro_pass_add(&p, argv[optind]);
	shiro_pass_add(&p, argv[optind + 1]);
	for (k = 0; k < ws.argc; k++)
		shiro_pass_add(&p, ws.argv[k]);
	rc = helper_exec(s, "shiro-tool-worker", p.argv);
out:
	free(p.argv);
	free(ws.argv);
	return rc;
}

/* shiro_run_help - shiro help [COMMAND]. */
static int
shiro_run_help(struct shiro *s, int argc, char **argv)
{
	const struct shiro_cmd *c;

	(void)s;
	if (argc >= 2 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return shiro_cmd_help(shiro_find("help"));
	if (argc > 2)
		return shiro_usage_error("help", "help takes one command");
	if (argc < 2) {
		printf("%s%s", shiro_usage, shiro_help);
		return SHIRO_EXIT_OK;
	}
	c = shiro_find(argv[1]);
	if (c == NULL)
		return shiro_usage_error(
		    NULL, "there is no command '%s'", argv[1]);
	return shiro_cmd_help(c);
}

static const struct shiro_cmd shiro_cmds[] = {
    {"send", SHIRO_DAEMON_CMD(shiro_run_send),
	"send [--kind user|note] [--json] [--workspace DIR] [TEXT...]",
	"Appends TEXT (the operands joined by spaces, or all of stdin when\n"
	"there are none) to the chat as one message of kind user (default)\n"
	"or note, without starting a turn, and prints the message's id once\n"
	"it is on disk.  The same key is sent again on a retry, so a message\n"
	"is never logged twice.  --json prints the daemon's answer as JSON.\n"
	"A message is UTF-8 text: one that is empty, only white space, or\n"
	"holds a NUL byte is refused (exit 2).  Text may start with a dash\n"
	"('- a list item'); after -- nothing is an option.\n"
	"Starts shirod when none runs (unless --no-start).\n"},
    {"status", SHIRO_DAEMON_CMD(shiro_run_simple), "status [--json]",
	"Prints the daemon's state: the number of messages, the sizes of the\n"
	"view and of the compaction view, unbuilt and in-flight nodes, the\n"
	"workers by role and provider with their state, queue depths and\n"
	"failures.  --json prints the document as one JSON object.\n"
	"Never starts shirod: exit code 3 when none runs.\n"},
    {"memory", SHIRO_DAEMON_CMD(shiro_run_memory),
	"memory [--json] [zoom ID N]",
	"Prints the status and every line of the view, oldest first, each as\n"
	"ID+N|summary.  'memory zoom ID N' is 'shiro zoom ID N'.\n"
	"--json prints the document as one JSON object.\n"
	"Starts shirod when none runs (unless --no-start), as send does.\n"},
    {"zoom", SHIRO_DAEMON_CMD(shiro_run_zoom), "zoom [--json] ID N",
	"Prints what node ID+N covers: its two halves' summaries, or the\n"
	"message itself when N is 1.  N is a power of two and ID a multiple\n"
	"of it, as in the view's ID+N names.  --json prints one JSON object.\n"
	"Starts shirod when none runs (unless --no-start), as send does.\n"},
    {"log", SHIRO_DAEMON_CMD(shiro_run_log), "log [--tail N] [--json]",
	"Prints the chat's latest messages, word for word, oldest first (the\n"
	"last N with --tail; by default as many as the daemon gives).\n"
	"--json prints one JSON object.  Starts shirod when none runs\n"
	"(unless --no-start), as send does.\n"},
    {"notes", SHIRO_DAEMON_CMD(shiro_run_simple),
	"notes [--json] [--workspace DIR]",
	"Prints the notes the agent keeps on this project (the current\n"
	"directory): kind, hits, date and text, the most used first, as the\n"
	"turns rank them (the first 20 go with every turn).  --json prints\n"
	"the daemon's document as one JSON object.  Starts shirod when none\n"
	"runs (unless --no-start), as send does.\n"},
    {"todos", SHIRO_DAEMON_CMD(shiro_run_simple),
	"todos [--json] [--workspace DIR]",
	"Prints the agent's task list for this project (the current\n"
	"directory) with its progress bar, as the model sees it.  --json\n"
	"prints the daemon's document as one JSON object.  Starts shirod\n"
	"when none runs (unless --no-start), as send does.\n"},
    {"stop", SHIRO_DAEMON_CMD(shiro_run_simple), "stop [--json]",
	"Asks the daemon to stop: it finishes writing, closes the store and\n"
	"exits.  Attached clients are told.  Never starts shirod.\n"},
    {"attach", SHIRO_DAEMON_CMD(shiro_run_attach),
	"attach [tcp://HOST:PORT | REMOTE] [--server-key KEY] [--save NAME]\n"
	"       [--workspace DIR]",
	"Attaches as 'shiro' alone does: to the local shirod without a\n"
	"target, else to the shirod at tcp://HOST:PORT, whose public key\n"
	"--server-key gives (the 40 characters 'shiro keys' prints on its\n"
	"machine, in single quotes), or to the remote saved as REMOTE.\n"
	"Over tcp the client speaks CURVE with its own key pair\n"
	"(HOME/keys/client.key, made on first use), which shirod's machine\n"
	"must admit: shiro keys add client NAME KEY there.  --save NAME\n"
	"keeps the endpoint and key as remote NAME once shirod answered;\n"
	"then 'shiro attach NAME' or 'shiro --remote NAME COMMAND'.\n"
	"Over tcp the turns' workspace is --workspace DIR, a directory on\n"
	"shirod's machine (saved with the remote by --save), never this\n"
	"machine's working directory.\n"
	"A remote shirod is never started from here.  See docs/remote.md.\n"},
    {"keys", SHIRO_DAEMON_CMD(shiro_run_keys),
	"keys [--json] | keys add client|worker NAME KEY | keys revoke "
	"client|worker NAME",
	"Without a subcommand: shirod's public key for its tcp endpoints\n"
	"(made on first use in HOME/keys/server.key), this machine's own\n"
	"client key, and the client and worker keys admitted over tcp,\n"
	"each with its name and fingerprint.  'add' admits the public KEY\n"
	"another machine printed (its 'shiro keys' or 'shiro-worker\n"
	"--show-key') as NAME; 'revoke' removes it.  A running shirod reads\n"
	"the lists every second: a revoked key's connections are closed\n"
	"within a second or two.  See docs/remote.md.\n"},
    {"fsck", shiro_run_store, "fsck [--repair]",
	"Checks the chat on disk (messages, tree, view) with shiro-store and\n"
	"reports damage only.  On a home a running shirod owns it checks\n"
	"what was on disk when it began (docs/store.md says what that\n"
	"covers); --repair fixes what can be fixed, while shirod is "
	"stopped.\n"},
    {"export", shiro_run_store, "export --gist DIR",
	"Writes the chat into DIR in the gist's layout (messages and tree\n"
	"as JSONL files), with shiro-store.\n"},
    {"import", shiro_run_store, "import --gist DIR",
	"Reads a chat in the gist's layout from DIR into this home, with\n"
	"shiro-store.  Run it while shirod is stopped.\n"},
    {"run", shiro_run_run,
	"run [--net] [--workspace DIR] [--timeout S] -- CMD [ARGS...]",
	"Runs CMD in the tool jail with shiro-jail, as the model's tools run:\n"
	"no network unless --net, DIR (default: the current directory)\n"
	"writable, the rest of the system read-only, killed after S seconds.\n"
	"The exit code is the command's.\n"
	"With a shirod on another machine (--remote NAME, or a tcp://\n"
	"endpoint) CMD runs there instead, in its tool jail, in DIR on that\n"
	"machine (--workspace, else the saved remote's workspace), without\n"
	"network, killed after S seconds (1-600, default 120); its output\n"
	"(stdout and stderr as one stream) comes back as it is printed.\n"
	"Ctrl-C stops it there.  See docs/remote.md.\n"},
    {"doctor", shiro_run_doctor, "doctor [--json]",
	"Reports what the jail can use on this machine (namespaces, seccomp,\n"
	"Landlock, rlimits) with shiro-jail --doctor, then which provider\n"
	"serves turns and compactions with this environment and config.json,\n"
	"and whether its endpoint answers (shirod --doctor).  --json prints\n"
	"one object: {\"jail\": ..., \"models\": ..., \"ok\": ...}.\n"},
    {"tool", shiro_run_tool, "tool NAME JSON [--workspace DIR] | tool --list",
	"Runs one call of tool NAME with the arguments JSON (an object) the\n"
	"way the model's calls run, with shiro-tool-worker --once, and prints\n"
	"its result.  --list prints every tool with its arguments' schema.\n"
	"With a shirod on another machine (--remote NAME, or a tcp://\n"
	"endpoint) the call runs there, in DIR on that machine (--workspace,\n"
	"else the saved remote's workspace).  See docs/remote.md.\n"},
    {"help", shiro_run_help, "help [COMMAND]",
	"Prints the help of COMMAND, or the list of commands.\n"},
};

/* shiro_find - the command called name, or NULL. */
static const struct shiro_cmd *
shiro_find(const char *name)
{
	size_t k;

	for (k = 0; k < sizeof(shiro_cmds) / sizeof(shiro_cmds[0]); k++)
		if (strcmp(shiro_cmds[k].name, name) == 0)
			return &shiro_cmds[k];
	return NULL;
}

/* shiro_abs - path made absolute against the working directory. */
static char *
shiro_abs(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return xstrdup(path);
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return xstrdup(path);
	return xasprintf("%s/%s", cwd, path);
}

/* shiro_resolve - the home, the endpoint and this binary's directory. */
static int
shiro_resolve(struct shiro *s)
{
	const char *env;
	char *home;
	struct passwd *pw;
#ifndef SHIRO_FRONT
	int rc;
#endif

	if (s->home == NULL) {
		env = getenv("SHIRO_HOME");
		if (env != NULL && env[0] != '\0') {
			s->home = xstrdup(env);
		} else {
			env = getenv("HOME");
			if (env == NULL || env[0] == '\0') {
				pw = getpwuid(getuid());
				env = pw != NULL ? pw->pw_dir : NULL;
			}
			if (env == NULL) {
				fprintf(stderr,
				    "shiro: no home directory is known; "
				    "give the chat home with --home DIR or "
				    "SHIRO_HOME.\n");
				return SHIRO_EXIT_USAGE;
			}
			s->home = xasprintf("%s/.shiro", env);
		}
	}
	home = shiro_abs(s->home);
	free(s->home);
	s->home = home;
	while (strlen(s->home) > 1 && s->home[strlen(s->home) - 1] == '/')
		s->home[strlen(s->home) - 1] = '\0';
#ifndef SHIRO_FRONT
	if ((rc = remote_resolve(s)) >= 0)
		return rc;
#endif
	if (s->endpoint == NULL) {
		env = getenv("SHIRO_ENDPOINT");
		s->endpoint = env != NULL && env[0] != '\0'
		    ? xstrdup(env)
		    : xasprintf("ipc://%s/run/shirod.sock", s->home);
	}
	if (strncmp(s->endpoint, "ipc://", 6) == 0)
		s->sock_path = xstrdup(s->endpoint + 6);
	s->self_dir = path_self_dir(NULL);
	s->resolved = 1;
	return -1;
}

/* shiro_free - release the resolved options. */
static void
shiro_free(struct shiro *s)
{
	free(s->home);
	free(s->endpoint);
	free(s->sock_path);
	free(s->self_dir);
	free(s->workspace);
	free(s->remote_ws);
#ifndef SHIRO_FRONT
	remote_free(s);
#else
	free(s->server_key);
	free(s->remote);
#endif
}

/* The headless mode, -p, described like a command. */
static const struct shiro_cmd shiro_print_cmd = {"-p", NULL,
    "-p [--json] [--yolo] [--workspace DIR] [TEXT...]",
    "Sends TEXT (the operands joined by spaces, or all of stdin when\n"
    "there are none) as a user message that starts a turn, prints the\n"
    "reply's text on stdout (tool calls on stderr) and exits.  --json\n"
    "prints every event of the turn as one JSON object per line\n"
    "instead.  A tool call that would ask for approval is denied, as\n"
    "nobody answers here; --yolo allows it instead (never past a deny\n"
    "rule or the guard).  The workspace is the working directory, or\n"
    "--workspace DIR (over tcp: a directory on shirod's machine, else\n"
    "the saved remote's, else none).  Ctrl-C interrupts the running\n"
    "command, a second Ctrl-C the turn.  Exit codes: 0 completed, 7 completed "
    "but\n"
    "a tool call was denied, 8 stopped (interrupted, or shirod\n"
    "stopped), 9 a limit ended the turn, 10 the jail is unavailable,\n"
    "4 no model is configured for turns (the message is logged and\n"
    "summarized all the same), 5 the model failed, 6 the provider is\n"
    "unreachable, 3 no daemon answered.\n"};

#ifndef SHIRO_FRONT
/* shiro_print_opt - the options of -p besides the global ones. */
static int
shiro_print_opt(void *arg, int c, const char *optarg)
{
	struct shiro *s = arg;

	(void)optarg;
	if (c != OPT_YOLO)
		return -1;
	s->yolo = 1;
	return 0;
}

/* shiro_print_mode - shiro -p [--json] [--yolo] [TEXT...]. */
static int
shiro_print_mode(struct shiro *s, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"yolo", no_argument, NULL, OPT_YOLO}, SHIRO_WS_LONGOPT,
	    {NULL, 0, NULL, 0}};
	char *text;
	int rc;

	rc = shiro_parse(
	    s, &shiro_print_cmd, argc, argv, opts, shiro_print_opt, s, 0);
	if (rc >= 0)
		return rc;
	text = shiro_text("-p", argc - optind, argv + optind);
	if (text == NULL)
		return SHIRO_EXIT_USAGE;
	rc = cmd_print(s, text);
	free(text);
	return rc;
}

#else
/* shiro_front_exec - hand the whole command line to shiro-client. */
static int
shiro_front_exec(struct shiro *s, int argc, char **argv)
{
	char *path;

	(void)argc;
	(void)argv;
	path = helper_find(s, "shiro-client");
	if (path == NULL)
		return SHIRO_EXIT_NO_HELPER;
	execv(path, shiro_argv);
	fprintf(stderr,
	    "shiro: cannot run %s: %s\n"
	    "It is part of shiro; run 'make' again or reinstall shiro.\n",
	    path, strerror(errno));
	free(path);
	return SHIRO_EXIT_NO_HELPER;
}

/* shiro_print_mode - in the front, -p belongs to shiro-client. */
#define shiro_print_mode shiro_front_exec
/* attach_run - in the front, attaching belongs to shiro-client. */
#define attach_run(s) shiro_front_exec((s), 0, NULL)
#endif

/* main - parse the global options and run the command. */
int
main(int argc, char **argv)
{
	static const struct option longopts[] = {SHIRO_GLOBAL_LONGOPTS,
	    SHIRO_WS_LONGOPT, {"print", no_argument, NULL, 'p'},
	    {"yolo", no_argument, NULL, OPT_YOLO},
	    {"version", no_argument, NULL, OPT_VERSION}, {NULL, 0, NULL, 0}};
	struct shiro s;
	const struct shiro_cmd *cmd;
	int c, rc, print = 0;
	char bad[64];

#ifdef SHIRO_FRONT
	shiro_argv = argv;
#endif
	setlocale(LC_CTYPE, "");
	/* Messages are UTF-8: in the plain C locale (no LANG set) the line
	 * editor would take every non-ASCII key for a bad byte. */
	if (strcmp(nl_langinfo(CODESET), "ANSI_X3.4-1968") == 0)
		(void)setlocale(LC_CTYPE, "C.UTF-8");
	log_init("shiro", LOG_LEVEL_WARN);
	signal(SIGPIPE, SIG_IGN);
	memset(&s, 0, sizeof(s));
	s.autostart = 1;
	s.dead_ms = SHIRO_DEAD_MS;
	opterr = 0;
	/* The global options end at the command, or at text such as
	 * "- a list item" that only starts with a dash. */
	while (optind < argc && shiro_is_option(argv[optind]) &&
	    (c = getopt_long(argc, argv, "+hp", longopts, NULL)) != -1) {
		if (shiro_global_opt(&s, c, optarg))
			continue;
		switch (c) {
		case 'h':
			if (print) {
				rc = shiro_cmd_help(&shiro_print_cmd);
				goto out;
			}
			printf("%s%s", shiro_usage, shiro_help);
			rc = SHIRO_EXIT_OK;
			goto out;
		case 'p':
			print = 1;
			break;
		case OPT_YOLO:
			s.yolo = 1;
			break;
		case OPT_VERSION:
			printf("shiro %s (protocol %s, revision %d)\n",
			    SHIRO_VERSION, MSG_HEADER, MSG_VERSION);
			rc = SHIRO_EXIT_OK;
			goto out;
		default:
			if (optopt != 0)
				snprintf(bad, sizeof(bad), "-%c", optopt);
			else
				snprintf(
				    bad, sizeof(bad), "%s", argv[optind - 1]);
			rc = shiro_usage_error(NULL,
			    "the option %s is unknown or lacks its value (text "
			    "that starts with '-' goes after '--')",
			    bad);
			goto out;
		}
	}
	/* A "--" here is left to -p, whose text follows it; before a
	 * command it only ends the global options. */
	if (!print && optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (s.yolo && !print) {
		rc = shiro_usage_error(
		    NULL, "--yolo goes with -p (a headless turn)");
		goto out;
	}
	rc = shiro_resolve(&s);
	if (rc >= 0)
		goto out;
	if (print) {
		rc = shiro_print_mode(&s, argc - optind + 1, argv + optind - 1);
		goto out;
	}
	if (optind >= argc) {
#ifndef SHIRO_FRONT
		if ((rc = remote_credential(&s)) >= 0)
			goto out;
#endif
		rc = attach_run(&s);
		goto out;
	}
	cmd = shiro_find(argv[optind]);
	if (cmd == NULL) {
		rc = shiro_usage_error(NULL,
		    "there is no command '%s'; 'shiro -p TEXT' sends text",
		    argv[optind]);
		goto out;
	}
	if (s.workspace != NULL && strcmp(cmd->name, "send") != 0 &&
	    strcmp(cmd->name, "notes") != 0 &&
	    strcmp(cmd->name, "todos") != 0 &&
	    strcmp(cmd->name, "attach") != 0) {
		rc = shiro_usage_error(cmd->name,
		    "--workspace goes with -p, send, notes, todos, attach and "
		    "the attached session (run and tool take their own after "
		    "the command)");
		goto out;
	}
	rc = cmd->run(&s, argc - optind, argv + optind);
out:
	shiro_free(&s);
	/* Deliver what the closed connection still queues, its BYE above
	 * all: without it shirod counts this client for the idle limit. */
#ifndef SHIRO_FRONT
	zsock_done();
#endif
	return rc;
}
