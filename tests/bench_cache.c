/*
 * bench_cache - the provider's prompt cache, replayed (docs/memory.md,
 * "Requests and the cache").
 *
 * A scripted chat of 3,000 messages (a user's message of 20-900 bytes,
 * then the agent's reply of 100-2,400, so that about half the messages
 * need a summary; each turn makes 1 to 4 calls, one per tool call of the
 * model, each adding a reply part and a tool result) runs through the real planner, the real request
 * layout (broker/request.c: blocks of 4 view lines, the marks, the
 * lookback mark) and the real prefix gate (broker/gate.c), on a virtual
 * clock, against a model of Anthropic's prompt cache: an entry is made
 * at each cache mark of a request once its response starts, lives 5
 * minutes after its last use, and a mark finds an entry at its own
 * block or up to 20 blocks before it.  Compactions run 8 at a time with
 * a model's latency; a turn waits for its view, as shirod's do.
 *
 * It prints, for turns and for compactions, the share of each request's
 * prefix (all but its last part, the new message, tool result or task)
 * read from the cache, and of the whole request; the view lines sent
 * without a cache hit per message; the same script is then run
 * with a planner that merges the view at every message (to the floor,
 * each time), side by side.  With the system prompt plus tools per
 * request in bytes.
 *
 * Usage: bench_cache [MESSAGES]   (default 3,000)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/config.h"
#include "broker/gate.h"
#include "broker/plan.h"
#include "broker/prompt.h"
#include "broker/render.h"
#include "broker/request.h"
#include "proto/buf.h"
#include "proto/xmalloc.h"

/* Latencies, in virtual milliseconds. */
#define BC_CALL_START 1200 /* a compaction's response starts */
#define BC_CALL_DONE 3000 /* and ends */
#define BC_TURN_START 1000 /* a turn's response starts */
#define BC_TURN_REPLY 6000 /* its reply is logged */
#define BC_THINK 15000 /* the user reads, then writes again */
#define BC_SETTLE 20000 /* memory.settleTimeoutMs */
#define BC_LIFE (5 * 60 * 1000) /* an entry's life */
#define BC_JOBS 8

/* xorshift64*, a fixed sequence. */
static uint64_t bc_seed = 0x9e3779b97f4a7c15ULL;

/* bc_rand - the next number of the fixed sequence. */
static uint64_t
bc_rand(void)
{
	bc_seed ^= bc_seed >> 12;
	bc_seed ^= bc_seed << 25;
	bc_seed ^= bc_seed >> 27;
	return bc_seed * UINT64_C(2685821657736338717);
}

/* bc_between - a number in [lo, hi]. */
static size_t
bc_between(size_t lo, size_t hi)
{
	return lo + (size_t)(bc_rand() % (hi - lo + 1));
}

/* bc_words - a text of about n bytes of words (no newline). */
static char *
bc_words(size_t n)
{
	static const char *const w[] = {"the", "store", "fix", "a", "test",
	    "planner", "view", "line", "merge", "error", "src/store.c", "turn",
	    "model", "cache", "block", "message", "zoom", "build", "failed",
	    "passed", "EINVAL", "42", "commit", "daemon"};
	struct buf b = BUF_INIT;

	while (b.len < n) {
		if (b.len > 0)
			buf_addc(&b, ' ');
		buf_adds(&b, w[bc_rand() % (sizeof(w) / sizeof(w[0]))]);
	}
	buf_truncate(&b, n);
	return buf_steal(&b, NULL);
}

/* The texts of nodes, by (l, i): an open-addressing table. */
struct bc_node {
	uint64_t key; /* (l << 56) | i, plus one; 0 empty */
	char *text;
};
static struct bc_node *bc_nodes;
static size_t bc_ncap;

/* bc_slot - the slot of (l, i). */
static struct bc_node *
bc_slot(unsigned l, uint64_t i)
{
	uint64_t key = (((uint64_t)l << 56) | i) + 1;
	size_t h =
	    (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (bc_ncap - 1);

	while (bc_nodes[h].key != 0 && bc_nodes[h].key != key)
		h = (h + 1) & (bc_ncap - 1);
	bc_nodes[h].key = key;
	return &bc_nodes[h];
}

/* An entry of the modelled cache. */
struct bc_entry {
	uint64_t key;
	uint64_t visible, expires;
};
static struct bc_entry *bc_cache;
static size_t bc_ccap = 1 << 16;

/* bc_centry - the entry of key (made empty when absent). */
static struct bc_entry *
bc_centry(uint64_t key)
{
	size_t h =
	    (size_t)((key * 0xc2b2ae3d27d4eb4fULL) >> 16) & (bc_ccap - 1);

	if (key == 0)
		key = 1;
	while (bc_cache[h].key != 0 && bc_cache[h].key != key)
		h = (h + 1) & (bc_ccap - 1);
	bc_cache[h].key = key;
	return &bc_cache[h];
}

/* One request as the cache sees it: blocks, their prefix hashes, the
 * bytes and view lines up to each block's end, its marks. */
struct bc_req {
	size_t n;
	uint64_t hash[4096];
	size_t bytes[4096], lines[4096];
	int mark[4096];
};

/* What a run measures. */
struct bc_stats {
	uint64_t in[2], read[2], whole_in[2], whole_read[2];
	uint64_t written_lines, calls[2], messages, waits;
};

/* bc_line - the line "id+n|text" of built node (l, i) into out. */
static void
bc_line(struct buf *out, unsigned l, uint64_t i)
{
	const char *t = bc_slot(l, i)->text;

	render_name(out, l, i);
	buf_addc(out, '|');
	render_flatten(out, t ? t : "", t ? strlen(t) : 0);
}

/* bc_view - a request view of lines (built ones; unbuilt: cut input). */
static void
bc_view(struct request_view *v, const struct plan_line *lines, size_t n)
{
	struct buf line = BUF_INIT;
	size_t k;

	request_view_init(v);
	for (k = 0; k < n; k++) {
		buf_reset(&line);
		bc_line(&line, lines[k].l, lines[k].i);
		/* An unbuilt message shows its start (D10). */
		request_view_add(v, line.data,
		    render_cut(line.data, line.len, PLAN_NODE_SIZE + 24));
	}
	buf_free(&line);
}

/* A turn's later steps: each adds the reply's part and a tool result. */
struct bc_steps {
	size_t n;
	uint64_t id[16];
	size_t bytes[16];
};

/* bc_build - the blocks of a request: base, view parts, tail (tail_id
 * names its bytes), then steps (NULL: none), the end marked. */
static void
bc_build(struct bc_req *r, const struct request_base *rb,
    const struct request_view *v, size_t extra, size_t tail, uint64_t tail_id,
    const struct bc_steps *steps, uint64_t mh)
{
	size_t whole = v->nlines - v->nlines % REQUEST_BLOCK, k, end;

	r->n = 0;
	r->hash[0] = rb->hash ^ mh;
	r->bytes[0] = request_base_bytes(rb);
	r->lines[0] = 0;
	r->mark[0] = 1;
	r->n = 1;
	for (k = 0;; k += REQUEST_BLOCK) {
		end = k + REQUEST_BLOCK < v->nlines ? k + REQUEST_BLOCK
						    : v->nlines;
		r->hash[r->n] = request_prefix_hash(v, rb, end) ^ mh;
		r->bytes[r->n] =
		    r->bytes[0] + (end > 0 ? v->ends[end - 1] : v->text.len);
		r->lines[r->n] = end;
		r->mark[r->n] =
		    (whole > 0 && end == whole) || (extra > 0 && end == extra);
		r->n++;
		if (end >= v->nlines)
			break;
	}
	r->hash[r->n] = r->hash[r->n - 1] ^ tail_id;
	r->bytes[r->n] = r->bytes[r->n - 1] + tail;
	r->lines[r->n] = v->nlines;
	r->mark[r->n] = 1;
	r->n++;
	for (k = 0; steps != NULL && k < steps->n; k++) {
		r->mark[r->n - 1] = 0; /* the mark moves to the end */
		r->hash[r->n] = request_hash(
		    r->hash[r->n - 1], &steps->id[k], sizeof(steps->id[k]));
		r->bytes[r->n] = r->bytes[r->n - 1] + steps->bytes[k];
		r->lines[r->n] = v->nlines;
		r->mark[r->n] = 1;
		r->n++;
	}
}

/* bc_process - the cache reads r at t and writes its marks at start. */
static void
bc_process(const struct bc_req *r, uint64_t t, uint64_t start, int kind,
    struct bc_stats *st)
{
	size_t k, j, hit = 0, stop;
	int found = 0;
	struct bc_entry *e;

	for (k = 0; k < r->n; k++) {
		if (!r->mark[k])
			continue;
		stop =
		    k >= REQUEST_LOOKBACK - 1 ? k - (REQUEST_LOOKBACK - 1) : 0;
		for (j = k + 1; j-- > stop;) {
			e = bc_centry(r->hash[j]);
			if (e->visible != 0 && e->visible <= t &&
			    e->expires >= t) {
				e->expires = t + BC_LIFE;
				if (!found || j > hit)
					hit = j;
				found = 1;
				break;
			}
		}
	}
	for (k = 0; k < r->n; k++) {
		if (!r->mark[k])
			continue;
		e = bc_centry(r->hash[k]);
		if (e->visible == 0 || e->expires < start)
			e->visible = start;
		e->expires = start + BC_LIFE;
	}
	/* The prefix: all but the request's last part, the new one. */
	st->in[kind] += r->bytes[r->n - 2];
	st->read[kind] +=
	    found ? (hit < r->n - 1 ? r->bytes[hit] : r->bytes[r->n - 2]) : 0;
	st->whole_in[kind] += r->bytes[r->n - 1];
	st->whole_read[kind] += found ? r->bytes[hit] : 0;
	st->written_lines += r->lines[r->n - 1] - (found ? r->lines[hit] : 0);
	st->calls[kind]++;
}

/* bc_unread - the bytes of v's marked prefix the cache lacks, as shirod
 * decides whether a call waits (compact_unread). */
static size_t
bc_unread(struct gate *g, const struct request_view *v,
    const struct request_base *rb, uint64_t mh, uint64_t now)
{
	size_t max = v->nlines / REQUEST_BLOCK + 1, n, unread;
	uint64_t *keys = xcalloc(max, sizeof(*keys));
	size_t *bytes = xcalloc(max, sizeof(*bytes));

	n = request_boundaries(v, rb, mh, keys, bytes, max);
	unread = gate_unread(g, keys, bytes, n, now);
	free(keys);
	free(bytes);
	return unread;
}

/* A compaction call in flight, or waiting for the gate. */
struct bc_job {
	struct plan_job pj;
	uint64_t id, start, done;
	int sent, held;
};

/* bc_run - one chat of n messages; merge_each: the planner merges at
 * every message instead of in batches. */
static void
bc_run(size_t n, int merge_each, struct bc_stats *st)
{
	struct plan_settings ps;
	struct plan *p;
	struct plan_batch bt;
	struct plan_job pj;
	struct request_base rb;
	struct request_mark tmark = {0, 0}, cmark = {0, 0};
	struct request_view v;
	struct gate g;
	struct bc_job jobs[64];
	struct bc_req *r = xcalloc(1, sizeof(*r));
	struct plan_line *pinned = NULL;
	size_t njobs = 0, npinned = 0, ncv, k, m = 0, ctx;
	uint64_t now = 0, next_msg = 0, turn_at = 0, turn_deadline = 0;
	uint64_t next_id = 1, keys[GATE_KEYS], mh = 0x51ULL;
	int turn_waiting = 0, user_next = 1;
	const struct plan_line *lines;
	uint64_t cs;

	memset(st, 0, sizeof(*st));
	bc_seed = 0x9e3779b97f4a7c15ULL;
	bc_ncap = 1 << 17;
	bc_nodes = xcalloc(bc_ncap, sizeof(*bc_nodes));
	bc_cache = xcalloc(bc_ccap, sizeof(*bc_cache));
	plan_settings_default(&ps);
	(void)plan_new(&ps, &p);
	request_base_init(&rb, "/bench", NULL, 0);
	gate_init(&g, BC_LIFE);
	while (m < n || njobs > 0 || turn_waiting) {
		uint64_t t = UINT64_MAX;

		/* The next event: a message, a call's start or end, a turn. */
		if (m < n && !turn_waiting)
			t = next_msg;
		if (turn_waiting && turn_at < t)
			t = turn_at;
		for (k = 0; k < njobs; k++) {
			if (jobs[k].sent && jobs[k].start > now &&
			    jobs[k].start < t)
				t = jobs[k].start;
			if (jobs[k].sent && jobs[k].done < t)
				t = jobs[k].done;
		}
		if (t == UINT64_MAX)
			break;
		now = t > now ? t : now;
		/* Responses that start make their entries readable. */
		for (k = 0; k < njobs; k++)
			if (jobs[k].sent && jobs[k].start <= now)
				(void)gate_started(&g, jobs[k].id, now);
		/* Calls that end build their nodes. */
		for (k = 0; k < njobs;) {
			struct bc_job *j = &jobs[k];

			if (!j->sent || j->done > now) {
				k++;
				continue;
			}
			bc_slot(j->pj.l, j->pj.i)->text =
			    bc_words(bc_between(300, 512));
			(void)plan_built(p, j->pj.l, j->pj.i,
			    (uint32_t)strlen(bc_slot(j->pj.l, j->pj.i)->text));
			(void)gate_done(&g, j->id);
			jobs[k] = jobs[--njobs];
		}
		/* A message arrives. */
		if (m < n && !turn_waiting && next_msg <= now) {
			size_t len = user_next ? bc_between(20, 900)
					       : bc_between(100, 2400);
			char *text = bc_words(len);

			if (user_next) {
				plan_view(p, &lines, &npinned);
				free(pinned);
				pinned = xcalloc(npinned + 1, sizeof(*pinned));
				memcpy(
				    pinned, lines, npinned * sizeof(*pinned));
			}
			bc_slot(0, m)->text = text;
			(void)plan_append(
			    p, len <= PLAN_NODE_SIZE, (uint32_t)len);
			if (merge_each)
				(void)plan_fit(p, ps.floor, &bt);
			(void)plan_sawtooth(p, &bt);
			m++;
			st->messages++;
			if (user_next) {
				turn_waiting = 1;
				turn_at = now;
				turn_deadline = now + BC_SETTLE;
			} else {
				next_msg = now + BC_THINK;
			}
			user_next = !user_next;
		}
		/* Free jobs build at once; the others wait for the gate. */
		while (njobs < sizeof(jobs) / sizeof(jobs[0]) &&
		    plan_work_take(p, &pj) == 0) {
			if (pj.free) {
				struct buf b = BUF_INIT;
				const char *a, *c;

				if (pj.l == 0) {
					(void)plan_built(
					    p, 0, pj.i, pj.src_size);
					continue;
				}
				a = bc_slot(pj.l - 1, 2 * pj.i)->text;
				c = bc_slot(pj.l - 1, 2 * pj.i + 1)->text;
				buf_printf(
				    &b, "%s\n%s", a ? a : "", c ? c : "");
				bc_slot(pj.l, pj.i)->text = buf_steal(&b, NULL);
				(void)plan_built(p, pj.l, pj.i, pj.src_size);
				continue;
			}
			memset(&jobs[njobs], 0, sizeof(jobs[njobs]));
			jobs[njobs].pj = pj;
			jobs[njobs].id = next_id++;
			njobs++;
		}
		for (k = 0; k < njobs; k++) {
			struct bc_job *j = &jobs[k];
			size_t extra, whole, nk = 0, ntask;

			if (j->sent)
				continue;
			(void)plan_context(p, j->pj.l, j->pj.i, &ctx);
			plan_cview(p, &lines, &ncv, &cs);
			bc_view(&v, lines, ctx < ncv ? ctx : ncv);
			extra = request_lookback(&v, &rb, &cmark);
			whole = v.nlines - v.nlines % REQUEST_BLOCK;
			keys[nk++] = rb.hash ^ mh;
			if (extra)
				keys[nk++] =
				    request_prefix_hash(&v, &rb, extra) ^ mh;
			if (whole)
				keys[nk++] =
				    request_prefix_hash(&v, &rb, whole) ^ mh;
			if (bc_unread(&g, &v, &rb, mh, now) >=
				CONFIG_GATE_BYTES &&
			    !gate_may_go(&g, keys, nk, now)) {
				g.waits += !j->held;
				j->held = 1;
				request_view_free(&v);
				continue;
			}
			ntask = j->pj.src_size + 700;
			bc_build(r, &rb, &v, extra, ntask, bc_rand(), NULL, mh);
			j->sent = 1;
			j->start = now + BC_CALL_START;
			j->done = now + BC_CALL_DONE;
			bc_process(r, now, j->start, 1, st);
			gate_sent(&g, j->id, keys, nk, now);
			request_mark_set(&cmark, &v, &rb);
			request_view_free(&v);
		}
		/* A turn goes once its view settled, or at its deadline. */
		if (turn_waiting && now >= turn_at) {
			int settled = 1;

			for (k = 0; k < npinned && settled; k++)
				settled = pinned[k].built ||
				    plan_is_built(p, pinned[k].l, pinned[k].i);
			if (settled || now >= turn_deadline) {
				struct bc_steps steps;
				uint64_t tail_id = bc_rand();
				size_t extra, nsteps = bc_between(0, 3), q;

				/* One call, then one per tool call the
				 * model makes (0 to 3), each reading the
				 * one before it from the cache. */
				bc_view(&v, pinned, npinned);
				extra = request_lookback(&v, &rb, &tmark);
				request_mark_set(&tmark, &v, &rb);
				memset(&steps, 0, sizeof(steps));
				for (q = 0; q <= nsteps; q++) {
					bc_build(r, &rb, &v, extra, 900,
					    tail_id, &steps, mh);
					bc_process(r, now + q * 3000,
					    now + q * 3000 + BC_TURN_START, 0,
					    st);
					steps.id[steps.n] = bc_rand();
					steps.bytes[steps.n++] =
					    bc_between(200, 600);
					steps.id[steps.n] = bc_rand();
					steps.bytes[steps.n++] =
					    bc_between(200, 2000);
				}
				request_view_free(&v);
				turn_waiting = 0;
				next_msg = now + BC_TURN_REPLY + nsteps * 3000;
			} else {
				turn_at = now + 250;
			}
		}
	}
	st->waits = g.waits;
	for (k = 0; k < bc_ncap; k++)
		free(bc_nodes[k].text);
	free(bc_nodes);
	free(bc_cache);
	free(pinned);
	free(r);
	gate_free(&g);
	request_base_free(&rb);
	plan_destroy(&p);
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 3000;
	struct bc_stats b, e;
	struct request_base rb;

	request_base_init(&rb, "/bench", NULL, 0);
	printf("bench_cache: %zu messages (a user's, then the reply), "
	       "compactions %d at a time\n",
	    n, BC_JOBS);
	printf("  system prompt + tools per request: %zu bytes (target: "
	       "under 12 KB; peers as reported: OpenCode 30 KB, Codex 59 KB, "
	       "Claude Code 69 KB)\n",
	    request_base_bytes(&rb));
	request_base_free(&rb);
	bc_run(n, 0, &b);
	bc_run(n, 1, &e);
	printf("  %-34s %14s %14s\n", "", "batched", "merge each msg");
	printf("  %-34s %13.1f%% %13.1f%%\n", "turns: prefix read from cache",
	    100.0 * (double)b.read[0] / (double)(b.in[0] ? b.in[0] : 1),
	    100.0 * (double)e.read[0] / (double)(e.in[0] ? e.in[0] : 1));
	printf("  %-34s %13.1f%% %13.1f%%\n", "compactions: prefix from cache",
	    100.0 * (double)b.read[1] / (double)(b.in[1] ? b.in[1] : 1),
	    100.0 * (double)e.read[1] / (double)(e.in[1] ? e.in[1] : 1));
	printf("  %-34s %13.1f%% %13.1f%%\n", "turns: whole request from cache",
	    100.0 * (double)b.whole_read[0] /
		(double)(b.whole_in[0] ? b.whole_in[0] : 1),
	    100.0 * (double)e.whole_read[0] /
		(double)(e.whole_in[0] ? e.whole_in[0] : 1));
	printf("  %-34s %13.1f%% %13.1f%%\n", "compactions: whole request",
	    100.0 * (double)b.whole_read[1] /
		(double)(b.whole_in[1] ? b.whole_in[1] : 1),
	    100.0 * (double)e.whole_read[1] /
		(double)(e.whole_in[1] ? e.whole_in[1] : 1));
	printf("  %-34s %14.1f %14.1f\n", "view lines written per message",
	    (double)b.written_lines / (double)(b.messages ? b.messages : 1),
	    (double)e.written_lines / (double)(e.messages ? e.messages : 1));
	printf("  %-34s %14" PRIu64 " %14" PRIu64 "\n", "turn calls (steps)",
	    b.calls[0], e.calls[0]);
	printf("  %-34s %14" PRIu64 " %14" PRIu64 "\n", "compaction calls",
	    b.calls[1], e.calls[1]);
	printf("  %-34s %14" PRIu64 " %14" PRIu64 "\n",
	    "calls held by the prefix gate", b.waits, e.waits);
	return 0;
}
