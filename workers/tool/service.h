/*
 * service.h - the service function of the tool and fs workers: one JOB
 * runs one catalogue tool.
 *
 * A job is {kind: "tool", data: {tool: NAME, args: JSON text of the
 * arguments, workspace: absolute path}}.  Its RESULT's text is the
 * tool's result document as JSON text (docs/tools.md); bash streams its
 * output in CHUNKs as it comes.  A CANCEL kills a running command: the
 * job then FAILs with code "canceled" and a text saying that the
 * command's effects are unknown.
 */
#ifndef SHIRO_WORKERS_TOOL_SERVICE_H
#define SHIRO_WORKERS_TOOL_SERVICE_H

#include "workers/worker.h"

/* What a worker process was started with (its command line). */
struct service_cfg {
	int exec; /* may run bash (the tool role); 0 for the fs role */
	int net; /* bash gets the network: --net, a person's setting
		     passed by the broker, never the model's */
	char *workspace; /* --workspace: the only workspace allowed (the
			    fs role's Landlock rule, the one writable
			    directory of the tool role's view) */
};

/* The two roles: file tools only (no exec, no network), and bash with
 * the file tools (only jailed children). */
extern const struct worker_role service_fs_role, service_tool_role;

#endif
