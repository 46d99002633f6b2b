"""Model cycles of a kernel's inner loop with llvm-mca (issue 23: a loop
design must win on the model too, not only on the machine at hand).

Usage::

    python bench/mca.py gx_k_lut_fwd_avx2                  # the installed extension
    python bench/mca.py gx_k_lut_fwd_avx2 --mcpu znver3,skylake --lanes 8
    python bench/mca.py gx_k_lut_fwd_neon --obj build/aarch64/gx_kernels.o \\
        --triple aarch64 --mcpu neoverse-n1,apple-a14 --lanes 4

Finds the function in the object (``nm``), disassembles it (``objdump``),
takes its hot loop -- the backward-jump block without calls that has the
most vector instructions -- drops the jumps, and runs ``llvm-mca -iterations=300`` on
it for each CPU model.  Prints, per model, the cycles per loop iteration
and per element (``--lanes``: elements one iteration computes).  The
numbers are a model's, repeatable on any machine: bench/README.md lists
them beside the measured speeds.  Needs binutils (and for aarch64,
binutils-aarch64-linux-gnu) and llvm-mca (Debian package llvm).
"""
import argparse
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
JUMP = re.compile(r"^(j\w+|b(\.\w+)?|cb\w+|tb\w+)\s+([0-9a-f]+)\b")
VECTOR = re.compile(r"%[yz]mm|\bv[0-9]+\.|\bq[0-9]+\b")


def resolve(obj, symbol, nm):
    """symbol, or its compiler-made clone (symbol.constprop.0, .isra.0, ...)"""
    names = subprocess.run([nm, obj], capture_output=True, text=True, check=True).stdout.split()
    for n in [symbol] + sorted(n for n in names if n.startswith(symbol + ".")):
        if n in names:
            return n
    sys.exit(f"{symbol} not found in {obj}")


def disassemble(obj, symbol, objdump):
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", f"--disassemble={symbol}", obj],
                          capture_output=True, text=True, check=True).stdout
    rows = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            rows.append((int(m.group(1), 16), m.group(2).split("#")[0].split("//")[0].strip()))
    if not rows:
        sys.exit(f"{symbol} not found in {obj}")
    return rows


def hot_loop(rows):
    addrs = [a for a, _ in rows]
    best = None
    for k, (a, ins) in enumerate(rows):
        m = JUMP.match(ins)
        if not m:
            continue
        target = int(m.group(3), 16)
        if target >= a or target not in addrs:
            continue
        body = [i for _, i in rows[addrs.index(target):k] if not JUMP.match(i)]
        if any(i.startswith(("call", "bl\t", "bl ")) for i in body):
            continue            # a cold path that calls out (memcpy of a tail)
        score = sum(bool(VECTOR.search(i)) for i in body)
        if best is None or score > best[0]:
            best = (score, body)
    if best is None:
        sys.exit("no loop found")
    return best[1]


def mca(body, triple, cpu, mca_bin):
    out = subprocess.run([mca_bin, f"-mtriple={triple}", f"-mcpu={cpu}", "-iterations=300"],
                         input="\n".join(body) + "\n", capture_output=True, text=True, check=True).stdout
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    return cycles / 300.0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("symbol")
    p.add_argument("--obj", help="object or shared library (default: the installed gelu_ext._ufuncs)")
    p.add_argument("--triple", default="x86_64")
    p.add_argument("--mcpu", default="znver3,skylake")
    p.add_argument("--lanes", type=int, default=8, help="elements per loop iteration")
    args = p.parse_args(argv)
    obj = args.obj
    if obj is None:
        from gelu_ext import _ufuncs
        obj = _ufuncs.__file__
    cross = args.triple.startswith("aarch64")
    objdump = "aarch64-linux-gnu-objdump" if cross else "objdump"
    nm = "aarch64-linux-gnu-nm" if cross else "nm"
    for tool in (objdump, nm, "llvm-mca"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found (binutils / Debian package llvm)")
    symbol = resolve(obj, args.symbol, nm)
    body = hot_loop(disassemble(obj, symbol, objdump))
    print(f"{symbol}: {len(body)} instructions per iteration, {args.lanes} elements")
    for cpu in args.mcpu.split(","):
        c = mca(body, args.triple, cpu, "llvm-mca")
        print(f"  {cpu:12s} {c:6.1f} cycles per iteration, {c / args.lanes:5.2f} per element")
    return 0


if __name__ == "__main__":
    sys.exit(main())
