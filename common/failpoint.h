/*
 * Fault injection for the code paths that must survive I/O errors and
 * crashes (the deploy engine first). Every file operation of such code asks
 * ROCMD_FAILPOINT("deploy.rename") first; a journal step asks
 * ROCMD_KILLPOINT("journal.swapped"). Off (the normal case) each is a single
 * test of a global flag.
 *
 * Armed from the environment at the first use, or by rocmd_failpoint_set:
 *   ROCMD_FAILPOINT=NAME:COUNT:ERRNO   the COUNT-th hit (1-based) of failpoint
 *                                      NAME fails with ERRNO (EIO, ENOSPC,
 *                                      EACCES, or a number); NAME "*" counts
 *                                      every failpoint, so a test can walk
 *                                      them all with COUNT = 1, 2, 3, ...
 *   ROCMD_KILLPOINT=NAME               the process raises SIGKILL at kill
 *                                      point NAME ("*:N": at the N-th one)
 *
 * Two more kinds of fault in place of ERRNO, for the fault harness
 * (tests/fault/):
 *   KILL    the process raises SIGKILL at that hit (a crash before the
 *           operation; a crash after it is one before the next)
 *   SHORT   a short write: the operation proceeds, but the next write(2) of
 *           the thread writes only half its bytes and the one after fails
 *           with ENOSPC, as on a disk that fills mid-write. It needs the
 *           harness's preloaded library (tests/fault/fault-preload.c, which
 *           provides rocmd_fault_short_write); without it, and at a hit that
 *           is not a ".write", nothing fails (the log says so).
 *
 *   ROCMD_FAILPOINT_LOG=FILE           arms counting: every failpoint hit is
 *                                      appended to FILE as "fp N NAME" (N
 *                                      counts all failpoints, as "*:N" does),
 *                                      every kill point as "kp N NAME", and
 *                                      the fault that fires as "fired fp N
 *                                      NAME KIND" (or "fired kp N NAME").
 *                                      One write(2) per line (O_APPEND), so a
 *                                      harness may append its own lines
 *                                      between the daemon's.
 *   ROCMD_FAILPOINT_PID=PID            all of the above apply only in the
 *                                      process PID (a harness sets it to the
 *                                      pid it execs rocmd as), not in the
 *                                      children that inherit the environment
 */
#ifndef ROCMD_FAILPOINT_H
#define ROCMD_FAILPOINT_H

#include <stdint.h>

extern int rocmd_failpoint_armed;

/* Returns 0, or the -errno to fail with when NAME's turn has come. */
int rocmd_failpoint_hit(const char *name);
/* Raises SIGKILL when NAME is the armed kill point. */
void rocmd_killpoint_hit(const char *name);

#define ROCMD_FAILPOINT(name) (rocmd_failpoint_armed ? rocmd_failpoint_hit(name) : 0)
#define ROCMD_KILLPOINT(name)                                                                      \
	do {                                                                                       \
		if (rocmd_failpoint_armed)                                                         \
			rocmd_killpoint_hit(name);                                                 \
	} while (0)

/* Arms (or, with NULL specs, disarms) both from strings in the formats above;
 * resets the counters. ROCMD_EINVAL for a malformed spec. */
int rocmd_failpoint_set(const char *fail_spec, const char *kill_spec);
/* Failpoint hits counted since arming, and whether the armed fault fired. */
uint64_t rocmd_failpoint_hits(void);
int rocmd_failpoint_fired(void);
/* The name of the failpoint that fired ("" when none). */
const char *rocmd_failpoint_fired_name(void);

#endif
