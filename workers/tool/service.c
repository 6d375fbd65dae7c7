#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "sandbox/sandbox.h"
#include "tools/tool.h"
#include "workers/tool/service.h"

struct service_run {
	struct worker *w;
	int canceled;
};

/* service_setup - read the command line's options into a cfg kept in
 * w.  Both roles serve one workspace, which they must be given: the fs
 * role's Landlock rule is made of it, and it is the one directory the
 * tool role's view leaves writable. */
static int
service_setup(struct worker *w, int exec)
{
	struct service_cfg *cfg;
	const char *ws = worker_workspace(w);
	char real[PATH_MAX];

	if (ws == NULL || ws[0] == '\0') {
		log_warnx("a%s worker serves one workspace: give --workspace",
		    exec ? " tool" : "n fs");
		return -SHIRO_ERR_INVAL;
	}
	cfg = xcalloc(1, sizeof(*cfg));
	cfg->exec = exec;
	cfg->net = exec && worker_net(w);
	if (realpath(ws, real) == NULL) {
		log_warn("--workspace %s", ws);
		free(cfg);
		return -SHIRO_ERR_NOENT;
	}
	cfg->workspace = xstrdup(real);
	worker_set_data(w, cfg);
	return 0;
}

/* service_emit - stream a piece of bash output to the broker. */
static void
service_emit(void *arg, const char *data, size_t len)
{
	struct service_run *run = arg;

	if (worker_chunk(run->w, data, len) == -SHIRO_ERR_CANCELED)
		run->canceled = 1;
}

/* service_tick - keep heartbeating; nonzero once the job is canceled. */
static int
service_tick(void *arg)
{
	struct service_run *run = arg;

	if (worker_poll(run->w) == -SHIRO_ERR_CANCELED)
		run->canceled = 1;
	return run->canceled;
}

/* service_job - run the job's tool and put its result in result. */
static int
service_job(struct worker *w, const struct msg *job, struct msg *result)
{
	struct service_cfg *cfg = worker_data(w);
	struct service_run run = {w, 0};
	const struct msg_val *data = NULL;
	const struct tool_def *def;
	const char *kind = NULL, *name, *argtext, *ws;
	struct tool_ctx ctx;
	json_error_t jerr;
	json_t *args = NULL, *res = NULL;
	char real[PATH_MAX], *text = NULL;
	int fd = -1, r = -SHIRO_ERR_INVAL;

	if (msg_get_str(job, "kind", &kind, NULL) < 0 ||
	    strcmp(kind, "tool") != 0 || msg_get_map(job, "data", &data) < 0) {
		worker_failure(w, "badjob", false,
		    "a tool job has kind "
		    "\"tool\" and a data map");
		goto out;
	}
	name = msg_val_str(data, "tool");
	argtext = msg_val_str(data, "args");
	ws = msg_val_str(data, "workspace");
	if (name == NULL || argtext == NULL || ws == NULL || ws[0] != '/') {
		worker_failure(w, "badjob", false,
		    "a tool job needs data.tool, "
		    "data.args and an absolute "
		    "data.workspace");
		goto out;
	}
	def = tool_find(name);
	if (def != NULL && def->kind == TOOL_EXEC && !cfg->exec) {
		worker_failure(w, "badjob", false,
		    "%s runs in the tool "
		    "worker, not here",
		    name);
		goto out;
	}
	args = json_loads(argtext, JSON_REJECT_DUPLICATES, &jerr);
	fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || realpath(ws, real) == NULL) {
		worker_failure(w, "workspace", false, "workspace %s: %s", ws,
		    strerror(errno));
		goto out;
	}
	if (strcmp(real, cfg->workspace) != 0) {
		worker_failure(w, "workspace", false,
		    "this worker serves %s, "
		    "not %s",
		    cfg->workspace, real);
		goto out;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.wsfd = fd;
	ctx.wspath = real;
	ctx.may_exec = cfg->exec;
	ctx.net = cfg->net;
	ctx.emit = service_emit;
	ctx.emit_arg = &run;
	ctx.tick = service_tick;
	ctx.tick_arg = &run;
	if (args == NULL)
		res = tool_error("the arguments are not JSON: %s", jerr.text);
	else if (tool_call(name, args, &ctx, &res) < 0 || res == NULL) {
		worker_failure(w, "internal", false, "the tool could not run");
		goto out;
	}
	if (run.canceled) {
		worker_failure(w, "canceled", false, "%s",
		    json_string_value(json_object_get(res, "error"))
			? json_string_value(json_object_get(res, "error"))
			: "canceled; the call's effects are unknown");
		r = -SHIRO_ERR_CANCELED;
		goto out;
	}
	text = json_dumps(res, JSON_COMPACT);
	msg_set_str(result, "text", text);
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	json_decref(args);
	json_decref(res);
	free(text);
	return r;
}

/* service_setup_fs - the fs role never runs commands. */
static int
service_setup_fs(struct worker *w)
{
	return service_setup(w, 0);
}

/* service_setup_tool - the tool role runs bash in the jail. */
static int
service_setup_tool(struct worker *w)
{
	return service_setup(w, 1);
}

const struct worker_role service_fs_role = {
    .role = "fs",
    .provider = "fs",
    .jobs = 1,
    .setup = service_setup_fs,
    /* The workspace only; no exec, no socket (sandbox.h). */
    .sandbox = SANDBOX_ROLE_FS,
    .service = service_job,
};

const struct worker_role service_tool_role = {
    .role = "tool",
    .provider = "jail",
    .jobs = 1,
    .setup = service_setup_tool,
    /* Only jailed children; the secrets covered (sandbox.h). */
    .sandbox = SANDBOX_ROLE_TOOL,
    .service = service_job,
};
