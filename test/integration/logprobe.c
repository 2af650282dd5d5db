/*
 * logprobe: who can open the run log, for test/integration/runlog-open.py
 * (doc/design.md, "The transport").
 *
 *   logprobe serve CMD [ARG...]  create a run log as the collector does,
 *                                run CMD with PROFTRACE_LOG naming it
 *                                (/proc/PID/fd/N of this process), then
 *                                print "record PID" for each HELLO the
 *                                final drain takes, and "lost N" for the
 *                                bytes it stepped over; exit as CMD
 *   logprobe inherit CMD [ARG...]  the same, but CMD inherits the log at
 *                                fd 56 and PROFTRACE_LOG is /proc/self/fd/56
 *   logprobe put                 open $PROFTRACE_LOG as an image would and
 *                                append a HELLO of getpid(); print
 *                                "put PID", or "open: ERROR" and exit 3
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/frame.h"
#include "collect/log.h"
#include "pt-log.h"

static int take(void *ctx, uint64_t stream, uint32_t flags,
		const unsigned char *frame, size_t len)
{
	struct pt_frame_header h;
	struct pt_record rec;
	const char *why = NULL;

	(void)ctx;
	(void)flags;
	if (pt_frame_check_whole(frame, len, &h, &rec, &why) < 0 ||
	    h.type != PT_REC_HELLO || stream != h.pid)
		return -1;
	printf("record %u\n", h.pid);
	return 0;
}

static int serve(char **cmd, int inherit)
{
	struct pt_log_reader rd;
	char path[64];
	int fd = pt_log_create(&rd), status;
	pid_t pid;

	if (fd < 0) {
		perror("logprobe: memfd");
		return 2;
	}
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)getpid(), fd);
	setenv(PT_ENV_LOG, inherit ? "/proc/self/fd/56" : path, 1);
	pid = fork();
	if (pid == 0) {
		if (inherit && dup2(fd, 56) < 0)
			_exit(127);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 2;
	fflush(stdout);
	pt_log_drain(&rd, 0, 1, take, NULL);
	printf("lost %llu\n", (unsigned long long)rd.st.lost_bytes);
	pt_log_close(&rd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int put(void)
{
	const char *path = getenv(PT_ENV_LOG);
	unsigned char buf[PT_FRAME_HDR + sizeof(struct pt_rec_hello)];
	struct pt_frame_header h = {
		.magic = PT_WIRE_MAGIC, .version = PT_WIRE_VERSION,
		.type = PT_REC_HELLO, .pid = (uint32_t)getpid(),
		.length = sizeof(struct pt_rec_hello),
		.raw_length = sizeof(struct pt_rec_hello),
		.time_ns = 1,
	};
	unsigned char *hello = buf + PT_FRAME_HDR;
	int fd = path ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;

	if (fd < 0) {
		printf("open: %s\n", path ? strerror(errno) : "no " PT_ENV_LOG);
		return 3;
	}
	pt_wire_put_header(buf, &h);
	memset(hello, 0, sizeof(struct pt_rec_hello));
	pt_wire_put32(hello + PT_OFF(pt_rec_hello, ppid), (uint32_t)getppid());
	pt_wire_put32(hello + PT_OFF(pt_rec_hello, kind), PT_HELLO_IMAGE);
	pt_wire_put64(hello + PT_OFF(pt_rec_hello, start_ns), 1);
	if (pt_log_put(fd, h.pid, 0, buf, sizeof buf) < 0) {
		printf("write: %s\n", strerror(errno));
		return 4;
	}
	printf("put %u\n", h.pid);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "serve"))
		return serve(argv + 2, 0);
	if (argc > 2 && !strcmp(argv[1], "inherit"))
		return serve(argv + 2, 1);
	if (argc == 2 && !strcmp(argv[1], "put"))
		return put();
	fprintf(stderr, "usage: logprobe serve|inherit CMD [ARG...] | "
		"logprobe put\n");
	return 2;
}
