/*
 * Unit tests of what the conversions write with and hash with:
 *
 * - pt_direct_fopen(): every size around the alignment and the buffer,
 *   written in uneven pieces, reads back byte for byte, on a file system
 *   that takes O_DIRECT (TMPDIR, else /tmp: the file's pages must then not
 *   be in the page cache) and on one that may not (/dev/shm); a file that
 *   cannot be created gives NULL with errno.
 * - pt_par_format(): every item formatted once and emitted in order,
 *   for counts around the chunk size, and nothing emitted after emit
 *   failed.
 * - pt_hash_bytes(): reads exactly its n bytes (each length 0..80 from an
 *   allocation of exactly that size, for ASan), depends on every one of
 *   them, and not on where they lie.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/direct-out.h"
#include "views/par.h"
#include "base/util.h"

static int failures;

#define CHECK(cond, ...) do {                                   \
	if (!(cond)) {                                          \
		fprintf(stderr, "FAIL: " __VA_ARGS__);          \
		fputc('\n', stderr);                            \
		failures++;                                     \
	}                                                       \
} while (0)

static unsigned char byte_at(size_t i)
{
	return (unsigned char)(i * 131 + (i >> 12) * 7 + 1);
}

/* Pages of path in the page cache, or -1 if that cannot be told. */
static long resident_pages(const char *path)
{
	struct stat st;
	long page = sysconf(_SC_PAGESIZE), n = 0;
	unsigned char *vec;
	void *map;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || !st.st_size) {
		if (fd >= 0)
			close(fd);
		return fd < 0 ? -1 : 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	vec = malloc((size_t)(st.st_size + page - 1) / (size_t)page);
	if (vec && mincore(map, (size_t)st.st_size, vec) == 0)
		for (long i = 0; i < (st.st_size + page - 1) / page; i++)
			n += vec[i] & 1;
	else
		n = -1;
	free(vec);
	munmap(map, (size_t)st.st_size);
	return n;
}

/* Write size bytes through pt_direct_fopen() in pieces of 1, 7, 4096,
 * 1 MB + 3, ... and read them back.  Returns the resident pages after. */
static long write_and_check(const char *dir, size_t size)
{
	static const size_t pieces[] = { 1, 7, 4096, (1u << 20) + 3, 4095, 333 };
	char path[4096];
	unsigned char *want = malloc(size + 1), *got = malloc(size + 1);
	size_t off = 0, k = 0;
	FILE *f;
	long res = -1;
	int fd;
	ssize_t r;

	snprintf(path, sizeof path, "%s/pt-test-output.%ld", dir, (long)getpid());
	for (size_t i = 0; i < size; i++)
		want[i] = byte_at(i);
	f = pt_direct_fopen(path);
	CHECK(f, "pt_direct_fopen(%s): %s", path, strerror(errno));
	if (!f)
		goto out;
	while (off < size) {
		size_t n = pieces[k++ % (sizeof pieces / sizeof pieces[0])];

		if (n > size - off)
			n = size - off;
		CHECK(fwrite(want + off, 1, n, f) == n, "fwrite %zu at %zu", n, off);
		off += n;
	}
	CHECK(fclose(f) == 0, "fclose %s: %s", path, strerror(errno));
	res = resident_pages(path);     /* before reading it back */
	fd = open(path, O_RDONLY);
	r = fd < 0 ? -1 : read(fd, got, size + 1);
	if (fd >= 0)
		close(fd);
	CHECK(r == (ssize_t)size, "%s: %zd bytes read back, %zu written", path,
	      r, size);
	CHECK(r != (ssize_t)size || !memcmp(want, got, size),
	      "%s: %zu bytes differ from what was written", path, size);
	unlink(path);
out:
	free(want);
	free(got);
	return res;
}

static void test_direct(void)
{
	static const size_t sizes[] = {
		0, 1, 4095, 4096, 4097, (4u << 20) - 1, 4u << 20,
		(4u << 20) + 1, (8u << 20) + 4096, (9u << 20) + 123,
	};
	const char *tmp = getenv("TMPDIR");
	char probe[4096];
	struct statfs fs;
	int fd, direct_ok;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	/* Whether TMPDIR takes O_DIRECT at all decides what to expect. */
	snprintf(probe, sizeof probe, "%s/pt-test-output-probe.%ld", tmp,
		 (long)getpid());
	fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	direct_ok = fd >= 0;
	/* tmpfs takes O_DIRECT, but its files live in the page cache */
	if (fd >= 0 && fstatfs(fd, &fs) == 0 && fs.f_type == 0x01021994)
		direct_ok = 0;
	if (fd >= 0)
		close(fd);
	unlink(probe);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		long res = write_and_check(tmp, sizes[i]);

		/* Only the last partial block goes through the page cache. */
		if (direct_ok && res >= 0)
			CHECK(res <= 1, "%zu bytes written direct to %s, yet %ld "
			      "pages are in the page cache", sizes[i], tmp, res);
		write_and_check("/dev/shm", sizes[i]);
	}
	if (!direct_ok)
		printf("note: %s is tmpfs or refuses O_DIRECT: the page cache "
		       "was not checked\n", tmp);
	errno = 0;
	CHECK(!pt_direct_fopen("/nonexistent-dir/out.json") && errno == ENOENT,
	      "a file in a missing directory: NULL with ENOENT (errno %d)", errno);
}

struct par_test {
	struct pt_sb all;
	size_t emits, fail_at;
};

static void par_format(void *arg, size_t lo, size_t hi, struct pt_sb *sb)
{
	(void)arg;
	for (; lo < hi; lo++)
		pt_sb_addf(sb, "%zu\n", lo);
}

static int par_emit(void *arg, struct pt_sb *sb)
{
	struct par_test *t = arg;

	if (++t->emits == t->fail_at)
		return -1;
	pt_sb_add(&t->all, sb->buf, sb->len);
	return 0;
}

static void test_par(void)
{
	static const size_t counts[] = { 0, 1, 63, 64, 65, 127, 128, 129, 1000 };

	for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
		struct par_test t = { PT_SB_INIT, 0, 0 };
		struct pt_sb want = PT_SB_INIT;
		size_t n = counts[k];

		par_format(NULL, 0, n, &want);
		CHECK(pt_par_format(n, 64, par_format, par_emit, &t) == 0,
		      "pt_par_format(%zu) failed", n);
		CHECK(t.all.len == want.len && !memcmp(t.all.buf, want.buf, want.len),
		      "%zu items, chunks of 64: the text differs from one pass's", n);
		CHECK(t.emits == (n + 63) / 64, "%zu items: %zu emits", n, t.emits);
		pt_sb_release(&t.all);
		pt_sb_release(&want);
	}
	for (size_t fail_at = 1; fail_at <= 4; fail_at++) {
		struct par_test t = { PT_SB_INIT, 0, fail_at };

		CHECK(pt_par_format(1000, 64, par_format, par_emit, &t) == -1,
		      "emit failed, yet pt_par_format returned 0");
		CHECK(t.emits == fail_at, "emit called %zu times after it failed "
		      "at call %zu", t.emits - fail_at, fail_at);
		pt_sb_release(&t.all);
	}
}

static void test_hash(void)
{
	unsigned char buf[96];

	for (size_t n = 0; n <= 80; n++) {
		unsigned char *exact = malloc(n ? n : 1);
		uint32_t h;

		for (size_t i = 0; i < n; i++)
			exact[i] = byte_at(i + n);
		h = pt_hash_bytes(exact, n);
		/* the same bytes elsewhere, at every alignment */
		for (size_t a = 1; a < 9; a++) {
			memcpy(buf + a, exact, n);
			CHECK(pt_hash_bytes(buf + a, n) == h,
			      "hash of %zu bytes depends on their address", n);
		}
		/* every byte counts */
		for (size_t i = 0; i < n; i++) {
			exact[i] ^= 0x20;
			CHECK(pt_hash_bytes(exact, n) != h,
			      "hash of %zu bytes ignores byte %zu", n, i);
			exact[i] ^= 0x20;
		}
		free(exact);
	}
	CHECK(pt_hash_bytes("ab", 2) != pt_hash_bytes("ab\0", 3),
	      "hash ignores the length");
}

int main(void)
{
	test_direct();
	test_par();
	test_hash();
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
