/*
 * Process-level set-up that differs by platform: ignoring SIGPIPE and raising
 * the descriptor limit on Unix, and detaching from the terminal with a
 * readiness pipe, so that a plain "rocmd" returns only once the daemon serves
 * (exit 0) or with the reason it could not start. process-unix.c does the
 * double fork; on Windows the SCM is the way to run in the background and
 * process-win.c refuses to detach.
 */
#ifndef ROCMD_PROCESS_H
#define ROCMD_PROCESS_H

/* Signals and resource limits, before the loop exists. */
void rocmd_process_init(void);
/* Detaches; returns 0 in the daemon (the caller's parent has gone on to wait),
 * or a negative code (ROCMD_EUNSUPPORTED on Windows). */
int rocmd_process_detach(void);
/* Tells the waiting parent, if any, that start-up succeeded (MSG NULL) or why
 * it failed; at most once. */
void rocmd_process_report(const char *msg);

#endif
