"""Which CPU kernels the ops run: C++ (``csrc/ops.cpp``) or Python (``_ops``).

Design:

* The C++ kernels are the default wherever they can run: ``setup.py`` builds
  them as ``gelu_ext.torch._C`` when torch imports in the build environment
  (``pip install --no-build-isolation '.[torch]'`` next to torch) and writes
  the torch version it built against beside it (``_C.json``); as
  ``gelu_ext.torch`` imports, ``_select`` puts them at the CPU key of every
  ``gelu_ext::`` op in place of the Python ones.  Why they win: no Python per
  call, outputs from torch's allocator, and work split over torch's own
  intra-op threads instead of a second pool that fights them
  (bench/README.md, "The C++ kernels").
* torch's C++ API has no ABI across versions: an extension built against
  another torch is never loaded (it could fail to load or, worse, load and
  misbehave); the Python kernels run, with one warning saying how to build
  it again.  Not built at all (a wheel built without torch): the Python
  kernels, with one warning where this machine could build the C++ ones (a
  C++ compiler and torch's headers: ``_buildable``) saying how, or on a
  torch older than they need (``TORCH_MIN``) saying so; silently where it
  could not -- they are the same ops with the same bits.
* ``GELU_EXT_TORCH_CPP=0`` forces the Python kernels, ``=1`` the C++ ones:
  the built extension where it matches this torch, otherwise built on first
  use (``torch.utils.cpp_extension``, JIT with ninja, cached under
  ``~/.cache/torch_extensions``, one build per torch version) from the
  sources the package ships (``csrc/ops.cpp``, ``csrc/gx_capi.h``; in a
  checkout ``gx_capi.h`` is read from ``src/dispatch/``).
* Nothing but the CPU kernel changes: schemas, fake kernels, autograd and
  vmap rules are ``_ops``', and both kernels run ``_ufuncs``' own loops (the
  C++ ones through the capsule of ``src/dispatch/gx_capi.h``), so the bits
  are the ufuncs' either way.
"""
import importlib
import importlib.machinery
import importlib.util
import json
import os
import warnings

import torch

from . import _ops, _private

ENV = "GELU_EXT_TORCH_CPP"
# The oldest torch the C++ kernels build against: ops.cpp splits work with
# torch_parallel_for of torch's stable C shim (torch/csrc/stable/c/shim.h),
# there from 2.10.  Keep in sync with setup.py's TORCH_MIN.
TORCH_MIN = (2, 10)
_HERE = os.path.dirname(os.path.abspath(__file__))

_LOADED = {}        # "built" / "jit" -> the extension module, loaded once
_ACTIVE = []        # [the module whose kernels are the ops' CPU kernels now] or []
_WARNED = []        # [True] once the import-time choice has warned


def kernels():
    """Which CPU kernels the ``gelu_ext::`` ops run: ``"cpp"`` or ``"python"``.

    ``"cpp"``: the C++ kernels, built at install next to this very torch
    version (or on first use under ``GELU_EXT_TORCH_CPP=1``); outputs from
    torch's allocator, threads from torch's intra-op pool.  ``"python"``: the
    Python kernels (a wheel built without torch, an extension built against
    another torch, or ``GELU_EXT_TORCH_CPP=0``).  The bits are the same.

    >>> import gelu_ext.torch
    >>> gelu_ext.torch.kernels() in ("cpp", "python")
    True
    """
    return "cpp" if _ACTIVE else "python"


def active():
    """Whether the C++ kernels are the ops' CPU kernels now."""
    return bool(_ACTIVE)


def empty_cache():
    """Free the output memory the C++ kernels keep.

    Inside a model each layer's activation output is freed before the next
    layer's is made; fresh memory costs its page faults again (more than
    the kernel at MiniLM's 32x128), so the C++ kernels keep the last output
    of 4 KiB to 64 MiB that was freed and give it to the next output of
    exactly its size.  One block at most; this frees it, as
    ``torch.cuda.empty_cache()`` frees the CUDA allocator's.  Nothing is
    kept on the Python kernels.

    >>> import gelu_ext.torch
    >>> gelu_ext.torch.empty_cache()
    """
    for module in _LOADED.values():
        module.empty_cache()


def _kept_bytes():
    """The size of the kept output block in bytes (0: none), for the tests."""
    return sum(module.kept_bytes() for module in _LOADED.values())


def _threading_stats():
    """The C++ kernels' back-off counters, summed: calls judged threaded,
    stalls among them, calls run on the caller alone after one."""
    out = {"threaded": 0, "stalls": 0, "serial": 0}
    for module in _LOADED.values():
        for k, v in module.threading_stats().items():
            out[k] += v
    return out


def _built():
    """(path, torch version it was built against or None) of the
    installed gelu_ext.torch._C, found without importing it; None where it
    was not built."""
    spec = importlib.util.find_spec(__package__ + "._C")
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None
    # setup.py's torch_record: the module's name, .json for the platform's suffix
    suffix = max((s for s in importlib.machinery.EXTENSION_SUFFIXES if spec.origin.endswith(s)),
                 key=len, default=os.path.splitext(spec.origin)[1])
    try:
        with open(spec.origin[: -len(suffix)] + ".json") as f:
            return spec.origin, json.load(f)["torch"]
    except (OSError, ValueError, KeyError, TypeError):
        return spec.origin, None


def _sources():
    """(ops.cpp, the directory holding gx_capi.h) for a build on first use:
    the package's own copies (an installed wheel), else the checkout's."""
    csrc = os.path.join(_HERE, "csrc")
    for inc in (csrc, os.path.normpath(os.path.join(_HERE, "..", "..", "src", "dispatch"))):
        if os.path.isfile(os.path.join(inc, "gx_capi.h")):
            return os.path.join(csrc, "ops.cpp"), inc
    raise ImportError(f"gelu_ext's C++ torch kernels cannot be built here: gx_capi.h is in neither "
                      f"{csrc} nor the source tree's src/dispatch")


def _too_old():
    """Whether this torch is older than the C++ kernels need."""
    return torch.torch_version.TorchVersion(torch.__version__) < TORCH_MIN


def _needs():
    return (f"gelu_ext.torch's C++ kernels need torch >= {'.'.join(map(str, TORCH_MIN))} "
            f"(torch's stable C shim), this is torch {torch.__version__}")


def _buildable():
    """Whether this machine has what building the C++ kernels takes: a C++
    compiler (the one torch.utils.cpp_extension calls: $CXX, else c++) and
    torch's headers, the stable C shim among them."""
    import shutil
    shim = os.path.join(os.path.dirname(torch.__file__), "include", "torch", "csrc", "stable", "c", "shim.h")
    return os.path.isfile(shim) and shutil.which(os.environ.get("CXX") or "c++") is not None


def _jit(verbose=False):
    """The extension built from the shipped sources with cpp_extension.load."""
    if _too_old():
        raise ImportError(f"{_needs()}: unset {ENV} (or set it to 0) to run the Python kernels")
    from torch.utils import cpp_extension
    source, inc = _sources()
    # one build directory per torch version: the C++ API has no ABI across
    # versions, and cpp_extension's own rebuild check hashes the sources and
    # flags, not torch's headers
    build = os.path.join(_private.build_directory("gelu_ext_torch_cpp", verbose),
                         torch.__version__)
    os.makedirs(build, exist_ok=True)
    return cpp_extension.load(name="gelu_ext_torch_cpp", sources=[source], extra_include_paths=[inc],
                              extra_cflags=["-O2"], build_directory=build, verbose=verbose)


def _module(verbose=False, jit=False):
    """The extension to run: the built one where it was built against this
    torch (unless ``jit``), else built on first use."""
    built = None if jit else _built()
    kind = "built" if built is not None and built[1] == torch.__version__ else "jit"
    if kind not in _LOADED:
        _LOADED[kind] = importlib.import_module(__package__ + "._C") if kind == "built" else _jit(verbose)
    return _LOADED[kind]


def use(on=True, verbose=False, jit=False):
    """The C++ CPU kernels (``on``) or the Python ones; returns whether the
    C++ ones were in before.  ``jit``: the extension built on first use even
    where an installed one matches (the first such call builds it: ~30 s)."""
    was = active()
    want = _module(verbose, jit) if on else None
    if _ACTIVE and _ACTIVE[0] is not want:
        _ACTIVE.pop().unregister_ops()
        _ops._python_cpu_kernels(True)
    if want is not None and not _ACTIVE:
        # the Python kernels out first: a second kernel at one key overrides
        # the first with a warning
        _ops._python_cpu_kernels(False)
        try:
            want.register_ops(_ops._cpp_table(), _ops.AUTOGRAD_ENTRIES)
        except BaseException:
            _ops._python_cpu_kernels(True)
            raise
        _ACTIVE.append(want)
    return was


def _warn_once(message):
    if not _WARNED:
        _WARNED.append(True)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _select(env=None):
    """The import-time choice (module docstring): ``GELU_EXT_TORCH_CPP``
    first, then the built extension if it matches this torch."""
    env = os.environ if env is None else env
    mode = env.get(ENV, "").strip()
    if mode in ("0", "1"):
        use(mode == "1")
        return
    if mode:
        raise ValueError(f"{ENV} must be '0' (the Python kernels) or '1' (the C++ kernels), got {mode!r}")
    built = _built()
    if built is None:
        use(False)
        if _too_old():
            _warn_once(f"{_needs()}: the Python kernels run (same results, slower). {ENV}=0 chooses "
                       f"them without this warning")
        elif _buildable():
            _warn_once(
                f"gelu_ext.torch runs its Python kernels: its C++ kernels (faster) were not built, and "
                f"this machine can build them (a C++ compiler, torch {torch.__version__}'s headers). "
                f"Build them next to torch: pip install --no-build-isolation '.[torch]' (in gelu_ext's "
                f"source), or set {ENV}=1 to build them on first use; {ENV}=0 chooses the Python "
                f"kernels without this warning")
        return
    if built[1] != torch.__version__:
        _warn_once(
            f"gelu_ext.torch's C++ kernels ({built[0]}) were built against torch {built[1] or '(unknown)'}, "
            f"this is torch {torch.__version__}: the Python kernels run instead (same results, slower). "
            f"Build them for this torch: pip install --no-build-isolation --force-reinstall --no-deps gelu_ext "
            f"(from its source), or set {ENV}=1 to build them on first use")
        use(False)
        return
    try:
        use(True)
    except Exception as e:          # a broken build must not take the ops down with it
        _warn_once(f"gelu_ext.torch's C++ kernels ({built[0]}) did not load ({e}); the Python kernels "
                   f"run instead. {ENV}=0 chooses them without trying")
        use(False)
