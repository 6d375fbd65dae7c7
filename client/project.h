/*
 * project.h - a project's notes and task list as the client shows them:
 * `shiro notes`, `shiro todos`, /notes and /todos, and the task list the
 * attached client keeps above the input (docs/client.md).
 *
 * The documents come from shirod's NOTES request and the `todos` event
 * (docs/protocol.md); what is printed goes through render_escape like
 * everything else the client shows.
 */
#ifndef SHIRO_CLIENT_PROJECT_H
#define SHIRO_CLIENT_PROJECT_H

#include "proto/buf.h"
#include "proto/msg.h"

/* project_render - a NOTES document (its notes or its task list) as
 * lines for a person. */
void project_render(struct buf *out, const struct msg_val *doc);

/*
 * project_live - the lines a `todos` event shows above the input: the
 * list with its progress bar, or a line saying it was cleared.  0, or
 * -1 for an event that is not one.
 */
int project_live(struct buf *out, const struct msg *ev);

#endif
