/*
 * A helper thread and what it shares with its owner: one lock, one
 * condition variable and a quit flag.  Every helper thread of proftrace
 * has this shape — the capture's inflater, the model's reader, the views'
 * second formatter, the direct output's writer — and this is its one
 * lifecycle:
 *
 *   1. pt_worker_start(&w, main, arg) starts main(arg) in a thread, with
 *      w.quit 0.  On failure nothing is left to release, and the caller
 *      does the work itself.
 *   2. Both sides take the lock around what they share, wait with
 *      pt_worker_wait() for a change and announce one with pt_worker_wake().
 *      The thread's loop ends when it sees w.quit (or has nothing left to
 *      do).
 *   3. pt_worker_stop(&w) sets quit under the lock, wakes the thread,
 *      joins it and releases the lock and the condition.
 */
#ifndef PT_WORKER_H
#define PT_WORKER_H

#include <pthread.h>

struct pt_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int quit;               /* read and written under lock */
};

/* Start main(arg) in a thread of its own.  Returns 0, or an errno value
 * (the thread could not be created; w needs no pt_worker_stop). */
int pt_worker_start(struct pt_worker *w, void *(*main)(void *), void *arg);

/* Ask the thread to quit, wait for it to end, release w. */
void pt_worker_stop(struct pt_worker *w);

static inline void pt_worker_lock(struct pt_worker *w)
{
	pthread_mutex_lock(&w->lock);
}

static inline void pt_worker_unlock(struct pt_worker *w)
{
	pthread_mutex_unlock(&w->lock);
}

/* With the lock held: sleep until the other side calls pt_worker_wake. */
static inline void pt_worker_wait(struct pt_worker *w)
{
	pthread_cond_wait(&w->cond, &w->lock);
}

/* With the lock held: wake whoever waits. */
static inline void pt_worker_wake(struct pt_worker *w)
{
	pthread_cond_broadcast(&w->cond);
}

#endif
