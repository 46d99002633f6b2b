"""The C++ CPU kernels of the torch ops (gelu_ext/torch/csrc) against the
ufuncs, bit for bit: every op of gelu_ext.torch._ops._OPS, each approximate,
float32/bfloat16/float16/float64, 1 and 2 torch threads, over the fast path
(contiguous, one shape, one dtype: sizes below and above the threading
threshold) and the general one (a broadcast row, a transposed operand, mixed
dtypes promoted).  Inputs: seeded normals at several scales plus +-0, +-inf,
NaN.  Prints one line per (threads, dtype, layout) and exits 1 on any
difference.

    python bench/torch_cpp_bits.py          # builds the extension on first use
"""
import sys

import ml_dtypes
import numpy as np
import torch

import gelu_ext.torch  # noqa: F401  (defines the ops)
from gelu_ext.torch import _cpp, _ops

_DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.float64)
_UINT = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def _np(t):
    """t's values as a NumPy array of the ufuncs' dtype (bfloat16 through ml_dtypes)."""
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def _inputs(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    x = x * torch.tensor([0.3, 1.0, 3.0, 12.0], dtype=torch.float64).repeat(x.numel() // 4 + 1)[:x.numel()].view(shape)
    flat = x.view(-1)
    specials = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 5.0, -5.0, 1e-30])
    flat[:len(specials)] = specials[:flat.numel()]
    return x.to(dtype)


def _layouts(n_args, dtype, n):
    """(name, tensors) for each layout; tensors as the op takes them."""
    big = [_inputs((n,), dtype, 10 + i) for i in range(n_args)]
    small = [_inputs((257,), dtype, 20 + i) for i in range(n_args)]
    yield "fast-big", big
    yield "fast-small", small
    if n_args > 1:
        rows = [_inputs((64, 96), dtype, 30 + i) for i in range(n_args)]
        rows[-1] = rows[-1][:1].clone()               # a broadcast row as the last operand
        yield "broadcast", rows
        mixed = [_inputs((1000,), dtype if i else torch.float64, 40 + i) for i in range(n_args)]
        yield "mixed", mixed
    tr = [_inputs((96, 64), dtype, 50 + i).t() for i in range(n_args)]
    yield "transposed", tr


def _expected(ufuncs, tensors):
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = torch.promote_types(dt, t.dtype)
    arrays = [_np(t.to(dt)) for t in tensors]
    shape = torch.broadcast_shapes(*(t.shape for t in tensors))
    return [np.broadcast_to(uf(*(arrays[i] for i in idx)), shape if len(idx) == len(tensors) else
                            torch.broadcast_shapes(*(tensors[i].shape for i in idx)))
            for uf, idx in ufuncs]


def main():
    _cpp.use(True)
    n = 3 * 2 ** 16 + 37           # above twice the threshold: split over threads
    bad = 0
    for nthreads in (1, 2):
        torch.set_num_threads(nthreads)
        for dtype in _DTYPES:
            for layout in ("fast-big", "fast-small", "broadcast", "mixed", "transposed"):
                checked = 0
                for name, spec in _ops._OPS.items():
                    ufuncs, names = _ops._UFUNCS[name], spec.args
                    approximates = ("none", "tanh") if spec.has_approximate else (None,)
                    for approximate in approximates:
                        for lname, tensors in _layouts(len(names), dtype, n):
                            if lname != layout:
                                continue
                            extra = () if approximate is None else (approximate,)
                            got = _ops.OPS[name](*tensors, *extra)
                            got = got if isinstance(got, tuple) else (got,)
                            want = _expected(_ops._pick(ufuncs, approximate), tensors)
                            for g, w in zip(got, want):
                                gb = _bits(_np(g))
                                wb = _bits(w)
                                if gb.shape != wb.shape or not np.array_equal(gb, wb):
                                    bad += 1
                                    print(f"DIFFERS {name} {approximate} {dtype} {lname} threads={nthreads}")
                                checked += 1
                print(f"threads={nthreads} {str(dtype):15s} {layout:11s} {checked} outputs equal"
                      if not bad else f"threads={nthreads} {dtype} {layout}: {bad} differ so far")
    print("all equal" if not bad else f"{bad} outputs differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
