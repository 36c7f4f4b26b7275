/*
 * Reads AMD GPU code objects (see codeobj.h): ELF64 header checks, the arch
 * from e_flags, and the per-kernel resources from the MessagePack metadata
 * note, decoded with msgpack-c. Every offset read from the file is checked
 * against its size first: the input may come from a damaged SDK.
 */
#include "kernels/amdgpu/codeobj.h"

#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define NT_AMDGPU_METADATA 32
#define SHT_NOTE 7

/* EF_AMDGPU_MACH values, from LLVM's llvm/BinaryFormat/ELF.h. */
static const struct {
	const char *name;
	unsigned mach;
} mach_table[] = {
    {"gfx600", 0x20},  {"gfx601", 0x21},  {"gfx700", 0x22},  {"gfx701", 0x23},  {"gfx702", 0x24},
    {"gfx703", 0x25},  {"gfx704", 0x26},  {"gfx801", 0x28},  {"gfx802", 0x29},  {"gfx803", 0x2a},
    {"gfx810", 0x2b},  {"gfx900", 0x2c},  {"gfx902", 0x2d},  {"gfx904", 0x2e},  {"gfx906", 0x2f},
    {"gfx908", 0x30},  {"gfx909", 0x31},  {"gfx90c", 0x32},  {"gfx1010", 0x33}, {"gfx1011", 0x34},
    {"gfx1012", 0x35}, {"gfx1030", 0x36}, {"gfx1031", 0x37}, {"gfx1032", 0x38}, {"gfx1033", 0x39},
    {"gfx602", 0x3a},  {"gfx705", 0x3b},  {"gfx805", 0x3c},  {"gfx1035", 0x3d}, {"gfx1034", 0x3e},
    {"gfx90a", 0x3f},  {"gfx940", 0x40},  {"gfx1100", 0x41}, {"gfx1013", 0x42}, {"gfx1150", 0x43},
    {"gfx1103", 0x44}, {"gfx1036", 0x45}, {"gfx1101", 0x46}, {"gfx1102", 0x47}, {"gfx1200", 0x48},
    {"gfx1151", 0x4a}, {"gfx941", 0x4b},  {"gfx942", 0x4c},  {"gfx1201", 0x4e}, {"gfx950", 0x4f},
    {"gfx1152", 0x55},
};

int
codeobj_arch_mach(const char *gfx)
{
	size_t i;

	for (i = 0; i < sizeof(mach_table) / sizeof(mach_table[0]); i++)
		if (!strcmp(mach_table[i].name, gfx))
			return (int)mach_table[i].mach;
	return -1;
}

const char *
codeobj_mach_name(unsigned mach)
{
	size_t i;

	for (i = 0; i < sizeof(mach_table) / sizeof(mach_table[0]); i++)
		if (mach_table[i].mach == mach)
			return mach_table[i].name;
	return NULL;
}

static uint64_t
rd(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static int
str_is(const msgpack_object *o, const char *s)
{
	size_t n = strlen(s);

	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n &&
	       !memcmp(o->via.str.ptr, s, n);
}

static int64_t
num(const msgpack_object *o)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		return (int64_t)o->via.u64;
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		return o->via.i64;
	return -1;
}

static void
copy_str(char *dst, size_t len, const msgpack_object *o)
{
	size_t n = o->via.str.size < len - 1 ? o->via.str.size : len - 1;

	memcpy(dst, o->via.str.ptr, n);
	dst[n] = '\0';
}

static void
kernel_from_map(const msgpack_object *m, struct codeobj_kernel *k)
{
	uint32_t i;

	memset(k, 0, sizeof(*k));
	k->vgpr_count = k->sgpr_count = k->wavefront_size = -1;
	k->group_segment_fixed_size = k->private_segment_fixed_size = -1;
	for (i = 0; i < m->via.map.size; i++) {
		const msgpack_object *key = &m->via.map.ptr[i].key, *v = &m->via.map.ptr[i].val;

		if (str_is(key, ".name") && v->type == MSGPACK_OBJECT_STR)
			copy_str(k->name, sizeof(k->name), v);
		else if (str_is(key, ".vgpr_count"))
			k->vgpr_count = (int)num(v);
		else if (str_is(key, ".sgpr_count"))
			k->sgpr_count = (int)num(v);
		else if (str_is(key, ".wavefront_size"))
			k->wavefront_size = (int)num(v);
		else if (str_is(key, ".group_segment_fixed_size"))
			k->group_segment_fixed_size = num(v);
		else if (str_is(key, ".private_segment_fixed_size"))
			k->private_segment_fixed_size = num(v);
		else if (str_is(key, ".max_flat_workgroup_size"))
			k->max_flat_workgroup_size = (int)num(v);
		else if (str_is(key, ".vgpr_spill_count"))
			k->vgpr_spill_count = (int)num(v);
		else if (str_is(key, ".sgpr_spill_count"))
			k->sgpr_spill_count = (int)num(v);
	}
}

static uint64_t
be(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/*
 * Walks one MessagePack object at *POS without building it: every length and
 * element count must fit in what is left of the buffer, nesting at most 32
 * deep. msgpack-c would otherwise allocate whatever a corrupt count claims
 * (gigabytes) before noticing the data is short.
 */
static int
mp_check(const unsigned char *p, size_t len, size_t *pos, int depth)
{
	size_t left, n = 0, i;
	unsigned char t;
	int hdr = 0, items = 0; /* items: 1 array, 2 map */

	if (depth > 32 || *pos >= len)
		return -1;
	t = p[(*pos)++];
	left = len - *pos;
	if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3)
		return 0;
	if (t >= 0x80 && t <= 0x8f) {
		n = t & 0x0f;
		items = 2;
	} else if (t >= 0x90 && t <= 0x9f) {
		n = t & 0x0f;
		items = 1;
	} else if (t >= 0xa0 && t <= 0xbf) {
		n = t & 0x1f;
	} else {
		switch (t) {
		case 0xc4:
		case 0xd9:
			hdr = 1;
			break; /* bin8, str8 */
		case 0xc5:
		case 0xda:
			hdr = 2;
			break;
		case 0xc6:
		case 0xdb:
			hdr = 4;
			break;
		case 0xc7:
			hdr = 1;
			n = 1;
			break; /* ext8: length + type byte */
		case 0xc8:
			hdr = 2;
			n = 1;
			break;
		case 0xc9:
			hdr = 4;
			n = 1;
			break;
		case 0xca:
			n = 4;
			break;
		case 0xcb:
			n = 8;
			break;
		case 0xcc:
		case 0xd0:
			n = 1;
			break;
		case 0xcd:
		case 0xd1:
			n = 2;
			break;
		case 0xce:
		case 0xd2:
			n = 4;
			break;
		case 0xcf:
		case 0xd3:
			n = 8;
			break;
		case 0xd4:
			n = 2;
			break; /* fixext: type + data */
		case 0xd5:
			n = 3;
			break;
		case 0xd6:
			n = 5;
			break;
		case 0xd7:
			n = 9;
			break;
		case 0xd8:
			n = 17;
			break;
		case 0xdc:
			hdr = 2;
			items = 1;
			break;
		case 0xdd:
			hdr = 4;
			items = 1;
			break;
		case 0xde:
			hdr = 2;
			items = 2;
			break;
		case 0xdf:
			hdr = 4;
			items = 2;
			break;
		default:
			return -1; /* 0xc1, never used */
		}
		if (hdr) {
			if ((size_t)hdr > left)
				return -1;
			n += (size_t)be(p + *pos, hdr);
			*pos += (size_t)hdr;
			left -= (size_t)hdr;
		}
	}
	if (!items) {
		if (n > left)
			return -1;
		*pos += n;
		return 0;
	}
	/* Each element takes at least one byte. */
	if (n > left || (items == 2 && n > left / 2))
		return -1;
	for (i = 0; i < n * (size_t)items; i++)
		if (mp_check(p, len, pos, depth + 1) < 0)
			return -1;
	return 0;
}

/* Decodes the metadata map into OUT. 0 or ROCMD_ECORRUPT. */
static int
parse_metadata(const char *desc, size_t len, struct codeobj_info *out, char *why, size_t whylen)
{
	msgpack_unpacked u;
	size_t off = 0;
	int r = ROCMD_ECORRUPT;
	uint32_t i, j;

	msgpack_unpacked_init(&u);
	if (mp_check((const unsigned char *)desc, len, &off, 0) < 0) {
		snprintf(why, whylen, "metadata note is not well-formed MessagePack");
		goto out;
	}
	off = 0;
	if (msgpack_unpack_next(&u, desc, len, &off) != MSGPACK_UNPACK_SUCCESS ||
	    u.data.type != MSGPACK_OBJECT_MAP) {
		snprintf(why, whylen, "metadata note is not a MessagePack map");
		goto out;
	}
	for (i = 0; i < u.data.via.map.size; i++) {
		const msgpack_object *key = &u.data.via.map.ptr[i].key,
		                     *v = &u.data.via.map.ptr[i].val;

		if (str_is(key, "amdhsa.target") && v->type == MSGPACK_OBJECT_STR) {
			copy_str(out->target, sizeof(out->target), v);
		} else if (str_is(key, "amdhsa.kernels") && v->type == MSGPACK_OBJECT_ARRAY) {
			for (j = 0; j < v->via.array.size && out->nkernels < CODEOBJ_MAX_KERNELS;
			     j++)
				if (v->via.array.ptr[j].type == MSGPACK_OBJECT_MAP)
					kernel_from_map(&v->via.array.ptr[j],
					                &out->k[out->nkernels++]);
		}
	}
	r = 0;
out:
	msgpack_unpacked_destroy(&u);
	return r;
}

int
codeobj_parse(const void *buf, size_t len, struct codeobj_info *out, char *why, size_t whylen)
{
	const unsigned char *b = buf;
	uint64_t shoff, shentsize, shnum, s;
	int found = 0;

	memset(out, 0, sizeof(*out));
	if (len < 64 || memcmp(b, "\177ELF", 4) != 0) {
		snprintf(why, whylen, "not an ELF file");
		return ROCMD_ECORRUPT;
	}
	if (b[4] != 2 || b[5] != 1) {
		snprintf(why, whylen, "not a little-endian ELF64 file");
		return ROCMD_ECORRUPT;
	}
	out->e_machine = (unsigned)rd(b + 18, 2);
	out->e_flags = (unsigned)rd(b + 48, 4);
	out->mach = out->e_flags & 0xff;
	if (codeobj_mach_name(out->mach) != NULL)
		snprintf(out->arch, sizeof(out->arch), "%s", codeobj_mach_name(out->mach));
	if (out->e_machine != CODEOBJ_EM_AMDGPU) {
		snprintf(why, whylen, "e_machine 0x%x is not AMDGPU (0xe0)", out->e_machine);
		return ROCMD_ECORRUPT;
	}
	shoff = rd(b + 40, 8);
	shentsize = rd(b + 58, 2);
	shnum = rd(b + 60, 2);
	if (shentsize < 64 || shoff > len || shnum > (len - shoff) / shentsize) {
		snprintf(why, whylen, "section headers out of the file");
		return ROCMD_ECORRUPT;
	}
	for (s = 0; s < shnum; s++) {
		const unsigned char *sh = b + shoff + s * shentsize;
		uint64_t off = rd(sh + 24, 8), size = rd(sh + 32, 8), p;

		if (rd(sh + 4, 4) != SHT_NOTE)
			continue;
		if (off > len || size > len - off) {
			snprintf(why, whylen, "note section out of the file");
			return ROCMD_ECORRUPT;
		}
		for (p = 0; p + 12 <= size;) {
			const unsigned char *n = b + off + p;
			uint64_t namesz = rd(n, 4), descsz = rd(n + 4, 4), type = rd(n + 8, 4);
			uint64_t nameal = (namesz + 3) & ~3ULL, descal = (descsz + 3) & ~3ULL;

			if (nameal > size - p - 12 || descal > size - p - 12 - nameal) {
				snprintf(why, whylen, "truncated note");
				return ROCMD_ECORRUPT;
			}
			if (type == NT_AMDGPU_METADATA && namesz == 7 &&
			    !memcmp(n + 12, "AMDGPU", 7)) {
				int r = parse_metadata((const char *)n + 12 + nameal, descsz, out,
				                       why, whylen);

				if (r < 0)
					return r;
				found = 1;
			}
			p += 12 + nameal + descal;
		}
	}
	if (!found) {
		snprintf(why, whylen, "no NT_AMDGPU_METADATA note (code object v2 or stripped?)");
		return ROCMD_ECORRUPT;
	}
	return 0;
}

int
codeobj_parse_file(const char *path, struct codeobj_info *out, char *why, size_t whylen)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;
	int r;

	memset(out, 0, sizeof(*out));
	if (f == NULL) {
		snprintf(why, whylen, "%s: cannot open", path);
		return ROCMD_ENOTFOUND;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    n > 256L * 1024 * 1024) {
		fclose(f);
		snprintf(why, whylen, "%s: cannot size the file", path);
		return ROCMD_EIO;
	}
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf == NULL) {
		fclose(f);
		return ROCMD_ENOMEM;
	}
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		snprintf(why, whylen, "%s: short read", path);
		return ROCMD_EIO;
	}
	fclose(f);
	r = codeobj_parse(buf, (size_t)n, out, why, whylen);
	free(buf);
	return r;
}
