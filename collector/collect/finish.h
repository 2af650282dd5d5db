/*
 * What `record` and `daemon` write when their run ends: the outputs asked
 * for on the command line (--csv FILE, ...), made from the finished
 * capture, and the --redact patterns that mask them.
 *
 * Both commands share the options, their help lines, the files opened
 * before the run (a bad path must fail before the build runs, not after)
 * and the writing at the end.  A new end-of-run output is one line of
 * PT_FINISH_OUTPUTS below and its write function; the options, --help,
 * usage, the man-pages test and the bash completion (which reads --help)
 * follow from it.
 *
 * Use:
 *   pt_finish_init(&fin, flags);
 *   pt_finish_getopt(&fin, ..., opts built by pt_finish_options()),
 *       which returns only the command's own options;
 *   pt_finish_open(&fin);                      before the run
 *   pt_finish_write(&fin, capture, summary);   after it, or
 *   pt_finish_abandon(&fin);                   if the run never started
 *   pt_finish_free(&fin);
 */
#ifndef PT_FINISH_H
#define PT_FINISH_H

#include <getopt.h>
#include <stdio.h>

/*
 * X(name, has_arg, meta, text, to_file, to_arg), one line per output:
 *   --name META       the option (has_arg as for struct option)
 *   to_file           int (*)(const struct pt_model *, FILE *): META is
 *                     FILE, created before the run ('-' may be the
 *                     standard output, see PT_FINISH_STDOUT); --help says
 *                     "also write FILE as TEXT"
 *   to_arg            int (*)(const struct pt_finish *,
 *                             const struct pt_model *, const char *arg)
 *                     otherwise: it gets the argument as given (NULL if
 *                     optional and absent; made absolute, if a path, under
 *                     PT_FINISH_ABSOLUTE), the capture's path and the
 *                     summary stream in fin; --help shows TEXT as it is
 * Exactly one of to_file, to_arg is not NULL; each returns 0, or -1 after
 * a one-line error if the output could not be made.  An optional argument
 * is "--name=ARG", or the next word when it is a URL (http://, https://).
 */
#define PT_FINISH_OUTPUTS(X) \
	X(csv, required_argument, "FILE", "CSV", pt_csv_write, NULL) \
	X(html, required_argument, "FILE", "HTML", pt_html_write, NULL) \
	X(otlp, optional_argument, "[URL]", \
	  "send the run to an OpenTelemetry receiver (OTLP/HTTP), see\n" \
	  "                        proftrace-export(1)", NULL, pt_finish_otlp) \
	X(keep, required_argument, "DIR", "keep the capture in DIR, with " \
	  "the last\n                        --keep-last N (5), and compare " \
	  "it with them", NULL, pt_keep_write)

enum {
#define PT_FINISH_ENUM(name, has_arg, meta, text, to_file, to_arg) \
	PT_FINISH_##name,
	PT_FINISH_OUTPUTS(PT_FINISH_ENUM)
#undef PT_FINISH_ENUM
	PT_FINISH_N
};

/* The outputs in a usage line: "[--csv FILE] ", one each. */
#define PT_FINISH_USAGE_ONE(name, has_arg, meta, text, to_file, to_arg) \
	"[--" #name " " meta "] "
#define PT_FINISH_USAGE PT_FINISH_OUTPUTS(PT_FINISH_USAGE_ONE) \
	"[--keep-last N] "

/* The struct option entries pt_finish_options() adds: outputs, --redact,
 * --keep-last. */
#define PT_FINISH_NOPTS (PT_FINISH_N + 2)

/* --keep-last's default. */
#define PT_FINISH_KEEP_LAST 5

/* flags */
#define PT_FINISH_STDOUT        1 /* FILE '-' is the standard output */
#define PT_FINISH_ABSOLUTE      2 /* open FILE by its absolute path: the
				   * command changes directory (daemon) */

struct pt_finish {
	unsigned flags;
	struct pt_redact *redact;       /* --redact: masks every output */
	int asked[PT_FINISH_N];
	const char *arg[PT_FINISH_N];   /* the argument as given, or NULL */
	char *path[PT_FINISH_N];        /* what is opened or passed on */
	FILE *f[PT_FINISH_N];
	int created[PT_FINISH_N];       /* made by pt_finish_open() */
	int keep_last;                  /* --keep-last N */
	int force;                      /* --force: files may be replaced */
	/* While pt_finish_write() runs: its arguments. */
	const char *capture;
	FILE *summary;
};

struct pt_model;

/*
 * --keep DIR (collect/keep.c): compare the capture with the captures
 * kept in DIR (diff KEPT... -- CAPTURE, to fin->summary when it is not
 * NULL), copy it into DIR and remove the oldest beyond fin->keep_last.
 * Returns 0, or -1 after a one-line error.
 */
int pt_keep_write(const struct pt_finish *fin, const struct pt_model *m,
		  const char *dir);

/* --otlp [URL]: pt_otlp_finish() (export/otlp.h) as a to_arg output. */
int pt_finish_otlp(const struct pt_finish *fin, const struct pt_model *m,
		   const char *url);

/* Start with no output asked for and no pattern. */
void pt_finish_init(struct pt_finish *fin, unsigned flags);

/*
 * Append the shared options to opts, which holds n entries, and end it
 * with the all-zero entry: opts must have room for n + PT_FINISH_NOPTS + 1.
 */
void pt_finish_options(struct option *opts, size_t n);

/*
 * getopt_long(argc, argv, shortopts, opts, NULL), taking the shared
 * options itself (and argv[optind], advancing optind, when it is the URL
 * of an optional argument): returns the next option that is not one of
 * them, as getopt_long does (-1 at the end), or '?' after a bad argument
 * to one of them (with a one-line error).
 */
int pt_finish_getopt(struct pt_finish *fin, int argc, char **argv,
		     const char *shortopts, const struct option *opts);

/*
 * The command's --help on standard output: its usage line, head, the
 * outputs' lines, then tail.
 */
void pt_finish_help(const struct pt_finish *fin, const char *name,
		    const char *usage, const char *head, const char *tail);

/*
 * Create every output file asked for.  Returns 0, or -1 with a one-line
 * error (the files already made stay open for pt_finish_abandon()).
 */
int pt_finish_open(struct pt_finish *fin);

/*
 * The run has ended: if any output was asked for or summary is not NULL,
 * rebuild the model from capture (masked by --redact), write every output
 * and close it, and print the summary to summary.  Returns 0, or -1 if
 * the capture could not be read or an output not written (each problem
 * reported in one line).
 */
int pt_finish_write(struct pt_finish *fin, const char *capture,
		    FILE *summary);

/* The run never started: close the output files and remove them. */
void pt_finish_abandon(struct pt_finish *fin);

/* Close what is still open (unchecked) and free everything. */
void pt_finish_free(struct pt_finish *fin);

#endif
