/*
 * model.c - shiro-model-worker: the model role on the worker skeleton.
 *
 * main() hands the role to worker_main().  The service reads a JOB,
 * checks it, and hands it to the provider chosen with --provider.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/msg.h"
#include "sandbox/sandbox.h"
#include "workers/model/model.h"
#include "workers/model/offline.h"
#include "workers/worker.h"

/* The providers; the HTTP ones join this table in their own files. */
static const struct model_provider model_providers[] = {
    {"offline", false, offline_compact},
};

/* model_provider_of - the provider named name, or NULL. */
static const struct model_provider *
model_provider_of(const char *name)
{
	size_t k;

	for (k = 0; k < sizeof(model_providers) / sizeof(model_providers[0]);
	     k++)
		if (strcmp(model_providers[k].name, name) == 0)
			return &model_providers[k];
	return NULL;
}

/* model_input_read - one input map of a JOB into in. */
static int
model_input_read(const struct msg_val *v, struct model_input *in)
{
	const struct msg_val *text = msg_val_get(v, "text");
	const struct msg_val *kind = msg_val_get(v, "kind");
	int64_t id, n;

	if (v->type != MSG_V_MAP || text == NULL || text->type != MSG_V_STR ||
	    msg_val_int(v, "id", &id) < 0 || msg_val_int(v, "n", &n) < 0 ||
	    id < 0 || n < 1)
		return -SHIRO_ERR_PROTO;
	if (kind != NULL && kind->type != MSG_V_STR)
		return -SHIRO_ERR_PROTO;
	in->id = (uint64_t)id;
	in->n = (uint64_t)n;
	in->kind = kind ? kind->u.s.ptr : NULL;
	in->text = text->u.s.ptr;
	in->len = text->u.s.len;
	return 0;
}

/* model_compact_read - a compaction job from JOB m, checked. */
int
model_compact_read(const struct msg *m, struct model_compact *job)
{
	const struct msg_val *inputs = NULL;
	uint64_t limit = MODEL_NODE_MAX;
	size_t k;

	memset(job, 0, sizeof(*job));
	if (msg_get_uint(m, "job", &job->job) < 0 ||
	    msg_get_uint(m, "l", &job->l) < 0 ||
	    msg_get_uint(m, "i", &job->i) < 0 ||
	    msg_get_arr(m, "inputs", &inputs) < 0)
		return -SHIRO_ERR_PROTO;
	msg_get_uint(m, "limit", &limit);
	if (limit < 16 || limit > MODEL_NODE_MAX)
		return -SHIRO_ERR_PROTO;
	job->limit = (size_t)limit;
	if (msg_get_arr(m, "context", &job->context) < 0)
		job->context = NULL;
	/* A message (l = 0) has one input, a merge two. */
	if (inputs->u.a.n != (job->l == 0 ? 1u : 2u))
		return -SHIRO_ERR_PROTO;
	for (k = 0; k < inputs->u.a.n; k++)
		if (model_input_read(inputs->u.a.items[k], &job->inputs[k]) < 0)
			return -SHIRO_ERR_PROTO;
	job->ninputs = inputs->u.a.n;
	if (job->l == 0 && job->inputs[0].kind == NULL)
		return -SHIRO_ERR_PROTO;
	return 0;
}

/* model_service - do one JOB with this worker's provider. */
static int
model_service(struct worker *w, const struct msg *m, struct msg *result)
{
	const struct model_provider *p = worker_data(w);
	struct model_compact job;
	struct buf out = BUF_INIT;
	const char *kind;
	unsigned tries = 0;
	int rc;

	msg_get_str(m, "kind", &kind, NULL);
	if (strcmp(kind, "compact") != 0) {
		worker_failure(w, "badjob", false,
		    "a model worker does no %.32s jobs", kind);
		return -SHIRO_ERR_UNSUPP;
	}
	if (model_compact_read(m, &job) < 0) {
		worker_failure(w, "badjob", false,
		    "compact: l, i, limit or inputs missing or wrong");
		return -SHIRO_ERR_PROTO;
	}
	rc = p->compact(w, &job, &out, &tries);
	if (rc == 0) {
		msg_set_strn(result, "text", out.data, out.len);
		msg_set_int(result, "tries", tries);
	}
	buf_free(&out);
	return rc;
}

/* model_setup - pick the provider; one that needs a key must have it. */
static int
model_setup(struct worker *w)
{
	const struct model_provider *p = model_provider_of(worker_provider(w));
	size_t len;

	if (p == NULL) {
		log_warnx("unknown model provider %s", worker_provider(w));
		return -SHIRO_ERR_NOENT;
	}
	if (p->needs_secret && worker_secret(w, &len) == NULL) {
		log_warnx("provider %s needs a key (--secret-fd)", p->name);
		return -SHIRO_ERR_PERM;
	}
	worker_set_data(w, (void *)p);
	return 0;
}

static const struct worker_role model_role = {
    .role = "model",
    .provider = "offline",
    .jobs = 1,
    .setup = model_setup,
    /* Network sockets to reach the providers; its libraries, CA
     * certificates and resolver files read-only; no execve, no file
     * writes, no Unix socket (sandbox.h). */
    .sandbox = SANDBOX_ROLE_MODEL,
    .service = model_service,
};

/* main - run the model worker. */
int
main(int argc, char **argv)
{
	worker_main(argc, argv, &model_role);
}
