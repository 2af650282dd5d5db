/*
 * Exporting a run as it ends (record --otlp, daemon --otlp), and the
 * summary line that export and they print.
 */
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "export/otlp.h"

/* "1,234,567": the summary's counts. */
static const char *grouped(char *buf, size_t size, uint64_t v)
{
	char digits[24];
	size_t n, i, o = 0;

	n = (size_t)snprintf(digits, sizeof digits, "%llu",
			     (unsigned long long)v);
	for (i = 0; i < n && o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

void pt_otlp_print_summary(const struct pt_otlp_opts *o, const char *name,
			   const struct pt_otlp_summary *s)
{
	char a[32], b[32];
	struct pt_sb fold = PT_SB_INIT;

	if (s->folded_short)
		pt_sb_addf(&fold, "%s shorter than %lld ms",
			   grouped(a, sizeof a, s->folded_short),
			   (long long)(o->min_duration_ns / 1000000));
	if (s->folded_over)
		pt_sb_addf(&fold, "%s%s beyond --otlp-max-spans %zu (%.3f ms "
			   "or shorter)", fold.len ? ", " : "",
			   grouped(b, sizeof b, s->folded_over), o->max_spans,
			   (double)s->threshold_ns / 1e6);
	pt_warn("%s: %s executions sent as %s spans in trace %s (from %s)%s%s",
		name, grouped(a, sizeof a, s->executions),
		grouped(b, sizeof b, s->spans), s->trace_hex, s->trace_how,
		fold.len ? "; folded into their parents: " : "",
		fold.len ? fold.buf : "");
	pt_sb_release(&fold);
}

int pt_otlp_config_check(const char *url)
{
	struct pt_otlp_opts o;
	int rc;

	pt_otlp_opts_init(&o);
	rc = pt_otlp_config_env(&o, url);
	pt_otlp_opts_free(&o);
	return rc;
}

int pt_otlp_finish(const struct pt_model *m, const char *url)
{
	struct pt_otlp_opts o;
	struct pt_otlp_sender *s;
	struct pt_otlp_summary sum = { 0 };
	int rc = 0;

	pt_otlp_opts_init(&o);
	if (pt_otlp_config_env(&o, url) < 0) {
		rc = -1;
		goto out;
	}
	s = pt_otlp_sender_new(&o);
	if (pt_otlp_export_model(&o, s, m, NULL, &sum) == 0)
		pt_otlp_print_summary(&o, "OTLP export", &sum);
	else
		pt_warn("the capture is kept: 'proftrace export --otlp "
			"CAPTURE' sends it again");
	pt_otlp_sender_free(s);
out:
	pt_otlp_opts_free(&o);
	return rc;
}
