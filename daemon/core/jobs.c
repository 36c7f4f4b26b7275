/*
 * The one job runner (see jobs.h).
 *
 * Each queue has one async handle that the worker uses for both of its
 * messages to the loop thread: "a function for you to run" (rocmd_job_call)
 * and "the work has returned". The handle is referenced only while a job
 * runs, so a running job keeps the loop alive through a shutdown until its
 * done hook has run, and an idle queue never does. The progress tick and the
 * retry timer are unreferenced for the same reason.
 */
#include "jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "methods.h"
#include "server.h"

#define RETRY_DEFAULT_MS 30000

static void start_next(struct rocmd_jobs *q);
static void on_retry(uv_timer_t *t);

/* Tells JOB's client that it will not run, and frees it. */
static void
refuse(struct rocmd_job *job, int err, const char *why)
{
	if (job->pending != NULL)
		rocmd_pending_finish(job->pending, err, why, NULL);
	job->pending = NULL;
	job->ops->free(job);
}

/* Runs JOB's done hook and sends its reply, or keeps it for a retry. */
static void
finish(struct rocmd_jobs *q, struct rocmd_job *job)
{
	cJSON *result = NULL;
	int rc = job->ops->done(job, &result);

	if (rc == ROCMD_JOB_RETRY) {
		cJSON_Delete(result);
		if (q->shutting_down) {
			refuse(job, ROCMD_ESHUTDOWN, "the daemon is shutting down");
			return;
		}
		job->deferrals++;
		job->next = q->deferred;
		q->deferred = job;
		if (!uv_is_active((uv_handle_t *)&q->retry))
			uv_timer_start(&q->retry, on_retry, q->retry_ms, 0);
		return;
	}
	if (job->pending != NULL) {
		if (job->rc < 0) {
			rocmd_pending_finish(job->pending, job->rc, job->why, NULL);
			cJSON_Delete(result);
		} else {
			rocmd_pending_finish(job->pending, 0, NULL, result);
		}
		job->pending = NULL;
	} else {
		cJSON_Delete(result);
	}
	job->ops->free(job);
}

static void
worker_main(void *arg)
{
	struct rocmd_jobs *q = arg;

	q->running->ops->work(q->running);
	uv_mutex_lock(&q->lock);
	q->finished = 1;
	uv_mutex_unlock(&q->lock);
	uv_async_send(&q->async);
}

static void
on_async(uv_async_t *a)
{
	struct rocmd_jobs *q = a->data;
	struct rocmd_job_call *call;
	struct rocmd_job *job;
	int finished;

	uv_mutex_lock(&q->lock);
	call = q->call;
	finished = q->finished;
	uv_mutex_unlock(&q->lock);
	if (call != NULL) {
		call->fn(call->arg);
		uv_mutex_lock(&q->lock);
		call->done = 1;
		q->call = NULL;
		uv_cond_broadcast(&q->cond);
		uv_mutex_unlock(&q->lock);
	}
	if (!finished || q->running == NULL)
		return;
	uv_thread_join(&q->thread);
	uv_mutex_lock(&q->lock);
	q->finished = 0;
	uv_mutex_unlock(&q->lock);
	job = q->running;
	q->running = NULL;
	uv_unref((uv_handle_t *)&q->async);
	uv_timer_stop(&q->tick);
	finish(q, job);
	start_next(q);
}

static void
on_tick(uv_timer_t *t)
{
	struct rocmd_jobs *q = t->data;
	struct rocmd_job *job = q->running;
	cJSON *p;

	if (job == NULL || job->canceled)
		return;
	if ((job->flags & ROCMD_JOB_CANCEL_ORPHANED) && job->orphan_watch &&
	    (job->pending == NULL || !rocmd_pending_alive(job->pending))) {
		/* The client went away (rocmctl interrupted): nobody wants it. */
		log_info("%s: the client went away; canceling", q->name);
		rocmd_job_cancel(job);
		return;
	}
	if (job->ops->progress == NULL || job->pending == NULL ||
	    !rocmd_pending_alive(job->pending))
		return;
	if ((p = job->ops->progress(job)) != NULL)
		rocmd_pending_progress(job->pending, p);
}

static void
on_retry(uv_timer_t *t)
{
	struct rocmd_jobs *q = t->data;
	struct rocmd_job *d = q->deferred;

	q->deferred = NULL;
	while (d != NULL) {
		struct rocmd_job *next = d->next;

		d->next = NULL;
		/* A client that went away no longer waits for its deferred job. */
		if (d->pending != NULL && !rocmd_pending_alive(d->pending)) {
			refuse(d, ROCMD_ECANCELED, "canceled");
		} else {
			if (q->tail != NULL)
				q->tail->next = d;
			else
				q->head = d;
			q->tail = d;
		}
		d = next;
	}
	start_next(q);
}

static void
start_next(struct rocmd_jobs *q)
{
	struct rocmd_job *job;

	while (q->running == NULL && (job = q->head) != NULL) {
		q->head = job->next;
		if (q->head == NULL)
			q->tail = NULL;
		job->next = NULL;
		if (q->shutting_down) {
			refuse(job, ROCMD_ESHUTDOWN, "the daemon is shutting down");
			continue;
		}
		if (job->started_ms == 0)
			job->started_ms = rocmd_now_ms();
		if (job->ops->start != NULL && job->ops->start(job) == ROCMD_JOB_SKIP) {
			finish(q, job);
			continue;
		}
		q->running = job;
		q->finished = 0;
		uv_ref((uv_handle_t *)&q->async);
		if (q->tick_ms > 0)
			uv_timer_start(&q->tick, on_tick, q->tick_ms, q->tick_ms);
		if (uv_thread_create(&q->thread, worker_main, q) != 0) {
			q->running = NULL;
			uv_unref((uv_handle_t *)&q->async);
			uv_timer_stop(&q->tick);
			job->rc = ROCMD_EINTERNAL;
			snprintf(job->why, sizeof(job->why), "cannot start a worker thread");
			log_err("%s: %s", q->name, job->why);
			finish(q, job);
		}
	}
}

int
rocmd_jobs_init(struct rocmd_jobs *q, struct rocmd_server *srv, const char *name, unsigned tick_ms)
{
	memset(q, 0, sizeof(*q));
	q->srv = srv;
	q->name = name;
	q->tick_ms = tick_ms;
	q->retry_ms = RETRY_DEFAULT_MS;
	q->loop_thread = uv_thread_self();
	if (uv_mutex_init(&q->lock) != 0)
		return ROCMD_ENOMEM;
	if (uv_cond_init(&q->cond) != 0) {
		uv_mutex_destroy(&q->lock);
		return ROCMD_ENOMEM;
	}
	uv_async_init(srv->loop, &q->async, on_async);
	q->async.data = q;
	uv_unref((uv_handle_t *)&q->async);
	uv_timer_init(srv->loop, &q->tick);
	q->tick.data = q;
	uv_unref((uv_handle_t *)&q->tick);
	uv_timer_init(srv->loop, &q->retry);
	q->retry.data = q;
	uv_unref((uv_handle_t *)&q->retry);
	q->open = 1;
	return 0;
}

void
rocmd_jobs_set_retry(struct rocmd_jobs *q, uint64_t ms)
{
	q->retry_ms = ms;
}

int
rocmd_job_init(struct rocmd_job *job, const struct rocmd_job_ops *ops)
{
	job->ops = ops;
	return uv_mutex_init(&job->lock) == 0 ? 0 : ROCMD_ENOMEM;
}

void
rocmd_job_fini(struct rocmd_job *job)
{
	uv_mutex_destroy(&job->lock);
}

int
rocmd_job_defer_reply(struct rocmd_job *job, struct rocmd_conn *conn)
{
	if ((job->pending = rocmd_conn_defer(conn)) == NULL)
		return ROCMD_ENOMEM;
	return ROCMD_METHOD_DEFERRED;
}

void
rocmd_jobs_submit(struct rocmd_jobs *q, struct rocmd_job *job)
{
	job->q = q;
	job->next = NULL;
	job->orphan_watch = job->pending != NULL;
	if (!q->open || q->shutting_down) {
		refuse(job, ROCMD_ESHUTDOWN, "the daemon is shutting down");
		return;
	}
	job->queued_ms = rocmd_now_ms();
	if (q->tail != NULL)
		q->tail->next = job;
	else
		q->head = job;
	q->tail = job;
	start_next(q);
}

size_t
rocmd_jobs_count(const struct rocmd_jobs *q)
{
	size_t n = q->running != NULL;

	for (const struct rocmd_job *j = q->head; j != NULL; j = j->next)
		n++;
	return n;
}

int
rocmd_jobs_each(struct rocmd_jobs *q, int (*fn)(struct rocmd_job *job, void *ctx), void *ctx)
{
	struct rocmd_job *lists[] = {q->running, q->head, q->deferred};
	int rc;

	for (int i = 0; i < 3; i++)
		for (struct rocmd_job *j = lists[i]; j != NULL; j = i == 0 ? NULL : j->next)
			if ((rc = fn(j, ctx)) != 0)
				return rc;
	return 0;
}

void
rocmd_job_cancel(struct rocmd_job *job)
{
	if (job->canceled)
		return;
	job->canceled = 1;
	if (job->q != NULL && job->q->running == job && job->ops->cancel != NULL)
		job->ops->cancel(job);
}

int
rocmd_job_canceled(const struct rocmd_job *job)
{
	return job->canceled;
}

void
rocmd_job_call(struct rocmd_job *job, void (*fn)(void *arg), void *arg)
{
	struct rocmd_jobs *q = job->q;
	struct rocmd_job_call c = {fn, arg, 0};
	uv_thread_t self = uv_thread_self();

	if (uv_thread_equal(&self, &q->loop_thread)) {
		fn(arg);
		return;
	}
	uv_mutex_lock(&q->lock);
	while (q->call != NULL)
		uv_cond_wait(&q->cond, &q->lock);
	q->call = &c;
	uv_mutex_unlock(&q->lock);
	uv_async_send(&q->async);
	uv_mutex_lock(&q->lock);
	while (!c.done)
		uv_cond_wait(&q->cond, &q->lock);
	uv_mutex_unlock(&q->lock);
}

void
rocmd_jobs_shutdown(struct rocmd_jobs *q)
{
	if (!q->open || q->shutting_down)
		return;
	q->shutting_down = 1;
	uv_timer_stop(&q->retry);
	while (q->head != NULL) {
		struct rocmd_job *j = q->head;
		q->head = j->next;
		refuse(j, ROCMD_ESHUTDOWN, "the daemon is shutting down");
	}
	q->tail = NULL;
	while (q->deferred != NULL) {
		struct rocmd_job *j = q->deferred;
		q->deferred = j->next;
		refuse(j, ROCMD_ESHUTDOWN, "the daemon is shutting down");
	}
	if (q->running != NULL)
		rocmd_job_cancel(q->running);
}

void
rocmd_jobs_close(struct rocmd_jobs *q)
{
	if (!q->open)
		return;
	rocmd_jobs_shutdown(q);
	q->open = 0;
	uv_close((uv_handle_t *)&q->async, NULL);
	uv_close((uv_handle_t *)&q->tick, NULL);
	uv_close((uv_handle_t *)&q->retry, NULL);
	uv_cond_destroy(&q->cond);
	uv_mutex_destroy(&q->lock);
}
