/* The live view of a run; see top.h and doc/views.md ("top"). */
#include "views/top.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define MS 1000000ll
#define S  1000000000ll

const char *pt_top_sort_name(enum pt_top_sort s)
{
	static const char *const names[] = { "time", "pid", "command" };

	return (unsigned)s < PT_TOP_SORT_N ? names[s] : "?";
}

void pt_top_duration(struct pt_sb *out, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	if (ns < S)
		pt_sb_addf(out, "%lld ms", (long long)(ns / MS));
	else if (ns < 60 * S)
		pt_sb_addf(out, "%.1f s", (double)ns / S);
	else if (ns < 3600 * S)
		pt_sb_addf(out, "%lld min %02lld s", (long long)(ns / (60 * S)),
			   (long long)(ns / S % 60));
	else
		pt_sb_addf(out, "%lld h %02lld min",
			   (long long)(ns / (3600 * S)),
			   (long long)(ns / (60 * S) % 60));
}

void pt_top_cpu(const struct pt_status_snap *s, int ncpu, struct pt_sb *out)
{
	if (!s->cpu_interval_ns) {
		pt_sb_addstr(out, "CPU: not measured yet");
		return;
	}
	pt_sb_addf(out, "CPU %.1f", (double)s->cpu_busy_ns /
		   (double)s->cpu_interval_ns);
	if (ncpu > 0)
		pt_sb_addf(out, " of %d", ncpu);
	pt_sb_addstr(out, " in use, ");
	pt_top_duration(out, (int64_t)s->cpu_total_ns);
	pt_sb_addstr(out, " used so far");
}

void pt_top_end(const struct pt_status_snap *s, struct pt_sb *out)
{
	pt_sb_addstr(out, "the run ended");
	if (s->end_signal > 0) {
		const char *name = sigabbrev_np(s->end_signal);

		pt_sb_addf(out, ": killed by signal %d", s->end_signal);
		if (name)
			pt_sb_addf(out, " (SIG%s)", name);
	} else if (s->exit_code >= 0) {
		pt_sb_addf(out, ": exit status %d", s->exit_code);
	} else if (!strcmp(s->kind, "daemon")) {
		pt_sb_addstr(out, ": the daemon stopped");
	} else {
		pt_sb_addstr(out, ": its exit status is not known");
	}
}

/* The line in sb from byte `from` cut to width columns (UTF-8 aware),
 * then the newline. */
static void end_line(struct pt_sb *sb, size_t from, int width)
{
	size_t i, cols = 0;

	for (i = from; i < sb->len; i++) {
		unsigned char c = (unsigned char)sb->buf[i];

		if ((c & 0xc0) == 0x80)
			continue;
		if ((int)cols == width) {
			sb->len = i;
			sb->buf[i] = '\0';
			break;
		}
		cols++;
	}
	pt_sb_addch(sb, '\n');
}

static int64_t now_of(const struct pt_status_snap *s, uint64_t now)
{
	return (int64_t)(s->ended ? s->end_mono_ns : now);
}

static int64_t elapsed_of(const struct pt_status_exec *e, int64_t now)
{
	return now > (int64_t)e->start_ns ? now - (int64_t)e->start_ns : 0;
}

static enum pt_top_sort sort_by;

static int cmp_exec(const void *x, const void *y)
{
	const struct pt_status_exec *a = *(const struct pt_status_exec *const *)x;
	const struct pt_status_exec *b = *(const struct pt_status_exec *const *)y;
	int c;

	switch (sort_by) {
	case PT_TOP_SORT_PID:
		return a->pid < b->pid ? -1 : a->pid > b->pid;
	case PT_TOP_SORT_COMMAND:
		if ((c = strcmp(a->cmd, b->cmd)) != 0)
			return c;
		break;
	default:
		break;
	}
	/* The longest-running first. */
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

struct rows {
	const struct pt_status_exec **e;
	int *depth;
	size_t n;
};

static int is_running(const struct pt_status_snap *s, uint32_t pid)
{
	size_t i;

	for (i = 0; i < s->nrun; i++)
		if (s->run[i].pid == pid)
			return 1;
	return 0;
}

static int has_children(const struct pt_status_exec **sorted, size_t n,
			const struct pt_status_exec *e)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (sorted[i]->ppid == e->pid && sorted[i] != e)
			return 1;
	return 0;
}

/*
 * Depth-first: e's running children, sorted, under it.  Collapsed, the
 * top two levels (a shell, the build tool) and the leaves, the jobs
 * doing the work (a compiler), one level under them: the shells and
 * drivers between are hidden and counted.
 */
static void add_tree(struct rows *r, const struct pt_status_exec **sorted,
		     size_t n, const struct pt_status_exec *e, int depth,
		     const struct pt_top_view *v, size_t *hidden)
{
	size_t i;

	if (v->collapse && depth > 1 && has_children(sorted, n, e)) {
		(*hidden)++;
	} else {
		r->e[r->n] = e;
		r->depth[r->n++] = v->collapse && depth > 2 ? 2 : depth;
	}
	for (i = 0; i < n; i++)
		if (sorted[i]->ppid == e->pid && sorted[i] != e &&
		    depth < 64)
			add_tree(r, sorted, n, sorted[i], depth + 1, v, hidden);
}

static void exec_line(struct pt_sb *out, const struct pt_status_exec *e,
		      int64_t dur, int depth, int width)
{
	struct pt_sb d = PT_SB_INIT;
	size_t from = out->len;
	int i;

	pt_top_duration(&d, dur);
	pt_sb_addf(out, "%10s %7u  ", d.buf, e->pid);
	pt_sb_release(&d);
	for (i = 0; i < depth && i < 12; i++)
		pt_sb_addstr(out, "  ");
	/* A command line cut at the edge may lose what it works on (a
	 * compiler's source file comes last): the report's label first,
	 * then as much of the line as fits. */
	if (e->label && (int)(out->len - from + strlen(e->cmd)) > width)
		pt_sb_addf(out, "%s | ", e->label);
	pt_sb_addstr(out, e->cmd);
	end_line(out, from, width);
}

void pt_top_draw(const struct pt_status_snap *s, const struct pt_top_view *v,
		 struct pt_sb *out)
{
	int64_t now = now_of(s, v->now_mono);
	int width = v->width > 20 ? v->width : 20;
	const struct pt_status_exec **sorted;
	struct rows r;
	size_t i, from, hidden = 0, lines = 0, room;

	from = out->len;
	pt_sb_addstr(out, "proftrace top: ");
	pt_sb_addstr(out, *s->command ? s->command : s->kind);
	end_line(out, from, width);
	from = out->len;
	pt_top_duration(out, now - (int64_t)s->start_mono_ns);
	pt_sb_addf(out, " elapsed   %llu started  %llu running  "
		   "%llu finished  %llu failed",
		   (unsigned long long)s->started,
		   (unsigned long long)s->running,
		   (unsigned long long)s->finished,
		   (unsigned long long)s->failed);
	end_line(out, from, width);
	from = out->len;
	pt_top_cpu(s, v->ncpu, out);
	end_line(out, from, width);
	from = out->len;
	if (s->ended) {
		pt_top_end(s, out);
	} else if (v->eta && v->eta->have) {
		pt_top_estimate(v->eta, v->now_real, 1, out);
	} else {
		pt_sb_addstr(out, "no estimate: no earlier run of it kept");
	}
	end_line(out, from, width);
	lines = 4;
	if (s->pkg_done || s->pkg_running) {
		from = out->len;
		pt_sb_addf(out, "opam packages: %llu done, %llu running",
			   (unsigned long long)s->pkg_done,
			   (unsigned long long)s->pkg_running);
		for (i = 0; i < s->npkg; i++)
			pt_sb_addf(out, "%s%s", i ? ", " : ": ", s->pkg[i]);
		end_line(out, from, width);
		lines++;
	}
	if (v->note) {
		from = out->len;
		pt_sb_addstr(out, v->note);
		end_line(out, from, width);
		lines++;
	}

	/* The running ones. */
	sorted = pt_xcalloc(s->nrun ? s->nrun : 1, sizeof *sorted);
	for (i = 0; i < s->nrun; i++)
		sorted[i] = &s->run[i];
	sort_by = v->sort;
	qsort(sorted, s->nrun, sizeof *sorted, cmp_exec);
	r.e = pt_xcalloc(s->nrun ? s->nrun : 1, sizeof *r.e);
	r.depth = pt_xcalloc(s->nrun ? s->nrun : 1, sizeof *r.depth);
	r.n = 0;
	if (v->tree) {
		for (i = 0; i < s->nrun; i++)
			if (!is_running(s, sorted[i]->ppid) ||
			    sorted[i]->ppid == sorted[i]->pid)
				add_tree(&r, sorted, s->nrun, sorted[i], 0, v,
					 &hidden);
	} else {
		for (i = 0; i < s->nrun; i++) {
			r.e[r.n] = sorted[i];
			r.depth[r.n++] = 0;
		}
	}
	pt_sb_addch(out, '\n');
	from = out->len;
	pt_sb_addf(out, "running (%zu)", s->nrun);
	if (s->nrun < s->running)
		pt_sb_addf(out, ", %llu more not listed",
			   (unsigned long long)(s->running - s->nrun));
	if (hidden)
		pt_sb_addf(out, ", %zu collapsed", hidden);
	pt_sb_addf(out, "   sorted by %s%s", pt_top_sort_name(v->sort),
		   v->tree ? ", as a tree" : "");
	if (v->paused)
		pt_sb_addstr(out, "   PAUSED");
	end_line(out, from, width);
	from = out->len;
	pt_sb_addstr(out, "   ELAPSED     PID  COMMAND");
	end_line(out, from, width);
	lines += 3;
	/* Room for the slowest ones and the keys below. */
	room = v->height ? (size_t)v->height : SIZE_MAX;
	{
		size_t below = 2 + s->nslow + (v->keys ? 2 : 0);

		for (i = 0; i < r.n; i++) {
			if (lines + below + 1 >= room && i + 1 < r.n) {
				from = out->len;
				pt_sb_addf(out, "   ... %zu more", r.n - i);
				end_line(out, from, width);
				lines++;
				break;
			}
			exec_line(out, r.e[i], elapsed_of(r.e[i], now),
				  r.depth[i], width);
			lines++;
		}
	}
	if (s->nslow && lines + 2 < room) {
		pt_sb_addch(out, '\n');
		from = out->len;
		pt_sb_addstr(out, "slowest finished");
		end_line(out, from, width);
		lines += 2;
		for (i = 0; i < s->nslow && lines + (v->keys ? 2 : 0) < room;
		     i++, lines++)
			exec_line(out, &s->slow[i], (int64_t)s->slow[i].dur_ns,
				  0, width);
	}
	if (v->keys && lines + 2 <= room) {
		pt_sb_addch(out, '\n');
		from = out->len;
		pt_sb_addstr(out, "q quit  s sort  t tree  c collapse  "
			     "space pause");
		end_line(out, from, width);
	}
	free(sorted);
	free(r.e);
	free(r.depth);
}

void pt_top_estimate(const struct pt_eta_guess *g, int64_t now_real,
		     int long_form, struct pt_sb *out)
{
	int64_t since = now_real > g->at_real ? now_real - g->at_real : 0;
	int overdue = g->overdue || since >= g->left_ns;

	/* Made a few seconds ago (top makes one every five): what has
	 * passed since is gone from what is left. */
	if (overdue) {
		pt_sb_addstr(out, "overdue by ");
		pt_top_duration(out, g->overdue ? g->overdue_ns + since
						: since - g->left_ns);
	} else {
		if (long_form)
			pt_sb_addstr(out, "about ");
		pt_top_duration(out, g->left_ns - since);
		pt_sb_addstr(out, " left");
	}
	/* --progress's line is short: "+/- 2.4 s", "(1 run)". */
	if (!long_form) {
		if (g->nruns == 1) {
			pt_sb_addstr(out, " (1 run)");
		} else if (!overdue) {
			pt_sb_addstr(out, " +/- ");
			pt_top_duration(out, g->spread_ns);
		}
		return;
	}
	if (g->nruns == 1) {
		pt_sb_addstr(out, " (one earlier run: no spread)");
		return;
	}
	pt_sb_addstr(out, " (");
	if (!overdue) {
		pt_sb_addstr(out, "+/- ");
		pt_top_duration(out, g->spread_ns);
		pt_sb_addstr(out, ", ");
	}
	pt_sb_addf(out, "from %zu earlier runs)", g->nruns);
}

/* The longest-running step: s->run is in start order, and the first
 * that waits for no other is the longest-running step (not the build
 * tool). */
static const struct pt_status_exec *longest(const struct pt_status_snap *s)
{
	size_t i, j;

	if (!s->nrun)
		return NULL;
	for (i = 0; i + 1 < s->nrun; i++) {
		for (j = 0; j < s->nrun; j++)
			if (s->run[j].ppid == s->run[i].pid)
				break;
		if (j == s->nrun)
			break;
	}
	return &s->run[i];
}

void pt_top_progress(const struct pt_status_snap *s, uint64_t now_mono,
		     const struct pt_eta_guess *eta, struct pt_sb *out)
{
	int64_t now = now_of(s, now_mono);
	const struct pt_status_exec *l = longest(s);
	struct pt_sb dur = PT_SB_INIT;
	size_t room;

	pt_sb_addstr(out, "proftrace: ");
	pt_top_duration(out, now - (int64_t)s->start_mono_ns);
	pt_sb_addf(out, ", %llu running, %llu finished",
		   (unsigned long long)s->running,
		   (unsigned long long)s->finished);
	if (s->failed)
		pt_sb_addf(out, ", %llu failed",
			   (unsigned long long)s->failed);
	if (s->cpu_interval_ns)
		pt_sb_addf(out, ", CPU %.1f", (double)s->cpu_busy_ns /
			   (double)s->cpu_interval_ns);
	if (s->pkg_done || s->pkg_running)
		pt_sb_addf(out, ", opam packages %llu done, %llu running",
			   (unsigned long long)s->pkg_done,
			   (unsigned long long)s->pkg_running);
	if (eta && eta->have) {
		pt_sb_addstr(out, "; ");
		pt_top_estimate(eta, eta->at_real, 0, out);
	}
	/* The step in what room is left of PT_TOP_PROGRESS_MAX: a log's
	 * line is read whole, and a long one wraps. */
	if (l) {
		const char *what = l->label ? l->label : l->cmd;
		size_t len = strlen(what), fixed;

		pt_top_duration(&dur, elapsed_of(l, now));
		fixed = out->len + strlen("; longest:  ()") + dur.len;
		room = fixed < PT_TOP_PROGRESS_MAX ?
		       PT_TOP_PROGRESS_MAX - fixed : 0;
		if (room >= 8) {
			pt_sb_addstr(out, "; longest: ");
			if (len > room) {
				size_t n = room - 3;

				/* Not in the middle of a UTF-8 sequence. */
				while (n && ((unsigned char)what[n] & 0xc0) ==
					    0x80)
					n--;
				pt_sb_add(out, what, n);
				pt_sb_addstr(out, "...");
			} else {
				pt_sb_add(out, what, len);
			}
			pt_sb_addf(out, " (%s)", dur.buf);
		}
	}
	pt_sb_release(&dur);
}
