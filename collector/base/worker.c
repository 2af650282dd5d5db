/* The helper-thread lifecycle; see worker.h. */
#include "base/worker.h"

int pt_worker_start(struct pt_worker *w, void *(*main)(void *), void *arg)
{
	int err;

	w->quit = 0;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	err = pthread_create(&w->thread, NULL, main, arg);
	if (err) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
	}
	return err;
}

void pt_worker_stop(struct pt_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->quit = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
}
