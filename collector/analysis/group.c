/*
 * Grouping executions for the report's tables: by program, label,
 * package or working directory (--group-by).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "base/util.h"

/* ---- grouping ---- */

int pt_group_parse(const char *spec, int allow_command, struct pt_group_by *g)
{
	memset(g, 0, sizeof *g);
	if (!strcmp(spec, "exe"))
		g->kind = PT_GROUP_EXE;
	else if (!strcmp(spec, "package"))
		g->kind = PT_GROUP_PACKAGE;
	else if (!strcmp(spec, "cwd"))
		g->kind = PT_GROUP_CWD;
	else if (allow_command && !strcmp(spec, "command"))
		g->kind = PT_GROUP_COMMAND;
	else if (!strncmp(spec, "env:", 4) && spec[4]) {
		g->kind = PT_GROUP_ENV;
		g->env = spec + 4;
	} else
		return -1;
	return 0;
}

const char *pt_group_name(const struct pt_group_by *g)
{
	switch (g->kind) {
	case PT_GROUP_EXE:
		return "program";
	case PT_GROUP_PACKAGE:
		return "package";
	case PT_GROUP_CWD:
		return "directory";
	case PT_GROUP_ENV:
		return g->env;
	case PT_GROUP_COMMAND:
		return "command";
	}
	return "?";
}

void pt_group_key(const struct pt_group_by *g, const struct pt_exec *e,
		  struct pt_sb *sb)
{
	const char *v;
	size_t len = sb->len;

	switch (g->kind) {
	case PT_GROUP_EXE:
		v = pt_exec_prog(e);
		pt_label_add_clean(sb, v, strlen(v));
		return;
	case PT_GROUP_PACKAGE:
		pt_exec_package(e, sb);
		if (sb->len == len)
			pt_sb_addstr(sb, "(none)");
		return;
	case PT_GROUP_CWD:
		if (e->cwd[0])
			pt_label_add_clean(sb, e->cwd, strlen(e->cwd));
		else
			pt_sb_addstr(sb, "(unknown)");
		return;
	case PT_GROUP_ENV:
		v = pt_exec_env(e, g->env);
		if (v)
			pt_label_add_clean(sb, v, strlen(v));
		else
			pt_sb_addstr(sb, "(unset)");
		return;
	case PT_GROUP_COMMAND:
		pt_exec_key(e, sb);
		return;
	}
}
