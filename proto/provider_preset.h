/*
 * provider_preset.h - the presets of model providers: which wire a
 * service or a local server speaks, its usual base URL, the variable
 * holding its key and its usual models (docs/providers.md, "Presets").
 *
 * shirod resolves a provider's settings with them (broker/provider.c),
 * and shiro-worker, which runs a model worker on another machine with
 * that machine's own key, does the same for the one provider it serves.
 * Data only: no I/O, no state.
 */
#ifndef SHIRO_PROTO_PROVIDER_PRESET_H
#define SHIRO_PROTO_PROVIDER_PRESET_H

/* The wires, as the worker's --wire names them. */
#define PROVIDER_WIRE_OFFLINE "offline"
#define PROVIDER_WIRE_ANTHROPIC "anthropic"
#define PROVIDER_WIRE_RESPONSES "openai-responses"
#define PROVIDER_WIRE_CHAT "openai-chat"

/* A preset: a wire and the usual ways of a service or a local server. */
struct provider_preset {
	const char *name; /* what type or SHIRO_PROVIDER says */
	const char *wire;
	const char *base_url; /* NULL for offline */
	const char *key_env; /* the variable of its key; NULL: keyless */
	const char *url_env; /* the SDK's base URL variable, if any */
	const char *model; /* for turns; NULL: the user must name one */
	const char *cheap; /* for compactions */
	int local; /* a server on this machine: no key, no price */
};

/* provider_preset_find - the preset called name (aliases included). */
const struct provider_preset *provider_preset_find(const char *name);

/* provider_preset_names - the preset names for messages, ", "-joined. */
const char *provider_preset_names(void);

#endif
