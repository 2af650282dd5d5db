/* proftrace: dispatch to the subcommand named on the command line. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "pt-config.h"

static const struct pt_cmd *const commands[] = {
	&pt_cmd_record,
	&pt_cmd_daemon,
	&pt_cmd_stop,
	&pt_cmd_convert,
	&pt_cmd_export,
	&pt_cmd_report,
	&pt_cmd_diff,
	&pt_cmd_info,
	&pt_cmd_top,
	&pt_cmd_deps,
	&pt_cmd_whatif,
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

int pt_cmd_usage(const struct pt_cmd *cmd)
{
	fprintf(stderr, "usage: proftrace %s %s\n", cmd->name, cmd->usage);
	return 2;
}

static void help(FILE *f)
{
	size_t i;

	fprintf(f, "usage: proftrace COMMAND [ARGS...]\n\n"
		   "Record every process a command starts, and turn the capture "
		   "into tables and traces.\n\ncommands:\n");
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\n'proftrace COMMAND --help' shows a command's options; "
		   "the manual is\n'man proftrace' (proftrace(1)), "
		   "'man proftrace-COMMAND' for each command.\n");
}

/* Resolve argv[1] exactly, or as the unique prefix of one command. */
static const struct pt_cmd *lookup(const char *name)
{
	const struct pt_cmd *found = NULL;
	size_t i, n = strlen(name);

	for (i = 0; i < N_COMMANDS; i++) {
		if (!strcmp(commands[i]->name, name))
			return commands[i];
		if (!strncmp(commands[i]->name, name, n)) {
			if (found)
				return NULL;
			found = commands[i];
		}
	}
	return found;
}

int main(int argc, char **argv)
{
	static char help_opt[] = "--help";
	const struct pt_cmd *cmd;
	char name[64];

	if (argc < 2) {
		help(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* "proftrace help diff" is "proftrace diff --help". */
		argv[1] = argv[2];
		argv[2] = help_opt;
		argv[3] = NULL;
		argc = 3;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		help(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("proftrace %s\n", PT_VERSION);
		return 0;
	}
	cmd = lookup(argv[1]);
	if (!cmd) {
		fprintf(stderr, "proftrace: '%s' is not a command (or is ambiguous); "
				"see 'proftrace --help'\n", argv[1]);
		return 2;
	}
	/* getopt names the program in its messages: "proftrace diff:". */
	snprintf(name, sizeof name, "proftrace %s", cmd->name);
	argv[1] = name;
	return cmd->run(argc - 1, argv + 1);
}
