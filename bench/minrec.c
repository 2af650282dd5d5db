/*
 * The floor of proftrace's design: a preload library that does the least
 * a recorder with one collector connection per program image can do.
 * Its constructor connects to $PROFTRACE_SOCKET and sends a HELLO with no
 * tail (no command line, no directory); its destructor sends an EXIT with
 * no CPU figures.  No hooks, no environment repair, no rusage.
 *
 * bench/run.py measures it beside libproftrace.so: what it costs above the
 * empty library is what a socket per process costs on the machine (the
 * socket, the connection, two messages, the collector's accept and reads),
 * whatever the library around it does.
 *
 * Built with MINREC_CONNECT_ONLY (libptminconn.so), it connects and sends
 * nothing: the part of that floor which no message format, batching or
 * deferral can remove while each image has a connection of its own.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "minframe.h"

static int minrec_fd = -1;

static void minrec_send(unsigned type, const void *body, size_t len)
{
	unsigned char msg[MINFRAME_MAX];
	size_t n = minframe_make(msg, type, body, len);

	syscall(SYS_sendto, minrec_fd, msg, n, MSG_NOSIGNAL, NULL, 0);
}

__attribute__((constructor)) static void minrec_init(void)
{
	const char *path = getenv(PT_ENV_SOCKET);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pt_rec_hello hello;
	int fd;

	if (!path || strlen(path) >= sizeof sa.sun_path)
		return;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (syscall(SYS_connect, fd, &sa, sizeof sa) < 0) {
		syscall(SYS_close, fd);
		return;
	}
#ifdef MINREC_CONNECT_ONLY
	return;         /* the fd stays open, as the floor's does, until exit */
#endif
	minrec_fd = fd;
	minframe_hello(&hello);
	minrec_send(PT_REC_HELLO, &hello, sizeof hello);
}

__attribute__((destructor)) static void minrec_fini(void)
{
	struct pt_rec_exit ex = { .how = PT_EXIT_EXIT };

	if (minrec_fd >= 0)
		minrec_send(PT_REC_EXIT, &ex, sizeof ex);
}
