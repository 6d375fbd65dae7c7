/*
 * test_shirod_util.h - a small client of shirod for tests and benches:
 * start and stop a real shirod in a temporary home, connect, ask and wait.
 */
#ifndef SHIRO_TEST_SHIROD_UTIL_H
#define SHIRO_TEST_SHIROD_UTIL_H

#include <stdint.h>
#include <sys/types.h>

#include "proto/msg.h"

/* tsd_bin - the path of a program built next to the tests (build/X). */
const char *tsd_bin(const char *name);

/* tsd_write - write text to dir/name. */
void tsd_write(const char *dir, const char *name, const char *text);

/* tsd_env - variables (NAME=value, NULL-ended; borrowed) the shirods
 * started next get; the provider variables (ANTHROPIC_API_KEY, ...) of
 * the test's own environment never reach them. */
void tsd_env(const char *const *env);

/* tsd_spawn - run shirod --home home [extra args] in the foreground, its
 * output to home/shirod.err; its pid (not waiting), or -1. */
pid_t tsd_spawn(const char *home, const char *const *extra);

/*
 * tsd_start - run shirod --home home [extra args] in the foreground,
 * its output to home/shirod.err, and wait until it serves (STATUS
 * answered).  Returns its pid, or -1 if it exited (*statusp gets the
 * wait status) or did not serve within 10 s.
 */
pid_t tsd_start(const char *home, const char *const *extra, int *statusp);

/* tsd_stop - SIGTERM pid, wait up to 10 s, then SIGKILL; wait status. */
int tsd_stop(pid_t pid);

/* tsd_kill9 - SIGKILL pid and reap it. */
void tsd_kill9(pid_t pid);

/* tsd_connect - a DEALER connected to home's client socket. */
void *tsd_connect(const char *home);

/*
 * tsd_worker_dealer - for a test program that shirod runs as a worker: a
 * DEALER to endpoint with the credential named by "--cred-fd N" in argv
 * (read, then the fd closed), as a real worker does; NULL if argv has
 * none or it cannot connect.
 */
void *tsd_worker_dealer(const char *endpoint, int argc, char **argv);

/* tsd_ready - a READY of a model worker of provider, saying pid. */
struct msg *tsd_ready(const char *provider, pid_t pid);

/* tsd_ask_stop - send STOP on sock: the answer's type (MSG_REPLY,
 * MSG_ERROR), or MSG_NONE when none came within 5 s. */
enum msg_type tsd_ask_stop(void *sock);

/* tsd_hello - HELLO on sock (attach as a client): 0, or -1. */
int tsd_hello(void *sock);

/* tsd_attach - a socket connected to home's client socket that said
 * HELLO as client name and was welcomed, or NULL. */
void *tsd_attach(const char *home, const char *name);

/* tsd_worker_pids - the pids of the running workers, from STATUS; their
 * number (at most max). */
int tsd_worker_pids(void *sock, pid_t *pids, int max);

/* tsd_read_file - a file's whole text (malloc'd), or NULL. */
char *tsd_read_file(const char *path);

/* tsd_file_has - whether the file at path holds needle (NULs allowed):
 * 1, 0, or -1 when it cannot be read. */
int tsd_file_has(const char *path, const char *needle);

/* tsd_close - close a socket from tsd_connect. */
void tsd_close(void **sockp);

/* Events seen while waiting for answers, counted by kind. */
struct tsd_events {
	uint64_t messages, nodes, batches, failures, last_seq, total;
	int gap; /* a sequence number was skipped */
};

/*
 * tsd_call - set rid on m (a fresh one), send it, and wait up to
 * timeout_ms for the answer with that rid (ACK, REPLY, WELCOME, ERROR or
 * PONG).  Events met on the way are counted in ev (may be NULL).
 * Returns the answer (caller destroys) or NULL on timeout.
 */
struct msg *tsd_call(
    void *sock, struct msg *m, long timeout_ms, struct tsd_events *ev);

/* tsd_recv - receive one message within timeout_ms, or NULL. */
struct msg *tsd_recv(void *sock, long timeout_ms);

/* tsd_send_text - SEND text (kind user) with key (may be NULL); the
 * acknowledged id, or -1 (ERROR or timeout). */
int64_t tsd_send_text(
    void *sock, const char *text, const char *key, struct tsd_events *ev);

/* tsd_status_int - a number of the STATUS document: path "view.bytes"
 * style (one dot at most); -1 if absent or no answer. */
int64_t tsd_status_int(void *sock, const char *path);

/* tsd_doc_int - the same from a document map. */
int64_t tsd_doc_int(const struct msg_val *doc, const char *path);

/*
 * tsd_settle - wait up to timeout_ms until the view is fully built and no
 * job runs or waits (STATUS unbuilt, queues.running and
 * queues.waiting_for_worker all 0).  0, or -1 on timeout.
 */
int tsd_settle(void *sock, long timeout_ms, struct tsd_events *ev);

/* tsd_view - the view as "l:i l:i ..." from MEMORY (malloc'd), or NULL. */
char *tsd_view(void *sock);

/*
 * tsd_turn - SEND text as a turn (from working directory cwd; NULL:
 * none) on an attached sock and wait up to 30 s for its end.  Returns
 * the turn's `done` event (caller destroys) with its code in code, or
 * NULL with code the ERROR's code, "no ack" or "no end".  Every other
 * event on the way goes to on_event (may be NULL).
 */
struct msg *tsd_turn(void *sock, const char *text, const char *cwd, char *code,
    size_t codelen, void (*on_event)(void *arg, const struct msg *ev),
    void *arg);

/* tsd_now_ms - a monotonic clock. */
uint64_t tsd_now_ms(void);

#endif
