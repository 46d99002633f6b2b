/*
 * gx_kernels_impl.h -- included once per instruction set by gx_kernels.c with
 * GX_ISA set to the suffix and the target pragma in force.  Each kernel is the
 * same loop around the one formula in gx_math.h, so the compiler vectorises it
 * for that ISA; nothing here is ISA-specific source.
 */
#define GX_PASTE3_(a, b, c) a##_##b##_##c
#define GX_PASTE3(a, b, c) GX_PASTE3_(a, b, c)
#define GX_FN(name) GX_PASTE3(gx_k, name, GX_ISA)

/* out[i] = EXPR, with x = in[0][i] (and g = in[1][i], b = in[nin-1][i]) */
#define GX_UNARY(name, T, EXPR)                                             \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0];                                     \
        T *out = (T *)out_;                                                 \
        _Pragma("omp simd")                                                 \
        for (gx_intp i = 0; i < n; i++) { T x = xp[i]; out[i] = (EXPR); }   \
    }
#define GX_BINARY(name, T, V, EXPR)                                         \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0], *vp = (const T *)in[1];             \
        T *out = (T *)out_;                                                 \
        _Pragma("omp simd")                                                 \
        for (gx_intp i = 0; i < n; i++) {                                   \
            T x = xp[i], V = vp[i]; out[i] = (EXPR);                        \
        }                                                                   \
    }
#define GX_TERNARY(name, T, EXPR)                                           \
    static void GX_FN(name)(const void *const *in, void *out_, gx_intp n)   \
    {                                                                       \
        const T *xp = (const T *)in[0], *gp = (const T *)in[1];             \
        const T *bp = (const T *)in[2];                                     \
        T *out = (T *)out_;                                                 \
        _Pragma("omp simd")                                                 \
        for (gx_intp i = 0; i < n; i++) {                                   \
            T x = xp[i], g = gp[i], b = bp[i]; out[i] = (EXPR);             \
        }                                                                   \
    }

/* The fused bias adds in the array's own dtype first (T)(x + b), so the
 * result is bit-identical to the unfused op(x + b).  Gradients multiply in
 * double and round once (float32 uses the float32-grade derivative, in double). */
#define GX_DEFINE_ALL(T, SFX, GELU_ERF, GELU_TANH, ERF_GRAD, TANH_GRAD)     \
    GX_UNARY(relu_##SFX, T, GX_RELU(x))                                     \
    GX_UNARY(gelu_erf_##SFX, T, GELU_ERF(x))                                \
    GX_UNARY(gelu_tanh_##SFX, T, GELU_TANH(x))                              \
    GX_BINARY(gelu_erf_bias_##SFX, T, b, GELU_ERF((T)(x + b)))              \
    GX_BINARY(gelu_tanh_bias_##SFX, T, b, GELU_TANH((T)(x + b)))            \
    GX_BINARY(relu_grad_##SFX, T, g, (x > 0 ? g : (T)0))                    \
    GX_BINARY(gelu_erf_grad_##SFX, T, g,                                    \
              (T)(ERF_GRAD(x) * (double)g))                                 \
    GX_BINARY(gelu_tanh_grad_##SFX, T, g,                                   \
              (T)(TANH_GRAD(x) * (double)g))                                \
    GX_TERNARY(gelu_erf_grad_bias_##SFX, T,                                 \
               (T)(ERF_GRAD((T)(x + b)) * (double)g))                       \
    GX_TERNARY(gelu_tanh_grad_bias_##SFX, T,                                \
               (T)(TANH_GRAD((T)(x + b)) * (double)g))

GX_DEFINE_ALL(float, f32, gx_gelu_erf_f32, gx_gelu_tanh_f32,
              gx_gelu_erf_grad_f32d, gx_gelu_tanh_grad_f32d)
GX_DEFINE_ALL(double, f64, gx_gelu_erf_f64, gx_gelu_tanh_f64,
              gx_gelu_erf_grad_f64, gx_gelu_tanh_grad_f64)


#undef GX_UNARY
#undef GX_BINARY
#undef GX_TERNARY
#undef GX_DEFINE_ALL
#undef GX_FN
