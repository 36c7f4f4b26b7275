/*
 * Process-level set-up that differs by platform: ignoring SIGPIPE and raising
 * the descriptor limit on Unix, and detaching from the terminal with a
 * readiness pipe, so that a plain "rocmd" returns only once the daemon serves
 * (exit 0) or with the reason it could not start and the exit status the
 * daemon would have had in the foreground. process-unix.c does the
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
/* Tells the waiting parent, if any, that start-up succeeded (STATUS 0; then
 * stderr leaves the terminal for /dev/null and log lines go to the log file
 * alone) or that it failed with exit status STATUS, for the reason MSG (which
 * the parent prints, once); at most once. */
void rocmd_process_report(int status, const char *msg);
/* Whether a parent waits for the report: rocmd detached itself. */
int rocmd_process_detached(void);

#endif
