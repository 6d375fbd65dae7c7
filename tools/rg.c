#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "sandbox/jail.h"
#include "tools/rg.h"

#define RG_TIMEOUT_MS 60000
#define RG_ERR_MAX 4096

struct rg_run {
	struct buf out, err;
	rg_hit_fn hit;
	void *arg;
	int stop;
};

/* rg_available - nonzero when ctx may run ripgrep. */
int
rg_available(const struct tool_ctx *ctx)
{
	static int found = -1;
	const char *path;
	char *copy, *dir, *save = NULL, *bin;

	if (!ctx->may_exec || ctx->wspath == NULL)
		return 0;
	if (found >= 0)
		return found;
	found = 0;
	path = getenv("PATH");
	copy = xstrdup(path ? path : "/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		bin = xasprintf("%s/rg", dir);
		found = dir[0] == '/' && access(bin, X_OK) == 0;
		free(bin);
	}
	free(copy);
	return found;
}

/* rg_lines - hand the complete lines of r->out to the hit function. */
static void
rg_lines(struct rg_run *r)
{
	size_t start = 0;
	char *nl;

	while (!r->stop && start < r->out.len &&
	    (nl = memchr(r->out.data + start, '\n', r->out.len - start))) {
		char *line = r->out.data + start, *nul, *colon, *end;
		size_t len = (size_t)(nl - line);
		unsigned long no;
		*nl = '\0';
		start += len + 1;
		/* "PATH\0LINE:TEXT" (--null): no ambiguity about colons. */
		nul = memchr(line, '\0', len);
		if (nul == NULL)
			continue;
		no = strtoul(nul + 1, &end, 10);
		colon = end;
		if (*colon != ':')
			continue;
		if (line[0] == '.' && line[1] == '/')
			line += 2;
		r->stop = r->hit(
		    r->arg, line, no, colon + 1, (size_t)(nl - colon - 1));
	}
	if (start > 0) {
		memmove(r->out.data, r->out.data + start, r->out.len - start);
		buf_truncate(&r->out, r->out.len - start);
	}
}

/* rg_output - collect rg's output as it comes. */
static void
rg_output(void *arg, enum jail_stream stream, const char *data, size_t len)
{
	struct rg_run *r = arg;

	if (stream == JAIL_STDERR) {
		if (r->err.len < RG_ERR_MAX)
			buf_add(&r->err, data, len);
		return;
	}
	if (r->stop)
		return;
	buf_add(&r->out, data, len);
	rg_lines(r);
}

/* rg_search - run ripgrep in the jail. */
int
rg_search(const struct tool_ctx *ctx, const char *pattern, const char *rel,
    const char *include, int icase, rg_hit_fn hit, void *arg, char **why)
{
	const char *argv[32];
	char *notglob = NULL;
	struct rg_run r;
	struct jail_spec spec;
	struct jail_result res;
	struct jail *j = NULL;
	int n = 0, rc, done = 0;

	*why = NULL;
	memset(&r, 0, sizeof(r));
	r.hit = hit;
	r.arg = arg;
	argv[n++] = "rg";
	argv[n++] = "--no-config";
	argv[n++] = "--no-messages";
	argv[n++] = "--null";
	argv[n++] = "--line-number";
	argv[n++] = "--with-filename";
	argv[n++] = "--no-heading";
	argv[n++] = "--color=never";
	argv[n++] = "--hidden";
	argv[n++] = "--no-require-git";
	argv[n++] = "--max-filesize=8M";
	argv[n++] = "--glob=!.git";
	argv[n++] = "--sort=path";
	if (icase)
		argv[n++] = "--ignore-case";
	if (include != NULL) {
		notglob = xasprintf("--glob=%s", include);
		argv[n++] = notglob;
	}
	argv[n++] = "--regexp";
	argv[n++] = pattern;
	argv[n++] = "--";
	argv[n++] = rel;
	argv[n] = NULL;
	jail_spec_init(&spec);
	spec.argv = argv;
	spec.workspace = ctx->wspath;
	spec.timeout_ms = RG_TIMEOUT_MS;
	spec.on_output = rg_output;
	spec.on_output_arg = &r;
	spec.cancel = ctx->cancel;
	memset(&res, 0, sizeof(res));
	rc = jail_start(&spec, &j, res.error, sizeof(res.error));
	if (rc < 0)
		goto out;
	while (!done && rc == 0) {
		rc = jail_step(j, 50, &done);
		if (!done && (r.stop || tool_canceled(ctx)))
			jail_cancel(j);
	}
	jail_finish(&j, &res);
	if (r.stop)
		rc = 0; /* we stopped it: the hits are complete */
	else if (res.interrupted || tool_canceled(ctx))
		rc = -SHIRO_ERR_CANCELED;
	else if (res.timed_out)
		rc = -SHIRO_ERR_TIMEOUT;
	else if (res.exited && res.exit_code == 2 && r.out.len == 0 &&
	    r.err.len > 0) {
		/* rg's own message, e.g. for a pattern it cannot parse. */
		*why = xstrndup(r.err.data, r.err.len);
		rc = -SHIRO_ERR_INVAL;
	} else if (res.exited && res.exit_code <= 2) {
		rg_lines(&r);
		rc = 0;
	} else {
		rc = -SHIRO_ERR_FAILED;
	}
out:
	buf_free(&r.out);
	buf_free(&r.err);
	free(notglob);
	return rc;
}
