/*
 * Logging implementation: see log.h. A mutex keeps lines from worker threads
 * whole; the level check happens before any formatting.
 */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct {
	pthread_mutex_t lock;
	enum rocmd_log_level level;
	int journald;
	int no_stderr;
	FILE *file;
	char ident[32];
} logger = {PTHREAD_MUTEX_INITIALIZER, ROCMD_LOG_NOTICE, 0, 0, NULL, "rocmd"};

static const char *const level_names[] = {
	[ROCMD_LOG_ERR] = "error", [ROCMD_LOG_WARNING] = "warning", [ROCMD_LOG_NOTICE] = "notice",
	[ROCMD_LOG_INFO] = "info", [ROCMD_LOG_DEBUG] = "debug",
};

/* JOURNAL_STREAM is "dev:ino" of the stream systemd connected; only trust it if
 * it is really our stderr (a child of a service may inherit the variable). */
static int
stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) != 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void
rocmd_log_init(const char *ident)
{
	pthread_mutex_lock(&logger.lock);
	logger.journald = stderr_is_journal();
	if (ident != NULL)
		snprintf(logger.ident, sizeof(logger.ident), "%s", ident);
	pthread_mutex_unlock(&logger.lock);
}

void
rocmd_log_set_level(enum rocmd_log_level level)
{
	if (level < ROCMD_LOG_ERR)
		level = ROCMD_LOG_ERR;
	if (level > ROCMD_LOG_DEBUG)
		level = ROCMD_LOG_DEBUG;
	logger.level = level;
}

enum rocmd_log_level
rocmd_log_get_level(void)
{
	return logger.level;
}

int
rocmd_log_level_parse(const char *name)
{
	if (name == NULL)
		return -1;
	for (int i = ROCMD_LOG_ERR; i <= ROCMD_LOG_DEBUG; i++)
		if (strcmp(level_names[i], name) == 0)
			return i;
	return -1;
}

const char *
rocmd_log_level_name(enum rocmd_log_level level)
{
	if (level < ROCMD_LOG_ERR || level > ROCMD_LOG_DEBUG)
		return "unknown";
	return level_names[level];
}

int
rocmd_log_open_file(const char *path)
{
	FILE *f = NULL;

	if (path != NULL) {
		f = fopen(path, "ae");
		if (f == NULL)
			return -errno;
		setvbuf(f, NULL, _IOLBF, 0);
	}
	pthread_mutex_lock(&logger.lock);
	if (logger.file != NULL)
		fclose(logger.file);
	logger.file = f;
	pthread_mutex_unlock(&logger.lock);
	return 0;
}

void
rocmd_log_set_stderr(int on)
{
	pthread_mutex_lock(&logger.lock);
	logger.no_stderr = !on;
	pthread_mutex_unlock(&logger.lock);
}

void
rocmd_log_close(void)
{
	rocmd_log_open_file(NULL);
}

void
rocmd_logv(enum rocmd_log_level level, const char *fmt, va_list ap)
{
	char msg[2048];
	char stamp[40];
	struct timespec ts;
	struct tm tm;

	if (level > logger.level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);

	pthread_mutex_lock(&logger.lock);
	if (logger.no_stderr) {
		/* the file alone */
	} else if (logger.journald) {
		fprintf(stderr, "<%d>%s\n", (int)level, msg);
	} else {
		fprintf(stderr, "%s: %s: %s\n", logger.ident, rocmd_log_level_name(level), msg);
	}
	if (logger.file != NULL) {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(logger.file, "%s.%03ld %s[%ld] %s: %s\n", stamp, ts.tv_nsec / 1000000,
			logger.ident, (long)getpid(), rocmd_log_level_name(level), msg);
	}
	pthread_mutex_unlock(&logger.lock);
}

void
rocmd_log(enum rocmd_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rocmd_logv(level, fmt, ap);
	va_end(ap);
}
