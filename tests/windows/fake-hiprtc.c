/*
 * A stand-in for a HIP SDK's hiprtc (bin\hiprtc0602.dll) in the Windows
 * tests under wine (tests/windows/test-hip-win.sh): the HIP backend must
 * find it by name, load it in its compile child (rocmtune.exe / rocmd.exe
 * started again) and report what it answers. It compiles nothing: every
 * compile fails with a log that names the options it was given, so the test
 * sees the device's arch reach the child. Built with FAKE_RTC_CODE it
 * "compiles" to bytes that are no code object, which the stand-in runtime
 * (fake-amdhip64.c) refuses to load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#define EXPORT __declspec(dllexport)

struct prog {
	char log[512];
};

EXPORT int hiprtcCreateProgram(struct prog **p, const char *src, const char *name, int nhdr,
                               const char **hdrs, const char **hdr_names);
EXPORT int hiprtcCompileProgram(struct prog *p, int nopt, const char **opts);
EXPORT int hiprtcGetProgramLogSize(struct prog *p, size_t *n);
EXPORT int hiprtcGetProgramLog(struct prog *p, char *log);
EXPORT int hiprtcGetCodeSize(struct prog *p, size_t *n);
EXPORT int hiprtcGetCode(struct prog *p, char *code);
EXPORT int hiprtcDestroyProgram(struct prog **p);

#define CODE "stand-in: not a code object"

EXPORT int
hiprtcCreateProgram(struct prog **p, const char *src, const char *name, int nhdr, const char **hdrs,
                    const char **hdr_names)
{
	(void)name;
	(void)nhdr;
	(void)hdrs;
	(void)hdr_names;
	if (src == NULL || (*p = calloc(1, sizeof(**p))) == NULL)
		return 1; /* HIPRTC_ERROR_OUT_OF_MEMORY */
	return 0;
}

EXPORT int
hiprtcCompileProgram(struct prog *p, int nopt, const char **opts)
{
	size_t n = (size_t)snprintf(p->log, sizeof(p->log), "stand-in hiprtc: options");

	for (int i = 0; i < nopt && n < sizeof(p->log); i++)
		n += (size_t)snprintf(p->log + n, sizeof(p->log) - n, " %s", opts[i]);
#if defined(FAKE_RTC_CODE)
	return 0;
#else
	return 6; /* HIPRTC_ERROR_COMPILATION */
#endif
}

EXPORT int
hiprtcGetProgramLogSize(struct prog *p, size_t *n)
{
	*n = strlen(p->log) + 1;
	return 0;
}

EXPORT int
hiprtcGetProgramLog(struct prog *p, char *log)
{
	memcpy(log, p->log, strlen(p->log) + 1);
	return 0;
}

EXPORT int
hiprtcGetCodeSize(struct prog *p, size_t *n)
{
	(void)p;
	*n = sizeof(CODE);
	return 0;
}

EXPORT int
hiprtcGetCode(struct prog *p, char *code)
{
	(void)p;
	memcpy(code, CODE, sizeof(CODE));
	return 0;
}

EXPORT int
hiprtcDestroyProgram(struct prog **p)
{
	free(*p);
	*p = NULL;
	return 0;
}
