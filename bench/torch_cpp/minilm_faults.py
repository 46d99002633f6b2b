"""Each GELU call inside all-MiniLM-L6-v2, unpatched (torch's) and patched
(ours): its process CPU time and minor page faults, taken by hooks on the
activation modules, the two models alternating, with torch.profiler on (as
bench/torch_layer.py's in-model table runs) or off.  Splits the calls of
each side into those that faulted in their output's pages and those that
did not, so a per-call median can be read as kernel or as page faults.

    python bench/torch_cpp/minilm_faults.py [--dtype float16] [--shape 32x128]
                                            [--threads 1] [--rounds 3] [--profiler]
                                            [--alone torch|ours]

--alone runs one side's model only, as a user runs one model: which of the
two faults more per call then is the op's own doing, where in the
alternating run it follows which side allocates after glibc has trimmed.

Process CPU time (``time.process_time``) leaves out the time the process
waits for a core on a loaded machine; on 2 threads it also counts torch's
workers spinning, so read wall time there.  How glibc hands out the pages
is the environment's: compare runs with and without
``GLIBC_TUNABLES=glibc.malloc.trim_threshold=4294967296:glibc.malloc.mmap_threshold=33554432``
(freed memory kept in the heap).
"""
import argparse
import contextlib
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch_layer as TL                                # noqa: E402

import gelu_ext                                          # noqa: E402


def _hook(model, key, calls):
    """Per call of each activation module of ``model``: (key, wall s, CPU s, faults)."""
    def pre(mod, args):
        mod._gx_t = (time.perf_counter(), time.process_time(), TL._minflt())

    def post(mod, args, out):
        t0, c0, f0 = mod._gx_t
        calls.append((key, time.perf_counter() - t0, time.process_time() - c0, TL._minflt() - f0))

    for layer in model.encoder.layer:
        act = layer.intermediate.intermediate_act_fn
        act.register_forward_pre_hook(pre)
        act.register_forward_hook(post)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float16")
    p.add_argument("--shape", default="32x128", help="batch x sequence, default 32x128")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3, help="forwards per model (alternating)")
    p.add_argument("--profiler", action="store_true", help="run the forwards under torch.profiler")
    p.add_argument("--alone", choices=("torch", "ours"),
                   help="run only this side's model (default: both, alternating)")
    a = p.parse_args(argv)
    b, s = (int(v) for v in a.shape.split("x"))
    loaded = TL._load_minilm()
    if loaded is None:
        return 1
    torch.set_num_threads(a.threads)
    gelu_ext.set_num_threads(a.threads)
    plain, patched = TL._minilm_pair(loaded, getattr(torch, a.dtype))
    batch = TL._minilm_batch(b, s)
    entries = [(k, m) for k, m in (("torch", plain), ("ours", patched)) if a.alone in (None, k)]
    calls = []
    with torch.inference_mode():
        for _, m in entries:
            m(**batch)                                   # warm-up, not recorded
        for k, m in entries:
            _hook(m, k, calls)
        ctx = contextlib.nullcontext()
        if a.profiler:
            from torch.profiler import ProfilerActivity, profile
            ctx = profile(activities=[ProfilerActivity.CPU])
        with ctx:
            for r in range(a.rounds):
                for _, m in (entries if r % 2 == 0 else entries[::-1]):
                    m(**batch)
    pages = b * s * 1536 * torch.finfo(getattr(torch, a.dtype)).bits // 8 // 4096
    print(f"all-MiniLM-L6-v2 {a.dtype} {b}x{s}, {a.threads} thread(s), {a.rounds} forwards each, "
          f"{'only ' + a.alone + ' side' if a.alone else 'alternating'}, "
          f"profiler {'on' if a.profiler else 'off'}; GELU output {pages} pages of 4 KiB; "
          f"GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')!r}")
    print("side    calls  median ms (wall, CPU)   faulted calls (>= half the pages): n, median CPU ms   "
          "others: median CPU ms   faults a call: median, mean")
    for k, _ in entries:
        c = [x for x in calls if x[0] == k]
        hit = [x[2] for x in c if x[3] >= pages // 2]
        rest = [x[2] for x in c if x[3] < pages // 2]
        med = (lambda v: f"{np.median(v) * 1e3:7.3f}" if v else "      -")
        print(f"{k:6s} {len(c):6d}  {med([x[1] for x in c])} {med([x[2] for x in c])}            "
              f"{len(hit):3d}, {med(hit)}                                {med(rest)}              "
              f"{np.median([x[3] for x in c]):6.0f} {np.mean([x[3] for x in c]):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
