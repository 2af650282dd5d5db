/*
 * The events programs wrote about themselves, for the HTML report; see
 * html-subs.h.
 *
 * A clang build with -ftime-trace writes tens to thousands of events per
 * compile, and a run may hold millions: the page carries at most
 * SUB_MAX of them, the longest (the ones a zoom can show first), each
 * args object cut to ARG_MAX bytes and all of them together to
 * ARGS_BUDGET, and says how many it left out.
 */
#include "views/html-subs.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "base/utf8.h"
#include "base/quote.h"

#define SUB_MAX 100000          /* events in a page */
#define ARG_MAX 300             /* bytes of one event's args */
#define ARGS_BUDGET (4u << 20)  /* bytes of new args strings in a page */
#define DEPTH_MAX 64            /* nesting followed; deeper ones share it */

const char *const pt_html_sub_cols[U_NCOLS] = {
	"exec", "start", "dur", "depth", "ph", "name", "cat", "args",
};

/* Counters have no place on a bar; slices and instants do. */
static int carried(const struct pt_sub *s)
{
	return s->ph == 'X' || s->ph == 'i';
}

/* As html-data.c: microseconds from t0, rounding down, so that an
 * event ends where its execution does at the latest. */
static int64_t rel_us(int64_t ns, int64_t t0)
{
	int64_t d = ns - t0;

	return d >= 0 ? d / 1000 : -((-d + 999) / 1000);
}

static int cmp_desc(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a > b ? -1 : a < b;
}

/*
 * The shortest duration kept when there are more than SUB_MAX events
 * (INT64_MIN: keep all), and in *ties how many of that duration are
 * kept.
 */
static int64_t threshold(const struct pt_model *m, size_t total,
			 size_t *ties)
{
	int64_t *d, thr;
	size_t i, k, n, nd = 0;

	*ties = 0;
	if (total <= SUB_MAX)
		return INT64_MIN;
	d = pt_xmalloc(total * sizeof *d);
	for (i = 0; i < m->n; i++) {
		const struct pt_sub *s = pt_model_subs(m, m->execs[i], &n);

		for (k = 0; k < n; k++)
			if (carried(&s[k]))
				d[nd++] = s[k].dur_ns;
	}
	qsort(d, nd, sizeof *d, cmp_desc);
	thr = d[SUB_MAX - 1];
	for (i = 0; i < SUB_MAX; i++)
		*ties += d[i] == thr;
	free(d);
	return thr;
}

/* Bytes of s (len) up to max, not splitting a UTF-8 sequence. */
static size_t cut_at(const char *s, size_t len, size_t max)
{
	size_t i = 0, l;

	while (i < len) {
		l = pt_utf8_len((const unsigned char *)s + i, len - i);
		if (!l)
			l = 1;
		if (i + l > max)
			break;
		i += l;
	}
	return i;
}

struct emit {
	struct pt_html_subs *hs;
	pt_html_str_fn *str;
	void *arg;
	size_t budget;                  /* of args bytes, left */
	struct pt_sb tmp;
};

static int64_t args_id(struct emit *w, const char *args)
{
	size_t len, n;
	int added = 0;
	int64_t id;

	if (!args || !*args)
		return -1;
	len = strlen(args);
	n = len > ARG_MAX ? cut_at(args, len, ARG_MAX) : len;
	if (w->budget < n) {
		w->budget = 0;
		w->hs->args_out++;
		return -2;
	}
	pt_sb_reset(&w->tmp);
	pt_sb_add(&w->tmp, args, n);
	if (n < len)
		pt_sb_addstr(&w->tmp, "\xe2\x80\xa6");  /* "…": cut */
	id = w->str(w->arg, w->tmp.buf, w->tmp.len, NULL, &added);
	if (added)
		w->budget -= n;
	return id;
}

static void put(struct pt_html_subs *hs, int c, int64_t v)
{
	if (hs->col[c].len)
		pt_sb_addch(&hs->col[c], ',');
	pt_sb_add_i64(&hs->col[c], v);
}

void pt_html_subs_columns(struct pt_html_subs *hs, const struct pt_report *r,
			  pt_html_str_fn *str, void *arg)
{
	const struct pt_model *m = r->m;
	const int64_t t0 = r->a.t0;
	struct emit w = { .hs = hs, .str = str, .arg = arg,
			  .budget = ARGS_BUDGET, .tmp = PT_SB_INIT };
	size_t i, k, n, ties;
	int64_t thr, prev_exec = 0;
	int c;

	memset(hs, 0, sizeof *hs);
	for (c = 0; c < U_NCOLS; c++)
		pt_sb_init(&hs->col[c]);
	for (i = 0; i < m->n; i++) {
		const struct pt_sub *s = pt_model_subs(m, m->execs[i], &n);

		for (k = 0; k < n; k++) {
			if (carried(&s[k]))
				hs->total++;
			else if (s[k].ph == 'C')
				hs->counters++;
		}
	}
	thr = threshold(m, hs->total, &ties);
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];
		const struct pt_sub *s = pt_model_subs(m, e, &n);
		int64_t stack[DEPTH_MAX], prev = rel_us(e->start_ns, t0);
		size_t depth = 0;

		for (k = 0; k < n; k++) {
			const struct pt_sub *u = &s[k];
			int64_t st, end;
			size_t d;

			if (!carried(u))
				continue;
			/* Events come by start, the longer first: those that
			 * have ended by this one's start enclose it no more. */
			while (depth && stack[depth - 1] <= u->start_ns)
				depth--;
			d = depth;
			if (u->ph == 'X' && depth < DEPTH_MAX)
				stack[depth++] = u->start_ns + u->dur_ns;
			if (u->dur_ns < thr)
				continue;
			if (u->dur_ns == thr) {
				if (!ties)
					continue;
				ties--;
			}
			st = rel_us(u->start_ns, t0);
			end = rel_us(u->start_ns + u->dur_ns, t0);
			put(hs, U_EXEC, (int64_t)e->id - prev_exec);
			prev_exec = e->id;
			put(hs, U_START, st - prev);
			prev = st;
			put(hs, U_DUR, u->ph == 'X' ? end - st : 0);
			put(hs, U_DEPTH, (int64_t)d);
			put(hs, U_PH, u->ph == 'i');
			put(hs, U_NAME, str(arg, u->name, strlen(u->name),
					    u->name, NULL));
			put(hs, U_CAT, str(arg, u->cat, strlen(u->cat), u->cat,
					   NULL));
			put(hs, U_ARGS, args_id(&w, u->args));
			hs->kept++;
		}
	}
	pt_sb_release(&w.tmp);
}

void pt_html_subs_free(struct pt_html_subs *hs)
{
	int c;

	for (c = 0; c < U_NCOLS; c++)
		pt_sb_release(&hs->col[c]);
}

static void inside_row(struct pt_sb *sb, const struct pt_inside_row *row,
		       int subject)
{
	pt_sb_addch(sb, '[');
	pt_quote_json(sb, row->name, strlen(row->name), PT_JSON_SCRIPT);
	if (subject) {
		pt_sb_addch(sb, ',');
		pt_quote_json(sb, row->detail, strlen(row->detail),
			      PT_JSON_SCRIPT);
	}
	pt_sb_addch(sb, ',');
	pt_sb_add_i64(sb, row->total_ns);
	pt_sb_addch(sb, ',');
	pt_sb_add_i64(sb, (int64_t)row->count);
	pt_sb_addch(sb, ',');
	pt_sb_add_i64(sb, row->longest);
	pt_sb_addch(sb, ']');
}

void pt_html_inside(const struct pt_report *r, struct pt_sb *sb)
{
	const struct pt_inside *in = &r->inside;
	struct pt_sb note = PT_SB_INIT;
	size_t i;

	pt_sb_addstr(sb, ",\"inside\":{\"events\":");
	pt_sb_add_i64(sb, (int64_t)in->events);
	pt_sb_addstr(sb, ",\"execs\":");
	pt_sb_add_i64(sb, in->execs);
	pt_sb_addstr(sb, ",\"kinds\":");
	pt_sb_add_i64(sb, (int64_t)in->kinds);
	if (pt_sub_stats_line(r->m, &note)) {
		pt_sb_addstr(sb, ",\"note\":");
		pt_quote_json(sb, note.buf, note.len, PT_JSON_SCRIPT);
	}
	pt_sb_release(&note);
	/* Rows as `proftrace report` lists them: [name, (detail,) total ns,
	 * count, the execution of the longest]. */
	pt_sb_addstr(sb, ",\"byName\":[");
	for (i = 0; i < in->nby_name; i++) {
		if (i)
			pt_sb_addch(sb, ',');
		inside_row(sb, &in->by_name[i], 0);
	}
	pt_sb_addstr(sb, "],\"bySubject\":[");
	for (i = 0; i < in->nby_subject; i++) {
		if (i)
			pt_sb_addch(sb, ',');
		inside_row(sb, &in->by_subject[i], 1);
	}
	pt_sb_addstr(sb, "]}");
}
