/* The options report and diff share; see textopts.h. */
#include "cli/textopts.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/util.h"
#include "views/redact.h"

void pt_textopts_init(struct pt_textopts *o, const char *group,
		      int allow_command, int top)
{
	memset(o, 0, sizeof *o);
	pt_group_parse(group, allow_command, &o->group);
	o->allow_command = allow_command;
	o->top = top;
	o->redact = pt_redact_new();
}

int pt_textopts_int(const char *s, int min, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > 100000)
		return -1;
	*out = (int)v;
	return 0;
}

int pt_textopts_take(struct pt_textopts *o, int c, const char *optarg)
{
	switch (c) {
	case 'R':
		return pt_redact_add(o->redact, optarg) < 0 ? -1 : 1;
	case 'f':
		if (!strcmp(optarg, "markdown")) {
			o->markdown = 1;
		} else if (strcmp(optarg, "text")) {
			pt_warn("--format: expected text or markdown, not '%s'",
				optarg);
			return -1;
		}
		return 1;
	case 'g':
		if (pt_group_parse(optarg, o->allow_command, &o->group) < 0) {
			pt_warn("--group-by: expected %sexe, package, cwd or "
				"env:NAME, not '%s'",
				o->allow_command ? "command, " : "", optarg);
			return -1;
		}
		return 1;
	case 'n':
		return pt_textopts_int(optarg, 1, &o->top) < 0 ? -2 : 1;
	case 'w':
		return pt_textopts_int(optarg, 1, &o->width) < 0 ? -2 : 1;
	default:
		return 0;
	}
}

static int term_width(void)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");

	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (c && atoi(c) > 0)
		return atoi(c);
	return 100;
}

void pt_textopts_finish(struct pt_textopts *o, int min)
{
	if (!o->width)
		o->width = term_width();
	if (o->width < min)
		o->width = min;
}

void pt_textopts_free(struct pt_textopts *o)
{
	pt_redact_free(o->redact);
	o->redact = NULL;
}
