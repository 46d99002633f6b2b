/*
 * gx_k_drivers.h -- the loop drivers the float32 and float64 kernels are made
 * of, per ISA (included by gx_isa_kernels.h): typed drivers that take the
 * element function or the kernel they run.  gx_map_<T> applies an element
 * function of gx_math.h over arrays (the compiler vectorises it for the
 * ISA; gx_unary_<T>, gx_binary_<T> over a kernel's arguments),
 * gx_stream_<T> does so in prefetching blocks for arrays larger than
 * the caches (ReLU), gx_biased_<T>, gx_gated_f64 and gx_dgated_<T> run
 * another kernel a block at a time on a fused form's inputs.
 *
 * Every driver is GX_INLINE (always inlined) and each kernel calls it with
 * constants -- the element function's or the base kernel's address, the
 * input count -- so the kernel compiles to the loop the driver spells with
 * the element function inlined into it (a constant function pointer becomes
 * a direct call once the driver is inlined, and a direct call to a
 * GX_INLINE function is inlined): one loop per kernel, vectorised as a loop
 * written out by hand would be, and a debugger steps through the driver.
 * A kernel is then one line naming its driver and its element function
 * (gx_k_ops.h).
 */
#ifndef GX_ISA
#error "src/kernels/gx_k_drivers.h is not standalone: each ISA unit (src/isa/<name>.c) includes it once (GX_ISA)"
#endif

/* Element functions: one input (x), or two (x and v: a derivative's g). */
typedef float (*gx_el1_f32)(float x);
typedef double (*gx_el1_f64)(double x);
typedef float (*gx_el2_f32)(float x, float v);
typedef double (*gx_el2_f64)(double x, double v);

/* o[i] = f1(x[i]), or f2(x[i], v[i]) where f1 is NULL, for i < n. */
GX_INLINE void gx_map_f32(const float *x, const float *v, float *o, gx_intp n, gx_el1_f32 f1, gx_el2_f32 f2)
{
    _Pragma("omp simd")
    for (gx_intp i = 0; i < n; i++) o[i] = f1 ? f1(x[i]) : f2(x[i], v[i]);
}
GX_INLINE void gx_map_f64(const double *x, const double *v, double *o, gx_intp n, gx_el1_f64 f1,
                          gx_el2_f64 f2)
{
    _Pragma("omp simd")
    for (gx_intp i = 0; i < n; i++) o[i] = f1 ? f1(x[i]) : f2(x[i], v[i]);
}

/* The elementwise kernels' drivers: out = f(x), or f(x, v) with v = in[1]. */
GX_INLINE void gx_unary_f32(const void *const *in, void *out, gx_intp n, gx_el1_f32 f)
{
    gx_map_f32((const float *)in[0], NULL, (float *)out, n, f, NULL);
}
GX_INLINE void gx_unary_f64(const void *const *in, void *out, gx_intp n, gx_el1_f64 f)
{
    gx_map_f64((const double *)in[0], NULL, (double *)out, n, f, NULL);
}
GX_INLINE void gx_binary_f32(const void *const *in, void *out, gx_intp n, gx_el2_f32 f)
{
    gx_map_f32((const float *)in[0], (const float *)in[1], (float *)out, n, NULL, f);
}
GX_INLINE void gx_binary_f64(const void *const *in, void *out, gx_intp n, gx_el2_f64 f)
{
    gx_map_f64((const double *)in[0], (const double *)in[1], (double *)out, n, NULL, f);
}

/* ReLU runs at memory speed: arrays of GX_STREAM_MIN elements or more go a
 * block of GX_RELU_B elements at a time, the lines GX_PF_BYTES ahead of the
 * block prefetched first, then the block's vector loop; smaller ones (in
 * cache, where the blocks cost 5-10%) in one plain loop.  blocks = 0 (the
 * plain_loads choice, gx_unit_table.h: a CPU whose hardware prefetcher keeps
 * up) takes the plain loop at every size.  nin inputs: x, and v = in[1] for
 * f2. */
#ifndef GX_RELU_B
#define GX_RELU_B 64
#endif
#ifndef GX_STREAM_MIN
#define GX_STREAM_MIN 8192
#endif
GX_INLINE void gx_stream_f32(const void *const *in, void *out_, gx_intp n, int nin, gx_el1_f32 f1,
                             gx_el2_f32 f2, int blocks)
{
    const float *xp = (const float *)in[0], *vp = (const float *)in[nin - 1];
    float *out = (float *)out_;
    if (!blocks || n < GX_STREAM_MIN) {
        gx_map_f32(xp, vp, out, n, f1, f2);
        return;
    }
    for (gx_intp i0 = 0; i0 < n; i0 += GX_RELU_B) {
        const int m = (int)(n - i0 < GX_RELU_B ? n - i0 : GX_RELU_B);
        for (int l = 0; l < GX_RELU_B * (int)sizeof(float); l += 64) {
            GX_PREFETCH(xp + i0, GX_PF_BYTES + l);
            if (nin == 2) GX_PREFETCH(vp + i0, GX_PF_BYTES + l);
            GX_PREFETCH(out + i0, GX_PF_BYTES + l);
        }
        gx_map_f32(xp + i0, vp + i0, out + i0, m, f1, f2);
    }
}
GX_INLINE void gx_stream_f64(const void *const *in, void *out_, gx_intp n, int nin, gx_el1_f64 f1,
                             gx_el2_f64 f2, int blocks)
{
    const double *xp = (const double *)in[0], *vp = (const double *)in[nin - 1];
    double *out = (double *)out_;
    if (!blocks || n < GX_STREAM_MIN) {
        gx_map_f64(xp, vp, out, n, f1, f2);
        return;
    }
    for (gx_intp i0 = 0; i0 < n; i0 += GX_RELU_B) {
        const int m = (int)(n - i0 < GX_RELU_B ? n - i0 : GX_RELU_B);
        for (int l = 0; l < GX_RELU_B * (int)sizeof(double); l += 64) {
            GX_PREFETCH(xp + i0, GX_PF_BYTES + l);
            if (nin == 2) GX_PREFETCH(vp + i0, GX_PF_BYTES + l);
            GX_PREFETCH(out + i0, GX_PF_BYTES + l);
        }
        gx_map_f64(xp + i0, vp + i0, out + i0, m, f1, f2);
    }
}

/* The fused-bias form of kernel base (nin inputs counting the bias, which
 * is the last): s = (T)(x + b) -- in the array's own dtype, so the result
 * is bit-identical to the unfused base(x + b) -- is formed a block at a time
 * in a stack buffer that stays in L1, and base runs on it.  One formula, no
 * second copy of it, and base's own vectorisation (or split) is kept.  In
 * place is safe: a block of x is read before that block of out is written. */
#ifndef GX_BIAS_B
#define GX_BIAS_B 4096   /* a float32 base splits per call, and pays the */
#endif                   /* split's fixed cost once per call             */
GX_INLINE void gx_biased_f32(const void *const *in, void *out_, gx_intp n, int op, int nin, gx_kernel base)
{
    const float *xp = (const float *)in[0], *bp = (const float *)in[nin - 1];
    float *out = (float *)out_;
    float s[GX_BIAS_B];
    for (gx_intp i0 = 0; i0 < n; i0 += GX_BIAS_B) {
        const int m = (int)(n - i0 < GX_BIAS_B ? n - i0 : GX_BIAS_B);
        _Pragma("omp simd")
        for (int j = 0; j < m; j++) s[j] = xp[i0 + j] + bp[i0 + j];
        const void *p[2] = {s, nin == 3 ? (const void *)((const float *)in[1] + i0) : 0};
        base(p, out + i0, m, op);
    }
}
GX_INLINE void gx_biased_f64(const void *const *in, void *out_, gx_intp n, int op, int nin, gx_kernel base)
{
    const double *xp = (const double *)in[0], *bp = (const double *)in[nin - 1];
    double *out = (double *)out_;
    double s[GX_BIAS_B];
    for (gx_intp i0 = 0; i0 < n; i0 += GX_BIAS_B) {
        const int m = (int)(n - i0 < GX_BIAS_B ? n - i0 : GX_BIAS_B);
        _Pragma("omp simd")
        for (int j = 0; j < m; j++) s[j] = xp[i0 + j] + bp[i0 + j];
        const void *p[2] = {s, nin == 3 ? (const void *)((const double *)in[1] + i0) : 0};
        base(p, out + i0, m, op);
    }
}

/* The gated forms (gx_ops.h, GX_GATE and GX_DGATE), a block at a time in a
 * stack buffer, like gx_biased_<T>:
 *   gated:   out = (T)base(gate) * up     -- bit-identical to the unfused
 *            np.multiply(base(gate), up): base's result is rounded to T first
 *   dgated:  out = base(gate, (T)(up * g)) -- the unfused base(gate, up * g)
 * In place is safe: each block's inputs are read before its output is
 * written (base itself handles out == gate).  float32 gated ops do not come
 * here: their table loop multiplies by up itself (the split driver's gate). */
#ifndef GX_GATE_B
#define GX_GATE_B 4096   /* as GX_BIAS_B */
#endif
GX_INLINE void gx_gated_f64(const void *const *in, void *out_, gx_intp n, int op, gx_kernel base)
{
    const double *gp = (const double *)in[0], *up = (const double *)in[1];
    double *out = (double *)out_;
    double s[GX_GATE_B];
    for (gx_intp i0 = 0; i0 < n; i0 += GX_GATE_B) {
        const int m = (int)(n - i0 < GX_GATE_B ? n - i0 : GX_GATE_B);
        const void *p[1] = {gp + i0};
        base(p, s, m, op);
        _Pragma("omp simd")
        for (int j = 0; j < m; j++) out[i0 + j] = s[j] * up[i0 + j];
    }
}
GX_INLINE void gx_dgated_f32(const void *const *in, void *out_, gx_intp n, int op, gx_kernel base)
{
    const float *gp = (const float *)in[0], *up = (const float *)in[1], *dp = (const float *)in[2];
    float *out = (float *)out_;
    float s[GX_GATE_B];
    for (gx_intp i0 = 0; i0 < n; i0 += GX_GATE_B) {
        const int m = (int)(n - i0 < GX_GATE_B ? n - i0 : GX_GATE_B);
        _Pragma("omp simd")
        for (int j = 0; j < m; j++) s[j] = up[i0 + j] * dp[i0 + j];
        const void *p[2] = {gp + i0, s};
        base(p, out + i0, m, op);
    }
}
GX_INLINE void gx_dgated_f64(const void *const *in, void *out_, gx_intp n, int op, gx_kernel base)
{
    const double *gp = (const double *)in[0], *up = (const double *)in[1], *dp = (const double *)in[2];
    double *out = (double *)out_;
    double s[GX_GATE_B];
    for (gx_intp i0 = 0; i0 < n; i0 += GX_GATE_B) {
        const int m = (int)(n - i0 < GX_GATE_B ? n - i0 : GX_GATE_B);
        _Pragma("omp simd")
        for (int j = 0; j < m; j++) s[j] = up[i0 + j] * dp[i0 + j];
        const void *p[2] = {gp + i0, s};
        base(p, out + i0, m, op);
    }
}
