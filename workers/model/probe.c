/*
 * probe.c - the endpoint probe (probe.h).
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mono.h"
#include "proto/xmalloc.h"
#include "workers/model/probe.h"

#define PROBE_TOTAL_MS 5000 /* the whole probe, at most */

/* probe_discard - curl's write callback: the body is not needed. */
static size_t
probe_discard(char *p, size_t size, size_t nmemb, void *userp)
{
	(void)p;
	(void)userp;
	return size * nmemb;
}

/* probe_run - probe the endpoint of o. */
int
probe_run(const struct model_opts *o)
{
	char err[CURL_ERROR_SIZE] = "";
	const char *base;
	char *url;
	uint64_t start;
	long status = 0, connect_ms;
	CURLcode rc;
	CURL *c;
	size_t n;

	if (o->wire == NULL) {
		printf("%s: the built-in summarizer, no endpoint to probe\n",
		    o->wire_name);
		return 0;
	}
	base = o->base_url ? o->base_url : o->wire->base;
	n = strlen(base);
	while (n > 0 && base[n - 1] == '/')
		n--;
	url = xasprintf("%.*s%s", (int)n, base, o->wire->probe);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (c = curl_easy_init()) == NULL) {
		printf("%s at %.*s: cannot start libcurl\n", o->wire->name,
		    (int)n, base);
		free(url);
		return 1;
	}
	connect_ms =
	    o->connect_ms < PROBE_TOTAL_MS ? o->connect_ms : PROBE_TOTAL_MS;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)PROBE_TOTAL_MS);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "shiro-model-worker/1");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, probe_discard);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	start = mono_ms();
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	if (status != 0) {
		/* Whatever the status, something answered. */
		printf("%s at %.*s: answered HTTP %ld in %llu ms\n",
		    o->wire->name, (int)n, base, status,
		    (unsigned long long)(mono_ms() - start));
		free(url);
		return 0;
	}
	printf("%s at %.*s: no answer: %s\n", o->wire->name, (int)n, base,
	    err[0] ? err : curl_easy_strerror(rc));
	free(url);
	return 1;
}
