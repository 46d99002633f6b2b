/*
 * gx_ops.h -- the one table of operations.  Everything else derives from it:
 * the enum below (gx_kernels.h), the input counts and dispatch tables
 * (gx_kernels.c), the ufuncs registered at import and their float16 mapping
 * (src/_ufuncs.pyx loops over gx_nops()), the fused-bias row path and the
 * Python API (gelu_ext/_api.py reads gelu_ext._ufuncs.OPS).
 *
 * One row per operation:
 *   ID      enum constant (GX_OP_...; GX_RELU is gx_math.h's formula macro)
 *   NAME    public ufunc name; derivatives end in "_grad" (each is also
 *           registered as "..._backward", the name of release 0.1.0)
 *   KERNEL  kernel name in gx_kernels_impl.h (gx_k_KERNEL_f32_ISA, ..._f64_ISA)
 *   NIN     inputs: x, then g for a derivative, then b for a fused bias
 *   BASE    the unfused op a fused-bias op runs on x + b (ID itself if unfused)
 *   DOC     the ufunc's docstring (NumPy prepends the signature)
 *
 * Adding an op: its formula in gx_math.h, its kernel in gx_kernels_impl.h,
 * one row here, its tests (see README, "Adding an op").  Rows may be appended
 * or reordered freely: nothing depends on an op's number.
 */
#ifndef GX_OPS_H
#define GX_OPS_H

#define GX_OPS(X)                                                              \
    X(GX_OP_RELU, "relu", relu, 1, GX_OP_RELU,                                 \
      "max(x, 0) elementwise; NaN stays NaN, -0.0 gives 0.0.")                 \
    X(GX_OP_GELU_ERF, "gelu_erf", gelu_erf, 1, GX_OP_GELU_ERF,                 \
      "Exact GELU, x * Phi(x) with Phi the standard normal CDF, elementwise.\n" \
      "<= 1 ULP in float32, <= 2 ULP in float64, tail included.")              \
    X(GX_OP_GELU_TANH, "gelu_tanh", gelu_tanh, 1, GX_OP_GELU_TANH,             \
      "tanh-approximate GELU, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).") \
    X(GX_OP_GELU_ERF_BIAS, "gelu_erf_bias", gelu_erf_bias, 2, GX_OP_GELU_ERF,  \
      "gelu_erf(x + b) in one pass; bit-identical to the unfused form.")       \
    X(GX_OP_GELU_TANH_BIAS, "gelu_tanh_bias", gelu_tanh_bias, 2,               \
      GX_OP_GELU_TANH,                                                         \
      "gelu_tanh(x + b) in one pass; bit-identical to the unfused form.")      \
    X(GX_OP_RELU_GRAD, "relu_grad", relu_grad, 2, GX_OP_RELU_GRAD,             \
      "g where x > 0, else 0 (0 at x == 0 and for NaN x, as PyTorch).")        \
    X(GX_OP_GELU_ERF_GRAD, "gelu_erf_grad", gelu_erf_grad, 2,                  \
      GX_OP_GELU_ERF_GRAD,                                                     \
      "(Phi(x) + x phi(x)) * g: the backward pass of exact GELU.")             \
    X(GX_OP_GELU_TANH_GRAD, "gelu_tanh_grad", gelu_tanh_grad, 2,               \
      GX_OP_GELU_TANH_GRAD,                                                    \
      "d/dx gelu_tanh(x) * g: the backward pass of tanh GELU.")                \
    X(GX_OP_GELU_ERF_BIAS_GRAD, "gelu_erf_bias_grad", gelu_erf_grad_bias, 3,   \
      GX_OP_GELU_ERF_GRAD, "gelu_erf_grad(x + b, g) in one pass.")             \
    X(GX_OP_GELU_TANH_BIAS_GRAD, "gelu_tanh_bias_grad", gelu_tanh_grad_bias, 3, \
      GX_OP_GELU_TANH_GRAD, "gelu_tanh_grad(x + b, g) in one pass.")

#define GX_OP_ENUM_(ID, NAME, KERNEL, NIN, BASE, DOC) ID,
enum { GX_OPS(GX_OP_ENUM_) GX_NOPS };
#undef GX_OP_ENUM_

/* The table's columns, for code that cannot expand the macro (Cython). */
int gx_nops(void);
const char *gx_op_name(int op);   /* NULL outside 0 <= op < gx_nops() */
const char *gx_op_doc(int op);
int gx_nin(int op);               /* 0 outside the table */
int gx_op_base(int op);           /* -1 outside the table */

#endif
