/*
 * The Perfetto writer's hook for events programs record about
 * themselves (pt_perfetto_write_subs), fed with made-up events:
 *
 *     perfetto-subs OUT.pftrace CAPTURE...
 *
 * For each execution of duration d starting at s (test-perfetto.py
 * expects exactly these, clipped as the writer's contract says):
 *   A [s, s+d/2] holding A.1 [s+d/8, s+d/4] and X [s+3d/8, s+5d/8] (which
 *   crosses A's end), B [s+d/2, s+d] holding late [s+7d/8, s+d+1000]
 *   (which outlives the execution), given in scrambled order.
 */
#include <stdio.h>

#include "model/load.h"
#include "views/perfetto.h"

static size_t subs(void *arg, const struct pt_exec *e,
		   struct pt_sub_event **ev)
{
	struct pt_sub_event *v = arg;
	int64_t s = e->start_ns, d = e->end_ns - e->start_ns;

	if (d <= 0)
		return 0;
	v[0] = (struct pt_sub_event){ s + d / 2, s + d, "B" };
	v[1] = (struct pt_sub_event){ s + 3 * d / 8, s + 5 * d / 8, "X" };
	v[2] = (struct pt_sub_event){ s + 7 * d / 8, s + d + 1000, "late" };
	v[3] = (struct pt_sub_event){ s, s + d / 2, "A" };
	v[4] = (struct pt_sub_event){ s + d / 8, s + d / 4, "A.1" };
	*ev = v;
	return 5;
}

int main(int argc, char **argv)
{
	struct pt_sub_event v[5];
	struct pt_model m;
	FILE *f;
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: perfetto-subs OUT CAPTURE...\n");
		return 2;
	}
	if (pt_model_load(&m, argv + 2, (size_t)argc - 2, NULL) < 0)
		return 1;
	f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	rc = pt_perfetto_write_subs(&m, f, subs, v);
	if (fclose(f) != 0)
		rc = -1;
	pt_model_free(&m);
	return rc < 0;
}
