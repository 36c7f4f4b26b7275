/*
 * AMDGPU ELF header reading: see amdgpu-elf.h. The EF_AMDGPU_MACH table
 * follows LLVM's include/llvm/BinaryFormat/ELF.h; the feature bits are those
 * of code object v4 and later (EI_ABIVERSION >= 2), the only ones that carry
 * xnack/sramecc as on/off/any.
 */
#include "amdgpu-elf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static const struct {
	unsigned mach;
	const char *name;
} mach_table[] = {
    {0x020, "gfx600"},        {0x021, "gfx601"},          {0x022, "gfx700"},
    {0x023, "gfx701"},        {0x024, "gfx702"},          {0x025, "gfx703"},
    {0x026, "gfx704"},        {0x028, "gfx801"},          {0x029, "gfx802"},
    {0x02a, "gfx803"},        {0x02b, "gfx810"},          {0x02c, "gfx900"},
    {0x02d, "gfx902"},        {0x02e, "gfx904"},          {0x02f, "gfx906"},
    {0x030, "gfx908"},        {0x031, "gfx909"},          {0x032, "gfx90c"},
    {0x033, "gfx1010"},       {0x034, "gfx1011"},         {0x035, "gfx1012"},
    {0x036, "gfx1030"},       {0x037, "gfx1031"},         {0x038, "gfx1032"},
    {0x039, "gfx1033"},       {0x03a, "gfx602"},          {0x03b, "gfx705"},
    {0x03c, "gfx805"},        {0x03d, "gfx1035"},         {0x03e, "gfx1034"},
    {0x03f, "gfx90a"},        {0x040, "gfx940"},          {0x041, "gfx1100"},
    {0x042, "gfx1013"},       {0x043, "gfx1150"},         {0x044, "gfx1103"},
    {0x045, "gfx1036"},       {0x046, "gfx1101"},         {0x047, "gfx1102"},
    {0x048, "gfx1200"},       {0x04a, "gfx1151"},         {0x04b, "gfx941"},
    {0x04c, "gfx942"},        {0x04e, "gfx1201"},         {0x04f, "gfx950"},
    {0x051, "gfx9-generic"},  {0x052, "gfx10-1-generic"}, {0x053, "gfx10-3-generic"},
    {0x054, "gfx11-generic"}, {0x055, "gfx1152"},         {0x058, "gfx1153"},
    {0x059, "gfx12-generic"}, {0x05f, "gfx9-4-generic"},
};

#define EF_AMDGPU_MACH 0x0ff
#define EF_XNACK_V4 0x300
#define EF_SRAMECC_V4 0xc00
#define EF_ON_OFF_SHIFT_XNACK 8
#define EF_ON_OFF_SHIFT_SRAMECC 10

const char *
rocmd_amdgpu_mach_name(unsigned mach)
{
	for (size_t i = 0; i < sizeof(mach_table) / sizeof(mach_table[0]); i++)
		if (mach_table[i].mach == mach)
			return mach_table[i].name;
	return NULL;
}

unsigned
rocmd_amdgpu_mach_of(const char *gfx)
{
	size_t n = strcspn(gfx, ":");

	for (size_t i = 0; i < sizeof(mach_table) / sizeof(mach_table[0]); i++)
		if (strlen(mach_table[i].name) == n && strncmp(mach_table[i].name, gfx, n) == 0)
			return mach_table[i].mach;
	return 0;
}

static uint16_t
le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ":xnack+" for a v4 feature field VALUE (1 any, 2 off, 3 on), or "". */
static const char *
feature(unsigned value, const char *on, const char *off)
{
	return value == 3 ? on : value == 2 ? off : "";
}

int
rocmd_amdgpu_elf_arch(const void *buf, size_t len, char *out, size_t outlen)
{
	const unsigned char *p = buf;
	const char *name;
	uint32_t flags;

	if (outlen > 0)
		out[0] = '\0';
	if (len < 64 || memcmp(p, "\177ELF", 4) != 0 || p[4] != 2 /* ELFCLASS64 */ ||
	    p[5] != 1 /* little-endian */ || le16(p + 18) != ROCMD_EM_AMDGPU)
		return ROCMD_EINVAL;
	flags = le32(p + 48);
	name = rocmd_amdgpu_mach_name(flags & EF_AMDGPU_MACH);
	if (name == NULL) {
		snprintf(out, outlen, "mach-0x%02x", (unsigned)(flags & EF_AMDGPU_MACH));
		return ROCMD_ENOTFOUND;
	}
	if (p[8] >= 2) /* code object v4+: EI_ABIVERSION */
		snprintf(
		    out, outlen, "%s%s%s", name,
		    feature((flags & EF_SRAMECC_V4) >> EF_ON_OFF_SHIFT_SRAMECC, ":sramecc+",
		            ":sramecc-"),
		    feature((flags & EF_XNACK_V4) >> EF_ON_OFF_SHIFT_XNACK, ":xnack+", ":xnack-"));
	else
		snprintf(out, outlen, "%s", name);
	return 0;
}

int
rocmd_amdgpu_file_arch(const char *path, char *out, size_t outlen)
{
	unsigned char hdr[64];
	size_t n;
	FILE *f;

	if (outlen > 0)
		out[0] = '\0';
	f = fopen(path, "rb");
	if (f == NULL)
		return rocmd_err_errno(errno);
	n = fread(hdr, 1, sizeof(hdr), f);
	if (n < sizeof(hdr) && ferror(f)) {
		int err = rocmd_err_errno(errno);
		fclose(f);
		return err;
	}
	fclose(f);
	return rocmd_amdgpu_elf_arch(hdr, n, out, outlen);
}

int
rocmd_amdgpu_gfx_from_target_version(uint64_t v, char *out, size_t outlen)
{
	unsigned major = (unsigned)(v / 10000), minor = (unsigned)(v / 100 % 100),
	         step = (unsigned)(v % 100);

	if (outlen > 0)
		out[0] = '\0';
	if (v == 0 || major == 0 || minor > 15 || step > 15)
		return ROCMD_EINVAL;
	snprintf(out, outlen, "gfx%u%x%x", major, minor, step);
	return 0;
}
