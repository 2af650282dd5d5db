/* proftrace deps's outputs (doc/man/proftrace-deps.1.scd). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/strbuf.h"
#include "views/deps-out.h"
#include "views/json.h"
#include "views/md.h"

static double sec(int64_t ns)
{
	return (double)ns / 1e9;
}

static const char *cpus_label(int cpus, char *buf, size_t n)
{
	if (!cpus)
		snprintf(buf, n, "unlimited CPUs");
	else
		snprintf(buf, n, "%d CPU%s", cpus, cpus == 1 ? "" : "s");
	return buf;
}

static int finish(FILE *f)
{
	return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

/* The build's own directory: its first root's. */
static const char *base_dir(const struct pt_deps *d)
{
	return d->driver ? d->driver->cwd : "";
}

void pt_deps_label(const struct pt_deps *d, size_t j, struct pt_sb *sb)
{
	const struct pt_deps_job *x = &d->job[j];
	const char *base = base_dir(d), *dir = x->dir ? x->dir : "";
	size_t n = strlen(base);

	if (!x->target) {
		pt_sb_addstr(sb, x->cmd);
		return;
	}
	/* an opam package is its own name, wherever it was built */
	if (x->target[0] == '/' || d->scope[x->scope].kind == PT_DEPS_OPAM) {
		pt_sb_addstr(sb, x->target);
		return;
	}
	{
		/* dir/target, lexically normal, from the build's directory */
		char *p = pt_makedb_join(dir, x->target);

		if (!strncmp(p, base, n) && p[n] == '/')
			pt_sb_addstr(sb, p + n + 1);
		else
			pt_sb_addstr(sb, p);
		free(p);
	}
}

static size_t leaves(const struct pt_deps *d)
{
	size_t i, s, n = 0;

	for (i = 0; i < d->njobs; i++) {
		for (s = 1; s < d->nscopes; s++)
			if (d->scope[s].parent_job == i)
				break;
		n += s == d->nscopes;
	}
	return n;
}

/* One line of at most width columns (bytes of a UTF-8 sequence count
 * once), cut with "...". */
static void line(FILE *f, int width, const char *s)
{
	size_t i, cols = 0, n = strlen(s);

	for (i = 0; i < n; i++)
		cols += ((unsigned char)s[i] & 0xc0) != 0x80;
	if (width <= 3 || cols <= (size_t)width) {
		fprintf(f, "%s\n", s);
		return;
	}
	for (i = 0, cols = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 &&
		    ++cols > (size_t)width - 3)
			break;
		fputc(s[i], f);
	}
	fputs("...\n", f);
}

static const char *race_kind(int k)
{
	switch (k) {
	case PT_DEPS_WAW:
		return "both write it";
	case PT_DEPS_MISSING:
		return "looked for before the first made it";
	case PT_DEPS_DIR:
		return "made in a directory the first one makes";
	case PT_DEPS_RULE:
		return "the first made it, but its own rule did not run";
	default:
		return "read after the first wrote it";
	}
}

/* s after prefix, wrapped at spaces to width, each further line indented
 * as far as the prefix. */
static void wrapped(FILE *f, int width, const char *prefix, const char *s)
{
	size_t ind = strlen(prefix), room, n;

	room = width > (int)ind + 20 ? (size_t)width - ind : 20;
	fputs(prefix, f);
	while (*s) {
		n = strlen(s);
		if (n > room) {
			size_t cut = room;

			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (!cut)               /* one word longer than a line */
				for (cut = room; s[cut] && s[cut] != ' '; cut++)
					;
			n = cut;
		}
		fwrite(s, 1, n, f);
		s += n;
		while (*s == ' ')
			s++;
		if (*s)
			fprintf(f, "\n%*s", (int)ind, "");
	}
	fputc('\n', f);
}

int pt_deps_write_text(const struct pt_deps *d, int width, FILE *f)
{
	struct pt_sb sb = PT_SB_INIT;
	char lab[32];
	size_t i, dbs = 0, makes = 0;

	if (width <= 0)
		width = 80;
	for (i = 0; i < d->nscopes; i++)
		if (d->scope[i].kind == PT_DEPS_MAKE) {
			makes++;
			dbs += d->scope[i].db != NULL;
		}
	pt_sb_addf(&sb, "%zu jobs, %zu file dependencies between them, "
		   "from %zu file accesses", leaves(d), d->nedges,
		   d->accesses);
	if (d->dropped)
		pt_sb_addf(&sb, " (%llu more not kept)",
			   (unsigned long long)d->dropped);
	line(f, width, sb.buf);
	if (makes) {
		pt_sb_reset(&sb);
		pt_sb_addf(&sb, "declared order: %zu of %zu makes' databases "
			   "read", dbs, makes);
		if (dbs < makes)
			pt_sb_addstr(&sb, " (the others: by timing alone)");
		line(f, width, sb.buf);
	}
	fprintf(f, "\n  %-22s %9.2f s\n", "wall time now", sec(d->wall_ns));
	for (i = 0; i < d->nideal; i++)
		fprintf(f, "  ideal on %-14s %8.2f s%s\n",
			cpus_label(d->ideal[i].cpus, lab, sizeof lab),
			sec(d->ideal[i].wall_ns),
			d->ideal[i].cpus && d->ideal[i].cpus == d->machine_cpus ?
			"  (this machine)" : "");
	pt_sb_reset(&sb);
	pt_sb_addf(&sb, "  the jobs ran %.2f s, with %.2f s of CPU", 
		   sec(d->work_ns), sec(d->cpu_ns));
	if (d->work_ns > 0)
		pt_sb_addf(&sb, " (%.0f %%)", 100.0 * (double)d->cpu_ns /
			   (double)d->work_ns);
	line(f, width, sb.buf);
	if (d->wait_ns >= 0) {
		pt_sb_reset(&sb);
		pt_sb_addf(&sb, "  they waited %.2f s for a CPU (%.0f %% of their "
			   "time), taken off", sec(d->wait_ns), d->work_ns > 0 ?
			   100.0 * (double)d->wait_ns / (double)d->work_ns : 0.0);
		line(f, width, sb.buf);
	} else
		line(f, width, "  (each job's wall time as recorded: load "
		     "inflates it)");
	if (d->ncrit) {
		pt_sb_reset(&sb);
		pt_sb_addstr(&sb, "critical path: ");
		for (i = 0; i < d->ncrit && i < 8; i++) {
			pt_sb_addstr(&sb, i ? " -> " : "");
			pt_deps_label(d, d->crit[i], &sb);
		}
		if (d->ncrit > 8)
			pt_sb_addf(&sb, " -> ... (%zu jobs)", d->ncrit);
		fputc('\n', f);
		line(f, width, sb.buf);
	}
	fprintf(f, "\nraces:%s\n", d->nrace ? "" : " none");
	for (i = 0; i < d->nrace; i++) {
		const struct pt_deps_race *r = &d->race[i];

		pt_sb_reset(&sb);
		pt_sb_addf(&sb, "  %s", r->path);
		if (r->npaths > 1)
			pt_sb_addf(&sb, " (and %zu more)", r->npaths - 1);
		pt_sb_addf(&sb, ": %s", race_kind(r->kind));
		line(f, width, sb.buf);
		pt_sb_reset(&sb);
		pt_sb_addstr(&sb, "    first:  ");
		pt_deps_label(d, r->writer, &sb);
		if (d->job[r->writer].target)
			pt_sb_addf(&sb, "  %s", d->job[r->writer].cmd);
		line(f, width, sb.buf);
		pt_sb_reset(&sb);
		pt_sb_addstr(&sb, "    second: ");
		pt_deps_label(d, r->reader, &sb);
		if (d->job[r->reader].target)
			pt_sb_addf(&sb, "  %s", d->job[r->reader].cmd);
		line(f, width, sb.buf);
		wrapped(f, width, "    fix: ", r->fix);
	}
	fprintf(f, "\nserializations that cost most:%s\n",
		d->nser ? "" : " none");
	for (i = 0; i < d->nser; i++) {
		pt_sb_reset(&sb);
		pt_sb_addf(&sb, "  %6.2f s  ", sec(d->ser[i].gain_ns));
		pt_deps_label(d, d->ser[i].then, &sb);
		pt_sb_addstr(&sb, " waits for ");
		pt_deps_label(d, d->ser[i].first, &sb);
		line(f, width, sb.buf);
		wrapped(f, width, "            ", d->ser[i].why);
	}
	pt_sb_release(&sb);
	return finish(f);
}

int pt_deps_write_md(const struct pt_deps *d, FILE *f)
{
	static const char *const ideal_cols[] = { "<CPUs", "wall (s)" };
	static const char *const ser_cols[] = { "gain (s)", "<first",
						"<then", "<where" };
	static const char *const race_cols[] = { "<path", "<writer",
						 "<reader", "<fix" };
	struct pt_md md;
	char lab[32];
	size_t i;

	pt_md_init(&md, f);
	pt_md_line(&md, "## What it could have been");
	pt_md_line(&md, "%s", "");
	pt_md_code_str(&md, pt_exec_prog(d->driver));
	pt_md_line(&md, " ran %zu jobs, with %zu dependencies between them "
		   "found in %zu file accesses.", leaves(d), d->nedges,
		   d->accesses);
	pt_md_header(&md, ideal_cols, 2, NULL);
	pt_md_line(&md, "| now | %.2f |", sec(d->wall_ns));
	for (i = 0; i < d->nideal; i++)
		pt_md_line(&md, "| ideal on %s%s | %.2f |",
			   cpus_label(d->ideal[i].cpus, lab, sizeof lab),
			   d->ideal[i].cpus &&
			   d->ideal[i].cpus == d->machine_cpus ?
			   " (this machine)" : "",
			   sec(d->ideal[i].wall_ns));
	if (d->ncrit) {
		pt_md_line(&md, "%s", "");
		pt_sb_addstr(&md.out, "Critical path:");
		for (i = 0; i < d->ncrit && i < 8; i++) {
			pt_sb_addstr(&md.out, i ? " \xe2\x86\x92 " : " ");
			pt_md_code_str(&md, d->job[d->crit[i]].cmd);
		}
		if (d->ncrit > 8)
			pt_sb_addf(&md.out, " \xe2\x86\x92 ... (%zu jobs)",
				   d->ncrit);
		pt_md_line(&md, "%s", "");
	}
	pt_md_line(&md, "%s", "");
	pt_md_line(&md, "### Serializations that cost most");
	if (!d->nser) {
		pt_md_line(&md, "%s", "");
		pt_md_line(&md, "None.");
	} else {
		pt_md_header(&md, ser_cols, 4, NULL);
		for (i = 0; i < d->nser; i++) {
			pt_sb_addf(&md.out, "| %.2f | ",
				   sec(d->ser[i].gain_ns));
			pt_md_code_str(&md, d->job[d->ser[i].first].cmd);
			pt_sb_addstr(&md.out, " | ");
			pt_md_code_str(&md, d->job[d->ser[i].then].cmd);
			pt_sb_addstr(&md.out, " | ");
			pt_md_code_str(&md, d->ser[i].why);
			pt_md_line(&md, " |");
		}
	}
	pt_md_line(&md, "%s", "");
	pt_md_line(&md, "### Races");
	if (!d->nrace) {
		pt_md_line(&md, "%s", "");
		pt_md_line(&md, "None.");
	} else {
		pt_md_header(&md, race_cols, 4, NULL);
		for (i = 0; i < d->nrace; i++) {
			pt_sb_addstr(&md.out, "| ");
			pt_md_code_str(&md, d->race[i].path);
			pt_sb_addstr(&md.out, " | ");
			pt_md_code_str(&md, d->job[d->race[i].writer].cmd);
			pt_sb_addstr(&md.out, " | ");
			pt_md_code_str(&md, d->job[d->race[i].reader].cmd);
			pt_sb_addstr(&md.out, " | ");
			pt_md_code_str(&md, d->race[i].fix);
			pt_md_line(&md, " |");
		}
	}
	return pt_md_end(&md);
}

static void jstr(struct pt_sb *sb, const char *s)
{
	pt_sb_addch(sb, '"');
	pt_json_escape(sb, s, strlen(s));
	pt_sb_addch(sb, '"');
}

static void jlabel(struct pt_sb *sb, const struct pt_deps *d, size_t j)
{
	struct pt_sb l = PT_SB_INIT;

	pt_deps_label(d, j, &l);
	jstr(sb, l.buf ? l.buf : "");
	pt_sb_release(&l);
}

static void jstr_or_null(struct pt_sb *sb, const char *s)
{
	if (s)
		jstr(sb, s);
	else
		pt_sb_addstr(sb, "null");
}

static const char *race_kind_word(int k)
{
	switch (k) {
	case PT_DEPS_WAW:
		return "write-write";
	case PT_DEPS_MISSING:
		return "missing";
	case PT_DEPS_DIR:
		return "directory";
	case PT_DEPS_RULE:
		return "other-rule";
	default:
		return "read-write";
	}
}

int pt_deps_write_json(const struct pt_deps *d, FILE *f)
{
	struct pt_sb sb = PT_SB_INIT;
	int64_t t0 = d->driver ? d->driver->start_ns : 0;
	size_t i, s;
	int rc;

	pt_sb_addf(&sb, "{\"wall\": %.6f, \"edges_count\": %zu, "
		   "\"accesses\": %zu, \"dropped\": %llu, \"machine_cpus\": ",
		   sec(d->wall_ns), d->nedges, d->accesses,
		   (unsigned long long)d->dropped);
	if (d->machine_cpus)
		pt_sb_addf(&sb, "%d", d->machine_cpus);
	else
		pt_sb_addstr(&sb, "null");
	pt_sb_addf(&sb, ", \"work\": %.6f, \"cpu\": %.6f", sec(d->work_ns),
		   sec(d->cpu_ns));
	pt_sb_addstr(&sb, ", \"driver\": ");
	jstr(&sb, d->driver ? pt_exec_prog(d->driver) : "");
	pt_sb_addstr(&sb, ",\n \"ideal\": [");
	for (i = 0; i < d->nideal; i++) {
		pt_sb_addstr(&sb, i ? ", " : "");
		if (d->ideal[i].cpus)
			pt_sb_addf(&sb, "{\"cpus\": %d, ", d->ideal[i].cpus);
		else
			pt_sb_addstr(&sb, "{\"cpus\": null, ");
		pt_sb_addf(&sb, "\"wall\": %.6f}", sec(d->ideal[i].wall_ns));
	}
	pt_sb_addstr(&sb, "],\n \"critical_path\": [");
	for (i = 0; i < d->ncrit; i++) {
		pt_sb_addstr(&sb, i ? ", " : "");
		jstr(&sb, d->job[d->crit[i]].cmd);
	}
	pt_sb_addstr(&sb, "],\n \"jobs\": [");
	for (i = 0; i < d->njobs; i++) {
		const struct pt_deps_job *j = &d->job[i];
		int holds = 0;

		for (s = 1; s < d->nscopes; s++)
			if (d->scope[s].parent_job == i)
				holds = 1;
		pt_sb_addstr(&sb, i ? ",\n  " : "\n  ");
		pt_sb_addf(&sb, "{\"id\": %zu, \"label\": ", i);
		jlabel(&sb, d, i);
		pt_sb_addstr(&sb, ", \"target\": ");
		jstr_or_null(&sb, j->target);
		pt_sb_addstr(&sb, ", \"directory\": ");
		jstr_or_null(&sb, j->dir);
		pt_sb_addstr(&sb, ", \"where\": ");
		jstr_or_null(&sb, j->where);
		pt_sb_addstr(&sb, ", \"command\": ");
		jstr(&sb, j->cmd);
		pt_sb_addf(&sb, ", \"tool\": ");
		jstr(&sb, d->scope[j->scope].e ?
		     pt_exec_prog(d->scope[j->scope].e) : "");
		pt_sb_addf(&sb, ", \"scope\": %zu, \"start\": %.6f, \"end\": "
			   "%.6f, \"own\": %.6f, \"cpu\": %.6f, \"wait\": ",
			   j->scope, sec(j->start_ns - t0), sec(j->end_ns - t0),
			   sec(j->dur_ns), sec(j->cpu_ns));
		if (j->wait_ns >= 0)
			pt_sb_addf(&sb, "%.6f", sec(j->wait_ns));
		else
			pt_sb_addstr(&sb, "null");
		pt_sb_addf(&sb, ", \"holds_tool\": %s}", holds ? "true" : "false");
	}
	pt_sb_addstr(&sb, "],\n \"edges\": [");
	for (i = 0; i < d->nedges; i++) {
		pt_sb_addstr(&sb, i ? ",\n  " : "\n  ");
		pt_sb_addf(&sb, "{\"from\": %zu, \"to\": %zu, \"kind\": \"file\""
			   ", \"path\": ", d->edge[i].from, d->edge[i].to);
		jstr(&sb, d->edge[i].path);
		pt_sb_addf(&sb, ", \"paths\": %zu}", d->edge[i].npaths);
	}
	/* the order the tools declared, or ran their jobs in */
	for (i = 0; i < d->ndecl; i++) {
		pt_sb_addstr(&sb, i || d->nedges ? ",\n  " : "\n  ");
		pt_sb_addf(&sb, "{\"from\": %zu, \"to\": %zu, \"kind\": \"%s\"}",
			   (size_t)(d->decl[i] >> 32), (size_t)(uint32_t)d->decl[i],
			   d->decl_tool[i] ? "declared" : "ran");
	}
	pt_sb_addstr(&sb, "],\n \"serializations\": [");
	for (i = 0; i < d->nser; i++) {
		pt_sb_addstr(&sb, i ? ",\n  " : "\n  ");
		pt_sb_addstr(&sb, "{\"first\": ");
		jstr(&sb, d->job[d->ser[i].first].cmd);
		pt_sb_addstr(&sb, ", \"then\": ");
		jstr(&sb, d->job[d->ser[i].then].cmd);
		pt_sb_addf(&sb, ", \"first_job\": %zu, \"then_job\": %zu",
			   d->ser[i].first, d->ser[i].then);
		pt_sb_addstr(&sb, ", \"why\": ");
		jstr(&sb, d->ser[i].why);
		pt_sb_addf(&sb, ", \"gain\": %.6f}", sec(d->ser[i].gain_ns));
	}
	pt_sb_addstr(&sb, "],\n \"races\": [");
	for (i = 0; i < d->nrace; i++) {
		pt_sb_addstr(&sb, i ? ",\n  " : "\n  ");
		pt_sb_addstr(&sb, "{\"path\": ");
		jstr(&sb, d->race[i].path);
		pt_sb_addstr(&sb, ", \"kind\": ");
		jstr(&sb, race_kind_word(d->race[i].kind));
		pt_sb_addstr(&sb, ", \"writer\": ");
		jstr(&sb, d->job[d->race[i].writer].cmd);
		pt_sb_addstr(&sb, ", \"reader\": ");
		jstr(&sb, d->job[d->race[i].reader].cmd);
		pt_sb_addf(&sb, ", \"writer_job\": %zu, \"reader_job\": %zu, "
			   "\"paths\": %zu, \"fix\": ", d->race[i].writer,
			   d->race[i].reader, d->race[i].npaths);
		jstr(&sb, d->race[i].fix);
		pt_sb_addch(&sb, '}');
	}
	pt_sb_addstr(&sb, "]}\n");
	rc = fwrite(sb.buf, 1, sb.len, f) == sb.len ? 0 : -1;
	pt_sb_release(&sb);
	return finish(f) < 0 ? -1 : rc;
}

/* A DOT string: quotes and backslashes escaped, control bytes as '?'. */
static void dstr(struct pt_sb *sb, const char *s)
{
	pt_sb_addch(sb, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			pt_sb_addch(sb, '\\');
		pt_sb_addch(sb, (unsigned char)*s < 0x20 ? '?' : *s);
	}
	pt_sb_addch(sb, '"');
}

int pt_deps_write_dot(const struct pt_deps *d, FILE *f)
{
	struct pt_sb sb = PT_SB_INIT, l = PT_SB_INIT;
	size_t i, s;
	int rc;

	pt_sb_addstr(&sb, "digraph deps {\n  rankdir=LR;\n  node [shape=box];\n");
	for (i = 0; i < d->njobs; i++) {
		for (s = 1; s < d->nscopes; s++)
			if (d->scope[s].parent_job == i)
				break;
		if (s < d->nscopes)
			continue;       /* it holds a tool: its jobs are drawn */
		pt_sb_reset(&l);
		pt_deps_label(d, i, &l);
		pt_sb_addf(&sb, "  j%zu [label=", i);
		dstr(&sb, l.buf ? l.buf : "");
		pt_sb_addstr(&sb, ", tooltip=");
		dstr(&sb, d->job[i].cmd);
		pt_sb_addstr(&sb, "];\n");
	}
	for (i = 0; i < d->nedges; i++) {
		pt_sb_addf(&sb, "  j%zu -> j%zu [tooltip=", d->edge[i].from,
			   d->edge[i].to);
		dstr(&sb, d->edge[i].path);
		pt_sb_addstr(&sb, "];\n");
	}
	for (i = 0; i < d->nrace; i++) {
		pt_sb_addf(&sb, "  j%zu -> j%zu [color=red, style=bold, label=",
			   d->race[i].writer, d->race[i].reader);
		dstr(&sb, "race");
		pt_sb_addstr(&sb, ", tooltip=");
		dstr(&sb, d->race[i].path);
		pt_sb_addstr(&sb, "];\n");
	}
	for (i = 0; i < d->nser; i++) {
		pt_sb_addf(&sb, "  j%zu -> j%zu [color=gray, style=dashed, "
			   "label=", d->ser[i].first, d->ser[i].then);
		pt_sb_reset(&l);
		pt_sb_addf(&l, "%.2f s", sec(d->ser[i].gain_ns));
		dstr(&sb, l.buf);
		pt_sb_addstr(&sb, "];\n");
	}
	pt_sb_addstr(&sb, "}\n");
	rc = fwrite(sb.buf, 1, sb.len, f) == sb.len ? 0 : -1;
	pt_sb_release(&sb);
	pt_sb_release(&l);
	return finish(f) < 0 ? -1 : rc;
}

void pt_deps_summary(const struct pt_deps *d, int md, FILE *f)
{
	const struct pt_deps_ideal *mine = NULL, *unl = NULL;
	struct pt_sb sb = PT_SB_INIT;
	size_t i;

	for (i = 0; i < d->nideal; i++) {
		if (!d->ideal[i].cpus)
			unl = &d->ideal[i];
		else if (d->ideal[i].cpus <= d->machine_cpus || !mine)
			mine = &d->ideal[i];
	}
	fprintf(f, md ? "\n## What it could have been\n\n" :
			"\nwhat it could have been:\n");
	if (mine)
		fprintf(f, "%s%.2f s on %d CPU%s with the same %zu jobs "
			"(now %.2f s)%s\n", md ? "- " : "  ",
			sec(mine->wall_ns), mine->cpus,
			mine->cpus == 1 ? "" : "s", leaves(d), sec(d->wall_ns),
			"");
	if (unl)
		fprintf(f, "%s%.2f s on unlimited CPUs (the dependencies' "
			"critical path)\n", md ? "- " : "  ",
			sec(unl->wall_ns));
	/* Commands stay out of the Markdown: deps -f markdown quotes them. */
	if (d->nser && md) {
		fprintf(f, "- %zu serialization%s without a dependency, the "
			"costliest %.2f s\n", d->nser, d->nser == 1 ? "" : "s",
			sec(d->ser[0].gain_ns));
	} else if (d->nser) {
		pt_deps_label(d, d->ser[0].then, &sb);
		pt_sb_addstr(&sb, " waits for ");
		pt_deps_label(d, d->ser[0].first, &sb);
		fprintf(f, "  costliest serialization, %.2f s: %s\n",
			sec(d->ser[0].gain_ns), sb.buf);
	}
	fprintf(f, "%s%zu race%s (proftrace deps names them)\n",
		md ? "- " : "  ", d->nrace, d->nrace == 1 ? "" : "s");
	pt_sb_release(&sb);
}
