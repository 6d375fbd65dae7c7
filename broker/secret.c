/*
 * secret.c - the API keys shirod holds (see secret.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "proto/log.h"
#include "proto/xmalloc.h"

#include "procstat.h"
#include "secret.h"

extern char **environ;

/* secret_env_block - the bounds of the environment block the process
 * started with (fields 50 and 51 of /proc/self/stat). */
static int
secret_env_block(uintptr_t *startp, uintptr_t *endp)
{
	char buf[4096], *p;
	unsigned long long start = 0, end = 0;
	int field;

	if (procstat_read("/proc", "self", buf, sizeof(buf), &p) < 0)
		return -1;
	for (field = 3; field <= 51 && *p != '\0'; field++) {
		while (*p == ' ')
			p++;
		if (field == 50)
			start = strtoull(p, NULL, 10);
		if (field == 51)
			end = strtoull(p, NULL, 10);
		while (*p != ' ' && *p != '\0')
			p++;
	}
	if (start == 0 || end <= start)
		return -1;
	*startp = (uintptr_t)start;
	*endp = (uintptr_t)end;
	return 0;
}

/* secret_env_erase - erase the value of name from the environment. */
void
secret_env_erase(const char *name)
{
	size_t nl = strlen(name);
	uintptr_t start, end;
	char *v, *p, *stop;

	if (nl == 0 || strchr(name, '=') != NULL)
		return;
	/* Where environ points now (the start-up block, or a copy that
	 * setenv made). */
	v = getenv(name);
	if (v != NULL)
		explicit_bzero(v, strlen(v));
	/* The block itself: what /proc/PID/environ reads. */
	if (secret_env_block(&start, &end) == 0) {
		p = (char *)start;
		stop = (char *)end;
		while (p < stop) {
			size_t len = strnlen(p, (size_t)(stop - p));

			if (len > nl && memcmp(p, name, nl) == 0 &&
			    p[nl] == '=')
				explicit_bzero(p + nl + 1, len - nl - 1);
			p += len + 1;
		}
	}
	(void)unsetenv(name);
}

/* secret_read_file - the first line of path, malloc'd, or NULL. */
static unsigned char *
secret_read_file(const char *provider, const char *path, size_t *lenp)
{
	char *line = xmalloc(SECRET_MAX + 2);
	unsigned char *key = NULL;
	size_t n;
	FILE *f;

	f = fopen(path, "re");
	if (f == NULL) {
		log_warn("provider %s: %s", provider, path);
		goto out;
	}
	if (fgets(line, SECRET_MAX + 2, f) == NULL) {
		log_warnx("provider %s: %s is empty", provider, path);
		goto out;
	}
	n = strcspn(line, "\r\n");
	if (n > SECRET_MAX) {
		log_warnx("provider %s: the key in %s is over %d bytes",
		    provider, path, SECRET_MAX);
		goto out;
	}
	if (n == 0) {
		log_warnx("provider %s: the first line of %s is empty",
		    provider, path);
		goto out;
	}
	key = xmalloc(n + 1);
	memcpy(key, line, n);
	key[n] = '\0';
	*lenp = n;
out:
	if (f != NULL)
		fclose(f);
	explicit_bzero(line, SECRET_MAX + 2);
	free(line);
	return key;
}

/* secret_read - provider p's key: keyEnv first, then keyFile. */
static unsigned char *
secret_read(const struct config_provider *p, size_t *lenp)
{
	const char *v;
	unsigned char *key;

	if (p->key_env != NULL) {
		v = getenv(p->key_env);
		if (v != NULL && *v != '\0' && strlen(v) <= SECRET_MAX) {
			*lenp = strlen(v);
			key = xmalloc(*lenp + 1);
			memcpy(key, v, *lenp + 1);
			return key;
		}
		log_warnx("provider %s: $%s is %s", p->name, p->key_env,
		    v == NULL || *v == '\0' ? "not set" : "too long");
	}
	if (p->key_file != NULL)
		return secret_read_file(p->name, p->key_file, lenp);
	return NULL;
}

/* secret_load - read every key, erase the variables, stop dumps. */
int
secret_load(struct secrets *s, const struct config *cfg)
{
	static const char *const known[] = {SECRET_ENV_NAMES};
	unsigned char *key;
	size_t k, len = 0;

	memset(s, 0, sizeof(*s));
	s->v = xcalloc(cfg->nproviders ? cfg->nproviders : 1, sizeof(*s->v));
	for (k = 0; k < cfg->nproviders; k++) {
		const struct config_provider *p = &cfg->providers[k];

		/* A key the providers' resolution found (its variable,
		 * SHIRO_API_KEY, the preset's, or keyFile) is taken as it
		 * is; otherwise keyEnv and keyFile are read here. */
		if (p->key != NULL) {
			len = p->key_len;
			key = xmalloc(len + 1);
			memcpy(key, p->key, len + 1);
		} else if (p->wire != NULL ||
		    (p->key_env == NULL && p->key_file == NULL)) {
			/* Resolved without a key: it has none to read. */
			continue;
		} else if ((key = secret_read(p, &len)) == NULL) {
			continue;
		}
		s->v[s->n].provider = xstrdup(p->name);
		s->v[s->n].key = key;
		s->v[s->n].len = len;
		s->n++;
	}
	for (k = 0; k < cfg->nproviders; k++)
		if (cfg->providers[k].key_env != NULL)
			secret_env_erase(cfg->providers[k].key_env);
	for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
		secret_env_erase(known[k]);
	/* No core file, no ptrace or /proc/PID/mem by the same user. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		log_warn("prctl(PR_SET_DUMPABLE)");
	return 0;
}

/* secret_get - the key of provider, NULL if none. */
const unsigned char *
secret_get(const struct secrets *s, const char *provider, size_t *lenp)
{
	size_t k;

	for (k = 0; k < s->n; k++) {
		if (strcmp(s->v[k].provider, provider) == 0) {
			*lenp = s->v[k].len;
			return s->v[k].key;
		}
	}
	*lenp = 0;
	return NULL;
}

/* secret_free - wipe and free every key. */
void
secret_free(struct secrets *s)
{
	size_t k;

	for (k = 0; k < s->n; k++) {
		explicit_bzero(s->v[k].key, s->v[k].len);
		free(s->v[k].key);
		free(s->v[k].provider);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}
