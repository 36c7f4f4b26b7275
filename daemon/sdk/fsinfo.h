/*
 * The readers' file facts (rocmd_fsinfo_get, rocmd_dir_*, rocmd_fs_map) are
 * part of the file layer now, common/fs.h. This header stays only until
 * daemon/deploy/deploy-targets.c, daemon/pkg/pkg-methods.c and
 * daemon/pkg/pkg-drop.c include that instead.
 */
#ifndef ROCMD_FSINFO_H
#define ROCMD_FSINFO_H

#include "common/fs.h"

#endif
