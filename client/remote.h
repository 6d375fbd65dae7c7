/*
 * remote.h - the client and a shirod on another machine (docs/remote.md):
 * the credential for a tcp endpoint, the saved remotes, `shiro keys` and
 * `shiro attach TARGET`.
 *
 * Over tcp the client speaks CURVE with its own key pair, made on first
 * use in HOME/keys/client.key (mode 0600; HOME is this machine's chat
 * home, ~/.shiro by default), and checks shirod's public key, which it
 * must be given: --server-key KEY, $SHIRO_SERVER_KEY, or a remote saved
 * with `shiro attach tcp://... --server-key KEY --save NAME` and named
 * with --remote NAME (HOME/remotes/NAME).  Everything else is the same
 * protocol as over ipc; no daemon is ever started for a tcp endpoint.
 */
#ifndef SHIRO_CLIENT_REMOTE_H
#define SHIRO_CLIENT_REMOTE_H

#include "shiro.h"

/*
 * remote_resolve - once s->home is known and before the default endpoint
 * is set: take --remote's endpoint and server key (a remote and an
 * --endpoint are not both given).  Returns -1 to go on, or an exit code
 * after saying what is wrong.
 */
int remote_resolve(struct shiro *s);

/*
 * remote_credential - for a tcp endpoint, make s->cred from the server
 * key (--server-key, else $SHIRO_SERVER_KEY, else the remote's) and this
 * machine's key pair.  Returns -1 to go on, or an exit code after saying
 * what is wrong (SHIRO_EXIT_USAGE for a missing or bad server key).
 */
int remote_credential(struct shiro *s);

/* remote_free - forget the credential (wiped). */
void remote_free(struct shiro *s);

/*
 * remote_keys - shiro keys [add client|worker NAME KEY | revoke
 * client|worker NAME] on s->home, the operands in argv[0..argc).  The
 * exit code.
 */
int remote_keys(struct shiro *s, int argc, char **argv);

/*
 * remote_attach - shiro attach [TARGET] [--server-key KEY] [--save NAME]:
 * TARGET is a tcp endpoint or a saved remote's name (none: the local
 * shirod).  Sets s's endpoint and credential, saves the remote once
 * shirod answered when save is given, and runs the attached session.
 * The exit code.
 */
int remote_attach(struct shiro *s, const char *target, const char *save);

#endif
