"""Run-time configuration: which ISA path runs, threads (our own pool, src/runtime/gx_pool.c)."""
import os
import platform
import warnings

import numpy as np

from . import _ufuncs

_ENV_ISA = "GELU_EXT_ISA"


def _apply_env_isa():
    """GELU_EXT_ISA=<a name of _ufuncs.ISA_NAMES> caps the kernels at that path.

    It exists so one machine can test every compiled path; asking for a path
    the CPU lacks falls back to the best one with a warning."""
    want = os.environ.get(_ENV_ISA, "").strip().lower()
    if not want:
        return
    if want not in _ufuncs.ISA_NAMES:
        raise ValueError(f"{_ENV_ISA} must be one of {_ufuncs.ISA_NAMES}, got {want!r}")
    best = _ufuncs._best_isa()
    if _ufuncs.ISA_NAMES.index(want) > _ufuncs.ISA_NAMES.index(best):
        warnings.warn(f"{_ENV_ISA}={want!r} is not available on this CPU; using {best!r}",
                      RuntimeWarning, stacklevel=3)
        return
    _ufuncs._set_isa(want)


def get_num_threads():
    """Threads a large call uses: ``set_num_threads``'s value, else the
    default -- OMP_NUM_THREADS if set to a positive integer when gelu_ext
    first needed it, else the CPUs this process may run on."""
    return _ufuncs._get_num_threads()


def set_num_threads(n):
    """Use ``n`` threads for large calls; ``0`` or ``None`` restores the
    default.  Results are bit-identical whatever the count."""
    if n is None:
        n = 0
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer or None, got {n!r}")
    _ufuncs._set_num_threads(int(n))


# Keep in sync with src/runtime/gx_pool.c (GX_SPIN_NS, GX_STALL_NS, GX_PULL_MIN_NS, GX_BACKOFF_*).
_POOL = ("gelu_ext's own thread pool over POSIX or Windows threads (not OpenMP); one call at a time, "
         "a concurrent caller runs on its own thread")
_WAIT = ("passive: spin 100 us, then sleep; a worker woken on its caller's core moves off it, "
         "one still computing when the caller runs out of chunks is pulled onto the caller's core; "
         "after a threaded call slower than one thread would have been, "
         "the next 8-1024 large calls (at most 1 s) run serially")
_AFTER_FORK = "child starts its own workers at its first threaded call (same thread count)"


_F32_TABLES = {
    8: "8-piece (src/math/gx_lut8.h: one vpermps per coefficient; the bits of its own scalar twins)",
    32: "32-piece (src/math/gx_lut.h; the bits of the baseline path)",
}


def _config():
    return {
        "version": __import__("gelu_ext").__version__,
        "isa": _ufuncs._get_isa(),
        "best_isa": _ufuncs._best_isa(),
        "compiled_isas": list(_ufuncs._compiled_isas()),
        "f32_tables": _F32_TABLES[_ufuncs._f32_pieces(_ufuncs._get_isa())],
        "isa_targets": ", ".join(f"{name}: {target or '(build flags)'}"
                                 for name, (_, target, _) in _ufuncs._isa_table().items()),
        "pool": _POOL if _ufuncs._pool_threaded() else "none (built without threads): serial",
        "wait_policy": _WAIT if _ufuncs._pool_threaded() else "-",
        "num_threads": get_num_threads(),
        "default_threads": _ufuncs._default_num_threads(),
        "parallel_threshold": _ufuncs._get_parallel_threshold(),
        "relu_parallel_threshold": _ufuncs._op_parallel_threshold("relu"),
        "chunk": _ufuncs._get_chunk(),
        "cpu_loops": ("plain loads (AMD): ReLU in a plain loop, 16-bit forward tables read without gathers"
                      " (SiLU in one pass)" if _ufuncs._plain_loads()
                      else "ReLU in prefetching blocks, 16-bit forward tables read with gathers"),
        "bf16_rounding": ("AVX512-BF16 vcvtneps2bf16 (integer rounding for float32 subnormals)"
                          if _ufuncs._bf16cvt() else "integer round-to-nearest-even"),
        "dtypes": _dtypes(),
        "after_fork": _AFTER_FORK if _ufuncs._pool_threaded() else "serial, like the parent",
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "numpy": np.__version__,
    }


def _dtypes():
    """The dtypes with loops of their own (others are cast, as for np.tanh)."""
    dt, why = _ufuncs._bfloat16()      # imports ml_dtypes where it is installed
    if dt is None:
        return f"float16, float32, float64; no bfloat16: {why}"
    import ml_dtypes        # imported already: the loops exist
    return f"float16, float32, float64, bfloat16 (ml_dtypes {ml_dtypes.__version__})"


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def show_config(print_=True):
    """Print (and return as a dict) the build and run-time configuration:
    the ISA path in use, the best one this CPU runs, and what governs
    threads: the pool, its wait policy, the thread count and its default,
    the thresholds (calls below ``parallel_threshold`` elements, ReLU below
    ``relu_parallel_threshold``, per thread never split), the chunk a thread
    takes at a time, what a forked child gets, and the dtypes with loops of
    their own (bfloat16 when ml_dtypes is installed)."""
    cfg = _config()
    if print_:
        width = max(map(len, cfg))
        for k, v in cfg.items():
            print(f"{k:<{width}} : {v}")
    return cfg


_apply_env_isa()


def main(argv=None):
    """``python -m gelu_ext config``: print the configuration."""
    import argparse
    p = argparse.ArgumentParser(prog="python -m gelu_ext config",
                                description="Print gelu_ext's build and run-time configuration.")
    p.parse_args(argv)
    show_config()
    return 0
