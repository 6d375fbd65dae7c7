/*
 * provider.c - presets, the zero-configuration rules, and which provider
 * serves turns and compactions (see provider.h and docs/providers.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"

#include "provider.h"

/*
 * Built-in prices, US dollars per million tokens: input, output, cache
 * read, cache write.  Estimates from the services' price pages; a
 * config.json "prices" entry replaces one.
 */
static const struct {
	const char *model;
	double in, out, read, write;
} provider_prices[] = {
    {"claude-sonnet-4-5", 3.0, 15.0, 0.30, 3.75},
    {"claude-haiku-4-5", 1.0, 5.0, 0.10, 1.25},
    {"claude-opus-4-1", 15.0, 75.0, 1.50, 18.75},
    {"gpt-5", 1.25, 10.0, 0.125, 0.0},
    {"gpt-5-mini", 0.25, 2.0, 0.025, 0.0},
    {"anthropic/claude-sonnet-4.5", 3.0, 15.0, 0.30, 3.75},
    {"anthropic/claude-haiku-4.5", 1.0, 5.0, 0.10, 1.25},
    {"llama-3.3-70b-versatile", 0.59, 0.79, 0.0, 0.0},
    {"llama-3.1-8b-instant", 0.05, 0.08, 0.0, 0.0},
    {"deepseek-chat", 0.28, 0.42, 0.028, 0.0},
    {"grok-4", 3.0, 15.0, 0.75, 0.0},
    {"grok-3-mini", 0.30, 0.50, 0.075, 0.0},
};

/* provider_env - the value of name in envp, or NULL if unset or empty. */
static const char *
provider_env(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; envp != NULL && *envp != NULL; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return (*envp)[n + 1] != '\0' ? *envp + n + 1 : NULL;
	return NULL;
}

/*
 * provider_url_dup - a base URL as the worker gets it (malloc'd):
 * http:// or https://, a host, printable ASCII without spaces, at most
 * 2048 bytes, trailing '/' dropped.  NULL if it is not one.
 */
static char *
provider_url_dup(const char *u)
{
	size_t n = strlen(u), k, skip;
	char *s;

	if (strncmp(u, "http://", 7) == 0)
		skip = 7;
	else if (strncmp(u, "https://", 8) == 0)
		skip = 8;
	else
		return NULL;
	if (n > 2048)
		return NULL;
	for (k = 0; k < n; k++)
		if ((unsigned char)u[k] <= 0x20 || (unsigned char)u[k] >= 0x7f)
			return NULL;
	while (n > skip && u[n - 1] == '/')
		n--;
	if (n == skip || u[skip] == '/')
		return NULL;
	s = xmalloc(n + 1);
	memcpy(s, u, n);
	s[n] = '\0';
	return s;
}

/* provider_loopback - url points at this machine (a local server). */
static int
provider_loopback(const char *url)
{
	static const char *const hosts[] = {"http://127.",
	    "http://localhost:", "http://localhost/", "http://[::1]", NULL};
	size_t k;

	for (k = 0; hosts[k] != NULL; k++)
		if (strncmp(url, hosts[k], strlen(hosts[k])) == 0)
			return 1;
	return strcmp(url, "http://localhost") == 0;
}

/* provider_set_key - p's key from variable var of envp, if it holds one. */
static void
provider_set_key(struct config_provider *p, char *const *envp, const char *var)
{
	const char *v = var != NULL ? provider_env(envp, var) : NULL;

	if (v == NULL || strlen(v) > 8192)
		return;
	p->key_len = strlen(v);
	p->key = xmemdup(v, p->key_len + 1);
	free(p->key_from);
	p->key_from = xstrdup(var);
}

/*
 * provider_fill - resolve p from its preset pr: URL, models, key from
 * its variable.  url_over and model_over (may be NULL) come first.
 */
static int
provider_fill(struct config_provider *p, const struct provider_preset *pr,
    char *const *envp, const char *url_over, const char *what, char **errp)
{
	const char *url = url_over != NULL ? url_over : p->url;

	p->preset = pr->name;
	p->wire = pr->wire;
	if (p->jobs == 0)
		p->jobs = strcmp(pr->wire, PROVIDER_WIRE_OFFLINE) == 0
		    ? 1
		    : CONFIG_PROVIDER_JOBS;
	if (strcmp(pr->wire, PROVIDER_WIRE_OFFLINE) == 0)
		return 0;
	free(p->base_url);
	p->base_url = provider_url_dup(url != NULL ? url : pr->base_url);
	if (p->base_url == NULL)
		return config_fail(errp,
		    "%s: \"%.200s\" is not an http:// or https:// URL "
		    "(printable, no spaces, at most 2048 bytes)",
		    what, url);
	if (p->model == NULL && pr->model != NULL)
		p->model = xstrdup(pr->model);
	if (p->cheap_model == NULL && pr->cheap != NULL)
		p->cheap_model = xstrdup(pr->cheap);
	p->needs_key = pr->key_env != NULL && !pr->local &&
	    !provider_loopback(p->base_url);
	if (p->key == NULL)
		provider_set_key(
		    p, envp, p->key_env != NULL ? p->key_env : pr->key_env);
	return 0;
}

/* provider_add - a new provider entry called name from preset pr. */
static struct config_provider *
provider_add(
    struct config *cfg, const char *name, const struct provider_preset *pr)
{
	struct config_provider *p;

	cfg->providers = xreallocarray(
	    cfg->providers, cfg->nproviders + 1, sizeof(*cfg->providers));
	p = &cfg->providers[cfg->nproviders++];
	memset(p, 0, sizeof(*p));
	p->name = xstrdup(name);
	p->type = xstrdup(pr->name);
	return p;
}

/* provider_named - the entry called name, made from its preset if config
 * does not define it; NULL if name is neither. */
static struct config_provider *
provider_named(
    struct config *cfg, const char *name, char *const *envp, char **errp)
{
	const struct provider_preset *pr;
	struct config_provider *p;
	char what[96];

	p = (struct config_provider *)config_provider(cfg, name);
	if (p != NULL)
		return p;
	pr = provider_preset_find(name);
	if (pr == NULL)
		return NULL;
	p = provider_add(cfg, name, pr);
	snprintf(what, sizeof(what), "the %s preset", pr->name);
	if (provider_fill(p, pr, envp, NULL, what, errp) != 0)
		return NULL;
	return p;
}

/* provider_note - append a line to cfg->env_note. */
static void
provider_note(struct config *cfg, const char *text)
{
	char *old = cfg->env_note;

	cfg->env_note = old ? xasprintf("%s\n%s", old, text) : xstrdup(text);
	free(old);
}

/*
 * provider_from_env - the provider the environment selects, added to
 * cfg unless config.json defines one of its name; its name or NULL.
 */
static const char *
provider_from_env(struct config *cfg, char *const *envp, char **errp, int *rcp)
{
	const char *sp = provider_env(envp, "SHIRO_PROVIDER");
	const char *skey = provider_env(envp, "SHIRO_API_KEY");
	const char *surl = provider_env(envp, "SHIRO_BASE_URL");
	const char *smodel = provider_env(envp, "SHIRO_MODEL");
	const struct provider_preset *pr = NULL;
	struct config_provider *p;
	const char *url;

	*rcp = 0;
	if (sp != NULL) {
		pr = provider_preset_find(sp);
		if (pr == NULL) {
			*rcp = config_fail(errp,
			    "SHIRO_PROVIDER: no provider \"%.64s\" (one of "
			    "%s)",
			    sp, provider_preset_names());
			return NULL;
		}
	} else if (provider_env(envp, "ANTHROPIC_API_KEY") != NULL) {
		pr = provider_preset_find("anthropic");
	} else if (provider_env(envp, "OPENAI_API_KEY") != NULL) {
		pr = provider_preset_find("openai");
	} else if (skey != NULL || surl != NULL || smodel != NULL) {
		provider_note(cfg,
		    "SHIRO_API_KEY, SHIRO_BASE_URL or SHIRO_MODEL is set "
		    "but no provider is: set SHIRO_PROVIDER too (or "
		    "ANTHROPIC_API_KEY or OPENAI_API_KEY)");
		return NULL;
	}
	if (pr == NULL || strcmp(pr->wire, PROVIDER_WIRE_OFFLINE) == 0)
		return NULL;
	if (config_provider(cfg, pr->name) != NULL)
		return pr->name; /* config.json's definition wins */
	p = provider_add(cfg, pr->name, pr);
	p->from_env = 1;
	url = surl != NULL	  ? surl
	    : pr->url_env != NULL ? provider_env(envp, pr->url_env)
				  : NULL;
	if (smodel != NULL)
		p->model = xstrdup(smodel);
	if (skey != NULL)
		provider_set_key(p, envp, "SHIRO_API_KEY");
	*rcp = provider_fill(p, pr, envp, url,
	    surl != NULL	      ? "SHIRO_BASE_URL"
		: pr->url_env != NULL ? pr->url_env
				      : "the preset",
	    errp);
	return *rcp == 0 ? p->name : NULL;
}

/* provider_usable - p can be called (see provider.h). */
int
provider_usable(const struct config_provider *p)
{
	if (p->wire != NULL && strcmp(p->wire, PROVIDER_WIRE_OFFLINE) == 0)
		return 1;
	if (p->model == NULL)
		return 0;
	/* A keyFile counts: it is read after the resolution, and a file
	 * that cannot be read shows as a failed call (nokey), not as
	 * another provider taking over. */
	return !p->needs_key || p->key != NULL || p->key_file != NULL;
}

/* provider_has_group - cfg has model workers of provider name. */
static int
provider_has_group(const struct config *cfg, const char *name)
{
	size_t k;

	for (k = 0; k < cfg->nworkers; k++)
		if (cfg->workers[k].role == CONFIG_ROLE_MODEL &&
		    cfg->workers[k].provider != NULL &&
		    strcmp(cfg->workers[k].provider, name) == 0)
			return 1;
	return 0;
}

/*
 * provider_pool - the default groups: compactions need memory.jobs calls
 * in flight (2 offline workers, which take one each, or enough network
 * workers of jobs calls each), turns one more worker.
 */
static void
provider_pool(struct config *cfg)
{
	const struct config_provider *mp, *tp = NULL;
	unsigned per, count;
	int offline;

	mp = config_provider(cfg, cfg->memory.provider);
	offline = strcmp(mp->wire, PROVIDER_WIRE_OFFLINE) == 0;
	per = mp->jobs ? mp->jobs : 1;
	count = offline ? 2 : (cfg->memory.jobs + per - 1) / per;
	if (cfg->turn_provider != NULL)
		tp = config_provider(cfg, cfg->turn_provider);
	if (!cfg->workers_set) {
		if (tp != NULL && tp == mp)
			count++;
		config_add_workers(cfg, CONFIG_ROLE_MODEL, mp->name, count);
		if (tp != NULL && tp != mp)
			config_add_workers(cfg, CONFIG_ROLE_MODEL, tp->name, 1);
		return;
	}
	/* An explicit pool: a model provider that must serve and has no
	 * group gets its default one; the offline summarizer is left as
	 * the pool says (a pool without it is told in the log). */
	if (!provider_has_group(cfg, mp->name) && !offline)
		config_add_workers(
		    cfg, CONFIG_ROLE_MODEL, mp->name, count + (tp == mp));
	else if (!provider_has_group(cfg, mp->name))
		provider_note(cfg,
		    "no model worker of provider offline in workers: "
		    "compactions wait until one is added");
	if (tp != NULL && !provider_has_group(cfg, tp->name))
		config_add_workers(cfg, CONFIG_ROLE_MODEL, tp->name, 1);
}

/* provider_resolve - see provider.h. */
int
provider_resolve(struct config *cfg, char *const *envp, char **errp)
{
	const struct provider_preset *pr;
	struct config_provider *p, *tp = NULL, *mp;
	const char *envname;
	char what[128], *name;
	size_t k, n;
	int rc;

	*errp = NULL;
	/* The providers config.json defines. */
	n = cfg->nproviders;
	for (k = 0; k < n; k++) {
		p = &cfg->providers[k];
		pr = provider_preset_find(p->type != NULL ? p->type : p->name);
		if (pr == NULL)
			return config_fail(errp,
			    "providers.%s.type: unknown type \"%.64s\" (one "
			    "of %s)",
			    p->name, p->type ? p->type : p->name,
			    provider_preset_names());
		snprintf(what, sizeof(what), "providers.%s.url", p->name);
		if ((rc = provider_fill(p, pr, envp, NULL, what, errp)) != 0)
			return rc;
	}
	if (provider_named(cfg, CONFIG_OFFLINE, envp, errp) == NULL)
		return -SHIRO_ERR_CORRUPT;

	envname = provider_from_env(cfg, envp, errp, &rc);
	if (rc != 0)
		return rc;

	/* Turns: config.json's provider, else the environment's. */
	if (cfg->turn_provider != NULL) {
		tp = provider_named(cfg, cfg->turn_provider, envp, errp);
		if (tp == NULL)
			return *errp ? -SHIRO_ERR_CORRUPT
				     : config_fail(errp,
					   "turns.provider: no provider "
					   "\"%.64s\" in providers and no "
					   "preset of that name",
					   cfg->turn_provider);
	} else if (envname != NULL) {
		tp = (struct config_provider *)config_provider(cfg, envname);
		cfg->turn_provider = xstrdup(envname);
	}
	if (tp != NULL && strcmp(tp->wire, PROVIDER_WIRE_OFFLINE) == 0)
		return config_fail(errp,
		    "turns.provider: \"%.64s\" is the offline summarizer, "
		    "which cannot answer turns",
		    tp->name);
	if (tp != NULL && cfg->turns.model == NULL && tp->model != NULL)
		cfg->turns.model = xstrdup(tp->model);

	/* Compactions: memory.provider, else the turns' provider if it can
	 * be called, else offline. */
	mp = NULL;
	if (cfg->memory.provider_set) {
		mp = provider_named(cfg, cfg->memory.provider, envp, errp);
		if (mp == NULL)
			return *errp ? -SHIRO_ERR_CORRUPT
				     : config_fail(errp,
					   "memory.provider: no provider "
					   "\"%.64s\" in providers and no "
					   "preset of that name",
					   cfg->memory.provider);
	} else if (tp != NULL && provider_usable(tp)) {
		mp = tp;
	}
	if (mp != NULL && strcmp(mp->wire, PROVIDER_WIRE_OFFLINE) != 0 &&
	    cfg->memory.model == NULL &&
	    (mp->cheap_model != NULL || mp->model != NULL))
		cfg->memory.model =
		    xstrdup(mp->cheap_model ? mp->cheap_model : mp->model);
	if (mp != NULL && strcmp(mp->wire, PROVIDER_WIRE_OFFLINE) != 0 &&
	    (!provider_usable(mp) || cfg->memory.model == NULL)) {
		name = xasprintf("compactions stay offline: provider %s %s",
		    mp->name,
		    mp->model == NULL && cfg->memory.model == NULL
			? "has no model (set memory.model)"
			: "has no key");
		provider_note(cfg, name);
		free(name);
		mp = NULL;
	}
	if (mp == NULL) {
		mp = (struct config_provider *)config_provider(
		    cfg, CONFIG_OFFLINE);
		free(cfg->memory.model);
		cfg->memory.model = NULL;
	}
	free(cfg->memory.provider);
	cfg->memory.provider = xstrdup(mp->name);

	/* Every model group names a provider that exists now. */
	for (k = 0; k < cfg->nworkers; k++) {
		const char *wp = cfg->workers[k].provider;

		if (cfg->workers[k].role != CONFIG_ROLE_MODEL)
			continue;
		if (provider_named(cfg, wp, envp, errp) == NULL)
			return *errp ? -SHIRO_ERR_CORRUPT
				     : config_fail(errp,
					   "workers[%zu].provider: no "
					   "provider \"%.64s\" in providers "
					   "and no preset of that name",
					   k, wp);
	}
	provider_pool(cfg);
	return 0;
}

/* provider_load_keys - read keyFile keys (see provider.h). */
void
provider_load_keys(struct config *cfg, char **notesp)
{
	char line[8200], *s;
	size_t k, n;
	FILE *f;

	for (k = 0; k < cfg->nproviders; k++) {
		struct config_provider *p = &cfg->providers[k];

		if (p->key != NULL || p->key_file == NULL)
			continue;
		f = fopen(p->key_file, "re");
		if (f == NULL) {
			s = xasprintf("provider %s: keyFile %s: %s", p->name,
			    p->key_file, strerror(errno));
			goto note;
		}
		s = fgets(line, sizeof(line), f);
		fclose(f);
		n = s != NULL ? strcspn(line, "\r\n") : 0;
		if (n == 0 || n > 8192) {
			explicit_bzero(line, sizeof(line));
			s = xasprintf("provider %s: keyFile %s: %s", p->name,
			    p->key_file,
			    n == 0 ? "its first line is empty"
				   : "longer than 8192 bytes");
			goto note;
		}
		p->key = xmemdup(line, n + 1);
		p->key[n] = '\0';
		p->key_len = n;
		explicit_bzero(line, sizeof(line));
		free(p->key_from);
		p->key_from = xasprintf("keyFile %s", p->key_file);
		continue;
	note:
		if (*notesp == NULL) {
			*notesp = s;
		} else {
			char *t = xasprintf("%s\n%s", *notesp, s);

			free(*notesp);
			free(s);
			*notesp = t;
		}
	}
}

/* provider_cost - the estimated cost of token counts of model. */
int
provider_cost(const struct config *cfg, const struct config_provider *p,
    const char *model, const unsigned long long tokens[4],
    unsigned long long *uusd)
{
	const struct config_price *cp = NULL;
	double in = 0, out = 0, rd = 0, wr = 0, c;
	size_t k;
	int known = 0;

	*uusd = 0;
	if (model != NULL)
		cp = config_price(cfg, model);
	if (cp != NULL) {
		in = cp->input;
		out = cp->output;
		rd = cp->cache_read;
		wr = cp->cache_write;
		known = 1;
	}
	for (k = 0; !known && model != NULL &&
	     k < sizeof(provider_prices) / sizeof(provider_prices[0]);
	     k++) {
		if (strcmp(model, provider_prices[k].model) == 0) {
			in = provider_prices[k].in;
			out = provider_prices[k].out;
			rd = provider_prices[k].read;
			wr = provider_prices[k].write;
			known = 1;
		}
	}
	if (!known) {
		const struct provider_preset *pr =
		    p != NULL ? provider_preset_find(p->preset) : NULL;

		/* A server on this machine, or the offline summarizer. */
		if (pr != NULL && pr->local)
			return 1;
		if (p != NULL && p->base_url != NULL &&
		    provider_loopback(p->base_url))
			return 1;
		return 0;
	}
	/* Dollars per million tokens are millionths of a dollar per
	 * token. */
	c = (double)tokens[PROVIDER_TOK_INPUT] * in +
	    (double)tokens[PROVIDER_TOK_OUTPUT] * out +
	    (double)tokens[PROVIDER_TOK_CACHE_READ] * rd +
	    (double)tokens[PROVIDER_TOK_CACHE_WRITE] * wr;
	*uusd = (unsigned long long)(c + 0.5);
	return 1;
}
