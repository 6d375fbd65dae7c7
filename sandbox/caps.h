/*
 * caps.h - dropping every capability, for the jail's command and for
 * the worker roles.  System calls only: safe in a child after clone().
 */
#ifndef SHIRO_CAPS_H
#define SHIRO_CAPS_H

#include <stdint.h>

/*
 * caps_drop - lose every capability of the calling thread and of what
 * it starts later, even as uid 0.  With CAP_SETPCAP (root, or any
 * process in a user namespace it made) the securebits that let root
 * regain capabilities are set and locked and the bounding set is
 * emptied; without it neither can change, and neither matters, since
 * no capability can come back through execve under no_new_privs.  The
 * ambient, inheritable, permitted and effective sets are emptied in
 * every case, but for the capabilities in keep (bit n = capability n),
 * which stay permitted and effective.  Returns 0, or -1 with errno set
 * and *stepp naming the step that failed.
 */
int caps_drop(uint64_t keep, const char **stepp);

#endif
