/*
 * vmcost: what the kernel work a traced process adds costs on this
 * machine, in microseconds.  Prints one line of KEY VALUE pairs (bench/run.py
 * parses it):
 *   anon_fault_us   first write to a page of anonymous memory (stack, .bss)
 *   cow_fault_us    first write to a private page of a file (.data, GOT)
 *   shm_fault_us    first write, in a fresh mapping, to a page of a memfd
 *                   that is already in memory: what a process pays for
 *                   each page of the shared ring it writes (design.md)
 *   syscall_us      a trivial system call (getppid)
 *   connect_us      socket + connect to a Unix listener + close, with the
 *                   listener's accept + close: one connection, both sides
 *
 * On a virtual machine a page fault can cost as much as a dozen system
 * calls, which decides where a preload library's time goes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define PAGES 2000
#define CALLS 20000
#define CONNS 1000

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double touch(char *p, size_t pages)
{
	double t = now_us();
	size_t i;

	for (i = 0; i < pages; i++)
		p[i * 4096] = 1;
	return (now_us() - t) / (double)pages;
}

int main(void)
{
	char tmpl[] = "/tmp/vmcost-XXXXXX", path[64];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	double anon, cow, shm, sys, conn, t;
	int fd, lfd, i;
	char *p;

	p = mmap(NULL, (size_t)PAGES * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	anon = touch(p, PAGES);

	fd = mkstemp(tmpl);
	if (fd < 0 || ftruncate(fd, (off_t)PAGES * 4096) < 0)
		return perror("vmcost: temporary file"), 1;
	unlink(tmpl);
	p = mmap(NULL, (size_t)PAGES * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	cow = touch(p, PAGES);
	close(fd);

	/* The ring's pages exist once the first lap has written them; a new
	 * process only maps them, so populate first, then map afresh. */
	fd = memfd_create("vmcost", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)PAGES * 4096) < 0)
		return perror("vmcost: memfd"), 1;
	p = mmap(NULL, (size_t)PAGES * 4096, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	touch(p, PAGES);
	munmap(p, (size_t)PAGES * 4096);
	p = mmap(NULL, (size_t)PAGES * 4096, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	shm = touch(p, PAGES);
	munmap(p, (size_t)PAGES * 4096);
	close(fd);

	t = now_us();
	for (i = 0; i < CALLS; i++)
		getppid();
	sys = (now_us() - t) / CALLS;

	snprintf(path, sizeof path, "/tmp/vmcost-%d.sock", (int)getpid());
	strcpy(sa.sun_path, path);
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    listen(lfd, 16) < 0)
		return perror("vmcost: listener"), 1;
	t = now_us();
	for (i = 0; i < CONNS; i++) {
		int c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), a;

		if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof sa) < 0)
			return perror("vmcost: connect"), 1;
		a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		close(c);
		if (a >= 0)
			close(a);
	}
	conn = (now_us() - t) / CONNS;
	close(lfd);
	unlink(path);

	printf("anon_fault_us %.2f cow_fault_us %.2f shm_fault_us %.2f "
	       "syscall_us %.2f connect_us %.2f\n", anon, cow, shm, sys, conn);
	return 0;
}
