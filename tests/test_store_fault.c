/*
 * test_store_fault - the store when the system fails it: fsync returning
 * EIO, a short write, a full disk (a tiny tmpfs in a private mount
 * namespace), an LMDB commit that fails after the message is logged.
 * Each must end in a clear error and a store that reopens valid, with
 * every acknowledged message in it.
 *
 * The failing calls come from tests/fault/fault.so (LD_PRELOAD), loaded
 * into this same program re-run as "victim HOME OP".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "store/store.h"
#include "tests/harness.h"

/* victim_print - one result line: "ok ID" or "err CODE reason". */
static void
victim_print(struct store *s, int ret, uint64_t id)
{
	if (ret == 0)
		printf("ok %llu\n", (unsigned long long)id);
	else
		printf("err %d %s\n", -ret, store_errmsg(s));
	fflush(stdout);
}

/* victim - the program under a fault: "append N", "nodes" or
 * "twodays". */
static int
victim(int argc, char **argv)
{
	struct store_msg_in m;
	struct store_openerr why;
	struct store *s;
	char text[64], key[32];
	uint64_t id, k, n;
	int ret;

	if (argc < 4)
		return 2;
	if ((ret = store_open(argv[2], NULL, &s, &why)) != 0) {
		printf("open %d %s\n", -ret, why.msg);
		return 1;
	}
	n = strcmp(argv[3], "append") == 0 && argc > 4
	    ? strtoull(argv[4], NULL, 10)
	    : strcmp(argv[3], "twodays") == 0 ? 0
					      : 4;
	for (k = 0; k < n; k++) {
		snprintf(
		    text, sizeof(text), "message %llu", (unsigned long long)k);
		snprintf(key, sizeof(key), "k-%llu", (unsigned long long)k);
		m = (struct store_msg_in){
		    STORE_KIND_USER, text, strlen(text), key, 0};
		ret = store_append(s, &m, &id);
		if (strcmp(argv[3], "append") == 0)
			victim_print(s, ret, id);
	}
	if (strcmp(argv[3], "twodays") == 0) {
		/* Two messages of one day, two of the next: two day files,
		 * two writes and two fsyncs. */
		struct store_msg_in b[4];
		uint64_t ids[4];
		size_t durable = 99;
		static const char *const keys[] = {"d-0", "d-1", "d-2", "d-3"};

		for (k = 0; k < 4; k++)
			b[k] = (struct store_msg_in){STORE_KIND_USER, keys[k],
			    3, keys[k],
			    1704067200000LL + (k < 2 ? 0 : 86400000LL)};
		ret = store_append_batch(s, b, 4, ids, &durable);
		printf("rc %d durable %zu count %llu poisoned %d ids %llu "
		       "%llu\n",
		    -ret, durable, (unsigned long long)store_count(s),
		    store_poisoned(s), (unsigned long long)ids[0],
		    (unsigned long long)ids[1]);
	}
	if (strcmp(argv[3], "nodes") == 0) {
		for (k = 0; k < 4; k++) {
			ret = store_node_put(s, 0, k, "leaf", 4, 4, 0);
			victim_print(s, ret, k);
		}
	}
	store_close(&s);
	return 0;
}

/* fault_so - tests/fault.so next to this program (caller frees). */
static char *
fault_so(void)
{
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	CHECK(n > 0);
	self[n] = '\0';
	slash = strrchr(self, '/');
	CHECK(slash != NULL);
	*slash = '\0';
	return xasprintf("%s/fault.so", self);
}

/* run_victim - this program as a victim under fault; its stdout. */
static char *
run_victim(const char *home, const char *fault, const char *op, const char *arg)
{
	struct buf out = BUF_INIT;
	char self[PATH_MAX], chunk[4096], *so = fault_so();
	ssize_t n;
	int fds[2], st;
	pid_t pid;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	self[n] = '\0';
	CHECK(access(so, R_OK) == 0);
	CHECK(pipe(fds) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		setenv("SHIRO_FAULT", fault, 1);
		setenv("LD_PRELOAD", so, 1);
		/* Under ASan the shim cannot come first; that is fine. */
		setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
		execl(self, self, "victim", home, op, arg, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], chunk, sizeof(chunk))) > 0)
		buf_add(&out, chunk, (size_t)n);
	close(fds[0]);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "victim failed: status %d, said: %s", st, out.data ? out.data : "");
	free(so);
	buf_reserve(&out, 1);
	return out.data;
}

/* reopen_valid - open home with every line checked; returns the store. */
static struct store *
reopen_valid(const char *home)
{
	struct store_opts o = {0, 1, 0, 0};
	struct store_openerr why;
	struct store *s;
	int ret;

	ret = store_open(home, &o, &s, &why);
	CHECKF(ret == 0, "reopen: %s: %s", err_str(ret), why.msg);
	return s;
}

/* last_line_whole - the day file ends with a newline. */
static void
last_line_whole(const char *home)
{
	char *cmd = xasprintf("for f in %s/chat/main/*.jsonl; do "
			      "[ \"$(tail -c1 \"$f\" | od -An -tx1)\" = ' 0a' ]"
			      " || exit 1; done",
	    home);

	CHECKF(system(cmd) == 0, "a day file ends in a partial line");
	free(cmd);
}

/* A failed fsync fails the append and poisons the log: later appends are
 * refused, nothing is retried and acknowledged; the reopened store is
 * valid with every acknowledged message. */
static void
a_failed_fsync_poisons_the_log_until_reopened(void)
{
	const char *home = harness_tmpdir();
	struct store_msg_in m = {STORE_KIND_USER, "after", 5, "k-after", 0};
	struct store_msg r;
	struct store *s;
	char *out;
	uint64_t id;

	out = run_victim(home, "fdatasync:/chat/main/:3:eio", "append", "5");
	CHECKF(strncmp(out, "ok 0\nok 1\nerr 3 append: fsync failed", 36) == 0,
	    "%s", out);
	CHECKF(strstr(out, "\nerr 14 append: fsync failed") != NULL, "%s", out);
	CHECK(strstr(out, "ok 2") == NULL && strstr(out, "ok 3") == NULL);
	free(out);
	s = reopen_valid(home);
	/* The failed line may be on disk (never acknowledged) or not. */
	CHECK(store_count(s) == 2 || store_count(s) == 3);
	CHECK_EQ_INT(store_read(s, 1, &r), 0);
	CHECK_EQ_STR(r.text, "message 1");
	store_msg_free(&r);
	CHECK_EQ_INT(store_append(s, &m, &id), 0);
	CHECK_EQ_INT(id, store_count(s) - 1);
	store_close(&s);
	last_line_whole(home);
}

/* A short write (the disk filled up mid-line) fails the append cleanly:
 * the partial bytes are cut at once and no half line is left. */
static void
a_short_write_leaves_no_half_line(void)
{
	const char *home = harness_tmpdir();
	struct store *s;
	char *out;

	out = run_victim(home, "write:/chat/main/:2:short", "append", "3");
	CHECKF(strncmp(out, "ok 0\nerr 13 append: write failed after 48",
		   strlen("ok 0\nerr 13 append: write failed after 48")) == 0,
	    "%s", out);
	/* Not poisoned: the cut worked; the next append fails only because
	 * the disk is still full. */
	CHECKF(strstr(out, "\nerr 13 append: write failed after 0") != NULL,
	    "%s", out);
	free(out);
	last_line_whole(home);
	s = reopen_valid(home);
	CHECK_EQ_INT(store_count(s), 1);
	store_close(&s);
}

/* An LMDB commit that fails after the messages are logged (the node's
 * commit, which carries their index) poisons the store; the reopened
 * store has the messages (re-indexed from the log) and only the nodes
 * that were acknowledged. */
static void
a_failed_index_commit_after_the_log_write_loses_nothing(void)
{
	const char *home = harness_tmpdir();
	struct store *s;
	uint32_t size;
	char *out;
	int k, acked = 0, seen_err = 0;

	/* Two commits at open (the databases, meta); the third is the
	 * first node's. */
	out = run_victim(home, "fdatasync:data.mdb:3:eio", "nodes", "");
	CHECKF(strstr(out, "err 3 lmdb commit failed") != NULL, "%s", out);
	CHECKF(strstr(out, "err 14") != NULL, "%s", out);
	for (k = 0; k < 4; k++) {
		char want[16];

		snprintf(want, sizeof(want), "ok %d\n", k);
		if (strstr(out, want) != NULL) {
			CHECK(!seen_err);
			acked++;
		} else {
			seen_err = 1;
		}
	}
	free(out);
	s = reopen_valid(home);
	CHECK_EQ_INT(store_count(s), 4);
	for (k = 0; k < acked; k++)
		CHECK_EQ_INT(store_node_size(s, 0, (uint64_t)k, &size), 0);
	CHECK_EQ_INT(
	    store_node_size(s, 0, (uint64_t)acked, &size), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(store_node_put(s, 0, (uint64_t)acked, "leaf", 4, 4, 0), 0);
	store_close(&s);
}

/*
 * A batch over two day files whose second fsync fails: the first day's
 * messages are durable, counted and said to be (the broker tells the
 * planner exactly those), the store is poisoned, and the reopened chat
 * has them.  A short write in the second file instead is cut back: the
 * same two are durable and the store is not poisoned.
 */
static void
a_batch_half_written_says_what_is_durable(void)
{
	const char *home = harness_tmpdir(), *home2;
	struct store_msg r;
	struct store *s;
	char *out;

	out = run_victim(home, "fdatasync:/chat/main/:2:eio", "twodays", "");
	CHECKF(strcmp(out, "rc 3 durable 2 count 2 poisoned 1 ids 0 1\n") == 0,
	    "%s", out);
	free(out);
	s = reopen_valid(home);
	/* The unacknowledged day's lines may be on disk or not. */
	CHECK(store_count(s) >= 2);
	CHECK_EQ_INT(store_read(s, 1, &r), 0);
	CHECK_EQ_STR(r.text, "d-1");
	store_msg_free(&r);
	store_close(&s);
	home2 = xasprintf("%s/b", home);
	CHECK(mkdir(home2, 0700) == 0);
	out = run_victim(home2, "write:/chat/main/:2:short", "twodays", "");
	CHECKF(strcmp(out, "rc 13 durable 2 count 2 poisoned 0 ids 0 1\n") == 0,
	    "%s", out);
	free(out);
	/* Nothing of the cut run is left (its file may stay, empty). */
	s = reopen_valid(home2);
	CHECK_EQ_INT(store_count(s), 2);
	store_close(&s);
	free((char *)home2);
}

/* fill - create a file of len bytes (space to give back later). */
static void
fill(const char *path, size_t len)
{
	char *zero = xcalloc(1, len);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd != -1);
	CHECK(write(fd, zero, len) == (ssize_t)len);
	close(fd);
	free(zero);
}

/* On a full disk (a 1 MiB tmpfs) appends fail with NOSPC and node
 * writes with NOSPC or IO (LMDB reports a short page write as EIO); once some space is back the chat reopens valid, with every
 * acknowledged message and node. */
static void
a_full_disk_fails_cleanly_and_reopens_valid(void)
{
	const char *dir = harness_tmpdir();
	char *mnt = xasprintf("%s/mnt", dir), *home, *filler;
	char text[20000], key[32];
	struct store_msg_in m;
	struct store *s;
	uint64_t id, acked = 0, k, nodes = 0;
	int ret = 0;

	if (unshare(CLONE_NEWNS) != 0)
		harness_skip("unshare(CLONE_NEWNS): %s", strerror(errno));
	CHECK(mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	CHECK(mkdir(mnt, 0700) == 0);
	CHECK(mount("tmpfs", mnt, "tmpfs", 0, "size=1m") == 0);
	home = xasprintf("%s/home", mnt);
	filler = xasprintf("%s/filler", mnt);
	fill(filler, 128 * 1024);
	memset(text, 'x', sizeof(text));
	CHECK_EQ_INT(store_open(home, NULL, &s, NULL), 0);
	for (k = 0; k < 5000; k++) {
		snprintf(key, sizeof(key), "k-%llu", (unsigned long long)k);
		m = (struct store_msg_in){
		    STORE_KIND_USER, text, sizeof(text), key, 0};
		ret = store_append(s, &m, &id);
		if (ret != 0)
			break;
		CHECK_EQ_INT(id, k);
		acked++;
	}
	CHECKF(
	    ret == -SHIRO_ERR_NOSPC, "%s: %s", err_str(ret), store_errmsg(s));
	store_close(&s);
	CHECK(unlink(filler) == 0);
	last_line_whole(home);
	s = reopen_valid(home);
	CHECK_EQ_INT(store_count(s), acked);
	/* Now fill LMDB with nodes until the disk is full again. */
	fill(filler, 64 * 1024);
	for (k = 0; k < acked; k++) {
		ret = store_node_put(s, 0, k, text, 500, 500, 0);
		if (ret != 0)
			break;
		nodes++;
	}
	CHECKF(ret == -SHIRO_ERR_NOSPC || ret == -SHIRO_ERR_IO,
	    "node put: %s: %s", err_str(ret), store_errmsg(s));
	CHECKF(nodes > 0, "no node fit");
	store_close(&s);
	CHECK(unlink(filler) == 0);
	s = reopen_valid(home);
	CHECK_EQ_INT(store_count(s), acked);
	for (k = 0; k < nodes; k++) {
		uint32_t size;

		CHECK_EQ_INT(store_node_size(s, 0, k, &size), 0);
	}
	store_close(&s);
	umount2(mnt, MNT_DETACH);
	free(mnt);
	free(home);
	free(filler);
}

static const struct harness_test tests[] = {
    HT(a_failed_fsync_poisons_the_log_until_reopened),
    HT(a_short_write_leaves_no_half_line),
    HT(a_failed_index_commit_after_the_log_write_loses_nothing),
    HT(a_batch_half_written_says_what_is_durable),
    HT(a_full_disk_fails_cleanly_and_reopens_valid),
};

/* main - the tests, or the victim a test runs under a fault. */
int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "victim") == 0)
		return victim(argc, argv);
	return harness_main(
	    tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
