"""Build gelu_ext: one Cython extension, gelu_ext._ufuncs, and, where torch
imports in the build environment, the C++ CPU kernels of the torch ops,
gelu_ext.torch._C (torch_extension below).

Flags and why:
- -O3, and never -ffast-math: NaN and inf must propagate and every operation
  must round as IEEE says, or the accuracy bounds mean nothing.
- -ffp-contract=off: the compiler may not fuse a*b+c on some paths and not on
  others; the kernels write fma() where they want one, so every ISA path gives
  the same bits.
- -fno-math-errno / -fno-trapping-math: no errno writes and no FP traps are
  assumed; neither changes a single result, both let loops vectorise.
- -g0 over the interpreter's -g (GCC, clang, mingw-w64): no debug
  information, as in a release build; it was a fifth of each build's compile
  time and most of the extension's size (GELU_EXT_SANITIZE=1 below builds
  with -g).
- -falign-loops=64 (GCC, clang, mingw-w64): every loop starts a cache line,
  so a kernel's speed does not follow where the linker happens to place it
  (ReLU's baseline loops ran 25-43% slower at 2^16 elements with the same
  instructions 32 bytes further along a line: Xeon, bench/ab.py).
- ISA paths (baseline, AVX2+FMA, AVX-512) are compiled from the same kernel
  headers, one compile unit per path (src/isa/<name>.c), and chosen at run
  time on x86-64; aarch64 (Linux, macOS, Windows) builds the baseline and
  NEON, which every aarch64 CPU has.  Only a path's own unit gets its
  instruction set's flags (isa_flags: -mavx2 -mfma -mf16c, MSVC
  /arch:AVX2); every other file gets the portable flags only (build_flags),
  so the code that runs before the CPU is checked uses no instruction the
  CPU may lack.  Set
  GELU_EXT_MARCH_NATIVE=1 to add -march=native (-mcpu=native on aarch64) for a
  build that only runs on this CPU (GCC and clang).
- Flags per compiler, not per platform (compiler_kind asks the compiler what
  it is): GCC, clang and mingw-w64 take the list above; Apple clang the same
  without -fopenmp-simd (Apple's driver refuses OpenMP options; the pragmas
  are hints, clang ignores them silently without it); MSVC /O2 /fp:precise
  (no contraction since Visual Studio 2022) /std:c11 (_Pragma); clang-cl the
  same plus -ffp-contract=off, since its /fp:precise fuses a*b+c.
- Threads come from our own pool (src/runtime/gx_pool.c: survives fork, waits
  passively, shares work in chunks) over POSIX threads (-pthread) or Windows
  threads (src/runtime/gx_threads.h), not OpenMP, so nothing is probed; with
  GELU_EXT_NO_THREADS=1 every call runs on the calling thread.
  -fopenmp-simd only honours `#pragma omp simd` hints (no runtime library).
- GELU_EXT_SANITIZE=1 builds with -fsanitize=address,undefined (GCC and clang;
  see README).
- gelu_ext.torch._C (gelu_ext/torch/csrc/ops.cpp): C++ over torch's headers,
  so it is built only where `import torch` works here -- `pip install
  --no-build-isolation '.[torch]'` next to an installed torch; pip's default
  isolated build has no torch and skips it with one line, the wheel then
  being what it is without torch.  torch.utils.cpp_extension's include and
  library dirs and libraries, the C++ standard and defines its own builder
  passes, -O2 (glue: the arithmetic is _ufuncs'); none of the C flags above
  (they are the kernels').  The torch version it was built against is
  written beside it (<name>.json): torch's C++ API has no ABI across
  versions, so gelu_ext.torch loads it only under that version.
  GELU_EXT_TORCH_CPP=0 skips it even where torch imports.
"""
import glob
import importlib.util
import json
import os
import platform
import re
import sys


COMPILERS = ("gcc", "clang", "apple-clang", "mingw", "msvc", "clang-cl")
_GNU_LIKE = ("gcc", "clang", "apple-clang", "mingw")


def default_compiler(plat):
    """The compiler `pip install .` uses on a platform when CC is not set."""
    return {"win32": "msvc", "darwin": "apple-clang"}.get(plat, "gcc")


def compiler_kind(macros):
    """Which of COMPILERS a compiler is, from its predefined macros (the text
    of `cc -dM -E -x c -`, or a list of names): Apple's clang defines
    __apple_build_version__, clang __clang__, GCC only __GNUC__; mingw-w64's
    GCC also _WIN32.  None if it is none of these."""
    names = set(macros) if not isinstance(macros, str) else {
        w[1] for w in (line.split() for line in macros.splitlines()) if len(w) >= 2 and w[0] == "#define"}
    if "_MSC_VER" in names:
        return "clang-cl" if "__clang__" in names else "msvc"
    if "__apple_build_version__" in names:
        return "apple-clang"
    if "__clang__" in names:
        return "clang"
    if "__GNUC__" in names:
        return "mingw" if "_WIN32" in names else "gcc"
    return None


def build_flags(plat=None, machine=None, env=None, compiler=None):
    """The kernels' C flags for a target: (compile_args, link_args,
    define_macros).  plat is a sys.platform value ("linux", "darwin",
    "win32"), machine a platform.machine() one ("x86_64", "AMD64", "aarch64",
    "arm64"), compiler one of COMPILERS; they default to this machine's, the
    platform's default compiler (default_compiler), env to os.environ.  No
    flag names an instruction set: the AVX2 and AVX-512 units add their own
    (isa_flags), every other file takes these only.  bench/aarch64.sh and
    bench/windows.sh cross-compile the kernels with what this returns."""
    plat = sys.platform if plat is None else plat
    machine = (platform.machine() if machine is None else machine).lower()
    env = os.environ if env is None else env
    compiler = default_compiler(plat) if compiler is None else compiler
    if compiler not in COMPILERS:
        raise ValueError(f"compiler must be one of {', '.join(COMPILERS)}, got {compiler!r}")
    link_args = []
    define_macros = [("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")]
    if compiler in ("msvc", "clang-cl"):
        compile_args = ["/O2", "/fp:precise", "/std:c11"]
        if compiler == "clang-cl":
            compile_args += ["/clang:-ffp-contract=off", "/clang:-fno-math-errno"]
    else:
        compile_args = ["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math", "-Wall", "-g0"]
        if compiler != "apple-clang":
            compile_args.insert(4, "-fopenmp-simd")
            compile_args.append("-falign-loops=64")
        if env.get("GELU_EXT_MARCH_NATIVE") == "1":
            # AArch64 compilers take the host CPU as -mcpu=native (Apple
            # clang has no -march=native)
            compile_args.append("-mcpu=native" if machine in ("aarch64", "arm64") else "-march=native")
        if env.get("GELU_EXT_SANITIZE") == "1":
            san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
            compile_args = [a for a in compile_args if a not in ("-O3", "-g0")] + ["-O1", "-g"] + san
            link_args += san
    if env.get("GELU_EXT_NO_THREADS") == "1":
        define_macros.append(("GX_POOL_SERIAL", "1"))       # every call on the calling thread
    elif compiler in ("gcc", "clang", "apple-clang") and plat != "win32":
        # the thread pool over POSIX threads (src/runtime/gx_threads.h); Windows
        # threads need no flag
        compile_args.append("-pthread")
        link_args.append("-pthread")
    return compile_args, link_args, define_macros


# The ISA units (src/isa/<name>.c, one per row of src/gx_isas.h) and the
# flags each takes beyond build_flags: the features of its row's TARGET column,
# read from the header (the one place they are written), on x86-64 only; a
# unit of another architecture compiles to nothing there, with no flag.
ISA_UNITS = ("baseline", "avx2", "avx512", "neon")
ISA_HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src", "gx_isas.h")


def isa_targets(header=ISA_HEADER):
    """{unit: (feature, ...)} from the TARGET column of the header's rows
    (X(ID, NAME, LEVEL, CPU, "feature,feature", VREG)); units with an empty
    TARGET (the baseline, NEON) are left out."""
    with open(header) as f:
        text = f.read().replace("\\\n", " ")
    rows = re.findall(r'X\(GX_ISA_\w+,\s*(\w+),\s*\d+,\s*\w+,\s*"([^"]*)"', text)
    return {name: tuple(target.split(",")) for name, target in rows if target}


_X86_FEATURES = isa_targets()
_MSVC_ARCH = {"avx2": "/arch:AVX2", "avx512": "/arch:AVX512"}


def isa_flags(unit, machine=None, compiler=None, plat=None):
    """The extra compile args of ISA unit src/isa/<unit>.c (one of
    ISA_UNITS) for a target, as build_flags takes it: GCC-style -m<feature>
    for each feature of the unit's row (GCC, clang, Apple clang, mingw-w64),
    MSVC's /arch:AVX2 or /arch:AVX512 (clang-cl: that and the -m flags, its
    /arch not being documented to imply FMA and F16C).  [] for the baseline,
    for NEON (every aarch64 CPU has it) and for a unit of another
    architecture than `machine`."""
    plat = sys.platform if plat is None else plat
    machine = (platform.machine() if machine is None else machine).lower()
    compiler = default_compiler(plat) if compiler is None else compiler
    if unit not in ISA_UNITS:
        raise ValueError(f"unit must be one of {', '.join(ISA_UNITS)}, got {unit!r}")
    if unit not in _X86_FEATURES or machine not in ("x86_64", "amd64"):
        return []
    gnu = [f"-m{f}" for f in _X86_FEATURES[unit]]
    if compiler == "msvc":
        return [_MSVC_ARCH[unit]]
    if compiler == "clang-cl":
        return [_MSVC_ARCH[unit]] + gnu
    return gnu


def unit_of(src):
    """The ISA unit a source path is (src/isa/<unit>.c: "<unit>"), or None
    for a file that takes build_flags only."""
    head, name = os.path.split(src)
    return os.path.splitext(name)[0] if head.replace("\\", "/").endswith("src/isa") else None


def kernel_sources():
    """The C sources of gelu_ext._ufuncs besides the Cython module: the ISA
    units (compiled each with isa_flags), then the rest (build_flags only).
    bench/aarch64.sh and bench/windows.sh build the kernels from this list."""
    return [f"src/isa/{u}.c" for u in ISA_UNITS] + [
        "src/kernels/gx_half.c", "src/dispatch/gx_dispatch.c", "src/runtime/gx_pool.c", "src/math/gx_soft_fma.c"]


TORCH_EXT = "gelu_ext.torch._C"
TORCH_SOURCE = "gelu_ext/torch/csrc/ops.cpp"
TORCH_MIN = (2, 10)
CAPI_HEADER = "src/dispatch/gx_capi.h"


def torch_extension(env=None):
    """The Extension of gelu_ext.torch._C with the version of the torch it
    builds against as its torch_version attribute, or None (and one line
    saying why) where torch does not import or GELU_EXT_TORCH_CPP=0."""
    env = os.environ if env is None else env
    if env.get("GELU_EXT_TORCH_CPP") == "0":
        print("gelu_ext: GELU_EXT_TORCH_CPP=0: the C++ kernels of gelu_ext.torch are not built")
        return None
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError:
        print("gelu_ext: no torch in this build environment: the C++ kernels of gelu_ext.torch are "
              "not built (pip install --no-build-isolation '.[torch]' next to torch builds them)")
        return None
    if torch.torch_version.TorchVersion(torch.__version__) < TORCH_MIN:
        # ops.cpp splits work with torch_parallel_for (torch/csrc/stable/c/shim.h, 2.10 on)
        print(f"gelu_ext: torch {torch.__version__} here: the C++ kernels of gelu_ext.torch need torch >= "
              f"{'.'.join(map(str, TORCH_MIN))} and are not built (gelu_ext.torch runs its Python kernels)")
        return None
    ext = cpp_extension.CppExtension(
        TORCH_EXT, sources=[TORCH_SOURCE],
        include_dirs=[os.path.dirname(CAPI_HEADER)], depends=[CAPI_HEADER],
        # pybind11 takes the module's name from this; the other is what
        # cpp_extension's BuildExtension defines for torch/extension.h
        define_macros=[("TORCH_EXTENSION_NAME", TORCH_EXT.rsplit(".", 1)[1]),
                       ("TORCH_API_INCLUDE_EXTENSION_H", None)])
    ext.torch_version = torch.__version__
    return ext


def torch_compile_args(compiler):
    """gelu_ext.torch._C's compile args for one of COMPILERS: the C++
    standard torch 2.13's own extension builder passes (C++20) and its
    MSVC warnings and exception model; -O2, no debug information, no
    instruction-set or fast-math flag."""
    if compiler in ("msvc", "clang-cl"):
        from torch.utils import cpp_extension
        return ["/O2", "/std:c++20"] + list(getattr(cpp_extension, "COMMON_MSVC_FLAGS", ["/EHsc"]))
    # -g0 over the interpreter's -g, as cpp_extension.load builds: debug
    # information for torch's templates took 10 of 25 CPU-s and 6.5 of 7 MB
    return ["-O2", "-g0", "-std=c++20"]


def torch_record(ext_path):
    """Where the torch version a built gelu_ext.torch._C was built against
    is written: beside it, its name with .json for the platform's suffix
    (gelu_ext.torch._cpp reads it back)."""
    return ext_path[: -len(_ext_suffix(ext_path))] + ".json"


def _ext_suffix(path):
    """The extension-module suffix `path` ends with (".cpython-312-x86_64-linux-gnu.so")."""
    from importlib.machinery import EXTENSION_SUFFIXES
    return max((s for s in EXTENSION_SUFFIXES if path.endswith(s)), key=len, default=os.path.splitext(path)[1])


def _up_to_date(target, inputs):
    """Whether `target` exists and no file of `inputs` is newer."""
    if not os.path.exists(target):
        return False
    t = os.path.getmtime(target)
    return all(os.path.getmtime(s) <= t for s in inputs if os.path.exists(s))


def _probe_compiler(cc):
    """compiler_kind of the compiler command `cc` (a list), by running it on
    an empty input; None if it cannot be run."""
    import subprocess
    try:
        out = subprocess.run(list(cc) + ["-dM", "-E", "-x", "c", "-"], input="", capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return compiler_kind(out.stdout) if out.returncode == 0 else None


def _kind_of(compiler):
    """compiler_kind of a setuptools compiler object."""
    ctype = getattr(compiler, "compiler_type", "")
    if ctype == "msvc":
        cc = os.path.basename(str(getattr(compiler, "cc", "") or "")).lower()
        return "clang-cl" if cc.startswith("clang-cl") else "msvc"
    if ctype == "mingw32":
        return "mingw"
    kind = _probe_compiler(getattr(compiler, "compiler_so", None) or ["cc"])
    return kind or ("apple-clang" if sys.platform == "darwin" else "gcc")


def main():
    import numpy as np
    from Cython.Build import cythonize
    from setuptools import Extension, setup
    from setuptools.command.build_ext import build_ext
    from setuptools.command.build_py import build_py
    from setuptools.errors import CCompilerError, ExecError as DistutilsExecError

    class build_ext_per_compiler(build_ext):
        """build_ext with build_flags for the compiler it was given, each
        ISA unit compiled on its own with its isa_flags added, and
        gelu_ext.torch._C with its own flags and its torch version
        recorded."""

        def finalize_options(self):
            # gelu_ext.torch._C where torch is installed here, filled in by
            # build_extensions: other steps of a build (metadata, sdist; each
            # a setup.py run of its own) finalize build_ext too, and need
            # neither torch imported nor the line below printed
            # (once: an editable install finalizes build_ext more than once)
            if (os.environ.get("GELU_EXT_TORCH_CPP") != "0" and importlib.util.find_spec("torch")
                    and all(e.name != TORCH_EXT for e in self.distribution.ext_modules)):
                self.distribution.ext_modules.append(
                    Extension(TORCH_EXT, sources=[TORCH_SOURCE], depends=[CAPI_HEADER], language="c++"))
            super().finalize_options()

        def build_extensions(self):
            self._kind = _kind_of(self.compiler)
            compile_args, link_args, define_macros = build_flags(compiler=self._kind)
            print(f"gelu_ext: compiler {self._kind}: {' '.join(compile_args)}")
            placeholder = [ext for ext in self.extensions if ext.name == TORCH_EXT]
            torch_ext = torch_extension()
            if torch_ext is None:
                self.extensions = [ext for ext in self.extensions if ext.name != TORCH_EXT]
                # a build without torch leaves out one a build with it made
                # before in the same tree: the wheel copies all of build_lib
                pkg = os.path.join(self.build_lib, *TORCH_EXT.split(".")[:-1])
                for stale in glob.glob(os.path.join(pkg, TORCH_EXT.rsplit(".", 1)[1] + ".*")):
                    os.remove(stale)
            elif placeholder:
                for attr in ("include_dirs", "library_dirs", "libraries", "define_macros", "language",
                             "torch_version"):
                    setattr(placeholder[0], attr, getattr(torch_ext, attr))
            for ext in self.extensions:
                if ext.name == TORCH_EXT:
                    ext.extra_compile_args = torch_compile_args(self._kind)
                    print(f"gelu_ext: {TORCH_EXT} for torch {ext.torch_version}: "
                          f"{' '.join(ext.extra_compile_args)}")
                    continue
                ext.extra_compile_args = compile_args
                ext.extra_link_args = link_args
                ext.define_macros = list(ext.define_macros or []) + define_macros
            self._torch_failed = None
            super().build_extensions()
            if self._torch_failed:          # nothing of it to copy or install
                self.extensions.remove(self._torch_failed)

        def build_extension(self, ext):
            path = self.get_ext_fullpath(ext.name)
            if ext.name == TORCH_EXT:
                self._build_torch(ext, path)
                return
            units = [s for s in ext.sources if unit_of(s)]
            # what build_ext itself checks before it links, checked before
            # the units are compiled too (a second build_ext compiles nothing)
            if not self.force and _up_to_date(path, ext.sources + list(ext.depends or [])):
                print(f"gelu_ext: {ext.name} is up to date")
                return
            objects = []
            for src in units:
                extra = isa_flags(unit_of(src), compiler=self._kind)
                print(f"gelu_ext: {src}: {' '.join(extra) or '(build flags only)'}")
                objects += self.compiler.compile(
                    [src], output_dir=self.build_temp, macros=ext.define_macros,
                    include_dirs=ext.include_dirs, debug=self.debug,
                    extra_postargs=ext.extra_compile_args + extra, depends=ext.depends)
            ext.sources = [s for s in ext.sources if s not in units]
            ext.extra_objects = list(ext.extra_objects or []) + objects
            self.force, force = True, self.force     # the units are new: link
            try:
                super().build_extension(ext)
            finally:
                self.force = force

        def _build_torch(self, ext, path):
            # built against another torch (the sources older than it): build again
            record = torch_record(path)
            try:
                with open(record) as f:
                    built_for = json.load(f)["torch"]
            except (OSError, ValueError, KeyError):
                built_for = None
            force = self.force
            self.force = force or built_for != ext.torch_version
            try:
                super().build_extension(ext)
            except (CCompilerError, DistutilsExecError) as e:
                # optional: the ops keep their Python kernels; what failed
                # is said, and nothing of an older build is left to load
                print(f"gelu_ext: WARNING: the C++ kernels of gelu_ext.torch did not build against "
                      f"torch {ext.torch_version} ({e}); gelu_ext.torch will run its Python kernels")
                for stale in (path, record):
                    if os.path.exists(stale):
                        os.remove(stale)
                self._torch_failed = ext
                return
            finally:
                self.force = force
            with open(record, "w") as f:
                json.dump({"torch": ext.torch_version}, f)
                f.write("\n")

        def copy_extensions_to_source(self):
            # --inplace (and editable installs) copy each built module into
            # the tree; the torch version it was built against goes with it,
            # and a failed build removes the tree's older one, which would
            # load in its place
            super().copy_extensions_to_source()
            build_py = self.get_finalized_command("build_py")
            for ext in self.extensions + [self._torch_failed]:
                if ext is not None and ext.name == TORCH_EXT:
                    fullname = self.get_ext_fullname(ext.name)
                    built = os.path.join(self.build_lib, self.get_ext_filename(fullname))
                    package = fullname.rpartition(".")[0]
                    dest = os.path.join(build_py.get_package_dir(package), os.path.basename(built))
                    if ext is self._torch_failed:
                        for stale in (dest, torch_record(dest)):
                            if os.path.exists(stale):
                                os.remove(stale)
                    else:
                        self.copy_file(torch_record(built), torch_record(dest), level=self.verbose)

    class build_py_with_capi(build_py):
        """build_py, and the kernels' C API header beside ops.cpp in the
        package (gelu_ext/torch/csrc/), so an installed gelu_ext can build
        the C++ kernels on first use (gelu_ext.torch._cpp) without the
        source tree; src/dispatch/gx_capi.h stays its one copy here."""

        def run(self):
            super().run()
            dest = os.path.join(self.build_lib, "gelu_ext", "torch", "csrc")
            self.mkpath(dest)
            self.copy_file(CAPI_HEADER, os.path.join(dest, os.path.basename(CAPI_HEADER)))

        def get_outputs(self, include_bytecode=True):
            return super().get_outputs(include_bytecode) + [
                os.path.join(self.build_lib, "gelu_ext", "torch", "csrc", os.path.basename(CAPI_HEADER))]

    extensions = [
        Extension(
            "gelu_ext._ufuncs",
            sources=["src/python/_ufuncs.pyx"] + kernel_sources(),
            depends=sorted(glob.glob("src/**/*.h", recursive=True)),
            include_dirs=[np.get_include(), "src"],
        ),
        # what only the tests call (the scalar twins over arrays), with the
        # kernels' flags, apart from the production module
        Extension(
            "gelu_ext._test_hooks",
            sources=["src/python/_test_hooks.pyx", "src/testing/gx_twins.c"],
            depends=sorted(glob.glob("src/**/*.h", recursive=True)),
            include_dirs=[np.get_include(), "src"],
        ),
        # the textbook 0.5 x (1 + erf(x / sqrt 2)) loop over libm, a benchmark row
        Extension(
            "gelu_ext._textbook",
            sources=["src/python/_textbook.pyx"],
            include_dirs=[np.get_include()],
        ),
    ]

    setup(
        cmdclass={"build_ext": build_ext_per_compiler, "build_py": build_py_with_capi},
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
# build_flags (bench/aarch64.sh, bench/windows.sh, tests/test_build_flags.py).
if __name__ == "__main__":
    main()
