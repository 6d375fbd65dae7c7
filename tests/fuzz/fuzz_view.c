/*
 * fuzz_view - libFuzzer target for the reader of chat/view.json.
 *
 * The input becomes the view.json of a real store (opened once, in the
 * scratch directory) and store_view_load reads it, as shirod does at
 * start.  A file that does not decode must be refused as corrupt, with
 * a reason and nothing returned, and leave the store usable.  One that
 * decodes must give lines within the store's limits (level at most
 * STORE_LEVEL_MAX, index within int64), and saving those lines and
 * loading them again must give the same lines.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "store/store.h"
#include "tests/fuzz/fuzz_util.h"

static struct store *fuzz_store;
static char *fuzz_view_file;

/* fuzz_store_open - the store the inputs are written into. */
static void
fuzz_store_open(void)
{
	struct store_openerr why;
	char *home;
	int r;

	if (fuzz_store != NULL)
		return;
	home = xasprintf("%s/home", fuzz_tmpdir());
	r = store_open(home, NULL, &fuzz_store, &why);
	if (r != 0)
		panic("store_open %s: %s", home, why.msg);
	fuzz_view_file = xasprintf("%s/chat/view.json", home);
	free(home);
}

/* LLVMFuzzerTestOneInput - load one view.json and check what comes out. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_line *lines = NULL, *again = NULL;
	size_t n = 123, n2 = 0, k;
	int r;

	fuzz_store_open();
	fuzz_write(fuzz_view_file, data, size);
	r = store_view_load(fuzz_store, &lines, &n);
	if (r != 0) {
		if (r != -SHIRO_ERR_CORRUPT)
			panic("a damaged view.json gave %s, not corrupt",
			    err_str(r));
		if (lines != NULL || n != 0)
			panic("a refused view.json returned lines");
		if (store_errmsg(fuzz_store)[0] == '\0')
			panic("a refused view.json without a reason");
		/* The store is still usable: this save must work. */
		if (store_view_save(fuzz_store, NULL, 0) != 0)
			panic("the store is unusable after a refused view: %s",
			    store_errmsg(fuzz_store));
		return 0;
	}
	for (k = 0; k < n; k++)
		if (lines[k].l > STORE_LEVEL_MAX ||
		    lines[k].i > (uint64_t)INT64_MAX)
			panic("line %zu is (%u, %llu)", k, lines[k].l,
			    (unsigned long long)lines[k].i);
	if (store_view_save(fuzz_store, lines, n) != 0)
		panic("a loaded view does not save: %s",
		    store_errmsg(fuzz_store));
	if (store_view_load(fuzz_store, &again, &n2) != 0)
		panic(
		    "a saved view does not load: %s", store_errmsg(fuzz_store));
	if (n2 != n)
		panic("load(save(view)) has %zu lines, not %zu", n2, n);
	for (k = 0; k < n; k++)
		if (again[k].l != lines[k].l || again[k].i != lines[k].i)
			panic("load(save(view)) differs at line %zu", k);
	free(lines);
	free(again);
	return 0;
}
