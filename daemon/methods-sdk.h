/*
 * The method table of SDK discovery (methods-sdk.c), listed in methods.c.
 */
#ifndef ROCMD_METHODS_SDK_H
#define ROCMD_METHODS_SDK_H

#include "methods.h"

extern const struct rocmd_method rocmd_methods_sdk[];

#endif
