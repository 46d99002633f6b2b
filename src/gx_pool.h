/*
 * gx_pool.h -- gelu_ext's own thread pool (issue 12): one per process,
 * passive wait, dynamic chunks, safe across fork().  Used by gx_kernels.c.
 */
#ifndef GX_POOL_H
#define GX_POOL_H

#include <stddef.h>

typedef ptrdiff_t gx_pool_intp;

/* Work items [lo, hi) of a job; items are independent of each other. */
typedef void (*gx_pool_fn)(void *ctx, gx_pool_intp lo, gx_pool_intp hi);

/* Run fn over items [0, n) in chunks of `chunk` items on up to `nthreads`
 * threads, the caller included, and return when all are done.  Which thread
 * runs which chunk is not fixed, so fn must give the same result for an item
 * whatever chunk it is in.  Runs on the calling thread alone when the pool is
 * busy with another caller, has no threads (no pthreads), or nthreads <= 1. */
void gx_pool_run(gx_pool_fn fn, void *ctx, gx_pool_intp n, gx_pool_intp chunk, int nthreads);

/* Threads a call uses by default: OMP_NUM_THREADS if set to a positive
 * integer (its first entry), else the CPUs this process may run on. */
int gx_pool_default_threads(void);

/* 1 if built with the pthreads pool, 0 for the serial fallback. */
int gx_pool_threaded(void);

/* Worker threads alive now (0 before the first threaded call, and in a
 * forked child until its first threaded call). */
int gx_pool_workers(void);

/* Counters since the last reset: [0] threaded calls that owned the pool,
 * [1] times a worker joined one, [2] calls whose owner waited on a worker
 * for long (a descheduled worker), [3] ns owners spent waiting on workers,
 * [4] most threads computing large calls at once (callers + workers),
 * [5] ns from opening a job to workers joining it (summed), [6] calls run
 * on the caller alone because of a recent stall. */
void gx_pool_stats(long long out[7], int reset);

#endif
