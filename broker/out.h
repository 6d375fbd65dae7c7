/*
 * out.h - what shirod sends to its clients, and the planner trace.
 *
 * The parts that answer clients (serve.c) and report the compactor's
 * work (compact.c) call these; none of them needs the event loop.
 */
#ifndef SHIRO_BROKER_OUT_H
#define SHIRO_BROKER_OUT_H

#include <stdint.h>

#include "proto/msg.h"

struct broker;

/* out_publish - number event *evp, keep it for replay, send it to every
 * attached client; takes ownership. */
void out_publish(struct broker *b, struct msg **evp);

/* out_send_client - send m to a client; a client that cannot take it is
 * forgotten.  Returns msg_send's code. */
int out_send_client(
    struct broker *b, const struct msg_ident *to, const struct msg *m);

/* out_error - send ERROR {rid, code, text} to a client. */
void out_error(struct broker *b, const struct msg_ident *to, uint64_t rid,
    const char *code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* out_view_changed - the view changed (merged: by a batch that merged):
 * view.json is saved soon. */
void out_view_changed(struct broker *b, int merged);

/* out_view_save - write view.json from the planner's view now. */
void out_view_save(struct broker *b);

/* out_trace - write one planner event line to the trace, if any. */
void out_trace(struct broker *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
