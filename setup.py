"""Build gelu_ext: one Cython extension, gelu_ext._ufuncs.

Flags and why:
- -O3, and never -ffast-math: NaN and inf must propagate and every operation
  must round as IEEE says, or the accuracy bounds mean nothing.
- -ffp-contract=off: the compiler may not fuse a*b+c on some paths and not on
  others; the kernels write fma() where they want one, so every ISA path gives
  the same bits.
- -fno-math-errno / -fno-trapping-math: no errno writes and no FP traps are
  assumed; neither changes a single result, both let loops vectorise.
- ISA variants (baseline, AVX2+FMA, AVX-512) are compiled from the same source
  inside src/gx_kernels.c and chosen at run time; set GELU_EXT_MARCH_NATIVE=1
  to add -march=native for a build that only runs on this CPU.
- OpenMP is probed; without it the build warns and every call runs serially.
- GELU_EXT_SANITIZE=1 builds with -fsanitize=address,undefined (see README).
"""
import os
import sys
import shutil
import tempfile
import warnings
import subprocess
import sysconfig

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup


def _compiler_accepts(flags):
    """True if the C compiler builds and links a tiny OpenMP program with flags."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    tmp = tempfile.mkdtemp()
    try:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n")
        cmd = cc.split() + [src, "-o", os.path.join(tmp, "probe")] + flags
        return subprocess.run(cmd, capture_output=True).returncode == 0
    except OSError:
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


compile_args = ["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
                "-fopenmp-simd", "-Wall", "-Wno-unused-function"]
link_args = []
if sys.platform == "win32":
    compile_args = ["/O2", "/fp:precise"]
if os.environ.get("GELU_EXT_MARCH_NATIVE") == "1":
    compile_args.append("-march=native")
if os.environ.get("GELU_EXT_SANITIZE") == "1":
    san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
    compile_args = [a for a in compile_args if a != "-O3"] + ["-O1", "-g"] + san
    link_args += san

if os.environ.get("GELU_EXT_NO_OPENMP") != "1" and _compiler_accepts(["-fopenmp"]):
    compile_args.append("-fopenmp")
    link_args.append("-fopenmp")
else:
    warnings.warn("gelu_ext: building without OpenMP; every call will run on one thread")

extensions = [
    Extension(
        "gelu_ext._ufuncs",
        sources=["src/_ufuncs.pyx", "src/gx_kernels.c"],
        depends=["src/gx_ops.h", "src/gx_kernels.h", "src/gx_kernels_impl.h", "src/gx_math.h",
                 "src/gx_lut.h", "src/gx_lut_simd.h", "src/gx_lut_tables.h"],
        include_dirs=[np.get_include(), "src"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    ),
    # the textbook 0.5 x (1 + erf(x / sqrt 2)) loop over libm, a benchmark row
    Extension(
        "gelu_ext._textbook",
        sources=["src/_textbook.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
        extra_compile_args=[a for a in compile_args if a != "-fopenmp"],
    ),
]

setup(
    ext_modules=cythonize(
        extensions,
        build_dir="build/cython",
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
        },
    ),
)
