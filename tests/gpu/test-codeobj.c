/*
 * The AMD code object reader on synthetic ELF files: a well-formed one gives
 * the arch and each kernel's resources; every truncation and a few thousand
 * random byte flips give an error or a parse, never a crash or a read out of
 * bounds (run it under ASan to see the second part bite).
 */
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "kernels/amdgpu/codeobj.h"
#include "tests/lib/check.h"

static void
put(unsigned char *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
pack_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

/* An ELF64 AMDGPU file for gfx1103 with one note section holding the metadata. */
static unsigned char *
make_elf(size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	unsigned char *b;
	size_t desc, note, off_note = 64, off_sh;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 2);
	pack_str(&pk, "amdhsa.target");
	pack_str(&pk, "amdgcn-amd-amdhsa--gfx1103");
	pack_str(&pk, "amdhsa.kernels");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 5);
	pack_str(&pk, ".name");
	pack_str(&pk, "rk_gemm");
	pack_str(&pk, ".vgpr_count");
	msgpack_pack_int(&pk, 81);
	pack_str(&pk, ".sgpr_count");
	msgpack_pack_int(&pk, 32);
	pack_str(&pk, ".group_segment_fixed_size");
	msgpack_pack_int(&pk, 10240);
	pack_str(&pk, ".wavefront_size");
	msgpack_pack_int(&pk, 32);
	desc = sb.size;
	note = 12 + 8 + ((desc + 3) & ~(size_t)3);
	off_sh = off_note + note;
	*len = off_sh + 2 * 64;
	b = calloc(1, *len);
	memcpy(b, "\177ELF", 4);
	b[4] = 2; /* ELFCLASS64 */
	b[5] = 1; /* little-endian */
	b[6] = 1;
	put(b + 16, 3, 2);       /* ET_DYN */
	put(b + 18, 0xe0, 2);    /* EM_AMDGPU */
	put(b + 48, 0x544, 4);   /* e_flags: gfx1103 + feature bits */
	put(b + 40, off_sh, 8);  /* e_shoff */
	put(b + 58, 64, 2);      /* e_shentsize */
	put(b + 60, 2, 2);       /* e_shnum: null + note */
	put(b + off_note, 7, 4); /* namesz "AMDGPU\0" */
	put(b + off_note + 4, desc, 4);
	put(b + off_note + 8, 32, 4); /* NT_AMDGPU_METADATA */
	memcpy(b + off_note + 12, "AMDGPU", 7);
	memcpy(b + off_note + 20, sb.data, desc);
	put(b + off_sh + 64 + 4, 7, 4); /* SHT_NOTE */
	put(b + off_sh + 64 + 24, off_note, 8);
	put(b + off_sh + 64 + 32, note, 8);
	msgpack_sbuffer_destroy(&sb);
	return b;
}

int
main(void)
{
	struct codeobj_info ci;
	char why[256];
	size_t len, n;
	unsigned char *elf = make_elf(&len), *copy = malloc(len);
	unsigned seed = 1;
	int r, i, ok = 0;

	r = codeobj_parse(elf, len, &ci, why, sizeof(why));
	CHECK(r == 0, "well-formed file: %d %s", r, why);
	CHECK(ci.e_machine == 0xe0 && ci.mach == 0x44 && !strcmp(ci.arch, "gfx1103"),
	      "arch: 0x%x 0x%x %s", ci.e_machine, ci.mach, ci.arch);
	CHECK(!strcmp(ci.target, "amdgcn-amd-amdhsa--gfx1103"), "target %s", ci.target);
	CHECK(ci.nkernels == 1 && !strcmp(ci.k[0].name, "rk_gemm") && ci.k[0].vgpr_count == 81 &&
	          ci.k[0].sgpr_count == 32 && ci.k[0].group_segment_fixed_size == 10240 &&
	          ci.k[0].wavefront_size == 32,
	      "kernel resources");
	CHECK(codeobj_arch_mach("gfx1150") == 0x43 && codeobj_arch_mach("gfx1035") == 0x3d &&
	          codeobj_arch_mach("gfx90c") == 0x32 && codeobj_arch_mach("gfx803") == 0x2a &&
	          codeobj_arch_mach("gfx1103") == 0x44 && codeobj_arch_mach("gfx9999") == -1,
	      "arch table");

	/* Every truncation fails cleanly. */
	for (n = 0; n < len; n++) {
		memcpy(copy, elf, n);
		r = codeobj_parse(copy, n, &ci, why, sizeof(why));
		CHECK(r == ROCMD_ECORRUPT, "truncated to %zu bytes: %d", n, r);
	}
	/* Random corruption: any outcome but a crash. */
	for (i = 0; i < 5000; i++) {
		int k, flips = 1 + (int)(rand_r(&seed) % 4);

		memcpy(copy, elf, len);
		for (k = 0; k < flips; k++)
			copy[rand_r(&seed) % len] ^= (unsigned char)(1 + rand_r(&seed) % 255);
		ok += codeobj_parse(copy, len, &ci, why, sizeof(why)) == 0;
	}
	printf("corrupted copies still parsed: %d of 5000\n", ok);
	free(copy);
	free(elf);
	return check_report();
}
