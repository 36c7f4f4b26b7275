/*
 * The first steps of a process the tuner fork()s without exec: the hiprtc
 * compile in backend-hip.c, which runs inside the evaluation process (the
 * evaluator itself is started with exec, measure-unix.c).
 *
 * Such a child starts with a copy of every descriptor of its parent. A child
 * that outlives its parent, even for a moment, keeps them open: in a daemon a
 * listening socket that answers connections nobody accepts. So the child
 * closes everything but stdin/out/err and the descriptors it was given, asks
 * to be killed when the thread that forked it dies, and exits at once if that
 * already happened between fork() and now.
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
