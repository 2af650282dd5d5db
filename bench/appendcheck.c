/*
 * What an append-only memfd gives a reader while writers append to it
 * (doc/design.md, "The shared ring": the choice between the ring and an
 * append-only file).  Two questions, answered on the running kernel:
 *
 *  1. Can a reader that reads up to the file's size see a record that is
 *     not yet completely written?  WRITERS processes append records of
 *     random length (16 bytes to 12 KiB, so that many cross a page) with
 *     write(2) on one O_APPEND description; the reader, at the same time,
 *     reads everything below the size it last saw with pread and checks
 *     each record's checksum.  "torn" counts records the reader found
 *     incomplete below the size ("cut": places where no record began).
 *  2. What does a writer killed inside a write leave?  A writer appends
 *     records of 4 MiB and is SIGKILLed at 20 points, each followed by a
 *     small record as the next process would write; "after_kill_cut"
 *     counts the places where a cut record ran into the next one, found
 *     by the next record's magic, and "after_kill_bad" the records whose
 *     length took in what followed the cut.
 *
 *     appendcheck [WRITERS [RECORDS]]
 *
 * Prints one line of KEY VALUE pairs; exits 1 if a torn record was seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x4b434841u       /* "AHCK" */
#define BIG (4u << 20)

struct rec_head {
	uint32_t magic;
	uint32_t len;           /* bytes of the whole record */
	uint32_t pid;
	uint32_t sum;           /* of the payload */
	uint64_t seq;
};

static uint32_t checksum(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

static size_t make(unsigned char *buf, size_t len, uint64_t seq)
{
	struct rec_head h = { .magic = MAGIC, .len = (uint32_t)len,
			      .pid = (uint32_t)getpid(), .seq = seq };
	size_t i;

	for (i = sizeof h; i < len; i++)
		buf[i] = (unsigned char)(seq * 31 + i);
	h.sum = checksum(buf + sizeof h, len - sizeof h);
	memcpy(buf, &h, sizeof h);
	return len;
}

static void writer(int fd, unsigned long records, unsigned seed)
{
	static unsigned char buf[12288];
	unsigned long i;

	for (i = 0; i < records; i++) {
		size_t len = sizeof(struct rec_head) + (size_t)rand_r(&seed) % (sizeof buf - 64);

		len = (len + 7) & ~(size_t)7;
		if (write(fd, buf, make(buf, len, i)) != (ssize_t)len)
			_exit(1);
		/* a pause now and then, so that the reader reads often while
		 * writes are under way, as the collector's timer would */
		if (i % 16 == 0)
			nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
	_exit(0);
}

/* Checks the records in buf[0..n) from *off on; returns records read. */
static unsigned long scan(const unsigned char *buf, uint64_t n, uint64_t *off,
			  unsigned long *torn, unsigned long *shorts)
{
	unsigned long good = 0;
	struct rec_head h;

	while (n - *off >= sizeof h) {
		memcpy(&h, buf + *off, sizeof h);
		if (h.magic != MAGIC || h.len < sizeof h) {
			/* Not a record: a cut one before it ran into this.
			 * Find the next magic on the 8-byte grid. */
			(*shorts)++;
			do
				*off += 8;
			while (n - *off >= 4 && memcmp(buf + *off, &(uint32_t){ MAGIC }, 4));
			continue;
		}
		if (h.len > n - *off)
			break;
		if (checksum(buf + *off + sizeof h, h.len - sizeof h) != h.sum) {
			/* Complete by its length, wrong by its sum: either torn
			 * (only if the bytes are still changing) or cut and
			 * followed by the next record; tell by a reread. */
			(*torn)++;
		} else {
			good++;
		}
		*off += h.len;
	}
	return good;
}

int main(int argc, char **argv)
{
	int writers = argc > 1 ? atoi(argv[1]) : 4;
	unsigned long records = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000;
	unsigned long good = 0, torn = 0, shorts = 0, reads = 0, kills = 0;
	unsigned long total = (unsigned long)writers * records, k;
	uint64_t off = 0;
	unsigned char *buf;
	struct stat st;
	int fd, i, left = writers, status;

	fd = memfd_create("appendcheck", MFD_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_SETFL, O_APPEND) < 0)
		return perror("appendcheck: memfd"), 2;
	buf = mmap(NULL, (size_t)1 << 34, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED)
		return perror("appendcheck: mmap"), 2;

	/* 1. concurrent appends, read as they come */
	for (i = 0; i < writers; i++)
		if (fork() == 0)
			writer(fd, records, (unsigned)i + 1);
	uint64_t have = 0;

	for (;;) {
		ssize_t r;

		while (left && waitpid(-1, &status, WNOHANG) > 0)
			left--;
		if (fstat(fd, &st) < 0)
			return perror("fstat"), 2;
		/* the bytes not read yet, up to the size just seen */
		while (have < (uint64_t)st.st_size) {
			r = pread(fd, buf + have, (size_t)((uint64_t)st.st_size - have),
				  (off_t)have);
			if (r <= 0)
				break;
			have += (uint64_t)r;
		}
		reads++;
		good += scan(buf, have, &off, &torn, &shorts);
		if (!left && off >= have)
			break;
	}
	printf("writers %d records %lu read %lu torn %lu cut %lu reads %lu",
	       writers, total, good, torn, shorts, reads);

	/* 2. a writer killed inside large writes */
	close(fd);
	fd = memfd_create("appendcheck-kill", MFD_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_SETFL, O_APPEND) < 0)
		return perror("appendcheck: memfd"), 2;
	for (k = 0; k < 20; k++) {
		struct timespec ts = { 0, 30000000 + 5000000 * (long)k };
		pid_t pid = fork();

		if (pid == 0) {
			static unsigned char big[BIG];
			uint64_t seq;

			for (seq = 0;; seq++)
				if (write(fd, big, make(big, BIG, seq)) < 0)
					_exit(1);
		}
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		kills++;
		{
			unsigned char small[64];

			/* a record after the killed one, as the next process
			 * would write it */
			if (write(fd, small, make(small, 64, k)) != 64)
				return perror("write"), 2;
		}
	}
	if (fstat(fd, &st) < 0)
		return perror("fstat"), 2;
	{
		uint64_t got = 0, o = 0;
		unsigned long g2 = 0, t2 = 0, c2 = 0;
		ssize_t r;

		while (got < (uint64_t)st.st_size &&
		       (r = pread(fd, buf + got, (size_t)((uint64_t)st.st_size - got),
				  (off_t)got)) > 0)
			got += (uint64_t)r;
		g2 = scan(buf, got, &o, &t2, &c2);
		printf(" killed %lu size_mb %.1f after_kill_read %lu after_kill_bad %lu "
		       "after_kill_cut %lu\n", kills, (double)st.st_size / (1 << 20),
		       g2, t2, c2);
	}
	return torn ? 1 : 0;
}
