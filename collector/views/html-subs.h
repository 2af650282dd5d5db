/*
 * The HTML report's share of the events that programs wrote about
 * themselves (model.h, pt_sub): which of them the page carries, as
 * column arrays (html-data.c writes them on a line of the body), and
 * the figures of `proftrace report`'s "Inside the programs"
 * (analysis/inside.h), for the page's table.
 */
#ifndef PT_HTML_SUBS_H
#define PT_HTML_SUBS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/report.h"
#include "base/strbuf.h"

/* The columns, in this order (report.js reads them by these names). */
enum {
	U_EXEC,         /* owner execution, less the previous event's */
	U_START,        /* µs from the previous event of the same execution,
			 * or from the execution's start for its first */
	U_DUR,          /* µs; 0 for an instant */
	U_DEPTH,        /* slices enclosing it in its execution */
	U_PH,           /* 0 slice, 1 instant */
	U_NAME, U_CAT,  /* string ids */
	U_ARGS,         /* string id of its args (JSON, cut to a bound),
			 * -1 none, -2 left out for the page's size */
	U_NCOLS
};

extern const char *const pt_html_sub_cols[U_NCOLS];

/*
 * The page's string table: the id of s (len bytes).  ref, when not
 * NULL, is a key the model gives equal strings (an interned pointer),
 * so that the bytes are hashed only once per key.  *added (if added is
 * not NULL) says whether s is new to the page.
 */
typedef int64_t pt_html_str_fn(void *arg, const char *s, size_t len,
			       const void *ref, int *added);

struct pt_html_subs {
	struct pt_sb col[U_NCOLS];      /* comma-separated numbers */
	size_t total;                   /* slices and instants in the model */
	size_t kept;                    /* those in the page */
	size_t counters;                /* counter values: not carried */
	size_t args_out;                /* kept events whose args were
					 * left out for the page's size */
};

/*
 * Fill hs with the events of r's run that go in the page: all slices
 * and instants up to a bound, else the longest ones, in execution and
 * start order, their strings numbered by str(arg, ...).
 */
void pt_html_subs_columns(struct pt_html_subs *hs, const struct pt_report *r,
			  pt_html_str_fn *str, void *arg);
void pt_html_subs_free(struct pt_html_subs *hs);

/*
 * Append ,"inside":{...} to sb: the report's "Inside the programs"
 * tables (r->inside) and the line saying what did not go in.
 */
void pt_html_inside(const struct pt_report *r, struct pt_sb *sb);

#endif
