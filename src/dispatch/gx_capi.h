/*
 * gx_capi.h -- the kernels for code outside this extension that runs them
 * itself (gelu_ext/torch/csrc: the C++ CPU kernels of the torch ops, which
 * split work over PyTorch's own threads).  _ufuncs exports one gx_capi as the
 * PyCapsule "gelu_ext._ufuncs._gx_capi"; a caller gets it with
 * PyCapsule_Import and calls through it, so the kernels are compiled once and
 * the ISA choice (gelu_ext's, at run time) and the bits are the ufuncs' by
 * construction.  Plain C, no other header: a C++ file includes it alone.
 * Op ids and dtype codes are the loop codes of _ufuncs._loop_code
 * ((op << 2) | dtype); a caller gets them from Python, never spells them.
 */
#ifndef GX_CAPI_H
#define GX_CAPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bump when a field changes meaning; a caller checks it before use. */
#define GX_CAPI_VERSION 2

/* A contiguous kernel (gx_kernel in gx_base.h): in[k] points at n
 * elements of input k, out at n outputs; single-threaded, any alignment.
 * op is the op it runs (the table's op(loop_code)): a 16-bit kernel serves
 * every op and reads it. */
typedef void (*gx_capi_kernel)(const void *const *in, void *out, ptrdiff_t n, int op);

typedef struct {
    int version;                                  /* GX_CAPI_VERSION */
    /* The kernel the ufunc loop with this code runs now (the active ISA
     * path and loop choices: look it up per call, _set_isa may change it). */
    gx_capi_kernel (*kernel)(ptrdiff_t loop_code);
    int (*op)(ptrdiff_t loop_code);               /* the op argument of its calls */
    int (*nin)(ptrdiff_t loop_code);              /* inputs the kernel reads */
    size_t (*itemsize)(ptrdiff_t loop_code);      /* bytes per element */
    /* Elements below which a call of this loop gains nothing from a second
     * thread (the ufuncs' own threshold, gx_get_op_parallel_threshold). */
    ptrdiff_t (*parallel_threshold)(ptrdiff_t loop_code);
} gx_capi;

/* The one table (gx_dispatch.c), which _ufuncs wraps in the capsule; code
 * outside the extension reaches it through the capsule only. */
extern const gx_capi gx_capi_table;

#ifdef __cplusplus
}
#endif

#endif
