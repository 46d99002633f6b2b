/*
 * bits_harness.c -- the output bits of every kernel, so that two builds (the
 * x86-64 one on each ISA path, the aarch64 one under qemu) can be compared
 * bit for bit.  Driven by bench/aarch64.sh; plain C over gx_apply, no Python.
 *
 *   bits_harness isas
 *       the ISA paths (gx_isas.h) this CPU runs, one a line: its name and its
 *       float32 table scheme (gx_isa_f32_pieces: 32 or 8 pieces).  Paths of
 *       one scheme give the same bits; the two schemes differ in last bits
 *       of the float32 table ops (gx_lut8.h), so bench/aarch64.sh compares
 *       each path with the first x86 path of its scheme
 *   bits_harness run DIR [--n N] [--isa NAME] [--amd 0|1: the plain_loads choice] [--ops a,b] [--dtypes a,b]
 *                        [--threads T]
 *       every op x dtype (float32, float64, float16, bfloat16) over the
 *       deterministic inputs below; writes DIR/OP.DTYPE.bin (the output bits,
 *       little-endian as both targets are) and prints one line per op x dtype
 *       with an FNV-1a hash of them.  --threads T: every call of 2 chunks or
 *       more runs on T threads (the pool, src/runtime/gx_pool.c; chunks of 2048,
 *       the threshold 4096 elements), and the last line counts the pool's
 *       threaded calls and the items its workers computed (bench/windows.sh:
 *       the Windows threads under wine)
 *   bits_harness compare REF DIR... [--n N] [--ops ...] [--dtypes ...]
 *       one line per op x dtype, one column per DIR (up to 7; the column is
 *       named by the DIR's last component): "identical" (every bit), "NaN~ k"
 *       (k outputs are NaN in both but with another sign or payload: no
 *       contract fixes those -- gelu_ext.testing.assert_same_bits -- and the
 *       x86 paths differ among themselves there; x86 makes an invalid
 *       operation's NaN negative, aarch64 positive), or "DIFFER k", then the
 *       first difference (inputs and both outputs, in hex); exit status 1 on
 *       any DIFFER (--strict 1: on any bit)
 *   bits_harness softfma [--n N]
 *       gx_soft_fma and gx_soft_fmaf (src/math/gx_soft_fma.h, what a mingw-w64
 *       build's scalar code uses) against this C library's fma and fmaf on
 *       N triples of each (random bits, cancellations a b ~ -c, subnormal
 *       and huge results); exit status 1 on any difference.  Meaningful
 *       where the library's are correctly rounded (glibc)
 *   bits_harness exhaustive OP [--isa NAME] [--chunk-bits B] [--from C] [--to C]
 *       float32 OP over every 2^32 input, one hash per 2^B consecutive bit
 *       patterns (chunks C in [from, to)), then the time taken
 *
 * The inputs (n per input array; the same on every machine: integer
 * arithmetic, exact scalings and roundings only -- no libm, whose last bits
 * may differ between targets).  float32 and float64: blocks of 4096 elements,
 * each drawn from one distribution in turn, so that the split driver
 * (src/kernels/gx_k_split.h) sees both mostly-table and mostly-general blocks:
 *   2 N(0,1) (Irwin-Hall: the sum of 12 uniforms), uniform +-40, |x| log-
 *   uniform from 2^-116 (e^-80) to 2^7 with either sign, the negative tail
 *   [-45, -3], the table edges +-[4, 9], subnormals and the smallest normals,
 *   raw bit patterns (every class, NaN payloads included), and a block of the
 *   specials below;
 * and 1 in 64 elements of every block is one of the specials: +-0, +-inf,
 * quiet and signalling NaN of either sign, +-1e308, +-FLT_MAX, the smallest
 * subnormal and normal of each type, 1 ulp below 1, the table limits...
 * float16 and bfloat16: x runs through all 65536 bit patterns (a permutation
 * per 65536 elements); the other inputs are drawn as for float32, rounded.
 * Second inputs (g, up, b) come from their own seeds; b is mostly small
 * (uniform +-2) so that x + b stays where x was.
 */
#include "dispatch/gx_api.h"
#include "kernels/gx_half.h"
#include "runtime/gx_pool.h"
#include "math/gx_soft_fma.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const DT_NAME[GX_NDT] = {"float32", "float64", "float16", "bfloat16"};

/* ------------------------------------------------------------- inputs -- */

/* splitmix64: one 64-bit value per call, the same everywhere */
static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* uniform in [0, 1), 53 bits: exact */
static double unif(uint64_t *s) { return (double)(next64(s) >> 11) * 0x1p-53; }

static double from_bits64(uint64_t u) { double d; memcpy(&d, &u, sizeof d); return d; }
static float from_bits32(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
static uint64_t gx_bits_of_neg(double d) { uint64_t u; d = -d; memcpy(&u, &d, sizeof u); return u; }
static uint32_t gx_bits_of_neg32(float f) { uint32_t u; f = -f; memcpy(&u, &f, sizeof u); return u; }

/* special k: 0 and *v, or 1 and the bits of a float32 / float64 NaN in *bits */
static int special(int k, int dt, double *v, uint64_t *bits)
{
    static const double tab[] = {
        0.0, -0.0, INFINITY, -INFINITY, 1e308, -1e308, FLT_MAX, -FLT_MAX,
        0x1p-1074, -0x1p-1074, 0x1p-1022, -0x1p-1022, 0x1p-149, -0x1p-149, 0x1p-126, -0x1p-126,
        0x1p-24, -0x1p-24, 0x1p-14, -0x1p-14, 1.0, -1.0, 0.5, -0.5, 0x1.fffffffffffffp-1,
        -0x1.fffffep-1, 4.5, -4.5, 8.0, -8.0, 4.7, -4.7, 5.0, -5.0, 6.0, -6.0, 24.0, -24.0,
        40.0, -40.0, 120.0, -120.0, 800.0, -800.0, -0.7518, 65504.0, -65504.0, 3.3895313892515355e38,
    };
    const int nt = (int)(sizeof tab / sizeof tab[0]);
    k %= nt + 4;
    if (k < nt) {
        *v = tab[k];
        return 0;
    }
    /* NaNs: quiet and signalling, either sign, with a payload (as bits:
     * a conversion would quieten a signalling one) */
    static const uint64_t nan64[4] = {0x7ff8000000000000u, 0xfff8000000000001u,
                                      0x7ff0000000000123u, 0xfff4000000abcdefu};
    static const uint32_t nan32[4] = {0x7fc00000u, 0xffc00001u, 0x7f800123u, 0xffa0abcdu};
    *bits = dt == GX_F64 ? nan64[k - nt] : nan32[k - nt];
    return 1;
}

/* one value of distribution d: 0 and a double in *v (float32 rounds it),
 * or 1 and the float32 / float64 bits in *bits (raw patterns, NaNs) */
static int draw(int d, int dt, uint64_t *s, double *v, uint64_t *bits)
{
    switch (d) {
    case 0: {                           /* 2 N(0,1), Irwin-Hall */
        double a = 0.0;
        for (int k = 0; k < 12; k++) a += unif(s);
        *v = 2.0 * (a - 6.0);
        return 0;
    }
    case 1: *v = 80.0 * unif(s) - 40.0; return 0;
    case 2: {                           /* |x| = 2^e (1 + m), e in [-116, 6] */
        uint64_t r = next64(s);
        double m = 1.0 + (double)(r >> 12) * 0x1p-52;
        int e = (int)((r & 0xff) % 123) - 116;
        *v = ldexp(m, e);               /* exact */
        if (r & 0x100) *v = -*v;
        return 0;
    }
    case 3: *v = -3.0 - 42.0 * unif(s); return 0;
    case 4:
        *v = 4.0 + 5.0 * unif(s);
        if (next64(s) & 1) *v = -*v;
        return 0;
    case 5: {                           /* subnormals and the smallest normals */
        uint64_t r = next64(s);
        *bits = dt == GX_F64 ? (r & 0x800fffffffffffffu) | ((r >> 20) & 1 ? 0x0010000000000000u : 0)
                             : (r & 0x807fffffu) | ((r >> 40) & 1 ? 0x00800000u : 0);
        return 1;
    }
    case 6: {                           /* raw bits: every class */
        uint64_t r = next64(s);
        *bits = dt == GX_F64 ? r : (uint32_t)r;
        return 1;
    }
    case 7: return special((int)(next64(s) % 1024), dt, v, bits);
    default: *v = 4.0 * unif(s) - 2.0; return 0;     /* b: small */
    }
}

/* n elements of dtype dt for one input role (seed), written to p.
 * roles: 0 x, 1 g, 2 up, 3 b */
static void fill(void *p, int dt, gx_intp n, int role)
{
    uint64_t s = 0x5eed0000u + 7919u * (uint64_t)role;
    for (gx_intp i = 0; i < n; i++) {
        const int blk = (int)(i / 4096);
        int d = (blk + 3 * role) % 8;
        if (role == 3 && blk % 4 != 3) d = 8;    /* b: small, mostly */
        if (next64(&s) % 64 == 0) d = 7;         /* a special in every block */
        if ((dt == GX_F16 || dt == GX_BF16) && role == 0) {
            /* all 65536 patterns: 40503 is odd, so i -> 40503 i is a permutation */
            ((uint16_t *)p)[i] = (uint16_t)(40503u * (uint32_t)(i & 0xffff) + (uint32_t)(i >> 16));
            continue;
        }
        double v = 0.0;
        uint64_t bits = 0;
        const int raw = draw(d, dt == GX_F64 ? GX_F64 : GX_F32, &s, &v, &bits);
        if (dt == GX_F64) {
            ((double *)p)[i] = raw ? from_bits64(bits) : v;
            continue;
        }
        const float f = raw ? from_bits32((uint32_t)bits) : (float)v;
        switch (dt) {
        case GX_F32: ((float *)p)[i] = f; break;
        case GX_F16: ((uint16_t *)p)[i] = gx_float_to_half(f); break;
        default: ((uint16_t *)p)[i] = gx_float_to_bfloat16(f); break;
        }
    }
}

/* the role of each input of op: x, then g / b (gx_ops.h), or (gate, up, g) */
static int role_of(int op, int k)
{
    const int kind = gx_op_kind(op), nin = gx_nin(op);
    if (k == 0) return 0;
    if (kind == GX_GATE || kind == GX_DGATE) return k == 1 ? 2 : 1;
    if (kind == GX_BIAS && k == nin - 1) return 3;
    return 1;
}

static size_t itemsize(int dt) { return dt == GX_F64 ? 8 : (dt == GX_F32 ? 4 : 2); }

static uint64_t fnv1a(const void *p, size_t bytes, uint64_t h)
{
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < bytes; i++) h = (h ^ c[i]) * 0x100000001b3u;
    return h;
}
#define FNV0 0xcbf29ce484222325u

/* ---------------------------------------------------------- arguments -- */

static int in_list(const char *list, const char *name)
{
    if (!list) return 1;
    size_t L = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == L && !strncmp(p, name, L)) return 1;
        p += k + (e != NULL);
    }
    return 0;
}

/* an ISA path by its name in this build's list (gx_isas.h) */
static int isa_by_name(const char *name)
{
    for (int i = 0; i < gx_nisa(); i++)
        if (!strcmp(name, gx_isa_name(i))) return i;
    fprintf(stderr, "bits_harness: --isa must be one of");
    for (int i = 0; i < gx_nisa(); i++) fprintf(stderr, " %s", gx_isa_name(i));
    fprintf(stderr, " (this build's paths), got '%s'\n", name);
    exit(2);
}

typedef struct {
    gx_intp n;
    const char *ops, *dtypes;
    int isa, amd, chunk_bits, strict, threads;
    long from, to;
} opts;

static void parse(int argc, char **argv, int first, opts *o)
{
    o->n = 1 << 18;
    o->ops = o->dtypes = NULL;
    o->isa = o->amd = -1;
    o->threads = 0;
    o->chunk_bits = 24;
    o->strict = 0;
    o->from = 0;
    o->to = -1;
    for (int i = first; i < argc; i++) {
        if (i + 1 >= argc) {
            fprintf(stderr, "bits_harness: %s needs a value\n", argv[i]);
            exit(2);
        }
        const char *a = argv[i], *v = argv[++i];
        if (!strcmp(a, "--n")) o->n = (gx_intp)strtoll(v, NULL, 0);
        else if (!strcmp(a, "--ops")) o->ops = v;
        else if (!strcmp(a, "--dtypes")) o->dtypes = v;
        else if (!strcmp(a, "--isa")) o->isa = isa_by_name(v);
        else if (!strcmp(a, "--amd")) o->amd = atoi(v);
        else if (!strcmp(a, "--threads")) o->threads = atoi(v);
        else if (!strcmp(a, "--chunk-bits")) o->chunk_bits = atoi(v);
        else if (!strcmp(a, "--strict")) o->strict = atoi(v);
        else if (!strcmp(a, "--from")) o->from = atol(v);
        else if (!strcmp(a, "--to")) o->to = atol(v);
        else {
            fprintf(stderr, "bits_harness: unknown option '%s'\n", a);
            exit(2);
        }
    }
    if (o->n < 1) {
        fprintf(stderr, "bits_harness: --n must be >= 1\n");
        exit(2);
    }
}

static void set_paths(const opts *o)
{
    if (o->isa >= 0 && gx_set_isa(o->isa) != 0) {
        fprintf(stderr, "bits_harness: this CPU (or build) does not run the %s path\n", gx_isa_name(o->isa));
        exit(2);
    }
    if (o->amd >= 0) gx_set_plain_loads(o->amd);
    if (o->threads > 0) {
        gx_set_num_threads(o->threads);
        gx_set_chunk(2048);
        gx_set_parallel_threshold(4096);
    }
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "bits_harness: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

/* inputs[k] of op in dt, n each (freed by the caller) */
static void make_inputs(int op, int dt, gx_intp n, void *in[3])
{
    for (int k = 0; k < 3; k++) in[k] = NULL;
    for (int k = 0; k < gx_nin(op); k++) {
        in[k] = xmalloc((size_t)n * itemsize(dt));
        fill(in[k], dt, n, role_of(op, k));
    }
}

static char *path_of(const char *dir, int op, int dt)
{
    size_t L = strlen(dir) + 64;
    char *p = xmalloc(L);
    snprintf(p, L, "%s/%s.%s.bin", dir, gx_op_name(op), DT_NAME[dt]);
    return p;
}

/* -------------------------------------------------------------- modes -- */

static int cmd_run(const char *dir, const opts *o)
{
    set_paths(o);
    printf("# isa %s, plain loads %d, n %ld\n", gx_isa_name(gx_get_isa()), gx_set_plain_loads(-1), (long)o->n);
    for (int op = 0; op < gx_nops(); op++) {
        if (!in_list(o->ops, gx_op_name(op))) continue;
        for (int dt = 0; dt < GX_NDT; dt++) {
            if (!in_list(o->dtypes, DT_NAME[dt])) continue;
            void *in[3];
            make_inputs(op, dt, o->n, in);
            void *out = xmalloc((size_t)o->n * itemsize(dt));
            gx_apply(op, dt, (const void *const *)in, out, o->n);
            const size_t bytes = (size_t)o->n * itemsize(dt);
            char *path = path_of(dir, op, dt);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(out, 1, bytes, f) != bytes || fclose(f) != 0) {
                fprintf(stderr, "bits_harness: cannot write %s: %s\n", path, strerror(errno));
                return 2;
            }
            printf("%-20s %-8s %016llx\n", gx_op_name(op), DT_NAME[dt],
                   (unsigned long long)fnv1a(out, bytes, FNV0));
            free(path);
            free(out);
            for (int k = 0; k < 3; k++) free(in[k]);
        }
    }
    if (o->threads > 0) {
        long long st[GX_POOL_NSTATS];
        gx_pool_stats(st, 0);
        printf("# pool: threads %d, threaded calls %lld, worker joins %lld, items by workers %lld of %lld, "
               "stalls %lld\n", gx_get_num_threads(), st[GX_POOL_JOBS], st[GX_POOL_HELPED],
               st[GX_POOL_WORKER_ITEMS], st[GX_POOL_OWNER_ITEMS] + st[GX_POOL_WORKER_ITEMS], st[GX_POOL_STALLS]);
    }
    return 0;
}

static uint64_t elem_bits(const void *p, int dt, gx_intp i)
{
    switch (dt) {
    case GX_F64: { uint64_t u; memcpy(&u, (const char *)p + 8 * i, 8); return u; }
    case GX_F32: { uint32_t u; memcpy(&u, (const char *)p + 4 * i, 4); return u; }
    default: { uint16_t u; memcpy(&u, (const char *)p + 2 * i, 2); return u; }
    }
}

static double elem_value(uint64_t u, int dt)
{
    switch (dt) {
    case GX_F64: return from_bits64(u);
    case GX_F32: return (double)from_bits32((uint32_t)u);
    case GX_F16: return (double)gx_half_to_float((uint16_t)u);
    default: return (double)gx_bfloat16_to_float((uint16_t)u);
    }
}

static int is_nan(uint64_t u, int dt)
{
    switch (dt) {
    case GX_F64: return (u & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
    case GX_F32: return (u & 0x7fffffffu) > 0x7f800000u;
    case GX_F16: return (u & 0x7fffu) > 0x7c00u;
    default: return (u & 0x7fffu) > 0x7f80u;
    }
}

static void *read_all(const char *path, size_t bytes)
{
    void *p = xmalloc(bytes);
    FILE *f = fopen(path, "rb");
    if (!f || fread(p, 1, bytes, f) != bytes || fgetc(f) != EOF) {
        fprintf(stderr, "bits_harness: %s is missing or not %zu bytes\n", path, bytes);
        exit(2);
    }
    fclose(f);
    return p;
}

/* the last path component of a directory, as a column label */
static const char *label_of(const char *dir)
{
    const char *e = dir + strlen(dir), *b;
    while (e > dir && e[-1] == '/') e--;
    for (b = e; b > dir && b[-1] != '/'; b--) {}
    static char buf[8][24];
    static int k = 0;
    char *l = buf[k++ % 8];
    snprintf(l, sizeof buf[0], "%.*s", (int)(e - b), b);
    return l;
}

static int cmd_compare(int nd, char **dirs, const opts *o)
{
    long ndiff_all = 0, nan_all = 0;
    int pairs = 0, bad_pairs = 0, nan_pairs = 0;
    printf("%-20s %-8s", "op (vs the first)", "dtype");
    for (int d = 1; d < nd; d++) printf(" %13s", label_of(dirs[d]));
    printf("\n");
    for (int op = 0; op < gx_nops(); op++) {
        if (!in_list(o->ops, gx_op_name(op))) continue;
        for (int dt = 0; dt < GX_NDT; dt++) {
            if (!in_list(o->dtypes, DT_NAME[dt])) continue;
            const size_t bytes = (size_t)o->n * itemsize(dt);
            char *pa = path_of(dirs[0], op, dt);
            void *a = read_all(pa, bytes);
            char detail[8][400];
            int ndet = 0;
            printf("%-20s %-8s", gx_op_name(op), DT_NAME[dt]);
            for (int d = 1; d < nd; d++) {
                char *pb = path_of(dirs[d], op, dt);
                void *b = read_all(pb, bytes);
                long n_diff = 0, nan_only = 0;
                gx_intp first = -1;
                for (gx_intp i = 0; i < o->n; i++) {
                    uint64_t ua = elem_bits(a, dt, i), ub = elem_bits(b, dt, i);
                    if (ua == ub) continue;
                    const int nan2 = is_nan(ua, dt) && is_nan(ub, dt);
                    n_diff++;
                    nan_only += nan2;
                    if (first < 0 && (o->strict || !nan2)) first = i;
                }
                pairs++;
                if (n_diff == 0) {
                    printf(" %13s", "identical");
                } else if (n_diff == nan_only && !o->strict) {
                    /* NaN for NaN, another sign or payload: no contract says which
                     * (gelu_ext.testing.assert_same_bits), and the x86 paths
                     * differ among themselves; counted, not failed */
                    char cell[32];
                    snprintf(cell, sizeof cell, "NaN~ %ld", n_diff);
                    printf(" %13s", cell);
                    nan_pairs++;
                    nan_all += n_diff;
                } else {
                    char cell[32];
                    snprintf(cell, sizeof cell, "DIFFER %ld", n_diff - (o->strict ? 0 : nan_only));
                    printf(" %13s", cell);
                    bad_pairs++;
                    ndiff_all += n_diff - (o->strict ? 0 : nan_only);
                    void *in[3];
                    make_inputs(op, dt, o->n, in);
                    int w = snprintf(detail[ndet], sizeof detail[0], "    %s: %ld of %ld differ (%ld of them NaN for NaN); first at %ld:",
                                     label_of(dirs[d]), n_diff, (long)o->n, nan_only, (long)first);
                    for (int k = 0; k < gx_nin(op) && w < 300; k++) {
                        uint64_t u = elem_bits(in[k], dt, first);
                        w += snprintf(detail[ndet] + w, sizeof detail[0] - (size_t)w, " in%d=%#llx (%.9g)",
                                      k, (unsigned long long)u, elem_value(u, dt));
                    }
                    uint64_t ua = elem_bits(a, dt, first), ub = elem_bits(b, dt, first);
                    if (w < 320)
                        snprintf(detail[ndet] + w, sizeof detail[0] - (size_t)w, " -> %#llx (%.9g) vs %#llx (%.9g)",
                                 (unsigned long long)ua, elem_value(ua, dt), (unsigned long long)ub, elem_value(ub, dt));
                    ndet += ndet < 7;
                    for (int k = 0; k < 3; k++) free(in[k]);
                }
                free(b);
                free(pb);
            }
            printf("\n");
            for (int k = 0; k < ndet; k++) printf("%s\n", detail[k]);
            free(a);
            free(pa);
        }
    }
    printf("# %d comparisons against %s (%ld outputs each): %d identical, %d with NaN for NaN only "
           "(%ld outputs: another NaN sign or payload; --strict 1 fails them), %d differ (%ld outputs)\n",
           pairs, label_of(dirs[0]), (long)o->n, pairs - bad_pairs - nan_pairs, nan_pairs, nan_all,
           bad_pairs, ndiff_all);
    return bad_pairs != 0;
}

static int cmd_exhaustive(const char *name, opts *o)
{
    int op = -1;
    for (int k = 0; k < gx_nops(); k++)
        if (!strcmp(gx_op_name(k), name)) op = k;
    if (op < 0 || gx_nin(op) != 1) {
        fprintf(stderr, "bits_harness: exhaustive takes a one-input op, got '%s'\n", name);
        return 2;
    }
    if (o->chunk_bits < 10 || o->chunk_bits > 32) {
        fprintf(stderr, "bits_harness: --chunk-bits must be in [10, 32]\n");
        return 2;
    }
    set_paths(o);
    const long nchunks = 1L << (32 - o->chunk_bits);
    const long to = o->to < 0 || o->to > nchunks ? nchunks : o->to;
    const gx_intp m = (gx_intp)1 << o->chunk_bits;
    uint32_t *x = xmalloc((size_t)m * 4), *y = xmalloc((size_t)m * 4);
    const time_t t0 = time(NULL);       /* whole seconds (ISO C, so Windows too): runs take minutes */
    printf("# %s float32, isa %s, chunks of 2^%d, [%ld, %ld)\n", name, gx_isa_name(gx_get_isa()),
           o->chunk_bits, o->from, to);
    for (long c = o->from; c < to; c++) {
        for (gx_intp i = 0; i < m; i++) x[i] = (uint32_t)(((uint64_t)c << o->chunk_bits) + (uint64_t)i);
        const void *in[1] = {x};
        gx_apply(op, GX_F32, in, y, m);
        printf("%ld %016llx\n", c, (unsigned long long)fnv1a(y, (size_t)m * 4, FNV0));
        fflush(stdout);
    }
    printf("# %.0f s\n", difftime(time(NULL), t0));
    free(x);
    free(y);
    return 0;
}

/* a double of random sign and mantissa, its biased exponent in [lo, hi] */
static double rand_exp64(uint64_t *s, int lo, int hi)
{
    uint64_t u = next64(s), e = (uint64_t)(lo + (int)(next64(s) % (uint64_t)(hi - lo + 1)));
    return from_bits64((u & 0x800fffffffffffffu) | e << 52);
}
static float rand_exp32(uint64_t *s, int lo, int hi)
{
    uint32_t u = (uint32_t)next64(s), e = (uint32_t)(lo + (int)(next64(s) % (uint64_t)(hi - lo + 1)));
    return from_bits32((u & 0x807fffffu) | e << 23);
}

static int cmd_softfma(const opts *o)
{
#if defined(__SIZEOF_INT128__)
    uint64_t s = 0x5eed0f3a;
    long bad = 0, bad32 = 0;
    for (gx_intp i = 0; i < o->n; i++) {
        double a, b, c;
        float x, y, z;
        switch (i % 7) {
        case 0:     /* any bits: NaN, inf, zero, subnormal included */
            a = from_bits64(next64(&s)); b = from_bits64(next64(&s)); c = from_bits64(next64(&s));
            x = from_bits32((uint32_t)next64(&s)); y = from_bits32((uint32_t)next64(&s));
            z = from_bits32((uint32_t)next64(&s));
            break;
        case 1:     /* exponents close: every alignment and carry */
            a = rand_exp64(&s, 1000, 1040); b = rand_exp64(&s, 1000, 1040); c = rand_exp64(&s, 990, 1070);
            x = rand_exp32(&s, 110, 140); y = rand_exp32(&s, 110, 140); z = rand_exp32(&s, 100, 160);
            break;
        case 2:     /* cancellation: c = -(a b) rounded, nudged */
            a = rand_exp64(&s, 900, 1100); b = rand_exp64(&s, 900, 1100);
            c = from_bits64(gx_bits_of_neg(a * b) + (next64(&s) % 5) - 2);
            x = rand_exp32(&s, 100, 150); y = rand_exp32(&s, 100, 150);
            z = from_bits32((uint32_t)gx_bits_of_neg32(x * y) + (uint32_t)(next64(&s) % 5) - 2u);
            break;
        case 3:     /* tiny products: subnormal results */
            a = rand_exp64(&s, 1, 540); b = rand_exp64(&s, 1, 540); c = rand_exp64(&s, 0, 60);
            x = rand_exp32(&s, 1, 70); y = rand_exp32(&s, 1, 70); z = rand_exp32(&s, 0, 20);
            break;
        case 4:     /* huge: results near and past the largest finite */
            a = rand_exp64(&s, 1500, 2046); b = rand_exp64(&s, 1500, 2046); c = rand_exp64(&s, 1900, 2046);
            x = rand_exp32(&s, 180, 254); y = rand_exp32(&s, 180, 254); z = rand_exp32(&s, 230, 254);
            break;
        case 5: {   /* double rounding: a b + c just off a midpoint of c's neighbours */
            /* z with an odd mantissa, x y = (half an ulp of z)(1 -+ 2^-46):
             * the sum rounded to double lands on the midpoint, and a
             * second rounding to float would go to the even neighbour */
            int k = 30 + (int)(next64(&s) % 200);
            uint32_t zm = (uint32_t)next64(&s) | 1u;
            z = from_bits32((zm & 0x807fffffu) | (uint32_t)k << 23);
            x = (next64(&s) & 1) ? 1.0f + 0x1p-23f : 1.0f - 0x1p-24f;
            y = ldexpf(1.0f - 0x1p-23f, k - 127 - 24) * ((next64(&s) & 1) ? 1.0f : -1.0f);
            a = (double)x; b = ldexp((double)y, -29); c = from_bits64(next64(&s) | 1u);
            c = from_bits64(((gx_bits_of_neg(c) & 0x800fffffffffffffu) | (uint64_t)(k + 896) << 52));
            break;
        }
        default:    /* c far below or far above a b: sticky bits, c dominant */
            a = rand_exp64(&s, 1000, 1050); b = rand_exp64(&s, 1000, 1050);
            c = rand_exp64(&s, (next64(&s) & 1) ? 700 : 1100, (next64(&s) & 1) ? 950 : 1300);
            x = rand_exp32(&s, 120, 130); y = rand_exp32(&s, 120, 130);
            z = rand_exp32(&s, (next64(&s) & 1) ? 60 : 150, (next64(&s) & 1) ? 100 : 200);
            break;
        }
        double r = gx_soft_fma(a, b, c), t = fma(a, b, c);
        float r32 = gx_soft_fmaf(x, y, z), t32 = fmaf(x, y, z);
        if (memcmp(&r, &t, 8) && !(isnan(r) && isnan(t))) {
            if (bad++ < 5) printf("fma(%a, %a, %a): ours %a, the library's %a\n", a, b, c, r, t);
        }
        if (memcmp(&r32, &t32, 4) && !(isnan(r32) && isnan(t32))) {
            if (bad32++ < 5) printf("fmaf(%a, %a, %a): ours %a, the library's %a\n", x, y, z, r32, t32);
        }
    }
    printf("# softfma: %ld of %ld fma and %ld of %ld fmaf differ from the C library's\n", bad, (long)o->n,
           bad32, (long)o->n);
    return bad || bad32;
#else
    (void)o;
    printf("# softfma: no 128-bit integers in this build (gx_soft_fma.h)\n");
    return 0;
#endif
}

int main(int argc, char **argv)
{
    opts o;
    if (argc >= 2 && !strcmp(argv[1], "isas")) {
        for (int i = 0; i < gx_nisa(); i++)
            if (gx_isa_cpu(i)) printf("%s %d\n", gx_isa_name(i), gx_isa_f32_pieces(i));
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "run")) {
        parse(argc, argv, 3, &o);
        return cmd_run(argv[2], &o);
    }
    if (argc >= 4 && !strcmp(argv[1], "compare")) {
        int nd = 0;
        while (2 + nd < argc && strncmp(argv[2 + nd], "--", 2)) nd++;
        if (nd < 2 || nd > 8) {
            fprintf(stderr, "bits_harness: compare takes 2 to 8 directories\n");
            return 2;
        }
        parse(argc, argv, 2 + nd, &o);
        return cmd_compare(nd, argv + 2, &o);
    }
    if (argc >= 2 && !strcmp(argv[1], "softfma")) {
        parse(argc, argv, 2, &o);
        return cmd_softfma(&o);
    }
    if (argc >= 3 && !strcmp(argv[1], "exhaustive")) {
        parse(argc, argv, 3, &o);
        return cmd_exhaustive(argv[2], &o);
    }
    fprintf(stderr, "usage: bits_harness isas | run DIR [opts] | compare REF DIR... [opts] | "
                    "softfma [--n N] | exhaustive OP [opts]  (see the top of bench/bits_harness.c)\n");
    return 2;
}
