/*
 * rocmd-hip-probe --adapters elsewhere than Windows: the GPUs come from the
 * KFD topology there (gpu-kfd.c), so there is nothing to list.
 */
#include "adapters.h"

#include <stdio.h>

int
rocmd_probe_adapters(void)
{
	printf("error display adapters are listed on Windows only\n");
	return 1;
}
