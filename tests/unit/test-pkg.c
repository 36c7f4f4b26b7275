/*
 * Unit tests of the package store's pure parts: entry name cleaning and
 * symlink resolution, name hints from the real-world archive names, SDK
 * versions and generations, the PE reader (on a DLL built here, importing
 * amdhip64_6.dll with a VERSIONINFO), the ELF reader (on Debian's real
 * librocblas.so.0.1 when tests/fixtures/fetch-files.sh has it), and matching:
 * the shipped pairings, user rules, and never another SDK generation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/error.h"
#include "daemon/pkg/pkg.h"

static void
test_path_clean(void **state)
{
	static const struct {
		const char *in, *out;
	} good[] = {
	    {"library/TensileLibrary_gfx1103.dat", "library/TensileLibrary_gfx1103.dat"},
	    {"./rocblas.dll", "rocblas.dll"},
	    {"a//b/./c", "a/b/c"},
	    {"rocm gfx1103 (HIP 6.2)\\library\\x.co", "rocm gfx1103 (HIP 6.2)/library/x.co"},
	    {"dir/", "dir"},
	    {"..a/b..c", "..a/b..c"},
	    /* Close to Windows' reserved names, but not them. */
	    {"CONSOLE.txt", "CONSOLE.txt"},
	    {"library/nul_file", "library/nul_file"},
	    {"COM10/LPT.dat", "COM10/LPT.dat"},
	    {"x.CON", "x.CON"},
	    {" lead", " lead"},
	    {"a~b.dat", "a~b.dat"},
	    {"TensileLibrary~1.dat", "TensileLibrary~1.dat"},
	};
	static const char *const bad[] = {
	    "",    "/etc/passwd", "\\\\server\\share", "C:\\Windows\\x.dll",
	    "c:x", "../x",        "a/../../x",         "a/..",
	    "..",  "a/\x01b",     "a/b:stream",        ".",
	    "./",  "a/\x7f",
	};
	/* Windows' separator and rules, on every platform, each for its reason. */
	static const struct {
		const char *in, *reason;
	} windows[] = {
	    {"..\\x", "'..' leads outside"},
	    {"a\\..\\..\\x", "'..' leads outside"},
	    {"CON", "device name"},
	    {"con", "device name"},
	    {"library/NUL.txt", "device name"},
	    {"aux.tar.gz", "device name"},
	    {"Com1", "device name"},
	    {"lpt9.dat", "device name"},
	    {"PRN/x", "device name"},
	    {"CONIN$", "device name"},
	    {"conout$.log", "device name"},
	    {"COM\xc2\xb9", "device name"},
	    {"LPT\xc2\xb3.x", "device name"},
	    {"nul .txt", "device name"},
	    {"a/b.", "dot or a space"},
	    {"a/b ", "dot or a space"},
	    {"a./b", "dot or a space"},
	    {"a /b", "dot or a space"},
	    {"a<b", "does not allow"},
	    {"a>b", "does not allow"},
	    {"a|b", "does not allow"},
	    {"a?b", "does not allow"},
	    {"a*b", "does not allow"},
	    {"a\"b", "does not allow"},
	    {"library/TENSIL~1.DAT", "8.3 short name"},
	    {"PROGRA~1/x", "8.3 short name"},
	    {"a~9", "8.3 short name"},
	    {"x.co:Zone.Identifier", "stream"},
	};
	char out[256], why[256];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(
		    rocmd_pkg_path_clean(good[i].in, out, sizeof(out), why, sizeof(why)), 0);
		assert_string_equal(out, good[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(rocmd_pkg_path_clean(bad[i], out, sizeof(out), why, sizeof(why)),
		                 ROCMD_EUNSAFE);
		assert_true(strncmp(why, "entry \"", 7) == 0);
	}
	for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		why[0] = '\0';
		assert_int_equal(
		    rocmd_pkg_path_clean(windows[i].in, out, sizeof(out), why, sizeof(why)),
		    ROCMD_EUNSAFE);
		if (strstr(why, windows[i].reason) == NULL)
			fail_msg("\"%s\": %s (wanted \"%s\")", windows[i].in, why,
			         windows[i].reason);
	}
	/* A name longer than the output refuses instead of truncating. */
	assert_int_equal(rocmd_pkg_path_clean("abcdefghij/klm", out, 8, why, sizeof(why)),
	                 ROCMD_EUNSAFE);
}

static void
test_link_resolve(void **state)
{
	char out[256], why[256];

	assert_int_equal(rocmd_pkg_link_resolve("lib/librocblas.so.0", "librocblas.so.0.1", out,
	                                        sizeof(out), why, sizeof(why)),
	                 0);
	assert_string_equal(out, "lib/librocblas.so.0.1");
	assert_int_equal(
	    rocmd_pkg_link_resolve("a/b/l", "../c/./d", out, sizeof(out), why, sizeof(why)), 0);
	assert_string_equal(out, "a/c/d");
	assert_int_equal(
	    rocmd_pkg_link_resolve("l", "../etc/passwd", out, sizeof(out), why, sizeof(why)),
	    ROCMD_EUNSAFE);
	assert_non_null(strstr(why, "outside"));
	assert_int_equal(
	    rocmd_pkg_link_resolve("a/l", "../../x", out, sizeof(out), why, sizeof(why)),
	    ROCMD_EUNSAFE);
	assert_int_equal(
	    rocmd_pkg_link_resolve("a/l", "/etc/passwd", out, sizeof(out), why, sizeof(why)),
	    ROCMD_EUNSAFE);
	assert_int_equal(rocmd_pkg_link_resolve("a/l", "C:\\x", out, sizeof(out), why, sizeof(why)),
	                 ROCMD_EUNSAFE);
	assert_int_equal(rocmd_pkg_link_resolve("a/l", "..", out, sizeof(out), why, sizeof(why)),
	                 ROCMD_EUNSAFE);
	/* A target is a name in the package: Windows' rules apply to it too. */
	assert_int_equal(
	    rocmd_pkg_link_resolve("a/l", "NUL.txt", out, sizeof(out), why, sizeof(why)),
	    ROCMD_EUNSAFE);
	assert_non_null(strstr(why, "Windows"));
}

static void
test_name_hints(void **state)
{
	static const struct {
		const char *name, *sdk, *version, *archs;
	} cases[] = {
	    {"rocm.gfx1103.AMD.780M.phoenix.V5.0.for.hip.sdk.6.2.4.7z", "6.2.4", "V5.0", "gfx1103"},
	    {"rocm.gfx1150.for.hip.skd.6.2.4.7z", "6.2.4", "", "gfx1150"},
	    {"rocm gfx1103 AMD780M phoenix V3 for hip sdk 5.7.7z", "5.7", "V3", "gfx1103"},
	    {"gfx1103.7z", "", "", "gfx1103"},
	    {"/downloads/rocm.gfx1103.AMD.780M.phoenix.V4.0.for.hip.sdk.6.1.2.zip", "6.1.2", "V4.0",
	     "gfx1103"},
	    {"rocBLAS-gfx90c-gfx1035 V2.0 (HIP 5.7).tar.gz", "5.7", "V2.0", "gfx90c,gfx1035"},
	    {"rocm6.4.2-gfx1103.7z", "6.4.2", "", "gfx1103"},
	    {"library.zip", "", "", ""},
	};
	struct rocmd_pkg_name_hints h;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rocmd_pkg_name_hints(cases[i].name, &h);
		assert_string_equal(h.sdk, cases[i].sdk);
		assert_string_equal(h.version, cases[i].version);
		assert_string_equal(h.archs, cases[i].archs);
	}
}

static void
test_versions(void **state)
{
	struct rocmd_pkg_version a, b;
	char gen[16];

	assert_int_equal(rocmd_pkg_version_parse("6.2.4", &a), 0);
	assert_int_equal(a.n, 3);
	assert_int_equal(rocmd_pkg_version_parse("6.2", &b), 0);
	assert_int_equal(rocmd_pkg_version_cmp(&a, &b, 1), 0);
	assert_int_equal(rocmd_pkg_version_cmp(&a, &b, 0), 1);
	assert_int_equal(rocmd_pkg_version_parse("6.x", &a), ROCMD_EINVAL);
	assert_int_equal(rocmd_pkg_version_parse("", &a), ROCMD_EINVAL);
	assert_int_equal(rocmd_pkg_version_parse("6.2.", &a), ROCMD_EINVAL);
	assert_int_equal(rocmd_sdk_generation("6.2.4", gen, sizeof(gen)), 0);
	assert_string_equal(gen, "6.2");
	assert_int_equal(rocmd_sdk_generation("5.7", gen, sizeof(gen)), 0);
	assert_string_equal(gen, "5.7");
	assert_int_equal(rocmd_sdk_generation("7.1.0", gen, sizeof(gen)), 0);
	assert_string_equal(gen, "7");
}

static void
put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

/* A PE32+ DLL with one section holding an import table (KERNEL32.dll,
 * amdhip64_6.dll) and a resource tree with RT_VERSION. */
static void
write_pe(const char *path, const char *hip_dll)
{
	static uint8_t f[0x1200];
	uint8_t *sec = f + 0x200; /* RVA 0x1000 */
	FILE *out;

	memset(f, 0, sizeof(f));
	f[0] = 'M';
	f[1] = 'Z';
	put32(f + 0x3c, 0x40);
	memcpy(f + 0x40, "PE\0\0", 4);
	put16(f + 0x44, 0x8664); /* machine */
	put16(f + 0x46, 1);      /* sections */
	put16(f + 0x54, 240);    /* optional header size */
	put16(f + 0x56, 0x2022); /* DLL */
	put16(f + 0x58, 0x20b);  /* PE32+ */
	put32(f + 0x58 + 108, 16);
	put32(f + 0x58 + 120, 0x1000); /* import directory */
	put32(f + 0x58 + 124, 60);
	put32(f + 0x58 + 128, 0x1200); /* resource directory */
	put32(f + 0x58 + 132, 0x200);
	memcpy(f + 0x148, ".rdata", 6);
	put32(f + 0x148 + 8, 0x1000);  /* virtual size */
	put32(f + 0x148 + 12, 0x1000); /* RVA */
	put32(f + 0x148 + 16, 0x1000); /* raw size */
	put32(f + 0x148 + 20, 0x200);  /* raw offset */
	put32(sec + 12, 0x1100);       /* import descriptor 0: name */
	put32(sec + 20 + 12, 0x1120);  /* import descriptor 1 */
	memcpy(sec + 0x100, "KERNEL32.dll", 12);
	memcpy(sec + 0x120, hip_dll, strlen(hip_dll));
	/* Resources at RVA 0x1200: type 16 → name 1 → language 0x409 → data. */
	put16(sec + 0x200 + 14, 1);
	put32(sec + 0x200 + 16, 16);
	put32(sec + 0x200 + 20, 0x80000018u);
	put16(sec + 0x218 + 14, 1);
	put32(sec + 0x218 + 16, 1);
	put32(sec + 0x218 + 20, 0x80000030u);
	put16(sec + 0x230 + 14, 1);
	put32(sec + 0x230 + 16, 0x409);
	put32(sec + 0x230 + 20, 0x48);
	put32(sec + 0x248, 0x1300); /* data RVA */
	put32(sec + 0x248 + 4, 0x100);
	put32(sec + 0x300 + 40, 0xFEEF04BDu);
	put32(sec + 0x300 + 44, 0x10000);
	put32(sec + 0x300 + 48, (4u << 16) | 2); /* file version 4.2.0.7 */
	put32(sec + 0x300 + 52, 7);
	put32(sec + 0x300 + 56, (6u << 16) | 2); /* product version 6.2.4.0 */
	put32(sec + 0x300 + 60, 4u << 16);
	out = fopen(path, "wb");
	assert_non_null(out);
	assert_int_equal(fwrite(f, 1, sizeof(f), out), sizeof(f));
	fclose(out);
}

static void
test_pe(void **state)
{
	char path[] = "/tmp/rocmd-test-pe-XXXXXX", why[256];
	struct rocmd_pe_info pe;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	write_pe(path, "amdhip64_6.dll");
	assert_int_equal(rocmd_pe_read(path, &pe, why, sizeof(why)), 0);
	assert_true(pe.is_dll);
	assert_int_equal(pe.machine, 0x8664);
	assert_string_equal(pe.hip_runtime, "amdhip64_6.dll");
	assert_string_equal(pe.file_version, "4.2.0.7");
	assert_string_equal(pe.product_version, "6.2.4.0");
	/* Truncated: refused, no crash. */
	assert_int_equal(truncate(path, 0x150), 0);
	assert_int_equal(rocmd_pe_read(path, &pe, why, sizeof(why)), ROCMD_ECORRUPT);
	unlink(path);
}

static void
test_elf_real(void **state)
{
	const char *dir = getenv("ROCMD_PKG_FILES");
	char path[4096], why[256];
	struct rocmd_elf_info elf;

	if (dir == NULL || dir[0] == '\0') {
		print_message("skip: ROCMD_PKG_FILES not set (tests/fixtures/fetch-files.sh)\n");
		skip();
	}
	snprintf(path, sizeof(path), "%s/usr/lib/x86_64-linux-gnu/librocblas.so.0.1", dir);
	if (access(path, R_OK) != 0) {
		print_message("skip: %s missing\n", path);
		skip();
	}
	assert_int_equal(rocmd_elf_read(path, &elf, why, sizeof(why)), 0);
	assert_string_equal(elf.soname, "librocblas.so.0");
	assert_string_equal(elf.hip_runtime, "libamdhip64.so.5");
	assert_int_equal(elf.machine, 62);
}

/* Identification over staged files: a rocblas.dll importing the HIP runtime
 * named HIP_DLL, and a lazy index for gfx1103. */
static cJSON *
identify(const char *hip_dll, const char *name, const char *sdk, int *rc, char *why, size_t whylen)
{
	char dll[] = "/tmp/rocmd-test-dll-XXXXXX", idx[] = "/tmp/rocmd-test-idx-XXXXXX";
	struct rocmd_pkg_entry e[2];
	struct rocmd_pkg_contents c;
	cJSON *out = NULL;
	int fd;

	assert_true((fd = mkstemp(dll)) >= 0);
	close(fd);
	assert_true((fd = mkstemp(idx)) >= 0);
	assert_int_equal(write(fd, "index", 5), 5);
	close(fd);
	write_pe(dll, hip_dll);
	memset(e, 0, sizeof(e));
	memset(&c, 0, sizeof(c));
	e[0].path = "library/TensileLibrary_lazy_gfx1103.dat";
	e[0].kind = ROCMD_PKG_FILE;
	e[0].staged = idx;
	e[0].sha256[0] = 1;
	e[1].path = "rocblas.dll";
	e[1].kind = ROCMD_PKG_FILE;
	e[1].staged = dll;
	e[1].sha256[0] = 2;
	c.entries = e;
	c.count = 2;
	*rc = rocmd_pkg_identify(&c, name, sdk, NULL, NULL, &out, why, whylen);
	unlink(dll);
	unlink(idx);
	return out;
}

static const char *
jget(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);

	return cJSON_IsString(v) ? v->valuestring : "(null)";
}

static void
test_identify_pe(void **state)
{
	char why[512];
	cJSON *id;
	int rc;

	/* The name and the DLL's imports agree. */
	id = identify("amdhip64_6.dll", "rocm.gfx1103.AMD.780M.phoenix.V5.0.for.hip.sdk.6.2.4.7z",
	              NULL, &rc, why, sizeof(why));
	assert_int_equal(rc, 0);
	assert_string_equal(jget(id, "platform"), "windows");
	assert_string_equal(jget(id, "sdk"), "6.2.4");
	assert_string_equal(jget(id, "sdk_source"), "name");
	assert_string_equal(jget(id, "version_hint"), "V5.0");
	assert_string_equal(jget(cJSON_GetObjectItem(id, "binary"), "hip_runtime"),
	                    "amdhip64_6.dll");
	assert_string_equal(jget(cJSON_GetObjectItem(id, "binary"), "file_version"), "4.2.0.7");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(id, "archs"), 0)->valuestring,
	                    "gfx1103");
	cJSON_Delete(id);
	/* The name says 6.2.4 but the DLL links the 5.x runtime: the content wins. */
	id = identify("amdhip64.dll", "rocm.gfx1103.for.hip.skd.6.2.4.7z", NULL, &rc, why,
	              sizeof(why));
	assert_int_equal(rc, 0);
	assert_string_equal(jget(id, "sdk"), "5");
	assert_string_equal(jget(id, "sdk_source"), "binary");
	{
		char *w = cJSON_PrintUnformatted(cJSON_GetObjectItem(id, "warnings"));
		assert_non_null(strstr(w, "the content wins"));
		free(w);
	}
	cJSON_Delete(id);
	/* No name hint: the 7.x runtime is a whole generation. */
	id = identify("amdhip64_7.dll", "gfx1103.7z", NULL, &rc, why, sizeof(why));
	assert_int_equal(rc, 0);
	assert_string_equal(jget(id, "sdk"), "7");
	assert_string_equal(jget(id, "sdk_generation"), "7");
	cJSON_Delete(id);
	/* An explicit --sdk the DLL contradicts is refused; one it agrees with wins. */
	id = identify("amdhip64.dll", "gfx1103.7z", "6.2", &rc, why, sizeof(why));
	assert_int_equal(rc, ROCMD_EINVAL);
	assert_null(id);
	assert_non_null(strstr(why, "amdhip64.dll"));
	id = identify("amdhip64.dll", "gfx1103.7z", "5.7", &rc, why, sizeof(why));
	assert_int_equal(rc, 0);
	assert_string_equal(jget(id, "sdk"), "5.7");
	assert_string_equal(jget(id, "sdk_source"), "explicit");
	cJSON_Delete(id);
}

/* The ELF route on Debian's real librocblas.so.0.1 (read in place). */
static void
test_identify_elf(void **state)
{
	const char *dir = getenv("ROCMD_PKG_FILES");
	char so[4096], why[512];
	struct rocmd_pkg_entry e = {0};
	struct rocmd_pkg_contents c = {0};
	cJSON *id = NULL;

	snprintf(so, sizeof(so), "%s/usr/lib/x86_64-linux-gnu/librocblas.so.0.1",
	         dir != NULL ? dir : "");
	if (dir == NULL || access(so, R_OK) != 0) {
		print_message("skip: librocblas.so.0.1 missing (tests/fixtures/fetch-files.sh)\n");
		skip();
	}
	e.path = "librocblas.so.0";
	e.kind = ROCMD_PKG_FILE;
	e.staged = so;
	c.entries = &e;
	c.count = 1;
	/* Its HIP 5 runtime contradicts an explicit 6.2.4, and overrules a name. */
	assert_int_equal(rocmd_pkg_identify(&c, "x", "6.2.4", NULL, NULL, &id, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_non_null(strstr(why, "libamdhip64.so.5"));
	assert_int_equal(rocmd_pkg_identify(&c, "rocblas for hip sdk 6.2.4.tar.gz", NULL, NULL,
	                                    NULL, &id, why, sizeof(why)),
	                 0);
	assert_string_equal(jget(id, "platform"), "linux");
	assert_string_equal(jget(id, "sdk"), "5");
	assert_string_equal(jget(id, "sdk_source"), "binary");
	assert_string_equal(jget(cJSON_GetObjectItem(id, "binary"), "soname"), "librocblas.so.0");
	cJSON_Delete(id);
}

/* ---- identification of a large package ---- */

#define MANY 100000

static int
cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct rocmd_pkg_entry *)a)->path,
	              ((const struct rocmd_pkg_entry *)b)->path);
}

/* MANY entries, sorted by path as the reader leaves them: 99,980 code objects
 * for gfx1030 and gfx1100 and their two lazy indexes in library/ (one of them
 * a hardlink copy: no staged file), a smaller folder of Tensile files beside
 * it, non-library files, and a TensileManifest.txt (a real file, staged)
 * naming every code object plus 7 files the package lacks. */
static struct rocmd_pkg_entry *
many_entries(size_t *n, char *manifest, size_t mlen)
{
	struct rocmd_pkg_entry *e = calloc(MANY, sizeof(*e));
	char name[128];
	size_t k = 0;
	FILE *m;
	int fd;

	snprintf(manifest, mlen, "/tmp/rocmd-test-manifest-XXXXXX");
	assert_true((fd = mkstemp(manifest)) >= 0);
	assert_non_null(m = fdopen(fd, "w"));
	for (int i = 0; i < 99980; i++) {
		snprintf(name, sizeof(name),
		         "library/TensileLibrary_Type_HH_Contraction_%05d_%s.co", i,
		         i % 2 ? "gfx1100" : "gfx1030");
		fprintf(m, "/build/rocblas/%s\n", name);
		e[k].path = strdup(name);
		e[k].kind = ROCMD_PKG_FILE;
		e[k].sha256[0] = (uint8_t)(i >> 8);
		e[k].sha256[1] = (uint8_t)i;
		k++;
	}
	for (int i = 0; i < 7; i++)
		fprintf(m, "library\\Kernels.so-000-gfx90a-%d.hsaco\n", i);
	fclose(m);
	e[k++] = (struct rocmd_pkg_entry){.path = strdup("library/TensileLibrary_lazy_gfx1030.dat"),
	                                  .kind = ROCMD_PKG_FILE};
	e[k++] = (struct rocmd_pkg_entry){.path = strdup("library/TensileLibrary_lazy_gfx1100.dat"),
	                                  .kind = ROCMD_PKG_FILE};
	e[k++] = (struct rocmd_pkg_entry){.path = strdup("library/TensileManifest.txt"),
	                                  .kind = ROCMD_PKG_FILE,
	                                  .sha256 = {0, 0, 0xff},
	                                  .staged = manifest};
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "extra/TensileLibrary_gfx906_%d.co", i);
		e[k++] = (struct rocmd_pkg_entry){.path = strdup(name), .kind = ROCMD_PKG_FILE};
	}
	while (k < MANY) {
		snprintf(name, sizeof(name), "docs/note-%05zu.txt", k);
		e[k++] = (struct rocmd_pkg_entry){.path = strdup(name), .kind = ROCMD_PKG_FILE};
	}
	qsort(e, k, sizeof(*e), cmp_path);
	*n = k;
	return e;
}

/* A cancel flag that is set after *CTX polls. */
static int
cancel_after(void *ctx)
{
	int *left = ctx;

	return (*left)-- <= 0;
}

/* Identification of 100,000 entries gives the right answer, in time (it was
 * quadratic: counting each folder's Tensile files and matching the manifest's
 * lines each went over every entry again). */
static void
test_identify_many(void **state)
{
	struct rocmd_pkg_contents c = {0};
	char manifest[64], why[256] = "";
	const cJSON *archs, *man;
	cJSON *id = NULL;
	size_t n;

	c.entries = many_entries(&n, manifest, sizeof(manifest));
	c.count = n;
	assert_int_equal(
	    rocmd_pkg_identify(&c, "many.zip", "6.2.4", NULL, NULL, &id, why, sizeof(why)), 0);
	assert_string_equal(jget(id, "library"), "library");
	assert_int_equal((int)cJSON_GetObjectItem(id, "library_files")->valuedouble, 99982);
	archs = cJSON_GetObjectItem(id, "archs");
	assert_int_equal(cJSON_GetArraySize(archs), 2);
	assert_string_equal(cJSON_GetArrayItem(archs, 0)->valuestring, "gfx1030");
	assert_string_equal(cJSON_GetArrayItem(archs, 1)->valuestring, "gfx1100");
	man = cJSON_GetObjectItem(id, "tensile_manifest");
	assert_int_equal((int)cJSON_GetObjectItem(man, "entries")->valuedouble, 99987);
	assert_int_equal((int)cJSON_GetObjectItem(man, "missing")->valuedouble, 7);
	cJSON_Delete(id);
	unlink(manifest);
	for (size_t i = 0; i < n; i++)
		free(c.entries[i].path);
	free(c.entries);
}

/* A package carrying hipBLASLt's folder beside rocBLAS's: rocBLAS's is the
 * library even when hipBLASLt's holds more Tensile files, and hipBLASLt's is
 * named and said to be left out. */
static void
test_identify_hipblaslt(void **state)
{
	static const char *const paths[] = {
	    "rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1103.dat",
	    "rocm/lib/hipblaslt/library/TensileLibrary_lazy_gfx1103.dat",
	    "rocm/lib/hipblaslt/library/"
	    "TensileLibrary_HH_HH_HA_Bias_SAV_UA_Type_HH_HPA_Contraction_l_Alik_Bljk_Cijk_Dijk_"
	    "gfx1103.dat",
	    "rocm/lib/hipblaslt/library/TensileLibrary_lazy_gfx1100.dat"};
	struct rocmd_pkg_entry e[4];
	struct rocmd_pkg_contents c = {0};
	char idx[] = "/tmp/rocmd-test-idx-XXXXXX", why[256] = "";
	const cJSON *w;
	cJSON *id = NULL;
	int fd, said = 0;

	assert_true((fd = mkstemp(idx)) >= 0);
	assert_int_equal(write(fd, "index", 5), 5);
	close(fd);
	memset(e, 0, sizeof(e));
	for (int i = 0; i < 4; i++) {
		e[i].path = (char *)paths[i];
		e[i].kind = ROCMD_PKG_FILE;
		e[i].staged = idx;
		e[i].sha256[0] = (uint8_t)(i + 1);
	}
	c.entries = e;
	c.count = 4;
	assert_int_equal(
	    rocmd_pkg_identify(&c, "lt.zip", "6.4.1", NULL, NULL, &id, why, sizeof(why)), 0);
	assert_string_equal(jget(id, "library"), "rocm/lib/rocblas/library");
	assert_string_equal(jget(id, "hipblaslt_library"), "rocm/lib/hipblaslt/library");
	cJSON_ArrayForEach(w, cJSON_GetObjectItem(id, "warnings")) said |=
	    strstr(w->valuestring, "hipBLASLt's library folder rocm/lib/hipblaslt/library") != NULL;
	assert_true(said);
	cJSON_Delete(id);
	unlink(idx);
}

/* A package of hipBLASLt's folder alone, in TheRock's per-arch subfolders:
 * identified (no rocBLAS library, carries_rocblas false), its archs read from
 * hipBLASLt's files in the <gfx> subfolders (an index without code objects
 * serves nothing; a subfolder that is no arch's is not read). */
static void
test_identify_hipblaslt_only(void **state)
{
	static const char *const paths[] = {
	    "lib/hipblaslt/library/extra/TensileLibrary_lazy_gfx90a.dat",
	    "lib/hipblaslt/library/gfx1100/TensileLibrary_lazy_gfx1100.dat",
	    "lib/hipblaslt/library/gfx1103/Kernels.so-000-gfx1103.hsaco",
	    "lib/hipblaslt/library/gfx1103/TensileLibrary_lazy_gfx1103.dat"};
	struct rocmd_pkg_entry e[4];
	struct rocmd_pkg_contents c = {0};
	char why[256] = "";
	const cJSON *w, *archs;
	cJSON *id = NULL;
	int said = 0;

	(void)state;
	memset(e, 0, sizeof(e));
	for (int i = 0; i < 4; i++) {
		e[i].path = (char *)paths[i];
		e[i].kind = ROCMD_PKG_FILE;
		e[i].sha256[0] = (uint8_t)(i + 1);
	}
	c.entries = e;
	c.count = 4;
	assert_int_equal(
	    rocmd_pkg_identify(&c, "lt-only.zip", "7.1", NULL, NULL, &id, why, sizeof(why)), 0);
	assert_string_equal(jget(id, "library"), "");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(id, "carries_rocblas")));
	assert_string_equal(jget(id, "hipblaslt_library"), "lib/hipblaslt/library");
	assert_int_equal((int)cJSON_GetObjectItem(id, "hipblaslt_files")->valuedouble, 3);
	archs = cJSON_GetObjectItem(id, "archs");
	assert_int_equal(cJSON_GetArraySize(archs), 1);
	assert_string_equal(cJSON_GetArrayItem(archs, 0)->valuestring, "gfx1103");
	cJSON_ArrayForEach(w, cJSON_GetObjectItem(id, "warnings")) said |=
	    strstr(w->valuestring, "carries only hipBLASLt's library folder") != NULL;
	assert_true(said);
	cJSON_Delete(id);
	/* Nothing of either: refused. */
	c.count = 0;
	assert_int_equal(
	    rocmd_pkg_identify(&c, "empty.zip", "7.1", NULL, NULL, &id, why, sizeof(why)),
	    ROCMD_EINVAL);
	assert_non_null(strstr(why, "not a rocBLAS or hipBLASLt library package"));
}

/* The job's cancel flag stops identification, whether set from the start or
 * meanwhile. */
static void
test_identify_many_cancel(void **state)
{
	struct rocmd_pkg_contents c = {0};
	char manifest[64], why[256] = "";
	cJSON *id = NULL;
	size_t n;

	c.entries = many_entries(&n, manifest, sizeof(manifest));
	c.count = n;
	for (int after = 0; after <= 20; after += 20) {
		int polls = after;
		id = NULL;
		assert_int_equal(rocmd_pkg_identify(&c, "many.zip", NULL, cancel_after, &polls, &id,
		                                    why, sizeof(why)),
		                 ROCMD_ECANCELED);
		assert_null(id);
		assert_non_null(strstr(why, "canceled"));
	}
	unlink(manifest);
	for (size_t i = 0; i < n; i++)
		free(c.entries[i].path);
	free(c.entries);
}

/* ---- matching ---- */

static const struct rocmd_pkg_candidate cands[] = {
    {1, "rocm gfx1103 AMD780M phoenix V3 for hip sdk 5.7.7z", "windows", "5.7", "V3", "gfx1103",
     100, 0},
    {2, "rocm.gfx1103.V2.0.for.hip.sdk.5.7.7z", "windows", "5.7", "V2.0", "gfx1103", 200, 0},
    {3, "rocm.gfx1103.AMD.780M.phoenix.V4.0.for.hip.sdk.6.1.2.7z", "windows", "6.1.2", "V4.0",
     "gfx1103", 300, 0},
    {4, "rocm.gfx1103.AMD.780M.phoenix.V5.0.for.hip.sdk.6.2.4.7z", "windows", "6.2.4", "V5.0",
     "gfx1103", 400, 0},
    {5, "rocm.gfx1150.for.hip.skd.6.2.4.7z", "windows", "6.2.4", NULL, "gfx1150", 500, 0},
    {6, "gfx1103.7z", "windows", "6", NULL, "gfx1103", 600, 0},
    {7, "rocm-6.4.2-gfx1103.7z", "windows", "6.4.2", NULL, "gfx1103", 700, 0},
    {8, "rocm-7.0-gfx1103.7z", "windows", "7.0", NULL, "gfx1103", 800, 0},
    {9, "linux-6.2-gfx1103.tar.gz", "linux", "6.2", "V5.0", "gfx1103", 900, 0},
};
#define NCANDS (sizeof(cands) / sizeof(cands[0]))

static int64_t
match(const char *sdk, const char *platform, const char *arch, const char *rules, cJSON **explain)
{
	char why[256];
	int chosen = -1;

	assert_int_equal(rocmd_pkg_match(sdk, platform, arch, cands, NCANDS, rules, &chosen,
	                                 explain, why, sizeof(why)),
	                 0);
	return chosen >= 0 ? cands[chosen].id : 0;
}

/* A package of hipBLASLt's folder alone ranks after one carrying rocBLAS,
 * even imported later; alone it is chosen, and says what it is. */
static void
test_match_hipblaslt_only(void **state)
{
	const struct rocmd_pkg_candidate c[] = {
	    {1, "rocm-6.4-gfx1030.7z", "any", "6.4", NULL, "gfx1030", 100, 0},
	    {2, "hipblaslt-6.4-gfx1030.7z", "any", "6.4", NULL, "gfx1030", 200, 1},
	};
	char why[256];
	int chosen = -1;
	cJSON *ex = NULL;
	char *text;

	(void)state;
	assert_int_equal(
	    rocmd_pkg_match("6.4.1", "linux", "gfx1030", c, 2, NULL, &chosen, NULL, why, sizeof(why)),
	    0);
	assert_int_equal(chosen, 0);
	assert_int_equal(rocmd_pkg_match("6.4.1", "linux", "gfx1030", c + 1, 1, NULL, &chosen, &ex,
	                                 why, sizeof(why)),
	                 0);
	assert_int_equal(chosen, 0);
	text = cJSON_PrintUnformatted(ex);
	assert_non_null(strstr(text, "hipBLASLt's library folder only: rocBLAS stays as it is"));
	cJSON_free(text);
	cJSON_Delete(ex);
}

static const char *
verdict(cJSON *ex, int64_t id)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(ex, "candidates"))
	{
		if ((int64_t)cJSON_GetObjectItem(c, "id")->valuedouble == id)
			return cJSON_GetObjectItem(c, "verdict")->valuestring;
	}
	return "absent";
}

static void
test_match_defaults(void **state)
{
	cJSON *ex = NULL;

	/* The known pairings. */
	assert_int_equal(match("5.7.0", "windows", "gfx1103", NULL, &ex), 1); /* V3 before V2.0 */
	assert_string_equal(verdict(ex, 2), "eligible");
	assert_string_equal(verdict(ex, 3), "refused");
	cJSON_Delete(ex);
	assert_int_equal(match("6.1.2", "windows", "gfx1103", NULL, NULL), 3);
	assert_int_equal(match("6.2.4", "windows", "gfx1103", NULL, &ex), 4);
	/* A Linux build is not for Windows; a 6.x-only package is too vague. */
	assert_string_equal(verdict(ex, 9), "refused");
	assert_string_equal(verdict(ex, 6), "refused");
	assert_string_equal(verdict(ex, 5), "refused"); /* no gfx1103 */
	cJSON_Delete(ex);
	assert_int_equal(match("6.4.2", "windows", "gfx1103", NULL, NULL), 7);
	assert_int_equal(match("7.1.1", "windows", "gfx1103", NULL, NULL), 8);
	assert_int_equal(match("6.2.4", "windows", "gfx1150", NULL, NULL), 5);
	assert_int_equal(match("6.2.4", "linux", "gfx1103", NULL, NULL), 9);
	/* Never another generation, even when nothing else fits. */
	assert_int_equal(match("6.3.0", "windows", "gfx1103", NULL, &ex), 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(ex, "chosen")));
	cJSON_Delete(ex);
	assert_int_equal(match("5.5.1", "windows", "gfx1103", NULL, NULL), 0);
	assert_int_equal(match("6.2.4", "windows", "gfx1036", NULL, NULL), 0);
}

static void
test_match_rules(void **state)
{
	char why[256];
	cJSON *ex = NULL;
	const cJSON *rule;

	/* The user prefers V2.0 on 5.7, or refuses V3 outright. */
	assert_int_equal(match("5.7.1", "windows", "gfx1103", "5.7=V2.0,V3", NULL), 2);
	assert_int_equal(match("5.7.1", "windows", "gfx1103", "5.7/gfx1103=!V3", &ex), 2);
	assert_string_equal(verdict(ex, 1), "refused");
	rule = cJSON_GetObjectItem(ex, "rule");
	assert_string_equal(cJSON_GetObjectItem(rule, "origin")->valuestring, "config");
	cJSON_Delete(ex);
	/* A rule for another arch or platform does not apply. */
	assert_int_equal(
	    match("5.7.1", "windows", "gfx1103", "5.7/gfx1150=!V3; 5.7@linux=!V3", NULL), 1);
	/* A pin wins over the preference list, but not over the generation. */
	assert_int_equal(match("5.7", "windows", "gfx1103", "*=#2", NULL), 2);
	assert_int_equal(match("6.2.4", "windows", "gfx1103", "*=#2", NULL), 4);
	assert_int_equal(match("6.2.4", "windows", "gfx1103", "6.1-6.3=V4.0,V5.0", NULL), 4);
	/* Bad rules and inputs are refused with a reason. */
	assert_int_equal(rocmd_pkg_rules_check("6.2=V5.0; 5.7@windows/gfx1103=V3,!V2.0; *=#12", why,
	                                       sizeof(why)),
	                 0);
	assert_int_equal(rocmd_pkg_rules_check("6.2", why, sizeof(why)), ROCMD_EINVAL);
	assert_int_equal(rocmd_pkg_rules_check("6.2=V5.0,latest", why, sizeof(why)), ROCMD_EINVAL);
	assert_non_null(strstr(why, "latest"));
	assert_int_equal(rocmd_pkg_rules_check("6.3-6.1=V5.0", why, sizeof(why)), ROCMD_EINVAL);
	assert_int_equal(rocmd_pkg_rules_check("6.2@macos=V5.0", why, sizeof(why)), ROCMD_EINVAL);
	{
		int chosen;
		assert_int_equal(rocmd_pkg_match("six", "windows", "gfx1103", cands, NCANDS, NULL,
		                                 &chosen, NULL, why, sizeof(why)),
		                 ROCMD_EINVAL);
		assert_int_equal(rocmd_pkg_match("6.2.4", "beos", "gfx1103", cands, NCANDS, NULL,
		                                 &chosen, NULL, why, sizeof(why)),
		                 ROCMD_EINVAL);
		assert_int_equal(rocmd_pkg_match("6.2.4", "windows", "sm_90", cands, NCANDS, NULL,
		                                 &chosen, NULL, why, sizeof(why)),
		                 ROCMD_EINVAL);
		assert_int_equal(rocmd_pkg_match("6.2.4", "windows", "gfx1103", NULL, 0, NULL,
		                                 &chosen, NULL, why, sizeof(why)),
		                 0);
		assert_int_equal(chosen, -1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_clean),
	    cmocka_unit_test(test_link_resolve),
	    cmocka_unit_test(test_name_hints),
	    cmocka_unit_test(test_versions),
	    cmocka_unit_test(test_pe),
	    cmocka_unit_test(test_identify_pe),
	    cmocka_unit_test(test_elf_real),
	    cmocka_unit_test(test_match_defaults),
	    cmocka_unit_test(test_match_rules),
	    cmocka_unit_test(test_identify_elf),
	    cmocka_unit_test(test_identify_many),
	    cmocka_unit_test(test_identify_hipblaslt),
	    cmocka_unit_test(test_identify_hipblaslt_only),
	    cmocka_unit_test(test_match_hipblaslt_only),
	    cmocka_unit_test(test_identify_many_cancel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
