/*
 * Stand-in for libFuzzer when the fuzz targets are built with gcc: runs every
 * file of a corpus folder through LLVMFuzzerTestOneInput, then N deterministic
 * mutations (bit flips, truncations, splices, byte insertions) of them. A
 * crash, sanitizer report or assertion fails the test. Usage:
 *   fuzz-NAME CORPUS_DIR [MUTATIONS]
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sample {
	uint8_t *data;
	size_t size;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int
load_file(const char *path, struct sample *s)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (f == NULL)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s->data = malloc(n > 0 ? (size_t)n : 1);
	s->size = n > 0 ? (size_t)fread(s->data, 1, (size_t)n, f) : 0;
	fclose(f);
	return 0;
}

static size_t
mutate(const struct sample *a, const struct sample *b, uint8_t *out, size_t cap)
{
	size_t n = a->size < cap ? a->size : cap;

	memcpy(out, a->data, n);
	switch (rng() % 6) {
	case 0: /* flip bits */
		for (int i = 0; n > 0 && i < 4; i++)
			out[rng() % n] ^= (uint8_t)(1u << (rng() % 8));
		break;
	case 1: /* truncate */
		n = n > 0 ? rng() % n : 0;
		break;
	case 2: /* splice the tail of another sample */
		if (b->size > 0) {
			size_t at = n > 0 ? rng() % n : 0, from = rng() % b->size;
			size_t len = b->size - from;
			if (at + len > cap)
				len = cap - at;
			memcpy(out + at, b->data + from, len);
			n = at + len;
		}
		break;
	case 3: /* insert random bytes */
		for (int i = 0; i < 8 && n < cap; i++) {
			size_t at = n > 0 ? rng() % n : 0;
			memmove(out + at + 1, out + at, n - at);
			out[at] = (uint8_t)rng();
			n++;
		}
		break;
	case 4: /* interesting bytes */
		for (int i = 0; n > 0 && i < 3; i++) {
			static const uint8_t vals[] = {0, 0xff, 0x7f, 0x80, '"', '\\', '[', '{', '}', ']'};
			out[rng() % n] = vals[rng() % sizeof(vals)];
		}
		break;
	default: /* duplicate a block */
		if (n > 0 && n * 2 <= cap) {
			memcpy(out + n, out, n);
			n *= 2;
		}
		break;
	}
	return n;
}

int
main(int argc, char **argv)
{
	struct sample *samples = NULL;
	size_t count = 0;
	long mutations = argc > 2 ? atol(argv[2]) : 10000;
	DIR *dir;
	struct dirent *de;
	uint8_t *buf;
	const size_t cap = 1 << 20;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS]\n", argv[0]);
		return 2;
	}
	dir = opendir(argv[1]);
	if (dir == NULL) {
		perror(argv[1]);
		return 1;
	}
	while ((de = readdir(dir)) != NULL) {
		char path[4096];
		struct sample s;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], de->d_name);
		if (load_file(path, &s) != 0)
			continue;
		samples = realloc(samples, (count + 1) * sizeof(*samples));
		samples[count++] = s;
	}
	closedir(dir);
	if (count == 0) {
		fprintf(stderr, "%s: empty corpus\n", argv[1]);
		return 1;
	}
	for (size_t i = 0; i < count; i++)
		LLVMFuzzerTestOneInput(samples[i].data, samples[i].size);
	buf = malloc(cap);
	for (long i = 0; i < mutations; i++) {
		const struct sample *a = &samples[rng() % count], *b = &samples[rng() % count];
		size_t n = mutate(a, b, buf, cap);
		uint8_t *exact = malloc(n ? n : 1); /* exact size so ASan sees overreads */
		memcpy(exact, buf, n);
		LLVMFuzzerTestOneInput(exact, n);
		free(exact);
	}
	printf("%zu corpus files, %ld mutations: ok\n", count, mutations);
	for (size_t i = 0; i < count; i++)
		free(samples[i].data);
	free(samples);
	free(buf);
	return 0;
}
