/*
 * proftrace stop: ask a collector to finish its capture, and wait until it
 * has, so that the capture (and its CSV) can be used as soon as we return.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "proftrace/wire.h"
#include "collect/rundir.h"
#include "base/strbuf.h"
#include "base/util.h"

#define DEFAULT_TIMEOUT 60

static const char help_text[] =
	"Tell a collector to finish its capture, and wait until it has (and\n"
	"has written its CSV).\n\n"
	"  --socket PATH      the collector's socket (default $PROFTRACE_SOCKET,\n"
	"                     else /tmp/proftrace-UID/socket)\n"
	"  --timeout SECONDS  give up waiting after this long (default 60)\n"
	"  -h, --help         show this help\n\n"
	"The full page: man proftrace-stop (proftrace-stop(1)).\n";

static int connect_to(const char *path)
{
	struct sockaddr_un a;
	int fd;

	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a.sun_path) {
		pt_warn("socket path %s is too long", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pt_warn("socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (errno == ENOENT || errno == ECONNREFUSED)
			pt_warn("no collector is listening at %s", path);
		else
			pt_warn("cannot connect to %s: %s", path,
				strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int send_stop(int fd)
{
	struct pt_frame_header h = {
		.magic = PT_WIRE_MAGIC, .version = PT_WIRE_VERSION,
		.type = PT_REC_STOP, .pid = (uint32_t)getpid(),
		.time_ns = pt_mono_ns(),
	};
	unsigned char f[PT_FRAME_HDR];

	pt_wire_put_header(f, &h);
	return send(fd, f, sizeof f, MSG_NOSIGNAL) == (ssize_t)sizeof f ? 0 : -1;
}

/*
 * The collector closes every connection, ours too, only once the capture
 * is complete.  Returns 0 at that EOF, -1 on timeout.
 */
static int wait_closed(int fd, int timeout_s)
{
	uint64_t end = pt_mono_ns() + (uint64_t)timeout_s * 1000000000u;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[256];

	for (;;) {
		uint64_t now = pt_mono_ns();
		int rc;

		if (now >= end)
			return -1;
		rc = poll(&p, 1, (int)((end - now) / 1000000 + 1));
		if (rc < 0 && errno != EINTR)
			return -1;
		if (rc <= 0)
			continue;
		/* Nothing is ever sent to us: any return ends the wait. */
		if (recv(fd, buf, sizeof buf, MSG_DONTWAIT) < 0 &&
		    (errno == EAGAIN || errno == EINTR))
			continue;
		return 0;
	}
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *sock = NULL, *end;
	int timeout = DEFAULT_TIMEOUT, c, fd;
	long n;

	while ((c = getopt_long(argc, argv, "s:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			free(sock);
			sock = pt_xstrdup(optarg);
			break;
		case 't':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || n <= 0 ||
			    n > 86400) {
				pt_warn("--timeout: expected seconds from 1 to "
					"86400, not '%s'", optarg);
				free(sock);
				return 2;
			}
			timeout = (int)n;
			break;
		case 'h':
			printf("usage: proftrace stop %s\n\n%s",
			       pt_cmd_stop.usage, help_text);
			return 0;
		default:
			return pt_cmd_usage(&pt_cmd_stop);
		}
	}
	if (optind != argc)
		return pt_cmd_usage(&pt_cmd_stop);
	/* After eval "$(proftrace daemon --detach ...)" the shell knows
	 * which collector it talks to, even on a --socket path. */
	if (!sock && getenv(PT_ENV_SOCKET) && *getenv(PT_ENV_SOCKET))
		sock = pt_xstrdup(getenv(PT_ENV_SOCKET));
	if (!sock)
		sock = pt_rundir_socket(0);

	fd = connect_to(sock);
	if (fd < 0) {
		free(sock);
		return 1;
	}
	if (send_stop(fd) < 0) {
		pt_warn("cannot send to %s: %s", sock, strerror(errno));
		close(fd);
		free(sock);
		return 1;
	}
	if (wait_closed(fd, timeout) < 0) {
		pt_warn("the collector at %s did not finish within %d s",
			sock, timeout);
		close(fd);
		free(sock);
		return 1;
	}
	close(fd);
	free(sock);
	return 0;
}

const struct pt_cmd pt_cmd_stop = {
	.name = "stop",
	.usage = "[--socket PATH] [--timeout SECONDS]",
	.summary = "finish the capture of a running daemon and wait for it",
	.run = run,
};
