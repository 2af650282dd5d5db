/* wordfreq.c - count word frequencies and print the most common words. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_UNISTD_H
#include <unistd.h>
#endif

#include "sample.h"
#include "version.h" /* generated from VERSION by the Makefile */

static void count_word(const char *word, size_t len, void *ctx)
{
	++*ht_upsert(ctx, word, len);
}

static int by_count_then_word(const void *pa, const void *pb)
{
	const struct hentry *a = *(const struct hentry *const *)pa;
	const struct hentry *b = *(const struct hentry *const *)pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->key, b->key);
}

static void usage(FILE *fp)
{
	fprintf(fp, "usage: wordfreq [-n TOP] [FILE...]\n"
		    "       wordfreq --version\n");
}

int main(int argc, char **argv)
{
	struct strbuf in;
	struct htable t;
	struct hentry **ents;
	size_t nents, nwords, i, top = 10, longest = 4;
	char num[32], padded[96];
	int argi = 1;

	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("wordfreq (%s) %s\n", SAMPLE_NAME, SAMPLE_VERSION);
		return 0;
	}
	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		top = (size_t)strtoul(argv[2], NULL, 10);
		argi = 3;
	} else if (argc > 1 && argv[1][0] == '-' && argv[1][1]) {
		usage(stderr);
		return 2;
	}

	sb_init(&in);
	if (argi == argc) {
		if (sb_read_fd(&in, 0) < 0) {
			perror("wordfreq: stdin");
			return 1;
		}
	}
	for (; argi < argc; argi++) {
		int fd = open(argv[argi], O_RDONLY);

		if (fd < 0 || sb_read_fd(&in, fd) < 0) {
			perror(argv[argi]);
			return 1;
		}
		close(fd);
	}

	ht_init(&t);
	nwords = tokenize(in.buf ? in.buf : "", in.len, count_word, &t);
	ents = ht_collect(&t, &nents);
	msort(ents, nents, sizeof *ents, by_count_then_word);
	if (top > nents)
		top = nents;
	for (i = 0; i < top; i++)
		if (ents[i]->klen > longest)
			longest = ents[i]->klen;
	if (longest > 60)
		longest = 60;

	printf("%4s  %s  %s\n", "rank",
	       fmt_pad(padded, sizeof padded, "word", (int)longest, 1), "count");
	for (i = 0; i < top; i++) {
		printf("%4zu  %s  %s\n", i + 1,
		       fmt_pad(padded, sizeof padded, ents[i]->key,
			       (int)longest, 1),
		       fmt_thousands(num, sizeof num, ents[i]->count));
	}
	printf("words: %s\n", fmt_thousands(num, sizeof num, (long long)nwords));
	printf("unique: %s\n", fmt_thousands(num, sizeof num, (long long)nents));
	printf("bytes: %s\n", fmt_thousands(num, sizeof num, (long long)in.len));
	printf("crc32: %08lx\n", (unsigned long)crc32(in.buf, in.len));
	printf("adler32: %08lx\n", (unsigned long)adler32(in.buf, in.len));

	free(ents);
	ht_free(&t);
	sb_free(&in);
	return 0;
}
