/*
 * Unit tests of the capture reader, the model and the CSV exporter.
 *
 * Each test writes a capture by hand (file header, records, frames encoded
 * here as wire.h lays them out) for one situation the library produces,
 * converts it, and checks the executions exactly: which exist, their
 * types, times, parents, exit codes and inherited fields.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/capture.h"
#include "views/csv.h"
#include "views/summary.h"
#include "model/model.h"
#include "proftrace/wire.h"
#include "proftrace/wire.h"

static int failures;
static char dir[64];

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)
#define CHECK_INT(a, b) check_int((long long)(a), (long long)(b), #a, __LINE__)
#define CHECK_STR(a, b) check_str((a), (b), #a, __LINE__)

static int check(int ok, const char *what, const char *file, int line)
{
	if (!ok) {
		fprintf(stderr, "%s:%d: FAIL: %s\n", file, line, what);
		failures++;
	}
	return ok;
}

static void check_int(long long a, long long b, const char *what, int line)
{
	if (a != b) {
		fprintf(stderr, "test-model.c:%d: FAIL: %s is %lld, "
			"expected %lld\n", line, what, a, b);
		failures++;
	}
}

static void check_str(const char *a, const char *b, const char *what, int line)
{
	if (!a || strcmp(a, b)) {
		fprintf(stderr, "test-model.c:%d: FAIL: %s is \"%s\", "
			"expected \"%s\"\n", line, what, a ? a : "(null)", b);
		failures++;
	}
}

/* ---- writing captures ---- */

#define MS(n) (1000000000000ull + (uint64_t)(n) * 1000000ull)  /* monotonic */
#define EPOCH_OFFSET 1699999000000000000ll  /* epoch - monotonic, see META */
#define EP(n) ((int64_t)MS(n) + EPOCH_OFFSET)

struct cap {
	gzFile gz;
	int raw;                        /* spool file: frames only */
};

struct fb {                             /* one frame being encoded */
	unsigned char buf[8192];
	size_t len;
};

static void cap_write(struct cap *c, const void *p, size_t n)
{
	if (n && gzwrite(c->gz, p, (unsigned)n) != (int)n) {
		fprintf(stderr, "gzwrite failed\n");
		exit(2);
	}
}

static void cap_open(struct cap *c, const char *path, const char *mode)
{
	unsigned char h[16];

	c->gz = gzopen(path, mode);
	c->raw = 0;
	if (!c->gz) {
		perror(path);
		exit(2);
	}
	memcpy(h, PT_CAP_FILE_MAGIC, 8);
	pt_wire_put32(h + 8, 1);                /* the reader still reads version 1 */
	pt_wire_put32(h + 12, 16);
	cap_write(c, h, 16);
}

static void cap_close(struct cap *c)
{
	gzclose(c->gz);
}

static void cap_rec(struct cap *c, unsigned kind, uint64_t conn, uint32_t pid,
		    uint64_t recv, const void *data, size_t len)
{
	unsigned char h[40] = { 0 };

	pt_wire_put32(h, PT_CAP_RECORD_MAGIC);
	h[4] = (unsigned char)kind;
	pt_wire_put32(h + 8, (uint32_t)len);
	pt_wire_put32(h + 12, pid);
	pt_wire_put32(h + 16, 1000);
	pt_wire_put64(h + 24, conn);
	pt_wire_put64(h + 32, recv);
	cap_write(c, h, sizeof h);
	cap_write(c, data, len);
	/* Flush points make a cut-short stream readable up to the cut. */
	gzflush(c->gz, Z_SYNC_FLUSH);
}

static void cap_meta(struct cap *c)
{
	char kv[256];
	int n = snprintf(kv, sizeof kv, "host%cbox%cstart_realtime_ns%c%llu%c"
			 "start_monotonic_ns%c%llu%cCI_JOB_ID%c77", 0, 0, 0,
			 (unsigned long long)(MS(0) + EPOCH_OFFSET), 0, 0,
			 (unsigned long long)MS(0), 0, 0);

	cap_rec(c, PT_CAP_META, 0, 0, MS(0), kv, (size_t)n + 1);
}

static void fb_start(struct fb *f, unsigned type, uint32_t pid, uint64_t t)
{
	memset(f->buf, 0, 32);
	pt_wire_put32(f->buf, PT_WIRE_MAGIC);
	f->buf[4] = PT_WIRE_VERSION;
	f->buf[5] = (unsigned char)type;
	pt_wire_put32(f->buf + 8, pid);
	pt_wire_put64(f->buf + 24, t);
	f->len = 32;
}

static void fb_u32(struct fb *f, uint32_t v)
{
	pt_wire_put32(f->buf + f->len, v);
	f->len += 4;
}

static void fb_u64(struct fb *f, uint64_t v)
{
	pt_wire_put64(f->buf + f->len, v);
	f->len += 8;
}

static void fb_str(struct fb *f, unsigned tag, const char *s)
{
	size_t n = strlen(s) + 1;

	f->buf[f->len++] = (unsigned char)tag;
	memcpy(f->buf + f->len, s, n);
	f->len += n;
}

static void fb_strs(struct fb *f, unsigned tag, const char *const *v)
{
	for (; v && *v; v++)
		fb_str(f, tag, *v);
}

/* Finish the frame and store it (conn's receive time: a bit later). */
static void fb_send(struct cap *c, struct fb *f, uint64_t conn)
{
	uint32_t pid, len = (uint32_t)(f->len - 32);
	uint64_t t;

	pt_wire_put32(f->buf + 12, len);
	pt_wire_put32(f->buf + 16, len);
	memcpy(&pid, f->buf + 8, 4);
	memcpy(&t, f->buf + 24, 8);
	if (c->raw)
		cap_write(c, f->buf, f->len);
	else
		cap_rec(c, PT_CAP_FRAME, conn, le32toh(pid), le64toh(t) + 1000,
			f->buf, f->len);
}

#define V(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void connect_(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t)
{
	cap_rec(c, PT_CAP_CONNECT, conn, pid, t, NULL, 0);
}

static void eof(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t)
{
	cap_rec(c, PT_CAP_EOF, conn, pid, t, NULL, 0);
}

static void hello(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t,
		  unsigned kind, uint32_t ppid, uint64_t start, const char *exe,
		  const char *const *argv, const char *cwd,
		  const char *const *env)
{
	struct fb f;

	fb_start(&f, PT_REC_HELLO, pid, t);
	fb_u32(&f, ppid);
	fb_u32(&f, 1000);
	fb_u32(&f, kind);
	fb_u32(&f, 0);
	fb_u64(&f, t + EPOCH_OFFSET);
	fb_u64(&f, start);
	if (exe)
		fb_str(&f, PT_TAG_EXE, exe);
	fb_strs(&f, PT_TAG_ARG, argv);
	if (cwd)
		fb_str(&f, PT_TAG_CWD, cwd);
	fb_strs(&f, PT_TAG_ENV, env);
	fb_send(c, &f, conn);
}

/* A new connection whose first frame is a HELLO IMAGE. */
static void image(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t,
		  uint32_t ppid, const char *const *argv, const char *cwd,
		  const char *const *env)
{
	char exe[256];

	snprintf(exe, sizeof exe, "/usr/bin/%s", argv[0]);
	connect_(c, conn, pid, t);
	hello(c, conn, pid, t + 100, PT_HELLO_IMAGE, ppid, t, exe, argv, cwd,
	      env);
}

static void fork_hello(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t,
		       uint32_t ppid, uint64_t fork_t, const char *cwd)
{
	connect_(c, conn, pid, t);
	hello(c, conn, pid, t, PT_HELLO_FORK, ppid, fork_t, NULL, NULL, cwd,
	      NULL);
}

static void two_u32(struct cap *c, uint64_t conn, unsigned type, uint32_t pid,
		    uint64_t t, uint32_t a, uint32_t b, const char *path,
		    const char *const *argv, const char *cwd)
{
	struct fb f;

	fb_start(&f, type, pid, t);
	fb_u32(&f, a);
	fb_u32(&f, b);
	if (path)
		fb_str(&f, PT_TAG_PATH, path);
	fb_strs(&f, PT_TAG_ARG, argv);
	if (cwd)
		fb_str(&f, PT_TAG_CWD, cwd);
	fb_send(c, &f, conn);
}

static void exec_(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t,
		  uint32_t ppid, const char *path, const char *const *argv,
		  const char *cwd)
{
	two_u32(c, conn, PT_REC_EXEC, pid, t, ppid, PT_CALL_EXECVE, path, argv,
		cwd);
}

static void exec_failed(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t)
{
	two_u32(c, conn, PT_REC_EXEC_FAILED, pid, t, ENOENT, PT_CALL_EXECVE,
		NULL, NULL, NULL);
}

static void spawn(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t,
		  uint32_t child, const char *path, const char *const *argv)
{
	two_u32(c, conn, PT_REC_SPAWN, pid, t, child, PT_CALL_POSIX_SPAWN, path,
		argv, NULL);
}

static void fork_(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t,
		  uint32_t child)
{
	two_u32(c, conn, PT_REC_FORK, pid, t, child, PT_CALL_FORK, NULL, NULL,
		NULL);
}

static void reap(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t,
		 uint32_t child, int status, int rusage)
{
	struct fb f;

	fb_start(&f, PT_REC_REAP, pid, t);
	fb_u32(&f, child);
	fb_u32(&f, (uint32_t)status);
	fb_u32(&f, (uint32_t)rusage);
	fb_u32(&f, 0);
	fb_u64(&f, rusage ? 5000 : 0);
	fb_u64(&f, rusage ? 6000 : 0);
	fb_u64(&f, rusage ? 700 : 0);
	fb_send(c, &f, conn);
}

static void exit_ru(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t,
		    int status, uint64_t ut, uint64_t st, uint64_t rss)
{
	struct fb f;

	fb_start(&f, PT_REC_EXIT, pid, t);
	fb_u32(&f, (uint32_t)status);
	fb_u32(&f, PT_EXIT_EXIT);
	fb_u64(&f, ut);
	fb_u64(&f, st);
	fb_u64(&f, rss);
	fb_send(c, &f, conn);
}

static void exit_(struct cap *c, uint64_t conn, uint32_t pid, uint64_t t,
		  int status)
{
	exit_ru(c, conn, pid, t, status, 1000, 2000, 3000);
}

/* ---- reading them back ---- */

static const char *cap_path(const char *name)
{
	static char path[128];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

static int load(struct pt_model *m, const char *name)
{
	int rc;

	pt_model_init(m);
	rc = pt_model_add_capture(m, cap_path(name));
	pt_model_finish(m);
	return rc;
}

/* The nth (from 0) execution of pid, in start order. */
static const struct pt_exec *find(const struct pt_model *m, int pid, int nth)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->execs[i]->pid == pid && !nth--)
			return m->execs[i];
	fprintf(stderr, "no execution %d of pid %d\n", nth, pid);
	failures++;
	return NULL;
}

static int count_pid(const struct pt_model *m, int pid)
{
	size_t i;
	int n = 0;

	for (i = 0; i < m->n; i++)
		n += m->execs[i]->pid == pid;
	return n;
}

static const char *argv0(const struct pt_exec *e)
{
	return e && e->argc ? pt_exec_arg(e, 0) : "";
}

/* Tree links: every child is on its parent's list, in start order. */
static void check_tree(const struct pt_model *m)
{
	size_t i, linked = 0, roots = 0;

	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i], *c, *prev = NULL;

		CHECK_INT(e->id, i);
		if (i)
			CHECK(m->execs[i - 1]->start_ns <= e->start_ns);
		if (!e->parent)
			roots++;
		for (c = e->first_child; c; prev = c, c = c->next_sibling) {
			CHECK(c->parent == e);
			if (prev)
				CHECK(prev->start_ns <= c->start_ns);
			linked++;
		}
	}
	CHECK_INT(linked + roots, m->n);
}

/* ---- the situations ---- */

static const char *const ENV[] = {
	"OPAM_PACKAGE_NAME=foo", "OPAM_PACKAGE_VERSION=1.2", NULL,
};

/* make forks a child that execs sh: the fork phase is folded away. */
static void test_fork_exec(void)
{
	struct pt_model m;
	const struct pt_exec *mk, *sh;
	struct cap c;

	cap_open(&c, cap_path("fork-exec"), "wb");
	cap_meta(&c);
	image(&c, 1, 100, MS(0), 1, V("make", "all"), "/src", ENV);
	fork_(&c, 1, 100, MS(10), 101);
	exec_(&c, 1, 101, MS(11), 100, "/bin/sh", V("sh", "-c", "cc x.c"), "/src");
	image(&c, 2, 101, MS(12), 100, V("sh", "-c", "cc x.c"), "/src", ENV);
	exit_(&c, 2, 101, MS(50), 0);
	eof(&c, 2, 101, MS(51));
	reap(&c, 1, 100, MS(52), 101, 0, 1);
	exit_(&c, 1, 100, MS(60), 2);
	eof(&c, 1, 100, MS(61));
	cap_close(&c);

	CHECK_INT(load(&m, "fork-exec"), 0);
	CHECK_INT(m.n, 2);
	CHECK_INT(m.damaged, 0);
	mk = find(&m, 100, 0);
	sh = find(&m, 101, 0);
	if (mk && sh) {
		CHECK(mk->parent == NULL);
		CHECK_INT(mk->type, PT_EXEC_EXEC);
		CHECK_INT(mk->start_ns, EP(0));
		CHECK_INT(mk->end_ns, EP(60));
		CHECK_INT(mk->exit_code, 2);
		CHECK_INT(mk->signal, 0);
		CHECK(mk->first_child == sh);
		CHECK(sh->parent == mk);
		CHECK_INT(sh->type, PT_EXEC_EXEC);
		CHECK_INT(sh->ppid, 100);
		CHECK_INT(sh->start_ns, EP(12));
		CHECK_INT(sh->end_ns, EP(50));
		CHECK_INT(sh->exit_code, 0);
		CHECK_INT(sh->signal, 0);
		CHECK_INT(sh->utime_us, 1000);
		CHECK_INT(sh->stime_us, 2000);
		CHECK_INT(sh->maxrss_kb, 3000);
		CHECK_INT(sh->flags, 0);
		CHECK_INT(sh->argc, 3);
		CHECK_STR(pt_exec_arg(sh, 2), "cc x.c");
		CHECK(sh->argc == 3);
		CHECK_STR(sh->exe, "/usr/bin/sh");
		CHECK_STR(sh->cwd, "/src");
		CHECK_STR(pt_exec_env(sh, "OPAM_PACKAGE_NAME"), "foo");
		CHECK(pt_exec_env(sh, "OPAM_PACKAGE") == NULL);
		CHECK_STR(pt_model_meta(&m, 0, "host"), "box");
	}
	check_tree(&m);
	pt_model_free(&m);
}

/* bash forks; the child execs sh, which execs python3: both are children
 * of bash, and sh has no exit status of its own. */
static void test_exec_chain(void)
{
	struct pt_model m;
	const struct pt_exec *bash, *sh, *py;
	struct cap c;

	cap_open(&c, cap_path("exec-chain"), "wb");
	cap_meta(&c);
	image(&c, 1, 199, MS(0), 1, V("bash"), "/", NULL);
	fork_(&c, 1, 199, MS(1), 200);
	exec_(&c, 1, 200, MS(2), 199, "/bin/sh", V("sh", "run.sh"), "/");
	image(&c, 2, 200, MS(3), 199, V("sh", "run.sh"), "/", NULL);
	exec_(&c, 2, 200, MS(5), 199, "/usr/bin/python3", V("python3", "x.py"), "/");
	eof(&c, 2, 200, MS(6));
	image(&c, 3, 200, MS(7), 199, V("python3", "x.py"), "/", NULL);
	exit_(&c, 3, 200, MS(20), 3);
	eof(&c, 3, 200, MS(21));
	reap(&c, 1, 199, MS(22), 200, 3 << 8, 1);
	exit_(&c, 1, 199, MS(30), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "exec-chain"), 0);
	CHECK_INT(m.n, 3);
	bash = find(&m, 199, 0);
	sh = find(&m, 200, 0);
	py = find(&m, 200, 1);
	if (bash && sh && py) {
		CHECK_STR(argv0(sh), "sh");
		CHECK_STR(argv0(py), "python3");
		CHECK(sh->parent == bash);
		CHECK(py->parent == bash);
		CHECK_INT(sh->start_ns, EP(3));
		CHECK_INT(sh->end_ns, EP(7));
		CHECK_INT(sh->exit_code, -1);
		CHECK_INT(sh->signal, 0);
		CHECK_INT(sh->flags, 0);
		CHECK_INT(py->start_ns, EP(7));
		CHECK_INT(py->end_ns, EP(20));
		CHECK_INT(py->exit_code, 3);
	}
	check_tree(&m);
	pt_model_free(&m);
}

/* A fork child that never execs is an execution of type fork, with its
 * parent's program and arguments. */
static void test_fork_only(void)
{
	struct pt_model m;
	const struct pt_exec *p, *k;
	struct cap c;

	cap_open(&c, cap_path("fork-only"), "wb");
	cap_meta(&c);
	image(&c, 1, 300, MS(0), 1, V("server", "-d"), "/srv", ENV);
	fork_(&c, 1, 300, MS(1), 301);
	fork_hello(&c, 2, 301, MS(5), 300, MS(1), "/tmp");
	exit_(&c, 2, 301, MS(9), 7);
	eof(&c, 2, 301, MS(9));
	reap(&c, 1, 300, MS(10), 301, 7 << 8, 1);
	exit_(&c, 1, 300, MS(11), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "fork-only"), 0);
	CHECK_INT(m.n, 2);
	p = find(&m, 300, 0);
	k = find(&m, 301, 0);
	if (p && k) {
		CHECK_INT(k->type, PT_EXEC_FORK);
		CHECK(k->parent == p);
		CHECK_INT(k->start_ns, EP(1));
		CHECK_INT(k->end_ns, EP(9));
		CHECK_INT(k->exit_code, 7);
		CHECK_INT(k->argc, 2);
		CHECK_STR(pt_exec_arg(k, 1), "-d");
		CHECK_STR(k->exe, "/usr/bin/server");
		CHECK_STR(k->cwd, "/tmp");
		CHECK_STR(pt_exec_env(k, "OPAM_PACKAGE_VERSION"), "1.2");
	}
	pt_model_free(&m);
}

/* A static program: SPAWN and REAP are all there is. */
static void test_static_spawn(void)
{
	struct pt_model m;
	const struct pt_exec *p, *s;
	struct cap c;

	cap_open(&c, cap_path("static"), "wb");
	cap_meta(&c);
	image(&c, 1, 400, MS(0), 1, V("make"), "/b", ENV);
	spawn(&c, 1, 400, MS(2), 401, "./static", V("static", "-v"));
	reap(&c, 1, 400, MS(8), 401, 0, 1);
	exit_(&c, 1, 400, MS(9), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "static"), 0);
	CHECK_INT(m.n, 2);
	p = find(&m, 400, 0);
	s = find(&m, 401, 0);
	if (p && s) {
		CHECK(s->parent == p);
		CHECK_INT(s->type, PT_EXEC_EXEC);
		CHECK_INT(s->flags, PT_EXF_UNTRACED);
		CHECK_INT(s->start_ns, EP(2));
		CHECK_INT(s->end_ns, EP(8));
		CHECK_INT(s->exit_code, 0);
		CHECK_INT(s->signal, 0);
		CHECK_INT(s->utime_us, 5000);
		CHECK_INT(s->stime_us, 6000);
		CHECK_INT(s->maxrss_kb, 700);
		CHECK_STR(s->exe, "/b/static");
		CHECK_STR(s->cwd, "/b");
		CHECK_INT(s->argc, 2);
		CHECK_STR(pt_exec_env(s, "OPAM_PACKAGE_NAME"), "foo");
	}
	pt_model_free(&m);
}

/* A static program exec'd by a fork child: EXEC, then only REAP. */
static void test_static_exec(void)
{
	struct pt_model m;
	const struct pt_exec *p, *s;
	struct cap c;

	cap_open(&c, cap_path("static-exec"), "wb");
	cap_meta(&c);
	image(&c, 1, 450, MS(0), 1, V("make"), "/b", ENV);
	fork_(&c, 1, 450, MS(1), 451);
	exec_(&c, 1, 451, MS(2), 450, "/sbin/ldconfig", V("ldconfig"), "/x");
	reap(&c, 1, 450, MS(8), 451, 9, 1);        /* SIGKILL */
	exit_(&c, 1, 450, MS(9), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "static-exec"), 0);
	CHECK_INT(m.n, 2);
	p = find(&m, 450, 0);
	s = find(&m, 451, 0);
	if (p && s) {
		CHECK(s->parent == p);
		CHECK_INT(s->type, PT_EXEC_EXEC);
		CHECK_INT(s->flags, PT_EXF_UNTRACED | PT_EXF_KILLED);
		CHECK_INT(s->start_ns, EP(2));
		CHECK_INT(s->end_ns, EP(8));
		CHECK_INT(s->exit_code, -1);
		CHECK_INT(s->signal, 9);
		CHECK_STR(s->cwd, "/x");
		CHECK_STR(s->exe, "/sbin/ldconfig");
	}
	pt_model_free(&m);
}

/* EXEC_FAILED: the first exec fails, the second works; and a child whose
 * only exec fails stays a fork. */
static void test_exec_failed(void)
{
	struct pt_model m;
	const struct pt_exec *p, *t, *k;
	struct cap c;

	cap_open(&c, cap_path("exec-failed"), "wb");
	cap_meta(&c);
	image(&c, 1, 500, MS(0), 1, V("sh"), "/", NULL);
	fork_(&c, 1, 500, MS(1), 501);
	exec_(&c, 1, 501, MS(2), 500, "/nonexistent", V("nonexistent"), "/");
	exec_failed(&c, 1, 501, MS(3));
	exec_(&c, 1, 501, MS(4), 500, "/bin/true", V("true"), "/");
	image(&c, 2, 501, MS(5), 500, V("true"), "/", NULL);
	exit_(&c, 2, 501, MS(6), 0);
	reap(&c, 1, 500, MS(7), 501, 0, 1);
	fork_(&c, 1, 500, MS(10), 502);
	exec_(&c, 1, 502, MS(11), 500, "/nope", V("nope"), "/");
	exec_failed(&c, 1, 502, MS(12));
	fork_hello(&c, 3, 502, MS(13), 500, MS(10), "/");
	exit_(&c, 3, 502, MS(14), 127);
	eof(&c, 3, 502, MS(14));
	reap(&c, 1, 500, MS(15), 502, 127 << 8, 1);
	exit_(&c, 1, 500, MS(20), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "exec-failed"), 0);
	CHECK_INT(m.n, 3);
	CHECK_INT(count_pid(&m, 501), 1);
	p = find(&m, 500, 0);
	t = find(&m, 501, 0);
	k = find(&m, 502, 0);
	if (p && t && k) {
		CHECK_STR(argv0(t), "true");
		CHECK_INT(t->type, PT_EXEC_EXEC);
		CHECK_INT(t->start_ns, EP(5));
		CHECK(t->parent == p);
		CHECK_INT(k->type, PT_EXEC_FORK);
		CHECK_INT(k->exit_code, 127);
		CHECK_INT(k->start_ns, EP(10));
		CHECK(k->parent == p);
	}
	pt_model_free(&m);
}

/*
 * An image that execs sends no EXIT: its EXEC's CPU tag is its CPU.  The
 * static program it execs takes the parent's REAP less that, so the two
 * add up to the process's rusage.  An EXEC without the tag (a fork
 * phase's, an older library's) leaves the CPU unknown.
 */
static void test_exec_cpu(void)
{
	struct pt_model m;
	const struct pt_exec *sh, *st, *w, *t;
	struct cap c;
	struct fb f;

	cap_open(&c, cap_path("exec-cpu"), "wb");
	cap_meta(&c);
	image(&c, 1, 700, MS(0), 1, V("make"), "/", NULL);
	spawn(&c, 1, 700, MS(1), 701, "/bin/sh", V("sh", "-c", "exec static"));
	image(&c, 2, 701, MS(2), 700, V("sh", "-c", "exec static"), "/", NULL);
	fb_start(&f, PT_REC_EXEC, 701, MS(5));
	fb_u32(&f, 700);
	fb_u32(&f, PT_CALL_EXECVE);
	fb_str(&f, PT_TAG_PATH, "/bin/static");
	fb_str(&f, PT_TAG_ARG, "static");
	fb_str(&f, PT_TAG_CWD, "/");
	fb_str(&f, PT_TAG_CPU, "1200 300 2500");
	fb_send(&c, &f, 2);
	eof(&c, 2, 701, MS(6));
	reap(&c, 1, 700, MS(10), 701, 0, 1);       /* 5000 user, 6000 sys */
	/* The same without the tag: a wrapper whose CPU stays unknown. */
	spawn(&c, 1, 700, MS(11), 702, "/bin/wrap", V("wrap", "true"));
	image(&c, 3, 702, MS(12), 700, V("wrap", "true"), "/", NULL);
	exec_(&c, 3, 702, MS(13), 700, "/bin/true", V("true"), "/");
	eof(&c, 3, 702, MS(14));
	image(&c, 4, 702, MS(14), 700, V("true"), "/", NULL);
	exit_(&c, 4, 702, MS(15), 0);
	reap(&c, 1, 700, MS(16), 702, 0, 1);
	exit_(&c, 1, 700, MS(30), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "exec-cpu"), 0);
	CHECK_INT(m.n, 5);
	sh = find(&m, 701, 0);
	st = find(&m, 701, 1);
	w = find(&m, 702, 0);
	t = find(&m, 702, 1);
	if (sh && st && w && t) {
		CHECK_INT(sh->utime_us, 1200);
		CHECK_INT(sh->stime_us, 300);
		CHECK_INT(sh->maxrss_kb, 2500);
		CHECK_INT(st->flags, PT_EXF_UNTRACED);
		CHECK_INT(st->utime_us, 5000 - 1200);
		CHECK_INT(st->stime_us, 6000 - 300);
		CHECK_INT(w->utime_us, -1);
	}
	pt_model_free(&m);
}

/* Death by a signal: the connection's EOF, and the parent's REAP (which
 * here the collector wrote before the EOF it received late). */
static void test_signal_death(void)
{
	struct pt_model m;
	const struct pt_exec *p, *a, *b;
	struct cap c;

	cap_open(&c, cap_path("signal"), "wb");
	cap_meta(&c);
	image(&c, 1, 600, MS(0), 1, V("make"), "/", NULL);
	fork_(&c, 1, 600, MS(1), 601);
	exec_(&c, 1, 601, MS(2), 600, "/bin/sleep", V("sleep", "100"), "/");
	image(&c, 2, 601, MS(3), 600, V("sleep", "100"), "/", NULL);
	reap(&c, 1, 600, MS(10), 601, 15, 1);      /* SIGTERM */
	eof(&c, 2, 601, MS(11));
	/* system(): no SPAWN, no REAP; only the EOF tells of its end. */
	image(&c, 3, 602, MS(12), 600, V("sh", "-c", "x"), "/", NULL);
	eof(&c, 3, 602, MS(20));
	exit_(&c, 1, 600, MS(30), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "signal"), 0);
	CHECK_INT(m.n, 3);
	p = find(&m, 600, 0);
	a = find(&m, 601, 0);
	b = find(&m, 602, 0);
	if (p && a && b) {
		CHECK(a->parent == p);
		CHECK_INT(a->end_ns, EP(10));
		CHECK_INT(a->exit_code, -1);
		CHECK_INT(a->signal, 15);
		CHECK_INT(a->flags, PT_EXF_KILLED);
		/* No EXIT: the rusage its parent waited for. */
		CHECK_INT(a->utime_us, 5000);
		CHECK_INT(a->stime_us, 6000);
		CHECK(b->parent == p);
		CHECK_INT(b->end_ns, EP(20));
		CHECK_INT(b->exit_code, -1);
		CHECK_INT(b->signal, -1);
		CHECK_INT(b->flags, PT_EXF_KILLED);
	}
	pt_model_free(&m);
}

/* One pid, three processes: two children of one parent, then a fork of
 * another parent. */
static void test_pid_reuse(void)
{
	struct pt_model m;
	const struct pt_exec *p, *q, *a, *b, *f;
	struct cap c;

	cap_open(&c, cap_path("reuse"), "wb");
	cap_meta(&c);
	image(&c, 1, 700, MS(0), 1, V("make"), "/", NULL);
	image(&c, 2, 710, MS(0), 1, V("ninja"), "/", NULL);
	fork_(&c, 1, 700, MS(1), 701);
	exec_(&c, 1, 701, MS(2), 700, "/bin/a", V("a"), "/");
	image(&c, 3, 701, MS(3), 700, V("a"), "/", NULL);
	exit_(&c, 3, 701, MS(4), 0);
	eof(&c, 3, 701, MS(4));
	reap(&c, 1, 700, MS(5), 701, 0, 1);
	fork_(&c, 1, 700, MS(6), 701);
	exec_(&c, 1, 701, MS(7), 700, "/bin/b", V("b"), "/");
	image(&c, 4, 701, MS(8), 700, V("b"), "/", NULL);
	exit_(&c, 4, 701, MS(9), 1);
	reap(&c, 1, 700, MS(10), 701, 1 << 8, 1);
	fork_(&c, 2, 710, MS(20), 701);
	fork_hello(&c, 5, 701, MS(21), 710, MS(20), NULL);
	exit_(&c, 5, 701, MS(22), 0);
	/* The EOF of the first process arrives late, after the pid's reuse. */
	eof(&c, 4, 701, MS(23));
	reap(&c, 2, 710, MS(24), 701, 0, 1);
	exit_(&c, 1, 700, MS(30), 0);
	exit_(&c, 2, 710, MS(30), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "reuse"), 0);
	CHECK_INT(count_pid(&m, 701), 3);
	p = find(&m, 700, 0);
	q = find(&m, 710, 0);
	a = find(&m, 701, 0);
	b = find(&m, 701, 1);
	f = find(&m, 701, 2);
	if (p && q && a && b && f) {
		CHECK_STR(argv0(a), "a");
		CHECK_STR(argv0(b), "b");
		CHECK(a->parent == p);
		CHECK(b->parent == p);
		CHECK_INT(b->exit_code, 1);
		CHECK_INT(b->end_ns, EP(9));
		CHECK_INT(f->type, PT_EXEC_FORK);
		CHECK(f->parent == q);
		CHECK_STR(argv0(f), "ninja");
		CHECK_INT(f->start_ns, EP(20));
		CHECK_INT(f->end_ns, EP(22));
	}
	check_tree(&m);
	pt_model_free(&m);
}

/* posix_spawn returns after the child said HELLO (and even exited): the
 * SPAWN is that child, not an untraced one. */
static void test_spawn_after_hello(void)
{
	struct pt_model m;
	const struct pt_exec *p, *k;
	struct cap c;

	cap_open(&c, cap_path("spawn-late"), "wb");
	cap_meta(&c);
	image(&c, 1, 800, MS(0), 1, V("dune"), "/", NULL);
	image(&c, 2, 801, MS(3), 800, V("cc", "-c", "a.c"), "/", NULL);
	exit_(&c, 2, 801, MS(5), 0);
	eof(&c, 2, 801, MS(6));
	spawn(&c, 1, 800, MS(7), 801, "/usr/bin/cc", V("cc", "-c", "a.c"));
	reap(&c, 1, 800, MS(8), 801, 0, 1);
	exit_(&c, 1, 800, MS(9), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "spawn-late"), 0);
	CHECK_INT(m.n, 2);
	CHECK_INT(count_pid(&m, 801), 1);
	p = find(&m, 800, 0);
	k = find(&m, 801, 0);
	if (p && k) {
		CHECK(k->parent == p);
		CHECK_INT(k->flags, 0);
		CHECK_INT(k->start_ns, EP(3));
		CHECK_INT(k->end_ns, EP(5));
		CHECK_INT(k->utime_us, 1000);
	}
	pt_model_free(&m);
}

/* Many children over few pids: growth of every table, pid reuse at scale,
 * and a mix of every kind of child. */
static void test_many(void)
{
	struct pt_model m;
	const struct pt_exec *root;
	struct cap c;
	size_t i, kinds[3] = { 0 };
	uint64_t conn = 2;
	int k;

	cap_open(&c, cap_path("many"), "wb");
	cap_meta(&c);
	image(&c, 1, 50, MS(0), 1, V("make"), "/", ENV);
	for (k = 0; k < 3000; k++) {
		uint32_t pid = 1000 + (uint32_t)(k % 97);
		uint64_t t = MS(1 + 10 * k);

		switch (k % 3) {
		case 0:         /* static, spawned */
			spawn(&c, 1, 50, t, pid, "/bin/st", V("st"));
			reap(&c, 1, 50, t + 5000000, pid, 0, 1);
			break;
		case 1:         /* traced, SPAWN after the child's HELLO */
			image(&c, conn, pid, t, 50, V("cc"), "/", ENV);
			exit_(&c, conn, pid, t + 2000000, 0);
			spawn(&c, 1, 50, t + 3000000, pid, "/bin/cc", V("cc"));
			reap(&c, 1, 50, t + 5000000, pid, 0, 1);
			conn++;
			break;
		case 2:         /* fork only, killed */
			fork_(&c, 1, 50, t, pid);
			fork_hello(&c, conn, pid, t + 1000000, 50, t, NULL);
			eof(&c, conn, pid, t + 4000000);
			reap(&c, 1, 50, t + 5000000, pid, 9, 1);
			conn++;
			break;
		}
	}
	exit_(&c, 1, 50, MS(40000), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "many"), 0);
	CHECK_INT(m.n, 3001);
	root = m.n ? m.execs[0] : NULL;
	for (i = 1; i < m.n; i++) {
		const struct pt_exec *e = m.execs[i];

		CHECK(e->parent == root);
		CHECK_INT(e->end_ns - e->start_ns,
			  e->type == PT_EXEC_FORK ? 4000000 :
			  e->flags & PT_EXF_UNTRACED ? 5000000 : 2000000);
		if (e->type == PT_EXEC_FORK)
			kinds[2]++;
		else if (e->flags & PT_EXF_UNTRACED)
			kinds[0]++;
		else
			kinds[1]++;
	}
	CHECK_INT(kinds[0], 1000);
	CHECK_INT(kinds[1], 1000);
	CHECK_INT(kinds[2], 1000);
	check_tree(&m);
	pt_model_free(&m);
}

/* A vfork child announces its exec on the parent's connection; a big
 * HELLO travels on an AUX connection while the image's own one has none. */
static void test_vfork_and_aux(void)
{
	struct pt_model m;
	const struct pt_exec *p, *v, *big;
	struct cap c;

	cap_open(&c, cap_path("vfork-aux"), "wb");
	cap_meta(&c);
	image(&c, 1, 900, MS(0), 1, V("bash"), "/", NULL);
	exec_(&c, 1, 901, MS(1), 900, "/bin/ls", V("ls"), "/");
	image(&c, 2, 901, MS(2), 900, V("ls"), "/", NULL);
	exit_(&c, 2, 901, MS(3), 0);
	reap(&c, 1, 900, MS(4), 901, 0, 1);
	/* pid 902: own connection 3 (no HELLO), HELLO on AUX connection 4. */
	connect_(&c, 3, 902, MS(10));
	connect_(&c, 4, 902, MS(10));
	hello(&c, 4, 902, MS(10), PT_HELLO_AUX, 900, 0, NULL, NULL, NULL, NULL);
	hello(&c, 4, 902, MS(10), PT_HELLO_IMAGE, 900, MS(9), "/usr/bin/ld",
	      V("ld", "-o", "big"), "/", NULL);
	eof(&c, 4, 902, MS(11));
	eof(&c, 3, 902, MS(15));
	exit_(&c, 1, 900, MS(30), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "vfork-aux"), 0);
	CHECK_INT(m.n, 3);
	p = find(&m, 900, 0);
	v = find(&m, 901, 0);
	big = find(&m, 902, 0);
	if (p && v && big) {
		CHECK(v->parent == p);
		CHECK_INT(v->type, PT_EXEC_EXEC);
		CHECK_STR(argv0(v), "ls");
		CHECK(big->parent == p);
		CHECK_INT(big->start_ns, EP(9));
		CHECK_INT(big->end_ns, EP(15));
		CHECK_INT(big->flags, PT_EXF_KILLED);
	}
	pt_model_free(&m);
}

/* Children known from little: a script (its exec's argv is what ran,
 * unless execvp fell back to running it with /bin/sh), a vfork child that
 * only exits, a clone child that is only reaped (by a ptrace tracer first,
 * then by its parent: no execution, the tracer reports threads too). */
static void test_silent_children(void)
{
	struct pt_model m;
	const struct pt_exec *p, *s, *v, *f;
	struct cap c;

	cap_open(&c, cap_path("silent"), "wb");
	cap_meta(&c);
	image(&c, 1, 5, MS(0), 1, V("strace"), "/", NULL);
	image(&c, 2, 1100, MS(0), 5, V("bash"), "/w", NULL);
	fork_(&c, 2, 1100, MS(1), 1101);
	exec_(&c, 2, 1101, MS(2), 1100, "./configure", V("./configure", "-q"), "/w");
	hello(&c, 3, 1101, MS(3), PT_HELLO_IMAGE, 1100, MS(3), "./configure",
	      V("/bin/sh", "./configure", "-q"), "/w", NULL);
	exit_(&c, 3, 1101, MS(4), 0);
	reap(&c, 2, 1100, MS(5), 1101, 0, 1);
	fork_(&c, 2, 1100, MS(5), 1104);
	exec_(&c, 2, 1104, MS(5), 1100, "noshebang", V("noshebang"), "/w");
	hello(&c, 4, 1104, MS(6), PT_HELLO_IMAGE, 1100, MS(6), "/bin/sh",
	      V("/bin/sh", "/w/noshebang"), "/w", NULL);
	exit_(&c, 4, 1104, MS(6), 0);
	exit_(&c, 2, 1102, MS(6), 9);              /* vfork child */
	reap(&c, 2, 1100, MS(7), 1102, 9 << 8, 1);
	reap(&c, 1, 5, MS(8), 1103, 3 << 8, 1);    /* the tracer first */
	reap(&c, 2, 1100, MS(9), 1103, 3 << 8, 1);
	exit_(&c, 2, 1100, MS(10), 0);
	cap_close(&c);

	CHECK_INT(load(&m, "silent"), 0);
	CHECK_INT(m.n, 5);
	CHECK_INT(count_pid(&m, 1103), 0);
	p = find(&m, 1100, 0);
	s = find(&m, 1101, 0);
	v = find(&m, 1102, 0);
	f = find(&m, 1104, 0);
	if (p && s && v && f) {
		CHECK_INT(s->argc, 2);
		CHECK_STR(pt_exec_arg(s, 0), "./configure");
		CHECK_STR(s->exe, "/w/configure");
		CHECK(s->parent == p);
		CHECK_INT(v->type, PT_EXEC_FORK);
		CHECK_INT(v->exit_code, 9);
		CHECK(v->parent == p);
		CHECK_STR(argv0(v), "bash");
		CHECK_INT(f->argc, 2);
		CHECK_STR(pt_exec_arg(f, 0), "/bin/sh");
	}
	pt_model_free(&m);
}

/* A capture cut short keeps what precedes the cut. */
static void test_truncated(void)
{
	struct pt_model m;
	struct stat st;
	struct cap c;
	char *buf;
	FILE *f;
	size_t n;

	cap_open(&c, cap_path("trunc"), "wb");
	cap_meta(&c);
	image(&c, 1, 100, MS(0), 1, V("make", "all"), "/src", ENV);
	fork_(&c, 1, 100, MS(10), 101);
	exec_(&c, 1, 101, MS(11), 100, "/bin/sh", V("sh"), "/src");
	image(&c, 2, 101, MS(12), 100, V("sh"), "/src", ENV);
	exit_(&c, 2, 101, MS(50), 0);
	cap_close(&c);
	/* Cut the gzip stream in the middle of its last flushed block. */
	stat(cap_path("trunc"), &st);
	n = (size_t)st.st_size;
	buf = malloc(n);
	f = fopen(cap_path("trunc"), "rb");
	CHECK(fread(buf, 1, n, f) == n);
	fclose(f);
	f = fopen(cap_path("trunc"), "wb");
	fwrite(buf, 1, n - 30, f);
	fclose(f);
	free(buf);

	CHECK_INT(load(&m, "trunc"), 1);
	CHECK_INT(m.damaged, 1);
	CHECK_INT(m.n, 2);
	if (m.n == 2) {
		CHECK_INT(m.execs[1]->pid, 101);
		CHECK(m.execs[1]->parent == m.execs[0]);
		CHECK_INT(m.execs[1]->flags, PT_EXF_END_UNKNOWN);
	}
	pt_model_free(&m);

	/* An uncompressed capture cut inside a record. */
	cap_open(&c, cap_path("trunc-raw"), "wT");
	cap_meta(&c);
	image(&c, 1, 100, MS(0), 1, V("make", "all"), "/src", ENV);
	exit_(&c, 1, 100, MS(5), 0);
	cap_close(&c);
	stat(cap_path("trunc-raw"), &st);
	CHECK(truncate(cap_path("trunc-raw"), st.st_size - 10) == 0);
	CHECK_INT(load(&m, "trunc-raw"), 1);
	CHECK_INT(m.n, 1);
	if (m.n == 1)
		CHECK_INT(m.execs[0]->flags, PT_EXF_END_UNKNOWN);
	pt_model_free(&m);

	/* Corrupt: a bad record magic after the first records. */
	cap_open(&c, cap_path("corrupt"), "wb");
	cap_meta(&c);
	image(&c, 1, 100, MS(0), 1, V("make"), "/src", ENV);
	cap_write(&c, "garbage that is no record header at all.", 40);
	exit_(&c, 1, 100, MS(5), 0);
	cap_close(&c);
	CHECK_INT(load(&m, "corrupt"), 1);
	CHECK_INT(m.n, 1);
	pt_model_free(&m);
}

/*
 * Argument vectors come back exactly as recorded: empty strings in any
 * place, vectors that differ only by a trailing empty string, a thousand
 * arguments, and a vector the library cut short (a program that never
 * loaded it, known from its parent's SPAWN alone).
 */
static void check_argv(const struct pt_exec *e, const char *const *want)
{
	const char **got;
	size_t n = 0, i;

	while (want[n])
		n++;
	if (!e)
		return;
	CHECK_INT(e->argc, n);
	/* All taken first, then compared: what the model hands out of one
	 * command line stays valid while the rest of it is read. */
	got = calloc(e->argc + 1, sizeof *got);
	for (i = 0; i < e->argc; i++)
		got[i] = pt_exec_arg(e, i);
	for (i = 0; i < n && i < e->argc; i++)
		CHECK_STR(got[i], want[i]);
	free(got);
}

static void test_argv_shapes(void)
{
	/* Long arguments with spaces are kept as their words: words that
	 * are other arguments too, empty ones, ends on a space, the length
	 * around where splitting starts, and one string that is both an
	 * argument and an environment entry. */
#define GCC "gcc -c -O2 -I/usr/include/libfoo -DVERSION=\"1.2\" src/alpha.c -o build/alpha.o"
#define SPACY "  two leading spaces, then some ordinary words,  two inside  and two at the end  "
#define BLANKS "                                                                x"
#define BOTH "CFLAGS=-O2 -g -fno-omit-frame-pointer -Wall -Wextra -I/opt/include"
#define L64 "0123456789012345678901234567890 12345678901234567890123456789012"
	const char *const *const shapes[] = {
		V("t"), V("t", ""), V("t", "", ""), V("", "t"), V(""),
		V("t", "a b", "", "c"), V("t", "a", "b"), V("t", "ab"),
		V("sh", "-c", GCC), V("gcc", "-c", "-O2", "-I/usr/include/libfoo",
				      "-DVERSION=\"1.2\"", "src/alpha.c", "-o",
				      "build/alpha.o"),
		V("sh", "-c", GCC " && " GCC), V("echo", SPACY, SPACY "x", " "),
		V("echo", BLANKS, BLANKS " " BLANKS),
		V("env", BOTH, "x" L64, L64, L64 + 1, L64 "x"), V("sh", "-c", GCC),
	};
	static const char *const ENV1[] = { "OPAM_PACKAGE_NAME=foo", BOTH,
					    NULL };
	enum { NSHAPES = sizeof shapes / sizeof *shapes, NMANY = 1000 };
	static char many_s[NMANY][8];
	const char *many[NMANY + 1];
	struct pt_model m;
	struct cap c;
	struct fb f;
	uint32_t k;
	size_t i;

	for (i = 0; i < NMANY; i++) {
		/* Every third one empty, the others all different. */
		if (i % 3)
			snprintf(many_s[i], sizeof many_s[i], "%zu", i);
		many[i] = many_s[i];
	}
	many[NMANY] = NULL;

	cap_open(&c, cap_path("argv"), "wb");
	cap_meta(&c);
	/* BOTH is seen first as an argument, then in an environment. */
	image(&c, 1, 100, MS(0), 1, V("make", BOTH), "/src", ENV);
	for (k = 0; k <= NSHAPES; k++) {
		const char *const *a = k < NSHAPES ? shapes[k] : many;
		uint32_t pid = 200 + k;
		uint64_t t = MS(10 + 10 * k);

		spawn(&c, 1, 100, t, pid, "/usr/bin/t", a);
		image(&c, 10 + k, pid, t + MS(1), 100, a, "/src",
		      k % 2 ? ENV1 : ENV);
		exit_(&c, 10 + k, pid, t + MS(5), 0);
		eof(&c, 10 + k, pid, t + MS(6));
		reap(&c, 1, 100, t + MS(7), pid, 0, 1);
	}
	/* A static program whose argv the library cut after two of five. */
	fb_start(&f, PT_REC_SPAWN, 100, MS(200));
	fb_u32(&f, 300);
	fb_u32(&f, PT_CALL_POSIX_SPAWN);
	fb_str(&f, PT_TAG_PATH, "/usr/bin/static");
	fb_strs(&f, PT_TAG_ARG, V("static", ""));
	fb_str(&f, PT_TAG_ARGV_TRUNCATED, "5");
	fb_send(&c, &f, 1);
	reap(&c, 1, 100, MS(210), 300, 0, 1);
	exit_(&c, 1, 100, MS(300), 0);
	eof(&c, 1, 100, MS(301));
	cap_close(&c);

	CHECK_INT(load(&m, "argv"), 0);
	CHECK_INT(m.n, NSHAPES + 3);
	for (k = 0; k < NSHAPES; k++) {
		const struct pt_exec *e = find(&m, 200 + (int)k, 0);

		check_argv(e, shapes[k]);
		if (e)
			CHECK((pt_exec_env(e, "OPAM_PACKAGE_VERSION") == NULL) ==
			      (k % 2 == 1));
		if (e && k % 2)
			CHECK_STR(pt_exec_env(e, "CFLAGS"), BOTH + 7);
	}
	check_argv(find(&m, 100, 0), V("make", BOTH));
	/* Read one command line, then another, then the first again. */
	check_argv(find(&m, 200 + 8, 0), shapes[8]);
	check_argv(find(&m, 200 + 10, 0), shapes[10]);
	check_argv(find(&m, 200 + 8, 0), shapes[8]);
	check_argv(find(&m, 200 + NSHAPES, 0), many);
	{
		const struct pt_exec *s = find(&m, 300, 0);

		check_argv(s, V("static", ""));
		if (s)
			CHECK_INT(s->flags, PT_EXF_UNTRACED | PT_EXF_ARGV_TRUNC);
	}
	check_tree(&m);
	pt_model_free(&m);
#undef GCC
#undef SPACY
#undef BLANKS
#undef BOTH
#undef L64
}

/* CPU times past 32 bits of microseconds (71 minutes), kept whole. */
static void test_big_rusage(void)
{
	struct pt_model m;
	struct cap c;

	cap_open(&c, cap_path("rusage"), "wb");
	cap_meta(&c);
	image(&c, 1, 100, MS(0), 1, V("make"), "/src", ENV);
	image(&c, 2, 101, MS(1), 100, V("ld"), "/src", ENV);
	exit_ru(&c, 2, 101, MS(5), 0, 5000000000ull, 4294967295ull,
		4294967294ull);
	eof(&c, 2, 101, MS(6));
	reap(&c, 1, 100, MS(7), 101, 0, 1);
	exit_ru(&c, 1, 100, MS(8), 0, 4294967294ull, 0, 1ull << 40);
	eof(&c, 1, 100, MS(9));
	cap_close(&c);

	CHECK_INT(load(&m, "rusage"), 0);
	CHECK_INT(m.n, 2);
	{
		const struct pt_exec *ld = find(&m, 101, 0);
		const struct pt_exec *mk = find(&m, 100, 0);

		if (ld) {
			CHECK_INT(ld->utime_us, 5000000000ll);
			CHECK_INT(ld->stime_us, 4294967295ll);
			CHECK_INT(ld->maxrss_kb, 4294967294ll);
		}
		if (mk) {
			CHECK_INT(mk->utime_us, 4294967294ll);
			CHECK_INT(mk->stime_us, 0);
			CHECK_INT(mk->maxrss_kb, 1ll << 40);
		}
	}
	pt_model_free(&m);
}

static void test_not_capture(void)
{
	struct pt_model m;
	unsigned char h[16];
	FILE *f = fopen(cap_path("text"), "w");

	fputs("hello, world\n", f);
	fclose(f);
	CHECK_INT(load(&m, "text"), -1);
	CHECK_INT(m.ncaptures, 0);
	pt_model_free(&m);

	memcpy(h, PT_CAP_FILE_MAGIC, 8);
	pt_wire_put32(h + 8, 9);
	pt_wire_put32(h + 12, 16);
	f = fopen(cap_path("v9"), "w");
	fwrite(h, 1, 16, f);
	fclose(f);
	CHECK_INT(load(&m, "v9"), -1);
	pt_model_free(&m);

	CHECK_INT(load(&m, "does-not-exist"), -1);
	pt_model_free(&m);
}

/* $PROFTRACE_DIR: one file of raw frames per connection. */
static void test_spool(void)
{
	struct pt_model m;
	const struct pt_exec *p, *k;
	char path[128];
	struct cap c;

	snprintf(path, sizeof path, "%s/spool", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/spool/proftrace-1000-1.ptspool", dir);
	c.gz = gzopen(path, "wT");
	c.raw = 1;
	hello(&c, 0, 1000, MS(1), PT_HELLO_IMAGE, 1, MS(0), "/bin/make",
	      V("make"), "/", NULL);
	fork_(&c, 0, 1000, MS(2), 1001);
	reap(&c, 0, 1000, MS(6), 1001, 0, 1);
	exit_(&c, 0, 1000, MS(7), 0);
	gzclose(c.gz);
	snprintf(path, sizeof path, "%s/spool/proftrace-1001-2.ptspool", dir);
	c.gz = gzopen(path, "wT");
	hello(&c, 0, 1001, MS(3), PT_HELLO_FORK, 1000, MS(2), NULL, NULL, "/",
	      NULL);
	exit_(&c, 0, 1001, MS(5), 4);
	gzclose(c.gz);

	CHECK_INT(load(&m, "spool"), 0);
	CHECK_INT(m.n, 2);
	CHECK_INT(m.connections, 2);
	p = find(&m, 1000, 0);
	k = find(&m, 1001, 0);
	if (p && k) {
		CHECK(k->parent == p);
		CHECK_INT(k->type, PT_EXEC_FORK);
		CHECK_INT(k->exit_code, 4);
		/* No META: the clock pair comes from the first HELLO. */
		CHECK_INT(p->start_ns, EP(0));
	}
	pt_model_free(&m);
}

#define SUMMARY_HEAD "proftrace: 2 executions, wall 0.060 s, CPU 0.006 s\n" \
	"slowest commands:\n"

/* The CSV of the fork+exec capture, byte for byte. */
static void test_csv(void)
{
	struct pt_model m;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	load(&m, "fork-exec");
	f = open_memstream(&out, &len);
	CHECK_INT(pt_csv_write(&m, f), 0);
	fclose(f);
	CHECK_STR(out, PT_CSV_HEADER "\n"
		  ",77,,exec,make all,1700000000.000000,0.060000,100,1,2,,"
		  "0.001000,0.002000,3000,/src,/usr/bin/make,foo.1.2,\n"
		  ",77,,exec,sh -c 'cc x.c',1700000000.012000,0.038000,101,100,"
		  "0,,0.001000,0.002000,3000,/src,/usr/bin/sh,foo.1.2,\n");
	free(out);
	f = open_memstream(&out, &len);
	pt_summary_print(&m, f);
	fclose(f);
	CHECK(!strncmp(out, SUMMARY_HEAD, strlen(SUMMARY_HEAD)));
	CHECK(strstr(out, "0.038 s  sh -c 'cc x.c'\n") != NULL);
	free(out);
	pt_model_free(&m);

	/* Two captures in one model: each keeps its index. */
	pt_model_init(&m);
	CHECK_INT(pt_model_add_capture(&m, cap_path("fork-exec")), 0);
	CHECK_INT(pt_model_add_capture(&m, cap_path("static")), 0);
	pt_model_finish(&m);
	CHECK_INT(m.ncaptures, 2);
	CHECK_INT(m.n, 4);
	if (m.n == 4) {
		CHECK_INT(m.execs[0]->capture, 0);
		CHECK_INT(m.execs[1]->capture, 1);
	}
	check_tree(&m);
	pt_model_free(&m);
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof dir, "/tmp/pt-test-model.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	test_fork_exec();
	test_exec_chain();
	test_fork_only();
	test_static_spawn();
	test_static_exec();
	test_exec_failed();
	test_signal_death();
	test_exec_cpu();
	test_pid_reuse();
	test_spawn_after_hello();
	test_vfork_and_aux();
	test_many();
	test_silent_children();
	test_truncated();
	test_argv_shapes();
	test_big_rusage();
	test_not_capture();
	test_spool();
	test_csv();
	if (!failures) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	} else {
		fprintf(stderr, "captures kept in %s\n", dir);
	}
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
