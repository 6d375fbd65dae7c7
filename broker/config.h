/*
 * config.h - shirod's settings, read from $SHIRO_HOME/config.json.
 *
 * config_load() fills a struct config with the defaults, then overrides
 * them with what the file says.  A missing file means all defaults.  A
 * file that does not parse, or a key with the wrong type or an
 * out-of-range value, fails with an error text that names the key (for
 * example "memory.floor: must be below memory.ceiling"); shirod prints it
 * and does not start.  Unknown keys are refused too, so that a typo never
 * silently leaves a default in place.
 *
 * The struct owns every string in it; config_free() releases them.
 */
#ifndef SHIRO_BROKER_CONFIG_H
#define SHIRO_BROKER_CONFIG_H

#include <stddef.h>

/* The defaults of the chat memory (docs/memory.md, docs/architecture.md). */
#define CONFIG_CEILING 128000
#define CONFIG_FLOOR 64000
#define CONFIG_CCEILING 32000
#define CONFIG_CFLOOR 16000
#define CONFIG_JOBS 8
#define CONFIG_SETTLE_MS 20000
#define CONFIG_RETRY_MS 10000
#define CONFIG_FAILURES 3
#define CONFIG_GATE_BYTES 8192

/* The provider that needs no network and is always there. */
#define CONFIG_OFFLINE "offline"

/* Turns: the reply's token cap and the step cap of one turn. */
#define CONFIG_MAX_TOKENS 8192
#define CONFIG_MAX_STEPS 50
/* Turns: the bytes of a turn's own messages past which they are pruned
 * on the wire, how long an approval waits for its answer, and how long
 * a workspace's tool and fs workers stay up without a call. */
#define CONFIG_PRUNE_BYTES 400000
#define CONFIG_APPROVAL_MS 600000
#define CONFIG_WORKSPACE_IDLE_MS 300000
#define CONFIG_FILE_TOOL_MS 120000
/* Calls in flight per model worker (READY's jobs), default and most. */
#define CONFIG_PROVIDER_JOBS 4
#define CONFIG_PROVIDER_JOBS_MAX 16

/* The worker roles; the catalogue's permission table is per role. */
enum config_role { CONFIG_ROLE_MODEL, CONFIG_ROLE_TOOL, CONFIG_ROLE_FS };
#define CONFIG_NROLES 3

/*
 * One provider: a name other settings use, and how to reach it.  The
 * first group of fields is what config.json said; the second is filled
 * by provider_resolve() (broker/provider.h) from those, the preset the
 * type names and the environment.
 */
struct config_provider {
	char *name; /* "offline", "anthropic", or any name the user picks */
	char *type; /* a wire or a preset (provider.h); NULL: the name */
	char *model; /* the model's id at the provider; may be NULL */
	char *url; /* base URL; NULL for the provider's default */
	char *key_env; /* read the API key from this variable of shirod */
	char *key_file; /* or from this file (first line) */
	unsigned jobs; /* calls in flight per worker; 0: the default */

	/* Resolved (provider_resolve). */
	const char *preset; /* the preset's name (static) */
	const char *wire; /* offline, anthropic, openai-responses, ... */
	char *base_url; /* the URL the worker is given; NULL for offline */
	char *cheap_model; /* the model for compactions by default */
	char *key; /* the API key, in memory only; NULL: none */
	size_t key_len;
	char *key_from; /* where the key came from, for people: a variable
			 * name or "keyFile PATH"; never the key */
	int needs_key; /* a hosted service: no key, no call */
	int from_env; /* made from the environment, not config.json */
};

/* A model's price in US dollars per million tokens (estimates). */
struct config_price {
	char *model;
	double input, output, cache_read, cache_write;
};

/* One group of identical workers: role, provider (model role) and count. */
struct config_workers {
	enum config_role role;
	char *provider; /* model workers only; NULL for tool and fs */
	char *path; /* the program; NULL = next to shirod */
	char *workspace; /* fs and tool workers: --workspace; NULL: none */
	unsigned count;
};

struct config_memory {
	unsigned long ceiling, floor; /* the view's sawtooth, bytes */
	unsigned long cceiling, cfloor; /* the compaction view's */
	unsigned jobs; /* compactions in flight at most */
	unsigned settle_ms; /* a turn waits this long for its view */
	unsigned retry_ms; /* a failed node is tried again this often */
	unsigned failures; /* the n-th failure cuts the input instead */
	char *provider; /* compaction provider's name (resolved: never
			 * NULL after provider_resolve) */
	char *model; /* the compaction model; NULL: the provider's cheap
		      * one (resolved: its model id, NULL for offline) */
	int provider_set; /* config.json named memory.provider */
	unsigned gate_bytes; /* a compaction waits for a prefix another
			      * call writes only when the cache lacks at
			      * least this much of its own */
};

/* Turns: who answers, and within what. */
struct config_turns {
	char *model; /* the turns' model; NULL: the provider's */
	unsigned max_tokens; /* the cap on one call's output */
	unsigned thinking; /* a thinking budget in tokens; 0: off */
	unsigned max_steps; /* model calls in one turn at most */
	char **trusted; /* workspaces whose AGENTS.md is read */
	size_t ntrusted;
	unsigned prune_bytes; /* a turn's own parts past this are pruned */
	unsigned approval_ms; /* an approval unanswered this long is no */
	unsigned workspace_idle_ms; /* idle workspace workers stop */
	unsigned file_tool_ms; /* a file tool's call is canceled after this */
};

/* What a turn may spend; 0 is no limit. */
struct config_limits {
	unsigned long long turn_tokens; /* tokens of one turn's calls */
	unsigned long long turn_uusd; /* millionths of a dollar per turn */
	unsigned long long day_uusd; /* and per local day, over turns */
};

/* tcp endpoints per socket at most. */
#define CONFIG_TCP_MAX 4

struct config_clients {
	unsigned max; /* attached clients at most */
	unsigned replay; /* events kept for a reconnecting client */
	unsigned rate; /* messages per second a client may send */
	unsigned burst; /* and in one burst */
	unsigned per_round; /* messages read from all clients per poll round */
};

struct config {
	char *home; /* $SHIRO_HOME, absolute */
	char *client_endpoint; /* ZeroMQ endpoint for clients (ipc) */
	char *worker_endpoint; /* ZeroMQ endpoint for workers (ipc) */
	/* tcp endpoints beside them (CURVE with keys/server.key, docs/
	 * remote.md): off unless endpoints.clients or .workers lists one */
	char *client_tcp[CONFIG_TCP_MAX];
	size_t nclient_tcp;
	char *worker_tcp[CONFIG_TCP_MAX];
	size_t nworker_tcp;
	char *turn_provider; /* NULL: no model configured for turns */
	struct config_turns turns;
	unsigned heartbeat_ms; /* heartbeat period, both ways */
	unsigned liveness; /* missed heartbeats that mean dead */
	unsigned remote_liveness; /* the same for a remote worker */
	unsigned backoff_min_ms; /* first restart delay of a worker */
	unsigned backoff_max_ms; /* the delay doubles up to this */
	struct config_memory memory;
	struct config_clients clients;
	struct config_provider *providers;
	size_t nproviders;
	struct config_workers *workers;
	size_t nworkers;
	int workers_set; /* config.json had a "workers" array */
	struct config_price *prices;
	size_t nprices;
	struct config_limits limits;
	/* "permissions" as JSON text (checked with perm_load at load, so a
	 * rule that does not parse names itself); NULL: none. */
	char *permissions;
	int yolo; /* permissions.yolo */
	/* Resolved by provider_resolve. */
	char *env_note; /* why the environment selected nothing, if it
			 * tried (a variable without its partner) */
};

/*
 * config_load - read home/config.json into *cfg (defaults for anything
 * not set).  home must be absolute.  On failure returns a negative
 * SHIRO_ERR_* (-SHIRO_ERR_CORRUPT for bad content, -SHIRO_ERR_IO for a
 * file that cannot be read) and sets *errp to a malloc'd text naming the
 * key and the problem (caller frees); *cfg is then left empty.
 */
int config_load(const char *home, struct config *cfg, char **errp);

/*
 * config_load_text - the same from a JSON text (for tests and for
 * `shirod --check-config`); home is copied into cfg->home.
 */
int config_load_text(
    const char *home, const char *text, struct config *cfg, char **errp);

/* config_free - release every string and array of *cfg. */
void config_free(struct config *cfg);

/* config_provider - the provider called name, or NULL; borrowed. */
const struct config_provider *config_provider(
    const struct config *cfg, const char *name);

/*
 * config_add_workers - append a group of count workers of role (and
 * provider, copied) to cfg.
 */
void config_add_workers(struct config *cfg, enum config_role role,
    const char *provider, unsigned count);

/* config_fail - set *errp (freeing an earlier text) to a formatted text
 * naming a setting; returns -SHIRO_ERR_CORRUPT. */
int config_fail(char **errp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* config_price - the price of model, or NULL; borrowed. */
const struct config_price *config_price(
    const struct config *cfg, const char *model);

/* config_role_name - "model", "tool" or "fs". */
const char *config_role_name(enum config_role role);

/* config_role_parse - the role called name; -SHIRO_ERR_INVAL if none. */
int config_role_parse(const char *name, enum config_role *rolep);

#endif
