/*
 * Subcommands of the proftrace program.  Each lives in cmd-NAME.c and
 * exports one struct pt_cmd; main.c lists them in a table from which both
 * dispatch and `proftrace --help` are built.
 */
#ifndef PT_CMD_H
#define PT_CMD_H

struct pt_cmd {
	const char *name;
	const char *usage;      /* arguments, shown after the name */
	const char *summary;    /* one line for --help */
	/* argv[0] is the subcommand name.  Returns the process exit status. */
	int (*run)(int argc, char **argv);
};

extern const struct pt_cmd pt_cmd_record;
extern const struct pt_cmd pt_cmd_daemon;
extern const struct pt_cmd pt_cmd_stop;
extern const struct pt_cmd pt_cmd_convert;
extern const struct pt_cmd pt_cmd_export;
extern const struct pt_cmd pt_cmd_report;
extern const struct pt_cmd pt_cmd_diff;
extern const struct pt_cmd pt_cmd_info;
extern const struct pt_cmd pt_cmd_top;
extern const struct pt_cmd pt_cmd_deps;
extern const struct pt_cmd pt_cmd_whatif;

/* Print "usage: proftrace NAME USAGE" to stderr; returns 2 (bad usage). */
int pt_cmd_usage(const struct pt_cmd *cmd);

#endif
