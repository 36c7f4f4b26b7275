/*
 * What a library package is, told from its content. The rocBLAS binary is
 * read as a PE file (rocblas.dll: VERSIONINFO and the HIP runtime DLL it
 * imports) or an ELF shared object (librocblas.so: DT_SONAME and the
 * libamdhip64 it needs); archs come from the library folder's file names
 * (TensileLibrary_*_<gfx>.*, Kernels.so-000-<gfx>.hsaco), a single
 * TensileLibrary.dat's MessagePack and the e_flags of its AMD code objects
 * (the shared readers of rocblas-library.h and common/amdgpu-elf.h). The SDK
 * generation comes from an explicit --sdk, else from the name (community
 * archives name it, with typos), and is checked
 * against the HIP runtime the binary links: content wins over the name, and
 * an explicit --sdk that contradicts the binary is refused. The readers take
 * untrusted files: every offset is checked against the file's size.
 */
#include "pkg.h"
#include "pkg-bytes.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/amdgpu-elf.h"
#include "common/error.h"
#include "common/fs.h"
#include "daemon/sdk/rocblas-library.h"

/* ---- PE (rocblas.dll) ---- */

struct rfile {
	int fd;
	uint64_t size;
};

static int
rread(const struct rfile *f, uint64_t off, void *buf, size_t len)
{
	size_t got = 0;

	if (off > f->size || len > f->size - off)
		return ROCMD_ECORRUPT;
	return rocmd_fs_pread(f->fd, buf, len, off, &got) == 0 && got == len ? 0 : ROCMD_ECORRUPT;
}

struct pe_section {
	uint32_t va, vsize, raw_off, raw_size;
};

static int
pe_rva(const struct pe_section *sec, int nsec, uint32_t rva, uint64_t *off)
{
	for (int i = 0; i < nsec; i++) {
		uint32_t span = sec[i].vsize > sec[i].raw_size ? sec[i].vsize : sec[i].raw_size;
		if (rva >= sec[i].va && rva - sec[i].va < span &&
		    rva - sec[i].va < sec[i].raw_size) {
			*off = (uint64_t)sec[i].raw_off + (rva - sec[i].va);
			return 0;
		}
	}
	return ROCMD_ECORRUPT;
}

static void
pe_cstring(const struct rfile *f, uint64_t off, char *out, size_t outlen)
{
	size_t n = 0;
	uint8_t c;

	out[0] = '\0';
	while (n + 1 < outlen && rread(f, off + n, &c, 1) == 0 && c != 0 && c >= 0x20 && c < 0x7f)
		out[n++] = (char)c;
	out[n] = '\0';
}

static int
open_rfile(const char *path, struct rfile *f)
{
	int regular = 0, rc;

	f->fd = rocmd_fs_open(path, O_RDONLY, 0);
	if (f->fd < 0)
		return f->fd;
	if ((rc = rocmd_fs_os_fstat(f->fd, &f->size, &regular)) < 0) {
		rocmd_fs_close(f->fd);
		return rc;
	}
	return 0;
}

/* Reads the line at *OFF of F into LINE (cut at LEN - 1 bytes, the rest of
 * the line skipped), as fgets would; 0 at the end of the file. */
static int
read_line(const struct rfile *f, uint64_t *off, char *line, size_t len)
{
	size_t got = 0, n = 0;
	char *nl;

	if (*off >= f->size || len < 2)
		return 0;
	for (;;) {
		if (rocmd_fs_pread(f->fd, line + n, len - 1 - n, *off + n, &got) < 0 || got == 0)
			break;
		line[n + got] = '\0';
		if ((nl = memchr(line + n, '\n', got)) != NULL) {
			n = (size_t)(nl - line) + 1;
			*off += n;
			line[n] = '\0';
			return 1;
		}
		n += got;
		if (n == len - 1) {
			/* Over-long: skip to the end of the line. */
			char c;
			*off += n;
			while (rocmd_fs_pread(f->fd, &c, 1, *off, &got) == 0 && got == 1) {
				(*off)++;
				if (c == '\n')
					break;
			}
			return 1;
		}
	}
	line[n] = '\0';
	*off += n;
	return n > 0;
}

/* Finds RT_VERSION in the resource tree and reads VS_FIXEDFILEINFO. */
static void
pe_version(const struct rfile *f, const struct pe_section *sec, int nsec, uint32_t res_rva,
           struct rocmd_pe_info *out)
{
	uint64_t base, off;
	uint32_t dir = 0;
	uint8_t hdr[16], ent[8], data[16];

	if (pe_rva(sec, nsec, res_rva, &base) < 0)
		return;
	/* Three levels: type (16 = RT_VERSION), name, language: take the first of each. */
	for (int level = 0; level < 3; level++) {
		int n, found = 0;
		if (rread(f, base + dir, hdr, sizeof(hdr)) < 0)
			return;
		n = le16(hdr + 12) + le16(hdr + 14);
		for (int i = 0; i < n && i < 4096; i++) {
			uint32_t id, to;
			if (rread(f, base + dir + 16 + (uint64_t)i * 8, ent, 8) < 0)
				return;
			id = le32(ent);
			to = le32(ent + 4);
			if (level == 0 && id != 16)
				continue;
			if (level < 2 && !(to & 0x80000000u))
				return;
			if (level == 2 && (to & 0x80000000u))
				return;
			dir = to & 0x7fffffffu;
			found = 1;
			break;
		}
		if (!found)
			return;
	}
	if (rread(f, base + dir, data, sizeof(data)) < 0 || pe_rva(sec, nsec, le32(data), &off) < 0)
		return;
	{
		uint32_t size = le32(data + 4);
		uint8_t buf[1024];
		size_t n = size < sizeof(buf) ? size : sizeof(buf);
		if (rread(f, off, buf, n) < 0)
			return;
		for (size_t i = 0; i + 52 <= n; i += 4) {
			if (le32(buf + i) != 0xFEEF04BDu)
				continue;
			snprintf(out->file_version, sizeof(out->file_version), "%u.%u.%u.%u",
			         le32(buf + i + 8) >> 16, le32(buf + i + 8) & 0xffff,
			         le32(buf + i + 12) >> 16, le32(buf + i + 12) & 0xffff);
			snprintf(out->product_version, sizeof(out->product_version), "%u.%u.%u.%u",
			         le32(buf + i + 16) >> 16, le32(buf + i + 16) & 0xffff,
			         le32(buf + i + 20) >> 16, le32(buf + i + 20) & 0xffff);
			return;
		}
	}
}

int
rocmd_pe_read(const char *path, struct rocmd_pe_info *out, char *why, size_t whylen)
{
	struct rfile f;
	struct pe_section sec[96];
	uint8_t dos[64], coff[24], opt[240];
	uint32_t pe, imp_rva = 0, res_rva = 0, ndirs;
	uint16_t nsec, optsize, magic;
	uint64_t secoff, dirs;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = open_rfile(path, &f)) < 0) {
		snprintf(why, whylen, "cannot open %s: %s", path, rocmd_strerror(rc));
		return rc;
	}
	rc = ROCMD_ECORRUPT;
	if (rread(&f, 0, dos, sizeof(dos)) < 0 || dos[0] != 'M' || dos[1] != 'Z')
		goto bad;
	pe = le32(dos + 0x3c);
	if (rread(&f, pe, coff, sizeof(coff)) < 0 || memcmp(coff, "PE\0\0", 4) != 0)
		goto bad;
	out->machine = le16(coff + 4);
	nsec = le16(coff + 6);
	optsize = le16(coff + 20);
	out->is_dll = (le16(coff + 22) & 0x2000) != 0;
	if (nsec > 96 || optsize < 96 || optsize > sizeof(opt) ||
	    rread(&f, (uint64_t)pe + 24, opt, optsize) < 0)
		goto bad;
	magic = le16(opt);
	if (magic == 0x20b) {
		ndirs = optsize >= 112 ? le32(opt + 108) : 0;
		dirs = 112;
	} else if (magic == 0x10b) {
		ndirs = le32(opt + 92);
		dirs = 96;
	} else {
		goto bad;
	}
	if (ndirs > 1 && dirs + 16 <= optsize)
		imp_rva = le32(opt + dirs + 8);
	if (ndirs > 2 && dirs + 24 <= optsize)
		res_rva = le32(opt + dirs + 16);
	secoff = (uint64_t)pe + 24 + optsize;
	for (int i = 0; i < nsec; i++) {
		uint8_t s[40];
		if (rread(&f, secoff + (uint64_t)i * 40, s, sizeof(s)) < 0)
			goto bad;
		sec[i].vsize = le32(s + 8);
		sec[i].va = le32(s + 12);
		sec[i].raw_size = le32(s + 16);
		sec[i].raw_off = le32(s + 20);
	}
	if (imp_rva != 0) {
		uint64_t off;
		if (pe_rva(sec, nsec, imp_rva, &off) == 0) {
			for (int i = 0; i < 512; i++) {
				uint8_t d[20];
				uint64_t noff;
				char name[64];
				if (rread(&f, off + (uint64_t)i * 20, d, sizeof(d)) < 0)
					break;
				if (le32(d + 12) == 0)
					break;
				if (pe_rva(sec, nsec, le32(d + 12), &noff) < 0)
					continue;
				pe_cstring(&f, noff, name, sizeof(name));
				if (strncasecmp(name, "amdhip64", 8) == 0) {
					for (char *p = name; *p; p++)
						*p = (char)tolower((unsigned char)*p);
					snprintf(out->hip_runtime, sizeof(out->hip_runtime), "%s",
					         name);
				}
			}
		}
	}
	if (res_rva != 0)
		pe_version(&f, sec, nsec, res_rva, out);
	rocmd_fs_close(f.fd);
	return 0;
bad:
	rocmd_fs_close(f.fd);
	snprintf(why, whylen, "%s is not a readable PE file", path);
	return rc;
}

/* ---- ELF (librocblas.so, code objects) ---- */

int
rocmd_elf_read(const char *path, struct rocmd_elf_info *out, char *why, size_t whylen)
{
	struct rfile f;
	uint8_t eh[64];
	uint64_t shoff;
	uint16_t shentsize, shnum;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = open_rfile(path, &f)) < 0) {
		snprintf(why, whylen, "cannot open %s: %s", path, rocmd_strerror(rc));
		return rc;
	}
	rc = ROCMD_ECORRUPT;
	if (rread(&f, 0, eh, sizeof(eh)) < 0 || memcmp(eh, "\177ELF", 4) != 0 || eh[4] != 2 ||
	    eh[5] != 1)
		goto bad; /* 64-bit little-endian only: all rocBLAS targets are */
	out->machine = le16(eh + 18);
	out->flags = le32(eh + 48);
	shoff = le64(eh + 40);
	shentsize = le16(eh + 58);
	shnum = le16(eh + 60);
	if (shoff == 0 || shentsize < 64 || shnum > 4096)
		goto done; /* a code object needs no more than the header */
	for (unsigned i = 0; i < shnum; i++) {
		uint8_t sh[64], link[64];
		uint64_t off, size, stroff, strsize;
		if (rread(&f, shoff + (uint64_t)i * shentsize, sh, sizeof(sh)) < 0)
			goto bad;
		if (le32(sh + 4) != 6) /* SHT_DYNAMIC */
			continue;
		off = le64(sh + 24);
		size = le64(sh + 32);
		if (le32(sh + 40) >= shnum ||
		    rread(&f, shoff + (uint64_t)le32(sh + 40) * shentsize, link, sizeof(link)) < 0)
			goto bad;
		stroff = le64(link + 24);
		strsize = le64(link + 32);
		for (uint64_t d = 0; d + 16 <= size && d < (1u << 20); d += 16) {
			uint8_t dyn[16];
			uint64_t tag, val;
			char s[64];
			if (rread(&f, off + d, dyn, sizeof(dyn)) < 0)
				goto bad;
			tag = le64(dyn);
			val = le64(dyn + 8);
			if (tag == 0)
				break;
			if ((tag != 14 && tag != 1) || val >= strsize)
				continue;
			pe_cstring(&f, stroff + val, s, sizeof(s));
			if (tag == 14)
				snprintf(out->soname, sizeof(out->soname), "%s", s);
			else if (strncmp(s, "libamdhip64.so", 14) == 0)
				snprintf(out->hip_runtime, sizeof(out->hip_runtime), "%s", s);
		}
		break;
	}
done:
	rocmd_fs_close(f.fd);
	return 0;
bad:
	rocmd_fs_close(f.fd);
	snprintf(why, whylen, "%s is not a readable ELF file", path);
	return rc;
}

/* ---- identification ----
 *
 * Linear in the number of entries (n log n where something is looked up):
 * the folders' Tensile files are counted by sorting them by folder, staged
 * copies and the manifest's names are found by binary search, and arch
 * names are gathered into sets sorted once. The caller's cancel flag is
 * polled as it goes. */

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

static int
is_code_object(const char *name)
{
	size_t n = strlen(name);

	return (n > 3 && strcmp(name + n - 3, ".co") == 0) ||
	       (n > 6 && strcmp(name + n - 6, ".hsaco") == 0);
}

/* TensileLibrary.dat, TensileLibrary_<gfx>.dat, TensileLibrary_lazy_<gfx>.dat */
static int
is_index_file(const char *name)
{
	size_t n = strlen(name);

	return strncmp(name, "TensileLibrary", 14) == 0 && n > 4 &&
	       strcmp(name + n - 4, ".dat") == 0;
}

static int
is_library_file(const char *name)
{
	return strncmp(name, "TensileLibrary", 14) == 0 || strncmp(name, "Kernels.so-", 11) == 0 ||
	       is_code_object(name);
}

/* A set of short strings (arch names): added to, then sorted once. */
struct strset {
	char **v;
	size_t n, cap;
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
strset_add(struct strset *s, const char *str)
{
	/* Most files of a folder name the arch the one before named. */
	if (s->n > 0 && strcmp(s->v[s->n - 1], str) == 0)
		return 0;
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		void *nv = realloc(s->v, ncap * sizeof(*s->v));
		if (nv == NULL)
			return ROCMD_ENOMEM;
		s->v = nv;
		s->cap = ncap;
	}
	if ((s->v[s->n] = strdup(str)) == NULL)
		return ROCMD_ENOMEM;
	s->n++;
	return 0;
}

/* Sorts S and drops its duplicates. */
static void
strset_sort(struct strset *s)
{
	size_t k = 0;

	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_str);
	for (size_t i = 0; i < s->n; i++) {
		if (k > 0 && strcmp(s->v[k - 1], s->v[i]) == 0) {
			free(s->v[i]);
			continue;
		}
		s->v[k++] = s->v[i];
	}
	s->n = k;
}

/* Whether sorted S holds STR. */
static int
strset_has(const struct strset *s, const char *str)
{
	return s->n > 0 && bsearch(&str, s->v, s->n, sizeof(*s->v), cmp_str) != NULL;
}

static cJSON *
strset_json(const struct strset *s)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a != NULL && i < s->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(s->v[i]));
	return a;
}

static void
strset_free(struct strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* One identification: the package, its staged copies by content (built
 * once), the caller's cancel flag and the arch sets being gathered. */
struct ident {
	const struct rocmd_pkg_contents *c;
	int (*canceled)(void *ctx);
	void *ctx;
	unsigned polls;
	int stopped;
	const struct rocmd_pkg_entry **staged; /* entries with a staged file, by hash */
	size_t nstaged;
	struct strset from_names, from_objects;
	int oom;
	char lt_dir[1024]; /* hipBLASLt's library folder in the package, "" none */
};

/* Whether folder path P (DLEN bytes, '/'-terminated) is hipBLASLt's: a
 * component named hipblaslt (its lib/hipblaslt/library, bin/hipblaslt/library).
 * The length of hipBLASLt's library folder in P (up to the component after
 * hipblaslt: "lib/hipblaslt/library" of "lib/hipblaslt/library/gfx803/",
 * the per-arch subfolder hipBLASLt descends into), 0 when it is not one. */
static size_t
in_hipblaslt(const char *p, size_t dlen)
{
	for (size_t i = 0; i + 9 <= dlen; i++) {
		const char *slash;
		if (!((i == 0 || p[i - 1] == '/') && strncasecmp(p + i, "hipblaslt", 9) == 0 &&
		      (i + 9 == dlen || p[i + 9] == '/')))
			continue;
		if (i + 10 >= dlen)
			return i + 9;
		slash = memchr(p + i + 10, '/', dlen - i - 10);
		return slash != NULL ? (size_t)(slash - p) : dlen;
	}
	return 0;
}

/* Whether to stop now: the cancel flag, asked every EVERY calls. */
static int
stop(struct ident *x, unsigned every)
{
	if (!x->stopped && x->canceled != NULL && ++x->polls % every == 0)
		x->stopped = x->canceled(x->ctx) != 0;
	return x->stopped;
}

static int
cmp_by_hash(const void *a, const void *b)
{
	return memcmp((*(const struct rocmd_pkg_entry *const *)a)->sha256,
	              (*(const struct rocmd_pkg_entry *const *)b)->sha256, ROCMD_SHA256_LEN);
}

static int
index_staged(struct ident *x)
{
	const struct rocmd_pkg_contents *c = x->c;

	x->staged = malloc((c->count ? c->count : 1) * sizeof(*x->staged));
	if (x->staged == NULL)
		return ROCMD_ENOMEM;
	for (size_t i = 0; i < c->count; i++)
		if (c->entries[i].staged != NULL)
			x->staged[x->nstaged++] = &c->entries[i];
	qsort(x->staged, x->nstaged, sizeof(*x->staged), cmp_by_hash);
	return 0;
}

/* The staged copy of an entry's content (its staging file, or that of an
 * entry with the same hash: a hardlink's copy has none); NULL when none is
 * on disk. */
static const char *
staged_path(const struct ident *x, const struct rocmd_pkg_entry *e)
{
	const struct rocmd_pkg_entry *const *hit;

	if (e->staged != NULL)
		return e->staged;
	hit = x->nstaged > 0 ? bsearch(&e, x->staged, x->nstaged, sizeof(*x->staged), cmp_by_hash)
	                     : NULL;
	return hit != NULL ? (*hit)->staged : NULL;
}

/* The HIP SDK major version a runtime library name belongs to, or 0. */
static int
hip_major(const char *runtime)
{
	/* amdhip64.dll (5.x), amdhip64_6.dll, amdhip64_7.dll; libamdhip64.so.5/6/7 */
	if (strcasecmp(runtime, "amdhip64.dll") == 0)
		return 5;
	if (strncasecmp(runtime, "amdhip64_", 9) == 0)
		return atoi(runtime + 9);
	if (strncmp(runtime, "libamdhip64.so.", 15) == 0)
		return atoi(runtime + 15);
	return 0;
}

/* The binary: the shallowest rocblas.dll / librocblas.so*; and the Tensile manifest. */
static void
find_binaries(const struct rocmd_pkg_contents *c, const struct rocmd_pkg_entry **dll,
              const struct rocmd_pkg_entry **so, const struct rocmd_pkg_entry **manifest)
{
	*dll = *so = *manifest = NULL;
	for (size_t i = 0; i < c->count; i++) {
		const struct rocmd_pkg_entry *e = &c->entries[i];
		const char *b = base_name(e->path);
		if (e->kind != ROCMD_PKG_FILE)
			continue;
		if (strcasecmp(b, "rocblas.dll") == 0 &&
		    (*dll == NULL || strlen(e->path) < strlen((*dll)->path)))
			*dll = e;
		else if (strncmp(b, "librocblas.so", 13) == 0 &&
		         (*so == NULL || strlen(e->path) < strlen((*so)->path)))
			*so = e;
		else if (strcasecmp(b, "TensileManifest.txt") == 0 && *manifest == NULL)
			*manifest = e;
	}
}

/* A Tensile file and the length of its folder's part of the path. */
struct libfile {
	const char *path;
	size_t dlen;
	size_t index;
};

/* By folder, then by position in the package. */
static int
cmp_libfile(const void *pa, const void *pb)
{
	const struct libfile *a = pa, *b = pb;
	int c = memcmp(a->path, b->path, a->dlen < b->dlen ? a->dlen : b->dlen);

	if (c != 0)
		return c;
	if (a->dlen != b->dlen)
		return a->dlen < b->dlen ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* The library folder: the one holding the most Tensile files, the first in
 * the package's order on a tie (into LIBDIR); returns how many it holds, 0
 * when there is none. */
static size_t
find_library_dir(struct ident *x, char *libdir, size_t libdirlen)
{
	const struct rocmd_pkg_contents *c = x->c;
	struct libfile *f;
	size_t n = 0, best = 0, best_first = 0;

	libdir[0] = '\0';
	if ((f = malloc((c->count ? c->count : 1) * sizeof(*f))) == NULL) {
		x->oom = 1;
		return 0;
	}
	for (size_t i = 0; i < c->count && !stop(x, 4096); i++) {
		const char *p = c->entries[i].path, *b = base_name(p);
		size_t ltlen;
		if (!is_library_file(b))
			continue;
		/* hipBLASLt's folder is never rocBLAS's library: noted, left out. */
		if ((ltlen = in_hipblaslt(p, (size_t)(b - p))) > 0) {
			if (x->lt_dir[0] == '\0')
				snprintf(x->lt_dir, sizeof(x->lt_dir), "%.*s", (int)ltlen, p);
			continue;
		}
		f[n++] = (struct libfile){p, (size_t)(b - p), i};
	}
	if (!x->stopped)
		qsort(f, n, sizeof(*f), cmp_libfile);
	for (size_t i = 0, j; !x->stopped && i < n; i = j) {
		for (j = i + 1; j < n && f[j].dlen == f[i].dlen &&
		                memcmp(f[j].path, f[i].path, f[i].dlen) == 0;
		     j++)
			;
		/* f[i] is the folder's first file in the package's order. */
		if (j - i > best || (j - i == best && f[i].index < best_first)) {
			best = j - i;
			best_first = f[i].index;
			snprintf(libdir, libdirlen, "%.*s",
			         (int)(f[i].dlen > 0 ? f[i].dlen - 1 : 0), f[i].path);
		}
	}
	free(f);
	return x->stopped ? 0 : best;
}

/* The archs the one index for every arch (TensileLibrary.dat at staged path
 * SP) names. The reader usually parsed it already, while the rest was being
 * read. */
static void
add_dat_archs(struct ident *x, const char *sp, cJSON *warnings)
{
	const struct rocmd_pkg_contents *c = x->c;
	int mine = c->dat_done && c->dat_path != NULL && strcmp(c->dat_path, sp) == 0;
	char **dat = c->dat_archs, w[256];
	size_t ndat = c->dat_narchs;
	int drc = c->dat_rc;

	if (!mine)
		drc = rocmd_rocblas_dat_archs(sp, &dat, &ndat, w, sizeof(w));
	else
		snprintf(w, sizeof(w), "%s", c->dat_why);
	if (drc == 0) {
		for (size_t k = 0; k < ndat; k++) {
			char a2[ROCMD_GFX_MAX];
			snprintf(a2, sizeof(a2), "%s", dat[k]);
			a2[strcspn(a2, ":")] = '\0';
			x->oom |= strset_add(&x->from_names, a2) < 0;
		}
	} else {
		cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
	}
	if (!mine) {
		for (size_t k = 0; k < ndat; k++)
			free(dat[k]);
		free(dat);
	}
}

/* Whether the folder part of PATH (DLEN bytes, '/'-terminated) is LIBDIR
 * (WANT: its length plus the '/'), or with SUBDIRS a <gfx> subfolder of it
 * (hipBLASLt's per-arch folders, as rocblas-library.c reads them on disk). */
static int
in_library_dir(const char *path, size_t dlen, const char *libdir, size_t want, int subdirs)
{
	size_t sub, comp;

	if (dlen < want || strncmp(path, libdir, want > 0 ? want - 1 : 0) != 0 ||
	    (want > 0 && path[want - 1] != '/'))
		return 0;
	if (dlen == want)
		return 1;
	comp = dlen - want - 1; /* the subfolder's name */
	sub = rocmd_gfx_bare_len(path + want);
	return subdirs && sub > 0 && sub <= comp && memchr(path + want, '/', comp) == NULL &&
	       (sub == comp || path[want + sub] == ':' || path[want + sub] == '-');
}

/* The archs the library folder's index names and its code objects are for
 * (into X's sets, sorted); returns the number of library files in it. With
 * SUBDIRS files in its <gfx> subfolders count too (hipBLASLt's). */
static size_t
collect_archs(struct ident *x, const char *libdir, int subdirs, cJSON *warnings)
{
	const struct rocmd_pkg_contents *c = x->c;
	size_t libfiles = 0, want = libdir[0] ? strlen(libdir) + 1 : 0;

	for (size_t i = 0; i < c->count && !stop(x, 1024); i++) {
		const struct rocmd_pkg_entry *e = &c->entries[i];
		const char *b = base_name(e->path), *sp;
		char arch[32];
		if (!in_library_dir(e->path, (size_t)(b - e->path), libdir, want, subdirs) ||
		    !is_library_file(b))
			continue;
		libfiles++;
		sp = e->kind == ROCMD_PKG_FILE ? staged_path(x, e) : NULL;
		if (is_index_file(b) && rocmd_rocblas_name_arch(b, arch, sizeof(arch)) == 0)
			x->oom |= strset_add(&x->from_names, arch) < 0;
		if (is_code_object(b)) {
			/* The ELF header says; the name only when it cannot be read. */
			if ((sp != NULL && rocmd_amdgpu_file_arch(sp, arch, sizeof(arch)) == 0) ||
			    rocmd_rocblas_name_arch(b, arch, sizeof(arch)) == 0) {
				arch[strcspn(arch, ":")] = '\0'; /* gfx90a:xnack+ serves gfx90a */
				x->oom |= strset_add(&x->from_objects, arch) < 0;
			}
		} else if (sp != NULL && strcmp(b, "TensileLibrary.dat") == 0) {
			add_dat_archs(x, sp, warnings);
		}
	}
	strset_sort(&x->from_names);
	strset_sort(&x->from_objects);
	return libfiles;
}

/* At most this many warnings of one kind name an arch; the rest are counted. */
#define ARCH_WARNINGS 16

static void
arch_warning(cJSON *warnings, size_t *count, const char *fmt, const char *arch)
{
	char msg[192];

	if (++*count > ARCH_WARNINGS)
		return;
	snprintf(msg, sizeof(msg), fmt, arch);
	cJSON_AddItemToArray(warnings, cJSON_CreateString(msg));
}

static void
arch_warnings_more(cJSON *warnings, size_t count, const char *what)
{
	char msg[160];

	if (count <= ARCH_WARNINGS)
		return;
	snprintf(msg, sizeof(msg), "%zu more archs %s", count - ARCH_WARNINGS, what);
	cJSON_AddItemToArray(warnings, cJSON_CreateString(msg));
}

/* An arch is served as rocmd_rocblas_arch_served says (the rule lib verify
 * applies to the deployed folder); each half alone is worth a warning. ARCHS
 * gets the served ones, sorted. */
static int
served_archs(struct ident *x, struct strset *archs, size_t libfiles, cJSON *warnings)
{
	const struct strset *names = &x->from_names, *objects = &x->from_objects;
	size_t no_objects = 0, no_index = 0;

	for (size_t i = 0; i < names->n; i++) {
		if (rocmd_rocblas_arch_served(names->v, names->n, objects->v, objects->n,
		                              names->v[i])) {
			if (strset_add(archs, names->v[i]) < 0)
				return ROCMD_ENOMEM;
		} else {
			arch_warning(warnings, &no_objects,
			             "the index names %s but no code objects for it are in the "
			             "package: not served",
			             names->v[i]);
		}
	}
	arch_warnings_more(warnings, no_objects, "named by the index have no code objects");
	for (size_t i = 0; i < objects->n; i++) {
		if (!strset_has(names, objects->v[i]))
			arch_warning(warnings, &no_index,
			             "code objects for %s are present but no index covers it: "
			             "not served",
			             objects->v[i]);
	}
	arch_warnings_more(warnings, no_index, "have code objects but no index");
	strset_sort(archs);
	if (libfiles > 0 && names->n == 0)
		cJSON_AddItemToArray(warnings,
		                     cJSON_CreateString("no Tensile index (TensileLibrary*.dat) "
		                                        "in the library folder: rocBLAS would "
		                                        "abort loading it"));
	if (libfiles > 0 && objects->n == 0)
		cJSON_AddItemToArray(warnings,
		                     cJSON_CreateString("no code objects (*.co, *.hsaco) in the "
		                                        "library folder"));
	return 0;
}

/* The binary's description into ID ("binary"; null without one), the HIP
 * runtime major version it links into RUNTIME_MAJOR ("" unknown). */
static cJSON *
describe_binary(const struct ident *x, const struct rocmd_pkg_entry *dll,
                const struct rocmd_pkg_entry *so, cJSON *id, cJSON *warnings, char *runtime_major,
                size_t majorlen)
{
	cJSON *bin = NULL;

	if (dll != NULL) {
		struct rocmd_pe_info pe;
		const char *sp = staged_path(x, dll);
		char w[256] = "";
		bin = cJSON_AddObjectToObject(id, "binary");
		cJSON_AddStringToObject(bin, "path", dll->path);
		cJSON_AddStringToObject(bin, "format", "pe");
		if (sp != NULL && rocmd_pe_read(sp, &pe, w, sizeof(w)) == 0) {
			cJSON_AddStringToObject(bin, "file_version", pe.file_version);
			cJSON_AddStringToObject(bin, "product_version", pe.product_version);
			cJSON_AddStringToObject(bin, "hip_runtime", pe.hip_runtime);
			if (hip_major(pe.hip_runtime) > 0)
				snprintf(runtime_major, majorlen, "%d", hip_major(pe.hip_runtime));
		} else {
			cJSON_AddItemToArray(
			    warnings, cJSON_CreateString("rocblas.dll is not a readable PE file"));
		}
	} else if (so != NULL) {
		struct rocmd_elf_info elf;
		const char *sp = staged_path(x, so);
		char w[256] = "";
		bin = cJSON_AddObjectToObject(id, "binary");
		cJSON_AddStringToObject(bin, "path", so->path);
		cJSON_AddStringToObject(bin, "format", "elf");
		if (sp != NULL && rocmd_elf_read(sp, &elf, w, sizeof(w)) == 0) {
			cJSON_AddStringToObject(bin, "soname", elf.soname);
			cJSON_AddStringToObject(bin, "hip_runtime", elf.hip_runtime);
			if (hip_major(elf.hip_runtime) > 0)
				snprintf(runtime_major, majorlen, "%d", hip_major(elf.hip_runtime));
		} else {
			cJSON_AddItemToArray(
			    warnings,
			    cJSON_CreateString("librocblas.so is not a readable ELF file"));
		}
	} else {
		cJSON_AddNullToObject(id, "binary");
	}
	return bin;
}

/* The Tensile manifest's entries the package does not hold (by file name,
 * looked up among the package's sorted file names). */
static void
check_manifest(struct ident *x, const struct rocmd_pkg_entry *manifest, cJSON *id, cJSON *warnings)
{
	const struct rocmd_pkg_contents *c = x->c;
	const char *sp, **bases;
	cJSON *m;
	struct rfile mf = {.fd = -1};
	long lines = 0, missing = 0;
	char line[4096];
	uint64_t off = 0;

	if (manifest == NULL) {
		cJSON_AddNullToObject(id, "tensile_manifest");
		return;
	}
	sp = staged_path(x, manifest);
	m = cJSON_AddObjectToObject(id, "tensile_manifest");
	cJSON_AddStringToObject(m, "path", manifest->path);
	bases = malloc((c->count ? c->count : 1) * sizeof(*bases));
	if (bases == NULL) {
		x->oom = 1;
		return;
	}
	for (size_t i = 0; i < c->count; i++)
		bases[i] = base_name(c->entries[i].path);
	qsort(bases, c->count, sizeof(*bases), cmp_str);
	if (sp != NULL && open_rfile(sp, &mf) < 0)
		mf.fd = -1;
	while (mf.fd >= 0 && !stop(x, 1024) && read_line(&mf, &off, line, sizeof(line))) {
		const char *b;
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0')
			continue;
		lines++;
		for (char *p = line; *p; p++)
			if (*p == '\\')
				*p = '/';
		b = base_name(line);
		missing +=
		    c->count == 0 || bsearch(&b, bases, c->count, sizeof(*bases), cmp_str) == NULL;
	}
	if (mf.fd >= 0)
		rocmd_fs_close(mf.fd);
	free(bases);
	cJSON_AddNumberToObject(m, "entries", (double)lines);
	cJSON_AddNumberToObject(m, "missing", (double)missing);
	if (missing > 0)
		cJSON_AddItemToArray(warnings,
		                     cJSON_CreateString("TensileManifest.txt lists files the "
		                                        "package does not hold"));
}

/* The SDK generation: explicit, else the name; checked against the binary
 * (RUNTIME_MAJOR, "" unknown). SDK "" when unknown; SDK_SOURCE (16 bytes)
 * says where it came from. An explicit version the content contradicts is
 * refused with WHY. */
static int
choose_sdk(const char *explicit_sdk, const struct rocmd_pkg_name_hints *h,
           const char *runtime_major, const cJSON *bin, cJSON *warnings, char *sdk, size_t sdklen,
           char *sdk_source, char *why, size_t whylen)
{
	if (explicit_sdk != NULL && explicit_sdk[0] != '\0') {
		struct rocmd_pkg_version v;
		if (rocmd_pkg_version_parse(explicit_sdk, &v) < 0 || v.n < 2) {
			snprintf(why, whylen,
			         "--sdk \"%s\" is not an SDK version such as 6.2.4 or 5.7",
			         explicit_sdk);
			return ROCMD_EINVAL;
		}
		if (runtime_major[0] && atoi(runtime_major) != v.v[0]) {
			snprintf(why, whylen,
			         "--sdk %s contradicts the package: its rocBLAS binary links %s, "
			         "which belongs to HIP SDK %s.x",
			         explicit_sdk,
			         cJSON_GetStringValue(cJSON_GetObjectItem(bin, "hip_runtime")),
			         runtime_major);
			return ROCMD_EINVAL;
		}
		snprintf(sdk, sdklen, "%s", explicit_sdk);
		snprintf(sdk_source, 16, "explicit");
	} else if (h->sdk[0] != '\0') {
		struct rocmd_pkg_version v;
		rocmd_pkg_version_parse(h->sdk, &v);
		if (runtime_major[0] && atoi(runtime_major) != v.v[0]) {
			char msg[256];
			snprintf(msg, sizeof(msg),
			         "the name says SDK %s but the binary links the HIP %s.x runtime; "
			         "the content wins",
			         h->sdk, runtime_major);
			cJSON_AddItemToArray(warnings, cJSON_CreateString(msg));
			snprintf(sdk, sdklen, "%s", runtime_major);
			snprintf(sdk_source, 16, "binary");
		} else {
			snprintf(sdk, sdklen, "%s", h->sdk);
			snprintf(sdk_source, 16, "name");
		}
	} else if (runtime_major[0]) {
		snprintf(sdk, sdklen, "%s", runtime_major);
		snprintf(sdk_source, 16, "binary");
	}
	return 0;
}

/* The name names archs the content lacks: worth a word, not a refusal. */
static void
name_arch_warnings(const struct rocmd_pkg_name_hints *h, const cJSON *id, cJSON *warnings)
{
	char tmp[128], *save = NULL;

	if (h->archs[0] == '\0')
		return;
	snprintf(tmp, sizeof(tmp), "%s", h->archs);
	for (char *a = strtok_r(tmp, ",", &save); a != NULL; a = strtok_r(NULL, ",", &save)) {
		int have = 0;
		const cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(id, "archs")) have |=
		    strcmp(it->valuestring, a) == 0;
		if (!have && cJSON_GetArraySize(cJSON_GetObjectItem(id, "archs")) > 0) {
			char msg[128];
			snprintf(msg, sizeof(msg), "the name says %s but no library file is for it",
			         a);
			cJSON_AddItemToArray(warnings, cJSON_CreateString(msg));
		}
	}
}

int
rocmd_pkg_identify(const struct rocmd_pkg_contents *c, const char *name, const char *explicit_sdk,
                   int (*canceled)(void *ctx), void *ctx, cJSON **out, char *why, size_t whylen)
{
	struct ident x = {.c = c, .canceled = canceled, .ctx = ctx};
	struct rocmd_pkg_name_hints hints;
	const struct rocmd_pkg_entry *dll, *so, *manifest;
	struct strset archs = {0};
	cJSON *id, *warnings, *bin, *h;
	char libdir[4096], sdk[16] = "", sdk_source[16] = "", gen[16], runtime_major[8] = "";
	size_t libfiles = 0, ltfiles = 0, best;
	int rc = 0, lt_only;

	*out = NULL;
	id = cJSON_CreateObject();
	warnings = cJSON_CreateArray();
	if (id == NULL || warnings == NULL || index_staged(&x) < 0) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	rocmd_pkg_name_hints(name, &hints);
	h = cJSON_AddObjectToObject(id, "name_hints");
	cJSON_AddStringToObject(h, "sdk", hints.sdk);
	cJSON_AddStringToObject(h, "version", hints.version);
	cJSON_AddStringToObject(h, "archs", hints.archs);
	find_binaries(c, &dll, &so, &manifest);
	best = find_library_dir(&x, libdir, sizeof(libdir));
	if (best > 0)
		libfiles = collect_archs(&x, libdir, 0, warnings);
	/* Only hipBLASLt's folder: its files say the archs (lib deploy leaves
	 * rocBLAS as it is). */
	lt_only = dll == NULL && so == NULL && libfiles == 0 && x.lt_dir[0] != '\0';
	if (lt_only)
		ltfiles = collect_archs(&x, x.lt_dir, 1, warnings);
	if (!x.stopped && served_archs(&x, &archs, lt_only ? ltfiles : libfiles, warnings) < 0)
		x.oom = 1;
	if (x.stopped || x.oom)
		goto stopped;
	if (dll == NULL && so == NULL && libfiles == 0 && !lt_only) {
		snprintf(why, whylen,
		         "not a rocBLAS or hipBLASLt library package: no rocblas.dll, "
		         "librocblas.so, Tensile library files (TensileLibrary*, *.co, *.hsaco) or "
		         "hipBLASLt library folder in it");
		rc = ROCMD_EINVAL;
		goto out;
	}
	cJSON_AddStringToObject(id, "library", best > 0 ? libdir : "");
	/* false: no rocBLAS at all, only hipBLASLt's folder (absent: true). */
	cJSON_AddBoolToObject(id, "carries_rocblas", !lt_only);
	if (lt_only) {
		char w[1400];
		cJSON_AddStringToObject(id, "hipblaslt_library", x.lt_dir);
		cJSON_AddNumberToObject(id, "hipblaslt_files", (double)ltfiles);
		snprintf(w, sizeof(w),
		         "the package carries only hipBLASLt's library folder %s (its archs are "
		         "read from it): lib deploy replaces an SDK's hipBLASLt library folder "
		         "with it and leaves rocBLAS as it is",
		         x.lt_dir);
		cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
	} else if (x.lt_dir[0] != '\0') {
		char w[1400];
		cJSON_AddStringToObject(id, "hipblaslt_library", x.lt_dir);
		snprintf(
		    w, sizeof(w),
		    "the package carries hipBLASLt's library folder %s: lib deploy places it on "
		    "an SDK's hipBLASLt library folder with rocBLAS's, in one transaction (a "
		    "target without one gets rocBLAS's only)",
		    x.lt_dir);
		cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
	}
	cJSON_AddNumberToObject(id, "library_files", (double)libfiles);
	cJSON_AddItemToObject(id, "archs", strset_json(&archs));
	cJSON_AddItemToObject(id, "archs_from_index", strset_json(&x.from_names));
	cJSON_AddItemToObject(id, "archs_from_code_objects", strset_json(&x.from_objects));
	bin = describe_binary(&x, dll, so, id, warnings, runtime_major, sizeof(runtime_major));
	cJSON_AddStringToObject(id, "platform",
	                        dll != NULL  ? "windows"
	                        : so != NULL ? "linux"
	                                     : "any");
	check_manifest(&x, manifest, id, warnings);
	if (x.stopped || x.oom)
		goto stopped;
	rc = choose_sdk(explicit_sdk, &hints, runtime_major, bin, warnings, sdk, sizeof(sdk),
	                sdk_source, why, whylen);
	if (rc < 0)
		goto out;
	if (sdk[0] != '\0' && rocmd_sdk_generation(sdk, gen, sizeof(gen)) == 0) {
		cJSON_AddStringToObject(id, "sdk", sdk);
		cJSON_AddStringToObject(id, "sdk_source", sdk_source);
		cJSON_AddStringToObject(id, "sdk_generation", gen);
	} else {
		cJSON_AddNullToObject(id, "sdk");
		cJSON_AddNullToObject(id, "sdk_source");
		cJSON_AddNullToObject(id, "sdk_generation");
		cJSON_AddItemToArray(
		    warnings, cJSON_CreateString("the SDK generation is unknown; import "
		                                 "again with --sdk X.Y to make it matchable"));
	}
	if (hints.version[0] != '\0')
		cJSON_AddStringToObject(id, "version_hint", hints.version);
	else
		cJSON_AddNullToObject(id, "version_hint");
	name_arch_warnings(&hints, id, warnings);
	cJSON_AddStringToObject(id, "root_stripped", c->strip != NULL ? c->strip : "");
	cJSON_AddItemToObject(id, "warnings", warnings);
	warnings = NULL;
	*out = id;
	id = NULL;
	goto out;
stopped:
	rc = x.oom ? ROCMD_ENOMEM : ROCMD_ECANCELED;
	snprintf(why, whylen, "%s",
	         x.oom ? "out of memory identifying the package" : "import canceled");
out:
	strset_free(&archs);
	strset_free(&x.from_names);
	strset_free(&x.from_objects);
	free(x.staged);
	cJSON_Delete(warnings);
	cJSON_Delete(id);
	return rc;
}
