/* bash - run a shell command in the tool jail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/utf8.h"
#include "proto/err.h"
#include "sandbox/jail.h"
#include "tools/text.h"
#include "tools/tool.h"

#define BASH_MARK 120 /* characters kept free for the cut marker */

/* What the command printed: the head, and the tail in a ring. */
struct bash_out {
	struct tool_ctx *ctx;
	struct buf head;
	size_t head_cap;
	char *ring;
	size_t ring_cap, ring_len, ring_pos;
	unsigned long long total;
};

/* bash_output - take a chunk of output: stream it, keep head and tail. */
static void
bash_output(void *arg, enum jail_stream stream, const char *data, size_t len)
{
	struct bash_out *o = arg;
	size_t take, i;

	(void)stream;
	if (o->ctx->emit != NULL)
		o->ctx->emit(o->ctx->emit_arg, data, len);
	o->total += len;
	if (o->head.len < o->head_cap) {
		take = o->head_cap - o->head.len;
		if (take > len)
			take = len;
		buf_add(&o->head, data, take);
		data += take;
		len -= take;
	}
	for (i = 0; i < len; i++) {
		o->ring[o->ring_pos] = data[i];
		o->ring_pos = (o->ring_pos + 1) % o->ring_cap;
		if (o->ring_len < o->ring_cap)
			o->ring_len++;
	}
}

/* bash_text - the kept output, head and tail within max characters. */
static void
bash_text(struct bash_out *o, size_t max, struct buf *out, int *clipped)
{
	struct buf all = BUF_INIT, tail = BUF_INIT, h = BUF_INIT;
	size_t start = (o->ring_pos + o->ring_cap - o->ring_len) % o->ring_cap;
	size_t i, keep, hc, tc, chars, skip;

	for (i = 0; i < o->ring_len; i++)
		buf_addc(&tail, o->ring[(start + i) % o->ring_cap]);
	if (o->total == o->head.len + o->ring_len) {
		/* Nothing was dropped: clip the whole text. */
		buf_add(&all, o->head.data ? o->head.data : "", o->head.len);
		buf_add(&all, tail.data ? tail.data : "", tail.len);
		*clipped =
		    text_clip(all.data ? all.data : "", all.len, max, out);
		goto out;
	}
	*clipped = 1;
	keep = max > BASH_MARK ? max - BASH_MARK : max;
	hc = keep / 2;
	tc = keep - hc;
	text_utf8_clean(o->head.data, o->head.len, &h);
	buf_add(out, h.data, utf8_skip(h.data, h.len, hc));
	buf_printf(out,
	    "\n[... output cut: %llu bytes in all, the middle is not shown "
	    "...]\n",
	    o->total);
	text_utf8_clean(tail.data, tail.len, &all);
	chars = utf8_count(all.data, all.len);
	skip = utf8_skip(all.data, all.len, chars > tc ? chars - tc : 0);
	buf_add(out, all.data + skip, all.len - skip);
out:
	buf_free(&all);
	buf_free(&tail);
	buf_free(&h);
}

/* bash_run - the bash tool. */
static int
bash_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	const char *cmd = tool_str(args, "command");
	const char *argv[] = {"bash", "-lc", cmd, NULL};
	unsigned tmax =
	    ctx->timeout_max_s ? ctx->timeout_max_s : TOOL_BASH_TIMEOUT_MAX;
	unsigned tdef = ctx->timeout_s ? ctx->timeout_s : TOOL_BASH_TIMEOUT;
	struct bash_out o;
	struct jail_spec spec;
	struct jail_result res;
	struct jail *j = NULL;
	int done = 0;
	struct buf text = BUF_INIT;
	long long timeout;
	size_t max = tool_ctx_max(ctx);
	int r, clipped = 0;

	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	if (cmd == NULL || cmd[0] == '\0') {
		*result = tool_error("command must be a non-empty string");
		return 0;
	}
	if (tdef > tmax)
		tdef = tmax;
	if (tool_int(args, "timeout", tdef, 1, tmax, &timeout, result) != 0)
		return 0;
	if (!ctx->may_exec || ctx->wspath == NULL) {
		*result = tool_error("bash cannot run here: this worker does "
				     "not run commands");
		return 0;
	}
	o.ctx = ctx;
	o.head_cap = 2 * max;
	o.ring_cap = 2 * max;
	o.ring = malloc(o.ring_cap ? o.ring_cap : 1);
	if (o.ring == NULL) {
		*result = tool_error("bash: out of memory");
		return 0;
	}
	jail_spec_init(&spec);
	spec.argv = argv;
	spec.workspace = ctx->wspath;
	spec.net = ctx->net;
	spec.timeout_ms = (unsigned)timeout * 1000u;
	spec.on_output = bash_output;
	spec.on_output_arg = &o;
	spec.cancel = ctx->cancel;
	r = jail_start(&spec, &j, res.error, sizeof(res.error));
	if (r < 0) {
		*result = tool_error("the jail could not be set up, so the "
				     "command did not run: %s",
		    res.error[0] ? res.error : err_str(r));
		goto out;
	}
	/* Step the jail so that the tick (a worker's heartbeat) runs
	 * while the command does. */
	while (!done && r == 0) {
		r = jail_step(j, 50, &done);
		if (!done && tool_canceled(ctx))
			jail_cancel(j);
	}
	jail_finish(&j, &res);
	bash_text(&o, max, &text, &clipped);
	if (res.timed_out || res.interrupted) {
		if (res.timed_out)
			*result =
			    tool_error("the command did not finish within "
				       "%lld s and was killed with "
				       "everything it started; its "
				       "effects are unknown",
				timeout);
		else
			*result =
			    tool_error("the command was interrupted and "
				       "killed with everything it started "
				       "before it finished; its effects "
				       "are unknown");
		json_object_set_new(*result,
		    res.timed_out ? "timed_out" : "interrupted", json_true());
	} else {
		*result = tool_ok();
		json_object_set_new(
		    *result, "exit_code", json_integer(jail_status(&res)));
		if (!res.exited)
			json_object_set_new(
			    *result, "signal", json_integer(res.signal));
	}
	json_object_set_new(*result, "output",
	    json_stringn(text.data ? text.data : "", text.len));
	if (clipped)
		json_object_set_new(*result, "clipped", json_true());
out:
	buf_free(&o.head);
	buf_free(&text);
	free(o.ring);
	return 0;
}

/* bash_subjects - the command line. */
static int
bash_subjects(json_t *args, json_t *arr)
{
	return tool_subject_key(args, arr, "command", NULL);
}

const struct tool_def bash_def = {
    .name = "bash",
    .kind = TOOL_EXEC,
    .description = "Run a command with bash -lc in a jail whose working "
		   "directory is the workspace (no network unless a person "
		   "enabled it). Output streams as it comes; the first and "
		   "last parts are kept, 30000 characters in all. Timeout "
		   "default 120 s, at most 600 s.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"command\":{\"type\":\"string\"},"
	      "\"timeout\":{\"type\":\"integer\",\"minimum\":1,"
	      "\"maximum\":600,\"description\":\"seconds\"}},"
	      "\"required\":[\"command\"]}",
    .subjects = bash_subjects,
    .run = bash_run,
};
