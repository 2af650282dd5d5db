/* The end-of-run outputs of record and daemon; see finish.h. */
#include "collect/finish.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "collect/rundir.h"
#include "export/otlp.h"
#include "model/load.h"
#include "model/model.h"
#include "views/csv.h"
#include "views/summary.h"
#include "views/html.h"
#include "model/redact.h"

struct output {
	const char *name, *meta, *text;
	int has_arg;
	int (*to_file)(const struct pt_model *, FILE *);
	int (*to_arg)(const struct pt_finish *, const struct pt_model *,
		      const char *);
};

static const struct output outputs[PT_FINISH_N] = {
#define PT_FINISH_ENTRY(name_, has_arg_, meta_, text_, to_file_, to_arg_) \
	{ .name = #name_, .meta = meta_, .text = text_, \
	  .has_arg = has_arg_, .to_file = to_file_, .to_arg = to_arg_ },
	PT_FINISH_OUTPUTS(PT_FINISH_ENTRY)
#undef PT_FINISH_ENTRY
};

/* getopt_long values: out of the range of short options. */
#define OPT_OUTPUT      0x100           /* + the output's index */
#define OPT_REDACT      (OPT_OUTPUT + PT_FINISH_N)
#define OPT_KEEP_LAST   (OPT_REDACT + 1)

void pt_finish_init(struct pt_finish *fin, unsigned flags)
{
	memset(fin, 0, sizeof *fin);
	fin->flags = flags;
	fin->redact = pt_redact_new();
	fin->keep_last = PT_FINISH_KEEP_LAST;
}

void pt_finish_options(struct option *opts, size_t n)
{
	for (size_t i = 0; i < PT_FINISH_N; i++)
		opts[n++] = (struct option){ outputs[i].name,
					     outputs[i].has_arg, NULL,
					     OPT_OUTPUT + (int)i };
	opts[n++] = (struct option){ "redact", required_argument, NULL,
				     OPT_REDACT };
	opts[n++] = (struct option){ "keep-last", required_argument, NULL,
				     OPT_KEEP_LAST };
	opts[n] = (struct option){ NULL, 0, NULL, 0 };
}

static int is_url(const char *s)
{
	return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8);
}

int pt_finish_getopt(struct pt_finish *fin, int argc, char **argv,
		     const char *shortopts, const struct option *opts)
{
	int c;

	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		const char *arg = optarg;
		size_t i = (size_t)(c - OPT_OUTPUT);

		if (c == 'o' && !*arg) {
			pt_warn("-o: an empty file name");
			return '?';
		}
		if (c == OPT_REDACT) {
			if (pt_redact_add(fin->redact, arg) < 0)
				return '?';
			continue;
		}
		if (c == OPT_KEEP_LAST) {
			char *end;
			long n = strtol(arg, &end, 10);

			if (!*arg || *end || n < 1 || n > 1000) {
				pt_warn("--keep-last: expected 1 to 1000, "
					"not '%s'", arg);
				return '?';
			}
			fin->keep_last = (int)n;
			continue;
		}
		if (c < OPT_OUTPUT || c >= OPT_OUTPUT + PT_FINISH_N)
			return c;
		/* getopt takes an optional argument only as --name=ARG; a
		 * URL after it is meant as one too (never as record's
		 * COMMAND). */
		if (!arg && outputs[i].has_arg == optional_argument &&
		    optind < argc && is_url(argv[optind]))
			arg = argv[optind++];
		if (arg && *arg && !strcmp(outputs[i].meta, "[URL]") &&
		    !is_url(arg)) {
			pt_warn("--%s: '%s' is not an http:// or https:// URL",
				outputs[i].name, arg);
			return '?';
		}
		if (arg && !*arg) {
			pt_warn("--%s: an empty %s", outputs[i].name,
				outputs[i].to_file ? "file name" :
				!strcmp(outputs[i].meta, "DIR") ?
				"directory name" : "argument");
			return '?';
		}
		fin->asked[i] = 1;
		fin->arg[i] = arg;
	}
	return -1;
}

void pt_finish_help(const struct pt_finish *fin, const char *name,
		    const char *usage, const char *head, const char *tail)
{
	printf("usage: proftrace %s %s\n\n%s", name, usage, head);
	for (size_t i = 0; i < PT_FINISH_N; i++) {
		const struct output *o = &outputs[i];
		char opt[64];

		snprintf(opt, sizeof opt, "--%s %s", o->name, o->meta);
		if (!o->to_file)
			printf("  %-20s  %s\n", opt, o->text);
		else
			printf("  %-20s  also write %s as %s%s\n", opt,
				o->meta, o->text,
				fin->flags & PT_FINISH_STDOUT ?
				" ('-': standard output)" : " at the end");
	}
	printf("  %-20s  with --keep: how many captures to keep\n",
	       "--keep-last N");
	fputs(tail, stdout);
}

static int is_stdout(const struct pt_finish *fin, size_t i)
{
	return (fin->flags & PT_FINISH_STDOUT) && !strcmp(fin->arg[i], "-");
}

int pt_finish_open(struct pt_finish *fin)
{
	struct stat st;

	for (size_t i = 0; i < PT_FINISH_N; i++) {
		if (!fin->asked[i])
			continue;
		if (i == PT_FINISH_otlp && pt_otlp_config_check(fin->arg[i]) < 0) {
			/* The environment's OTEL_ variables, which the CI set
			 * for every job: the run goes on, unexported. */
			pt_warn("--otlp: the run will not be exported");
			fin->asked[i] = 0;
			continue;
		}
		if (!outputs[i].to_file) {
			/* A directory named, used at the end (not a URL). */
			if (fin->arg[i] && fin->flags & PT_FINISH_ABSOLUTE &&
			    !strcmp(outputs[i].meta, "DIR"))
				fin->path[i] = pt_rundir_absolute(fin->arg[i]);
			continue;
		}
		if (is_stdout(fin, i)) {
			fin->f[i] = stdout;
			continue;
		}
		fin->path[i] = fin->flags & PT_FINISH_ABSOLUTE ?
			pt_rundir_absolute(fin->arg[i]) :
			pt_xstrdup(fin->arg[i]);
		/* As for the capture: a file already there may be the only
		 * copy of something (a device or a FIFO is written to). */
		if (lstat(fin->path[i], &st) < 0) {
			fin->created[i] = 1;
		} else if (!fin->force && S_ISREG(st.st_mode)) {
			pt_warn("%s already exists (--force overwrites it)",
				fin->arg[i]);
			free(fin->path[i]);
			fin->path[i] = NULL;
			return -1;
		}
		fin->f[i] = fopen(fin->path[i], "we");
		if (!fin->f[i]) {
			pt_warn("cannot create %s: %s", fin->arg[i],
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Write output i of m; 0 or -1 after a one-line error. */
static int write_one(struct pt_finish *fin, size_t i,
		     const struct pt_model *m)
{
	const struct output *o = &outputs[i];
	FILE *f = fin->f[i];
	int rc, err;

	if (!o->to_file)
		return o->to_arg(fin, m, fin->path[i] ? fin->path[i] :
				 fin->arg[i]);
	fin->f[i] = NULL;
	rc = o->to_file(m, f) < 0 || fflush(f) != 0 ? -1 : 0;
	err = errno;
	/* Closed before the message: a failing close is a failed write. */
	if (f != stdout && fclose(f) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc < 0) {
		pt_warn_failure("writing %s: %s",
				fin->path[i] ? fin->path[i] : "-",
				strerror(err));
		return -1;
	}
	return 0;
}

int pt_finish_write(struct pt_finish *fin, const char *capture,
		    FILE *summary)
{
	struct pt_model m;
	int rc = 0, any = 0;

	for (size_t i = 0; i < PT_FINISH_N; i++)
		any |= fin->asked[i];
	if (!any && !summary)
		return 0;
	fin->capture = capture;
	fin->summary = summary;
	if (pt_model_load(&m, (char *[]){ (char *)capture }, 1,
			  fin->redact) < 0)
		return -1;
	for (size_t i = 0; i < PT_FINISH_N; i++)
		if (fin->asked[i] && write_one(fin, i, &m) < 0)
			rc = -1;
	if (summary)
		pt_summary_print(&m, summary);
	pt_model_free(&m);
	return rc;
}

void pt_finish_abandon(struct pt_finish *fin)
{
	for (size_t i = 0; i < PT_FINISH_N; i++) {
		if (!fin->f[i] || fin->f[i] == stdout)
			continue;
		fclose(fin->f[i]);
		fin->f[i] = NULL;
		/* Only what this run made: never /dev/null, a FIFO, or a
		 * file --force was to replace but has not yet. */
		if (fin->created[i])
			unlink(fin->path[i]);
	}
}

void pt_finish_free(struct pt_finish *fin)
{
	for (size_t i = 0; i < PT_FINISH_N; i++) {
		if (fin->f[i] && fin->f[i] != stdout)
			fclose(fin->f[i]);
		free(fin->path[i]);
	}
	pt_redact_free(fin->redact);
	memset(fin, 0, sizeof *fin);
}

int pt_finish_otlp(const struct pt_finish *fin, const struct pt_model *m,
		   const char *url)
{
	(void)fin;
	return pt_otlp_finish(m, url);
}
