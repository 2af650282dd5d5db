/* The status snapshot, as `proftrace top` and `record --progress` read
 * it back; see status.h. */
#include "model/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"

void pt_status_snap_free(struct pt_status_snap *o)
{
	size_t i;

	for (i = 0; i < o->nrun; i++) {
		free(o->run[i].cmd);
		free(o->run[i].label);
	}
	for (i = 0; i < o->nslow; i++) {
		free(o->slow[i].cmd);
		free(o->slow[i].label);
	}
	for (i = 0; i < o->npkg; i++)
		free(o->pkg[i]);
	free(o->pkg);
	free(o->run);
	free(o->kind);
	free(o->command);
	free(o->capture);
	free(o->keep);
	memset(o, 0, sizeof *o);
}

/* "PID PPID START [DUR] CMD" */
static int parse_exec(const char *p, int with_dur, struct pt_status_exec *e)
{
	unsigned long long start, dur = 0;
	unsigned pid, ppid;
	int n = 0;

	if ((with_dur ? sscanf(p, "%u %u %llu %llu %n", &pid, &ppid, &start,
			       &dur, &n) != 4
		      : sscanf(p, "%u %u %llu %n", &pid, &ppid, &start,
			       &n) != 3) || !n)
		return -1;
	e->pid = pid;
	e->ppid = ppid;
	e->start_ns = start;
	e->dur_ns = dur;
	e->cmd = pt_xstrdup(p + n);
	e->label = NULL;
	return 0;
}

int pt_status_read(const char *path, struct pt_status_snap *o)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0, runcap = 0;
	ssize_t len;
	int first = 1, whole = 0;
	struct pt_status_exec *last = NULL;     /* a label's line */

	memset(o, 0, sizeof *o);
	o->exit_code = -1;
	if (!f)
		return -1;
	while ((len = getline(&line, &cap, f)) > 0) {
		char *v;
		unsigned long long a, b, c, d;
		int x;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		v = strchr(line, ' ');
		v = v ? v + 1 : line + len;
		if (first) {
			if (strncmp(line, "proftrace-status ", 17))
				break;
			first = 0;
		} else if (!strncmp(line, "pid ", 4)) {
			o->pid = (uint32_t)strtoul(v, NULL, 10);
		} else if (!strncmp(line, "kind ", 5)) {
			free(o->kind);
			o->kind = pt_xstrdup(v);
		} else if (!strncmp(line, "command ", 8)) {
			free(o->command);
			o->command = pt_xstrdup(v);
		} else if (!strncmp(line, "capture ", 8)) {
			free(o->capture);
			o->capture = pt_xstrdup(v);
		} else if (!strncmp(line, "keep ", 5)) {
			free(o->keep);
			o->keep = pt_xstrdup(v);
		} else if (sscanf(line, "start %llu %llu", &a, &b) == 2) {
			o->start_mono_ns = a;
			o->start_real_ns = b;
		} else if (sscanf(line, "written %llu", &a) == 1) {
			o->written_mono_ns = a;
		} else if (sscanf(line, "counts %llu %llu %llu %llu", &a, &b,
				  &c, &d) == 4) {
			o->started = a;
			o->running = b;
			o->finished = c;
			o->failed = d;
		} else if (!strncmp(line, "run ", 4)) {
			if (o->nrun == runcap) {
				runcap = runcap ? 2 * runcap : 16;
				o->run = pt_xrealloc(o->run,
						     runcap * sizeof *o->run);
			}
			last = NULL;
			if (parse_exec(v, 0, &o->run[o->nrun]) == 0)
				last = &o->run[o->nrun++];
		} else if (!strncmp(line, "slow ", 5)) {
			last = NULL;
			if (o->nslow < PT_STATUS_SLOWEST &&
			    parse_exec(v, 1, &o->slow[o->nslow]) == 0)
				last = &o->slow[o->nslow++];
		} else if (!strncmp(line, "label ", 6)) {
			if (last && !last->label)
				last->label = pt_xstrdup(v);
		} else if (sscanf(line, "packages %llu %llu%n", &a, &b, &x) == 2) {
			char *tok, *save = NULL;

			o->pkg_done = a;
			o->pkg_running = b;
			for (tok = strtok_r(line + x, " ", &save);
			     tok && o->npkg < PT_STATUS_PACKAGES;
			     tok = strtok_r(NULL, " ", &save)) {
				o->pkg = pt_xrealloc(o->pkg, (o->npkg + 1) *
						     sizeof *o->pkg);
				o->pkg[o->npkg++] = pt_xstrdup(tok);
			}
		} else if (sscanf(line, "cpu %llu %llu %llu", &a, &b,
				  &c) == 3) {
			o->cpu_interval_ns = a;
			o->cpu_busy_ns = b;
			o->cpu_total_ns = c;
		} else if (sscanf(line, "ended %llu %d", &a, &x) == 2) {
			int sig = 0;

			o->ended = 1;
			o->end_mono_ns = a;
			o->exit_code = x;
			if (sscanf(line, "ended %*u %*d %d", &sig) == 1 &&
			    sig > 0)
				o->end_signal = sig;
		} else if (!strcmp(line, "end")) {
			whole = 1;
		}
	}
	free(line);
	fclose(f);
	if (!o->kind)
		o->kind = pt_xstrdup("");
	if (!o->command)
		o->command = pt_xstrdup("");
	if (!o->capture)
		o->capture = pt_xstrdup("");
	if (!o->keep)
		o->keep = pt_xstrdup("");
	if (!whole) {
		pt_status_snap_free(o);
		errno = EINVAL;
		return -1;
	}
	return 0;
}
