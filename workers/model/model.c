/*
 * model.c - shiro-model-worker: the model role on the worker skeleton.
 *
 * main() takes the model's own options off the command line (the wire,
 * its base URL, jobs at once, deadlines, retries, the response cap, the
 * probe) and hands the rest to worker_main().  The role is asynchronous:
 * its jobs run in loop.c, several at once.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "sandbox/sandbox.h"
#include "workers/model/loop.h"
#include "workers/model/model.h"
#include "workers/model/probe.h"
#include "workers/worker.h"

static struct model_opts model_opts = {
    .wire = NULL,
    .wire_name = NULL,
    .base_url = NULL,
    .jobs = MODEL_JOBS_DEFAULT,
    .connect_ms = MODEL_CONNECT_MS,
    .idle_ms = MODEL_IDLE_MS,
    .total_ms = MODEL_TOTAL_MS,
    .max_retries = 2,
    .max_bytes = MODEL_MAX_BYTES,
};

/* model_setup - the loop for this worker's wire (before the jail). */
static int
model_setup(struct worker *w)
{
	struct model_opts *o = &model_opts;
	struct loop *lp;
	int rc;

	if (o->wire_name == NULL) {
		/* No --wire: the provider's name must be a wire. */
		o->wire_name = worker_provider(w);
		o->wire = model_wire_of(o->wire_name);
		if (o->wire == NULL && strcmp(o->wire_name, "offline") != 0) {
			log_warnx("provider %s: give its wire with --wire "
				  "(offline, anthropic, openai-responses, "
				  "openai-chat)",
			    o->wire_name);
			return -SHIRO_ERR_NOENT;
		}
	}
	if ((rc = loop_new(w, o, &lp)) < 0) {
		log_warnx("libcurl would not start");
		return rc;
	}
	worker_set_data(w, lp);
	return 0;
}

/*
 * model_lockdown - the model role's jail: network sockets (to reach the
 * providers) but no execve and no file writes (sandbox.h).
 */
static int
model_lockdown(struct worker *w)
{
	(void)w;
#if defined(__SANITIZE_ADDRESS__)
	/* ASan's leak check stops the world with ptrace, which the filter
	 * refuses: sanitizer builds (tests only) run without the jail. */
	log_info("sanitizer build: the model worker runs without its jail");
	return 0;
#else
	return sandbox_lockdown(SANDBOX_ROLE_MODEL, NULL);
#endif
}

static struct worker_role model_role = {
    .role = "model",
    .provider = "offline",
    .jobs = MODEL_JOBS_DEFAULT,
    .setup = model_setup,
    .lockdown = model_lockdown,
    .async = &loop_async,
};

/* model_usage - the model's own options, before the skeleton's. */
static void
model_usage(FILE *fp)
{
	fprintf(fp,
	    "The model worker's own options:\n"
	    "  --wire W                 offline (default), anthropic,\n"
	    "                           openai-responses or openai-chat\n"
	    "  --base-url URL           the endpoint without its path\n"
	    "                           (default: the wire's official one)\n"
	    "  --jobs N                 calls at once, 1 to %d (default %d)\n"
	    "  --connect-timeout-ms N   connect deadline (default %d)\n"
	    "  --idle-timeout-ms N      no byte for this long fails a call\n"
	    "                           (default %d)\n"
	    "  --total-timeout-ms N     a job's whole deadline (default %d)\n"
	    "  --max-retries N          retries of a call (default 2)\n"
	    "  --max-response-bytes N   cap on one response (default %u)\n"
	    "  --probe                  GET the endpoint once, print whether\n"
	    "                           it answered, exit 0 if it did\n",
	    WORKER_JOBS_MAX, MODEL_JOBS_DEFAULT, MODEL_CONNECT_MS,
	    MODEL_IDLE_MS, MODEL_TOTAL_MS, MODEL_MAX_BYTES);
}

/* model_number - a number option within [min, max], or exit with usage. */
static long long
model_number(const char *opt, const char *s, long long min, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || v < min || v > max) {
		fprintf(stderr, "%s: not a number from %lld to %lld: %s\n", opt,
		    min, max, s);
		exit(WORKER_EXIT_USAGE);
	}
	return v;
}

/*
 * model_option - if argv[*k] is one of the model's options, take it (and
 * its value) and return true.
 */
static bool
model_option(int argc, char **argv, int *k, bool *probe)
{
	static const char *const names[] = {"--wire", "--base-url", "--jobs",
	    "--connect-timeout-ms", "--idle-timeout-ms", "--total-timeout-ms",
	    "--max-retries", "--max-response-bytes", NULL};
	struct model_opts *o = &model_opts;
	const char *a = argv[*k], *v = NULL;
	size_t k2, nl;

	if (strcmp(a, "--probe") == 0) {
		*probe = true;
		return true;
	}
	for (k2 = 0; names[k2] != NULL; k2++) {
		nl = strlen(names[k2]);
		if (strncmp(a, names[k2], nl) == 0 &&
		    (a[nl] == '\0' || a[nl] == '='))
			break;
	}
	if (names[k2] == NULL)
		return false;
	if (a[nl] == '=') {
		v = a + nl + 1;
	} else if (*k + 1 < argc) {
		v = argv[++*k];
	} else {
		fprintf(stderr, "%s needs a value\n", names[k2]);
		exit(WORKER_EXIT_USAGE);
	}
	switch (k2) {
	case 0:
		o->wire_name = v;
		o->wire = model_wire_of(v);
		if (o->wire == NULL && strcmp(v, "offline") != 0) {
			fprintf(stderr, "--wire: unknown wire %s\n", v);
			exit(WORKER_EXIT_USAGE);
		}
		break;
	case 1:
		if (strncmp(v, "http://", 7) != 0 &&
		    strncmp(v, "https://", 8) != 0) {
			fprintf(
			    stderr, "--base-url: not an http(s) URL: %s\n", v);
			exit(WORKER_EXIT_USAGE);
		}
		o->base_url = v;
		break;
	case 2:
		o->jobs = (unsigned)model_number(a, v, 1, WORKER_JOBS_MAX);
		break;
	case 3:
		o->connect_ms = (long)model_number(a, v, 1, INT_MAX);
		break;
	case 4:
		o->idle_ms = (long)model_number(a, v, 1, INT_MAX);
		break;
	case 5:
		o->total_ms = (long)model_number(a, v, 1, INT_MAX);
		break;
	case 6:
		o->max_retries = (unsigned)model_number(a, v, 0, 10);
		break;
	case 7:
		o->max_bytes = (uint64_t)model_number(a, v, 1024, 1LL << 30);
		break;
	}
	return true;
}

/* main - run the model worker (or its probe). */
int
main(int argc, char **argv)
{
	char **rest = xreallocarray(NULL, (size_t)argc + 1, sizeof(*rest));
	bool probe = false;
	int k, n = 0;

	rest[n++] = argv[0];
	for (k = 1; k < argc; k++) {
		if (strcmp(argv[k], "--help") == 0)
			model_usage(stdout);
		if (!model_option(argc, argv, &k, &probe))
			rest[n++] = argv[k];
	}
	rest[n] = NULL;
	if (probe) {
		if (model_opts.wire_name == NULL)
			model_opts.wire_name = "offline";
		free(rest);
		return probe_run(&model_opts);
	}
	model_role.jobs = model_opts.jobs;
	return worker_main(n, rest, &model_role);
}
