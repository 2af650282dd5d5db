/*
 * fdrace: a program that closes every descriptor but its standard ones,
 * opens its own file and writes to it, over and over, while another of
 * its threads starts children; for test/integration/fd-none.py.
 *
 *   fdrace FILE N
 *
 * The writer thread loops closefrom(3), open(FILE, O_WRONLY | O_APPEND),
 * write of one line, close, until the spawner thread has started and
 * waited for N children, /bin/true each (spelt 24 ways, in turn), by
 * posix_spawn and by fork + execve in turn (and for at least 2000 lines).  Every write must return
 * the line's full length, and FILE must then hold exactly the lines
 * written, in order, every byte: a descriptor anyone else kept, and used
 * after the writer closed it and got its number back, would put other
 * bytes there or take the writer's.  Prints "lines L children N" and
 * exits 0, or says what went wrong and exits 1.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *path;
static int children;
static atomic_int spawner_done;
static long lines;
static int writer_failed, spawner_failed;

static int line_of(long i, char *buf, size_t size)
{
	return snprintf(buf, size, "line %08ld of the writer's own file\n", i);
}

static void *writer(void *arg)
{
	char buf[64];

	(void)arg;
	while (!atomic_load(&spawner_done) || lines < 2000) {
		int n = line_of(lines, buf, sizeof buf), fd;
		ssize_t w;

		closefrom(3);
		fd = open(path, O_WRONLY | O_APPEND);
		if (fd < 0) {
			fprintf(stderr, "fdrace: open %s: %s\n", path, strerror(errno));
			writer_failed = 1;
			break;
		}
		w = write(fd, buf, n);
		if (w != n) {
			fprintf(stderr, "fdrace: write of line %ld on fd %d returned %zd (%s)\n",
				lines, fd, w, w < 0 ? strerror(errno) : "short");
			writer_failed = 1;
		}
		if (close(fd) != 0) {
			fprintf(stderr, "fdrace: close(%d) after line %ld: %s\n", fd,
				lines, strerror(errno));
			writer_failed = 1;
		}
		lines++;
		if (writer_failed)
			break;
	}
	return NULL;
}

/* /bin/true spelt SPELLINGS ways ("/bin/./true", "/bin/././true"...):
 * a library that remembers what it learnt of a path reads the file again
 * for each, so that every spawn, not only the first, has it look. */
#define SPELLINGS 24

static void *spawner(void *arg)
{
	static char paths[SPELLINGS][8 + 2 * SPELLINGS];
	char *argv[] = { NULL, NULL };

	(void)arg;
	for (int k = 0; k < SPELLINGS; k++) {
		char *p = paths[k];

		p += sprintf(p, "/bin/");
		for (int j = 0; j < k; j++)
			p += sprintf(p, "./");
		sprintf(p, "true");
	}
	for (int i = 0; i < children; i++) {
		pid_t pid;
		int status, err = 0;

		argv[0] = paths[(i / 2) % SPELLINGS];

		if (i % 2 == 0) {
			err = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
		} else {
			pid = fork();
			if (pid == 0) {
				execve(argv[0], argv, environ);
				_exit(127);
			}
			if (pid < 0)
				err = errno;
		}
		if (err) {
			fprintf(stderr, "fdrace: child %d: %s\n", i, strerror(err));
			spawner_failed = 1;
			continue;
		}
		if (waitpid(pid, &status, 0) != pid || status != 0) {
			fprintf(stderr, "fdrace: child %d: status %#x (%s)\n", i, status,
				strerror(errno));
			spawner_failed = 1;
		}
	}
	atomic_store(&spawner_done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w, s;
	char want[64], *got;
	struct stat st;
	size_t off = 0;
	FILE *f;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: fdrace FILE N\n");
		return 2;
	}
	path = argv[1];
	children = atoi(argv[2]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || close(fd) != 0)
		return 1;
	pthread_create(&w, NULL, writer, NULL);
	pthread_create(&s, NULL, spawner, NULL);
	pthread_join(s, NULL);
	pthread_join(w, NULL);

	f = fopen(path, "r");
	if (!f || fstat(fileno(f), &st) != 0)
		return 1;
	got = malloc(st.st_size + 1);
	if (!got || fread(got, 1, st.st_size, f) != (size_t)st.st_size)
		return 1;
	fclose(f);
	for (long i = 0; i < lines; i++) {
		int n = line_of(i, want, sizeof want);

		if (off + n > (size_t)st.st_size || memcmp(got + off, want, n)) {
			fprintf(stderr, "fdrace: %s differs from what was written at "
				"byte %zu (line %ld): %.*s\n", path, off, i,
				(int)(st.st_size - off < 80 ? st.st_size - off : 80),
				got + off);
			return 1;
		}
		off += n;
	}
	if (off != (size_t)st.st_size) {
		fprintf(stderr, "fdrace: %s holds %zu bytes more than the %ld lines "
			"written: %.80s\n", path, (size_t)st.st_size - off, lines,
			got + off);
		return 1;
	}
	if (writer_failed || spawner_failed)
		return 1;
	printf("lines %s children %d\n", lines >= 2000 ? "2000+" : "short",
	       children);
	return 0;
}
