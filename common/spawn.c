/*
 * The portable part of the child-process layer (spawn.h): a helper program
 * run to its end with its output captured, and reading whole messages from
 * a pipe with a deadline and a cancel flag. The system calls are
 * spawn-unix.c's and spawn-win.c's.
 */
#include "spawn.h"

#include <string.h>

#include "error.h"

/* Reads exactly LEN bytes from pipe end FD (see rocmd_child_os_read): 0,
 * ROCMD_ECLOSED when the writer went away, ROCMD_ETIMEDOUT, ROCMD_ECANCELED. */
static int
read_all(intptr_t fd, const struct rocmd_child *c, void *buf, size_t len, double deadline,
         volatile int *cancel)
{
	char *p = buf;

	while (len > 0) {
		size_t n;
		int rc = rocmd_child_os_read(fd, c, p, len, deadline, cancel, &n);

		if (rc < 0)
			return rc;
		if (n == 0)
			return cancel != NULL && *cancel ? ROCMD_ECANCELED : ROCMD_ECLOSED;
		p += n;
		len -= n;
	}
	return 0;
}

int
rocmd_child_start(struct rocmd_child *c, const char *exe, char *const argv[], char *why,
                  size_t whylen)
{
	return rocmd_child_os_start(c, exe, argv, NULL, 0, why, whylen);
}

int
rocmd_child_read(struct rocmd_child *c, void *buf, size_t len, double deadline,
                 volatile int *cancel)
{
	return read_all(rocmd_child_os_fd(c), c, buf, len, deadline, cancel);
}

int
rocmd_child_chan_read(const struct rocmd_child_chan *ch, void *buf, size_t len)
{
	return read_all(ch->rd, NULL, buf, len, 0, NULL);
}

int
rocmd_child_run(char *const argv[], char *const envp[], int timeout_ms, char *out, size_t outlen,
                int *status)
{
	static char *const empty_env[] = {NULL};
	struct rocmd_child *c = NULL;
	double deadline = rocmd_child_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	size_t used = 0;
	char why[8];
	int rc, st;

	if (outlen > 0)
		out[0] = '\0';
	if (status != NULL)
		*status = 0;
	if ((rc = rocmd_child_new(&c)) < 0)
		return rc;
	rc = rocmd_child_os_start(c, argv[0], argv, envp != NULL ? envp : empty_env, 1, why,
	                          sizeof(why));
	for (; rc == 0;) {
		char buf[4096];
		size_t n;

		rc = rocmd_child_os_read(rocmd_child_os_fd(c), c, buf, sizeof(buf), deadline, NULL,
		                         &n);
		if (rc < 0 || n == 0)
			break;
		if (outlen > 0 && used < outlen - 1) {
			size_t take = n < outlen - 1 - used ? n : outlen - 1 - used;
			memcpy(out + used, buf, take);
			used += take;
			out[used] = '\0';
		}
	}
	/* Output closed; the child may still hang on its way out. */
	if (rc == 0)
		rc = rocmd_child_os_wait(c, deadline);
	if (rc == ROCMD_ETIMEDOUT) {
		/* It may be stuck inside a GPU driver: killed, it gets a few
		 * seconds to go, then is left to the background. */
		rocmd_child_kill(c);
		if (rocmd_child_os_wait(c, rocmd_child_now_ms() + 5000) < 0)
			rocmd_child_abandon(c);
	}
	if (rocmd_child_alive(c)) {
		st = rocmd_child_stop(c, 0);
		if (status != NULL)
			*status = st;
	}
	rocmd_child_free(c);
	return rc;
}
