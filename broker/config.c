/*
 * config.c - read and check $SHIRO_HOME/config.json (see config.h).
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "tools/perm.h"

#include "config.h"
#include "provider.h"

/* Top-level sections other parts of shiro read; shirod leaves them be. */
static const char *const config_foreign[] = {
    "sandbox", "tools", "client", "network", NULL};

static const char *const config_roles[CONFIG_NROLES] = {"model", "tool", "fs"};

/* config_role_name - "model", "tool" or "fs". */
const char *
config_role_name(enum config_role role)
{
	if ((unsigned)role >= CONFIG_NROLES)
		return "?";
	return config_roles[role];
}

/* config_role_parse - the role called name; -SHIRO_ERR_INVAL if none. */
int
config_role_parse(const char *name, enum config_role *rolep)
{
	unsigned r;

	for (r = 0; r < CONFIG_NROLES; r++) {
		if (strcmp(name, config_roles[r]) == 0) {
			*rolep = (enum config_role)r;
			return 0;
		}
	}
	return -SHIRO_ERR_INVAL;
}

/* config_fail - set *errp to a formatted text and return CORRUPT. */
int
config_fail(char **errp, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	free(*errp);
	*errp = buf_steal(&b, NULL);
	return -SHIRO_ERR_CORRUPT;
}

/* config_keys - refuse any key of obj not in allowed; path names obj. */
static int
config_keys(
    json_t *obj, const char *path, const char *const *allowed, char **errp)
{
	const char *key;
	json_t *val;
	size_t i;

	json_object_foreach(obj, key, val)
	{
		(void)val;
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL)
			return config_fail(errp, "%s%s%s: unknown setting",
			    path, *path ? "." : "", key);
	}
	return 0;
}

/* config_uint - read obj.key as an integer in [lo, hi] into *out if set. */
static int
config_uint(json_t *obj, const char *path, const char *key, unsigned long lo,
    unsigned long hi, unsigned long *out, char **errp)
{
	json_t *v = json_object_get(obj, key);
	json_int_t n;

	if (v == NULL)
		return 0;
	if (!json_is_integer(v))
		return config_fail(
		    errp, "%s.%s: must be an integer", path, key);
	n = json_integer_value(v);
	if (n < 0 || (unsigned long long)n < lo || (unsigned long long)n > hi)
		return config_fail(errp, "%s.%s: must be between %lu and %lu",
		    path, key, lo, hi);
	*out = (unsigned long)n;
	return 0;
}

/* config_u - config_uint into an unsigned. */
static int
config_u(json_t *obj, const char *path, const char *key, unsigned long lo,
    unsigned long hi, unsigned *out, char **errp)
{
	unsigned long v = *out;
	int rc;

	rc = config_uint(obj, path, key, lo, hi, &v, errp);
	*out = (unsigned)v;
	return rc;
}

/* config_str - read obj.key as a non-empty string into *out (replacing). */
static int
config_str(
    json_t *obj, const char *path, const char *key, char **out, char **errp)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return 0;
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return config_fail(
		    errp, "%s.%s: must be a non-empty string", path, key);
	if (json_string_length(v) > 4096)
		return config_fail(
		    errp, "%s.%s: longer than 4096 bytes", path, key);
	free(*out);
	*out = xstrdup(json_string_value(v));
	return 0;
}

/* config_section - obj.key as an object, or NULL if absent; type-checked. */
static int
config_section(json_t *obj, const char *key, json_t **out, char **errp)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return config_fail(errp, "%s: must be an object", key);
	*out = v;
	return 0;
}

/* config_name_ok - a provider name: letters, digits, '-', '_', '.'. */
static int
config_name_ok(const char *s)
{
	size_t n = 0;

	for (; *s; s++, n++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			(*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
			*s == '.'))
			return 0;
	}
	return n > 0 && n <= 64;
}

/* config_providers - read the "providers" object. */
static int
config_providers(json_t *root, struct config *cfg, char **errp)
{
	static const char *const keys[] = {
	    "type", "model", "url", "keyEnv", "keyFile", "jobs", NULL};
	struct config_provider *p;
	const char *name;
	char path[128];
	json_t *sec, *v;
	int rc;

	if ((rc = config_section(root, "providers", &sec, errp)) != 0)
		return rc;
	if (sec == NULL)
		return 0;
	cfg->providers = xcalloc(json_object_size(sec) + 1, sizeof(*p));
	json_object_foreach(sec, name, v)
	{
		if (!config_name_ok(name))
			return config_fail(errp,
			    "providers: bad provider name \"%.64s\" (letters, "
			    "digits, '-', '_', '.'; at most 64)",
			    name);
		snprintf(path, sizeof(path), "providers.%s", name);
		if (!json_is_object(v))
			return config_fail(errp, "%s: must be an object", path);
		if ((rc = config_keys(v, path, keys, errp)) != 0)
			return rc;
		p = &cfg->providers[cfg->nproviders++];
		p->name = xstrdup(name);
		if ((rc = config_str(v, path, "type", &p->type, errp)) != 0 ||
		    (rc = config_str(v, path, "model", &p->model, errp)) != 0 ||
		    (rc = config_str(v, path, "url", &p->url, errp)) != 0 ||
		    (rc = config_str(v, path, "keyEnv", &p->key_env, errp)) !=
			0 ||
		    (rc = config_str(v, path, "keyFile", &p->key_file, errp)) !=
			0 ||
		    (rc = config_u(v, path, "jobs", 1, CONFIG_PROVIDER_JOBS_MAX,
			 &p->jobs, errp)) != 0)
			return rc;
		if (p->type == NULL)
			p->type = xstrdup(name);
		if (provider_preset_find(p->type) == NULL)
			return config_fail(errp,
			    "%s.type: unknown type \"%.64s\" (one of %s)", path,
			    p->type, provider_preset_names());
		if (strcmp(name, CONFIG_OFFLINE) == 0 &&
		    strcmp(provider_preset_find(p->type)->wire,
			PROVIDER_WIRE_OFFLINE) != 0)
			return config_fail(errp,
			    "%s.type: the name offline is the built-in "
			    "summarizer's",
			    path);
	}
	return 0;
}

/* config_prices - read the "prices" object: model -> dollars per
 * million tokens. */
static int
config_prices(json_t *root, struct config *cfg, char **errp)
{
	static const char *const keys[] = {
	    "input", "output", "cacheRead", "cacheWrite", NULL};
	static const char *const fields[] = {
	    "input", "output", "cacheRead", "cacheWrite"};
	struct config_price *cp;
	const char *model;
	char path[200];
	json_t *sec, *v, *f;
	double *dst[4];
	size_t k;
	int rc;

	if ((rc = config_section(root, "prices", &sec, errp)) != 0)
		return rc;
	if (sec == NULL)
		return 0;
	if (json_object_size(sec) > 256)
		return config_fail(errp, "prices: at most 256 models");
	cfg->prices = xcalloc(json_object_size(sec) + 1, sizeof(*cp));
	json_object_foreach(sec, model, v)
	{
		snprintf(path, sizeof(path), "prices.%.128s", model);
		if (strlen(model) == 0 || strlen(model) > 128)
			return config_fail(
			    errp, "prices: a model name of 1 to 128 bytes");
		if (!json_is_object(v))
			return config_fail(errp,
			    "%s: must be an object of dollars per million "
			    "tokens",
			    path);
		if ((rc = config_keys(v, path, keys, errp)) != 0)
			return rc;
		cp = &cfg->prices[cfg->nprices++];
		cp->model = xstrdup(model);
		dst[0] = &cp->input;
		dst[1] = &cp->output;
		dst[2] = &cp->cache_read;
		dst[3] = &cp->cache_write;
		for (k = 0; k < 4; k++) {
			f = json_object_get(v, fields[k]);
			if (f == NULL)
				continue;
			if (!json_is_number(f) || json_number_value(f) < 0 ||
			    json_number_value(f) > 1e6)
				return config_fail(errp,
				    "%s.%s: must be a number of dollars "
				    "between 0 and 1000000",
				    path, fields[k]);
			*dst[k] = json_number_value(f);
		}
	}
	return 0;
}

/* config_turns - read the "turns" object. */
static int
config_turns(json_t *root, struct config *cfg, char **errp)
{
	static const char *const keys[] = {"provider", "model", "maxTokens",
	    "thinking", "maxSteps", "trustedWorkspaces", "pruneBytes",
	    "approvalTimeoutMs", "workspaceIdleMs", "fileToolMs", NULL};
	struct config_turns *t = &cfg->turns;
	json_t *sec, *arr, *v;
	size_t k;
	int rc;

	if ((rc = config_section(root, "turns", &sec, errp)) != 0)
		return rc;
	if (sec == NULL)
		return 0;
	if ((rc = config_keys(sec, "turns", keys, errp)) != 0 ||
	    (rc = config_str(
		 sec, "turns", "provider", &cfg->turn_provider, errp)) != 0 ||
	    (rc = config_str(sec, "turns", "model", &t->model, errp)) != 0 ||
	    (rc = config_u(sec, "turns", "maxTokens", 16, 1000000,
		 &t->max_tokens, errp)) != 0 ||
	    (rc = config_u(sec, "turns", "thinking", 0, 1000000, &t->thinking,
		 errp)) != 0 ||
	    (rc = config_u(sec, "turns", "maxSteps", 1, 1000, &t->max_steps,
		 errp)) != 0 ||
	    (rc = config_u(sec, "turns", "pruneBytes", 4096, 1U << 24,
		 &t->prune_bytes, errp)) != 0 ||
	    (rc = config_u(sec, "turns", "approvalTimeoutMs", 1000, 86400000,
		 &t->approval_ms, errp)) != 0 ||
	    (rc = config_u(sec, "turns", "workspaceIdleMs", 100, 86400000,
		 &t->workspace_idle_ms, errp)) != 0 ||
	    (rc = config_u(sec, "turns", "fileToolMs", 1000, 3600000,
		 &t->file_tool_ms, errp)) != 0)
		return rc;
	if (t->thinking != 0 && t->thinking < 1024)
		return config_fail(errp,
		    "turns.thinking: a thinking budget is 0 (off) or at "
		    "least 1024 tokens");
	arr = json_object_get(sec, "trustedWorkspaces");
	if (arr == NULL)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > 64)
		return config_fail(errp,
		    "turns.trustedWorkspaces: must be an array of at most 64 "
		    "absolute paths");
	t->trusted = xcalloc(json_array_size(arr) + 1, sizeof(*t->trusted));
	json_array_foreach(arr, k, v)
	{
		if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
		    strlen(json_string_value(v)) != json_string_length(v) ||
		    json_string_length(v) > 4096)
			return config_fail(errp,
			    "turns.trustedWorkspaces[%zu]: must be an "
			    "absolute path",
			    k);
		t->trusted[t->ntrusted++] = xstrdup(json_string_value(v));
	}
	return 0;
}

/* config_permissions - read "permissions": the engine's own loader
 * checks it (rules, protect, yolo), and its text is kept for shirod. */
static int
config_permissions(json_t *root, struct config *cfg, char **errp)
{
	json_t *sec = json_object_get(root, "permissions"), *yolo;
	struct perm *p;
	char *why = NULL;
	int rc;

	if (sec == NULL)
		return 0;
	if (!json_is_object(sec))
		return config_fail(errp, "permissions: must be an object");
	if ((rc = config_keys(sec, "permissions",
		 (const char *const[]){"rules", "protect", "yolo", NULL},
		 errp)) != 0)
		return rc;
	if (json_array_size(json_object_get(sec, "rules")) > 1000 ||
	    json_array_size(json_object_get(sec, "protect")) > 1000)
		return config_fail(errp,
		    "permissions: at most 1000 rules and 1000 protect "
		    "patterns");
	p = perm_new();
	rc = perm_load(p, sec, &why);
	perm_destroy(&p);
	if (rc != 0) {
		rc = config_fail(errp, "permissions: %s", why ? why : "bad");
		free(why);
		return rc;
	}
	yolo = json_object_get(sec, "yolo");
	cfg->yolo = json_is_true(yolo);
	cfg->permissions = json_dumps(sec, JSON_COMPACT);
	return 0;
}

/* config_dollars - obj.key, a number of dollars from 0 to 1,000,000,
 * into *uusd (millionths) if set. */
static int
config_dollars(json_t *obj, const char *path, const char *key,
    unsigned long long *uusd, char **errp)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return 0;
	if (!json_is_number(v) || json_number_value(v) < 0 ||
	    json_number_value(v) > 1e6)
		return config_fail(errp,
		    "%s.%s: must be a number of dollars between 0 and "
		    "1000000",
		    path, key);
	*uusd = (unsigned long long)(json_number_value(v) * 1e6 + 0.5);
	return 0;
}

/* config_limits - read "limits": maxTurnTokens and maxSpendUsd {turn,
 * day}. */
static int
config_limits(json_t *root, struct config *cfg, char **errp)
{
	static const char *const keys[] = {
	    "maxTurnTokens", "maxSpendUsd", NULL};
	static const char *const spend_keys[] = {"turn", "day", NULL};
	struct config_limits *l = &cfg->limits;
	unsigned long tokens = 0;
	json_t *sec, *spend;
	int rc;

	if ((rc = config_section(root, "limits", &sec, errp)) != 0)
		return rc;
	if (sec == NULL)
		return 0;
	if ((rc = config_keys(sec, "limits", keys, errp)) != 0 ||
	    (rc = config_uint(sec, "limits", "maxTurnTokens", 0,
		 1000000000000UL, &tokens, errp)) != 0)
		return rc;
	l->turn_tokens = tokens;
	spend = json_object_get(sec, "maxSpendUsd");
	if (spend == NULL)
		return 0;
	if (!json_is_object(spend))
		return config_fail(errp,
		    "limits.maxSpendUsd: must be an object {\"turn\": "
		    "dollars, \"day\": dollars}");
	if ((rc = config_keys(spend, "limits.maxSpendUsd", spend_keys, errp)) !=
		0 ||
	    (rc = config_dollars(spend, "limits.maxSpendUsd", "turn",
		 &l->turn_uusd, errp)) != 0 ||
	    (rc = config_dollars(
		 spend, "limits.maxSpendUsd", "day", &l->day_uusd, errp)) != 0)
		return rc;
	return 0;
}

/* config_known_provider - name is configured or names a preset. */
static int
config_known_provider(const struct config *cfg, const char *name)
{
	return config_provider(cfg, name) != NULL ||
	    provider_preset_find(name) != NULL;
}

/* config_add_workers - append one worker group to cfg. */
void
config_add_workers(struct config *cfg, enum config_role role,
    const char *provider, unsigned count)
{
	struct config_workers *w;

	cfg->workers = xreallocarray(
	    cfg->workers, cfg->nworkers + 1, sizeof(*cfg->workers));
	w = &cfg->workers[cfg->nworkers++];
	memset(w, 0, sizeof(*w));
	w->role = role;
	w->provider = provider ? xstrdup(provider) : NULL;
	w->count = count;
}

/* config_path_within - whether absolute path p is dir or under it. */
static int
config_path_within(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* config_workers - read the "workers" array, or make the default pool. */
static int
config_workers(json_t *root, struct config *cfg, char **errp)
{
	static const char *const keys[] = {
	    "role", "provider", "count", "path", "workspace", NULL};
	struct config_workers *w;
	char path[64], *role = NULL;
	unsigned long count;
	json_t *arr, *v;
	size_t i;
	int rc = 0;

	arr = json_object_get(root, "workers");
	/* Without a pool, provider_resolve() makes the default one: it
	 * knows which providers serve. */
	if (arr == NULL)
		return 0;
	cfg->workers_set = 1;
	if (!json_is_array(arr))
		return config_fail(
		    errp, "workers: must be an array of objects");
	if (json_array_size(arr) > 64)
		return config_fail(errp, "workers: at most 64 groups");
	json_array_foreach(arr, i, v)
	{
		snprintf(path, sizeof(path), "workers[%zu]", i);
		if (!json_is_object(v)) {
			rc = config_fail(errp, "%s: must be an object", path);
			goto out;
		}
		if ((rc = config_keys(v, path, keys, errp)) != 0)
			goto out;
		free(role);
		role = NULL;
		if ((rc = config_str(v, path, "role", &role, errp)) != 0)
			goto out;
		if (role == NULL) {
			rc = config_fail(errp,
			    "%s.role: missing (model, tool "
			    "or fs)",
			    path);
			goto out;
		}
		count = 1;
		if ((rc = config_uint(v, path, "count", 0, 32, &count, errp)) !=
		    0)
			goto out;
		config_add_workers(
		    cfg, CONFIG_ROLE_MODEL, NULL, (unsigned)count);
		w = &cfg->workers[cfg->nworkers - 1];
		if (config_role_parse(role, &w->role) != 0) {
			rc = config_fail(errp,
			    "%s.role: unknown role \"%.32s\" (model, tool or "
			    "fs)",
			    path, role);
			goto out;
		}
		if ((rc = config_str(
			 v, path, "provider", &w->provider, errp)) != 0 ||
		    (rc = config_str(v, path, "path", &w->path, errp)) != 0 ||
		    (rc = config_str(
			 v, path, "workspace", &w->workspace, errp)) != 0)
			goto out;
		if (w->workspace != NULL && w->role == CONFIG_ROLE_MODEL) {
			rc = config_fail(errp,
			    "%s.workspace: only tool and fs workers have a "
			    "workspace",
			    path);
			goto out;
		}
		if (w->workspace != NULL && w->workspace[0] != '/') {
			rc = config_fail(errp,
			    "%s.workspace: must be an absolute path", path);
			goto out;
		}
		if (w->workspace != NULL &&
		    config_path_within(w->workspace, cfg->home)) {
			/* The workers hide the home, so such a workspace
			 * could never be reached (and the chat is no place
			 * for the model's edits). */
			rc = config_fail(errp,
			    "%s.workspace: %.256s is inside the chat's home "
			    "%.256s, which every worker hides",
			    path, w->workspace, cfg->home);
			goto out;
		}
		if (w->role == CONFIG_ROLE_MODEL) {
			if (w->provider == NULL)
				w->provider = xstrdup(CONFIG_OFFLINE);
			if (!config_known_provider(cfg, w->provider)) {
				rc = config_fail(errp,
				    "%s.provider: no provider \"%.64s\" in "
				    "providers and no preset of that name",
				    path, w->provider);
				goto out;
			}
		} else if (w->provider != NULL) {
			rc = config_fail(errp,
			    "%s.provider: only model workers have a provider",
			    path);
			goto out;
		}
	}
out:
	free(role);
	return rc;
}

/* config_tcp_ok - "tcp://HOST:PORT": a host of printable bytes without
 * spaces ("*", an address, "[v6]" or a name) and a port 0-65535 or "*". */
static int
config_tcp_ok(const char *ep)
{
	const char *host = ep + 6, *colon = strrchr(ep, ':'), *p;
	unsigned long port = 0;

	if (strncmp(ep, "tcp://", 6) != 0 || colon == NULL || colon <= host ||
	    strlen(ep) > 255)
		return 0;
	for (p = host; p < colon; p++)
		if (*p <= ' ' || *p > '~' || *p == '/')
			return 0;
	if (strcmp(colon + 1, "*") == 0)
		return 1;
	if (colon[1] == '\0' || strlen(colon + 1) > 5)
		return 0;
	for (p = colon + 1; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	return port <= 65535;
}

/* config_endpoint_ok - an ipc endpoint's path fits a socket address. */
static int
config_endpoint_ok(const char *ep)
{
	struct sockaddr_un sun;

	if (strncmp(ep, "ipc://", 6) == 0)
		return strlen(ep + 6) < sizeof(sun.sun_path) && ep[6] == '/';
	return 0;
}

/*
 * config_endpoints - endpoints.NAME: one endpoint or an array of them,
 * at most one ipc:// (else the default stays) and CONFIG_TCP_MAX tcp://.
 */
static int
config_endpoints(json_t *sec, const char *name, char **ipcp, char **tcp,
    size_t *ntcp, char **errp)
{
	json_t *v = json_object_get(sec, name), *item;
	const char *ep;
	size_t k, n;
	int ipc_seen = 0;

	if (v == NULL)
		return 0;
	if (!json_is_string(v) && !json_is_array(v))
		return config_fail(errp,
		    "endpoints.%s: must be an endpoint or an array of them",
		    name);
	n = json_is_string(v) ? 1 : json_array_size(v);
	if (n == 0 || n > 1 + CONFIG_TCP_MAX)
		return config_fail(errp,
		    "endpoints.%s: one ipc:// endpoint and at most %d tcp:// "
		    "ones",
		    name, CONFIG_TCP_MAX);
	for (k = 0; k < n; k++) {
		item = json_is_string(v) ? v : json_array_get(v, k);
		if (!json_is_string(item) || json_string_length(item) == 0 ||
		    strlen(json_string_value(item)) != json_string_length(item))
			return config_fail(errp,
			    "endpoints.%s: each endpoint must be a non-empty "
			    "string",
			    name);
		ep = json_string_value(item);
		if (config_endpoint_ok(ep)) {
			if (ipc_seen++)
				return config_fail(errp,
				    "endpoints.%s: more than one ipc:// "
				    "endpoint",
				    name);
			free(*ipcp);
			*ipcp = xstrdup(ep);
			continue;
		}
		if (!config_tcp_ok(ep))
			return config_fail(errp,
			    "endpoints.%s: \"%.200s\" is not an ipc:// path "
			    "shorter than 108 bytes or a tcp://HOST:PORT "
			    "address",
			    name, ep);
		if (*ntcp == CONFIG_TCP_MAX)
			return config_fail(errp,
			    "endpoints.%s: more than %d tcp:// endpoints", name,
			    CONFIG_TCP_MAX);
		tcp[(*ntcp)++] = xstrdup(ep);
	}
	return 0;
}

/* config_parse - fill cfg (already holding defaults) from root. */
static int
config_parse(json_t *root, struct config *cfg, char **errp)
{
	static const char *const top[] = {"endpoints", "providers", "workers",
	    "memory", "turns", "heartbeat", "restart", "clients", "prices",
	    "permissions", "limits", NULL};
	static const char *const ep_keys[] = {"clients", "workers", NULL};
	static const char *const mem_keys[] = {"ceiling", "floor",
	    "compactionCeiling", "compactionFloor", "jobs", "settleTimeoutMs",
	    "retryMs", "failures", "provider", "model", "gateBytes", NULL};
	static const char *const hb_keys[] = {
	    "intervalMs", "liveness", "remoteLiveness", NULL};
	static const char *const rs_keys[] = {"minMs", "maxMs", NULL};
	static const char *const cl_keys[] = {
	    "max", "replay", "rate", "burst", "perRound", NULL};
	struct config_memory *m = &cfg->memory;
	struct config_clients *c = &cfg->clients;
	const char *key;
	json_t *sec, *v;
	size_t i;
	int rc;

	if (!json_is_object(root))
		return config_fail(errp, "config.json: must be a JSON object");
	json_object_foreach(root, key, v)
	{
		for (i = 0; top[i] != NULL; i++)
			if (strcmp(key, top[i]) == 0)
				break;
		if (top[i] != NULL)
			continue;
		for (i = 0; config_foreign[i] != NULL; i++)
			if (strcmp(key, config_foreign[i]) == 0)
				break;
		if (config_foreign[i] == NULL)
			return config_fail(errp, "%s: unknown setting", key);
		/* Another part reads it, but every section is an object:
		 * {"permissions": 42} is a mistake, refused here at start. */
		if (!json_is_object(v))
			return config_fail(errp, "%s: must be an object", key);
	}
	if ((rc = config_providers(root, cfg, errp)) != 0 ||
	    (rc = config_prices(root, cfg, errp)) != 0 ||
	    (rc = config_permissions(root, cfg, errp)) != 0 ||
	    (rc = config_limits(root, cfg, errp)) != 0)
		return rc;

	if ((rc = config_section(root, "endpoints", &sec, errp)) != 0)
		return rc;
	if (sec != NULL &&
	    ((rc = config_keys(sec, "endpoints", ep_keys, errp)) != 0 ||
		(rc = config_endpoints(sec, "clients", &cfg->client_endpoint,
		     cfg->client_tcp, &cfg->nclient_tcp, errp)) != 0 ||
		(rc = config_endpoints(sec, "workers", &cfg->worker_endpoint,
		     cfg->worker_tcp, &cfg->nworker_tcp, errp)) != 0))
		return rc;

	if ((rc = config_section(root, "memory", &sec, errp)) != 0)
		return rc;
	if (sec != NULL &&
	    ((rc = config_keys(sec, "memory", mem_keys, errp)) != 0 ||
		(rc = config_uint(sec, "memory", "ceiling", 1024, 1UL << 30,
		     &m->ceiling, errp)) != 0 ||
		(rc = config_uint(sec, "memory", "floor", 512, 1UL << 30,
		     &m->floor, errp)) != 0 ||
		(rc = config_uint(sec, "memory", "compactionCeiling", 1024,
		     1UL << 30, &m->cceiling, errp)) != 0 ||
		(rc = config_uint(sec, "memory", "compactionFloor", 512,
		     1UL << 30, &m->cfloor, errp)) != 0 ||
		(rc = config_u(
		     sec, "memory", "jobs", 1, 256, &m->jobs, errp)) != 0 ||
		(rc = config_u(sec, "memory", "settleTimeoutMs", 0, 3600000,
		     &m->settle_ms, errp)) != 0 ||
		(rc = config_u(sec, "memory", "retryMs", 100, 3600000,
		     &m->retry_ms, errp)) != 0 ||
		(rc = config_u(sec, "memory", "failures", 1, 100, &m->failures,
		     errp)) != 0 ||
		(rc = config_str(
		     sec, "memory", "provider", &m->provider, errp)) != 0 ||
		(rc = config_str(sec, "memory", "model", &m->model, errp)) !=
		    0 ||
		(rc = config_u(sec, "memory", "gateBytes", 0, 1U << 24,
		     &m->gate_bytes, errp)) != 0))
		return rc;
	m->provider_set = m->provider != NULL;
	if (m->floor >= m->ceiling)
		return config_fail(errp,
		    "memory.floor: must be below memory.ceiling (%lu >= %lu)",
		    m->floor, m->ceiling);
	if (m->cfloor >= m->cceiling)
		return config_fail(errp,
		    "memory.compactionFloor: must be below "
		    "memory.compactionCeiling (%lu >= %lu)",
		    m->cfloor, m->cceiling);
	if (m->provider != NULL && !config_known_provider(cfg, m->provider))
		return config_fail(errp,
		    "memory.provider: no provider \"%.64s\" in providers and "
		    "no preset of that name",
		    m->provider);

	if ((rc = config_turns(root, cfg, errp)) != 0)
		return rc;
	if (cfg->turn_provider != NULL &&
	    !config_known_provider(cfg, cfg->turn_provider))
		return config_fail(errp,
		    "turns.provider: no provider \"%.64s\" in providers and "
		    "no preset of that name",
		    cfg->turn_provider);
	if (cfg->turn_provider != NULL &&
	    (strcmp(cfg->turn_provider, CONFIG_OFFLINE) == 0 ||
		(config_provider(cfg, cfg->turn_provider) != NULL &&
		    strcmp(provider_preset_find(
			       config_provider(cfg, cfg->turn_provider)->type)
			       ->wire,
			PROVIDER_WIRE_OFFLINE) == 0)))
		return config_fail(errp,
		    "turns.provider: \"%.64s\" is the offline summarizer, "
		    "which cannot answer turns",
		    cfg->turn_provider);

	if ((rc = config_section(root, "heartbeat", &sec, errp)) != 0)
		return rc;
	if (sec != NULL &&
	    ((rc = config_keys(sec, "heartbeat", hb_keys, errp)) != 0 ||
		(rc = config_u(sec, "heartbeat", "intervalMs", 50, 60000,
		     &cfg->heartbeat_ms, errp)) != 0 ||
		(rc = config_u(sec, "heartbeat", "liveness", 2, 100,
		     &cfg->liveness, errp)) != 0 ||
		(rc = config_u(sec, "heartbeat", "remoteLiveness", 2, 100,
		     &cfg->remote_liveness, errp)) != 0))
		return rc;

	if ((rc = config_section(root, "restart", &sec, errp)) != 0)
		return rc;
	if (sec != NULL &&
	    ((rc = config_keys(sec, "restart", rs_keys, errp)) != 0 ||
		(rc = config_u(sec, "restart", "minMs", 10, 600000,
		     &cfg->backoff_min_ms, errp)) != 0 ||
		(rc = config_u(sec, "restart", "maxMs", 10, 3600000,
		     &cfg->backoff_max_ms, errp)) != 0))
		return rc;
	if (cfg->backoff_max_ms < cfg->backoff_min_ms)
		return config_fail(
		    errp, "restart.maxMs: must be at least restart.minMs");

	if ((rc = config_section(root, "clients", &sec, errp)) != 0)
		return rc;
	if (sec != NULL &&
	    ((rc = config_keys(sec, "clients", cl_keys, errp)) != 0 ||
		(rc = config_u(
		     sec, "clients", "max", 1, 100000, &c->max, errp)) != 0 ||
		(rc = config_u(sec, "clients", "replay", 1, 1000000, &c->replay,
		     errp)) != 0 ||
		(rc = config_u(sec, "clients", "rate", 1, 10000000, &c->rate,
		     errp)) != 0 ||
		(rc = config_u(sec, "clients", "burst", 1, 10000000, &c->burst,
		     errp)) != 0 ||
		(rc = config_u(sec, "clients", "perRound", 1, 100000,
		     &c->per_round, errp)) != 0))
		return rc;

	return config_workers(root, cfg, errp);
}

/* config_defaults - every setting at its default for home. */
static void
config_defaults(const char *home, struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->home = xstrdup(home);
	cfg->client_endpoint = xasprintf("ipc://%s/run/shirod.sock", home);
	cfg->worker_endpoint = xasprintf("ipc://%s/run/workers.sock", home);
	cfg->heartbeat_ms = 1000;
	cfg->liveness = 3;
	cfg->remote_liveness = 5;
	cfg->backoff_min_ms = 100;
	cfg->backoff_max_ms = 30000;
	cfg->memory.ceiling = CONFIG_CEILING;
	cfg->memory.floor = CONFIG_FLOOR;
	cfg->memory.cceiling = CONFIG_CCEILING;
	cfg->memory.cfloor = CONFIG_CFLOOR;
	cfg->memory.jobs = CONFIG_JOBS;
	cfg->memory.settle_ms = CONFIG_SETTLE_MS;
	cfg->memory.retry_ms = CONFIG_RETRY_MS;
	cfg->memory.failures = CONFIG_FAILURES;
	cfg->memory.gate_bytes = CONFIG_GATE_BYTES;
	cfg->turns.max_tokens = CONFIG_MAX_TOKENS;
	cfg->turns.max_steps = CONFIG_MAX_STEPS;
	cfg->turns.prune_bytes = CONFIG_PRUNE_BYTES;
	cfg->turns.approval_ms = CONFIG_APPROVAL_MS;
	cfg->turns.workspace_idle_ms = CONFIG_WORKSPACE_IDLE_MS;
	cfg->turns.file_tool_ms = CONFIG_FILE_TOOL_MS;
	cfg->clients.max = 256;
	cfg->clients.replay = 4096;
	cfg->clients.rate = 50000;
	cfg->clients.burst = 10000;
	cfg->clients.per_round = 512;
}

/* config_load_text - parse text (JSON) into cfg with defaults for home. */
int
config_load_text(
    const char *home, const char *text, struct config *cfg, char **errp)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	*errp = NULL;
	config_defaults(home, cfg);
	root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		rc = config_fail(errp, "config.json: line %d column %d: %s",
		    jerr.line, jerr.column, jerr.text);
		config_free(cfg);
		return rc;
	}
	rc = config_parse(root, cfg, errp);
	json_decref(root);
	if (rc != 0)
		config_free(cfg);
	return rc;
}

/* config_load - read home/config.json into cfg; defaults if it is absent. */
int
config_load(const char *home, struct config *cfg, char **errp)
{
	struct buf b = BUF_INIT;
	char chunk[4096], *path;
	size_t n;
	FILE *f;
	int rc;

	*errp = NULL;
	path = xasprintf("%s/config.json", home);
	f = fopen(path, "re");
	if (f == NULL) {
		if (errno == ENOENT) {
			rc = config_load_text(home, "{}", cfg, errp);
		} else {
			rc = -SHIRO_ERR_IO;
			*errp = xasprintf("%s: %s", path, strerror(errno));
			memset(cfg, 0, sizeof(*cfg));
		}
		free(path);
		return rc;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf_add(&b, chunk, n);
		if (b.len > (1U << 20))
			break;
	}
	if (ferror(f) || b.len > (1U << 20)) {
		rc = ferror(f) ? -SHIRO_ERR_IO : -SHIRO_ERR_TOOBIG;
		*errp = xasprintf("%s: %s", path,
		    ferror(f) ? "cannot be read" : "larger than 1 MiB");
		memset(cfg, 0, sizeof(*cfg));
	} else {
		rc = config_load_text(home, b.len ? b.data : "", cfg, errp);
	}
	fclose(f);
	buf_free(&b);
	free(path);
	return rc;
}

/* config_provider - the provider called name, or NULL; borrowed. */
const struct config_provider *
config_provider(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nproviders; i++)
		if (strcmp(cfg->providers[i].name, name) == 0)
			return &cfg->providers[i];
	return NULL;
}

/* config_price - the price of model, or NULL; borrowed. */
const struct config_price *
config_price(const struct config *cfg, const char *model)
{
	size_t i;

	for (i = 0; i < cfg->nprices; i++)
		if (strcmp(cfg->prices[i].model, model) == 0)
			return &cfg->prices[i];
	return NULL;
}

/* config_free - release every string and array of *cfg. */
void
config_free(struct config *cfg)
{
	size_t i;

	free(cfg->home);
	free(cfg->client_endpoint);
	free(cfg->worker_endpoint);
	for (i = 0; i < cfg->nclient_tcp; i++)
		free(cfg->client_tcp[i]);
	for (i = 0; i < cfg->nworker_tcp; i++)
		free(cfg->worker_tcp[i]);
	free(cfg->turn_provider);
	free(cfg->turns.model);
	for (i = 0; i < cfg->turns.ntrusted; i++)
		free(cfg->turns.trusted[i]);
	free(cfg->turns.trusted);
	free(cfg->memory.provider);
	free(cfg->memory.model);
	for (i = 0; i < cfg->nproviders; i++) {
		struct config_provider *p = &cfg->providers[i];

		free(p->name);
		free(p->type);
		free(p->model);
		free(p->url);
		free(p->key_env);
		free(p->key_file);
		free(p->base_url);
		free(p->cheap_model);
		free(p->key_from);
		if (p->key != NULL)
			explicit_bzero(p->key, p->key_len);
		free(p->key);
	}
	free(cfg->providers);
	for (i = 0; i < cfg->nprices; i++)
		free(cfg->prices[i].model);
	free(cfg->prices);
	free(cfg->env_note);
	free(cfg->permissions);
	for (i = 0; i < cfg->nworkers; i++) {
		free(cfg->workers[i].provider);
		free(cfg->workers[i].path);
		free(cfg->workers[i].workspace);
	}
	free(cfg->workers);
	memset(cfg, 0, sizeof(*cfg));
}
