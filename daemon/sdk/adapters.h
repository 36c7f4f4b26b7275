/*
 * rocmd-hip-probe --adapters (adapters-win.c, adapters-unix.c): the display
 * adapters of a machine without a HIP runtime, for gpu-hip.c.
 */
#ifndef ROCMD_ADAPTERS_H
#define ROCMD_ADAPTERS_H

/* Prints the adapters (see adapters-win.c); the probe's exit status. */
int rocmd_probe_adapters(void);

#endif
