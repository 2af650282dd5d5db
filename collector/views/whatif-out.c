/* proftrace whatif's outputs (doc/man/proftrace-whatif.1.scd). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/quote.h"
#include "base/strbuf.h"
#include "views/deps-out.h"
#include "views/md.h"
#include "views/whatif-out.h"

static double sec(int64_t ns)
{
	return (double)ns / 1e9;
}

static int finish(FILE *f)
{
	return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

/* Did the recording wait for CPUs enough to say so (1 %)? */
static int loaded(const struct pt_whatif *w)
{
	return w->lost_ns > w->now_ns / 100;
}

static int noise(int64_t saving, int64_t spread)
{
	return (saving < 0 ? -saving : saving) < spread;
}

/* "make -j2 on 2 CPUs" */
static void machine(struct pt_sb *sb, const struct pt_whatif *w, int now)
{
	double cpus = now ? w->cpus : w->new_cpus;
	size_t slots = now ? w->slots : w->new_slots;

	if (w->has_slots) {
		if (slots)
			pt_sb_addf(sb, "%zu job%s at a time, ", slots,
				   slots == 1 ? "" : "s");
		else
			pt_sb_addstr(sb, "jobs unlimited, ");
	}
	if (cpus > 0)
		pt_sb_addf(sb, "%g CPU%s", cpus, cpus == 1 ? "" : "s");
	else
		pt_sb_addstr(sb, "CPUs unknown");
}

/* s cut to width columns (bytes: labels are mostly ASCII). */
static void line(FILE *f, int width, const char *s)
{
	size_t n = strlen(s);

	if (width > 3 && n > (size_t)width)
		fprintf(f, "%.*s...\n", width - 3, s);
	else
		fprintf(f, "%s\n", s);
}

static void change_line(struct pt_sb *sb, const struct pt_deps *d,
			const struct pt_whatif *w,
			const struct pt_whatif_change *c)
{
	pt_sb_addf(sb, "  %s", c->text);
	if (c->kind == PT_WHATIF_FASTER || c->kind == PT_WHATIF_DROP ||
	    c->kind == PT_WHATIF_CACHED)
		pt_sb_addf(sb, ": %zu job%s", c->matched,
			   c->matched == 1 ? "" : "s");
	if (c->kind == PT_WHATIF_DROP && w->ntaken)
		pt_sb_addf(sb, ", and %zu only they needed", w->ntaken);
	(void)d;
}

int pt_whatif_write_text(const struct pt_deps *d, const struct pt_whatif *w,
			 const struct pt_whatif_change *c, size_t nc,
			 int width, FILE *f)
{
	struct pt_sb sb = PT_SB_INIT;
	int64_t saving = w->free_ns - w->predicted_ns, short_ns = 0;
	size_t i, short_n = 0;

	pt_sb_addf(&sb, "now         %8.2f s  as recorded (", sec(w->now_ns));
	machine(&sb, w, 1);
	pt_sb_addch(&sb, ')');
	line(f, width, sb.buf);
	pt_sb_reset(&sb);
	if (loaded(w)) {
		pt_sb_addf(&sb, "unloaded    %8.2f s  without the %.2f s it "
			   "waited for a CPU", sec(w->free_ns),
			   sec(w->lost_ns));
		line(f, width, sb.buf);
		pt_sb_reset(&sb);
	}
	pt_sb_addf(&sb, "predicted   %8.2f s  (", sec(w->predicted_ns));
	machine(&sb, w, 0);
	pt_sb_addch(&sb, ')');
	line(f, width, sb.buf);
	pt_sb_reset(&sb);
	pt_sb_addf(&sb, "saving      %8.2f s  %.0f %%%s", sec(saving),
		   w->free_ns ? 100.0 * (double)saving / (double)w->free_ns :
		   0.0,
		   noise(saving, w->spread_ns) ? ", within noise" : "");
	line(f, width, sb.buf);
	pt_sb_reset(&sb);
	pt_sb_addf(&sb, "spread      %8.2f s  what one recording can tell",
		   sec(w->spread_ns));
	line(f, width, sb.buf);
	pt_sb_reset(&sb);
	if (nc) {
		fprintf(f, "\nchanges:\n");
		for (i = 0; i < nc; i++) {
			change_line(&sb, d, w, &c[i]);
			line(f, width, sb.buf);
			pt_sb_reset(&sb);
		}
	}
	for (i = 0; i < w->ntaken; i++) {
		if (!i)
			fprintf(f, "\ntaken along (only the dropped jobs "
				"needed them):\n");
		pt_sb_addstr(&sb, "  ");
		pt_deps_label(d, w->taken[i], &sb);
		line(f, width, sb.buf);
		pt_sb_reset(&sb);
	}
	fprintf(f, "\ncritical path, predicted (%zu job%s):\n", w->ncrit,
		w->ncrit == 1 ? "" : "s");
	for (i = 0; i < w->ncrit; i++) {
		/* The jobs that make it long: under 1 % of the wall, counted */
		if (w->crit_ns[i] < w->predicted_ns / 100) {
			short_n++;
			short_ns += w->crit_ns[i];
			continue;
		}
		pt_sb_addf(&sb, "  %8.2f s  ", sec(w->crit_ns[i]));
		pt_deps_label(d, w->crit[i], &sb);
		line(f, width, sb.buf);
		pt_sb_reset(&sb);
	}
	if (short_n)
		fprintf(f, "  %8.2f s  %zu shorter job%s (-f json lists them)\n",
			sec(short_ns), short_n, short_n == 1 ? "" : "s");
	if (loaded(w))
		fprintf(f, "\nnote: the recording waited %.0f %% of its wall "
			"for a CPU: the prediction is for the machine without "
			"that load\n", 100.0 * (double)w->lost_ns /
			(double)(w->now_ns ? w->now_ns : 1));
	if (!w->files)
		fprintf(f, "\nnote: no file accesses in the capture: the order "
			"is the tools' and the process tree's (record --files "
			"would make it exact)\n");
	pt_sb_release(&sb);
	return finish(f);
}

static void jsec(struct pt_sb *sb, const char *key, int64_t ns, int comma)
{
	pt_sb_addf(sb, "%s\"%s\": %.3f", comma ? ", " : "", key, sec(ns));
}

static void jstr(struct pt_sb *sb, const char *s)
{
	pt_quote_json(sb, s ? s : "", s ? strlen(s) : 0, PT_JSON_TEXT);
}

static void jlabel(struct pt_sb *sb, const struct pt_deps *d, size_t j)
{
	struct pt_sb l = PT_SB_INIT;

	pt_deps_label(d, j, &l);
	jstr(sb, l.buf);
	pt_sb_release(&l);
}

static void jmachine(struct pt_sb *sb, const struct pt_whatif *w, int now)
{
	double cpus = now ? w->cpus : w->new_cpus;
	size_t slots = now ? w->slots : w->new_slots;

	pt_sb_addstr(sb, "{\"cpus\": ");
	if (cpus > 0)
		pt_sb_addf(sb, "%g", cpus);
	else
		pt_sb_addstr(sb, "null");
	pt_sb_addstr(sb, ", \"jobs\": ");
	if (w->has_slots && slots)
		pt_sb_addf(sb, "%zu", slots);
	else
		pt_sb_addstr(sb, "null");
	pt_sb_addch(sb, '}');
}

int pt_whatif_write_json(const struct pt_deps *d, const struct pt_whatif *w,
			 const struct pt_whatif_change *c, size_t nc, FILE *f)
{
	struct pt_sb sb = PT_SB_INIT;
	int64_t saving = w->free_ns - w->predicted_ns;
	size_t i;
	int rc;

	pt_sb_addch(&sb, '{');
	jsec(&sb, "now", w->now_ns, 0);
	jsec(&sb, "now_unloaded", w->free_ns, 1);
	jsec(&sb, "predicted", w->predicted_ns, 1);
	jsec(&sb, "saving", saving, 1);
	jsec(&sb, "spread", w->spread_ns, 1);
	pt_sb_addf(&sb, ", \"within_noise\": %s",
		   noise(saving, w->spread_ns) ? "true" : "false");
	pt_sb_addstr(&sb, ", \"machine_now\": ");
	jmachine(&sb, w, 1);
	pt_sb_addstr(&sb, ", \"machine_predicted\": ");
	jmachine(&sb, w, 0);
	pt_sb_addstr(&sb, ", \"changes\": [");
	for (i = 0; i < nc; i++) {
		pt_sb_addstr(&sb, i ? ", {\"change\": " : "{\"change\": ");
		jstr(&sb, c[i].text);
		if (c[i].kind == PT_WHATIF_FASTER || c[i].kind == PT_WHATIF_DROP ||
		    c[i].kind == PT_WHATIF_CACHED)
			pt_sb_addf(&sb, ", \"jobs\": %zu", c[i].matched);
		pt_sb_addch(&sb, '}');
	}
	pt_sb_addstr(&sb, "], \"taken_along\": [");
	for (i = 0; i < w->ntaken; i++) {
		if (i)
			pt_sb_addstr(&sb, ", ");
		jlabel(&sb, d, w->taken[i]);
	}
	pt_sb_addstr(&sb, "], \"critical_path\": [");
	for (i = 0; i < w->ncrit; i++) {
		if (i)
			pt_sb_addstr(&sb, ", ");
		jlabel(&sb, d, w->crit[i]);
	}
	pt_sb_addstr(&sb, "], \"critical_path_seconds\": [");
	for (i = 0; i < w->ncrit; i++)
		pt_sb_addf(&sb, "%s%.3f", i ? ", " : "", sec(w->crit_ns[i]));
	pt_sb_addf(&sb, "], \"file_dependencies\": %s}\n",
		   w->files ? "true" : "false");
	rc = fwrite(sb.buf, 1, sb.len, f) == sb.len ? 0 : -1;
	pt_sb_release(&sb);
	return finish(f) < 0 ? -1 : rc;
}

int pt_whatif_write_hints(const struct pt_whatif_hint *h, size_t n,
			  int64_t now_ns, int64_t spread_ns,
			  enum pt_whatif_style style, FILE *f)
{
	size_t i;

	if (style == PT_WHATIF_JSON) {
		struct pt_sb sb = PT_SB_INIT;
		int rc;

		pt_sb_addch(&sb, '{');
		jsec(&sb, "now", now_ns, 0);
		jsec(&sb, "spread", spread_ns, 1);
		pt_sb_addstr(&sb, ", \"hints\": [");
		for (i = 0; i < n; i++) {
			pt_sb_addstr(&sb, i ? ", {\"change\": " : "{\"change\": ");
			jstr(&sb, h[i].change);
			pt_sb_addstr(&sb, ", \"what\": ");
			jstr(&sb, h[i].why);
			jsec(&sb, "predicted", h[i].predicted_ns, 1);
			jsec(&sb, "saving", h[i].saving_ns, 1);
			pt_sb_addf(&sb, ", \"within_noise\": %s}",
				   noise(h[i].saving_ns, spread_ns) ?
				   "true" : "false");
		}
		pt_sb_addstr(&sb, "]}\n");
		rc = fwrite(sb.buf, 1, sb.len, f) == sb.len ? 0 : -1;
		pt_sb_release(&sb);
		return finish(f) < 0 ? -1 : rc;
	}
	if (style == PT_WHATIF_MD) {
		struct pt_md md;

		pt_md_init(&md, f);
		pt_md_line(&md, "%s", "");
		pt_md_line(&md, "## What would save most");
		pt_md_line(&md, "%s", "");
		for (i = 0; i < n; i++) {
			pt_sb_addstr(&md.out, "- ");
			pt_md_code_str(&md, h[i].change);
			pt_md_line(&md, ": %.2f s%s (predicted %.2f s, now %.2f s)",
				   sec(h[i].saving_ns),
				   noise(h[i].saving_ns, spread_ns) ?
				   ", within noise" : "",
				   sec(h[i].predicted_ns), sec(now_ns));
		}
		if (!n)
			pt_md_line(&md, "- nothing found to try");
		pt_md_line(&md, "%s", "");
		pt_md_line(&md, "*Predicted by `proftrace whatif`; a saving "
			   "below %.2f s is within what one recording can "
			   "tell.*", sec(spread_ns));
		return pt_md_end(&md);
	}
	fprintf(f, "\nwhat would save most (proftrace whatif CAPTURE "
		"CHANGE):\n");
	for (i = 0; i < n; i++)
		fprintf(f, "  %7.2f s  %s%s: %s\n", sec(h[i].saving_ns),
			h[i].change,
			noise(h[i].saving_ns, spread_ns) ? " (within noise)" : "",
			h[i].why);
	if (!n)
		fprintf(f, "  nothing found to try\n");
	return finish(f);
}
