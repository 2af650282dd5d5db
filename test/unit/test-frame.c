/*
 * Frames from the library's encoder through the collector's decoder:
 * small frames, large ones deflated (owner context) and streamed raw
 * (foreign context, as in a vfork child), the decoder's refusal of
 * damaged input, and the SPAWN and FORK frames held until their child is
 * reaped (defer.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/frame.h"
#include "pt-preload.h"

/* What state.c provides in the library. */
struct pt_state pt;
struct pt_real pt_real;
static int fake_foreign;

int pt_is_owner(void) { return !fake_foreign; }
uint64_t pt_now_ns(void) { return 42; }
uint64_t pt_realtime_ns(void) { return 1000000042; }

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* Read everything one connection sends until EOF. */
static unsigned char *drain(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	ssize_t r;

	for (;;) {
		if (cap - n < 65536)
			buf = realloc(buf, cap *= 2);
		r = recv(fd, buf + n, cap - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return buf;
}

/* Decode the frame at *p; advance *p. Returns 0 or -1. */
static int decode(const unsigned char **p, const unsigned char *end,
		  struct pt_record *rec, unsigned char **raw)
{
	struct pt_frame_header h;
	const char *why = NULL;

	*raw = NULL;
	if ((size_t)(end - *p) < sizeof h ||
	    pt_frame_header_decode(*p, &h, &why) < 0) {
		fprintf(stderr, "header: %s\n", why ? why : "short");
		return -1;
	}
	if ((size_t)(end - *p) < sizeof h + h.length)
		return -1;
	if (h.flags & PT_FRAME_DEFLATED) {
		*raw = pt_frame_inflate(&h, *p + sizeof h, &why);
		if (!*raw)
			return -1;
	}
	if (pt_record_parse(&h, *raw ? *raw : *p + sizeof h, rec, &why) < 0) {
		fprintf(stderr, "parse: %s\n", why);
		return -1;
	}
	*p += sizeof h + h.length;
	return 0;
}

static void test_small(void)
{
	char *argv[] = { "cc", "-c", "a b.c", "", "\xff\xfe", NULL };
	char *envp[] = { "HOME=/root", "OPAM_PACKAGE_NAME=dune",
			 "GITHUB_TOKEN=x", "CI_JOB_ID=7", "MY_VARX=0",
			 "zeta=1", "MY_VAR=2", "MZ=3", NULL };
	struct pt_chan ch = { .kind = PT_CHAN_SOCK, .direct = 1, .owner = 1 };
	struct pt_body b = { .type = PT_REC_HELLO, .fixed_len = 32 };
	const unsigned char *p;
	unsigned char *buf, *raw;
	struct pt_record rec;
	size_t n;
	int sv[2];

	socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
	ch.fd = sv[0];
	ch.pid = getpid();
	pt_wire_put32(b.fixed, 1234);
	pt_wire_put32(b.fixed + 8, PT_HELLO_IMAGE);
	pt_wire_put64(b.fixed + 24, 41);
	b.exe = "/usr/bin/cc";
	b.cwd = "/tmp";
	b.argv = argv;
	b.envp = envp;
	CHECK(pt_send_record(&ch, &b, 42) == 0, "send");
	close(sv[0]);
	buf = drain(sv[1], &n);
	close(sv[1]);
	p = buf;
	CHECK(decode(&p, buf + n, &rec, &raw) == 0, "decode");
	CHECK(p == buf + n, "one frame");
	CHECK(rec.hdr.type == PT_REC_HELLO && rec.hdr.time_ns == 42, "header");
	CHECK(!(rec.hdr.flags & PT_FRAME_DEFLATED), "small frames travel raw");
	CHECK(rec.hdr.pid == (uint32_t)getpid(), "pid");
	CHECK(rec.u.hello.ppid == 1234 && rec.u.hello.start_ns == 41, "fixed");
	CHECK(rec.argc == 5, "argc %zu", rec.argc);
	for (n = 0; n < 5 && rec.argc == 5; n++)
		CHECK(!strcmp(rec.argv[n], argv[n]), "argv[%zu]", n);
	CHECK(rec.exe && !strcmp(rec.exe, "/usr/bin/cc"), "exe");
	CHECK(rec.cwd && !strcmp(rec.cwd, "/tmp"), "cwd");
	/* Allowlisted names and those of $PROFTRACE_ENV only, whole names,
	 * and never a secret. */
	CHECK(rec.envc == 4, "envc %zu", rec.envc);
	CHECK(rec.envc == 4 && !strcmp(rec.env[0], "OPAM_PACKAGE_NAME=dune") &&
	      !strcmp(rec.env[1], "CI_JOB_ID=7") &&
	      !strcmp(rec.env[2], "zeta=1") && !strcmp(rec.env[3], "MY_VAR=2"),
	      "env");
	pt_record_free(&rec);
	free(buf);
}

/* One small EXEC with want_cwd, as received. */
static void send_exec_cwd(struct pt_record *rec, unsigned char **buf)
{
	char *argv[] = { "true", NULL };
	struct pt_chan ch = { .kind = PT_CHAN_SOCK, .direct = 1, .owner = 1 };
	struct pt_body b = { .type = PT_REC_EXEC, .fixed_len = 8 };
	const unsigned char *p;
	unsigned char *raw = NULL;
	size_t n;
	int sv[2];

	socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
	ch.fd = sv[0];
	ch.pid = getpid();
	b.argv = argv;
	b.want_cwd = 1;
	CHECK(pt_send_record(&ch, &b, 42) == 0, "send");
	close(sv[0]);
	*buf = drain(sv[1], &n);
	close(sv[1]);
	p = *buf;
	CHECK(decode(&p, *buf + n, rec, &raw) == 0 && p == *buf + n, "one frame");
}

/* The working directory, written by getcwd() into the frame itself. */
static void test_cwd(void)
{
	char cwd[4096], dir[64], here[4096];
	struct pt_record rec;
	unsigned char *buf;

	send_exec_cwd(&rec, &buf);
	CHECK(rec.cwd && getcwd(cwd, sizeof cwd) && !strcmp(rec.cwd, cwd),
	      "cwd %s", rec.cwd ? rec.cwd : "(none)");
	CHECK(rec.argc == 1 && !strcmp(rec.argv[0], "true"), "argv");
	pt_record_free(&rec);
	free(buf);
	/* A directory removed under us: no CWD item, the rest intact. */
	snprintf(dir, sizeof dir, "/tmp/pt-test-cwd-%d", getpid());
	if (getcwd(here, sizeof here) && mkdir(dir, 0700) == 0 &&
	    chdir(dir) == 0 && rmdir(dir) == 0) {
		send_exec_cwd(&rec, &buf);
		CHECK(!rec.cwd, "no cwd for a removed directory");
		CHECK(rec.argc == 1, "argv intact");
		pt_record_free(&rec);
		free(buf);
		CHECK(chdir(here) == 0, "chdir back");
	}
}

/* A listening socket that conn.c will reach for an AUX frame. */
static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	unlink(path);
	strcpy(sa.sun_path, path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 4) < 0) {
		perror("listen");
		exit(1);
	}
	return fd;
}

struct reader {
	int lfd;
	unsigned char *buf;
	size_t len;
};

/* The collector's side, concurrently: a large frame needs a reader. */
static void *accept_and_drain(void *arg)
{
	struct reader *r = arg;
	int cfd = accept(r->lfd, NULL, NULL);

	r->buf = drain(cfd, &r->len);
	close(cfd);
	return NULL;
}

/* A 1 MiB argv sent as one large frame. */
static void test_large(int foreign, int compressible)
{
	enum { NARGS = 256, ARGLEN = 4096 };
	char cwd[4096], path[64], **argv = calloc(NARGS + 1, sizeof *argv);
	struct pt_chan ch = { .kind = PT_CHAN_SOCK, .direct = 1, .owner = 1 };
	struct pt_body b = { .type = PT_REC_EXEC, .fixed_len = 8 };
	const unsigned char *p;
	unsigned char *buf, *raw;
	struct pt_record rec;
	size_t n, i;
	int lfd;
	unsigned seed = 1;
	struct reader rd;
	pthread_t th;

	snprintf(path, sizeof path, "/tmp/pt-test-frame-%d.sock", getpid());
	pt.socket_path = 1;
	strcpy(PT_STR(socket_path), path);
	lfd = listen_at(path);
	for (i = 0; i < NARGS; i++) {
		argv[i] = malloc(ARGLEN + 1);
		for (n = 0; n < ARGLEN; n++) {
			seed = seed * 1103515245 + 12345;
			argv[i][n] = compressible ? (char)('a' + n % 7)
						  : (char)(1 + (seed >> 16) % 255);
		}
		argv[i][ARGLEN] = '\0';
	}
	b.argv = argv;
	b.path = "/bin/true";
	b.want_cwd = 1;         /* cannot fit the stack buffer: asked again */
	rd.lfd = lfd;
	pthread_create(&th, NULL, accept_and_drain, &rd);
	/* A channel not yet opened: the frame goes over a connection that
	 * starts with HELLO AUX, then it. */
	ch.fd = -1;
	ch.hello = PT_HELLO_AUX;
	ch.pid = getpid();
	fake_foreign = foreign;
	ch.owner = !foreign;
	CHECK(pt_send_record(&ch, &b, 42) == 0, "send large");
	pt_chan_put(&ch);
	fake_foreign = 0;
	pthread_join(th, NULL);
	buf = rd.buf;
	n = rd.len;
	close(lfd);
	unlink(path);
	p = buf;
	CHECK(decode(&p, buf + n, &rec, &raw) == 0, "aux hello");
	CHECK(rec.hdr.type == PT_REC_HELLO && rec.u.hello.kind == PT_HELLO_AUX,
	      "aux kind");
	pt_record_free(&rec);
	{
		struct pt_frame_header h;
		const char *why;

		pt_frame_header_decode(p, &h, &why);
		CHECK(!!(h.flags & PT_FRAME_DEFLATED) == (!foreign && compressible),
		      "deflated only by the owner and when it pays (foreign %d)",
		      foreign);
	}
	CHECK(decode(&p, buf + n, &rec, &raw) == 0, "large frame");
	CHECK(p == buf + n, "nothing after it");
	CHECK(rec.argc == NARGS, "argc %zu", rec.argc);
	for (i = 0; i < rec.argc && i < NARGS; i++)
		if (strcmp(rec.argv[i], argv[i])) {
			CHECK(0, "argv[%zu] differs", i);
			break;
		}
	CHECK(rec.path && !strcmp(rec.path, "/bin/true"), "path");
	CHECK(rec.cwd && getcwd(cwd, sizeof cwd) && !strcmp(rec.cwd, cwd),
	      "cwd of a large frame");
	pt_record_free(&rec);
	free(raw);
	free(buf);
	for (i = 0; i < NARGS; i++)
		free(argv[i]);
	free(argv);
}

/* A SPAWN of child pid with argv { "cc", tag }. */
static void spawn_body(struct pt_body *b, pid_t child, char **argv)
{
	memset(b, 0, sizeof *b);
	b->type = PT_REC_SPAWN;
	b->fixed_len = 8;
	pt_wire_put32(b->fixed, (uint32_t)child);
	pt_wire_put32(b->fixed + 4, PT_CALL_POSIX_SPAWN);
	b->path = "/usr/bin/cc";
	b->argv = argv;
}

/* The frames one end of a socketpair holds now, each message checked. */
static size_t drain_spawns(int fd, pid_t *children, size_t max)
{
	unsigned char buf[8192];
	const unsigned char *p;
	unsigned char *raw;
	struct pt_record rec;
	size_t k = 0;
	ssize_t r;

	while ((r = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
		for (p = buf; p < buf + r && k < max;) {
			if (decode(&p, buf + r, &rec, &raw) < 0) {
				CHECK(0, "a held frame does not decode");
				return k;
			}
			CHECK(rec.hdr.type == PT_REC_SPAWN, "type %u", rec.hdr.type);
			CHECK(rec.hdr.time_ns == 1000 + rec.u.spawn.child_pid,
			      "a held frame keeps its own time");
			CHECK(rec.argc == 2 && !strcmp(rec.argv[0], "cc"), "argv");
			children[k++] = (pid_t)rec.u.spawn.child_pid;
			pt_record_free(&rec);
			free(raw);
		}
	return k;
}

static void test_defer(void)
{
	char *argv[] = { "cc", "x.c", NULL };
	char big[PT_DEFER_BYTES];
	char *big_argv[] = { "cc", big, NULL };
	struct pt_chan ch = { .kind = PT_CHAN_SOCK, .direct = 1, .owner = 1 }, foreign;
	unsigned char out[PT_DEFER_BYTES];
	struct pt_body b;
	pid_t got[16];
	size_t n;
	int sv[2];
	pid_t c;

	socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
	ch.fd = sv[0];
	ch.pid = getpid();
	/* Eight are held, the ninth is refused: the caller sends it. */
	for (c = 1; c <= 9; c++) {
		spawn_body(&b, c, argv);
		CHECK(pt_defer_hold(&ch, &b, c, 1000 + (uint64_t)c) == (c <= 8 ? 0 : -1),
		      "hold child %d", (int)c);
	}
	CHECK(drain_spawns(sv[1], got, 16) == 0, "holding sends nothing");
	/* Taken by child, exactly as it would have been sent. */
	n = pt_defer_take(5, out);
	CHECK(n > 32, "child 5 held");
	CHECK(pt_defer_take(5, out) == 0, "taken once");
	CHECK(pt_defer_take(99, out) == 0, "nothing held for child 99");
	send(sv[0], out, n, 0);
	CHECK(drain_spawns(sv[1], got, 16) == 1 && got[0] == 5, "the frame of 5");
	/* Not the owner's, or too big: not held. */
	foreign = ch;
	foreign.owner = 0;
	spawn_body(&b, 20, argv);
	CHECK(pt_defer_hold(&foreign, &b, 20, 1020) == -1, "a foreign channel");
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	spawn_body(&b, 21, big_argv);
	CHECK(pt_defer_hold(&ch, &b, 21, 1021) == -1, "a frame too big to hold");
	/* A foreign flush sends nothing; the owner's sends the other seven. */
	pt_defer_flush(&foreign);
	CHECK(drain_spawns(sv[1], got, 16) == 0, "foreign flush");
	pt_defer_flush(&ch);
	n = drain_spawns(sv[1], got, 16);
	CHECK(n == 7, "flush sent %zu", n);
	for (c = 0; c < (pid_t)n; c++)
		CHECK(got[c] == (c < 4 ? c + 1 : c + 2), "flushed %d", (int)got[c]);
	/* A fork child forgets what its parent held. */
	spawn_body(&b, 30, argv);
	CHECK(pt_defer_hold(&ch, &b, 30, 1030) == 0, "hold 30");
	pt_defer_forget();
	pt_defer_flush(&ch);
	CHECK(drain_spawns(sv[1], got, 16) == 0, "forgotten");
	close(sv[0]);
	close(sv[1]);
}

/* An EXEC record of pid, as a fork child announces it. */
static void exec_rec(struct pt_body *b, char **argv)
{
	memset(b, 0, sizeof *b);
	b->type = PT_REC_EXEC;
	b->fixed_len = 8;
	pt_wire_put32(b->fixed, 1);
	pt_wire_put32(b->fixed + 4, PT_CALL_EXECVE);
	b->path = "/bin/true";
	b->argv = argv;
}

/* The types and pids of the frames in one message on fd, or 0 frames. */
static size_t drain_types(int fd, unsigned *types, pid_t *pids, size_t max)
{
	unsigned char buf[16384];
	const unsigned char *p;
	unsigned char *raw;
	struct pt_record rec;
	size_t k = 0;
	ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);

	for (p = buf; r > 0 && p < buf + r && k < max; k++) {
		if (decode(&p, buf + r, &rec, &raw) < 0) {
			CHECK(0, "a frame from the mailbox does not decode");
			break;
		}
		types[k] = rec.hdr.type;
		pids[k] = (pid_t)rec.hdr.pid;
		pt_record_free(&rec);
		free(raw);
	}
	return k;
}

/*
 * mailbox.c, across a real fork: the child leaves its EXEC in the shared
 * slot and exits; the parent, reaping it, gets the frame back exactly.
 * A slot closed by the parent's flush makes the child send it itself; a
 * failed exec takes the frame back; every reservation is freed again.
 */
static void test_mailbox(void)
{
	char *argv[] = { "true", "--child", NULL };
	unsigned char out[PT_MBOX_BYTES];
	struct pt_chan ch = { .kind = PT_CHAN_SOCK, .direct = 1, .owner = 1 };
	unsigned types[8];
	pid_t pids[8], child;
	struct pt_body b;
	int sv[2], slot, st, i, slots[PT_MBOX_SLOTS + 1];
	size_t n;

	socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
	pt.owner = getpid();
	ch.fd = sv[0];
	ch.pid = getpid();

	/* Left by the child, taken by the parent once. */
	slot = pt_mbox_reserve();
	CHECK(slot >= 0, "reserve");
	child = fork();
	if (child == 0) {
		struct pt_chan c = { .owner = 1, .fd = -1, .pid = getpid() };

		pt.owner = c.pid;
		exec_rec(&b, argv);
		_exit(pt_mbox_put(slot, &c, &b, 4242) == 0 ? 0 : 1);
	}
	pt_mbox_forked(slot, child);
	waitpid(child, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child left its EXEC");
	CHECK(drain_types(sv[1], types, pids, 8) == 0, "nothing sent");
	n = pt_mbox_take(&ch, child, out);
	CHECK(n > 32, "taken: %zu bytes", n);
	CHECK(pt_mbox_take(&ch, child, out) == 0, "taken once");
	send(sv[0], out, n, 0);
	CHECK(drain_types(sv[1], types, pids, 8) == 1 &&
	      types[0] == PT_REC_EXEC && pids[0] == child,
	      "the child's own EXEC, with its pid");

	/* Closed by the parent's flush (its exec or EXIT): the child's put
	 * fails, and it sends the EXEC itself. */
	slot = pt_mbox_reserve();
	pt_mbox_forked(slot, 777);
	pt_mbox_flush(&ch);
	CHECK(drain_types(sv[1], types, pids, 8) == 0, "nothing to flush yet");
	exec_rec(&b, argv);
	ch.pid = 777;
	pt.owner = 777;
	CHECK(pt_mbox_put(slot, &ch, &b, 4243) == -1, "a closed slot refuses");
	ch.pid = getpid();
	pt.owner = getpid();

	/* A READY one is sent by the flush. */
	slot = pt_mbox_reserve();
	CHECK(slot >= 0, "reserve again (the closed slot was freed)");
	pt_mbox_forked(slot, 778);
	ch.pid = 778;
	pt.owner = 778;
	CHECK(pt_mbox_put(slot, &ch, &b, 4244) == 0, "put");
	/* The exec failed: the frame comes back, sent before EXEC_FAILED. */
	CHECK(pt_mbox_unput(slot, &ch) == 0, "unput");
	CHECK(drain_types(sv[1], types, pids, 8) == 1 && pids[0] == 778,
	      "unput sends it");
	CHECK(pt_mbox_put(slot, &ch, &b, 4245) == 0, "put after unput");
	ch.pid = getpid();
	pt.owner = getpid();
	pt_mbox_flush(&ch);
	CHECK(drain_types(sv[1], types, pids, 8) == 1 && pids[0] == 778,
	      "the flush sends the ready EXEC");

	/* No child after all; a child that never exec'd; a frame too big. */
	slot = pt_mbox_reserve();
	pt_mbox_forked(slot, -1);
	slot = pt_mbox_reserve();
	pt_mbox_forked(slot, 779);
	CHECK(pt_mbox_take(&ch, 779, out) == 0, "nothing from 779");
	{
		static char big[PT_MBOX_BYTES];
		char *big_argv[] = { big, NULL };

		memset(big, 'x', sizeof big - 1);
		slot = pt_mbox_reserve();
		pt_mbox_forked(slot, 780);
		exec_rec(&b, big_argv);
		ch.pid = 780;
		CHECK(pt_mbox_put(slot, &ch, &b, 4246) == -1, "too big");
		ch.pid = getpid();
		CHECK(pt_mbox_take(&ch, 780, out) == 0, "nothing from 780");
	}
	/* Every slot is free again: all of them can be reserved, no more. */
	for (i = 0; i <= PT_MBOX_SLOTS; i++)
		slots[i] = pt_mbox_reserve();
	for (i = 0; i < PT_MBOX_SLOTS; i++)
		CHECK(slots[i] >= 0, "slot %d free again", i);
	CHECK(slots[PT_MBOX_SLOTS] == -1, "all taken");
	for (i = 0; i < PT_MBOX_SLOTS; i++)
		pt_mbox_forked(slots[i], -1);
	close(sv[0]);
	close(sv[1]);
}

static void test_damage(void)
{
	unsigned char f[64];
	struct pt_frame_header h;
	struct pt_record rec;
	const char *why;

	memset(f, 0, sizeof f);
	pt_wire_put32(f, PT_WIRE_MAGIC);
	f[4] = PT_WIRE_VERSION;
	f[5] = PT_REC_EXEC;
	pt_wire_put32(f + 12, 12);
	pt_wire_put32(f + 16, 12);
	CHECK(pt_frame_header_decode(f, &h, &why) == 0, "good header");
	/* 8 fixed bytes, then an item whose string lacks its NUL */
	f[40] = PT_TAG_PATH;
	memcpy(f + 41, "abc", 3);
	CHECK(pt_record_parse(&h, f + 32, &rec, &why) < 0, "unterminated accepted");
	/* an unknown tag is skipped */
	f[40] = 200;
	f[43] = '\0';
	CHECK(pt_record_parse(&h, f + 32, &rec, &why) == 0, "unknown tag refused");
	pt_record_free(&rec);
	f[0] ^= 1;
	CHECK(pt_frame_header_decode(f, &h, &why) < 0, "bad magic accepted");
	f[0] ^= 1;
	f[4] = 99;
	CHECK(pt_frame_header_decode(f, &h, &why) < 0 &&
	      strstr(why, "version"), "unknown version accepted");
	f[4] = PT_WIRE_VERSION;
	pt_wire_put32(f + 12, PT_FRAME_MAX + 1);
	CHECK(pt_frame_header_decode(f, &h, &why) < 0, "oversized accepted");
	pt_wire_put32(f + 12, 12);
	pt_wire_put32(f + 16, 100);
	f[6] = PT_FRAME_DEFLATED;
	CHECK(pt_frame_header_decode(f, &h, &why) == 0, "deflated header");
	CHECK(pt_frame_inflate(&h, f + 32, &why) == NULL, "corrupt deflate accepted");
}

int main(void)
{
	char *env[] = { "PROFTRACE_ENV=MY_VAR:zeta", NULL };

	pt.owner = getpid();
	pt.ready = 1;
	pt_env_setup(env);
	test_small();
	test_cwd();
	test_large(0, 1);
	test_large(0, 0);
	test_large(1, 1);
	test_damage();
	test_defer();
	test_mailbox();
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	else
		printf("frame: all checks passed\n");
	return failures != 0;
}
