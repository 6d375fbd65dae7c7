/*
 * provider.h - which model serves turns and which compactions, where it
 * is, and with what key (docs/providers.md).
 *
 * A provider is reached through a wire, the format of its HTTP API:
 * anthropic (Messages), openai-responses, openai-chat (Chat Completions,
 * spoken by the compatible servers) or offline (the built-in summarizer,
 * no network).  A preset names a wire with a usual base URL, the
 * variable holding its key and a default model for turns and for
 * compactions: ollama, lmstudio, llamacpp, vllm, openrouter, groq,
 * deepseek, xai, and the wires themselves.  The model worker knows only
 * wires; shirod resolves presets.
 *
 * provider_resolve() is a pure function of the settings and an
 * environment block: it reads no file, no clock and no global.  It
 * applies the zero-configuration rules of the official SDKs
 * (ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL select anthropic, else
 * OPENAI_API_KEY and OPENAI_BASE_URL select openai-responses; SHIRO_*
 * override those; a provider that config.json names wins over all of
 * them), fills every resolved field of the config's providers, and adds
 * the default worker groups.  Keys from keyFile are read afterwards by
 * provider_load_keys(), the only call here that touches the disk.
 */
#ifndef SHIRO_BROKER_PROVIDER_H
#define SHIRO_BROKER_PROVIDER_H

#include <stddef.h>

#include "proto/provider_preset.h"

#include "config.h"

/*
 * provider_resolve - resolve cfg's providers against envp (a NULL-ended
 * array of "NAME=value", as environ).  Afterwards:
 *   - every entry of cfg->providers has wire, base_url, model,
 *     cheap_model, key (when its variable holds one) and key_from;
 *   - a provider selected by the environment is one more entry (named
 *     after its preset: "anthropic", "openai", "ollama", ...), unless
 *     config.json defines one of that name;
 *   - cfg->turn_provider names the turns' provider or is NULL, and
 *     cfg->turns.model its model;
 *   - cfg->memory.provider names the compactions' provider ("offline"
 *     when no other has what it needs), cfg->memory.model its model;
 *   - every provider that serves turns or compactions has a group of
 *     model workers (the default pool when config.json has none).
 * Returns 0, or -SHIRO_ERR_CORRUPT with *errp (malloc'd) naming the
 * setting or variable that is wrong.
 */
int provider_resolve(struct config *cfg, char *const *envp, char **errp);

/*
 * provider_load_keys - read the key of every provider that has a keyFile
 * and no key yet (its first line).  A file that cannot be read leaves
 * the provider without a key and adds a line to *notesp (malloc'd, may
 * stay NULL).  Keys stay in memory; only SECRET carries them on.
 */
void provider_load_keys(struct config *cfg, char **notesp);

/* provider_usable - p can be called: offline, or keyless, or has its key
 * (or a keyFile), and has a model. */
int provider_usable(const struct config_provider *p);

/*
 * provider_cost - the estimated cost in millionths of a US dollar of
 * these token counts of model (served by provider p, may be NULL):
 * config.json's price, else the built-in table, else 0 for a local
 * server.  Returns 1 when a price was known, 0 when not (*uusd = 0).
 */
int provider_cost(const struct config *cfg, const struct config_provider *p,
    const char *model, const unsigned long long tokens[4],
    unsigned long long *uusd);

/* The order of provider_cost's tokens[]. */
enum provider_tokens {
	PROVIDER_TOK_INPUT,
	PROVIDER_TOK_OUTPUT,
	PROVIDER_TOK_CACHE_READ,
	PROVIDER_TOK_CACHE_WRITE
};

#endif
