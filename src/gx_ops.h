/*
 * gx_ops.h -- the C side of the op table.  Its rows (gx_ops_table.h) are
 * generated from the op spec, gelu_ext/_spec.py, by tools/gen_ops.py;
 * everything else derives from them:
 * the enum below (gx_api.h hands it to Python), the input counts and dispatch tables
 * (gx_dispatch.c), the ufuncs registered at import and their float16 mapping
 * (src/python/_ufuncs.pyx loops over gx_nops()), the fused-bias row path and the
 * Python API (gelu_ext/_api.py reads gelu_ext._ufuncs.OPS).
 *
 * One row per operation:
 *   ID      enum constant (GX_OP_...)
 *   NAME    public ufunc name; derivatives end in "_grad" (the ReLU and
 *           GELU ones are also "..._backward", their names in release
 *           0.1.0: gelu_ext/__init__.py)
 *   KERNEL  the name as an identifier: its kernels in gx_k_ops.h are
 *           gx_k_KERNEL_f32_ISA, ..._f64_ISA
 *   NIN     inputs: x, then g for a derivative, then b for a fused bias;
 *           (gate, up) for a gated op, (gate, up, g) for its gate gradient
 *   KIND    GX_PLAIN, GX_BIAS, GX_GATE or GX_DGATE (below): how the inputs
 *           reach BASE
 *   BASE    the op whose formula this one runs (ID itself if GX_PLAIN)
 *   DOC     the ufunc's docstring (NumPy prepends the signature)
 *
 * Adding an op: its formulas in gx_math.h, its record in gelu_ext/_spec.py
 * (which also generates its kernels, gx_k_ops.h), its tests (see README,
 * "Adding an op").
 * Rows may be appended or reordered freely: nothing depends on an op's number.
 */
#ifndef GX_OPS_H
#define GX_OPS_H

/* KIND: how an op's inputs reach BASE (the op whose formula it runs) */
#define GX_PLAIN 0    /* BASE is the op itself: inputs x (, g)                */
#define GX_BIAS 1     /* BASE(x + b (, g)), the bias last, x + b rounded first */
#define GX_GATE 2     /* BASE(gate) * up: inputs (gate, up), two roundings     */
#define GX_DGATE 3    /* BASE(gate, up * g): inputs (gate, up, g), up * g rounded
                         first: the gate's gradient of BASE(gate) * up        */
/* their names, as Python shows them (_ufuncs.OPS[name].kind), in that order */
#define GX_KIND_NAMES {"plain", "bias", "gate", "dgate"}

/* GX_OPS(X): one X(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) per op, generated
 * from gelu_ext/_spec.py */
#include "gx_ops_table.h"

#define GX_OP_ENUM_(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) ID,
enum { GX_OPS(GX_OP_ENUM_) GX_NOPS };
#undef GX_OP_ENUM_

#endif
