"""``python -m gelu_ext``: the article's numbers, computed here, and a quick
speed check against the NumPy baseline on this machine."""
import argparse
import math

import numpy as np

import gelu_ext
from gelu_ext import fast_gelu, relu
from gelu_ext.jobs._common import erf, int_at_least, medians, numpy_exact_gelu


def _numpy_exact_gelu():
    """(what it is, the call): the exact GELU a NumPy user can write."""
    erf_, scipy = erf()
    what = "scipy.special.erf" if scipy else "np.vectorize(math.erf)"
    return f"x/2 (1 + {what}(x/sqrt2))", lambda x: numpy_exact_gelu(x, erf_)


def _gelu_minimum():
    """Where GELU is smallest: a dense grid, then the grid point's neighbourhood."""
    x = np.linspace(-2.0, 0.0, 200_001)
    i = int(np.argmin(fast_gelu(x)))
    x = np.linspace(x[i - 1], x[i + 1], 200_001)
    y = fast_gelu(x)
    i = int(np.argmin(y))
    return float(x[i]), float(y[i])


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m gelu_ext [demo]",
                                description="GELU, tanh-GELU and ReLU at the article's points, and a quick speed check.")
    p.add_argument("--size", type=int_at_least(1), default=1 << 20,
                   help="elements for the speed check (default 2^20)")
    p.add_argument("--repeats", type=int_at_least(1), default=7,
                   help="timed repeats; the median is shown (default 7)")
    args = p.parse_args(argv)

    cfg = gelu_ext.show_config(print_=False)
    print(f"gelu_ext {cfg['version']} on {cfg['cpu']} ({cfg['machine']}), kernels: {cfg['isa']}, "
          f"threads: {cfg['num_threads']}, NumPy {cfg['numpy']}")
    print()
    pts = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0])
    print(f"{'x':>6} {'ReLU':>8} {'GELU':>12} {'tanh-GELU':>12} {'Phi(x)=GELU/x':>14}")
    g, gt, r = fast_gelu(pts), fast_gelu(pts, approximate="tanh"), relu(pts)
    for x, a, b, c in zip(pts, r, g, gt):
        phi = f"{b / x:14.4f}" if x != 0 else f"{'':>14}"
        print(f"{x:6.1f} {a:8.3f} {b:12.6f} {c:12.6f} {phi}")
    print()
    print(f"ReLU(-1) = {relu(-1.0):g}, ReLU(2) = {relu(2.0):g}; GELU(-1) = {fast_gelu(-1.0):.3f}, "
          f"GELU(2) = {fast_gelu(2.0):.3f}, Phi(1) = {fast_gelu(1.0):.4f}")
    xm, ym = _gelu_minimum()
    print(f"GELU's minimum: {ym:.4f} at x = {xm:.4f} -- it dips below zero and comes back, so it is not monotonic")
    print(f"Far tail, exact to the last bit: GELU(-10) = {fast_gelu(-10.0):.6e}, "
          f"GELU(-30) = {fast_gelu(-30.0):.6e}, float32 GELU(-13) = {fast_gelu(np.float32(-13.0)):.6e}")
    print()

    rng = np.random.default_rng(0)
    x = rng.standard_normal(args.size).astype(np.float32)
    out = np.empty_like(x)
    label, np_gelu = _numpy_exact_gelu()
    rows = [
        ("exact GELU", lambda: fast_gelu(x, out=out), lambda: np_gelu(x), label),
        ("tanh GELU", lambda: fast_gelu(x, approximate="tanh", out=out),
         lambda: 0.5 * x * (1 + np.tanh(np.float32(math.sqrt(2 / math.pi)) * (x + np.float32(0.044715) * x ** 3))),
         "x/2 (1 + np.tanh(...)) in NumPy"),
        ("ReLU", lambda: relu(x, out=out), lambda: np.maximum(x, 0, out=out), "np.maximum(x, 0, out=o)"),
    ]
    print(f"Speed, float32, {args.size:,} elements, median of {args.repeats} "
          f"(ours with {gelu_ext.get_num_threads()} thread(s); `python -m gelu_ext bench` for the full tables):")
    print(f"{'op':<11} {'gelu_ext':>10} {'NumPy':>10} {'speed-up':>9}  NumPy baseline")
    for name, ours, base, what in rows:
        t_ours = medians({name: ours}, args.repeats)[name]
        t_base = medians({name: base}, max(1, args.repeats // 2))[name]
        print(f"{name:<11} {args.size / t_ours / 1e9:7.3f} G/s {args.size / t_base / 1e9:7.3f} G/s "
              f"{t_base / t_ours:8.1f}x  {what}")
    return 0
