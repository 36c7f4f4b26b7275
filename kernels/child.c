/*
 * Descriptor hygiene and parent-death handling for the tuner's fork()ed
 * children: see child.h.
 */
#include "kernels/child.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#define CHILD_KEEP_MAX 8

/* close_range() where the kernel has it (5.9+), else one close() per slot. */
static void
close_span(unsigned lo, unsigned hi)
{
	if (lo > hi)
		return;
	if (close_range(lo, hi, 0) == 0)
		return;
	if (hi > 65535) {
		long max = sysconf(_SC_OPEN_MAX);
		hi = max > 0 && max < 65536 ? (unsigned)max - 1 : 65535;
	}
	for (unsigned fd = lo; fd <= hi && fd >= lo; fd++)
		close((int)fd);
}

void
tune_child_close_fds(const int *keep, size_t nkeep)
{
	int k[CHILD_KEEP_MAX];
	size_t n = 0, i, j;
	unsigned lo = 3;

	/* Sorted copy of the descriptors to keep, above stderr. */
	for (i = 0; i < nkeep && n < CHILD_KEEP_MAX; i++) {
		if (keep[i] < 3)
			continue;
		for (j = n; j > 0 && k[j - 1] > keep[i]; j--)
			k[j] = k[j - 1];
		k[j] = keep[i];
		n++;
	}
	for (i = 0; i < n; i++) {
		if ((unsigned)k[i] > lo)
			close_span(lo, (unsigned)k[i] - 1);
		if ((unsigned)k[i] >= lo)
			lo = (unsigned)k[i] + 1;
	}
	close_span(lo, ~0U);
}

void
tune_child_init(pid_t parent, const int *keep, size_t nkeep)
{
	/* Killed with the thread that forked us; if it is gone already the
	 * signal was never armed, so leave now. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	tune_child_close_fds(keep, nkeep);
}
