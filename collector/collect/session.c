/* The collector's life for record and daemon; see session.h. */
#include "collect/session.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proftrace/wire.h"
#include "base/quote.h"
#include "base/util.h"
#include "collect/finish.h"
#include "collect/ptrace.h"
#include "collect/rundir.h"

/* record's capture when -o is not given. */
static char *default_output(void)
{
	char name[64];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(name, sizeof name, "proftrace-%Y%m%d-%H%M%S.ptcap", &tm);
	return pt_xstrdup(name);
}

int pt_session_prepare(struct pt_session *ss, const struct pt_session_conf *c)
{
	struct stat sb;

	memset(ss, 0, sizeof *ss);
	ss->c = *c;
	pt_sb_init(&ss->command);
	/* Absolute for the daemon: a detached one leaves the directory. */
	ss->output = !c->output ? default_output() : c->daemon ?
		pt_rundir_absolute(c->output) : pt_xstrdup(c->output);
	if (!c->force && lstat(ss->output, &sb) == 0) {
		pt_warn("%s already exists (--force overwrites it)",
			c->output ? c->output : ss->output);
		return -1;
	}
	/* The daemon's copy of the library is as stable as record's: shells
	 * keep LD_PRELOAD exported after the daemon is gone. */
	if (!(ss->lib = pt_rundir_find_lib()) ||
	    !(c->daemon ? (ss->userdir = pt_rundir_user())
			: (ss->rundir = pt_rundir_make_run())) ||
	    !(ss->visible = pt_rundir_visible_lib(ss->lib)))
		return -1;
	if (c->files && (!(ss->files = pt_rundir_files_lib(ss->lib)) ||
			 !(ss->files_visible =
				   pt_rundir_visible_lib(ss->files))))
		return -1;
	ss->preload = c->files ?
		pt_rundir_preload_files(getenv("LD_PRELOAD"),
					ss->files_visible, ss->visible) :
		pt_rundir_preload_value(getenv("LD_PRELOAD"), ss->visible);
	if (!c->daemon) {
		ss->sock = pt_sb_dupf("%s/%s", ss->rundir, PT_SOCKET_NAME);
		ss->traces = pt_sb_dupf("%s/trace", ss->rundir);
	} else if (!(ss->sock = c->socket ? pt_rundir_absolute(c->socket)
					  : pt_rundir_socket(1))) {
		return -1;
	} else {
		/* Next to the socket, in a directory of ours alone. */
		ss->traces = pt_sb_dupf("%s.trace", ss->sock);
	}
	c->fin->force = c->force;
	return pt_finish_open(c->fin);
}

int pt_session_start(struct pt_session *ss)
{
	if (!(ss->s = pt_server_new(ss->sock)) ||
	    !(ss->w = pt_writer_open(ss->output, ss->c.force)))
		return -1;
	if (ss->c.command)
		pt_quote_argv(&ss->command, (const char *const *)ss->c.command,
			      ss->c.argc);
	pt_server_begin(ss->s, ss->w, ss->c.command ? ss->command.buf : NULL);
	pt_server_trace_dir(ss->s, ss->traces);
	/* The run log (doc/design.md, "The transport"), named to commands
	 * by PROFTRACE_LOG: they append to it rather than connect.  A
	 * detached daemon's child inherits it. */
	if (pt_server_want_log())
		pt_server_open_log(ss->s, getpid(), ss->log, sizeof ss->log);
	return 0;
}

void pt_session_status(struct pt_session *ss)
{
	struct pt_finish *fin = ss->c.fin;
	char *path;

	if (ss->c.daemon) {
		path = pt_sb_dupf("%s.status", ss->sock);
		pt_server_status(ss->s, path, "daemon", NULL, ss->output,
				 fin->path[PT_FINISH_keep]);
	} else {
		path = pt_sb_dupf("%s/status", ss->rundir);
		ss->capture = realpath(ss->output, NULL);
		if (!ss->capture)
			ss->capture = pt_rundir_absolute(ss->output);
		if (fin->arg[PT_FINISH_keep])
			ss->keep = pt_rundir_absolute(fin->arg[PT_FINISH_keep]);
		pt_server_status(ss->s, path, "record", ss->command.buf,
				 ss->capture, ss->keep);
	}
	free(path);
}

struct pt_tracer *pt_session_tracer(struct pt_session *ss)
{
	ss->tracer = pt_tracer_new(pt_server_put_synth, ss->s);
	pt_server_set_tracer(ss->s, ss->tracer);
	return ss->tracer;
}

void pt_session_stop(struct pt_session *ss)
{
	/* What still runs runs on untraced: its end is not ours to record
	 * any more. */
	pt_tracer_detach_all(ss->tracer);
	pt_server_shutdown(ss->s);
	ss->st = *pt_server_stats(ss->s);
	ss->ran = 1;
}

int pt_session_close(struct pt_session *ss, int wait_status)
{
	int r = pt_writer_close(ss->w);

	ss->w = NULL;
	/* The capture is whole: watchers may read it now. */
	pt_server_status_end(ss->s, wait_status);
	return r < 0 ? -1 : 0;
}

void pt_session_hang_up(struct pt_session *ss)
{
	pt_tracer_mute(ss->tracer);
	pt_server_free(ss->s);
	ss->s = NULL;
}

void pt_session_free(struct pt_session *ss)
{
	if (ss->s)
		pt_server_shutdown(ss->s);
	if (ss->w) {
		/* Failed before the run: leave no half-made capture (an
		 * existing file was not touched before pt_writer_open). */
		pt_writer_close(ss->w);
		unlink(ss->output);
	}
	pt_session_hang_up(ss);
	pt_tracer_free(ss->tracer);
	if (!ss->ran)
		pt_finish_abandon(ss->c.fin);
	pt_finish_free(ss->c.fin);
	if (ss->rundir)
		pt_rundir_remove(ss->rundir);
	pt_sb_release(&ss->command);
	free(ss->output);
	free(ss->preload);
	free(ss->sock);
	free(ss->traces);
	free(ss->capture);
	free(ss->keep);
	free(ss->lib);
	free(ss->visible);
	free(ss->files);
	free(ss->files_visible);
	free(ss->rundir);
	free(ss->userdir);
}
