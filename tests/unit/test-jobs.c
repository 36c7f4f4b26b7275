/*
 * The daemon's job runner (daemon/core/jobs.h) on a real libuv loop and real
 * worker threads: jobs run one at a time in arrival order and never on the
 * loop thread; a start hook can skip the work; a worker's rocmd_job_call runs
 * on the loop thread; cancellation reaches a running job's cancel hook and
 * its worker; a job asking to be retried runs again after the retry delay;
 * a shutdown refuses what is queued and lets the running job finish.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "daemon/core/jobs.h"
#include "daemon/core/server.h"

struct tjob {
	struct rocmd_job base;
	int id;
	int skip, retries, block;
	int *log, *nlog; /* order of done hooks */
	int ran, done_calls, canceled_seen, cancel_hook, call_on_loop, freed_ok;
	uv_thread_t loop;
};

static int frees;

static int
t_start(struct rocmd_job *b)
{
	struct tjob *j = (struct tjob *)b;

	return j->skip ? ROCMD_JOB_SKIP : 0;
}

static void
on_loop(void *arg)
{
	struct tjob *j = arg;
	uv_thread_t self = uv_thread_self();

	j->call_on_loop = uv_thread_equal(&self, &j->loop);
}

static void
t_work(struct rocmd_job *b)
{
	struct tjob *j = (struct tjob *)b;
	uv_thread_t self = uv_thread_self();

	assert_false(uv_thread_equal(&self, &j->loop));
	j->ran++;
	rocmd_job_call(b, on_loop, j);
	/* A blocking job waits to be canceled (at most 5 s). */
	for (int i = 0; j->block && i < 5000 && !rocmd_job_canceled(b); i++)
		uv_sleep(1);
	j->canceled_seen = rocmd_job_canceled(b);
}

static int
t_done(struct rocmd_job *b, cJSON **out)
{
	struct tjob *j = (struct tjob *)b;

	j->done_calls++;
	if (j->retries > 0) {
		j->retries--;
		return ROCMD_JOB_RETRY;
	}
	j->log[(*j->nlog)++] = j->id;
	return 0;
}

static void
t_cancel(struct rocmd_job *b)
{
	((struct tjob *)b)->cancel_hook++;
}

/* The test keeps the structs to look at them: free only counts. */
static void
t_free(struct rocmd_job *b)
{
	rocmd_job_fini(b);
	frees++;
}

static const struct rocmd_job_ops ops = {
    .what = "test",
    .start = t_start,
    .work = t_work,
    .done = t_done,
    .cancel = t_cancel,
    .free = t_free,
};

struct fixture {
	uv_loop_t loop;
	struct rocmd_server srv;
	struct rocmd_jobs q;
	int log[16], nlog;
};

static void
setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(uv_loop_init(&f->loop), 0);
	f->srv.loop = &f->loop;
	assert_int_equal(rocmd_jobs_init(&f->q, &f->srv, "test", 0), 0);
	frees = 0;
}

static void
teardown(struct fixture *f)
{
	rocmd_jobs_close(&f->q);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
}

static void
job_init(struct fixture *f, struct tjob *j, int id)
{
	memset(j, 0, sizeof(*j));
	assert_int_equal(rocmd_job_init(&j->base, &ops), 0);
	j->id = id;
	j->log = f->log;
	j->nlog = &f->nlog;
	j->loop = uv_thread_self();
}

static void
test_order_and_threads(void **state)
{
	struct fixture f;
	struct tjob j[4];

	setup(&f);
	for (int i = 0; i < 4; i++) {
		job_init(&f, &j[i], i + 1);
		rocmd_jobs_submit(&f.q, &j[i].base);
	}
	j[2].skip = 1; /* read by its start hook, which runs later */
	assert_int_equal(rocmd_jobs_count(&f.q), 4);
	uv_run(&f.loop, UV_RUN_DEFAULT); /* returns once every job is done */
	assert_int_equal(f.nlog, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(f.log[i], i + 1);
	assert_int_equal(j[0].ran, 1);
	assert_int_equal(j[2].ran, 0); /* skipped, yet done */
	assert_int_equal(j[2].done_calls, 1);
	assert_true(j[0].call_on_loop && j[1].call_on_loop && j[3].call_on_loop);
	assert_int_equal(frees, 4);
	assert_int_equal(rocmd_jobs_count(&f.q), 0);
	teardown(&f);
}

static void
on_cancel_timer(uv_timer_t *t)
{
	rocmd_job_cancel(t->data);
	uv_close((uv_handle_t *)t, NULL);
}

static void
test_cancel(void **state)
{
	struct fixture f;
	struct tjob j;
	uv_timer_t t;

	setup(&f);
	job_init(&f, &j, 1);
	j.block = 1;
	rocmd_jobs_submit(&f.q, &j.base);
	uv_timer_init(&f.loop, &t);
	t.data = &j.base;
	uv_timer_start(&t, on_cancel_timer, 50, 0);
	uv_run(&f.loop, UV_RUN_DEFAULT);
	assert_int_equal(j.cancel_hook, 1);
	assert_true(j.canceled_seen);
	assert_int_equal(j.done_calls, 1);
	teardown(&f);
}

/* The retry timer does not keep a loop alive (the daemon's listener does):
 * this one does, until the job is through or 2 s have passed. */
static void
on_keepalive(uv_timer_t *t)
{
	static int ticks;
	struct fixture *f = t->data;

	if (f->nlog > 0 || ++ticks > 400)
		uv_close((uv_handle_t *)t, NULL);
}

static void
test_retry(void **state)
{
	struct fixture f;
	struct tjob j;
	uv_timer_t t;

	setup(&f);
	rocmd_jobs_set_retry(&f.q, 20);
	job_init(&f, &j, 7);
	j.retries = 2;
	rocmd_jobs_submit(&f.q, &j.base);
	uv_timer_init(&f.loop, &t);
	t.data = &f;
	uv_timer_start(&t, on_keepalive, 5, 5);
	uv_run(&f.loop, UV_RUN_DEFAULT);
	assert_int_equal(j.ran, 3);
	assert_int_equal(j.done_calls, 3);
	assert_int_equal(j.base.deferrals, 2);
	assert_int_equal(f.nlog, 1);
	assert_int_equal(frees, 1);
	teardown(&f);
}

static void
on_shutdown_timer(uv_timer_t *t)
{
	rocmd_jobs_shutdown(t->data);
	uv_close((uv_handle_t *)t, NULL);
}

static void
test_shutdown(void **state)
{
	struct fixture f;
	struct tjob j[3];
	uv_timer_t t;

	setup(&f);
	for (int i = 0; i < 3; i++) {
		job_init(&f, &j[i], i + 1);
		j[i].block = 1;
		rocmd_jobs_submit(&f.q, &j[i].base);
	}
	uv_timer_init(&f.loop, &t);
	t.data = &f.q;
	uv_timer_start(&t, on_shutdown_timer, 50, 0);
	uv_run(&f.loop, UV_RUN_DEFAULT);
	/* The running one was canceled and finished; the queued ones never ran. */
	assert_int_equal(j[0].ran, 1);
	assert_true(j[0].canceled_seen);
	assert_int_equal(j[0].done_calls, 1);
	assert_int_equal(j[1].ran + j[2].ran, 0);
	assert_int_equal(j[1].done_calls + j[2].done_calls, 0);
	assert_int_equal(frees, 3);
	/* Once stopping, a new job is refused at once. */
	job_init(&f, &j[1], 9);
	rocmd_jobs_submit(&f.q, &j[1].base);
	assert_int_equal(frees, 4);
	assert_int_equal(j[1].ran, 0);
	teardown(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order_and_threads),
	    cmocka_unit_test(test_cancel),
	    cmocka_unit_test(test_retry),
	    cmocka_unit_test(test_shutdown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
