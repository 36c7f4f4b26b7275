/*
 * The HIP runtime's file names and the arch in its device properties: see
 * hip-runtime.h.
 */
#include "hip-runtime.h"

#include <ctype.h>
#include <string.h>

const char *const rocmd_hip_win_runtimes[] = {"amdhip64_7.dll", "amdhip64_6.dll", NULL};

const char *const rocmd_hip_win_rtcs[] = {"hiprtc0701.dll", "hiprtc0700.dll", "hiprtc0604.dll",
                                          "hiprtc0602.dll", NULL};

const char *
rocmd_hip_props_arch(const unsigned char *props, size_t len)
{
	for (size_t i = 256; i + 4 < len; i++)
		if (props[i - 1] == '\0' && memcmp(props + i, "gfx", 3) == 0 &&
		    isxdigit(props[i + 3]))
			return (const char *)props + i;
	return "unknown";
}
