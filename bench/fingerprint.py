"""Fingerprint the output bits of every kernel on every ISA path: a refactor of
the kernels is behaviour-neutral when the fingerprints do not change.

For every op of the op table (``gelu_ext._ufuncs.OPS``), every dtype
(float32, float64, float16, bfloat16 through ml_dtypes), every ISA path this
CPU runs (``_ufuncs._compiled_isas()`` up to ``_best_isa()``, chosen with
``_set_isa``) and every setting of the CPU loop switches (``_plain_loads`` and
``_bf16cvt``, set with ``gelu_ext._test_hooks``: both ways each; a switch the
CPU cannot turn on is reported at the setting it takes), one line::

    <isa> plain=<0|1> bf16cvt=<0|1> <dtype> <domain> <op> <hash> <nan-hash>

The inputs (deterministic, no file needed):
- float32, domain ``all``: x runs over all 2^32 float32 bit patterns, in
  chunks of 2^24.  Domain ``sub``: the patterns ``i * 257 + 1`` (16.7 million,
  every exponent and low-bit pattern).  A multi-input op takes x from the
  domain and its other inputs from a fixed pattern (``_pattern32``: +-0,
  +-inf, quiet and signalling NaN, subnormals, the table edges and seeded
  ordinary values at several scales), tiled with a prime period so that
  x meets many of them.
- float16 and bfloat16, domain ``all``: x runs over all 65,536 patterns; a
  multi-input op repeats them 64 times against the other inputs' pattern
  (the float32 pattern rounded to the type, plus seeded bit patterns), a
  deterministic sample of the pairs.  With ``--quick`` (domain ``quick``)
  a multi-input op repeats them 8 times: every x still meets several
  partners, for an eighth of the time that repeating took (most of a
  quick run's).
- float64, domain ``sample``: 10^7 seeded values (random bit patterns,
  normals at several scales, the range around the tables' edge |x| = 5, the
  special values); domain ``sub``: every 16th of them.

The baseline path is scalar (~0.03-0.04 Gelem/s), so it runs the ``sub``
domains of float32 and float64 only (and every 16-bit input); so do the
switch settings other than the CPU's own (the switches choose loops, not
formulas).  The vector paths under the CPU's own settings run every domain.
``<hash>`` is of the output bits as they are: the before/after criterion
(``--compare``).  ``<nan-hash>`` is of the output with every NaN replaced by
one quiet NaN: the paths may differ in which NaN payload comes out when two
NaN operands meet (the vector instructions' operand order), nothing else.
The summary at the end checks that every (dtype, domain, op) has one
``<nan-hash>`` across all paths and settings (every path gives the same bits
up to NaN payloads).  It is not computed for float32 ``all`` (``-``), where it
would add minutes: ``sub`` holds the cross-path check for float32.

The hash of one (op, dtype, domain) is a non-cryptographic fold of the output
bytes read as uint64 words v: per chunk, ``h = h * M + sum(v_j * (2 j + 1))``
(mod 2^64, odd weights, so any single changed word changes it) and
``x ^= xor(v)``, printed as ``h:x``.

Usage (the full run took 38 min on 2 cores shared with other jobs, load ~9:
bench/results/fingerprint.txt; --quick 3 s on the idle Zen 4)::

    python bench/fingerprint.py [--quick] [--isa NAME ...] [-o FILE]
    python bench/fingerprint.py --compare bench/results/fingerprint.txt
    python bench/fingerprint.py --compare FILE --nan-payloads

``--compare FILE`` runs with FILE's mode and prints only the lines that
differ from it (exit status 1 if any); with ``--nan-payloads`` only the
``<nan-hash>`` column counts (a build by another compiler: clang commutes
some multiplies, so where two NaN operands meet the other's payload comes
out; CI compares its clang build so).  Record a run with ``-o``: the file
starts with the machine, versions and command.
"""
import argparse
import itertools
import os
import platform
import subprocess
import sys
import time

import numpy as np

from gelu_ext import _test_hooks, _ufuncs

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:          # pragma: no cover - the fingerprint wants all dtypes
    BF16 = None

CHUNK32 = 1 << 24
SUB32_STRIDE = 257
QUICK32_STRIDE = 65537
N64 = 10_000_000
SUB64_STRIDE = 16
REPEAT16 = 64
QUICK_REPEAT16 = 8
M = np.uint64(0x100000001B3)     # FNV prime: the chunk-to-chunk multiplier


class Hash:
    """h = h * M + sum(v_j (2 j + 1)), x ^= xor(v), over uint64 words v."""

    _w = np.zeros(0, np.uint64)

    def __init__(self, canon=False):
        self.h = np.uint64(0)
        self.x = np.uint64(0)
        self.canon = Hash() if canon else None

    @classmethod
    def weights(cls, n):
        if len(cls._w) < n:
            cls._w = np.arange(1, 2 * n, 2, dtype=np.uint64)
        return cls._w[:n]

    def add(self, a):
        if self.canon is not None:
            nan = np.isnan(a)
            c = a.copy()
            c[nan] = np.nan
            self.canon.add(c)
        b = np.ascontiguousarray(a).view(np.uint8).ravel()
        if b.size % 8:
            b = np.concatenate([b, np.zeros(8 - b.size % 8, np.uint8)])
        v = b.view(np.uint64)
        with np.errstate(over="ignore"):
            self.h = self.h * M + np.dot(v, self.weights(v.size))
        self.x ^= np.bitwise_xor.reduce(v)

    def raw(self):
        return f"{int(self.h):016x}:{int(self.x):016x}"

    def __str__(self):
        return self.raw() + " " + (self.canon.raw() if self.canon is not None else "-")


# ------------------------------------------------------------------ inputs --

def _pattern32():
    """The other inputs of a float32 multi-input op (4093 values, a prime)."""
    f = np.float32
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, -0.5,
                         2.0, 1e-3, -1e30, 1e30, 65504.0, 3.4e38, -3.4e38,
                         4.5, -4.5, 8.0, -8.0, 5.0, -5.0, 6.0, 4.7, -4.7], dtype=f)
    bits = np.array([0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,   # subnormals
                     0x00800000, 0x80800000,                                         # smallest normals
                     0x7F800001, 0xFF800001, 0x7FC00001, 0x7FBFFFFF,                 # NaNs, signalling too
                     0x7F7FFFFF, 0xFF7FFFFF], dtype=np.uint32).view(f)
    rng = np.random.default_rng(20261201)
    n = 4093 - specials.size - bits.size
    ordinary = np.concatenate([
        rng.standard_normal(n // 4), 4 * rng.standard_normal(n // 4),
        rng.uniform(-1e-3, 1e-3, n // 4)]).astype(f)
    random_bits = rng.integers(0, 2**32, n - 3 * (n // 4), dtype=np.uint64).astype(np.uint32).view(f)
    p = np.concatenate([specials, bits, ordinary, random_bits])
    assert p.size == 4093
    return p


def _tiled(p, n):
    """p repeated to n + len(p) elements: [off : off + m] is p tiled from off."""
    return np.resize(p, n + p.size)


def _other_inputs(p, nin, n, dtype):
    """The inputs after x: the pattern for input 1, its reverse (period 4093
    too, another phase) for input 2."""
    pats = [p, p[::-1].copy()]
    return [_tiled(pats[k].astype(dtype) if p.dtype != dtype else pats[k], n) for k in range(nin - 1)]


def _float32_domain(domain):
    """(chunk start, x) over the domain, x a float32 array."""
    if domain == "all":
        for start in range(0, 1 << 32, CHUNK32):
            yield start, np.arange(start, start + CHUNK32, dtype=np.uint64).astype(np.uint32).view(np.float32)
    else:
        stride = SUB32_STRIDE if domain == "sub" else QUICK32_STRIDE
        idx = np.arange(0, ((1 << 32) - 1) // stride + 1, dtype=np.uint64) * stride + 1
        u = (idx & 0xFFFFFFFF).astype(np.uint32)
        for start in range(0, u.size, CHUNK32):
            yield start, u[start:start + CHUNK32].view(np.float32)


def _sample64(n):
    rng = np.random.default_rng(20261202)
    q = n // 5
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324,
                         2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
                         5.0, -5.0, np.nextafter(5.0, 6), -np.nextafter(5.0, 6), 1.0, -1.0])
    nan_bits = np.array([0x7FF0000000000001, 0xFFF8000000000001, 0x7FF7FFFFFFFFFFFF], np.uint64).view(np.float64)
    x = np.concatenate([
        rng.integers(0, 2**64 - 1, q, dtype=np.uint64, endpoint=True).view(np.float64),
        rng.standard_normal(q), 3 * rng.standard_normal(q),
        rng.uniform(-5.5, 5.5, q), 1e-3 * rng.standard_normal(q),
    ])
    x[:specials.size] = specials
    x[specials.size:specials.size + nan_bits.size] = nan_bits
    return x


# -------------------------------------------------------------------- runs --

def _run_float32(ops, domain, out_lines, tag):
    p = _pattern32()
    hashes = {name: Hash(canon=domain != "all") for name in ops}
    others = None
    for start, x in _float32_domain(domain):
        n = x.size
        if others is None or others[0].size < n + p.size:
            others = _other_inputs(p, 3, max(n, CHUNK32 if domain == "all" else n), np.float32)
        off = start % p.size
        o = np.empty(n, np.float32)
        for name, op in ops.items():
            args = [x] + [others[k][off:off + n] for k in range(op.nin - 1)]
            op.ufunc(*args, out=o)
            hashes[name].add(o)
    for name in ops:
        out_lines.append(f"{tag} float32 {domain} {name} {hashes[name]}")


def _run_float64(ops, domain, quick, out_lines, tag):
    x = _sample64(N64 // 100 if quick else N64)
    if domain == "sub":
        x = x[::SUB64_STRIDE].copy()
    p = _pattern32().astype(np.float64)
    others = _other_inputs(p, 3, x.size, np.float64)
    for name, op in ops.items():
        args = [x] + [others[k][:x.size] for k in range(op.nin - 1)]
        h = Hash(canon=True)
        h.add(op.ufunc(*args))
        out_lines.append(f"{tag} float64 {domain} {name} {h}")


def _run_16(ops, dtype, label, out_lines, tag, quick):
    repeat, domain = (QUICK_REPEAT16, "quick") if quick else (REPEAT16, "all")
    allx = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    rng = np.random.default_rng(20261203)
    p = np.concatenate([_pattern32().astype(dtype).view(np.uint16)[:4093 - 1024],
                        rng.integers(0, 1 << 16, 1024, dtype=np.uint32).astype(np.uint16)])
    for name, op in ops.items():
        if op.nin == 1:
            args = [allx.view(dtype)]
        else:
            x = np.tile(allx, repeat)
            args = [x.view(dtype)] + [t[:x.size].view(dtype) for t in _other_inputs(p, op.nin, x.size, np.uint16)]
        h = Hash(canon=True)
        h.add(op.ufunc(*args))
        out_lines.append(f"{tag} {label} {domain if op.nin > 1 else 'all'} {name} {h}")


def _paths(wanted):
    order = list(_ufuncs.ISA_NAMES)
    best = order.index(_ufuncs._best_isa())
    paths = [n for n in _ufuncs._compiled_isas() if order.index(n) <= best]
    return [n for n in paths if not wanted or n in wanted]


def run(quick, wanted_isas, progress):
    ops = _ufuncs.OPS
    lines = []
    own = (_ufuncs._plain_loads(), _ufuncs._bf16cvt())
    isa0 = _ufuncs._get_isa()
    try:
        for isa in _paths(wanted_isas):
            _ufuncs._set_isa(isa)
            for plain, bfc in itertools.product((own[0], 1 - own[0]), (own[1], 1 - own[1])):
                _test_hooks.set_plain_loads(plain)
                _test_hooks.set_bf16cvt(bfc)
                got = (_ufuncs._plain_loads(), _ufuncs._bf16cvt())
                tag = f"{isa} plain={got[0]} bf16cvt={got[1]}"
                full = isa != "baseline" and (plain, bfc) == own and not quick
                t0 = time.perf_counter()
                with np.errstate(all="ignore"):
                    for domain in (("all", "sub") if full else ("quick",) if quick else ("sub",)):
                        _run_float32(ops, domain, lines, tag)
                    for domain in (("sample", "sub") if full else ("sub",)):
                        _run_float64(ops, domain, quick, lines, tag)
                    _run_16(ops, np.float16, "float16", lines, tag, quick)
                    if BF16 is not None:
                        _run_16(ops, BF16, "bfloat16", lines, tag, quick)
                progress(f"# {tag}: {time.perf_counter() - t0:.0f} s")
    finally:
        _test_hooks.set_plain_loads(own[0])
        _test_hooks.set_bf16cvt(own[1])
        _ufuncs._set_isa(isa0)
    return lines


def summary(lines):
    """One hash per (dtype, domain, op) across paths and settings?"""
    seen = {}
    for ln in lines:
        isa, plain, bfc, dt, dom, name, raw, h = ln.split()
        if h == "-":
            continue
        seen.setdefault((dt, dom, name), {}).setdefault(h, []).append(f"{isa} {plain} {bfc}")
    bad = {k: v for k, v in seen.items() if len(v) > 1}
    out = [f"# summary: {len(seen)} (dtype, domain, op) keys, {len(lines)} lines; "
           f"{'every path and setting gives the same bits up to NaN payloads' if not bad else f'{len(bad)} keys differ'}"]
    for (dt, dom, name), v in sorted(bad.items()):
        for h, who in v.items():
            out.append(f"# DIFFERS {dt} {dom} {name} {h}: {', '.join(who)}")
    return out


def header(argv):
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        commit = ""
    commit = commit or "? (not a git checkout)"
    from gelu_ext._config import _cpu_model
    return [f"# python bench/fingerprint.py {' '.join(argv)}",
            f"# commit {commit}; gelu_ext {_ufuncs.__file__}",
            f"# {_cpu_model()} ({platform.machine()}, {os.cpu_count()} CPUs); best isa {_ufuncs._best_isa()}; "
            f"compiled {', '.join(_ufuncs._compiled_isas())}; own switches plain={_ufuncs._plain_loads()} "
            f"bf16cvt={_ufuncs._bf16cvt()}",
            f"# Python {platform.python_version()}, NumPy {np.__version__}, "
            f"ml_dtypes {getattr(sys.modules.get('ml_dtypes'), '__version__', 'missing')}"]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small subset of every input set (seconds)")
    ap.add_argument("--isa", action="append", help="only this path (repeatable)")
    ap.add_argument("-o", "--output", help="also write the lines, with a header, to this file")
    ap.add_argument("--compare", help="run in FILE's mode and print the lines that differ from it")
    ap.add_argument("--nan-payloads", action="store_true",
                    help="with --compare: compare the NaN-normalised hashes only (another compiler may "
                    "commute an operation, so where two NaN operands meet the other's payload comes out)")
    a = ap.parse_args(argv)
    if a.nan_payloads and not a.compare:
        ap.error("--nan-payloads goes with --compare FILE")
    ref = None
    if a.compare:
        with open(a.compare) as f:
            ref = [ln.rstrip("\n") for ln in f if ln.strip() and not ln.startswith("#")]
        a.quick = any(" quick " in ln for ln in ref)
    t0 = time.perf_counter()
    lines = run(a.quick, a.isa, lambda s: print(s, file=sys.stderr, flush=True))
    if ref is not None:
        if a.nan_payloads:          # drop <hash>, keep <nan-hash>
            def strip(ln):
                f = ln.split()
                return " ".join(f[:6] + f[7:])
            lines, ref = [strip(ln) for ln in lines], [strip(ln) for ln in ref]
        new, old = set(lines), set(ref)
        missing, changed = sorted(old - new), sorted(new - old)
        for ln in missing:
            print(f"- {ln}")
        for ln in changed:
            print(f"+ {ln}")
        print(f"# compared with {a.compare}: {len(old & new)} lines equal, {len(missing)} only there, "
              f"{len(changed)} only here ({time.perf_counter() - t0:.0f} s)")
        return 1 if missing or changed else 0
    text = header(argv) + lines + summary(lines) + [f"# {time.perf_counter() - t0:.0f} s"]
    print("\n".join(text))
    if a.output:
        with open(a.output, "w") as f:
            f.write("\n".join(text) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
