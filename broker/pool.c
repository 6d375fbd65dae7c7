/*
 * pool.c - spawn, watch and restart the workers (see pool.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "pool.h"
#include "timer.h"

/* A worker that stays up this long starts its next back-off afresh. */
#define POOL_STABLE_MS 5000

/* The descriptor a worker reads its credential from (--cred-fd). */
#define POOL_CRED_FD 3

extern char **environ;

/* pool_program - the default program of a role. */
static const char *
pool_program(enum config_role role)
{
	switch (role) {
	case CONFIG_ROLE_MODEL:
		return "shiro-model-worker";
	case CONFIG_ROLE_TOOL:
		return "shiro-tool-worker";
	case CONFIG_ROLE_FS:
		return "shiro-fs-worker";
	}
	return "shiro-worker";
}

/* pool_env_keep - whether entry "NAME=value" of shirod's environment
 * goes to the workers. */
static int
pool_env_keep(const char *entry)
{
	static const char *const names[] = {POOL_ENV_NAMES};
	static const char *const flags[] = {POOL_ENV_FLAGS};
	const char *eq = strchr(entry, '=');
	size_t nl, k;

	if (eq == NULL || eq == entry || strlen(eq + 1) > POOL_ENV_VALUE_MAX)
		return 0;
	nl = (size_t)(eq - entry);
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strlen(names[k]) == nl && memcmp(entry, names[k], nl) == 0)
			return 1;
	for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
		if (strlen(flags[k]) == nl && memcmp(entry, flags[k], nl) == 0)
			return strlen(eq + 1) <= POOL_ENV_FLAG_MAX;
	return nl > strlen(POOL_ENV_PREFIX) &&
	    strncmp(entry, POOL_ENV_PREFIX, strlen(POOL_ENV_PREFIX)) == 0;
}

/* pool_env - the workers' environment: what pool_env_keep lets through
 * of this process's, and SHIRO_HOME=home. */
static char **
pool_env(const char *home)
{
	size_t n = 0, k, cap = 8;
	char **envp;

	for (k = 0; environ != NULL && environ[k] != NULL; k++)
		cap++;
	envp = xcalloc(cap, sizeof(*envp));
	for (k = 0; environ != NULL && environ[k] != NULL; k++)
		if (pool_env_keep(environ[k]) && n + 2 < cap)
			envp[n++] = xstrdup(environ[k]);
	envp[n++] = xasprintf("SHIRO_HOME=%s", home);
	envp[n] = NULL;
	return envp;
}

/* pool_ws_paths - the program of a workspace's tool and fs workers:
 * the path a group of that role names in the settings, else the one
 * next to shirod. */
static void
pool_ws_paths(struct pool *p, const struct config *cfg, const char *bindir)
{
	static const enum config_role roles[] = {
	    CONFIG_ROLE_TOOL, CONFIG_ROLE_FS};
	const char *path;
	size_t g, k;

	for (k = 0; k < sizeof(roles) / sizeof(roles[0]); k++) {
		path = NULL;
		for (g = 0; g < cfg->nworkers && path == NULL; g++)
			if (cfg->workers[g].role == roles[k])
				path = cfg->workers[g].path;
		p->ws_path[roles[k]] = path != NULL
		    ? xstrdup(path)
		    : xasprintf("%s/%s", bindir, pool_program(roles[k]));
	}
}

/* pool_init - one DOWN slot per configured worker, due to start now. */
void
pool_init(struct pool *p, const struct config *cfg, const char *bindir,
    struct zap_keys *keys, const char *server_key)
{
	struct pool_worker *w;
	unsigned total = 0, k;
	size_t g;
	char **paths;

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->endpoint = xstrdup(cfg->worker_endpoint);
	p->home = xstrdup(cfg->home);
	p->hb_ms = cfg->heartbeat_ms;
	p->liveness = cfg->liveness;
	p->min_ms = cfg->backoff_min_ms;
	p->max_ms = cfg->backoff_max_ms;
	p->remote_liveness =
	    cfg->remote_liveness ? cfg->remote_liveness : cfg->liveness;
	p->ready_timeout_ms = 10000;
	p->broker_pid = getpid();
	p->keys = keys;
	snprintf(p->server_key, sizeof(p->server_key), "%s", server_key);
	p->envp = pool_env(cfg->home);
	for (g = 0; g < cfg->nworkers; g++)
		total += cfg->workers[g].count;
	/* Room for the workspaces' and the remote slots too, so that a
	 * slot never moves; each kind is bounded by its own count. */
	p->cap = total + POOL_WS_SLOTS + POOL_REMOTE_MAX;
	p->w = xcalloc(p->cap, sizeof(*p->w));
	pool_ws_paths(p, cfg, bindir);
	/* Program paths are kept in an array owned by the pool (freed in
	 * pool_free through the slots that are first of their group). */
	paths = xcalloc(cfg->nworkers ? cfg->nworkers : 1, sizeof(*paths));
	for (g = 0; g < cfg->nworkers; g++) {
		paths[g] = cfg->workers[g].path
		    ? xstrdup(cfg->workers[g].path)
		    : xasprintf(
			  "%s/%s", bindir, pool_program(cfg->workers[g].role));
		for (k = 0; k < cfg->workers[g].count; k++) {
			w = &p->w[p->n];
			w->idx = p->n++;
			w->role = cfg->workers[g].role;
			w->provider = cfg->workers[g].provider;
			w->path = paths[g];
			w->workspace = cfg->workers[g].workspace;
			w->state = POOL_DOWN;
			w->backoff_ms = p->min_ms;
			w->restart_at = 0;
		}
		if (cfg->workers[g].count == 0)
			free(paths[g]);
	}
	free(paths);
}

/* pool_free - release the pool's memory (processes are not touched). */
void
pool_free(struct pool *p)
{
	unsigned k;

	for (k = 0; k < p->n; k++) {
		if (p->w[k].remote)
			continue;
		if (p->w[k].ondemand) {
			free((char *)p->w[k].workspace);
			continue;
		}
		if (k == 0 || p->w[k].path != p->w[k - 1].path)
			free((char *)p->w[k].path);
	}
	for (k = 0; k < CONFIG_NROLES; k++)
		free(p->ws_path[k]);
	free(p->w);
	free(p->endpoint);
	free(p->home);
	for (k = 0; p->envp != NULL && p->envp[k] != NULL; k++)
		free(p->envp[k]);
	free(p->envp);
	memset(p, 0, sizeof(*p));
}

/* pool_state_name - the state's name for logs and status documents. */
const char *
pool_state_name(enum pool_state s)
{
	switch (s) {
	case POOL_DOWN:
		return "down";
	case POOL_STARTING:
		return "starting";
	case POOL_IDLE:
		return "idle";
	case POOL_BUSY:
		return "busy";
	case POOL_DYING:
		return "dying";
	}
	return "?";
}

/* pool_forget_key - slot w's process may connect no more (a remote
 * slot's key stays: keys/workers/ admits it). */
static void
pool_forget_key(struct pool *p, struct pool_worker *w)
{
	if (w->remote)
		return;
	if (w->user[0] != '\0')
		zap_keys_drop(p->keys, w->user);
	w->user[0] = '\0';
}

/* pool_schedule - slot w is down at now: plan its restart with back-off. */
static void
pool_schedule(struct pool *p, struct pool_worker *w, uint64_t now)
{
	pool_forget_key(p, w);
	w->state = POOL_DOWN;
	w->pid = 0;
	w->ident.len = 0;
	/* A workspace worker that keeps ending before READY waits for a
	 * turn to ask again (pool_ws_reset). */
	w->restart_at = p->stopping || w->retired ||
		(w->ondemand && w->failed_starts >= POOL_WS_FAILED)
	    ? UINT64_MAX
	    : now + w->backoff_ms;
	w->backoff_ms =
	    w->backoff_ms >= p->max_ms / 2 ? p->max_ms : w->backoff_ms * 2;
}

/* pool_child - in the forked child: reset and exec the worker, with its
 * credential's pipe credfd as fd 3; never returns. */
static void
pool_child(struct pool *p, struct pool_worker *w, int credfd)
{
	const struct config_provider *pv = NULL;
	char hb[16], cfd[16], jobs[16];
	const char *argv[24];
	sigset_t none;
	int nullfd, i = 0;

	/* The broker blocks its signals to read them from a signalfd; the
	 * worker starts with none blocked and default handlers. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* Its own process group: a terminal's ^C meant for a foreground
	 * shirod reaches shirod, which then shuts the workers down. */
	setpgid(0, 0);
	/* A worker never outlives its broker, even one killed with -9. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != p->broker_pid)
		_exit(0);
	/* The credential's pipe becomes fd 3, the only one kept above 2
	 * (dup2 onto itself would keep close-on-exec set). */
	if (credfd == POOL_CRED_FD) {
		if (fcntl(credfd, F_SETFD, 0) != 0)
			_exit(127);
	} else if (dup2(credfd, POOL_CRED_FD) != POOL_CRED_FD) {
		_exit(127);
	}
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nullfd >= 0 && nullfd != STDIN_FILENO) {
		dup2(nullfd, STDIN_FILENO);
		close(nullfd);
	}
	/* Nothing of the broker's leaks: the store, the lock, sockets. */
	if (syscall(SYS_close_range, POOL_CRED_FD + 1U, ~0U, 0) != 0) {
		/* An older kernel: close them one by one.  The chat lock's fd
		 * above all must not live on in a worker. */
		long fd, max = sysconf(_SC_OPEN_MAX);

		for (fd = POOL_CRED_FD + 1;
		     fd < (max > 0 && max < 65536 ? max : 65536); fd++)
			(void)close((int)fd);
	}
	snprintf(hb, sizeof(hb), "%u", p->hb_ms);
	snprintf(cfd, sizeof(cfd), "%d", POOL_CRED_FD);
	argv[i++] = w->path;
	argv[i++] = "--endpoint";
	argv[i++] = p->endpoint;
	if (w->provider != NULL) {
		argv[i++] = "--provider";
		argv[i++] = w->provider;
		pv = config_provider(p->cfg, w->provider);
	}
	/* The wire, its base URL and the calls in flight (never a key: it
	 * follows READY as SECRET). */
	if (pv != NULL && pv->wire != NULL) {
		argv[i++] = "--wire";
		argv[i++] = pv->wire;
		if (pv->base_url != NULL) {
			argv[i++] = "--base-url";
			argv[i++] = pv->base_url;
		}
		snprintf(jobs, sizeof(jobs), "%u", pv->jobs ? pv->jobs : 1);
		argv[i++] = "--jobs";
		argv[i++] = jobs;
	}
	argv[i++] = "--heartbeat-ms";
	argv[i++] = hb;
	argv[i++] = "--cred-fd";
	argv[i++] = cfd;
	if (w->workspace != NULL) {
		argv[i++] = "--workspace";
		argv[i++] = w->workspace;
	}
	argv[i] = NULL;
	/* Never shirod's own environment: it may hold keys. */
	execve(w->path, (char *const *)argv, p->envp);
	log_warn("cannot run worker %s", w->path);
	_exit(127);
}

/* pool_spawn - fork and exec the worker of slot w. */
int
pool_spawn(struct pool *p, struct pool_worker *w, uint64_t now)
{
	struct zsock_cred cred;
	unsigned char pub[ZSOCK_KEY_BIN];
	int fds[2], rc;
	pid_t pid;

	if (w->state != POOL_DOWN)
		return -SHIRO_ERR_STATE;
	if (access(w->path, X_OK) != 0) {
		/* Said once per slot, not at every back-off. */
		if (!w->warned)
			log_warn("worker %u (%s): cannot run %s", w->idx,
			    config_role_name(w->role), w->path);
		w->warned = 1;
		w->failed_starts++;
		pool_schedule(p, w, now);
		return -SHIRO_ERR_NOENT;
	}
	/* The credential waits in a pipe that only the child keeps: the
	 * text is under PIPE_BUF, so the write never blocks. */
	memset(&cred, 0, sizeof(cred));
	memcpy(cred.server, p->server_key, sizeof(cred.server));
	if (zsock_keypair(&cred.own) < 0 ||
	    zsock_key_decode(cred.own.pub, pub) < 0) {
		log_warnx("worker %u: no CURVE key pair", w->idx);
		pool_schedule(p, w, now);
		return -SHIRO_ERR_UNSUPP;
	}
	if (pipe2(fds, O_CLOEXEC) != 0) {
		log_warn("worker %u: pipe", w->idx);
		explicit_bzero(&cred, sizeof(cred));
		pool_schedule(p, w, now);
		return -SHIRO_ERR_AGAIN;
	}
	rc = zsock_cred_write(fds[1], &cred);
	explicit_bzero(&cred, sizeof(cred));
	close(fds[1]);
	if (rc < 0) {
		log_warnx("worker %u: cannot write its credential", w->idx);
		close(fds[0]);
		pool_schedule(p, w, now);
		return rc;
	}
	pid = fork();
	if (pid < 0) {
		log_warn("worker %u: fork", w->idx);
		close(fds[0]);
		pool_schedule(p, w, now);
		return -SHIRO_ERR_AGAIN;
	}
	if (pid == 0)
		pool_child(p, w, fds[0]);
	close(fds[0]);
	w->pid = pid;
	w->warned = 0;
	w->state = POOL_STARTING;
	w->spawned_at = now;
	w->ready_at = 0;
	w->last_seen = now;
	w->starts++;
	w->secret_sent = 0;
	/* Admitted from now on, as this slot's process of this start. */
	snprintf(w->user, sizeof(w->user), "w%u.%u", w->idx, w->starts);
	zap_keys_put(p->keys, pub, w->user);
	explicit_bzero(pub, sizeof(pub));
	log_info("worker %u (%s%s%s) started as pid %d", w->idx,
	    config_role_name(w->role), w->provider ? " " : "",
	    w->provider ? w->provider : "", (int)pid);
	return 0;
}

/* pool_by_user - the slot whose current process has User-Id user. */
struct pool_worker *
pool_by_user(struct pool *p, const struct msg_user *user)
{
	unsigned k;

	if (user->len == 0)
		return NULL;
	for (k = 0; k < p->n; k++) {
		struct pool_worker *w = &p->w[k];

		if ((w->state == POOL_STARTING || w->state == POOL_IDLE ||
			w->state == POOL_BUSY) &&
		    w->user[0] != '\0' && strcmp(w->user, user->id) == 0)
			return w;
	}
	return NULL;
}

/* pool_ready - READY from the authenticated process of slot w. */
int
pool_ready(struct pool_worker *w, const struct msg_ident *ident,
    const char *role, const char *provider, uint64_t now, const char **whyp)
{
	if (w->state != POOL_STARTING) {
		*whyp = "sent READY twice";
		return -SHIRO_ERR_STATE;
	}
	if (strcmp(role, config_role_name(w->role)) != 0) {
		*whyp = "said READY with another role than the one it was "
			"started for";
		return -SHIRO_ERR_PERM;
	}
	if (w->provider != NULL && strcmp(provider, w->provider) != 0) {
		*whyp = "said READY with another provider than the one it "
			"was started for";
		return -SHIRO_ERR_PERM;
	}
	w->njobs = 0;
	if (w->max_jobs == 0)
		w->max_jobs = 1;
	w->ident = *ident;
	w->state = POOL_IDLE;
	w->ready_at = now;
	w->last_seen = now;
	w->used_at = now;
	w->failed_starts = 0;
	return 0;
}

/* pool_remote - the slot of the remote worker admitted as user. */
struct pool_worker *
pool_remote(struct pool *p, const char *user, int make, uint64_t now)
{
	struct pool_worker *w;
	unsigned k, nremote = 0;

	for (k = 0; k < p->n; k++) {
		if (!p->w[k].remote)
			continue;
		nremote++;
		if (strcmp(p->w[k].user, user) == 0)
			return &p->w[k];
	}
	if (!make || nremote >= POOL_REMOTE_MAX || p->n >= p->cap ||
	    strlen(user) >= sizeof(w->user))
		return NULL;
	w = &p->w[p->n];
	memset(w, 0, sizeof(*w));
	w->idx = p->n++;
	w->role = CONFIG_ROLE_MODEL;
	w->remote = 1;
	w->state = POOL_DOWN;
	w->backoff_ms = p->min_ms;
	w->restart_at = now;
	snprintf(w->user, sizeof(w->user), "%s", user);
	return w;
}

/* pool_remote_ready - the remote slot w is ready on a new connection. */
uint64_t
pool_remote_ready(struct pool_worker *w, const struct msg_ident *ident,
    const char *provider, uint64_t now)
{
	uint64_t job = 0;

	if (w->state == POOL_IDLE || w->state == POOL_BUSY)
		job = w->njobs > 0 ? w->jobs[0] : 0;
	w->njobs = 0;
	w->provider = provider;
	w->ident = *ident;
	w->state = POOL_IDLE;
	w->ready_at = now;
	w->last_seen = now;
	w->spawned_at = now;
	w->starts++;
	w->secret_sent = 0;
	if (w->max_jobs == 0)
		w->max_jobs = 1;
	return job;
}

/* pool_has_pid - whether pid is a live worker's. */
int
pool_has_pid(const struct pool *p, pid_t pid)
{
	unsigned k;

	for (k = 0; pid > 0 && k < p->n; k++)
		if (p->w[k].pid == pid && p->w[k].state != POOL_DOWN)
			return 1;
	return 0;
}

/* pool_seen - the worker of w showed a sign of life at now. */
void
pool_seen(struct pool_worker *w, uint64_t now)
{
	w->last_seen = now;
}

/* pool_idle - a ready worker with room for a job: fewest jobs, then the
 * least used. */
struct pool_worker *
pool_idle(struct pool *p, enum config_role role, const char *provider)
{
	struct pool_worker *best = NULL;
	unsigned k;

	for (k = 0; k < p->n; k++) {
		struct pool_worker *w = &p->w[k];

		if ((w->state != POOL_IDLE && w->state != POOL_BUSY) ||
		    w->role != role ||
		    w->njobs >= (w->max_jobs ? w->max_jobs : 1))
			continue;
		if (provider != NULL &&
		    (w->provider == NULL || strcmp(w->provider, provider) != 0))
			continue;
		if (best == NULL || w->njobs < best->njobs ||
		    (w->njobs == best->njobs && w->jobs_done < best->jobs_done))
			best = w;
	}
	return best;
}

/* pool_capacity - how many jobs w runs at once. */
void
pool_capacity(struct pool_worker *w, uint64_t jobs)
{
	w->max_jobs = jobs < 1	   ? 1
	    : jobs > POOL_JOBS_MAX ? POOL_JOBS_MAX
				   : (unsigned)jobs;
}

/* pool_assign - give job to the ready worker w, which has room. */
void
pool_assign(struct pool_worker *w, uint64_t job, uint64_t now)
{
	if (w->njobs >= POOL_JOBS_MAX)
		return;
	w->used_at = now;
	w->state = POOL_BUSY;
	w->jobs[w->njobs++] = job;
}

/* pool_holds - whether w holds job. */
int
pool_holds(const struct pool_worker *w, uint64_t job)
{
	unsigned k;

	for (k = 0; k < w->njobs; k++)
		if (w->jobs[k] == job)
			return 1;
	return 0;
}

/* pool_done - w finished job; 1 if it held it. */
int
pool_done(struct pool_worker *w, uint64_t job)
{
	unsigned k;

	for (k = 0; k < w->njobs; k++) {
		if (w->jobs[k] != job)
			continue;
		w->jobs[k] = w->jobs[--w->njobs];
		w->jobs_done++;
		if (w->njobs == 0 && w->state == POOL_BUSY)
			w->state = POOL_IDLE;
		return 1;
	}
	return 0;
}

/* pool_kill - kill w's process; it restarts once reaped. */
uint64_t
pool_kill(struct pool *p, struct pool_worker *w, const char *why, uint64_t now)
{
	uint64_t job = w->njobs > 0 ? w->jobs[0] : 0;

	if (w->state == POOL_DOWN || w->state == POOL_DYING)
		return 0;
	if (w->remote) {
		/* No process: its connection is dropped and its next READY
		 * waits out the back-off. */
		log_warnx("remote worker %s (slot %u) dropped: %s",
		    w->user + strlen(ZAP_USER_REMOTE_WORKER), w->idx, why);
		w->state = POOL_DOWN;
		w->njobs = 0;
		w->ident.len = 0;
		w->restart_at = now + w->backoff_ms;
		w->backoff_ms = w->backoff_ms >= p->max_ms / 2
		    ? p->max_ms
		    : w->backoff_ms * 2;
		return job;
	}
	log_warnx("worker %u (%s, pid %d) killed: %s", w->idx,
	    config_role_name(w->role), (int)w->pid, why);
	if (w->pid > 0)
		kill(w->pid, SIGKILL);
	/* Its key dies with it: nobody connects as this process again. */
	pool_forget_key(p, w);
	w->state = POOL_DYING;
	w->njobs = 0;
	w->ident.len = 0;
	return job;
}

/* pool_reaped - process pid ended: its slot goes DOWN, job handed back. */
struct pool_worker *
pool_reaped(struct pool *p, pid_t pid, int status, uint64_t now, uint64_t *jobp)
{
	struct pool_worker *w = NULL;
	unsigned k;

	*jobp = 0;
	for (k = 0; k < p->n; k++)
		if (p->w[k].pid == pid && p->w[k].state != POOL_DOWN) {
			w = &p->w[k];
			break;
		}
	if (w == NULL)
		return NULL;
	*jobp = w->njobs > 0 ? w->jobs[0] : 0;
	w->njobs = 0;
	/* Ended before its READY: a workspace worker that cannot start
	 * (its jail) is not started again and again for ever. */
	if (w->ready_at == 0)
		w->failed_starts++;
	if (w->state != POOL_DYING) {
		if (WIFSIGNALED(status))
			log_warnx("worker %u (%s, pid %d) died of signal %d",
			    w->idx, config_role_name(w->role), (int)pid,
			    WTERMSIG(status));
		else
			log_warnx("worker %u (%s, pid %d) exited with status "
				  "%d",
			    w->idx, config_role_name(w->role), (int)pid,
			    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	pool_schedule(p, w, now);
	return w;
}

/* pool_tick - kill silent workers, restart due slots, reset back-offs. */
void
pool_tick(
    struct pool *p, uint64_t now, uint64_t *jobs, unsigned max, unsigned *njobs)
{
	uint64_t dead_after;
	uint64_t job;
	unsigned k;

	*njobs = 0;
	for (k = 0; k < p->n; k++) {
		struct pool_worker *w = &p->w[k];

		/* A remote worker's heartbeats cross a network: it may miss
		 * more of them. */
		dead_after = (uint64_t)p->hb_ms *
		    (w->remote ? p->remote_liveness : p->liveness);
		switch (w->state) {
		case POOL_DOWN:
			if (!w->remote && !p->stopping && w->restart_at <= now)
				(void)pool_spawn(p, w, now);
			break;
		case POOL_STARTING:
			if (timer_since(now, w->spawned_at) >
				p->ready_timeout_ms &&
			    *njobs < max)
				(void)pool_kill(p, w, "no READY in time", now);
			break;
		case POOL_IDLE:
		case POOL_BUSY:
			if (timer_since(now, w->last_seen) > dead_after &&
			    *njobs < max) {
				job = pool_kill(
				    p, w, "missed its heartbeats", now);
				if (job != 0)
					jobs[(*njobs)++] = job;
				break;
			}
			if (timer_since(now, w->ready_at) >= POOL_STABLE_MS)
				w->backoff_ms = p->min_ms;
			break;
		case POOL_DYING:
			break;
		}
	}
}

/* pool_next_due - the earliest time pool_tick has something to do. */
uint64_t
pool_next_due(const struct pool *p, uint64_t now)
{
	uint64_t due = now + p->hb_ms, t;
	unsigned k;

	for (k = 0; k < p->n; k++) {
		const struct pool_worker *w = &p->w[k];

		t = due;
		if (w->state == POOL_DOWN && !w->remote)
			t = w->restart_at;
		else if (w->state == POOL_STARTING)
			t = w->spawned_at + p->ready_timeout_ms + 1;
		else if (w->state == POOL_IDLE || w->state == POOL_BUSY)
			t = w->last_seen +
			    (uint64_t)p->hb_ms *
				(w->remote ? p->remote_liveness : p->liveness) +
			    1;
		if (t < due)
			due = t;
	}
	return due < now ? now : due;
}

/* pool_count - slots of role (and provider if not NULL) in state. */
unsigned
pool_count(const struct pool *p, enum config_role role, const char *provider,
    enum pool_state state)
{
	unsigned k, n = 0;

	for (k = 0; k < p->n; k++) {
		const struct pool_worker *w = &p->w[k];

		if (w->role == role && w->state == state &&
		    (provider == NULL ||
			(w->provider && strcmp(w->provider, provider) == 0)))
			n++;
	}
	return n;
}

/* pool_stop - send SIGTERM to every live worker (shutdown). */
void
pool_stop(struct pool *p)
{
	unsigned k;

	for (k = 0; k < p->n; k++) {
		struct pool_worker *w = &p->w[k];

		if (w->pid > 0 && w->state != POOL_DOWN)
			kill(w->pid, SIGTERM);
		w->restart_at = UINT64_MAX;
	}
	p->stopping = 1;
}

/* pool_alive - live worker processes (not yet reaped). */
unsigned
pool_alive(const struct pool *p)
{
	unsigned k, n = 0;

	for (k = 0; k < p->n; k++)
		if (p->w[k].pid > 0 && p->w[k].state != POOL_DOWN)
			n++;
	return n;
}

/* pool_ws_share - how many workers of role a workspace may have. */
static unsigned
pool_ws_share(enum config_role role)
{
	return role == CONFIG_ROLE_TOOL ? POOL_WS_TOOL : POOL_WS_FS;
}

/* pool_ws_spare - a slot for a new workspace worker: never used, or
 * retired and reaped; else the least recently used idle one of another
 * workspace, stopped to make room (then NULL this time).  NULL if none. */
static struct pool_worker *
pool_ws_spare(struct pool *p, uint64_t now)
{
	struct pool_worker *lru = NULL;
	unsigned k, nws = 0;

	for (k = 0; k < p->n; k++) {
		struct pool_worker *w = &p->w[k];

		if (!w->ondemand)
			continue;
		nws++;
		if (w->retired && w->state == POOL_DOWN)
			return w;
		if (!w->retired && w->state == POOL_IDLE &&
		    (lru == NULL || w->used_at < lru->used_at))
			lru = w;
	}
	/* The remote slots share the room after the settings' ones. */
	if (nws < POOL_WS_SLOTS && p->n < p->cap) {
		struct pool_worker *w = &p->w[p->n];

		memset(w, 0, sizeof(*w));
		w->idx = p->n++;
		w->ondemand = 1;
		w->retired = 1;
		w->state = POOL_DOWN;
		w->restart_at = UINT64_MAX;
		return w;
	}
	if (lru != NULL) {
		log_info("worker %u (%s for %s) stops to make room for "
			 "another workspace",
		    lru->idx, config_role_name(lru->role), lru->workspace);
		lru->retired = 1;
		(void)pool_kill(p, lru, "retired for another workspace", now);
	}
	return NULL;
}

/* pool_for_workspace - a ready worker of role for workspace, or NULL
 * (one more is started when the workspace's share allows). */
struct pool_worker *
pool_for_workspace(struct pool *p, enum config_role role, const char *workspace,
    uint64_t now, unsigned *failedp)
{
	struct pool_worker *best = NULL, *w;
	unsigned k, up = 0, failed = 0;

	for (k = 0; k < p->n; k++) {
		w = &p->w[k];
		if (w->role != role || w->retired || w->workspace == NULL ||
		    strcmp(w->workspace, workspace) != 0)
			continue;
		if (w->failed_starts > failed)
			failed = w->failed_starts;
		if (w->state == POOL_DYING)
			continue;
		if (w->ondemand && w->state == POOL_DOWN &&
		    w->restart_at == UINT64_MAX &&
		    w->failed_starts < POOL_WS_FAILED && !p->stopping) {
			/* Given up on, then reset: start it again now. */
			w->restart_at = now;
			(void)pool_spawn(p, w, now);
		}
		/* A slot that is down restarts by itself. */
		up++;
		if ((w->state == POOL_IDLE || w->state == POOL_BUSY) &&
		    w->njobs < (w->max_jobs ? w->max_jobs : 1) &&
		    (best == NULL || w->njobs < best->njobs))
			best = w;
	}
	*failedp = failed;
	if (best != NULL || p->stopping || failed >= POOL_WS_FAILED ||
	    up >= pool_ws_share(role))
		return best;
	w = pool_ws_spare(p, now);
	if (w == NULL)
		return NULL;
	if (w->ondemand)
		free((char *)w->workspace);
	w->role = role;
	w->provider = NULL;
	w->path = p->ws_path[role];
	w->workspace = xstrdup(workspace);
	w->retired = 0;
	w->failed_starts = failed;
	w->idle_since = 0;
	w->backoff_ms = p->min_ms;
	w->restart_at = now;
	w->used_at = now;
	log_info("worker %u (%s) starts for workspace %s", w->idx,
	    config_role_name(role), workspace);
	(void)pool_spawn(p, w, now);
	return NULL;
}

/* pool_ws_reset - forget the failed starts of workspace's workers. */
void
pool_ws_reset(struct pool *p, const char *workspace)
{
	unsigned k;

	for (k = 0; k < p->n; k++)
		if (p->w[k].workspace != NULL &&
		    strcmp(p->w[k].workspace, workspace) == 0)
			p->w[k].failed_starts = 0;
}

/* pool_retire_idle - stop the workspace workers idle for idle_ms. */
unsigned
pool_retire_idle(struct pool *p, uint64_t now, uint64_t idle_ms)
{
	unsigned k, n = 0;

	for (k = 0; k < p->n; k++) {
		struct pool_worker *w = &p->w[k];

		if (!w->ondemand || w->retired)
			continue;
		if (w->state != POOL_IDLE)
			w->idle_since = 0;
		else if (w->idle_since == 0)
			w->idle_since = now;
		if (w->state == POOL_IDLE &&
		    timer_since(now, w->idle_since) >= idle_ms) {
			log_info("worker %u (%s for %s) idle for %llu ms: "
				 "stopped",
			    w->idx, config_role_name(w->role), w->workspace,
			    (unsigned long long)timer_since(
				now, w->idle_since));
			w->retired = 1;
			if (w->pid > 0)
				kill(w->pid, SIGTERM);
			pool_forget_key(p, w);
			w->state = POOL_DYING;
			w->ident.len = 0;
			n++;
		} else if (w->state == POOL_DOWN &&
		    w->restart_at == UINT64_MAX &&
		    timer_since(now, w->used_at) >= idle_ms) {
			/* A workspace whose workers could not start is
			 * forgotten after a while, like an idle one. */
			w->retired = 1;
			w->restart_at = UINT64_MAX;
		}
	}
	return n;
}
