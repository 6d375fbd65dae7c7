/*
 * test_store_fold - the view folded from the store after a restart is
 * the live view, byte for byte when rendered (D1, rule 25); a shrinking
 * view goes on shrinking (F1); a batch record lost in a crash runs at the
 * next message, not at start (D8).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/fold.h"
#include "broker/render.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "store/store.h"
#include "tests/harness.h"

/* fast_rm - nftw callback removing one entry. */
static int
fast_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static char fast_dir[64];

/* fast_cleanup - remove the tmpfs directory (the harness ends a test
 * with _exit, so each test calls this as it ends). */
static void
fast_cleanup(void)
{
	if (fast_dir[0] != '\0')
		nftw(fast_dir, fast_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* fast_tmpdir - a directory on tmpfs when there is one: these tests are
 * about the records, not about fsync (test_store and the torture test
 * write to the real disk). */
static const char *
fast_tmpdir(void)
{
	snprintf(fast_dir, sizeof(fast_dir), "/dev/shm/shiro-fold-XXXXXX");
	if (access("/dev/shm", W_OK) != 0 || mkdtemp(fast_dir) == NULL) {
		fast_dir[0] = '\0';
		return harness_tmpdir();
	}
	return fast_dir;
}

/* small - budgets small enough that batches come every few dozen
 * messages and the tree gets deep. */
static void
small(struct plan_settings *ps)
{
	plan_settings_default(ps);
	ps->ceiling = 6000;
	ps->floor = 3000;
	ps->cceiling = 2000;
	ps->cfloor = 1000;
}

/* reopen - close s and open home again. */
static struct store *
reopen(struct store **sp, const char *home)
{
	struct store_openerr why;
	struct store *s;
	int ret;

	store_close(sp);
	ret = store_open(home, NULL, &s, &why);
	CHECKF(ret == 0, "open: %s", why.msg);
	return s;
}

/* render - the rendered view of p with texts from s (caller frees). */
static char *
render(struct store *s, const struct plan *p)
{
	struct buf b = BUF_INIT;
	int ret;

	ret = fold_render(s, p, &b);
	CHECKF(ret == 0, "render: %s (%s)", err_str(ret), store_errmsg(s));
	return buf_steal(&b, NULL);
}

/* fold - fold s with ps, failing the test on error. */
static struct plan *
fold(struct store *s, const struct plan_settings *ps, struct fold_report *r)
{
	struct plan *p;
	int ret;

	ret = fold_view(s, ps, &p, r);
	CHECKF(ret == 0, "fold: %s: %s", err_str(ret), r->msg);
	return p;
}

/* gen - n more messages through the live planner, as shirod writes them. */
static void
gen(struct store *s, struct plan *live, uint64_t n, unsigned late,
    uint64_t seed)
{
	struct fold_gen_opts o;
	int ret;

	memset(&o, 0, sizeof(o));
	o.n = n;
	o.seed = seed;
	o.min_msg = 20;
	o.max_msg = 900;
	o.min_node = 200;
	o.max_node = 512;
	o.late = late;
	o.chunk = 1;
	o.save_view = 1;
	ret = fold_gen(s, live, &o);
	CHECKF(ret == 0, "gen: %s: %s", err_str(ret), store_errmsg(s));
	/* shirod saves the grown view within a second; do it now. */
	CHECK_EQ_INT(fold_save(s, live), 0);
}

/* same_view - the two planners' views are equal line for line. */
static void
same_view(const struct plan *a, const struct plan *b)
{
	const struct plan_line *la, *lb;
	size_t na, nb, k;

	plan_view(a, &la, &na);
	plan_view(b, &lb, &nb);
	CHECK_EQ_INT(na, nb);
	for (k = 0; k < na; k++)
		CHECKF(la[k].l == lb[k].l && la[k].i == lb[k].i &&
			la[k].size == lb[k].size && la[k].built == lb[k].built,
		    "line %zu differs", k);
	CHECK_EQ_INT(plan_shrinking(a), plan_shrinking(b));
	CHECK_EQ_INT(plan_count(a), plan_count(b));
}

/* A restart at any point folds the live view, byte for byte rendered,
 * whether view.json is current, lost or stale. */
static void
a_lost_or_stale_view_json_folds_to_the_same_view(void)
{
	const char *home = fast_tmpdir();
	struct plan_settings ps;
	struct fold_report r;
	struct store *s;
	struct plan *live, *p;
	struct store_line *old = NULL;
	size_t nold = 0;
	char *a, *b, *path;
	int round, batches_seen = 0;

	small(&ps);
	CHECK_EQ_INT(store_open(home, NULL, &s, NULL), 0);
	CHECK_EQ_INT(plan_new(&ps, &live), 0);
	path = xasprintf("%s/chat/view.json", home);
	for (round = 0; round < 12; round++) {
		gen(s, live, 250, round % 2 ? 600 : 0, 11 + (uint64_t)round);
		s = reopen(&s, home);
		p = fold(s, &ps, &r);
		same_view(live, p);
		a = render(s, live);
		b = render(s, p);
		CHECK_EQ_STR(a, b);
		free(b);
		plan_destroy(&p);
		batches_seen = (int)r.batches;
		CHECKF(r.saved == FOLD_SAVED_SAME, "%s", r.msg);
		/* Lost: the same bytes. */
		CHECK(unlink(path) == 0);
		p = fold(s, &ps, &r);
		CHECK_EQ_INT(r.saved, FOLD_SAVED_MISSING);
		b = render(s, p);
		CHECK_EQ_STR(a, b);
		free(b);
		plan_destroy(&p);
		/* Stale: an older view.json changes nothing but the report. */
		if (old != NULL) {
			CHECK_EQ_INT(store_view_save(s, old, nold), 0);
			p = fold(s, &ps, &r);
			CHECK_EQ_INT(r.saved, FOLD_SAVED_STALE);
			b = render(s, p);
			CHECK_EQ_STR(a, b);
			free(b);
			plan_destroy(&p);
		}
		free(old);
		old = NULL;
		free(a);
		/* Keep this view as the next round's stale one. */
		CHECK_EQ_INT(fold_save(s, live), 0);
		CHECK_EQ_INT(store_view_load(s, &old, &nold), 0);
	}
	CHECKF(batches_seen > 20, "only %d batches: the test shows nothing",
	    batches_seen);
	free(old);
	free(path);
	plan_destroy(&live);
	store_close(&s);
	fast_cleanup();
}

/* A restart while a batch could not reach the floor keeps shrinking: the
 * next message runs a batch below the ceiling, as the live view does. */
static void
a_restart_keeps_a_shrinking_view_shrinking(void)
{
	const char *home = fast_tmpdir();
	struct plan_settings ps;
	struct fold_report r;
	struct plan_batch b1, b2;
	struct store *s;
	struct plan *live, *p;
	int step, found = 0;
	size_t k;

	small(&ps);
	CHECK_EQ_INT(store_open(home, NULL, &s, NULL), 0);
	CHECK_EQ_INT(plan_new(&ps, &live), 0);
	for (step = 0; step < 400 && found < 3; step++) {
		gen(s, live, 5, 700, 100 + (uint64_t)step);
		if (!plan_shrinking(live) || plan_view_size(live) > ps.ceiling)
			continue;
		found++;
		s = reopen(&s, home);
		p = fold(s, &ps, &r);
		CHECK_EQ_INT(r.shrinking, 1);
		same_view(live, p);
		/* The same next message on both: both run a batch. */
		CHECK_EQ_INT(plan_append(live, 0, 100), 0);
		CHECK_EQ_INT(plan_append(p, 0, 100), 0);
		plan_sawtooth(live, &b1);
		plan_sawtooth(p, &b2);
		CHECK_EQ_INT(b1.ran, 1);
		CHECK_EQ_INT(b2.ran, 1);
		CHECK_EQ_INT(b1.nmerges, b2.nmerges);
		for (k = 0; k < b1.nmerges; k++)
			CHECK(b1.merges[k].l == b2.merges[k].l &&
			    b1.merges[k].i == b2.merges[k].i);
		same_view(live, p);
		plan_destroy(&p);
		/* Go on with a fresh live planner folded from the store (the
		 * extra message above was only in the planners). */
		plan_destroy(&live);
		live = fold(s, &ps, &r);
	}
	CHECKF(found >= 1, "no shrinking view below the ceiling was reached");
	plan_destroy(&live);
	store_close(&s);
	fast_cleanup();
}

/* When the record of a batch is lost (a crash after the message), the
 * fold does not run the batch at start; the next message runs it (D8). */
static void
a_lost_batch_record_runs_at_the_next_message(void)
{
	const char *home = fast_tmpdir();
	struct plan_settings ps;
	struct fold_report r;
	struct plan_batch bt;
	struct store_msg_in m;
	struct store *s;
	struct plan *live, *before, *p;
	char text[400];
	uint64_t id, nb_before, nb_after;
	int tries;

	small(&ps);
	memset(text, 'q', sizeof(text));
	CHECK_EQ_INT(store_open(home, NULL, &s, NULL), 0);
	CHECK_EQ_INT(plan_new(&ps, &live), 0);
	gen(s, live, 40, 0, 5);
	/* Add messages the way shirod does until one passes the ceiling,
	 * but "crash" before that batch's record is written. */
	for (tries = 0; tries < 200; tries++) {
		before = fold(s, &ps, &r);
		m = (struct store_msg_in){
		    STORE_KIND_USER, text, sizeof(text), NULL, 0};
		CHECK_EQ_INT(store_append(s, &m, &id), 0);
		CHECK_EQ_INT(store_node_put(
				 s, 0, id, text, sizeof(text), sizeof(text), 0),
		    0);
		CHECK_EQ_INT(plan_append(live, 1, sizeof(text)), 0);
		plan_sawtooth(live, &bt);
		if (bt.ran)
			break;
		plan_destroy(&before);
	}
	CHECK(bt.ran && bt.nmerges > 0);
	CHECK_EQ_INT(store_batch_count(s, &nb_before), 0);
	s = reopen(&s, home);
	p = fold(s, &ps, &r);
	/* No batch at start: the view is the old one plus the new line. */
	CHECK(plan_view_size(p) > ps.ceiling);
	CHECK_EQ_INT(plan_count(p), plan_count(before) + 1);
	{
		const struct plan_line *la, *lb;
		size_t na, nb, k;

		plan_view(before, &la, &na);
		plan_view(p, &lb, &nb);
		CHECK_EQ_INT(nb, na + 1);
		for (k = 0; k < na; k++)
			CHECK(la[k].l == lb[k].l && la[k].i == lb[k].i);
	}
	CHECK_EQ_INT(store_batch_count(s, &nb_after), 0);
	CHECK_EQ_INT(nb_after, nb_before);
	/* The next message runs it. */
	CHECK_EQ_INT(plan_append(p, 1, 10), 0);
	plan_sawtooth(p, &bt);
	CHECK_EQ_INT(bt.ran, 1);
	CHECK(bt.nmerges > 0);
	CHECK(plan_view_size(p) <= ps.floor || plan_shrinking(p));
	plan_destroy(&p);
	plan_destroy(&before);
	plan_destroy(&live);
	store_close(&s);
	fast_cleanup();
}

/* A record that cannot be replayed stops the fold with a reason. */
static void
a_record_that_does_not_replay_is_reported(void)
{
	const char *home = fast_tmpdir();
	struct plan_settings ps;
	struct fold_report r;
	struct store_merge mg = {1, 0};
	struct store *s;
	struct plan *live, *p;

	small(&ps);
	CHECK_EQ_INT(store_open(home, NULL, &s, NULL), 0);
	CHECK_EQ_INT(plan_new(&ps, &live), 0);
	gen(s, live, 300, 0, 9);
	/* (1, 0) merged long ago: its halves are no longer two lines. */
	CHECK_EQ_INT(store_batch_append(s, store_count(s), 0, &mg, 1, NULL), 0);
	CHECK_EQ_INT(fold_view(s, &ps, &p, &r), -SHIRO_ERR_CORRUPT);
	CHECKF(strstr(r.msg, "merge 0 into (1, 0)") != NULL, "%s", r.msg);
	CHECK(p == NULL);
	plan_destroy(&live);
	store_close(&s);
	fast_cleanup();
}

static const struct harness_test tests[] = {
    HT_SLOW(a_lost_or_stale_view_json_folds_to_the_same_view, 120),
    HT_SLOW(a_restart_keeps_a_shrinking_view_shrinking, 120),
    HT(a_lost_batch_record_runs_at_the_next_message),
    HT(a_record_that_does_not_replay_is_reported),
};

HARNESS_MAIN(tests)
