/*
 * provider_preset.c - the presets of model providers (see
 * provider_preset.h).
 */
#include <stddef.h>
#include <string.h>

#include "proto/provider_preset.h"

/*
 * The presets.  Models are current ones of each service (for turns) and
 * its cheap one (for compactions, D6); a local server has no usual
 * model but Ollama's and llama.cpp's (which serves whatever it loaded).
 */
static const struct provider_preset provider_presets[] = {
    {"offline", PROVIDER_WIRE_OFFLINE, NULL, NULL, NULL, NULL, NULL, 1},
    {"anthropic", PROVIDER_WIRE_ANTHROPIC, "https://api.anthropic.com",
	"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "claude-sonnet-4-5",
	"claude-haiku-4-5", 0},
    {"openai", PROVIDER_WIRE_RESPONSES, "https://api.openai.com/v1",
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-5", "gpt-5-mini", 0},
    {"openai-responses", PROVIDER_WIRE_RESPONSES, "https://api.openai.com/v1",
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-5", "gpt-5-mini", 0},
    {"openai-chat", PROVIDER_WIRE_CHAT, "https://api.openai.com/v1",
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-5", "gpt-5-mini", 0},
    {"ollama", PROVIDER_WIRE_CHAT, "http://127.0.0.1:11434/v1", NULL, NULL,
	"llama3.2", "llama3.2", 1},
    {"lmstudio", PROVIDER_WIRE_CHAT, "http://127.0.0.1:1234/v1", NULL, NULL,
	NULL, NULL, 1},
    {"llamacpp", PROVIDER_WIRE_CHAT, "http://127.0.0.1:8080/v1", NULL, NULL,
	"local", "local", 1},
    {"vllm", PROVIDER_WIRE_CHAT, "http://127.0.0.1:8000/v1", NULL, NULL, NULL,
	NULL, 1},
    {"openrouter", PROVIDER_WIRE_CHAT, "https://openrouter.ai/api/v1",
	"OPENROUTER_API_KEY", NULL, "anthropic/claude-sonnet-4.5",
	"anthropic/claude-haiku-4.5", 0},
    {"groq", PROVIDER_WIRE_CHAT, "https://api.groq.com/openai/v1",
	"GROQ_API_KEY", NULL, "llama-3.3-70b-versatile", "llama-3.1-8b-instant",
	0},
    {"deepseek", PROVIDER_WIRE_CHAT, "https://api.deepseek.com/v1",
	"DEEPSEEK_API_KEY", NULL, "deepseek-chat", "deepseek-chat", 0},
    {"xai", PROVIDER_WIRE_CHAT, "https://api.x.ai/v1", "XAI_API_KEY", NULL,
	"grok-4", "grok-3-mini", 0},
};
#define PROVIDER_NPRESETS \
	(sizeof(provider_presets) / sizeof(provider_presets[0]))

/* The old type names of config.json, kept working. */
static const struct {
	const char *alias, *name;
} provider_aliases[] = {{"openai-compatible", "openai-chat"}};

/* provider_preset_find - the preset called name (aliases included). */
const struct provider_preset *
provider_preset_find(const char *name)
{
	size_t k;

	if (name == NULL)
		return NULL;
	for (k = 0; k < sizeof(provider_aliases) / sizeof(provider_aliases[0]);
	     k++)
		if (strcmp(name, provider_aliases[k].alias) == 0)
			name = provider_aliases[k].name;
	for (k = 0; k < PROVIDER_NPRESETS; k++)
		if (strcmp(name, provider_presets[k].name) == 0)
			return &provider_presets[k];
	return NULL;
}

/* provider_preset_names - every preset's name, for messages. */
const char *
provider_preset_names(void)
{
	return "offline, anthropic, openai, openai-responses, openai-chat, "
	       "ollama, lmstudio, llamacpp, vllm, openrouter, groq, "
	       "deepseek, xai";
}
