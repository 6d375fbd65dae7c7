/*
 * notes.h - project memory and the task list: the broker's tools
 * remember, recall, forget and todo_write, the per-turn state they make
 * (rule 51), and the NOTES request (docs/memory.md, "Project memory and
 * the task list").
 *
 * A project is the workspace root of a turn: the working directory the
 * client sent with the turn's first message.  Its notes and its task
 * list live in the store (store_note_*, store_todo_*).  A turn without
 * one (a client that sent no directory) has neither: the tools say so.
 *
 * The state is rendered once per turn, from what the store holds when
 * the turn's first call is made, and goes between the view and the
 * Turn: line, so that every step of the turn sends it byte for byte
 * (the turn's own cache entries hold).  When todo_write changes the
 * list during the turn, each later step also carries the list as it is
 * now in a text part after the request's last cache mark.
 */
#ifndef SHIRO_BROKER_NOTES_H
#define SHIRO_BROKER_NOTES_H

#include <jansson.h>
#include <stdint.h>

#include "proto/buf.h"
#include "proto/msg.h"

struct broker;

/* Notes shown in the per-turn state: the most used, then the newest. */
#define NOTES_STATE_MAX 20
/* Notes a recall returns: the newest matches. */
#define NOTES_RECALL_MAX 15
/* A forget that matches more than this many notes removes none. */
#define NOTES_FORGET_MAX 5
/* Words of a recall. */
#define NOTES_TERMS_MAX 16

/* The notes and task list of one turn's project. */
struct notes_turn;

/*
 * notes_project - the project of a working directory: cwd made canonical
 * as text (no "." parts, no empty parts, no trailing slash) in *projectp
 * (caller frees).  Returns 0, or -SHIRO_ERR_INVAL with *whyp saying why
 * (not absolute, a ".." part, longer than STORE_PROJECT_MAX).
 */
int notes_project(const char *cwd, char **projectp, const char **whyp);

/* notes_turn_new - the notes of the turn whose client sent cwd (NULL or
 * unusable: the turn has no project). */
struct notes_turn *notes_turn_new(struct broker *b, const char *cwd);

/* notes_turn_destroy - free *ntp and set it to NULL. */
void notes_turn_destroy(struct notes_turn **ntp);

/* notes_turn_state - append the turn's state (its notes, its task list)
 * to out: read and rendered at the first call, the same bytes after. */
void notes_turn_state(struct notes_turn *nt, struct buf *out);

/* notes_turn_tail - when todo_write changed the list during the turn,
 * add it as it is now as one more text part (unmarked) of the last
 * message of a request's messages, when that is the user's. */
void notes_turn_tail(const struct notes_turn *nt, struct msg_val *messages);

/*
 * The tools: each reads its checked JSON input, writes the result for
 * the model in text, and returns 0, or -1 for a result that is an error
 * (bad input, a full project, a store that failed).
 */
int notes_remember(struct notes_turn *nt, json_t *in, struct buf *text);
int notes_recall(struct notes_turn *nt, json_t *in, struct buf *text);
int notes_forget(struct notes_turn *nt, json_t *in, struct buf *text);
int notes_todo_write(struct notes_turn *nt, json_t *in, struct buf *text);

/* notes_serve - answer NOTES rid from client `from`: the notes (what
 * "notes") or the task list (what "todos") of the project of its cwd. */
void notes_serve(struct broker *b, const struct msg_ident *from,
    const struct msg *m, uint64_t rid);

#endif
