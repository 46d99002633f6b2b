/*
 * gx_twins.c -- the scalar twins over arrays (gx_twins.h), for the tests.
 */
#include "gx_twins.h"
#include "math/gx_math.h"
#include "math/gx_lut.h"
#include "math/gx_lut64.h"
#include "math/gx_lut8.h"
#include "kernels/gx_split_rows.h"

/* What a row's table loop computes (GX_F32_SPLITS, from its NIN and GATE). */
enum { GX_TWIN_FWD = 0, GX_TWIN_GRAD = 1, GX_TWIN_GATE = 2 };
#define GX_TWIN8_ROW(KERNEL, NIN, LOOP, FULL, GATE, ONE16, TAB32, TAB8)     \
    { #KERNEL, &TAB8, (GATE) ? GX_TWIN_GATE : (NIN) == 2 ? GX_TWIN_GRAD : GX_TWIN_FWD },
static const struct { const char *kernel; const gx_lut8 *tab; int loop; } gx_twin8_rows[] = {
    GX_F32_SPLITS(GX_TWIN8_ROW)
};
#undef GX_TWIN8_ROW

/* What the float32 table loop of `kernel` computes on a path with the
 * 8-piece tables, and whether the table covers each x (else the general
 * formula takes it). */
int gx_twin8(const char *kernel, const float *x, const float *g, float *out,
             unsigned char *ok, gx_intp n)
{
    for (size_t r = 0; r < sizeof gx_twin8_rows / sizeof gx_twin8_rows[0]; r++) {
        if (strcmp(kernel, gx_twin8_rows[r].kernel) != 0)
            continue;
        const gx_lut8 *T = gx_twin8_rows[r].tab;
        const int loop = gx_twin8_rows[r].loop;
        for (gx_intp i = 0; i < n; i++) {
            out[i] = loop == GX_TWIN_GRAD ? gx_lut8_grad(T, x[i], g[i])
                   : (loop == GX_TWIN_GATE ? gx_lut8_fwd(T, x[i]) * g[i] : gx_lut8_fwd(T, x[i]));
            ok[i] = (unsigned char)gx_lut8_ok(T, x[i]);
        }
        return loop != GX_TWIN_FWD;
    }
    return -1;
}
