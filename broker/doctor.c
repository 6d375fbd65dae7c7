/*
 * doctor.c - `shirod --doctor`: which provider would serve turns and
 * compactions with these settings and this environment, and whether its
 * endpoint answers (`shiro doctor` runs it; docs/providers.md).
 *
 * shirod never speaks HTTP, so each endpoint is probed by the model
 * worker: `shiro-model-worker --probe --wire W --base-url URL` makes one
 * short request without a key and prints one line.  No key is printed,
 * only where each came from.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/mono.h"
#include "proto/xmalloc.h"

#include "doctor.h"
#include "provider.h"

/* A probe that has not ended by then is killed. */
#define DOCTOR_PROBE_MS 15000

/* One endpoint's answer. */
struct doctor_probe {
	const struct config_provider *p;
	int answered;
	char line[512];
};

/* doctor_quote - s as a JSON string into b. */
static void
doctor_quote(struct buf *b, const char *s)
{
	buf_addc(b, '"');
	for (; s != NULL && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			buf_printf(b, "\\%c", c);
		else if (c < 0x20)
			buf_printf(b, "\\u%04x", c);
		else
			buf_addc(b, (char)c);
	}
	buf_addc(b, '"');
}

/* doctor_probe - run the worker's probe of p's endpoint into pr. */
static void
doctor_probe(const char *bindir, const struct config_provider *p,
    struct doctor_probe *pr)
{
	char *prog = xasprintf("%s/shiro-model-worker", bindir);
	const char *argv[8];
	struct pollfd pfd;
	uint64_t end;
	size_t got = 0;
	ssize_t r;
	pid_t pid;
	int fds[2], st = 0, i = 0;

	memset(pr, 0, sizeof(*pr));
	pr->p = p;
	argv[i++] = prog;
	argv[i++] = "--probe";
	argv[i++] = "--wire";
	argv[i++] = p->wire;
	argv[i++] = "--base-url";
	argv[i++] = p->base_url;
	argv[i] = NULL;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(
		    pr->line, sizeof(pr->line), "pipe: %s", strerror(errno));
		free(prog);
		return;
	}
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		execv(prog, (char *const *)argv);
		dprintf(
		    STDOUT_FILENO, "cannot run %s: %s", prog, strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	end = mono_ms() + DOCTOR_PROBE_MS;
	while (pid > 0 && got < sizeof(pr->line) - 1 && mono_ms() < end) {
		pfd.fd = fds[0];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)(end - mono_ms())) <= 0)
			break;
		r = read(fds[0], pr->line + got, sizeof(pr->line) - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fds[0]);
	pr->line[got] = '\0';
	pr->line[strcspn(pr->line, "\n")] = '\0';
	if (pid > 0 && waitpid(pid, &st, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		(void)waitpid(pid, &st, 0);
		if (pr->line[0] == '\0')
			snprintf(pr->line, sizeof(pr->line),
			    "the probe did not end within %d s",
			    DOCTOR_PROBE_MS / 1000);
	}
	pr->answered = pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (pid < 0)
		snprintf(
		    pr->line, sizeof(pr->line), "fork: %s", strerror(errno));
	free(prog);
}

/* doctor_running - the pid of a shirod holding home's chat lock, or 0. */
static long
doctor_running(const char *home)
{
	char *path = xasprintf("%s/chat/lock", home), buf[32];
	long pid = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, NULL, 10);
	return pid > 0 && kill((pid_t)pid, 0) == 0 ? pid : 0;
}

/* doctor_text_role - one "turns:" or "compactions:" line. */
static void
doctor_text_role(struct buf *b, const char *role,
    const struct config_provider *p, const char *model)
{
	buf_printf(b, "%-13s", role);
	if (p == NULL) {
		buf_adds(b,
		    "none: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or "
		    "SHIRO_PROVIDER=ollama), or name one in "
		    "config.json\n");
		return;
	}
	if (strcmp(p->wire, PROVIDER_WIRE_OFFLINE) == 0) {
		buf_adds(b, "offline (the built-in summarizer, no network)\n");
		return;
	}
	buf_printf(b, "%s (%s at %s, model %s, ", p->name, p->wire, p->base_url,
	    model ? model : "NONE: set SHIRO_MODEL");
	if (p->key != NULL)
		buf_printf(b, "key from %s)\n", p->key_from);
	else if (p->needs_key)
		buf_printf(b, "NO KEY: set %s)\n",
		    p->key_env ? p->key_env
			: provider_preset_find(p->preset)->key_env
			? provider_preset_find(p->preset)->key_env
			: "SHIRO_API_KEY");
	else
		buf_adds(b, "no key needed)\n");
}

/* doctor_json_role - one role as a JSON value. */
static void
doctor_json_role(
    struct buf *b, const struct config_provider *p, const char *model)
{
	if (p == NULL) {
		buf_adds(b, "null");
		return;
	}
	buf_adds(b, "{\"provider\":");
	doctor_quote(b, p->name);
	buf_adds(b, ",\"wire\":");
	doctor_quote(b, p->wire);
	buf_adds(b, ",\"base_url\":");
	if (p->base_url)
		doctor_quote(b, p->base_url);
	else
		buf_adds(b, "null");
	buf_adds(b, ",\"model\":");
	if (model)
		doctor_quote(b, model);
	else
		buf_adds(b, "null");
	buf_adds(b, ",\"key\":");
	if (p->key)
		doctor_quote(b, p->key_from);
	else
		buf_adds(b, "null");
	buf_printf(b, ",\"usable\":%s}", provider_usable(p) ? "true" : "false");
}

/* doctor_run - the report (see doctor.h). */
int
doctor_run(
    const struct config *cfg, const char *bindir, const char *notes, int json)
{
	const struct config_provider *tp = NULL, *mp, *todo[2];
	struct doctor_probe probes[2] = {{NULL, 0, ""}, {NULL, 0, ""}};
	struct buf b = BUF_INIT;
	size_t np = 0, k;
	long running;
	int ok;

	if (cfg->turn_provider != NULL)
		tp = config_provider(cfg, cfg->turn_provider);
	mp = config_provider(cfg, cfg->memory.provider);
	todo[0] = tp;
	todo[1] = mp != tp ? mp : NULL;
	for (k = 0; k < 2; k++)
		if (todo[k] != NULL && todo[k]->base_url != NULL &&
		    strcmp(todo[k]->wire, PROVIDER_WIRE_OFFLINE) != 0)
			doctor_probe(bindir, todo[k], &probes[np++]);
	ok = tp != NULL && provider_usable(tp) && cfg->turns.model != NULL;
	for (k = 0; k < np; k++)
		ok &= probes[k].answered;
	running = doctor_running(cfg->home);
	if (json) {
		buf_adds(&b, "{\"turns\":");
		doctor_json_role(&b, tp, cfg->turns.model);
		buf_adds(&b, ",\"compactions\":");
		doctor_json_role(&b, mp, cfg->memory.model);
		buf_adds(&b, ",\"probes\":[");
		for (k = 0; k < np; k++) {
			buf_adds(&b, k ? ",{\"provider\":" : "{\"provider\":");
			doctor_quote(&b, probes[k].p->name);
			buf_adds(&b, ",\"base_url\":");
			doctor_quote(&b, probes[k].p->base_url);
			buf_printf(&b, ",\"answered\":%s,\"text\":",
			    probes[k].answered ? "true" : "false");
			doctor_quote(&b, probes[k].line);
			buf_addc(&b, '}');
		}
		buf_adds(&b, "],\"notes\":");
		if (cfg->env_note != NULL || notes != NULL) {
			struct buf n = BUF_INIT;

			buf_printf(&n, "%s%s%s",
			    cfg->env_note ? cfg->env_note : "",
			    cfg->env_note && notes ? "\n" : "",
			    notes ? notes : "");
			doctor_quote(&b, n.data);
			buf_free(&n);
		} else {
			buf_adds(&b, "null");
		}
		buf_printf(&b, ",\"running\":%ld,\"ok\":%s}\n", running,
		    ok ? "true" : "false");
	} else {
		doctor_text_role(&b, "turns:", tp, cfg->turns.model);
		doctor_text_role(&b, "compactions:", mp, cfg->memory.model);
		for (k = 0; k < np; k++)
			buf_printf(&b, "%-13s%s %s: %s\n",
			    "endpoint:", probes[k].p->base_url,
			    probes[k].answered ? "answers" : "does NOT answer",
			    probes[k].line);
		if (cfg->env_note != NULL)
			buf_printf(&b, "note:        %s\n", cfg->env_note);
		if (notes != NULL)
			buf_printf(&b, "note:        %s\n", notes);
		if (running > 0)
			buf_printf(&b,
			    "running:     shirod %ld serves this home with the "
			    "settings and environment it started with; 'shiro "
			    "stop' lets the next one start with these\n",
			    running);
		buf_adds(&b,
		    ok ? "Turns can reach their model.\n"
		       : "Turns cannot reach a model yet: see above "
			 "and docs/providers.md.\n");
	}
	fwrite(b.data, 1, b.len, stdout);
	fflush(stdout);
	buf_free(&b);
	return ok ? 0 : 1;
}
