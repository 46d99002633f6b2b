"""Can the C++ kernels be built on PyTorch's stable ABI, and what does it
cost per call?  Builds bench/torch_cpp/stable_gelu.cpp (the GELU fast path
against torch/csrc/stable only, TORCH_TARGET_VERSION 2.10, op
gelu_ext_stable::gelu), checks its bits against the ufunc, and times per call
under inference_mode, interleaved in one process: F.gelu, the stable-ABI op,
and gelu_ext::gelu with the C++ kernels of gelu_ext/torch/csrc (the unstable
API).

    python bench/torch_cpp/stable_probe.py
"""
import os
import sys

import numpy as np
import torch

import gelu_ext
from gelu_ext import _ufuncs
from gelu_ext.jobs import _common
from gelu_ext.torch import _cpp

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", "..", "src"))
TARGET_2_10 = "0x020A000000000000"


def build():
    from torch.utils import cpp_extension
    cpp_extension.load(name="gelu_ext_stable_probe", sources=[os.path.join(HERE, "stable_gelu.cpp")],
                       extra_include_paths=[SRC], is_python_module=False,
                       extra_cflags=["-O2", f"-DTORCH_TARGET_VERSION={TARGET_2_10}"])
    codes = [_ufuncs._loop_code(f"gelu_{k}", dt) for k in ("erf", "tanh")
             for dt in ("float16", "bfloat16", "float32", "float64")]
    torch.ops.gelu_ext_stable.configure(codes)


def main():
    build()
    _cpp.use(True)
    bad = 0
    for dt in (torch.float32, torch.bfloat16, torch.float16, torch.float64):
        for approximate, uf in (("none", gelu_ext.gelu_erf), ("tanh", gelu_ext.gelu_tanh)):
            for nt in (1, 2):
                torch.set_num_threads(nt)
                x = torch.randn(3 * 2 ** 16 + 5).to(dt)
                got = torch.ops.gelu_ext_stable.gelu(x, approximate)
                ref = torch.ops.gelu_ext.gelu(x, approximate)      # the ufuncs' bits (tests)
                if not torch.equal(got.view(torch.uint8), ref.view(torch.uint8)):
                    bad += 1
                    print(f"DIFFERS {dt} {approximate} threads={nt}")
    print("stable-ABI op: bits equal to gelu_ext::gelu in every case" if not bad else f"{bad} differ")
    print(f"torch {torch.__version__}; per call, exact GELU, float32, inference_mode, median us")
    print("size  thr   F.gelu  stable-ABI op  C++ op (ops.cpp)")
    for nt in (1, 2):
        torch.set_num_threads(nt)
        for n in (256, 1 << 12, 1 << 14, 1 << 16):
            x = torch.randn(n)
            with torch.inference_mode():
                t = _common.measure({"F.gelu": lambda: torch.nn.functional.gelu(x),
                                     "stable": lambda: torch.ops.gelu_ext_stable.gelu(x),
                                     "cpp": lambda: torch.ops.gelu_ext.gelu(x)}, budget=3.0)
            print(f"2^{int(np.log2(n)):<3d} {nt:3d} {t['F.gelu'].median * 1e6:8.2f} "
                  f"{t['stable'].median * 1e6:12.2f} {t['cpp'].median * 1e6:12.2f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
