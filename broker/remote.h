/*
 * remote.h - shirod's tcp endpoints: clients and model workers on other
 * machines, over CURVE (docs/remote.md).
 *
 * A tcp endpoint is one more address of the clients' or the workers'
 * ROUTER, bound after the ipc one with other security options: libzmq
 * takes a socket's options at each bind, so the ipc endpoint keeps its
 * own (the clients' NULL mechanism and peer credentials, the workers'
 * keys of this run) and the tcp one is a CURVE server with shirod's key
 * pair from keys/server.key (made on first use) and its own ZAP domain,
 * in which only the public keys listed in keys/clients/ or keys/workers/
 * are admitted.  No tcp endpoint is ever bound without CURVE.
 *
 * The lists are read again every heartbeat interval.  A key that left a
 * list (shiro keys revoke) is refused from then on, and its live
 * connections are closed within that interval: ZeroMQ cannot drop one
 * peer of a bound ROUTER, so the socket's tcp endpoints are unbound
 * (which closes every connection accepted there) and bound again on the
 * same addresses.  The other tcp peers reconnect by themselves, and
 * their new handshakes ask the ZAP handler again, which refuses the
 * revoked key.  A revoked remote worker's slot goes down at once.
 */
#ifndef SHIRO_BROKER_REMOTE_H
#define SHIRO_BROKER_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/keys.h"
#include "proto/msg.h"

#include "config.h"

/* The tcp side of one socket. */
struct remote_side {
	const char *what; /* "clients" or "workers" */
	void *sock; /* the socket's ROUTER (borrowed) */
	char *bound[CONFIG_TCP_MAX]; /* as bound, with the port chosen */
	size_t n;
	int down[CONFIG_TCP_MAX]; /* unbound, to be bound again */
	char *dir; /* keys/clients or keys/workers */
	struct keys_list keys; /* as last read */
	uint64_t rebinds; /* times its endpoints were bound again */
};

struct remote {
	int on; /* some tcp endpoint is configured */
	char server_pub[ZSOCK_KEY_Z85 + 1]; /* keys/server.key's public */
	struct remote_side clients, workers;
	uint64_t revoked; /* keys revoked while shirod ran */
};

struct broker;

/*
 * remote_listen - bind the tcp endpoints of the configuration on the
 * clients' and the workers' ROUTERs (already bound to their ipc
 * endpoints), with the server key pair (made if missing) and the keys of
 * keys/clients/ and keys/workers/ admitted.  Nothing to do without a
 * tcp endpoint.  0, or a negative SHIRO_ERR_* with msg saying why.
 */
int remote_listen(struct broker *b, char *msg, size_t msglen);

/*
 * remote_tick - read the key lists again: admit the new keys; refuse the
 * ones that left from now on, drop their remote workers' slots and bind
 * the side's tcp endpoints again to close their connections.
 */
void remote_tick(struct broker *b, uint64_t now);

/* remote_status - the "remote" map of the status document. */
void remote_status(const struct broker *b, struct msg_val *doc);

/* remote_free - forget the endpoints and lists (the sockets are the
 * broker's). */
void remote_free(struct remote *r);

#endif
