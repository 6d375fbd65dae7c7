/* test_jail_lib - helpers shared by the jail tests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/harness.h"
#include "tests/test_jail_lib.h"

/* jt_capture - the on_output callback: append to out or err. */
static void
jt_capture(void *arg, enum jail_stream stream, const char *data, size_t len)
{
	struct jt_run *r = arg;

	buf_add(stream == JAIL_STDOUT ? &r->out : &r->err, data, len);
}

/* jt_spec - a spec with the defaults, workspace ws and argv; skips the
 * test where the kernel cannot run the jail. */
void
jt_spec(struct jail_spec *spec, const char *ws, const char *const *argv)
{
	struct jail_features f;

	jail_probe(&f);
	if (f.missing[0] != '\0')
		harness_skip(
		    "the jail cannot run here: it lacks %s", f.missing);
	jail_spec_init(spec);
	spec->workspace = ws;
	spec->argv = argv;
	spec->timeout_ms = 20000;
}

/* jt_exec - jail_run(spec) with stdout and stderr captured into r. */
void
jt_exec(struct jail_spec *spec, struct jt_run *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->out);
	buf_init(&r->err);
	buf_adds(&r->out, "");
	buf_adds(&r->err, "");
	spec->on_output = jt_capture;
	spec->on_output_arg = r;
	r->rc = jail_run(spec, &r->res);
}

/* jt_sh - run `sh -c script` in workspace ws. */
void
jt_sh(const char *ws, const char *script, struct jt_run *r)
{
	const char *argv[] = {"sh", "-c", script, NULL};
	struct jail_spec spec;

	jt_spec(&spec, ws, argv);
	jt_exec(&spec, r);
}

/* jt_free - free r's buffers. */
void
jt_free(struct jt_run *r)
{
	buf_free(&r->out);
	buf_free(&r->err);
}

/* jt_path - dir/name in one of four rotating static buffers. */
const char *
jt_path(const char *dir, const char *name)
{
	static char bufs[4][PATH_MAX];
	static int k;
	char *p = bufs[k++ % 4];

	(void)snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

/* jt_write - write text into path, creating it. */
void
jt_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECKF(f != NULL, "fopen %s: %s", path, strerror(errno));
	fputs(text, f);
	CHECK(fclose(f) == 0);
}

/* jt_probe - copy build/try-syscall into ws. */
const char *
jt_probe(const char *ws)
{
	static char dst[PATH_MAX];
	char self[PATH_MAX], src[PATH_MAX + 32], data[65536];
	ssize_t n;
	int in, out;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	(void)snprintf(src, sizeof(src), "%s/../try-syscall", self);
	(void)snprintf(dst, sizeof(dst), "%s/try-syscall", ws);
	in = open(src, O_RDONLY | O_CLOEXEC);
	CHECKF(in >= 0, "open %s: %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	CHECKF(out >= 0, "open %s: %s", dst, strerror(errno));
	while ((n = read(in, data, sizeof(data))) > 0)
		CHECK(write(out, data, (size_t)n) == n);
	close(in);
	CHECK(close(out) == 0);
	return dst;
}

/* jt_host_has - whether a host process's command line contains marker. */
int
jt_host_has(const char *marker)
{
	char path[300], cmd[4096];
	struct dirent *d;
	size_t n, i;
	DIR *dir;
	FILE *f;
	int found = 0;

	dir = opendir("/proc");
	CHECK(dir != NULL);
	while (!found && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		(void)snprintf(
		    path, sizeof(path), "/proc/%s/cmdline", d->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		n = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		for (i = 0; i < n; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		cmd[n] = '\0';
		if (strstr(cmd, marker) != NULL)
			found = 1;
	}
	closedir(dir);
	return found;
}
