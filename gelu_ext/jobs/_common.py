"""The plumbing the ``python -m gelu_ext`` jobs share, written once:
progress lines and optional imports, timing (``measure``), argument checks,
JSON output, the machine description, and the exact GELU a NumPy user writes
(the baseline the demo and the BERT job time)."""
import argparse
import importlib
import json
import math
import os
import platform
import sys
import time
from typing import NamedTuple

import numpy as np

import gelu_ext

# ------------------------------------------------ progress, optional extras --


class MissingExtra(SystemExit):
    """An optional package is missing: one line naming what to install."""

    def __init__(self, package, extra):
        super().__init__(f"gelu_ext: this needs {package}; install it with: "
                         f"pip install 'gelu_ext[{extra}]'")


def require(module, extra, package=None):
    """Import ``module`` or raise MissingExtra naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(package or module.split(".")[0], extra) from None


def progress(msg):
    """One line of progress on stderr (never on stdout, which holds results)."""
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ timing --

class Timing(NamedTuple):
    median: float        # seconds per call
    q1: float
    q3: float
    repeats: int
    loops: int           # calls per timed sample


def _calibrate(f, min_sample):
    """Calls per sample so that one sample lasts >= min_sample seconds."""
    loops = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(loops):
            f()
        dt = time.perf_counter() - t0
        if dt >= min_sample or loops >= 1 << 20:
            return loops, dt / loops
        loops = max(loops * 2, int(loops * 1.2 * min_sample / max(dt, 1e-9)))


def measure(calls, *, min_sample=2e-3, min_repeats=5, max_repeats=25, budget=0.5):
    """Median seconds per call of each entry of ``calls`` (name -> function).

    Warm-up, calibration, then ``min_repeats``..``max_repeats`` rounds (as
    many as fit in ``budget`` seconds) in which every implementation takes one
    timed sample, alternating the order each round: on a shared machine the
    load drifts, and interleaving lets the drift hit every entry alike."""
    names = list(calls)
    loops, cost = {}, 0.0
    for k in names:
        calls[k]()                         # warm-up
        loops[k], per_call = _calibrate(calls[k], min_sample)
        cost += loops[k] * per_call
    repeats = int(min(max_repeats, max(min_repeats, budget / max(cost, 1e-9))))
    samples = {k: [] for k in names}
    for r in range(repeats):
        for k in (names if r % 2 == 0 else names[::-1]):
            f, n = calls[k], loops[k]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            samples[k].append((time.perf_counter() - t0) / n)
    out = {}
    for k in names:
        q1, med, q3 = np.percentile(samples[k], [25, 50, 75])
        out[k] = Timing(float(med), float(q1), float(q3), repeats, loops[k])
    return out


def medians(calls, repeats):
    """Median seconds of one call of each entry, over exactly ``repeats``
    interleaved single calls (after warm-up): ``measure`` without calibration."""
    return {k: t.median for k, t in measure(calls, min_sample=0.0, min_repeats=repeats,
                                           max_repeats=repeats, budget=0.0).items()}


# --------------------------------------------------------- argument checks --

def int_at_least(lo):
    """argparse type: an integer >= ``lo``, with a message naming the rule."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or v < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {text!r}")
        return v
    return parse


# -------------------------------------------------------------------- JSON --

def _plain(obj):
    """JSON-ready: NumPy scalars and arrays as Python values, NaN/inf (a
    diverged run, an unmeasurable error) as null -- strict JSON has neither."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json(path, doc):
    """Write ``doc`` to ``path`` as strict JSON."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(_plain(doc), f, indent=1, allow_nan=False)


# ------------------------------------------------------------- the machine --

def _cache_sizes():
    """{level: bytes} of the data caches of CPU 0 (Linux sysfs; {} elsewhere)."""
    sizes = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(base)):
            if not entry.startswith("index"):
                continue
            with open(f"{base}/{entry}/level") as f:
                level = f.read().strip()
            with open(f"{base}/{entry}/type") as f:
                kind = f.read().strip()
            with open(f"{base}/{entry}/size") as f:
                size = f.read().strip()
            if kind == "Instruction":
                continue
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
            sizes[f"L{level}" + ("d" if level == "1" else "")] = int(size.rstrip("KMG")) * mult
    except (OSError, ValueError):
        pass
    return sizes


def machine_info(modules=()):
    """Machine, gelu_ext's configuration and versions (NumPy, and each of
    ``modules`` that is already imported): what every report is stamped with."""
    cfg = gelu_ext.show_config(print_=False)
    info = {
        "cpu": cfg["cpu"], "machine": cfg["machine"], "logical_cpus": os.cpu_count(),
        "caches": _cache_sizes(), "python": platform.python_version(),
        "gelu_ext": cfg["version"], "isa": cfg["isa"], "best_isa": cfg["best_isa"],
        "compiled_isas": cfg["compiled_isas"],
        "num_threads": cfg["num_threads"], "parallel_threshold": cfg["parallel_threshold"],
        "versions": {"numpy": np.__version__},
    }
    for name in modules:
        m = sys.modules.get(name)
        info["versions"][name] = getattr(m, "__version__", None) if m else None
    return info


def _fmt_bytes(n):
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= m:
            return f"{n / m:g} {unit}"
    return f"{n} B"


def header_lines(info):
    """The machine / gelu_ext / versions lines that open the bench reports."""
    caches = ", ".join(f"{k} {_fmt_bytes(v)}" for k, v in info["caches"].items()) or "unknown"
    vers = ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v)
    missing = [k for k, v in info["versions"].items() if not v]
    lines = [
        f"machine : {info['cpu']} ({info['machine']}), {info['logical_cpus']} logical CPUs; caches {caches}",
        f"gelu_ext: {info['gelu_ext']}, ISA path {info['isa']} (best {info['best_isa']}, compiled "
        f"{', '.join(info['compiled_isas'])}), "
        f"threads {info['num_threads']}, parallel threshold {info['parallel_threshold']}",
        f"versions: python {info['python']}, {vers}",
    ]
    if missing:
        lines.append(f"missing : {', '.join(missing)} (optional; columns show '-')")
    return lines


# ------------------------------------------------------- the NumPy baseline --

def erf():
    """(erf, True) with SciPy's ufunc, else (math.erf vectorised, False):
    NumPy has no erf, and the vectorised one costs about 1 us an element."""
    try:
        from scipy.special import erf as scipy_erf
        return scipy_erf, True
    except ImportError:
        return np.vectorize(math.erf, otypes=[np.float64]), False


def numpy_exact_gelu(x, erf_):
    """0.5 x (1 + erf(x / sqrt 2)): the exact GELU a NumPy/SciPy user writes."""
    return 0.5 * x * (1.0 + erf_(x * np.sqrt(0.5).astype(x.dtype)))
