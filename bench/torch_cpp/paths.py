"""The ops' two CPU kernel paths -- Python (gelu_ext/torch/_ops.py) and C++
(gelu_ext/torch/csrc, gelu_ext.torch._cpp) -- against torch, per call and in
the alternating pattern, made for a shared, loaded machine: many short
samples (~0.3 ms each), every entry taking one sample in turn (the C++ or
Python kernels switched in, untimed, before each of an entry's samples),
and the 10th percentile and the median of each entry's samples reported:
on a machine whose load exceeds its cores the median measures the queue,
the low quantile what a call costs when it runs.

    python bench/torch_cpp/paths.py [--threads 1] [--samples 300]
"""
import argparse
import resource
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import gelu_ext
from gelu_ext.torch import _cpp
from gelu_ext.torch import functional as GF


def _sampler(calls, setup, samples, target=3e-4):
    loops = {}
    for k, f in calls.items():
        setup.get(k, lambda: None)()
        f()
        t0 = time.perf_counter()
        f()
        loops[k] = max(1, int(target / max(time.perf_counter() - t0, 1e-7)))
    out = {k: [] for k in calls}
    names = list(calls)
    for r in range(samples):
        for k in (names if r % 2 == 0 else names[::-1]):
            setup.get(k, lambda: None)()
            f, n = calls[k], loops[k]
            f()
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            out[k].append((time.perf_counter() - t0) / n)
    return {k: (float(np.percentile(v, 10)), float(np.median(v))) for k, v in out.items()}


def _paths():
    return {"python": lambda: _cpp.use(False), "cpp": lambda: _cpp.use(True)}


def per_call(samples):
    sw = _paths()
    print("\nPer call, exact GELU, float32, us: p10 / median (over F.gelu's p10)")
    print("size  mode            F.gelu          op py           op C++          functional py   functional C++")
    for n in (1 << 8, 1 << 12, 1 << 14):
        x = torch.randn(n)
        xg = x.clone().requires_grad_()
        for mode, t in (("inference_mode", x), ("autograd", xg)):
            calls = {"F.gelu": lambda t=t: F.gelu(t),
                     "op py": lambda t=t: torch.ops.gelu_ext.gelu(t),
                     "op C++": lambda t=t: torch.ops.gelu_ext.gelu(t),
                     "functional py": lambda t=t: GF.gelu(t),
                     "functional C++": lambda t=t: GF.gelu(t)}
            setup = {k: sw["cpp" if "C++" in k else "python"] for k in calls if k != "F.gelu"}
            with torch.inference_mode(mode == "inference_mode"):
                r = _sampler(calls, setup, samples)
            base = r["F.gelu"][0]
            print(f"2^{int(np.log2(n)):<3d} {mode:15s} " + " ".join(
                f"{r[k][0] * 1e6:5.1f}/{r[k][1] * 1e6:5.1f}" + (f"({(r[k][0] - base) * 1e6:+.1f})" if k != "F.gelu" else "      ")
                for k in calls))


def alternating(samples):
    sw = _paths()
    print("\nAlternating: y = x + 1 (torch), then GELU(y), both allocating, inference_mode; "
          "GELU's share (pair - add), us at p10 and median; torch/ours at p10; minor faults per pair")
    print("dtype     size    F.gelu p10/med   py p10/med  torch/py   C++ p10/med  torch/C++   faults torch/py/C++")
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        for n in (1 << 16, 1 << 20):
            x = torch.randn(n, dtype=dtype)
            calls = {"add": lambda: torch.add(x, 1.0),
                     "F.gelu": lambda: F.gelu(torch.add(x, 1.0)),
                     "py": lambda: GF.gelu(torch.add(x, 1.0)),
                     "C++": lambda: GF.gelu(torch.add(x, 1.0))}
            setup = {"py": sw["python"], "C++": sw["cpp"]}
            with torch.inference_mode():
                r = _sampler(calls, setup, samples, target=1e-3)
                faults = {}
                for k in ("F.gelu", "py", "C++"):
                    setup.get(k, lambda: None)()
                    calls[k]()
                    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                    for _ in range(50):
                        calls[k]()
                    faults[k] = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 50
            g = {k: (r[k][0] - r["add"][0], r[k][1] - r["add"][1]) for k in ("F.gelu", "py", "C++")}
            dt = str(dtype).split(".")[1]
            print(f"{dt:9s} 2^{int(np.log2(n)):<3d} {g['F.gelu'][0] * 1e6:8.1f}/{g['F.gelu'][1] * 1e6:<8.1f}"
                  f" {g['py'][0] * 1e6:6.1f}/{g['py'][1] * 1e6:<6.1f} {g['F.gelu'][0] / g['py'][0]:5.2f}x"
                  f"  {g['C++'][0] * 1e6:6.1f}/{g['C++'][1] * 1e6:<6.1f} {g['F.gelu'][0] / g['C++'][0]:5.2f}x"
                  f"   {faults['F.gelu']:.1f}/{faults['py']:.1f}/{faults['C++']:.1f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--samples", type=int, default=300)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    gelu_ext.set_num_threads(a.threads)
    _cpp.use(True)
    print(f"torch {torch.__version__}, {a.threads} thread(s); load average {open('/proc/loadavg').read().split()[:3]}")
    per_call(a.samples)
    alternating(a.samples // 3)
    print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
