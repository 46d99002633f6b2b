"""setup.py's flags per compiler: every compiler users build with
gets flags that keep IEEE semantics and name no instruction set."""
import importlib.machinery
import importlib.util
import shutil
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parents[1] / "setup.py"
if not SETUP.exists():  # tests run from an installed copy without the source tree
    pytest.skip("setup.py is not beside the tests", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("gelu_ext_setup", SETUP)
setup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(setup)

TARGETS = [("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "arm64"), ("darwin", "x86_64"),
           ("win32", "AMD64"), ("win32", "ARM64")]
CASES = [(plat, machine, compiler) for plat, machine in TARGETS for compiler in setup.COMPILERS
         if (compiler in ("msvc", "clang-cl", "mingw")) == (plat == "win32")
         and (compiler != "apple-clang" or plat == "darwin")]


def _ids(case):
    return "-".join(case)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_no_flag_names_an_instruction_set(case):
    compile_args, link_args, _ = setup.build_flags(*case[:2], {}, case[2])
    for flag in compile_args + link_args:
        assert not flag.startswith(("-m", "/arch:", "/clang:-m")), flag


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_ieee_semantics_kept(case):
    compile_args, _, _ = setup.build_flags(*case[:2], {}, case[2])
    assert not {"-ffast-math", "-Ofast", "/fp:fast", "-funsafe-math-optimizations"} & set(compile_args)
    if case[2] == "msvc":
        assert "/fp:precise" in compile_args  # no contraction since Visual Studio 2022
    elif case[2] == "clang-cl":
        assert "/clang:-ffp-contract=off" in compile_args  # its /fp:precise fuses a*b+c
    else:
        assert "-ffp-contract=off" in compile_args


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_threads_flag_only_for_posix_threads(case):
    plat, _, compiler = case
    compile_args, link_args, _ = setup.build_flags(*case[:2], {}, compiler)
    posix = plat != "win32" and compiler in ("gcc", "clang", "apple-clang")
    assert ("-pthread" in compile_args) == posix
    assert ("-pthread" in link_args) == posix


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_no_debug_information_but_in_the_sanitizer_build(case):
    # -g0 after the interpreter's -g; the sanitizer build keeps -g for its reports
    compile_args, _, _ = setup.build_flags(*case[:2], {}, case[2])
    assert ("-g0" in compile_args) == (case[2] not in ("msvc", "clang-cl"))
    if case[2] in ("gcc", "clang"):
        c, _, _ = setup.build_flags(*case[:2], {"GELU_EXT_SANITIZE": "1"}, case[2])
        assert "-g" in c and "-g0" not in c


def test_apple_clang_takes_no_openmp_option():
    compile_args, _, _ = setup.build_flags("darwin", "arm64", {}, "apple-clang")
    assert not [a for a in compile_args if "openmp" in a]
    assert "-fopenmp-simd" in setup.build_flags("darwin", "arm64", {}, "clang")[0]


@pytest.mark.parametrize("plat, compiler", [("linux", "gcc"), ("darwin", "apple-clang"), ("win32", "msvc")])
def test_default_compiler_per_platform(plat, compiler):
    assert setup.default_compiler(plat) == compiler
    assert setup.build_flags(plat, "x86_64", {}) == setup.build_flags(plat, "x86_64", {}, compiler)


def test_unknown_compiler_is_refused_by_name():
    with pytest.raises(ValueError, match="compiler must be one of gcc, clang.*got 'icc'"):
        setup.build_flags("linux", "x86_64", {}, "icc")


@pytest.mark.parametrize("machine, flag", [("x86_64", "-march=native"), ("aarch64", "-mcpu=native"),
                                           ("arm64", "-mcpu=native")])
def test_march_native_only_when_asked(machine, flag):
    assert flag in setup.build_flags("linux", machine, {"GELU_EXT_MARCH_NATIVE": "1"}, "gcc")[0]
    assert flag not in setup.build_flags("linux", machine, {}, "gcc")[0]


def test_no_threads_and_sanitize_switches():
    _, _, macros = setup.build_flags("linux", "x86_64", {"GELU_EXT_NO_THREADS": "1"}, "gcc")
    assert ("GX_POOL_SERIAL", "1") in macros
    _, _, macros = setup.build_flags("win32", "AMD64", {"GELU_EXT_NO_THREADS": "1"}, "msvc")
    assert ("GX_POOL_SERIAL", "1") in macros
    c, l, _ = setup.build_flags("linux", "x86_64", {"GELU_EXT_SANITIZE": "1"}, "clang")
    assert "-fsanitize=address,undefined" in c and "-fsanitize=address,undefined" in l


@pytest.mark.parametrize("names, kind", [
    ({"__GNUC__"}, "gcc"),
    ({"__GNUC__", "__clang__"}, "clang"),
    ({"__GNUC__", "__clang__", "__apple_build_version__"}, "apple-clang"),
    ({"__GNUC__", "_WIN32"}, "mingw"),
    ({"_MSC_VER"}, "msvc"),
    ({"_MSC_VER", "__clang__"}, "clang-cl"),
    ({"__STDC__"}, None),
], ids=["gcc", "clang", "apple-clang", "mingw", "msvc", "clang-cl", "unknown"])
def test_compiler_kind_from_macros(names, kind):
    assert setup.compiler_kind(names) == kind
    dump = "".join(f"#define {n} 1\n" for n in sorted(names))
    assert setup.compiler_kind(dump) == kind


@pytest.mark.parametrize("cc, kind", [("gcc", "gcc"), ("clang-19", "clang"), ("clang", "clang"),
                                      ("x86_64-w64-mingw32-gcc", "mingw")])
def test_probe_finds_the_compilers_here(cc, kind):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    assert setup._probe_compiler([cc]) == kind


def test_probe_of_a_missing_compiler_is_none():
    assert setup._probe_compiler(["gelu-ext-no-such-compiler"]) is None


# ------------------------------------------------------------- ISA units --

@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_isa_units_take_their_flags_on_their_architecture_only(case):
    """Each ISA unit (src/isa/<name>.c) gets its instruction set's flags on
    x86-64 and none elsewhere; the baseline and NEON units none anywhere."""
    plat, machine, compiler = case
    x86 = machine.lower() in ("x86_64", "amd64")
    assert set(setup.ISA_UNITS) == {setup.unit_of(s) for s in setup.kernel_sources()} - {None}
    for unit in setup.ISA_UNITS:
        flags = setup.isa_flags(unit, machine, compiler, plat)
        if unit in ("baseline", "neon") or not x86:
            assert flags == [], (unit, flags)
        elif compiler in ("msvc", "clang-cl"):
            assert flags[0] == {"avx2": "/arch:AVX2", "avx512": "/arch:AVX512"}[unit]
        else:
            assert flags and all(f.startswith("-m") for f in flags)
    with pytest.raises(ValueError, match="unit must be one of"):
        setup.isa_flags("sse9", machine, compiler, plat)


def test_isa_unit_flags_are_the_rows_targets():
    """setup.py reads each unit's -m flags from the TARGET column of its row
    in src/gx_isas.h: its parse gives what the compiled table
    reports (gelu_ext.show_config), for this build's rows."""
    from gelu_ext import _ufuncs
    import platform
    for name, (_, target, _) in _ufuncs._isa_table().items():
        flags = setup.isa_flags(name, platform.machine(), "gcc", "linux")
        assert flags == [f"-m{f}" for f in target.split(",") if f], (name, flags, target)
        assert (Path(SETUP).parent / "src" / "isa" / f"{name}.c").exists()


def test_isa_targets_reads_every_x86_row():
    """The header's x86-64 rows with a target, whatever this machine: a row
    split over continuation lines (AVX-512's) is read whole."""
    targets = setup.isa_targets()
    assert set(targets) == {"avx2", "avx512"}
    assert targets["avx2"] == ("avx2", "fma", "f16c")
    assert targets["avx512"][:4] == ("avx512f", "avx512dq", "avx512vl", "avx512bw")


# -------------------------------------------- the C++ torch kernels' build --

@pytest.mark.parametrize("compiler", setup.COMPILERS)
def test_torch_extension_flags_name_no_instruction_set_nor_fast_math(compiler):
    if compiler in ("msvc", "clang-cl"):
        pytest.importorskip("torch")        # its MSVC warning list comes from cpp_extension
    args = setup.torch_compile_args(compiler)
    assert not [a for a in args if a.startswith(("-m", "/arch:")) or "fast" in a or a == "-Ofast"], args
    assert ("/std:c++20" if compiler in ("msvc", "clang-cl") else "-std=c++20") in args


def test_torch_min_is_the_one_gelu_ext_torch_checks():
    # gelu_ext.torch._cpp says the same floor at import and before a build on
    # first use; reading it from the source keeps this test free of torch
    source = (SETUP.parent / "gelu_ext" / "torch" / "_cpp.py").read_text()
    assert f"TORCH_MIN = {setup.TORCH_MIN!r}" in source


def test_torch_extension_skipped_with_one_line_when_asked(capsys):
    assert setup.torch_extension({"GELU_EXT_TORCH_CPP": "0"}) is None
    assert capsys.readouterr().out.count("\n") == 1


def test_torch_extension_against_the_torch_here():
    torch = pytest.importorskip("torch")
    ext = setup.torch_extension({})
    assert ext.name == "gelu_ext.torch._C" and ext.torch_version == torch.__version__
    assert ext.sources == [setup.TORCH_SOURCE] and setup.CAPI_HEADER in ext.depends
    assert ("TORCH_EXTENSION_NAME", "_C") in ext.define_macros and "torch_cpu" in ext.libraries


@pytest.mark.parametrize("suffix", importlib.machinery.EXTENSION_SUFFIXES)
def test_the_torch_record_sits_beside_the_module(suffix):
    # gelu_ext.torch._cpp._built reads it back from the same name
    assert setup.torch_record(f"b/gelu_ext/torch/_C{suffix}") == "b/gelu_ext/torch/_C.json"
