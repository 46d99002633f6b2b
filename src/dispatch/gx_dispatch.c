/*
 * gx_dispatch.c -- picks one row of GX_ISAS (gx_isas.h) at run time from the
 * CPU's features, fills the dispatch tables from the ISA units' kernel
 * tables (gx_k_unit_<row>, from src/isa/<row>.c, one compile unit per row,
 * each with its ISA's flags) for the CPU's loop choices, and runs a contiguous call on
 * gelu_ext's thread pool (gx_pool.c) when it is large enough to pay for
 * threads.  This file is compiled with the build's own flags only.
 *
 * The kernel files, each included once by every unit (gx_isa_kernels.h):
 *   src/simd/<row>.h    the row's primitives (the contract: gx_loop_f32.h)
 *   gx_loop_f32.h       the float32-lane table loops (float32 and 16-bit data)
 *   gx_loop_f64.h       the float64-lane table loop
 *   gx_k_drivers.h      elementwise, fused-bias, gated and streaming drivers
 *   gx_k_split.h        the split drivers (table where it covers, else the formula)
 *   gx_k_ops.h          each op's float32 and float64 kernel
 *   gx_k_16bit.h        the float16 and bfloat16 kernels (the 16-bit pipeline)
 *
 * Design:
 * - Run-time dispatch, not -march=native: the same wheel runs on any CPU of
 *   its architecture and uses the best row of GX_ISAS the CPU has.  Rows of
 *   other architectures (and compilers gx_isas.h cannot test the CPU with) are not
 *   in the list: such a build has the baseline path only.
 * - Every path performs the IEEE operations of a scalar twin (the build
 *   turns off FP contraction), so it gives that twin's bits: the float32
 *   table loops of the baseline and AVX-512 paths those of gx_lut.h (32
 *   pieces), of the AVX2 and NEON paths those of gx_lut8.h (8 pieces, one
 *   vpermps or tbl per coefficient); everything else is the same on every
 *   path.  The tests
 *   check each path against its twin (gx_twin8, src/testing/, for the 8-piece
 *   one) and the
 *   reference (GELU_EXT_ISA / gelu_ext._set_isa).
 * - Threads take fixed-size chunks of the array (whole rows for the fused-bias
 *   row driver) from a shared counter; every element is computed by the same
 *   kernel code whichever thread takes its chunk, so the result does not
 *   depend on the thread count or on the schedule.
 */
#include "gx_api.h"
#include "gx_capi.h"
#include "runtime/gx_pool.h"
#include "runtime/gx_tls.h"
#include "kernels/gx_unit_table.h"

#include <fenv.h>
#include <stdlib.h>

typedef char gx_isa_slots_ok[GX_NISA <= GX_ISA_SLOTS ? 1 : -1];

/* The columns of gx_isas.h as arrays indexed by ISA. */
#define GX_ISA_NAME_ROW(ID, NAME, LEVEL, CPU, TARGET, VREG) [ID] = #NAME,
#define GX_ISA_TARGET_ROW(ID, NAME, LEVEL, CPU, TARGET, VREG) [ID] = TARGET,
#define GX_ISA_VREG_ROW(ID, NAME, LEVEL, CPU, TARGET, VREG) [ID] = VREG,
#define GX_ISA_LEVEL_ROW(ID, NAME, LEVEL, CPU, TARGET, VREG) [ID] = LEVEL,
#define GX_ISA_CPU_ROW(ID, NAME, LEVEL, CPU, TARGET, VREG) [ID] = CPU,
#define GX_ISA_UNIT_ROW(ID, NAME, LEVEL, CPU, TARGET, VREG) [ID] = &GX_PASTE3(gx_k, unit, NAME),
static const char *const gx_isa_name_table[GX_NISA] = { GX_ISAS(GX_ISA_NAME_ROW) };
static const char *const gx_isa_target_table[GX_NISA] = { GX_ISAS(GX_ISA_TARGET_ROW) };
static const char *const gx_isa_vreg_table[GX_NISA] = { GX_ISAS(GX_ISA_VREG_ROW) };
static const int gx_isa_level_table[GX_NISA] = { GX_ISAS(GX_ISA_LEVEL_ROW) };
static int (*const gx_isa_cpu_table[GX_NISA])(void) = { GX_ISAS(GX_ISA_CPU_ROW) };
static const gx_isa_unit *const gx_isa_unit_table[GX_NISA] = { GX_ISAS(GX_ISA_UNIT_ROW) };

#define GX_ISA_IN_TABLE(isa) ((isa) >= 0 && (isa) < GX_NISA)
int gx_nisa(void) { return GX_NISA; }
const char *gx_isa_name(int isa) { return GX_ISA_IN_TABLE(isa) ? gx_isa_name_table[isa] : NULL; }
const char *gx_isa_target(int isa) { return GX_ISA_IN_TABLE(isa) ? gx_isa_target_table[isa] : NULL; }
const char *gx_isa_vreg(int isa) { return GX_ISA_IN_TABLE(isa) ? gx_isa_vreg_table[isa] : NULL; }
int gx_isa_level(int isa) { return GX_ISA_IN_TABLE(isa) ? gx_isa_level_table[isa] : -1; }
int gx_isa_cpu(int isa) { return GX_ISA_IN_TABLE(isa) && gx_isa_cpu_table[isa](); }
int gx_isa_f32_pieces(int isa) { return GX_ISA_IN_TABLE(isa) ? gx_isa_unit_table[isa]->f32_pieces : 0; }

/* The columns of gx_ops.h as arrays indexed by op. */
#define GX_NIN_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) [ID] = NIN,
#define GX_BASE_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) [ID] = BASE,
#define GX_KIND_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) [ID] = KIND,
#define GX_NAME_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) [ID] = NAME,
#define GX_DOC_ROW(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) [ID] = DOC,
static const int gx_nin_table[GX_NOPS] = { GX_OPS(GX_NIN_ROW) };
static const int gx_base_table[GX_NOPS] = { GX_OPS(GX_BASE_ROW) };
static const int gx_kind_table[GX_NOPS] = { GX_OPS(GX_KIND_ROW) };
static const char *const gx_name_table[GX_NOPS] = { GX_OPS(GX_NAME_ROW) };
static const char *const gx_doc_table[GX_NOPS] = { GX_OPS(GX_DOC_ROW) };

/* The loops and drivers hold at most 3 inputs (x, g, b): a row asking for
 * more (or none) does not compile. */
#define GX_NIN_CHECK(ID, NAME, KERNEL, NIN, KIND, BASE, DOC) \
    typedef char gx_nin_ok_##ID[(NIN) >= 1 && (NIN) <= 3 ? 1 : -1];
GX_OPS(GX_NIN_CHECK)

#define GX_IN_TABLE(op) ((op) >= 0 && (op) < GX_NOPS)
int gx_nops(void) { return GX_NOPS; }
int gx_nin(int op) { return GX_IN_TABLE(op) ? gx_nin_table[op] : 0; }
int gx_op_base(int op) { return GX_IN_TABLE(op) ? gx_base_table[op] : -1; }
int gx_op_kind(int op) { return GX_IN_TABLE(op) ? gx_kind_table[op] : -1; }
const char *gx_kind_name(int kind)
{
    static const char *const names[] = GX_KIND_NAMES;
    return kind >= 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : NULL;
}
const char *gx_op_name(int op) { return GX_IN_TABLE(op) ? gx_name_table[op] : NULL; }
const char *gx_op_doc(int op) { return GX_IN_TABLE(op) ? gx_doc_table[op] : NULL; }

static gx_kernel gx_tables[GX_NISA][GX_NOPS][GX_NDT];
static gx_kernel (*gx_active)[GX_NDT] = NULL;
static int gx_isa = -1;
static int gx_num_threads = 0;
/* One per thread, so a caller's own count (gelu_ext.torch's, for the
 * duration of an op) never reaches another thread's calls. */
static GX_THREAD_LOCAL int gx_thread_num_threads = 0;
/* Below this many elements a call stays on the calling thread: starting a
 * parallel region costs a few microseconds, more than the work it splits.
 * ReLU is memory-bound and needs GX_MEMBOUND_FACTOR times more to gain. */
#define GX_MEMBOUND_FACTOR 8
static gx_intp gx_threshold = 1 << 15;
/* Elements per chunk a thread takes at a time (a multiple of 64, so chunks
 * start on cache lines when the arrays are aligned).  Small enough that a
 * 2^16-element call has 8 chunks to share and a thread that is descheduled
 * holds up little; large enough that taking one (an atomic add) costs
 * nothing next to computing it (~10 us for exact GELU).  Settable for tests
 * and measurements (gelu_ext._test_hooks.set_chunk). */
static gx_intp gx_chunk = 8192;



/* the last row whose CPU check passes (rows are in order of preference) */
int gx_best_isa(void)
{
    int best = GX_ISA_BASELINE;
    for (int i = 0; i < GX_NISA; i++)
        if (gx_isa_cpu_table[i]()) best = i;
    return best;
}

/* The loop choices (gx_choices, gx_unit_table.h) and every row's dispatch table
 * filled for them; gx_init_tables sets them from the CPU.  Measured, 1
 * thread, 2^20 elements.  plain_loads (CPUID vendor AMD): AMD EPYC Zen 5,
 * ReLU float32/float64 against np.copyto 0.94-1.00 in the plain loop,
 * 0.71-0.86 in prefetching blocks; float16 exact GELU 0.73x our float32 rate
 * from the gathered result table, one pass 1.07x the table read one load per
 * element, SiLU 1.75x.  Intel Xeon (AVX-512): ReLU 0.99 in blocks against
 * 0.76; float16 exact GELU 2.35x from the gathered table.  bf16cvt (AVX-512
 * with AVX512-BF16), AMD Zen 5: bfloat16 exact GELU's gradient 1.18x. */
static gx_choices gx_cpu_choices;
/* Dispatch table t from unit u's kernels, and the unit's loop choices set
 * to c (data: no code of the unit runs here). */
static void gx_fill(gx_kernel t[GX_NOPS][GX_NDT], const gx_isa_unit *u, const gx_choices *c)
{
    *u->choices = *c;
    for (int op = 0; op < GX_NOPS; op++)
        for (int dt = 0; dt < GX_NDT; dt++) t[op][dt] = u->ops[op][dt];
}
static void gx_fill_all(void)
{
    for (int i = 0; i < GX_NISA; i++) gx_fill(gx_tables[i], gx_isa_unit_table[i], &gx_cpu_choices);
}

static void gx_init_tables(void)
{
    if (gx_active) return;
#if GX_ARCH_X86_64
    gx_cpu_choices.plain_loads = gx_cpu_amd();
    gx_cpu_choices.bf16cvt = gx_cpu_avx512bf16();
#endif
    gx_fill_all();
    gx_isa = gx_best_isa();
    gx_active = gx_tables[gx_isa];
}

int gx_get_isa(void) { gx_init_tables(); return gx_isa; }

int gx_set_isa(int isa)
{
    gx_init_tables();
    if (!GX_ISA_IN_TABLE(isa) || !gx_isa_cpu_table[isa]()) return -1;
    gx_isa = isa;
    gx_active = gx_tables[isa];
    return 0;
}

int gx_get_num_threads(void)
{
    if (!gx_pool_threaded()) return 1;
    if (gx_thread_num_threads > 0) return gx_thread_num_threads;
    return gx_num_threads > 0 ? gx_num_threads : gx_pool_default_threads();
}

void gx_set_num_threads(int n) { gx_num_threads = n > 0 ? n : 0; }
int gx_set_thread_num_threads(int n)
{
    int was = gx_thread_num_threads;
    gx_thread_num_threads = n > 0 ? n : 0;
    return was;
}
gx_intp gx_get_parallel_threshold(void) { return gx_threshold; }
void gx_set_parallel_threshold(gx_intp n) { gx_threshold = n > 1 ? n : 1; }
int gx_set_plain_loads(int on)
{
    gx_init_tables();
    int was = gx_cpu_choices.plain_loads;
    if (on >= 0) {
        gx_cpu_choices.plain_loads = on != 0;
        gx_fill_all();
    }
    return was;
}
int gx_set_bf16cvt(int on)
{
    gx_init_tables();
    int was = gx_cpu_choices.bf16cvt;
#if GX_ARCH_X86_64
    if (on >= 0) {
        gx_cpu_choices.bf16cvt = on != 0 && gx_cpu_avx512bf16();
        gx_fill_all();
    }
#endif
    return was;
}
gx_intp gx_get_chunk(void) { return gx_chunk; }
void gx_set_chunk(gx_intp n) { gx_chunk = n >= 64 ? n & ~(gx_intp)63 : 64; }

/* NumPy turns the FP status flags a loop leaves into warnings.  The kernels'
 * intermediate steps may raise some that say nothing about the result (an
 * ordered compare with a NaN input, exp overflowing to inf inside a sigmoid
 * of a huge negative argument), so they are cleared; results are exact
 * IEEE values either way.  Underflow and inexact are ignored by NumPy. */
static void gx_clear_fp_flags(void)
{
    feclearexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
}

/* Threads worth starting for n elements of op: none below two blocks of the
 * threshold, and never more than one per block. */
gx_intp gx_get_op_parallel_threshold(int op)
{
    switch (op) {
    case GX_OP_RELU: case GX_OP_RELU_GRAD: case GX_OP_RELU2: case GX_OP_RELU2_GRAD:
    case GX_OP_RELU6: case GX_OP_RELU6_GRAD:
        return GX_MEMBOUND_FACTOR * gx_threshold;   /* the streaming kernels */
    default:
        return gx_threshold;
    }
}

static int gx_threads_for(int op, gx_intp n)
{
    gx_intp min_block = gx_get_op_parallel_threshold(op);
    int nt = 1;
    if (n >= 2 * min_block) {
        nt = gx_get_num_threads();
        if ((gx_intp)nt > n / min_block) nt = (int)(n / min_block);
    }
    return nt;
}

/* One call's work for the pool: ranges of elements (gx_run_flat) or of
 * rows (gx_run_rows, where the last input is the bias row). */
typedef struct {
    gx_kernel k;
    int op;
    int nin;
    size_t isz;
    const void *in[3];
    void *out;
    gx_intp cols;
} gx_job;

static void gx_run_flat(void *ctx, gx_pool_intp lo, gx_pool_intp hi)
{
    const gx_job *j = (const gx_job *)ctx;
    const void *p[3] = {0, 0, 0};
    for (int i = 0; i < j->nin; i++) p[i] = (const char *)j->in[i] + lo * j->isz;
    j->k(p, (char *)j->out + lo * j->isz, hi - lo, j->op);
}

static void gx_run_rows(void *ctx, gx_pool_intp lo, gx_pool_intp hi)
{
    const gx_job *j = (const gx_job *)ctx;
    const gx_intp step = j->cols * (gx_intp)j->isz;
    for (gx_intp r = lo; r < hi; r++) {
        const void *p[3] = {0, 0, 0};
        for (int i = 0; i < j->nin - 1; i++) p[i] = (const char *)j->in[i] + r * step;
        p[j->nin - 1] = j->in[j->nin - 1];          /* the bias row, reused */
        j->k(p, (char *)j->out + r * step, j->cols, j->op);
    }
}

static void gx_job_init(gx_job *j, int op, int dt, const void *const *in, void *out, gx_intp cols)
{
    j->k = gx_active[op][dt];
    j->op = op;
    j->nin = gx_nin_table[op];
    j->isz = gx_itemsize(dt);
    for (int i = 0; i < 3; i++) j->in[i] = i < j->nin ? in[i] : NULL;
    j->out = out;
    j->cols = cols;
}

void gx_apply(int op, int dt, const void *const *in, void *out, gx_intp n)
{
    gx_init_tables();
    int nt = gx_threads_for(op, n);
    if (nt <= 1) {
        gx_active[op][dt](in, out, n, op);
    } else {
        gx_job j;
        gx_job_init(&j, op, dt, in, out, 0);
        gx_pool_run(gx_run_flat, &j, n, gx_chunk, nt);
    }
    gx_clear_fp_flags();
}

void gx_apply_bias_rows(int op, int dt, const void *const *in, void *out,
                        gx_intp rows, gx_intp cols)
{
    gx_init_tables();
    gx_job j;
    gx_job_init(&j, op, dt, in, out, cols);
    /* whole rows per chunk, about gx_chunk elements */
    const gx_intp chunk = gx_chunk;
    gx_intp chunk_rows = cols >= chunk ? 1 : chunk / cols;
    gx_pool_run(gx_run_rows, &j, rows, chunk_rows, gx_threads_for(op, rows * cols));
    gx_clear_fp_flags();
}

/* ------------------------------------------------- the capsule's table -- */

static int gx_code_ok(ptrdiff_t code)
{
    return GX_IN_TABLE(gx_loop_op(code)) && code >= 0;
}

static gx_capi_kernel gx_capi_kernel_for(ptrdiff_t code)
{
    gx_init_tables();
    return gx_code_ok(code) ? (gx_capi_kernel)gx_active[gx_loop_op(code)][gx_loop_dt(code)] : NULL;
}

static int gx_capi_op(ptrdiff_t code) { return gx_code_ok(code) ? (int)gx_loop_op(code) : -1; }
static int gx_capi_nin(ptrdiff_t code) { return gx_code_ok(code) ? gx_nin_table[gx_loop_op(code)] : 0; }
static size_t gx_capi_itemsize(ptrdiff_t code) { return gx_itemsize(gx_loop_dt(code)); }
static ptrdiff_t gx_capi_threshold(ptrdiff_t code)
{
    return gx_get_op_parallel_threshold(gx_loop_op(code));
}

const gx_capi gx_capi_table = {
    GX_CAPI_VERSION, gx_capi_kernel_for, gx_capi_op, gx_capi_nin, gx_capi_itemsize, gx_capi_threshold,
};
