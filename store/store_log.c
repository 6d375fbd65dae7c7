/*
 * store_log.c - the message log: one JSON object per line in
 * chat/main/YYYY-MM-DD.jsonl, its codec, and the recovery at open that
 * makes the log whole and the index complete.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <lmdb.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "store_int.h"

#define STORE_LOG_CHUNK (1 << 20) /* bytes read at a time when scanning */
#define STORE_LOG_BATCH 8192 /* index entries per commit when scanning */
#define STORE_LOG_LAST_S 253402300799LL /* 9999-12-31T23:59:59Z */

/* store_log_now_ms - milliseconds since the epoch, from the wall clock. */
int64_t
store_log_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* store_log_day - the local calendar day of date_ms as YYYYMMDD. */
uint32_t
store_log_day(int64_t date_ms)
{
	time_t t = (time_t)(date_ms / 1000);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL)
		return 19700101;
	return (uint32_t)((tm.tm_year + 1900) * 10000 + (tm.tm_mon + 1) * 100 +
	    tm.tm_mday);
}

/* store_log_fmt_date - date_ms as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC). */
static void
store_log_fmt_date(char *out, size_t outlen, int64_t date_ms)
{
	time_t t = (time_t)(date_ms / 1000);
	struct tm tm;
	int ms = (int)(date_ms % 1000);

	if (ms < 0)
		ms += 1000;
	gmtime_r(&t, &tm);
	/* Years past 9999 do not fit the format: the clock is wrong. */
	if (tm.tm_year > 9999 - 1900)
		tm.tm_year = 9999 - 1900;
	snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, ms);
}

/* store_log_parse_date - read what store_log_fmt_date writes. */
static int
store_log_parse_date(const char *s, int64_t *msp)
{
	struct tm tm;
	int y, mo, d, h, mi, se, ms, n = 0;
	time_t t;

	if (strlen(s) != 24 ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &y, &mo, &d, &h, &mi,
		&se, &ms, &n) != 7 ||
	    n != 24)
		return -SHIRO_ERR_CORRUPT;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    se > 60 || ms < 0 || y < 1970)
		return -SHIRO_ERR_CORRUPT;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	t = timegm(&tm);
	/* A leap second at the end of 9999 is a time in 10000, which
	 * store_log_fmt_date cannot write back. */
	if (t < 0 || t > STORE_LOG_LAST_S)
		return -SHIRO_ERR_CORRUPT;
	*msp = (int64_t)t * 1000 + ms;
	return 0;
}

/* store_log_encode - the JSON line of message id, newline included. */
int
store_log_encode(
    struct buf *out, uint64_t id, const struct store_msg_in *m, int64_t date_ms)
{
	json_t *o = NULL, *text;
	char date[80];
	size_t need;
	int ret = -SHIRO_ERR_INVAL;

	text = json_stringn(m->len > 0 ? m->text : "", m->len);
	if (text == NULL)
		goto out; /* not valid UTF-8 */
	store_log_fmt_date(date, sizeof(date), date_ms);
	o = json_object();
	json_object_set_new(o, "i", json_integer((json_int_t)id));
	json_object_set_new(o, "kind", json_string(store_kind_name(m->kind)));
	json_object_set_new(o, "text", text);
	json_object_set_new(o, "size", json_integer((json_int_t)m->len));
	json_object_set_new(o, "date", json_string(date));
	if (m->key != NULL) {
		json_t *k = json_string(m->key);

		if (k == NULL)
			goto out;
		json_object_set_new(o, "key", k);
	}
	need = json_dumpb(o, NULL, 0, JSON_COMPACT);
	if (need == 0)
		goto out;
	buf_reserve(out, need + 1);
	if (json_dumpb(o, out->data + out->len, need, JSON_COMPACT) != need)
		goto out;
	out->len += need;
	buf_addc(out, '\n');
	ret = 0;
out:
	json_decref(o);
	return ret;
}

/* store_log_done - release a decoded line. */
void
store_log_done(struct store_line_rec *r)
{
	json_decref((json_t *)r->json);
	r->json = NULL;
}

/* store_log_decode - check and decode one line; strict about the fields
 * shiro writes, tolerant of extra ones (the gist may add some). */
int
store_log_decode(
    const char *line, size_t len, struct store_line_rec *r, const char **why)
{
	json_error_t jerr;
	json_t *o, *v;
	json_int_t n;
	const char *kind;

	memset(r, 0, sizeof(*r));
	o = json_loadb(
	    line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (o == NULL) {
		*why = "not JSON";
		return -SHIRO_ERR_CORRUPT;
	}
	r->json = o;
	*why = NULL;
	if (!json_is_object(o))
		*why = "not an object";
	else if (!json_is_integer(v = json_object_get(o, "i")) ||
	    (n = json_integer_value(v)) < 0)
		*why = "bad i";
	else if ((r->id = (uint64_t)n, 0))
		;
	else if (!json_is_string(v = json_object_get(o, "kind")) ||
	    (kind = json_string_value(v),
		store_kind_parse(kind, &r->kind) != 0))
		*why = "bad kind";
	else if (!json_is_string(v = json_object_get(o, "text")))
		*why = "bad text";
	else if ((r->text = json_string_value(v),
		     r->len = json_string_length(v), r->len > STORE_TEXT_MAX))
		*why = "text too long";
	else if (!json_is_integer(v = json_object_get(o, "size")) ||
	    json_integer_value(v) != (json_int_t)r->len)
		*why = "size is not the text's length";
	else if (!json_is_string(v = json_object_get(o, "date")) ||
	    store_log_parse_date(json_string_value(v), &r->date_ms) != 0)
		*why = "bad date";
	else if ((v = json_object_get(o, "key")) != NULL &&
	    (!json_is_string(v) || json_string_length(v) == 0 ||
		json_string_length(v) > STORE_KEY_MAX ||
		strlen(json_string_value(v)) != json_string_length(v)))
		*why = "bad key";
	if (*why != NULL) {
		store_log_done(r);
		return -SHIRO_ERR_CORRUPT;
	}
	r->size = (uint32_t)r->len;
	r->key = v != NULL ? json_string_value(v) : NULL;
	return 0;
}

/* store_log_cmp_day - qsort order of days. */
static int
store_log_cmp_day(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* store_log_days - the days that have a file in chat/main, in order. */
int
store_log_days(struct store *s, uint32_t **daysp, size_t *np)
{
	DIR *d;
	struct dirent *de;
	uint32_t *days = NULL;
	size_t n = 0, cap = 0;
	int y, m, dd, len;

	if ((d = opendir(s->main)) == NULL)
		return store_fail(s, err_from_errno(errno), "opendir %s: %s",
		    s->main, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		len = 0;
		if (sscanf(de->d_name, "%4d-%2d-%2d.jsonl%n", &y, &m, &dd,
			&len) != 3 ||
		    len != 16 || strlen(de->d_name) != 16)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			days = xreallocarray(days, cap, sizeof(*days));
		}
		days[n++] = (uint32_t)(y * 10000 + m * 100 + dd);
	}
	closedir(d);
	if (n > 1)
		qsort(days, n, sizeof(*days), store_log_cmp_day);
	*daysp = days;
	*np = n;
	return 0;
}

/* The state of one recovery scan. */
struct store_log_scan {
	struct store *s;
	int verify; /* compare lines that are already indexed */
	uint64_t next; /* the id the next line must have */
	struct store_ient *ents; /* found, not yet committed */
	char **keys;
	size_t nents;
	uint64_t first; /* id of ents[0] */
};

/* store_log_commit_fn - write the scanned entries into the index. */
static int
store_log_commit_fn(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_log_scan *sc = arg;
	size_t k;
	int rc;

	for (k = 0; k < sc->nents; k++) {
		rc = store_db_put_index(
		    s, txn, sc->first + k, &sc->ents[k], sc->keys[k]);
		if (rc == MDB_MAP_FULL)
			return -SHIRO_ERR_AGAIN;
		if (rc != 0)
			return store_fail(
			    s, store_db_err(rc), "index: %s", mdb_strerror(rc));
	}
	return 0;
}

/* store_log_commit - commit what the scan found so far. */
static int
store_log_commit(struct store_log_scan *sc)
{
	struct store *s = sc->s;
	size_t k;
	int ret = 0;

	if (sc->nents > 0 && !s->read_only)
		ret = store_db_write(s, store_log_commit_fn, sc);
	if (ret == 0 && !s->read_only)
		s->indexed = sc->first + sc->nents;
	if (s->read_only) {
		/* Nothing may be written: keep them as deferred entries so
		 * that reads still find the messages. */
		for (k = 0; k < sc->nents; k++) {
			if (s->npend == s->cappend) {
				s->cappend = s->cappend ? s->cappend * 2 : 64;
				s->pend = xreallocarray(
				    s->pend, s->cappend, sizeof(*s->pend));
			}
			s->pend[s->npend++] = sc->ents[k];
		}
	}
	for (k = 0; k < sc->nents; k++)
		free(sc->keys[k]);
	sc->first += sc->nents;
	sc->nents = 0;
	return ret;
}

/* store_log_line_no - the 1-based line number of byte off in the file. */
static unsigned long
store_log_line_no(int fd, uint64_t off)
{
	char b[65536];
	uint64_t pos = 0;
	unsigned long line = 1;
	ssize_t r;
	size_t k, want;

	while (pos < off) {
		want = off - pos < sizeof(b) ? (size_t)(off - pos) : sizeof(b);
		r = pread(fd, b, want, (off_t)pos);
		if (r <= 0)
			break;
		for (k = 0; k < (size_t)r; k++)
			line += b[k] == '\n';
		pos += (uint64_t)r;
	}
	return line;
}

/* store_log_day_name - "YYYY-MM-DD.jsonl" of day, for messages. */
static void
store_log_day_name(char *out, size_t outlen, uint32_t day)
{
	snprintf(out, outlen, "%04u-%02u-%02u.jsonl", day / 10000,
	    day / 100 % 100, day % 100);
}

/*
 * store_log_fix_tail - the last file ends without a newline after
 * byte end: terminate a complete line, else save and cut the torn bytes.
 */
static int
store_log_fix_tail(struct store_log_scan *sc, int fd, uint32_t day,
    uint64_t end, const char *tail, size_t tlen, int *keptp)
{
	struct store *s = sc->s;
	struct store_line_rec r;
	const char *why;
	char name[32], *dir = NULL, *path = NULL;
	int ret = 0, tfd = -1;

	store_log_day_name(name, sizeof(name), day);
	*keptp = 0;
	if (store_log_decode(tail, tlen, &r, &why) == 0) {
		uint64_t id = r.id;

		store_log_done(&r);
		if (id == sc->next) {
			/* The whole line made it but its newline did not:
			 * terminate it and keep the message. */
			if (s->read_only) {
				if (s->owner == 0)
					log_warnx("store: %s ends in an "
						  "unterminated line (message "
						  "%llu)",
					    name, (unsigned long long)id);
				*keptp = 1;
				return 0;
			}
			if (pwrite(fd, "\n", 1, (off_t)(end + tlen)) != 1 ||
			    fsync(fd) != 0)
				return store_fail(s, err_from_errno(errno),
				    "%s: cannot terminate the last line: %s",
				    name, strerror(errno));
			log_warnx("store: %s: terminated the unterminated "
				  "last line (message %llu)",
			    name, (unsigned long long)id);
			*keptp = 1;
			return 0;
		}
	}
	if (s->read_only) {
		s->torn = 1;
		/* Beside a running owner it is an append in progress. */
		if (s->owner == 0)
			log_warnx("store: %s ends in a torn line of %zu bytes "
				  "at offset %llu (never acknowledged)",
			    name, tlen, (unsigned long long)end);
		return 0;
	}
	/* Keep the torn bytes for a person to look at, then cut them. */
	dir = xasprintf("%s/torn", s->chat);
	path = xasprintf("%s/%s.%llu", dir, name, (unsigned long long)end);
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		ret = store_fail(s, err_from_errno(errno), "mkdir %s: %s", dir,
		    strerror(errno));
		goto out;
	}
	tfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (tfd == -1 || write(tfd, tail, tlen) != (ssize_t)tlen ||
	    fsync(tfd) != 0) {
		ret = store_fail(s, err_from_errno(errno), "save %s: %s", path,
		    strerror(errno));
		goto out;
	}
	if (store_fsync_dir(dir) != 0 || ftruncate(fd, (off_t)end) != 0 ||
	    fsync(fd) != 0) {
		ret = store_fail(s, err_from_errno(errno),
		    "%s: cannot cut the torn last line: %s", name,
		    strerror(errno));
		goto out;
	}
	log_warnx("store: %s: cut a torn last line of %zu bytes at offset "
		  "%llu (never acknowledged; saved in %s)",
	    name, tlen, (unsigned long long)end, path);
out:
	if (tfd != -1)
		close(tfd);
	free(dir);
	free(path);
	return ret;
}

/* store_log_add - one good line found by the scan. */
static int
store_log_add(struct store_log_scan *sc, uint32_t day, uint64_t off, size_t len,
    const struct store_line_rec *r)
{
	struct store *s = sc->s;
	struct store_ient *e;

	if (r->id < s->indexed && !sc->verify)
		return 0;
	if (r->id < s->indexed) {
		/* verify: the index must say the same as the line. */
		struct store_ient ie;
		int ret = store_db_ient(s, r->id, &ie);

		if (ret != 0)
			return ret;
		if (ie.day != day || ie.off != off || ie.len != len ||
		    ie.size != r->size || ie.kind != r->kind ||
		    ie.date_ms != r->date_ms)
			return store_fail(s, -SHIRO_ERR_CORRUPT,
			    "index entry of message %llu disagrees with the "
			    "log",
			    (unsigned long long)r->id);
		return 0;
	}
	if (sc->nents == STORE_LOG_BATCH) {
		int ret = store_log_commit(sc);

		if (ret != 0)
			return ret;
	}
	e = &sc->ents[sc->nents];
	e->day = day;
	e->off = off;
	e->len = (uint32_t)len;
	e->size = r->size;
	e->kind = (uint8_t)r->kind;
	e->date_ms = r->date_ms;
	sc->keys[sc->nents] = r->key != NULL ? xstrdup(r->key) : NULL;
	sc->nents++;
	return 0;
}

/*
 * store_log_scan_file - read one day file from offset start, decode each
 * line and check its id.  last says this is the last non-empty file,
 * whose unterminated tail is a torn append rather than damage.
 */
static int
store_log_scan_file(struct store_log_scan *sc, uint32_t day, uint64_t start,
    int last, uint64_t *endp)
{
	struct store *s = sc->s;
	struct store_line_rec r;
	struct buf b = BUF_INIT;
	const char *why;
	char name[32], *path;
	uint64_t pos = start, lineoff;
	size_t k, from;
	ssize_t got;
	int fd, ret = 0, kept, eof = 0;

	store_log_day_name(name, sizeof(name), day);
	path = store_day_path(s, day);
	fd = open(path, (s->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd == -1) {
		ret = store_fail(s, err_from_errno(errno), "open %s: %s", path,
		    strerror(errno));
		goto out;
	}
	lineoff = start;
	for (;;) {
		if (!eof) {
			buf_reserve(&b, STORE_LOG_CHUNK);
			got = pread(
			    fd, b.data + b.len, STORE_LOG_CHUNK, (off_t)pos);
			if (got < 0) {
				ret = store_fail(s, err_from_errno(errno),
				    "read %s: %s", path, strerror(errno));
				goto out;
			}
			if (got == 0)
				eof = 1;
			b.len += (size_t)got;
			pos += (uint64_t)got;
		}
		from = 0;
		for (k = 0; k < b.len; k++) {
			if (b.data[k] != '\n')
				continue;
			if (store_log_decode(
				b.data + from, k - from, &r, &why) != 0) {
				ret = store_fail(s, -SHIRO_ERR_CORRUPT,
				    "%s line %lu: %s", name,
				    store_log_line_no(fd, lineoff), why);
				goto out;
			}
			if (r.id != sc->next) {
				ret = store_fail(s, -SHIRO_ERR_CORRUPT,
				    "%s line %lu: id %llu where %llu was "
				    "expected",
				    name, store_log_line_no(fd, lineoff),
				    (unsigned long long)r.id,
				    (unsigned long long)sc->next);
				store_log_done(&r);
				goto out;
			}
			ret = store_log_add(sc, day, lineoff, k - from + 1, &r);
			store_log_done(&r);
			if (ret != 0)
				goto out;
			sc->next++;
			lineoff += k - from + 1;
			from = k + 1;
		}
		memmove(b.data, b.data + from, b.len - from);
		b.len -= from;
		if (eof)
			break;
		if (b.len > STORE_LINE_MAX) {
			ret = store_fail(s, -SHIRO_ERR_CORRUPT,
			    "%s line %lu: longer than %d bytes", name,
			    store_log_line_no(fd, lineoff), STORE_LINE_MAX);
			goto out;
		}
	}
	if (b.len > 0) {
		if (!last) {
			ret = store_fail(s, -SHIRO_ERR_CORRUPT,
			    "%s line %lu: unterminated line in a file that "
			    "is not the last",
			    name, store_log_line_no(fd, lineoff));
			goto out;
		}
		ret = store_log_fix_tail(
		    sc, fd, day, lineoff, b.data, b.len, &kept);
		if (ret != 0)
			goto out;
		if (kept) {
			if (store_log_decode(b.data, b.len, &r, &why) != 0)
				panic("store: decoded line no longer decodes");
			ret = store_log_add(sc, day, lineoff, b.len + 1, &r);
			store_log_done(&r);
			if (ret != 0)
				goto out;
			sc->next++;
			lineoff += b.len + 1;
		}
	}
	*endp = lineoff;
out:
	if (fd != -1)
		close(fd);
	buf_free(&b);
	free(path);
	return ret;
}

/* store_log_file_size - the size of day's file, or 0 if it is missing. */
static int
store_log_file_size(struct store *s, uint32_t day, uint64_t *sizep)
{
	struct stat st;
	char *path = store_day_path(s, day);
	int ret = 0;

	if (stat(path, &st) != 0)
		ret = store_fail(s, err_from_errno(errno), "stat %s: %s", path,
		    strerror(errno));
	else
		*sizep = (uint64_t)st.st_size;
	free(path);
	return ret;
}

/* store_log_recover - see store_int.h. */
int
store_log_recover(struct store *s, int verify)
{
	struct store_log_scan sc;
	struct store_ient last;
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	uint32_t *days = NULL;
	size_t ndays = 0, d, lastfile;
	uint64_t start, end = 0, size;
	int rc, ret, have_last = 0;

	memset(&sc, 0, sizeof(sc));
	sc.s = s;
	sc.verify = verify;
	sc.ents = xcalloc(STORE_LOG_BATCH, sizeof(*sc.ents));
	sc.keys = xcalloc(STORE_LOG_BATCH, sizeof(*sc.keys));
	/* Where the committed index ends. */
	if ((ret = store_db_read(s, &txn)) != 0)
		goto out;
	if ((rc = mdb_cursor_open(txn, s->db_msgs, &cur)) != 0 ||
	    ((rc = mdb_cursor_get(cur, &k, &v, MDB_LAST)) != 0 &&
		rc != MDB_NOTFOUND)) {
		ret = store_fail(
		    s, store_db_err(rc), "message index: %s", mdb_strerror(rc));
		goto out;
	}
	if (rc == 0) {
		if (k.mv_size != 8 || v.mv_size != STORE_IENT_BYTES) {
			ret = store_fail(
			    s, -SHIRO_ERR_CORRUPT, "message index: bad record");
			goto out;
		}
		s->indexed = store_get64(k.mv_data) + 1;
		store_ient_unpack(v.mv_data, &last);
		have_last = 1;
	}
	mdb_cursor_close(cur);
	cur = NULL;
	mdb_txn_abort(txn);
	txn = NULL;

	if ((ret = store_log_days(s, &days, &ndays)) != 0)
		goto out;
	/* The last file with bytes in it: only it may end torn. */
	lastfile = ndays;
	for (d = ndays; d > 0; d--) {
		if ((ret = store_log_file_size(s, days[d - 1], &size)) != 0)
			goto out;
		if (size > 0) {
			lastfile = d - 1;
			break;
		}
	}
	/* What the index holds reads back while the scan checks it. */
	s->count = s->indexed;
	sc.next = 0;
	sc.first = s->indexed;
	start = 0;
	d = 0;
	if (have_last && !verify) {
		/* Start after the last indexed line; check that line is
		 * still where the index says. */
		struct store_msg m;

		ret = store_read(s, s->indexed - 1, &m);
		if (ret != 0)
			goto out;
		store_msg_free(&m);
		while (d < ndays && days[d] < last.day)
			d++;
		if (d == ndays || days[d] != last.day) {
			ret = store_fail(s, -SHIRO_ERR_CORRUPT,
			    "the day file of message %llu is missing",
			    (unsigned long long)(s->indexed - 1));
			goto out;
		}
		start = last.off + last.len;
		sc.next = s->indexed;
	}
	for (; d < ndays; d++) {
		ret = store_log_scan_file(&sc, days[d], start,
		    lastfile < ndays && d == lastfile, &end);
		if (ret != 0)
			goto out;
		if ((ret = store_log_commit(&sc)) != 0)
			goto out;
		s->day = days[d];
		s->off = end;
		start = 0;
	}
	if (sc.next < s->indexed) {
		ret = store_fail(s, -SHIRO_ERR_CORRUPT,
		    "the log holds %llu messages but the index %llu",
		    (unsigned long long)sc.next,
		    (unsigned long long)s->indexed);
		goto out;
	}
	s->count = sc.next;
	if (s->read_only)
		s->indexed = s->count - s->npend;
	ret = 0;
out:
	if (cur != NULL)
		mdb_cursor_close(cur);
	if (txn != NULL)
		mdb_txn_abort(txn);
	for (d = 0; d < sc.nents; d++)
		free(sc.keys[d]);
	free(sc.ents);
	free(sc.keys);
	free(days);
	return ret;
}
