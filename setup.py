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
  inside src/gx_kernels.c and chosen at run time on x86-64; aarch64 (Linux,
  macOS) builds the baseline and NEON, which every aarch64 CPU has; no flag
  here names an instruction set (build_flags).  Set GELU_EXT_MARCH_NATIVE=1 to add
  -march=native (-mcpu=native on aarch64) for a build that only runs on this
  CPU.
- Threads come from our own pthreads pool (src/gx_pool.c: survives fork,
  waits passively, shares work in chunks), not OpenMP, so nothing is probed;
  where pthreads are missing, or with GELU_EXT_NO_THREADS=1, every call runs
  on the calling thread.
  -fopenmp-simd only honours `#pragma omp simd` hints (no runtime library).
- GELU_EXT_SANITIZE=1 builds with -fsanitize=address,undefined (see README).
"""
import glob
import os
import platform
import sys


def build_flags(plat=None, machine=None, env=None):
    """The kernels' C flags for a target: (compile_args, link_args,
    define_macros).  plat is a sys.platform value ("linux", "darwin",
    "win32"), machine a platform.machine() one ("x86_64", "AMD64", "aarch64",
    "arm64"); both default to this machine's, env to os.environ.  No flag
    names an x86 instruction set: the AVX2 and AVX-512 paths are compiled by
    target pragmas inside src/gx_kernels.c, so an aarch64 build (Linux or
    macOS) gets the portable flags only (its NEON path needs none).  bench/aarch64.sh cross-compiles the
    kernels with what this returns for ("linux", "aarch64") and ("darwin",
    "arm64")."""
    plat = sys.platform if plat is None else plat
    machine = (platform.machine() if machine is None else machine).lower()
    env = os.environ if env is None else env
    compile_args = ["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
                    "-fopenmp-simd", "-Wall", "-Wno-unused-function"]
    link_args = []
    if plat == "win32":
        compile_args = ["/O2", "/fp:precise"]
    elif env.get("GELU_EXT_MARCH_NATIVE") == "1":
        # AArch64 compilers take the host CPU as -mcpu=native (Apple clang
        # has no -march=native)
        compile_args.append("-mcpu=native" if machine in ("aarch64", "arm64") else "-march=native")
    if env.get("GELU_EXT_SANITIZE") == "1":
        san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
        compile_args = [a for a in compile_args if a != "-O3"] + ["-O1", "-g"] + san
        link_args += san
    define_macros = [("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")]
    if env.get("GELU_EXT_NO_THREADS") == "1":
        define_macros.append(("GX_POOL_SERIAL", "1"))       # every call on the calling thread
    elif plat != "win32":
        # the thread pool (src/gx_pool.c); without pthreads it runs serially
        compile_args.append("-pthread")
        link_args.append("-pthread")
    return compile_args, link_args, define_macros


def main():
    import numpy as np
    from Cython.Build import cythonize
    from setuptools import Extension, setup

    compile_args, link_args, define_macros = build_flags()
    extensions = [
        Extension(
            "gelu_ext._ufuncs",
            sources=["src/_ufuncs.pyx", "src/gx_kernels.c", "src/gx_pool.c", "src/gx_soft_fma.c"],
            depends=sorted(glob.glob("src/*.h") + glob.glob("src/simd/*.h")),
            include_dirs=[np.get_include(), "src"],
            define_macros=define_macros,
            extra_compile_args=compile_args,
            extra_link_args=link_args,
        ),
        # the textbook 0.5 x (1 + erf(x / sqrt 2)) loop over libm, a benchmark row
        Extension(
            "gelu_ext._textbook",
            sources=["src/_textbook.pyx"],
            include_dirs=[np.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
            extra_compile_args=compile_args,
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


# Run by pip (setuptools executes this file as __main__); imported only for
# build_flags (bench/aarch64.sh).
if __name__ == "__main__":
    main()
