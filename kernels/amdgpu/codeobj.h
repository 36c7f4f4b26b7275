/*
 * AMD GPU code objects: what rocmd reads from the ELF files clang and hiprtc
 * produce for its kernels. The arch comes from e_flags (EF_AMDGPU_MACH, the
 * low byte), the resources of each kernel from the NT_AMDGPU_METADATA note (a
 * MessagePack map, code object v3 and later). The tuner uses the resources to
 * rule out configurations that cannot fit a device; CI uses them to check the
 * offline builds for every arch rocmd serves.
 */
#ifndef ROCMD_KERNELS_CODEOBJ_H
#define ROCMD_KERNELS_CODEOBJ_H

#include <stddef.h>
#include <stdint.h>

#define CODEOBJ_EM_AMDGPU 0xE0
#define CODEOBJ_MAX_KERNELS 16

struct codeobj_kernel {
	char name[96];
	int vgpr_count;
	int sgpr_count;
	int wavefront_size;
	int64_t group_segment_fixed_size;   /* LDS bytes */
	int64_t private_segment_fixed_size; /* scratch bytes per work-item */
	int max_flat_workgroup_size;
	int vgpr_spill_count, sgpr_spill_count;
};

struct codeobj_info {
	unsigned e_machine;
	unsigned e_flags;
	unsigned mach;   /* e_flags & 0xff */
	char arch[16];   /* "gfx1103", from MACH; "" when unknown */
	char target[64]; /* "amdgcn-amd-amdhsa--gfx1103", from the note */
	int nkernels;
	struct codeobj_kernel k[CODEOBJ_MAX_KERNELS];
};

/* The EF_AMDGPU_MACH value of "gfxNNNN", or -1; and back (NULL when unknown). */
int codeobj_arch_mach(const char *gfx);
const char *codeobj_mach_name(unsigned mach);

/* Parses an in-memory code object. 0, or ROCMD_ECORRUPT with a sentence in WHY. */
int codeobj_parse(const void *buf, size_t len, struct codeobj_info *out, char *why, size_t whylen);
int codeobj_parse_file(const char *path, struct codeobj_info *out, char *why, size_t whylen);

#endif
