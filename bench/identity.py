"""Where the float32 kernels return an op's identity: every float32 x >= xg.

    python bench/identity.py [--ops gelu_erf_grad,gelu_tanh_grad]

From x = xg on (src/tables/fit_lut.py, identity_from; per table, in the
generated headers: the exact and tanh GELU derivatives) the split driver
returns g for the derivative times g, where the general formula ran before
(src/kernels/gx_k_split.h; the scalar twins, src/math/gx_lut.h, likewise).
That gives the same bits if the derivative is within 2^-25 (half a float32
ULP, relative, at worst) of 1 there: the double result times g then rounds
to g for every float32 g.  This checks it for every float32 x >= xg, +inf
included, on the float64 kernels (within ~1.3 ULP of double): |f'(x) - 1|
below 2^-25 - 2^-40.  The float32 kernels' own bits against the general
formula's were checked on the build before xg, for every such x and three
sets of g (1, 2 - 2^-23 and random bit patterns); bench/ab.py
--every-float32 compares two builds that way.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "tables"))
import fit_lut  # noqa: E402  (identity_from and the table specs)

import gelu_ext._ufuncs as U  # noqa: E402

UFUNC = {"gx_lut_erf_grad": "gelu_erf_grad", "gx_lut_tanh_grad": "gelu_tanh_grad",
         "gx_lut_silu": "silu", "gx_lut_silu_grad": "silu_grad",
         "gx_lut_quick": "quick_gelu", "gx_lut_quick_grad": "quick_gelu_grad"}
BOUND = 2.0 ** -25 - 2.0 ** -40


def worst(name, xg):
    """max over every float32 x >= xg of |f'(x) - 1| (or, for a forward op,
    |f(x)/x - 1|), float64"""
    f = getattr(U, name)
    lo = int(np.float32(xg).view(np.uint32))
    top = int(np.float32(np.inf).view(np.uint32))
    w = 0.0
    for b0 in range(lo, top + 1, 1 << 24):
        x = np.arange(b0, min(b0 + (1 << 24), top + 1), dtype=np.uint32).view(np.float32).astype(np.float64)
        with np.errstate(invalid="ignore"):
            d = f(x, np.ones_like(x)) - 1 if f.nin == 2 else np.where(np.isinf(x), 1.0, f(x) / x) - 1
        w = max(w, float(np.max(np.abs(d))))
    return w


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", help="comma-separated ufuncs (default: every table with an identity)")
    args = p.parse_args(argv)
    want = args.ops.split(",") if args.ops else None
    bad = 0
    for table, fam, q, dq, grad in fit_lut.SPECS:
        xg = fit_lut.identity_from(fam, q, dq, grad)
        name = UFUNC.get(table)
        if xg == float("inf") or (want and name not in want):
            continue
        w = worst(name, xg)
        ok = w < BOUND
        bad += not ok
        print(f"{name:18s} x >= {xg:<6g} max deviation from the identity {w:.3e} "
              f"({w / 2.0 ** -25:.4f} of 2^-25): {'ok' if ok else 'FAILS'}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
