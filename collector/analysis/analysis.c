/* Labels, grouping, self times, parallelism, critical path; see analysis.h. */
#include "analysis/analysis.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/quote.h"
#include "base/util.h"
#include "analysis/internal.h"

void pt_analyze(struct pt_analysis *a, const struct pt_model *m,
		size_t nalone)
{
	pt_analyze_tree(a, m);
	pt_sweep_profile(a, nalone);
	pt_critical_path(a);
}

void pt_analysis_free(struct pt_analysis *a)
{
	free(a->self_ns);
	free(a->sub_end);
	free(a->sub_n);
	free(a->depth);
	free(a->by_end);
	free(a->level_ns);
	free(a->alone);
	free(a->cp);
	memset(a, 0, sizeof *a);
}
