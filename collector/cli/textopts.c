/* The options report and diff share; see textopts.h. */
#include "cli/textopts.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void pt_textopts_init(struct pt_textopts *o, const char *group, int top,
		      const char *choices)
{
	memset(o, 0, sizeof *o);
	pt_group_parse(group, 1, &o->group);
	o->top = top;
	o->red = pt_redact_new();
	o->group_choices = choices;
}

int pt_textopts_int(const char *opt, const char *s, int min, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > 100000) {
		pt_warn("%s: expected a whole number from %d to 100000, not "
			"'%s'", opt, min, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int pt_textopts_take(struct pt_textopts *o, int c, const char *arg)
{
	switch (c) {
	case 'f':
		if (!strcmp(arg, "markdown"))
			o->markdown = 1;
		else if (!strcmp(arg, "text"))
			o->markdown = 0;
		else {
			pt_warn("--format: expected text or markdown, not "
				"'%s'", arg);
			return -1;
		}
		return 1;
	case 'g':
		if (pt_group_parse(arg, 1, &o->group) < 0) {
			pt_warn("--group-by: expected %s, not '%s'",
				o->group_choices, arg);
			return -1;
		}
		o->group_set = 1;
		return 1;
	case 'n':
		return pt_textopts_int("--top", arg, 1, &o->top) < 0 ? -1 : 1;
	case 'w':
		return pt_textopts_int("--width", arg, 1, &o->width) < 0 ? -1
									 : 1;
	case 'R':
		return pt_redact_add(o->red, arg) < 0 ? -1 : 1;
	}
	return 0;
}

void pt_textopts_finish(struct pt_textopts *o)
{
	if (!o->width)
		o->width = pt_term_width();
	if (o->width < PT_TEXTOPTS_MIN_WIDTH)
		o->width = PT_TEXTOPTS_MIN_WIDTH;
}

void pt_textopts_free(struct pt_textopts *o)
{
	pt_redact_free(o->red);
	o->red = NULL;
}
