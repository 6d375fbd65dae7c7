#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "tools/tool.h"
#include "tools/ws.h"

/* The catalogue, in the order the model sees it. */
static const struct tool_def *const tool_table[] = {
    &read_file_def,
    &read_many_files_def,
    &list_dir_def,
    &glob_def,
    &grep_def,
    &write_file_def,
    &edit_file_def,
    &multi_edit_def,
    &apply_patch_def,
    &move_file_def,
    &delete_file_def,
    &bash_def,
};

#define TOOL_N (sizeof(tool_table) / sizeof(tool_table[0]))

/* tool_find - the catalogue entry named name, or NULL. */
const struct tool_def *
tool_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < TOOL_N; i++)
		if (strcmp(tool_table[i]->name, name) == 0)
			return tool_table[i];
	return NULL;
}

/* tool_at - the i-th catalogue entry, NULL past the end. */
const struct tool_def *
tool_at(size_t i)
{
	return i < TOOL_N ? tool_table[i] : NULL;
}

/* tool_kind_name - "read", "write" or "exec". */
const char *
tool_kind_name(enum tool_kind kind)
{
	switch (kind) {
	case TOOL_READ:
		return "read";
	case TOOL_WRITE:
		return "write";
	case TOOL_EXEC:
		return "exec";
	}
	return "?";
}

/* tool_error - a new error result. */
json_t *
tool_error(const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	json_t *r;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		text = NULL;
	r = json_pack("{sbss}", "ok", 0, "error", text ? text : "error");
	if (r == NULL)
		r = json_pack("{sbss}", "ok", 0, "error",
		    "error (text was not valid UTF-8)");
	free(text);
	return r;
}

/* tool_ok - a new success result. */
json_t *
tool_ok(void)
{
	return json_pack("{sb}", "ok", 1);
}

/* tool_ctx_max - ctx's output cap in characters. */
size_t
tool_ctx_max(const struct tool_ctx *ctx)
{
	return ctx->max_output ? ctx->max_output : TOOL_MAX_OUTPUT;
}

/* tool_canceled - nonzero when the call should stop. */
int
tool_canceled(const struct tool_ctx *ctx)
{
	if (ctx->tick != NULL && ctx->tick(ctx->tick_arg) != 0)
		return 1;
	return ctx->cancel != NULL && *ctx->cancel != 0;
}

/* tool_str - args[key] when it is a string without NUL bytes. */
const char *
tool_str(json_t *args, const char *key)
{
	json_t *v = json_object_get(args, key);

	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return NULL;
	return json_string_value(v);
}

/* tool_int - args[key] as an integer within [min, max]. */
int
tool_int(json_t *args, const char *key, long long def, long long min,
    long long max, long long *out, json_t **err)
{
	json_t *v = json_object_get(args, key);

	*out = def;
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_real(v) &&
	    json_real_value(v) == (long long)json_real_value(v))
		*out = (long long)json_real_value(v);
	else if (json_is_integer(v))
		*out = json_integer_value(v);
	else {
		*err = tool_error("%s must be an integer", key);
		return -1;
	}
	if (*out < min || *out > max) {
		*err = tool_error(
		    "%s must be between %lld and %lld", key, min, max);
		return -1;
	}
	return 0;
}

/* tool_bool - args[key] as a boolean. */
int
tool_bool(json_t *args, const char *key, int def)
{
	json_t *v = json_object_get(args, key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

/* tool_path_error - a new error result for errno e on path. */
json_t *
tool_path_error(const char *path, int e)
{
	char *text = ws_strerror(path, e);
	json_t *r = tool_error("%s", text);

	free(text);
	return r;
}

/* tool_path - the workspace-relative path in args[key]. */
int
tool_path(const struct tool_ctx *ctx, json_t *args, const char *key,
    const char *def, char **rel, json_t **err)
{
	json_t *v = json_object_get(args, key), *tmp = NULL;
	int r;

	*rel = NULL;
	if (v == NULL && def != NULL)
		v = tmp = json_string(def);
	if (v == NULL) {
		*err = tool_error("missing argument: %s", key);
		return -1;
	}
	if (!json_is_string(v)) {
		*err = tool_error("%s must be a string", key);
		json_decref(tmp);
		return -1;
	}
	r = ws_path(ctx, v, rel);
	if (r < 0)
		*err = tool_path_error(json_string_value(v), r);
	json_decref(tmp);
	return r < 0 ? -1 : 0;
}

/* tool_subject_key - subjects for tools whose subject is args[key]. */
int
tool_subject_key(json_t *args, json_t *arr, const char *key, const char *def)
{
	const char *s = tool_str(args, key);

	if (s == NULL && json_object_get(args, key) == NULL)
		s = def;
	if (s == NULL)
		return -SHIRO_ERR_INVAL;
	json_array_append_new(arr, json_string(s));
	return 0;
}

/* tool_call - run one catalogue tool. */
int
tool_call(const char *name, json_t *args, struct tool_ctx *ctx, json_t **result)
{
	const struct tool_def *def = tool_find(name);

	*result = NULL;
	if (ctx == NULL ||
	    (ctx->wsfd < 0 && (def == NULL || def->kind != TOOL_EXEC)))
		return -SHIRO_ERR_INVAL;
	if (def == NULL) {
		*result =
		    tool_error("unknown tool: %s", name ? name : "(none)");
		return 0;
	}
	if (!json_is_object(args)) {
		*result = tool_error("the arguments must be a JSON object");
		return 0;
	}
	/* A write set a killed process left is finished or undone first,
	 * so no tool ever sees half of one. */
	if (ctx->wsfd >= 0)
		ws_recover(ctx->wsfd);
	if (def->run(args, ctx, result) < 0 || *result == NULL) {
		json_decref(*result);
		*result = tool_error("%s failed unexpectedly", name);
	}
	return 0;
}

/* tool_subjects - the permission subjects of a call. */
int
tool_subjects(const char *name, json_t *args, json_t **out)
{
	const struct tool_def *def = tool_find(name);
	json_t *arr;
	int r;

	*out = NULL;
	if (def == NULL || !json_is_object(args))
		return -SHIRO_ERR_INVAL;
	arr = json_array();
	r = def->subjects(args, arr);
	if (r < 0 || json_array_size(arr) == 0) {
		json_decref(arr);
		return r < 0 ? r : -SHIRO_ERR_INVAL;
	}
	*out = arr;
	return 0;
}

/* tool_schemas - a new array of {name, description, kind, parameters}. */
json_t *
tool_schemas(void)
{
	json_t *arr = json_array(), *schema;
	json_error_t jerr;
	size_t i;

	for (i = 0; i < TOOL_N; i++) {
		schema = json_loads(tool_table[i]->schema, 0, &jerr);
		if (schema == NULL)
			panic("tool %s: bad schema: %s", tool_table[i]->name,
			    jerr.text);
		json_array_append_new(arr,
		    json_pack("{sssssssO}", "name", tool_table[i]->name,
			"description", tool_table[i]->description, "kind",
			tool_kind_name(tool_table[i]->kind), "parameters",
			schema));
		json_decref(schema);
	}
	return arr;
}
