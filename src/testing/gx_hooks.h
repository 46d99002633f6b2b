/*
 * gx_hooks.h -- what gelu_ext._test_hooks reaches inside gelu_ext._ufuncs:
 * the switches tests and benchmarks turn (results never depend on them),
 * the pool's worker count and its run function (for the probe job,
 * gx_pool_probe.h).  _ufuncs fills one gx_test_hooks with its own functions
 * and exports it as the PyCapsule "gelu_ext._ufuncs._gx_test_hooks";
 * _test_hooks calls through it, so a setting reaches the state the ufuncs
 * run with (a copy of the dispatch or the pool linked into _test_hooks
 * would have a state of its own).
 */
#ifndef GX_HOOKS_H
#define GX_HOOKS_H

#include "gx_base.h"
#include "runtime/gx_pool.h"

typedef void (*gx_pool_run_fn)(gx_pool_fn fn, void *ctx, gx_pool_intp n, gx_pool_intp chunk, int nthreads);

typedef struct {
    void (*set_chunk)(gx_intp n);               /* gx_set_chunk */
    void (*set_parallel_threshold)(gx_intp n);  /* gx_set_parallel_threshold */
    int (*set_plain_loads)(int on);             /* gx_set_plain_loads: 1 on, 0 off; returns the old */
    int (*set_bf16cvt)(int on);                 /* gx_set_bf16cvt: the same */
    int (*pool_workers)(void);                  /* gx_pool_workers */
    gx_pool_run_fn pool_run;                    /* gx_pool_run */
} gx_test_hooks;

#endif
