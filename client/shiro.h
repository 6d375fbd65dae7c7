/*
 * shiro.h - what every part of the client shares: the exit codes and the
 * global options of one run.
 *
 * The exit codes are part of the command-line contract (docs/client.md):
 * scripts test them, so a code never changes meaning once released.
 */
#ifndef SHIRO_CLIENT_SHIRO_H
#define SHIRO_CLIENT_SHIRO_H

#include "proto/zsock.h"

enum shiro_exit {
	SHIRO_EXIT_OK = 0, /* the command completed */
	SHIRO_EXIT_FAIL = 1, /* the daemon refused or failed it */
	SHIRO_EXIT_USAGE = 2, /* bad usage: nothing was sent */
	SHIRO_EXIT_UNREACHABLE = 3, /* no daemon answered in time */
	SHIRO_EXIT_NO_MODEL = 4, /* logged, but no model runs turns */
	SHIRO_EXIT_MODEL = 5, /* the turn's model call failed */
	SHIRO_EXIT_PROVIDER = 6, /* the model's provider was unreachable */
	SHIRO_EXIT_DENIED = 7, /* the turn completed, a tool call denied */
	SHIRO_EXIT_STOPPED =
	    8, /* the turn was interrupted, or shirod stopped */
	SHIRO_EXIT_LIMIT = 9, /* a limit ended the turn (steps, tokens, $) */
	SHIRO_EXIT_JAIL = 10, /* the jail is unavailable: no tool can run */
	/* 11 to 19 are kept. */
	SHIRO_EXIT_INTERRUPTED = 130, /* stopped by Ctrl-C */
	SHIRO_EXIT_NO_HELPER = 127, /* a helper program is missing */
};

/* The default time without any word from the daemon before it is dead. */
#define SHIRO_DEAD_MS 3000
/* How often an attached or waiting client pings the daemon. */
#define SHIRO_PING_MS 1000
/* How long a started daemon may take to open its socket. */
#define SHIRO_START_MS 10000

/* The options every command shares, resolved once in main(). */
struct shiro {
	char *home; /* the chat home: --home, $SHIRO_HOME or ~/.shiro */
	char *endpoint; /* the daemon's socket, "ipc://HOME/run/shirod.sock" */
	char *sock_path; /* the file behind an ipc endpoint, or NULL */
	char *self_dir; /* the directory of this binary */
	int autostart; /* start shirod when none answers (not --no-start) */
	int dead_ms; /* silence after which the daemon counts as dead */
	int json; /* --json: one JSON document (or line per event) */
	/* A shirod on another machine (docs/remote.md): --remote NAME (a
	 * saved remote), or a tcp endpoint with --server-key KEY. */
	char *remote; /* --remote NAME */
	int resolved; /* home and endpoint are known */
	int remote_late; /* --remote came after the command */
	char *server_key; /* --server-key, or $SHIRO_SERVER_KEY, or the
			   * saved remote's */
	struct zsock_cred *cred; /* for a tcp endpoint: shirod's key and
				  * this client's pair; NULL for ipc */
	int yolo; /* -p --yolo: calls that would ask are allowed */
	/* The workspace a SEND or NOTES names (docs/remote.md): --workspace
	 * DIR, and the saved remote's; see cmd_workspace(). */
	char *workspace; /* --workspace DIR */
	char *remote_ws; /* the workspace saved with --remote's remote */
};

#endif
