"""``--isa`` of the bench and ratios.py: ours and the peers held to one
instruction set, each setting read back and the peers that cannot
be held to it named.  The settings are process-wide and read once when a peer
is imported, so every case runs in its own interpreter."""
import importlib.util
import json
import os
import re
import sys

import pytest

from gelu_ext import _ufuncs
from gelu_ext.jobs import bench
from helpers import python_child, usable_isas


def _child(code, cwd, **env):
    """Run ``code`` (which prints one JSON document) in a fresh interpreter
    without the caller's ISA settings; returns the document.  ``cwd`` away
    from the checkout: ``python -c`` puts it first on sys.path."""
    e = {k: v for k, v in os.environ.items()
         if k not in ("GELU_EXT_ISA", "ATEN_CPU_CAPABILITY", "XLA_FLAGS")}
    e.update(env)
    r = python_child(["-c", code], capture_output=True, text=True, env=e, cwd=cwd, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


_CAP = """
import json, os
from gelu_ext import _ufuncs
from gelu_ext.jobs import bench
bench.jax_single_thread()
bench.cap_isa({isa!r})
print(json.dumps({{"env": {{k: os.environ.get(k) for k in ("GELU_EXT_ISA", "ATEN_CPU_CAPABILITY", "XLA_FLAGS")}},
                  "path": _ufuncs._get_isa()}}))
"""


@pytest.mark.parametrize("isa", ["baseline", "avx2"])
def test_cap_isa_sets_each_library_and_keeps_jax_on_one_thread(isa, tmp_path):
    if isa not in _ufuncs._compiled_isas() or _ufuncs.ISA_NAMES.index(isa) > _ufuncs.ISA_NAMES.index(
            _ufuncs._best_isa()):
        pytest.skip(f"no {isa} path on this CPU")
    got = _child(_CAP.format(isa=isa), tmp_path)
    aten, xla = bench.ISA_CAPS[isa]
    assert got["env"]["GELU_EXT_ISA"] == isa and got["env"]["ATEN_CPU_CAPABILITY"] == aten
    flags = got["env"]["XLA_FLAGS"].split()
    if xla is None:         # no XLA cap for this path (aarch64)
        assert not [f for f in flags if f.startswith("--xla_cpu_max_isa=")]
    else:
        assert f"--xla_cpu_max_isa={xla}" in flags
    assert "--xla_cpu_multi_thread_eigen=false" in flags
    assert all(f.startswith("--") for f in flags)      # XLA ignores every flag after a bare word
    assert got["path"] == isa          # gelu_ext was imported before: applied at once


def test_cap_isa_replaces_a_max_isa_flag_and_keeps_the_users_other_flags(tmp_path):
    capped = [isa for isa in usable_isas() if bench.ISA_CAPS[isa][1] is not None]
    if not capped:
        pytest.skip("no path of this build sets an XLA cap")
    isa = capped[0]
    got = _child(_CAP.format(isa=isa), tmp_path, XLA_FLAGS="--xla_cpu_max_isa=AVX512 --xla_foo=1 stray")
    xla = bench.ISA_CAPS[isa][1]
    assert got["env"]["XLA_FLAGS"].split() == [f"--xla_cpu_max_isa={xla}", "--xla_foo=1", "stray"]


def test_cap_isa_refuses_once_a_peer_is_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or type(sys)("torch"))
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    isa = _ufuncs.ISA_NAMES[-1]
    with pytest.raises(RuntimeError, match=rf"cap_isa\('{isa}'\) must run before torch is imported"):
        bench.cap_isa(isa)


def test_cap_isa_names_the_accepted_values():
    accepted = re.escape(repr(tuple(_ufuncs.ISA_NAMES)))
    with pytest.raises(ValueError, match=rf"isa must be one of {accepted}, got 'sse9'"):
        bench.cap_isa("sse9")


def test_the_header_warns_about_each_peer_not_held_to_the_isa():
    info = {"isa_caps": {"asked": "avx2", "env": {"ATEN_CPU_CAPABILITY": "avx2", "XLA_FLAGS": "--xla_cpu_max_isa=AVX2"},
                         "runs": {"gelu_ext": "avx2", "torch": "DEFAULT", "onnxruntime": "avx512 (the CPU's best)"},
                         "not_comparable": {"torch": "torch runs DEFAULT, not the AVX2 asked",
                                            "onnxruntime": "ORT cannot be capped: it runs avx512, not avx2"}}}
    lines = bench.isa_lines(info)
    assert lines[0].startswith("ISA     : --isa avx2: gelu_ext avx2; torch DEFAULT (ATEN_CPU_CAPABILITY=avx2); ORT ")
    assert lines[1:] == ["WARNING : torch runs DEFAULT, not the AVX2 asked: its ratios are not comparable",
                         "WARNING : ORT cannot be capped: it runs avx512, not avx2: its ratios are not comparable"]
    assert bench.not_comparable("onnxruntime", info).startswith("ORT cannot be capped")
    assert bench.not_comparable("jax", info) is None


_PEERS_READ_BACK = """
import json
from gelu_ext.jobs import bench
bench.cap_isa("avx2")
for name in bench.PEERS:
    bench.peer(name)
isa = bench.isa_info()
print(json.dumps({"runs": isa["runs"], "not_comparable": isa["not_comparable"]}))
"""


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("torch", "jax", "onnxruntime", "onnx")),
                    reason="the peers are not installed (benchmark environment only)")
def test_the_peers_read_back_avx2(tmp_path):
    if "avx2" not in usable_isas():
        pytest.skip("this CPU has no AVX2")
    got = _child(_PEERS_READ_BACK, tmp_path)
    assert got["runs"]["gelu_ext"] == "avx2"
    assert got["runs"]["torch"] == "AVX2"
    assert got["runs"]["jax"].startswith("AVX2, compiled for ")
    above = _ufuncs._best_isa() != "avx2"
    expected = {"onnxruntime"} if above else set()
    # oneMKL VM, where installed, compares only where it loaded its AVX2
    # kernels (on a CPU not Intel's it runs its generic ones whatever is asked)
    if "mkl" in got["runs"] and not got["runs"]["mkl"].startswith("AVX2 "):
        expected.add("mkl")
    assert set(got["not_comparable"]) == expected, got


X86_64 = {"baseline": ("default", "SSE4_2"), "avx2": ("avx2", "AVX2"), "avx512": ("avx512", "AVX512")}
AARCH64 = {"baseline": ("default", None), "neon": ("default", None)}


@pytest.mark.parametrize("machine, names, caps", [
    ("x86_64", ("baseline", "avx2", "avx512"), X86_64),
    ("AMD64", ("baseline", "avx2", "avx512"), X86_64),
    ("aarch64", ("baseline", "neon"), AARCH64),
    ("arm64", ("baseline", "neon"), AARCH64),
    ("x86_64", ("baseline",), {"baseline": X86_64["baseline"]}),
    ("riscv64", ("baseline",), {"baseline": ("default", None)}),
], ids=["x86_64", "windows-amd64", "aarch64", "macos-arm64", "x86_64-baseline-only", "other-arch"])
def test_the_peer_caps_are_the_architectures_rows_in_the_builds_order(machine, names, caps):
    got = bench._isa_caps(names, machine)
    assert got == caps and tuple(got) == names


@pytest.mark.parametrize("machine, names, unknown", [
    ("x86_64", ("baseline", "avx2", "avx512", "avx10"), "'avx10'"),
    ("aarch64", ("baseline", "neon", "sve", "sve2"), "'sve', 'sve2'"),
    ("aarch64", ("baseline", "avx2"), "'avx2'"),
    ("riscv64", ("baseline", "rvv"), "'rvv'"),
], ids=["x86_64", "aarch64-two", "another-archs-path", "other-arch"])
def test_a_path_without_peer_caps_is_an_error_naming_it(machine, names, unknown):
    with pytest.raises(RuntimeError, match=rf"paths without peer caps on '{machine}': {unknown}; add a row"):
        bench._isa_caps(names, machine)


def test_every_isa_path_of_this_build_has_its_peer_settings():
    assert tuple(bench.ISA_CAPS) == _ufuncs.ISA_NAMES


_EXTRA_PATH = """
import json
from gelu_ext import _ufuncs
_ufuncs.ISA_NAMES += ("future_isa",)       # a row added to src/gx_isas.h alone
try:
    from gelu_ext.jobs import bench
except RuntimeError as e:
    print(json.dumps({"error": str(e)}))
else:
    print(json.dumps({"caps": bench.ISA_CAPS}))
"""


def test_a_build_path_without_peer_caps_stops_the_bench_import(tmp_path):
    # and so this file's collection: a new ISA row cannot pass unnoticed
    got = _child(_EXTRA_PATH, tmp_path)
    assert "error" in got, got
    assert re.search(r"paths without peer caps on '.*': 'future_isa'; add a row", got["error"]), got
