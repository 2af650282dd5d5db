/*
 * proftrace deps: what the build could have been, from the files its
 * jobs read and wrote (doc/man/proftrace-deps.1.scd).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/deps.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/textopts.h"
#include "model/load.h"
#include "model/model.h"
#include "views/deps-out.h"

static int run(int argc, char **argv);

const struct pt_cmd pt_cmd_deps = {
	.name = "deps",
	.usage = "[-f text|markdown|json|dot] [-w N] CAPTURE",
	.summary = "the build's dependencies from the files its jobs read "
		   "and wrote, and its ideal wall time on N CPUs",
	.run = run,
};

static const char help_text[] =
	"Find the jobs of the build in CAPTURE (recorded with --files), the\n"
	"dependencies between them from the files each read and wrote, and\n"
	"print the wall time now, the ideal wall time of the same jobs on 1,\n"
	"2, 4... and unlimited CPUs, the serializations that cost most and\n"
	"the races.\n\n"
	"  -f, --format F  output format (known: text markdown json dot), text\n"
	"                  by default\n"
	"  -w, --width N   text lines of at most N columns (default 80)\n"
	"  -h, --help      show this help\n\n"
	"The full page: man proftrace-deps (proftrace-deps(1)).\n";

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "width", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *fmt = "text", *why = NULL;
	struct pt_model m;
	struct pt_deps d;
	int c, rc, loaded, width = 80;

	while ((c = getopt_long(argc, argv, "f:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = optarg;
			break;
		case 'w':
			if (pt_textopts_int("--width", optarg, 20, &width) < 0)
				return 2;
			break;
		case 'h':
			printf("usage: proftrace %s %s\n\n%s", pt_cmd_deps.name,
			       pt_cmd_deps.usage, help_text);
			return 0;
		default:
			return pt_cmd_usage(&pt_cmd_deps);
		}
	}
	if (optind >= argc)
		return pt_cmd_usage(&pt_cmd_deps);
	if (strcmp(fmt, "text") && strcmp(fmt, "markdown") &&
	    strcmp(fmt, "json") && strcmp(fmt, "dot")) {
		pt_warn("unknown format '%s' (known: text, markdown, json, dot)",
			fmt);
		return 2;
	}
	if (argc - optind > 1) {
		pt_warn("deps reads one build: give it one capture (the "
			"captures of several builds are no one schedule)");
		return 2;
	}
	loaded = pt_model_load(&m, argv + optind, (size_t)(argc - optind),
			       NULL);
	if (loaded < 0)
		return 1;
	if (pt_deps_build(&m, &d, 0, &why) < 0) {
		pt_warn("%s", why);
		pt_model_free(&m);
		return 1;
	}
	if (!strcmp(fmt, "json"))
		rc = pt_deps_write_json(&d, stdout);
	else if (!strcmp(fmt, "dot"))
		rc = pt_deps_write_dot(&d, stdout);
	else if (!strcmp(fmt, "markdown"))
		rc = pt_deps_write_md(&d, stdout);
	else
		rc = pt_deps_write_text(&d, width, stdout);
	pt_deps_free(&d);
	pt_model_free(&m);
	if (rc < 0) {
		pt_warn("cannot write the output");
		return 1;
	}
	return loaded;
}
