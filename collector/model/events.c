/*
 * The events of a capture being built, kept in buckets of dense pids.
 *
 * The per-pid pass takes the pids in dense order, and each pid's events
 * only; so a bucket's events can go as soon as its pids are done, while
 * the images the pass makes take their place.  One array of every event
 * lived until the pass ended, and the two added up: a third of the peak
 * memory of a million-execution model.
 *
 * A bucket is a mapping of its own, grown with mremap and unmapped when
 * done: freed heap blocks in the middle of the heap would stay resident,
 * and a mapping's untouched capacity costs nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/build.h"
#include "base/strbuf.h"

static size_t page_size(void)
{
	static size_t pg;

	if (!pg)
		pg = (size_t)sysconf(_SC_PAGESIZE);
	return pg;
}

static void grow_bucket(struct evbucket *k)
{
	size_t old = k->cap * sizeof *k->ev;
	size_t want = old ? 2 * old : page_size();
	void *p;

	if (old)
		p = mremap(k->ev, old, want, MREMAP_MAYMOVE);
	else
		p = mmap(NULL, want, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		pt_out_of_memory(want);
	k->ev = p;
	k->cap = want / sizeof *k->ev;
}

struct ev *pt_events_add(struct build *b, uint32_t d)
{
	size_t i = d >> EV_BUCKET_SHIFT;
	struct evbucket *k;

	while (i >= b->nevb) {
		GROW(b->evb, b->nevb, b->cevb);
		memset(&b->evb[b->nevb++], 0, sizeof *b->evb);
	}
	k = &b->evb[i];
	if (k->n == k->cap)
		grow_bucket(k);
	return &k->ev[k->n++];
}

void pt_events_free_bucket(struct build *b, size_t i)
{
	struct evbucket *k = &b->evb[i];

	if (k->cap)
		munmap(k->ev, k->cap * sizeof *k->ev);
	memset(k, 0, sizeof *k);
}

void pt_events_free(struct build *b)
{
	size_t i;

	for (i = 0; i < b->nevb; i++)
		pt_events_free_bucket(b, i);
	free(b->evb);
	b->evb = NULL;
	b->nevb = b->cevb = 0;
	b->ev = NULL;
}
