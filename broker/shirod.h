/*
 * shirod.h - the command line of shirod, and the broker's entry points.
 */
#ifndef SHIRO_SHIROD_H
#define SHIRO_SHIROD_H

#include <stddef.h>

struct broker;

/* What the command line asked for. */
struct shirod_opts {
	const char *home; /* --home, else $SHIRO_HOME, else ~/.shiro */
	const char *trace; /* --trace FILE: planner events, for tests */
	int daemon; /* --daemon: detach, log to shirod.log */
	int check_config; /* --check-config: load settings and exit */
};

/*
 * broker_open - with b->cfg loaded: make run/, open the store (taking
 * the chat lock), fold the planner, bind the sockets.  Returns a
 * BROKER_EXIT_* code; on failure msg says why, for a person.
 */
int broker_open(
    struct broker *b, const struct shirod_opts *o, char *msg, size_t msglen);

/* broker_run - serve until STOP or SIGTERM/SIGINT; the exit code. */
int broker_run(struct broker *b);

/* broker_close - save the view, close everything, free b's contents. */
void broker_close(struct broker *b);

#endif
