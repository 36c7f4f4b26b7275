/*
 * GPU names from the system's PCI ID database (pci.ids, as Debian's pci.ids
 * and hwdata packages install it; see gpu.h). The format: a vendor line
 * "1002  Advanced Micro Devices, Inc. [AMD/ATI]" at column 0, its devices
 * below it as "\t15bf  Phoenix1", their subsystems as "\t\t..." and comments
 * as "#..."; the file is read line by line and left at the first match, so
 * its 1.3 MB are never held whole. An unreadable or absent file is no name,
 * never an error.
 */
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"

static const char *const pci_ids_paths[] = {
	"/usr/share/misc/pci.ids",   /* Debian's pci.ids */
	"/usr/share/hwdata/pci.ids", /* hwdata (Fedora, Arch) */
	NULL,
};

/* The 4-hex-digit ID at the start of LINE, or -1. */
static long
hex_id(const char *line)
{
	char *end;
	long v;

	if (strspn(line, "0123456789abcdefABCDEF") != 4)
		return -1;
	v = strtol(line, &end, 16);
	return end == line + 4 && (*end == ' ' || *end == '\t') ? v : -1;
}

static int
lookup(FILE *f, unsigned vendor, unsigned device, char *out, size_t len)
{
	char line[512];
	int in_vendor = 0;

	while (fgets(line, sizeof(line), f) != NULL) {
		char *name;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (line[0] != '\t') {
			if (in_vendor)
				return -1; /* the vendor's devices are over */
			in_vendor = hex_id(line) == (long)vendor;
			continue;
		}
		if (!in_vendor || line[1] == '\t' || hex_id(line + 1) != (long)device)
			continue;
		name = line + 5;
		name += strspn(name, " \t");
		name[strcspn(name, "\r\n")] = '\0';
		if (name[0] == '\0')
			return -1;
		snprintf(out, len, "%s", name);
		return 0;
	}
	return -1;
}

int
rocmd_gpu_pci_name(const char *root, unsigned vendor, unsigned device, char *out, size_t len)
{
	const char *r = root != NULL && strcmp(root, "/") != 0 ? root : "";

	for (size_t i = 0; pci_ids_paths[i] != NULL; i++) {
		char path[4096];
		FILE *f;
		int rc;

		snprintf(path, sizeof(path), "%s%s", r, pci_ids_paths[i]);
		if ((f = rocmd_fs_fopen(path, "r")) == NULL)
			continue;
		rc = lookup(f, vendor, device, out, len);
		fclose(f);
		if (rc == 0)
			return 0;
	}
	return -1;
}
