/*
 * remote.c - the client and a shirod on another machine (see remote.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/keys.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

#include "attach.h"
#include "cmd.h"
#include "conn.h"
#include "json_out.h"
#include "remote.h"

/* remote_fail - say "shiro CMD: ..." on stderr; the exit code. */
static int __attribute__((format(printf, 3, 4)))
remote_fail(int code, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "shiro %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* remote_resolve - take --remote's endpoint and server key. */
int
remote_resolve(struct shiro *s)
{
	char server[ZSOCK_KEY_Z85 + 1], *endpoint = NULL;
	struct buf why = BUF_INIT;
	int rc;

	if (s->remote == NULL)
		return -1;
	if (s->endpoint != NULL)
		return remote_fail(SHIRO_EXIT_USAGE, "--remote",
		    "give a saved remote or an endpoint, not both");
	free(s->remote_ws);
	s->remote_ws = NULL;
	rc = keys_remote_load(
	    s->home, s->remote, &endpoint, server, &s->remote_ws, &why);
	if (rc < 0) {
		rc = remote_fail(SHIRO_EXIT_USAGE, "--remote", "%s%s%s",
		    rc == -SHIRO_ERR_NOENT ? "no remote saved under that name: "
					   : "",
		    why.data != NULL ? why.data : err_str(rc),
		    rc == -SHIRO_ERR_NOENT
			? " ('shiro attach tcp://HOST:PORT --server-key KEY "
			  "--save NAME' saves one; see 'shiro attach --help')"
			: "");
		buf_free(&why);
		return rc;
	}
	buf_free(&why);
	s->endpoint = endpoint;
	if (s->server_key == NULL)
		s->server_key = xstrdup(server);
	return -1;
}

/* remote_credential - s->cred for a tcp endpoint. */
int
remote_credential(struct shiro *s)
{
	const char *key = s->server_key;
	struct buf why = BUF_INIT;
	char *path;
	int rc;

	if (strncmp(s->endpoint, "tcp://", 6) != 0)
		return -1;
	if (key == NULL)
		key = getenv("SHIRO_SERVER_KEY");
	if (key == NULL || key[0] == '\0')
		return remote_fail(SHIRO_EXIT_USAGE, "--endpoint",
		    "%s is a tcp endpoint: give shirod's public key with "
		    "--server-key KEY ('shiro keys' prints it on shirod's "
		    "machine), or save a remote (docs/remote.md)",
		    s->endpoint);
	s->cred = xcalloc(1, sizeof(*s->cred));
	if (keys_pub_parse(key, strlen(key), s->cred->server) < 0)
		return remote_fail(SHIRO_EXIT_USAGE, "--server-key",
		    "not a public key: give the 40 characters 'shiro keys' "
		    "prints, in single quotes");
	path = keys_path(s->home, KEYS_CLIENT);
	rc = keys_pair(path, 1, &s->cred->own, &why);
	free(path);
	if (rc < 0) {
		rc = remote_fail(SHIRO_EXIT_FAIL, "--endpoint",
		    "this client's key pair: %s",
		    why.data != NULL ? why.data : err_str(rc));
		buf_free(&why);
		return rc;
	}
	buf_free(&why);
	return -1;
}

/* remote_free - forget the credential. */
void
remote_free(struct shiro *s)
{
	if (s->cred != NULL)
		explicit_bzero(s->cred, sizeof(*s->cred));
	free(s->cred);
	s->cred = NULL;
	free(s->server_key);
	free(s->remote);
	s->server_key = s->remote = NULL;
}

/* remote_list_dir - keys/clients or keys/workers by kind ("client",
 * "worker"); NULL for another word. */
static const char *
remote_list_dir(const char *kind)
{
	if (strcmp(kind, "client") == 0 || strcmp(kind, "clients") == 0)
		return KEYS_CLIENTS;
	if (strcmp(kind, "worker") == 0 || strcmp(kind, "workers") == 0)
		return KEYS_WORKERS;
	return NULL;
}

/* remote_print_list - one list of admitted keys, as text or JSON. */
static void
remote_print_list(struct buf *b, struct json_out *j, const char *title,
    const struct keys_list *l)
{
	char fp[KEYS_FP_LEN];
	size_t k;

	if (j != NULL)
		json_out_begin_array(j);
	else
		buf_printf(b, "%s\n", title);
	for (k = 0; k < l->n; k++) {
		keys_fingerprint(l->v[k].bin, fp);
		if (j == NULL) {
			buf_printf(b, "  %-*s %s  %s\n", KEYS_NAME_MAX,
			    l->v[k].name, fp, l->v[k].z85);
			continue;
		}
		json_out_begin_object(j);
		json_out_key(j, "name");
		json_out_str(j, l->v[k].name);
		json_out_key(j, "key");
		json_out_str(j, l->v[k].z85);
		json_out_key(j, "fingerprint");
		json_out_str(j, fp);
		json_out_end_object(j);
	}
	if (j != NULL)
		json_out_end_array(j);
	else if (l->n == 0)
		buf_adds(b, "  (none)\n");
}

/* remote_pair_pub - the public key of the pair at home/which, made on
 * first use, into pub; an exit code or -1. */
static int
remote_pair_pub(const char *home, const char *which, char *pub)
{
	struct zsock_keypair kp;
	struct buf why = BUF_INIT;
	char *path = keys_path(home, which);
	int rc;

	rc = keys_pair(path, 1, &kp, &why);
	free(path);
	if (rc < 0) {
		rc = remote_fail(SHIRO_EXIT_FAIL, "keys", "%s",
		    why.data != NULL ? why.data : err_str(rc));
		buf_free(&why);
		return rc;
	}
	buf_free(&why);
	memcpy(pub, kp.pub, ZSOCK_KEY_Z85 + 1);
	explicit_bzero(&kp, sizeof(kp));
	return -1;
}

/* remote_keys_show - the server's key, this client's, and the lists. */
static int
remote_keys_show(struct shiro *s)
{
	char server[ZSOCK_KEY_Z85 + 1], client[ZSOCK_KEY_Z85 + 1], *dir;
	struct keys_list clients, workers;
	struct buf b = BUF_INIT, notes = BUF_INIT;
	struct json_out j;
	int rc;

	if ((rc = remote_pair_pub(s->home, KEYS_SERVER, server)) >= 0 ||
	    (rc = remote_pair_pub(s->home, KEYS_CLIENT, client)) >= 0)
		return rc;
	dir = keys_path(s->home, KEYS_CLIENTS);
	(void)keys_list_load(dir, &clients, &notes);
	free(dir);
	dir = keys_path(s->home, KEYS_WORKERS);
	(void)keys_list_load(dir, &workers, &notes);
	free(dir);
	if (s->json) {
		json_out_init(&j, &b);
		json_out_begin_object(&j);
		json_out_key(&j, "server");
		json_out_str(&j, server);
		json_out_key(&j, "client");
		json_out_str(&j, client);
		json_out_key(&j, "clients");
		remote_print_list(&b, &j, NULL, &clients);
		json_out_key(&j, "workers");
		remote_print_list(&b, &j, NULL, &workers);
		json_out_end_object(&j);
		buf_addc(&b, '\n');
	} else {
		buf_printf(&b,
		    "shirod's key here (for --server-key on the machines "
		    "that connect to it):\n  %s\n"
		    "this machine's client key (admit it where it attaches: "
		    "shiro keys add client NAME KEY):\n  %s\n",
		    server, client);
		remote_print_list(&b, NULL,
		    "clients admitted over tcp (keys/clients/):", &clients);
		remote_print_list(&b, NULL,
		    "workers admitted over tcp (keys/workers/):", &workers);
	}
	fputs(b.data, stdout);
	if (notes.len > 0)
		fputs(notes.data, stderr);
	buf_free(&b);
	buf_free(&notes);
	keys_list_free(&clients);
	keys_list_free(&workers);
	return SHIRO_EXIT_OK;
}

/* remote_keys - shiro keys [add|revoke ...]. */
int
remote_keys(struct shiro *s, int argc, char **argv)
{
	struct buf why = BUF_INIT;
	unsigned char bin[ZSOCK_KEY_BIN];
	char fp[KEYS_FP_LEN], z85[ZSOCK_KEY_Z85 + 1], *dir;
	const char *which;
	int rc;

	if (argc == 0)
		return remote_keys_show(s);
	if (strcmp(argv[0], "add") != 0 && strcmp(argv[0], "revoke") != 0)
		return remote_fail(SHIRO_EXIT_USAGE, "keys",
		    "'%s' is no subcommand: add or revoke", argv[0]);
	which = argc >= 2 ? remote_list_dir(argv[1]) : NULL;
	if (which == NULL)
		return remote_fail(SHIRO_EXIT_USAGE, "keys",
		    "%s client|worker NAME%s", argv[0],
		    strcmp(argv[0], "add") == 0 ? " KEY" : "");
	dir = keys_path(s->home, which);
	if (strcmp(argv[0], "revoke") == 0) {
		if (argc != 3) {
			free(dir);
			return remote_fail(SHIRO_EXIT_USAGE, "keys",
			    "revoke client|worker NAME");
		}
		rc = keys_revoke(dir, argv[2]);
		free(dir);
		if (rc == -SHIRO_ERR_NOENT)
			return remote_fail(SHIRO_EXIT_FAIL, "keys",
			    "no %s key is named %s", argv[1], argv[2]);
		if (rc < 0)
			return remote_fail(
			    SHIRO_EXIT_FAIL, "keys", "%s", err_str(rc));
		printf("revoked %s %s: a running shirod refuses it from now "
		       "on and closes its connections within a second\n",
		    argv[1], argv[2]);
		return SHIRO_EXIT_OK;
	}
	if (argc != 4 || keys_pub_parse(argv[3], strlen(argv[3]), z85) < 0) {
		free(dir);
		return remote_fail(SHIRO_EXIT_USAGE, "keys",
		    "add client|worker NAME KEY, KEY being the 40 characters "
		    "the other machine printed (in single quotes)");
	}
	rc = keys_add(dir, argv[2], z85, &why);
	free(dir);
	if (rc < 0) {
		rc = remote_fail(
		    rc == -SHIRO_ERR_INVAL ? SHIRO_EXIT_USAGE : SHIRO_EXIT_FAIL,
		    "keys", "%s", why.data != NULL ? why.data : err_str(rc));
		buf_free(&why);
		return rc;
	}
	buf_free(&why);
	(void)zsock_key_decode(z85, bin);
	keys_fingerprint(bin, fp);
	printf("admitted %s %s (%s): a running shirod lets it in within a "
	       "second\n",
	    argv[1], argv[2], fp);
	return SHIRO_EXIT_OK;
}

/* remote_attach - shiro attach [TARGET] [--save NAME]. */
int
remote_attach(struct shiro *s, const char *target, const char *save)
{
	struct conn *c = NULL;
	int rc;

	if (target != NULL) {
		free(s->endpoint);
		free(s->sock_path);
		s->sock_path = NULL;
		s->endpoint = NULL;
		if (strncmp(target, "tcp://", 6) == 0) {
			/* Not a saved remote: no saved workspace either. */
			s->endpoint = xstrdup(target);
			free(s->remote_ws);
			s->remote_ws = NULL;
		} else if (strstr(target, "://") != NULL) {
			return remote_fail(SHIRO_EXIT_USAGE, "attach",
			    "'%s': give a tcp://HOST:PORT endpoint or a saved "
			    "remote's name",
			    target);
		} else {
			free(s->remote);
			s->remote = xstrdup(target);
			if ((rc = remote_resolve(s)) >= 0)
				return rc;
		}
		if ((rc = remote_credential(s)) >= 0)
			return rc;
	}
	if (save != NULL) {
		const char *ws =
		    s->workspace != NULL ? s->workspace : s->remote_ws;

		if (ws != NULL && !keys_workspace_ok(ws))
			return remote_fail(SHIRO_EXIT_USAGE, "attach",
			    "--workspace names a directory on shirod's "
			    "machine: give its absolute path (at most %d "
			    "bytes, no control characters)",
			    KEYS_WORKSPACE_MAX);
		if (s->cred == NULL)
			return remote_fail(SHIRO_EXIT_USAGE, "attach",
			    "--save keeps a tcp endpoint and its key: give "
			    "tcp://HOST:PORT and --server-key");
		if (!keys_name_ok(save))
			return remote_fail(SHIRO_EXIT_USAGE, "attach",
			    "'%s' is not a remote's name (1-%d letters, "
			    "digits, "
			    ". _ -)",
			    save, KEYS_NAME_MAX);
		/* Saved once shirod answered with this key. */
		rc = cmd_connect(s, 0, 0, NULL, &c);
		if (rc != SHIRO_EXIT_OK)
			return rc;
		conn_bye(c);
		conn_close(&c);
		rc = keys_remote_save(
		    s->home, save, s->endpoint, s->cred->server, ws);
		if (rc < 0)
			return remote_fail(SHIRO_EXIT_FAIL, "attach",
			    "cannot save remote %s: %s", save, err_str(rc));
		fprintf(stderr,
		    "shiro: saved remote %s (shiro --remote %s ... or shiro "
		    "attach %s)%s%s\n",
		    save, save, save, ws != NULL ? ", its workspace " : "",
		    ws != NULL ? ws : "");
	}
	return attach_run(s);
}
