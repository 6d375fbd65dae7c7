/*
 * plan.c - the planner: views, merge order, sawtooth and work queue.
 *
 * State, all of it small:
 *  - view, cview: arrays of lines, oldest first, each with the set of
 *    its pairs that can merge (sibling lines whose parent is built),
 *    kept up to date as nodes are built and lines merge, so that a fit
 *    reads only those pairs, never the whole view.
 *  - bits[l]: one bit per node (l, i), set once the node is built.
 *  - sizes: an open-addressing map (l, i) -> size of the built nodes
 *    that are not in the chat's view yet.  Such a node covers whole view
 *    lines (a line inside a built node would be built, and so would be
 *    merged into it only by a merge that removes it), so these nodes form
 *    full binary trees whose leaves are view lines: fewer than the view.
 *  - pend: the unbuilt messages, oldest first (they are all view lines).
 *  - mq: the merges that are ready (both halves built), first in first
 *    out; running, mfailed: the jobs running and the failed merges.
 *
 * Mutants for tests/mutants.sh: build with -DPLAN_MUTANT=N to break one
 * rule on purpose (see docs/planner.md); 0, the default, breaks nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "broker/plan.h"
#include "proto/err.h"
#include "proto/xmalloc.h"

#ifndef PLAN_MUTANT
#define PLAN_MUTANT 0
#endif
#define MUTANT_FIRST 1 /* due from first, whatever the setting */
#define MUTANT_T_MINUS 2 /* T - 1 for T in due */
#define MUTANT_NEWEST 3 /* ties go to the newest pair */
#define MUTANT_UNBUILT 4 /* merge into parents that are not built */
#define MUTANT_CEILING 5 /* a batch merges only down to the ceiling */

/* What a job of an unbuilt message is doing. */
enum plan_state { PLAN_IDLE, PLAN_RUNNING, PLAN_FAILED };

/* A pair of sibling lines of a view that can merge: its first line. */
struct plan_pair {
	uint64_t i;
	uint8_t l;
};

struct plan_lines {
	struct plan_line *v;
	size_t n;
	size_t cap;
	uint64_t size; /* the sum of plan_line_size() */
	int shrinking;
	/*
	 * Every pair of v that can merge is in pairs, with maybe a few that
	 * are not (halves that were not lines yet when their parent was
	 * built, pairs a replayed merge ended) or are there twice: a fit
	 * drops those when it reads the set.
	 */
	struct plan_pair *pairs;
	size_t npairs;
	size_t pairs_cap;
};

struct plan_bits {
	uint64_t *w;
	size_t nw;
};

/* An unbuilt message. */
struct plan_pend {
	uint64_t i;
	uint32_t src;
	uint8_t state;
};

/* A ready merge: node (l, i) and the size of its source. */
struct plan_ready {
	uint64_t i;
	uint32_t src;
	uint8_t l;
};

/*
 * A pair that can merge: its first line, at place k of the view during
 * a fit, first its first message, and key = num << (63 - l) for its due
 * num/2^l (see plan_cand_before).
 */
struct plan_cand {
	unsigned __int128 key;
	uint64_t first;
	size_t k;
};

struct plan {
	struct plan_settings set;
	uint64_t t;
	struct plan_lines view;
	struct plan_lines cview;
	int cview_stale; /* the chat's view merged: fold the cview again */
	struct plan_bits bits[PLAN_MAX_LEVEL + 1];

	uint64_t *keys; /* sizes map: key (i << 6 | l) + 1, 0 = empty */
	uint32_t *vals;
	size_t mcap;
	size_t mn;

	struct plan_cand *heap; /* a fit's candidate pairs */
	size_t nheap;
	size_t heap_cap;
	size_t *next; /* a fit's links between the lines of the view, */
	size_t *prev; /* valid for line k only when stamp[k] == gen */
	uint32_t *stamp;
	uint32_t gen;
	size_t link_cap;
	uint64_t examined; /* candidate pairs looked at, for plan_stats */

	struct plan_node *merges; /* the last batch's merges */
	size_t nmerges;
	size_t merges_cap;

	struct plan_pend *pend; /* pend[poff .. poff + pn) */
	size_t poff;
	size_t pn;
	size_t pcap;

	struct plan_ready *mq; /* mq[qhead .. qn) */
	size_t qhead;
	size_t qn;
	size_t qcap;
	size_t qstale; /* entries of mq built meanwhile */

	struct plan_ready *running;
	size_t nrunning;
	size_t rcap;
	struct plan_ready *mfailed;
	size_t nmfailed;
	size_t fcap;
	int waiting;
};

/* plan_settings_default - the design's numbers. */
void
plan_settings_default(struct plan_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->ceiling = PLAN_CEILING;
	s->floor = PLAN_FLOOR;
	s->cceiling = PLAN_CCEILING;
	s->cfloor = PLAN_CFLOOR;
	s->jobs = PLAN_JOBS;
	s->window = PLAN_WINDOW;
	s->node_size = PLAN_NODE_SIZE;
	s->placeholder = PLAN_PLACEHOLDER_SIZE;
	s->unit = PLAN_UNIT_BYTES;
	s->order = PLAN_ORDER_LAST;
}

/* plan_check_settings - 0 if s is usable, else -SHIRO_ERR_INVAL. */
static int
plan_check_settings(const struct plan_settings *s)
{
	if (s->floor > s->ceiling || s->cfloor > s->cceiling)
		return -SHIRO_ERR_INVAL;
	if (s->jobs == 0 || s->window == 0 || s->node_size == 0)
		return -SHIRO_ERR_INVAL;
	if (s->unit != PLAN_UNIT_BYTES && s->unit != PLAN_UNIT_LINES)
		return -SHIRO_ERR_INVAL;
	if (s->order != PLAN_ORDER_LAST && s->order != PLAN_ORDER_FIRST)
		return -SHIRO_ERR_INVAL;
	return 0;
}

/* plan_new - an empty planner. */
int
plan_new(const struct plan_settings *s, struct plan **out)
{
	struct plan *p;
	int rc;

	*out = NULL;
	if ((rc = plan_check_settings(s)) < 0)
		return rc;
	p = xcalloc(1, sizeof(*p));
	p->set = *s;
	*out = p;
	return 0;
}

/* plan_destroy - free the planner and everything it holds. */
void
plan_destroy(struct plan **pp)
{
	struct plan *p = *pp;
	unsigned l;

	if (p == NULL)
		return;
	free(p->view.v);
	free(p->view.pairs);
	free(p->cview.v);
	free(p->cview.pairs);
	for (l = 0; l <= PLAN_MAX_LEVEL; l++)
		free(p->bits[l].w);
	free(p->keys);
	free(p->vals);
	free(p->merges);
	free(p->heap);
	free(p->next);
	free(p->prev);
	free(p->stamp);
	free(p->pend);
	free(p->mq);
	free(p->running);
	free(p->mfailed);
	free(p);
	*pp = NULL;
}

/* plan_line_size - what one line counts: the one definition. */
uint64_t
plan_line_size(const struct plan *p, const struct plan_line *ln)
{
	if (p->set.unit == PLAN_UNIT_LINES)
		return 1;
	return ln->built ? ln->size : p->set.placeholder;
}

/* plan_lines_recount - add the sizes of a view up again. */
static void
plan_lines_recount(const struct plan *p, struct plan_lines *v)
{
	size_t k;

	v->size = 0;
	for (k = 0; k < v->n; k++)
		v->size += plan_line_size(p, &v->v[k]);
}

/* plan_configure - new settings; sizes are counted again. */
int
plan_configure(struct plan *p, const struct plan_settings *s)
{
	int rc;

	if ((rc = plan_check_settings(s)) < 0)
		return rc;
	p->set = *s;
	plan_lines_recount(p, &p->view);
	plan_lines_recount(p, &p->cview);
	return 0;
}

/* plan_get_settings - the settings in use. */
const struct plan_settings *
plan_get_settings(const struct plan *p)
{
	return &p->set;
}

/* plan_count - the number of messages. */
uint64_t
plan_count(const struct plan *p)
{
	return p->t;
}

/* plan_shrinking - whether the chat's view is still above its floor. */
int
plan_shrinking(const struct plan *p)
{
	return p->view.shrinking;
}

/* plan_exists - 1 if every message of node (l, i) exists. */
static int
plan_exists(const struct plan *p, unsigned l, uint64_t i)
{
	if (l > PLAN_MAX_LEVEL || i >= (UINT64_C(1) << (63 - l)))
		return 0;
	return ((i + 1) << l) <= p->t;
}

/* plan_is_built - the built bit of node (l, i). */
int
plan_is_built(const struct plan *p, unsigned l, uint64_t i)
{
	const struct plan_bits *b;

	if (l > PLAN_MAX_LEVEL)
		return 0;
	b = &p->bits[l];
	if ((i >> 6) >= b->nw)
		return 0;
	return (b->w[i >> 6] >> (i & 63)) & 1;
}

/* plan_set_built - set the built bit of node (l, i), growing the level. */
static void
plan_set_built(struct plan *p, unsigned l, uint64_t i)
{
	struct plan_bits *b = &p->bits[l];
	size_t need = (size_t)(i >> 6) + 1, nw;

	if (need > b->nw) {
		nw = b->nw ? b->nw : 4;
		while (nw < need)
			nw *= 2;
		b->w = xreallocarray(b->w, nw, sizeof(*b->w));
		memset(b->w + b->nw, 0, (nw - b->nw) * sizeof(*b->w));
		b->nw = nw;
	}
	b->w[i >> 6] |= UINT64_C(1) << (i & 63);
}

/* plan_key - the sizes map's key of node (l, i); never 0. */
static uint64_t
plan_key(unsigned l, uint64_t i)
{
	return ((i << 6) | l) + 1;
}

/* plan_slot - the home slot of key k in a map of cap slots. */
static size_t
plan_slot(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/* plan_map_find - the slot holding key k, or the empty slot for it. */
static size_t
plan_map_find(const struct plan *p, uint64_t k)
{
	size_t s = plan_slot(k, p->mcap);

	while (p->keys[s] != 0 && p->keys[s] != k)
		s = (s + 1) & (p->mcap - 1);
	return s;
}

/* plan_map_put - remember the size of node (l, i). */
static void
plan_map_put(struct plan *p, unsigned l, uint64_t i, uint32_t size)
{
	uint64_t *okeys = p->keys;
	uint32_t *ovals = p->vals;
	size_t ocap = p->mcap, s, k;

	if ((p->mn + 1) * 2 > p->mcap) {
		p->mcap = ocap ? ocap * 2 : 64;
		p->keys = xcalloc(p->mcap, sizeof(*p->keys));
		p->vals = xcalloc(p->mcap, sizeof(*p->vals));
		for (k = 0; k < ocap; k++) {
			if (okeys[k] == 0)
				continue;
			s = plan_map_find(p, okeys[k]);
			p->keys[s] = okeys[k];
			p->vals[s] = ovals[k];
		}
		free(okeys);
		free(ovals);
	}
	s = plan_map_find(p, plan_key(l, i));
	if (p->keys[s] == 0)
		p->mn++;
	p->keys[s] = plan_key(l, i);
	p->vals[s] = size;
}

/* plan_map_get - the size of node (l, i) into *size; 0 if not there. */
static int
plan_map_get(const struct plan *p, unsigned l, uint64_t i, uint32_t *size)
{
	size_t s;

	if (p->mcap == 0)
		return 0;
	s = plan_map_find(p, plan_key(l, i));
	if (p->keys[s] == 0)
		return 0;
	*size = p->vals[s];
	return 1;
}

/* plan_map_del - forget node (l, i), shifting its probe chain back. */
static void
plan_map_del(struct plan *p, unsigned l, uint64_t i)
{
	size_t s, j, h, mask = p->mcap - 1;

	if (p->mcap == 0)
		return;
	s = plan_map_find(p, plan_key(l, i));
	if (p->keys[s] == 0)
		return;
	p->keys[s] = 0;
	p->mn--;
	for (j = (s + 1) & mask; p->keys[j] != 0; j = (j + 1) & mask) {
		h = plan_slot(p->keys[j], p->mcap);
		/* Move j back to s unless its home lies in (s, j]. */
		if (((j - h) & mask) >= ((j - s) & mask)) {
			p->keys[s] = p->keys[j];
			p->vals[s] = p->vals[j];
			p->keys[j] = 0;
			s = j;
		}
	}
}

/* plan_lines_push - append line ln to v. */
static void
plan_lines_push(
    const struct plan *p, struct plan_lines *v, const struct plan_line *ln)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 64;
		v->v = xreallocarray(v->v, v->cap, sizeof(*v->v));
	}
	v->v[v->n++] = *ln;
	v->size += plan_line_size(p, ln);
}

/* plan_lines_find - the index of the line of v holding message m, or n. */
static size_t
plan_lines_find(const struct plan_lines *v, uint64_t m)
{
	size_t lo = 0, hi = v->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((v->v[mid].i << v->v[mid].l) <= m)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return v->n;
	lo--;
	if (m - (v->v[lo].i << v->v[lo].l) >= (UINT64_C(1) << v->v[lo].l))
		return v->n;
	return lo;
}

/* plan_due_num - the numerator of the due of the pair starting at a. */
static uint64_t
plan_due_num(const struct plan *p, const struct plan_line *a)
{
	uint64_t t = p->t;

	if (PLAN_MUTANT == MUTANT_T_MINUS && t > 0)
		t--;
	if (p->set.order == PLAN_ORDER_FIRST || PLAN_MUTANT == MUTANT_FIRST)
		return t - (a->i << a->l);
	return t - (((a->i + 2) << a->l) - 1);
}

/*
 * plan_cand_before - whether pair a goes before pair b: more due, else
 * older.  Dues are compared exactly, in integers: num_a/2^la >
 * num_b/2^lb is num_a*2^lb > num_b*2^la, and multiplying both sides by
 * 2^(126-la-lb) gives num_a*2^(63-la) > num_b*2^(63-lb), the keys (less
 * than 2^126 as num < 2^63 and l <= 62).
 */
static int
plan_cand_before(const struct plan_cand *a, const struct plan_cand *b)
{
	if (a->key != b->key)
		return a->key > b->key;
	if (PLAN_MUTANT == MUTANT_NEWEST)
		return a->first > b->first;
	return a->first < b->first;
}

/* plan_can_merge - whether the pair at a merges: its parent is built. */
static int
plan_can_merge(const struct plan *p, const struct plan_line *a)
{
	if (a->l >= PLAN_MAX_LEVEL)
		return 0;
	if (PLAN_MUTANT == MUTANT_UNBUILT)
		return 1;
	return plan_is_built(p, a->l + 1u, a->i >> 1);
}

/*
 * plan_heap_offer - if lines k and k2 (the next one) of v are siblings
 * whose parent is built, put the pair in the heap (most due on top).
 */
static void
plan_heap_offer(struct plan *p, const struct plan_lines *v, size_t k, size_t k2)
{
	const struct plan_line *a = &v->v[k];
	struct plan_cand c, *h;
	size_t j;

	p->examined++;
	if ((a->i & 1) != 0 || v->v[k2].l != a->l || !plan_can_merge(p, a))
		return;
	c.key = (unsigned __int128)plan_due_num(p, a) << (63 - a->l);
	c.first = a->i << a->l;
	c.k = k;
	if (p->nheap == p->heap_cap) {
		p->heap_cap = p->heap_cap ? p->heap_cap * 2 : 64;
		p->heap = xreallocarray(p->heap, p->heap_cap, sizeof(*p->heap));
	}
	h = p->heap;
	for (j = p->nheap++; j > 0 && plan_cand_before(&c, &h[(j - 1) / 2]);
	     j = (j - 1) / 2)
		h[j] = h[(j - 1) / 2];
	h[j] = c;
}

/* plan_heap_pop - take the most due candidate off the heap into *out. */
static void
plan_heap_pop(struct plan *p, struct plan_cand *out)
{
	struct plan_cand *h = p->heap, last;
	size_t j = 0, c, n;

	*out = h[0];
	last = h[--p->nheap];
	n = p->nheap;
	for (;;) {
		c = 2 * j + 1;
		if (c >= n)
			break;
		if (c + 1 < n && plan_cand_before(&h[c + 1], &h[c]))
			c++;
		if (!plan_cand_before(&h[c], &last))
			break;
		h[j] = h[c];
		j = c;
	}
	if (n > 0)
		h[j] = last;
}

/*
 * plan_parent_size - the size of the parent (l, i) from the sizes map,
 * dropping it there when the chat's view takes it (take).
 */
static uint32_t
plan_parent_size(struct plan *p, unsigned l, uint64_t i, int take)
{
	uint32_t size = p->set.node_size;

	if (plan_map_get(p, l, i, &size) && take)
		plan_map_del(p, l, i);
	return size;
}

/*
 * plan_join - line a and the line b after it become their parent in a;
 * the caller removes b.  The chat's view records the merge.
 */
static void
plan_join(struct plan *p, struct plan_lines *v, struct plan_line *a,
    const struct plan_line *b, int chat)
{
	struct plan_line parent = {0};

	parent.l = (uint8_t)(a->l + 1);
	parent.i = a->i >> 1;
	parent.built = 1;
	parent.size = plan_parent_size(p, parent.l, parent.i, chat);
	v->size -= plan_line_size(p, a) + plan_line_size(p, b);
	v->size += plan_line_size(p, &parent);
	*a = parent;
	if (!chat)
		return;
	if (p->nmerges == p->merges_cap) {
		p->merges_cap = p->merges_cap ? p->merges_cap * 2 : 64;
		p->merges =
		    xreallocarray(p->merges, p->merges_cap, sizeof(*p->merges));
	}
	p->merges[p->nmerges].l = parent.l;
	p->merges[p->nmerges].i = parent.i;
	p->nmerges++;
	p->cview_stale = 1;
}

/* plan_pair_add - remember that the pair starting at line a can merge. */
static void
plan_pair_add(struct plan_lines *v, const struct plan_line *a)
{
	if (v->npairs == v->pairs_cap) {
		v->pairs_cap = v->pairs_cap ? v->pairs_cap * 2 : 16;
		v->pairs =
		    xreallocarray(v->pairs, v->pairs_cap, sizeof(*v->pairs));
	}
	v->pairs[v->npairs].i = a->i;
	v->pairs[v->npairs].l = a->l;
	v->npairs++;
}

/*
 * plan_pair_note - lines k and k + 1 of v may just have become a pair
 * that can merge (a new line, a new parent built, a merge): if so,
 * remember it.
 */
static void
plan_pair_note(const struct plan *p, struct plan_lines *v, size_t k)
{
	const struct plan_line *a = &v->v[k];

	if (k + 1 >= v->n || (a->i & 1) != 0 || v->v[k + 1].l != a->l ||
	    !plan_can_merge(p, a))
		return;
	plan_pair_add(v, a);
}

/* plan_next - the line after line k during a fit (v->n: none). */
static size_t
plan_next(const struct plan *p, size_t k)
{
	return p->stamp[k] == p->gen ? p->next[k] : k + 1;
}

/* plan_prev - the line before line k during a fit (SIZE_MAX: none). */
static size_t
plan_prev(const struct plan *p, size_t k)
{
	return p->stamp[k] == p->gen ? p->prev[k] : k - 1;
}

/* plan_link_own - give line k links of its own for this fit. */
static void
plan_link_own(struct plan *p, size_t k)
{
	if (p->stamp[k] == p->gen)
		return;
	p->stamp[k] = p->gen;
	p->next[k] = k + 1;
	p->prev[k] = k - 1;
}

/*
 * plan_links_reset - start a fit of v: every line is linked to its
 * neighbours in the array.  Nothing is written per line: a line keeps
 * the default links until its stamp is the fit's generation.
 */
static void
plan_links_reset(struct plan *p, const struct plan_lines *v)
{
	size_t old = p->link_cap;

	if (p->link_cap < v->n) {
		p->link_cap = v->cap;
		p->next = xreallocarray(p->next, p->link_cap, sizeof(*p->next));
		p->prev = xreallocarray(p->prev, p->link_cap, sizeof(*p->prev));
		p->stamp =
		    xreallocarray(p->stamp, p->link_cap, sizeof(*p->stamp));
		memset(
		    p->stamp + old, 0, (p->link_cap - old) * sizeof(*p->stamp));
	}
	if (++p->gen == 0) {
		memset(p->stamp, 0, p->link_cap * sizeof(*p->stamp));
		p->gen = 1;
	}
}

/*
 * plan_pairs_load - empty the pair set of v into the heap, dropping the
 * pairs that are not two lines of v any more and those seen twice (the
 * stamp marks a pair's first line as taken).  Finding a pair's place
 * costs a binary search, so when the set is not much smaller than the
 * view, reading the view once is cheaper and finds the same pairs.
 * Call after plan_links_reset().
 */
static void
plan_pairs_load(struct plan *p, struct plan_lines *v)
{
	const struct plan_pair *e;
	size_t j, k;

	p->nheap = 0;
	if (v->npairs * 8 >= v->n) {
		for (k = 0; k + 1 < v->n; k++)
			plan_heap_offer(p, v, k, k + 1);
		v->npairs = 0;
		return;
	}
	for (j = 0; j < v->npairs; j++) {
		e = &v->pairs[j];
		k = plan_lines_find(v, e->i << e->l);
		if (k + 1 >= v->n || v->v[k].l != e->l || v->v[k].i != e->i ||
		    p->stamp[k] == p->gen)
			continue;
		plan_link_own(p, k);
		plan_heap_offer(p, v, k, k + 1);
	}
	v->npairs = 0;
}

/* plan_pairs_keep - the pairs left in the heap stay in the set of v. */
static void
plan_pairs_keep(struct plan *p, struct plan_lines *v)
{
	size_t j;

	for (j = 0; j < p->nheap; j++)
		plan_pair_add(v, &v->v[p->heap[j].k]);
	p->nheap = 0;
}

/*
 * plan_pairs_purge - drop the pairs of v that are not pairs of lines
 * (or are there twice) once the set is twice as long as the view, so
 * that it stays as small as the view: amortized O(1) per pair added.
 */
static void
plan_pairs_purge(struct plan *p, struct plan_lines *v)
{
	if (v->npairs <= 2 * v->n + 64)
		return;
	plan_links_reset(p, v);
	plan_pairs_load(p, v);
	plan_pairs_keep(p, v);
}

/*
 * plan_fit_lines - merge the most due pairs of v one at a time until its
 * size is at most budget or no pair can merge (rule 19).  T and the
 * built nodes do not change during a fit, so neither does a pair's due:
 * the pairs that can merge (the set of v, never a scan of the view) go
 * in a heap once, and a merge only adds the pair of the new parent and
 * its sibling, if they can merge in turn.  A fit with no such pair
 * returns at once.  Lines stay in place during the fit, linked to their
 * neighbours (a merge unlinks its second line; the first line is never
 * removed), and the view is packed once at the end, from the first line
 * removed on.  The pairs left in the heap stay in the set.
 */
static void
plan_fit_lines(struct plan *p, struct plan_lines *v, uint64_t budget, int chat)
{
	struct plan_cand c;
	size_t k, b, nb, n, lo;

	if (v->size <= budget || v->n < 2 || v->npairs == 0)
		return;
	plan_links_reset(p, v);
	plan_pairs_load(p, v);
	n = v->n;
	lo = v->n;
	while (v->size > budget && p->nheap > 0) {
		plan_heap_pop(p, &c);
		k = c.k;
		b = plan_next(p, k);
		nb = plan_next(p, b);
		plan_join(p, v, &v->v[k], &v->v[b], chat);
		plan_link_own(p, k);
		p->next[k] = nb;
		if (nb < v->n) {
			plan_link_own(p, nb);
			p->prev[nb] = k;
		}
		if (b < lo)
			lo = b;
		n--;
		if (v->v[k].i & 1) {
			if (plan_prev(p, k) != SIZE_MAX)
				plan_heap_offer(p, v, plan_prev(p, k), k);
		} else if (nb < v->n) {
			plan_heap_offer(p, v, k, nb);
		}
	}
	plan_pairs_keep(p, v);
	/*
	 * Pack the lines still linked, oldest first.  Lines before lo are
	 * all in place, and line lo - 1 (lo > 0: line 0 is never removed)
	 * still links to the rest.
	 */
	if (lo < v->n) {
		b = lo;
		for (k = plan_next(p, lo - 1); k < v->n; k = plan_next(p, k))
			v->v[b++] = v->v[k];
	}
	v->n = n;
}

/* plan_cview_refresh - the compaction view: the chat's merged to cfloor. */
static void
plan_cview_refresh(struct plan *p)
{
	struct plan_lines *c = &p->cview;

	if (c->cap < p->view.n) {
		c->cap = p->view.cap;
		c->v = xreallocarray(c->v, c->cap, sizeof(*c->v));
	}
	memcpy(c->v, p->view.v, p->view.n * sizeof(*c->v));
	c->n = p->view.n;
	c->size = p->view.size;
	if (c->pairs_cap < p->view.npairs) {
		c->pairs_cap = p->view.pairs_cap;
		c->pairs =
		    xreallocarray(c->pairs, c->pairs_cap, sizeof(*c->pairs));
	}
	memcpy(c->pairs, p->view.pairs, p->view.npairs * sizeof(*c->pairs));
	c->npairs = p->view.npairs;
	plan_fit_lines(p, c, p->set.cfloor, 0);
	c->shrinking = c->size > p->set.cfloor;
	p->cview_stale = 0;
}

/* plan_batch_report - fill *b from the merges recorded since the reset. */
static void
plan_batch_report(const struct plan *p, struct plan_batch *b, int ran)
{
	b->merges = p->merges;
	b->nmerges = p->nmerges;
	b->ran = ran;
	b->shrinking = p->view.shrinking;
}

/* plan_sawtooth - the batch after a message (rules 23-24, F1, 33). */
int
plan_sawtooth(struct plan *p, struct plan_batch *b)
{
	struct plan_lines *v = &p->view, *c = &p->cview;
	uint64_t budget = p->set.floor;
	int ran = 0;

	p->nmerges = 0;
	if (v->shrinking || v->size > p->set.ceiling) {
		if (PLAN_MUTANT == MUTANT_CEILING)
			budget = p->set.ceiling;
		plan_fit_lines(p, v, budget, 1);
		v->shrinking = v->size > p->set.floor;
		ran = 1;
	}
	if (p->cview_stale) {
		plan_cview_refresh(p);
	} else if (c->shrinking || c->size > p->set.cceiling) {
		plan_fit_lines(p, c, p->set.cfloor, 0);
		c->shrinking = c->size > p->set.cfloor;
	}
	plan_batch_report(p, b, ran);
	return 0;
}

/* plan_fit - merge the chat's view down to budget now. */
int
plan_fit(struct plan *p, uint64_t budget, struct plan_batch *b)
{
	p->nmerges = 0;
	plan_fit_lines(p, &p->view, budget, 1);
	if (p->cview_stale)
		plan_cview_refresh(p);
	plan_batch_report(p, b, 1);
	return 0;
}

/* plan_merge - replay one logged merge into the chat's view. */
int
plan_merge(struct plan *p, unsigned l, uint64_t i)
{
	struct plan_lines *v = &p->view;
	size_t k;

	if (l == 0 || l > PLAN_MAX_LEVEL)
		return -SHIRO_ERR_INVAL;
	if (!plan_is_built(p, l, i))
		return -SHIRO_ERR_STATE;
	k = plan_lines_find(v, i << l);
	if (k + 1 >= v->n || v->v[k].l != l - 1 || v->v[k].i != 2 * i ||
	    v->v[k + 1].l != l - 1)
		return -SHIRO_ERR_NOENT;
	p->nmerges = 0;
	plan_join(p, v, &v->v[k], &v->v[k + 1], 1);
	memmove(&v->v[k + 1], &v->v[k + 2], (v->n - k - 2) * sizeof(*v->v));
	v->n--;
	p->nmerges = 0;
	/* The pair merged stays in the set until a fit or a purge drops
	 * it; the parent may pair up. */
	if (v->v[k].i & 1) {
		if (k > 0)
			plan_pair_note(p, v, k - 1);
	} else {
		plan_pair_note(p, v, k);
	}
	plan_pairs_purge(p, v);
	return 0;
}

/* plan_restore - the end of a replayed batch record. */
int
plan_restore(struct plan *p, uint64_t t, int shrinking)
{
	if (t > p->t)
		return -SHIRO_ERR_STATE;
	p->view.shrinking = shrinking != 0;
	return 0;
}

/* plan_view - the chat's view. */
void
plan_view(const struct plan *p, const struct plan_line **lines, size_t *n)
{
	*lines = p->view.v;
	*n = p->view.n;
}

/* plan_view_size - the chat's view's size. */
uint64_t
plan_view_size(const struct plan *p)
{
	return p->view.size;
}

/* plan_cview - the compaction view, folded again first if stale. */
void
plan_cview(
    struct plan *p, const struct plan_line **lines, size_t *n, uint64_t *size)
{
	if (p->cview_stale)
		plan_cview_refresh(p);
	*lines = p->cview.v;
	*n = p->cview.n;
	if (size != NULL)
		*size = p->cview.size;
}

/* plan_context - the prefix of the cview a compaction of (l, i) reads. */
int
plan_context(struct plan *p, unsigned l, uint64_t i, size_t *n)
{
	const struct plan_line *ln;
	uint64_t end;
	size_t k;

	if (l > PLAN_MAX_LEVEL)
		return -SHIRO_ERR_INVAL;
	if (!plan_exists(p, l, i))
		return -SHIRO_ERR_NOENT;
	if (p->cview_stale)
		plan_cview_refresh(p);
	end = (i + 1) << l;
	for (k = 0; k < p->cview.n; k++) {
		ln = &p->cview.v[k];
		if (!ln->built || ((ln->i + 1) << ln->l) > end)
			break;
	}
	*n = k;
	return 0;
}

/* plan_ready_push - append r to a growable array of ready nodes. */
static void
plan_ready_push(
    struct plan_ready **a, size_t *n, size_t *cap, const struct plan_ready *r)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*a = xreallocarray(*a, *cap, sizeof(**a));
	}
	(*a)[(*n)++] = *r;
}

/* plan_ready_remove - drop node (l, i) from an array; 1 if it was there. */
static int
plan_ready_remove(struct plan_ready *a, size_t *n, unsigned l, uint64_t i)
{
	size_t k;

	for (k = 0; k < *n; k++) {
		if (a[k].l == l && a[k].i == i) {
			a[k] = a[--*n];
			return 1;
		}
	}
	return 0;
}

/* plan_mq_compact - drop the merge queue's consumed and built entries. */
static void
plan_mq_compact(struct plan *p)
{
	size_t k, n = 0;

	for (k = p->qhead; k < p->qn; k++)
		if (!plan_is_built(p, p->mq[k].l, p->mq[k].i))
			p->mq[n++] = p->mq[k];
	p->qhead = 0;
	p->qn = n;
	p->qstale = 0;
}

/* plan_mq_push - a merge became ready: queue it. */
static void
plan_mq_push(struct plan *p, const struct plan_ready *r)
{
	if (p->qn == p->qcap && p->qhead > 0)
		plan_mq_compact(p);
	plan_ready_push(&p->mq, &p->qn, &p->qcap, r);
}

/* plan_sibling_size - the size of built node (l, i): sizes map or view. */
static uint32_t
plan_sibling_size(const struct plan *p, unsigned l, uint64_t i)
{
	uint32_t size = p->set.node_size;
	size_t k;

	if (plan_map_get(p, l, i, &size))
		return size;
	k = plan_lines_find(&p->view, i << l);
	if (k < p->view.n && p->view.v[k].l == l)
		size = p->view.v[k].size;
	return size;
}

/*
 * plan_feed - node (l, i) was just built with size: if its sibling is
 * built, their parent is ready (this is how the merge queue is fed).
 */
static void
plan_feed(struct plan *p, unsigned l, uint64_t i, uint32_t size)
{
	struct plan_ready r;
	uint64_t src;

	if (l >= PLAN_MAX_LEVEL || !plan_is_built(p, l, i ^ 1))
		return;
	src = (uint64_t)size + 1 + plan_sibling_size(p, l, i ^ 1);
	r.l = (uint8_t)(l + 1);
	r.i = i >> 1;
	r.src = src > UINT32_MAX ? UINT32_MAX : (uint32_t)src;
	plan_mq_push(p, &r);
}

/* plan_pend_push - remember unbuilt message i (always the newest). */
static void
plan_pend_push(struct plan *p, uint64_t i, uint32_t src)
{
	if (p->poff + p->pn == p->pcap) {
		if (p->poff > 0 && p->poff >= p->pn) {
			memmove(p->pend, p->pend + p->poff,
			    p->pn * sizeof(*p->pend));
			p->poff = 0;
		} else {
			p->pcap = p->pcap ? p->pcap * 2 : 64;
			p->pend =
			    xreallocarray(p->pend, p->pcap, sizeof(*p->pend));
		}
	}
	p->pend[p->poff + p->pn].i = i;
	p->pend[p->poff + p->pn].src = src;
	p->pend[p->poff + p->pn].state = PLAN_IDLE;
	p->pn++;
}

/* plan_pend_find - the position of message i among pend, or pn. */
static size_t
plan_pend_find(const struct plan *p, uint64_t i)
{
	const struct plan_pend *a = p->pend + p->poff;
	size_t lo = 0, hi = p->pn, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (a[mid].i < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->pn && a[lo].i == i ? lo : p->pn;
}

/* plan_pend_remove - message at position k of pend is built. */
static void
plan_pend_remove(struct plan *p, size_t k)
{
	struct plan_pend *a = p->pend + p->poff;

	if (k < p->pn / 2) {
		memmove(a + 1, a, k * sizeof(*a));
		p->poff++;
	} else {
		memmove(a + k, a + k + 1, (p->pn - k - 1) * sizeof(*a));
	}
	p->pn--;
	if (p->pn == 0)
		p->poff = 0;
}

/* plan_append - message T arrives. */
int
plan_append(struct plan *p, int built, uint32_t size)
{
	struct plan_line ln;

	if (built && size > p->set.node_size)
		return -SHIRO_ERR_TOOBIG;
	if (p->t >= (UINT64_C(1) << 62))
		return -SHIRO_ERR_TOOBIG;
	memset(&ln, 0, sizeof(ln));
	ln.i = p->t;
	ln.built = built != 0;
	ln.size = built ? size : 0;
	p->t++;
	/* A new line pairs up only in mutant 4: its parent is not built. */
	plan_lines_push(p, &p->view, &ln);
	if (p->view.n > 1)
		plan_pair_note(p, &p->view, p->view.n - 2);
	if (!p->cview_stale) {
		plan_lines_push(p, &p->cview, &ln);
		if (p->cview.n > 1)
			plan_pair_note(p, &p->cview, p->cview.n - 2);
	}
	if (built) {
		plan_set_built(p, 0, ln.i);
		plan_feed(p, 0, ln.i, size);
	} else {
		plan_pend_push(p, ln.i, size);
	}
	return 0;
}

/* plan_leaf_built - message i's line is built with size in a view. */
static void
plan_leaf_built(struct plan *p, struct plan_lines *v, uint64_t i, uint32_t size)
{
	struct plan_line *ln;
	size_t k = plan_lines_find(v, i);

	if (k == v->n || v->v[k].l != 0)
		return;
	ln = &v->v[k];
	v->size -= plan_line_size(p, ln);
	ln->built = 1;
	ln->size = size;
	v->size += plan_line_size(p, ln);
}

/*
 * plan_parent_note - parent (l, i), l > 0, was just built: its halves
 * may be two lines of v, a pair that can merge now.  Nothing is looked
 * up here: the pair goes into the set as it is, and the next fit drops
 * it if its halves are not lines then.
 */
static void
plan_parent_note(struct plan *p, struct plan_lines *v, unsigned l, uint64_t i)
{
	struct plan_line a = {0};

	a.l = (uint8_t)(l - 1);
	a.i = 2 * i;
	plan_pair_add(v, &a);
	plan_pairs_purge(p, v);
}

/* plan_built - node (l, i) is built with size. */
int
plan_built(struct plan *p, unsigned l, uint64_t i, uint32_t size)
{
	size_t k;

	if (l > PLAN_MAX_LEVEL)
		return -SHIRO_ERR_INVAL;
	if (size > p->set.node_size)
		return -SHIRO_ERR_TOOBIG;
	if (!plan_exists(p, l, i))
		return -SHIRO_ERR_NOENT;
	if (plan_is_built(p, l, i))
		return -SHIRO_ERR_EXIST;
	if (l > 0 &&
	    (!plan_is_built(p, l - 1, 2 * i) ||
		!plan_is_built(p, l - 1, 2 * i + 1)))
		return -SHIRO_ERR_STATE;
	plan_set_built(p, l, i);
	if (l == 0) {
		plan_leaf_built(p, &p->view, i, size);
		if (!p->cview_stale)
			plan_leaf_built(p, &p->cview, i, size);
		k = plan_pend_find(p, i);
		if (k < p->pn) {
			if (p->pend[p->poff + k].state == PLAN_RUNNING)
				plan_ready_remove(
				    p->running, &p->nrunning, 0, i);
			plan_pend_remove(p, k);
		}
	} else {
		plan_parent_note(p, &p->view, l, i);
		if (!p->cview_stale)
			plan_parent_note(p, &p->cview, l, i);
		plan_map_put(p, l, i, size);
		if (!plan_ready_remove(p->running, &p->nrunning, l, i) &&
		    !plan_ready_remove(p->mfailed, &p->nmfailed, l, i))
			p->qstale++;
		if (p->qstale > 32 && p->qstale * 2 > p->qn - p->qhead)
			plan_mq_compact(p);
	}
	plan_feed(p, l, i, size);
	return 0;
}

/* plan_start - record job r as running and hand it out in *job. */
static void
plan_start(struct plan *p, const struct plan_ready *r, struct plan_job *job)
{
	plan_ready_push(&p->running, &p->nrunning, &p->rcap, r);
	job->l = r->l;
	job->i = r->i;
	job->src_size = r->src;
	job->free = r->src <= p->set.node_size;
}

/* plan_work_take - start the next ready job, leaves first. */
int
plan_work_take(struct plan *p, struct plan_job *job)
{
	struct plan_pend *a = p->pend + p->poff;
	struct plan_ready r;
	size_t k, w;

	if (p->nrunning >= p->set.jobs)
		return -SHIRO_ERR_AGAIN;
	/* The first window unbuilt messages: fewer unbuilt lines before. */
	w = p->pn < p->set.window ? p->pn : p->set.window;
	for (k = 0; k < w; k++) {
		if (a[k].state != PLAN_IDLE)
			continue;
		a[k].state = PLAN_RUNNING;
		r.l = 0;
		r.i = a[k].i;
		r.src = a[k].src;
		plan_start(p, &r, job);
		return 0;
	}
	if (p->waiting)
		return -SHIRO_ERR_AGAIN;
	while (p->qhead < p->qn) {
		r = p->mq[p->qhead++];
		if (plan_is_built(p, r.l, r.i)) {
			if (p->qstale > 0)
				p->qstale--;
			continue;
		}
		plan_start(p, &r, job);
		return 0;
	}
	p->qhead = p->qn = 0;
	return -SHIRO_ERR_AGAIN;
}

/* plan_work_end - stop running job (l, i); it goes to failed or ready. */
static int
plan_work_end(struct plan *p, unsigned l, uint64_t i, int failed)
{
	struct plan_ready r;
	size_t k;

	for (k = 0; k < p->nrunning; k++)
		if (p->running[k].l == l && p->running[k].i == i)
			break;
	if (k == p->nrunning)
		return -SHIRO_ERR_NOENT;
	r = p->running[k];
	p->running[k] = p->running[--p->nrunning];
	if (l == 0) {
		k = plan_pend_find(p, i);
		if (k < p->pn)
			p->pend[p->poff + k].state =
			    failed ? PLAN_FAILED : PLAN_IDLE;
	} else if (failed) {
		plan_ready_push(&p->mfailed, &p->nmfailed, &p->fcap, &r);
	} else {
		plan_mq_push(p, &r);
	}
	return 0;
}

/* plan_work_fail - the running job (l, i) failed. */
int
plan_work_fail(struct plan *p, unsigned l, uint64_t i)
{
	return plan_work_end(p, l, i, 1);
}

/* plan_work_drop - the running job (l, i) stops, ready again. */
int
plan_work_drop(struct plan *p, unsigned l, uint64_t i)
{
	return plan_work_end(p, l, i, 0);
}

/* plan_work_retry - every failed job is ready again. */
void
plan_work_retry(struct plan *p)
{
	size_t k;

	for (k = 0; k < p->pn; k++)
		if (p->pend[p->poff + k].state == PLAN_FAILED)
			p->pend[p->poff + k].state = PLAN_IDLE;
	for (k = 0; k < p->nmfailed; k++)
		plan_mq_push(p, &p->mfailed[k]);
	p->nmfailed = 0;
}

/* plan_work_wait - a turn starts or stops waiting for the view. */
void
plan_work_wait(struct plan *p, int waiting)
{
	p->waiting = waiting != 0;
}

/* plan_work_needed - whether (l, i) is an unbuilt line of the view. */
int
plan_work_needed(const struct plan *p, unsigned l, uint64_t i)
{
	return l == 0 && i < p->t && !plan_is_built(p, 0, i);
}

/* plan_work_running - the number of running jobs. */
size_t
plan_work_running(const struct plan *p)
{
	return p->nrunning;
}

/* plan_stats - the planner's counters, for tests and benches. */
void
plan_stats(const struct plan *p, struct plan_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->examined = p->examined;
}

/* plan_unbuilt - the number of unbuilt lines of the view. */
size_t
plan_unbuilt(const struct plan *p)
{
	return p->pn;
}
