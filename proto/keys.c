/*
 * keys.c - CURVE keys on disk (see keys.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/keys.h"
#include "proto/sha256.h"
#include "proto/xmalloc.h"

#define KEYS_PAIR_HEAD "shiro-key/1\n"
#define KEYS_REMOTE_HEAD "shiro-remote/1\n"
#define KEYS_FILE_MAX 8192 /* bytes of any file read here */
#define KEYS_ENDPOINT_MAX 256 /* bytes of a remote's endpoint */

/* keys_why - say why into why (may be NULL). */
static void __attribute__((format(printf, 2, 3)))
keys_why(struct buf *why, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL)
		return;
	va_start(ap, fmt);
	buf_vprintf(why, fmt, ap);
	va_end(ap);
}

/* keys_path - home/which. */
char *
keys_path(const char *home, const char *which)
{
	return xasprintf("%s/%s", home, which);
}

/* keys_name_ok - whether name may name a key or a remote. */
int
keys_name_ok(const char *name)
{
	size_t k, len = name != NULL ? strlen(name) : 0;

	if (len == 0 || len > KEYS_NAME_MAX)
		return 0;
	for (k = 0; k < len; k++) {
		char c = name[k];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9');

		if (!alnum && (k == 0 || (c != '.' && c != '_' && c != '-')))
			return 0;
	}
	return 1;
}

/* keys_mkdirs - make dir and its missing parents with mode 0700. */
static int
keys_mkdirs(const char *dir)
{
	char *p = xstrdup(dir), *s;
	int rc = 0;

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			rc = err_from_errno(errno);
		*s = '/';
		if (rc < 0)
			goto out;
	}
	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		rc = err_from_errno(errno);
out:
	free(p);
	return rc;
}

/* keys_dirname - the directory part of path (caller frees). */
static char *
keys_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xasprintf("%.*s", (int)(slash - path), path);
}

/*
 * keys_read - the whole of the file path (at most KEYS_FILE_MAX - 1
 * bytes) into text, NUL-ended, *lenp its length; private: the file must
 * be this user's and closed to group and others.
 */
static int
keys_read(const char *path, int private, char text[KEYS_FILE_MAX], size_t *lenp,
    struct buf *why)
{
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = errno == ENOENT ? -SHIRO_ERR_NOENT
		    : errno == ELOOP ? -SHIRO_ERR_PERM
				     : err_from_errno(errno);
		keys_why(why, "%s: %s", path,
		    errno == ELOOP ? "a symbolic link" : strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		keys_why(why, "%s: not a regular file", path);
		rc = -SHIRO_ERR_PERM;
		goto out;
	}
	if (private && (st.st_uid != geteuid() || (st.st_mode & 077) != 0)) {
		keys_why(why,
		    "%s: must belong to this user and be closed to others "
		    "(chmod 600)",
		    path);
		rc = -SHIRO_ERR_PERM;
		goto out;
	}
	while (len < KEYS_FILE_MAX - 1) {
		n = read(fd, text + len, KEYS_FILE_MAX - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			keys_why(why, "%s: %s", path, strerror(errno));
			rc = -SHIRO_ERR_IO;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len == KEYS_FILE_MAX - 1) {
		keys_why(why, "%s: longer than any key file", path);
		rc = -SHIRO_ERR_CORRUPT;
		goto out;
	}
	text[len] = '\0';
	*lenp = len;
out:
	close(fd);
	if (rc < 0)
		explicit_bzero(text, KEYS_FILE_MAX);
	return rc;
}

/* keys_pair_parse - a key pair file's text. */
static int
keys_pair_parse(const char *text, size_t len, struct zsock_keypair *kp)
{
	char derived[ZSOCK_KEY_Z85 + 1];
	const char *p = text, *end = text + len;
	size_t hl = strlen(KEYS_PAIR_HEAD);

	if (len < hl || memcmp(text, KEYS_PAIR_HEAD, hl) != 0)
		return -SHIRO_ERR_CORRUPT;
	p += hl;
	if (zsock_key_field(&p, end, "public ", kp->pub) < 0 ||
	    zsock_key_field(&p, end, "secret ", kp->sec) < 0 || p != end)
		return -SHIRO_ERR_CORRUPT;
	if (zsock_key_public(kp->sec, derived) < 0 ||
	    strcmp(derived, kp->pub) != 0)
		return -SHIRO_ERR_CORRUPT;
	return 0;
}

/* keys_tmpname - a fresh name for a temporary file beside path. */
static char *
keys_tmpname(const char *path)
{
	unsigned long long r = 0;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (unsigned long long)getpid() * 2654435761u;
	return xasprintf("%s.tmp-%d-%llx", path, (int)getpid(), r);
}

/*
 * keys_publish - write text to a fresh temporary file beside path (mode
 * mode), make it durable and link it as path: -SHIRO_ERR_EXIST when path
 * exists already (replace: rename over it instead).
 */
static int
keys_publish(const char *path, const char *text, mode_t mode, int replace)
{
	char *tmp = keys_tmpname(path), *dir = keys_dirname(path);
	size_t len = strlen(text), off = 0;
	ssize_t n;
	int fd, dfd, rc = 0;

	fd = open(
	    tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		rc = err_from_errno(errno);
		goto out;
	}
	(void)fchmod(fd, mode);
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = -SHIRO_ERR_IO;
			break;
		}
		off += (size_t)n;
	}
	if (rc == 0 && fsync(fd) != 0)
		rc = -SHIRO_ERR_IO;
	close(fd);
	if (rc == 0 && replace && rename(tmp, path) != 0)
		rc = err_from_errno(errno);
	if (rc == 0 && !replace && link(tmp, path) != 0)
		rc = errno == EEXIST ? -SHIRO_ERR_EXIST : err_from_errno(errno);
	if (!replace || rc < 0)
		(void)unlink(tmp);
	if (rc == 0 &&
	    (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
out:
	free(tmp);
	free(dir);
	return rc;
}

/* keys_pair - load (or make) the key pair in path. */
int
keys_pair(
    const char *path, int create, struct zsock_keypair *kp, struct buf *why)
{
	char text[KEYS_FILE_MAX], *dir;
	struct buf w = BUF_INIT;
	size_t len = 0;
	int rc = -SHIRO_ERR_IO, tries;

	memset(kp, 0, sizeof(*kp));
	for (tries = 0; tries < 2; tries++) {
		buf_reset(&w);
		rc = keys_read(path, 1, text, &len, &w);
		if (rc == 0) {
			rc = keys_pair_parse(text, len, kp);
			explicit_bzero(text, sizeof(text));
			if (rc < 0) {
				explicit_bzero(kp, sizeof(*kp));
				keys_why(why, "%s: not a shiro key pair", path);
			}
			goto out;
		}
		if (rc != -SHIRO_ERR_NOENT || !create) {
			keys_why(why, "%s", w.data != NULL ? w.data : path);
			goto out;
		}
		dir = keys_dirname(path);
		rc = keys_mkdirs(dir);
		free(dir);
		if (rc == 0)
			rc = zsock_keypair(kp);
		if (rc < 0) {
			keys_why(why, "%s: cannot make a key pair: %s", path,
			    err_str(rc));
			goto out;
		}
		snprintf(text, sizeof(text),
		    KEYS_PAIR_HEAD "public %s\nsecret %s\n", kp->pub, kp->sec);
		rc = keys_publish(path, text, 0600, 0);
		explicit_bzero(text, sizeof(text));
		if (rc == 0)
			goto out;
		explicit_bzero(kp, sizeof(*kp));
		/* Another process made it first: read that one. */
		if (rc != -SHIRO_ERR_EXIST) {
			keys_why(
			    why, "%s: cannot write: %s", path, err_str(rc));
			goto out;
		}
	}
	keys_why(why, "%s: cannot be read or made", path);
	rc = -SHIRO_ERR_IO;
out:
	buf_free(&w);
	return rc;
}

/* keys_pub_parse - a public key's text. */
int
keys_pub_parse(const char *text, size_t len, char z85[ZSOCK_KEY_Z85 + 1])
{
	unsigned char bin[ZSOCK_KEY_BIN];

	if (len == ZSOCK_KEY_Z85 + 1 && text[ZSOCK_KEY_Z85] == '\n')
		len--;
	if (len != ZSOCK_KEY_Z85)
		return -SHIRO_ERR_CORRUPT;
	memcpy(z85, text, ZSOCK_KEY_Z85);
	z85[ZSOCK_KEY_Z85] = '\0';
	if (strlen(z85) != ZSOCK_KEY_Z85 || zsock_key_decode(z85, bin) < 0) {
		z85[0] = '\0';
		return -SHIRO_ERR_CORRUPT;
	}
	return 0;
}

/* keys_cmp - order entries by name. */
static int
keys_cmp(const void *a, const void *b)
{
	return strcmp(((const struct keys_entry *)a)->name,
	    ((const struct keys_entry *)b)->name);
}

/* keys_list_load - every key of dir. */
int
keys_list_load(const char *dir, struct keys_list *l, struct buf *notes)
{
	struct dirent *de;
	struct keys_entry e;
	char text[KEYS_FILE_MAX], *path;
	size_t len, cap = 0;
	DIR *d;

	memset(l, 0, sizeof(*l));
	d = opendir(dir);
	if (d == NULL) {
		if (errno == ENOENT)
			return 0;
		keys_why(notes, "%s: %s\n", dir, strerror(errno));
		return -SHIRO_ERR_IO;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		/* Temporary files of keys_add are not keys yet. */
		if (strstr(de->d_name, ".tmp-") != NULL)
			continue;
		if (!keys_name_ok(de->d_name)) {
			keys_why(notes,
			    "%s/%.64s: not a key's name (1-%d letters, digits, "
			    ". _ -), left out\n",
			    dir, de->d_name, KEYS_NAME_MAX);
			continue;
		}
		if (l->n == KEYS_MAX) {
			keys_why(notes, "%s: more than %d keys, %s left out\n",
			    dir, KEYS_MAX, de->d_name);
			continue;
		}
		path = xasprintf("%s/%s", dir, de->d_name);
		memset(&e, 0, sizeof(e));
		if (keys_read(path, 0, text, &len, NULL) != 0 ||
		    keys_pub_parse(text, len, e.z85) != 0) {
			keys_why(notes,
			    "%s: not a file holding one public key, left out\n",
			    path);
			free(path);
			continue;
		}
		free(path);
		memcpy(e.name, de->d_name, strlen(de->d_name) + 1);
		(void)zsock_key_decode(e.z85, e.bin);
		if (l->n == cap) {
			cap = cap ? cap * 2 : 8;
			l->v = xreallocarray(l->v, cap, sizeof(*l->v));
		}
		l->v[l->n++] = e;
	}
	closedir(d);
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), keys_cmp);
	return 0;
}

/* keys_list_free - forget the list. */
void
keys_list_free(struct keys_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* keys_list_find - the entry with this binary key, or NULL. */
const struct keys_entry *
keys_list_find(
    const struct keys_list *l, const unsigned char bin[ZSOCK_KEY_BIN])
{
	size_t k;

	for (k = 0; k < l->n; k++)
		if (memcmp(l->v[k].bin, bin, ZSOCK_KEY_BIN) == 0)
			return &l->v[k];
	return NULL;
}

/* keys_add - admit z85 as name in dir. */
int
keys_add(const char *dir, const char *name, const char *z85, struct buf *why)
{
	struct keys_list l;
	const struct keys_entry *e;
	unsigned char bin[ZSOCK_KEY_BIN];
	char *path, text[ZSOCK_KEY_Z85 + 2];
	int rc;

	if (!keys_name_ok(name)) {
		keys_why(why,
		    "\"%.64s\" is not a key's name: 1-%d letters, digits, . _ "
		    "or -, starting with a letter or digit",
		    name, KEYS_NAME_MAX);
		return -SHIRO_ERR_INVAL;
	}
	if (z85 == NULL || strlen(z85) != ZSOCK_KEY_Z85 ||
	    zsock_key_decode(z85, bin) < 0) {
		keys_why(why,
		    "not a public key: give the 40 characters that "
		    "shiro keys or shiro-worker --show-key printed");
		return -SHIRO_ERR_INVAL;
	}
	if ((rc = keys_mkdirs(dir)) < 0) {
		keys_why(why, "%s: %s", dir, err_str(rc));
		return rc;
	}
	if (keys_list_load(dir, &l, NULL) == 0 &&
	    (e = keys_list_find(&l, bin)) != NULL) {
		keys_why(why, "that key is admitted already as %s", e->name);
		keys_list_free(&l);
		return -SHIRO_ERR_EXIST;
	}
	keys_list_free(&l);
	path = xasprintf("%s/%s", dir, name);
	snprintf(text, sizeof(text), "%s\n", z85);
	rc = keys_publish(path, text, 0644, 0);
	if (rc == -SHIRO_ERR_EXIST)
		keys_why(why, "%s is taken: revoke it first", name);
	else if (rc < 0)
		keys_why(why, "%s: %s", path, err_str(rc));
	free(path);
	return rc;
}

/* keys_revoke - remove name from dir. */
int
keys_revoke(const char *dir, const char *name)
{
	char *path;
	int rc = 0, dfd;

	if (!keys_name_ok(name))
		return -SHIRO_ERR_NOENT;
	path = xasprintf("%s/%s", dir, name);
	if (unlink(path) != 0)
		rc = errno == ENOENT ? -SHIRO_ERR_NOENT : err_from_errno(errno);
	free(path);
	if (rc == 0 &&
	    (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return rc;
}

/* keys_fingerprint - a short hash of the key for logs and lists. */
void
keys_fingerprint(const unsigned char bin[ZSOCK_KEY_BIN], char out[KEYS_FP_LEN])
{
	uint8_t d[SHA256_LEN];
	int k;

	sha256(bin, ZSOCK_KEY_BIN, d);
	memcpy(out, "sha256:", 7);
	for (k = 0; k < 8; k++)
		snprintf(out + 7 + 2 * k, 3, "%02x", d[k]);
}

/* keys_endpoint_ok - a remote's endpoint: tcp://, printable, no space. */
static int
keys_endpoint_ok(const char *ep)
{
	size_t k, len = strlen(ep);

	if (len <= 6 || len > KEYS_ENDPOINT_MAX || strncmp(ep, "tcp://", 6))
		return 0;
	for (k = 0; k < len; k++)
		if (ep[k] <= ' ' || ep[k] > '~')
			return 0;
	return 1;
}

/* keys_workspace_ok - a remote's workspace (see keys.h). */
int
keys_workspace_ok(const char *ws)
{
	size_t k, len = strlen(ws);

	if (len == 0 || len > KEYS_WORKSPACE_MAX || ws[0] != '/')
		return 0;
	for (k = 0; k < len; k++)
		if ((unsigned char)ws[k] < 0x20 || ws[k] == 0x7f)
			return 0;
	return 1;
}

/* keys_remote_save - save a remote. */
int
keys_remote_save(const char *home, const char *name, const char *endpoint,
    const char *server, const char *workspace)
{
	unsigned char bin[ZSOCK_KEY_BIN];
	char *dir, *path, *text;
	int rc;

	if (!keys_name_ok(name) || !keys_endpoint_ok(endpoint) ||
	    zsock_key_decode(server, bin) < 0 ||
	    (workspace != NULL && !keys_workspace_ok(workspace)))
		return -SHIRO_ERR_INVAL;
	dir = keys_path(home, KEYS_REMOTES);
	if ((rc = keys_mkdirs(dir)) < 0) {
		free(dir);
		return rc;
	}
	path = xasprintf("%s/%s", dir, name);
	text = xasprintf(KEYS_REMOTE_HEAD "endpoint %s\nserver %s\n%s%s%s",
	    endpoint, server, workspace != NULL ? "workspace " : "",
	    workspace != NULL ? workspace : "", workspace != NULL ? "\n" : "");
	rc = keys_publish(path, text, 0600, 1);
	free(text);
	free(path);
	free(dir);
	return rc;
}

/* keys_remote_load - a saved remote. */
int
keys_remote_load(const char *home, const char *name, char **endpointp,
    char server[ZSOCK_KEY_Z85 + 1], char **workspacep, struct buf *why)
{
	char text[KEYS_FILE_MAX], *path, *nl;
	const char *p, *end;
	size_t len = 0, hl = strlen(KEYS_REMOTE_HEAD);
	int rc;

	*endpointp = NULL;
	if (workspacep != NULL)
		*workspacep = NULL;
	if (!keys_name_ok(name)) {
		keys_why(why, "\"%.64s\" is not a remote's name", name);
		return -SHIRO_ERR_INVAL;
	}
	path = xasprintf("%s/%s/%s", home, KEYS_REMOTES, name);
	rc = keys_read(path, 0, text, &len, why);
	if (rc < 0)
		goto out;
	rc = -SHIRO_ERR_CORRUPT;
	end = text + len;
	if (len < hl || memcmp(text, KEYS_REMOTE_HEAD, hl) != 0 ||
	    strncmp(text + hl, "endpoint ", 9) != 0) {
		keys_why(why, "%s: not a saved remote", path);
		goto out;
	}
	p = text + hl + 9;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (nl == NULL) {
		keys_why(why, "%s: not a saved remote", path);
		goto out;
	}
	*nl = '\0';
	if (!keys_endpoint_ok(p)) {
		keys_why(why, "%s: a bad endpoint", path);
		goto out;
	}
	*endpointp = xstrdup(p);
	p = nl + 1;
	if (zsock_key_field(&p, end, "server ", server) < 0) {
		keys_why(why, "%s: a bad server key", path);
		goto bad;
	}
	/* An optional last line: the workspace, a path on shirod's side. */
	if (p != end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if ((size_t)(end - p) < 10 ||
		    strncmp(p, "workspace ", 10) != 0 || nl == NULL ||
		    nl + 1 != end) {
			keys_why(why, "%s: not a saved remote", path);
			goto bad;
		}
		*nl = '\0';
		if (!keys_workspace_ok(p + 10)) {
			keys_why(why,
			    "%s: a bad workspace (an absolute path, at most "
			    "%d bytes, no control characters)",
			    path, KEYS_WORKSPACE_MAX);
			goto bad;
		}
		if (workspacep != NULL)
			*workspacep = xstrdup(p + 10);
	}
	rc = 0;
	goto out;
bad:
	free(*endpointp);
	*endpointp = NULL;
out:
	free(path);
	return rc;
}
