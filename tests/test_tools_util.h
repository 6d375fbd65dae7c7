/* test_tools_util.h - helpers shared by the tool catalogue's tests. */
#ifndef SHIRO_TEST_TOOLS_UTIL_H
#define SHIRO_TEST_TOOLS_UTIL_H

#include <limits.h>

#include <jansson.h>

#include "tools/tool.h"

struct tt {
	char ws[PATH_MAX - 64]; /* the workspace */
	char out[PATH_MAX - 64]; /* a host directory outside it */
	int wsfd;
	struct tool_ctx ctx;
};

void tt_setup(struct tt *t);
json_t *tt_call(struct tt *t, const char *tool, json_t *args);
int tt_ok(json_t *r);
const char *tt_str(json_t *r, const char *key);
void tt_put(const char *dir, const char *rel, const char *content);
char *tt_get(const char *dir, const char *rel);
int tt_same(const char *dir, const char *rel, const char *content);
int tt_exists(const char *dir, const char *rel);

#endif
