"""Model cycles of a kernel's inner loop with llvm-mca: a loop design must
win on the model too, not only on the machine at hand, and aarch64 speed,
with no ARM machine to time it on, is the model's.

Usage::

    python bench/mca.py gx_k_lut_fwd_avx2                  # the installed extension
    python bench/mca.py gx_k_lut_fwd_avx2 --mcpu znver3,skylake --lanes 8
    python bench/mca.py gx_k_lut_fwd_neon --obj build/aarch64/neon.o \\
        --triple aarch64 --mcpu neoverse-n1,apple-a14 --lanes 4
    python bench/mca.py gx_k_lut_fwd_baseline --obj ... --triple aarch64 --lanes 1 --take b.ls

Finds the function in the object (``nm``; a compiler-made clone such as
``.constprop.0`` is taken for the name), disassembles it (``objdump``) and
takes its hot loop: of the backward branches whose body has no call (a
call is a cold path: the memcpy of a tail), the one whose body has the most
instructions on vector or floating-point registers.  The loop's path is
walked from its head to that branch: a forward branch falls through unless
its mnemonic is listed in ``--take`` (comma-separated: the common path
takes it; the scalar twins' ``b.ls`` on aarch64, for instance, jumps over
the rare rejected-element code), an inner loop runs ``--inner`` times (the
float64 twin's Horner loop, which GCC leaves rolled: 14), and every branch
is dropped.  The branches
passed and their fate are printed, so the path can be checked against the
disassembly.  llvm-mca then runs 300 iterations of that path for each CPU
model; printed per model: cycles per loop iteration and per element
(``--lanes``: elements one iteration computes).

The numbers are a model's, repeatable on any machine: bench/README.md lists
them.  Needs binutils (for aarch64, binutils-aarch64-linux-gnu) and llvm-mca
(Debian package llvm, or llvm-19: the newest llvm-mca-NN on PATH is taken,
since LLVM 14 models Neoverse N1 with the Cortex-A57 tables).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"^\s*([0-9a-f]+):\t(\S+)(?:\s+(.*))?$")
# registers of vector or floating-point operands: x86 xmm/ymm/zmm, aarch64
# v0.4s, q0, d0, s0, h0
FPREG = re.compile(r"%[xyz]mm|\b[vqdsh][0-9]+\b")


def is_branch(mnem):
    return bool(re.match(r"^(j[a-z]+|b|b\.[a-z]+|cbn?z|tbn?z)$", mnem))


def is_call(mnem):
    return mnem in ("call", "callq", "bl", "blr")


def resolve(obj, symbol, nm):
    """symbol, or its compiler-made clone (symbol.constprop.0, .isra.0, ...)"""
    names = subprocess.run([nm, obj], capture_output=True, text=True, check=True).stdout.split()
    for n in [symbol] + sorted(n for n in names if n.startswith(symbol + ".")):
        if n in names:
            return n
    sys.exit(f"{symbol} not found in {obj}")


def disassemble(obj, symbol, objdump, comment):
    """[(address, mnemonic, operands, target or None)] of symbol; comment:
    the syntax's comment marker ('#' x86, '//' aarch64, whose immediates
    start with '#')"""
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", f"--disassemble={symbol}", obj],
                          capture_output=True, text=True, check=True).stdout
    rows = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        mnem, ops = m.group(2), (m.group(3) or "").split(comment)[0]
        target = None
        if is_branch(mnem):
            hexes = re.findall(r"\b([0-9a-f]+)\s+<", ops)
            target = int(hexes[-1], 16) if hexes else None
        ops = re.sub(r"\s*<[^>]*>", "", ops).strip()
        rows.append((int(m.group(1), 16), mnem, ops, target))
    if not rows:
        sys.exit(f"{symbol} not found in {obj}")
    return rows


def hot_loop(rows, take, inner=1):
    """the instructions of the hot loop's path (branches dropped), and the
    branches passed on it with their fate"""
    addrs = [a for a, _, _, _ in rows]
    best = None
    for k, (a, mnem, _, target) in enumerate(rows):
        if target is None or target >= a or target not in addrs:
            continue
        body = rows[addrs.index(target):k]
        if any(is_call(r[1]) for r in body):
            continue
        score = sum(bool(FPREG.search(r[2])) for r in body)
        if best is None or score > best[0]:
            best = (score, target, a)
    if best is None:
        sys.exit("no loop found")
    _, head, back = best
    path, fate, seen, trips = [], [], set(), {}
    i = addrs.index(head)
    while True:
        a, mnem, ops, target = rows[i]
        if a == back or (is_branch(mnem) and target == head):
            break
        if is_branch(mnem) and target is not None and head < target < a and inner > 1:
            # an inner loop (the float64 twin's Horner loop): its body `inner` times
            trips[a] = trips.get(a, 0) + 1
            if trips[a] < inner:
                seen -= {r[0] for r in rows if target <= r[0] <= a}
                i = addrs.index(target)
                continue
            fate.append(f"{mnem}@{a:x} back {inner} times")
            i += 1
            continue
        if a in seen:
            sys.exit(f"the path through the loop at {head:x} runs in a circle at {a:x}: "
                     f"choose --take differently ({', '.join(fate)})")
        seen.add(a)
        if is_branch(mnem):
            taken = mnem in take or mnem in ("b", "jmp")
            fate.append(f"{mnem}@{a:x} {'taken' if taken else 'not taken'}")
            if taken and target in addrs:
                i = addrs.index(target)
                continue
        else:
            path.append(f"{mnem}\t{ops}" if ops else mnem)
        i += 1
        if i >= len(rows):
            sys.exit("the path left the function")
    return path, fate


def find_mca():
    versions = sorted(glob.glob("/usr/bin/llvm-mca-[0-9]*") +
                      [p for d in os.environ.get("PATH", "").split(os.pathsep)
                       for p in glob.glob(os.path.join(d, "llvm-mca-[0-9]*"))],
                      key=lambda p: int(re.search(r"(\d+)$", p).group(1)))
    return versions[-1] if versions else shutil.which("llvm-mca")


def mca(body, triple, cpu, mca_bin):
    run = subprocess.run([mca_bin, f"-mtriple={triple}", f"-mcpu={cpu}", "-iterations=300"],
                         input="\n".join(body) + "\n", capture_output=True, text=True)
    if run.returncode != 0 or "error" in run.stderr:
        sys.exit(f"llvm-mca failed on the loop:\n{run.stderr[:2000]}")
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", run.stdout).group(1))
    return cycles / 300.0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("symbol")
    p.add_argument("--obj", help="object or shared library (default: the installed gelu_ext._ufuncs)")
    p.add_argument("--triple", default="x86_64")
    p.add_argument("--mcpu", default="znver3,skylake")
    p.add_argument("--lanes", type=int, default=8, help="elements per loop iteration")
    p.add_argument("--take", default="", help="branch mnemonics the common path takes (b.ls,jae)")
    p.add_argument("--inner", type=int, default=1,
                   help="trips of an inner loop on the path (the float64 twin's Horner loop: 14)")
    p.add_argument("--mca", help="the llvm-mca binary (default: the newest llvm-mca-NN on PATH)")
    p.add_argument("--print-loop", action="store_true", help="print the loop given to llvm-mca")
    args = p.parse_args(argv)
    obj = args.obj
    if obj is None:
        from gelu_ext import _ufuncs
        obj = _ufuncs.__file__
    cross = args.triple.startswith("aarch64")
    objdump = "aarch64-linux-gnu-objdump" if cross else "objdump"
    nm = "aarch64-linux-gnu-nm" if cross else "nm"
    mca_bin = args.mca or find_mca()
    for tool in (objdump, nm, mca_bin):
        if tool is None or shutil.which(tool) is None:
            sys.exit(f"{tool or 'llvm-mca'} not found (binutils / Debian package llvm)")
    symbol = resolve(obj, args.symbol, nm)
    take = set(t for t in args.take.split(",") if t)
    body, fate = hot_loop(disassemble(obj, symbol, objdump, "//" if cross else "#"), take, args.inner)
    version = subprocess.run([mca_bin, "--version"], capture_output=True, text=True).stdout
    version = re.search(r"LLVM version ([\d.]+)", version)
    print(f"{symbol}: {len(body)} instructions per iteration, {args.lanes} elements "
          f"(llvm-mca {version.group(1) if version else '?'}); path: {', '.join(fate) or 'no branch'}")
    if args.print_loop:
        print("\n".join("    " + b for b in body))
    for cpu in args.mcpu.split(","):
        c = mca(body, args.triple, cpu, mca_bin)
        print(f"  {cpu:12s} {c:6.1f} cycles per iteration, {c / args.lanes:5.2f} per element")
    return 0


if __name__ == "__main__":
    sys.exit(main())
