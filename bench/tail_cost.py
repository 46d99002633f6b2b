"""What the negative tail costs float32 exact GELU: ours against
PyTorch's ``gelu`` on inputs of several widths, and on the same inputs with
the tail cut off, side by side in one process, one thread.

Usage::

    python bench/tail_cost.py [--sizes 16,20] [--isa avx2]

Our float32 tables cover x >= -4.5 (src/math/gx_lut.h, src/math/gx_lut8.h); every
x < -4.5 goes to the tail formula in double lanes through the split driver
(src/kernels/gx_k_split.h): 1.2% of 2 N(0, 1) data, 6.7% of 3 N(0, 1), 13% of
4 N(0, 1).  Each row: s N(0, 1) as drawn, the same clipped at -4.4 (no
tail: what the table loop alone costs), and every element in the tail
(-4.6 - 3 |N(0, 1)|).  Printed per row: the tail's share of the elements,
ours and PyTorch in ns per 16 elements (medians of interleaved repeats,
``gelu_ext.jobs._common.measure``) and PyTorch's time over ours (> 1: ours
is faster).  PyTorch's kernel costs the same on every row (no branch on the
value); without PyTorch installed only our column is printed.
"""
import argparse
import sys

import numpy as np

import gelu_ext
from gelu_ext.jobs import _common, bench


def inputs(n, seed=0):
    z = np.random.default_rng(seed).standard_normal(n)
    rows = []
    for s in (2, 3, 4):
        rows.append((f"{s} N(0,1)", (s * z).astype(np.float32)))
        rows.append((f"{s} N(0,1) clipped at -4.4", np.maximum(s * z, -4.4).astype(np.float32)))
    rows.append(("all in the tail", (-4.6 - 3 * np.abs(z)).astype(np.float32)))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="16,20", help="log2 of the element counts, comma-separated")
    p.add_argument("--isa", choices=tuple(bench.ISA_CAPS), help="hold ours and PyTorch to this instruction set")
    args = p.parse_args(argv)
    if args.isa:
        bench.cap_isa(args.isa)
    torch = bench.peer("torch")
    bench.set_threads(1)
    for line in _common.header_lines(_common.machine_info(("torch",))):
        print(line)
    print(f"torch ISA: {torch.backends.cpu.get_cpu_capability() if torch else 'not installed'}")
    print(f"{'input':30s} {'n':>5s} {'tail':>6s} {'ours ns/16':>11s} {'torch ns/16':>12s} {'torch/ours':>11s}")
    for lg in (int(v) for v in args.sizes.split(",")):
        n = 1 << lg
        for name, x in inputs(n):
            o = np.empty_like(x)
            calls = {"ours": lambda: gelu_ext.fast_gelu(x, out=o)}
            if torch is not None:
                tx, to = torch.from_numpy(x), torch.from_numpy(np.empty_like(x))
                calls["torch"] = lambda: torch._C._nn.gelu(tx, out=to)
            t = _common.measure(calls, min_repeats=9, budget=1.0)
            ours = t["ours"].median / n * 16e9
            line = f"{name:30s} {'2^' + str(lg):>5s} {np.mean(x < -4.5):6.1%} {ours:11.2f}"
            if torch is not None:
                theirs = t["torch"].median / n * 16e9
                line += f" {theirs:12.2f} {theirs / ours:10.2f}x"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
