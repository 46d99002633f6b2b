/*
 * gx_pool.h -- gelu_ext's own thread pool: one per process,
 * passive wait, dynamic chunks, safe across fork().  Used by gx_dispatch.c.
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
 * busy with another caller or backing off after a threaded call slower than
 * one thread (gx_pool.c), has no threads (gx_threads.h), nthreads <= 1 or
 * the items fit in one chunk.  The pool's states and transitions: the table
 * at the top of gx_pool.c. */
void gx_pool_run(gx_pool_fn fn, void *ctx, gx_pool_intp n, gx_pool_intp chunk, int nthreads);

/* Threads a call uses by default: OMP_NUM_THREADS if set to a positive
 * integer (its first entry), else the CPUs this process may run on. */
int gx_pool_default_threads(void);

/* 1 if built with the thread pool (POSIX or Windows threads), 0 for the
 * serial fallback. */
int gx_pool_threaded(void);

/* Worker threads alive now (0 before the first threaded call, in a
 * forked child until its first threaded call, and after gx_pool_shutdown). */
int gx_pool_workers(void);

/* Ends the worker threads and waits until they have (gelu_ext calls it
 * from an atexit hook, so a process exits with no worker running):
 * workers between jobs end at once, a worker in a job after its chunks.
 * Every call after it runs on its caller.  Does nothing where no worker was
 * started (a fork()ed child before its own first threaded call included)
 * and when called again. */
void gx_pool_shutdown(void);

/* Counters since the last reset (a fork()ed child's start at 0),
 * out[GX_POOL_...]: threaded calls that owned the pool (JOBS), times a worker joined one (HELPED), threaded calls
 * slower than one thread would have been (STALLS), ns owners spent waiting
 * on workers (WAIT_NS), most threads computing large calls at
 * once, callers + workers (MAX_RUNNING), ns from opening a job to workers
 * joining it, summed (JOIN_NS), calls run on the caller alone because of a
 * recent stall (BACKOFF), items of threaded calls computed by their owner
 * (OWNER_ITEMS) and by workers (WORKER_ITEMS), times a worker woken onto
 * its owner's core moved off it (MOVED), workers still computing when the
 * owner ran out of chunks pulled onto the owner's core (PULLED), and over
 * the threaded calls whose threads' CPU time is known, their wall time
 * from opening the job to its end (WALL_NS) and the CPU time their threads
 * spent in chunks (CPU_NS; a worker cut loose is not counted, its tally
 * can come after the job's end): CPU_NS / WALL_NS is how many threads
 * computed at once on average, whatever the cores' speed.  A stall is a threaded call slower
 * than one thread would have been (gx_pool.c).  gx_pool_stat_name(i): slot
 * i's name, as Python shows it (_ufuncs._pool_stats). */
enum {
    GX_POOL_JOBS, GX_POOL_HELPED, GX_POOL_STALLS, GX_POOL_WAIT_NS,
    GX_POOL_MAX_RUNNING, GX_POOL_JOIN_NS, GX_POOL_BACKOFF,
    GX_POOL_OWNER_ITEMS, GX_POOL_WORKER_ITEMS, GX_POOL_MOVED, GX_POOL_PULLED,
    GX_POOL_WALL_NS, GX_POOL_CPU_NS, GX_POOL_NSTATS
};
void gx_pool_stats(long long out[GX_POOL_NSTATS], int reset);
const char *gx_pool_stat_name(int i);   /* NULL outside 0 <= i < GX_POOL_NSTATS */

#endif
