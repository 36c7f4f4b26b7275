/*
 * The host-side hold of the legacy default stream (hold.h): libcuda through
 * dlopen, a mapped host word the stream waits on, a watchdog thread.
 */
#include "bench/gemm-api/hold.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

struct hold {
	void *lib;
	CUresult (*host_alloc)(void **, size_t, unsigned);
	CUresult (*host_free)(void *);
	CUresult (*host_dptr)(CUdeviceptr *, void *, unsigned);
	CUresult (*wait32)(void *, CUdeviceptr, unsigned, unsigned);
	volatile uint32_t *word;
	CUdeviceptr dword;
	pthread_t dog;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int held, by_dog;
};

struct hold *
hold_open(char *why, size_t whylen)
{
	struct hold *h = calloc(1, sizeof(*h));
	void *w = NULL;

	if (h == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	if ((h->lib = dlopen("libcuda.so.1", RTLD_NOW)) == NULL) {
		snprintf(why, whylen, "no libcuda.so.1");
		goto fail;
	}
	*(void **)&h->host_alloc = dlsym(h->lib, "cuMemHostAlloc");
	*(void **)&h->host_free = dlsym(h->lib, "cuMemFreeHost");
	*(void **)&h->host_dptr = dlsym(h->lib, "cuMemHostGetDevicePointer_v2");
	*(void **)&h->wait32 = dlsym(h->lib, "cuStreamWaitValue32_v2");
	if (h->host_alloc == NULL || h->host_free == NULL || h->host_dptr == NULL ||
	    h->wait32 == NULL) {
		snprintf(why, whylen, "libcuda lacks cuStreamWaitValue32_v2 or mapped host memory");
		goto fail;
	}
	if (h->host_alloc(&w, 64, 0x02 /* CU_MEMHOSTALLOC_DEVICEMAP */) != 0 ||
	    h->host_dptr(&h->dword, w, 0) != 0) {
		snprintf(why, whylen, "cannot map a host word for the device");
		if (w != NULL)
			h->host_free(w);
		goto fail;
	}
	h->word = w;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	return h;
fail:
	if (h->lib != NULL)
		dlclose(h->lib);
	free(h);
	return NULL;
}

static void *
watchdog(void *arg)
{
	struct hold *h = arg;
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += HOLD_MAX_S;
	pthread_mutex_lock(&h->lock);
	while (h->held && pthread_cond_timedwait(&h->cond, &h->lock, &until) == 0)
		;
	if (h->held) {
		__atomic_store_n(h->word, 1u, __ATOMIC_SEQ_CST);
		h->by_dog = 1;
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

int
hold_begin(struct hold *h)
{
	__atomic_store_n(h->word, 0u, __ATOMIC_SEQ_CST);
	/* CU_STREAM_WAIT_VALUE_GEQ on the legacy default stream (NULL) */
	if (h->wait32(NULL, h->dword, 1, 0x0) != 0)
		return -1;
	h->held = 1;
	h->by_dog = 0;
	if (pthread_create(&h->dog, NULL, watchdog, h) != 0) {
		__atomic_store_n(h->word, 1u, __ATOMIC_SEQ_CST);
		h->held = 0;
		return -1;
	}
	return 0;
}

int
hold_release(struct hold *h)
{
	int dog;

	pthread_mutex_lock(&h->lock);
	h->held = 0;
	__atomic_store_n(h->word, 1u, __ATOMIC_SEQ_CST);
	dog = h->by_dog;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->dog, NULL);
	return dog;
}

void
hold_close(struct hold *h)
{
	if (h == NULL)
		return;
	h->host_free((void *)h->word);
	dlclose(h->lib);
	free(h);
}
