/*
 * test_remote_keys - the CURVE keys on disk (proto/keys.c): key pairs
 * made on first use and refused when others could read them, public key
 * files read strictly, the lists of admitted keys, adding and revoking,
 * saved remotes, fingerprints.  Real files in a temporary directory; a
 * race of real processes for the first key pair.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/keys.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "tests/harness.h"

/* tk_write - write text to path with mode. */
static void
tk_write(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	CHECKF(fd >= 0, "open %s: %s", path, strerror(errno));
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	CHECK(fchmod(fd, mode) == 0);
	close(fd);
}

/* tk_pub - a fresh public key (Z85). */
static void
tk_pub(char out[ZSOCK_KEY_Z85 + 1])
{
	struct zsock_keypair kp;

	CHECK(zsock_keypair(&kp) == 0);
	memcpy(out, kp.pub, ZSOCK_KEY_Z85 + 1);
}

/* A pair is made on first use, 0600 in a 0700 directory, and read back
 * the same; it is refused when group or others may read it, when it is
 * a link, and when its text is not a pair. */
static void
pair_made_once_and_kept_private(void)
{
	const char *dir = harness_tmpdir();
	struct zsock_keypair a, b;
	struct buf why = BUF_INIT;
	char path[512], derived[ZSOCK_KEY_Z85 + 1], link_path[512], *text;
	struct stat st;

	snprintf(path, sizeof(path), "%s/home/keys/server.key", dir);
	CHECK_EQ_INT(keys_pair(path, 0, &a, NULL), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(keys_pair(path, 1, &a, &why), 0);
	CHECK(stat(path, &st) == 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0600);
	snprintf(link_path, sizeof(link_path), "%s/home/keys", dir);
	CHECK(stat(link_path, &st) == 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0700);
	CHECK(zsock_key_public(a.sec, derived) == 0);
	CHECK_EQ_STR(derived, a.pub);
	CHECK_EQ_INT(keys_pair(path, 1, &b, NULL), 0);
	CHECK_EQ_STR(a.pub, b.pub);
	CHECK_EQ_STR(a.sec, b.sec);

	/* Readable by the group: refused, with a reason. */
	CHECK(chmod(path, 0640) == 0);
	buf_reset(&why);
	CHECK_EQ_INT(keys_pair(path, 1, &b, &why), -SHIRO_ERR_PERM);
	CHECKF(why.data != NULL && strstr(why.data, "chmod 600") != NULL, "%s",
	    why.data ? why.data : "(no reason)");
	CHECK(chmod(path, 0600) == 0);

	/* A link to a pair is no pair. */
	snprintf(link_path, sizeof(link_path), "%s/link.key", dir);
	CHECK(symlink(path, link_path) == 0);
	CHECK_EQ_INT(keys_pair(link_path, 1, &b, NULL), -SHIRO_ERR_PERM);

	/* A public key that is not the secret key's, a missing line, a
	 * byte more: refused, and nothing is overwritten. */
	b = a;
	b.pub[0] = b.pub[0] == 'a' ? 'b' : 'a';
	text = xasprintf("shiro-key/1\npublic %s\nsecret %s\n", b.pub, a.sec);
	tk_write(path, text, 0600);
	free(text);
	CHECK_EQ_INT(keys_pair(path, 1, &b, NULL), -SHIRO_ERR_CORRUPT);
	text = xasprintf("shiro-key/1\npublic %s\n", a.pub);
	tk_write(path, text, 0600);
	free(text);
	CHECK_EQ_INT(keys_pair(path, 1, &b, NULL), -SHIRO_ERR_CORRUPT);
	text = xasprintf("shiro-key/1\npublic %s\nsecret %s\n\n", a.pub, a.sec);
	tk_write(path, text, 0600);
	free(text);
	CHECK_EQ_INT(keys_pair(path, 1, &b, NULL), -SHIRO_ERR_CORRUPT);
	CHECK(stat(path, &st) == 0 && st.st_size > 0);
	buf_free(&why);
}

/* Eight processes that make the same pair at once all get one pair. */
static void
pair_race_gives_one_pair(void)
{
	char path[512], got[8][ZSOCK_KEY_Z85 + 1];
	int fds[8][2], k, status;
	pid_t pids[8];

	snprintf(path, sizeof(path), "%s/keys/worker.key", harness_tmpdir());
	for (k = 0; k < 8; k++) {
		CHECK(pipe(fds[k]) == 0);
		pids[k] = fork();
		CHECK(pids[k] >= 0);
		if (pids[k] == 0) {
			struct zsock_keypair kp;

			close(fds[k][0]);
			if (keys_pair(path, 1, &kp, NULL) != 0)
				_exit(1);
			if (write(fds[k][1], kp.pub, ZSOCK_KEY_Z85) !=
			    ZSOCK_KEY_Z85)
				_exit(1);
			_exit(0);
		}
		close(fds[k][1]);
	}
	for (k = 0; k < 8; k++) {
		CHECK(waitpid(pids[k], &status, 0) == pids[k]);
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "maker %d failed", k);
		CHECK(read(fds[k][0], got[k], ZSOCK_KEY_Z85) == ZSOCK_KEY_Z85);
		got[k][ZSOCK_KEY_Z85] = '\0';
		close(fds[k][0]);
		CHECK_EQ_STR(got[k], got[0]);
	}
}

/* A public key is its 40 characters, one newline at most after them. */
static void
pub_parse_is_strict(void)
{
	char key[ZSOCK_KEY_Z85 + 1], out[ZSOCK_KEY_Z85 + 1], text[128];

	tk_pub(key);
	CHECK_EQ_INT(keys_pub_parse(key, strlen(key), out), 0);
	CHECK_EQ_STR(out, key);
	snprintf(text, sizeof(text), "%s\n", key);
	CHECK_EQ_INT(keys_pub_parse(text, strlen(text), out), 0);
	snprintf(text, sizeof(text), "%s\n\n", key);
	CHECK(keys_pub_parse(text, strlen(text), out) < 0);
	snprintf(text, sizeof(text), " %s", key);
	CHECK(keys_pub_parse(text, strlen(text), out) < 0);
	CHECK(keys_pub_parse(key, ZSOCK_KEY_Z85 - 1, out) < 0);
	snprintf(text, sizeof(text), "%sx", key);
	CHECK(keys_pub_parse(text, strlen(text), out) < 0);
	/* A byte outside the Z85 alphabet, and a NUL inside. */
	memcpy(text, key, sizeof(key));
	text[7] = '"';
	CHECK(keys_pub_parse(text, ZSOCK_KEY_Z85, out) < 0);
	text[7] = '\0';
	CHECK(keys_pub_parse(text, ZSOCK_KEY_Z85, out) < 0);
	/* Z85 of a value past 32 bits per group of five. */
	CHECK(keys_pub_parse("########################################",
		  ZSOCK_KEY_Z85, out) < 0);
}

/* The list: valid files sorted by name; bad names, bad contents, links
 * and temporary files left out, each bad one with a note. */
static void
list_reads_only_good_keys(void)
{
	char dir[512], path[600], a[ZSOCK_KEY_Z85 + 1], b[ZSOCK_KEY_Z85 + 1];
	struct keys_list l;
	struct buf notes = BUF_INIT;
	unsigned char bin[ZSOCK_KEY_BIN];

	snprintf(dir, sizeof(dir), "%s/keys/clients", harness_tmpdir());
	CHECK_EQ_INT(keys_list_load(dir, &l, NULL), 0);
	CHECK_EQ_INT(l.n, 0);
	tk_pub(a);
	tk_pub(b);
	CHECK_EQ_INT(keys_add(dir, "zed", a, NULL), 0);
	CHECK_EQ_INT(keys_add(dir, "alpha-1.x_y", b, NULL), 0);
	snprintf(path, sizeof(path), "%s/.hidden", dir);
	tk_write(path, a, 0644);
	snprintf(path, sizeof(path), "%s/with space", dir);
	tk_write(path, a, 0644);
	snprintf(path, sizeof(path), "%s/garbage", dir);
	tk_write(path, "not a key at all\n", 0644);
	snprintf(path, sizeof(path), "%s/zed.tmp-1-2", dir);
	tk_write(path, a, 0644);
	snprintf(path, sizeof(path), "%s/link", dir);
	CHECK(symlink("zed", path) == 0);
	snprintf(path, sizeof(path), "%s/sub", dir);
	CHECK(mkdir(path, 0700) == 0);
	CHECK_EQ_INT(keys_list_load(dir, &l, &notes), 0);
	CHECK_EQ_INT(l.n, 2);
	CHECK_EQ_STR(l.v[0].name, "alpha-1.x_y");
	CHECK_EQ_STR(l.v[0].z85, b);
	CHECK_EQ_STR(l.v[1].name, "zed");
	CHECK(zsock_key_decode(a, bin) == 0);
	CHECK(keys_list_find(&l, bin) == &l.v[1]);
	CHECKF(notes.data != NULL && strstr(notes.data, ".hidden") &&
		strstr(notes.data, "with space") &&
		strstr(notes.data, "garbage") && strstr(notes.data, "link") &&
		strstr(notes.data, "sub") && !strstr(notes.data, "tmp-"),
	    "notes: %s", notes.data ? notes.data : "(none)");
	keys_list_free(&l);
	buf_free(&notes);
}

/* Over KEYS_MAX files: the list stops at KEYS_MAX and says so. */
static void
list_is_bounded(void)
{
	char dir[512], name[32], key[ZSOCK_KEY_Z85 + 1];
	struct keys_list l;
	struct buf notes = BUF_INIT;
	int k;

	snprintf(dir, sizeof(dir), "%s/many", harness_tmpdir());
	for (k = 0; k < KEYS_MAX + 3; k++) {
		tk_pub(key);
		snprintf(name, sizeof(name), "k%04d", k);
		CHECK_EQ_INT(keys_add(dir, name, key, NULL), 0);
	}
	CHECK_EQ_INT(keys_list_load(dir, &l, &notes), 0);
	CHECK_EQ_INT(l.n, KEYS_MAX);
	CHECK(notes.data != NULL && strstr(notes.data, "more than") != NULL);
	keys_list_free(&l);
	buf_free(&notes);
}

/* add refuses a bad name, a bad key, a taken name and a key admitted
 * under another name; revoke removes, and says when there was none. */
static void
add_and_revoke(void)
{
	char dir[512], a[ZSOCK_KEY_Z85 + 1], b[ZSOCK_KEY_Z85 + 1];
	struct buf why = BUF_INIT;
	struct keys_list l;
	char longname[KEYS_NAME_MAX + 2];

	snprintf(dir, sizeof(dir), "%s/keys/workers", harness_tmpdir());
	tk_pub(a);
	tk_pub(b);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK_EQ_INT(keys_add(dir, "../x", a, NULL), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(keys_add(dir, "-x", a, NULL), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(keys_add(dir, "", a, NULL), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(keys_add(dir, longname, a, NULL), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(keys_add(dir, "w1", "short", NULL), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(keys_add(dir, "w1", a, NULL), 0);
	CHECK_EQ_INT(keys_add(dir, "w1", b, &why), -SHIRO_ERR_EXIST);
	CHECK(why.data != NULL && strstr(why.data, "taken") != NULL);
	buf_reset(&why);
	CHECK_EQ_INT(keys_add(dir, "w2", a, &why), -SHIRO_ERR_EXIST);
	CHECK(why.data != NULL && strstr(why.data, "as w1") != NULL);
	CHECK_EQ_INT(keys_revoke(dir, "w2"), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(keys_revoke(dir, "../w1"), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(keys_revoke(dir, "w1"), 0);
	CHECK_EQ_INT(keys_list_load(dir, &l, NULL), 0);
	CHECK_EQ_INT(l.n, 0);
	CHECK_EQ_INT(keys_add(dir, "w2", a, NULL), 0);
	buf_free(&why);
}

/* A saved remote reads back, with its workspace or without; a damaged
 * one is refused with a reason. */
static void
remote_saved_and_read(void)
{
	const char *home = harness_tmpdir();
	char key[ZSOCK_KEY_Z85 + 1], got[ZSOCK_KEY_Z85 + 1], path[512], *ep;
	char text[5200], *ws = NULL;
	struct buf why = BUF_INIT;
	struct stat st;

	tk_pub(key);
	CHECK_EQ_INT(
	    keys_remote_save(home, "box", "tcp://10.1.2.3:7000", key, NULL), 0);
	CHECK_EQ_INT(keys_remote_load(home, "box", &ep, got, &ws, NULL), 0);
	CHECK_EQ_STR(ep, "tcp://10.1.2.3:7000");
	CHECK_EQ_STR(got, key);
	CHECK(ws == NULL);
	free(ep);
	snprintf(path, sizeof(path), "%s/remotes/box", home);
	CHECK(stat(path, &st) == 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0600);
	/* Saved again, with a workspace: replaced. */
	CHECK_EQ_INT(
	    keys_remote_save(home, "box", "tcp://h:1", key, "/srv/a b/proj"),
	    0);
	CHECK_EQ_INT(keys_remote_load(home, "box", &ep, got, &ws, NULL), 0);
	CHECK_EQ_STR(ep, "tcp://h:1");
	CHECK_EQ_STR(ws, "/srv/a b/proj");
	free(ep);
	free(ws);
	/* A caller that does not want the workspace may pass NULL. */
	CHECK_EQ_INT(keys_remote_load(home, "box", &ep, got, NULL, NULL), 0);
	free(ep);
	CHECK_EQ_INT(keys_remote_save(home, "box", "ipc:///x", key, NULL),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(keys_remote_save(home, "box", "tcp://a b:1", key, NULL),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(keys_remote_save(home, "b/x", "tcp://h:1", key, NULL),
	    -SHIRO_ERR_INVAL);
	/* A workspace must be absolute, without control characters, and
	 * not over the limit. */
	CHECK_EQ_INT(keys_remote_save(home, "box", "tcp://h:1", key, "rel"),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(
	    keys_remote_save(home, "box", "tcp://h:1", key, "/a\nserver x"),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(keys_remote_save(home, "box", "tcp://h:1", key, ""),
	    -SHIRO_ERR_INVAL);
	memset(text, 'w', KEYS_WORKSPACE_MAX + 1);
	text[0] = '/';
	text[KEYS_WORKSPACE_MAX + 1] = '\0';
	CHECK_EQ_INT(keys_remote_save(home, "box", "tcp://h:1", key, text),
	    -SHIRO_ERR_INVAL);
	text[KEYS_WORKSPACE_MAX] = '\0';
	CHECK_EQ_INT(keys_remote_save(home, "box", "tcp://h:1", key, text), 0);
	CHECK_EQ_INT(keys_remote_load(home, "box", &ep, got, &ws, NULL), 0);
	CHECK_EQ_INT((int)strlen(ws), KEYS_WORKSPACE_MAX);
	free(ep);
	free(ws);
	CHECK_EQ_INT(keys_remote_load(home, "none", &ep, got, NULL, NULL),
	    -SHIRO_ERR_NOENT);
	tk_write(
	    path, "shiro-remote/1\nendpoint tcp://h:1\nserver short\n", 0600);
	CHECK_EQ_INT(keys_remote_load(home, "box", &ep, got, NULL, &why),
	    -SHIRO_ERR_CORRUPT);
	CHECK(ep == NULL);
	CHECK(why.data != NULL && strstr(why.data, "server key") != NULL);
	tk_write(path, "endpoint tcp://h:1\n", 0600);
	CHECK_EQ_INT(keys_remote_load(home, "box", &ep, got, NULL, NULL),
	    -SHIRO_ERR_CORRUPT);
	/* A damaged workspace line: relative, unterminated, another word,
	 * a line after it. */
	{
		static const char *const bad[] = {"workspace rel\n",
		    "workspace /a", "workdir /a\n", "workspace /a\nmore\n",
		    "workspace \n"};
		size_t k;

		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			snprintf(text, sizeof(text),
			    "shiro-remote/1\nendpoint tcp://h:1\nserver "
			    "%s\n%s",
			    key, bad[k]);
			tk_write(path, text, 0600);
			buf_reset(&why);
			ws = NULL;
			CHECKF(keys_remote_load(home, "box", &ep, got, &ws,
				   &why) == -SHIRO_ERR_CORRUPT,
			    "bad workspace line %zu was read", k);
			CHECK(ep == NULL && ws == NULL);
			CHECK(why.data != NULL);
		}
	}
	buf_free(&why);
}

/* The fingerprint is the SHA-256 of the binary key, first 8 bytes. */
static void
fingerprint_is_sha256(void)
{
	unsigned char zero[ZSOCK_KEY_BIN] = {0};
	char fp[KEYS_FP_LEN];

	keys_fingerprint(zero, fp);
	/* SHA-256 of 32 zero bytes starts 66687aadf862bd77. */
	CHECK_EQ_STR(fp, "sha256:66687aadf862bd77");
}

static const struct harness_test tests[] = {
    HT(pair_made_once_and_kept_private),
    HT(pair_race_gives_one_pair),
    HT(pub_parse_is_strict),
    HT(list_reads_only_good_keys),
    HT(list_is_bounded),
    HT(add_and_revoke),
    HT(remote_saved_and_read),
    HT(fingerprint_is_sha256),
};

HARNESS_MAIN(tests)
