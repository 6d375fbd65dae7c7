/*
 * once.c - the standalone mode of the tool worker:
 *
 *	shiro-tool-worker --once NAME JSON [--workspace DIR]
 *
 * runs one catalogue tool (a file tool or bash, which still runs in the
 * jail) and prints its result document as one line of JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "tools/tool.h"
#include "workers/tool/once.h"

static volatile sig_atomic_t once_cancel;

/* once_on_signal - an interrupt cancels the running tool. */
static void
once_on_signal(int sig)
{
	(void)sig;
	once_cancel = 1;
}

/* once_usage - print the usage to f. */
void
once_usage(FILE *f)
{
	fputs("usage: shiro-tool-worker --once NAME JSON [--workspace DIR]\n"
	      "       shiro-tool-worker --list\n"
	      "       shiro-tool-worker [--endpoint URL] [--heartbeat-ms N] "
	      "[--give-up-ms N]\n"
	      "\n"
	      "--once runs one tool of the catalogue without a model and\n"
	      "prints its result as one line of JSON: {\"ok\": true, ...} or\n"
	      "{\"ok\": false, \"error\": \"...\"}.  File tools work beneath "
	      "the\n"
	      "workspace (default: the current directory); bash runs in the\n"
	      "tool jail.  The permission rules are not applied: this is a\n"
	      "person's command.  --list prints every tool with its schema.\n"
	      "Without these options it is the worker that shirod starts\n"
	      "(docs/tools.md).\n"
	      "\n"
	      "Exit status of --once: 0 the tool ran (even if its result is\n"
	      "an error), 2 bad usage (unknown tool, JSON that does not\n"
	      "parse, a missing argument), 3 the workspace cannot be opened\n"
	      "or the process cannot be locked down.\n",
	    f);
}

/*
 * once_puts - print a JSON text and a newline with DEL and the C1
 * controls (U+0080-U+009F), which jansson leaves raw, written as \u
 * escapes: the same JSON, and a tool's output never drives the terminal
 * of the person who runs shiro tool (jansson escapes the other controls
 * already).
 */
static void
once_puts(const char *text)
{
	const unsigned char *p = (const unsigned char *)text;

	for (; *p != '\0'; p++) {
		if (*p == 0x7f)
			fputs("\\u007f", stdout);
		else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
			printf("\\u%04x", *++p);
		else
			putchar(*p);
	}
	putchar('\n');
}

/* once_main - run the standalone mode on argv; returns the exit status. */
int
once_main(int argc, char **argv)
{
	const char *name = NULL, *json = NULL, *ws = ".";
	const struct tool_def *def;
	struct tool_ctx ctx;
	struct sigaction sa;
	json_error_t jerr;
	json_t *args = NULL, *result = NULL;
	char real[PATH_MAX];
	int i, fd = -1, rc = 0, list = 0;
	char *text;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0 && i + 2 < argc &&
		    name == NULL) {
			name = argv[++i];
			json = argv[++i];
		} else if (strcmp(argv[i], "--workspace") == 0 &&
		    i + 1 < argc) {
			ws = argv[++i];
		} else if (strcmp(argv[i], "--list") == 0) {
			list = 1;
		} else if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			once_usage(stdout);
			return 0;
		} else {
			fprintf(stderr,
			    "shiro-tool-worker: unexpected argument "
			    "\"%s\"\n",
			    argv[i]);
			once_usage(stderr);
			return ONCE_EXIT_USAGE;
		}
	}
	if (list) {
		json_t *s = tool_schemas();
		text = json_dumps(s, JSON_INDENT(2));
		puts(text);
		free(text);
		json_decref(s);
		return 0;
	}
	if (name == NULL) {
		once_usage(stderr);
		return ONCE_EXIT_USAGE;
	}
	if (tool_find(name) == NULL) {
		fprintf(stderr,
		    "shiro-tool-worker: no tool named \"%s\" (try "
		    "--list)\n",
		    name);
		return ONCE_EXIT_USAGE;
	}
	args = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(args)) {
		fprintf(stderr,
		    "shiro-tool-worker: the arguments must be a "
		    "JSON object: %s\n",
		    args ? "not an object" : jerr.text);
		rc = ONCE_EXIT_USAGE;
		goto out;
	}
	fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || realpath(ws, real) == NULL) {
		fprintf(stderr, "shiro-tool-worker: workspace %s: %s\n", ws,
		    strerror(errno));
		rc = ONCE_EXIT_WORKSPACE;
		goto out;
	}
	/* The same confinement as the workers: a file tool may not exec
	 * or use the network and (with Landlock) touches only the
	 * workspace; bash only spawns jailed children. */
	def = tool_find(name);
	if (sandbox_lockdown(
		def->kind == TOOL_EXEC ? SANDBOX_ROLE_TOOL : SANDBOX_ROLE_FS,
		real) < 0) {
		fprintf(stderr,
		    "shiro-tool-worker: cannot lock this process "
		    "down; refusing to run unconfined\n");
		rc = ONCE_EXIT_WORKSPACE;
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = once_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	memset(&ctx, 0, sizeof(ctx));
	ctx.wsfd = fd;
	ctx.wspath = real;
	ctx.may_exec = def->kind == TOOL_EXEC; /* as locked down above */
	ctx.cancel = &once_cancel;
	if (tool_call(name, args, &ctx, &result) < 0 || result == NULL) {
		fprintf(stderr, "shiro-tool-worker: the tool could not run\n");
		rc = ONCE_EXIT_WORKSPACE;
		goto out;
	}
	text = json_dumps(result, JSON_COMPACT);
	once_puts(text);
	free(text);
out:
	if (fd >= 0)
		close(fd);
	json_decref(args);
	json_decref(result);
	fflush(stdout);
	/* After the lockdown /proc and ptrace are out of reach, which a
	 * leak checker run at exit() needs; everything is released. */
	_exit(rc);
}
