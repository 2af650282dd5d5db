/*
 * Formatting on two threads (par.h).  The calling thread formats the even
 * chunks and emits every chunk; the helper formats the odd ones into a
 * buffer of its own, one chunk ahead of the emitting, so that each thread
 * formats while the other does: a chunk pair takes as long as the slower
 * of its two.
 */

#include "model/model.h"
#include "views/par.h"
#include "base/worker.h"

struct par {
	pt_par_format_fn *format;
	void *arg;
	size_t n, chunk;
	struct pt_worker w;     /* the helper */
	size_t job;             /* chunk the helper is to format next */
	int posted;             /* job is waiting for the helper */
	int done;               /* the helper's buffer holds chunk job */
	struct pt_sb sb;        /* the helper's text */
};

static void format_chunk(struct par *p, size_t c, struct pt_sb *sb)
{
	size_t lo = c * p->chunk, hi = lo + p->chunk;

	pt_sb_reset(sb);
	p->format(p->arg, lo, hi < p->n ? hi : p->n, sb);
}

static void *helper_main(void *arg)
{
	struct par *p = arg;

	pt_worker_lock(&p->w);
	for (;;) {
		while (!p->posted && !p->w.quit)
			pt_worker_wait(&p->w);
		if (!p->posted)
			break;
		p->posted = 0;
		pt_worker_unlock(&p->w);
		format_chunk(p, p->job, &p->sb);
		pt_worker_lock(&p->w);
		p->done = 1;
		pt_worker_wake(&p->w);
	}
	pt_worker_unlock(&p->w);
	pt_model_thread_done();
	return NULL;
}

static void post(struct par *p, size_t c)
{
	pt_worker_lock(&p->w);
	p->job = c;
	p->done = 0;
	p->posted = 1;
	pt_worker_wake(&p->w);
	pt_worker_unlock(&p->w);
}

static void wait_done(struct par *p)
{
	pt_worker_lock(&p->w);
	while (!p->done)
		pt_worker_wait(&p->w);
	pt_worker_unlock(&p->w);
}

int pt_par_format(size_t n, size_t chunk, pt_par_format_fn *format,
		  pt_par_emit_fn *emit, void *arg)
{
	struct par p = { .format = format, .arg = arg, .n = n,
			 .chunk = chunk ? chunk : 1, .sb = PT_SB_INIT };
	struct pt_sb mine = PT_SB_INIT;
	size_t nchunks = (n + p.chunk - 1) / p.chunk, c;
	int two = 0, rc = 0;

	if (nchunks > 1)
		two = pt_worker_start(&p.w, helper_main, &p) == 0;
	for (c = 0; c < nchunks && rc == 0; c += two ? 2 : 1) {
		if (two && c + 1 < nchunks)
			post(&p, c + 1);
		format_chunk(&p, c, &mine);
		rc = emit(arg, &mine);
		if (two && c + 1 < nchunks) {
			wait_done(&p);  /* even after an error: p.sb is in use */
			if (rc == 0)
				rc = emit(arg, &p.sb);
		}
	}
	if (two)
		pt_worker_stop(&p.w);
	pt_sb_release(&mine);
	pt_sb_release(&p.sb);
	return rc;
}
