"""Instructions per call of our GELU op and of torch's, counted by callgrind:
a count that does not move with the machine's load, for the per-call path
(Python binding, dispatcher, output allocation, kernel) at a size where the
path, not the arithmetic, is the call.

    python bench/torch_cpp/call_instructions.py [--dtype float16] [--n 16] [--threads 1]

Each callable runs in two processes under ``valgrind --tool=callgrind``,
1,000 and 21,000 calls under ``inference_mode``; the difference over 20,000
is its instructions per call (the imports, the same in both, cancel).  A
cold call -- one the model's other work has pushed out of the caches --
costs roughly in proportion.  valgrind runs the AVX2 path (it has no
AVX-512); at 16 elements the kernel is a few hundred of the instructions.
Needs valgrind (Debian: valgrind); ~8 min (two processes per callable).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

CALLS = {
    "torch.ops.gelu_ext.gelu": "lambda: torch.ops.gelu_ext.gelu(x, 'none')",
    "torch.ops.gelu_ext.gelu.default": "lambda: torch.ops.gelu_ext.gelu.default(x, 'none')",
    "gelu_ext.torch.functional.gelu": "lambda: GF.gelu(x)",
    "torch.nn.functional.gelu": "lambda: torch.nn.functional.gelu(x)",
}

_CHILD = """
import sys, torch
import gelu_ext.torch
from gelu_ext.torch import functional as GF
torch.set_num_threads({threads})
x = torch.randn({n}, dtype=torch.{dtype})
f = {call}
with torch.inference_mode():
    for _ in range(int(sys.argv[1])):
        f()
"""


def count(script, calls, tmp):
    out = os.path.join(tmp, f"cg.{calls}")
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        sys.executable, "-c", script, str(calls)], capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or m is None:
        raise SystemExit(f"valgrind failed:\n{p.stderr[-2000:]}")
    return int(m.group(1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32", "float64"))
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind (Debian: apt-get install valgrind)")
    print(f"instructions per call, {a.dtype} x {a.n}, {a.threads} thread(s), inference_mode (callgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        for name, call in CALLS.items():
            script = _CHILD.format(threads=a.threads, n=a.n, dtype=a.dtype, call=call)
            per_call = (count(script, 21000, tmp) - count(script, 1000, tmp)) / 20000
            print(f"{name:34s} {per_call:9,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
