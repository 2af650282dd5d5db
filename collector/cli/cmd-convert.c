/*
 * proftrace convert: turn captures into one of the output formats.
 *
 * Exit status: 0, 1 if an input was damaged (what it held is converted
 * all the same) or could not be read or the output not written, 2 for bad
 * usage (a binary format for a terminal included).  An output file is written under a temporary name and renamed,
 * so that it never holds half a conversion; anything else that exists at
 * that name (/dev/null, a FIFO, a terminal) is written in place, since
 * renaming over it would replace the device with a file.  The temporary
 * file is written around the page cache (direct-out.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "views/csv.h"
#include "base/direct-out.h"
#include "views/folded.h"
#include "views/json.h"
#include "views/perfetto.h"
#include "model/load.h"
#include "model/model.h"
#include "model/redact.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "views/files-csv.h"
#include "views/html.h"
#include "views/svg.h"

struct format {
	const char *name;
	int (*write)(const struct pt_model *m, FILE *f);
	/* The same by CPU time (--weight cpu), for those that weigh. */
	int (*write_cpu)(const struct pt_model *m, FILE *f);
	int binary;             /* not for a terminal */
};

static const struct format formats[] = {
	{ "csv", pt_csv_write, NULL, 0 },
	{ "json", pt_json_write, NULL, 0 },
	{ "perfetto", pt_perfetto_write, NULL, 1 },
	{ "folded", pt_folded_write_wall, pt_folded_write_cpu, 0 },
	{ "folded-cpu", pt_folded_write_cpu, NULL, 0 },
	{ "svg", pt_svg_write_wall, pt_svg_write_cpu, 0 },
	{ "html", pt_html_write, NULL, 0 },
	{ "files", pt_files_csv_write, NULL, 0 },
};

#define N_FORMATS (sizeof formats / sizeof formats[0])

static int run(int argc, char **argv);

const struct pt_cmd pt_cmd_convert = {
	.name = "convert",
	.usage = "[-f FORMAT] [--weight wall|cpu] [-o FILE] [--force] "
		 "[--redact REGEX]... CAPTURE...",
	.summary = "convert captures (or spool directories) to csv, json, "
		   "perfetto, folded stacks, an SVG flame graph or an HTML report",
	.run = run,
};

static void help(void)
{
	size_t i;

	printf("usage: proftrace convert %s\n\n"
	       "Read each CAPTURE (a capture file, or a $PROFTRACE_DIR spool "
	       "directory)\nand write its executions in one format.\n\n"
	       "  -f, --format FORMAT  output format (default csv; known:",
	       pt_cmd_convert.usage);
	for (i = 0; i < N_FORMATS; i++)
		printf(" %s", formats[i].name);
	printf(")\n"
	       "  --weight wall|cpu    what folded and svg weigh: wall time "
	       "(default) or\n"
	       "                       CPU time\n"
	       "  -o, --output FILE    write to FILE instead of standard output\n"
	       "  --force              overwrite FILE if it exists\n"
	       "  --redact REGEX       replace what REGEX (POSIX extended) "
	       "matches in command\n"
	       "                       lines by *** (repeatable)\n"
	       "  -h, --help           show this help\n\n"
	       "The full page: man proftrace-convert (proftrace-convert(1)).\n");
}

static const struct format *find_format(const char *name)
{
	size_t i;

	for (i = 0; i < N_FORMATS; i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

static void unknown_format(const char *name)
{
	struct pt_sb known = PT_SB_INIT;
	size_t i;

	for (i = 0; i < N_FORMATS; i++)
		pt_sb_addf(&known, "%s%s", i ? ", " : "", formats[i].name);
	pt_warn("unknown format '%s' (known: %s)", name, known.buf);
	pt_sb_release(&known);
}

/*
 * Option value: "-o FILE", "-oFILE", "--output FILE", "--output=FILE".
 * Returns the value and advances *i, NULL if this argument is not the
 * option, or sets *missing when the value is absent.
 */
static const char *opt_value(int argc, char **argv, int *i, char shrt,
			     const char *lng, int *missing)
{
	const char *a = argv[*i];
	size_t n = strlen(lng);

	if (a[0] == '-' && a[1] == shrt) {
		if (a[2])
			return a + 2;
	} else if (!strncmp(a, lng, n) && a[n] == '=') {
		return a + n + 1;
	} else if (strcmp(a, lng)) {
		return NULL;
	}
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

/* Write to a stream that is not ours to replace. */
static int write_stream(const struct format *fmt, const struct pt_model *m,
			FILE *f, const char *name)
{
	if (fmt->write(m, f) < 0 || fflush(f) != 0) {
		pt_warn("writing %s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_output(const struct format *fmt, const struct pt_model *m,
			const char *out)
{
	struct pt_sb tmp = PT_SB_INIT;
	struct stat st;
	FILE *f;
	int rc;

	if (!out || !strcmp(out, "-"))
		return write_stream(fmt, m, stdout, "standard output");
	if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
		f = fopen(out, "w");
		if (!f) {
			pt_warn("cannot open %s: %s", out, strerror(errno));
			return -1;
		}
		rc = write_stream(fmt, m, f, out);
		if (fclose(f) != 0 && rc == 0) {
			pt_warn("writing %s: %s", out, strerror(errno));
			rc = -1;
		}
		return rc;
	}
	pt_sb_addf(&tmp, "%s.tmp", out);
	f = pt_direct_fopen(tmp.buf);
	if (!f) {
		pt_warn("cannot create %s: %s", tmp.buf, strerror(errno));
		pt_sb_release(&tmp);
		return -1;
	}
	rc = fmt->write(m, f);
	if (fclose(f) != 0)
		rc = -1;
	if (rc < 0) {
		pt_warn("writing %s: %s", tmp.buf, strerror(errno));
		unlink(tmp.buf);
	} else if (rename(tmp.buf, out) < 0) {
		pt_warn("cannot rename %s to %s: %s", tmp.buf, out,
			strerror(errno));
		unlink(tmp.buf);
		rc = -1;
	}
	pt_sb_release(&tmp);
	return rc;
}

static int run(int argc, char **argv)
{
	const char *fmt_name = "csv", *out = NULL, *weight = "wall", *v;
	const struct format *fmt;
	struct format cpu_format;
	struct pt_model m;
	char **inputs;
	int i, n = 0, missing = 0, status = 0, only_inputs = 0, force = 0, rc;
	struct stat st;
	struct pt_redact *red = pt_redact_new();

	inputs = pt_xcalloc((size_t)argc, sizeof *inputs);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_inputs || a[0] != '-' || !a[1]) {
			inputs[n++] = argv[i];
		} else if (!strcmp(a, "--")) {
			only_inputs = 1;
		} else if (!strcmp(a, "--force")) {
			force = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			help();
			free(inputs);
			pt_redact_free(red);
			return 0;
		} else if ((v = opt_value(argc, argv, &i, 'f', "--format",
					  &missing))) {
			fmt_name = v;
		} else if ((v = opt_value(argc, argv, &i, 'o', "--output",
					  &missing))) {
			out = v;
		} else if ((v = opt_value(argc, argv, &i, 0, "--weight",
					  &missing))) {
			weight = v;
		} else if ((v = opt_value(argc, argv, &i, 0, "--redact",
					  &missing))) {
			if (pt_redact_add(red, v) < 0) {
				free(inputs);
				pt_redact_free(red);
				return 2;
			}
		} else {
			if (missing)
				pt_warn("option '%s' needs a value", a);
			else
				pt_warn("unknown option '%s'", a);
			free(inputs);
			pt_redact_free(red);
			return pt_cmd_usage(&pt_cmd_convert);
		}
	}
	if (!n) {
		free(inputs);
		pt_redact_free(red);
		return pt_cmd_usage(&pt_cmd_convert);
	}
	if (out && !*out) {
		pt_warn("-o: an empty file name");
		free(inputs);
		pt_redact_free(red);
		return 2;
	}
	fmt = find_format(fmt_name);
	if (!fmt) {
		unknown_format(fmt_name);
		free(inputs);
		pt_redact_free(red);
		return 2;
	}
	if (strcmp(weight, "wall") && (strcmp(weight, "cpu") ||
				       !fmt->write_cpu)) {
		if (strcmp(weight, "cpu"))
			pt_warn("--weight: expected wall or cpu, not '%s'",
				weight);
		else
			pt_warn("--weight cpu: format %s has no weight",
				fmt->name);
		free(inputs);
		pt_redact_free(red);
		return 2;
	}
	if (!strcmp(weight, "cpu")) {
		cpu_format = *fmt;
		cpu_format.write = fmt->write_cpu;
		fmt = &cpu_format;
	}
	/* Binary on a terminal is noise and can upset it, as gzip says. */
	if (fmt->binary && (!out || !strcmp(out, "-")) && isatty(1)) {
		pt_warn("format %s is binary: not writing it to a terminal "
			"(use -o FILE)", fmt->name);
		free(inputs);
		pt_redact_free(red);
		return 2;
	}
	/* As record and daemon do: an existing file is not replaced unless
	 * asked.  A device or FIFO (/dev/stdout) is written, not replaced. */
	if (out && !force && stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
		pt_warn("%s already exists (--force overwrites it)", out);
		free(inputs);
		pt_redact_free(red);
		return 1;
	}
	rc = pt_model_load(&m, inputs, n, red);
	if (rc < 0) {
		free(inputs);
		pt_redact_free(red);
		return 1;
	}
	status = rc;
	if (write_output(fmt, &m, out) < 0)
		status = 1;
	pt_model_free(&m);
	free(inputs);
	pt_redact_free(red);
	return status;
}
