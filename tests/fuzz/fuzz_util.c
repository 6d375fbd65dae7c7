/*
 * fuzz_util.c - the scratch directory, file helpers and the tool runner
 * the fuzz targets share (see fuzz_util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/log.h"
#include "proto/xmalloc.h"
#include "tests/fuzz/fuzz_util.h"
#include "tools/tool.h"

/* A text no tool result may carry: it is the content of the secret
 * files of the workspace, which no tool reads. */
#define FUZZ_MARKER "fuzz-secret-7c1e94"

static char fuzz_dir[256];
static pid_t fuzz_dir_pid;

/* fuzz_rm_one - nftw callback: remove one entry. */
static int
fuzz_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);
	return 0;
}

/* fuzz_rmtree - remove path and everything under it. */
void
fuzz_rmtree(const char *path)
{
	(void)nftw(path, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* fuzz_cleanup - atexit: remove the scratch directory of this process. */
static void
fuzz_cleanup(void)
{
	if (fuzz_dir[0] != '\0' && fuzz_dir_pid == getpid())
		fuzz_rmtree(fuzz_dir);
}

/* fuzz_tmpdir - this process's scratch directory, removed at exit. */
const char *
fuzz_tmpdir(void)
{
	struct stat st;
	const char *base;

	if (fuzz_dir[0] != '\0' && fuzz_dir_pid == getpid())
		return fuzz_dir;
	base = getenv("TMPDIR");
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	else if (base == NULL || base[0] == '\0')
		base = "/tmp";
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/shiro-fuzz-XXXXXX", base);
	if (mkdtemp(fuzz_dir) == NULL)
		panic("mkdtemp %s: %s", fuzz_dir, strerror(errno));
	if (fuzz_dir_pid == 0)
		atexit(fuzz_cleanup);
	fuzz_dir_pid = getpid();
	return fuzz_dir;
}

/* fuzz_write - make path hold exactly data. */
void
fuzz_write(const char *path, const void *data, size_t len)
{
	size_t done = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		panic("open %s: %s", path, strerror(errno));
	while (done < len) {
		n = write(fd, (const char *)data + done, len - done);
		if (n <= 0)
			panic("write %s: %s", path, strerror(errno));
		done += (size_t)n;
	}
	close(fd);
}

/* fuzz_cstr - data as a C string, NULL when it holds a NUL byte. */
char *
fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s;

	if (memchr(data, '\0', size) != NULL)
		return NULL;
	s = xmalloc(size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* ---- the tool runner ---- */

/* The workspace's files: what every call starts from.  .env and id_rsa
 * are secret (never read, never written), .git is protected; all three
 * sit at the top, whose directory no call can move. */
static const struct {
	const char *path; /* relative to the workspace; "/" ends a dir */
	const char *text;
} fuzz_ws_files[] = {
    {"a.txt", "one\ntwo\nthree\nfour\nfive\n"},
    {"src/", NULL},
    {"src/main.c", "int\nmain(void)\n{\n\treturn 0;\n}\n"},
    {"src/noeol.txt", "no newline at the end"},
    {"src/crlf.txt", "dos\r\nline\r\n"},
    {"empty/", NULL},
    {".git/", NULL},
    {".git/config", "[core]\n\tbare = false\n"},
    {".git/HEAD", "ref: refs/heads/main\n"},
    {".env", "TOKEN=" FUZZ_MARKER "\n"},
    {"id_rsa", "-----BEGIN KEY-----\n" FUZZ_MARKER "\n"},
};

/* One entry of a snapshot: its path under the root and what changes
 * when anything writes it. */
struct fuzz_ent {
	char *path;
	mode_t mode;
	ino_t ino;
	off_t size;
	long long mtime_ns;
};

struct fuzz_snap {
	struct fuzz_ent *v;
	size_t n, cap;
};

static struct {
	int ready;
	char *root; /* the scratch root: ws/ and outside.txt */
	char *ws; /* root/ws */
	int wsfd;
	struct perm *perm;
	struct fuzz_snap base; /* the snapshot of a fresh workspace */
} fuzz_t;

/* The snapshot being filled by fuzz_snap_one (nftw has no argument). */
static struct fuzz_snap *fuzz_snap_cur;

/* fuzz_snap_one - nftw callback: record one entry. */
static int
fuzz_snap_one(
    const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct fuzz_snap *s = fuzz_snap_cur;
	size_t rl = strlen(fuzz_t.root);

	(void)flag;
	(void)ftw;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		s->v = xreallocarray(s->v, s->cap, sizeof(*s->v));
	}
	s->v[s->n].path = xstrdup(path[rl] == '/' ? path + rl + 1 : "");
	s->v[s->n].mode = st->st_mode;
	s->v[s->n].ino = st->st_ino;
	s->v[s->n].size = st->st_size;
	s->v[s->n].mtime_ns =
	    (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
	s->n++;
	return 0;
}

/* fuzz_ent_cmp - qsort order of snapshot entries: by path. */
static int
fuzz_ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fuzz_ent *)a)->path,
	    ((const struct fuzz_ent *)b)->path);
}

/* fuzz_snap_take - every entry under the root, sorted by path. */
static void
fuzz_snap_take(struct fuzz_snap *s)
{
	memset(s, 0, sizeof(*s));
	fuzz_snap_cur = s;
	if (nftw(fuzz_t.root, fuzz_snap_one, 16, FTW_PHYS) != 0)
		panic("nftw %s: %s", fuzz_t.root, strerror(errno));
	fuzz_snap_cur = NULL;
	qsort(s->v, s->n, sizeof(*s->v), fuzz_ent_cmp);
}

/* fuzz_snap_free - release s. */
static void
fuzz_snap_free(struct fuzz_snap *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* fuzz_snap_find - the entry of s called path, or NULL. */
static const struct fuzz_ent *
fuzz_snap_find(const struct fuzz_snap *s, const char *path)
{
	struct fuzz_ent key;

	memset(&key, 0, sizeof(key));
	key.path = (char *)path;
	return bsearch(&key, s->v, s->n, sizeof(*s->v), fuzz_ent_cmp);
}

/* fuzz_ent_same - a and b are the same, unchanged entry. */
static int
fuzz_ent_same(const struct fuzz_ent *a, const struct fuzz_ent *b)
{
	return a != NULL && b != NULL && a->mode == b->mode &&
	    a->ino == b->ino && a->size == b->size &&
	    a->mtime_ns == b->mtime_ns;
}

/* fuzz_ws_build - (re)make the workspace from fuzz_ws_files. */
static void
fuzz_ws_build(void)
{
	char path[512];
	size_t i, n;

	if (fuzz_t.wsfd >= 0)
		close(fuzz_t.wsfd);
	fuzz_rmtree(fuzz_t.ws);
	if (mkdir(fuzz_t.ws, 0700) != 0)
		panic("mkdir %s: %s", fuzz_t.ws, strerror(errno));
	for (i = 0; i < sizeof(fuzz_ws_files) / sizeof(fuzz_ws_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", fuzz_t.ws,
		    fuzz_ws_files[i].path);
		n = strlen(path);
		if (path[n - 1] == '/') {
			path[n - 1] = '\0';
			if (mkdir(path, 0700) != 0)
				panic("mkdir %s: %s", path, strerror(errno));
		} else {
			fuzz_write(path, fuzz_ws_files[i].text,
			    strlen(fuzz_ws_files[i].text));
		}
	}
	fuzz_t.wsfd = open(fuzz_t.ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fuzz_t.wsfd < 0)
		panic("open %s: %s", fuzz_t.ws, strerror(errno));
	fuzz_snap_free(&fuzz_t.base);
	fuzz_snap_take(&fuzz_t.base);
}

/* fuzz_tool_init - the scratch root, the workspace and the engine. */
static void
fuzz_tool_init(void)
{
	static const char *const rules[] = {"allow write", "allow bash"};
	char *why = NULL, *out;
	size_t i;

	if (fuzz_t.ready)
		return;
	fuzz_t.root = xasprintf("%s/tools", fuzz_tmpdir());
	fuzz_t.ws = xasprintf("%s/ws", fuzz_t.root);
	fuzz_t.wsfd = -1;
	if (mkdir(fuzz_t.root, 0700) != 0)
		panic("mkdir %s: %s", fuzz_t.root, strerror(errno));
	out = xasprintf("%s/outside.txt", fuzz_t.root);
	fuzz_write(out, "outside the workspace\n", 22);
	free(out);
	fuzz_t.perm = perm_new();
	perm_set_workspace(fuzz_t.perm, fuzz_t.ws);
	perm_set_yolo(fuzz_t.perm, 1);
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (perm_add(fuzz_t.perm, rules[i], &why) != 0)
			panic("rule %s: %s", rules[i], why);
	fuzz_ws_build();
	fuzz_t.ready = 1;
}

/* fuzz_ws_path - the workspace's absolute path. */
const char *
fuzz_ws_path(void)
{
	fuzz_tool_init();
	return fuzz_t.ws;
}

/* fuzz_guarded - rel (relative to the workspace, of type mode) is a
 * secret file or a protected path: a call may write it only if the
 * engine denied the call.  (A directory named like a secret file is
 * none: it is made on the way to another file.) */
static int
fuzz_guarded(const char *rel, mode_t mode)
{
	return (!S_ISDIR(mode) && perm_is_secret(rel)) ||
	    strcmp(rel, ".git") == 0 || strncmp(rel, ".git/", 5) == 0;
}

/* fuzz_check_changes - compare the workspace after a call with a fresh
 * one: nothing outside it may change, and a secret or protected path
 * only when the call was denied.  Returns nonzero when anything
 * changed. */
static int
fuzz_check_changes(struct fuzz_call *c)
{
	const struct fuzz_snap *b = &fuzz_t.base;
	const struct fuzz_ent *e, *o;
	struct fuzz_snap now;
	int changed = 0, denied = c->verdict.action == PERM_DENY;
	size_t i, k;

	fuzz_snap_take(&now);
	for (k = 0; k < 2; k++) {
		/* k 0: what is there now, against the fresh one; k 1:
		 * what the fresh one had, against now. */
		const struct fuzz_snap *x = k ? b : &now, *y = k ? &now : b;
		for (i = 0; i < x->n; i++) {
			e = &x->v[i];
			o = fuzz_snap_find(y, e->path);
			/* The directories whose entries calls add or remove
			 * change; the entries themselves are compared. */
			if (strcmp(e->path, "") == 0 ||
			    strcmp(e->path, "ws") == 0)
				continue;
			if (fuzz_ent_same(e, o))
				continue;
			if (S_ISDIR(e->mode) && o != NULL && S_ISDIR(o->mode) &&
			    e->ino == o->ino &&
			    !fuzz_guarded(e->path + 3, e->mode))
				continue;
			if (!changed)
				snprintf(
				    c->what, sizeof(c->what), "%s", e->path);
			changed = 1;
			if (strncmp(e->path, "ws/", 3) != 0)
				panic("%s outside the workspace changed",
				    e->path);
			if (!denied && fuzz_guarded(e->path + 3, e->mode))
				panic("%s changed by a call the engine "
				      "allowed (%s)",
				    e->path + 3, c->verdict.reason);
		}
	}
	fuzz_snap_free(&now);
	return changed;
}

/* fuzz_check_result - the shape every result document has. */
static void
fuzz_check_result(const char *name, json_t *res)
{
	json_t *ok = json_object_get(res, "ok"), *err;

	if (!json_is_object(res) || !json_is_boolean(ok))
		panic("%s: a result without a boolean ok", name);
	err = json_object_get(res, "error");
	if (json_is_false(ok) &&
	    (!json_is_string(err) || json_string_length(err) == 0))
		panic("%s: a failed result without an error text", name);
}

/* fuzz_tool_run - run one call and check what holds for every call. */
void
fuzz_tool_run(const char *name, json_t *args, struct fuzz_call *c)
{
	struct perm_verdict v2, v3;
	struct perm_turn *turn;
	struct tool_ctx ctx;
	char *argtext, *restext, *nametext;
	json_t *call;
	int subj, ok;

	fuzz_tool_init();
	memset(c, 0, sizeof(*c));
	turn = perm_turn_new();
	perm_check(fuzz_t.perm, turn, name, args, &c->verdict);
	perm_check(fuzz_t.perm, turn, name, args, &v2);
	perm_check(fuzz_t.perm, turn, name, args, &v3);
	perm_turn_destroy(&turn);
	if (c->verdict.reason[0] == '\0')
		panic("%s: a verdict without a reason", name);
	if (v2.action != c->verdict.action)
		panic("%s: the same call twice got %s then %s", name,
		    perm_action_name(c->verdict.action),
		    perm_action_name(v2.action));
	if (v3.action !=
	    (c->verdict.action == PERM_DENY ? PERM_DENY : PERM_ASK))
		panic("%s: the third same call got %s after %s", name,
		    perm_action_name(v3.action),
		    perm_action_name(c->verdict.action));

	subj = tool_subjects(name, args, &c->subjects);
	if ((subj == 0) != (c->subjects != NULL))
		panic("%s: tool_subjects returned %d with subjects %p", name,
		    subj, (void *)c->subjects);
	if (subj != 0 && c->verdict.action != PERM_DENY)
		panic("%s: no subjects, yet the engine said %s", name,
		    perm_action_name(c->verdict.action));
	if (c->subjects != NULL) {
		size_t i;
		json_t *s;
		if (json_array_size(c->subjects) == 0)
			panic("%s: an empty subject list", name);
		json_array_foreach(c->subjects, i, s)
		{
			if (!json_is_string(s))
				panic(
				    "%s: subject %zu is not a string", name, i);
		}
	}

	memset(&ctx, 0, sizeof(ctx));
	ctx.wsfd = fuzz_t.wsfd;
	ctx.wspath = fuzz_t.ws;
	if (tool_call(name, args, &ctx, &c->result) != 0 || c->result == NULL)
		panic("%s: tool_call refused a usable context", name);
	fuzz_check_result(name, c->result);
	ok = json_is_true(json_object_get(c->result, "ok"));
	if (ok && c->subjects == NULL)
		panic("%s: the call ran although it has no subjects", name);

	/* A marker the call itself carries may come back in an error.
	 * The name is looked at raw and written as JSON, like the result:
	 * a form feed before "uzz-" is written as a backslash and an f,
	 * which spells the marker in both. */
	call = json_string(name); /* NULL when name is not UTF-8 */
	nametext = call != NULL ? json_dumps(call, JSON_ENCODE_ANY) : NULL;
	json_decref(call);
	argtext = json_dumps(args, JSON_COMPACT);
	restext = json_dumps(c->result, JSON_COMPACT);
	if (argtext == NULL || restext == NULL)
		panic("%s: json_dumps failed", name);
	if (strstr(name, FUZZ_MARKER) == NULL &&
	    (nametext == NULL || strstr(nametext, FUZZ_MARKER) == NULL) &&
	    strstr(argtext, FUZZ_MARKER) == NULL &&
	    strstr(restext, FUZZ_MARKER) != NULL)
		panic("%s: the result shows a secret file's content", name);
	free(nametext);
	free(argtext);
	free(restext);

	c->changed = fuzz_check_changes(c);
	if (!ok && c->changed)
		panic("%s: a failed call changed %s: %s", name, c->what,
		    json_string_value(json_object_get(c->result, "error")));
}

/* fuzz_call_done - release c and rebuild the workspace if it changed. */
void
fuzz_call_done(struct fuzz_call *c)
{
	if (c->changed)
		fuzz_ws_build();
	json_decref(c->subjects);
	json_decref(c->result);
	memset(c, 0, sizeof(*c));
}
