/*
 * The options `report` and `diff` share: the format (text or Markdown),
 * what executions are grouped by, how many rows and how wide, and what
 * is redacted.  One parser, so that the two commands take them, default
 * them and refuse bad values alike.
 */
#ifndef PT_CLI_TEXTOPTS_H
#define PT_CLI_TEXTOPTS_H

#include <getopt.h>

#include "analysis/analysis.h"
#include "model/redact.h"

/* Narrower than this, the text views cannot lay out their columns. */
#define PT_TEXTOPTS_MIN_WIDTH 60

struct pt_textopts {
	struct pt_group_by group;
	int group_set;                  /* --group-by given */
	int top, width;                 /* width 0 until finished */
	int markdown;                   /* --format markdown */
	struct pt_redact *red;
	const char *group_choices;      /* for --group-by's error */
};

/* The shared entries of a getopt_long table, first in each command's. */
#define PT_TEXTOPTS_LONG \
	{ "format", required_argument, NULL, 'f' }, \
	{ "group-by", required_argument, NULL, 'g' }, \
	{ "top", required_argument, NULL, 'n' }, \
	{ "width", required_argument, NULL, 'w' }, \
	{ "redact", required_argument, NULL, 'R' }
#define PT_TEXTOPTS_SHORT "f:g:n:w:"

/*
 * Defaults: grouped by group (a --group-by spec), top rows; choices
 * lists the --group-by values the command takes, for its error message.
 */
void pt_textopts_init(struct pt_textopts *o, const char *group, int top,
		      const char *choices);

/*
 * Take getopt's option c with its argument: returns 1 when c is one of
 * the shared options, 0 when it is not, -1 after a one-line warning
 * when its value is bad (a usage error).
 */
int pt_textopts_take(struct pt_textopts *o, int c, const char *arg);

/* After the options: the width defaults to the terminal's, and is at
 * least PT_TEXTOPTS_MIN_WIDTH. */
void pt_textopts_finish(struct pt_textopts *o);

void pt_textopts_free(struct pt_textopts *o);

/* A decimal number in [min, 100000] into *out: 0, or -1 after a
 * one-line warning naming the option opt. */
int pt_textopts_int(const char *opt, const char *s, int min, int *out);

#endif
