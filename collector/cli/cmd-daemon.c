/*
 * proftrace daemon: a long-running collector for commands started
 * elsewhere (a CI job's steps, an interactive shell).  Those commands find
 * it through PROFTRACE_SOCKET and load the library through LD_PRELOAD;
 * with --detach the daemon prints both as shell code for eval.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "proftrace/wire.h"
#include "base/quote.h"
#include "collect/finish.h"
#include "collect/ptrace.h"
#include "collect/session.h"
#include "base/strbuf.h"
#include "base/util.h"

struct daemon_opts {
	const char *output, *socket;
	int detach, force, files, no_ptrace;
	struct pt_finish fin;           /* --csv ..., --redact */
};

static const char help_head[] =
	"Collect the processes of commands started elsewhere into CAPTURE,\n"
	"until SIGTERM, SIGINT or 'proftrace stop'.\n\n"
	"  -o, --output CAPTURE  the capture to write (required)\n"
	"  --socket PATH         listen here (default /tmp/proftrace-UID/socket)\n"
	"  --files               also record the files each program reads,\n"
	"                        writes and probes (the LD_PRELOAD printed\n"
	"                        names the file-access library too; by hand:\n"
	"                        PROFTRACE_FILES=1 beside LD_PRELOAD)\n"
	"  --no-ptrace           never trace static and Go programs with\n"
	"                        ptrace (PROFTRACE_PTRACE=0 does the same):\n"
	"                        they are watched from /proc\n";
/* Then the end-of-run outputs (collect/finish.h). */
static const char help_tail[] =
	"  --detach              run in the background, logging to CAPTURE.log;\n"
	"                        print shell code for eval that sets\n"
	"                        PROFTRACE_SOCKET, LD_PRELOAD, PROFTRACE_TRACE_DIR\n"
	"                        and PROFTRACE_PID\n"
	"  --force               overwrite CAPTURE, --csv and --html files\n"
	"  --redact REGEX        replace what REGEX (POSIX extended) matches in\n"
	"                        command lines by *** in the CSV (repeatable;\n"
	"                        the capture keeps them whole)\n"
	"  -h, --help            show this help\n\n"
	"example: eval \"$(proftrace daemon -o ci.ptcap --detach)\"; make; "
	"proftrace stop\n"
	"The full page: man proftrace-daemon (proftrace-daemon(1)).\n";

/* The shell code that points commands at this daemon, held by pid
 * (0: this process), with its run log if it has one. */
static void print_exports(FILE *f, const char *prefix,
			  const struct pt_session *ss, long pid)
{
	struct pt_sb sb = PT_SB_INIT;
	char log[128];

	pt_sb_addf(&sb, "%sexport %s=", prefix, PT_ENV_SOCKET);
	pt_quote_shell(&sb, ss->sock);
	pt_sb_addf(&sb, "\n%sexport LD_PRELOAD=", prefix);
	pt_quote_shell(&sb, ss->preload);
	pt_sb_addf(&sb, "\n%sexport %s=", prefix, PT_ENV_TRACE_DIR);
	pt_quote_shell(&sb, ss->sock);
	pt_sb_addstr(&sb, ".trace");
	if (pt_server_log_name(ss->s, pid ? (pid_t)pid : getpid(), log,
			       sizeof log) == 0) {
		pt_sb_addf(&sb, "\n%sexport %s=", prefix, PT_ENV_LOG);
		pt_quote_shell(&sb, log);
	}
	if (pid)
		pt_sb_addf(&sb, "\n%sexport PROFTRACE_PID=%ld", prefix, pid);
	pt_sb_addch(&sb, '\n');
	fputs(sb.buf, f);
	fflush(f);
	pt_sb_release(&sb);
}

struct sigs {
	int fd;
	int chld_fd;                    /* SIGCHLD, while something is traced */
	struct pt_tracer *tracer;       /* NULL: nothing is traced */
};

static void on_signal(struct pt_server *s, void *arg)
{
	struct signalfd_siginfo si;
	struct sigs *g = arg;

	while (read(g->fd, &si, sizeof si) == (ssize_t)sizeof si) {
		pt_warn("%s received, finishing the capture",
			strsignal((int)si.ssi_signo));
		pt_server_stop(s);
	}
}

/* A tracee stopped or ended: the tracer resumes it, or writes its end
 * (the daemon has no root: nothing else is waited for). */
static void on_child(struct pt_server *s, void *arg)
{
	struct signalfd_siginfo si;
	struct sigs *g = arg;
	struct rusage ru;
	int ws;

	(void)s;
	while (read(g->chld_fd, &si, sizeof si) == (ssize_t)sizeof si)
		;
	pt_tracer_wait(g->tracer, &ws, &ru);
}

/*
 * What --detach prints instead of the exports when the daemon does not
 * start: `eval "$(proftrace daemon --detach)"` then fails as the command
 * did, where an empty string would have given the shell status 0.
 */
#define DETACH_FAILED "false\n"

/*
 * --detach: fork; the child leaves the terminal's session and logs to
 * log_fd; the parent waits until the child is ready, prints the exports
 * and exits.  Returns only in the child (0) or on error (-1).
 */
static int detach(const struct pt_session *ss, int log_fd,
		  const char *log_path)
{
	int ready[2], null_fd;
	pid_t pid;
	char c;

	if (pipe2(ready, O_CLOEXEC) < 0) {
		pt_warn("pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		pt_warn("fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		close(ready[1]);
		/* The socket is already listening (it was opened before the
		 * fork); this only waits for the child's own setup. */
		if (read(ready[0], &c, 1) != 1) {
			pt_warn("the daemon failed to start; see %s", log_path);
			fputs(DETACH_FAILED, stdout);
			_exit(1);
		}
		print_exports(stdout, "", ss, (long)pid);
		_exit(ferror(stdout) ? 1 : 0);
	}
	close(ready[0]);
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0 || setsid() < 0 || dup2(null_fd, 0) < 0 ||
	    dup2(null_fd, 1) < 0 || dup2(log_fd, 2) < 0 || chdir("/") < 0) {
		pt_warn("detaching: %s", strerror(errno));
		_exit(1);
	}
	close(null_fd);
	close(log_fd);
	if (write(ready[1], "", 1) != 1)
		_exit(1);
	close(ready[1]);
	return 0;
}

static int parse(int argc, char **argv, struct daemon_opts *o)
{
	struct option opts[7 + PT_FINISH_NOPTS + 1] = {
		{ "output", required_argument, NULL, 'o' },
		{ "socket", required_argument, NULL, 's' },
		{ "detach", no_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "files", no_argument, NULL, 'F' },
		{ "no-ptrace", no_argument, NULL, 'P' },
	};
	int c;

	pt_finish_options(opts, 7);
	while ((c = pt_finish_getopt(&o->fin, argc, argv, "o:h",
				     opts)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 's': o->socket = optarg; break;
		case 'd': o->detach = 1; break;
		case 'f': o->force = 1; break;
		case 'F': o->files = 1; break;
		case 'P': o->no_ptrace = 1; break;
		case 'h':
			pt_finish_help(&o->fin, pt_cmd_daemon.name,
				       pt_cmd_daemon.usage, help_head, help_tail);
			exit(0);
		default:
			return -1;
		}
	}
	if (optind != argc || !o->output)
		return -1;
	return 0;
}

static int run(int argc, char **argv)
{
	struct daemon_opts o = { 0 };
	struct pt_session ss;
	char *log_path = NULL;
	int log_made = 0;
	struct sigs g = { -1, -1, NULL };
	int log_fd = -1, status = 1, started = 0;
	sigset_t set;

	/* Absolute paths: a detached daemon leaves the directory. */
	pt_finish_init(&o.fin, PT_FINISH_ABSOLUTE);
	if (parse(argc, argv, &o) < 0) {
		pt_finish_free(&o.fin);
		return pt_cmd_usage(&pt_cmd_daemon);
	}
	if (pt_session_prepare(&ss, &(struct pt_session_conf){
		    .output = o.output, .socket = o.socket, .daemon = 1,
		    .force = o.force, .files = o.files, .fin = &o.fin }) < 0)
		goto out;
	if (o.detach) {
		struct pt_sb lp = PT_SB_INIT;

		pt_sb_addf(&lp, "%s.log", ss.output);
		log_path = pt_sb_detach(&lp, NULL);
		/* Appended to: an earlier daemon's log is not lost. */
		log_fd = open(log_path, O_WRONLY | O_CREAT | O_EXCL |
			      O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
		log_made = log_fd >= 0;
		if (log_fd < 0 && errno == EEXIST)
			log_fd = open(log_path, O_WRONLY | O_APPEND |
				      O_CLOEXEC | O_NOFOLLOW);
		if (log_fd < 0) {
			pt_warn("cannot create %s: %s", log_path,
				strerror(errno));
			goto out;
		}
	}
	if (pt_session_start(&ss) < 0)
		goto out;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* A log reader that went away must not kill the collector. */
	signal(SIGPIPE, SIG_IGN);
	g.fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (g.fd < 0 || pt_server_watch(ss.s, g.fd, on_signal, &g) < 0) {
		pt_warn("signalfd: %s", strerror(errno));
		goto out;
	}

	if (o.detach) {
		if (detach(&ss, log_fd, log_path) < 0)
			goto out;
		log_fd = -1;
	} else {
		pt_warn("collecting into %s; trace commands run with:",
			o.output);
		print_exports(stderr, "  ", &ss, 0);
	}
	started = 1;
	if (!o.no_ptrace && pt_tracer_wanted()) {
		/* Static and Go programs that processes with the library
		 * exec are traced (doc/design.md, "What the collector
		 * traces"): their stops and ends come as SIGCHLD.  Made by
		 * the process that stays (a detached daemon's child), whose
		 * own signalfd this must be: epoll hears a signalfd for the
		 * process that registered it. */
		sigset_t chld;

		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, NULL);
		g.chld_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
		if (g.chld_fd >= 0 &&
		    pt_server_watch(ss.s, g.chld_fd, on_child, &g) == 0)
			g.tracer = pt_session_tracer(&ss);
	}
	/* Named where an image started without the exports finds it: by
	 * the process that holds the run log now, a detached daemon's
	 * child. */
	pt_server_publish_log(ss.s, ss.sock);
	pt_session_status(&ss);
	pt_warn("listening at %s (pid %ld)", ss.sock, (long)getpid());

	if (pt_server_run(ss.s, 0, NULL, NULL) < 0)
		pt_warn("the collector loop failed; finishing the capture");
	if (pt_server_stopped_by(ss.s))
		pt_warn("stop requested by pid %u",
			(unsigned)pt_server_stopped_by(ss.s));
	pt_session_stop(&ss);
	pt_warn("%llu connections, %llu frames, %llu dropped, %llu lost",
		(unsigned long long)ss.st.conns_total,
		(unsigned long long)ss.st.frames,
		(unsigned long long)ss.st.dropped,
		(unsigned long long)ss.st.lost);
	status = pt_session_close(&ss, -1) < 0 ? 1 : 0;
	if (status == 0)
		pt_warn("capture %s complete", ss.output);
	if (pt_finish_write(&o.fin, ss.output, NULL) < 0)
		status = 1;
out:
	/* Closing the connections last tells a waiting 'proftrace stop'
	 * that the capture and the outputs are complete. */
	pt_session_free(&ss);
	if (g.fd >= 0)
		close(g.fd);
	if (g.chld_fd >= 0)
		close(g.chld_fd);
	if (log_fd >= 0)
		close(log_fd);
	if (!started) {
		/* Nothing ran: leave no log or CSV of it behind. */
		if (log_made)
			unlink(log_path);
		if (o.detach)
			fputs(DETACH_FAILED, stdout);
	}
	free(log_path);
	return status;
}

const struct pt_cmd pt_cmd_daemon = {
	.name = "daemon",
	.usage = "-o CAPTURE [--socket PATH] " PT_FINISH_USAGE
		 "[--detach] [--files] [--force] [--no-ptrace] "
		 "[--redact REGEX]...",
	.summary = "collect from commands started elsewhere until 'proftrace stop'",
	.run = run,
};
