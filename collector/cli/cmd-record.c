/*
 * proftrace record: run one command with every process it starts traced,
 * collecting in this process (no daemon), then summarise.
 *
 * proftrace itself is never traced: LD_PRELOAD and PROFTRACE_SOCKET are set
 * only in the forked child, just before it execs the command.  The child
 * stays in our process group, so a terminal's ^C reaches it directly and
 * job control works; we only survive that ^C and keep collecting.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "proftrace/wire.h"
#include "collect/finish.h"
#include "collect/ptrace.h"
#include "collect/foreign.h"
#include "collect/session.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "collect/watch.h"
#include "model/status.h"
#include "analysis/eta.h"
#include "views/top.h"

#define MS              1000000ull
/* Short, so that the end of the quiet period below is seen within 5 ms:
 * every millisecond after the command's exit is added to its run. */
#define TICK_NS         (5 * MS)
#define STATUS_NS       (200 * MS)      /* status line refresh */
/*
 * After the command exits, its last descendants' frames may still be on
 * the way.  Once the collector is settled (no connection open or pending,
 * no process announced and still silent: pt_server_settled), nothing more
 * can come, and the capture ends at once.  Otherwise wait until no
 * connection has been active for QUIET_NS, but never longer than
 * GRACE_MAX_NS, since a daemon the command left behind may hold a
 * connection for hours.
 */
#define QUIET_NS        (100 * MS)
#define GRACE_MAX_NS    (2000 * MS)

/* --progress: its default interval, and the longest it backs off to. */
#define PROGRESS_DEFAULT_S 30
#define PROGRESS_MAX_S     600

struct record_opts {
	const char *output;
	int quiet, force, no_ptrace, files;
	unsigned progress;              /* --progress seconds, 0: none */
	char **command;
	size_t argc;
	struct pt_finish fin;           /* --csv ..., --redact */
};

struct record {
	pid_t child;
	struct pt_tracer *tracer;       /* NULL: the command is not traced */
	int child_done;
	int wait_status;
	uint64_t start_ns, exit_ns;
	int sig_fd;
	int status_line;                /* stderr is a terminal, not --quiet */
	int status_shown;               /* a status line is on the screen */
	uint64_t status_ns;
	uint64_t progress_ns;           /* --progress's interval, 0: none */
	uint64_t progress_next;
	const struct pt_session *ss;    /* its capture and --keep DIR, for
					 * the estimate */
};

static const char help_head[] =
	"Run COMMAND with every process it starts traced; write the capture,\n"
	"optionally a CSV and an HTML report, and print a summary.  Exits with\n"
	"COMMAND's status.\n\n"
	"  -o, --output CAPTURE  the capture to write (default\n"
	"                        proftrace-YYYYmmdd-HHMMSS.ptcap here)\n";
/* Then the end-of-run outputs (collect/finish.h). */
static const char help_tail[] =
	"  --files               also record the files each program reads,\n"
	"                        writes and probes (for proftrace deps and\n"
	"                        convert -f files)\n"
	"  --progress[=SECONDS]  write a line to standard error every SECONDS\n"
	"                        (default 30, less often as the run grows):\n"
	"                        elapsed, running, finished, the longest-\n"
	"                        running step, the time left (from --keep)\n"
	"  -q, --quiet           once COMMAND runs, no status line, summary or\n"
	"                        collector messages; an output that failed\n"
	"                        (--otlp, --csv...) is still one line\n"
	"  --force               overwrite CAPTURE, --csv and --html files\n"
	"  --no-ptrace           do not trace what the library cannot enter;\n"
	"                        watch it through /proc (PROFTRACE_PTRACE=0)\n"
	"  --redact REGEX        replace what REGEX (POSIX extended) matches in\n"
	"                        command lines by *** in the CSV and summary\n"
	"                        (repeatable; the capture keeps them whole)\n"
	"  -h, --help            show this help\n\n"
	"The full page: man proftrace-record (proftrace-record(1)).\n";

/* ---- the child ---- */

/*
 * What record changes in its own process and COMMAND must not inherit:
 * the open-file limit the collector raises (a program that closes every
 * descriptor up to the limit, or uses select(), would see it), SIGPIPE
 * (ignored so that a closed stderr cannot change record's exit status)
 * and the signal mask.
 */
struct inherited {
	sigset_t mask;
	struct sigaction pipe;
	struct rlimit nofile;
	int have_nofile;
};

static void inherited_save(struct inherited *in)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };

	in->have_nofile = getrlimit(RLIMIT_NOFILE, &in->nofile) == 0;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &in->pipe);
}

/* The last item of an LD_PRELOAD value (ld.so splits at ':' and ' '). */
static const char *last_item(const char *list)
{
	const char *p = list + strlen(list);

	while (p > list && p[-1] != ':' && p[-1] != ' ')
		p--;
	return p;
}

/*
 * Into added (cap bytes): the names of the variables exec_child is about
 * to set that the environment lacks, ':'-separated, and LD_PRELOAD when
 * preload is set (the library takes its own, last, item out of it): the
 * value of PT_ENV_ADDED, by which the command's library hides them from
 * the command (doc/design.md, "Environment repair").  A variable the user
 * had set is replaced and stays in sight; so does PROFTRACE_TRACE_DIR,
 * which is there for the command's programs to read (the manual's "For
 * tool authors").
 */
static void added_names(char *added, size_t cap, const char *preload,
			const char *log)
{
	const char *names[] = { PT_ENV_SOCKET, log ? PT_ENV_LOG : NULL };
	size_t i;

	snprintf(added, cap, "%s", preload ? "LD_PRELOAD" : "");
	for (i = 0; i < sizeof names / sizeof *names; i++)
		if (names[i] && !getenv(names[i]))
			snprintf(added + strlen(added), cap - strlen(added),
				 "%s%s", *added ? ":" : "", names[i]);
}

/* In the forked child: become COMMAND, traced by u.  Never returns. */
static void exec_child(char **command, const struct pt_session *u,
		       const struct inherited *in, int gate)
{
	const char *preload = u->preload, *log = u->log[0] ? u->log : NULL;
	char added[128], c;
	int err;

	/* Until we have had the chance to trace it, from its first image
	 * on: the gate's writer closes when we have (or are gone). */
	while (read(gate, &c, 1) < 0 && errno == EINTR)
		;
	close(gate);

	sigprocmask(SIG_SETMASK, &in->mask, NULL);
	sigaction(SIGPIPE, &in->pipe, NULL);
	if (in->have_nofile && setrlimit(RLIMIT_NOFILE, &in->nofile) < 0) {
		pt_warn("setrlimit: %s", strerror(errno));
		_exit(126);
	}
	/* Ours is the last item: a command of the other ELF class without
	 * a build of the library for it runs as untraced, watched from
	 * outside (foreign.h). */
	if (pt_foreign_unloadable(command[0], last_item(preload)))
		preload = NULL;
	added_names(added, sizeof added, preload, log);
	if ((preload ? setenv("LD_PRELOAD", preload, 1) : 0) < 0 ||
	    setenv(PT_ENV_SOCKET, u->sock, 1) < 0 ||
	    setenv(PT_ENV_TRACE_DIR, u->traces, 1) < 0 ||
	    /* never an outer run's log: a nested record is heard alone */
	    (log ? setenv(PT_ENV_LOG, log, 1) : unsetenv(PT_ENV_LOG)) < 0 ||
	    unsetenv(PT_ENV_ADDED) < 0 ||
	    (*added ? setenv(PT_ENV_ADDED, added, 1) : 0) < 0) {
		pt_warn("setenv: %s", strerror(errno));
		_exit(126);
	}
	execvp(command[0], command);
	err = errno;
	pt_warn("cannot run %s: %s", command[0], strerror(err));
	/* What a shell says: 127 not found, 126 found but not runnable. */
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* ---- status line ---- */

static void status_clear(struct record *r)
{
	if (r->status_shown && tcgetpgrp(STDERR_FILENO) == getpgrp())
		fputs("\r\033[K", stderr);
	r->status_shown = 0;
}

static void status_show(struct record *r, const struct pt_server_stats *st,
			uint64_t now)
{
	/* In the background, writing to the terminal would stop us
	 * (TOSTOP) or garble the foreground job's screen. */
	if (tcgetpgrp(STDERR_FILENO) != getpgrp()) {
		r->status_shown = 0;
		return;
	}
	fprintf(stderr, "\r\033[Kproftrace: %llu running, %llu finished, "
		"%.1f s", (unsigned long long)st->running,
		(unsigned long long)st->finished,
		(double)(now - r->start_ns) / 1e9);
	fflush(stderr);
	r->status_shown = 1;
}

/* One progress line to stderr, in one write. */
static void progress_line(const struct pt_status_snap *snap, uint64_t now,
			  const struct pt_eta_guess *g)
{
	struct pt_sb line = PT_SB_INIT;

	pt_top_progress(snap, now, g, &line);
	pt_sb_addch(&line, '\n');
	pt_write_all(STDERR_FILENO, line.buf, line.len);
	pt_sb_release(&line);
}

/*
 * --progress: one line to stderr, for logs.  The interval grows with the
 * run, as Bazel's does (a tenth of the time so far, up to ten minutes),
 * so that a long run does not flood its log.  The estimate reads the
 * kept runs and the capture so far, which takes time on a large build:
 * a grandchild does that and writes the line, so that the collector's
 * loop never waits for it (and never has a child of its own to reap).
 */
static void progress(struct record *r, struct pt_server *s, uint64_t now)
{
	struct pt_status_snap snap;
	struct pt_eta_guess g = { 0 };
	uint64_t every = r->progress_ns, grown = (now - r->start_ns) / 10;
	pid_t p = -1;

	if (pt_server_snapshot(s, &snap) < 0)
		return;
	fflush(stderr);
	if (r->ss->keep)
		p = fork();
	if (p == 0) {
		if (fork() == 0) {
			struct pt_eta h;

			if (pt_eta_load(&h, r->ss->keep) > 0)
				pt_eta_guess(&h, r->ss->capture,
					     (int64_t)pt_real_ns(), &g);
			progress_line(&snap, now, &g);
		}
		_exit(0);
	}
	if (p > 0)
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
	else
		progress_line(&snap, now, &g);
	pt_status_snap_free(&snap);
	if (grown > every)
		every = grown;
	if (every > PROGRESS_MAX_S * 1000000000ull)
		every = PROGRESS_MAX_S * 1000000000ull;
	r->progress_next = now + every;
}

/* ---- signals and the loop ---- */

/* s: where to record the command's end, or NULL once it has stopped. */
static void reap(struct record *r, struct pt_server *s)
{
	struct rusage ru;
	int ws;
	pid_t p;

	while (!r->child_done) {
		if (r->tracer) {
			if (!pt_tracer_wait(r->tracer, &ws, &ru))
				break;
			p = r->child;
		} else if ((p = wait4(r->child, &ws, WNOHANG, &ru)) == 0) {
			break;
		}
		if (p < 0) {
			if (errno == EINTR)
				continue;
			/* ECHILD: nothing to wait for; should not happen. */
			ws = 127 << 8;
		}
		r->child_done = 1;
		r->wait_status = ws;
		r->exit_ns = pt_mono_ns();
		/* Nobody else may see a static command end, or a Go one's
		 * status (it exits by a raw system call). */
		if (s && p > 0)
			pt_watch_root_end(pt_server_watcher(s), p, ws, &ru,
					  r->exit_ns);
	}
}

/*
 * Signals whose default action would end `record` and leave the command
 * running on, untraced and orphaned: they are the command's.  SIGINT and
 * SIGQUIT typed at the terminal already reached the command (same
 * process group), so only those sent by a process are passed on; the
 * rest always are.  The one list is both the mask and what is handled.
 */
static const int forwarded[] = {
	SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM,
};

static int from_terminal_too(int sig)
{
	return sig == SIGINT || sig == SIGQUIT;
}

/*
 * Read the pending signals.  s is NULL once the collector has stopped.
 */
static void handle_signals(struct record *r, struct pt_server *s)
{
	struct signalfd_siginfo si;

	while (read(r->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD) {
			reap(r, s);
			/* The frames still to come are all that stands between
			 * the command's end and ours: no batching. */
			if (r->child_done && s)
				pt_server_hurry(s);
			continue;
		}
		if (r->child_done) {
			/* Impatient during the grace period: stop now.  (A
			 * SIGUSR1 meant for the command has nobody to go to.) */
			if (s && (sig == SIGTERM || sig == SIGHUP ||
				  from_terminal_too(sig)))
				pt_server_stop(s);
			continue;
		}
		if (!from_terminal_too(sig) || si.ssi_code <= 0)
			kill(r->child, sig);
	}
}

static void on_signal(struct pt_server *s, void *arg)
{
	handle_signals(arg, s);
}

static void on_tick(struct pt_server *s, void *arg)
{
	struct record *r = arg;
	const struct pt_server_stats *st = pt_server_stats(s);
	uint64_t now = pt_mono_ns(), last;

	if (r->progress_ns && !r->child_done && now >= r->progress_next)
		progress(r, s, now);
	if (r->status_line && now - r->status_ns >= STATUS_NS) {
		status_show(r, st, now);
		r->status_ns = now;
	}
	if (!r->child_done)
		return;
	last = pt_server_last_activity(s);
	if (last < r->exit_ns)
		last = r->exit_ns;
	if (pt_server_settled(s) || now - last >= QUIET_NS ||
	    now - r->exit_ns >= GRACE_MAX_NS)
		pt_server_stop(s);
}

/* The collector stopped early (a STOP frame): still wait for COMMAND. */
static void wait_child(struct record *r)
{
	while (!r->child_done) {
		fd_set fds;

		FD_ZERO(&fds);
		FD_SET(r->sig_fd, &fds);
		if (select(r->sig_fd + 1, &fds, NULL, NULL, NULL) > 0)
			handle_signals(r, NULL);
	}
}

/* ---- after the run ---- */

static int exit_code(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	if (WIFSIGNALED(ws))
		return 128 + WTERMSIG(ws);
	return 1;
}

static int parse(int argc, char **argv, struct record_opts *o)
{
	struct option opts[7 + PT_FINISH_NOPTS + 1] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "no-ptrace", no_argument, NULL, 'P' },
		{ "progress", optional_argument, NULL, 'G' },
		{ "files", no_argument, NULL, 'F' },
	};
	char *end;
	long v;
	int c;

	pt_finish_options(opts, 7);
	/* '+': options end at COMMAND, whose own options are its own. */
	while ((c = pt_finish_getopt(&o->fin, argc, argv, "+o:qh",
				     opts)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'f': o->force = 1; break;
		case 'P': o->no_ptrace = 1; break;
		case 'G':
			o->progress = PROGRESS_DEFAULT_S;
			if (!optarg)
				break;
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 86400) {
				pt_warn("--progress: expected seconds from 1 to "
					"86400, not '%s'", optarg);
				return -1;
			}
			o->progress = (unsigned)v;
			break;
		case 'F': o->files = 1; break;
		case 'h':
			pt_finish_help(&o->fin, pt_cmd_record.name,
				       pt_cmd_record.usage, help_head, help_tail);
			exit(0);
		default:
			return -1;
		}
	}
	if (optind >= argc)
		return -1;
	o->command = argv + optind;
	o->argc = (size_t)(argc - optind);
	return 0;
}

static int run(int argc, char **argv)
{
	struct record_opts o = { 0 };
	struct pt_session u;
	struct record r = { .sig_fd = -1, .ss = &u };
	struct inherited in;
	sigset_t set;
	size_t i;
	int ok = 1, code, gate[2];

	/* Before the collector raises the open-file limit. */
	inherited_save(&in);
	pt_finish_init(&o.fin, PT_FINISH_STDOUT);
	if (parse(argc, argv, &o) < 0) {
		pt_finish_free(&o.fin);
		return pt_cmd_usage(&pt_cmd_record);
	}
	/* Everything that can fail before COMMAND runs: it must not run
	 * untraced because of a problem we could have reported. */
	if (pt_session_prepare(&u, &(struct pt_session_conf){
		    .output = o.output, .force = o.force, .files = o.files,
		    .command = o.command, .argc = o.argc, .fin = &o.fin }) < 0 ||
	    pt_session_start(&u) < 0) {
		pt_session_free(&u);
		return 1;
	}
	pt_session_status(&u);

	/* Signals arrive through the loop, not as interruptions. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, &in.mask);
	r.sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r.sig_fd < 0 || pt_server_watch(u.s, r.sig_fd, on_signal, &r) < 0) {
		pt_warn("signalfd: %s", strerror(errno));
		goto fail;
	}
	/* --progress's lines take the place of the status line. */
	r.status_line = !o.quiet && !o.progress && isatty(STDERR_FILENO);
	r.progress_ns = (uint64_t)o.progress * 1000000000ull;
	fflush(NULL);
	r.start_ns = pt_mono_ns();
	r.status_ns = r.start_ns;       /* no flash for short commands */
	if (pipe2(gate, O_CLOEXEC) < 0) {
		pt_warn("pipe: %s", strerror(errno));
		goto fail;
	}
	r.progress_next = r.start_ns + r.progress_ns;
	r.child = fork();
	if (r.child < 0) {
		pt_warn("fork: %s", strerror(errno));
		close(gate[0]);
		close(gate[1]);
		goto fail;
	}
	if (r.child == 0) {
		close(gate[1]);
		exec_child(o.command, &u, &in, gate[0]);
	}
	close(gate[0]);
	/* -q: from here on, only COMMAND speaks (proftrace-record.1). */
	if (o.quiet)
		pt_warn_mute();
	pt_watch_root(pt_server_watcher(u.s), r.child, o.command, r.start_ns);
	/* Traced from its first image on, as long as it loads no library
	 * (doc/design.md, "What the collector traces"); where the kernel
	 * refuses, watched as before, without a word. */
	if (!o.no_ptrace && pt_tracer_wanted()) {
		/* Kept where the root is not traced: what its processes ask
		 * to be traced (static and Go programs they exec) is. */
		r.tracer = pt_session_tracer(&u);
		if (!pt_tracer_privileged(o.command[0]) &&
		    pt_tracer_seize_root(r.tracer, r.child) == 0)
			pt_watch_root_traced(pt_server_watcher(u.s), r.child);
		else
			pt_tracer_set_root(r.tracer, r.child);
	}
	close(gate[1]);

	if (pt_server_run(u.s, TICK_NS, on_tick, &r) < 0)
		ok = 0;
	status_clear(&r);
	pt_session_stop(&u);
	if (pt_session_close(&u, r.child_done ? r.wait_status : -1) < 0)
		ok = 0;
	if (!r.child_done) {
		/* A STOP frame (or a loop failure) ended the capture before
		 * COMMAND: let a waiting 'proftrace stop' return, then let
		 * COMMAND run on, untraced, to give its status. */
		pt_session_hang_up(&u);
		wait_child(&r);
	}
	/* Read what is pending, so that only a ^C typed from now on (while
	 * the report is made) has its usual effect. */
	handle_signals(&r, NULL);
	sigprocmask(SIG_SETMASK, &in.mask, NULL);

	if (u.st.dropped || u.st.lost)
		pt_warn("%llu connections dropped, %llu frames lost",
			(unsigned long long)u.st.dropped,
			(unsigned long long)u.st.lost);
	/* A capture damaged by a write error still reads up to the damage. */
	if (pt_finish_write(&o.fin, u.output, o.quiet ? NULL : stderr) < 0)
		ok = 0;
	if (!o.quiet)
		pt_warn("capture: %s", u.output);
	/* -q: what did not arrive where it was asked still says so, one line
	 * each, after COMMAND's output. */
	pt_warn_failures_flush();
	code = exit_code(r.wait_status);
	pt_session_free(&u);
	close(r.sig_fd);
	/* COMMAND's status wins: the build must not fail because of us. */
	if (!ok)
		pt_warn("the recording is incomplete (see above)");
	return code;
fail:
	if (r.sig_fd >= 0)
		close(r.sig_fd);
	sigprocmask(SIG_SETMASK, &in.mask, NULL);
	pt_session_free(&u);    /* COMMAND never ran: nothing to keep */
	return 1;
}

const struct pt_cmd pt_cmd_record = {
	.name = "record",
	.usage = "[-o CAPTURE] " PT_FINISH_USAGE "[--progress[=SECONDS]] "
		 "[--quiet] [--force] [--no-ptrace] "
		 "[--redact REGEX]... [--] COMMAND [ARGS...]",
	.summary = "run a command and record every process it starts",
	.run = run,
};
