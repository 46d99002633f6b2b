/*
 * gx_ops.h -- the one table of operations.  Everything else derives from it:
 * the enum below (gx_kernels.h), the input counts and dispatch tables
 * (gx_dispatch.c), the ufuncs registered at import and their float16 mapping
 * (src/python/_ufuncs.pyx loops over gx_nops()), the fused-bias row path and the
 * Python API (gelu_ext/_api.py reads gelu_ext._ufuncs.OPS).
 *
 * One row per operation:
 *   ID      enum constant (GX_OP_...)
 *   NAME    public ufunc name; derivatives end in "_grad" (the ReLU and
 *           GELU ones are also "..._backward", their names in release
 *           0.1.0: gelu_ext/__init__.py)
 *   KERNEL  kernel name in gx_k_instances.h (gx_k_KERNEL_f32_ISA, ..._f64_ISA)
 *   NIN     inputs: x, then g for a derivative, then b for a fused bias;
 *           (gate, up) for a gated op, (gate, up, g) for its gate gradient
 *   KIND    GX_PLAIN, GX_BIAS, GX_GATE or GX_DGATE (below): how the inputs
 *           reach BASE
 *   BASE    the op whose formula this one runs (ID itself if GX_PLAIN)
 *   DOC     the ufunc's docstring (NumPy prepends the signature)
 *
 * Adding an op: its formula in gx_math.h, its kernel in gx_k_instances.h,
 * one row here, its tests (see README, "Adding an op").  Rows may be appended
 * or reordered freely: nothing depends on an op's number.
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

#define GX_OPS(X)                                                              \
    X(GX_OP_RELU, "relu", relu, 1, GX_PLAIN, GX_OP_RELU,                       \
      "max(x, 0) elementwise; NaN stays NaN, -0.0 gives 0.0.")                 \
    X(GX_OP_GELU_ERF, "gelu_erf", gelu_erf, 1, GX_PLAIN, GX_OP_GELU_ERF,       \
      "Exact GELU, x * Phi(x) with Phi the standard normal CDF, elementwise.\n" \
      "<= 1 ULP in float32, <= 2 ULP in float64, tail included.")              \
    X(GX_OP_GELU_TANH, "gelu_tanh", gelu_tanh, 1, GX_PLAIN, GX_OP_GELU_TANH,   \
      "tanh-approximate GELU, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).") \
    X(GX_OP_SILU, "silu", silu, 1, GX_PLAIN, GX_OP_SILU,                       \
      "SiLU (swish), x * sigmoid(x), elementwise.\n"                           \
      "<= 1 ULP in float32, <= 2 ULP in float64, tail included.")              \
    X(GX_OP_QUICK_GELU, "quick_gelu", quick_gelu, 1, GX_PLAIN,                 \
      GX_OP_QUICK_GELU,                                                        \
      "quick GELU, x * sigmoid(1.702 x) (CLIP), elementwise.\n"                \
      "<= 1 ULP in float32, <= 2 ULP in float64, tail included.")              \
    X(GX_OP_GELU_ERF_BIAS, "gelu_erf_bias", gelu_erf_bias, 2, GX_BIAS,         \
      GX_OP_GELU_ERF,                                                          \
      "gelu_erf(x + b) in one pass; bit-identical to the unfused form.")       \
    X(GX_OP_GELU_TANH_BIAS, "gelu_tanh_bias", gelu_tanh_bias, 2, GX_BIAS,      \
      GX_OP_GELU_TANH,                                                         \
      "gelu_tanh(x + b) in one pass; bit-identical to the unfused form.")      \
    X(GX_OP_SWIGLU, "swiglu", swiglu, 2, GX_GATE, GX_OP_SILU,                  \
      "SwiGLU, silu(gate) * up in one pass; bit-identical to the unfused\n"    \
      "np.multiply(silu(gate), up) in float32 and float64.")                   \
    X(GX_OP_GEGLU_ERF, "geglu_erf", geglu_erf, 2, GX_GATE, GX_OP_GELU_ERF,     \
      "GEGLU, gelu_erf(gate) * up in one pass; bit-identical to the unfused\n" \
      "form in float32 and float64.")                                          \
    X(GX_OP_GEGLU_TANH, "geglu_tanh", geglu_tanh, 2, GX_GATE, GX_OP_GELU_TANH, \
      "GEGLU with tanh GELU, gelu_tanh(gate) * up in one pass; bit-identical\n" \
      "to the unfused form in float32 and float64.")                           \
    X(GX_OP_RELU_GRAD, "relu_grad", relu_grad, 2, GX_PLAIN, GX_OP_RELU_GRAD,   \
      "g where x > 0, else 0 (0 at x == 0 and for NaN x, as PyTorch).")        \
    X(GX_OP_GELU_ERF_GRAD, "gelu_erf_grad", gelu_erf_grad, 2, GX_PLAIN,        \
      GX_OP_GELU_ERF_GRAD,                                                     \
      "(Phi(x) + x phi(x)) * g: the backward pass of exact GELU.")             \
    X(GX_OP_GELU_TANH_GRAD, "gelu_tanh_grad", gelu_tanh_grad, 2, GX_PLAIN,     \
      GX_OP_GELU_TANH_GRAD,                                                    \
      "d/dx gelu_tanh(x) * g: the backward pass of tanh GELU.")                \
    X(GX_OP_SILU_GRAD, "silu_grad", silu_grad, 2, GX_PLAIN, GX_OP_SILU_GRAD,   \
      "(s + x s (1 - s)) * g, s = sigmoid(x): the backward pass of SiLU.")     \
    X(GX_OP_QUICK_GELU_GRAD, "quick_gelu_grad", quick_gelu_grad, 2, GX_PLAIN, \
      GX_OP_QUICK_GELU_GRAD,                                                   \
      "(s + 1.702 x s (1 - s)) * g, s = sigmoid(1.702 x): the backward pass\n" \
      "of quick GELU.")                                                        \
    X(GX_OP_GELU_ERF_BIAS_GRAD, "gelu_erf_bias_grad", gelu_erf_grad_bias, 3,   \
      GX_BIAS, GX_OP_GELU_ERF_GRAD, "gelu_erf_grad(x + b, g) in one pass.")    \
    X(GX_OP_GELU_TANH_BIAS_GRAD, "gelu_tanh_bias_grad", gelu_tanh_grad_bias, 3, \
      GX_BIAS, GX_OP_GELU_TANH_GRAD, "gelu_tanh_grad(x + b, g) in one pass.")  \
    X(GX_OP_SWIGLU_DGATE, "swiglu_dgate", swiglu_dgate, 3, GX_DGATE,           \
      GX_OP_SILU_GRAD,                                                         \
      "silu_grad(gate, up * g): the gate's gradient of swiglu(gate, up).")     \
    X(GX_OP_GEGLU_ERF_DGATE, "geglu_erf_dgate", geglu_erf_dgate, 3, GX_DGATE,  \
      GX_OP_GELU_ERF_GRAD,                                                     \
      "gelu_erf_grad(gate, up * g): the gate's gradient of geglu_erf.")        \
    X(GX_OP_GEGLU_TANH_DGATE, "geglu_tanh_dgate", geglu_tanh_dgate, 3,         \
      GX_DGATE, GX_OP_GELU_TANH_GRAD,                                          \
      "gelu_tanh_grad(gate, up * g): the gate's gradient of geglu_tanh.")

#define GX_OP_ENUM_(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) ID,
enum { GX_OPS(GX_OP_ENUM_) GX_NOPS };
#undef GX_OP_ENUM_

/* The table's columns, for code that cannot expand the macro (Cython). */
int gx_nops(void);
const char *gx_op_name(int op);   /* NULL outside 0 <= op < gx_nops() */
const char *gx_op_doc(int op);
int gx_nin(int op);               /* 0 outside the table */
int gx_op_base(int op);           /* -1 outside the table */
int gx_op_kind(int op);           /* GX_PLAIN ... GX_DGATE; -1 outside the table */
const char *gx_kind_name(int kind); /* "plain" ... "dgate"; NULL outside GX_PLAIN ... GX_DGATE */

#endif
