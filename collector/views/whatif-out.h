/* proftrace whatif's outputs, and its hints in the report
 * (analysis/whatif.h). */
#ifndef PT_WHATIF_OUT_H
#define PT_WHATIF_OUT_H

#include <stdio.h>

#include "analysis/whatif.h"

/* w predicted from d with the changes c, to f as text of at most width
 * columns, or as JSON.  0, or -1 if a write failed. */
int pt_whatif_write_text(const struct pt_deps *d, const struct pt_whatif *w,
			 const struct pt_whatif_change *c, size_t nc,
			 int width, FILE *f);
int pt_whatif_write_json(const struct pt_deps *d, const struct pt_whatif *w,
			 const struct pt_whatif_change *c, size_t nc, FILE *f);

enum pt_whatif_style { PT_WHATIF_TEXT, PT_WHATIF_MD, PT_WHATIF_JSON };

/*
 * The hints h (pt_whatif_hints) to f: as a section of the report's text
 * or Markdown, or as whatif's JSON.  0, or -1 if a write failed.
 */
int pt_whatif_write_hints(const struct pt_whatif_hint *h, size_t n,
			  int64_t now_ns, int64_t spread_ns,
			  enum pt_whatif_style style, FILE *f);

#endif
