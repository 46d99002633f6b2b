"""oneMKL VM as a benchmark peer: the accurate exact GELU a user
could pick instead of ours, x * Phi(x) with Phi from ``vmsCdfNorm`` /
``vmdCdfNorm`` in HA mode, through ctypes on the ``mkl`` wheel's libmkl_rt.

Design:

* Optional, like every peer: ``load()`` returns None when no libmkl_rt is
  found (``pip install mkl`` puts it in ``sys.prefix/lib``), and nothing
  here imports a Python package of Intel's.
* One thread, by the sequential threading layer chosen before any other
  MKL call: VM splits a 2^20 call over OpenMP threads otherwise, and the
  sequential layer loads no OpenMP runtime beside PyTorch's.  Not the
  MKL_NUM_THREADS variable: PyTorch's own MKL reads it too, and would change
  the PyTorch rows' default thread count.
* The instruction set is capped (``cap``) with ``MKL_Enable_Instructions``
  before the first VM call, for the same reason rather than
  MKL_ENABLE_INSTRUCTIONS in the environment; its return value says whether
  MKL accepted the cap.  What VM runs is read back from which of its kernel
  libraries (``libmkl_vml_<branch>``) the first call loaded: on CPUs that are
  not Intel's, MKL loads its generic ``def`` (SSE) kernels whatever is asked.
* The 64-bit-index entry points (``vmsCdfNorm_64``): right under either
  interface layer (LP64 or ILP64) libmkl_rt may be set to.
* The product by x is VM's own ``vmsMul`` / ``vmdMul``, in place, so the
  whole call runs the instruction set MKL was held to (NumPy's multiply is
  not capped); a product is correctly rounded in any mode.
"""
import ctypes
import ctypes.util
import glob
import os
from importlib import metadata
import sys

import numpy as np

# mkl_vml_defines.h (the mkl-include wheel): high accuracy, denormals kept
# (FTZ/DAZ off, as in ours), and no error handling (the errno/callback
# default costs time and the tail's underflow is not an error here).
VML_HA = 0x00000002
VML_FTZDAZ_OFF = 0x00140000
VML_ERRMODE_IGNORE = 0x00000100
MODE = VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE
# mkl_service.h
MKL_THREADING_SEQUENTIAL = 1
MKL_ENABLE = {"SSE4_2": 0, "AVX2": 2, "AVX512": 4}
# The kernel library VM loads, by the instruction set it is built for.
VML_BRANCH = {"def": "generic SSE (MKL's path for non-Intel CPUs)", "mc3": "SSE4_2", "avx2": "AVX2",
              "avx512": "AVX512", "avx10": "AVX10", "cmpt": "compatible (CBWR)"}

DESCRIPTION = "HA v?CdfNorm then v?Mul by x, sequential layer (1 thread)"


def _candidates():
    """Where libmkl_rt may be: the environment's lib folders first (where the
    ``mkl`` wheel installs it; the conda layout on Windows), then the loader's
    search path."""
    names = {"linux": ("libmkl_rt.so*",), "win32": ("mkl_rt*.dll",), "darwin": ("libmkl_rt*.dylib",)}
    pats = names.get(sys.platform, names["linux"])
    seen = []
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix, os.path.expanduser("~/.local"))):
        for sub in ("lib", os.path.join("Library", "bin")):
            for pat in pats:
                # newest soname first: libmkl_rt.so.3, .so.2, then the bare .so
                seen += sorted(glob.glob(os.path.join(prefix, sub, pat)), reverse=True)
    found = ctypes.util.find_library("mkl_rt")
    if found:
        seen.append(found)
    return list(dict.fromkeys(seen))


class MKLVM:
    """libmkl_rt, loaded, single-threaded and capped; ``gelu(x, out)``
    computes x * Phi(x) into ``out`` for contiguous float32/float64 arrays."""

    def __init__(self, lib, path, enable=None):
        self.lib, self.path = lib, path
        lib.MKL_Set_Threading_Layer.restype = ctypes.c_int
        lib.MKL_Set_Threading_Layer(MKL_THREADING_SEQUENTIAL)   # before any other MKL call
        self.enable_asked = enable
        self.enable_accepted = None
        if enable is not None:
            lib.MKL_Enable_Instructions.restype = ctypes.c_int
            self.enable_accepted = bool(lib.MKL_Enable_Instructions(MKL_ENABLE[enable]))
        lib.MKL_Get_Max_Threads.restype = ctypes.c_int
        self.threads = lib.MKL_Get_Max_Threads()
        buf = ctypes.create_string_buffer(256)
        lib.MKL_Get_Version_String(buf, len(buf))
        self.version_string = buf.value.decode(errors="replace").strip()
        try:        # the wheel's version ('2026.2.1'); the library says '2026.2-Product'
            self.__version__ = metadata.version("mkl")
        except metadata.PackageNotFoundError:      # a libmkl_rt from elsewhere (conda, oneAPI)
            self.__version__ = self.version_string.split("Version ", 1)[-1].split("-")[0].split(" ")[0] or "?"
        self._fns = {}
        for code, ctype in (("s", ctypes.c_float), ("d", ctypes.c_double)):
            ptr = ctypes.POINTER(ctype)
            cdf = getattr(lib, f"vm{code}CdfNorm_64")
            cdf.argtypes, cdf.restype = [ctypes.c_int64, ptr, ptr, ctypes.c_int64], None
            mul = getattr(lib, f"vm{code}Mul_64")
            mul.argtypes, mul.restype = [ctypes.c_int64, ptr, ptr, ptr, ctypes.c_int64], None
            self._fns["float32" if code == "s" else "float64"] = (cdf, mul, ptr)
        x = np.linspace(-3, 3, 64)
        self.gelu(x, np.empty_like(x))()         # loads VM's kernel library: the read-back below
        self.gelu(x.astype(np.float32), np.empty(64, np.float32))()

    def branch(self):
        """(kernel library suffix, what it runs) of the VM kernels loaded, or
        None where this platform cannot tell (no /proc/self/maps)."""
        try:
            with open("/proc/self/maps") as f:
                libs = {line.rsplit("/", 1)[-1].strip() for line in f if "libmkl_vml_" in line}
        except OSError:
            return None
        got = sorted(b for b in (lib.split("libmkl_vml_", 1)[1].split(".")[0] for lib in libs) if b in VML_BRANCH)
        return (got[0], VML_BRANCH[got[0]]) if len(got) == 1 else None

    def describe(self):
        b = self.branch()
        runs = f"{b[1]} (libmkl_vml_{b[0]})" if b else "? (no read-back)"
        if self.enable_asked:
            runs += f", MKL_Enable_Instructions({self.enable_asked}) " + (
                "accepted" if self.enable_accepted else "refused")
        return runs

    def gelu(self, x, out):
        """A zero-argument call writing x * Phi(x) into ``out``."""
        if x.dtype.name not in self._fns or out.dtype != x.dtype or out.shape != x.shape:
            raise TypeError(f"oneMKL VM runs float32/float64 with out of the same dtype and shape, got "
                            f"{x.dtype}/{out.dtype}")
        if not (x.flags.c_contiguous and out.flags.c_contiguous):
            raise ValueError("oneMKL VM needs contiguous x and out")
        cdf, mul, ptr = self._fns[x.dtype.name]
        n, px, po = x.size, x.ctypes.data_as(ptr), out.ctypes.data_as(ptr)

        def f():
            cdf(n, px, po, MODE)
            mul(n, po, px, po, MODE)
            return out
        return f


def load(enable=None):
    """The peer, or None when no libmkl_rt loads.  ``enable``: 'SSE4_2',
    'AVX2' or 'AVX512' to cap its instruction set (None: MKL's own choice)."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            lib.vmsCdfNorm_64       # noqa: B018 -- an old MKL without the _64 entry points: next one
        except (OSError, AttributeError):
            continue
        return MKLVM(lib, path, enable)
    return None

