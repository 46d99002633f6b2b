"""``python -m gelu_ext bench``: throughput and accuracy against NumPy and the peers.

Design:

* One registry for every benchmark in the project.  ``OPS`` holds one row
  per operation: its name, its arrays and how ours, the NumPy/SciPy baseline
  and each peer (PyTorch, JAX, ONNX Runtime, oneMKL VM) compute it, so benchmarking a
  new op is one row.  ``make_inputs`` builds a cell's arrays and
  ``prepare(impl, op, inputs)`` returns the zero-argument call that is timed.  ``bench/test_bench_ops.py`` (the
  pytest-benchmark suite) and ``bench/ratios.py`` (the speed and memory criteria) import
  these, so the same words in two reports mean the same call.
* Peers are optional and never dependencies: each is imported when first
  asked for; a missing one is named once and its columns read "-".
* Timing (``_common.measure``): every call is warmed up (JIT compilation, page faults
  of the output, thread-pool start), then run in samples long enough for
  ``perf_counter``; the samples of all implementations of one cell are
  *interleaved* (A B C, C B A, ...) and the median per implementation is
  reported.  On a shared machine the load drifts; interleaving lets the drift
  hit every column alike, so the *ratios* are trustworthy even when the
  absolute times are not.  Outputs are preallocated wherever the library
  allows it (``out=``, ONNX Runtime IOBinding); JAX cannot write into a given
  buffer, so its speed-up is taken against ours allocating its result too.
* Accuracy: float32 results are compared with the float64 twins
  (``gelu_ext.testing.ref_*``, ``ulp_error``) on a random sample; float64
  results with the mpmath oracle on a small sample.  The bulk [-3, 3] and the
  negative tail [-14, -5] are sampled separately because some peers flush the
  tail to 0, which a single sample of the bulk would never show.
"""
import argparse
import functools
import math
import os
import platform
import re
import sys
import time
from typing import Callable, NamedTuple

import numpy as np

import gelu_ext
from gelu_ext import _ufuncs, testing
from gelu_ext.jobs import _common, _mkl
from gelu_ext.jobs._common import (erf, header_lines, int_at_least, measure, progress, require,
                                  write_json)

# --------------------------------------------------------------- the ops --
# Benchmarking a new op is one row of OPS (below), plus its NumPy baseline
# when that is longer than a line; the report, the pytest-benchmark suite,
# ratios.py and the accuracy tables read the rows.

class Op(NamedTuple):
    """One benchmarked op and how every implementation runs it.

    The builders take the cell's arrays in ``inputs`` order, then ``out``, and
    return a zero-argument call (built once per cell, so the timed call is a
    closure over that cell's arrays and nothing else):

    * ``ours(*arrays, out)``: gelu_ext (``out=None``: it allocates);
    * ``numpy(*arrays, out)``: the fastest plain NumPy/SciPy a user would
      write, in-place ufunc calls into preallocated scratch (may raise
      Unavailable); ``numpy_desc`` says what it is, for the report's footnote
      (``{exact}``: the exact-GELU baseline, which depends on SciPy);
    * ``torch(torch, *tensors, out)``: PyTorch on tensors sharing the arrays'
      memory, writing into ``out`` where the op takes ``out=``;
    * ``jax(jax)``: the function of the arrays that JAX jits;
    * ``ort``: the ONNX Runtime node, ``(op_type, domain)``, or why there is none;
    * ``textbook``: the plain C loop over libm in ``gelu_ext._textbook``, or None;
    * ``mkl``: the oneMKL VM function that, times x, is the op (the accurate
      peer, ``gelu_ext.jobs._mkl``), or None.
    """
    key: str             # the op's name in the op table (src/gx_ops.h)
    title: str
    inputs: tuple        # the arrays the op takes, in call order: "x", then "g" (gradient) or "b" (bias)
    ours: Callable
    numpy: Callable
    numpy_desc: str
    torch: Callable
    jax: Callable
    ort: object
    textbook: str = None
    mkl: str = None

    @property
    def func(self):
        """The function computed (the fused form's base op), as gelu_ext.testing names it."""
        return _ufuncs.OPS[self.key].base

    @property
    def arrays(self):
        """n-sized arrays moved per call (inputs + output), for GB/s; the
        bias is one row, not n."""
        return 1 + sum(k != "b" for k in self.inputs)


# The Transformer FFN width of the fused-bias measurement (BERT-base
# intermediate size 3072 / 2): shape (n/1536, 1536), bias (1536,).
BIAS_FEATURES = 1536
# Without SciPy the exact-GELU baseline is np.vectorize(math.erf): about a
# microsecond an element, so it only runs up to this size.
VECTORIZE_MAX = 65536
_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_C = math.sqrt(2.0 / math.pi)
_TANH_A = 0.044715
_NO_GRAD_OP = "no gradient op in the inference build"


class Unavailable(Exception):
    """An implementation cannot run this op/dtype; the message says why (one line)."""


# -- the NumPy/SciPy baselines longer than a line (rows below) --

def _np_ndtr(n):
    """Phi as a NumPy user gets it: SciPy's ndtr, else math.erf vectorised
    (for ``n`` up to VECTORIZE_MAX elements)."""
    sp = peer("scipy")
    if sp is not None:
        return sp.special.ndtr
    if n > VECTORIZE_MAX:
        raise Unavailable(f"no SciPy: np.vectorize(math.erf) runs only up to n={VECTORIZE_MAX}")
    verf = erf()[0]

    def ndtr(v, out):
        np.copyto(out, 0.5 + 0.5 * verf(v * _SQRT1_2), casting="same_kind")
        return out
    return ndtr


def _tanh_of_u(x, out, x2=None):
    """tanh(c (x + a x^3)) as in-place NumPy calls, into ``out`` (``x2``: x^2
    if the caller has it already)."""
    if x2 is None:
        x2 = np.multiply(x, x, out=out)
    np.multiply(x2, _TANH_A, out=out)
    np.add(out, 1.0, out=out)
    np.multiply(out, x, out=out)
    np.multiply(out, _TANH_C, out=out)
    return np.tanh(out, out=out)


def _np_gelu_erf(x, out):
    ndtr = _np_ndtr(x.size)

    def f():
        ndtr(x, out=out)
        return np.multiply(out, x, out=out)
    return f


def _np_gelu_tanh(x, out):
    def f():
        # 0.5 x (1 + tanh(c (x + a x^3)))
        _tanh_of_u(x, out)
        np.add(out, 1.0, out=out)
        np.multiply(out, x, out=out)
        np.multiply(out, 0.5, out=out)
        return out
    return f


def _np_gelu_erf_grad(x, g, out):
    ndtr = _np_ndtr(x.size)
    s1 = np.empty_like(out)

    def f():
        np.multiply(x, x, out=s1)
        np.multiply(s1, -0.5, out=s1)
        np.exp(s1, out=s1)
        np.multiply(s1, x, out=s1)
        np.multiply(s1, _INV_SQRT_2PI, out=s1)
        ndtr(x, out=out)
        np.add(out, s1, out=out)
        np.multiply(out, g, out=out)
        return out
    return f


def _np_gelu_tanh_grad(x, g, out):
    s1, s2 = np.empty_like(out), np.empty_like(out)

    def f():
        # 0.5 (1 + th) + 0.5 x (1 - th^2) c (1 + 3a x^2), th = tanh(c (x + a x^3))
        np.multiply(x, x, out=s1)
        np.multiply(s1, 3.0 * _TANH_A, out=s2)
        np.add(s2, 1.0, out=s2)
        np.multiply(s2, _TANH_C, out=s2)
        _tanh_of_u(x, s1, x2=s1)
        np.multiply(s1, s1, out=out)
        np.subtract(1.0, out, out=out)
        np.multiply(out, s2, out=out)
        np.multiply(out, x, out=out)
        np.add(out, s1, out=out)
        np.add(out, 1.0, out=out)
        np.multiply(out, 0.5, out=out)
        np.multiply(out, g, out=out)
        return out
    return f


def _np_gelu_erf_bias(x, b, out):
    ndtr = _np_ndtr(x.size)
    s1 = np.empty_like(out)

    def f():
        np.add(x, b, out=out)
        ndtr(out, out=s1)
        return np.multiply(out, s1, out=out)
    return f


def _np_x_sigmoid(c):
    """x sigmoid(c x) = x / (1 + exp(-c x)) (SiLU: c = 1, quick GELU: c = 1.702)."""
    def build(x, out):
        def f():
            np.multiply(x, -c, out=out)
            np.exp(out, out=out)
            np.add(out, 1.0, out=out)
            return np.divide(x, out, out=out)
        return f
    return build


def _np_silu_grad(x, g, out):
    s1 = np.empty_like(out)

    def f():
        np.negative(x, out=s1)
        np.exp(s1, out=s1)
        np.add(s1, 1.0, out=s1)
        np.reciprocal(s1, out=s1)
        np.subtract(1.0, s1, out=out)
        np.multiply(out, x, out=out)
        np.add(out, 1.0, out=out)
        np.multiply(out, s1, out=out)
        return np.multiply(out, g, out=out)
    return f


# -- the peers' compositions --

def _torch_bias_gelu(torch, x, b, out):
    gelu = torch.ops.aten.gelu.out

    def f():
        # PyTorch has no fused CPU bias-GELU: the add, then GELU, in place.
        torch.add(x, b, out=out)
        return gelu(out, approximate="none", out=out)
    return f


def _jax_vjp(jax, fn):
    """The gradient op of ``fn`` as JAX computes it: vjp with the given g."""
    return lambda x, g: jax.vjp(fn, x)[1](g)[0]


def _jax_gelu(jax, approximate):
    return functools.partial(jax.nn.gelu, approximate=approximate)


OPS = {op.key: op for op in (
    Op("gelu_erf", "exact GELU", ("x",),
       ours=lambda x, out: functools.partial(gelu_ext.fast_gelu, x, "none", out=out),
       numpy=_np_gelu_erf, numpy_desc="{exact}",
       torch=lambda torch, x, out: functools.partial(torch.ops.aten.gelu.out, x, approximate="none", out=out),
       jax=lambda jax: _jax_gelu(jax, False),
       ort=("Gelu", "com.microsoft"), textbook="gelu_textbook", mkl="CdfNorm"),
    Op("gelu_tanh", "tanh GELU", ("x",),
       ours=lambda x, out: functools.partial(gelu_ext.fast_gelu, x, "tanh", out=out),
       numpy=_np_gelu_tanh, numpy_desc="the tanh formula as in-place NumPy ufunc calls",
       torch=lambda torch, x, out: functools.partial(torch.ops.aten.gelu.out, x, approximate="tanh", out=out),
       jax=lambda jax: _jax_gelu(jax, True),
       ort=("FastGelu", "com.microsoft")),
    Op("relu", "ReLU", ("x",),
       ours=lambda x, out: functools.partial(gelu_ext.relu, x, out=out),
       numpy=lambda x, out: functools.partial(np.maximum, x, 0, out=out), numpy_desc="np.maximum(x, 0, out=o)",
       torch=lambda torch, x, out: functools.partial(torch.ops.aten.relu.out, x, out=out),
       jax=lambda jax: jax.nn.relu,
       ort=("Relu", "")),
    Op("gelu_erf_grad", "exact GELU grad", ("x", "g"),
       ours=lambda x, g, out: functools.partial(gelu_ext.fast_gelu_grad, x, g, "none", out=out),
       numpy=_np_gelu_erf_grad,
       numpy_desc="Phi(x) + x*exp(-x^2/2)/sqrt(2pi) times g, Phi as in exact GELU",
       torch=lambda torch, x, g, out: functools.partial(torch.ops.aten.gelu_backward.grad_input, g, x,
                                                        approximate="none", grad_input=out),
       jax=lambda jax: _jax_vjp(jax, _jax_gelu(jax, False)),
       ort=_NO_GRAD_OP),
    Op("gelu_tanh_grad", "tanh GELU grad", ("x", "g"),
       ours=lambda x, g, out: functools.partial(gelu_ext.fast_gelu_grad, x, g, "tanh", out=out),
       numpy=_np_gelu_tanh_grad, numpy_desc="the tanh formula's derivative as in-place NumPy calls, times g",
       torch=lambda torch, x, g, out: functools.partial(torch.ops.aten.gelu_backward.grad_input, g, x,
                                                        approximate="tanh", grad_input=out),
       jax=lambda jax: _jax_vjp(jax, _jax_gelu(jax, True)),
       ort=_NO_GRAD_OP),
    Op("gelu_erf_bias", "bias+exact GELU", ("x", "b"),
       ours=lambda x, b, out: functools.partial(gelu_ext.fast_gelu, x, bias=b, out=out),
       numpy=_np_gelu_erf_bias, numpy_desc="np.add(x, b, out=o) then exact GELU in place",
       torch=_torch_bias_gelu,
       jax=lambda jax: lambda x, b: jax.nn.gelu(x + b, approximate=False),
       ort=("BiasGelu", "com.microsoft")),
    Op("silu", "SiLU", ("x",),
       ours=lambda x, out: functools.partial(gelu_ext.silu, x, out=out),
       numpy=_np_x_sigmoid(1.0), numpy_desc="x/(1+exp(-x)) as in-place NumPy calls",
       torch=lambda torch, x, out: functools.partial(torch.ops.aten.silu.out, x, out=out),
       jax=lambda jax: jax.nn.silu,
       ort="no SiLU op (a Sigmoid and a Mul)"),
    Op("quick_gelu", "quick GELU", ("x",),
       ours=lambda x, out: functools.partial(gelu_ext.quick_gelu, x, out=out),
       numpy=_np_x_sigmoid(1.702), numpy_desc="x/(1+exp(-1.702x)) as in-place NumPy calls",
       # what transformers' QuickGELUActivation runs
       torch=lambda torch, x, out: lambda: torch.mul(x, torch.sigmoid(1.702 * x), out=out),
       jax=lambda jax: lambda x: x * jax.nn.sigmoid(1.702 * x),
       ort=("QuickGelu", "com.microsoft")),
    Op("silu_grad", "SiLU grad", ("x", "g"),
       ours=lambda x, g, out: functools.partial(gelu_ext.silu_grad, x, g, out=out),
       numpy=_np_silu_grad, numpy_desc="s (1 + x (1 - s)) g, s = 1/(1+exp(-x)), as in-place NumPy calls",
       torch=lambda torch, x, g, out: functools.partial(torch.ops.aten.silu_backward.grad_input, g, x,
                                                        grad_input=out),
       jax=lambda jax: _jax_vjp(jax, jax.nn.silu),
       ort=_NO_GRAD_OP),
)}

IMPLS = ("ours", "numpy", "textbook", "torch", "jax", "onnxruntime", "mkl", "copyto")
PEERS = ("torch", "jax", "onnxruntime", "mkl")
# Short column titles in the tables.
_TITLE = {"ours": "ours", "ours_alloc": "ours(alloc)", "numpy": "NumPy", "textbook": "C libm",
          "torch": "torch", "jax": "JAX", "onnxruntime": "ORT", "mkl": "MKL VM", "copyto": "copyto"}


def bias_shape(n):
    """Shape of x for the fused-bias op with about ``n`` elements."""
    if n < BIAS_FEATURES:
        return (1, n)
    return (max(1, round(n / BIAS_FEATURES)), BIAS_FEATURES)


def make_inputs(op, dtype, n, seed=0, sigma=2.0):
    """Arrays for one benchmark cell: x, grad g, bias b, preallocated out.

    x ~ sigma N(0, 1), by default 2 N(0, 1): mostly the bulk with some tail,
    like pre-activations (a Transformer's FFN activations are nearer 1 N(0, 1);
    bench/ratios.py runs 1 and says so).
    Returns a dict with ``n`` set to the actual element count (the fused-bias
    shape rounds ``n`` to whole rows of BIAS_FEATURES)."""
    op = OPS[op] if isinstance(op, str) else op
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    shape = bias_shape(n) if "b" in op.inputs else (n,)
    d = {"x": (sigma * rng.standard_normal(shape)).astype(dtype)}
    if "g" in op.inputs:
        d["g"] = rng.standard_normal(shape).astype(dtype)
    if "b" in op.inputs:
        d["b"] = (0.1 * rng.standard_normal(shape[-1:])).astype(dtype)
    d["out"] = np.empty(shape, dtype)
    d["n"] = int(np.prod(shape))
    return d


# ------------------------------------------------------------------ peers --

_peer_cache = {}
# Flags only, each with "--": XLA ignores every flag after a word without
# (such as "intra_op_parallelism_threads=1", which is no XLA flag).
_JAX_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false"
_USER_XLA_FLAGS = "XLA_FLAGS" in os.environ      # as the user started us


def _add_xla_flags(flags):
    """Put ``flags`` first in XLA_FLAGS (where a stray word in a user's flags
    cannot hide them), each replacing one of the same name."""
    new = flags.split()
    names = {f.split("=")[0] for f in new}
    kept = [f for f in os.environ.get("XLA_FLAGS", "").split() if f.split("=")[0] not in names]
    os.environ["XLA_FLAGS"] = " ".join(new + kept)


def jax_single_thread():
    """Pin XLA's CPU thread pool to one thread.  Only effective before jax is
    imported (XLA reads XLA_FLAGS once); a user's own XLA_FLAGS win."""
    if "jax" not in sys.modules and not _USER_XLA_FLAGS:
        _add_xla_flags(_JAX_ONE_THREAD)


def jax_threads_label():
    flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_cpu_multi_thread_eigen=false" in flags.split():
        return "1 (XLA_FLAGS)"
    return "XLA default (all cores)"


def peer(name):
    """The peer's module, or None when it is not installed (imported once)."""
    if name not in _peer_cache:
        if name not in PEERS + ("scipy",):
            raise ValueError(f"peer must be one of {PEERS + ('scipy',)}, got {name!r}")
        try:
            if name == "mkl":           # a C library through ctypes, not a module
                try:
                    _peer_cache[name] = _mkl.load(_MKL_CAPS.get(_isa_asked))
                finally:
                    _common.keep_ctrl_c()   # as import_module does for the others
                return _peer_cache[name]
            # (_common.import_module keeps Ctrl-C working after the import)
            mod = _common.import_module(name)
            if name == "jax":
                # float64 arrays stay float64 only with x64 on; float32 inputs
                # stay float32 either way.
                mod.config.update("jax_enable_x64", True)
            elif name == "onnxruntime":
                _common.import_module("onnx")            # the graph is built with onnx.helper
            elif name == "scipy":
                _common.import_module("scipy.special")
        except ImportError:
            mod = None
        _peer_cache[name] = mod
    return _peer_cache[name]


_TORCH_DEFAULT_THREADS = None


def torch_default_threads():
    """PyTorch's own default thread count (as imported, before we set it)."""
    return _TORCH_DEFAULT_THREADS


def set_threads(n):
    """Threads for ours and PyTorch (ONNX Runtime takes them per session;
    JAX's are fixed at import, see ``jax_single_thread``).  ``None`` restores
    each library's default."""
    gelu_ext.set_num_threads(n)
    torch = _load_torch() if "torch" in _peer_cache else None
    if torch is not None:
        torch.set_num_threads(int(n) if n else _TORCH_DEFAULT_THREADS)


def _load_torch():
    global _TORCH_DEFAULT_THREADS
    torch = peer("torch")
    if torch is not None and _TORCH_DEFAULT_THREADS is None:
        _TORCH_DEFAULT_THREADS = torch.get_num_threads()
    return torch


# ------------------------------------------------------- instruction sets --
# ``--isa NAME`` (a gelu_ext path name) holds ours and the peers to one
# instruction set, so a ratio compares like with like on any machine.  Per
# name: PyTorch's ATEN_CPU_CAPABILITY (torch.backends.cpu.get_cpu_capability()
# reads it back in capitals) and XLA's --xla_cpu_max_isa (XLA has nothing
# below SSE4_2).  ONNX Runtime has no such switch: it always runs the CPU's best.
# One table per architecture, keyed by its paths (src/gx_isas.h's rows):
# on aarch64 PyTorch's DEFAULT capability is its NEON build (it has no level
# below) and no XLA cap is set (None), so the baseline row holds ours alone.
# Any other architecture builds the baseline alone, and its peers take no cap.
_ISA_CAPS_BY_ARCH = {
    "x86-64": {
        "baseline": ("default", "SSE4_2"),
        "avx2": ("avx2", "AVX2"),
        "avx512": ("avx512", "AVX512"),
    },
    "aarch64": {
        "baseline": ("default", None),
        "neon": ("default", None),
    },
    "other": {"baseline": ("default", None)},
}
# platform.machine(), lower-cased, as Linux, macOS and Windows spell it
_ARCH_OF_MACHINE = {"x86_64": "x86-64", "amd64": "x86-64", "aarch64": "aarch64", "arm64": "aarch64"}


def _isa_caps(names, machine):
    """The peer caps of a build whose paths are ``names`` on ``machine``: its
    architecture's rows, in the build's order (a build without some paths,
    such as one with the baseline alone, takes the rows it has).  A path with
    no row is an error, not a guess: --isa would hold the peers to nothing
    and still call the ratio like with like."""
    arch = _ARCH_OF_MACHINE.get(machine.lower(), "other")
    table = _ISA_CAPS_BY_ARCH[arch]
    missing = [name for name in names if name not in table]
    if missing:
        raise RuntimeError(f"gelu_ext's paths without peer caps on {machine!r}: {', '.join(map(repr, missing))}; "
                           f"add a row for each to _ISA_CAPS_BY_ARCH[{arch!r}] in gelu_ext/jobs/bench.py")
    return {name: table[name] for name in names}


ISA_CAPS = _isa_caps(_ufuncs.ISA_NAMES, platform.machine())
# oneMKL VM's cap per path (MKL_Enable_Instructions, x86-64 only; SSE4_2 is
# its lowest, as XLA's), and the kernel library its read-back must show.  Kept
# apart from ISA_CAPS: MKL is x86-64 only and its read-back is a library name.
_MKL_CAPS = {"baseline": "SSE4_2", "avx2": "AVX2", "avx512": "AVX512"}
_isa_asked = None


def cap_isa(isa):
    """Hold ours, PyTorch and JAX to ``isa``.  The peers read their setting
    once, when imported, so this must run before any of them is."""
    global _isa_asked
    if isa not in ISA_CAPS:
        raise ValueError(f"isa must be one of {tuple(ISA_CAPS)}, got {isa!r}")
    early = [name for name in ("torch", "jax") if name in sys.modules] + (["mkl"] if "mkl" in _peer_cache else [])
    if early:
        raise RuntimeError(f"cap_isa({isa!r}) must run before {' and '.join(early)} is imported")
    aten, xla = ISA_CAPS[isa]
    os.environ["GELU_EXT_ISA"] = isa
    gelu_ext._config._apply_env_isa()       # gelu_ext is imported already: apply it now
    os.environ["ATEN_CPU_CAPABILITY"] = aten
    if xla is not None:
        _add_xla_flags(f"--xla_cpu_max_isa={xla}")
    _isa_asked = isa


def _jax_isa():
    """What XLA compiles for, read back from a compiled executable:
    (level, target CPU), level 'AVX512', 'AVX2', 'AVX', 'SSE4_2' or 'below
    SSE4_2'; None when it cannot be read.  The serialized executable records
    the target triple, CPU and feature list its code was generated for."""
    jax = peer("jax")
    try:
        backend = _common.import_module("jax.extend.backend").get_backend()
        exe = jax.jit(jax.nn.relu).lower(np.ones(64, np.float32)).compile().runtime_executable()
        blob = backend.serialize_executable(exe)
    except Exception:           # an API that moved: no read-back, say so
        return None
    m = re.search(rb"x86_64-[\w.-]+\x12[\x01-\x7f]([\w.-]+)\x1a", blob)
    f = m and re.compile(rb"(?:[+-][\w.-]+,)+[+-][\w.-]+").search(blob, m.end())
    if not f:
        return None
    feats = set(f.group().decode().split(","))
    level = next((name for flag, name in (("+avx512f", "AVX512"), ("+avx2", "AVX2"), ("+avx", "AVX"),
                                          ("+sse4.2", "SSE4_2")) if flag in feats), "below SSE4_2")
    return level, m.group(1).decode()


def isa_info():
    """The instruction set each implementation runs, and the peers whose
    ratios do not compare like with like under ``--isa`` (with why)."""
    best = _ufuncs._best_isa()
    runs, not_comparable = {"gelu_ext": _ufuncs._get_isa()}, {}
    asked = _isa_asked
    if asked and runs["gelu_ext"] != asked:
        not_comparable["gelu_ext"] = f"gelu_ext runs {runs['gelu_ext']}, not the {asked} asked"
    torch = peer("torch") if "torch" in _peer_cache else None
    if torch is not None:
        runs["torch"] = torch.backends.cpu.get_cpu_capability()
        if asked and runs["torch"] != ISA_CAPS[asked][0].upper():
            not_comparable["torch"] = (f"torch runs {runs['torch']}, not the {ISA_CAPS[asked][0].upper()} asked "
                                       f"(ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY')})")
    if "jax" in _peer_cache and peer("jax") is not None:
        got = _jax_isa()
        runs["jax"] = f"{got[0]}, compiled for {got[1]}" if got else "? (no read-back)"
        if asked and got and ISA_CAPS[asked][1] is not None and got[0] != ISA_CAPS[asked][1]:
            not_comparable["jax"] = f"JAX compiles for {got[0]}, not the {ISA_CAPS[asked][1]} asked"
    if "onnxruntime" in _peer_cache and peer("onnxruntime") is not None:
        runs["onnxruntime"] = f"{best} (the CPU's best; no switch)"
        if asked and _ufuncs.ISA_NAMES.index(asked) < _ufuncs.ISA_NAMES.index(best):
            not_comparable["onnxruntime"] = f"ORT cannot be capped: it runs {best}, not {asked}"
    mkl = peer("mkl") if "mkl" in _peer_cache else None
    if mkl is not None:
        runs["mkl"] = mkl.describe()
        want, got = _MKL_CAPS.get(asked), mkl.branch()
        level = _mkl.VML_BRANCH[got[0]] if got else None
        if asked and level != want and not (want == "AVX512" and level == "AVX10"):
            not_comparable["mkl"] = f"oneMKL VM runs {level or 'an unknown branch'}, not the {want or asked} asked"
    return {"asked": asked, "runs": runs, "not_comparable": not_comparable,
            "env": {k: os.environ.get(k) for k in ("GELU_EXT_ISA", "ATEN_CPU_CAPABILITY", "XLA_FLAGS")}}


def isa_lines(info):
    """The report header's instruction-set line, and one WARNING line per
    implementation that does not run what ``--isa`` asked."""
    isa = info.get("isa_caps")
    if not isa:
        return []
    runs, env = isa["runs"], isa["env"]
    parts = []
    for impl, what in runs.items():
        label = _TITLE.get(impl, impl)
        if isa["asked"] and impl == "torch":
            what += f" (ATEN_CPU_CAPABILITY={env['ATEN_CPU_CAPABILITY']})"
        if isa["asked"] and impl == "jax":
            what += f" (XLA_FLAGS {env['XLA_FLAGS']})"
        parts.append(f"{label} {what}")
    head = f"--isa {isa['asked']}: " if isa["asked"] else ""
    lines = [f"ISA     : {head}{'; '.join(parts)}"]
    lines += [f"WARNING : {why}: its ratios are not comparable" for why in isa["not_comparable"].values()]
    return lines


def not_comparable(impl, info):
    """Why ``impl``'s ratios do not compare like with like in this run, or None."""
    return (info.get("isa_caps") or {}).get("not_comparable", {}).get(impl)


# ---------------------------------------------------------- implementations --
# The per-implementation plumbing every row shares: converting the arrays,
# jitting, building ONNX Runtime sessions.  What each op computes is in OPS.

def numpy_baseline_desc():
    """What the NumPy baseline of each op is, for the report's footnote."""
    if peer("scipy") is not None:
        exact = "x*scipy.special.ndtr(x)"
    else:
        exact = f"x/2*(1+np.vectorize(math.erf)(x/sqrt2)) (SciPy not installed; n <= {VECTORIZE_MAX} only)"
    return {k: op.numpy_desc.format(exact=exact) for k, op in OPS.items()}


def _prepare_textbook(op, d):
    """The brief's kernel as written: a plain C loop of 0.5 x (1 + erf(x/sqrt2))
    over libm's erff / erf (gelu_ext._textbook, built with the package)."""
    if op.textbook is None:
        raise Unavailable("the textbook loop is exact GELU only")
    try:
        from gelu_ext import _textbook
    except ImportError:
        raise Unavailable("gelu_ext._textbook not built") from None
    return functools.partial(getattr(_textbook, op.textbook), d["x"], d["out"])


def _prepare_mkl(op, d):
    """oneMKL VM's x * Phi(x), one thread (``gelu_ext.jobs._mkl``)."""
    mkl = peer("mkl")
    if mkl is None:
        raise Unavailable("oneMKL VM not installed (pip install mkl)")
    if op.mkl is None:
        raise Unavailable("oneMKL VM has CdfNorm (exact GELU) only")
    try:
        return mkl.gelu(d["x"], d["out"])
    except (TypeError, ValueError) as e:
        raise Unavailable(str(e)) from None


def _prepare_torch(op, d):
    torch = _load_torch()
    if torch is None:
        raise Unavailable("torch not installed")
    return op.torch(torch, *(torch.from_numpy(d[k]) for k in op.inputs), out=torch.from_numpy(d["out"]))


_jax_fns = {}


def _prepare_jax(op, d):
    jax = peer("jax")
    if jax is None:
        raise Unavailable("jax not installed")
    if op.key not in _jax_fns:
        _jax_fns[op.key] = jax.jit(op.jax(jax))
    fn = _jax_fns[op.key]
    args = [jax.device_put(d[k]) for k in op.inputs]
    return lambda: fn(*args).block_until_ready()


_ort_sessions = {}


def _ort_session(node_op, domain, dtype, shape, bias_shape_, threads):
    key = (node_op, domain, dtype.str, shape, bias_shape_, threads)
    if key not in _ort_sessions:
        ort = peer("onnxruntime")
        from onnx import helper
        T = helper.np_dtype_to_tensor_dtype(dtype)
        inputs = [helper.make_tensor_value_info("X", T, list(shape))]
        names = ["X"]
        if bias_shape_ is not None:
            inputs.append(helper.make_tensor_value_info("B", T, list(bias_shape_)))
            names.append("B")
        graph = helper.make_graph([helper.make_node(node_op, names, ["Y"], domain=domain)], "gelu_ext_bench",
                                  inputs, [helper.make_tensor_value_info("Y", T, list(shape))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid("com.microsoft", 1)])
        so = ort.SessionOptions()
        so.intra_op_num_threads = int(threads or 0)
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        # Spinning worker threads would steal the shared cores from the
        # implementation timed next in the interleaved loop.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            _ort_sessions[key] = ort.InferenceSession(model.SerializeToString(), so,
                                                      providers=["CPUExecutionProvider"])
        except Exception as e:   # ORT raises its own exception types
            why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            _ort_sessions[key] = Unavailable(f"no {dtype.name} kernel" if dtype != np.float32
                                             else f"session failed: {why[:80]}")
    s = _ort_sessions[key]
    if isinstance(s, Unavailable):
        raise s
    return s


def _prepare_ort(op, d, threads):
    if peer("onnxruntime") is None:
        raise Unavailable("onnxruntime not installed")
    if isinstance(op.ort, str):
        raise Unavailable(op.ort)
    x, b, o = d["x"], d.get("b"), d["out"]
    sess = _ort_session(*op.ort, x.dtype, x.shape, None if b is None else b.shape, threads)
    io = sess.io_binding()
    io.bind_cpu_input("X", x)
    if b is not None:
        io.bind_cpu_input("B", b)
    # Bound to our preallocated buffer: ORT writes there, like out=.
    io.bind_output("Y", "cpu", 0, x.dtype, o.shape, o.ctypes.data)

    def f():
        sess.run_with_iobinding(io)
        return o
    return f


def prepare(impl, op, d, threads=None):
    """A zero-argument call computing ``op`` on the arrays ``d`` with ``impl``.

    ``impl`` is one of IMPLS or "ours_alloc" (ours without ``out=``).  The
    call returns the result (an array, a tensor or a JAX array).  Raises
    Unavailable when the implementation cannot do it (not installed, no
    kernel for the dtype, no such op)."""
    op = OPS[op] if isinstance(op, str) else op
    if impl in ("ours", "ours_alloc", "numpy"):
        build = op.numpy if impl == "numpy" else op.ours
        return build(*(d[k] for k in op.inputs), out=None if impl == "ours_alloc" else d["out"])
    if impl == "textbook":
        return _prepare_textbook(op, d)
    if impl == "copyto":            # the memory ceiling: read x, write out
        return functools.partial(np.copyto, d["out"], d["x"])
    if impl == "torch":
        return _prepare_torch(op, d)
    if impl == "jax":
        return _prepare_jax(op, d)
    if impl == "onnxruntime":
        return _prepare_ort(op, d, threads)
    if impl == "mkl":
        return _prepare_mkl(op, d)
    raise ValueError(f"impl must be one of {IMPLS + ('ours_alloc',)}, got {impl!r}")


def as_numpy(r):
    """Result of a prepared call as a NumPy array."""
    if hasattr(r, "numpy") and not isinstance(r, np.ndarray):
        return r.numpy()
    return np.asarray(r)


# -------------------------------------------------------------- accuracy --

REGIONS = {"bulk": (-3.0, 3.0), "tail": (-14.0, -5.0)}


def _sample(op, dtype, region, n, rng):
    """Sample inputs for ``op`` in ``region`` (x, and b for the bias op) plus
    u: the value GELU is evaluated at (x, or fl(x + b) in dtype)."""
    lo, hi = REGIONS[region]
    t = rng.uniform(lo, hi, max(n, 8))
    if "b" in op.inputs:
        k = 256 if n >= 1024 else 8       # bias length: whole rows of the sample
        t = t[: max(k, n - n % k)].reshape(-1, k)
        b = rng.uniform(-0.25, 0.25, k).astype(dtype)
        x = (t - b).astype(dtype)
        return x, b, (x + b)
    x = t.astype(dtype)
    return x, None, x


def _ref_f32(op, u):
    """(reference, scale or None) in float64 for the float32 sample u."""
    u = u.astype(np.float64)
    ref = testing.REFERENCE[op.func](u)
    return ref, (testing.grad_scale(op.func, u) if op.func.endswith("_grad") else None)


def _ref_mp(op, u):
    """(exact mpf, scale mpf or None) per element of the float64 sample u."""
    fn = testing.MP_REFERENCE[op.func]
    if op.func.endswith("_grad"):
        return [fn(v) for v in u.ravel().tolist()]
    return [(fn(v), None) for v in u.ravel().tolist()]


def _have_mpmath():
    try:
        import mpmath  # noqa: F401
        return True
    except ImportError:
        return False


class Accuracy(NamedTuple):
    max_ulp: float
    flushed: int         # results 0 where the true value is not


def accuracy(op, dtype, impls, *, n32=1 << 14, n64=64, seed=1, threads=None):
    """Sampled max ULP error per implementation and region.

    Returns {impl: {region: Accuracy or Unavailable}}.  float32 uses ``n32``
    points per region against the float64 twin, float64 ``n64`` points against
    mpmath.  Gradients are called with grad = 1 (the derivative itself) and
    their error is in ULPs of max(|Phi|, |x phi|)."""
    op = OPS[op] if isinstance(op, str) else op
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    res = {impl: {} for impl in impls}
    if dtype != np.float32 and op.key != "relu" and not _have_mpmath():
        missing = Unavailable("mpmath not installed (pip install 'gelu_ext[test]')")
        return {impl: {region: missing for region in REGIONS} for impl in impls}
    for region in REGIONS:
        x, b, u = _sample(op, dtype, region, n32 if dtype == np.float32 else n64, rng)
        d = {"x": x, "out": np.empty_like(x), "n": x.size}
        if "g" in op.inputs:
            d["g"] = np.ones_like(x)
        if b is not None:
            d["b"] = b
        if dtype == np.float32:
            ref, scale = _ref_f32(op, u)
        else:
            refs = _ref_mp(op, u) if op.key != "relu" else None
        for impl in impls:
            try:
                with np.errstate(all="ignore"):
                    got = as_numpy(prepare(impl, op, d, threads)()).astype(np.float64)
            except Unavailable as e:
                res[impl][region] = e
                continue
            if dtype == np.float32 or op.key == "relu":
                if op.key == "relu" and dtype != np.float32:
                    ref, scale = testing.ref_relu(u), None   # exact in any dtype
                err = testing.ulp_error(got, ref, dtype, scale)
                # a 0 that is the correctly rounded tiny value is not a flush
                flushed = int(np.count_nonzero((got == 0) & (ref != 0) & (err > 1)))
                res[impl][region] = Accuracy(float(np.max(err)), flushed)
            else:
                errs, flushed = [], 0
                for gv, (exact, sc) in zip(got.ravel().tolist(), refs):
                    errs.append(testing.ulp_error(gv, exact, dtype, scale=sc))
                    flushed += gv == 0 and exact != 0 and errs[-1] > 1
                res[impl][region] = Accuracy(max(errs), flushed)
    return res


# ---------------------------------------------------------- machine info --

def where_in_memory(nbytes, caches):
    """The smallest cache level holding ``nbytes`` ("DRAM" beyond the last)."""
    for name in ("L1d", "L2", "L3"):
        if name in caches and nbytes <= caches[name]:
            return name
    return "DRAM" if caches else "?"


def machine_info():
    """The report header's facts, with the peers' versions and threads."""
    for name in ("scipy",) + PEERS:
        peer(name)                       # imports the installed ones, once
    info = _common.machine_info(("scipy",) + PEERS)
    info["versions"]["mkl"] = getattr(peer("mkl"), "__version__", None)
    if info["versions"].get("torch"):
        info["torch_threads"] = peer("torch").get_num_threads()
    if info["versions"].get("jax"):
        info["jax_threads"] = jax_threads_label()
    info["isa_caps"] = isa_info()
    for why in info["isa_caps"]["not_comparable"].values():
        progress(f"WARNING: {why}")
    return info


# ----------------------------------------------------------------- report --

def _g(v, width=7):
    """A number in 3 significant digits, '-' for missing."""
    if v is None:
        return f"{'-':>{width}}"
    if isinstance(v, float) and math.isinf(v):
        return f"{'inf':>{width}}"
    if v == 0:
        return f"{'0':>{width}}"
    if abs(v) >= 1e4 or abs(v) < 1e-2:
        return f"{v:>{width}.2g}"
    return f"{v:>{width}.3g}"


def _ulp_str(a):
    if a is None or isinstance(a, Unavailable):
        return "-"
    s = "inf" if math.isinf(a.max_ulp) else (f"{a.max_ulp:.2g}" if a.max_ulp >= 1e3 else f"{a.max_ulp:.3g}")
    return s + ("*" if a.flushed else "")


def _size_label(n):
    k = int(math.log2(n)) if n > 0 else 0
    return f"2^{k}" if n == 1 << k and n >= 1024 else str(n)


def _size_id(n):
    """A size as a pytest id and benchmark group: ``n1048576``.  Not ``2^20``:
    ``pytest -k`` rejects ``^``, and a bare number would match other ids."""
    return f"n{n}"


def _parse_size(s):
    s = s.strip().lower()
    try:
        if "^" in s or "**" in s:
            base, exp = s.replace("**", "^").split("^")
            v = int(base) ** int(exp)
        elif s[-1:] in ("k", "m"):
            v = int(s[:-1]) * (1 << (10 if s[-1] == "k" else 20))
        else:
            v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"sizes must be positive integers like 4096, 2^20 or 1M, got {s!r}")
    if v < 1:
        raise argparse.ArgumentTypeError(f"sizes must be positive, got {s!r}")
    return v


def _sizes(text):
    return [_parse_size(s) for s in text.split(",") if s.strip()]


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m gelu_ext bench",
        description="Throughput (Gelem/s, GB/s) and sampled max ULP error of gelu_ext against the NumPy/SciPy "
                    "baseline and PyTorch, JAX, ONNX Runtime and oneMKL VM (the mkl wheel) when installed; "
                    "GELU vs ReLU cost per size.")
    p.add_argument("--quick", action="store_true", help="two sizes, short timings, small samples (<= 15 s)")
    p.add_argument("--sizes", type=_sizes, metavar="N,N,...",
                   help="comma-separated element counts, e.g. 4096,2^20,16M (default 16,4096,65536,2^20,2^24)")
    p.add_argument("--dtype", choices=("float32", "float64", "all"), default="all", help="default: all")
    p.add_argument("--ops", type=lambda s: [t.strip() for t in s.split(",")], metavar="OP,...",
                   help=f"subset of {','.join(OPS)} (default: all)")
    p.add_argument("--peers", type=lambda s: [t.strip() for t in s.split(",") if t.strip()], metavar="NAME,...",
                   help=f"subset of {','.join(PEERS)}, or 'none' (default: every installed one)")
    p.add_argument("--threads", type=int_at_least(1), help="threads for ours, PyTorch and ONNX Runtime (default: ours' "
                   "default, all cores); 1 also pins JAX to one thread")
    p.add_argument("--isa", choices=tuple(ISA_CAPS),
                   help="hold ours, PyTorch, JAX and oneMKL VM to this instruction set (GELU_EXT_ISA, "
                   "ATEN_CPU_CAPABILITY, XLA_FLAGS=--xla_cpu_max_isa, MKL_Enable_Instructions, set before the peers "
                   "are imported; the header reads each back); ONNX Runtime cannot be held to one (default: each "
                   "library's best)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="throughput plot (needs matplotlib: the 'plot' extra); "
                   "also FILE-curves.png with the activations and their derivatives")
    return p


def _curves_path(path):
    root, ext = os.path.splitext(path)
    return f"{root}-curves{ext or '.png'}"


def _gelu_vs_relu(results, dtypes, sizes, impls, caches):
    """time(GELU) / time(ReLU) per dtype, size and implementation, with where
    in the memory hierarchy the two arrays sit."""
    byk = {(r["dtype"], r["op"], r["size"], r["impl"]): r for r in results}
    ratios = []
    for dt in dtypes:
        for n in sizes:
            where = where_in_memory(2 * n * np.dtype(dt).itemsize, caches)
            for c in impls:
                rr = byk.get((dt, "relu", n, c))
                for g in ("gelu_erf", "gelu_tanh"):
                    r = byk.get((dt, g, n, c))
                    if r is not None and rr is not None:
                        ratios.append({"dtype": dt, "n": n, "where": where, "impl": c, "op": g,
                                       "ratio": r["median_s"] / rr["median_s"]})
    return ratios


def collect(ops, dtypes, sizes, peers, threads, quick, title):
    """Run the benchmark: every (dtype, op, size) cell timed for ours, the
    NumPy baseline and each installed peer, then the sampled accuracy.
    Returns the run as one dict (what the report and the JSON are made of)."""
    tcfg = (dict(min_sample=1e-3, min_repeats=3, max_repeats=9, budget=0.08) if quick
            else dict(min_sample=5e-3, min_repeats=5, max_repeats=25, budget=1.0))
    n32, n64 = (1 << 12, 24) if quick else (1 << 16, 200)
    t_start = time.perf_counter()
    if threads == 1:
        jax_single_thread()
    for name in ("scipy",) + tuple(peers):
        progress(f"bench: importing {name} ...  ({time.perf_counter() - t_start:.1f} s)")
        peer(name)
    if "torch" in peers:
        _load_torch()
    set_threads(threads)
    info = machine_info()
    for q in PEERS:
        if q not in peers:
            info["versions"].pop(q, None)
    installed = [q for q in peers if peer(q) is not None]
    absent = [q for q in peers if peer(q) is None]
    if absent:
        progress(f"bench: not installed, skipped: {', '.join(absent)}")
    impls = ["ours", "numpy", "textbook"] + installed
    timed = ["ours"] + (["ours_alloc"] if "jax" in installed else []) + impls[1:] + ["copyto"]

    results, accuracy_, skipped, backoffs = [], {}, {}, []
    cells = [(dt, o, n) for dt in dtypes for o in ops for n in sizes]
    for i, (dt, okey, n) in enumerate(cells, 1):
        op = OPS[okey]
        progress(f"bench: [{i}/{len(cells)}] {dt} {op.title} n={n}  ({time.perf_counter() - t_start:.1f} s)")
        d = make_inputs(op, dt, n)
        calls = {}
        for impl in timed:
            try:
                calls[impl] = prepare(impl, op, d, threads)
            except Unavailable as e:
                skipped[(dt, okey, impl)] = str(e)
        with _common.PoolWatch() as pool:
            tm = measure(calls, **tcfg)
        if pool.note:             # our column timed partly serial calls
            backoffs.append(f"{dt} {op.title} {_size_label(n)}: {pool.note}")
        for impl, t in tm.items():
            results.append({"dtype": dt, "op": okey, "n": d["n"], "size": n, "impl": impl, "threads": threads,
                            "median_s": t.median, "q1_s": t.q1, "q3_s": t.q3, "repeats": t.repeats,
                            "loops": t.loops, "gelem_s": d["n"] / t.median / 1e9,
                            "gb_s": op.arrays * d["n"] * np.dtype(dt).itemsize / t.median / 1e9,
                            "pool_backoff": pool.delta("backoff") if impl.startswith("ours") else 0})
        del d, calls
    for dt in dtypes:
        for okey in ops:
            progress(f"bench: accuracy {dt} {OPS[okey].title}  ({time.perf_counter() - t_start:.1f} s)")
            accuracy_[(dt, okey)] = accuracy(okey, dt, impls, n32=n32, n64=n64, threads=threads)
    ratios = _gelu_vs_relu(results, dtypes, sizes, ["ours", "numpy"] + installed, info["caches"])
    return {"title": title, "ops": ops, "dtypes": dtypes, "sizes": sizes, "threads": threads,
            "timing": tcfg, "n32": n32, "n64": n64, "info": info, "installed": installed,
            "impls": impls, "results": results, "accuracy": accuracy_, "gelu_vs_relu": ratios,
            "skipped": skipped, "pool_backoffs": backoffs, "seconds": time.perf_counter() - t_start}


def format_report(run):
    """The report's lines: header, then per dtype the throughput and accuracy
    tables, the GELU/ReLU cost table and the footnotes."""
    ops, dtypes, sizes, info = run["ops"], run["dtypes"], run["sizes"], run["info"]
    installed, impls, threads, skipped = run["installed"], run["impls"], run["threads"], run["skipped"]
    out = [f"gelu_ext benchmark  ({run['title']})"]
    out += header_lines(info)
    out += isa_lines(info)
    peer_desc = []
    if "torch" in installed:
        peer_desc.append(f"torch (aten *.out, {threads} threads)")
    if "jax" in installed:
        peer_desc.append(f"JAX (jit, threads {jax_threads_label()}, allocates its result)")
    if "onnxruntime" in installed:
        peer_desc.append(f"ORT (com.microsoft Gelu/FastGelu/BiasGelu, Relu; intra_op {threads}, IOBinding)")
    if "mkl" in installed:
        peer_desc.append(f"oneMKL VM ({_mkl.DESCRIPTION}; exact GELU only)")
    out.append(f"peers   : {'; '.join(peer_desc) or 'none'}")
    out.append(f"threads : ours {threads}; NumPy/SciPy single-threaded")
    out.append("method  : median of interleaved repeats after warm-up, preallocated outputs, x ~ 2 N(0,1); "
               "Gelem/s = elements / median time")
    byk = {(r["dtype"], r["op"], r["size"], r["impl"]): r for r in run["results"]}
    for dt in dtypes:
        out.append("")
        out.append(f"== {dt}: throughput (Gelem/s; 'x' = our speed-up over that column) ==")
        cols = ["numpy", "textbook"] + installed + ["copyto"]
        h = f"{'op':<16} {'n':>6} {'ours':>7} {'GB/s':>6}"
        for c in cols:
            h += f" | {_TITLE[c]:>7} {'x':>5}"
        out.append(h)
        out.append("-" * len(h))
        for okey in ops:
            for n in sizes:
                ours = byk.get((dt, okey, n, "ours"))
                mark = "!" if ours.get("pool_backoff") else ""
                line = (f"{OPS[okey].title:<16} {_size_label(n) + mark:>6} {_g(ours['gelem_s'])} "
                        f"{_g(ours['gb_s'], 6)}")
                for c in cols:
                    r = byk.get((dt, okey, n, c))
                    if r is None:
                        line += f" | {'-':>7} {'':>5}"
                        continue
                    ref = byk[(dt, okey, n, "ours_alloc" if c == "jax" else "ours")]
                    line += f" | {_g(r['gelem_s'])} {_g(r['median_s'] / ref['median_s'], 5)}"
                out.append(line)
        out.append("")
        out.append(f"== {dt}: sampled max ULP error, bulk [-3,3] / tail [-14,-5] "
                   f"({run['n32'] if dt == 'float32' else run['n64']} points each; reference: "
                   f"{'float64 twin' if dt == 'float32' else 'mpmath'}) ==")
        h = f"{'op':<16}" + "".join(f" {_TITLE[c]:>17}" for c in impls)
        out.append(h)
        out.append("-" * len(h))
        for okey in ops:
            a = run["accuracy"][(dt, okey)]
            line = f"{OPS[okey].title:<16}"
            for c in impls:
                bulk, tail = a[c].get("bulk"), a[c].get("tail")
                cell = "-" if isinstance(bulk, Unavailable) else f"{_ulp_str(bulk)} / {_ulp_str(tail)}"
                line += f" {cell:>17}"
            out.append(line)
        out.append("  * = returns 0 where the true value is not, off by > 1 ULP (flushes the tail); "
                   "gradients in ULPs of max(|Phi|,|x phi|) (with grad = 1)")

    # -- the article's claim: GELU costs more than ReLU
    if "relu" in ops and ({"gelu_erf", "gelu_tanh"} & set(ops)):
        out.append("")
        out.append("== does GELU cost more than ReLU? time(GELU) / time(ReLU), same array, out= ==")
        cols = ["ours", "numpy"] + installed
        h = f"{'dtype':<8} {'n':>6} {'in':>5}" + "".join(f" {_TITLE[c] + ' erf/tanh':>17}" for c in cols)
        out.append(h)
        out.append("-" * len(h))
        ratio = {(r["dtype"], r["n"], r["impl"], r["op"]): r for r in run["gelu_vs_relu"]}
        for dt in dtypes:
            for n in sizes:
                where = where_in_memory(2 * n * np.dtype(dt).itemsize, info["caches"])
                line = f"{dt:<8} {_size_label(n):>6} {where:>5}"
                for c in cols:
                    vals = [ratio.get((dt, n, c, g), {}).get("ratio") for g in ("gelu_erf", "gelu_tanh")]
                    line += f" {_g(vals[0], 8)}/{_g(vals[1], 8).strip():<8}"
                out.append(line)
        for dt in dtypes:
            for label, wheres in (("in cache (L1/L2)", ("L1d", "L2")), ("L3", ("L3",)),
                                  ("memory-bound (DRAM)", ("DRAM",))):
                rs = [r["ratio"] for r in run["gelu_vs_relu"] if r["dtype"] == dt and r["impl"] == "ours"
                      and r["op"] == "gelu_erf" and r["where"] in wheres]
                if rs:
                    span = f"{min(rs):.3g}" + (f"-{max(rs):.3g}" if len(rs) > 1 else "")
                    out.append(f"  {dt} {label}: our exact GELU takes {span}x ReLU's time")
                elif label.startswith("memory"):
                    out.append(f"  {dt} {label}: no size beyond the last cache in this run "
                               f"(try --sizes 2^24)")
    out.append("")
    out.append("NumPy baselines: " + "; ".join(f"{OPS[k].title}: {v}" for k, v in numpy_baseline_desc().items()
                                              if k in ops))
    if "jax" in installed:
        out.append("JAX allocates its result, so its 'x' column compares with ours allocating too "
                   "(fast_gelu(x) without out=).")
    if "torch" in installed and "gelu_erf_bias" in ops:
        out.append("PyTorch has no fused CPU bias-GELU: its bias row is torch.add then GELU in place.")
    if "float64" in dtypes and not _have_mpmath():
        out.append("float64 ULP columns need mpmath (the oracle): pip install 'gelu_ext[test]'")
    if skipped:
        seen = {}
        for (dt, okey, impl), why in skipped.items():
            seen.setdefault((impl, why), []).append(f"{OPS[okey].title} {dt}")
        for (impl, why), where in seen.items():
            out.append(f"{_TITLE[impl]} skipped for {', '.join(sorted(set(where)))}: {why}")
    for line in run.get("pool_backoffs", []):
        out.append(f"! {line}: that row's 'ours' columns time partly one-thread calls, not the threaded kernel")
    out.append(f"(run took {run['seconds']:.1f} s)")
    return out


def write_outputs(run, json_path=None, plot_path=None):
    """The run as JSON and/or plots."""
    if json_path:
        acc_rows = []
        for (dt, okey), a in run["accuracy"].items():
            for impl, regs in a.items():
                for region, v in regs.items():
                    acc_rows.append({"dtype": dt, "op": okey, "impl": impl, "region": region,
                                     "range": REGIONS[region],
                                     "max_ulp": None if isinstance(v, Unavailable) else v.max_ulp,
                                     "flushed": None if isinstance(v, Unavailable) else v.flushed,
                                     "unavailable": str(v) if isinstance(v, Unavailable) else None})
        write_json(json_path, {
            "command": run["title"], "machine": run["info"], "threads": run["threads"],
            "sizes": run["sizes"], "dtypes": run["dtypes"], "timing": run["timing"],
            "baselines": numpy_baseline_desc(), "throughput": run["results"], "accuracy": acc_rows,
            "gelu_vs_relu": run["gelu_vs_relu"],
            "skipped": [{"dtype": dt, "op": o, "impl": i, "reason": w}
                        for (dt, o, i), w in run["skipped"].items()]})
        progress(f"bench: wrote {json_path}")
    if plot_path:
        _plot(plot_path, run["results"], run["ops"], run["dtypes"], run["info"])
        progress(f"bench: wrote {plot_path} and {_curves_path(plot_path)}")


def main(argv=None):
    p = _parser()
    args = p.parse_args(argv)
    ops = args.ops or list(OPS)
    bad = [o for o in ops if o not in OPS]
    if bad:
        p.error(f"--ops must be a subset of {','.join(OPS)}, got {','.join(bad)!r}")
    peers = PEERS if args.peers is None else ([] if args.peers == ["none"] else args.peers)
    bad = [q for q in peers if q not in PEERS]
    if bad:
        p.error(f"--peers must be a subset of {','.join(PEERS)} or 'none', got {','.join(bad)!r}")
    if args.plot:
        require("matplotlib", "plot")       # fail before the long run, not after
    if args.isa:
        cap_isa(args.isa)                   # before collect() imports the peers
    dtypes = ["float32", "float64"] if args.dtype == "all" else [args.dtype]
    sizes = args.sizes or ([4096, 1 << 18] if args.quick else [16, 4096, 65536, 1 << 20, 1 << 24])
    title = "python -m gelu_ext bench" + (" " + " ".join(argv) if argv else "")
    run = collect(ops, dtypes, sizes, peers, args.threads or gelu_ext.get_num_threads(), args.quick, title)
    print("\n".join(format_report(run)))
    write_outputs(run, args.json, args.plot)
    return 0


# ------------------------------------------------------------------ plots --

def _plot(path, results, ops, dtypes, info):
    mpl = require("matplotlib", "plot")
    mpl.use("Agg")
    plt = require("matplotlib.pyplot", "plot", "matplotlib")
    ncol = min(3, len(ops))
    nrow = math.ceil(len(ops) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 3.8 * nrow), squeeze=False)
    styles = {"float32": "-", "float64": "--"}
    impl_order = ("ours", "ours_alloc", "numpy", "textbook") + PEERS + ("copyto",)
    colors = {impl: f"C{i}" for i, impl in enumerate(impl_order)}    # one colour per implementation
    colors["copyto"] = "k"                                           # the memory ceiling
    for ax, okey in zip(axes.flat, ops):
        for impl in impl_order:
            for dt in dtypes:
                rows = sorted((r for r in results if r["op"] == okey and r["impl"] == impl and r["dtype"] == dt),
                              key=lambda r: r["n"])
                if rows:
                    ceiling = impl == "copyto"
                    ax.plot([r["n"] for r in rows], [r["gelem_s"] for r in rows], ":" if ceiling else styles[dt],
                            marker=None if ceiling else "o", ms=3, lw=1.2 if ceiling else 1.5,
                            color=colors[impl], label=f"{_TITLE[impl]} {dt}" + (" (ceiling)" if ceiling else ""))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(OPS[okey].title)
        ax.set_xlabel("elements")
        ax.set_ylabel("Gelem/s")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(ops):]:
        ax.set_visible(False)
    # one legend for all panels, below them: never over the data
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=min(6, len(handles)),
               fontsize=8, frameon=False)
    fig.suptitle(f"gelu_ext {info['gelu_ext']} on {info['cpu']}, ISA {info['isa']}, "
                 f"{info['num_threads']} threads")
    fig.tight_layout(rect=(0, 0.04 + 0.025 * math.ceil(len(handles) / 6), 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)

    # The three activations and their derivatives, with the article's points.
    x = np.linspace(-4.0, 3.0, 1401)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    a1.plot(x, gelu_ext.relu(x), label="ReLU")
    a1.plot(x, gelu_ext.fast_gelu(x), label="GELU (exact)")
    a1.plot(x, gelu_ext.fast_gelu(x, "tanh"), ":", label="GELU (tanh)")
    g_m1, g_2 = float(gelu_ext.fast_gelu(-1.0)), float(gelu_ext.fast_gelu(2.0))
    xm = np.linspace(-0.8, -0.7, 100001)
    i = int(np.argmin(gelu_ext.fast_gelu(xm)))
    x_min, y_min = float(xm[i]), float(gelu_ext.fast_gelu(xm[i]))
    # (x, y, label, label offset in points): offsets keep neighbouring labels apart
    pts = [(-1.0, 0.0, "ReLU(-1)=0", (-20, 8)), (2.0, 2.0, "ReLU(2)=2", (-62, 6)),
           (-1.0, g_m1, f"GELU(-1)={g_m1:.3f}", (-105, -4)), (2.0, g_2, f"GELU(2)={g_2:.3f}", (6, -10)),
           (x_min, y_min, f"min {y_min:.3f} at {x_min:.3f}", (6, -14))]
    for px, py, lab, off in pts:
        a1.plot([px], [py], "ko", ms=4)
        a1.annotate(lab, (px, py), textcoords="offset points", xytext=off, fontsize=8)
    a1.set_ylim(-0.5, 3.1)           # room below GELU's minimum for its label
    a1.set_title("activations")
    a1.legend()
    a1.grid(True, alpha=0.3)
    a2.plot(x, gelu_ext.relu_grad(x), label="ReLU'")
    a2.plot(x, gelu_ext.fast_gelu_grad(x), label="GELU' (exact)")
    a2.plot(x, gelu_ext.fast_gelu_grad(x, approximate="tanh"), ":", label="GELU' (tanh)")
    a2.axhline(0, color="k", lw=0.5)
    a2.plot([x_min], [0.0], "ko", ms=4)
    a2.annotate(f"GELU'=0 at {x_min:.3f}", (x_min, 0.0), textcoords="offset points", xytext=(5, -12),
                fontsize=8)
    a2.set_title("derivatives")
    a2.legend()
    a2.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(_curves_path(path), dpi=120)
    plt.close(fig)
