#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "tools/vec.h"
#include "tools/match.h"
#include "tools/perm.h"
#include "tools/shwords.h"
#include "tools/tool.h"

#define PERM_DEPTH 8 /* nesting of sh -c, eval and substitutions */
#define PERM_REPEAT 3 /* the same call this often in a turn asks */
#define PERM_RULE_MAX 4096

struct perm_rule {
	enum perm_action action;
	char *target; /* tool name, kind name or "*" */
	char *pattern; /* NULL: every subject */
};

struct perm {
	struct perm_rule *rules;
	size_t n;
	char **protect;
	size_t nprotect;
	int yolo;
	char *wspath;
};

struct perm_turn {
	char **keys;
	unsigned *counts;
	size_t n;
};

/* perm_action_name - "allow", "ask" or "deny". */
const char *
perm_action_name(enum perm_action a)
{
	return a == PERM_ALLOW ? "allow" : a == PERM_ASK ? "ask" : "deny";
}

/* ---- secret files ---- */

/* Names of files that hold secrets, matched against the last name. */
static const char *const perm_secret_names[] = {
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
    "credentials",
    "credentials.json",
    "secring.*",
    "*.gpg",
    ".vault-token",
    "terraform.tfstate*",
};

/* Names that look like secret files but hold only examples. */
static const char *const perm_secret_exempt[] = {
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    "*.pub",
};

/* Directories whose whole content is secret. */
static const char *const perm_secret_dirs[] = {
    ".ssh",
    ".gnupg",
    ".aws",
    ".kube",
    ".docker",
    ".shiro",
};

/* perm_is_secret - nonzero when path names a secret file. */
int
perm_is_secret(const char *path)
{
	const char *base = strrchr(path, '/'), *p, *e;
	size_t i, l;

	base = base ? base + 1 : path;
	for (p = path; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchrnul(p, '/');
		l = (size_t)(e - p);
		if (*e == '\0')
			break;
		for (i = 0;
		     i < sizeof(perm_secret_dirs) / sizeof(perm_secret_dirs[0]);
		     i++)
			if (strlen(perm_secret_dirs[i]) == l &&
			    memcmp(perm_secret_dirs[i], p, l) == 0)
				return 1;
	}
	for (i = 0;
	     i < sizeof(perm_secret_exempt) / sizeof(perm_secret_exempt[0]);
	     i++)
		if (match_glob(perm_secret_exempt[i], base, 1))
			return 0;
	for (i = 0;
	     i < sizeof(perm_secret_names) / sizeof(perm_secret_names[0]); i++)
		if (match_glob(perm_secret_names[i], base, 1))
			return 1;
	return 0;
}

/* ---- the guard ---- */

struct perm_g {
	char *why;
	size_t len;
	const char *raw; /* the whole command line, for SQL and bombs */
};

/* perm_hit - record why the guard refused; always returns 1. */
static int
perm_hit(struct perm_g *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->why, g->len, fmt, ap);
	va_end(ap);
	return 1;
}

/* perm_base - the program name of a word: its last path component. */
static const char *
perm_base(const char *w)
{
	const char *s = strrchr(w, '/');

	return s ? s + 1 : w;
}

/* perm_in - nonzero when s is one of the NULL-terminated names. */
static int
perm_in(const char *s, const char *const *names)
{
	for (; *names != NULL; names++)
		if (strcmp(s, *names) == 0)
			return 1;
	return 0;
}

/* perm_long - nonzero when arg is "--name" or an abbreviation of it at
 * least min characters long (as getopt_long and git accept). */
static int
perm_long(const char *arg, const char *name, size_t min)
{
	size_t l;

	if (strncmp(arg, "--", 2) != 0)
		return 0;
	arg += 2;
	l = strcspn(arg, "=");
	return l >= min && l <= strlen(name) && strncmp(arg, name, l) == 0;
}

/* perm_short - nonzero when arg is a bundle of short options with c. */
static int
perm_short(const char *arg, char c)
{
	return arg[0] == '-' && arg[1] != '-' && arg[1] != '\0' &&
	    strchr(arg + 1, c) != NULL;
}

static const char *const perm_shells[] = {
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", NULL};
static const char *const perm_interps[] = {"sh", "bash", "zsh", "dash", "ksh",
    "mksh", "fish", "ash", "python", "python2", "python3", "perl", "ruby",
    "node", "php", "source", ".", "eval", NULL};
static const char *const perm_fetchers[] = {
    "curl", "wget", "fetch", "aria2c", "http", "lynx", NULL};
static const char *const perm_sql[] = {"psql", "mysql", "mariadb", "sqlite3",
    "sqlite", "sqlcmd", "clickhouse-client", "clickhouse", "cqlsh", "mongo",
    "mongosh", "duckdb", "cockroach", "pgcli", "mycli", "litecli", "usql",
    "sqlplus", "isql", "bq", NULL};

static int perm_guard_text(struct perm_g *g, const char *text, int depth);

/* perm_raw_device - nonzero when path is a block device or raw memory. */
static int
perm_raw_device(const char *p)
{
	static const char *const pats[] = {"/dev/sd*", "/dev/hd*", "/dev/vd*",
	    "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*", "/dev/dm-*", "/dev/md*",
	    "/dev/loop*", "/dev/sr*", "/dev/disk/*", "/dev/mapper/*",
	    "/dev/mem", "/dev/kmem", "/dev/port", "/dev/nbd*", "/dev/rbd*",
	    NULL};
	size_t i;

	for (i = 0; pats[i] != NULL; i++)
		if (match_glob(pats[i], p, 0))
			return 1;
	return 0;
}

/* perm_sql_kills - nonzero when text has DROP TABLE/DATABASE/...,
 * TRUNCATE or mongo's drop calls, in any case. */
static int
perm_sql_kills(const char *text)
{
	static const char *const objs[] = {"table", "database", "schema",
	    "keyspace", "view", "index", "user", "role", "owned", "collection",
	    NULL};
	char *low = xstrdup(text), *p;
	size_t i;
	int hit = 0;

	for (p = low; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	for (p = low; !hit && (p = strstr(p, "drop")) != NULL; p += 4) {
		char *q = p + 4;
		if (p > low && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		if (strncmp(q, "database(", 9) == 0 || strncmp(q, "(", 1) == 0)
			hit = 1; /* mongo: db.dropDatabase(), coll.drop() */
		if (!isspace((unsigned char)*q))
			continue;
		while (isspace((unsigned char)*q))
			q++;
		for (i = 0; objs[i] != NULL; i++)
			if (strncmp(q, objs[i], strlen(objs[i])) == 0 &&
			    !isalnum((unsigned char)q[strlen(objs[i])]))
				hit = 1;
	}
	for (p = low; !hit && (p = strstr(p, "truncate")) != NULL; p += 8)
		if ((p == low || !isalnum((unsigned char)p[-1])) &&
		    !isalnum((unsigned char)p[8]) && p[8] != '_')
			hit = 1;
	free(low);
	return hit;
}

/* perm_fork_bomb - nonzero when text defines a function that starts
 * itself twice, piped or in the background (":(){ :|:& };:"). */
static int
perm_fork_bomb(const char *text)
{
	struct buf b = BUF_INIT;
	const char *p;
	size_t i, j, k, nl, seen;
	int hit = 0, depth;

	for (p = text; *p; p++)
		if (!isspace((unsigned char)*p))
			buf_addc(&b, *p);
	if (b.data == NULL)
		return 0;
	/* Bounded: at most 256 definitions looked at, names of 63 bytes,
	 * bodies of 4 KiB, so a hostile line costs little. */
	for (i = 0, seen = 0; !hit && i + 3 <= b.len && seen < 256; i++) {
		char name[64];
		if (strncmp(b.data + i, "(){", 3) != 0 || i == 0)
			continue;
		seen++;
		for (k = i; k > 0 && i - k < sizeof(name) &&
		     !strchr(";&|(){}", b.data[k - 1]);
		     k--)
			;
		nl = i - k;
		if (nl == 0 || nl >= sizeof(name))
			continue;
		memcpy(name, b.data + k, nl);
		name[nl] = '\0';
		if (nl > 8 && strncmp(name, "function", 8) == 0)
			memmove(name, name + 8, nl - 7), nl -= 8;
		/* The body, up to its closing brace. */
		for (j = i + 3, depth = 1;
		     j < b.len && depth > 0 && j - i < 4096; j++)
			depth += b.data[j] == '{' ? 1
			    : b.data[j] == '}'	  ? -1
						  : 0;
		{
			char *body = xstrndup(b.data + i + 3, j - i - 3);
			char *pipe_ = xasprintf("%s|%s", name, name);
			char *bg = xasprintf("%s&", name);
			if (strstr(body, pipe_) || strstr(body, bg))
				hit = 1;
			free(body);
			free(pipe_);
			free(bg);
		}
	}
	buf_free(&b);
	return hit;
}

/* perm_has_download - nonzero when word runs a downloader inside a
 * substitution ("$(curl ...)", "<(wget ...)", "`curl ...`"). */
static int
perm_has_download(const char *word)
{
	size_t i;

	if (!strstr(word, "$(") && !strstr(word, "<(") && !strchr(word, '`'))
		return 0;
	for (i = 0; perm_fetchers[i] != NULL; i++) {
		const char *p = word;
		size_t l = strlen(perm_fetchers[i]);
		while ((p = strstr(p, perm_fetchers[i])) != NULL) {
			if ((p == word || strchr("($`/ \t;|&", p[-1])) &&
			    strchr(" \t)`;|&", p[l] ? p[l] : ' '))
				return 1;
			p += l;
		}
	}
	return 0;
}

/* perm_reads_stdin - nonzero when the interpreter argv[0..argc) takes
 * its program from standard input (no script, no -c, -m or -e). */
static int
perm_reads_stdin(char **argv, size_t argc)
{
	size_t i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-") == 0 || strcmp(a, "-s") == 0 ||
		    strcmp(a, "--") == 0)
			return 1;
		if (a[0] != '-')
			return 0;
		if (perm_short(a, 'c') || perm_short(a, 'm') ||
		    perm_short(a, 'e') || perm_short(a, 'E'))
			return 0;
	}
	return 1;
}

/* perm_join - argv[from..argc) joined with spaces (caller frees). */
static char *
perm_join(char **argv, size_t from, size_t argc)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = from; i < argc; i++) {
		if (i > from)
			buf_addc(&b, ' ');
		buf_adds(&b, argv[i]);
	}
	if (b.data == NULL)
		buf_adds(&b, "");
	return buf_steal(&b, NULL);
}

/* perm_skip_opts - index of the first operand after options of a
 * wrapper; with_arg lists options that take a separate argument. */
static size_t
perm_skip_opts(char **argv, size_t argc, size_t i, const char *with_arg)
{
	while (i < argc && argv[i][0] == '-' && argv[i][1] != '\0') {
		if (strcmp(argv[i], "--") == 0)
			return i + 1;
		if (argv[i][1] != '-' && argv[i][2] == '\0' &&
		    strchr(with_arg, argv[i][1]) != NULL)
			i++;
		i++;
	}
	return i;
}

static int perm_guard_argv(
    struct perm_g *g, char **argv, size_t argc, int depth);

/* perm_guard_git - the git rules, after git's own global options. */
static int
perm_guard_git(struct perm_g *g, char **argv, size_t argc)
{
	size_t i = 1, j;
	const char *sub;
	int del = 0, force = 0;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "-C") == 0 || strcmp(argv[i], "-c") == 0 ||
		    strcmp(argv[i], "--git-dir") == 0 ||
		    strcmp(argv[i], "--work-tree") == 0 ||
		    strcmp(argv[i], "--namespace") == 0)
			i++;
		i++;
	}
	if (i >= argc)
		return 0;
	sub = argv[i];
	for (j = i + 1; j < argc; j++) {
		const char *a = argv[j];
		if (strcmp(sub, "reset") == 0 && perm_long(a, "hard", 2))
			return perm_hit(g, "git reset --hard discards work");
		if (strcmp(sub, "clean") == 0 &&
		    (perm_short(a, 'f') || perm_long(a, "force", 2)))
			return perm_hit(
			    g, "git clean -f deletes untracked files");
		if (strcmp(sub, "push") == 0 &&
		    (perm_short(a, 'f') || perm_long(a, "force", 3) ||
			perm_long(a, "force-with-lease", 7) ||
			perm_long(a, "mirror", 2) || a[0] == '+' ||
			(a[0] != '-' && strstr(a, ":+") != NULL)))
			return perm_hit(g,
			    "a force push rewrites remote "
			    "history");
		if (strcmp(sub, "branch") == 0) {
			if (perm_short(a, 'D'))
				return perm_hit(g,
				    "git branch -D deletes an "
				    "unmerged branch");
			if (perm_short(a, 'd') || perm_long(a, "delete", 3))
				del = 1;
			if (perm_short(a, 'f') || perm_long(a, "force", 3))
				force = 1;
		}
	}
	if (del && force)
		return perm_hit(g,
		    "git branch --delete --force deletes an "
		    "unmerged branch");
	return 0;
}

/* perm_guard_chmod - chmod giving everyone everything (777). */
static int
perm_guard_chmod(struct perm_g *g, char **argv, size_t argc)
{
	size_t i;

	for (i = 1; i < argc; i++) {
		const char *m = argv[i];
		char *end;
		unsigned long v;
		if (m[0] == '-' && !isdigit((unsigned char)m[1]))
			continue; /* -R, -v, --recursive, --reference=... */
		if (m[0] == '-' && isdigit((unsigned char)m[1]))
			m++;
		if (isdigit((unsigned char)m[0])) {
			v = strtoul(m, &end, 8);
			if (*end == '\0' && (v & 0777) == 0777)
				return perm_hit(g,
				    "chmod 777 makes files "
				    "writable by everyone");
			return 0;
		}
		/* Symbolic: a clause giving others (a, o or nobody named)
		 * read, write and execute. */
		{
			char *copy = xstrdup(m), *save = NULL, *c;
			int hit = 0;
			for (c = strtok_r(copy, ",", &save); c;
			     c = strtok_r(NULL, ",", &save)) {
				size_t w = strspn(c, "ugoa");
				int others = w == 0 || memchr(c, 'a', w) ||
				    memchr(c, 'o', w);
				if (others && (c[w] == '+' || c[w] == '=') &&
				    strchr(c + w, 'r') && strchr(c + w, 'w') &&
				    strchr(c + w, 'x'))
					hit = 1;
			}
			free(copy);
			if (hit)
				return perm_hit(g,
				    "chmod a+rwx makes files "
				    "writable by everyone");
			return 0;
		}
	}
	return 0;
}

/* perm_guard_argv - the rules for one simple command's words. */
static int
perm_guard_argv(struct perm_g *g, char **argv, size_t argc, int depth)
{
	static const char *const keywords[] = {"if", "then", "else", "elif",
	    "do", "while", "until", "!", "{", "}", "fi", "done", "esac",
	    "coproc", NULL};
	const char *prog;
	size_t i = 0, j;

	if (depth > PERM_DEPTH)
		return perm_hit(g, "the command nests too deeply to check");
	/* Assignments and reserved words before the program. */
	while (i < argc &&
	    (perm_in(argv[i], keywords) ||
		(strchr(argv[i], '=') &&
		    (isalpha((unsigned char)argv[i][0]) || argv[i][0] == '_') &&
		    strspn(argv[i],
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"abcdefghijklmnopqrstuvwxyz"
			"0123456789_") ==
			(size_t)(strchr(argv[i], '=') - argv[i]))))
		i++;
	/* "function NAME { BODY": the body's words are the command. */
	if (i < argc && strcmp(argv[i], "function") == 0) {
		i = i + 2 < argc ? i + 2 : argc;
		return perm_guard_argv(g, argv + i, argc - i, depth + 1);
	}
	if (i >= argc)
		return 0;
	argv += i;
	argc -= i;
	if (perm_has_download(argv[0]))
		return perm_hit(
		    g, "runs the output of a download as a command");
	prog = perm_base(argv[0]);
	if (perm_in(prog, perm_interps))
		for (j = 1; j < argc; j++)
			if (perm_has_download(argv[j]))
				return perm_hit(g,
				    "%s runs the output of a "
				    "download",
				    prog);
	if (strcmp(prog, "for") == 0 || strcmp(prog, "case") == 0 ||
	    strcmp(prog, "select") == 0)
		return 0;

	/* Wrappers that run the rest of their words as a command. */
	if (strcmp(prog, "sudo") == 0 || strcmp(prog, "doas") == 0)
		j = perm_skip_opts(argv, argc, 1, "ugpChDrtUTRa");
	else if (strcmp(prog, "env") == 0) {
		for (j = 1; j < argc; j++) {
			if (strcmp(argv[j], "-S") == 0 && j + 1 < argc)
				return perm_guard_text(
				    g, argv[j + 1], depth + 1);
			if (strncmp(argv[j], "--split-string=", 15) == 0)
				return perm_guard_text(
				    g, argv[j] + 15, depth + 1);
			if (strcmp(argv[j], "-u") == 0 ||
			    strcmp(argv[j], "-C") == 0)
				j++;
			else if (argv[j][0] != '-' && !strchr(argv[j], '='))
				break;
		}
	} else if (strcmp(prog, "command") == 0 ||
	    strcmp(prog, "builtin") == 0) {
		if (argc > 1 &&
		    (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "-V") == 0))
			return 0;
		j = perm_skip_opts(argv, argc, 1, "");
	} else if (strcmp(prog, "exec") == 0)
		j = perm_skip_opts(argv, argc, 1, "a");
	else if (strcmp(prog, "nohup") == 0 || strcmp(prog, "setsid") == 0 ||
	    strcmp(prog, "time") == 0 || strcmp(prog, "unbuffer") == 0 ||
	    strcmp(prog, "stdbuf") == 0 || strcmp(prog, "nice") == 0 ||
	    strcmp(prog, "ionice") == 0 || strcmp(prog, "chrt") == 0 ||
	    strcmp(prog, "taskset") == 0 || strcmp(prog, "strace") == 0)
		j = perm_skip_opts(argv, argc, 1, "noeicpsuE");
	else if (strcmp(prog, "timeout") == 0) {
		j = perm_skip_opts(argv, argc, 1, "sk");
		j++; /* the duration */
	} else if (strcmp(prog, "xargs") == 0)
		j = perm_skip_opts(argv, argc, 1, "adEIiLlnPs");
	else if (strcmp(prog, "flock") == 0) {
		j = perm_skip_opts(argv, argc, 1, "wEc");
		j++; /* the lock file */
		if (j < argc && strcmp(argv[j - 1], "-c") == 0)
			return perm_guard_text(g, argv[j], depth + 1);
	} else if (strcmp(prog, "watch") == 0) {
		j = perm_skip_opts(argv, argc, 1, "nd");
		if (j < argc) {
			char *t = perm_join(argv, j, argc);
			int r = perm_guard_text(g, t, depth + 1);
			free(t);
			return r;
		}
		return 0;
	} else if (strcmp(prog, "eval") == 0) {
		char *t = perm_join(argv, 1, argc);
		int r = perm_guard_text(g, t, depth + 1);
		free(t);
		return r;
	} else if (strcmp(prog, "su") == 0) {
		for (j = 1; j + 1 < argc; j++)
			if (strcmp(argv[j], "-c") == 0 ||
			    strcmp(argv[j], "--command") == 0)
				return perm_guard_text(
				    g, argv[j + 1], depth + 1);
		return 0;
	} else if (perm_in(prog, perm_shells)) {
		if (strcmp(prog, "busybox") == 0 && argc > 1)
			return perm_guard_argv(
			    g, argv + 1, argc - 1, depth + 1);
		/* sh -c SCRIPT (the c may be bundled: -lc, -ec). */
		for (j = 1; j < argc; j++) {
			if (argv[j][0] != '-' || strcmp(argv[j], "--") == 0)
				break;
			if (perm_short(argv[j], 'c')) {
				size_t k = j + 1;
				while (k < argc && argv[k][0] == '-' &&
				    argv[k][1] != '\0')
					k++;
				if (k < argc)
					return perm_guard_text(
					    g, argv[k], depth + 1);
				return 0;
			}
		}
		return 0;
	} else
		j = 0;
	if (j > 0) {
		if (j >= argc)
			return 0;
		return perm_guard_argv(g, argv + j, argc - j, depth + 1);
	}

	if (strcmp(prog, "rm") == 0) {
		for (j = 1; j < argc; j++) {
			const char *a = argv[j];
			if (strcmp(a, "--") == 0)
				break;
			if (perm_short(a, 'r') || perm_short(a, 'R') ||
			    perm_short(a, 'f') ||
			    perm_long(a, "recursive", 3) ||
			    perm_long(a, "force", 1) ||
			    perm_long(a, "no-preserve-root", 1))
				return perm_hit(g,
				    "rm -r / rm -f removes files "
				    "for good");
		}
		return 0;
	}
	if (strcmp(prog, "git") == 0)
		return perm_guard_git(g, argv, argc);
	if (strncmp(prog, "mkfs", 4) == 0 || strcmp(prog, "mke2fs") == 0 ||
	    strcmp(prog, "mkswap") == 0 || strcmp(prog, "wipefs") == 0)
		return perm_hit(g, "%s destroys a file system", prog);
	if (strcmp(prog, "dd") == 0) {
		for (j = 1; j < argc; j++)
			if (strncmp(argv[j], "of=/dev/", 8) == 0 &&
			    strcmp(argv[j], "of=/dev/null") != 0 &&
			    strcmp(argv[j], "of=/dev/zero") != 0 &&
			    strcmp(argv[j], "of=/dev/stdout") != 0 &&
			    strcmp(argv[j], "of=/dev/stderr") != 0 &&
			    strncmp(argv[j], "of=/dev/fd/", 11) != 0 &&
			    strcmp(argv[j], "of=/dev/tty") != 0)
				return perm_hit(g,
				    "dd onto a device overwrites "
				    "it");
		return 0;
	}
	if (strcmp(prog, "tee") == 0 || strcmp(prog, "cp") == 0 ||
	    strcmp(prog, "shred") == 0 || strcmp(prog, "cat") == 0) {
		for (j = 1; j < argc; j++)
			if (perm_raw_device(argv[j]) &&
			    (strcmp(prog, "cat") != 0))
				return perm_hit(g,
				    "%s onto a raw device "
				    "overwrites it",
				    prog);
		return 0;
	}
	if (strcmp(prog, "chmod") == 0)
		return perm_guard_chmod(g, argv, argc);
	if (strcmp(prog, "shutdown") == 0 || strcmp(prog, "reboot") == 0 ||
	    strcmp(prog, "halt") == 0 || strcmp(prog, "poweroff") == 0)
		return perm_hit(g, "%s stops the machine", prog);
	if (strcmp(prog, "systemctl") == 0 || strcmp(prog, "loginctl") == 0) {
		static const char *const stops[] = {"poweroff", "reboot",
		    "halt", "kexec", "emergency", "rescue", "soft-reboot",
		    NULL};
		for (j = 1; j < argc; j++)
			if (perm_in(argv[j], stops))
				return perm_hit(g,
				    "systemctl %s stops the "
				    "machine",
				    argv[j]);
		return 0;
	}
	if ((strcmp(prog, "init") == 0 || strcmp(prog, "telinit") == 0) &&
	    argc > 1 &&
	    (strcmp(argv[1], "0") == 0 || strcmp(argv[1], "6") == 0))
		return perm_hit(g, "%s %s stops the machine", prog, argv[1]);
	if (strcmp(prog, "find") == 0) {
		for (j = 1; j < argc; j++)
			if (strcmp(argv[j], "-exec") == 0 ||
			    strcmp(argv[j], "-execdir") == 0 ||
			    strcmp(argv[j], "-ok") == 0 ||
			    strcmp(argv[j], "-okdir") == 0) {
				size_t k = j + 1;
				while (k < argc && strcmp(argv[k], ";") != 0 &&
				    strcmp(argv[k], "+") != 0)
					k++;
				if (k > j + 1 &&
				    perm_guard_argv(
					g, argv + j + 1, k - j - 1, depth + 1))
					return 1;
				j = k;
			}
		return 0;
	}
	return 0;
}

/* perm_guard_words - the rules over a parsed command line. */
static int
perm_guard_words(struct perm_g *g, struct shwords *w, int depth)
{
	size_t i, j, start;

	for (i = 0; i < w->n; i++) {
		struct shwords_cmd *c = &w->cmds[i];
		for (j = 0; j < c->nredir; j++)
			if (strchr(c->redirs[j].op, '>') &&
			    c->redirs[j].target != NULL &&
			    perm_raw_device(c->redirs[j].target))
				return perm_hit(g,
				    "a redirect onto a raw "
				    "device overwrites it");
		if (c->argc > 0 && perm_guard_argv(g, c->argv, c->argc, depth))
			return 1;
		if (c->argc > 0 && c->heredoc != NULL &&
		    perm_in(perm_base(c->argv[0]), perm_shells) &&
		    perm_reads_stdin(c->argv, c->argc) &&
		    perm_guard_text(g, c->heredoc, depth + 1))
			return 1;
		if (c->argc > 0 && perm_in(perm_base(c->argv[0]), perm_sql) &&
		    perm_sql_kills(g->raw))
			return perm_hit(g,
			    "DROP or TRUNCATE in an SQL client "
			    "destroys data");
	}
	/* A download piped into an interpreter that reads its program
	 * from the pipe. */
	for (start = 0; start < w->n; start = i + 1) {
		int fetch = 0;
		for (i = start; i < w->n; i++) {
			struct shwords_cmd *c = &w->cmds[i];
			const char *p;
			size_t k = 0;
			while (k < c->argc &&
			    (strcmp(c->argv[k], "sudo") == 0 ||
				strcmp(c->argv[k], "env") == 0 ||
				strchr(c->argv[k], '=') != NULL ||
				c->argv[k][0] == '-'))
				k++;
			p = k < c->argc ? perm_base(c->argv[k]) : "";
			if (perm_in(p, perm_fetchers))
				fetch = 1;
			else if (fetch && i > start &&
			    perm_in(p, perm_interps) &&
			    perm_reads_stdin(c->argv + k, c->argc - k))
				return perm_hit(g,
				    "a download piped into %s runs "
				    "unseen code",
				    p);
			if (!c->piped)
				break;
		}
	}
	for (i = 0; i < w->nsubs; i++)
		if (perm_guard_text(g, w->subs[i], depth + 1))
			return 1;
	return 0;
}

/* perm_guard_text - parse text and apply the rules. */
static int
perm_guard_text(struct perm_g *g, const char *text, int depth)
{
	struct shwords w;
	char *why = NULL;
	int r;

	if (depth > PERM_DEPTH)
		return perm_hit(g, "the command nests too deeply to check");
	if (perm_fork_bomb(text))
		return perm_hit(g, "a fork bomb");
	shwords_parse(text, &w, &why);
	r = perm_guard_words(g, &w, depth);
	shwords_free(&w);
	free(why);
	return r;
}

/* perm_guard - nonzero when command is refused as irreversible. */
int
perm_guard(const char *command, char *why, size_t len)
{
	struct perm_g g;
	char dummy[8];

	g.why = why ? why : dummy;
	g.len = why ? len : sizeof(dummy);
	g.raw = command;
	if (g.len > 0)
		g.why[0] = '\0';
	return perm_guard_text(&g, command, 0);
}

/* ---- rules ---- */

/* perm_new - an engine with no rules, ".git" protected. */
struct perm *
perm_new(void)
{
	struct perm *p = xcalloc(1, sizeof(*p));
	char *why = NULL;

	perm_protect(p, ".git", &why);
	perm_protect(p, ".git/*", &why);
	free(why);
	return p;
}

/* perm_clear - drop every rule, protect pattern and setting of p. */
static void
perm_clear(struct perm *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->rules[i].target);
		free(p->rules[i].pattern);
	}
	for (i = 0; i < p->nprotect; i++)
		free(p->protect[i]);
	free(p->rules);
	free(p->protect);
	p->rules = NULL;
	p->protect = NULL;
	p->n = p->nprotect = 0;
}

/* perm_destroy - free *p and set it to NULL. */
void
perm_destroy(struct perm **pp)
{
	if (*pp == NULL)
		return;
	perm_clear(*pp);
	free((*pp)->wspath);
	free(*pp);
	*pp = NULL;
}

/* perm_set_yolo - turn the rules' ask into allow. */
void
perm_set_yolo(struct perm *p, int on)
{
	p->yolo = on != 0;
}

/* perm_set_workspace - the workspace path, for absolute subjects. */
void
perm_set_workspace(struct perm *p, const char *path)
{
	free(p->wspath);
	p->wspath = path ? xstrdup(path) : NULL;
}

/* perm_target_ok - nonzero when t names a tool, a kind or "*". */
static int
perm_target_ok(const char *t)
{
	return strcmp(t, "*") == 0 || strcmp(t, "read") == 0 ||
	    strcmp(t, "write") == 0 || strcmp(t, "exec") == 0 ||
	    tool_find(t) != NULL;
}

/* perm_add - parse one rule and append it. */
int
perm_add(struct perm *p, const char *rule, char **why)
{
	struct perm_rule r = {PERM_ALLOW, NULL, NULL};
	const char *s = rule, *t, *open, *end;
	size_t l;

	*why = NULL;
	if (rule == NULL || strlen(rule) > PERM_RULE_MAX) {
		*why = xstrdup("a rule must be a string of reasonable length");
		return -SHIRO_ERR_INVAL;
	}
	while (isspace((unsigned char)*s))
		s++;
	l = strcspn(s, " \t");
	if (l == 5 && strncmp(s, "allow", 5) == 0)
		r.action = PERM_ALLOW;
	else if (l == 3 && strncmp(s, "ask", 3) == 0)
		r.action = PERM_ASK;
	else if (l == 4 && strncmp(s, "deny", 4) == 0)
		r.action = PERM_DENY;
	else {
		*why = xasprintf("rule \"%s\": the action must be allow, ask "
				 "or deny",
		    rule);
		return -SHIRO_ERR_INVAL;
	}
	s += l;
	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	open = memchr(s, '(', (size_t)(end - s));
	t = open ? open : end;
	if (t == s || memchr(s, ' ', (size_t)(t - s)) ||
	    memchr(s, '\t', (size_t)(t - s))) {
		*why = xasprintf("rule \"%s\": expected ACTION TARGET or "
				 "ACTION TARGET(PATTERN)",
		    rule);
		return -SHIRO_ERR_INVAL;
	}
	r.target = xstrndup(s, (size_t)(t - s));
	if (!perm_target_ok(r.target)) {
		*why = xasprintf("rule \"%s\": \"%s\" is not a tool, a kind "
				 "(read, write, exec) or *",
		    rule, r.target);
		goto bad;
	}
	if (open != NULL) {
		if (end[-1] != ')' || end - 1 <= open + 1) {
			*why = xasprintf("rule \"%s\": the pattern must be "
					 "non-empty and end with \")\"",
			    rule);
			goto bad;
		}
		r.pattern = xstrndup(open + 1, (size_t)(end - 1 - open - 1));
		if (!match_valid(r.pattern)) {
			*why = xasprintf("rule \"%s\": the pattern is not "
					 "well formed",
			    rule);
			goto bad;
		}
	}
	p->rules = vec_room(p->rules, p->n, sizeof(*p->rules));
	p->rules[p->n++] = r;
	return 0;
bad:
	free(r.target);
	free(r.pattern);
	return -SHIRO_ERR_INVAL;
}

/* perm_protect - never allow writes to paths matching pattern. */
int
perm_protect(struct perm *p, const char *pattern, char **why)
{
	*why = NULL;
	if (pattern == NULL || pattern[0] == '\0' || !match_valid(pattern)) {
		*why = xasprintf("protect pattern \"%s\" is not well formed",
		    pattern ? pattern : "");
		return -SHIRO_ERR_INVAL;
	}
	p->protect = vec_room(p->protect, p->nprotect, sizeof(*p->protect));
	p->protect[p->nprotect++] = xstrdup(pattern);
	return 0;
}

/* perm_load - read {"rules", "protect", "yolo"}, all or nothing. */
int
perm_load(struct perm *p, json_t *cfg, char **why)
{
	struct perm *n = perm_new();
	json_t *v, *rules, *protect, *yolo;
	size_t i;
	int r = 0;

	*why = NULL;
	if (!json_is_object(cfg)) {
		*why = xstrdup("permissions must be a JSON object");
		r = -SHIRO_ERR_INVAL;
		goto out;
	}
	rules = json_object_get(cfg, "rules");
	protect = json_object_get(cfg, "protect");
	yolo = json_object_get(cfg, "yolo");
	if ((rules && !json_is_array(rules)) ||
	    (protect && !json_is_array(protect)) ||
	    (yolo && !json_is_boolean(yolo))) {
		*why = xstrdup("permissions: rules and protect must be arrays "
			       "of strings, yolo a boolean");
		r = -SHIRO_ERR_INVAL;
		goto out;
	}
	for (i = 0; (v = json_array_get(rules, i)) != NULL; i++)
		if ((r = perm_add(n, json_string_value(v), why)) < 0)
			goto out;
	for (i = 0; (v = json_array_get(protect, i)) != NULL; i++)
		if ((r = perm_protect(n, json_string_value(v), why)) < 0)
			goto out;
	perm_clear(p);
	p->rules = n->rules;
	p->n = n->n;
	p->protect = n->protect;
	p->nprotect = n->nprotect;
	n->rules = NULL;
	n->protect = NULL;
	n->n = n->nprotect = 0;
	p->yolo = json_is_true(yolo);
out:
	perm_destroy(&n);
	return r;
}

/* perm_norm - a path subject in its lexical normal form (caller frees):
 * no "." components, no doubled slashes, "a/.." folded. */
static char *
perm_norm(const struct perm *p, const char *path)
{
	char **parts = NULL, *copy, *tok, *save = NULL;
	size_t n = 0, i, wl;
	struct buf b = BUF_INIT;
	int abs = path[0] == '/';

	if (abs && p->wspath != NULL) {
		wl = strlen(p->wspath);
		while (wl > 1 && p->wspath[wl - 1] == '/')
			wl--;
		if (strncmp(path, p->wspath, wl) == 0 &&
		    (path[wl] == '/' || path[wl] == '\0')) {
			path += wl;
			abs = 0;
		}
	}
	copy = xstrdup(path);
	for (tok = strtok_r(copy, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0 && n > 0 &&
		    strcmp(parts[n - 1], "..") != 0) {
			n--;
			continue;
		}
		parts = vec_room(parts, n, sizeof(*parts));
		parts[n++] = tok;
	}
	if (abs)
		buf_addc(&b, '/');
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_addc(&b, '/');
		buf_adds(&b, parts[i]);
	}
	if (b.len == 0)
		buf_adds(&b, ".");
	free(parts);
	free(copy);
	return buf_steal(&b, NULL);
}

/* perm_max - the stricter of two actions. */
static enum perm_action
perm_max(enum perm_action a, enum perm_action b)
{
	return a > b ? a : b;
}

/* perm_rules - the rules' verdict on one subject of tool (kind). */
static enum perm_action
perm_rules(const struct perm *p, const struct tool_def *def,
    const char *subject, int *matched)
{
	enum perm_action a = def->kind == TOOL_READ ? PERM_ALLOW : PERM_ASK;
	size_t i;

	*matched = 0;
	for (i = 0; i < p->n; i++) {
		const struct perm_rule *r = &p->rules[i];
		if (strcmp(r->target, "*") != 0 &&
		    strcmp(r->target, def->name) != 0 &&
		    strcmp(r->target, tool_kind_name(def->kind)) != 0)
			continue;
		if (r->pattern != NULL && !match_glob(r->pattern, subject, 0))
			continue;
		a = r->action;
		*matched = 1;
	}
	return a;
}

/* perm_exec_subjects - the simple commands of a command line, each
 * as its words joined by spaces, substitutions' included. */
static int
perm_exec_subjects(const char *cmd, json_t *arr, int depth)
{
	struct shwords w;
	char *why = NULL, *t;
	size_t i;
	int r;

	if (depth > PERM_DEPTH)
		return -1;
	r = shwords_parse(cmd, &w, &why);
	free(why);
	for (i = 0; r == 0 && i < w.n; i++) {
		if (w.cmds[i].argc == 0)
			continue;
		t = perm_join(w.cmds[i].argv, 0, w.cmds[i].argc);
		json_array_append_new(arr, json_string(t));
		free(t);
	}
	for (i = 0; r == 0 && i < w.nsubs; i++)
		r = perm_exec_subjects(w.subs[i], arr, depth + 1);
	shwords_free(&w);
	return r;
}

/* perm_set - fill v. */
static void
perm_set(struct perm_verdict *v, enum perm_action a, const char *fmt, ...)
{
	va_list ap;

	v->action = a;
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
}

/* perm_repeat - count this call in turn; nonzero from the third. */
static int
perm_repeat(struct perm_turn *t, const char *tool, json_t *args)
{
	char *key, *a;
	size_t i;

	if (t == NULL)
		return 0;
	a = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
	key = xasprintf("%s %s", tool, a ? a : "");
	free(a);
	for (i = 0; i < t->n; i++)
		if (strcmp(t->keys[i], key) == 0) {
			free(key);
			return ++t->counts[i] >= PERM_REPEAT;
		}
	t->keys = vec_room(t->keys, t->n, sizeof(*t->keys));
	t->counts = vec_room(t->counts, t->n, sizeof(*t->counts));
	t->keys[t->n] = key;
	t->counts[t->n++] = 1;
	return 0;
}

/* perm_check - the verdict on calling tool with args. */
void
perm_check(struct perm *p, struct perm_turn *turn, const char *tool,
    json_t *args, struct perm_verdict *v)
{
	const struct tool_def *def = tool_find(tool);
	enum perm_action a = PERM_ALLOW, one;
	json_t *subjects = NULL, *s;
	char why[256];
	size_t i, k;
	int matched, parsed = 1, repeat;

	repeat = perm_repeat(turn, tool ? tool : "", args);
	if (def == NULL) {
		perm_set(v, PERM_DENY, "unknown tool \"%s\"", tool ? tool : "");
		goto out;
	}
	if (tool_subjects(tool, args, &subjects) < 0) {
		perm_set(v, PERM_DENY,
		    "%s: the arguments lack what the "
		    "permission check needs",
		    tool);
		goto out;
	}
	if (def->kind == TOOL_EXEC) {
		char *cmd =
		    xstrdup(json_string_value(json_array_get(subjects, 0)));
		if (perm_guard(cmd, why, sizeof(why))) {
			perm_set(v, PERM_DENY, "refused by the guard: %s", why);
			free(cmd);
			goto out;
		}
		json_decref(subjects);
		subjects = json_array();
		if (perm_exec_subjects(cmd, subjects, 0) < 0 ||
		    json_array_size(subjects) == 0) {
			/* Rules that allow cannot apply to what does not
			 * parse; deny rules still see the raw text. */
			parsed = 0;
			json_array_clear(subjects);
			json_array_append_new(subjects, json_string(cmd));
		}
		free(cmd);
	}
	for (i = 0; (s = json_array_get(subjects, i)) != NULL; i++) {
		const char *subj = json_string_value(s);
		char *norm =
		    def->kind == TOOL_EXEC ? xstrdup(subj) : perm_norm(p, subj);
		if (def->kind == TOOL_WRITE) {
			if (perm_is_secret(norm)) {
				perm_set(v, PERM_DENY,
				    "%s is a secret file; "
				    "it is never written",
				    norm);
				free(norm);
				goto out;
			}
			for (k = 0; k < p->nprotect; k++)
				if (match_glob(p->protect[k], norm, 0)) {
					perm_set(v, PERM_DENY,
					    "%s is protected (%s); it is "
					    "never written",
					    norm, p->protect[k]);
					free(norm);
					goto out;
				}
		}
		one = perm_rules(p, def, norm, &matched);
		if (!parsed && one == PERM_ALLOW)
			one = PERM_ASK;
		a = perm_max(a, one);
		free(norm);
	}
	if (a == PERM_DENY) {
		perm_set(v, PERM_DENY, "%s: denied by a rule", tool);
		goto out;
	}
	if (repeat) {
		perm_set(v, PERM_ASK,
		    "%s: the same call a third time in this "
		    "turn",
		    tool);
		goto out;
	}
	if (!parsed) {
		/* The guard cannot vouch for what it could not read: a
		 * person decides, yolo or not. */
		perm_set(v, PERM_ASK,
		    "%s: needs approval (the command could not be parsed, so "
		    "the guard could not check it)",
		    tool);
		goto out;
	}
	if (a == PERM_ASK && p->yolo)
		perm_set(v, PERM_ALLOW, "%s: allowed (yolo)", tool);
	else if (a == PERM_ASK)
		perm_set(v, PERM_ASK, "%s: needs approval", tool);
	else
		perm_set(v, PERM_ALLOW, "%s: allowed", tool);
out:
	json_decref(subjects);
}

/* perm_escape - subject as a pattern that matches only itself (caller
 * frees): every character the matcher reads specially escaped. */
static char *
perm_escape(const char *subject)
{
	struct buf b = BUF_INIT;
	const char *c;

	for (c = subject; *c != '\0'; c++) {
		if (*c == '*' || *c == '?' || *c == '[' || *c == ']' ||
		    *c == '\\')
			buf_addc(&b, '\\');
		buf_addc(&b, *c);
	}
	buf_add(&b, "", 0);
	return buf_steal(&b, NULL);
}

/* perm_always - allow exactly the subjects of this call from now on. */
int
perm_always(struct perm *p, const char *tool, json_t *args, char **why)
{
	const struct tool_def *def = tool_find(tool);
	json_t *subjects = NULL, *s;
	struct perm_rule r;
	size_t i, k;
	int rc = -SHIRO_ERR_INVAL;

	*why = NULL;
	if (def == NULL || tool_subjects(tool, args, &subjects) < 0) {
		*why = xasprintf("%s: not a call whose subjects are known",
		    tool ? tool : "");
		goto out;
	}
	if (def->kind == TOOL_EXEC) {
		char *cmd =
		    xstrdup(json_string_value(json_array_get(subjects, 0)));

		json_decref(subjects);
		subjects = json_array();
		if (perm_exec_subjects(cmd, subjects, 0) < 0 ||
		    json_array_size(subjects) == 0) {
			/* What the guard could not read is asked each
			 * time: no rule can stand for it. */
			*why = xasprintf("%s: the command could not be "
					 "parsed, so it is asked each time",
			    tool);
			free(cmd);
			goto out;
		}
		free(cmd);
	}
	for (i = 0; (s = json_array_get(subjects, i)) != NULL; i++) {
		char *norm = def->kind == TOOL_EXEC
		    ? xstrdup(json_string_value(s))
		    : perm_norm(p, json_string_value(s));

		r.action = PERM_ALLOW;
		r.target = xstrdup(def->name);
		r.pattern = perm_escape(norm);
		free(norm);
		for (k = 0; k < p->n; k++)
			if (p->rules[k].action == PERM_ALLOW &&
			    p->rules[k].pattern != NULL &&
			    strcmp(p->rules[k].target, r.target) == 0 &&
			    strcmp(p->rules[k].pattern, r.pattern) == 0)
				break;
		if (k < p->n || !match_valid(r.pattern)) {
			free(r.target);
			free(r.pattern);
			continue;
		}
		p->rules = vec_room(p->rules, p->n, sizeof(*p->rules));
		p->rules[p->n++] = r;
	}
	rc = 0;
out:
	json_decref(subjects);
	return rc;
}

/* perm_turn_new - the repeat guard's state for one turn. */
struct perm_turn *
perm_turn_new(void)
{
	return xcalloc(1, sizeof(struct perm_turn));
}

/* perm_turn_destroy - free *t and set it to NULL. */
void
perm_turn_destroy(struct perm_turn **tp)
{
	struct perm_turn *t = *tp;
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->counts);
	free(t);
	*tp = NULL;
}
