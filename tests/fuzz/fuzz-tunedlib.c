/*
 * Fuzz target for the tuned library's parsers: exports in JSON and CSV (and,
 * through the same JSON reader, the index format) go through
 * tunedlib_import() against a fixed local key. Whatever parses must hold
 * only valid fields: it is exported again and the export must import back to
 * the same entries, and the selection must cope with every entry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "kernels/tunedlib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tune_key local;
	struct tunedlib *lib = NULL, *back = NULL;
	struct tunedlib_choice ch;
	char why[512], *text = NULL;
	size_t len = 0;
	int i, csv;

	/* The key of the corpus files. */
	memset(&local, 0, sizeof(local));
	strcpy(local.backend, "cpu");
	strcpy(local.arch, "x86_64");
	strcpy(local.device, "AMD EPYC");
	local.compute_units = 2;
	strcpy(local.driver, "linux 6.18.44-fc-v782");
	strcpy(local.runtime, "rocmd-cpu 1");
	strcpy(local.compiler, "cc 12.2.0");
	strcpy(local.source_hash, "59f92d3ccf75b658");
	if (tunedlib_import((const char *)data, size, &local, &lib, why, sizeof(why)) != 0)
		return 0;
	for (i = 0; i < tunedlib_count(lib); i++) {
		const struct tunedlib_entry *e = tunedlib_entry_at(lib, i);

		if (!(e->winner_ms > 0) || e->default_ms < 0 || e->code != NULL ||
		    strlen(e->config) == 0)
			abort();
		tunedlib_select(lib, space_cpu(), &e->p, NULL, &ch);
	}
	for (csv = 0; csv < 2; csv++) {
		if ((csv ? tunedlib_export_csv(lib, &text, &len)
		         : tunedlib_export_json(lib, &text, &len)) != 0)
			abort();
		if (tunedlib_import(text, len, &local, &back, why, sizeof(why)) != 0 ||
		    tunedlib_count(back) != tunedlib_count(lib))
			abort();
		for (i = 0; i < tunedlib_count(lib); i++)
			if (strcmp(tunedlib_entry_at(lib, i)->config,
			           tunedlib_entry_at(back, i)->config) != 0)
				abort();
		tunedlib_free(back);
		back = NULL;
		free(text);
		text = NULL;
	}
	tunedlib_free(lib);
	return 0;
}
