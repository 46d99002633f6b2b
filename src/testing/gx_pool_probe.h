/*
 * gx_pool_probe.h -- a test hook for the pool's pulls (tests/test_pool_affinity.py,
 * through gelu_ext._test_hooks.pool_probe_*): a job of two threads whose worker holds
 * its chunk until released, so that the owner, out of chunks, pulls it onto
 * its core (gx_pull_stragglers in gx_pool.c) and a test can act between the
 * pull and the worker's restoring its mask.  Linux only, as pulls are;
 * elsewhere gx_probe_run returns -1 and runs nothing.
 */
#ifndef GX_POOL_PROBE_H
#define GX_POOL_PROBE_H

#include "runtime/gx_pool.h"
#include "testing/gx_hooks.h"

/* The probe runs through gelu_ext._ufuncs' gx_pool_run (gx_test_hooks'
 * pool_run), on the pool the ufuncs use. */

#if defined(__linux__) && defined(__GNUC__)
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long gx_probe_owner, gx_probe_worker, gx_probe_go;

static long gx_probe_tid(void) { return (long)syscall(SYS_gettid); }

/* Sleep 0.2 ms `n` times or until *flag is non-zero. */
static void gx_probe_wait(const long *flag, int n)
{
    struct timespec ts = {0, 200000};
    for (int i = 0; i < n && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++) nanosleep(&ts, NULL);
}

/* A chunk: the owner waits (at most 5 s) until a worker holds one, so that
 * it cannot run out of chunks before a worker joins; the first worker holds
 * its chunk until released (at most 30 s); any other chunk is nothing. */
static void gx_probe_chunk(void *ctx, gx_pool_intp lo, gx_pool_intp hi)
{
    long me = gx_probe_tid(), none = 0;
    (void)ctx;
    (void)lo;
    (void)hi;
    if (me == __atomic_load_n(&gx_probe_owner, __ATOMIC_ACQUIRE))
        gx_probe_wait(&gx_probe_worker, 25000);
    else if (__atomic_compare_exchange_n(&gx_probe_worker, &none, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        gx_probe_wait(&gx_probe_go, 150000);
}

/* Run the job on the calling thread as owner; returns the kernel id of the
 * worker that held a chunk, 0 if none joined. */
static long gx_probe_run(gx_pool_run_fn run)
{
    __atomic_store_n(&gx_probe_worker, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&gx_probe_go, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&gx_probe_owner, gx_probe_tid(), __ATOMIC_RELEASE);
    run(gx_probe_chunk, NULL, 64, 1, 2);
    return __atomic_load_n(&gx_probe_worker, __ATOMIC_ACQUIRE);
}
/* The worker holding a chunk now (0: none yet). */
static long gx_probe_held(void) { return __atomic_load_n(&gx_probe_worker, __ATOMIC_ACQUIRE); }
/* Let it finish. */
static void gx_probe_release(void) { __atomic_store_n(&gx_probe_go, 1, __ATOMIC_RELEASE); }
#else
static long gx_probe_run(gx_pool_run_fn run) { (void)run; return -1; }
static long gx_probe_held(void) { return 0; }
static void gx_probe_release(void) {}
#endif

#endif
