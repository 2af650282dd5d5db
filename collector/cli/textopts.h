/*
 * The options that `report` and `diff` share: --format, --group-by, --top,
 * --width and --redact.  Each command lists PT_TEXTOPTS_LONG in its
 * getopt_long table and PT_TEXTOPTS_SHORT in its short options, hands
 * every option to pt_textopts_take() first, and reads the values here.
 */
#ifndef PT_TEXTOPTS_H
#define PT_TEXTOPTS_H

#include <getopt.h>

#include "analysis/analysis.h"

struct pt_textopts {
	int markdown;                   /* --format markdown */
	struct pt_group_by group;       /* --group-by */
	int allow_command;              /* --group-by command is allowed */
	int top;                        /* --top N */
	int width;                      /* --width N; 0: not given */
	struct pt_redact *redact;       /* --redact REGEX... */
};

/* The last lines of --help, the same in both: --width, --redact, --help. */
#define PT_TEXTOPTS_HELP_TAIL \
	"  -w, --width N       line width (default: the terminal's, else\n" \
	"                      $COLUMNS, else 100)\n" \
	"  --redact REGEX      replace what REGEX (POSIX extended) matches in\n" \
	"                      any argument by *** (may be repeated)\n" \
	"  -h, --help          show this help\n\n"

#define PT_TEXTOPTS_SHORT "f:g:n:w:"
#define PT_TEXTOPTS_LONG \
	{ "format", required_argument, NULL, 'f' }, \
	{ "group-by", required_argument, NULL, 'g' }, \
	{ "top", required_argument, NULL, 'n' }, \
	{ "width", required_argument, NULL, 'w' }, \
	{ "redact", required_argument, NULL, 'R' }

/*
 * Defaults: text, grouped by group (a key pt_group_parse() knows; command
 * only if allow_command), top lines, no pattern.
 */
void pt_textopts_init(struct pt_textopts *o, const char *group,
		      int allow_command, int top);

/*
 * Take getopt_long's c and optarg if c is one of the shared options.
 * Returns 1 if taken, 0 if c is not one of them, -1 after a one-line
 * error about a bad value (the command exits with 2), -2 if the value
 * is malformed (the command prints its usage).
 */
int pt_textopts_take(struct pt_textopts *o, int c, const char *optarg);

/*
 * After the options: a width not given becomes the terminal's (TIOCGWINSZ
 * on standard output), else $COLUMNS, else 100; and at least min.
 */
void pt_textopts_finish(struct pt_textopts *o, int min);

/* s as a decimal integer from min to 100000 into *out: 0, or -1. */
int pt_textopts_int(const char *s, int min, int *out);

/* Free the patterns. */
void pt_textopts_free(struct pt_textopts *o);

#endif
