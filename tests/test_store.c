/*
 * test_store - the store across its real boundary: bytes in the day
 * files, what a reopen reads back, LMDB records that survive a close.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "store/store.h"
#include "tests/harness.h"

/* 2026-11-29 12:00:00 UTC and one day later, in milliseconds. */
#define DAY1 1795953600000LL
#define DAY2 (DAY1 + 86400000LL)

/* open_home - open (or fail the test) the store in dir. */
static struct store *
open_home(const char *dir)
{
	struct store_openerr why;
	struct store *s;
	int ret;

	ret = store_open(dir, NULL, &s, &why);
	CHECKF(ret == 0, "store_open %s: %s: %s", dir, err_str(ret), why.msg);
	return s;
}

/* add - append one message of kind with text (no key) at date. */
static uint64_t
add(struct store *s, enum store_kind kind, const char *text, int64_t date)
{
	struct store_msg_in m = {kind, text, strlen(text), NULL, date};
	uint64_t id;
	int ret;

	ret = store_append(s, &m, &id);
	CHECKF(ret == 0, "append: %s: %s", err_str(ret), store_errmsg(s));
	return id;
}

/* slurp - a whole file as a string (caller frees), NULL if missing. */
static char *
slurp(const char *path, size_t *lenp)
{
	struct buf b = BUF_INIT;
	char chunk[4096];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd == -1)
		return NULL;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, (size_t)n);
	close(fd);
	buf_reserve(&b, 1);
	if (lenp != NULL)
		*lenp = b.len;
	return b.data;
}

/* day_file - the path of a day's file under home (caller frees). */
static char *
day_file(const char *home, int64_t date_ms)
{
	time_t t = (time_t)(date_ms / 1000);
	struct tm tm;

	localtime_r(&t, &tm);
	return xasprintf("%s/chat/main/%04d-%02d-%02d.jsonl", home,
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

/* append_bytes - add raw bytes at the end of a file. */
static void
append_bytes(const char *path, const char *bytes, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	CHECK(fd != -1);
	CHECK(write(fd, bytes, len) == (ssize_t)len);
	close(fd);
}

/* Messages go to their day's file as one JSON line each and read back,
 * by id, after a reopen. */
static void
appends_go_to_day_files_and_read_back(void)
{
	const char *home = harness_tmpdir();
	struct store *s;
	struct store_msg m;
	char *f1, *f2, *b1, *b2;
	size_t len;

	setenv("TZ", "UTC", 1);
	tzset();
	s = open_home(home);
	CHECK_EQ_INT(add(s, STORE_KIND_USER, "hello", DAY1), 0);
	CHECK_EQ_INT(
	    add(s, STORE_KIND_SHIRO, "h\u00e9llo\nworld", DAY1 + 5), 1);
	CHECK_EQ_INT(add(s, STORE_KIND_TOOL, "ls: done", DAY2), 2);
	store_close(&s);
	f1 = day_file(home, DAY1);
	f2 = day_file(home, DAY2);
	b1 = slurp(f1, &len);
	b2 = slurp(f2, NULL);
	CHECK(b1 != NULL && b2 != NULL);
	CHECK_EQ_STR(b1,
	    "{\"i\":0,\"kind\":\"user\",\"text\":\"hello\",\"size\":5,"
	    "\"date\":\"2026-11-29T12:00:00.000Z\"}\n"
	    "{\"i\":1,\"kind\":\"shiro\",\"text\":\"h\u00e9llo\\nworld\","
	    "\"size\":12,\"date\":\"2026-11-29T12:00:00.005Z\"}\n");
	CHECK_EQ_STR(b2,
	    "{\"i\":2,\"kind\":\"tool\",\"text\":\"ls: done\","
	    "\"size\":8,\"date\":\"2026-11-30T12:00:00.000Z\"}\n");
	s = open_home(home);
	CHECK_EQ_INT(store_count(s), 3);
	CHECK_EQ_INT(store_read(s, 1, &m), 0);
	CHECK_EQ_STR(m.text, "h\u00e9llo\nworld");
	CHECK_EQ_INT(m.kind, STORE_KIND_SHIRO);
	CHECK_EQ_INT(m.date_ms, DAY1 + 5);
	CHECK(m.key == NULL);
	store_msg_free(&m);
	CHECK_EQ_INT(store_read(s, 2, &m), 0);
	CHECK_EQ_STR(m.text, "ls: done");
	store_msg_free(&m);
	CHECK_EQ_INT(store_read(s, 3, &m), -SHIRO_ERR_NOENT);
	/* A later message never goes back to an earlier day's file. */
	CHECK_EQ_INT(add(s, STORE_KIND_USER, "late clock", DAY1), 3);
	store_close(&s);
	free(b2);
	b2 = slurp(f2, NULL);
	CHECK(strstr(b2, "\"i\":3,") != NULL);
	free(b1);
	free(b2);
	free(f1);
	free(f2);
}

/* An append with a logged key writes nothing and gives the first id,
 * before and after a reopen. */
static void
a_logged_key_is_not_appended_again(void)
{
	const char *home = harness_tmpdir();
	struct store_msg_in m = {STORE_KIND_USER, "once", 4, "client-7", DAY1};
	struct store_msg_in b[3] = {
	    {STORE_KIND_USER, "a", 1, "k-a", DAY1},
	    {STORE_KIND_USER, "b", 1, "client-7", DAY1},
	    {STORE_KIND_USER, "a again", 7, "k-a", DAY1},
	};
	uint64_t id, ids[3];
	struct store *s;
	struct store_msg r;
	char *f, *bytes;
	size_t len;

	s = open_home(home);
	CHECK_EQ_INT(store_append(s, &m, &id), 0);
	CHECK_EQ_INT(id, 0);
	CHECK_EQ_INT(store_append(s, &m, &id), 0);
	CHECK_EQ_INT(id, 0);
	CHECK_EQ_INT(store_append_batch(s, b, 3, ids, NULL), 0);
	CHECK_EQ_INT(ids[0], 1);
	CHECK_EQ_INT(ids[1], 0);
	CHECK_EQ_INT(ids[2], 1);
	CHECK_EQ_INT(store_count(s), 2);
	store_close(&s);
	s = open_home(home);
	CHECK_EQ_INT(store_append(s, &m, &id), 0);
	CHECK_EQ_INT(id, 0);
	CHECK_EQ_INT(store_count(s), 2);
	CHECK_EQ_INT(store_read(s, 0, &r), 0);
	CHECK_EQ_STR(r.key, "client-7");
	store_msg_free(&r);
	store_close(&s);
	f = day_file(home, DAY1);
	bytes = slurp(f, &len);
	CHECK(strstr(bytes, "\"key\":\"client-7\"") != NULL);
	CHECK(strstr(bytes, "\"i\":2") == NULL);
	free(bytes);
	free(f);
}

/* A crashed append's partial line is cut at the next open, kept aside,
 * and appends go on from a fresh line; every later open accepts it. */
static void
a_torn_last_line_is_cut_and_kept_aside(void)
{
	const char *home = harness_tmpdir();
	const char torn[] = "{\"i\":2,\"kind\":\"user\",\"te";
	struct store *s;
	struct store_msg m;
	char *f, *bytes, *tornpath;
	size_t len, before;

	s = open_home(home);
	add(s, STORE_KIND_USER, "one", DAY1);
	add(s, STORE_KIND_USER, "two", DAY1);
	store_close(&s);
	f = day_file(home, DAY1);
	free(slurp(f, &before));
	append_bytes(f, torn, sizeof(torn) - 1);
	s = open_home(home);
	CHECK_EQ_INT(store_count(s), 2);
	bytes = slurp(f, &len);
	CHECK_EQ_INT(len, before);
	free(bytes);
	tornpath = xasprintf("%s/chat/torn/2026-11-29.jsonl.%zu", home, before);
	bytes = slurp(tornpath, &len);
	CHECK(bytes != NULL);
	CHECK_EQ_INT(len, sizeof(torn) - 1);
	CHECK(memcmp(bytes, torn, len) == 0);
	free(bytes);
	CHECK_EQ_INT(add(s, STORE_KIND_USER, "three", DAY1), 2);
	store_close(&s);
	s = open_home(home);
	CHECK_EQ_INT(store_count(s), 3);
	CHECK_EQ_INT(store_read(s, 2, &m), 0);
	CHECK_EQ_STR(m.text, "three");
	store_msg_free(&m);
	store_close(&s);
	free(tornpath);
	free(f);
}

/* A whole line that lost only its newline is a message: it is terminated
 * and indexed (with its key, so a retry does not log it twice). */
static void
a_whole_line_without_newline_is_terminated(void)
{
	const char *home = harness_tmpdir();
	const char line[] =
	    "{\"i\":1,\"kind\":\"talk\",\"text\":\"hi\",\"size\":2,"
	    "\"date\":\"2026-11-29T12:00:00.000Z\",\"key\":"
	    "\"k1\"}";
	struct store_msg_in again = {STORE_KIND_SHIRO, "hi", 2, "k1", DAY1};
	struct store *s;
	struct store_msg m;
	uint64_t id;
	char *f, *bytes;
	size_t len;

	s = open_home(home);
	add(s, STORE_KIND_USER, "zero", DAY1);
	store_close(&s);
	f = day_file(home, DAY1);
	append_bytes(f, line, sizeof(line) - 1);
	s = open_home(home);
	CHECK_EQ_INT(store_count(s), 2);
	CHECK_EQ_INT(store_read(s, 1, &m), 0);
	CHECK_EQ_INT(m.kind, STORE_KIND_SHIRO); /* talk reads as shiro */
	store_msg_free(&m);
	CHECK_EQ_INT(store_append(s, &again, &id), 0);
	CHECK_EQ_INT(id, 1);
	store_close(&s);
	bytes = slurp(f, &len);
	CHECK(len > 0 && bytes[len - 1] == '\n');
	free(bytes);
	free(f);
}

/* write_lines - a day file made by hand (the index is built at open). */
static void
write_lines(const char *home, const char *text)
{
	char *dir = xasprintf("%s/chat", home);
	char *main = xasprintf("%s/chat/main", home);
	char *f = xasprintf("%s/2026-11-29.jsonl", main);
	int fd;

	mkdir(home, 0700);
	mkdir(dir, 0700);
	mkdir(main, 0700);
	fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd != -1);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	free(dir);
	free(main);
	free(f);
}

#define LINE(i, t) \
	"{\"i\":" #i ",\"kind\":\"user\",\"text\":\"" t "\",\"size\":1," \
	"\"date\":\"2026-11-29T12:00:00.000Z\"}\n"

/* Damage before the last line refuses the open, naming file and line. */
static void
damage_refuses_to_open_naming_file_and_line(void)
{
	const char *home = harness_tmpdir();
	struct store_openerr why;
	struct store *s;
	char *sub;

	sub = xasprintf("%s/a", home);
	write_lines(
	    sub, LINE(0, "a") "{\"i\":1,\"kind\":\"user\",\"te\n" LINE(2, "c"));
	CHECK_EQ_INT(store_open(sub, NULL, &s, &why), -SHIRO_ERR_CORRUPT);
	CHECKF(
	    strstr(why.msg, "2026-11-29.jsonl line 2") != NULL, "%s", why.msg);
	free(sub);
	/* A gap in the ids. */
	sub = xasprintf("%s/b", home);
	write_lines(sub, LINE(0, "a") LINE(2, "c"));
	CHECK_EQ_INT(store_open(sub, NULL, &s, &why), -SHIRO_ERR_CORRUPT);
	CHECKF(strstr(why.msg, "line 2: id 2 where 1") != NULL, "%s", why.msg);
	free(sub);
	/* A size that lies. */
	sub = xasprintf("%s/c", home);
	write_lines(sub, LINE(0, "a") LINE(1, "bb") LINE(2, "c"));
	CHECK_EQ_INT(store_open(sub, NULL, &s, &why), -SHIRO_ERR_CORRUPT);
	CHECKF(strstr(why.msg, "line 2: size") != NULL, "%s", why.msg);
	free(sub);
	/* An indexed chat damaged later: verify_all finds it. */
	sub = xasprintf("%s/d", home);
	write_lines(sub, LINE(0, "a") LINE(1, "b") LINE(2, "c"));
	s = open_home(sub);
	store_close(&s);
	{
		char *f = xasprintf("%s/chat/main/2026-11-29.jsonl", sub);
		int fd = open(f, O_WRONLY);
		struct store_opts o = {0, 1, 0, 0};

		CHECK(pwrite(fd, "X", 1, 5) == 1);
		close(fd);
		CHECK_EQ_INT(store_open(sub, &o, &s, &why), -SHIRO_ERR_CORRUPT);
		CHECKF(strstr(why.msg, "line 1") != NULL, "%s", why.msg);
		free(f);
	}
	free(sub);
}

/* A date the log could not write back (a leap second at the end of
 * 9999 is a time of year 10000) is damage; the last second of 9999 is
 * not (found by tests/fuzz/fuzz_log_line's round trip). */
static void
a_date_past_9999_is_damage(void)
{
	const char *home = harness_tmpdir();
	struct store_openerr why;
	struct store *s;
	char *sub;

	sub = xasprintf("%s/a", home);
	write_lines(sub,
	    LINE(0, "a") "{\"i\":1,\"kind\":\"user\",\"text\":\"b\",\"size\":1,"
			 "\"date\":\"9999-12-31T23:59:60.999Z\"}\n" LINE(
			     2, "c"));
	CHECK_EQ_INT(store_open(sub, NULL, &s, &why), -SHIRO_ERR_CORRUPT);
	CHECKF(strstr(why.msg, "line 2: bad date") != NULL, "%s", why.msg);
	free(sub);
	sub = xasprintf("%s/b", home);
	write_lines(sub,
	    LINE(0, "a") "{\"i\":1,\"kind\":\"user\",\"text\":\"b\",\"size\":1,"
			 "\"date\":\"9999-12-31T23:59:59.999Z\"}\n" LINE(
			     2, "c"));
	s = open_home(sub);
	store_close(&s);
	free(sub);
}

/* Random damage to a line or to view.json never crashes a reader: the
 * open accepts the line (if it still says the right thing) or refuses
 * it as CORRUPT, and view.json loads or is refused. */
static void
damaged_files_never_crash_the_readers(void)
{
	const char *home = harness_tmpdir();
	const char good[] = LINE(0, "a") LINE(1, "b") LINE(2, "c");
	struct store_line *v;
	struct store_openerr why;
	struct store *s;
	char buf[sizeof(good)], *sub, *path;
	unsigned seed = 99, round, k, n;
	size_t nv;
	int ret, fd;

	for (round = 0; round < 300; round++) {
		memcpy(buf, good, sizeof(good));
		/* Damage line 2 only (bytes 76..150; each line is 76 bytes): a
		 * torn last line is repaired instead. */
		n = 1 + (unsigned)rand_r(&seed) % 4;
		for (k = 0; k < n; k++) {
			size_t at = 76 + (size_t)rand_r(&seed) % 75;

			buf[at] = (char)(rand_r(&seed) % 3 == 0
				? rand_r(&seed) % 256
				: "{}[]\":,0123456789\\u"[rand_r(&seed) % 20]);
		}
		sub = xasprintf("%s/r%u", home, round);
		write_lines(sub, buf);
		ret = store_open(sub, NULL, &s, &why);
		CHECKF(ret == 0 || ret == -SHIRO_ERR_CORRUPT, "round %u: %s",
		    round, err_str(ret));
		if (ret == 0) {
			path = xasprintf("%s/chat/view.json", sub);
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			CHECK(fd != -1);
			CHECK(write(fd, buf, 60) == 60);
			close(fd);
			ret = store_view_load(s, &v, &nv);
			CHECK(ret == 0 || ret == -SHIRO_ERR_CORRUPT);
			if (ret == 0)
				free(v);
			store_close(&s);
			free(path);
		}
		free(sub);
	}
}

/* A second opener gets LOCKED and the owner's pid. */
static void
a_second_opener_is_refused_with_the_owners_pid(void)
{
	const char *home = harness_tmpdir();
	struct store_openerr why;
	struct store *s;
	int p2c[2], c2p[2], st;
	pid_t pid;
	char c;

	CHECK(pipe(p2c) == 0 && pipe(c2p) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (store_open(home, NULL, &s, NULL) != 0)
			_exit(1);
		(void)write(c2p[1], "r", 1);
		(void)read(p2c[0], &c, 1);
		store_close(&s);
		_exit(0);
	}
	CHECK(read(c2p[0], &c, 1) == 1);
	CHECK_EQ_INT(store_open(home, NULL, &s, &why), -SHIRO_ERR_LOCKED);
	CHECK_EQ_INT(why.owner, pid);
	CHECK(strstr(why.msg, "owned by process") != NULL);
	(void)write(p2c[1], "q", 1);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0);
	/* The owner is gone: the lock is free again. */
	s = open_home(home);
	store_close(&s);
}

/* Appends whose index commit never happened (the process died) are
 * indexed again from the log at the next open, keys included. */
static void
a_crash_before_the_index_commit_loses_nothing(void)
{
	const char *home = harness_tmpdir();
	struct store_msg_in m = {STORE_KIND_USER, "x", 1, NULL, DAY1};
	struct store *s;
	struct store_msg r;
	char key[32];
	uint64_t id;
	int st, k;
	pid_t pid;

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (store_open(home, NULL, &s, NULL) != 0)
			_exit(1);
		for (k = 0; k < 300; k++) {
			snprintf(key, sizeof(key), "key-%d", k);
			m.key = key;
			if (store_append(s, &m, &id) != 0 || id != (uint64_t)k)
				_exit(2);
		}
		kill(getpid(), SIGKILL);
		_exit(3);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	s = open_home(home);
	CHECK_EQ_INT(store_count(s), 300);
	CHECK_EQ_INT(store_read(s, 299, &r), 0);
	CHECK_EQ_STR(r.key, "key-299");
	store_msg_free(&r);
	m.key = "key-290";
	CHECK_EQ_INT(store_append(s, &m, &id), 0);
	CHECK_EQ_INT(id, 290);
	CHECK_EQ_INT(store_count(s), 300);
	store_close(&s);
}

/* info_count - store_info_iter callback: ids in order, sizes summed. */
static int
info_count(void *arg, const struct store_msg_info *info)
{
	uint64_t *v = arg;

	CHECK_EQ_INT(info->id, v[0]);
	v[0]++;
	v[1] += info->size;
	return info->id == v[2] ? 1 : 0;
}

/* Ranges for zoom and walks of the index, over committed and deferred
 * index entries alike, and after store_sync. */
static void
ranges_and_index_walks_read_what_was_logged(void)
{
	const char *home = harness_tmpdir();
	struct store_msg *v;
	struct store *s;
	char text[32];
	uint64_t st[3], k;
	size_t n;

	s = open_home(home);
	for (k = 0; k < 600; k++) {
		snprintf(text, sizeof(text), "m%llu", (unsigned long long)k);
		add(s, STORE_KIND_WORK, text, DAY1);
	}
	/* 512 committed at the 256-append flushes, 88 still deferred. */
	CHECK_EQ_INT(store_read_range(s, 500, 8, &v, &n), 0);
	CHECK_EQ_INT(n, 8);
	CHECK_EQ_STR(v[0].text, "m500");
	CHECK_EQ_STR(v[7].text, "m507");
	store_msgs_free(v, n);
	CHECK_EQ_INT(store_read_range(s, 596, 8, &v, &n), 0);
	CHECK_EQ_INT(n, 4); /* the chat ends first */
	CHECK_EQ_STR(v[3].text, "m599");
	store_msgs_free(v, n);
	CHECK_EQ_INT(store_read_range(s, 600, 1, &v, &n), -SHIRO_ERR_NOENT);
	st[0] = 10;
	st[1] = 0;
	st[2] = UINT64_MAX;
	CHECK_EQ_INT(store_info_iter(s, 10, info_count, st), 0);
	CHECK_EQ_INT(st[0], 600);
	/* m10..m99: 3 bytes, m100..m599: 4 bytes */
	CHECK_EQ_INT(st[1], 90 * 3 + 500 * 4);
	st[0] = 0;
	st[2] = 5; /* stop at id 5 */
	CHECK_EQ_INT(store_info_iter(s, 0, info_count, st), 1);
	CHECK_EQ_INT(st[0], 6);
	CHECK_EQ_INT(store_sync(s), 0);
	st[0] = 590;
	st[2] = UINT64_MAX;
	CHECK_EQ_INT(store_info_iter(s, 590, info_count, st), 0);
	CHECK_EQ_INT(st[0], 600);
	store_close(&s);
}

/* Nodes are written once, need their children and their messages, and
 * survive a reopen; the size table answers without the text. */
static void
nodes_are_written_once_and_read_back(void)
{
	const char *home = harness_tmpdir();
	struct store_node_in two[2] = {
	    {0, 2, "c", 1, 1, DAY1},
	    {0, 3, "d", 1, 1, DAY1},
	};
	struct store_node nd;
	struct store *s;
	uint32_t size;
	int k;

	s = open_home(home);
	for (k = 0; k < 4; k++)
		add(s, STORE_KIND_USER, "m", DAY1);
	CHECK_EQ_INT(store_node_put(s, 0, 0, "a\r\nb", 4, 3, DAY1), 0);
	CHECK_EQ_INT(
	    store_node_put(s, 0, 0, "other", 5, 5, DAY1), -SHIRO_ERR_EXIST);
	CHECK_EQ_INT(
	    store_node_put(s, 0, 4, "e", 1, 1, DAY1), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(
	    store_node_put(s, 1, 0, "ab", 2, 2, DAY1), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(store_node_put(s, 0, 1, "b", 1, 1, DAY1), 0);
	CHECK_EQ_INT(store_node_put(s, 1, 0, "ab", 2, 2, DAY1), 0);
	/* A batch is all or nothing: its parent comes after its children. */
	{
		struct store_node_in bad[2] = {two[0], {0, 2, "x", 1, 1, 0}};

		CHECK_EQ_INT(store_node_put_batch(s, bad, 2), -SHIRO_ERR_EXIST);
		CHECK_EQ_INT(store_node_size(s, 0, 2, &size), -SHIRO_ERR_NOENT);
	}
	CHECK_EQ_INT(store_node_put_batch(s, two, 2), 0);
	{
		char big[STORE_NODE_MAX + 1];

		memset(big, 'x', sizeof(big));
		CHECK_EQ_INT(store_node_put(s, 1, 1, big, sizeof(big), 1, 0),
		    -SHIRO_ERR_TOOBIG);
	}
	store_close(&s);
	s = open_home(home);
	CHECK_EQ_INT(store_node_get(s, 0, 0, &nd), 0);
	CHECK_EQ_STR(nd.text, "a\r\nb");
	CHECK_EQ_INT(nd.size, 3);
	CHECK_EQ_INT(nd.len, 4);
	CHECK_EQ_INT(nd.date_ms, DAY1);
	free(nd.text);
	CHECK_EQ_INT(store_node_size(s, 1, 0, &size), 0);
	CHECK_EQ_INT(size, 2);
	CHECK_EQ_INT(store_node_get(s, 1, 1, &nd), -SHIRO_ERR_NOENT);
	store_close(&s);
}

/* collect_batch - store_batch_iter callback that records t and merges. */
static int
collect_batch(void *arg, const struct store_batch *b)
{
	struct buf *out = arg;
	size_t k;

	buf_printf(out, "%llu:%llu:%d:", (unsigned long long)b->seq,
	    (unsigned long long)b->t, b->open);
	for (k = 0; k < b->n; k++)
		buf_printf(out, "%u.%llu,", b->merges[k].l,
		    (unsigned long long)b->merges[k].i);
	buf_addc(out, ';');
	return 0;
}

/* Merge records append in order, with open and t, and read back. */
static void
merge_records_append_and_read_back_in_order(void)
{
	const char *home = harness_tmpdir();
	struct store_merge m1[] = {{1, 0}}, m2[] = {{1, 1}, {2, 0}};
	struct store_batch last;
	struct buf out = BUF_INIT;
	struct store *s;
	uint64_t seq, n;
	int k;

	s = open_home(home);
	for (k = 0; k < 4; k++) {
		add(s, STORE_KIND_USER, "m", DAY1);
		CHECK_EQ_INT(store_node_put(s, 0, k, "m", 1, 1, 0), 0);
	}
	CHECK_EQ_INT(store_batch_append(s, 3, 0, m1, 1, &seq),
	    -SHIRO_ERR_INVAL); /* (1, 0) is not built */
	CHECK_EQ_INT(store_node_put(s, 1, 0, "mm", 2, 2, 0), 0);
	CHECK_EQ_INT(store_node_put(s, 1, 1, "mm", 2, 2, 0), 0);
	CHECK_EQ_INT(store_node_put(s, 2, 0, "mmmm", 4, 4, 0), 0);
	CHECK_EQ_INT(store_batch_append(s, 3, 1, m1, 1, &seq), 0);
	CHECK_EQ_INT(seq, 0);
	CHECK_EQ_INT(store_batch_append(s, 3, 1, NULL, 0, &seq), 0);
	CHECK_EQ_INT(store_batch_append(s, 2, 1, NULL, 0, &seq),
	    -SHIRO_ERR_INVAL); /* t goes back */
	CHECK_EQ_INT(store_batch_append(s, 5, 1, NULL, 0, &seq),
	    -SHIRO_ERR_INVAL); /* t past the log */
	CHECK_EQ_INT(store_batch_append(s, 4, 0, m2, 2, &seq), 0);
	CHECK_EQ_INT(seq, 2);
	store_close(&s);
	s = open_home(home);
	CHECK_EQ_INT(store_batch_iter(s, 0, collect_batch, &out), 0);
	CHECK_EQ_STR(out.data, "0:3:1:1.0,;1:3:1:;2:4:0:1.1,2.0,;");
	buf_reset(&out);
	CHECK_EQ_INT(store_batch_iter(s, 1, collect_batch, &out), 0);
	CHECK_EQ_STR(out.data, "1:3:1:;2:4:0:1.1,2.0,;");
	CHECK_EQ_INT(store_batch_last(s, &last), 0);
	CHECK_EQ_INT(last.seq, 2);
	CHECK_EQ_INT(last.n, 2);
	CHECK_EQ_INT(last.merges[1].l, 2);
	free(last.merges);
	CHECK_EQ_INT(store_batch_count(s, &n), 0);
	CHECK_EQ_INT(n, 3);
	store_close(&s);
	buf_free(&out);
}

/* keep_batch - store_batch_iter callback copying the one record. */
static int
keep_batch(void *arg, const struct store_batch *b)
{
	struct store_batch *out = arg;

	out->t = b->t;
	out->open = b->open;
	out->n = b->n;
	out->merges = xmemdup(b->merges, b->n * sizeof(*b->merges));
	return 0;
}

/* A record's merges come back in their order whatever their levels and
 * steps (forwards, backwards, far): the encoding is exact. */
static void
merge_records_keep_any_order_exactly(void)
{
	const char *home = harness_tmpdir();
	struct store_node_in *nodes = xcalloc(128, sizeof(*nodes));
	struct store_merge *mg = xcalloc(128, sizeof(*mg));
	struct store_batch b, got;
	struct store_msg_in m[64];
	uint64_t ids[64];
	struct store *s;
	size_t n = 0, nm = 0, k;
	unsigned l, seed = 3;
	uint64_t i;

	s = open_home(home);
	for (k = 0; k < 64; k++)
		m[k] = (struct store_msg_in){STORE_KIND_USER, "m", 1, NULL, 0};
	CHECK_EQ_INT(store_append_batch(s, m, 64, ids, NULL), 0);
	for (l = 0; l <= 6; l++)
		for (i = 0; i < (64u >> l); i++) {
			nodes[n++] = (struct store_node_in){l, i, "t", 1, 1, 0};
			if (l > 0)
				mg[nm++] = (struct store_merge){l, i};
		}
	/* Shuffle the merges: the record keeps whatever order it gets. */
	for (k = nm - 1; k > 0; k--) {
		size_t j = (size_t)rand_r(&seed) % (k + 1);
		struct store_merge tmp = mg[k];

		mg[k] = mg[j];
		mg[j] = tmp;
	}
	memset(&b, 0, sizeof(b));
	b.t = 64;
	b.open = 1;
	b.n = nm;
	b.merges = mg;
	CHECK_EQ_INT(store_tree_commit(s, nodes, n, &b, 1), 0);
	store_close(&s);
	s = open_home(home);
	memset(&got, 0, sizeof(got));
	CHECK_EQ_INT(store_batch_iter(s, 0, keep_batch, &got), 0);
	CHECK_EQ_INT(got.n, nm);
	CHECK_EQ_INT(got.t, 64);
	CHECK_EQ_INT(got.open, 1);
	for (k = 0; k < nm; k++)
		CHECK(got.merges[k].l == mg[k].l && got.merges[k].i == mg[k].i);
	free(got.merges);
	store_close(&s);
	free(nodes);
	free(mg);
}

/* view.json is [[l,i],...], replaced whole, and loads back. */
static void
the_view_saves_atomically_and_loads_back(void)
{
	const char *home = harness_tmpdir();
	struct store_line v[] = {{3, 0}, {1, 4}, {0, 10}}, *got;
	struct store *s;
	char *path, *bytes;
	size_t n;

	s = open_home(home);
	CHECK_EQ_INT(store_view_load(s, &got, &n), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(store_view_save(s, v, 3), 0);
	CHECK_EQ_INT(store_view_save(s, v, 2), 0);
	store_close(&s);
	path = xasprintf("%s/chat/view.json", home);
	bytes = slurp(path, NULL);
	CHECK_EQ_STR(bytes, "[[3,0],[1,4]]\n");
	free(bytes);
	s = open_home(home);
	CHECK_EQ_INT(store_view_load(s, &got, &n), 0);
	CHECK_EQ_INT(n, 2);
	CHECK(got[1].l == 1 && got[1].i == 4);
	free(got);
	{
		int fd = open(path, O_WRONLY | O_TRUNC);

		CHECK(write(fd, "[[1,2],[3]]", 11) == 11);
		close(fd);
	}
	CHECK_EQ_INT(store_view_load(s, &got, &n), -SHIRO_ERR_CORRUPT);
	store_close(&s);
	free(path);
}

/* shirod's state records live beside the meta database's own (the
 * schema, usage) and can never name them; they are durable; a key too
 * long for its prefix is refused. */
static void
state_records_are_kept_apart(void)
{
	const char *home = harness_tmpdir();
	struct store_usage u, *uv = NULL;
	struct store *s;
	char key[STORE_KV_KEY_MAX + 1], *v;
	size_t len, nu = 0;

	s = open_home(home);
	memset(&u, 0, sizeof(u));
	snprintf(u.provider, sizeof(u.provider), "p");
	snprintf(u.model, sizeof(u.model), "m");
	u.input = 7;
	CHECK_EQ_INT(store_usage_add(s, &u, 1), 0);
	CHECK_EQ_INT(store_state_put(s, "calls", "5 9", 3), 0);
	/* The names of the meta database's own records are only names of
	 * state records: the schema and the usage stay as they were. */
	CHECK_EQ_INT(store_state_put(s, "schema", "99", 2), 0);
	CHECK_EQ_INT(store_state_put(s, "usage/p/m", "1 1 1 1 1", 9), 0);
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	CHECK_EQ_INT(store_state_put(s, key + 5, "x", 1), -SHIRO_ERR_INVAL);
	store_close(&s);
	s = open_home(home);
	CHECK_EQ_INT(store_schema(s), STORE_SCHEMA);
	CHECK_EQ_INT(store_usage_list(s, &uv, &nu), 0);
	CHECK_EQ_INT(nu, 1);
	CHECK_EQ_INT(uv[0].input, 7);
	free(uv);
	CHECK_EQ_INT(store_state_get(s, "calls", &v, &len), 0);
	CHECK_EQ_STR(v, "5 9");
	CHECK_EQ_INT(len, 3);
	free(v);
	CHECK_EQ_INT(store_state_del(s, "calls"), 0);
	CHECK_EQ_INT(store_state_get(s, "calls", &v, &len), -SHIRO_ERR_NOENT);
	store_close(&s);
}

/* A tool's result (kind echo) is clipped like a tool call: one message,
 * head and tail, never pages. */
static void
echo_is_clipped_like_a_tool(void)
{
	const char *home = harness_tmpdir();
	struct buf in = BUF_INIT;
	struct store_msg_in m;
	struct store_msg r;
	struct store *s;
	uint64_t first;
	size_t n, k;

	for (k = 0; k < 9000; k++)
		buf_printf(&in, "out %zu\n", k);
	s = open_home(home);
	m = (struct store_msg_in){STORE_KIND_ECHO, in.data, in.len, NULL, 0};
	CHECK_EQ_INT(store_append(s, &m, &first), -SHIRO_ERR_TOOBIG);
	CHECK_EQ_INT(store_append_long(s, &m, &first, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(store_read(s, first, &r), 0);
	CHECK_EQ_INT(r.kind, STORE_KIND_ECHO);
	CHECK(strncmp(r.text, "out 0\n", 6) == 0);
	CHECK(strstr(r.text, "characters cut ...]") != NULL);
	CHECK(strstr(r.text, "out 8999\n") != NULL);
	store_msg_free(&r);
	store_close(&s);
	buf_free(&in);
}

/* A tool's output keeps head and tail, 30,000 characters, and says how
 * much was cut; short output is unchanged. */
static void
tool_output_is_clipped_to_head_and_tail(void)
{
	struct buf in = BUF_INIT;
	char *out;
	size_t len, k;

	out = store_text_clip("short", 5, 10, &len);
	CHECK_EQ_STR(out, "short");
	free(out);
	/* 40,000 characters, each two bytes, numbered by line. */
	for (k = 0; k < 40000; k++)
		buf_adds(&in, k == 0 ? "<" : k == 39999 ? ">" : "\u00e9");
	out = store_text_clip(in.data, in.len, STORE_TOOL_CHARS, &len);
	CHECK(utf8_valid(out, len));
	CHECK(strstr(out, "\n[... 10000 characters cut ...]\n") != NULL);
	CHECK_EQ_INT(utf8_count(out, len),
	    30000 + strlen("\n[... 10000 characters cut ...]\n"));
	CHECK(out[0] == '<' && out[len - 1] == '>');
	free(out);
	buf_free(&in);
}

/* Long text splits into pages on character boundaries, at line ends
 * when it can, and the pages join back byte for byte. */
static void
long_text_splits_into_pages_that_join_back(void)
{
	static const char *const bits[] = {
	    "a", "\u00e9", "\u20ac", "\U0001F600", "\n", "word "};
	struct buf in = BUF_INIT, joined = BUF_INIT;
	size_t *lens, n, k, off, round, page;
	unsigned seed = 7;

	for (round = 0; round < 200; round++) {
		buf_reset(&in);
		buf_reset(&joined);
		k = (size_t)(rand_r(&seed) % 3000);
		while (k-- > 0)
			buf_adds(&in, bits[rand_r(&seed) % 6]);
		page = 4 + (size_t)(rand_r(&seed) % 300);
		store_text_split(in.data, in.len, page, &lens, &n);
		for (k = 0, off = 0; k < n; k++) {
			CHECK(lens[k] <= page);
			CHECK(lens[k] > 0 || in.len == 0);
			CHECK(utf8_valid(in.data + off, lens[k]));
			/* A cut mid-page falls after a newline, unless the
			 * whole second half of the page has none. */
			if (k + 1 < n && lens[k] > page / 2 + 1 &&
			    in.data[off + lens[k] - 1] != '\n')
				CHECK(memchr(in.data + off + page / 2 + 1, '\n',
					  lens[k] - page / 2 - 1) == NULL);
			buf_add(&joined, in.data + off, lens[k]);
			off += lens[k];
		}
		CHECK_EQ_INT(joined.len, in.len);
		CHECK(in.len == 0 || memcmp(joined.data, in.data, in.len) == 0);
		free(lens);
	}
	buf_free(&in);
	buf_free(&joined);
}

/* store_append_long logs long text as consecutive pages, keyed part by
 * part, and a tool's output clipped. */
static void
long_messages_are_logged_as_several(void)
{
	const char *home = harness_tmpdir();
	struct buf in = BUF_INIT, joined = BUF_INIT;
	struct store_msg_in m;
	struct store_msg r;
	struct store *s;
	uint64_t first, again;
	size_t n, n2, k;

	for (k = 0; k < 7000; k++)
		buf_printf(&in, "line %zu \u00e9\n", k);
	s = open_home(home);
	m = (struct store_msg_in){STORE_KIND_USER, in.data, in.len, "paste", 0};
	CHECK_EQ_INT(store_append(s, &m, &first), -SHIRO_ERR_TOOBIG);
	CHECK_EQ_INT(store_append_long(s, &m, &first, &n), 0);
	CHECK(n >= 3);
	CHECK_EQ_INT(store_append_long(s, &m, &again, &n2), 0);
	CHECK_EQ_INT(again, first);
	CHECK_EQ_INT(store_count(s), n);
	store_close(&s);
	s = open_home(home);
	for (k = 0; k < n; k++) {
		CHECK_EQ_INT(store_read(s, first + k, &r), 0);
		CHECK(r.len <= STORE_PAGE);
		buf_add(&joined, r.text, r.len);
		store_msg_free(&r);
	}
	CHECK_EQ_INT(joined.len, in.len);
	CHECK(memcmp(joined.data, in.data, in.len) == 0);
	m.kind = STORE_KIND_TOOL;
	m.key = NULL;
	CHECK_EQ_INT(store_append_long(s, &m, &first, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(store_read(s, first, &r), 0);
	CHECK(strstr(r.text, "characters cut ...]") != NULL);
	store_msg_free(&r);
	store_close(&s);
	buf_free(&in);
	buf_free(&joined);
}

/* A key logged with a short text and used again with a long one (or the
 * other way round) is a retry: nothing more is written. */
static void
reused_key_with_other_length_writes_nothing(void)
{
	const char *home = harness_tmpdir();
	struct buf big = BUF_INIT;
	struct store_msg_in m;
	struct store *s;
	uint64_t first, again;
	size_t n, n2, k;

	for (k = 0; k < 7000; k++)
		buf_printf(&big, "line %zu\n", k);
	s = open_home(home);
	m = (struct store_msg_in){STORE_KIND_USER, "short", 5, "a", 0};
	CHECK_EQ_INT(store_append(s, &m, &first), 0);
	m = (struct store_msg_in){STORE_KIND_USER, big.data, big.len, "a", 0};
	CHECK_EQ_INT(store_append_long(s, &m, &again, &n), 0);
	CHECK_EQ_INT(again, first);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(store_count(s), 1);
	m.key = "b";
	CHECK_EQ_INT(store_append_long(s, &m, &first, &n), 0);
	CHECK(n >= 3);
	CHECK_EQ_INT(store_count(s), 1 + n);
	m = (struct store_msg_in){STORE_KIND_USER, "short", 5, "b", 0};
	CHECK_EQ_INT(store_append_long(s, &m, &again, &n2), 0);
	CHECK_EQ_INT(again, first);
	CHECK_EQ_INT(n2, n);
	CHECK_EQ_INT(store_count(s), 1 + n);
	/* An empty key is refused as such, long text or not. */
	m.key = "";
	CHECK_EQ_INT(store_append_long(s, &m, &again, &n2), -SHIRO_ERR_INVAL);
	CHECK(strstr(store_errmsg(s), "key") != NULL);
	CHECK_EQ_INT(store_count(s), 1 + n);
	store_close(&s);
	buf_free(&big);
}

/* Bad input is refused with a clear code and nothing is written. */
static void
bad_messages_are_refused(void)
{
	const char *home = harness_tmpdir();
	struct store_msg_in m = {STORE_KIND_USER, "\xff\xfe", 2, NULL, 0};
	struct store *s;
	uint64_t id;
	char big[STORE_PAGE + 1];
	int k;

	s = open_home(home);
	CHECK_EQ_INT(store_append(s, &m, &id), -SHIRO_ERR_INVAL);
	m.kind = (enum store_kind)9;
	m.text = "ok";
	CHECK_EQ_INT(store_append(s, &m, &id), -SHIRO_ERR_INVAL);
	memset(big, 'a', sizeof(big));
	m = (struct store_msg_in){STORE_KIND_USER, big, sizeof(big), NULL, 0};
	CHECK_EQ_INT(store_append(s, &m, &id), -SHIRO_ERR_TOOBIG);
	m.len = 0;
	CHECK_EQ_INT(store_append(s, &m, &id), 0); /* empty text is fine */
	CHECK_EQ_INT(store_count(s), 1);
	/* Every kind logs and reads back, note included (rule 5). */
	for (k = 0; k < STORE_KIND_COUNT; k++) {
		struct store_msg r;

		m = (struct store_msg_in){(enum store_kind)k, "x", 1, NULL, 0};
		CHECK_EQ_INT(store_append(s, &m, &id), 0);
		CHECK_EQ_INT(store_read(s, id, &r), 0);
		CHECK_EQ_INT(r.kind, k);
		store_msg_free(&r);
	}
	store_close(&s);
}

/* date(id) reads in the local time zone. */
static void
dates_read_in_local_time(void)
{
	const char *home = harness_tmpdir();
	struct store *s;
	char out[64];

	setenv("TZ", "Europe/Paris", 1);
	tzset();
	s = open_home(home);
	add(s, STORE_KIND_USER, "x", DAY1);
	CHECK_EQ_INT(store_date(s, 0, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "Sun 2026-11-29 13:00:00 +0100");
	CHECK_EQ_INT(store_date(s, 0, out, 5), -SHIRO_ERR_TOOBIG);
	CHECK_EQ_INT(store_date(s, 1, out, sizeof(out)), -SHIRO_ERR_NOENT);
	store_close(&s);
}

/* A map that is too small grows at the first full commit. */
static void
a_full_map_grows_and_the_write_succeeds(void)
{
	const char *home = harness_tmpdir();
	struct store_opts o = {64 * 1024, 0, 0, 0};
	struct store_node_in *v;
	struct store *s;
	char text[STORE_NODE_MAX];
	int k, n = 2000;

	memset(text, 'n', sizeof(text));
	CHECK_EQ_INT(store_open(home, &o, &s, NULL), 0);
	for (k = 0; k < n; k++)
		add(s, STORE_KIND_USER, "m", DAY1);
	v = xcalloc((size_t)n, sizeof(*v));
	for (k = 0; k < n; k++)
		v[k] = (struct store_node_in){
		    0, (uint64_t)k, text, sizeof(text), sizeof(text), 0};
	CHECK_EQ_INT(store_node_put_batch(s, v, (size_t)n), 0);
	store_close(&s);
	CHECK_EQ_INT(store_open(home, &o, &s, NULL), 0);
	{
		uint32_t size;

		CHECK_EQ_INT(store_node_size(s, 0, 1999, &size), 0);
		CHECK_EQ_INT(size, STORE_NODE_MAX);
	}
	store_close(&s);
	free(v);
}

/* A chat with a newer schema is refused; the current one is recorded. */
static void
a_newer_schema_is_refused(void)
{
	const char *home = harness_tmpdir();
	struct store_openerr why;
	struct store *s;
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = {6, "schema"}, v;
	unsigned char nine[4] = {0, 0, 0, 9};
	char *path;

	s = open_home(home);
	CHECK_EQ_INT(store_schema(s), STORE_SCHEMA);
	store_close(&s);
	path = xasprintf("%s/chat/tree.lmdb", home);
	CHECK(mdb_env_create(&env) == 0);
	mdb_env_set_maxdbs(env, 16);
	CHECK(mdb_env_open(env, path, 0, 0600) == 0);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	CHECK(mdb_dbi_open(txn, "meta", 0, &dbi) == 0);
	v.mv_size = 4;
	v.mv_data = nine;
	CHECK(mdb_put(txn, dbi, &k, &v, 0) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
	CHECK_EQ_INT(store_open(home, NULL, &s, &why), -SHIRO_ERR_UNSUPP);
	CHECK(strstr(why.msg, "schema 9") != NULL);
	free(path);
}

/* holder - a child that opens home read-only, optionally starts a read
 * transaction, says so on fd and waits to be killed. */
static pid_t
holder(const char *home, int fd, int reading)
{
	struct store_opts o = {0, 0, 1, 0};
	struct store_node_cursor *c;
	struct store *s;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		if (store_open(home, &o, &s, NULL) != 0 ||
		    (reading && store_node_cursor_open(s, 0, &c) != 0))
			_exit(1);
		(void)write(fd, "r", 1);
		pause();
		_exit(0);
	}
	return pid;
}

/* A reader left by a killed process is cleared at the next open (else
 * it would pin old pages forever).  LMDB resets its reader table when
 * the first process opens it, so a second process keeps the environment
 * open meanwhile, as fsck of a live chat does. */
static void
a_dead_readers_slot_is_cleared_at_open(void)
{
	const char *home = harness_tmpdir();
	struct store *s;
	char logbuf[4096];
	int fds[2], st;
	ssize_t n;
	pid_t keeper, dead;

	s = open_home(home);
	store_close(&s);
	CHECK(pipe(fds) == 0);
	keeper = holder(home, fds[1], 0);
	CHECK(read(fds[0], logbuf, 1) == 1);
	dead = holder(home, fds[1], 1);
	CHECK(read(fds[0], logbuf, 1) == 1);
	kill(dead, SIGKILL);
	CHECK(waitpid(dead, &st, 0) == dead);
	log_init("test_store", LOG_LEVEL_INFO);
	log_set_fd(fds[1]);
	s = open_home(home);
	log_set_fd(2);
	store_close(&s);
	kill(keeper, SIGKILL);
	CHECK(waitpid(keeper, &st, 0) == keeper);
	close(fds[1]);
	n = read(fds[0], logbuf, sizeof(logbuf) - 1);
	CHECK(n > 0);
	logbuf[n] = '\0';
	CHECKF(strstr(logbuf, "cleared 1 stale lmdb reader") != NULL, "%s",
	    logbuf);
	close(fds[0]);
}

/* A store is never used in a child after fork. */
static void
a_forked_child_cannot_use_the_store(void)
{
	const char *home = harness_tmpdir();
	struct store *s;
	struct store_msg m;
	int st;
	pid_t pid;

	s = open_home(home);
	add(s, STORE_KIND_USER, "x", DAY1);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(store_read(s, 0, &m) == -SHIRO_ERR_STATE ? 0 : 1);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0);
	CHECK_EQ_INT(store_read(s, 0, &m), 0);
	store_msg_free(&m);
	store_close(&s);
}

/* Images of a message are saved in order and listed back. */
static void
message_images_are_saved_and_listed(void)
{
	const char *home = harness_tmpdir();
	struct store *s;
	char **paths, *bytes;
	size_t n, len, k;
	unsigned num;

	s = open_home(home);
	add(s, STORE_KIND_USER, "look", DAY1);
	CHECK_EQ_INT(
	    store_image_put(s, 1, "png", "x", 1, &num), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(
	    store_image_put(s, 0, "PNG!", "x", 1, &num), -SHIRO_ERR_INVAL);
	for (k = 0; k < 11; k++) {
		CHECK_EQ_INT(
		    store_image_put(s, 0, "png", "\x89PNG", 4, &num), 0);
		CHECK_EQ_INT(num, k);
	}
	CHECK_EQ_INT(store_image_list(s, 0, &paths, &n), 0);
	CHECK_EQ_INT(n, 11);
	CHECK(strstr(paths[10], "/chat/images/0-10.png") != NULL);
	CHECK(strstr(paths[2], "/chat/images/0-2.png") != NULL);
	bytes = slurp(paths[0], &len);
	CHECK_EQ_INT(len, 4);
	free(bytes);
	for (k = 0; k < n; k++)
		free(paths[k]);
	free(paths);
	store_close(&s);
}

static const struct harness_test tests[] = {
    HT(appends_go_to_day_files_and_read_back),
    HT(a_logged_key_is_not_appended_again),
    HT(a_torn_last_line_is_cut_and_kept_aside),
    HT(a_whole_line_without_newline_is_terminated),
    HT(damage_refuses_to_open_naming_file_and_line),
    HT(a_date_past_9999_is_damage),
    HT(damaged_files_never_crash_the_readers),
    HT(a_second_opener_is_refused_with_the_owners_pid),
    HT(a_crash_before_the_index_commit_loses_nothing),
    HT(ranges_and_index_walks_read_what_was_logged),
    HT(nodes_are_written_once_and_read_back),
    HT(merge_records_append_and_read_back_in_order),
    HT(merge_records_keep_any_order_exactly),
    HT(the_view_saves_atomically_and_loads_back),
    HT(state_records_are_kept_apart),
    HT(echo_is_clipped_like_a_tool),
    HT(tool_output_is_clipped_to_head_and_tail),
    HT(long_text_splits_into_pages_that_join_back),
    HT(long_messages_are_logged_as_several),
    HT(reused_key_with_other_length_writes_nothing),
    HT(bad_messages_are_refused),
    HT(dates_read_in_local_time),
    HT(a_full_map_grows_and_the_write_succeeds),
    HT(a_newer_schema_is_refused),
    HT(a_dead_readers_slot_is_cleared_at_open),
    HT(a_forked_child_cannot_use_the_store),
    HT(message_images_are_saved_and_listed),
};

HARNESS_MAIN(tests)
