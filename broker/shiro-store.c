/*
 * shiro-store.c - build/shiro-store, the chat store's command: fsck,
 * export and import in the gist's format, and a synthetic chat
 * generator.  `shiro fsck|export|import` exec it, so its command line is
 * stable.  Exit status: 0 fine, 1 a problem found or an operation
 * failed, 2 bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "broker/fold.h"
#include "broker/plan.h"
#include "broker/render.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "store/store.h"

#define STORETOOL_CHUNK 4096 /* messages per group commit */

static const char storetool_usage[] =
    "usage: shiro-store COMMAND ...\n"
    "\n"
    "  fsck [--repair] HOME        check a chat home; exit 1 on any "
    "problem\n"
    "                              (also beside a running shirod; "
    "--repair,\n"
    "                              which needs it stopped, only cuts a "
    "torn\n"
    "                              last line and rewrites a stale "
    "view.json)\n"
    "  export --gist DIR HOME      write DIR/main/, DIR/tree/, "
    "DIR/view.json\n"
    "  import --gist DIR HOME      read them back into a new HOME\n"
    "  gen N HOME [--seed S]       add N synthetic messages with their "
    "nodes\n"
    "                              and batch records (tests, "
    "benchmarks)\n"
    "\n"
    "HOME is a shiro home ($SHIRO_HOME, default ~/.shiro); the chat is "
    "HOME/chat.\n";

/* storetool_open - open home, saying why not on stderr. */
static int
storetool_open(const char *home, const struct store_opts *o, struct store **sp)
{
	struct store_openerr why;
	int ret;

	ret = store_open(home, o, sp, &why);
	if (ret != 0)
		fprintf(stderr, "shiro-store: %s: %s\n", home,
		    why.msg[0] ? why.msg : err_str(ret));
	return ret;
}

/* ---- fsck ---- */

/* How many times a live check whose only problem is view.json is made
 * again, and how long apart: the daemon may be between two writes. */
#define STORETOOL_LIVE_TRIES 3
#define STORETOOL_LIVE_PAUSE_MS 300

/* What fsck counts and finds. */
struct storetool_fsck {
	struct store *s;
	struct buf *out; /* the report, printed once the check is over */
	uint64_t count;
	uint64_t nodes, levels, newer;
	pid_t live; /* the running shirod beside which the check reads */
	unsigned problems;
	unsigned view_problems; /* of which view.json's */
};

/* storetool_problem - one problem line. */
static void storetool_problem(struct storetool_fsck *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
storetool_problem(struct storetool_fsck *f, const char *fmt, ...)
{
	va_list ap;

	if (f->problems < 50) {
		buf_adds(f->out, "problem: ");
		va_start(ap, fmt);
		buf_vprintf(f->out, fmt, ap);
		va_end(ap);
		buf_addc(f->out, '\n');
	}
	f->problems++;
}

/* storetool_node - fsck of one node: text, size, place, children. */
static int
storetool_node(void *arg, unsigned l, uint64_t i, uint32_t size)
{
	struct storetool_fsck *f = arg;
	struct store_node nd;
	uint32_t csize;
	int ret;

	if (f->live && l <= STORE_LEVEL_MAX && ((i + 1) << l) > f->count) {
		/* Built after the log was read: for the next check. */
		f->newer++;
		return 0;
	}
	f->nodes++;
	if (l + 1 > f->levels)
		f->levels = l + 1;
	ret = store_node_get(f->s, l, i, &nd);
	if (ret != 0) {
		storetool_problem(f,
		    "node %u:%" PRIu64 " in the size table "
		    "has no record: %s",
		    l, i, store_errmsg(f->s));
		return 0;
	}
	if (nd.size != size)
		storetool_problem(f,
		    "node %u:%" PRIu64 ": size %u, table says %u", l, i,
		    nd.size, size);
	if (render_flat_size(nd.text, nd.len) != nd.size)
		storetool_problem(f,
		    "node %u:%" PRIu64 ": size %u but its text is %zu", l, i,
		    nd.size, render_flat_size(nd.text, nd.len));
	if (nd.len > STORE_NODE_MAX)
		storetool_problem(
		    f, "node %u:%" PRIu64 ": %zu bytes", l, i, nd.len);
	if (l > STORE_LEVEL_MAX || ((i + 1) << l) > f->count)
		storetool_problem(f,
		    "node %u:%" PRIu64 " covers messages not in the log", l, i);
	if (l > 0 &&
	    (store_node_size(f->s, l - 1, 2 * i, &csize) != 0 ||
		store_node_size(f->s, l - 1, 2 * i + 1, &csize) != 0))
		storetool_problem(
		    f, "node %u:%" PRIu64 ": a child is missing", l, i);
	free(nd.text);
	return 0;
}

/* storetool_fsck_view - the view the records fold to, and view.json. */
static void
storetool_fsck_view(struct storetool_fsck *f, int repair)
{
	struct fold_report r;
	struct plan_settings ps;
	const struct plan_line *lines;
	struct plan *p = NULL;
	uint64_t next = 0;
	size_t n, k;
	int ret;

	plan_settings_default(&ps);
	ret = f->live ? fold_view_live(f->s, &ps, &p, &r)
		      : fold_view(f->s, &ps, &p, &r);
	if (ret != 0) {
		storetool_problem(f, "the view does not fold: %s", r.msg);
		return;
	}
	buf_printf(f->out,
	    "batch records: %" PRIu64 ", %" PRIu64
	    " merges replayed, shrinking %d\n",
	    r.batches, r.merges, r.shrinking);
	plan_view(p, &lines, &n);
	for (k = 0; k < n; k++) {
		if ((lines[k].i << lines[k].l) != next) {
			storetool_problem(f,
			    "view line %zu starts at %" PRIu64 ", not %" PRIu64,
			    k, lines[k].i << lines[k].l, next);
			break;
		}
		next += UINT64_C(1) << lines[k].l;
	}
	if (k == n && next != f->count)
		storetool_problem(f,
		    "the view covers 0..%" PRIu64 " of 0..%" PRIu64, next,
		    f->count);
	buf_printf(f->out,
	    "view: %zu lines, %" PRIu64 " bytes, covers 0..%" PRIu64 "\n", n,
	    plan_view_size(p), next ? next - 1 : 0);
	if (r.saved == FOLD_SAVED_SAME && f->live) {
		buf_printf(f->out,
		    "view.json: the same as the fold at message %" PRIu64
		    " of %" PRIu64 " (shirod saves it a moment after each "
		    "change)\n",
		    r.saved_t, f->count);
	} else if (r.saved == FOLD_SAVED_SAME) {
		buf_adds(f->out, "view.json: the same as the fold\n");
	} else if (r.saved == FOLD_SAVED_MISSING && f->count == 0) {
		buf_adds(f->out, "view.json: none (an empty chat)\n");
	} else if (r.saved == FOLD_SAVED_MISSING && f->live) {
		buf_adds(f->out,
		    "view.json: not written yet (shirod saves it "
		    "a moment after the view changes)\n");
	} else if (repair) {
		ret = fold_save(f->s, p);
		buf_printf(f->out,
		    "view.json: %s; rewritten from the fold: %s\n", r.msg,
		    ret == 0 ? "done" : store_errmsg(f->s));
		if (ret != 0)
			f->problems++;
	} else {
		f->view_problems++;
		storetool_problem(f, "%s%s", r.msg,
		    f->live ? ""
			    : " (shirod rewrites it at start; --repair does "
			      "it now)");
	}
	plan_destroy(&p);
}

/*
 * storetool_fsck_once - one check of home into out; the number of
 * problems (*view_only: all of them are view.json's).  On a home a
 * running shirod owns, it reads what was on disk when it began (the
 * store's read-only open: view.json first, then the index, the log, the
 * records) and leaves out what was written after that: a line being
 * appended, nodes and records of later messages.
 */
static unsigned
storetool_fsck_once(
    const char *home, int repair, struct buf *out, int *view_only)
{
	struct storetool_fsck f;
	struct store_opts o;
	unsigned l;
	int ret;

	memset(&f, 0, sizeof(f));
	memset(&o, 0, sizeof(o));
	f.out = out;
	o.verify_all = 1;
	/* Without --repair nothing is written, so a running shirod's chat
	 * can be checked; a stopped one stays stopped meanwhile. */
	o.read_only = !repair;
	o.lock_if_free = 1;
	*view_only = 0;
	buf_printf(out, "shiro-store fsck %s\n", home);
	if (storetool_open(home, &o, &f.s) != 0) {
		buf_adds(out, "problem: the chat does not open\n");
		return 1;
	}
	f.live = store_owner(f.s);
	if (f.live != 0)
		buf_printf(out,
		    "shirod (pid %ld) runs on this home: checking what was on "
		    "disk when the check began\n",
		    (long)f.live);
	f.count = store_count(f.s);
	buf_printf(out,
	    "messages: %" PRIu64 ", every line parses, ids 0..%" PRIu64
	    " contiguous, index agrees\n",
	    f.count, f.count ? f.count - 1 : 0);
	if (store_torn(f.s) && f.live)
		buf_adds(out,
		    "the last line is being written by shirod; "
		    "the next check reads it\n");
	else if (store_torn(f.s))
		storetool_problem(&f,
		    "the last line is torn (a crash during "
		    "an append; --repair cuts it)");
	for (l = 0; l <= STORE_LEVEL_MAX; l++) {
		ret = store_node_iter(f.s, l, 0, storetool_node, &f);
		if (ret != 0) {
			storetool_problem(
			    &f, "nodes of level %u: %s", l, store_errmsg(f.s));
			break;
		}
	}
	buf_printf(out, "nodes: %" PRIu64 " in %" PRIu64 " levels\n", f.nodes,
	    f.levels);
	if (f.newer > 0)
		buf_printf(out,
		    "nodes: %" PRIu64 " more of messages logged after the "
		    "log was read, for the next check\n",
		    f.newer);
	storetool_fsck_view(&f, repair);
	store_close(&f.s);
	*view_only = f.live && f.problems > 0 && f.problems == f.view_problems;
	return f.problems;
}

/* storetool_fsck - the fsck command: check home, print the report. */
static int
storetool_fsck(const char *home, int repair)
{
	struct timespec pause = {0, STORETOOL_LIVE_PAUSE_MS * 1000000L};
	struct buf out = BUF_INIT;
	unsigned problems = 0;
	int k, view_only = 0;

	for (k = 0; k < STORETOOL_LIVE_TRIES; k++) {
		if (k > 0)
			(void)nanosleep(&pause, NULL);
		buf_reset(&out);
		problems = storetool_fsck_once(home, repair, &out, &view_only);
		/* On a live home, view.json alone may disagree for a moment
		 * (saved between two writes); only what stays is damage. */
		if (!view_only)
			break;
	}
	if (view_only)
		buf_printf(&out, "(view.json was read %d times, %d ms apart)\n",
		    STORETOOL_LIVE_TRIES, STORETOOL_LIVE_PAUSE_MS);
	if (problems == 0)
		buf_adds(&out, "ok\n");
	else
		buf_printf(
		    &out, "%u problem%s\n", problems, problems == 1 ? "" : "s");
	fputs(out.data, stdout);
	buf_free(&out);
	return problems == 0 ? 0 : 1;
}

/* ---- export ---- */

/* storetool_mkdirs - mkdir -p for the export's directories. */
static int
storetool_mkdir(const char *path)
{
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "shiro-store: mkdir %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* storetool_day - the local day of date_ms as "YYYY-MM-DD". */
static void
storetool_day(char *out, size_t outlen, int64_t date_ms)
{
	time_t t = (time_t)(date_ms / 1000);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(out, outlen, "%Y-%m-%d", &tm);
}

/* The export's open tree files, one per day. */
struct storetool_export {
	struct store *s;
	const char *dir;
	char day[16];
	FILE *fp;
	uint64_t lines;
	int err;
};

/* storetool_tree_file - the tree file of day, opened for appending. */
static FILE *
storetool_tree_file(struct storetool_export *e, const char *day)
{
	char *path;

	if (e->fp != NULL && strcmp(e->day, day) == 0)
		return e->fp;
	if (e->fp != NULL)
		fclose(e->fp);
	path = xasprintf("%s/tree/%s.jsonl", e->dir, day);
	e->fp = fopen(path, "a");
	if (e->fp == NULL) {
		fprintf(stderr, "shiro-store: %s: %s\n", path, strerror(errno));
		e->err = 1;
	}
	snprintf(e->day, sizeof(e->day), "%s", day);
	free(path);
	return e->fp;
}

/* storetool_put_json - one compact JSON line. */
static void
storetool_put_json(struct storetool_export *e, FILE *fp, json_t *o)
{
	if (fp == NULL || json_dumpf(o, fp, JSON_COMPACT) != 0 ||
	    fputc('\n', fp) == EOF)
		e->err = 1;
	e->lines++;
}

/* storetool_export_node - one tree line {l, i, text, size, date}. */
static int
storetool_export_node(void *arg, unsigned l, uint64_t i, uint32_t size)
{
	struct storetool_export *e = arg;
	struct store_node nd;
	char day[16];
	json_t *o;

	(void)size;
	if (store_node_get(e->s, l, i, &nd) != 0) {
		fprintf(stderr, "shiro-store: node %u:%" PRIu64 ": %s\n", l, i,
		    store_errmsg(e->s));
		e->err = 1;
		return 1;
	}
	storetool_day(day, sizeof(day), nd.date_ms);
	o = json_object();
	json_object_set_new(o, "l", json_integer(l));
	json_object_set_new(o, "i", json_integer((json_int_t)i));
	json_object_set_new(o, "text", json_stringn(nd.text, nd.len));
	json_object_set_new(o, "size", json_integer(nd.size));
	json_object_set_new(o, "date", json_integer(nd.date_ms));
	storetool_put_json(e, storetool_tree_file(e, day), o);
	json_decref(o);
	free(nd.text);
	return e->err;
}

/* storetool_export_batch - one merge line {merge, open, t}. */
static int
storetool_export_batch(void *arg, const struct store_batch *b)
{
	struct storetool_export *e = arg;
	struct store_msg_info info;
	json_t *o, *arr;
	char day[16];
	size_t k;

	/* The merge line goes with the day of the message that ran it. */
	if (b->t > 0 && store_info(e->s, b->t - 1, &info) == 0)
		storetool_day(day, sizeof(day), info.date_ms);
	else
		snprintf(
		    day, sizeof(day), "%s", e->day[0] ? e->day : "1970-01-01");
	o = json_object();
	arr = json_array();
	for (k = 0; k < b->n; k++)
		json_array_append_new(arr,
		    json_pack(
			"[iI]", b->merges[k].l, (json_int_t)b->merges[k].i));
	json_object_set_new(o, "merge", arr);
	json_object_set_new(o, "open", json_boolean(b->open));
	json_object_set_new(o, "t", json_integer((json_int_t)b->t));
	storetool_put_json(e, storetool_tree_file(e, day), o);
	json_decref(o);
	return e->err;
}

/* storetool_copy - copy one file. */
static int
storetool_copy(const char *from, const char *to)
{
	char b[65536];
	ssize_t n;
	int in, out, ret = 0;

	if ((in = open(from, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, b, sizeof(b))) > 0)
		if (write(out, b, (size_t)n) != n) {
			ret = -1;
			break;
		}
	if (n < 0 || fsync(out) != 0)
		ret = -1;
	close(in);
	close(out);
	return ret;
}

/* storetool_export - the export command. */
static int
storetool_export(const char *dir, const char *home)
{
	struct storetool_export e;
	struct store_opts o;
	struct plan_settings ps;
	struct fold_report r;
	const struct plan_line *lines;
	struct plan *p = NULL;
	struct dirent *de;
	struct buf b = BUF_INIT;
	char *sub, *from, *to, *mainp;
	size_t n, k;
	unsigned l;
	DIR *d;
	FILE *fp;
	int ret = 1;

	memset(&e, 0, sizeof(e));
	memset(&o, 0, sizeof(o));
	o.read_only = 1;
	if (storetool_open(home, &o, &e.s) != 0)
		return 1;
	e.dir = dir;
	sub = xasprintf("%s/main", dir);
	from = xasprintf("%s/tree", dir);
	if (storetool_mkdir(dir) || storetool_mkdir(sub) ||
	    storetool_mkdir(from))
		goto out;
	free(from);
	from = NULL;
	/* main/: the day files as they are (the gist's fields, plus key). */
	mainp = xasprintf("%s/chat/main", home);
	if ((d = opendir(mainp)) == NULL) {
		fprintf(
		    stderr, "shiro-store: %s: %s\n", mainp, strerror(errno));
		free(mainp);
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		if (strlen(de->d_name) != 16 ||
		    strcmp(de->d_name + 10, ".jsonl") != 0)
			continue;
		from = xasprintf("%s/%s", mainp, de->d_name);
		to = xasprintf("%s/%s", sub, de->d_name);
		if (storetool_copy(from, to) != 0) {
			fprintf(stderr, "shiro-store: copy %s: %s\n", from,
			    strerror(errno));
			e.err = 1;
		}
		free(from);
		free(to);
		from = NULL;
	}
	closedir(d);
	free(mainp);
	/* tree/: every node, children before parents, then the merges. */
	for (l = 0; l <= STORE_LEVEL_MAX && !e.err; l++)
		(void)store_node_iter(e.s, l, 0, storetool_export_node, &e);
	if (!e.err)
		(void)store_batch_iter(e.s, 0, storetool_export_batch, &e);
	if (e.fp != NULL && fclose(e.fp) != 0)
		e.err = 1;
	e.fp = NULL;
	/* view.json: the folded view, which is the truth. */
	plan_settings_default(&ps);
	if (fold_view(e.s, &ps, &p, &r) != 0) {
		fprintf(
		    stderr, "shiro-store: the view does not fold: %s\n", r.msg);
		goto out;
	}
	plan_view(p, &lines, &n);
	buf_addc(&b, '[');
	for (k = 0; k < n; k++)
		buf_printf(&b, "%s[%u,%" PRIu64 "]", k ? "," : "", lines[k].l,
		    lines[k].i);
	buf_adds(&b, "]\n");
	to = xasprintf("%s/view.json", dir);
	fp = fopen(to, "w");
	if (fp == NULL || fwrite(b.data, 1, b.len, fp) != b.len ||
	    fclose(fp) != 0)
		e.err = 1;
	free(to);
	if (!e.err) {
		printf("exported %" PRIu64 " messages, %" PRIu64
		       " tree lines, %zu view lines to %s\n",
		    store_count(e.s), e.lines, n, dir);
		ret = 0;
	}
out:
	buf_free(&b);
	plan_destroy(&p);
	free(sub);
	free(from);
	store_close(&e.s);
	return ret;
}

/* ---- import ---- */

/* storetool_cmp_str - qsort order of names. */
static int
storetool_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* storetool_list - the *.jsonl files of dir, sorted (caller frees). */
static char **
storetool_list(const char *dir, size_t *np)
{
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0, len;
	DIR *d;

	*np = 0;
	if ((d = opendir(dir)) == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 7 || strcmp(de->d_name + len - 6, ".jsonl") != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[n++] = xasprintf("%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), storetool_cmp_str);
	*np = n;
	return v;
}

/* storetool_date - a line's date: milliseconds, or an ISO 8601 UTC
 * string "YYYY-MM-DDTHH:MM:SS[.mmm]Z". */
static int
storetool_date(json_t *v, int64_t *msp)
{
	struct tm tm;
	const char *s;
	int ms = 0, n = 0;

	if (json_is_integer(v)) {
		*msp = json_integer_value(v);
		return *msp >= 0 ? 0 : -1;
	}
	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%d-%d-%dT%d:%d:%d%n", &tm.tm_year, &tm.tm_mon,
		&tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return -1;
	if (s[n] == '.' && sscanf(s + n + 1, "%3d", &ms) != 1)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*msp = (int64_t)timegm(&tm) * 1000 + ms;
	return 0;
}

/* The import's state. */
struct storetool_import {
	struct store *s;
	struct store_msg_in *m;
	char **texts, **keys;
	size_t n;
	struct store_node_in *nodes;
	size_t nnodes, capnodes;
	struct store_batch *batches;
	size_t nbatches, capbatches;
	uint64_t next; /* the id the next message line must have */
};

/* storetool_import_flush - append the messages read so far. */
static int
storetool_import_flush(struct storetool_import *im)
{
	uint64_t *ids;
	size_t k;
	int ret;

	if (im->n == 0)
		return 0;
	ids = xcalloc(im->n, sizeof(*ids));
	ret = store_append_batch(im->s, im->m, im->n, ids, NULL);
	if (ret != 0)
		fprintf(
		    stderr, "shiro-store: append: %s\n", store_errmsg(im->s));
	for (k = 0; ret == 0 && k < im->n; k++)
		if (ids[k] != im->next - im->n + k) {
			fprintf(stderr,
			    "shiro-store: message %" PRIu64 " got id %" PRIu64
			    " (a repeated key?)\n",
			    im->next - im->n + k, ids[k]);
			ret = -SHIRO_ERR_CORRUPT;
		}
	for (k = 0; k < im->n; k++) {
		free(im->texts[k]);
		free(im->keys[k]);
	}
	free(ids);
	im->n = 0;
	return ret;
}

/* storetool_import_msg - one main/ line. */
static int
storetool_import_msg(struct storetool_import *im, json_t *o, const char *where)
{
	json_t *i = json_object_get(o, "i"), *kind = json_object_get(o, "kind");
	json_t *text = json_object_get(o, "text"),
	       *key = json_object_get(o, "key");
	struct store_msg_in *m = &im->m[im->n];
	enum store_kind k;

	if (!json_is_integer(i) ||
	    (uint64_t)json_integer_value(i) != im->next ||
	    !json_is_string(kind) ||
	    store_kind_parse(json_string_value(kind), &k) != 0 ||
	    !json_is_string(text) ||
	    storetool_date(json_object_get(o, "date"), &m->date_ms) != 0 ||
	    (key != NULL && !json_is_string(key))) {
		fprintf(stderr, "shiro-store: %s: not message %" PRIu64 "\n",
		    where, im->next);
		return -1;
	}
	m->kind = k;
	im->texts[im->n] =
	    xmemdup(json_string_value(text), json_string_length(text) + 1);
	m->text = im->texts[im->n];
	m->len = json_string_length(text);
	im->keys[im->n] = key != NULL ? xstrdup(json_string_value(key)) : NULL;
	m->key = im->keys[im->n];
	if (m->date_ms == 0)
		m->date_ms = 1; /* 0 means "now" to the store */
	im->n++;
	im->next++;
	if (im->n == STORETOOL_CHUNK && storetool_import_flush(im) != 0)
		return -1;
	return 0;
}

/* storetool_import_tree - one tree/ line: a node or a merge line. */
static int
storetool_import_tree(struct storetool_import *im, json_t *o, const char *where)
{
	json_t *merge = json_object_get(o, "merge"), *v, *text;
	struct store_batch *b;
	struct store_node_in *nd;
	size_t k;

	if (merge != NULL) {
		if (!json_is_array(merge) ||
		    !json_is_integer(json_object_get(o, "t")))
			goto bad;
		if (im->nbatches == im->capbatches) {
			im->capbatches =
			    im->capbatches ? im->capbatches * 2 : 64;
			im->batches = xreallocarray(
			    im->batches, im->capbatches, sizeof(*im->batches));
		}
		b = &im->batches[im->nbatches];
		memset(b, 0, sizeof(*b));
		b->t = (uint64_t)json_integer_value(json_object_get(o, "t"));
		b->open = json_is_true(json_object_get(o, "open"));
		b->n = json_array_size(merge);
		b->merges = xcalloc(b->n ? b->n : 1, sizeof(*b->merges));
		json_array_foreach(merge, k, v)
		{
			if (!json_is_array(v) || json_array_size(v) != 2 ||
			    !json_is_integer(json_array_get(v, 0)) ||
			    !json_is_integer(json_array_get(v, 1))) {
				free(b->merges);
				goto bad;
			}
			b->merges[k].l =
			    (unsigned)json_integer_value(json_array_get(v, 0));
			b->merges[k].i =
			    (uint64_t)json_integer_value(json_array_get(v, 1));
		}
		im->nbatches++;
		return 0;
	}
	text = json_object_get(o, "text");
	if (!json_is_integer(json_object_get(o, "l")) ||
	    !json_is_integer(json_object_get(o, "i")) || !json_is_string(text))
		goto bad;
	if (im->nnodes == im->capnodes) {
		im->capnodes = im->capnodes ? im->capnodes * 2 : 1024;
		im->nodes =
		    xreallocarray(im->nodes, im->capnodes, sizeof(*im->nodes));
	}
	nd = &im->nodes[im->nnodes++];
	memset(nd, 0, sizeof(*nd));
	nd->l = (unsigned)json_integer_value(json_object_get(o, "l"));
	nd->i = (uint64_t)json_integer_value(json_object_get(o, "i"));
	nd->len = json_string_length(text);
	nd->text = xmemdup(json_string_value(text), nd->len + 1);
	/* The size is the planner's, from the text: one definition. */
	nd->size = (uint32_t)render_flat_size(nd->text, nd->len);
	if (storetool_date(json_object_get(o, "date"), &nd->date_ms) != 0)
		nd->date_ms = 0;
	return 0;
bad:
	fprintf(stderr, "shiro-store: %s: not a node or merge line\n", where);
	return -1;
}

/* storetool_read_lines - call fn for each JSON line of the files. */
static int
storetool_read_lines(struct storetool_import *im, char **files, size_t n,
    int (*fn)(struct storetool_import *, json_t *, const char *))
{
	json_error_t jerr;
	char *line = NULL, where[600];
	size_t cap = 0, k, lineno;
	ssize_t len;
	json_t *o;
	FILE *fp;
	int ret = 0;

	for (k = 0; k < n && ret == 0; k++) {
		if ((fp = fopen(files[k], "r")) == NULL) {
			fprintf(stderr, "shiro-store: %s: %s\n", files[k],
			    strerror(errno));
			ret = -1;
			break;
		}
		lineno = 0;
		while (ret == 0 && (len = getline(&line, &cap, fp)) > 0) {
			lineno++;
			snprintf(where, sizeof(where), "%s line %zu", files[k],
			    lineno);
			o = json_loadb(line, (size_t)len,
			    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
			if (o == NULL || !json_is_object(o)) {
				fprintf(stderr, "shiro-store: %s: not JSON\n",
				    where);
				ret = -1;
			} else {
				ret = fn(im, o, where);
			}
			json_decref(o);
		}
		fclose(fp);
	}
	free(line);
	return ret;
}

/* storetool_cmp_node - children before parents: by level, then index. */
static int
storetool_cmp_node(const void *a, const void *b)
{
	const struct store_node_in *x = a, *y = b;

	if (x->l != y->l)
		return x->l < y->l ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * storetool_view_as_merges - a gist chat from before merge lines: its
 * view.json becomes one batch at T that makes every node under each
 * line, level by level (D1: imported once, as merges).
 */
static int
storetool_view_as_merges(struct storetool_import *im, const char *dir)
{
	json_error_t jerr;
	json_t *v, *pair;
	struct store_batch *b;
	size_t k, cap = 0;
	unsigned l, lvl, maxl = 0;
	uint64_t i, first, last;
	char *path = xasprintf("%s/view.json", dir);

	v = json_load_file(path, 0, &jerr);
	free(path);
	if (v == NULL)
		return 0; /* no view.json: every message is its own line */
	if (!json_is_array(v)) {
		json_decref(v);
		return -1;
	}
	im->batches = xcalloc(1, sizeof(*im->batches));
	im->capbatches = 1;
	b = &im->batches[0];
	b->t = im->next;
	json_array_foreach(v, k, pair)
	{
		l = (unsigned)json_integer_value(json_array_get(pair, 0));
		if (l > maxl && l <= STORE_LEVEL_MAX)
			maxl = l;
	}
	for (lvl = 1; lvl <= maxl; lvl++) {
		json_array_foreach(v, k, pair)
		{
			l = (unsigned)json_integer_value(
			    json_array_get(pair, 0));
			i = (uint64_t)json_integer_value(
			    json_array_get(pair, 1));
			if (l < lvl || l > STORE_LEVEL_MAX)
				continue;
			first = i << (l - lvl);
			last = ((i + 1) << (l - lvl)) - 1;
			for (; first <= last; first++) {
				if (b->n == cap) {
					cap = cap ? cap * 2 : 256;
					b->merges = xreallocarray(
					    b->merges, cap, sizeof(*b->merges));
				}
				b->merges[b->n].l = lvl;
				b->merges[b->n].i = first;
				b->n++;
			}
		}
	}
	im->nbatches = b->n > 0 ? 1 : 0;
	json_decref(v);
	return 0;
}

/* storetool_import - the import command. */
static int
storetool_import(const char *dir, const char *home)
{
	struct storetool_import im;
	struct plan_settings ps;
	struct fold_report r;
	struct plan *p = NULL;
	char **files = NULL, *sub;
	size_t nfiles = 0, k;
	int ret = 1;

	memset(&im, 0, sizeof(im));
	if (storetool_open(home, NULL, &im.s) != 0)
		return 1;
	if (store_count(im.s) != 0) {
		fprintf(stderr,
		    "shiro-store: %s already has a chat; import "
		    "goes into a new home\n",
		    home);
		goto out;
	}
	im.m = xcalloc(STORETOOL_CHUNK, sizeof(*im.m));
	im.texts = xcalloc(STORETOOL_CHUNK, sizeof(*im.texts));
	im.keys = xcalloc(STORETOOL_CHUNK, sizeof(*im.keys));
	sub = xasprintf("%s/main", dir);
	files = storetool_list(sub, &nfiles);
	free(sub);
	if (storetool_read_lines(&im, files, nfiles, storetool_import_msg) !=
		0 ||
	    storetool_import_flush(&im) != 0)
		goto out;
	for (k = 0; k < nfiles; k++)
		free(files[k]);
	free(files);
	sub = xasprintf("%s/tree", dir);
	files = storetool_list(sub, &nfiles);
	free(sub);
	if (storetool_read_lines(&im, files, nfiles, storetool_import_tree) !=
	    0)
		goto out;
	if (im.nbatches == 0 && storetool_view_as_merges(&im, dir) != 0) {
		fprintf(stderr, "shiro-store: %s/view.json: not a view\n", dir);
		goto out;
	}
	if (im.nnodes > 1)
		qsort(
		    im.nodes, im.nnodes, sizeof(*im.nodes), storetool_cmp_node);
	if (store_tree_commit(
		im.s, im.nodes, im.nnodes, im.batches, im.nbatches) != 0) {
		fprintf(stderr, "shiro-store: tree: %s\n", store_errmsg(im.s));
		goto out;
	}
	plan_settings_default(&ps);
	if (fold_view(im.s, &ps, &p, &r) != 0) {
		fprintf(
		    stderr, "shiro-store: the view does not fold: %s\n", r.msg);
		goto out;
	}
	if (fold_save(im.s, p) != 0) {
		fprintf(
		    stderr, "shiro-store: view.json: %s\n", store_errmsg(im.s));
		goto out;
	}
	printf("imported %" PRIu64 " messages, %zu nodes, %zu batch records "
	       "into %s\n",
	    store_count(im.s), im.nnodes, im.nbatches, home);
	ret = 0;
out:
	plan_destroy(&p);
	for (k = 0; k < nfiles; k++)
		free(files[k]);
	free(files);
	for (k = 0; k < im.nnodes; k++)
		free((char *)im.nodes[k].text);
	free(im.nodes);
	for (k = 0; k < im.nbatches; k++)
		free(im.batches[k].merges);
	free(im.batches);
	for (k = 0; k < im.n; k++) {
		free(im.texts[k]);
		free(im.keys[k]);
	}
	free(im.m);
	free(im.texts);
	free(im.keys);
	store_close(&im.s);
	return ret;
}

/* ---- gen ---- */

/* storetool_gen - the gen command: n messages at the design's sizes. */
static int
storetool_gen(uint64_t n, const char *home, uint64_t seed)
{
	struct fold_gen_opts o;
	struct plan_settings ps;
	struct fold_report r;
	struct timespec a, b;
	struct store *s;
	struct plan *p = NULL;
	int ret = 1;

	if (storetool_open(home, NULL, &s) != 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	plan_settings_default(&ps);
	if (fold_view(s, &ps, &p, &r) != 0) {
		fprintf(
		    stderr, "shiro-store: the view does not fold: %s\n", r.msg);
		goto out;
	}
	memset(&o, 0, sizeof(o));
	o.n = n;
	o.seed = seed;
	o.min_msg = 20;
	o.max_msg = 1200;
	o.min_node = 300;
	o.max_node = 512;
	o.chunk = STORETOOL_CHUNK;
	if (fold_gen(s, p, &o) != 0) {
		fprintf(stderr, "shiro-store: gen: %s\n", store_errmsg(s));
		goto out;
	}
	if (fold_save(s, p) != 0 || store_sync(s) != 0) {
		fprintf(stderr, "shiro-store: %s\n", store_errmsg(s));
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("generated %" PRIu64 " messages (now %" PRIu64 "), view %" PRIu64
	       " bytes, in %.2f s\n",
	    n, store_count(s), plan_view_size(p),
	    (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	ret = 0;
out:
	plan_destroy(&p);
	store_close(&s);
	return ret;
}

/* storetool_number - a decimal argument, or exit 2. */
static uint64_t
storetool_number(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || *s == '-') {
		fprintf(stderr, "shiro-store: not a number: %s\n", s);
		exit(2);
	}
	return (uint64_t)v;
}

/* main - dispatch on the command. */
int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"repair", no_argument, NULL, 'r'},
	    {"gist", required_argument, NULL, 'g'},
	    {"seed", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd, *gist = NULL;
	uint64_t seed = 1;
	int c, repair = 0, nargs;
	char **args;

	log_init("shiro-store", LOG_LEVEL_WARN);
	if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		fputs(storetool_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	cmd = argv[1];
	argv++;
	argc--;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			repair = 1;
			break;
		case 'g':
			gist = optarg;
			break;
		case 's':
			seed = storetool_number(optarg);
			break;
		case 'h':
			fputs(storetool_usage, stdout);
			return 0;
		default:
			fputs(storetool_usage, stderr);
			return 2;
		}
	}
	args = argv + optind;
	nargs = argc - optind;
	if (strcmp(cmd, "fsck") == 0 && nargs == 1)
		return storetool_fsck(args[0], repair);
	if (strcmp(cmd, "export") == 0 && nargs == 1 && gist != NULL)
		return storetool_export(gist, args[0]);
	if (strcmp(cmd, "import") == 0 && nargs == 1 && gist != NULL)
		return storetool_import(gist, args[0]);
	if (strcmp(cmd, "gen") == 0 && nargs == 2)
		return storetool_gen(storetool_number(args[0]), args[1], seed);
	fputs(storetool_usage, stderr);
	return 2;
}
