/*
 * rocmd-codeobj: checks AMD GPU code objects and prints each kernel's
 * resources. With --expect, every file must be an AMDGPU ELF (e_machine 0xe0)
 * whose e_flags name that arch; with --expect-from-name, the arch is the
 * "gfxNNNN" word in the file name (build-codeobjects.sh names them so).
 *
 *   rocmd-codeobj [--expect gfx1103 | --expect-from-name] FILE...
 *
 * Exit status 0 when every file passes, 1 otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/amdgpu/codeobj.h"

static int
arch_in_name(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/'), *g;
	size_t n = 0;

	base = base != NULL ? base + 1 : path;
	g = strstr(base, "gfx");
	if (g == NULL)
		return -1;
	while (g[n] != '\0' && g[n] != '-' && g[n] != '_' && g[n] != '.' && n + 1 < len) {
		out[n] = g[n];
		n++;
	}
	out[n] = '\0';
	return 0;
}

int
main(int argc, char **argv)
{
	const char *expect = NULL;
	int from_name = 0, failed = 0, i = 1, k;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--expect") && i + 1 < argc)
			expect = argv[++i];
		else if (!strcmp(argv[i], "--expect-from-name"))
			from_name = 1;
		else {
			fprintf(
			    stderr,
			    "usage: rocmd-codeobj [--expect gfxN | --expect-from-name] FILE...\n");
			return 2;
		}
	}
	if (i == argc) {
		fprintf(stderr,
		        "usage: rocmd-codeobj [--expect gfxN | --expect-from-name] FILE...\n");
		return 2;
	}
	for (; i < argc; i++) {
		struct codeobj_info ci;
		char why[256] = "", want[16] = "";
		int r = codeobj_parse_file(argv[i], &ci, why, sizeof(why));
		int mach;

		if (expect != NULL)
			snprintf(want, sizeof(want), "%s", expect);
		else if (from_name && arch_in_name(argv[i], want, sizeof(want)) < 0) {
			printf("FAIL %s: no gfx name in the file name\n", argv[i]);
			failed++;
			continue;
		}
		if (r < 0) {
			printf("FAIL %s: %s\n", argv[i], why);
			failed++;
			continue;
		}
		mach = want[0] != '\0' ? codeobj_arch_mach(want) : -1;
		if (want[0] != '\0' && (mach < 0 || (unsigned)mach != ci.mach)) {
			printf(
			    "FAIL %s: e_flags 0x%x names %s (mach 0x%02x), expected %s (0x%02x)\n",
			    argv[i], ci.e_flags, ci.arch[0] ? ci.arch : "?", ci.mach, want,
			    mach < 0 ? 0 : mach);
			failed++;
			continue;
		}
		if (ci.nkernels == 0) {
			printf("FAIL %s: no kernels in the metadata\n", argv[i]);
			failed++;
			continue;
		}
		printf("ok   %s: e_machine 0x%x, e_flags 0x%x (%s), %s\n", argv[i], ci.e_machine,
		       ci.e_flags, ci.arch, ci.target);
		for (k = 0; k < ci.nkernels; k++) {
			const struct codeobj_kernel *kk = &ci.k[k];

			printf(
			    "       %-16s vgpr %3d  sgpr %3d  lds %6lld  scratch %4lld  wave%d\n",
			    kk->name, kk->vgpr_count, kk->sgpr_count,
			    (long long)kk->group_segment_fixed_size,
			    (long long)kk->private_segment_fixed_size, kk->wavefront_size);
			if (kk->vgpr_count <= 0 || kk->wavefront_size <= 0 ||
			    kk->group_segment_fixed_size < 0) {
				printf("FAIL %s: kernel %s lacks resource fields\n", argv[i],
				       kk->name);
				failed++;
			}
		}
	}
	return failed ? 1 : 0;
}
