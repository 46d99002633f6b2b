"""The ops' CPU kernels in C++ (``csrc/ops.cpp``): a prototype, opt-in.

``use(True)`` builds the extension on first use (``torch.utils.cpp_extension``,
JIT with ninja, cached under ``~/.cache/torch_extensions``, one build per
torch version) and puts its
kernels at the CPU key of every ``gelu_ext::`` op in place of the Python
ones; ``use(False)`` puts the Python ones back.  ``GELU_EXT_TORCH_CPP=1``
calls ``use(True)`` as ``gelu_ext.torch`` imports.  Nothing else changes:
schemas, fake kernels, autograd, vmap rules are ``_ops``', and the kernels
are ``_ufuncs``' own (through the capsule of ``src/dispatch/gx_capi.h``), so the
results are the ufuncs' bits either way.

The build needs a compiler, ninja, torch's headers (those of the torch that
runs it) and ``src/dispatch/gx_capi.h`` from the source tree: it works from a
checkout, not from an installed wheel.
"""
import os

from . import _ops

_EXT = []


def _source_dirs():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "csrc"), os.path.normpath(os.path.join(here, "..", "..", "src", "dispatch"))


def _load(verbose=False):
    if not _EXT:
        from torch.utils import cpp_extension
        csrc, gx_src = _source_dirs()
        if not os.path.exists(os.path.join(gx_src, "gx_capi.h")):
            raise ImportError(f"gelu_ext's C++ torch kernels build from a source checkout: "
                              f"{os.path.join(gx_src, 'gx_capi.h')} is missing")
        # one build directory per torch version: the unstable C++ API has no
        # ABI across versions, and cpp_extension's own rebuild check hashes
        # the sources and flags, not torch's headers
        import torch
        build = os.path.join(cpp_extension._get_build_directory("gelu_ext_torch_cpp", verbose),
                             torch.__version__)
        os.makedirs(build, exist_ok=True)
        _EXT.append(cpp_extension.load(
            name="gelu_ext_torch_cpp", sources=[os.path.join(csrc, "ops.cpp")],
            extra_include_paths=[gx_src], extra_cflags=["-O2"], build_directory=build,
            verbose=verbose))
    return _EXT[0]


def active():
    """Whether the C++ kernels are the ops' CPU kernels now."""
    return bool(_EXT) and _EXT[0].registered()


def use(on=True, verbose=False):
    """The C++ CPU kernels (``on``) or the Python ones; returns the previous
    setting.  The first ``use(True)`` builds the extension (a minute)."""
    was = active()
    if on and not was:
        ext = _load(verbose)
        _ops._python_cpu_kernels(False)
        try:
            ext.register_ops(_ops._cpp_table())
        except BaseException:
            _ops._python_cpu_kernels(True)
            raise
    elif not on and was:
        _EXT[0].unregister_ops()
        _ops._python_cpu_kernels(True)
    return was
