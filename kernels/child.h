/*
 * The first steps of every process the tuner fork()s without exec (the
 * evaluator in measure.c, the hiprtc compile in backend-hip.c).
 *
 * Such a child starts with a copy of every descriptor of its parent: in the
 * daemon that is the listening socket, the state-folder lock (flock, shared
 * with the child's copy), the database. A child that outlives its parent, even
 * for a moment, then keeps the socket answering connections nobody accepts and
 * the lock held, so a restarted daemon finds its socket "live" or its state
 * folder locked. So the child closes everything but stdin/out/err and the
 * descriptors it was given, asks to be killed when the thread that forked it
 * dies, and exits at once if that already happened between fork() and now.
 */
#ifndef ROCMD_KERNELS_CHILD_H
#define ROCMD_KERNELS_CHILD_H

#include <stddef.h>
#include <sys/types.h>

/* In the child, first thing after fork(). PARENT is getpid() taken before the
 * fork; KEEP lists the descriptors (above 2) the child goes on using. */
void tune_child_init(pid_t parent, const int *keep, size_t nkeep);

/* Closes every descriptor from 3 up except those in KEEP (any order). */
void tune_child_close_fds(const int *keep, size_t nkeep);

#endif
