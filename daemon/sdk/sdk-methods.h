/*
 * The method table of SDK discovery (sdk-methods.c), listed in methods.c.
 */
#ifndef ROCMD_SDK_METHODS_H
#define ROCMD_SDK_METHODS_H

#include "daemon/core/methods.h"

extern const struct rocmd_method rocmd_methods_sdk[];

#endif
