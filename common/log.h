/*
 * Leveled logging for the daemon and tools. Messages go to stderr; when the
 * process runs under systemd (JOURNAL_STREAM names our stderr) each line gets
 * the "<N>" priority prefix journald understands. A log file can be added by
 * configuration; it receives timestamped lines. Logging never fails loudly:
 * a write error is dropped, the daemon keeps running.
 */
#ifndef ROCMD_LOG_H
#define ROCMD_LOG_H

#include <stdarg.h>

/* syslog priorities, so the numbers are the journald prefixes. */
enum rocmd_log_level {
	ROCMD_LOG_ERR = 3,
	ROCMD_LOG_WARNING = 4,
	ROCMD_LOG_NOTICE = 5,
	ROCMD_LOG_INFO = 6,
	ROCMD_LOG_DEBUG = 7,
};

/* Reads the environment once: systemd detection. Safe to call again. */
void rocmd_log_init(const char *ident);
void rocmd_log_set_level(enum rocmd_log_level level);
enum rocmd_log_level rocmd_log_get_level(void);
/* Parses "error", "warning", "notice", "info", "debug"; returns -1 if unknown. */
int rocmd_log_level_parse(const char *name);
const char *rocmd_log_level_name(enum rocmd_log_level level);
/* Appends to PATH as well as stderr; NULL closes the file. Returns 0 or -errno. */
int rocmd_log_open_file(const char *path);
void rocmd_log_close(void);
/* Whether lines also go to stderr (the default): off for a detached daemon
 * once it serves, whose stderr is no longer anyone's terminal. */
void rocmd_log_set_stderr(int on);

void rocmd_log(enum rocmd_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rocmd_logv(enum rocmd_log_level level, const char *fmt, va_list ap);

#define log_err(...) rocmd_log(ROCMD_LOG_ERR, __VA_ARGS__)
#define log_warn(...) rocmd_log(ROCMD_LOG_WARNING, __VA_ARGS__)
#define log_notice(...) rocmd_log(ROCMD_LOG_NOTICE, __VA_ARGS__)
#define log_info(...) rocmd_log(ROCMD_LOG_INFO, __VA_ARGS__)
#define log_debug(...) rocmd_log(ROCMD_LOG_DEBUG, __VA_ARGS__)

#endif
