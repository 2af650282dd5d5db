/* convert -f files (doc/man/proftrace-convert.1.scd). */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "base/quote.h"
#include "base/strbuf.h"
#include "views/files-csv.h"

const char *pt_file_kind_name(char kind)
{
	switch (kind) {
	case 'r': return "read";
	case 'w': return "write";
	case 'd': return "delete";
	case 'n': return "new";
	case 'k': return "mkdir";
	case 'p': return "probe";
	case 's': return "dirstat";
	case 'm': return "missing";
	case 'x': return "exec";
	}
	return "other";
}

static void put_time(struct pt_sb *sb, int64_t ns)
{
	int64_t us = ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);

	pt_sb_addf(sb, "%s%" PRId64 ".%06" PRId64, us < 0 ? "-" : "",
		   (us < 0 ? -us : us) / 1000000, (us < 0 ? -us : us) % 1000000);
}

static void put_row(struct pt_sb *sb, const char *cmd, int32_t pid, char kind,
		    const char *path, int64_t t)
{
	pt_quote_csv(sb, cmd);
	pt_sb_addf(sb, ",%" PRId32 ",%s,", pid, pt_file_kind_name(kind));
	pt_quote_csv(sb, path);
	pt_sb_addch(sb, ',');
	put_time(sb, t);
	pt_sb_addch(sb, '\n');
}

int pt_files_csv_write(const struct pt_model *m, FILE *f)
{
	struct pt_sb sb = PT_SB_INIT, cmd = PT_SB_INIT;
	int rc = 0;
	size_t i, k, n;

	pt_sb_addstr(&sb, PT_FILES_CSV_HEADER "\n");
	/* Recorded without --files: no rows, not the program files alone. */
	for (i = 0; i < m->n && rc == 0 && pt_model_files_count(m, NULL);
	     i++) {
		const struct pt_exec *e = m->execs[i];
		const struct pt_file_access *a = pt_model_files(m, e, &n);

		pt_sb_reset(&cmd);
		if (e->argc)
			pt_exec_quote(e, &cmd);
		if (e->type == PT_EXEC_EXEC && e->exe[0] == '/' &&
		    !(e->flags & PT_EXF_UNTRACED))
			put_row(&sb, cmd.buf ? cmd.buf : "", e->pid, 'x',
				e->exe, e->start_ns);
		for (k = 0; k < n; k++)
			put_row(&sb, cmd.buf ? cmd.buf : "", e->pid, a[k].kind,
				a[k].path, a[k].time_ns);
		if (sb.len > (1u << 16)) {
			if (fwrite(sb.buf, 1, sb.len, f) != sb.len)
				rc = -1;
			pt_sb_reset(&sb);
		}
	}
	if (sb.len && fwrite(sb.buf, 1, sb.len, f) != sb.len)
		rc = -1;
	if (fflush(f) != 0 || ferror(f))
		rc = -1;
	pt_sb_release(&sb);
	pt_sb_release(&cmd);
	return rc;
}
