/*
 * proftrace info: what a capture says about its run (its META records):
 * host, kernel, CPUs, memory, versions, command, directory and git
 * commit, start and end, CI ids; as text for a person, each line a label
 * and a value in aligned columns, or with --format json every recorded
 * key for a program.
 *
 * Exit status: 0; 1 if the capture was damaged (what was read is shown)
 * or unreadable; 2 for bad usage.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/read.h"
#include "cli/cmd.h"
#include "base/quote.h"
#include "base/strbuf.h"
#include "base/util.h"

static const char help_text[] =
	"Print what CAPTURE records about its run: host, kernel, CPU count and\n"
	"model, memory, glibc and proftrace versions, the command, its\n"
	"directory and git commit, start and end, CI ids.\n\n"
	"  -f, --format F  text (default) or json (one object with every\n"
	"                  recorded key; --json says the same)\n"
	"  -h, --help      show this help\n\n"
	"The full page: man proftrace-info (proftrace-info(1)).\n";

/* Keys shown in this order under these labels (see is_env_name). */
static const char *const labels[][2] = {
	{ "host", "host" },
	{ "kernel", "kernel" },
	{ "cpus", "CPUs" },
	{ "cpu_model", "CPU model" },
	{ "mem_total_kb", "memory (KiB)" },
	{ "glibc_version", "glibc" },
	{ "proftrace_version", "proftrace" },
	{ "command", "command" },
	{ "cwd", "directory" },
	{ "git_commit", "git commit" },
};
#define N_LABELS (sizeof labels / sizeof labels[0])

/*
 * Keys shown under their own name: the CI's variables, as a person set
 * them in the job ("CI_JOB_ID", "GITHUB_RUN_ID").  Any other key without
 * a label (clock readings, the collector's bookkeeping, keys of a newer
 * version) means nothing to a reader: it is in --format json only.
 */
static int is_env_name(const char *k)
{
	if (!*k)
		return 0;
	for (; *k; k++)
		if (!((*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
		      *k == '_'))
			return 0;
	return 1;
}

struct info {
	struct pt_reader *r;
	int damaged;
	uint64_t start_ns, end_ns;      /* realtime; 0: unknown */
	int end_from_meta;
};

static uint64_t meta_u64(struct pt_reader *r, const char *key)
{
	const char *v = pt_reader_meta(r, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

/* Read the whole capture: a META may come at the end (end_realtime_ns),
 * and without one the last record says when the capture ended. */
static int load(struct info *in, const char *path)
{
	struct pt_cap_event ev;
	uint64_t last_recv = 0, mono;
	int rc;

	memset(in, 0, sizeof *in);
	in->r = pt_reader_open(path);
	if (!in->r)
		return -1;
	while ((rc = pt_reader_next(in->r, &ev)) > 0)
		if (ev.hdr.recv_ns > last_recv)
			last_recv = ev.hdr.recv_ns;
	in->damaged = rc < 0;
	in->start_ns = meta_u64(in->r, "start_realtime_ns");
	in->end_ns = meta_u64(in->r, "end_realtime_ns");
	in->end_from_meta = in->end_ns != 0;
	mono = meta_u64(in->r, "start_monotonic_ns");
	if (!in->end_ns && in->start_ns && mono && last_recv > mono)
		in->end_ns = in->start_ns + (last_recv - mono);
	return 0;
}

static const char *label_of(const char *key)
{
	size_t i;

	for (i = 0; i < N_LABELS; i++)
		if (!strcmp(labels[i][0], key))
			return labels[i][1];
	return NULL;
}

/* Unix time in ns as "YYYY-mm-dd HH:MM:SS.mmm +zzzz" (local time). */
static void fmt_time(char *out, size_t size, uint64_t ns, int utc_iso)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	char date[64];

	if (utc_iso) {
		gmtime_r(&t, &tm);
		strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(out, size, "%s.%03uZ", date,
			 (unsigned)(ns / 1000000u % 1000u));
		return;
	}
	localtime_r(&t, &tm);
	strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(out, size, "%s.%03u", date, (unsigned)(ns / 1000000u % 1000u));
	strftime(date, sizeof date, " %z", &tm);
	strncat(out, date, size - strlen(out) - 1);
}

/* The lines of the text, collected to align their values. */
struct lines {
	const char *label[64];
	char *value[64];
	size_t n;
};

static void add_line(struct lines *l, const char *label, const char *value)
{
	if (l->n < sizeof l->label / sizeof l->label[0]) {
		l->label[l->n] = label;
		l->value[l->n++] = pt_xstrdup(value);
	}
}

static void print_text(struct info *in, const char *path)
{
	struct lines l = { .n = 0 };
	size_t len, i, w = 0;
	const char *p = pt_reader_meta_pairs(in->r, &len), *end = p + len;
	const char *by = pt_reader_meta(in->r, "stopped_by");
	char when[96];

	add_line(&l, "capture", path);
	for (i = 0; i < N_LABELS; i++) {
		const char *v = pt_reader_meta(in->r, labels[i][0]);

		if (v)
			add_line(&l, labels[i][1], v);
	}
	if (in->start_ns) {
		fmt_time(when, sizeof when, in->start_ns, 0);
		add_line(&l, "start", when);
	}
	if (in->end_ns) {
		fmt_time(when, sizeof when, in->end_ns, 0);
		if (!in->end_from_meta)
			strncat(when, " (its last record)",
				sizeof when - strlen(when) - 1);
		add_line(&l, "end", when);
	}
	if (in->start_ns && in->end_ns >= in->start_ns) {
		snprintf(when, sizeof when, "%.3f s",
			 (double)(in->end_ns - in->start_ns) / 1e9);
		add_line(&l, "wall time", when);
	}
	if (by && by[0]) {
		snprintf(when, sizeof when, "proftrace stop (pid %s)", by);
		add_line(&l, "stopped by", when);
	}
	/* The CI's variables, each once, last value. */
	while (p < end) {
		const char *v = p + strlen(p) + 1, *next = v + strlen(v) + 1;

		if (!label_of(p) && is_env_name(p) &&
		    pt_reader_meta(in->r, p) == v)
			add_line(&l, p, v);
		p = next;
	}
	for (i = 0; i < l.n; i++)
		if (strlen(l.label[i]) > w)
			w = strlen(l.label[i]);
	for (i = 0; i < l.n; i++) {
		printf("%-*s  %s\n", (int)w, l.label[i], l.value[i]);
		free(l.value[i]);
	}
}

static void json_pair(struct pt_sb *sb, const char *k, const char *v, int *first)
{
	pt_sb_addstr(sb, *first ? "\n  " : ",\n  ");
	pt_quote_json(sb, k, strlen(k), PT_JSON_TEXT);
	pt_sb_addstr(sb, ": ");
	pt_quote_json(sb, v, strlen(v), PT_JSON_TEXT);
	*first = 0;
}

static void print_json(struct info *in, const char *path)
{
	struct pt_sb sb = PT_SB_INIT;
	size_t len;
	const char *p = pt_reader_meta_pairs(in->r, &len), *end = p + len;
	char when[96];
	int first = 1;

	pt_sb_addch(&sb, '{');
	json_pair(&sb, "capture", path, &first);
	if (in->start_ns) {
		fmt_time(when, sizeof when, in->start_ns, 1);
		json_pair(&sb, "start", when, &first);
	}
	if (in->end_ns) {
		fmt_time(when, sizeof when, in->end_ns, 1);
		json_pair(&sb, "end", when, &first);
		json_pair(&sb, "end_from", in->end_from_meta ? "meta" :
			  "last record", &first);
	}
	if (in->start_ns && in->end_ns >= in->start_ns)
		pt_sb_addf(&sb, ",\n  \"wall_time_s\": %.6f",
			   (double)(in->end_ns - in->start_ns) / 1e9);
	pt_sb_addf(&sb, ",\n  \"damaged\": %s", in->damaged ? "true" : "false");
	/* Every recorded key as a string, as recorded (its last value). */
	pt_sb_addstr(&sb, ",\n  \"meta\": {");
	first = 1;
	while (p < end) {
		const char *v = p + strlen(p) + 1, *next = v + strlen(v) + 1;

		if (pt_reader_meta(in->r, p) == v) {
			pt_sb_addstr(&sb, "  ");
			json_pair(&sb, p, v, &first);
		}
		p = next;
	}
	pt_sb_addstr(&sb, first ? "}\n}\n" : "\n  }\n}\n");
	fwrite(sb.buf, 1, sb.len, stdout);
	pt_sb_release(&sb);
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct info in;
	int json = 0, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "json")) {
				json = 1;
			} else if (!strcmp(optarg, "text")) {
				json = 0;
			} else {
				pt_warn("unknown format '%s' (text or json)",
					optarg);
				return 2;
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			printf("usage: proftrace info %s\n\n%s",
			       pt_cmd_info.usage, help_text);
			return 0;
		default:
			return pt_cmd_usage(&pt_cmd_info);
		}
	}
	if (optind != argc - 1)
		return pt_cmd_usage(&pt_cmd_info);
	if (load(&in, argv[optind]) < 0)
		return 1;
	if (json)
		print_json(&in, argv[optind]);
	else
		print_text(&in, argv[optind]);
	pt_reader_close(in.r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pt_warn("writing standard output failed");
		return 1;
	}
	return in.damaged ? 1 : 0;
}

const struct pt_cmd pt_cmd_info = {
	.name = "info",
	.usage = "[--format text|json] CAPTURE",
	.summary = "what a capture records about its run: host, versions, times",
	.run = run,
};
