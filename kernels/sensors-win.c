/*
 * The sensors (sensors.h) on Windows: not read yet (ADLX and the PDH GPU
 * counters would report power and memory), so every figure is "not reported".
 */
#include "kernels/sensors.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"

struct sensors {
	int unused;
};

int
sensors_open(const char *backend, int index, const char *sysroot, struct sensors **out,
             char *source, size_t sourcelen)
{
	(void)backend, (void)index, (void)sysroot;
	*out = calloc(1, sizeof(**out));
	snprintf(source, sourcelen, "none: ADLX and PDH counters are not read on Windows yet");
	return *out != NULL ? 0 : ROCMD_ENOMEM;
}

int
sensors_power_w(struct sensors *s, double *w)
{
	(void)s, (void)w;
	return ROCMD_EUNSUPPORTED;
}

int
sensors_energy_j(struct sensors *s, double *j)
{
	(void)s, (void)j;
	return ROCMD_EUNSUPPORTED;
}

int
sensors_mem_used(struct sensors *s, int64_t *bytes)
{
	(void)s, (void)bytes;
	return ROCMD_EUNSUPPORTED;
}

int
sensors_clocks(struct sensors *s, char *out, size_t len)
{
	(void)s, (void)out, (void)len;
	return ROCMD_EUNSUPPORTED;
}

int
sensors_driver(struct sensors *s, char *out, size_t len)
{
	(void)s, (void)out, (void)len;
	return ROCMD_EUNSUPPORTED;
}

void
sensors_close(struct sensors *s)
{
	free(s);
}
