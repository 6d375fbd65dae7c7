/*
 * shiro-plan - run a planner scenario and print the view after each
 * event: the planner's public test interface (docs/planner.md).
 *
 * Usage: shiro-plan [--final] [FILE]  (standard input without FILE)
 *
 * Input, one event a line, "#" starts a comment:
 *	budget CEIL FLOOR | placeholder SIZE | unit bytes|lines |
 *	order last|first | msg [SIZE] | built L I SIZE | fit B
 * Output, one line per event:
 *	K EVENT | T=.. size=.. shrinking=0|1 batch=0|1 merges=l:i,..|- view l:i[*]..
 * A bad event prints "error: line N: <reason>" on stderr and exits 2.
 * Lines end at "\n" only; "\r" is a blank, as the reference model
 * (tests/planref.py) reads its standard input.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/plan.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"

#define SHIRO_PLAN_MAX_TOKENS 8
/* Blanks between tokens: the ASCII white space and separators. */
#define SHIRO_PLAN_BLANKS " \t\r\n\v\f\x1c\x1d\x1e\x1f"

/* What one scenario run holds. */
struct shiro_plan_run {
	struct plan *plan;
	struct buf line; /* the output line being built */
	const char *why; /* the reason of a bad event */
	int final;
	/* With --final only the last line is printed, and so only it is
	 * formatted, once the scenario is over: its event's number and
	 * tokens and its batch's merges are kept until then (the view is
	 * the planner's at the end, which is the view after that event). */
	uint64_t last_k;
	struct buf last_tok; /* the tokens, each after a space */
	struct plan_node *last_merges;
	size_t last_cap;
	struct plan_batch last_batch;
};

/* shiro_plan_number - parse a decimal token into *v (at most max). */
static int
shiro_plan_number(
    struct shiro_plan_run *r, const char *tok, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	const char *s;

	if (*tok == '\0') {
		r->why = "empty number";
		return -SHIRO_ERR_INVAL;
	}
	for (s = tok; *s != '\0'; s++) {
		if (*s < '0' || *s > '9') {
			r->why = "not a decimal integer";
			return -SHIRO_ERR_INVAL;
		}
		if (x > (max - (uint64_t)(*s - '0')) / 10) {
			r->why = "number too large";
			return -SHIRO_ERR_INVAL;
		}
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

/* shiro_plan_args - check that an event has n arguments. */
static int
shiro_plan_args(struct shiro_plan_run *r, int ntok, int lo, int hi)
{
	if (ntok - 1 < lo || ntok - 1 > hi) {
		r->why = "wrong number of arguments";
		return -SHIRO_ERR_INVAL;
	}
	return 0;
}

/* shiro_plan_built_why - the reason plan_built() refused a node. */
static const char *
shiro_plan_built_why(int rc)
{
	switch (-rc) {
	case SHIRO_ERR_EXIST:
		return "node already built";
	case SHIRO_ERR_NOENT:
		return "node covers messages that do not exist";
	case SHIRO_ERR_STATE:
		return "a child of the node is not built";
	case SHIRO_ERR_INVAL:
		return "level too deep";
	default:
		return err_str(rc);
	}
}

/* shiro_plan_event - apply one event; *batch gets the batch's report. */
static int
shiro_plan_event(
    struct shiro_plan_run *r, char **tok, int ntok, struct plan_batch *batch)
{
	struct plan_settings set = *plan_get_settings(r->plan);
	uint64_t a, b, c;
	int rc;

	memset(batch, 0, sizeof(*batch));
	batch->shrinking = plan_shrinking(r->plan);
	if (strcmp(tok[0], "budget") == 0) {
		if ((rc = shiro_plan_args(r, ntok, 2, 2)) < 0 ||
		    (rc = shiro_plan_number(r, tok[1], UINT64_MAX, &a)) < 0 ||
		    (rc = shiro_plan_number(r, tok[2], UINT64_MAX, &b)) < 0)
			return rc;
		if (b > a) {
			r->why = "floor above ceiling";
			return -SHIRO_ERR_INVAL;
		}
		set.ceiling = a;
		set.floor = b;
		return plan_configure(r->plan, &set);
	}
	if (strcmp(tok[0], "placeholder") == 0) {
		if ((rc = shiro_plan_args(r, ntok, 1, 1)) < 0 ||
		    (rc = shiro_plan_number(r, tok[1], UINT32_MAX, &a)) < 0)
			return rc;
		set.placeholder = (uint32_t)a;
		return plan_configure(r->plan, &set);
	}
	if (strcmp(tok[0], "unit") == 0 || strcmp(tok[0], "order") == 0) {
		int unit = tok[0][0] == 'u';
		const char *one = unit ? "bytes" : "last";
		const char *two = unit ? "lines" : "first";

		if ((rc = shiro_plan_args(r, ntok, 1, 1)) < 0)
			return rc;
		if (strcmp(tok[1], one) != 0 && strcmp(tok[1], two) != 0) {
			r->why = unit ? "unit is bytes or lines"
				      : "order is last or first";
			return -SHIRO_ERR_INVAL;
		}
		if (unit)
			set.unit = strcmp(tok[1], one) == 0 ? PLAN_UNIT_BYTES
							    : PLAN_UNIT_LINES;
		else
			set.order = strcmp(tok[1], one) == 0 ? PLAN_ORDER_LAST
							     : PLAN_ORDER_FIRST;
		return plan_configure(r->plan, &set);
	}
	if (strcmp(tok[0], "msg") == 0) {
		if ((rc = shiro_plan_args(r, ntok, 0, 1)) < 0)
			return rc;
		a = UINT32_MAX;
		if (ntok == 2 &&
		    (rc = shiro_plan_number(r, tok[1], UINT32_MAX, &a)) < 0)
			return rc;
		if ((rc = plan_append(r->plan, ntok == 2, (uint32_t)a)) < 0) {
			r->why = "too many messages";
			return rc;
		}
		return plan_sawtooth(r->plan, batch);
	}
	if (strcmp(tok[0], "built") == 0) {
		if ((rc = shiro_plan_args(r, ntok, 3, 3)) < 0 ||
		    (rc = shiro_plan_number(r, tok[1], UINT64_MAX, &a)) < 0 ||
		    (rc = shiro_plan_number(r, tok[2], UINT64_MAX, &b)) < 0 ||
		    (rc = shiro_plan_number(r, tok[3], UINT32_MAX, &c)) < 0)
			return rc;
		if (a > PLAN_MAX_LEVEL) {
			r->why = "node covers messages that do not exist";
			return -SHIRO_ERR_NOENT;
		}
		rc = plan_built(r->plan, (unsigned)a, b, (uint32_t)c);
		if (rc < 0)
			r->why = shiro_plan_built_why(rc);
		return rc;
	}
	if (strcmp(tok[0], "fit") == 0) {
		if ((rc = shiro_plan_args(r, ntok, 1, 1)) < 0 ||
		    (rc = shiro_plan_number(r, tok[1], UINT64_MAX, &a)) < 0)
			return rc;
		return plan_fit(r->plan, a, batch);
	}
	r->why = "unknown event";
	return -SHIRO_ERR_INVAL;
}

/* shiro_plan_print - the output line of event k, whose tokens are tok
 * (each after a space), to stdout. */
static void
shiro_plan_print(struct shiro_plan_run *r, uint64_t k, const char *tok,
    const struct plan_batch *batch)
{
	const struct plan_line *v;
	struct buf *o = &r->line;
	size_t n, j;

	buf_reset(o);
	buf_printf(o, "%" PRIu64 "%s", k, tok);
	buf_printf(o, " | T=%" PRIu64 " size=%" PRIu64 " shrinking=%d batch=%d",
	    plan_count(r->plan), plan_view_size(r->plan),
	    plan_shrinking(r->plan), batch->ran ? 1 : 0);
	buf_adds(o, " merges=");
	for (j = 0; j < batch->nmerges; j++)
		buf_printf(o, "%s%u:%" PRIu64, j ? "," : "", batch->merges[j].l,
		    batch->merges[j].i);
	if (batch->nmerges == 0)
		buf_addc(o, '-');
	buf_adds(o, " view");
	plan_view(r->plan, &v, &n);
	for (j = 0; j < n; j++)
		buf_printf(o, " %u:%" PRIu64 "%s", v[j].l, v[j].i,
		    v[j].built ? "" : "*");
	buf_addc(o, '\n');
	fwrite(o->data, 1, o->len, stdout);
}

/* shiro_plan_done - event k (tokens tok[0..ntok)) ran with batch: print
 * its line, or with --final keep what its line needs. */
static void
shiro_plan_done(struct shiro_plan_run *r, uint64_t k, char **tok, int ntok,
    const struct plan_batch *batch)
{
	int t;

	buf_reset(&r->last_tok);
	for (t = 0; t < ntok; t++)
		buf_printf(&r->last_tok, " %s", tok[t]);
	if (!r->final) {
		shiro_plan_print(r, k, r->last_tok.data, batch);
		return;
	}
	r->last_k = k;
	if (batch->nmerges > r->last_cap) {
		r->last_cap = batch->nmerges;
		r->last_merges = xreallocarray(
		    r->last_merges, r->last_cap, sizeof(*r->last_merges));
	}
	if (batch->nmerges > 0)
		memcpy(r->last_merges, batch->merges,
		    batch->nmerges * sizeof(*r->last_merges));
	r->last_batch = *batch;
	r->last_batch.merges = r->last_merges;
}

/* shiro_plan_run - play the scenario read from f; the exit status. */
static int
shiro_plan_run(struct shiro_plan_run *r, FILE *f)
{
	char *line = NULL, *tok[SHIRO_PLAN_MAX_TOKENS], *s, *save;
	size_t cap = 0;
	uint64_t lineno = 0, k = 0;
	struct plan_batch batch;
	ssize_t len;
	int ntok, rc = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (memchr(line, '\0', (size_t)len) != NULL) {
			r->why = "NUL byte in the line";
			rc = -SHIRO_ERR_INVAL;
			goto out;
		}
		if ((s = strchr(line, '#')) != NULL)
			*s = '\0';
		ntok = 0;
		for (s = strtok_r(line, SHIRO_PLAN_BLANKS, &save); s != NULL;
		     s = strtok_r(NULL, SHIRO_PLAN_BLANKS, &save)) {
			if (ntok == SHIRO_PLAN_MAX_TOKENS) {
				r->why = "too many tokens";
				rc = -SHIRO_ERR_INVAL;
				goto out;
			}
			tok[ntok++] = s;
		}
		if (ntok == 0)
			continue;
		k++;
		if ((rc = shiro_plan_event(r, tok, ntok, &batch)) < 0)
			goto out;
		shiro_plan_done(r, k, tok, ntok, &batch);
	}
	if (ferror(f)) {
		r->why = strerror(errno);
		rc = -SHIRO_ERR_IO;
	}
out:
	free(line);
	if (rc < 0) {
		fflush(stdout);
		fprintf(stderr, "error: line %" PRIu64 ": %s\n", lineno,
		    r->why ? r->why : err_str(rc));
		return 2;
	}
	if (r->final && r->last_k > 0)
		shiro_plan_print(
		    r, r->last_k, r->last_tok.data, &r->last_batch);
	return fflush(stdout) == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct shiro_plan_run r;
	struct plan_settings set;
	const char *path = NULL;
	FILE *f = stdin;
	int i, status;

	memset(&r, 0, sizeof(r));
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--final") == 0) {
			r.final = 1;
		} else if (path == NULL) {
			path = argv[i];
		} else {
			fprintf(stderr, "usage: shiro-plan [--final] [FILE]\n");
			return 2;
		}
	}
	if (path != NULL && strcmp(path, "-") != 0 &&
	    (f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "shiro-plan: %s: %s\n", path, strerror(errno));
		return 2;
	}
	plan_settings_default(&set);
	/* Scenarios may use any size: no node limit here. */
	set.node_size = UINT32_MAX;
	if (plan_new(&set, &r.plan) < 0) {
		fprintf(stderr, "shiro-plan: bad settings\n");
		return 2;
	}
	status = shiro_plan_run(&r, f);
	if (f != stdin)
		fclose(f);
	plan_destroy(&r.plan);
	buf_free(&r.line);
	buf_free(&r.last_tok);
	free(r.last_merges);
	return status;
}
