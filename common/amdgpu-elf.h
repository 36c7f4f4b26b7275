/*
 * The smallest reader of AMD GPU code objects rocmd needs: is this file an
 * AMDGPU ELF (e_machine 0xE0), and which chip is it for (the low byte of
 * e_flags, EF_AMDGPU_MACH, plus the xnack/sramecc feature bits of code object
 * v4 and later). Reads only the ELF header, so it is cheap on a 400 MB file.
 * No kernels/amdgpu code-object reader existed when this was written; if one
 * appears with a usable API this should move there.
 */
#ifndef ROCMD_AMDGPU_ELF_H
#define ROCMD_AMDGPU_ELF_H

#include <stddef.h>
#include <stdint.h>

#define ROCMD_EM_AMDGPU 0xE0

/* The gfx name of EF_AMDGPU_MACH value MACH ("gfx1103" for 0x44), or NULL. */
const char *rocmd_amdgpu_mach_name(unsigned mach);
/* The EF_AMDGPU_MACH value of a gfx name, or 0 when unknown. */
unsigned rocmd_amdgpu_mach_of(const char *gfx);

/*
 * Reads the ELF header of the BUF/LEN bytes (at least 64) and writes the
 * target ("gfx1103", "gfx90a:xnack+") to OUT. Returns 0, ROCMD_EINVAL when
 * the bytes are not a 64-bit little-endian AMDGPU ELF, or ROCMD_ENOTFOUND for
 * an AMDGPU ELF of a chip this table does not know (OUT gets "mach-0xNN").
 */
int rocmd_amdgpu_elf_arch(const void *buf, size_t len, char *out, size_t outlen);
/* The same for a file; -errno when it cannot be read. */
int rocmd_amdgpu_file_arch(const char *path, char *out, size_t outlen);
/* gfx_target_version as KFD writes it (110003) → "gfx1103". Returns 0 or ROCMD_EINVAL. */
int rocmd_amdgpu_gfx_from_target_version(uint64_t v, char *out, size_t outlen);

#endif
