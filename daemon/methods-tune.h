/*
 * The tune.* methods (methods-tune.c; a stand-in on Windows until the tuner
 * is ported there). The scheduler they drive is tune-sched.h.
 */
#ifndef ROCMD_METHODS_TUNE_H
#define ROCMD_METHODS_TUNE_H

#include "methods.h"

extern const struct rocmd_method rocmd_methods_tune[];

#endif
