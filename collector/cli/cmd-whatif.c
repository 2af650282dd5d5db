/*
 * proftrace whatif: the build's wall time under a change, predicted from
 * its capture (doc/man/proftrace-whatif.1.scd).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/deps.h"
#include "analysis/whatif.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/textopts.h"
#include "model/load.h"
#include "model/model.h"
#include "views/whatif-out.h"

static int run(int argc, char **argv);

const struct pt_cmd pt_cmd_whatif = {
	.name = "whatif",
	.usage = "[-f text|json] [-w N] CAPTURE [--cpus N] [--jobs N] "
		 "[--faster PATTERN=FACTOR] [--drop PATTERN] "
		 "[--cached PATTERN[=SECONDS]] [--serial-free]",
	.summary = "the build's wall time under a change, predicted from its "
		   "capture",
	.run = run,
};

static const char help_text[] =
	"Predict the wall time of the build in CAPTURE under the changes\n"
	"given (they combine), with the spread one recording carries and the\n"
	"new critical path.  With no change: the few changes that would save\n"
	"most.\n\n"
	"  --cpus N              N CPUs, the build's make or ninja at -jN\n"
	"  --jobs N              make or ninja at -jN on the recorded CPUs\n"
	"  --faster PAT=FACTOR   jobs matching PAT take 1/FACTOR of their time\n"
	"  --drop PAT            jobs matching PAT, and what only they needed,\n"
	"                        gone\n"
	"  --cached PAT[=SECS]   jobs matching PAT come from a cache: SECS each\n"
	"                        (0 by default)\n"
	"  --serial-free         every order with no file dependency under it\n"
	"                        gone (needs record --files)\n"
	"  -f, --format F        text (default) or json\n"
	"  -w, --width N         text lines of at most N columns (default 80)\n"
	"  -h, --help            show this help\n\n"
	"PAT: a glob (* ? [...]) against a job's whole target, command or a\n"
	"program it ran, else a part of one of them.\n"
	"The full page: man proftrace-whatif (proftrace-whatif(1)).\n";

enum { OPT_CPUS = 256, OPT_JOBS, OPT_FASTER, OPT_DROP, OPT_CACHED,
       OPT_SERIAL_FREE };

/* A number > 0 from s, or -1 with a one-line error. */
static int positive(const char *opt, const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(*v) || *v <= 0) {
		pt_warn("%s: '%s' is not a number above 0", opt, s);
		return -1;
	}
	return 0;
}

static char *strndup_or_die(const char *s, size_t n)
{
	char *p = pt_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* One change from option c and its argument, into *ch. */
static int parse_change(int c, const char *arg, struct pt_whatif_change *ch,
			char **text)
{
	struct pt_sb sb = PT_SB_INIT;
	const char *eq;
	double v;

	memset(ch, 0, sizeof *ch);
	switch (c) {
	case OPT_CPUS:
	case OPT_JOBS:
		ch->kind = c == OPT_CPUS ? PT_WHATIF_CPUS : PT_WHATIF_JOBS;
		if (pt_textopts_int(c == OPT_CPUS ? "--cpus" : "--jobs", arg,
				    1, &ch->n) < 0)
			return -1;
		pt_sb_addf(&sb, "%s %d", c == OPT_CPUS ? "--cpus" : "--jobs",
			   ch->n);
		break;
	case OPT_FASTER:
		ch->kind = PT_WHATIF_FASTER;
		eq = strrchr(arg, '=');
		if (!eq || eq == arg) {
			pt_warn("--faster '%s': give PATTERN=FACTOR (cc1=2: "
				"twice as fast)", arg);
			return -1;
		}
		if (positive("--faster", eq + 1, &v) < 0)
			return -1;
		ch->factor = v;
		ch->pattern = strndup_or_die(arg, (size_t)(eq - arg));
		pt_sb_addf(&sb, "--faster %s", arg);
		break;
	case OPT_DROP:
		ch->kind = PT_WHATIF_DROP;
		if (!*arg) {
			pt_warn("--drop: give a pattern");
			return -1;
		}
		ch->pattern = pt_xstrdup(arg);
		pt_sb_addf(&sb, "--drop %s", arg);
		break;
	case OPT_CACHED:
		ch->kind = PT_WHATIF_CACHED;
		eq = strrchr(arg, '=');
		if (eq && eq > arg) {
			char *end;

			errno = 0;
			v = strtod(eq + 1, &end);
			if (errno || end == eq + 1 || *end || !isfinite(v) ||
			    v < 0) {
				pt_warn("--cached '%s': the fetch time after "
					"'=' is seconds, 0 or more", arg);
				return -1;
			}
			ch->fetch_ns = (int64_t)(v * 1e9);
			ch->pattern = strndup_or_die(arg, (size_t)(eq - arg));
		} else {
			ch->pattern = pt_xstrdup(arg);
		}
		if (!*ch->pattern) {
			pt_warn("--cached: give a pattern");
			return -1;
		}
		pt_sb_addf(&sb, "--cached %s", arg);
		break;
	default:
		ch->kind = PT_WHATIF_SERIAL_FREE;
		pt_sb_addstr(&sb, "--serial-free");
		break;
	}
	*text = pt_sb_detach(&sb, NULL);
	ch->text = *text;
	return 0;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "width", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "faster", required_argument, NULL, OPT_FASTER },
		{ "drop", required_argument, NULL, OPT_DROP },
		{ "cached", required_argument, NULL, OPT_CACHED },
		{ "serial-free", no_argument, NULL, OPT_SERIAL_FREE },
		{ NULL, 0, NULL, 0 },
	};
	const char *fmt = "text", *why = NULL;
	struct pt_whatif_change *ch = NULL;
	char **texts = NULL, *err = NULL;
	size_t nch = 0, i;
	struct pt_model m;
	struct pt_deps d;
	int c, rc = 2, loaded, width = 80;

	while ((c = getopt_long(argc, argv, "f:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = optarg;
			break;
		case 'w':
			if (pt_textopts_int("--width", optarg, 20, &width) < 0)
				goto out;
			break;
		case 'h':
			printf("usage: proftrace %s %s\n\n%s", pt_cmd_whatif.name,
			       pt_cmd_whatif.usage, help_text);
			rc = 0;
			goto out;
		case OPT_CPUS: case OPT_JOBS: case OPT_FASTER: case OPT_DROP:
		case OPT_CACHED: case OPT_SERIAL_FREE:
			ch = pt_xrealloc(ch, (nch + 1) * sizeof *ch);
			texts = pt_xrealloc(texts, (nch + 1) * sizeof *texts);
			texts[nch] = NULL;
			if (parse_change(c, optarg, &ch[nch], &texts[nch]) < 0) {
				free((char *)ch[nch].pattern);
				free(texts[nch]);
				goto out;
			}
			nch++;
			break;
		default:
			rc = pt_cmd_usage(&pt_cmd_whatif);
			goto out;
		}
	}
	if (optind >= argc) {
		rc = pt_cmd_usage(&pt_cmd_whatif);
		goto out;
	}
	if (strcmp(fmt, "text") && strcmp(fmt, "json")) {
		pt_warn("unknown format '%s' (known: text, json)", fmt);
		goto out;
	}
	if (argc - optind > 1) {
		pt_warn("whatif reads one build: give it one capture");
		goto out;
	}
	rc = 1;
	loaded = pt_model_load(&m, argv + optind, 1, NULL);
	if (loaded < 0)
		goto out;
	if (pt_deps_build(&m, &d, PT_DEPS_ANY, &why) < 0) {
		pt_warn("%s", why);
		pt_model_free(&m);
		goto out;
	}
	if (!nch) {
		struct pt_whatif_hint h[3];
		int64_t now, spread;
		size_t n = pt_whatif_hints(&d, &m, h, 3, &now, &spread);

		rc = pt_whatif_write_hints(h, n, now, spread,
					   strcmp(fmt, "json") ? PT_WHATIF_TEXT :
					   PT_WHATIF_JSON, stdout);
		pt_whatif_hints_free(h, n);
	} else {
		struct pt_whatif w;

		if (pt_whatif_predict(&d, &m, ch, nch, &w, &err) < 0) {
			pt_warn("%s", err);
			pt_deps_free(&d);
			pt_model_free(&m);
			goto out;
		}
		rc = strcmp(fmt, "json") ?
		     pt_whatif_write_text(&d, &w, ch, nch, width, stdout) :
		     pt_whatif_write_json(&d, &w, ch, nch, stdout);
		pt_whatif_free(&w);
	}
	pt_deps_free(&d);
	pt_model_free(&m);
	if (rc < 0) {
		pt_warn("cannot write the output");
		rc = 1;
	} else {
		rc = loaded;
	}
out:
	for (i = 0; i < nch; i++) {
		free((char *)ch[i].pattern);
		free(texts[i]);
	}
	free(ch);
	free(texts);
	free(err);
	return rc;
}
