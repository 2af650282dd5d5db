/*
 * gencapture [-n EXECUTIONS] [-j JOBS] [-s SEED] OUTPUT: write a synthetic
 * capture of a large C build, as the collector would have recorded it,
 * with the collector's own writer (collector/capture/write.h).
 *
 * The build: a top-level make runs, one directory after the other,
 * `sh -c "make -C DIR"` (fork, exec; the sub-make is exec'd by the shell's
 * fork child); each sub-make runs JOBS recipes at a time by posix_spawn of
 * `sh -c "gcc ..."`; the shell forks and execs gcc; gcc spawns cc1 and as
 * (a compile) or collect2, which spawns ld (the link that ends each
 * directory).  Every process says HELLO on a connection of its own and
 * EXIT at its end; parents send SPAWN/FORK, the fork child's EXEC goes on
 * its parent's connection (as the library does), and parents REAP.
 * Command lines are 200-3000 bytes like real compiler lines (log-uniform),
 * pids are allocated as Linux does with pid_max 32768 (increasing, skipping
 * live ones, wrapping to 300), so they are reused many times over.
 * Records are written in time order across the parallel jobs.
 *
 * Prints one line of KEY VALUE pairs: executions frames connections
 * raw_bytes (uncompressed frame bytes) pid_wraps.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/write.h"
#include "synth.h"

#define MS            1000000ull
#define US            1000ull
#define PID_MAX       32768
#define PID_MIN_WRAP  300
#define MAX_SLOTS     64
#define JOB_EVENTS    64

/* ---- the whole capture's state ---- */

struct gen {
	struct pt_writer *w;
	struct rng r;
	uint32_t uid;
	uint64_t conn_seq;
	uint32_t next_pid;
	unsigned char live[PID_MAX / 8];
	unsigned long pid_wraps;
	unsigned long long executions, frames, connections, raw_bytes;
};

static const char *const env_base[] = {
	"CI_PIPELINE_ID=918273", "CI_JOB_ID=4242", "CI_JOB_NAME=build",
};

/* The environment a process of package `pkg` records. */
static const char *const *pkg_env(unsigned pkg)
{
	static char name[64], version[64];
	static const char *env[6];

	snprintf(name, sizeof name, "OPAM_PACKAGE_NAME=pkg-%u", pkg);
	snprintf(version, sizeof version, "OPAM_PACKAGE_VERSION=1.%u.0",
		 pkg % 7);
	env[0] = env_base[0];
	env[1] = env_base[1];
	env[2] = env_base[2];
	env[3] = name;
	env[4] = version;
	env[5] = NULL;
	return env;
}

static uint32_t pid_alloc(struct gen *g)
{
	uint32_t p = g->next_pid + rng_range(&g->r, 0, 2);  /* others fork too */

	for (;;) {
		if (p >= PID_MAX) {
			p = PID_MIN_WRAP;
			g->pid_wraps++;
		}
		if (!(g->live[p / 8] & (1u << (p % 8))))
			break;
		p++;
	}
	g->live[p / 8] |= (unsigned char)(1u << (p % 8));
	g->next_pid = p + 1;
	return p;
}

static void pid_free(struct gen *g, uint32_t p)
{
	g->live[p / 8] &= (unsigned char)~(1u << (p % 8));
}

/* ---- events: one record to write at a time ---- */

struct event {
	uint64_t t;                     /* frame time, or connect/EOF time */
	enum pt_cap_kind kind;
	uint64_t conn;
	uint32_t peer;
	size_t off, len;                /* frame bytes in the owner's data */
};

/* A sequence of events in time order with their frames. */
struct seq {
	struct event ev[JOB_EVENTS];
	int n, next;
	struct bbuf data;
	uint32_t pids[8];
	int npids;
};

static void seq_reset(struct seq *s)
{
	s->n = s->next = 0;
	s->data.len = 0;
	s->npids = 0;
}

static void seq_conn(struct seq *s, enum pt_cap_kind kind, uint64_t t,
		     uint64_t conn, uint32_t peer)
{
	struct event *e = &s->ev[s->n++];

	e->t = t;
	e->kind = kind;
	e->conn = conn;
	e->peer = peer;
	e->off = e->len = 0;
}

/* A frame on connection conn (whose peer is peer). */
static void seq_frame(struct seq *s, uint64_t t, uint64_t conn, uint32_t peer,
		      uint8_t type, uint32_t pid, const void *fixed,
		      size_t fixed_len, const char *exe, const char *path,
		      const struct sargv *argv, const char *cwd,
		      const char *const *env)
{
	struct event *e = &s->ev[s->n++];

	e->t = t;
	e->kind = PT_CAP_FRAME;
	e->conn = conn;
	e->peer = peer;
	e->off = s->data.len;
	e->len = frame_put(&s->data, type, pid, t, fixed, fixed_len, exe, path,
			   argv, cwd, env);
}

static void write_event(struct gen *g, const struct seq *s,
			const struct event *e)
{
	const void *data = e->len ? s->data.p + e->off : NULL;
	uint64_t recv = e->t + 40 * US;

	if (e->kind == PT_CAP_FRAME) {
		g->frames++;
		g->raw_bytes += e->len;
	} else if (e->kind == PT_CAP_CONNECT) {
		g->connections++;
	}
	if (pt_writer_add(g->w, e->kind, e->conn, e->peer, g->uid, recv, data,
			  e->len) < 0)
		exit(1);
}

static void seq_write_all(struct gen *g, struct seq *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		write_event(g, s, &s->ev[i]);
	seq_reset(s);
}

/* ---- processes ---- */

/* A program image that says HELLO on a new connection: returns the conn. */
static uint64_t image_start(struct gen *g, struct seq *s, uint64_t t,
			    uint32_t pid, uint32_t ppid, const char *exe,
			    const struct sargv *argv, const char *cwd,
			    const char *const *env)
{
	unsigned char f[32];
	uint64_t conn = ++g->conn_seq;

	seq_conn(s, PT_CAP_CONNECT, t, conn, pid);
	fixed_hello(f, ppid, g->uid, PT_HELLO_IMAGE,
		    1700000000000000000ull + t, t - 300 * US);
	seq_frame(s, t + 20 * US, conn, pid, PT_REC_HELLO, pid, f, 32, exe,
		  NULL, argv, cwd, env);
	g->executions++;
	return conn;
}

/* EXIT of an image whose own CPU was cpu ns (85 % user, 10 % system). */
static void image_exit(struct gen *g, struct seq *s, uint64_t t,
		       uint64_t conn, uint32_t pid, uint64_t cpu)
{
	unsigned char f[32];

	fixed_exit(f, 0, PT_EXIT_EXIT, cpu / 1000 * 85 / 100,
		   cpu / 1000 * 10 / 100, rng_range(&g->r, 2000, 300000));
	seq_frame(s, t, conn, pid, PT_REC_EXIT, pid, f, 32, NULL, NULL, NULL,
		  NULL, NULL);
	seq_conn(s, PT_CAP_EOF, t + 30 * US, conn, pid);
}

static void reap(struct gen *g, struct seq *s, uint64_t t, uint64_t conn,
		 uint32_t parent, uint32_t child, uint64_t dur)
{
	unsigned char f[40];

	fixed_reap(f, child, 0, dur / 1000 * 85 / 100, dur / 1000 / 10,
		   rng_range(&g->r, 2000, 300000));
	seq_frame(s, t, conn, parent, PT_REC_REAP, parent, f, 40, NULL, NULL,
		  NULL, NULL, NULL);
}

static void spawn(struct seq *s, uint64_t t, uint64_t conn, uint32_t parent,
		  uint32_t child, const char *path, const struct sargv *argv)
{
	unsigned char f[8];

	fixed_pair(f, child, PT_CALL_POSIX_SPAWN);
	seq_frame(s, t, conn, parent, PT_REC_SPAWN, parent, f, 8, NULL, path,
		  argv, NULL, NULL);
}

/* fork, then the child's EXEC on the inherited connection. */
static void fork_exec(struct seq *s, uint64_t t, uint64_t conn,
		      uint32_t parent, uint32_t child, uint32_t call,
		      const char *path, const struct sargv *argv,
		      const char *cwd)
{
	unsigned char f[8];

	fixed_pair(f, child, PT_CALL_FORK);
	seq_frame(s, t, conn, parent, PT_REC_FORK, parent, f, 8, NULL, NULL,
		  NULL, NULL, NULL);
	fixed_pair(f, parent, call);
	seq_frame(s, t + 150 * US, conn, parent, PT_REC_EXEC, child, f, 8,
		  NULL, path, argv, cwd, NULL);
}

/* `sh -c "joined argv"` */
static void sh_argv(struct sargv *sh, const struct sargv *cmd)
{
	char line[SARGV_POOL];
	size_t i, n = 0;

	for (i = 0; i < cmd->n && n < sizeof line - 1; i++) {
		int k = snprintf(line + n, sizeof line - n, "%s%s",
				 i ? " " : "", cmd->v[i]);

		if (k < 0 || (size_t)k >= sizeof line - n)
			break;
		n += (size_t)k;
	}
	line[n] = '\0';
	sargv_init(sh);
	sargv_add(sh, "/bin/sh");
	sargv_add(sh, "-c");
	sargv_add(sh, "%s", line);
}

/*
 * One recipe of sub-make `make` (conn mconn), starting at t: sh -c gcc,
 * then cc1 + as (compile) or collect2 + ld (link).  Fills s.
 */
static void job(struct gen *g, struct seq *s, uint64_t t, uint32_t make,
		uint64_t mconn, unsigned dir, unsigned unit, int is_link,
		unsigned pkg)
{
	static struct compile c;
	static struct link l;
	static struct sargv sh;
	const char *cwd = synth_cwd(dir);
	const char *const *env = pkg_env(pkg);
	const struct sargv *gcc;
	uint32_t p_sh, p_gcc, p_a, p_b;
	uint64_t c_sh, c_gcc, c_a, c_b, t_gcc, d_a, d_b, t_a_end, t_b_end;

	if (is_link) {
		synth_link(&g->r, &l, dir, rng_range(&g->r, 5, 120));
		gcc = &l.gcc;
	} else {
		synth_compile(&g->r, &c, dir, unit,
			      rng_logrange(&g->r, 200, 3000));
		gcc = &c.gcc;
	}
	sh_argv(&sh, gcc);
	p_sh = pid_alloc(g);
	p_gcc = pid_alloc(g);
	p_a = pid_alloc(g);
	p_b = pid_alloc(g);
	s->pids[0] = p_sh;
	s->pids[1] = p_gcc;
	s->pids[2] = p_a;
	s->pids[3] = p_b;
	s->npids = 4;

	/* make: posix_spawn of the shell */
	spawn(s, t, mconn, make, p_sh, "/bin/sh", &sh);
	c_sh = image_start(g, s, t + 400 * US, p_sh, make, "/bin/sh", &sh, cwd,
			   env);
	/* sh: fork + exec gcc */
	fork_exec(s, t + 700 * US, c_sh, p_sh, p_gcc, PT_CALL_EXECVE,
		  "/usr/bin/gcc", gcc, cwd);
	t_gcc = t + 1200 * US;
	c_gcc = image_start(g, s, t_gcc, p_gcc, p_sh, "/usr/bin/gcc", gcc, cwd,
			    env);
	if (is_link) {
		d_a = rng_logrange(&g->r, 60, 900) * MS;      /* collect2 */
		d_b = d_a - 10 * MS;                          /* its ld */
		spawn(s, t_gcc + 500 * US, c_gcc, p_gcc, p_a,
		      l.collect2.v[0], &l.collect2);
		c_a = image_start(g, s, t_gcc + 900 * US, p_a, p_gcc,
				  l.collect2.v[0], &l.collect2, cwd, env);
		spawn(s, t_gcc + 1500 * US, c_a, p_a, p_b, l.ld.v[0], &l.ld);
		c_b = image_start(g, s, t_gcc + 1900 * US, p_b, p_a, l.ld.v[0],
				  &l.ld, cwd, env);
		t_b_end = t_gcc + 1900 * US + d_b;
		image_exit(g, s, t_b_end, c_b, p_b, d_b);
		reap(g, s, t_b_end + 200 * US, c_a, p_a, p_b, d_b);
		t_a_end = t_b_end + 1 * MS;
		image_exit(g, s, t_a_end, c_a, p_a, 3 * MS);   /* collect2 */
		reap(g, s, t_a_end + 200 * US, c_gcc, p_gcc, p_a, d_a);
		t_b_end = t_a_end + 300 * US;
	} else {
		d_a = rng_logrange(&g->r, 15, 2500) * MS;     /* cc1 */
		d_b = rng_range(&g->r, 4, 40) * MS;           /* as */
		spawn(s, t_gcc + 500 * US, c_gcc, p_gcc, p_a, c.cc1.v[0],
		      &c.cc1);
		c_a = image_start(g, s, t_gcc + 900 * US, p_a, p_gcc,
				  c.cc1.v[0], &c.cc1, cwd, env);
		t_a_end = t_gcc + 900 * US + d_a;
		image_exit(g, s, t_a_end, c_a, p_a, d_a);
		reap(g, s, t_a_end + 200 * US, c_gcc, p_gcc, p_a, d_a);
		spawn(s, t_a_end + 400 * US, c_gcc, p_gcc, p_b, "/usr/bin/as",
		      &c.as);
		c_b = image_start(g, s, t_a_end + 800 * US, p_b, p_gcc,
				  "/usr/bin/as", &c.as, cwd, env);
		t_b_end = t_a_end + 800 * US + d_b;
		image_exit(g, s, t_b_end, c_b, p_b, d_b);
		reap(g, s, t_b_end + 200 * US, c_gcc, p_gcc, p_b, d_b);
	}
	image_exit(g, s, t_b_end + 500 * US, c_gcc, p_gcc, 4 * MS);
	reap(g, s, t_b_end + 700 * US, c_sh, p_sh, p_gcc, t_b_end - t_gcc);
	image_exit(g, s, t_b_end + 900 * US, c_sh, p_sh, 2 * MS);
	reap(g, s, t_b_end + 1100 * US, mconn, make, p_sh, t_b_end - t);
}

/* ---- directories: sub-makes with JOBS slots ---- */

struct slot {
	struct seq s;
	int busy;
};

static uint64_t directory(struct gen *g, struct slot *slots, int nslots,
			  uint64_t t, uint32_t top, uint64_t tconn,
			  unsigned dir, unsigned njobs)
{
	static struct sargv sh, mk;
	static struct seq d;
	const char *cwd = synth_cwd(dir);
	const char *const *env = pkg_env(dir / 10);
	uint32_t p_sh = pid_alloc(g), p_make = pid_alloc(g);
	uint64_t c_sh, c_make, t0 = t, last, next_start;
	unsigned started = 0;
	int i, busy = 0;

	sargv_init(&mk);
	sargv_add(&mk, "make");
	sargv_add(&mk, "-C");
	sargv_add(&mk, "src/%s", strrchr(cwd, '/') + 1);
	sargv_add(&mk, "-j%d", nslots);
	sargv_add(&mk, "all");
	sh_argv(&sh, &mk);

	/* top make: fork, exec sh; sh: fork, exec make */
	fork_exec(&d, t, tconn, top, p_sh, PT_CALL_EXECVP, "/bin/sh", &sh,
		  "/home/ci/builds/project");
	c_sh = image_start(g, &d, t + 600 * US, p_sh, top, "/bin/sh", &sh,
			   "/home/ci/builds/project", env);
	fork_exec(&d, t + 900 * US, c_sh, p_sh, p_make, PT_CALL_EXECVP,
		  "/usr/bin/make", &mk, "/home/ci/builds/project");
	c_make = image_start(g, &d, t + 1500 * US, p_make, p_sh,
			     "/usr/bin/make", &mk, cwd, env);
	seq_write_all(g, &d);
	last = next_start = t + 3 * MS;

	/*
	 * The recipes, nslots at a time, their records merged in time order.
	 * A recipe starts when a slot frees; the link (the last recipe)
	 * waits for all the others.
	 */
	for (;;) {
		struct slot *sl;
		const struct event *e;
		int best = -1;

		for (i = 0; i < nslots && started < njobs; i++) {
			if (slots[i].busy)
				continue;
			if (started == njobs - 1 && busy)
				break;
			seq_reset(&slots[i].s);
			job(g, &slots[i].s, next_start + (uint64_t)i * 150 * US,
			    p_make, c_make, dir, started, started == njobs - 1,
			    dir / 10);
			slots[i].busy = 1;
			busy++;
			started++;
		}
		for (i = 0; i < nslots; i++)
			if (slots[i].busy &&
			    (best < 0 || slots[i].s.ev[slots[i].s.next].t <
					 slots[best].s.ev[slots[best].s.next].t))
				best = i;
		if (best < 0)
			break;
		sl = &slots[best];
		e = &sl->s.ev[sl->s.next++];
		write_event(g, &sl->s, e);
		last = e->t;
		if (sl->s.next == sl->s.n) {
			for (i = 0; i < sl->s.npids; i++)
				pid_free(g, sl->s.pids[i]);
			sl->busy = 0;
			busy--;
			next_start = last + 300 * US;
		}
	}
	t = last + 1 * MS;
	image_exit(g, &d, t, c_make, p_make, (uint64_t)njobs * 400 * US);
	reap(g, &d, t + 300 * US, c_sh, p_sh, p_make, t - t0);
	image_exit(g, &d, t + 600 * US, c_sh, p_sh, 1 * MS);
	reap(g, &d, t + 900 * US, tconn, top, p_sh, t - t0);
	seq_write_all(g, &d);
	pid_free(g, p_sh);
	pid_free(g, p_make);
	return t + 2 * MS;
}

static void usage(void)
{
	fprintf(stderr, "usage: gencapture [-n EXECUTIONS] [-j JOBS] "
		"[-s SEED] OUTPUT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct gen g;
	static struct slot slots[MAX_SLOTS];
	static struct seq top;
	static struct sargv topargv;
	unsigned long long want = 1000000;
	uint64_t seed = 42, t = 1000 * 1000 * MS;
	int nslots = 8, c;
	unsigned dir = 0;
	uint32_t p_top;
	uint64_t c_top;
	char real[24], mono[24];
	const char *kv[] = {
		"host", "bench-synthetic", "kernel", "synthetic", "cpus", "8",
		"proftrace_version", "synthetic", "start_realtime_ns", real,
		"start_monotonic_ns", mono, "command", "make -j8",
	};

	while ((c = getopt(argc, argv, "n:j:s:")) != -1) {
		switch (c) {
		case 'n': want = strtoull(optarg, NULL, 10); break;
		case 'j': nslots = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || nslots < 1 || nslots > MAX_SLOTS)
		usage();
	g.w = pt_writer_open(argv[optind], 1);
	if (!g.w)
		return 1;
	g.r.s = seed * 0x9e3779b97f4a7c15ull + 1;
	g.uid = (uint32_t)getuid();
	g.next_pid = 1000;
	snprintf(real, sizeof real, "%llu", 1700000000000000000ull);
	snprintf(mono, sizeof mono, "%llu", (unsigned long long)t);
	if (pt_writer_meta(g.w, kv, sizeof kv / sizeof kv[0] / 2) < 0)
		return 1;

	sargv_init(&topargv);
	sargv_add(&topargv, "make");
	sargv_add(&topargv, "-j%d", nslots);
	p_top = pid_alloc(&g);
	c_top = image_start(&g, &top, t, p_top, 1, "/usr/bin/make", &topargv,
			    "/home/ci/builds/project", pkg_env(0));
	seq_write_all(&g, &top);
	t += 2 * MS;
	while (g.executions + 3 < want) {
		/* 2 per directory (sh, make) + 4 per recipe */
		unsigned long long left = (want - g.executions - 3) / 4;
		unsigned njobs = rng_range(&g.r, 20, 160);

		if (njobs > left)
			njobs = (unsigned)(left ? left : 1);
		t = directory(&g, slots, nslots, t, p_top, c_top, dir++, njobs);
	}
	image_exit(&g, &top, t, c_top, p_top, (uint64_t)dir * 20 * MS);
	seq_write_all(&g, &top);
	if (pt_writer_close(g.w) < 0)
		return 1;
	printf("executions %llu frames %llu connections %llu raw_bytes %llu "
	       "pid_wraps %lu\n", g.executions, g.frames, g.connections,
	       g.raw_bytes, g.pid_wraps);
	return 0;
}
