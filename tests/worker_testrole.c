/*
 * worker_testrole - a worker for the skeleton's tests only.
 *
 * Its jobs exercise what the model worker's offline provider does not:
 * streaming, a long job that can be canceled, failures, and the secret;
 * and, as a workspace's tool worker, a call that ignores its CANCEL.
 * The job's kind says what to do; data.text is its argument.
 */
#include <string.h>
#include <time.h>

#include "proto/err.h"
#include "proto/msg.h"
#include "workers/worker.h"

/* testrole_service - do one test job. */
static int
testrole_service(struct worker *w, const struct msg *job, struct msg *result)
{
	const struct msg_val *data = NULL;
	const unsigned char *secret;
	const char *kind, *text = "";
	struct timespec tick = {0, 10 * 1000 * 1000};
	size_t len;
	int k, rc;

	msg_get_str(job, "kind", &kind, NULL);
	if (msg_get_map(job, "data", &data) == 0 &&
	    msg_val_str(data, "text") != NULL)
		text = msg_val_str(data, "text");
	if (strcmp(kind, "echo") == 0) {
		msg_set_str(result, "text", text);
		return 0;
	}
	if (strcmp(kind, "chunks") == 0) {
		for (k = 0; k < 3; k++)
			if ((rc = worker_chunk(w, &"abc"[k], 1)) < 0)
				return rc;
		msg_set_str(result, "text", "abc");
		return 0;
	}
	if (strcmp(kind, "slow") == 0) {
		/* Up to 20 s, polling as a provider waiting on a call would. */
		for (k = 0; k < 2000; k++) {
			if ((rc = worker_poll(w)) < 0)
				return rc;
			nanosleep(&tick, NULL);
		}
		msg_set_str(result, "text", "slow done");
		return 0;
	}
	if (strcmp(kind, "tool") == 0) {
		/* A tool worker deaf to CANCEL (test_agent): it says it
		 * started, then neither reads its socket nor answers for
		 * 60 s, so that shirod must kill it.  With "keep-alive" in
		 * its arguments it heartbeats meanwhile (a call that runs on
		 * and on), and goes silent only once canceled. */
		const char *args =
		    data != NULL ? msg_val_str(data, "args") : NULL;
		int alive = args != NULL && strstr(args, "keep-alive") != NULL;

		if ((rc = worker_chunk(w, "started\n", 8)) < 0)
			return rc;
		for (k = 0; k < 6000; k++) {
			if (alive)
				(void)worker_poll(w);
			nanosleep(&tick, NULL);
		}
		msg_set_str(result, "text", "deaf done");
		return 0;
	}
	if (strcmp(kind, "secret") == 0) {
		secret = worker_secret(w, &len);
		if (secret == NULL)
			msg_set_str(result, "text", "(none)");
		else
			msg_set_strn(result, "text", (const char *)secret, len);
		return 0;
	}
	if (strcmp(kind, "fail") == 0) {
		worker_failure(w, "provider", true, "asked to fail: %s", text);
		return -SHIRO_ERR_FAILED;
	}
	worker_failure(w, "badjob", false, "no such test job");
	return -SHIRO_ERR_UNSUPP;
}

static struct worker_role testrole = {
    .role = "tool",
    .provider = "test",
    .jobs = 1,
    /* Unconfined, so that it can reconnect (test_worker checks the
     * skeleton's reconnection with it). */
    .sandbox = WORKER_NO_SANDBOX,
    .service = testrole_service,
};

/* main - run the test worker; started by a name ending in "-fs" (a
 * link, as test_agent makes), it says it is a workspace's fs worker. */
int
main(int argc, char **argv)
{
	size_t n = argc > 0 ? strlen(argv[0]) : 0;

	if (n >= 3 && strcmp(argv[0] + n - 3, "-fs") == 0)
		testrole.role = "fs";
	worker_main(argc, argv, &testrole);
}
