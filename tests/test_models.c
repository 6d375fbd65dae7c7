/*
 * test_models - shirod's side of model calls, piece by piece: which
 * provider serves turns and compactions for every row of the
 * zero-configuration rules, prices, the system prompt and the tools,
 * requests laid out in cache blocks with their marks, the prefix gate,
 * the user's AGENTS.md read so that a planted link sends nothing else,
 * and the usage records surviving a reopen of the store.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/config.h"
#include "broker/gate.h"
#include "broker/prompt.h"
#include "broker/provider.h"
#include "broker/request.h"
#include "broker/usage.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "store/store.h"
#include "tests/harness.h"

/* One row of the zero-configuration rules. */
struct row {
	const char *what;
	const char *config; /* config.json */
	const char *env[6]; /* NAME=value, NULL-ended */
	const char *turns; /* provider name, NULL: none */
	const char *wire;
	const char *url;
	const char *model; /* the turns' model */
	const char *key_from; /* NULL: no key */
	const char *key; /* its value */
	const char *memory; /* compaction provider */
	const char *memory_model;
	const char *error; /* when it must fail: what the error names */
};

static const struct row rows[] = {
    {"nothing at all", "{}", {NULL}, NULL, NULL, NULL, NULL, NULL, NULL,
	"offline", NULL, NULL},
    {"ANTHROPIC_API_KEY", "{}", {"ANTHROPIC_API_KEY=ak", NULL}, "anthropic",
	"anthropic", "https://api.anthropic.com", "claude-sonnet-4-5",
	"ANTHROPIC_API_KEY", "ak", "anthropic", "claude-haiku-4-5", NULL},
    {"ANTHROPIC_BASE_URL", "{}",
	{"ANTHROPIC_API_KEY=ak", "ANTHROPIC_BASE_URL=http://127.0.0.1:8787/",
	    NULL},
	"anthropic", "anthropic", "http://127.0.0.1:8787", "claude-sonnet-4-5",
	"ANTHROPIC_API_KEY", "ak", "anthropic", "claude-haiku-4-5", NULL},
    {"OPENAI_API_KEY", "{}", {"OPENAI_API_KEY=ok", NULL}, "openai",
	"openai-responses", "https://api.openai.com/v1", "gpt-5",
	"OPENAI_API_KEY", "ok", "openai", "gpt-5-mini", NULL},
    {"OPENAI_BASE_URL", "{}",
	{"OPENAI_API_KEY=ok", "OPENAI_BASE_URL=http://127.0.0.1:8787/v1", NULL},
	"openai", "openai-responses", "http://127.0.0.1:8787/v1", "gpt-5",
	"OPENAI_API_KEY", "ok", "openai", "gpt-5-mini", NULL},
    {"both keys: anthropic first", "{}",
	{"OPENAI_API_KEY=ok", "ANTHROPIC_API_KEY=ak", NULL}, "anthropic",
	"anthropic", "https://api.anthropic.com", "claude-sonnet-4-5",
	"ANTHROPIC_API_KEY", "ak", "anthropic", "claude-haiku-4-5", NULL},
    {"SHIRO_PROVIDER a wire", "{}",
	{"SHIRO_PROVIDER=openai-chat", "OPENAI_API_KEY=ok",
	    "ANTHROPIC_API_KEY=ak", NULL},
	"openai-chat", "openai-chat", "https://api.openai.com/v1", "gpt-5",
	"OPENAI_API_KEY", "ok", "openai-chat", "gpt-5-mini", NULL},
    {"SHIRO_PROVIDER a local preset", "{}", {"SHIRO_PROVIDER=ollama", NULL},
	"ollama", "openai-chat", "http://127.0.0.1:11434/v1", "llama3.2", NULL,
	NULL, "ollama", "llama3.2", NULL},
    {"SHIRO_PROVIDER a hosted preset", "{}",
	{"SHIRO_PROVIDER=groq", "GROQ_API_KEY=gk", NULL}, "groq", "openai-chat",
	"https://api.groq.com/openai/v1", "llama-3.3-70b-versatile",
	"GROQ_API_KEY", "gk", "groq", "llama-3.1-8b-instant", NULL},
    {"SHIRO_BASE_URL over ANTHROPIC_BASE_URL", "{}",
	{"ANTHROPIC_API_KEY=ak", "ANTHROPIC_BASE_URL=http://a.example:1",
	    "SHIRO_BASE_URL=http://b.example:2", NULL},
	"anthropic", "anthropic", "http://b.example:2", "claude-sonnet-4-5",
	"ANTHROPIC_API_KEY", "ak", "anthropic", "claude-haiku-4-5", NULL},
    {"SHIRO_API_KEY over ANTHROPIC_API_KEY", "{}",
	{"ANTHROPIC_API_KEY=ak", "SHIRO_API_KEY=sk", NULL}, "anthropic",
	"anthropic", "https://api.anthropic.com", "claude-sonnet-4-5",
	"SHIRO_API_KEY", "sk", "anthropic", "claude-haiku-4-5", NULL},
    {"SHIRO_MODEL", "{}", {"ANTHROPIC_API_KEY=ak", "SHIRO_MODEL=m1", NULL},
	"anthropic", "anthropic", "https://api.anthropic.com", "m1",
	"ANTHROPIC_API_KEY", "ak", "anthropic", "claude-haiku-4-5", NULL},
    {"config.json names a provider: it wins",
	"{\"providers\": {\"local\": {\"type\": \"ollama\", \"model\": "
	"\"qwen\"}}, \"turns\": {\"provider\": \"local\"}}",
	{"ANTHROPIC_API_KEY=ak", "SHIRO_MODEL=m1", NULL}, "local",
	"openai-chat", "http://127.0.0.1:11434/v1", "qwen", NULL, NULL, "local",
	"llama3.2", NULL},
    {"config.json names only budgets: the environment stays",
	"{\"memory\": {\"ceiling\": 200000}}", {"OPENAI_API_KEY=ok", NULL},
	"openai", "openai-responses", "https://api.openai.com/v1", "gpt-5",
	"OPENAI_API_KEY", "ok", "openai", "gpt-5-mini", NULL},
    {"memory.provider offline", "{\"memory\": {\"provider\": \"offline\"}}",
	{"ANTHROPIC_API_KEY=ak", NULL}, "anthropic", "anthropic",
	"https://api.anthropic.com", "claude-sonnet-4-5", "ANTHROPIC_API_KEY",
	"ak", "offline", NULL, NULL},
    {"memory.model", "{\"memory\": {\"model\": \"tiny\"}}",
	{"ANTHROPIC_API_KEY=ak", NULL}, "anthropic", "anthropic",
	"https://api.anthropic.com", "claude-sonnet-4-5", "ANTHROPIC_API_KEY",
	"ak", "anthropic", "tiny", NULL},
    {"turns.model over SHIRO_MODEL", "{\"turns\": {\"model\": \"cfg\"}}",
	{"ANTHROPIC_API_KEY=ak", "SHIRO_MODEL=env", NULL}, "anthropic",
	"anthropic", "https://api.anthropic.com", "cfg", "ANTHROPIC_API_KEY",
	"ak", "anthropic", "claude-haiku-4-5", NULL},
    {"turns.provider a preset's name",
	"{\"turns\": {\"provider\": "
	"\"anthropic\"}}",
	{"ANTHROPIC_API_KEY=ak", NULL}, "anthropic", "anthropic",
	"https://api.anthropic.com", "claude-sonnet-4-5", "ANTHROPIC_API_KEY",
	"ak", "anthropic", "claude-haiku-4-5", NULL},
    {"a provider without its key: compactions offline", "{}",
	{"SHIRO_PROVIDER=anthropic", NULL}, "anthropic", "anthropic",
	"https://api.anthropic.com", "claude-sonnet-4-5", NULL, NULL, "offline",
	NULL, NULL},
    {"a local URL needs no key", "{}",
	{"SHIRO_PROVIDER=openai-chat",
	    "SHIRO_BASE_URL=http://127.0.0.1:8080/v1", NULL},
	"openai-chat", "openai-chat", "http://127.0.0.1:8080/v1", "gpt-5", NULL,
	NULL, "openai-chat", "gpt-5-mini", NULL},
    {"a preset without a model", "{}", {"SHIRO_PROVIDER=vllm", NULL}, "vllm",
	"openai-chat", "http://127.0.0.1:8000/v1", NULL, NULL, NULL, "offline",
	NULL, NULL},
    {"SHIRO_API_KEY alone selects nothing", "{}", {"SHIRO_API_KEY=sk", NULL},
	NULL, NULL, NULL, NULL, NULL, NULL, "offline", NULL, NULL},
    {"SHIRO_PROVIDER unknown", "{}", {"SHIRO_PROVIDER=bogus", NULL}, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, "SHIRO_PROVIDER"},
    {"a base URL that is not one", "{}",
	{"ANTHROPIC_API_KEY=ak", "ANTHROPIC_BASE_URL=ftp://x", NULL}, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, "ANTHROPIC_BASE_URL"},
    {"turns.provider offline", "{\"turns\": {\"provider\": \"offline\"}}",
	{NULL}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	"turns.provider"},
    {"turns.provider unknown", "{\"turns\": {\"provider\": \"ghost\"}}", {NULL},
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "turns.provider"},
};

/* eq - both NULL or the same string. */
static int
eq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	    (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Every row of the zero-configuration rules. */
static void
zero_config_rows(void)
{
	struct config cfg;
	const struct config_provider *tp, *mp;
	char *err = NULL;
	size_t r;
	int rc;

	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct row *w = &rows[r];

		rc = config_load_text("/h", w->config, &cfg, &err);
		if (rc == 0)
			rc =
			    provider_resolve(&cfg, (char *const *)w->env, &err);
		if (w->error != NULL) {
			CHECKF(rc != 0 && err != NULL &&
				strstr(err, w->error) != NULL,
			    "%s: wanted an error naming %s, got %d %s", w->what,
			    w->error, rc, err ? err : "");
			if (rc == 0)
				config_free(&cfg);
			free(err);
			err = NULL;
			continue;
		}
		CHECKF(rc == 0, "%s: %s", w->what, err ? err : "");
		tp = cfg.turn_provider
		    ? config_provider(&cfg, cfg.turn_provider)
		    : NULL;
		CHECKF(eq(cfg.turn_provider, w->turns), "%s: turns %s", w->what,
		    cfg.turn_provider ? cfg.turn_provider : "none");
		if (w->turns != NULL) {
			CHECK(tp != NULL);
			CHECKF(eq(tp->wire, w->wire), "%s: wire %s", w->what,
			    tp->wire);
			CHECKF(eq(tp->base_url, w->url), "%s: url %s", w->what,
			    tp->base_url ? tp->base_url : "none");
			CHECKF(eq(cfg.turns.model, w->model), "%s: model %s",
			    w->what,
			    cfg.turns.model ? cfg.turns.model : "none");
			CHECKF(eq(tp->key != NULL ? tp->key_from : NULL,
				   w->key_from),
			    "%s: key from %s", w->what,
			    tp->key ? tp->key_from : "none");
			CHECKF(eq(tp->key, w->key), "%s: another key", w->what);
		}
		CHECKF(eq(cfg.memory.provider, w->memory), "%s: memory %s",
		    w->what, cfg.memory.provider);
		CHECKF(eq(cfg.memory.model, w->memory_model),
		    "%s: memory model %s", w->what,
		    cfg.memory.model ? cfg.memory.model : "none");
		/* Every serving provider has its workers. */
		mp = config_provider(&cfg, cfg.memory.provider);
		CHECK(mp != NULL);
		{
			size_t k;
			int tm = 0, mm = 0;

			for (k = 0; k < cfg.nworkers; k++) {
				if (cfg.workers[k].role != CONFIG_ROLE_MODEL)
					continue;
				tm |= tp != NULL &&
				    eq(cfg.workers[k].provider, tp->name);
				mm |= eq(cfg.workers[k].provider, mp->name);
			}
			CHECKF(mm && (tp == NULL || tm), "%s: no workers",
			    w->what);
		}
		config_free(&cfg);
		free(err);
		err = NULL;
	}
}

/* A provider config.json defines takes its key from its keyEnv or its
 * preset's variable, and the default pool serves what must be served. */
static void
config_providers_and_pool(void)
{
	const char *env[] = {"MYKEY=mk", "ANTHROPIC_API_KEY=ak", NULL};
	const struct config_provider *p;
	struct config cfg;
	char *err = NULL;

	CHECK_EQ_INT(config_load_text("/h",
			 "{\"providers\": {\"a\": {\"type\": \"anthropic\", "
			 "\"keyEnv\": \"MYKEY\", \"jobs\": 2}, \"b\": "
			 "{\"type\": \"anthropic\", \"url\": "
			 "\"https://proxy.example/x/\"}}, \"turns\": "
			 "{\"provider\": \"a\"}, \"memory\": {\"provider\": "
			 "\"b\"}}",
			 &cfg, &err),
	    0);
	CHECKF(
	    provider_resolve(&cfg, (char *const *)env, &err) == 0, "%s", err);
	p = config_provider(&cfg, "a");
	CHECK_EQ_STR(p->key, "mk");
	CHECK_EQ_STR(p->key_from, "MYKEY");
	CHECK_EQ_INT(p->jobs, 2);
	p = config_provider(&cfg, "b");
	CHECK_EQ_STR(p->key, "ak");
	CHECK_EQ_STR(p->base_url, "https://proxy.example/x");
	CHECK_EQ_INT(p->jobs, CONFIG_PROVIDER_JOBS);
	/* b: 8 compactions in flight at 4 a worker; a: one for turns. */
	CHECK_EQ_INT(cfg.nworkers, 2);
	CHECK_EQ_STR(cfg.workers[0].provider, "b");
	CHECK_EQ_INT(cfg.workers[0].count, 2);
	CHECK_EQ_STR(cfg.workers[1].provider, "a");
	CHECK_EQ_INT(cfg.workers[1].count, 1);
	config_free(&cfg);

	/* An explicit pool that forgets the compaction provider gets it. */
	CHECK_EQ_INT(config_load_text("/h",
			 "{\"workers\": [{\"role\": \"tool\"}]}", &cfg, &err),
	    0);
	CHECK_EQ_INT(provider_resolve(&cfg, (char *const *)env, &err), 0);
	CHECK_EQ_INT(cfg.nworkers, 2);
	CHECK_EQ_INT(cfg.workers[0].role, CONFIG_ROLE_TOOL);
	CHECK_EQ_STR(cfg.workers[1].provider, "anthropic");
	CHECK_EQ_INT(cfg.workers[1].count, 3);
	config_free(&cfg);

	/* Bad settings name their key. */
	CHECK(config_load_text("/h",
		  "{\"providers\": {\"x\": {\"type\": \"bogus\"}}}", &cfg,
		  &err) != 0 &&
	    strstr(err, "providers.x.type") != NULL);
	free(err);
	err = NULL;
	CHECK(config_load_text("/h",
		  "{\"providers\": {\"x\": {\"type\": \"ollama\", \"jobs\": "
		  "17}}}",
		  &cfg, &err) != 0 &&
	    strstr(err, "providers.x.jobs") != NULL);
	free(err);
	err = NULL;
	CHECK(config_load_text(
		  "/h", "{\"turns\": {\"thinking\": 100}}", &cfg, &err) != 0 &&
	    strstr(err, "turns.thinking") != NULL);
	free(err);
	err = NULL;
	CHECK(config_load_text("/h",
		  "{\"turns\": {\"trustedWorkspaces\": [\"rel\"]}}", &cfg,
		  &err) != 0 &&
	    strstr(err, "turns.trustedWorkspaces[0]") != NULL);
	free(err);
	err = NULL;
	CHECK(config_load_text("/h",
		  "{\"prices\": {\"m\": {\"input\": \"cheap\"}}}", &cfg,
		  &err) != 0 &&
	    strstr(err, "prices.m.input") != NULL);
	free(err);
	err = NULL;
	/* The prefix gate's threshold: 8 KB unless set, 0 to 16 MiB. */
	CHECK_EQ_INT(config_load_text("/h", "{}", &cfg, &err), 0);
	CHECK_EQ_INT(cfg.memory.gate_bytes, CONFIG_GATE_BYTES);
	CHECK_EQ_INT(CONFIG_GATE_BYTES, 8192);
	config_free(&cfg);
	CHECK_EQ_INT(config_load_text(
			 "/h", "{\"memory\": {\"gateBytes\": 0}}", &cfg, &err),
	    0);
	CHECK_EQ_INT(cfg.memory.gate_bytes, 0);
	config_free(&cfg);
	CHECK(config_load_text("/h", "{\"memory\": {\"gateBytes\": 16777217}}",
		  &cfg, &err) != 0 &&
	    strstr(err, "memory.gateBytes") != NULL);
	free(err);
}

/* Costs come from config.json's prices, else the built-in table; a
 * local server costs nothing, an unknown model has no price. */
static void
prices_and_cost(void)
{
	const char *env[] = {"SHIRO_PROVIDER=ollama", NULL};
	unsigned long long tok[4] = {1000000, 1000, 10000, 0}, c;
	struct config cfg;
	char *err = NULL;

	CHECK_EQ_INT(config_load_text("/h",
			 "{\"prices\": {\"mine\": {\"input\": 2, \"output\": "
			 "4, \"cacheRead\": 0.5}}}",
			 &cfg, &err),
	    0);
	CHECK_EQ_INT(provider_resolve(&cfg, (char *const *)env, &err), 0);
	/* 1M input at $3, 1000 output at $15, 10000 cache reads at $0.30. */
	CHECK(provider_cost(&cfg, NULL, "claude-sonnet-4-5", tok, &c) == 1);
	CHECK_EQ_INT(c, 3000000 + 15000 + 3000);
	CHECK(provider_cost(&cfg, NULL, "mine", tok, &c) == 1);
	CHECK_EQ_INT(c, 2000000 + 4000 + 5000);
	CHECK(provider_cost(&cfg, config_provider(&cfg, "ollama"), "llama3.2",
		  tok, &c) == 1);
	CHECK_EQ_INT(c, 0);
	CHECK(provider_cost(&cfg, NULL, "unheard-of", tok, &c) == 0);
	config_free(&cfg);
}

/* The system prompt and the tools: no date, no path, no state; both
 * marks named; every schema a JSON object; under 12 KB with room for the
 * tools still to come. */
static void
prompt_and_tools_are_static(void)
{
	const struct prompt_tool *t;
	struct request_base rb;
	const char *sys = prompt_system();
	json_error_t jerr;
	json_t *j;
	size_t n, k, i;

	CHECK(strstr(sys, "\"Turn:\"") != NULL);
	CHECK(strstr(sys, "\"Compaction:\"") != NULL);
	CHECK(strstr(sys, "zoom(id, n)") != NULL);
	CHECK(strstr(sys, "date(id)") != NULL);
	CHECK(strstr(sys, "/home") == NULL && strstr(sys, "$") == NULL);
	for (k = 0; sys[k] != '\0'; k++) {
		/* No number that could be a year or a time of day. */
		CHECK(!(sys[k] >= '0' && sys[k] <= '9' && sys[k + 1] >= '0' &&
		    sys[k + 1] <= '9' && sys[k + 2] >= '0' &&
		    sys[k + 2] <= '9'));
		CHECK((unsigned char)sys[k] < 0x80);
	}
	t = prompt_tools(&n);
	CHECK(n >= 2);
	CHECK_EQ_STR(t[0].name, "zoom");
	CHECK_EQ_STR(t[1].name, "date");
	for (k = 0; k < n; k++) {
		j = json_loads(t[k].schema, JSON_REJECT_DUPLICATES, &jerr);
		CHECKF(j != NULL && json_is_object(j), "%s: %s", t[k].name,
		    jerr.text);
		CHECK_EQ_STR(
		    json_string_value(json_object_get(j, "type")), "object");
		CHECK(json_object_get(j, "properties") != NULL);
		json_decref(j);
		for (i = 0; i < k; i++)
			CHECK(strcmp(t[i].name, t[k].name) != 0);
	}
	/* The workspace's tools of the catalogue follow the broker's. */
	for (i = 0, k = 0; k < n; k++)
		i += strcmp(t[k].name, "read_file") == 0 ||
		    strcmp(t[k].name, "edit_file") == 0 ||
		    strcmp(t[k].name, "bash") == 0;
	CHECK_EQ_INT(i, 3);
	request_base_init(&rb, "/h", NULL, 0);
	/* The system prompt and every tool, the workspace's and the
	 * project memory's: under 12 KB in all. */
	CHECKF(request_base_bytes(&rb) < 12288, "%zu bytes",
	    request_base_bytes(&rb));
	request_base_free(&rb);
}

/* text_of - the text of part k of content. */
static const char *
text_of(const struct msg_val *content, size_t k)
{
	return msg_val_str(content->u.a.items[k], "text");
}

/* marked - whether part k of content carries a cache mark. */
static int
marked(const struct msg_val *content, size_t k)
{
	const struct msg_val *c = msg_val_get(content->u.a.items[k], "cache");

	return c != NULL && c->type == MSG_V_BOOL && c->u.b;
}

/* make_view - a view of n lines "i+1|line i". */
static void
make_view(struct request_view *v, size_t n, const char *tag)
{
	char line[64];
	size_t k;

	request_view_init(v);
	for (k = 0; k < n; k++) {
		snprintf(line, sizeof(line), "%zu+1|%s %zu", k, tag, k);
		request_view_add(v, line, strlen(line));
	}
}

/* The view goes in blocks of 4 lines (<chat> not counted), the last
 * whole block marked; the parts join back to the view byte for byte. */
static void
view_blocks_and_marks(void)
{
	static const size_t sizes[] = {0, 1, 3, 4, 5, 8, 10};
	struct request_base rb;
	struct request_view v;
	struct msg *m;
	struct msg_val *content;
	struct buf joined = BUF_INIT;
	size_t s, k, whole, nmarks;
	uint64_t h;

	request_base_init(&rb, "/h", NULL, 0);
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		make_view(&v, sizes[s], "x");
		m = msg_new(MSG_JOB);
		content = msg_val_set_arr(msg_set_map(m, "data"), "c");
		whole = request_view_parts(content, &v, 0, &rb, &h);
		CHECK_EQ_INT(whole, sizes[s] - sizes[s] % 4);
		CHECK_EQ_INT(content->u.a.n, sizes[s] ? (sizes[s] + 3) / 4 : 1);
		buf_reset(&joined);
		nmarks = 0;
		for (k = 0; k < content->u.a.n; k++) {
			buf_adds(&joined, text_of(content, k));
			nmarks += marked(content, k);
			/* Part k holds lines 4k .. 4k+3 and "<chat>" first. */
			if (k == 0)
				CHECK(strncmp(text_of(content, 0), "<chat>\n",
					  7) == 0);
		}
		CHECK_EQ_INT(nmarks, whole > 0 ? 1 : 0);
		if (whole > 0)
			CHECK(marked(content, whole / 4 - 1));
		CHECK(joined.len == v.text.len &&
		    memcmp(joined.data, v.text.data, v.text.len) == 0);
		CHECK(h == request_prefix_hash(&v, &rb, whole));
		msg_destroy(&m);
		request_view_free(&v);
	}
	/* 10 lines: [<chat> 0-3] [4-7, marked] [8-9]. */
	make_view(&v, 10, "x");
	m = msg_new(MSG_JOB);
	content = msg_val_set_arr(msg_set_map(m, "data"), "c");
	(void)request_view_parts(content, &v, 0, &rb, NULL);
	CHECK_EQ_STR(text_of(content, 0),
	    "<chat>\n0+1|x 0\n1+1|x 1\n2+1|x 2\n3+1|x 3\n");
	CHECK_EQ_STR(
	    text_of(content, 1), "4+1|x 4\n5+1|x 5\n6+1|x 6\n7+1|x 7\n");
	CHECK_EQ_STR(text_of(content, 2), "8+1|x 8\n9+1|x 9\n");
	CHECK(!marked(content, 0) && marked(content, 1) && !marked(content, 2));
	msg_destroy(&m);
	request_view_free(&v);
	buf_free(&joined);
	request_base_free(&rb);
}

/* Between batches a view is a byte prefix of the next one, and the mark
 * moves only forward; beyond the lookback the old mark is kept, once the
 * view up to it is unchanged. */
static void
lookback_keeps_the_old_entry(void)
{
	struct request_base rb;
	struct request_view a, b, c;
	struct request_mark last = {0, 0};
	struct msg *m;
	struct msg_val *content;
	size_t k, nmarks = 0;

	request_base_init(&rb, "/h", NULL, 0);
	make_view(&a, 9, "x");
	make_view(&b, 9 + 4 * 30, "x");
	CHECK(a.text.len < b.text.len &&
	    memcmp(a.text.data, b.text.data, a.text.len) == 0);
	request_mark_set(&last, &a, &rb);
	CHECK_EQ_INT(last.lines, 8);
	/* 30 blocks on: the old block gets a mark of its own. */
	CHECK_EQ_INT(request_lookback(&b, &rb, &last), 8);
	m = msg_new(MSG_JOB);
	content = msg_val_set_arr(msg_set_map(m, "data"), "c");
	(void)request_view_parts(
	    content, &b, request_lookback(&b, &rb, &last), &rb, NULL);
	for (k = 0; k < content->u.a.n; k++)
		nmarks += marked(content, k);
	CHECK_EQ_INT(nmarks, 2);
	CHECK(marked(content, 1));
	msg_destroy(&m);
	/* Within the lookback: no extra mark. */
	request_view_free(&b);
	make_view(&b, 9 + 4 * 10, "x");
	CHECK_EQ_INT(request_lookback(&b, &rb, &last), 0);
	/* A batch changed the view: the old entry is useless. */
	make_view(&c, 9 + 4 * 30, "y");
	CHECK_EQ_INT(request_lookback(&c, &rb, &last), 0);
	request_view_free(&a);
	request_view_free(&b);
	request_view_free(&c);
	request_base_free(&rb);
}

/* A request carries the system blocks, the tools with their schemas,
 * the cache key, and at most four marks. */
static void
request_head_has_everything(void)
{
	char *instr[] = {"# The user's instructions\n\nbe brief"};
	struct request_base rb;
	struct msg *m;
	struct msg_val *req;
	const struct msg_val *sys, *tools;

	request_base_init(&rb, "/home/u/.shiro", instr, 1);
	m = msg_new(MSG_JOB);
	msg_set_int(m, "job", 1);
	msg_set_str(m, "kind", "call");
	req = msg_val_set_map(msg_set_map(m, "data"), "request");
	request_head(req, &rb, "claude-x", 1000, 0);
	CHECK_EQ_STR(msg_val_str(req, "model"), "claude-x");
	sys = msg_val_get(req, "system");
	CHECK(sys != NULL && sys->u.a.n == 2);
	CHECK_EQ_STR(sys->u.a.items[0]->u.s.ptr, prompt_system());
	CHECK_EQ_STR(sys->u.a.items[1]->u.s.ptr, instr[0]);
	tools = msg_val_get(req, "tools");
	CHECK(tools != NULL && tools->u.a.n >= 2);
	CHECK_EQ_STR(msg_val_str(tools->u.a.items[0], "name"), "zoom");
	CHECK(msg_val_str(tools->u.a.items[0], "schema") != NULL);
	/* The cache key names the chat without its path. */
	CHECK(strncmp(msg_val_str(req, "cache_key"), "shiro-", 6) == 0);
	CHECK(strstr(msg_val_str(req, "cache_key"), "home") == NULL);
	CHECK(msg_val_get(req, "thinking") == NULL);
	CHECK(msg_check(m) == 0);
	msg_destroy(&m);
	/* A thinking budget, when the settings give one. */
	m = msg_new(MSG_JOB);
	req = msg_val_set_map(msg_set_map(m, "data"), "request");
	request_head(req, &rb, "claude-x", 8192, 4096);
	CHECK(msg_val_get(req, "thinking") != NULL &&
	    msg_val_get(req, "thinking")->u.i == 4096);
	CHECK(msg_val_get(req, "max_tokens")->u.i == 8192);
	msg_destroy(&m);
	request_base_free(&rb);
}

/* An assistant's parts from a worker are copied only when well formed. */
static void
reply_parts_are_checked(void)
{
	struct msg *m = msg_new(MSG_JOB), *out = msg_new(MSG_JOB);
	struct msg_val *d = msg_set_map(m, "data"), *arr, *p, *dst;
	char *big;

	arr = msg_val_set_arr(d, "good");
	p = msg_val_add_map(arr);
	msg_val_set_str(p, "type", "thinking");
	msg_val_set_str(p, "text", "hmm");
	msg_val_set_str(p, "signature", "sig");
	msg_val_set_str(p, "wire", "anthropic");
	msg_val_set_str(p, "stray", "dropped");
	p = msg_val_add_map(arr);
	msg_val_set_str(p, "type", "tool_use");
	msg_val_set_str(p, "id", "t1");
	msg_val_set_str(p, "name", "zoom");
	msg_val_set_str(p, "input", "{\"id\":0,\"n\":1}");
	dst = msg_val_set_arr(msg_set_map(out, "data"), "c");
	CHECK_EQ_INT(request_copy_parts(dst, arr), 2);
	CHECK(msg_val_get(dst->u.a.items[0], "stray") == NULL);
	CHECK_EQ_STR(msg_val_str(dst->u.a.items[0], "signature"), "sig");
	CHECK_EQ_STR(
	    msg_val_str(dst->u.a.items[1], "input"), "{\"id\":0,\"n\":1}");
	/* Each of these is refused whole. */
	arr = msg_val_set_arr(d, "a");
	msg_val_add_str(arr, "not a map");
	CHECK_EQ_INT(request_copy_parts(dst, arr), -1);
	arr = msg_val_set_arr(d, "b");
	p = msg_val_add_map(arr);
	msg_val_set_str(p, "type", "tool_use");
	msg_val_set_str(p, "id", "t1");
	CHECK_EQ_INT(request_copy_parts(dst, arr), -1);
	arr = msg_val_set_arr(d, "c");
	p = msg_val_add_map(arr);
	msg_val_set_str(p, "type", "exec");
	CHECK_EQ_INT(request_copy_parts(dst, arr), -1);
	arr = msg_val_set_arr(d, "e");
	p = msg_val_add_map(arr);
	msg_val_set_str(p, "type", "text");
	msg_val_set_int(p, "text", 3);
	CHECK_EQ_INT(request_copy_parts(dst, arr), -1);
	big = xmalloc(300);
	memset(big, 'n', 299);
	big[299] = '\0';
	arr = msg_val_set_arr(d, "f");
	p = msg_val_add_map(arr);
	msg_val_set_str(p, "type", "tool_use");
	msg_val_set_str(p, "id", "t1");
	msg_val_set_str(p, "name", big);
	msg_val_set_str(p, "input", "{}");
	CHECK_EQ_INT(request_copy_parts(dst, arr), -1);
	CHECK_EQ_INT(dst->u.a.n, 2);
	free(big);
	msg_destroy(&m);
	msg_destroy(&out);
}

/* A second call marking the prefix another is writing waits until that
 * one's response starts; a call that ends unstarted releases it; cached
 * entries are used until their life is over. */
static void
gate_holds_a_second_writer(void)
{
	struct gate g;
	uint64_t k1[2] = {11, 22}, k2[2] = {11, 33}, k3[1] = {44};

	gate_init(&g, 1000);
	CHECK(gate_may_go(&g, k1, 2, 0));
	gate_sent(&g, 1, k1, 2, 0);
	CHECK_EQ_INT(gate_writing(&g), 2);
	/* Same system prefix (11) being written: wait. */
	CHECK(!gate_may_go(&g, k2, 2, 10));
	CHECK(gate_may_go(&g, k3, 1, 10));
	CHECK(gate_started(&g, 1, 20));
	CHECK(gate_may_go(&g, k2, 2, 30));
	gate_sent(&g, 2, k2, 2, 30);
	/* 11 is cached: only 33 is written by call 2. */
	CHECK_EQ_INT(gate_writing(&g), 1);
	/* Call 2 fails before its response starts: 33 has no writer. */
	CHECK(gate_done(&g, 2));
	CHECK_EQ_INT(gate_writing(&g), 0);
	CHECK(gate_may_go(&g, k2, 2, 40));
	/* Past the life, 11 is not cached: a new writer, and a wait. */
	gate_sent(&g, 3, k1, 2, 5000);
	CHECK(!gate_may_go(&g, k2, 2, 5001));
	gate_free(&g);
}

/* The keys of a view's block boundaries are its prefixes' keys, made as
 * the lines are added: the same bytes the same keys, one changed byte a
 * different key from its block on, and a part block hashed whole. */
static void
view_keys_are_prefix_keys(void)
{
	struct request_base rb;
	struct request_view a, b;
	uint64_t ka[64], kb[64];
	size_t bytes[64], na, nb, k;

	request_base_init(&rb, "/h", NULL, 0);
	make_view(&a, 203, "x");
	make_view(&b, 203, "x");
	na = request_boundaries(&a, &rb, 7, ka, bytes, 64);
	CHECK_EQ_INT(na, 51); /* the base, then 50 whole blocks */
	CHECK(ka[0] == (rb.hash ^ 7));
	CHECK_EQ_INT(bytes[0], request_base_bytes(&rb));
	for (k = 1; k < na; k++) {
		CHECK(ka[k] == (request_prefix_hash(&a, &rb, 4 * k) ^ 7));
		CHECK_EQ_INT(bytes[k], bytes[0] + a.ends[4 * k - 1]);
	}
	CHECK(request_prefix_hash(&a, &rb, 203) !=
	    request_prefix_hash(&a, &rb, 202));
	CHECK(request_prefix_hash(&a, &rb, 203) ==
	    request_prefix_hash(&b, &rb, 203));
	CHECK_EQ_INT(request_boundaries(&a, &rb, 7, ka, bytes, 3), 3);
	request_view_free(&b);
	/* Line 21 (block 5) differs in one byte. */
	request_view_init(&b);
	for (k = 0; k < 203; k++) {
		char line[64];

		snprintf(line, sizeof(line), "%zu+1|%s %zu", k,
		    k == 21 ? "y" : "x", k);
		request_view_add(&b, line, strlen(line));
	}
	na = request_boundaries(&a, &rb, 7, ka, bytes, 64);
	nb = request_boundaries(&b, &rb, 7, kb, bytes, 64);
	CHECK_EQ_INT(nb, na);
	for (k = 0; k < nb; k++)
		CHECKF((ka[k] == kb[k]) == (k <= 5), "boundary %zu", k);
	request_view_free(&a);
	request_view_free(&b);
	request_base_free(&rb);
}

/* How much of a call's marked prefix the cache lacks: the bytes past the
 * longest boundary cached and alive; all of it when none is. */
static void
gate_unread_counts_the_uncached(void)
{
	struct gate g;
	uint64_t keys[4] = {1, 2, 3, 4}, old[2] = {1, 2};
	size_t bytes[4] = {3000, 5000, 9000, 20000};

	gate_init(&g, 1000);
	CHECK_EQ_INT(gate_unread(&g, keys, bytes, 4, 0), 20000);
	CHECK_EQ_INT(gate_unread(&g, keys, bytes, 0, 0), 0);
	gate_sent(&g, 1, old, 2, 0);
	/* Being written is not cached yet. */
	CHECK_EQ_INT(gate_unread(&g, keys, bytes, 4, 10), 20000);
	CHECK(gate_started(&g, 1, 20));
	CHECK_EQ_INT(gate_unread(&g, keys, bytes, 4, 30), 15000);
	CHECK_EQ_INT(gate_unread(&g, keys, bytes, 2, 30), 0);
	/* Past its life the entry is gone. */
	CHECK_EQ_INT(gate_unread(&g, keys, bytes, 4, 5000), 20000);
	gate_free(&g);
}

/* write_file - dir/name with text. */
static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* AGENTS.md is read only as a regular file with one link: a symbolic
 * link or a hard link planted in a workspace, a FIFO, a huge or binary
 * file is left out, and nothing of its target is read. */
static void
agents_md_cannot_be_planted(void)
{
	const char *dir = harness_tmpdir();
	char home[PATH_MAX], ws[PATH_MAX], p[PATH_MAX + 16],
	    secret[PATH_MAX + 8];
	char *text, **blocks = NULL, *notes = NULL, *trusted[1];
	const char *why;
	size_t len, n = 0, k;
	struct buf big = BUF_INIT;

	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(ws, sizeof(ws), "%s/ws", dir);
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	CHECK(mkdir(home, 0700) == 0 && mkdir(ws, 0700) == 0);
	write_file(secret, "sk-ant-THE-SECRET");
	snprintf(p, sizeof(p), "%s/AGENTS.md", home);
	CHECK_EQ_INT(prompt_read_file(p, &text, &len, &why), -SHIRO_ERR_NOENT);
	write_file(p, "Answer in English.");
	CHECK_EQ_INT(prompt_read_file(p, &text, &len, &why), 0);
	CHECK_EQ_STR(text, "Answer in English.");
	free(text);
	/* A symbolic link. */
	snprintf(p, sizeof(p), "%s/AGENTS.md", ws);
	CHECK(symlink(secret, p) == 0);
	CHECK(prompt_read_file(p, &text, &len, &why) < 0 && text == NULL);
	CHECK(strstr(why, "symbolic") != NULL);
	/* A hard link. */
	CHECK(unlink(p) == 0);
	CHECK(link(secret, p) == 0);
	CHECK(prompt_read_file(p, &text, &len, &why) < 0 && text == NULL);
	CHECK(strstr(why, "hard link") != NULL);
	/* A FIFO: refused at once, never waited on. */
	CHECK(unlink(p) == 0);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(prompt_read_file(p, &text, &len, &why) < 0 && text == NULL);
	CHECK(strstr(why, "regular") != NULL);
	/* Too large, and not UTF-8. */
	CHECK(unlink(p) == 0);
	for (k = 0; k < PROMPT_INSTRUCTIONS_MAX + 10; k++)
		buf_addc(&big, 'a');
	write_file(p, big.data);
	CHECK(prompt_read_file(p, &text, &len, &why) == -SHIRO_ERR_TOOBIG);
	write_file(p, "caf\xe9\n");
	CHECK(prompt_read_file(p, &text, &len, &why) < 0);
	/* The blocks: home's first, then the trusted workspace's; a
	 * refused file is left out and said so. */
	trusted[0] = ws;
	prompt_instructions(home, trusted, 1, &blocks, &n, &notes);
	CHECK_EQ_INT(n, 1);
	CHECK(strstr(blocks[0], "Answer in English.") != NULL);
	CHECK(notes != NULL && strstr(notes, ws) != NULL);
	for (k = 0; k < n; k++)
		CHECK(strstr(blocks[k], "THE-SECRET") == NULL);
	write_file(p, "Run make check before you say done.");
	free(notes);
	notes = NULL;
	prompt_instructions(home, trusted, 1, &blocks, &n, &notes);
	CHECK_EQ_INT(n, 3);
	CHECK(strstr(blocks[2], "make check") != NULL);
	CHECK(strstr(blocks[2], ws) == NULL);
	CHECK(notes == NULL);
	/* An untrusted workspace is never read. */
	for (k = 0; k < n; k++)
		free(blocks[k]);
	free(blocks);
	blocks = NULL;
	n = 0;
	prompt_instructions(home, NULL, 0, &blocks, &n, &notes);
	CHECK_EQ_INT(n, 1);
	for (k = 0; k < n; k++)
		free(blocks[k]);
	free(blocks);
	buf_free(&big);
}

/* Usage goes to the store in one commit and adds up across reopens. */
static void
usage_survives_a_reopen(void)
{
	const char *home = harness_tmpdir();
	struct usage_tokens t = {{100, 20, 70, 30}};
	struct store *s = NULL;
	struct usage u;
	size_t k;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		CHECK_EQ_INT(store_open(home, NULL, &s, NULL), 0);
		CHECK_EQ_INT(usage_load(&u, s), 0);
		CHECK_EQ_INT(u.n, pass ? 2 : 0);
		usage_add(&u, "anthropic", "claude-haiku-4-5", &t);
		usage_add(&u, "anthropic", "claude-haiku-4-5", &t);
		usage_add(&u, "local", "org/model:7b", &t);
		CHECK_EQ_INT(usage_flush(&u, s), 0);
		CHECK_EQ_INT(usage_flush(&u, s), 0);
		usage_free(&u);
		store_close(&s);
	}
	CHECK_EQ_INT(store_open(home, NULL, &s, NULL), 0);
	CHECK_EQ_INT(usage_load(&u, s), 0);
	CHECK_EQ_INT(u.n, 2);
	for (k = 0; k < u.n; k++) {
		const struct store_usage *r = &u.rows[k].total;

		if (strcmp(r->provider, "anthropic") == 0) {
			CHECK_EQ_STR(r->model, "claude-haiku-4-5");
			CHECK_EQ_INT(r->calls, 4);
			CHECK_EQ_INT(r->input, 400);
			CHECK_EQ_INT(r->output, 80);
			CHECK_EQ_INT(r->cache_read, 280);
			CHECK_EQ_INT(r->cache_write, 120);
		} else {
			CHECK_EQ_STR(r->provider, "local");
			CHECK_EQ_STR(r->model, "org/model:7b");
			CHECK_EQ_INT(r->calls, 2);
		}
	}
	usage_free(&u);
	store_close(&s);
}

/* A worker's usage map is read strictly: whole numbers within bounds. */
static void
usage_map_is_untrusted(void)
{
	struct usage_tokens t;
	struct msg *m = msg_new(MSG_RESULT);
	struct msg_val *u;

	msg_set_int(m, "job", 1);
	CHECK_EQ_INT(usage_read(m, &t), 0);
	CHECK_EQ_INT(t.v[0], 0);
	u = msg_set_map(m, "usage");
	msg_val_set_int(u, "input", 5);
	msg_val_set_int(u, "cache_read", 7);
	CHECK_EQ_INT(usage_read(m, &t), 0);
	CHECK(t.v[0] == 5 && t.v[2] == 7 && t.v[1] == 0);
	msg_val_set_int(u, "output", -1);
	CHECK_EQ_INT(usage_read(m, &t), -SHIRO_ERR_PROTO);
	msg_val_set_int(u, "output", (int64_t)(USAGE_MAX_TOKENS + 1));
	CHECK_EQ_INT(usage_read(m, &t), -SHIRO_ERR_PROTO);
	msg_val_set_str(u, "output", "12");
	CHECK_EQ_INT(usage_read(m, &t), -SHIRO_ERR_PROTO);
	msg_destroy(&m);
}

/* The compaction tasks carry their input whole and the 512-dash ruler. */
static void
tasks_carry_the_ruler(void)
{
	struct buf b = BUF_INIT;
	char ruler[514];

	memset(ruler, '-', 512);
	ruler[512] = '\n';
	ruler[513] = '\0';
	prompt_compress_task(&b, 12, "user", "line one\nline two", 17, 512);
	CHECK(strncmp(b.data, "Compaction:", 11) == 0);
	CHECK(strstr(b.data, "message 12 (kind user)") != NULL);
	CHECK(strstr(b.data, "line one\nline two") != NULL);
	CHECK(b.len >= 513 && strcmp(b.data + b.len - 513, ruler) == 0);
	CHECK(b.data[b.len - 514] == '\n');
	buf_reset(&b);
	prompt_merge_task(&b, 3, 1, "left half", 9, "right half", 10, 512);
	CHECK(strstr(b.data, "8+4|left half\n12+4|right half\n") != NULL);
	CHECK(strstr(b.data, "8+8") != NULL);
	CHECK(strstr(b.data, "messages 8 to 15") != NULL);
	CHECK(strcmp(b.data + b.len - 513, ruler) == 0);
	buf_free(&b);
}

static const struct harness_test tests[] = {
    HT(zero_config_rows),
    HT(config_providers_and_pool),
    HT(prices_and_cost),
    HT(prompt_and_tools_are_static),
    HT(view_blocks_and_marks),
    HT(lookback_keeps_the_old_entry),
    HT(request_head_has_everything),
    HT(reply_parts_are_checked),
    HT(gate_holds_a_second_writer),
    HT(view_keys_are_prefix_keys),
    HT(gate_unread_counts_the_uncached),
    HT(agents_md_cannot_be_planted),
    HT(usage_survives_a_reopen),
    HT(usage_map_is_untrusted),
    HT(tasks_carry_the_ruler),
};

HARNESS_MAIN(tests)
