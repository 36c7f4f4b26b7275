/*
 * rocmd-idle-agent.exe: tells the rocmd service how long this logon session
 * has had no keyboard or mouse input, which the service (in session 0) cannot
 * read for it: GetLastInputInfo answers for the caller's own session only.
 * The installer starts it in every interactive session at logon (HKLM's Run
 * key, as the user, with no rights beyond the user's); it has no window.
 *
 * Every 500 ms it reads the idle time; it reports (tune.input) every 5 s, and
 * at once when input arrives after 2 s or more without any, so that a tuning
 * job yields within about half a second of the user's return. The daemon
 * takes the session from the pipe client's token, never from the report
 * (daemon/tune/idle-win.c). Without a daemon it retries every 5 s, quietly.
 * "--once" sends one report and exits with its status (the tests).
 */
#include <stdio.h>
#include <string.h>

#include <windows.h>

#include "client.h"
#include "common/paths.h"

#define POLL_MS 500
#define REPORT_MS 5000
#define RETURN_AFTER_MS 2000

static DWORD
idle_ms(void)
{
	LASTINPUTINFO li = {sizeof(li), 0};

	return GetLastInputInfo(&li) ? GetTickCount() - li.dwTime : 0;
}

/* One report over C (opened first when NULL); 0, or an error with C closed. */
static int
report(struct rocmd_client **c, const char *path, DWORD idle, char *why, size_t whylen)
{
	cJSON *p = cJSON_CreateObject(), *r = NULL;
	int rc;

	if (*c == NULL && (rc = rocmd_client_open(path, "rocmd-idle-agent", c, NULL, why,
	                                          whylen)) < 0) {
		cJSON_Delete(p);
		return rc;
	}
	cJSON_AddNumberToObject(p, "idle_ms", (double)idle);
	rc = rocmd_client_call(*c, "tune.input", p, &r, NULL, NULL, NULL, why, whylen);
	cJSON_Delete(r);
	if (rc < 0) {
		rocmd_client_close(*c);
		*c = NULL;
	}
	return rc;
}

int
main(int argc, char **argv)
{
	struct rocmd_client *c = NULL;
	char path[512], why[512];
	DWORD last_sent = 0, prev = 0;
	int once = argc > 1 && strcmp(argv[1], "--once") == 0;

	if (rocmd_paths_client_socket(path, sizeof(path)) < 0)
		return 1;
	if (once) {
		int rc = report(&c, path, idle_ms(), why, sizeof(why));

		if (rc < 0)
			fprintf(stderr, "rocmd-idle-agent: %s\n", why);
		rocmd_client_close(c);
		return rc < 0 ? 1 : 0;
	}
	for (;;) {
		DWORD now = GetTickCount(), idle = idle_ms();
		int returned = idle < prev && prev >= RETURN_AFTER_MS;

		if (returned || last_sent == 0 || now - last_sent >= REPORT_MS) {
			if (report(&c, path, idle, why, sizeof(why)) == 0 || !returned)
				last_sent = now == 0 ? 1 : now;
		}
		prev = idle;
		Sleep(POLL_MS);
	}
}
