/*
 * The tune.* methods (tune-methods.c; a stand-in on Windows until the tuner
 * is ported there). The scheduler they drive is tune-sched.h.
 */
#ifndef ROCMD_TUNE_METHODS_H
#define ROCMD_TUNE_METHODS_H

#include "daemon/core/methods.h"

extern const struct rocmd_method rocmd_methods_tune[];

#endif
