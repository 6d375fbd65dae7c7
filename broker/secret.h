/*
 * secret.h - the API keys shirod holds for its providers.
 *
 * shirod reads every key once, at start, before it serves anything: a
 * provider's keyEnv from its own environment, else its keyFile (the
 * first line).  It keeps them in memory only, hands each to the model
 * workers of its provider in a SECRET message, and never writes them
 * anywhere.  Then it erases the values of those variables (and of the
 * well-known provider variables, SECRET_ENV_NAMES) in the memory the
 * kernel shows as /proc/PID/environ, unsets them, and makes itself
 * non-dumpable, so that a process of the same user can neither read
 * the environment it started with nor attach to it and read its memory.
 */
#ifndef SHIRO_BROKER_SECRET_H
#define SHIRO_BROKER_SECRET_H

#include <stddef.h>

#include "config.h"

/* Variables that hold a provider's key by convention: always erased. */
#define SECRET_ENV_NAMES \
	"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SHIRO_API_KEY", \
	    "OPENROUTER_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", \
	    "XAI_API_KEY"

/* The longest key kept, in bytes (a key file's first line). */
#define SECRET_MAX 8192

struct secret {
	char *provider; /* the provider's name */
	unsigned char *key;
	size_t len;
};

struct secrets {
	struct secret *v;
	size_t n;
};

/*
 * secret_load - read the key of every provider of cfg that names one,
 * erase the key variables from this process's environment and make the
 * process non-dumpable.  A key that cannot be read is logged (its
 * provider's workers then get none) and does not stop shirod.  Returns 0.
 */
int secret_load(struct secrets *s, const struct config *cfg);

/* secret_get - the key of provider, NULL if none; borrowed. */
const unsigned char *secret_get(
    const struct secrets *s, const char *provider, size_t *lenp);

/* secret_free - wipe and free every key. */
void secret_free(struct secrets *s);

/*
 * secret_env_erase - erase the value of variable name in this process's
 * environment: in the block the process started with (what
 * /proc/self/environ shows) as well as wherever environ points, then
 * unset it.
 */
void secret_env_erase(const char *name);

#endif
