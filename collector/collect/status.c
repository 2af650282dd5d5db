/*
 * The status snapshot, as the collector keeps and writes it (its reader
 * is model/status.c); see model/status.h and doc/format.md ("The status
 * snapshot").
 */
#include "model/status.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "collect/internal.h"
#include "base/strbuf.h"
#include "base/util.h"

#define SECOND_NS 1000000000ull
/* Bytes of a command line kept: enough to tell the steps apart. */
#define CMD_MAX 240

/* A line-safe copy: the snapshot is one record a line. */
static void add_clean(struct pt_sb *sb, const char *s, size_t max)
{
	size_t start = sb->len;

	for (; *s && sb->len - start < max; s++)
		pt_sb_addch(sb, (unsigned char)*s < ' ' || *s == 0x7f ? '?'
								   : *s);
}

struct pt_status_state {
	char *path, *tmp;               /* NULL: kept in memory only */
	char *kind, *command, *capture, *keep;
	uint64_t start_mono, start_real;
	uint64_t failed;
	struct pt_status_exec slow[PT_STATUS_SLOWEST];
	size_t nslow;
	int dirty;
	uint64_t last_write;
	int ended, exit_code;
	uint64_t end_mono;
	struct {
		char *name;             /* NAME.VERSION */
		uint32_t running;       /* its images running now */
	} *pkg;
	size_t npkg;
	/* Processes seen from outside (static and Go programs, through
	 * ptrace or /proc): no connection stands for them. */
	struct pt_status_exec *seen;
	size_t nseen;
	uint64_t seen_finished;
	/* CPU: the processes of the run known to be alive, each with the
	 * CPU of it counted so far (cumulative, as /proc/PID/stat and
	 * RUSAGE_SELF count it: exec keeps it, fork restarts it). */
	struct cpu_proc {
		uint32_t pid;
		int kids;               /* children of it were heard of */
		int gone;               /* looks left before it is forgotten,
					 * 0: alive */
		uint64_t counted_ns;
	} *cpu;
	size_t ncpu;
	uint64_t cpu_at;                /* the last look */
	uint64_t cpu_window;            /* counted since then */
	uint64_t cpu_interval, cpu_busy;        /* the last interval's */
	uint64_t cpu_total;
	int written_empty;              /* the last snapshot: none started */
	int end_signal;
};

/* ---- CPU ---- */

static struct cpu_proc *cpu_find(struct pt_status_state *t, uint32_t pid)
{
	size_t i;

	for (i = 0; i < t->ncpu; i++)
		if (t->cpu[i].pid == pid)
			return &t->cpu[i];
	return NULL;
}

/* A process of the run, from its start (or its first image we hear
 * of): counted from base_ns, the CPU it had then that is not the
 * run's to count again (an exec's earlier images were counted under
 * the same pid already). */
static void cpu_start(struct pt_status_state *t, uint32_t pid,
		      uint32_t ppid, uint64_t base_ns)
{
	struct cpu_proc *p;

	if ((p = cpu_find(t, ppid)) != NULL)
		p->kids = 1;
	if (!pid || ((p = cpu_find(t, pid)) && !p->gone))
		return;
	if (!p) {
		t->cpu = pt_xrealloc(t->cpu, (t->ncpu + 1) * sizeof *t->cpu);
		p = &t->cpu[t->ncpu++];
	}
	/* New, or a pid used again. */
	p->pid = pid;
	p->kids = 0;
	p->gone = 0;
	p->counted_ns = base_ns;
}

/* pid has used cum_ns in all: count what is new. */
static void cpu_count(struct pt_status_state *t, struct cpu_proc *p,
		      uint64_t cum_ns)
{
	if (cum_ns <= p->counted_ns)
		return;
	t->cpu_window += cum_ns - p->counted_ns;
	t->cpu_total += cum_ns - p->counted_ns;
	p->counted_ns = cum_ns;
}

/* The process ended (cum_ns: its CPU at the end, 0 if unknown): counted
 * and forgotten. */
static void cpu_end(struct pt_status_state *t, uint32_t pid, uint64_t cum_ns)
{
	struct cpu_proc *p = cpu_find(t, pid);

	if (!p)
		return;
	cpu_count(t, p, cum_ns);
	*p = t->cpu[--t->ncpu];
}

/* utime + stime of pid from /proc/PID/stat, ns; -1 when it is gone.
 * *zombie: it has ended and waits for its parent's wait. */
static int64_t proc_cpu_ns(uint32_t pid, int *zombie)
{
	static long hz;
	char path[40], buf[1024], *p, state;
	unsigned long long ut, st;
	ssize_t n;
	int fd;

	if (!hz && (hz = sysconf(_SC_CLK_TCK)) <= 0)
		hz = 100;
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* After the command's closing parenthesis: state is field 3,
	 * utime and stime 14 and 15. */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
		   "%llu", &state, &ut, &st) != 3)
		return -1;
	*zombie = state == 'Z' || state == 'X';
	return (int64_t)((ut + st) * (SECOND_NS / (unsigned long long)hz));
}

/* Once a second: each live process's CPU from /proc, and the interval's
 * sum, which includes what the processes that ended in it used (counted
 * at their EXIT or REAP). */
static void cpu_look(struct pt_status_state *t, uint64_t now)
{
	size_t i = 0;

	while (i < t->ncpu) {
		struct cpu_proc *p = &t->cpu[i];
		int zombie = 0;
		int64_t ns = p->gone ? -1 : proc_cpu_ns(p->pid, &zombie);

		if (ns >= 0)
			cpu_count(t, p, (uint64_t)ns);
		/* Ended without an EXIT yet: its EXIT, which it sent before
		 * it ended, may still be on its way (another connection,
		 * the run log): kept for two more looks. */
		if ((ns < 0 || zombie) && !p->gone)
			p->gone = 3;
		if (p->gone && !--p->gone)
			*p = t->cpu[--t->ncpu];
		else
			i++;
	}
	/* Too short an interval says little (the last look, at the end):
	 * its CPU goes to the total only. */
	if (now - t->cpu_at < SECOND_NS / 4)
		return;
	t->cpu_interval = now - t->cpu_at;
	t->cpu_busy = t->cpu_window;
	t->cpu_window = 0;
	t->cpu_at = now;
}

static uint64_t us_pair(uint64_t ut, uint64_t st)
{
	return (ut + st) * 1000;
}


/* The opam package an image builds: opam sets both variables for the
 * commands of a package, and HELLO carries them. */
static char *package_of(const struct pt_record *rec)
{
	const char *name = NULL, *version = NULL;
	struct pt_sb sb = PT_SB_INIT;
	size_t i;

	for (i = 0; i < rec->envc; i++) {
		if (!strncmp(rec->env[i], "OPAM_PACKAGE_NAME=", 18))
			name = rec->env[i] + 18;
		else if (!strncmp(rec->env[i], "OPAM_PACKAGE_VERSION=", 21))
			version = rec->env[i] + 21;
	}
	if (!name || !*name)
		return NULL;
	add_clean(&sb, name, 100);
	if (version && *version) {
		pt_sb_addch(&sb, '.');
		add_clean(&sb, version, 60);
	}
	/* One field of the snapshot's line: no spaces. */
	for (i = 0; i < sb.len; i++)
		if (sb.buf[i] == ' ')
			sb.buf[i] = '_';
	return pt_sb_detach(&sb, NULL);
}

/* Its index in the table, added if new.  A build has a few hundred
 * packages at most: a look along the table is enough. */
static int package_index(struct pt_status_state *t, char *name)
{
	size_t i;

	for (i = 0; i < t->npkg; i++)
		if (!strcmp(t->pkg[i].name, name)) {
			free(name);
			return (int)i;
		}
	t->pkg = pt_xrealloc(t->pkg, (t->npkg + 1) * sizeof *t->pkg);
	t->pkg[t->npkg].name = name;
	t->pkg[t->npkg].running = 0;
	return (int)t->npkg++;
}

static char *join_argv(const struct pt_record *rec)
{
	struct pt_sb sb = PT_SB_INIT;
	size_t i;

	for (i = 0; i < rec->argc && sb.len < CMD_MAX; i++) {
		if (i)
			pt_sb_addch(&sb, ' ');
		add_clean(&sb, rec->argv[i], CMD_MAX - sb.len);
	}
	if (!sb.len)
		add_clean(&sb, rec->exe ? rec->exe : "?", CMD_MAX);
	return pt_sb_detach(&sb, NULL);
}

/* What the report will call it (analysis/labels.c): the program and
 * its work, a compiler's source file, where a cut command line would
 * lose it. */
static char *label_of(const struct pt_record *rec)
{
	struct pt_sb sb = PT_SB_INIT;

	pt_argv_label(rec->argv, rec->argc, rec->exe, &sb);
	return pt_sb_detach(&sb, NULL);
}

/* A forked child runs its parent's program: its parent's line, and its
 * package. */
static char *fork_cmd(struct pt_server *s, struct conn *c, uint32_t ppid)
{
	struct conn *p;
	struct pt_sb sb = PT_SB_INIT;

	for (p = s->conns; p; p = p->next)
		if (p->cmd && p->own_pid == ppid)
			break;
	if (p)
		c->pkg = p->pkg;
	pt_sb_addstr(&sb, "(fork) ");
	pt_sb_addstr(&sb, p ? p->cmd : "?");
	return pt_sb_detach(&sb, NULL);
}

/* ---- processes seen from outside ---- */

static struct pt_status_exec *seen_find(struct pt_status_state *t, uint32_t pid)
{
	size_t i;

	for (i = 0; i < t->nseen; i++)
		if (t->seen[i].pid == pid)
			return &t->seen[i];
	return NULL;
}

static void seen_drop(struct pt_status_state *t, struct pt_status_exec *e)
{
	free(e->cmd);
	free(e->label);
	*e = t->seen[--t->nseen];
	t->dirty = 1;
}

/* The image the library speaks for as pid, if any. */
static struct conn *heard(struct pt_server *s, uint32_t pid)
{
	struct conn *c;

	for (c = s->conns; c; c = c->next)
		if (c->cmd && c->own_pid == pid)
			return c;
	return NULL;
}

static void seen_start(struct pt_server *s, uint32_t pid, uint32_t ppid,
		       uint64_t start, char *cmd, char *label)
{
	struct pt_status_state *t = s->status;
	struct pt_status_exec *e = seen_find(t, pid);

	if (heard(s, pid)) {
		free(cmd);
		free(label);
		return;
	}
	if (!e) {
		t->seen = pt_xrealloc(t->seen, (t->nseen + 1) * sizeof *t->seen);
		e = &t->seen[t->nseen++];
		memset(e, 0, sizeof *e);
		e->pid = pid;
		e->ppid = ppid;
		e->start_ns = start;
		cpu_start(t, pid, ppid, 0);
	}
	free(e->cmd);
	free(e->label);
	e->cmd = cmd;
	e->label = label;
	t->dirty = 1;
}

/* A REAP: 1 if it ended a process seen from outside (its status, the
 * only one there is, says whether it failed). */
static int seen_reaped(struct pt_status_state *t, const struct pt_record *rec)
{
	struct pt_status_exec *e = seen_find(t, rec->u.reap.child_pid);
	int ws = rec->u.reap.wait_status;

	if (!e)
		return 0;
	/* Its CPU at the end: the wait's, unless it had children, whose
	 * CPU the wait adds and which are counted on their own. */
	{
		struct cpu_proc *p = cpu_find(t, e->pid);

		cpu_end(t, e->pid, p && !p->kids && rec->u.reap.have_rusage ?
			us_pair(rec->u.reap.utime_us,
				rec->u.reap.stime_us) : 0);
	}
	t->seen_finished++;
	if (ws != -1 && (WIFSIGNALED(ws) || (WIFEXITED(ws) && WEXITSTATUS(ws))))
		t->failed++;
	seen_drop(t, e);
	return 1;
}

void pt_status_synth(struct pt_server *s, const void *frame, size_t len)
{
	struct pt_status_state *t = s->status;
	struct pt_frame_header h;
	struct pt_record rec;
	struct pt_status_exec *e;
	struct conn *p;
	const char *why, *from;
	char *cmd;

	if (len < PT_FRAME_HDR ||
	    pt_frame_header_decode(frame, &h, &why) < 0 ||
	    (h.flags & PT_FRAME_DEFLATED) || h.length != len - PT_FRAME_HDR ||
	    pt_record_parse(&h, (const unsigned char *)frame + PT_FRAME_HDR,
			    &rec, &why) < 0)
		return;
	switch (h.type) {
	case PT_REC_SPAWN:              /* the /proc watcher's */
		if (rec.u.spawn.child_pid)
			seen_start(s, rec.u.spawn.child_pid, h.pid, h.time_ns,
				   join_argv(&rec), label_of(&rec));
		break;
	case PT_REC_FORK:               /* ptrace's */
		e = seen_find(t, h.pid);
		p = heard(s, h.pid);
		from = e ? e->cmd : p ? p->cmd : "?";
		cmd = pt_xmalloc(strlen(from) + sizeof "(fork) ");
		sprintf(cmd, "(fork) %s", from);
		seen_start(s, rec.u.fork.child_pid, h.pid, h.time_ns, cmd,
			   NULL);
		break;
	case PT_REC_EXEC:
		e = seen_find(t, h.pid);
		seen_start(s, h.pid, e ? e->ppid : rec.u.exec.ppid,
			   e ? e->start_ns : h.time_ns, join_argv(&rec),
			   label_of(&rec));
		break;
	case PT_REC_REAP:
		seen_reaped(t, &rec);
		break;
	}
	pt_record_free(&rec);
}

/* The library's EXEC or SPAWN of pid, which the tracer follows from its
 * exec on (doc/design.md, "What the collector traces"): the tracer
 * writes neither FORK nor EXEC for it, so this is its start here, and
 * the tracer's REAP its end. */
static void traced_start(struct pt_server *s, uint32_t pid, uint32_t ppid,
			 const struct pt_frame_header *h,
			 const unsigned char *payload)
{
	struct pt_record full;
	const char *why;

	if (!pid || !pt_tracer_has(s->tracer, (pid_t)pid) || heard(s, pid) ||
	    pt_record_parse(h, payload, &full, &why) < 0)
		return;
	seen_start(s, pid, ppid, h->time_ns, join_argv(&full),
		   label_of(&full));
	pt_record_free(&full);
}

void pt_status_frame(struct pt_server *s, struct conn *c,
		     const struct pt_record *rec,
		     const struct pt_frame_header *h,
		     const unsigned char *payload)
{
	struct pt_status_state *t = s->status;

	switch (rec->hdr.type) {
	case PT_REC_HELLO:
		if (c->cmd || c->hello_kind == PT_HELLO_AUX ||
		    rec->u.hello.kind != c->hello_kind)
			return;
		c->ppid = rec->u.hello.ppid;
		c->start_ns = rec->u.hello.start_ns ? rec->u.hello.start_ns
						    : rec->hdr.time_ns;
		{
			/* Seen from outside first: the library speaks
			 * for it from now on. */
			struct pt_status_exec *e = seen_find(t, c->own_pid);

			if (e)
				seen_drop(t, e);
		}
		if (c->hello_kind == PT_HELLO_IMAGE) {
			struct pt_record full;
			const char *why;

			char *pkg;

			if (pt_record_parse(h, payload, &full, &why) < 0)
				return;
			if (full.cpu_before) {
				unsigned long long ut, st;

				if (sscanf(full.cpu_before, "%llu %llu", &ut,
					   &st) == 2)
					c->cpu_base_ns = us_pair(ut, st);
			}
			c->cmd = join_argv(&full);
			c->label = label_of(&full);
			if ((pkg = package_of(&full)) != NULL)
				c->pkg = package_index(t, pkg);
			pt_record_free(&full);
		} else {
			c->cmd = fork_cmd(s, c, c->ppid);
		}
		if (c->pkg >= 0)
			t->pkg[c->pkg].running++;
		/* Its CPU from 0: the fork phase before a first image is
		 * the run's too; an exec's process is known already. */
		cpu_start(t, c->own_pid, c->ppid, 0);
		t->dirty = 1;
		break;
	case PT_REC_EXEC:
		traced_start(s, rec->hdr.pid, rec->u.exec.ppid, h, payload);
		break;
	case PT_REC_SPAWN:
		traced_start(s, rec->u.spawn.child_pid, rec->hdr.pid, h,
			     payload);
		break;
	case PT_REC_EXIT:
		if (rec->hdr.pid != c->own_pid || rec->hdr.origin)
			break;
		if (rec->u.exit.status & 0xff)
			c->failed = 1;
		/* The process ends: its CPU, all of it (the image's own and
		 * what the process had when the image started). */
		cpu_end(t, c->own_pid, c->cpu_base_ns +
			us_pair(rec->u.exit.utime_us, rec->u.exit.stime_us));
		break;
	case PT_REC_REAP:
		if (seen_reaped(t, rec))
			break;
		/* Killed: no EXIT of its own said so. */
		if (rec->u.reap.wait_status != -1 &&
		    WIFSIGNALED(rec->u.reap.wait_status)) {
			t->failed++;
			t->dirty = 1;
		}
		break;
	}
}

static void exec_copy(struct pt_status_exec *to, const struct pt_status_exec *from)
{
	*to = *from;
	to->cmd = pt_xstrdup(from->cmd ? from->cmd : "");
	to->label = from->label ? pt_xstrdup(from->label) : NULL;
}

void pt_status_conn_end(struct pt_server *s, struct conn *c, uint64_t now)
{
	struct pt_status_state *t = s->status;
	struct pt_status_exec e;
	size_t i;

	t->dirty = 1;
	if (c->failed)
		t->failed++;
	if (c->pkg >= 0 && (size_t)c->pkg < t->npkg &&
	    t->pkg[c->pkg].running)
		t->pkg[c->pkg].running--;
	if (!c->start_ns || now < c->start_ns)
		return;
	e.pid = c->own_pid;
	e.ppid = c->ppid;
	e.start_ns = c->start_ns;
	e.dur_ns = now - c->start_ns;
	e.cmd = c->cmd;
	e.label = c->label;
	/* The slowest few, slowest first. */
	for (i = t->nslow; i > 0 && t->slow[i - 1].dur_ns < e.dur_ns; i--)
		;
	if (i >= PT_STATUS_SLOWEST)
		return;
	if (t->nslow == PT_STATUS_SLOWEST) {
		free(t->slow[--t->nslow].cmd);
		free(t->slow[t->nslow].label);
	}
	memmove(&t->slow[i + 1], &t->slow[i], (t->nslow - i) * sizeof e);
	exec_copy(&t->slow[i], &e);
	t->nslow++;
}

static int by_start(const void *x, const void *y)
{
	const struct pt_status_exec *a = x, *b = y;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

int pt_server_snapshot(struct pt_server *s, struct pt_status_snap *o)
{
	struct pt_status_state *t = s->status;
	struct conn *c;
	size_t i, n = 0;

	memset(o, 0, sizeof *o);
	if (!t)
		return -1;
	o->pid = (uint32_t)getpid();
	o->kind = pt_xstrdup(t->kind);
	o->command = pt_xstrdup(t->command);
	o->capture = pt_xstrdup(t->capture);
	o->keep = pt_xstrdup(t->keep);
	o->start_mono_ns = t->start_mono;
	o->start_real_ns = t->start_real;
	o->written_mono_ns = pt_mono_ns();
	o->ended = t->ended;
	o->exit_code = t->ended ? t->exit_code : -1;
	o->end_mono_ns = t->end_mono;
	o->running = s->st.running + t->nseen;
	o->finished = s->st.finished + t->seen_finished;
	o->started = o->running + o->finished;
	o->failed = t->failed;
	o->cpu_interval_ns = t->cpu_interval;
	o->cpu_busy_ns = t->cpu_busy;
	o->cpu_total_ns = t->cpu_total;
	o->end_signal = t->end_signal;
	for (c = s->conns; c; c = c->next)
		if (c->cmd)
			n++;
	o->run = pt_xcalloc(n + t->nseen + 1, sizeof *o->run);
	for (i = 0; i < t->nseen; i++)
		exec_copy(&o->run[o->nrun++], &t->seen[i]);
	for (c = s->conns; c; c = c->next)
		if (c->cmd) {
			struct pt_status_exec *e = &o->run[o->nrun++];

			e->pid = c->own_pid;
			e->ppid = c->ppid;
			e->start_ns = c->start_ns;
			e->cmd = pt_xstrdup(c->cmd);
			e->label = c->label ? pt_xstrdup(c->label) : NULL;
		}
	qsort(o->run, o->nrun, sizeof *o->run, by_start);
	for (i = 0; i < t->nslow; i++)
		exec_copy(&o->slow[i], &t->slow[i]);
	o->nslow = t->nslow;
	o->pkg = pt_xcalloc(t->npkg ? t->npkg : 1, sizeof *o->pkg);
	for (i = 0; i < t->npkg; i++) {
		if (!t->pkg[i].running) {
			o->pkg_done++;
			continue;
		}
		o->pkg_running++;
		if (o->npkg < PT_STATUS_PACKAGES)
			o->pkg[o->npkg++] = pt_xstrdup(t->pkg[i].name);
	}
	return 0;
}

/* The label of the run or slow line before it, when it says more than
 * the start of the command line. */
static void add_label(struct pt_sb *sb, const struct pt_status_exec *e)
{
	size_t n;

	if (!e->label || !*e->label)
		return;
	n = strlen(e->label);
	if (!strncmp(e->cmd, e->label, n) &&
	    (e->cmd[n] == ' ' || !e->cmd[n]))
		return;
	pt_sb_addstr(sb, "label ");
	add_clean(sb, e->label, 200);
	pt_sb_addch(sb, '\n');
}

/* The snapshot's text (doc/format.md, "The status snapshot"). */
static void format(const struct pt_status_snap *o, struct pt_sb *sb)
{
	size_t i;

	pt_sb_addstr(sb, "proftrace-status 1\n");
	pt_sb_addf(sb, "pid %u\nkind %s\n", o->pid, o->kind);
	pt_sb_addstr(sb, "command ");
	add_clean(sb, o->command, 4096);
	pt_sb_addstr(sb, "\ncapture ");
	add_clean(sb, o->capture, 4096);
	pt_sb_addstr(sb, "\nkeep ");
	add_clean(sb, o->keep, 4096);
	pt_sb_addf(sb, "\nstart %llu %llu\nwritten %llu\n",
		   (unsigned long long)o->start_mono_ns,
		   (unsigned long long)o->start_real_ns,
		   (unsigned long long)o->written_mono_ns);
	pt_sb_addf(sb, "counts %llu %llu %llu %llu\n",
		   (unsigned long long)o->started,
		   (unsigned long long)o->running,
		   (unsigned long long)o->finished,
		   (unsigned long long)o->failed);
	if (o->cpu_interval_ns)
		pt_sb_addf(sb, "cpu %llu %llu %llu\n",
			   (unsigned long long)o->cpu_interval_ns,
			   (unsigned long long)o->cpu_busy_ns,
			   (unsigned long long)o->cpu_total_ns);
	for (i = 0; i < o->nrun && i < PT_STATUS_RUNNING; i++) {
		pt_sb_addf(sb, "run %u %u %llu %s\n", o->run[i].pid,
			   o->run[i].ppid,
			   (unsigned long long)o->run[i].start_ns,
			   o->run[i].cmd);
		add_label(sb, &o->run[i]);
	}
	for (i = 0; i < o->nslow; i++) {
		pt_sb_addf(sb, "slow %u %u %llu %llu %s\n", o->slow[i].pid,
			   o->slow[i].ppid,
			   (unsigned long long)o->slow[i].start_ns,
			   (unsigned long long)o->slow[i].dur_ns,
			   o->slow[i].cmd);
		add_label(sb, &o->slow[i]);
	}
	if (o->pkg_done || o->pkg_running) {
		pt_sb_addf(sb, "packages %llu %llu",
			   (unsigned long long)o->pkg_done,
			   (unsigned long long)o->pkg_running);
		for (i = 0; i < o->npkg; i++)
			pt_sb_addf(sb, " %s", o->pkg[i]);
		pt_sb_addch(sb, '\n');
	}
	if (o->ended)
		pt_sb_addf(sb, "ended %llu %d %d\n",
			   (unsigned long long)o->end_mono_ns, o->exit_code,
			   o->end_signal);
	pt_sb_addstr(sb, "end\n");
}

/* Written aside and renamed: a reader sees the old file or the new one,
 * whole. */
static void write_snapshot(struct pt_server *s, uint64_t now)
{
	struct pt_status_state *t = s->status;
	struct pt_status_snap o;
	struct pt_sb sb = PT_SB_INIT;
	int fd;

	t->dirty = 0;
	t->last_write = now;
	if (!t->path || pt_server_snapshot(s, &o) < 0)
		return;
	t->written_empty = !o.started;
	format(&o, &sb);
	pt_status_snap_free(&o);
	fd = open(t->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || pt_write_all(fd, sb.buf, sb.len) < 0 || close(fd) < 0 ||
	    rename(t->tmp, t->path) < 0) {
		/* The run goes on; only the watchers miss an update. */
		if (fd >= 0)
			unlink(t->tmp);
	}
	pt_sb_release(&sb);
}

void pt_status_tick(struct pt_server *s, uint64_t now)
{
	struct pt_status_state *t = s->status;

	/* The CPU changes while anything runs: a look a second, and a
	 * snapshot with it. */
	if (now - t->cpu_at >= SECOND_NS &&
	    (t->ncpu || t->cpu_busy || t->cpu_window)) {
		cpu_look(t, now);
		t->dirty = 1;
	}
	/* The first images are shown at once: the snapshot written at the
	 * start has none, and a watcher must not wait a second for them. */
	if (t->dirty && (now - t->last_write >= SECOND_NS ||
			 (t->written_empty && (s->st.running + t->nseen))))
		write_snapshot(s, now);
}

void pt_server_status(struct pt_server *s, const char *path, const char *kind,
		      const char *command, const char *capture,
		      const char *keep)
{
	struct pt_status_state *t = pt_xcalloc(1, sizeof *t);

	if (path) {
		t->path = pt_xstrdup(path);
		t->tmp = pt_xmalloc(strlen(path) + sizeof ".new");
		sprintf(t->tmp, "%s.new", path);
	}
	t->kind = pt_xstrdup(kind);
	t->command = pt_xstrdup(command ? command : "");
	t->capture = pt_xstrdup(capture ? capture : "");
	t->keep = pt_xstrdup(keep ? keep : "");
	t->start_mono = pt_mono_ns();
	t->start_real = pt_real_ns();
	t->cpu_at = t->start_mono;
	t->dirty = 1;
	pt_status_free(s);
	s->status = t;
	write_snapshot(s, t->start_mono);
}

void pt_server_status_end(struct pt_server *s, int wait_status)
{
	struct pt_status_state *t = s->status;

	if (!t)
		return;
	t->ended = 1;
	t->exit_code = -1;
	t->end_mono = pt_mono_ns();
	if (wait_status != -1 && WIFEXITED(wait_status)) {
		t->exit_code = WEXITSTATUS(wait_status);
	} else if (wait_status != -1 && WIFSIGNALED(wait_status)) {
		/* As a shell says it, and record exits with it. */
		t->end_signal = WTERMSIG(wait_status);
		t->exit_code = 128 + t->end_signal;
	}
	/* What ended since the last look. */
	cpu_look(t, t->end_mono);
	write_snapshot(s, t->end_mono);
}

void pt_status_free(struct pt_server *s)
{
	struct pt_status_state *t = s->status;
	size_t i;

	if (!t)
		return;
	if (t->path)
		unlink(t->path);
	for (i = 0; i < t->nslow; i++) {
		free(t->slow[i].cmd);
		free(t->slow[i].label);
	}
	for (i = 0; i < t->npkg; i++)
		free(t->pkg[i].name);
	free(t->pkg);
	for (i = 0; i < t->nseen; i++) {
		free(t->seen[i].cmd);
		free(t->seen[i].label);
	}
	free(t->seen);
	free(t->cpu);
	free(t->path);
	free(t->tmp);
	free(t->kind);
	free(t->command);
	free(t->capture);
	free(t->keep);
	free(t);
	s->status = NULL;
}
