/*
 * fuzz_config - libFuzzer target for shirod's reader of config.json.
 *
 * The input becomes $SHIRO_HOME/config.json and config_load reads it,
 * then provider_resolve completes it against an empty environment, as
 * shirod does at start.  A file config_load refuses must give a negative
 * code, an error text, and an empty struct config; one provider_resolve
 * refuses, a negative code and an error text.  A file it accepts must
 * give settings within the ranges config.h and docs/architecture.md
 * state: every number in its range, floors below ceilings, names and
 * types from their sets, no string empty or over 4096 bytes, every
 * provider a setting names configured (or the built-in offline one),
 * worker groups of at most 32 workers, a provider for model workers
 * only, endpoints that fit a socket address.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "broker/config.h"
#include "broker/provider.h"
#include "proto/log.h"
#include "proto/provider_preset.h"
#include "proto/xmalloc.h"
#include "tests/fuzz/fuzz_util.h"

static char *fuzz_home, *fuzz_file;

/* fuzz_range - panic unless lo <= v <= hi. */
static void
fuzz_range(
    const char *what, unsigned long v, unsigned long lo, unsigned long hi)
{
	if (v < lo || v > hi)
		panic("%s is %lu, outside [%lu, %lu]", what, v, lo, hi);
}

/* fuzz_str - panic unless s is NULL (when it may be) or 1..4096 bytes. */
static void
fuzz_str(const char *what, const char *s, int may_be_null)
{
	if (s == NULL) {
		if (!may_be_null)
			panic("%s is missing", what);
		return;
	}
	if (s[0] == '\0' || strlen(s) > 4096)
		panic("%s has %zu bytes", what, strlen(s));
}

/* fuzz_endpoint - an absolute ipc path that fits a socket address. */
static void
fuzz_endpoint(const char *what, const char *ep)
{
	struct sockaddr_un sun;

	fuzz_str(what, ep, 0);
	if (strncmp(ep, "ipc:///", 7) != 0)
		panic("%s is not an absolute ipc:// path", what);
	if (strlen(ep + 6) >= sizeof(sun.sun_path))
		panic("%s: a socket path of %zu bytes", what, strlen(ep + 6));
}

/* fuzz_tcp - at most CONFIG_TCP_MAX tcp endpoints, each tcp://HOST:PORT
 * of at most 255 printable bytes without a space. */
static void
fuzz_tcp(const char *what, char *const *tcp, size_t n)
{
	size_t k;
	const char *p;

	if (n > CONFIG_TCP_MAX)
		panic("%s: %zu tcp endpoints", what, n);
	for (k = 0; k < n; k++) {
		fuzz_str(what, tcp[k], 0);
		if (strncmp(tcp[k], "tcp://", 6) != 0 ||
		    strrchr(tcp[k], ':') <= tcp[k] + 6 || strlen(tcp[k]) > 255)
			panic(
			    "%s: \"%s\" is not tcp://HOST:PORT", what, tcp[k]);
		for (p = tcp[k]; *p != '\0'; p++)
			if (*p <= ' ' || *p > '~')
				panic("%s: a byte 0x%02x", what,
				    (unsigned char)*p);
	}
}

/* fuzz_known - name is configured or is the built-in offline. */
static int
fuzz_known(const struct config *cfg, const char *name)
{
	return strcmp(name, CONFIG_OFFLINE) == 0 ||
	    config_provider(cfg, name) != NULL;
}

/* fuzz_check_providers - names, types and strings of every provider. */
static void
fuzz_check_providers(const struct config *cfg)
{
	const struct config_provider *p;
	size_t i, j;

	for (i = 0; i < cfg->nproviders; i++) {
		p = &cfg->providers[i];
		fuzz_str("a provider's name", p->name, 0);
		if (strlen(p->name) > 64 ||
		    strspn(p->name,
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789-_.") != strlen(p->name))
			panic("provider name \"%s\"", p->name);
		for (j = 0; j < i; j++)
			if (strcmp(cfg->providers[j].name, p->name) == 0)
				panic("provider %s twice", p->name);
		/* A type is a preset's name or alias ("ollama" too), as
		 * docs/providers.md lists them. */
		fuzz_str("a provider's type", p->type, 0);
		if (provider_preset_find(p->type) == NULL)
			panic("provider type \"%s\"", p->type);
		fuzz_str("providers.model", p->model, 1);
		fuzz_str("providers.url", p->url, 1);
		fuzz_str("providers.keyEnv", p->key_env, 1);
		fuzz_str("providers.keyFile", p->key_file, 1);
	}
}

/* fuzz_check_workers - the worker groups. */
static void
fuzz_check_workers(const struct config *cfg)
{
	const struct config_workers *w;
	size_t i;

	if (cfg->nworkers > 64)
		panic("%zu worker groups", cfg->nworkers);
	for (i = 0; i < cfg->nworkers; i++) {
		w = &cfg->workers[i];
		if ((unsigned)w->role >= CONFIG_NROLES)
			panic("worker role %d", (int)w->role);
		fuzz_range("workers.count", w->count, 0, 32);
		fuzz_str("workers.path", w->path, 1);
		if (w->role == CONFIG_ROLE_MODEL) {
			fuzz_str("a model worker's provider", w->provider, 0);
			if (!fuzz_known(cfg, w->provider))
				panic("model workers of unknown provider %s",
				    w->provider);
		} else if (w->provider != NULL) {
			panic("a %s worker with a provider",
			    config_role_name(w->role));
		}
	}
}

/* fuzz_check - every promise config.h makes about a loaded config. */
static void
fuzz_check(const struct config *cfg)
{
	const struct config_memory *m = &cfg->memory;
	const struct config_clients *c = &cfg->clients;

	if (cfg->home == NULL || strcmp(cfg->home, fuzz_home) != 0)
		panic("home is not the one given");
	fuzz_endpoint("endpoints.clients", cfg->client_endpoint);
	fuzz_endpoint("endpoints.workers", cfg->worker_endpoint);
	fuzz_tcp("endpoints.clients", cfg->client_tcp, cfg->nclient_tcp);
	fuzz_tcp("endpoints.workers", cfg->worker_tcp, cfg->nworker_tcp);
	fuzz_range("heartbeat.remoteLiveness", cfg->remote_liveness, 2, 100);
	fuzz_range("memory.ceiling", m->ceiling, 1024, 1UL << 30);
	fuzz_range("memory.floor", m->floor, 512, m->ceiling - 1);
	fuzz_range("memory.compactionCeiling", m->cceiling, 1024, 1UL << 30);
	fuzz_range("memory.compactionFloor", m->cfloor, 512, m->cceiling - 1);
	fuzz_range("memory.jobs", m->jobs, 1, 256);
	fuzz_range("memory.settleTimeoutMs", m->settle_ms, 0, 3600000);
	fuzz_range("memory.retryMs", m->retry_ms, 100, 3600000);
	fuzz_range("memory.failures", m->failures, 1, 100);
	fuzz_range("memory.gateBytes", m->gate_bytes, 0, 1UL << 24);
	fuzz_str("memory.provider", m->provider, 0);
	if (!fuzz_known(cfg, m->provider))
		panic("memory.provider %s is not configured", m->provider);
	fuzz_str("turns.provider", cfg->turn_provider, 1);
	if (cfg->turn_provider != NULL &&
	    config_provider(cfg, cfg->turn_provider) == NULL)
		panic(
		    "turns.provider %s is not configured", cfg->turn_provider);
	fuzz_range("heartbeat.intervalMs", cfg->heartbeat_ms, 50, 60000);
	fuzz_range("heartbeat.liveness", cfg->liveness, 2, 100);
	fuzz_range("restart.minMs", cfg->backoff_min_ms, 10, 600000);
	fuzz_range(
	    "restart.maxMs", cfg->backoff_max_ms, cfg->backoff_min_ms, 3600000);
	fuzz_range("clients.max", c->max, 1, 100000);
	fuzz_range("clients.replay", c->replay, 1, 1000000);
	fuzz_range("clients.rate", c->rate, 1, 10000000);
	fuzz_range("clients.burst", c->burst, 1, 10000000);
	fuzz_range("clients.perRound", c->per_round, 1, 100000);
	fuzz_check_providers(cfg);
	fuzz_check_workers(cfg);
}

/* LLVMFuzzerTestOneInput - load one config.json and check the result. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct config zero;
	static char *const noenv[] = {NULL};
	struct config cfg;
	char *err = NULL;
	int r;

	if (fuzz_home == NULL) {
		fuzz_home = xstrdup(fuzz_tmpdir());
		fuzz_file = xasprintf("%s/config.json", fuzz_home);
	}
	fuzz_write(fuzz_file, data, size);
	r = config_load(fuzz_home, &cfg, &err);
	if (r != 0) {
		if (r > 0 || err == NULL || err[0] == '\0')
			panic("a refused config without an error text");
		if (memcmp(&cfg, &zero, sizeof(cfg)) != 0)
			panic("a refused config left settings behind");
		free(err);
		return 0;
	}
	if (err != NULL)
		panic("an accepted config with an error text: %s", err);
	r = provider_resolve(&cfg, noenv, &err);
	if (r != 0) {
		if (r > 0 || err == NULL || err[0] == '\0')
			panic("a refused provider without an error text");
		free(err);
		config_free(&cfg);
		return 0;
	}
	if (err != NULL)
		panic("resolved providers with an error text: %s", err);
	fuzz_check(&cfg);
	config_free(&cfg);
	return 0;
}
