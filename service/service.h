/*
 * rocmd as a service: how the daemon talks to the service manager that runs
 * it. service-systemd.c speaks systemd's notify protocol (READY, STATUS,
 * STOPPING, WATCHDOG) and takes sockets passed by socket activation;
 * service-win.c is the Windows SCM glue (ServiceMain, the control handler,
 * SetServiceStatus, the event log, install/uninstall/start/stop).
 *
 * The daemon calls these at the points of its life that a service manager
 * cares about; outside a service manager every call is a cheap no-op, so the
 * same binary runs in a terminal, in the tests and as a service.
 */
#ifndef ROCMD_SERVICE_H
#define ROCMD_SERVICE_H

struct rocmd_server;

/* The daemon proper: parses ARGV and runs until stopped; returns the exit code. */
typedef int (*rocmd_service_main_fn)(int argc, char **argv);

/*
 * Runs the daemon under whatever started it. On Windows: "rocmd install |
 * uninstall | start | stop" manage the service, a start by the SCM runs MAIN
 * in ServiceMain, anything else runs MAIN in console mode. On Unix it simply
 * calls MAIN. Returns the process exit code.
 */
int rocmd_service_run(int argc, char **argv, rocmd_service_main_fn main_fn);
/* True when a service manager runs us (rocmd then never detaches itself). */
int rocmd_service_managed(void);
/*
 * Hooks the service manager into SRV's loop once the server exists: the
 * watchdog keep-alive (only when systemd asked for one, for our pid) or the
 * forwarding of SCM controls. The handles are unreferenced: they never keep
 * the loop alive. Returns 0 or a negative code.
 */
int rocmd_service_attach(struct rocmd_server *srv);
/* Closes what attach made; call after uv_run returned, then run the loop once more. */
void rocmd_service_detach(void);
/* The daemon serves requests: READY=1 / SERVICE_RUNNING, with a status line. */
void rocmd_service_ready(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A free-form status line (systemctl status; the event log on Windows). */
void rocmd_service_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Shutdown began: STOPPING=1 / SERVICE_STOP_PENDING. WHY is logged. */
void rocmd_service_stopping(const char *why);
/*
 * Socket activation: the listening descriptor the service manager passed
 * (LISTEN_FDS/LISTEN_PID naming this process), taken at most once, or -1.
 */
int rocmd_service_listen_fd(void);

#endif
