"""Big arrays: 64-bit indices throughout.  Not a CI test: it needs
~17 GB of memory (a float32 input and output of 2^31 + 17 elements each).

    PYTHONPATH=. python bench/big_array.py            # refuses if < 18 GiB are free
    PYTHONPATH=. python bench/big_array.py --n 100000 # the same checks, small (smoke test)

The input is filled with -1.0 except at known indices -- the start, both sides
of 2^31 (where a 32-bit index wraps), the middle, the end, and random ones --
which get distinct values.  The output is filled with NaN before each call,
so an element that is never written shows up.  For fast_gelu (exact and tanh)
and relu it checks: the known indices against the float64 reference twin
(exact GELU <= 1 ULP, tanh <= 2 ULP, ReLU exact), a random sample of the other
elements equal to the result at -1.0, and no NaN left anywhere (every element
written).  Finally an in-place relu on the stride-3 view x[::3] (the gathered
path, byte offsets past 8 GiB) changes exactly the elements it should.
"""
import argparse
import platform
import sys
import time

import numpy as np

import gelu_ext
from gelu_ext import testing

GIB = 1 << 30
CHUNK = 1 << 26


def _mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _no_nan_anywhere(a):
    """True if no element is NaN, scanned in chunks (no 2 GB temporary)."""
    return not any(np.isnan(a[i:i + CHUNK]).any() for i in range(0, a.size, CHUNK))


def _known_indices(n, rng):
    two31 = 1 << 31
    fixed = [0, 1, 2, 63, 64, 511, 512, 513, n // 2 - 1, n // 2, n // 2 + 1,
             n - 18, n - 17, n - 16, n - 3, n - 2, n - 1,
             two31 - 2, two31 - 1, two31, two31 + 1, two31 + 16,
             (1 << 32) // 4 - 1, (1 << 32) // 4]
    fixed = [i for i in fixed if 0 <= i < n]
    return np.unique(np.concatenate([np.array(fixed, np.int64), rng.integers(0, n, 64)]))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=(1 << 31) + 17, help="elements (default 2^31 + 17)")
    p.add_argument("--force", action="store_true", help="run even if free memory looks short")
    args = p.parse_args(argv)
    n = args.n
    need = 2 * n * 4 + GIB // 2
    avail = _mem_available()
    print(f"big_array: n = {n} float32 elements ({n * 4 / GIB:.2f} GiB per array, "
          f"{need / GIB:.1f} GiB needed; {'unknown' if avail is None else f'{avail / GIB:.1f} GiB'} available)")
    print(f"big_array: gelu_ext {gelu_ext.__version__}, numpy {np.__version__}, "
          f"Python {platform.python_version()}, isa {gelu_ext._ufuncs._get_isa()}, "
          f"{gelu_ext.get_num_threads()} threads, {platform.machine()}")
    if avail is not None and avail < need and not args.force:
        print("big_array: not enough free memory; free some or pass --force", file=sys.stderr)
        return 2

    rng = np.random.default_rng(31)
    t_all = time.perf_counter()
    x = np.empty(n, np.float32)
    x.fill(-1.0)
    idx = _known_indices(n, rng)
    vals = rng.normal(scale=3.0, size=idx.size).astype(np.float32)
    vals[:6] = [0.0, -0.0, 2.0, -5.5, 38.0, -9.25]       # a few exact/special-ish ones
    x[idx] = vals
    others = rng.integers(0, n, 4096)
    others = others[~np.isin(others, idx)]
    out = np.empty(n, np.float32)

    ok = True
    jobs = [  # (name, call writing out, function as gelu_ext.testing names it, same for a small array)
        ("fast_gelu", lambda: gelu_ext.fast_gelu(x, out=out), "gelu_erf", gelu_ext.fast_gelu),
        ("fast_gelu tanh", lambda: gelu_ext.fast_gelu(x, "tanh", out=out), "gelu_tanh",
         lambda v: gelu_ext.fast_gelu(v, "tanh")),
        ("relu", lambda: gelu_ext.relu(x, out=out), "relu", gelu_ext.relu),
    ]
    for name, run, func, small in jobs:
        out.fill(np.nan)
        t0 = time.perf_counter()
        res = run()
        secs = time.perf_counter() - t0
        assert res is out
        got = out[idx]
        x64 = x[idx].astype(np.float64)
        want = testing.REFERENCE[func](x64)
        errs = testing.ulp_error(got, want, np.float32)
        # the bound in ULPs of each element (gelu_ext.testing.BOUNDS; relative in the tanh tail)
        bound = testing.allowed_error(func, np.float32, x64, want) / testing.ulp(want, np.float32)
        bg = small(np.array([-1.0], np.float32))[0]
        bg_ok = bool(np.all(out[others] == bg))
        written = _no_nan_anywhere(out)
        good = bool(np.all(errs <= bound)) and bg_ok and written
        ok &= good
        worst = int(np.argmax(errs))
        print(f"{name:<15} {secs:7.2f} s  {n / secs / 1e9:5.2f} Gelem/s  known indices: "
              f"{idx.size}, max err {errs.max():.2f} ULP (bound {bound[worst]:.3g} there) "
              f"[i={int(idx[worst])}]  sample of {others.size} others == f(-1): {bg_ok}  "
              f"every element written: {written}  -> {'OK' if good else 'FAIL'}")
        if not good:
            bad = np.flatnonzero(errs > bound)[:8]
            for j in bad:
                print(f"    i={int(idx[j])} x={x[idx[j]]!r} got={got[j]!r} want={want[j]!r}")
    out = None              # free 8 GiB before the strided pass

    # strided, in place, byte offsets beyond 8 GiB: the gather/scatter loop
    before = x[idx].copy()
    t0 = time.perf_counter()
    v = x[::3]
    gelu_ext.relu(v, out=v)
    secs = time.perf_counter() - t0
    on = idx % 3 == 0
    want = np.where(on, testing.ref_relu(before), before)
    good = bool(np.array_equal(x[idx], want))
    ok &= good
    print(f"{'relu x[::3]':<15} {secs:7.2f} s  in place over {v.size} elements; known indices on "
          f"the view: {int(on.sum())}, off it: {int((~on).sum())}, all as expected: {good}  "
          f"-> {'OK' if good else 'FAIL'}")
    print(f"big_array: {'OK' if ok else 'FAIL'}: every check passed at n = {n} "
          f"(last index {n - 1}) in {time.perf_counter() - t_all:.0f} s" if ok else
          f"big_array: FAIL at n = {n}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
