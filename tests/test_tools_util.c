/* test_tools_util - helpers shared by the tool catalogue's tests. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/buf.h"
#include "tests/harness.h"
#include "tests/test_tools_util.h"

/* tt_setup - a workspace ws/ and a host area outside/ in a fresh dir. */
void
tt_setup(struct tt *t)
{
	const char *base = harness_tmpdir();

	memset(t, 0, sizeof(*t));
	snprintf(t->ws, sizeof(t->ws), "%s/ws", base);
	snprintf(t->out, sizeof(t->out), "%s/outside", base);
	CHECK(mkdir(t->ws, 0755) == 0);
	CHECK(mkdir(t->out, 0755) == 0);
	t->wsfd = open(t->ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(t->wsfd >= 0);
	t->ctx.wsfd = t->wsfd;
	t->ctx.wspath = t->ws;
}

/* tt_call - run tool with args (consumed); the result, never NULL. */
json_t *
tt_call(struct tt *t, const char *tool, json_t *args)
{
	json_t *r = NULL;

	CHECKF(args != NULL, "bad test arguments for %s", tool);
	CHECK_EQ_INT(tool_call(tool, args, &t->ctx, &r), 0);
	CHECK(r != NULL);
	CHECK(json_is_boolean(json_object_get(r, "ok")));
	if (!json_is_true(json_object_get(r, "ok")))
		CHECK(json_is_string(json_object_get(r, "error")));
	json_decref(args);
	return r;
}

/* tt_ok - nonzero when r is a success result. */
int
tt_ok(json_t *r)
{
	return json_is_true(json_object_get(r, "ok"));
}

/* tt_str - r[key] as a string, "" when absent. */
const char *
tt_str(json_t *r, const char *key)
{
	const char *s = json_string_value(json_object_get(r, key));

	return s ? s : "";
}

/* tt_put - write content to dir/rel (parents created). */
void
tt_put(const char *dir, const char *rel, const char *content)
{
	char path[4096], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	CHECKF(f != NULL, "fopen %s: %s", path, strerror(errno));
	fputs(content, f);
	CHECK(fclose(f) == 0);
}

/* tt_get - the content of dir/rel (caller frees), NULL when absent. */
char *
tt_get(const char *dir, const char *rel)
{
	char path[4096];
	struct buf b = BUF_INIT;
	char chunk[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	if (b.data == NULL)
		buf_adds(&b, "");
	return buf_steal(&b, NULL);
}

/* tt_same - nonzero when dir/rel holds exactly content. */
int
tt_same(const char *dir, const char *rel, const char *content)
{
	char *got = tt_get(dir, rel);
	int same = got != NULL && strcmp(got, content) == 0;

	free(got);
	return same;
}

/* tt_exists - nonzero when dir/rel exists (symlinks not followed). */
int
tt_exists(const char *dir, const char *rel)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return lstat(path, &st) == 0;
}
