/*
 * proftrace export: send captures to an OpenTelemetry backend, a span
 * per execution (export/otlp.h).
 *
 * Exit status: 0; 1 if an input was damaged or unreadable, or the
 * receiver did not take every batch (one warning line says why; the
 * capture is untouched, and the same command can be run again: the ids
 * are the same, so nothing is stored twice); 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "export/otlp.h"
#include "model/load.h"
#include "model/model.h"
#include "model/redact.h"

static int run(int argc, char **argv);

const struct pt_cmd pt_cmd_export = {
	.name = "export",
	.usage = "--otlp[=URL] [--otlp-protocol P] [--otlp-min-duration MS] "
		 "[--otlp-max-spans N] [--otlp-deadline S] [--trace-id ID] "
		 "[--redact REGEX]... [-q] CAPTURE...",
	.summary = "send captures to an OpenTelemetry backend (OTLP/HTTP), "
		   "a span per execution",
	.run = run,
};

static void help(void)
{
	printf("usage: proftrace export %s\n\n"
	       "Send the executions of each CAPTURE to an OpenTelemetry "
	       "receiver as spans\n(POST /v1/traces), nested as the "
	       "processes were.\n\n%s"
	       "  --redact REGEX        replace what REGEX (POSIX extended) "
	       "matches in command\n"
	       "                        lines by *** (repeatable)\n"
	       "  -q, --quiet           no summary\n"
	       "  -h, --help            show this help\n\n"
	       "OTEL_EXPORTER_OTLP_ENDPOINT, _TRACES_ENDPOINT, _HEADERS, "
	       "_TIMEOUT, _PROTOCOL,\n_COMPRESSION, _CERTIFICATE, "
	       "OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES apply.\n"
	       "The full page: man proftrace-export (proftrace-export(1)).\n",
	       pt_cmd_export.usage, pt_otlp_cli_help);
}

static int export_one(const struct pt_otlp_opts *o, struct pt_otlp_sender *s,
		      char *path, struct pt_redact *red)
{
	struct pt_model m;
	struct pt_otlp_summary sum = { 0 };
	int rc, loaded;

	/* Lean: each command line is read again as its span goes out,
	 * rather than all of them held (bench/NOTES.md). */
	loaded = pt_model_load_lean(&m, &path, 1, red);
	if (loaded < 0)
		return 1;
	rc = pt_otlp_export_model(o, s, &m, red, &sum);
	pt_model_free(&m);
	if (rc == 0 && !o->quiet)
		pt_otlp_print_summary(o, path, &sum);
	return rc < 0 || loaded ? 1 : 0;
}

static int run(int argc, char **argv)
{
	struct pt_otlp_opts o;
	struct pt_otlp_sender *s;
	struct pt_redact *red = pt_redact_new();
	const char *url = NULL;
	char **paths = pt_xcalloc((size_t)argc, sizeof *paths);
	int i, n = 0, enabled = 0, status = 0, r;

	pt_otlp_opts_init(&o);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			help();
			goto out;
		}
		r = pt_otlp_cli_option(&o, argc, argv, &i, &enabled, &url);
		if (r < 0) {
			status = 2;
			goto out;
		}
		if (r)
			continue;
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			o.quiet = 1;
		} else if (!strcmp(a, "--redact") || !strncmp(a, "--redact=", 9)) {
			const char *v = a[8] == '=' ? a + 9 :
					i + 1 < argc ? argv[++i] : NULL;

			if (!v || pt_redact_add(red, v) < 0) {
				if (!v)
					pt_warn("--redact needs a value");
				status = 2;
				goto out;
			}
		} else if (!strcmp(a, "--")) {
			while (++i < argc)
				paths[n++] = argv[i];
		} else if (a[0] == '-' && a[1]) {
			pt_warn("export: unknown option '%s'", a);
			status = pt_cmd_usage(&pt_cmd_export);
			goto out;
		} else {
			paths[n++] = argv[i];
		}
	}
	if (!enabled || !n) {
		pt_warn(!enabled ? "export: say where to: --otlp[=URL] "
			"(the only kind of export so far)" :
			"export: no capture given");
		status = pt_cmd_usage(&pt_cmd_export);
		goto out;
	}
	if (pt_otlp_config_env(&o, url) < 0) {
		status = 2;
		goto out;
	}
	s = pt_otlp_sender_new(&o);
	for (i = 0; i < n; i++)
		if (export_one(&o, s, paths[i], red))
			status = 1;
	pt_otlp_sender_free(s);
out:
	pt_otlp_opts_free(&o);
	pt_redact_free(red);
	free(paths);
	return status;
}
