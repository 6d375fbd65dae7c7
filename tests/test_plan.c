/*
 * test_plan - the laws of the chat memory (docs/memory.md) on the C
 * planner, its worked examples, the renderer and the work queue.
 *
 * The laws are checked after every event of many generated histories:
 * random sizes and budgets, both units, messages built at once or late,
 * a compactor whose jobs finish, fail and retry in any order, and fits
 * outside the sawtooth.  Each history is bounded, and so is each test.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "broker/plan.h"
#include "broker/render.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"

/* ---- helpers ---------------------------------------------------------- */

/* test_rand - xorshift64*, so every run sees the same histories. */
static uint64_t
test_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* test_between - a number in [lo, hi]. */
static uint64_t
test_between(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + test_rand(s) % (hi - lo + 1);
}

/* test_new - a planner with the defaults changed by unit and budget. */
static struct plan *
test_new(enum plan_unit unit, uint64_t ceiling, uint64_t floor)
{
	struct plan_settings set;
	struct plan *p;

	plan_settings_default(&set);
	set.unit = unit;
	set.ceiling = ceiling;
	set.floor = floor;
	CHECK_EQ_INT(plan_new(&set, &p), 0);
	return p;
}

/* test_first - the first message of line ln. */
static uint64_t
test_first(const struct plan_line *ln)
{
	return ln->i << ln->l;
}

/* test_end - one past the last message of line ln. */
static uint64_t
test_end(const struct plan_line *ln)
{
	return (ln->i + 1) << ln->l;
}

/* test_copy - a copy of the view (freed by the caller). */
static struct plan_line *
test_copy(const struct plan *p, size_t *n)
{
	const struct plan_line *v;

	plan_view(p, &v, n);
	if (*n == 0)
		return xcalloc(1, sizeof(*v));
	return xmemdup(v, *n * sizeof(*v));
}

/* same_lines - whether n lines of a and b are the same, field by field. */
static int
same_lines(const struct plan_line *a, const struct plan_line *b, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (a[k].i != b[k].i || a[k].l != b[k].l ||
		    a[k].built != b[k].built || a[k].size != b[k].size)
			return 0;
	return 1;
}

/* Law view_covers / cview_covers: lines tile messages 0..T-1, in order. */
static void
law_covers(const struct plan_line *v, size_t n, uint64_t t, const char *what)
{
	uint64_t next = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		CHECKF(v[k].l <= PLAN_MAX_LEVEL, "%s: line %zu level %u", what,
		    k, v[k].l);
		CHECKF(test_first(&v[k]) == next,
		    "%s: line %zu (%u:%" PRIu64 ") starts at %" PRIu64
		    ", expected %" PRIu64,
		    what, k, v[k].l, v[k].i, test_first(&v[k]), next);
		next = test_end(&v[k]);
	}
	CHECKF(next == t, "%s covers %" PRIu64 " of %" PRIu64 " messages", what,
	    next, t);
}

/* Law view_summarized / cview_summarized: merged lines are built. */
static void
law_summarized(
    const struct plan *p, const struct plan_line *v, size_t n, const char *what)
{
	size_t k;

	for (k = 0; k < n; k++) {
		CHECKF(plan_is_built(p, v[k].l, v[k].i) == v[k].built,
		    "%s: line %u:%" PRIu64 " built flag %d, tree says %d", what,
		    v[k].l, v[k].i, v[k].built,
		    plan_is_built(p, v[k].l, v[k].i));
		CHECKF(v[k].l == 0 || v[k].built,
		    "%s: merged line %u:%" PRIu64 " is not built", what, v[k].l,
		    v[k].i);
	}
}

/* test_size - the size of a view, added up here. */
static uint64_t
test_size(const struct plan *p, const struct plan_line *v, size_t n)
{
	uint64_t s = 0;
	size_t k;

	for (k = 0; k < n; k++)
		s += plan_line_size(p, &v[k]);
	return s;
}

/* test_can_merge - whether any sibling pair of v has a built parent. */
static int
test_can_merge(const struct plan *p, const struct plan_line *v, size_t n)
{
	size_t k;

	for (k = 0; k + 1 < n; k++)
		if (v[k].l == v[k + 1].l && (v[k].i & 1) == 0 &&
		    plan_is_built(p, v[k].l + 1u, v[k].i >> 1))
			return 1;
	return 0;
}

/*
 * Laws merge_is_one_pair, merge_covers, fit_merges_built: starting from
 * the old view (plus the new message's line when one arrived), each merge
 * of the batch replaces two adjacent sibling lines by their built parent,
 * and the merges in order give the new view.
 */
static void
law_merges(const struct plan *p, struct plan_line *old, size_t nold,
    int appended, const struct plan_batch *b)
{
	const struct plan_line *v;
	struct plan_line *w;
	size_t n, nw = nold, k, m;

	w = xcalloc(nold + 2, sizeof(*w));
	memcpy(w, old, nold * sizeof(*w));
	plan_view(p, &v, &n);
	if (appended) {
		CHECK(n >= 1);
		w[nw].l = 0;
		w[nw].i = plan_count(p) - 1;
		nw++;
	}
	for (m = 0; m < b->nmerges; m++) {
		unsigned l = b->merges[m].l;
		uint64_t i = b->merges[m].i;

		CHECKF(l >= 1 && plan_is_built(p, l, i),
		    "fit_merges_built: merge %zu into %u:%" PRIu64
		    " (not built)",
		    m, l, i);
		for (k = 0; k + 1 < nw; k++)
			if (w[k].l == l - 1 && w[k].i == 2 * i &&
			    w[k + 1].l == l - 1 && w[k + 1].i == 2 * i + 1)
				break;
		CHECKF(k + 1 < nw,
		    "merge_is_one_pair: merge %u:%" PRIu64
		    " has no two sibling lines",
		    l, i);
		w[k].l = (uint8_t)l;
		w[k].i = i;
		memmove(&w[k + 1], &w[k + 2], (nw - k - 2) * sizeof(*w));
		nw--;
	}
	CHECKF(nw == n,
	    "merge_covers: %zu lines after the merges, view has %zu", nw, n);
	for (k = 0; k < n; k++)
		CHECKF(w[k].l == v[k].l && w[k].i == v[k].i,
		    "merge_covers: line %zu is %u:%" PRIu64
		    ", merges give %u:%" PRIu64,
		    k, v[k].l, v[k].i, w[k].l, w[k].i);
	free(w);
}

/*
 * Laws context_ends_at_node and context_is_prefix for node (l, i): the
 * context is the longest prefix of the compaction view whose lines are
 * built and end at or before the node's last message.
 */
static void
law_context(struct plan *p, unsigned l, uint64_t i)
{
	const struct plan_line *c;
	size_t nc, n, k;
	uint64_t end = (i + 1) << l;

	CHECK_EQ_INT(plan_context(p, l, i, &n), 0);
	plan_cview(p, &c, &nc, NULL);
	CHECK(n <= nc);
	for (k = 0; k < n; k++) {
		CHECKF(c[k].built, "context_ends_at_node: unbuilt line %zu", k);
		CHECKF(test_end(&c[k]) <= end,
		    "context_ends_at_node: line %zu ends after node "
		    "%u:%" PRIu64,
		    k, l, i);
	}
	CHECKF(n == nc || !c[n].built || test_end(&c[n]) > end,
	    "context_is_prefix: the context of %u:%" PRIu64
	    " stops early at line %zu",
	    l, i, n);
}

/*
 * The compaction view's own laws: it is coarser than the chat's view
 * (each of its lines covers whole chat lines), and after a sawtooth it is
 * within its ceiling unless no pair of it can merge.
 */
static void
law_cview(struct plan *p, int after_sawtooth)
{
	const struct plan_line *v, *c;
	size_t n, nc, k, j = 0, j0;
	uint64_t csize;

	plan_view(p, &v, &n);
	plan_cview(p, &c, &nc, &csize);
	law_covers(c, nc, plan_count(p), "cview_covers");
	law_summarized(p, c, nc, "cview_summarized");
	CHECK_EQ_INT(csize, test_size(p, c, nc));
	for (k = 0; k < nc; k++) {
		CHECKF(j < n && test_first(&v[j]) == test_first(&c[k]),
		    "cview line %zu does not start at a chat line", k);
		j0 = j;
		while (j < n && test_end(&v[j]) <= test_end(&c[k]))
			j++;
		CHECKF(j > j0 && test_end(&v[j - 1]) == test_end(&c[k]),
		    "cview line %zu does not end at a chat line", k);
	}
	CHECKF(!after_sawtooth || csize <= plan_get_settings(p)->cceiling ||
		!test_can_merge(p, c, nc),
	    "cview size %" PRIu64 " over its ceiling with pairs to merge",
	    csize);
}

/* ---- generated histories ---------------------------------------------- */

/* What the histories of one test did, so a test knows it saw batches. */
static struct {
	uint64_t batches; /* batches that merged something */
	uint64_t stuck; /* batches that ended above the floor */
	uint64_t fits; /* fits outside the sawtooth */
	uint64_t contexts; /* contexts checked */
} seen;

/* One generated history: a planner and a late, unreliable compactor. */
struct hist {
	struct plan *p;
	uint64_t rng;
	struct plan_job run[64];
	size_t nrun;
	uint64_t floor;
	uint64_t steps;
};

/* hist_size - a node size for the history's unit. */
static uint32_t
hist_size(struct hist *h, uint32_t lo, uint32_t hi)
{
	return (uint32_t)test_between(&h->rng, lo, hi);
}

/* hist_check - every law about the state after any event. */
static void
hist_check(struct hist *h)
{
	const struct plan_line *v;
	size_t n, k, unbuilt = 0;

	plan_view(h->p, &v, &n);
	law_covers(v, n, plan_count(h->p), "view_covers");
	law_summarized(h->p, v, n, "view_summarized");
	CHECK_EQ_INT(plan_view_size(h->p), test_size(h->p, v, n));
	for (k = 0; k < n; k++)
		unbuilt += !v[k].built;
	CHECK_EQ_INT(plan_unbuilt(h->p), unbuilt);
	CHECK(plan_work_running(h->p) <= plan_get_settings(h->p)->jobs);
	law_cview(h->p, 0);
	for (k = 0; k < h->nrun; k++)
		law_context(h->p, h->run[k].l, h->run[k].i);
	seen.contexts += h->nrun;
}

/* hist_msg - a message arrives, then the sawtooth; its laws. */
static void
hist_msg(struct hist *h, int built, uint32_t size)
{
	const struct plan_settings *set = plan_get_settings(h->p);
	struct plan_line *old;
	struct plan_batch b;
	const struct plan_line *v;
	size_t nold, n, k;
	int was_shrinking = plan_shrinking(h->p);

	old = test_copy(h->p, &nold);
	CHECK_EQ_INT(plan_append(h->p, built, size), 0);
	CHECK_EQ_INT(plan_sawtooth(h->p, &b), 0);
	plan_view(h->p, &v, &n);
	if (!b.ran) {
		/* message_appends, message_merges_nothing */
		CHECKF(b.nmerges == 0, "message_merges_nothing: %zu merges",
		    b.nmerges);
		CHECK_EQ_INT(n, nold + 1);
		CHECKF(same_lines(v, old, nold),
		    "message_appends: the old view is not a prefix");
		CHECK(v[nold].l == 0 && v[nold].i == plan_count(h->p) - 1);
		CHECK(!was_shrinking);
		CHECK(plan_view_size(h->p) <= set->ceiling);
	} else {
		CHECK(was_shrinking || plan_view_size(h->p) > set->ceiling ||
		    b.nmerges > 0);
		/* fit_reaches_budget, with the floor */
		CHECKF(plan_view_size(h->p) <= set->floor ||
			!test_can_merge(h->p, v, n),
		    "fit_reaches_budget: batch ended at %" PRIu64
		    " over floor %" PRIu64 " with pairs left",
		    plan_view_size(h->p), set->floor);
		CHECK_EQ_INT(
		    plan_shrinking(h->p), plan_view_size(h->p) > set->floor);
		seen.batches += b.nmerges > 0;
		seen.stuck += plan_shrinking(h->p);
	}
	CHECK_EQ_INT(b.shrinking, plan_shrinking(h->p));
	law_merges(h->p, old, nold, 1, &b);
	law_cview(h->p, 1);
	for (k = 0; k < b.nmerges; k++)
		CHECK(b.merges[k].l >= 1);
	free(old);
}

/* hist_fit - a fit outside the sawtooth; its laws. */
static void
hist_fit(struct hist *h, uint64_t budget)
{
	struct plan_line *old;
	const struct plan_line *v;
	struct plan_batch b;
	size_t nold, n;
	int shrinking = plan_shrinking(h->p);

	old = test_copy(h->p, &nold);
	CHECK_EQ_INT(plan_fit(h->p, budget, &b), 0);
	plan_view(h->p, &v, &n);
	CHECK(b.ran);
	seen.fits += b.nmerges > 0;
	CHECKF(plan_view_size(h->p) <= budget || !test_can_merge(h->p, v, n),
	    "fit_reaches_budget: fit to %" PRIu64 " ended at %" PRIu64, budget,
	    plan_view_size(h->p));
	CHECK_EQ_INT(plan_shrinking(h->p), shrinking);
	law_merges(h->p, old, nold, 0, &b);
	free(old);
}

/* hist_finish - job k of the compactor ends: built, failed or dropped. */
static void
hist_finish(struct hist *h, size_t k)
{
	struct plan_job j = h->run[k];
	uint64_t r = test_rand(&h->rng) % 10;
	uint32_t size;

	h->run[k] = h->run[--h->nrun];
	if (r == 0) {
		CHECK_EQ_INT(plan_work_fail(h->p, j.l, j.i), 0);
		CHECK_EQ_INT(plan_work_fail(h->p, j.l, j.i), -SHIRO_ERR_NOENT);
	} else if (r == 1) {
		CHECK_EQ_INT(plan_work_drop(h->p, j.l, j.i), 0);
	} else {
		size = plan_get_settings(h->p)->unit == PLAN_UNIT_LINES
		    ? 1
		    : hist_size(h, 20, 512);
		if (j.free)
			size = j.src_size;
		CHECK_EQ_INT(plan_built(h->p, j.l, j.i, size), 0);
		CHECK_EQ_INT(
		    plan_built(h->p, j.l, j.i, size), -SHIRO_ERR_EXIST);
	}
}

/*
 * hist_run - one history of steps events.  late (0-9) is how often the
 * compactor lags: 0 builds every job at once.  fits (0-8) is how
 * often a fit outside the sawtooth comes.
 */
static void
hist_run(uint64_t seed, enum plan_unit unit, uint64_t ceiling, uint64_t floor,
    uint32_t jobs, unsigned late, unsigned fits, uint64_t steps)
{
	struct plan_settings set;
	struct hist h;
	struct plan_job j;
	uint64_t s, r;

	memset(&h, 0, sizeof(h));
	h.rng = seed * 2654435761u + 1;
	plan_settings_default(&set);
	set.unit = unit;
	set.ceiling = ceiling;
	set.floor = floor;
	set.jobs = jobs;
	if (unit == PLAN_UNIT_LINES) {
		set.cceiling = ceiling / 2;
		set.cfloor = floor / 2;
	} else if (ceiling < PLAN_CCEILING * 2) {
		set.cceiling = ceiling / 3;
		set.cfloor = floor / 3;
	}
	CHECK_EQ_INT(plan_new(&set, &h.p), 0);
	for (s = 0; s < steps; s++) {
		r = test_rand(&h.rng) % 100;
		if (r < 50 || plan_count(h.p) == 0) {
			int built = test_rand(&h.rng) % 10 >= late;

			hist_msg(&h, built,
			    unit == PLAN_UNIT_LINES && built
				? 1
				: hist_size(&h, 20, built ? 512 : 900));
		} else if (r < 51 && test_rand(&h.rng) % 8 < fits) {
			hist_fit(&h, test_between(&h.rng, floor / 2, ceiling));
		} else if (r < 56) {
			plan_work_retry(h.p);
		} else if (r < 58) {
			plan_work_wait(h.p, (int)(test_rand(&h.rng) & 1));
		} else {
			/* The compactor: take what is ready, finish some. */
			while (h.nrun < 64 && plan_work_take(h.p, &j) == 0)
				h.run[h.nrun++] = j;
			hist_check(&h);
			while (h.nrun > 0 && test_rand(&h.rng) % 10 >= late / 2)
				hist_finish(
				    &h, (size_t)(test_rand(&h.rng) % h.nrun));
		}
		hist_check(&h);
	}
	plan_destroy(&h.p);
}

/* The laws over generated histories at the gist's sizes. */
static void
laws_gist_sizes(void)
{
	hist_run(1, PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR, 8, 0, 0, 12000);
	hist_run(2, PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR, 8, 3, 1, 3000);
	CHECKF(seen.batches > 10 && seen.contexts > 100,
	    "%" PRIu64 " batches, %" PRIu64 " contexts", seen.batches,
	    seen.contexts);
}

/*
 * hist_many - 20 random histories from seed on, in unit, with ceilings
 * in [lo, hi], any floor, 1-8 jobs and any lateness; then check that they
 * saw batches, batches stuck above the floor and fits.
 */
static void
hist_many(uint64_t seed, enum plan_unit unit, uint64_t lo, uint64_t hi)
{
	uint64_t s;

	for (s = seed; s < seed + 20; s++) {
		uint64_t rng = s;
		uint64_t ceil = test_between(&rng, lo, hi);

		hist_run(s, unit, ceil,
		    test_between(&rng, unit == PLAN_UNIT_LINES ? 1 : 0, ceil),
		    (uint32_t)test_between(&rng, 1, 8),
		    (unsigned)test_between(&rng, 0, 9), 8, 1500);
	}
	CHECKF(seen.batches > 100 && seen.stuck > 10 && seen.fits > 20,
	    "histories too tame: %" PRIu64 " batches, %" PRIu64
	    " stuck, %" PRIu64 " fits",
	    seen.batches, seen.stuck, seen.fits);
}

/* The laws over histories with small budgets: a deep tree, late builds. */
static void
laws_small_budgets(void)
{
	hist_run(3, PLAN_UNIT_BYTES, 6000, 3000, 8, 0, 8, 4000);
	hist_run(4, PLAN_UNIT_BYTES, 2000, 1000, 8, 5, 8, 4000);
	hist_many(10, PLAN_UNIT_BYTES, 600, 20000);
}

/* The laws with every line counting 1 (push's unit). */
static void
laws_unit_lines(void)
{
	hist_many(40, PLAN_UNIT_LINES, 4, 100);
}

/* ---- push, and the worked example ------------------------------------- */

/*
 * Taelin's push list as the binary counter of docs/memory.md: digit j
 * (newest first) keeps d_j in {0, 1} and stands for one line of level
 * j + d_j.  A push adds 1 at digit 0: a 0 absorbs it (becomes 1), a 1 carries
 * (becomes 0 and the push goes on at digit j + 1), a missing digit is
 * born as 0.
 */
struct push {
	unsigned char d[64];
	unsigned n;
};

/* push_push - one message more. */
static void
push_push(struct push *ps)
{
	unsigned j;

	for (j = 0; j < ps->n; j++) {
		if (ps->d[j] == 0) {
			ps->d[j] = 1;
			return;
		}
		ps->d[j] = 0;
	}
	ps->d[ps->n++] = 0;
}

/* push_same - whether the view is push's list, line for line. */
static int
push_same(const struct plan *p, const struct push *ps)
{
	const struct plan_line *v;
	size_t n, k;
	uint64_t first = 0;
	unsigned j, l;

	plan_view(p, &v, &n);
	if (n != ps->n)
		return 0;
	for (k = 0; k < n; k++) {
		j = ps->n - 1 - (unsigned)k; /* oldest first */
		l = j + ps->d[j];
		if (v[k].l != l || test_first(&v[k]) != first)
			return 0;
		first += UINT64_C(1) << l;
	}
	return 1;
}

/* push_build_all - the instant compactor: every whole node is built. */
static void
push_build_all(struct plan *p, uint64_t m)
{
	unsigned l;

	CHECK_EQ_INT(plan_append(p, 1, 1), 0);
	for (l = 1; l < 40 && ((m + 1) & ((UINT64_C(1) << l) - 1)) == 0; l++)
		CHECK_EQ_INT(plan_built(p, l, m >> l, 1), 0);
}

/*
 * push_run - steps t = 0..last, step t being message t's push (T = t +
 * 1), with push's length as the line budget of a fit; the number of
 * steps after which the view is push's list.
 */
static unsigned
push_run(enum plan_order order, uint64_t last, int stop_at_first_miss)
{
	struct plan_settings set;
	struct plan_batch b;
	struct push ps;
	struct plan *p;
	unsigned agree = 0;
	uint64_t t;

	plan_settings_default(&set);
	set.unit = PLAN_UNIT_LINES;
	set.order = order;
	set.ceiling = set.floor = UINT64_MAX; /* only the fits merge */
	CHECK_EQ_INT(plan_new(&set, &p), 0);
	memset(&ps, 0, sizeof(ps));
	for (t = 0; t <= last; t++) {
		push_build_all(p, t);
		push_push(&ps);
		CHECK_EQ_INT(plan_fit(p, ps.n, &b), 0);
		if (push_same(p, &ps))
			agree++;
		else if (stop_at_first_miss)
			CHECKF(0,
			    "push_agrees: view differs from push at t=%" PRIu64,
			    t);
	}
	plan_destroy(&p);
	return agree;
}

/* push_agrees: due from last makes push's merges at t = 0..20,000. */
static void
push_agrees(void)
{
	CHECK_EQ_INT(push_run(PLAN_ORDER_LAST, 20000, 1), 20001);
}

/* Due from first agrees with push at exactly 481 of 20,001 steps. */
static void
first_agrees_481(void)
{
	CHECK_EQ_INT(push_run(PLAN_ORDER_FIRST, 20000, 0), 481);
}

/* first_leaves_push: due from first leaves push within t = 0..10. */
static void
first_leaves_push(void)
{
	CHECK(push_run(PLAN_ORDER_FIRST, 10, 0) < 11);
	CHECK_EQ_INT(push_run(PLAN_ORDER_LAST, 10, 1), 11);
}

/*
 * t10_view - the gist's T = 10 state: view 0+4, 4+4, 8+1, 9+1, with
 * 0+8 and 8+2 built, in push's unit.
 */
static struct plan *
t10_view(enum plan_order order)
{
	struct plan_settings set;
	struct plan_batch b;
	struct plan *p;
	uint64_t m;

	plan_settings_default(&set);
	set.unit = PLAN_UNIT_LINES;
	set.order = order;
	CHECK_EQ_INT(plan_new(&set, &p), 0);
	for (m = 0; m < 8; m++)
		CHECK_EQ_INT(plan_append(p, 1, 1), 0);
	for (m = 0; m < 4; m++)
		CHECK_EQ_INT(plan_built(p, 1, m, 1), 0);
	CHECK_EQ_INT(plan_built(p, 2, 0, 1), 0);
	CHECK_EQ_INT(plan_built(p, 2, 1, 1), 0);
	CHECK_EQ_INT(plan_fit(p, 2, &b), 0);
	CHECK_EQ_INT(plan_append(p, 1, 1), 0);
	CHECK_EQ_INT(plan_append(p, 1, 1), 0);
	CHECK_EQ_INT(plan_built(p, 3, 0, 1), 0);
	CHECK_EQ_INT(plan_built(p, 1, 4, 1), 0);
	return p;
}

/* last_merges_8_9: at T = 10, budget 3, due from last merges 8-9. */
static void
t10_last_merges_8_9(void)
{
	struct plan *p = t10_view(PLAN_ORDER_LAST);
	const struct plan_line *v;
	struct plan_batch b;
	size_t n;

	plan_view(p, &v, &n);
	CHECK_EQ_INT(n, 4);
	CHECK(v[0].l == 2 && v[1].l == 2 && v[2].l == 0 && v[3].l == 0);
	CHECK_EQ_INT(plan_fit(p, 3, &b), 0);
	CHECK_EQ_INT(b.nmerges, 1);
	CHECK(b.merges[0].l == 1 && b.merges[0].i == 4);
	plan_view(p, &v, &n);
	CHECK(n == 3 && v[2].l == 1 && v[2].i == 4);
	plan_destroy(&p);
}

/* first_merges_0_7: the same state, due from first, merges 0-7. */
static void
t10_first_merges_0_7(void)
{
	struct plan *p = t10_view(PLAN_ORDER_FIRST);
	struct plan_batch b;

	CHECK_EQ_INT(plan_fit(p, 3, &b), 0);
	CHECK_EQ_INT(b.nmerges, 1);
	CHECK(b.merges[0].l == 3 && b.merges[0].i == 0);
	plan_destroy(&p);
}

/*
 * Equal dues go to the oldest pair: at T = 7 the pairs 0+2,2+2 and
 * 4+1,5+1 are both due 2 ((7 - 3)/2 and (7 - 5)/1).
 */
static void
ties_go_to_the_oldest_pair(void)
{
	struct plan *p = test_new(PLAN_UNIT_LINES, UINT64_MAX, UINT64_MAX);
	struct plan_batch b;
	uint64_t m;

	for (m = 0; m < 7; m++)
		CHECK_EQ_INT(plan_append(p, 1, 1), 0);
	CHECK_EQ_INT(plan_built(p, 1, 0, 1), 0);
	CHECK_EQ_INT(plan_built(p, 1, 1, 1), 0);
	CHECK_EQ_INT(plan_fit(p, 5, &b), 0); /* 0+2 2+2 4+1 5+1 6+1 */
	CHECK_EQ_INT(b.nmerges, 2);
	CHECK_EQ_INT(plan_built(p, 2, 0, 1), 0);
	CHECK_EQ_INT(plan_built(p, 1, 2, 1), 0);
	CHECK_EQ_INT(plan_fit(p, 4, &b), 0);
	CHECK_EQ_INT(b.nmerges, 1);
	CHECKF(b.merges[0].l == 2 && b.merges[0].i == 0,
	    "tie went to %u:%" PRIu64, b.merges[0].l, b.merges[0].i);
	plan_destroy(&p);
}

/* ---- the sawtooth ----------------------------------------------------- */

/*
 * One batch past the ceiling merges down to the floor, not just under
 * the ceiling; between batches the view only grows at its end (rule 28).
 */
static void
sawtooth_batches_to_the_floor(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, 20000, 10000);
	struct plan_batch b;
	struct plan_job j;
	uint64_t m, rng = 7;
	unsigned batches = 0;

	for (m = 0; m < 3000; m++) {
		CHECK_EQ_INT(
		    plan_append(p, 1, (uint32_t)test_between(&rng, 20, 512)),
		    0);
		while (plan_work_take(p, &j) == 0)
			CHECK_EQ_INT(
			    plan_built(p, j.l, j.i, j.free ? j.src_size : 400),
			    0);
		CHECK_EQ_INT(plan_sawtooth(p, &b), 0);
		if (b.ran) {
			batches++;
			CHECK(b.nmerges > 0);
			CHECKF(plan_view_size(p) <= 10000,
			    "batch ended at %" PRIu64, plan_view_size(p));
			CHECK(!plan_shrinking(p));
		} else {
			CHECK(plan_view_size(p) <= 20000);
		}
	}
	CHECK(batches > 10);
	plan_destroy(&p);
}

/*
 * F1: a batch that cannot reach the floor leaves the view shrinking,
 * and the next messages run batches until it reaches the floor.
 */
static void
sawtooth_shrinks_across_messages(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, 3000, 1000);
	struct plan_batch b;
	uint64_t m;
	unsigned l;

	/* 20 messages of 200 bytes: nothing above them built yet. */
	for (m = 0; m < 20; m++) {
		CHECK_EQ_INT(plan_append(p, 1, 200), 0);
		CHECK_EQ_INT(plan_sawtooth(p, &b), 0);
	}
	CHECK(plan_shrinking(p));
	CHECK(b.ran && b.nmerges == 0);
	CHECK_EQ_INT(plan_view_size(p), 4000);
	/* The compactor catches up: every whole node of 0..19 built. */
	for (l = 1; l <= 4; l++)
		for (m = 0; m < (UINT64_C(20) >> l); m++)
			CHECK_EQ_INT(plan_built(p, l, m, 100), 0);
	CHECK_EQ_INT(plan_view_size(p), 4000); /* building merges nothing */
	CHECK_EQ_INT(plan_append(p, 1, 200), 0);
	CHECK_EQ_INT(plan_sawtooth(p, &b), 0);
	CHECK(b.ran && b.nmerges > 0);
	CHECK(plan_view_size(p) <= 1000);
	CHECK(!plan_shrinking(p));
	/* Not shrinking and under the ceiling: the next message only appends. */
	CHECK_EQ_INT(plan_append(p, 1, 200), 0);
	CHECK_EQ_INT(plan_sawtooth(p, &b), 0);
	CHECK(!b.ran);
	plan_destroy(&p);
}

/* examined - the candidate pairs the fits of p have looked at so far. */
static uint64_t
examined(const struct plan *p)
{
	struct plan_stats st;

	plan_stats(p, &st);
	return st.examined;
}

/*
 * A stuck view (over its ceiling, every parent unbuilt, the compactor
 * thousands of messages behind) runs a batch at every message, and that
 * batch looks at no pair at all, however long the view.  Once one
 * parent is built, the next batch looks at that pair and merges it.
 */
static void
stuck_batch_looks_at_nothing(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, 20000, 10000);
	const struct plan_line *v;
	struct plan_batch b;
	uint64_t m, before;
	size_t n;

	for (m = 0; m < 5000; m++) {
		CHECK_EQ_INT(plan_append(p, 0, 300), 0);
		CHECK_EQ_INT(plan_sawtooth(p, &b), 0);
	}
	CHECK(b.ran && b.nmerges == 0 && plan_shrinking(p));
	CHECK_EQ_INT(plan_view_size(p), 5000 * 29);
	CHECK_EQ_INT(examined(p), 0);
	/* The oldest pair and its parent are built: one pair can merge. */
	CHECK_EQ_INT(plan_built(p, 0, 0, 100), 0);
	CHECK_EQ_INT(plan_built(p, 0, 1, 100), 0);
	CHECK_EQ_INT(plan_built(p, 1, 0, 150), 0);
	CHECK_EQ_INT(plan_append(p, 0, 300), 0);
	before = examined(p);
	CHECK_EQ_INT(plan_sawtooth(p, &b), 0);
	CHECK(b.ran && b.nmerges == 1 && b.merges[0].l == 1 &&
	    b.merges[0].i == 0);
	CHECKF(examined(p) - before <= 4,
	    "a batch with one pair looked at %" PRIu64 " pairs",
	    examined(p) - before);
	plan_view(p, &v, &n);
	CHECK_EQ_INT(n, 5000);
	CHECK(v[0].l == 1 && v[0].i == 0 && v[0].size == 150 && v[1].i == 2);
	/* Stuck again: a thousand more batches look at nothing. */
	before = examined(p);
	for (m = 0; m < 1000; m++) {
		CHECK_EQ_INT(plan_append(p, 0, 300), 0);
		CHECK_EQ_INT(plan_sawtooth(p, &b), 0);
		CHECK(b.ran && b.nmerges == 0);
	}
	CHECK_EQ_INT(examined(p) - before, 0);
	law_cview(p, 1);
	plan_destroy(&p);
}

/* A log of a live planner, as the store would keep it. */
struct fold_log {
	struct plan_line *msgs; /* message m: built at once? size */
	struct plan_line *builds; /* nodes built later, in order */
	size_t nbuilds;
	struct plan_node *merges; /* every merge, in order */
	size_t nmerges;
	uint64_t last_t; /* the last batch record */
	int last_open;
};

/* fold_all_first - the other fold: messages, then nodes, then merges. */
static struct plan *
fold_all_first(const struct fold_log *lg, uint64_t count)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, 6000, 3000);
	size_t k;
	unsigned l;

	for (k = 0; k < count; k++)
		CHECK_EQ_INT(
		    plan_append(p, lg->msgs[k].built, lg->msgs[k].size), 0);
	for (l = 0; l < 20; l++)
		for (k = 0; k < lg->nbuilds; k++)
			if (lg->builds[k].l == l)
				CHECK_EQ_INT(plan_built(p, l, lg->builds[k].i,
						 lg->builds[k].size),
				    0);
	for (k = 0; k < lg->nmerges; k++)
		CHECK_EQ_INT(
		    plan_merge(p, lg->merges[k].l, lg->merges[k].i), 0);
	CHECK_EQ_INT(plan_restore(p, lg->last_t, lg->last_open), 0);
	return p;
}

/* same_view - two planners show the same view and state. */
static void
same_view(const struct plan *x, const struct plan *y)
{
	const struct plan_line *a, *c;
	size_t na, nc;

	plan_view(x, &a, &na);
	plan_view(y, &c, &nc);
	CHECK_EQ_INT(na, nc);
	CHECK(same_lines(a, c, na));
	CHECK_EQ_INT(plan_shrinking(x), plan_shrinking(y));
	CHECK_EQ_INT(plan_view_size(x), plan_view_size(y));
}

/*
 * fold_record - 2,000 messages through live with a late compactor; fold
 * gets every message and node and replays each batch's merges and
 * record, and *lg logs them all (freed by the caller).
 */
static void
fold_record(
    struct plan *live, struct plan *fold, struct fold_log *lg, uint64_t *rng)
{
	struct plan_batch b;
	struct plan_job j;
	size_t k;
	uint64_t m;
	uint32_t size;

	memset(lg, 0, sizeof(*lg));
	lg->msgs = xcalloc(2000, sizeof(*lg->msgs));
	lg->builds = xcalloc(4000, sizeof(*lg->builds));
	lg->merges = xcalloc(4000, sizeof(*lg->merges));
	for (m = 0; m < 2000; m++) {
		int built = test_rand(rng) % 4 != 0;

		size = (uint32_t)test_between(rng, 20, 512);
		lg->msgs[m].built = (uint8_t)built;
		lg->msgs[m].size = size;
		CHECK_EQ_INT(plan_append(live, built, size), 0);
		CHECK_EQ_INT(plan_append(fold, built, size), 0);
		while (
		    test_rand(rng) % 3 != 0 && plan_work_take(live, &j) == 0) {
			size = (uint32_t)test_between(rng, 300, 512);
			CHECK_EQ_INT(plan_built(live, j.l, j.i, size), 0);
			CHECK_EQ_INT(plan_built(fold, j.l, j.i, size), 0);
			CHECK(lg->nbuilds < 4000);
			lg->builds[lg->nbuilds].l = (uint8_t)j.l;
			lg->builds[lg->nbuilds].i = j.i;
			lg->builds[lg->nbuilds++].size = size;
		}
		CHECK_EQ_INT(plan_sawtooth(live, &b), 0);
		if (!b.ran)
			continue;
		for (k = 0; k < b.nmerges; k++) {
			CHECK_EQ_INT(
			    plan_merge(fold, b.merges[k].l, b.merges[k].i), 0);
			CHECK(lg->nmerges < 4000);
			lg->merges[lg->nmerges++] = b.merges[k];
		}
		CHECK_EQ_INT(plan_restore(fold, m + 1, b.shrinking), 0);
		lg->last_t = m + 1;
		lg->last_open = b.shrinking;
	}
}

/*
 * After either fold the planner goes on exactly as the live one: the
 * same batches merge the same pairs, message after message (the pairs
 * that can merge are rebuilt by the replay, not only the lines).
 */
static void
replay_then_same_batches(void)
{
	struct plan *live = test_new(PLAN_UNIT_BYTES, 6000, 3000);
	struct plan *fold = test_new(PLAN_UNIT_BYTES, 6000, 3000);
	struct plan *fold2, *ps[3];
	struct plan_node got[3][256];
	struct fold_log lg;
	struct plan_batch b;
	struct plan_job j;
	uint64_t m, rng = 12, merged = 0;
	uint32_t size;
	size_t k, x, nm[3];
	int built;

	fold_record(live, fold, &lg, &rng);
	fold2 = fold_all_first(&lg, 2000);
	ps[0] = live;
	ps[1] = fold;
	ps[2] = fold2;
	for (m = 0; m < 1500; m++) {
		built = test_rand(&rng) % 4 != 0;
		size = (uint32_t)test_between(&rng, 20, 512);
		for (x = 0; x < 3; x++)
			CHECK_EQ_INT(plan_append(ps[x], built, size), 0);
		while (
		    test_rand(&rng) % 3 != 0 && plan_work_take(live, &j) == 0) {
			size = (uint32_t)test_between(&rng, 300, 512);
			for (x = 0; x < 3; x++)
				CHECK_EQ_INT(
				    plan_built(ps[x], j.l, j.i, size), 0);
		}
		for (x = 0; x < 3; x++) {
			CHECK_EQ_INT(plan_sawtooth(ps[x], &b), 0);
			CHECK(b.nmerges <= 256);
			nm[x] = b.nmerges;
			for (k = 0; k < b.nmerges; k++)
				got[x][k] = b.merges[k];
		}
		for (x = 1; x < 3; x++) {
			CHECK_EQ_INT(nm[x], nm[0]);
			for (k = 0; k < nm[0]; k++)
				CHECK(got[x][k].l == got[0][k].l &&
				    got[x][k].i == got[0][k].i);
		}
		merged += nm[0];
	}
	CHECK(merged > 100);
	same_view(live, fold);
	same_view(live, fold2);
	law_cview(fold, 1);
	law_cview(fold2, 1);
	free(lg.msgs);
	free(lg.builds);
	free(lg.merges);
	for (x = 0; x < 3; x++)
		plan_destroy(&ps[x]);
}

/*
 * The fold (D1, F1): replaying the logged merges with plan_merge() and
 * each batch's {t, open} with plan_restore() gives the same view, line
 * for line, and the same shrinking flag, whether the fold goes record by
 * record or marks every node first; wrong merges are refused.
 */
static void
replay_gives_the_same_view(void)
{
	struct plan *live = test_new(PLAN_UNIT_BYTES, 6000, 3000);
	struct plan *fold = test_new(PLAN_UNIT_BYTES, 6000, 3000);
	struct plan *fold2;
	struct fold_log lg;
	uint64_t rng = 11;

	fold_record(live, fold, &lg, &rng);
	CHECK(lg.nmerges > 100 && lg.last_open);
	same_view(live, fold);
	fold2 = fold_all_first(&lg, 2000);
	same_view(live, fold2);
	law_cview(fold2, 0);
	CHECK_EQ_INT(plan_restore(fold, 2001, 0), -SHIRO_ERR_STATE);
	/* A merge into an unbuilt parent, or of lines not in the view. */
	CHECK_EQ_INT(plan_merge(fold, 0, 0), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(plan_append(fold, 1, 10), 0);
	CHECK_EQ_INT(plan_append(fold, 1, 10), 0);
	CHECK_EQ_INT(plan_merge(fold, 1, 1000), -SHIRO_ERR_STATE);
	CHECK_EQ_INT(plan_built(fold, 1, 1000, 21), 0);
	CHECK_EQ_INT(plan_merge(fold, 1, 1000), 0);
	CHECK_EQ_INT(plan_merge(fold, 1, 1000), -SHIRO_ERR_NOENT);
	/* The compaction view at start: the view merged down once (D7). */
	law_cview(fold, 0);
	free(lg.msgs);
	free(lg.builds);
	free(lg.merges);
	plan_destroy(&live);
	plan_destroy(&fold);
	plan_destroy(&fold2);
}

/* ---- built nodes ------------------------------------------------------ */

/* A node is built once, over messages that exist, over built children. */
static void
built_refuses_bad_nodes(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	const struct plan_line *v;
	struct plan_line *old;
	size_t n, nold;

	CHECK_EQ_INT(plan_append(p, 1, 100), 0);
	CHECK_EQ_INT(plan_append(p, 0, 700), 0);
	CHECK_EQ_INT(plan_append(p, 0, 50), 0);
	old = test_copy(p, &nold);
	CHECK_EQ_INT(plan_built(p, 0, 0, 10), -SHIRO_ERR_EXIST);
	CHECK_EQ_INT(plan_built(p, 0, 3, 10), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(plan_built(p, 1, 1, 10), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(plan_built(p, 1, 0, 10), -SHIRO_ERR_STATE);
	CHECK_EQ_INT(plan_built(p, 0, 1, 513), -SHIRO_ERR_TOOBIG);
	CHECK_EQ_INT(plan_built(p, 63, 0, 10), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(plan_built(p, 40, UINT64_MAX, 10), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(plan_append(p, 1, 513), -SHIRO_ERR_TOOBIG);
	CHECK_EQ_INT(plan_count(p), 3);
	plan_view(p, &v, &n);
	CHECK_EQ_INT(n, nold);
	CHECK(same_lines(v, old, n));
	CHECK_EQ_INT(plan_built(p, 0, 1, 300), 0);
	CHECK_EQ_INT(plan_built(p, 1, 0, 400), 0);
	CHECK_EQ_INT(plan_built(p, 1, 0, 400), -SHIRO_ERR_EXIST);
	CHECK_EQ_INT(plan_view_size(p), 100 + 300 + PLAN_PLACEHOLDER_SIZE);
	free(old);
	plan_destroy(&p);
}

/* Settings that cannot work are refused. */
static void
settings_are_checked(void)
{
	struct plan_settings set;
	struct plan *p;

	plan_settings_default(&set);
	CHECK_EQ_INT(set.ceiling, 128000);
	CHECK_EQ_INT(set.floor, 64000);
	CHECK_EQ_INT(set.cceiling, 32000);
	CHECK_EQ_INT(set.cfloor, 16000);
	CHECK_EQ_INT(set.jobs, 8);
	CHECK_EQ_INT(set.window, 8);
	CHECK_EQ_INT(set.node_size, 512);
	CHECK_EQ_INT(set.placeholder, 29);
	set.floor = set.ceiling + 1;
	CHECK_EQ_INT(plan_new(&set, &p), -SHIRO_ERR_INVAL);
	CHECK(p == NULL);
	plan_settings_default(&set);
	set.jobs = 0;
	CHECK_EQ_INT(plan_new(&set, &p), -SHIRO_ERR_INVAL);
	plan_settings_default(&set);
	CHECK_EQ_INT(plan_new(&set, &p), 0);
	set.cfloor = set.cceiling + 1;
	CHECK_EQ_INT(plan_configure(p, &set), -SHIRO_ERR_INVAL);
	plan_destroy(&p);
	CHECK(p == NULL);
	plan_destroy(&p);
}

/* ---- the work queue --------------------------------------------------- */

/*
 * How the queue is fed, so that nothing scans the tree (rule 42): an
 * unbuilt message joins the list of unbuilt messages when it arrives
 * (plan_append), and the first `window` of them are the ready leaves; a
 * built node whose sibling is built puts their parent at the end of the
 * merge queue at that moment (plan_built).  plan_work_take reads only
 * these lists.  The tests below watch the jobs that come out.
 */

/* take_all - take jobs until none is ready; how many. */
static size_t
take_all(struct plan *p, struct plan_job *out, size_t max)
{
	size_t n = 0;

	while (n < max && plan_work_take(p, &out[n]) == 0)
		n++;
	return n;
}

/* At most `jobs` run at once; leaves come oldest first. */
static void
work_at_most_jobs(void)
{
	struct plan_settings set;
	struct plan_job j[16];
	struct plan *p;
	uint64_t m;

	plan_settings_default(&set);
	set.jobs = 3;
	CHECK_EQ_INT(plan_new(&set, &p), 0);
	for (m = 0; m < 10; m++)
		CHECK_EQ_INT(plan_append(p, 0, 100), 0);
	CHECK_EQ_INT(take_all(p, j, 16), 3);
	CHECK(j[0].i == 0 && j[1].i == 1 && j[2].i == 2);
	CHECK_EQ_INT(plan_work_running(p), 3);
	CHECK_EQ_INT(plan_work_take(p, &j[3]), -SHIRO_ERR_AGAIN);
	CHECK_EQ_INT(plan_built(p, 0, 1, 100), 0);
	CHECK_EQ_INT(plan_work_running(p), 2);
	CHECK_EQ_INT(take_all(p, j, 16), 1);
	CHECK_EQ_INT(j[0].i, 3);
	plan_destroy(&p);
}

/* A leaf starts only while fewer than 8 lines before it are unbuilt. */
static void
work_leaf_window(void)
{
	struct plan_settings set;
	struct plan_job j[32];
	struct plan *p;
	uint64_t m;
	size_t k;

	plan_settings_default(&set);
	set.jobs = 32;
	CHECK_EQ_INT(plan_new(&set, &p), 0);
	for (m = 0; m < 20; m++)
		CHECK_EQ_INT(plan_append(p, 0, 100), 0);
	CHECK_EQ_INT(take_all(p, j, 32), 8);
	for (k = 0; k < 8; k++)
		CHECK(j[k].l == 0 && j[k].i == k);
	/* Message 3 built: message 8 has 7 unbuilt lines before it. */
	CHECK_EQ_INT(plan_built(p, 0, 3, 100), 0);
	CHECK_EQ_INT(take_all(p, j, 32), 1);
	CHECK(j[0].l == 0 && j[0].i == 8);
	/* A failed leaf still counts as unbuilt before the others. */
	CHECK_EQ_INT(plan_work_fail(p, 0, 0), 0);
	CHECK_EQ_INT(take_all(p, j, 32), 0);
	CHECK_EQ_INT(plan_unbuilt(p), 19);
	plan_destroy(&p);
}

/* A merge is ready once both halves are built, and not before. */
static void
work_merge_needs_both_halves(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	struct plan_job j[8];

	CHECK_EQ_INT(plan_append(p, 1, 200), 0);
	CHECK_EQ_INT(plan_append(p, 1, 300), 0);
	CHECK_EQ_INT(plan_append(p, 1, 300), 0);
	CHECK_EQ_INT(plan_append(p, 0, 600), 0);
	/* (1, 0) is ready: 200 + 1 + 300 fits in 512, no model call. */
	CHECK_EQ_INT(take_all(p, j, 8), 2);
	CHECK(j[0].l == 0 && j[0].i == 3 && !j[0].free);
	CHECK_EQ_INT(j[0].src_size, 600);
	CHECK(j[1].l == 1 && j[1].i == 0 && j[1].free);
	CHECK_EQ_INT(j[1].src_size, 501);
	CHECK_EQ_INT(plan_built(p, 1, 0, 501), 0);
	CHECK_EQ_INT(take_all(p, j, 8), 0);
	/* Message 3 built: (1, 1) is ready, 300 + 1 + 250 needs a call. */
	CHECK_EQ_INT(plan_built(p, 0, 3, 250), 0);
	CHECK_EQ_INT(take_all(p, j, 8), 1);
	CHECK(j[0].l == 1 && j[0].i == 1 && !j[0].free);
	CHECK_EQ_INT(j[0].src_size, 551);
	CHECK_EQ_INT(plan_built(p, 1, 1, 400), 0);
	CHECK_EQ_INT(take_all(p, j, 8), 1);
	CHECK(j[0].l == 2 && j[0].i == 0);
	plan_destroy(&p);
}

/* A waiting turn's unbuilt lines go first; merges wait (D5). */
static void
work_waiting_turn_first(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	struct plan_job j[8];

	CHECK_EQ_INT(plan_append(p, 1, 300), 0);
	CHECK_EQ_INT(plan_append(p, 1, 300), 0); /* (1, 0) ready */
	CHECK_EQ_INT(plan_append(p, 0, 300), 0);
	plan_work_wait(p, 1);
	CHECK_EQ_INT(take_all(p, j, 8), 1);
	CHECK(j[0].l == 0 && j[0].i == 2);
	CHECK(plan_work_needed(p, 0, 2));
	CHECK(!plan_work_needed(p, 1, 0));
	CHECK(!plan_work_needed(p, 0, 0));
	CHECK_EQ_INT(plan_work_take(p, &j[1]), -SHIRO_ERR_AGAIN);
	plan_work_wait(p, 0);
	CHECK_EQ_INT(take_all(p, j, 8), 1);
	CHECK(j[0].l == 1 && j[0].i == 0);
	/* A turn starts to wait: the merge stops, without a failure. */
	plan_work_wait(p, 1);
	CHECK_EQ_INT(plan_work_drop(p, 1, 0), 0);
	CHECK_EQ_INT(plan_work_drop(p, 1, 0), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(plan_work_take(p, &j[0]), -SHIRO_ERR_AGAIN);
	CHECK_EQ_INT(plan_built(p, 0, 2, 30), 0);
	CHECK_EQ_INT(plan_unbuilt(p), 0);
	plan_work_wait(p, 0);
	CHECK_EQ_INT(take_all(p, j, 8), 1);
	CHECK(j[0].l == 1 && j[0].i == 0);
	plan_destroy(&p);
}

/* A failed job waits for the caller's retry; then it is ready again. */
static void
work_failed_waits_for_retry(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	struct plan_job j[8];

	CHECK_EQ_INT(plan_append(p, 1, 300), 0);
	CHECK_EQ_INT(plan_append(p, 1, 300), 0);
	CHECK_EQ_INT(plan_append(p, 0, 900), 0);
	CHECK_EQ_INT(take_all(p, j, 8), 2);
	CHECK_EQ_INT(plan_work_fail(p, 0, 2), 0);
	CHECK_EQ_INT(plan_work_fail(p, 1, 0), 0);
	CHECK_EQ_INT(plan_work_fail(p, 1, 0), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(plan_work_running(p), 0);
	CHECK_EQ_INT(take_all(p, j, 8), 0);
	plan_work_retry(p);
	CHECK_EQ_INT(take_all(p, j, 8), 2);
	CHECK(j[0].l == 0 && j[0].i == 2);
	CHECK(j[1].l == 1 && j[1].i == 0);
	/* The third failure is the caller's: it builds the node, cut. */
	CHECK_EQ_INT(plan_built(p, 0, 2, 512), 0);
	CHECK_EQ_INT(plan_built(p, 1, 0, 512), 0);
	CHECK_EQ_INT(plan_work_running(p), 0);
	plan_destroy(&p);
}

/* A node built behind the queue's back (the store) leaves the queue. */
static void
work_queue_skips_nodes_built_elsewhere(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	struct plan_job j[8];
	uint64_t m;

	for (m = 0; m < 400; m++)
		CHECK_EQ_INT(plan_append(p, 1, 100), 0);
	for (m = 0; m < 200; m++)
		CHECK_EQ_INT(plan_built(p, 1, m, 300), 0);
	/* Now (2, 0..99) are ready, and only they. */
	CHECK_EQ_INT(take_all(p, j, 8), 8);
	for (m = 0; m < 8; m++)
		CHECK(j[m].l == 2 && j[m].i == m);
	plan_destroy(&p);
}

/* ---- the compaction view and contexts --------------------------------- */

/* The compaction view starts as the view merged to 16 KB; a leaf's
 * context is the built lines before it. */
static void
cview_and_context(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	const struct plan_line *c;
	struct plan_batch b;
	struct plan_job j;
	uint64_t m, csize, rng = 3;
	size_t nc, n;

	for (m = 0; m < 600; m++) {
		CHECK_EQ_INT(
		    plan_append(p, 1, (uint32_t)test_between(&rng, 20, 512)),
		    0);
		while (plan_work_take(p, &j) == 0)
			CHECK_EQ_INT(
			    plan_built(p, j.l, j.i, j.free ? j.src_size : 400),
			    0);
		CHECK_EQ_INT(plan_sawtooth(p, &b), 0);
		plan_cview(p, &c, &nc, &csize);
		CHECK(csize <= PLAN_CCEILING);
		if (b.nmerges > 0)
			CHECK(csize <= PLAN_CFLOOR);
		law_cview(p, 1);
	}
	CHECK_EQ_INT(plan_append(p, 0, 2000), 0);
	CHECK_EQ_INT(plan_append(p, 0, 2000), 0);
	CHECK_EQ_INT(plan_sawtooth(p, &b), 0);
	plan_cview(p, &c, &nc, &csize);
	/* Message 601's context stops at unbuilt message 600. */
	CHECK_EQ_INT(plan_context(p, 0, 601, &n), 0);
	CHECK_EQ_INT(n, nc - 2);
	CHECK_EQ_INT(plan_context(p, 0, 600, &n), 0);
	CHECK_EQ_INT(n, nc - 2);
	/* The context of a node ends at its last message. */
	CHECK_EQ_INT(plan_context(p, 0, 599, &n), 0);
	CHECK_EQ_INT(n, nc - 2);
	law_context(p, 2, 10);
	law_context(p, 5, 3);
	CHECK_EQ_INT(plan_context(p, 0, 602, &n), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(plan_context(p, 63, 0, &n), -SHIRO_ERR_INVAL);
	plan_destroy(&p);
}

/* ---- rendering -------------------------------------------------------- */

/* The texts of a rendering test, by node. */
struct texts {
	const char *t[4];
	unsigned l[4];
	uint64_t i[4];
	int fail;
};

/* texts_get - the render_source callback of struct texts. */
static int
texts_get(void *arg, unsigned l, uint64_t i, const char **s, size_t *len)
{
	struct texts *tx = arg;
	size_t k;

	if (tx->fail)
		return -SHIRO_ERR_IO;
	for (k = 0; k < 4; k++) {
		if (tx->t[k] != NULL && tx->l[k] == l && tx->i[k] == i) {
			*s = tx->t[k];
			*len = strlen(tx->t[k]);
			return 0;
		}
	}
	return -SHIRO_ERR_NOENT;
}

/* Every newline, "\n", "\r\n" or "\r", is one space; sizes agree. */
static void
render_flattens_newlines(void)
{
	struct buf b = BUF_INIT;
	const char *s = "a\nb\r\nc\rd\n\ne\r";

	render_flatten(&b, s, strlen(s));
	CHECK_EQ_STR(b.data, "a b c d  e ");
	CHECK_EQ_INT(render_flat_size(s, strlen(s)), b.len);
	CHECK_EQ_INT(render_flat_size("\r\n\r\n", 4), 2);
	CHECK_EQ_INT(render_flat_size("\r\r\n", 3), 2);
	CHECK_EQ_INT(render_flat_size("", 0), 0);
	CHECK_EQ_INT(strlen(RENDER_PLACEHOLDER), PLAN_PLACEHOLDER_SIZE);
	buf_free(&b);
}

/* The view renders as <chat>, id+n|text lines, placeholders, </chat>. */
static void
render_view_lines(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	struct texts tx = {
	    {"one\r\ntwo", "three", NULL, NULL}, {1, 0, 0, 0}, {0, 2, 0, 0}, 0};
	struct render_source src = {.text = texts_get, .arg = &tx};
	struct render_mark mk;
	const struct plan_line *v;
	struct plan_batch b;
	struct buf out = BUF_INIT;
	size_t n, len;

	CHECK_EQ_INT(plan_append(p, 1, 3), 0);
	CHECK_EQ_INT(plan_append(p, 1, 3), 0);
	CHECK_EQ_INT(plan_built(p, 1, 0, 7), 0);
	CHECK_EQ_INT(plan_fit(p, 0, &b), 0);
	CHECK_EQ_INT(plan_append(p, 1, 5), 0);
	CHECK_EQ_INT(plan_append(p, 0, 900), 0);
	plan_view(p, &v, &n);
	CHECK_EQ_INT(n, 3);
	buf_adds(&out, "X");
	CHECK_EQ_INT(render_view(&out, v, n, &src, &mk), 0);
	CHECK_EQ_STR(out.data,
	    "X<chat>\n0+2|one two\n2+1|three\n"
	    "3+1|(not summarized yet: zoom it)\n</chat>\n");
	CHECK_EQ_INT(mk.mark_lines, 0);
	/* A callback error leaves the output as it was. */
	tx.fail = 1;
	len = out.len;
	CHECK_EQ_INT(render_view(&out, v, n, &src, &mk), -SHIRO_ERR_IO);
	CHECK_EQ_INT(out.len, len);
	CHECK_EQ_STR(out.data + 1,
	    "<chat>\n0+2|one two\n2+1|three\n"
	    "3+1|(not summarized yet: zoom it)\n</chat>\n");
	/* A text whose size is not the line's size is refused. */
	tx.fail = 0;
	tx.t[1] = "thre";
	CHECK_EQ_INT(render_view(&out, v, n, &src, NULL), -SHIRO_ERR_CORRUPT);
	buf_free(&out);
	plan_destroy(&p);
}

/* render_text_x - every node's text is "x". */
static int
render_text_x(void *arg, unsigned l, uint64_t i, const char **s, size_t *len)
{
	(void)arg;
	(void)l;
	(void)i;
	*s = "x";
	*len = 1;
	return 0;
}

/* Lines come in blocks of 4; the mark is at the last whole block. */
static void
render_block_marks(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	struct render_source src = {.text = render_text_x};
	struct render_mark mk;
	const struct plan_line *v;
	struct buf out = BUF_INIT;
	size_t n, k, off;
	const char *s;

	for (k = 0; k < 11; k++) {
		CHECK_EQ_INT(plan_append(p, 1, 1), 0);
		plan_view(p, &v, &n);
		buf_reset(&out);
		CHECK_EQ_INT(render_view(&out, v, n, &src, &mk), 0);
		CHECK_EQ_INT(mk.mark_lines, n / 4 * 4);
		if (mk.mark_lines == 0) {
			CHECK_EQ_INT(mk.mark_offset, 0);
			continue;
		}
		/* The mark falls right after line mark_lines. */
		off = 0;
		for (s = out.data; s < out.data + out.len; s++) {
			if (*s == '\n' && ++off == mk.mark_lines + 1)
				break;
		}
		CHECK_EQ_INT(mk.mark_offset, (size_t)(s - out.data) + 1);
	}
	buf_reset(&out);
	render_name(&out, 3, 5);
	CHECK_EQ_STR(out.data, "40+8");
	buf_free(&out);
	plan_destroy(&p);
}

/* render_input_m - an unbuilt message's text for D10: "\n", 299 "é", "x". */
static int
render_input_m(void *arg, uint64_t m, const char **s, size_t *len)
{
	static char text[600];
	size_t k;

	(void)arg;
	if (m != 1)
		return -SHIRO_ERR_NOENT;
	text[0] = '\n';
	for (k = 1; k + 1 < 600; k += 2) {
		text[k] = (char)0xc3;
		text[k + 1] = (char)0xa9;
	}
	text[599] = 'x';
	*s = text;
	*len = 600;
	return 0;
}

/*
 * D10: once a turn stops waiting, an unbuilt message shows its own text,
 * flattened and cut to 512 bytes, never inside a character.
 */
static void
render_unbuilt_input(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	struct render_source src = {.text = render_text_x,
	    .input = render_input_m,
	    .cut = PLAN_NODE_SIZE};
	const struct plan_line *v;
	struct buf out = BUF_INIT;
	const char *line;
	size_t n;

	CHECK_EQ_INT(plan_append(p, 1, 1), 0);
	CHECK_EQ_INT(plan_append(p, 0, 600), 0);
	plan_view(p, &v, &n);
	CHECK_EQ_INT(render_view(&out, v, n, &src, NULL), 0);
	line = strstr(out.data, "1+1|");
	CHECK(line != NULL);
	line += 4;
	/* A space, then 255 whole characters: 512 bytes would split one. */
	CHECK(line[0] == ' ' && (unsigned char)line[1] == 0xc3);
	CHECK_EQ_INT(strchr(line, '\n') - line, 511);
	CHECK_EQ_INT(render_cut("ab\xc3\xa9", 4, 3), 2);
	CHECK_EQ_INT(render_cut("ab\xc3\xa9", 4, 4), 4);
	CHECK_EQ_INT(render_cut("abc", 3, 0), 0);
	buf_free(&out);
	plan_destroy(&p);
}

/* Changing the unit or the placeholder counts the sizes again. */
static void
sizes_follow_the_settings(void)
{
	struct plan *p = test_new(PLAN_UNIT_BYTES, PLAN_CEILING, PLAN_FLOOR);
	struct plan_settings set = *plan_get_settings(p);

	CHECK_EQ_INT(plan_append(p, 1, 100), 0);
	CHECK_EQ_INT(plan_append(p, 0, 100), 0);
	CHECK_EQ_INT(plan_view_size(p), 129);
	set.placeholder = 40;
	CHECK_EQ_INT(plan_configure(p, &set), 0);
	CHECK_EQ_INT(plan_view_size(p), 140);
	set.unit = PLAN_UNIT_LINES;
	CHECK_EQ_INT(plan_configure(p, &set), 0);
	CHECK_EQ_INT(plan_view_size(p), 2);
	plan_destroy(&p);
}

static const struct harness_test tests[] = {
    HT_SLOW(laws_gist_sizes, 60),
    HT_SLOW(laws_small_budgets, 60),
    HT_SLOW(laws_unit_lines, 60),
    HT(push_agrees),
    HT(first_agrees_481),
    HT(first_leaves_push),
    HT(t10_last_merges_8_9),
    HT(t10_first_merges_0_7),
    HT(ties_go_to_the_oldest_pair),
    HT(sawtooth_batches_to_the_floor),
    HT(sawtooth_shrinks_across_messages),
    HT(stuck_batch_looks_at_nothing),
    HT(replay_gives_the_same_view),
    HT(replay_then_same_batches),
    HT(built_refuses_bad_nodes),
    HT(settings_are_checked),
    HT(work_at_most_jobs),
    HT(work_leaf_window),
    HT(work_merge_needs_both_halves),
    HT(work_waiting_turn_first),
    HT(work_failed_waits_for_retry),
    HT(work_queue_skips_nodes_built_elsewhere),
    HT(cview_and_context),
    HT(render_flattens_newlines),
    HT(render_view_lines),
    HT(render_block_marks),
    HT(render_unbuilt_input),
    HT(sizes_follow_the_settings),
};

HARNESS_MAIN(tests)
