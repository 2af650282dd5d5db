/*
 * A stand-in for libFuzzer: runs a fuzz target (LLVMFuzzerTestOneInput)
 * on every seed given (files, or directories of files) and on random
 * mutations of each, so that the targets run where libFuzzer is not
 * available (gcc) and in the ordinary test suite under ASan and UBSan.
 *
 *     replay [-m MUTATIONS] [-s SEED] [-q] SEED_FILE_OR_DIR...
 *
 * Each seed runs as it is, then MUTATIONS times (default 0) with one to
 * four changes: a bit flipped, a byte or a 32-bit field set to a value
 * that often breaks parsers (0, 1, 0x7f, 0xff, 0x7fffffff, 64 MiB + 1...),
 * a cut, bytes inserted, or a slice duplicated.  Deterministic for a
 * given -s.  Prints the number of runs; a crash is the sanitizer's to
 * report (and fails the test).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t below(size_t n)
{
	return n ? (size_t)(next() % n) : 0;
}

static unsigned char *load(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0, len = 0, r;

	if (!f) {
		perror(path);
		exit(2);
	}
	do {
		if (cap - len < 65536)
			buf = realloc(buf, cap = cap * 2 + 65536);
		r = fread(buf + len, 1, cap - len, f);
		len += r;
	} while (r);
	fclose(f);
	*n = len;
	return buf;
}

/* Apply one random change to buf (len *n, room cap); returns buf. */
static unsigned char *mutate(unsigned char *buf, size_t *n, size_t *cap)
{
	static const uint32_t vals[] = {
		0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0x80000000u,
		0xffffffffu, 32, 40, 64u << 20, (64u << 20) + 1, 4096,
	};
	size_t pos = below(*n), len;
	uint32_t v;

	if (*cap < *n + 64) {
		*cap = *n + 64;
		buf = realloc(buf, *cap);
	}
	switch (below(6)) {
	case 0:
		if (*n)
			buf[pos] ^= (unsigned char)(1u << below(8));
		break;
	case 1:
		if (*n)
			buf[pos] = (unsigned char)vals[below(5)];
		break;
	case 2:
		v = vals[below(sizeof vals / sizeof vals[0])];
		if (*n >= 4) {
			pos = below(*n - 3);
			memcpy(buf + pos, &v, 4);
		}
		break;
	case 3:
		*n = pos;
		break;
	case 4:
		len = 1 + below(16);
		memmove(buf + pos + len, buf + pos, *n - pos);
		for (size_t i = 0; i < len; i++)
			buf[pos + i] = (unsigned char)next();
		*n += len;
		break;
	default:
		len = below(*n - pos < 48 ? *n - pos : 48);
		if (*cap < *n + len) {
			*cap = *n + len;
			buf = realloc(buf, *cap);
		}
		memmove(buf + pos + len, buf + pos, *n - pos);
		*n += len;
		break;
	}
	return buf;
}

static unsigned long runs;

static void run_seed(const char *path, long mutations)
{
	size_t n, m, cap;
	unsigned char *seed = load(path, &n), *buf;
	long i;

	LLVMFuzzerTestOneInput(seed, n);
	runs++;
	for (i = 0; i < mutations; i++) {
		int k = 1 + (int)below(4);

		cap = n + 64;
		buf = malloc(cap);
		memcpy(buf, seed, n);
		m = n;
		while (k--)
			buf = mutate(buf, &m, &cap);
		/* Exactly m bytes, so that ASan sees a read past the end. */
		{
			unsigned char *exact = malloc(m ? m : 1);

			memcpy(exact, buf, m);
			LLVMFuzzerTestOneInput(exact, m);
			free(exact);
		}
		free(buf);
		runs++;
	}
	free(seed);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	long mutations = 0;
	int i, quiet = 0;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-m") && i + 1 < argc)
			mutations = atol(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			rng = strtoull(argv[++i], NULL, 0) | 1;
		else if (!strcmp(argv[i], "-q"))
			quiet = 1;
		else {
			fprintf(stderr, "usage: replay [-m MUTATIONS] [-s SEED] "
				"[-q] SEED_FILE_OR_DIR...\n");
			return 2;
		}
	}
	for (; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;
		char **names = NULL;
		size_t nn = 0, j;

		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 2;
		}
		if (!S_ISDIR(st.st_mode)) {
			run_seed(argv[i], mutations);
			continue;
		}
		d = opendir(argv[i]);
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			names = realloc(names, (nn + 1) * sizeof *names);
			names[nn] = malloc(strlen(argv[i]) + strlen(de->d_name) + 2);
			sprintf(names[nn++], "%s/%s", argv[i], de->d_name);
		}
		if (d)
			closedir(d);
		qsort(names, nn, sizeof *names, cmp);
		for (j = 0; j < nn; j++) {
			run_seed(names[j], mutations);
			free(names[j]);
		}
		free(names);
	}
	if (!quiet)
		printf("replay: %lu runs\n", runs);
	return 0;
}
