/*
 * store.c - opening and closing a chat home, appending and reading
 * messages, the saved view, meta and message images.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

static void store_view_snapshot(struct store *s);

static const char *const store_kinds[STORE_KIND_COUNT] = {
    "user", "shiro", "tool", "echo", "work", "note"};

/* store_kind_name - the name a kind is logged with. */
const char *
store_kind_name(enum store_kind kind)
{
	if ((unsigned)kind >= STORE_KIND_COUNT)
		return NULL;
	return store_kinds[kind];
}

/* store_kind_clipped - a tool call and a tool's result are clipped to
 * their head and tail; every other text is split into pages. */
int
store_kind_clipped(enum store_kind kind)
{
	return kind == STORE_KIND_TOOL || kind == STORE_KIND_ECHO;
}

/* store_kind_parse - a kind from its name; old agent names read as shiro. */
int
store_kind_parse(const char *name, enum store_kind *kindp)
{
	unsigned k;

	for (k = 0; k < STORE_KIND_COUNT; k++) {
		if (strcmp(name, store_kinds[k]) == 0) {
			*kindp = (enum store_kind)k;
			return 0;
		}
	}
	if (strcmp(name, "talk") == 0 || strcmp(name, "unii") == 0) {
		*kindp = STORE_KIND_SHIRO;
		return 0;
	}
	return -SHIRO_ERR_INVAL;
}

/* store_errmsg - the last failure's reason. */
const char *
store_errmsg(const struct store *s)
{
	return s->err;
}

/* store_torn - whether a read-only open saw a torn tail. */
int
store_torn(const struct store *s)
{
	return s->torn;
}

/* store_owner - the running owner a read-only open found (see store.h). */
pid_t
store_owner(const struct store *s)
{
	return s->owner;
}

/* store_home - the home directory. */
const char *
store_home(const struct store *s)
{
	return s->home;
}

/* store_schema - the schema version on disk. */
unsigned
store_schema(const struct store *s)
{
	return s->schema;
}

/* store_count - messages in the log. */
uint64_t
store_count(const struct store *s)
{
	return s->count;
}

/* store_mkdir - create one directory (0700) if it is missing, and make
 * its name durable in its parent. */
static int
store_mkdir(struct store *s, const char *path)
{
	char *parent, *slash;
	int ret;

	if (mkdir(path, 0700) == -1) {
		if (errno == EEXIST)
			return 0;
		return store_fail(s, err_from_errno(errno), "mkdir %s: %s",
		    path, strerror(errno));
	}
	parent = xstrdup(path);
	slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent)
		*slash = '\0';
	else
		strcpy(parent, slash == parent ? "/" : ".");
	ret = store_fsync_dir(parent);
	if (ret != 0)
		ret = store_fail(s, ret, "fsync %s: %s", parent, err_str(ret));
	free(parent);
	return ret;
}

/* store_lock - take chat/lock, or say who holds it. */
static int
store_lock(struct store *s, struct store_openerr *why)
{
	char *path = xasprintf("%s/lock", s->chat), pidbuf[32];
	ssize_t n;
	int ret = 0, len;

	s->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->lockfd == -1) {
		ret = store_fail(s, err_from_errno(errno), "open %s: %s", path,
		    strerror(errno));
		goto out;
	}
	if (flock(s->lockfd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK) {
			ret = store_fail(s, err_from_errno(errno),
			    "flock %s: %s", path, strerror(errno));
			goto out;
		}
		n = pread(s->lockfd, pidbuf, sizeof(pidbuf) - 1, 0);
		pidbuf[n > 0 ? n : 0] = '\0';
		if (why != NULL)
			why->owner = (pid_t)atol(pidbuf);
		ret = store_fail(s, -SHIRO_ERR_LOCKED,
		    "the chat %s is owned by process %ld", s->chat,
		    atol(pidbuf));
		goto out;
	}
	/* The pid in the file is only for the message above: the lock is
	 * the flock, which the kernel drops when the owner dies. */
	len = snprintf(pidbuf, sizeof(pidbuf), "%ld\n", (long)getpid());
	if (ftruncate(s->lockfd, 0) != 0 ||
	    pwrite(s->lockfd, pidbuf, (size_t)len, 0) != len)
		log_warn("store: cannot write the pid into %s", path);
out:
	free(path);
	return ret;
}

/*
 * store_lock_peek - a read-only open's lock_if_free: take chat/lock when
 * it is free (kept until store_close), else note who holds it.  The
 * file is not created nor written; without it no shirod ever ran here.
 */
static int
store_lock_peek(struct store *s)
{
	char *path = xasprintf("%s/lock", s->chat), pidbuf[32];
	ssize_t n;
	int ret = 0;

	s->lockfd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->lockfd == -1) {
		if (errno != ENOENT)
			ret = store_fail(s, err_from_errno(errno),
			    "open %s: %s", path, strerror(errno));
		goto out;
	}
	if (flock(s->lockfd, LOCK_SH | LOCK_NB) == 0)
		goto out;
	if (errno != EWOULDBLOCK) {
		ret = store_fail(s, err_from_errno(errno), "flock %s: %s", path,
		    strerror(errno));
		goto out;
	}
	n = pread(s->lockfd, pidbuf, sizeof(pidbuf) - 1, 0);
	pidbuf[n > 0 ? n : 0] = '\0';
	s->owner = (pid_t)atol(pidbuf);
	if (s->owner <= 0)
		s->owner = -1; /* held, by a process that did not say */
	close(s->lockfd);
	s->lockfd = -1;
out:
	free(path);
	return ret;
}

/* store_meta_fn - read or set the schema, running migrations. */
static int
store_meta_fn(struct store *s, MDB_txn *txn, void *arg)
{
	static const char name[] = "schema";
	unsigned char vb[4];
	MDB_val k = {sizeof(name) - 1, (void *)name}, v;
	unsigned have;
	int rc;

	(void)arg;
	rc = mdb_get(txn, s->db_meta, &k, &v);
	if (rc == MDB_NOTFOUND) {
		have = STORE_SCHEMA; /* a new chat starts at the current one */
	} else if (rc != 0 || v.mv_size != 4) {
		return store_fail(
		    s, -SHIRO_ERR_CORRUPT, "meta schema unreadable");
	} else {
		have = store_get32(v.mv_data);
	}
	if (have > STORE_SCHEMA)
		return store_fail(s, -SHIRO_ERR_UNSUPP,
		    "the chat has schema %u; this shiro knows up to %u", have,
		    STORE_SCHEMA);
	/*
	 * The migration hook: schema n moves to n + 1 here, inside this
	 * transaction, so a migration is all or nothing.  Schema 1 is the
	 * first; nothing to migrate yet.
	 */
	while (have < STORE_SCHEMA)
		have++;
	s->schema = have;
	store_be32(vb, have);
	v.mv_size = 4;
	v.mv_data = vb;
	rc = mdb_put(txn, s->db_meta, &k, &v, 0);
	if (rc == MDB_MAP_FULL)
		return -SHIRO_ERR_AGAIN;
	return rc == 0
	    ? 0
	    : store_fail(s, store_db_err(rc), "meta: %s", mdb_strerror(rc));
}

/* store_meta_read - the schema of a chat opened read-only. */
static int
store_meta_read(struct store *s)
{
	static const char name[] = "schema";
	MDB_val k = {sizeof(name) - 1, (void *)name}, v;
	MDB_txn *txn;
	int rc, ret;

	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	rc = mdb_get(txn, s->db_meta, &k, &v);
	if (rc == 0 && v.mv_size == 4)
		s->schema = store_get32(v.mv_data);
	mdb_txn_abort(txn);
	if (rc != 0 || s->schema > STORE_SCHEMA)
		return store_fail(s, -SHIRO_ERR_UNSUPP,
		    "the chat has schema %u; this shiro knows up to %u",
		    s->schema, STORE_SCHEMA);
	if (s->schema < STORE_SCHEMA)
		return -SHIRO_ERR_AGAIN; /* an old chat: migrate */
	return 0;
}

/* store_batches_load - how many batch records there are, the last t. */
static int
store_batches_load(struct store *s)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	int rc, ret;

	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	rc = mdb_cursor_open(txn, s->db_merges, &cur);
	if (rc == 0) {
		rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
		if (rc == 0 && (k.mv_size != 8 || v.mv_size < 13))
			rc = MDB_CORRUPTED;
		if (rc == 0) {
			s->nbatches = store_get64(k.mv_data) + 1;
			s->last_t = store_get64(v.mv_data);
		} else if (rc == MDB_NOTFOUND) {
			rc = 0;
		}
		mdb_cursor_close(cur);
	}
	mdb_txn_abort(txn);
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "merge records: %s", mdb_strerror(rc));
	return 0;
}

/* store_open - see store.h. */
int
store_open(const char *home, const struct store_opts *opts, struct store **sp,
    struct store_openerr *why)
{
	struct store_opts def;
	struct store *s;
	char *images;
	int ret;

	*sp = NULL;
	if (opts == NULL) {
		memset(&def, 0, sizeof(def));
		opts = &def;
	}
	if (why != NULL) {
		why->owner = 0;
		why->msg[0] = '\0';
	}
	s = xcalloc(1, sizeof(*s));
	s->home = xstrdup(home);
	s->chat = xasprintf("%s/chat", home);
	s->main = xasprintf("%s/chat/main", home);
	s->lockfd = -1;
	s->fd = -1;
	s->rfd = -1;
	s->pid = getpid();
	s->read_only = opts->read_only;
	images = xasprintf("%s/images", s->chat);
	if (!s->read_only &&
	    ((ret = store_mkdir(s, home)) != 0 ||
		(ret = store_mkdir(s, s->chat)) != 0))
		goto out;
	/* The lock first: nothing else is touched by a second opener. */
	if (!s->read_only && (ret = store_lock(s, why)) != 0)
		goto out;
	if (!s->read_only &&
	    ((ret = store_mkdir(s, s->main)) != 0 ||
		(ret = store_mkdir(s, images)) != 0))
		goto out;
	if (s->read_only && opts->lock_if_free &&
	    (ret = store_lock_peek(s)) != 0)
		goto out;
	/* view.json before the index and the log (see store.h). */
	if (s->read_only)
		store_view_snapshot(s);
	if ((ret = store_db_open(s, opts->map_size)) != 0)
		goto out;
	/* Write meta only for a new chat or a migration. */
	ret = store_meta_read(s);
	if (ret != 0 && !s->read_only && s->schema <= STORE_SCHEMA)
		ret = store_db_write(s, store_meta_fn, NULL);
	if (ret != 0)
		goto out;
	if ((ret = store_log_recover(s, opts->verify_all)) != 0)
		goto out;
	if ((ret = store_batches_load(s)) != 0)
		goto out;
	*sp = s;
	s = NULL;
	ret = 0;
out:
	if (s != NULL) {
		if (why != NULL)
			snprintf(why->msg, sizeof(why->msg), "%s", s->err);
		store_close(&s);
	}
	free(images);
	return ret;
}

/* store_close - commit the deferred index and let go of everything. */
void
store_close(struct store **sp)
{
	struct store *s = *sp;
	size_t k;

	if (s == NULL)
		return;
	if (s->env != NULL && s->pid == getpid() && !s->read_only &&
	    !s->poisoned && s->npend > 0 && store_db_flush(s) != 0)
		log_warnx("store: index not committed at close (the next open "
			  "rebuilds it): %s",
		    s->err);
	if (s->pid == getpid())
		store_db_close(s);
	if (s->fd != -1)
		close(s->fd);
	if (s->rfd != -1)
		close(s->rfd);
	if (s->lockfd != -1)
		close(s->lockfd);
	for (k = 0; k < s->npkeys; k++)
		free(s->pkeys[k].key);
	free(s->pkeys);
	free(s->pend);
	free(s->view);
	free(s->view_err);
	free(s->home);
	free(s->chat);
	free(s->main);
	free(s);
	*sp = NULL;
}

/* store_sync - commit the deferred index now. */
int
store_sync(struct store *s)
{
	int ret;

	if ((ret = store_check(s, 1)) != 0)
		return ret;
	return store_db_flush(s);
}

/* store_open_day - make day's file the one appends go to. */
static int
store_open_day(struct store *s, uint32_t day)
{
	struct stat st;
	char *path = store_day_path(s, day);
	int fd, ret = 0, created;

	created = access(path, F_OK) != 0;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd == -1 || fstat(fd, &st) != 0) {
		ret = store_fail(s, err_from_errno(errno), "open %s: %s", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		goto out;
	}
	/* A new file's name must survive a crash as well as its lines. */
	if (created && (ret = store_fsync_dir(s->main)) != 0) {
		close(fd);
		ret = store_fail(s, ret, "fsync %s: %s", s->main, err_str(ret));
		goto out;
	}
	if (s->fd != -1)
		close(s->fd);
	s->fd = fd;
	s->day = day;
	s->off = (uint64_t)st.st_size;
out:
	free(path);
	return ret;
}

/*
 * store_write_run - write bytes at the end of the current file and fsync.
 * A failure before the fsync puts the file back to its old length; a
 * failed fsync (or a failed repair) poisons the store.
 */
static int
store_write_run(struct store *s, const char *data, size_t len)
{
	size_t done = 0;
	ssize_t n;
	int err, ret;

	while (done < len) {
		n = write(s->fd, data + done, len - done);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		err = n < 0 ? errno : EIO;
		ret = store_fail(s, err_from_errno(err),
		    "append: write failed after %zu of %zu bytes: %s", done,
		    len, strerror(err));
		if (ftruncate(s->fd, (off_t)s->off) != 0 || fsync(s->fd) != 0) {
			s->poisoned = 1;
			log_warn("store: cannot cut a partial append; the log "
				 "refuses appends until reopened");
		}
		return ret;
	}
	/*
	 * fdatasync, not fsync: it writes the data and the file's new size,
	 * everything a reader needs to find the line after a crash, and
	 * skips the timestamps, which nothing reads.  A new day file's
	 * directory entry is flushed separately when the file is made.
	 */
	if (fdatasync(s->fd) != 0) {
		err = errno;
		/* Never flush again and call it durable: the kernel may have
		 * dropped the dirty pages.  A reopen reads what is on disk. */
		s->poisoned = 1;
		return store_fail(s, err_from_errno(err),
		    "append: fsync failed, the log refuses appends until "
		    "reopened: %s",
		    strerror(err));
	}
	s->off += len;
	return 0;
}

/* store_pend_add - a message whose index entry waits for a commit. */
static void
store_pend_add(
    struct store *s, const struct store_ient *e, const char *key, uint64_t id)
{
	if (s->npend == s->cappend) {
		s->cappend = s->cappend ? s->cappend * 2 : 64;
		s->pend = xreallocarray(s->pend, s->cappend, sizeof(*s->pend));
	}
	s->pend[s->npend++] = *e;
	if (key == NULL)
		return;
	if (s->npkeys == s->cappkeys) {
		s->cappkeys = s->cappkeys ? s->cappkeys * 2 : 16;
		s->pkeys =
		    xreallocarray(s->pkeys, s->cappkeys, sizeof(*s->pkeys));
	}
	s->pkeys[s->npkeys].key = xstrdup(key);
	s->pkeys[s->npkeys].id = id;
	s->npkeys++;
}

/* store_check_msg - refuse a message the log cannot take. */
static int
store_check_msg(struct store *s, const struct store_msg_in *m)
{
	size_t klen;

	if ((unsigned)m->kind >= STORE_KIND_COUNT)
		return store_fail(s, -SHIRO_ERR_INVAL, "bad kind %d", m->kind);
	if (m->len > 0 && m->text == NULL)
		return store_fail(s, -SHIRO_ERR_INVAL, "no text");
	if (m->len > STORE_TEXT_MAX ||
	    (!store_kind_clipped(m->kind) && m->len > STORE_PAGE))
		return store_fail(s, -SHIRO_ERR_TOOBIG,
		    "text of %zu bytes is over the page; split it", m->len);
	if (store_kind_clipped(m->kind) && m->len > STORE_PAGE &&
	    utf8_count(m->text, m->len) > STORE_TOOL_CHARS + 200)
		return store_fail(s, -SHIRO_ERR_TOOBIG,
		    "tool output over %d characters; clip it",
		    STORE_TOOL_CHARS);
	if (!utf8_valid(m->text, m->len))
		return store_fail(s, -SHIRO_ERR_INVAL, "text is not UTF-8");
	if (m->key != NULL) {
		klen = strlen(m->key);
		if (klen == 0 || klen > STORE_KEY_MAX ||
		    !utf8_valid(m->key, klen))
			return store_fail(s, -SHIRO_ERR_INVAL, "bad key");
	}
	if (m->date_ms < 0)
		return store_fail(s, -SHIRO_ERR_INVAL, "bad date");
	return 0;
}

/* store_poisoned - whether the store refuses appends until reopened. */
int
store_poisoned(const struct store *s)
{
	return s->poisoned;
}

/* store_append_batch - see store.h. */
int
store_append_batch(struct store *s, const struct store_msg_in *m, size_t n,
    uint64_t *ids, size_t *durablep)
{
	struct buf b = BUF_INIT;
	struct store_ient *ents = NULL;
	const char **keys = NULL;
	uint32_t day;
	uint64_t next, id, off;
	size_t k, j, runstart, done = 0;
	int64_t now, date;
	int ret, ret2;

	if (durablep != NULL)
		*durablep = 0;
	if ((ret = store_check(s, 1)) != 0)
		return ret;
	for (k = 0; k < n; k++)
		if ((ret = store_check_msg(s, &m[k])) != 0)
			return ret;
	now = store_log_now_ms();
	ents = xcalloc(n ? n : 1, sizeof(*ents));
	keys = xcalloc(n ? n : 1, sizeof(*keys));
	next = s->count;
	day = s->day;
	for (k = 0; k < n; k++) {
		/* A logged key gives back its id and writes nothing; so
		 * does a key repeated inside this batch. */
		if (m[k].key != NULL) {
			ret = store_db_key(s, m[k].key, &id);
			if (ret == 0) {
				ids[k] = id;
				continue;
			}
			if (ret != -SHIRO_ERR_NOENT)
				goto out;
			for (j = 0; j < k; j++)
				if (keys[j] != NULL &&
				    strcmp(keys[j], m[k].key) == 0)
					break;
			if (j < k) {
				ids[k] = ids[j];
				continue;
			}
		}
		date = m[k].date_ms != 0 ? m[k].date_ms : now;
		ents[k].day = store_log_day(date);
		/* Days never go back, so ids stay in file order. */
		if (ents[k].day < day)
			ents[k].day = day;
		day = ents[k].day;
		ents[k].size = (uint32_t)m[k].len;
		ents[k].kind = (uint8_t)m[k].kind;
		ents[k].date_ms = date;
		ents[k].len = 1; /* marks "to be written" */
		keys[k] = m[k].key;
		ids[k] = next++;
	}
	/* Write each day's run of lines with one write and one fsync.
	 * Everything before k is durable at the top of each turn: the runs
	 * before it were fsynced, and a message that wrote nothing has the
	 * id of one logged before it. */
	k = 0;
	while (k < n) {
		done = k;
		if (ents[k].len == 0) {
			k++;
			continue;
		}
		day = ents[k].day;
		if (day != s->day || s->fd == -1)
			if ((ret = store_open_day(s, day)) != 0)
				goto out;
		buf_reset(&b);
		off = s->off;
		runstart = k;
		for (; k < n && (ents[k].len == 0 || ents[k].day == day); k++) {
			size_t before = b.len;

			if (ents[k].len == 0)
				continue;
			ret = store_log_encode(
			    &b, ids[k], &m[k], ents[k].date_ms);
			if (ret != 0) {
				ret =
				    store_fail(s, ret, "cannot encode message");
				goto out;
			}
			ents[k].off = off + before;
			ents[k].len = (uint32_t)(b.len - before);
		}
		if ((ret = store_write_run(s, b.data, b.len)) != 0)
			goto out;
		for (j = runstart; j < k; j++) {
			if (ents[j].len == 0)
				continue;
			store_pend_add(s, &ents[j], keys[j], ids[j]);
			s->count++;
		}
	}
	done = n;
	ret = 0;
	if (s->npend >= STORE_FLUSH_EVERY && (ret2 = store_db_flush(s)) != 0)
		log_warnx("store: index commit failed (the log has the "
			  "messages; reopen rebuilds it): %s",
		    s->err);
out:
	if (durablep != NULL)
		*durablep = done;
	buf_free(&b);
	free(ents);
	free(keys);
	return ret;
}

/* store_append - one message, one write, one fsync. */
int
store_append(struct store *s, const struct store_msg_in *m, uint64_t *idp)
{
	return store_append_batch(s, m, 1, idp, NULL);
}

/*
 * store_append_long_dup - if key is logged, its first id and the number
 * of parts logged with it (part k > 0 under "key/k" at first + k);
 * -SHIRO_ERR_NOENT if it is not.
 */
static int
store_append_long_dup(
    struct store *s, const char *key, uint64_t *firstp, size_t *countp)
{
	uint64_t first, id;
	size_t n = 1;
	char *pk;
	int ret;

	if ((ret = store_check(s, 1)) != 0)
		return ret;
	if ((ret = store_db_key(s, key, &first)) != 0)
		return ret;
	for (;;) {
		pk = xasprintf("%s/%zu", key, n);
		ret = store_db_key(s, pk, &id);
		free(pk);
		if (ret != 0 || id != first + n)
			break;
		n++;
	}
	*firstp = first;
	*countp = n;
	return 0;
}

/* store_append_long - clip or split text that does not fit one message. */
int
store_append_long(struct store *s, const struct store_msg_in *m,
    uint64_t *firstp, size_t *countp)
{
	struct store_msg_in *parts = NULL;
	char **pkeys = NULL, *clipped = NULL;
	size_t *lens = NULL, np = 0, k, off, clen, done = 0;
	uint64_t *ids = NULL;
	int ret;

	/* A logged key makes the whole text a retry, whatever its length
	 * now: the parts after the first must not be logged as new ones. */
	if (m->key != NULL && m->key[0] != '\0' &&
	    strlen(m->key) <= STORE_KEY_MAX &&
	    (ret = store_append_long_dup(s, m->key, firstp, countp)) !=
		-SHIRO_ERR_NOENT)
		return ret;
	if (store_kind_clipped(m->kind)) {
		struct store_msg_in one = *m;

		clipped =
		    store_text_clip(m->text, m->len, STORE_TOOL_CHARS, &clen);
		one.text = clipped;
		one.len = clen;
		ret = store_append(s, &one, firstp);
		*countp = ret == 0 ? 1 : 0;
		free(clipped);
		return ret;
	}
	store_text_split(m->text, m->len, STORE_PAGE, &lens, &np);
	parts = xcalloc(np, sizeof(*parts));
	pkeys = xcalloc(np, sizeof(*pkeys));
	ids = xcalloc(np, sizeof(*ids));
	for (k = 0, off = 0; k < np; k++) {
		parts[k] = *m;
		parts[k].text = m->text + off;
		parts[k].len = lens[k];
		off += lens[k];
		if (m->key != NULL && k > 0) {
			pkeys[k] = xasprintf("%s/%zu", m->key, k);
			parts[k].key = pkeys[k];
		}
	}
	ret = store_append_batch(s, parts, np, ids, &done);
	*countp = done;
	if (done > 0)
		*firstp = ids[0];
	for (k = 0; k < np; k++)
		free(pkeys[k]);
	free(pkeys);
	free(parts);
	free(ids);
	free(lens);
	return ret;
}

/* store_read_fd - a read descriptor for day's file. */
static int
store_read_fd(struct store *s, uint32_t day, int *fdp)
{
	char *path;

	if (s->rfd != -1 && s->rday == day) {
		*fdp = s->rfd;
		return 0;
	}
	path = store_day_path(s, day);
	if (s->rfd != -1)
		close(s->rfd);
	s->rfd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->rfd == -1) {
		int ret = store_fail(s, err_from_errno(errno), "open %s: %s",
		    path, strerror(errno));
		free(path);
		return ret;
	}
	free(path);
	s->rday = day;
	*fdp = s->rfd;
	return 0;
}

/* store_read - one message through the index. */
int
store_read(struct store *s, uint64_t id, struct store_msg *out)
{
	struct store_ient e;
	struct store_line_rec r;
	const char *why;
	char *line = NULL;
	ssize_t got;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if ((ret = store_db_ient(s, id, &e)) != 0)
		return ret;
	if (e.len < 2 || e.len > STORE_LINE_MAX)
		return store_fail(s, -SHIRO_ERR_CORRUPT,
		    "index entry of message %llu is damaged",
		    (unsigned long long)id);
	if ((ret = store_read_fd(s, e.day, &fd)) != 0)
		return ret;
	line = xmalloc(e.len);
	got = pread(fd, line, e.len, (off_t)e.off);
	if (got != (ssize_t)e.len || line[e.len - 1] != '\n') {
		ret =
		    store_fail(s, got < 0 ? -SHIRO_ERR_IO : -SHIRO_ERR_CORRUPT,
			"%04u-%02u-%02u.jsonl offset %llu: message %llu is not "
			"where the index says",
			e.day / 10000, e.day / 100 % 100, e.day % 100,
			(unsigned long long)e.off, (unsigned long long)id);
		goto out;
	}
	if (store_log_decode(line, e.len - 1, &r, &why) != 0 || r.id != id) {
		if (r.json != NULL)
			store_log_done(&r);
		ret = store_fail(s, -SHIRO_ERR_CORRUPT,
		    "%04u-%02u-%02u.jsonl offset %llu: message %llu: %s",
		    e.day / 10000, e.day / 100 % 100, e.day % 100,
		    (unsigned long long)e.off, (unsigned long long)id,
		    why != NULL ? why : "another id");
		goto out;
	}
	out->id = id;
	out->kind = r.kind;
	out->len = r.len;
	out->text = xmalloc(r.len + 1);
	memcpy(out->text, r.text, r.len);
	out->text[r.len] = '\0';
	out->date_ms = r.date_ms;
	out->key = r.key != NULL ? xstrdup(r.key) : NULL;
	store_log_done(&r);
	ret = 0;
out:
	free(line);
	return ret;
}

/* store_msg_free - release a message read back. */
void
store_msg_free(struct store_msg *m)
{
	free(m->text);
	free(m->key);
	memset(m, 0, sizeof(*m));
}

/* store_read_range - consecutive messages for zoom. */
int
store_read_range(struct store *s, uint64_t first, size_t n,
    struct store_msg **outp, size_t *countp)
{
	struct store_msg *v;
	size_t k, have;
	int ret;

	*outp = NULL;
	*countp = 0;
	if (first >= s->count)
		return n == 0
		    ? 0
		    : store_fail(s, -SHIRO_ERR_NOENT, "no message %llu",
			  (unsigned long long)first);
	have = s->count - first < n ? (size_t)(s->count - first) : n;
	v = xcalloc(have ? have : 1, sizeof(*v));
	for (k = 0; k < have; k++) {
		if ((ret = store_read(s, first + k, &v[k])) != 0) {
			store_msgs_free(v, k);
			return ret;
		}
	}
	*outp = v;
	*countp = have;
	return 0;
}

/* store_msgs_free - release an array from store_read_range. */
void
store_msgs_free(struct store_msg *v, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		store_msg_free(&v[k]);
	free(v);
}

/* store_info_fill - the public view of an index entry. */
static void
store_info_fill(
    struct store_msg_info *info, uint64_t id, const struct store_ient *e)
{
	info->id = id;
	info->kind = (enum store_kind)e->kind;
	info->size = e->size;
	info->date_ms = e->date_ms;
}

/* store_info - what the index knows of one message. */
int
store_info(struct store *s, uint64_t id, struct store_msg_info *out)
{
	struct store_ient e;
	int ret;

	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if ((ret = store_db_ient(s, id, &e)) != 0)
		return ret;
	store_info_fill(out, id, &e);
	return 0;
}

/* store_info_iter - walk the index from first on. */
int
store_info_iter(struct store *s, uint64_t first,
    int (*fn)(void *arg, const struct store_msg_info *info), void *arg)
{
	struct store_msg_info info;
	struct store_ient e;
	unsigned char kb[8];
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k = {sizeof(kb), kb}, v;
	uint64_t id = first;
	int rc, ret = 0;

	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if (first < s->indexed) {
		if ((ret = store_db_read(s, &txn)) != 0)
			return ret;
		if ((rc = mdb_cursor_open(txn, s->db_msgs, &cur)) != 0) {
			ret = store_fail(
			    s, store_db_err(rc), "index: %s", mdb_strerror(rc));
			goto out;
		}
		store_be64(kb, first);
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
		while (rc == 0 && id < s->indexed) {
			if (k.mv_size != 8 || v.mv_size != STORE_IENT_BYTES ||
			    store_get64(k.mv_data) != id) {
				ret = store_fail(s, -SHIRO_ERR_CORRUPT,
				    "message index: gap or bad record at %llu",
				    (unsigned long long)id);
				goto out;
			}
			store_ient_unpack(v.mv_data, &e);
			store_info_fill(&info, id, &e);
			if ((ret = fn(arg, &info)) != 0)
				goto out;
			id++;
			rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		}
		if (id < s->indexed) {
			ret = store_fail(s, -SHIRO_ERR_CORRUPT,
			    "message index ends at %llu",
			    (unsigned long long)id);
			goto out;
		}
	}
	for (; id < s->count; id++) {
		store_info_fill(&info, id, &s->pend[id - s->indexed]);
		if ((ret = fn(arg, &info)) != 0)
			goto out;
	}
out:
	if (cur != NULL)
		mdb_cursor_close(cur);
	if (txn != NULL)
		mdb_txn_abort(txn);
	return ret;
}

/* store_date - a message's date in local time, for date(id). */
int
store_date(struct store *s, uint64_t id, char *out, size_t outlen)
{
	struct store_msg_info info;
	struct tm tm;
	time_t t;
	int ret;

	if ((ret = store_info(s, id, &info)) != 0)
		return ret;
	t = (time_t)(info.date_ms / 1000);
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(out, outlen, "%a %Y-%m-%d %H:%M:%S %z", &tm) == 0)
		return store_fail(
		    s, -SHIRO_ERR_TOOBIG, "date buffer too small");
	return 0;
}

/* store_write_atomic - replace path with data: temp, fsync, rename,
 * fsync of the directory. */
static int
store_write_atomic(struct store *s, const char *dir, const char *path,
    const void *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = -1, ret = 0;
	size_t done = 0;
	ssize_t n;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1) {
		ret = store_fail(s, err_from_errno(errno), "open %s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	while (done < len) {
		n = write(fd, (const char *)data + done, len - done);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			ret = store_fail(s, err_from_errno(n < 0 ? errno : EIO),
			    "write %s: %s", tmp, strerror(n < 0 ? errno : EIO));
			goto out;
		}
		done += (size_t)n;
	}
	if (fsync(fd) != 0) {
		ret = store_fail(s, err_from_errno(errno), "fsync %s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	close(fd);
	fd = -1;
	if (rename(tmp, path) != 0) {
		ret = store_fail(s, err_from_errno(errno), "rename %s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	if ((ret = store_fsync_dir(dir)) != 0)
		ret = store_fail(s, ret, "fsync %s: %s", dir, err_str(ret));
out:
	if (fd != -1)
		close(fd);
	if (ret != 0)
		unlink(tmp);
	free(tmp);
	return ret;
}

/* store_view_save - chat/view.json as [[l,i],...], atomically. */
int
store_view_save(struct store *s, const struct store_line *lines, size_t n)
{
	struct buf b = BUF_INIT;
	char *path;
	size_t k;
	int ret;

	if ((ret = store_check(s, 1)) != 0)
		return ret;
	buf_addc(&b, '[');
	for (k = 0; k < n; k++)
		buf_printf(&b, "%s[%u,%llu]", k ? "," : "", lines[k].l,
		    (unsigned long long)lines[k].i);
	buf_adds(&b, "]\n");
	path = xasprintf("%s/view.json", s->chat);
	ret = store_write_atomic(s, s->chat, path, b.data, b.len);
	free(path);
	buf_free(&b);
	return ret;
}

/* store_view_read - read chat/view.json strictly. */
static int
store_view_read(struct store *s, struct store_line **linesp, size_t *np)
{
	json_error_t jerr;
	json_t *o = NULL, *pair, *l, *i;
	struct store_line *v = NULL;
	char *path;
	size_t k, n;
	int ret;

	*linesp = NULL;
	*np = 0;
	path = xasprintf("%s/view.json", s->chat);
	if (access(path, F_OK) != 0) {
		ret = store_fail(s, -SHIRO_ERR_NOENT, "no %s", path);
		goto out;
	}
	o = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL || !json_is_array(o)) {
		ret = store_fail(s, -SHIRO_ERR_CORRUPT, "%s: %s", path,
		    o == NULL ? jerr.text : "not an array");
		goto out;
	}
	n = json_array_size(o);
	v = xcalloc(n ? n : 1, sizeof(*v));
	for (k = 0; k < n; k++) {
		pair = json_array_get(o, k);
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !json_is_integer(l = json_array_get(pair, 0)) ||
		    !json_is_integer(i = json_array_get(pair, 1)) ||
		    json_integer_value(l) < 0 ||
		    json_integer_value(l) > STORE_LEVEL_MAX ||
		    json_integer_value(i) < 0) {
			ret = store_fail(s, -SHIRO_ERR_CORRUPT,
			    "%s: entry %zu is not an [l, i] pair", path, k);
			goto out;
		}
		v[k].l = (unsigned)json_integer_value(l);
		v[k].i = (uint64_t)json_integer_value(i);
	}
	*linesp = v;
	*np = n;
	v = NULL;
	ret = 0;
out:
	json_decref(o);
	free(v);
	free(path);
	return ret;
}

/* store_view_snapshot - a read-only open keeps view.json as it is now. */
static void
store_view_snapshot(struct store *s)
{
	s->view_rc = store_view_read(s, &s->view, &s->nview);
	if (s->view_rc != 0)
		s->view_err = xstrdup(s->err);
}

/* store_view_load - chat/view.json, or its snapshot (see store.h). */
int
store_view_load(struct store *s, struct store_line **linesp, size_t *np)
{
	int ret;

	*linesp = NULL;
	*np = 0;
	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if (!s->read_only)
		return store_view_read(s, linesp, np);
	if (s->view_rc != 0)
		return store_fail(s, s->view_rc, "%s", s->view_err);
	*linesp = xcalloc(s->nview ? s->nview : 1, sizeof(**linesp));
	if (s->nview > 0)
		memcpy(*linesp, s->view, s->nview * sizeof(**linesp));
	*np = s->nview;
	return 0;
}

/* store_ext_ok - a short lower-case extension. */
static int
store_ext_ok(const char *ext)
{
	size_t k, n = strlen(ext);

	if (n == 0 || n > 8)
		return 0;
	for (k = 0; k < n; k++)
		if (!((ext[k] >= 'a' && ext[k] <= 'z') ||
			(ext[k] >= '0' && ext[k] <= '9')))
			return 0;
	return 1;
}

/* store_image_cmp - order image names by their number. */
static int
store_image_cmp(const void *a, const void *b)
{
	const char *x = strrchr(*(char *const *)a, '-');
	const char *y = strrchr(*(char *const *)b, '-');
	unsigned long nx = strtoul(x + 1, NULL, 10);
	unsigned long ny = strtoul(y + 1, NULL, 10);

	return nx < ny ? -1 : nx > ny;
}

/* store_image_list - message id's images, in order. */
int
store_image_list(struct store *s, uint64_t id, char ***pathsp, size_t *np)
{
	char *dir = xasprintf("%s/images", s->chat), prefix[32], **v = NULL;
	size_t n = 0, cap = 0, plen;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	*pathsp = NULL;
	*np = 0;
	if ((ret = store_check(s, 0)) != 0)
		goto out;
	snprintf(prefix, sizeof(prefix), "%llu-", (unsigned long long)id);
	plen = strlen(prefix);
	if ((d = opendir(dir)) == NULL) {
		if (errno != ENOENT)
			ret = store_fail(s, err_from_errno(errno),
			    "opendir %s: %s", dir, strerror(errno));
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		const char *rest = de->d_name + plen;

		if (strncmp(de->d_name, prefix, plen) != 0 || *rest < '0' ||
		    *rest > '9' || strstr(rest, ".tmp.") != NULL)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 4;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[n++] = xasprintf("%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), store_image_cmp);
	*pathsp = v;
	*np = n;
out:
	free(dir);
	return ret;
}

/* store_image_put - save one image of message id. */
int
store_image_put(struct store *s, uint64_t id, const char *ext, const void *data,
    size_t len, unsigned *np)
{
	char **have = NULL, *dir = NULL, *path = NULL;
	size_t nhave = 0, k;
	int ret;

	if ((ret = store_check(s, 1)) != 0)
		return ret;
	if (id >= s->count)
		return store_fail(s, -SHIRO_ERR_NOENT, "no message %llu",
		    (unsigned long long)id);
	if (!store_ext_ok(ext))
		return store_fail(s, -SHIRO_ERR_INVAL, "bad image extension");
	if ((ret = store_image_list(s, id, &have, &nhave)) != 0)
		return ret;
	dir = xasprintf("%s/images", s->chat);
	path = xasprintf(
	    "%s/%llu-%zu.%s", dir, (unsigned long long)id, nhave, ext);
	ret = store_write_atomic(s, dir, path, data, len);
	if (ret == 0 && np != NULL)
		*np = (unsigned)nhave;
	for (k = 0; k < nhave; k++)
		free(have[k]);
	free(have);
	free(dir);
	free(path);
	return ret;
}
