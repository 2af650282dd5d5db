/*
 * proftrace top: watch a running `record` or daemon of ours.  It reads
 * the status snapshot the collector rewrites in its run directory
 * (model/status.h) and nothing else of the run but, for the estimate,
 * the capture being written and the earlier runs kept beside it: a top
 * that is killed, or many at once, cannot disturb the run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "proftrace/wire.h"
#include "analysis/eta.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "collect/rundir.h"
#include "model/status.h"
#include "model/load.h"
#include "views/summary.h"
#include "views/top.h"

#define S 1000000000ll
/* The estimate reads the whole live capture: not every refresh. */
#define ETA_EVERY_NS (5 * S)

static const char help_text[] =
	"Show what a running `proftrace record` or daemon of yours is doing,\n"
	"refreshed every second: counts, the running executions under their\n"
	"parents with their elapsed times, the slowest finished, and an\n"
	"estimate of the time left from earlier runs kept with --keep.  RUN\n"
	"names its capture, its run directory or its socket; without it, your\n"
	"run, or, when several are going, a list to choose from (1-9).\n\n"
	"  --once                print one snapshot as plain text and exit\n"
	"  --history DIR         earlier runs of the same build (captures in\n"
	"                        DIR) for the estimate (default: the run's\n"
	"                        --keep DIR)\n"
	"  -d, --delay SECONDS   refresh every SECONDS (default 1)\n"
	"  -h, --help            show this help\n\n"
	"Keys: q quit, s sort (time, pid, command), t tree or flat, c collapse\n"
	"the tree, space pause.\n\n"
	"The full page: man proftrace-top (proftrace-top(1)).\n";

struct top_opts {
	int once;
	const char *history;
	double delay;
	const char *run;
};

static volatile sig_atomic_t got_quit, got_winch;

static void on_sig(int sig)
{
	if (sig == SIGWINCH)
		got_winch = 1;
	else
		got_quit = 1;
}

/* ---- finding the run ---- */

/* Is the collector of a snapshot still there? */
static int alive(uint32_t pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Refuse a file that is not ours: 0, or -1 with the reason said. */
static int ours(const char *path, const char *name)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		if (errno == EACCES)
			pt_warn("%s is another user's run: refused (its "
				"directory is private)", name);
		else if (errno == ENOENT)
			pt_warn("%s: no running record or daemon there",
				name);
		else
			pt_warn("%s: %s", name, strerror(errno));
		return -1;
	}
	if (st.st_uid != geteuid()) {
		pt_warn("%s belongs to uid %u, not to you: refused", name,
			(unsigned)st.st_uid);
		return -1;
	}
	return 0;
}

struct cand {
	char **path;
	size_t n, cap;
};

static void cand_add(struct cand *c, const char *dir, const char *name,
		     const char *suffix)
{
	struct pt_sb sb = PT_SB_INIT;

	pt_sb_addf(&sb, "%s/%s%s", dir, name, suffix);
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->path = pt_xrealloc(c->path, c->cap * sizeof *c->path);
	}
	c->path[c->n++] = pt_sb_detach(&sb, NULL);
}

/* The snapshots under our directory: record's run directories, the
 * daemon's beside its socket. */
static void candidates(struct cand *c)
{
	char dir[64];
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof dir, "%s%u", PT_RUNDIR_PREFIX, (unsigned)getuid());
	if (!(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (!strncmp(de->d_name, "record-", 7))
			cand_add(c, dir, de->d_name, "/status");
		else if (len > 7 && !strcmp(de->d_name + len - 7, ".status"))
			cand_add(c, dir, de->d_name, "");
	}
	closedir(d);
}

static void cand_free(struct cand *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->path[i]);
	free(c->path);
}

/* The live runs of ours, newest first, when RUN is not named. */
struct runs {
	char **path;
	struct pt_status_snap *snap;
	size_t n;
};

static void runs_free(struct runs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->path[i]);
		pt_status_snap_free(&r->snap[i]);
	}
	free(r->path);
	free(r->snap);
	memset(r, 0, sizeof *r);
}

static void runs_add(struct runs *r, const char *path,
		     const struct pt_status_snap *s)
{
	size_t i;

	r->path = pt_xrealloc(r->path, (r->n + 1) * sizeof *r->path);
	r->snap = pt_xrealloc(r->snap, (r->n + 1) * sizeof *r->snap);
	for (i = r->n; i > 0 && r->snap[i - 1].start_real_ns <
			       s->start_real_ns; i--) {
		r->path[i] = r->path[i - 1];
		r->snap[i] = r->snap[i - 1];
	}
	r->path[i] = pt_xstrdup(path);
	r->snap[i] = *s;
	r->n++;
}

/* One line for a run in the list to choose from. */
static void run_line(const struct pt_status_snap *s, size_t k,
		     struct pt_sb *out)
{
	uint64_t now = pt_mono_ns();

	pt_sb_addf(out, "%2zu  ", k);
	pt_top_duration(out, now > s->start_mono_ns ?
			(int64_t)(now - s->start_mono_ns) : 0);
	pt_sb_addf(out, "  %s  %s  %s\n", s->kind,
		   *s->command ? s->command : "-",
		   *s->capture ? s->capture : "");
}

static void runs_list(const struct runs *r, int keys, struct pt_sb *out)
{
	pt_sb_addf(out, "proftrace top: %zu runs of yours, the newest first"
		   "%s\n\n     ELAPSED  KIND  COMMAND  CAPTURE\n", r->n,
		   keys ? "" : " (proftrace top CAPTURE watches one)");
	for (size_t i = 0; i < r->n; i++)
		run_line(&r->snap[i], i + 1, out);
	if (keys)
		pt_sb_addf(out, "\n1-%zu watch that run  q quit\n",
			   r->n < 9 ? r->n : 9);
}

/*
 * The snapshot to watch: RUN's, or the newest live one.  Returns its
 * path (malloc'd), or NULL with the reason said.  Without RUN, *all
 * gets every live run when there are several.
 */
static char *find_run(const char *run, struct runs *all)
{
	struct cand c = { 0 };
	struct pt_status_snap s;
	char *best = NULL, *want = NULL;
	uint64_t best_start = 0;
	struct stat st;
	size_t i;
	int found = run ? stat(run, &st) : -1;

	if (found < 0 && run && errno == EACCES) {
		ours(run, run);
		return NULL;
	}
	if (found == 0 && S_ISDIR(st.st_mode)) {
		struct pt_sb sb = PT_SB_INIT;

		pt_sb_addf(&sb, "%s/status", run);
		if (ours(sb.buf, run) < 0) {
			pt_sb_release(&sb);
			return NULL;
		}
		return pt_sb_detach(&sb, NULL);
	}
	if (found == 0 && S_ISSOCK(st.st_mode)) {
		struct pt_sb sb = PT_SB_INIT;

		pt_sb_addf(&sb, "%s.status", run);
		if (ours(sb.buf, run) < 0) {
			pt_sb_release(&sb);
			return NULL;
		}
		return pt_sb_detach(&sb, NULL);
	}
	if (run) {
		/* A capture: the run that writes it. */
		want = realpath(run, NULL);
		if (!want)
			want = pt_rundir_absolute(run);
	}
	candidates(&c);
	for (i = 0; i < c.n; i++) {
		if (pt_status_read(c.path[i], &s) < 0)
			continue;
		if ((s.ended || alive(s.pid)) &&
		    (!want || !strcmp(want, s.capture)) &&
		    (!best || s.start_real_ns > best_start)) {
			free(best);
			best = pt_xstrdup(c.path[i]);
			best_start = s.start_real_ns;
		}
		if (!run && all && (s.ended || alive(s.pid)))
			runs_add(all, c.path[i], &s);
		else
			pt_status_snap_free(&s);
	}
	cand_free(&c);
	if (!best) {
		if (want)
			pt_warn("no running record or daemon of yours writes "
				"%s", run);
		else
			pt_warn("no running record or daemon of yours (none "
				"under %s%u)", PT_RUNDIR_PREFIX,
				(unsigned)getuid());
	}
	free(want);
	if (all && all->n < 2)
		runs_free(all);
	return best;
}

/* ---- the terminal ---- */

struct term {
	int full;                       /* ANSI: redraw in place */
	int raw;                        /* termios changed */
	struct termios saved;
	int rows, cols;
};

static void term_size(struct term *t)
{
	struct winsize ws;

	t->rows = 24;
	t->cols = pt_term_width();
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	}
}

static void term_open(struct term *t)
{
	const char *term = getenv("TERM");

	t->full = isatty(STDOUT_FILENO) && term && *term &&
		  strcmp(term, "dumb") != 0;
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0) {
		struct termios raw = t->saved;

		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		t->raw = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	}
	if (t->full)
		fputs("\033[?1049h\033[?25l", stdout);
	term_size(t);
}

static void term_close(struct term *t)
{
	if (t->full)
		fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
	t->full = t->raw = 0;
}

static void term_draw(struct term *t, const struct pt_sb *frame)
{
	if (t->full) {
		const char *p = frame->buf, *nl;

		/* Each line cleared to its end: no leftovers. */
		fputs("\033[H", stdout);
		while ((nl = strchr(p, '\n'))) {
			fwrite(p, 1, (size_t)(nl - p), stdout);
			fputs("\033[K", stdout);
			p = nl + 1;
			if (*p)
				fputs("\r\n", stdout);
		}
		fputs("\033[J", stdout);
	} else {
		/* A dumb terminal or a file: one frame after another. */
		fwrite(frame->buf, 1, frame->len, stdout);
		fputs("\n", stdout);
	}
	fflush(stdout);
}

/*
 * Several runs and none named: the list, and a key picks one.  Returns
 * the path of the one chosen (malloc'd), or NULL to quit.
 */
static char *choose(struct runs *r)
{
	struct term t = { 0 };
	struct pt_sb frame = PT_SB_INIT;
	char *path = NULL;
	int quit = 0;

	term_open(&t);
	if (!t.raw) {
		/* No keys to read: the newest, as with one run. */
		term_close(&t);
		return pt_xstrdup(r->path[0]);
	}
	while (!path && !quit && !got_quit) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		char keys[16];
		ssize_t n, i;

		pt_sb_reset(&frame);
		runs_list(r, 1, &frame);
		term_draw(&t, &frame);
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		n = read(STDIN_FILENO, keys, sizeof keys);
		for (i = 0; i < n && !path && !quit; i++) {
			int k = keys[i] - '0';

			if (k >= 1 && k <= 9 && (size_t)k <= r->n)
				path = pt_xstrdup(r->path[k - 1]);
			else if (keys[i] == 'q' || keys[i] == 'Q' ||
				 keys[i] == 3)
				quit = 1;
		}
	}
	term_close(&t);
	pt_sb_release(&frame);
	return path;
}

/* ---- the end of a run ---- */

/*
 * The command's end as the capture has it: its first root's process,
 * whose last image ended as the command did.  For a run whose last
 * snapshot, the one that says so, was gone before it was read (the
 * collector removes it as it exits).
 */
static void end_from_capture(const struct pt_model *m,
			     struct pt_status_snap *s)
{
	const struct pt_exec *root = NULL, *last = NULL;
	size_t i;

	for (i = 0; i < m->n && !root; i++)
		if (!m->execs[i]->parent)
			root = m->execs[i];
	for (i = 0; root && i < m->n; i++)
		if (m->execs[i]->pid == root->pid &&
		    m->execs[i]->type == PT_EXEC_EXEC)
			last = m->execs[i];
	if (!last)
		return;
	if (last->signal > 0) {
		s->end_signal = last->signal;
		s->exit_code = 128 + last->signal;
	} else if (last->exit_code >= 0) {
		s->exit_code = last->exit_code;
	}
}

static void print_summary(struct pt_status_snap *s, int gone)
{
	char *paths[] = { s->capture };
	struct pt_sb line = PT_SB_INIT;
	struct pt_model m;
	int loaded = *s->capture && pt_model_load(&m, paths, 1, NULL) >= 0;

	if (gone) {
		printf("proftrace top: the collector (pid %u) is gone; the run "
		       "did not finish its capture\n", s->pid);
	} else {
		if (!s->ended && loaded && !strcmp(s->kind, "record"))
			end_from_capture(&m, s);
		pt_top_end(s, &line);
		printf("proftrace top: %s", line.buf);
		if (*s->command)
			printf(" (%s)", s->command);
		printf("\n");
		pt_sb_release(&line);
	}
	if (!loaded)
		return;
	printf("capture: %s\n", s->capture);
	pt_summary_print(&m, stdout);
	pt_model_free(&m);
	fflush(stdout);
}

/* ---- the loop ---- */

static int parse(int argc, char **argv, struct top_opts *o)
{
	static const struct option opts[] = {
		{ "once", no_argument, NULL, 'o' },
		{ "history", required_argument, NULL, 'H' },
		{ "delay", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c;

	o->delay = 1;
	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o->once = 1; break;
		case 'H': o->history = optarg; break;
		case 'd':
			o->delay = strtod(optarg, &end);
			if (*end || end == optarg || !(o->delay >= 0.1) ||
			    o->delay > 3600) {
				pt_warn("--delay: expected seconds from 0.1 to "
					"3600, not '%s'", optarg);
				return -1;
			}
			break;
		case 'h':
			printf("usage: proftrace %s %s\n\n%s", pt_cmd_top.name,
			       pt_cmd_top.usage, help_text);
			exit(0);
		default:
			return -1;
		}
	}
	if (argc - optind > 1)
		return -1;
	o->run = optind < argc ? argv[optind] : NULL;
	return 0;
}

struct watcher {
	struct pt_eta hist;
	int have_hist;
	struct pt_eta_guess guess;
	uint64_t guess_at;
};

static void estimate(struct watcher *w, const struct pt_status_snap *s,
		     int force)
{
	uint64_t now = pt_mono_ns();

	if (!w->have_hist || s->ended)
		return;
	if (!force && w->guess_at && now - w->guess_at < ETA_EVERY_NS)
		return;
	pt_eta_guess(&w->hist, s->capture, (int64_t)pt_real_ns(), &w->guess);
	w->guess_at = now;
}

/* One key.  Returns 1 to quit. */
static int key(int ch, struct pt_top_view *v)
{
	switch (ch) {
	case 'q': case 'Q': case 3:
		return 1;
	case 's': case '>': case '<':
		v->sort = (enum pt_top_sort)((v->sort + (ch == '<' ?
				PT_TOP_SORT_N - 1 : 1)) % PT_TOP_SORT_N);
		break;
	case 'T': v->sort = PT_TOP_SORT_TIME; break;
	case 'N': v->sort = PT_TOP_SORT_PID; break;
	case 't': v->tree = !v->tree; break;
	case 'c': case '-': case '+': v->collapse = !v->collapse; break;
	case ' ': case 'p': case 'Z': v->paused = !v->paused; break;
	}
	return 0;
}

static int run(int argc, char **argv)
{
	struct top_opts o = { 0 };
	struct watcher w = { 0 };
	struct pt_status_snap snap, next;
	struct pt_top_view v = { .tree = 1, .keys = 1 };
	struct term t = { 0 };
	struct pt_sb frame = PT_SB_INIT;
	struct sigaction sa;
	struct runs all = { 0 };
	char *path;
	int gone = 0, ended = 0, quit = 0;
	uint64_t next_look = 0;

	if (parse(argc, argv, &o) < 0)
		return pt_cmd_usage(&pt_cmd_top);
	if (!(path = find_run(o.run, &all)))
		return 1;
	if (all.n && o.once) {
		/* The list, then the newest as with one run. */
		pt_sb_reset(&frame);
		runs_list(&all, 0, &frame);
		fwrite(frame.buf, 1, frame.len, stdout);
		fputs("\n", stdout);
	} else if (all.n) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sig;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		free(path);
		path = choose(&all);
		if (!path) {
			runs_free(&all);
			return 0;
		}
	}
	runs_free(&all);
	if (pt_status_read(path, &snap) < 0) {
		pt_warn("cannot read the run's status (%s): %s", path,
			strerror(errno));
		free(path);
		return 1;
	}
	{
		const char *hdir = o.history ? o.history :
				   *snap.keep ? snap.keep : NULL;

		w.have_hist = hdir && pt_eta_load(&w.hist, hdir) > 0;
	}
	v.ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (o.once) {
		estimate(&w, &snap, 1);
		/* The estimate reads whole captures, which takes a while:
		 * the counts as they are now, to go with it. */
		if (w.have_hist && pt_status_read(path, &next) == 0) {
			pt_status_snap_free(&snap);
			snap = next;
		}
		v.eta = &w.guess;
		v.width = pt_term_width();
		v.keys = 0;
		v.now_mono = pt_mono_ns();
		v.now_real = (int64_t)pt_real_ns();
		if (!snap.ended && !alive(snap.pid))
			v.note = "the collector is gone: the run did not end "
				 "cleanly";
		pt_top_draw(&snap, &v, &frame);
		fwrite(frame.buf, 1, frame.len, stdout);
		pt_sb_release(&frame);
		pt_status_snap_free(&snap);
		if (w.have_hist)
			pt_eta_free(&w.hist);
		free(path);
		return 0;
	}

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sig;         /* no SA_RESTART: poll returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	/* From here on the screen is ours: messages would garble it, and
	 * reading a capture being written is expected to find it cut. */
	pt_warn_mute();
	term_open(&t);
	while (!quit && !got_quit) {
		uint64_t now = pt_mono_ns();
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int timeout, looked = 0;

		if (now >= next_look) {
			looked = 1;
			if (!v.paused) {
				int rc = pt_status_read(path, &next);

				/* A collector that ends well removes its
				 * snapshot after marking it ended; one that
				 * was killed leaves it as it was. */
				if (rc == 0 && !next.ended &&
				    !alive(next.pid)) {
					pt_status_snap_free(&next);
					rc = pt_status_read(path, &next);
					gone = rc == 0 && !next.ended;
				}
				if (rc == 0) {
					pt_status_snap_free(&snap);
					snap = next;
				}
				if ((rc < 0 && errno == ENOENT) || snap.ended ||
				    gone)
					ended = 1;
				if (ended)
					break;
				estimate(&w, &snap, 0);
			}
			next_look = now + (uint64_t)(o.delay * 1e9);
		}
		if (got_winch) {
			got_winch = 0;
			term_size(&t);
		}
		v.width = t.cols;
		v.height = t.full ? t.rows : 0;
		v.now_mono = v.paused ? v.now_mono : pt_mono_ns();
		v.now_real = v.paused ? v.now_real : (int64_t)pt_real_ns();
		v.eta = &w.guess;
		pt_sb_reset(&frame);
		pt_top_draw(&snap, &v, &frame);
		/* A dumb terminal gets a frame per look, not per key. */
		if (t.full || looked)
			term_draw(&t, &frame);
		timeout = (int)((next_look - pt_mono_ns()) / 1000000) + 1;
		if (poll(&pfd, t.raw ? 1 : 0, timeout) > 0) {
			char keys[16];
			ssize_t n = read(STDIN_FILENO, keys, sizeof keys), i;

			if (n == 0 && !t.raw)
				pfd.fd = -1;
			for (i = 0; i < n && !quit; i++)
				quit = key((unsigned char)keys[i], &v);
		}
	}
	term_close(&t);
	if (ended)
		print_summary(&snap, gone);
	pt_sb_release(&frame);
	pt_status_snap_free(&snap);
	if (w.have_hist)
		pt_eta_free(&w.hist);
	free(path);
	return 0;
}

const struct pt_cmd pt_cmd_top = {
	.name = "top",
	.usage = "[--once] [--history DIR] [--delay SECONDS] [RUN]",
	.summary = "watch a running record or daemon: what runs, what is left",
	.run = run,
};
