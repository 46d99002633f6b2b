"""oneMKL VM, the accurate peer of the benchmarks: optional like
every peer -- absent, its cells and rows say so -- and where the ``mkl``
wheel is installed, the call computes x Phi(x) on one thread and the
header reads back the instruction set it runs.  No timing is asserted."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from gelu_ext import testing
from gelu_ext.jobs import _mkl, bench

RATIOS = Path(__file__).resolve().parents[1] / "bench" / "ratios.py"
MKL = _mkl.load()       # None where the mkl wheel is not installed


@pytest.fixture
def no_mkl(monkeypatch):
    """The peer as it is where no libmkl_rt is found."""
    monkeypatch.setattr(_mkl, "_candidates", lambda: [])
    monkeypatch.setitem(bench._peer_cache, "mkl", None)


@pytest.fixture
def ratios(monkeypatch):
    """bench/ratios.py as a module, without its import-time pinning of JAX's
    threads (an XLA_FLAGS change that would outlive the test)."""
    if not RATIOS.is_file():
        pytest.skip("bench/ is not beside tests/ (installed tests without the repository)")
    monkeypatch.setattr(bench, "jax_single_thread", lambda: None)
    spec = importlib.util.spec_from_file_location("gelu_ext_bench_ratios", RATIOS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _FakeVM:
    """A loaded peer whose kernel library is ``branch`` (the read-back)."""

    def __init__(self, branch):
        self._branch = branch

    def branch(self):
        return (self._branch, _mkl.VML_BRANCH[self._branch])

    def describe(self):
        return f"{_mkl.VML_BRANCH[self._branch]} (libmkl_vml_{self._branch})"


# ---------------------------------------------------------------- absent --

def test_a_library_that_does_not_load_is_no_peer(monkeypatch):
    monkeypatch.setattr(_mkl, "_candidates", lambda: ["/nonexistent/libmkl_rt.so.3"])
    assert _mkl.load() is None


def test_absent_the_bench_cell_says_how_to_install_it(no_mkl):
    d = bench.make_inputs("gelu_erf", np.float32, 64)
    with pytest.raises(bench.Unavailable, match=r"oneMKL VM not installed \(pip install mkl\)"):
        bench.prepare("mkl", "gelu_erf", d)


def test_absent_every_mkl_ratios_row_says_not_installed(no_mkl, ratios):
    r = ratios.Ratios(1, {})
    ratios._mkl_rows(r, f64=True)
    assert len(r.rows) == 4                          # f32 and f64 speed, bulk and tail ULP
    assert {row.verdict for row in r.rows} == {ratios.NOT_INSTALLED}
    assert all(row.measured == "-" and row.num == "mkl" for row in r.rows)


def test_absent_the_header_has_no_mkl_entry(no_mkl):
    assert "mkl" not in bench.isa_info()["runs"]


# ------------------------------------------------- the instruction set --

@pytest.mark.parametrize("branch, comparable", [("avx2", True), ("def", False), ("avx512", False)],
                         ids=["avx2-kernels", "generic-kernels", "avx512-kernels"])
def test_under_isa_avx2_only_its_avx2_kernels_compare(monkeypatch, branch, comparable):
    monkeypatch.setitem(bench._peer_cache, "mkl", _FakeVM(branch))
    monkeypatch.setattr(bench, "_isa_asked", "avx2")
    info = bench.isa_info()
    assert info["runs"]["mkl"].endswith(f"(libmkl_vml_{branch})")
    if comparable:
        assert "mkl" not in info["not_comparable"]
    else:
        assert info["not_comparable"]["mkl"] == f"oneMKL VM runs {_mkl.VML_BRANCH[branch]}, not the AVX2 asked"


def test_avx10_kernels_count_as_avx512(monkeypatch):
    monkeypatch.setitem(bench._peer_cache, "mkl", _FakeVM("avx10"))
    monkeypatch.setattr(bench, "_isa_asked", "avx512")
    assert "mkl" not in bench.isa_info()["not_comparable"]


def test_cap_isa_refuses_once_mkl_is_loaded(monkeypatch):
    monkeypatch.setitem(bench._peer_cache, "mkl", _FakeVM("def"))
    for name in ("torch", "jax"):
        monkeypatch.delitem(__import__("sys").modules, name, raising=False)
    with pytest.raises(RuntimeError, match=r"must run before mkl is imported"):
        bench.cap_isa("avx2")


# --------------------------------------------------------------- present --

needs_mkl = pytest.mark.skipif(MKL is None, reason="the mkl wheel is not installed (benchmark environment only)")


# HA CdfNorm is within a few ULP and the product adds half of one (MKL's
# x Phi(x) measures 1.9 ULP in the bulk, 7.8 in the tail in float32): a loose
# bound, which says the call computes exact GELU, not how well.
@needs_mkl
def test_mkl_computes_exact_gelu_float32():
    x = np.concatenate([np.linspace(-14, 6, 4001), [0.0, -0.0]]).astype(np.float32)
    out = np.empty_like(x)
    assert MKL.gelu(x, out)() is out
    err = testing.ulp_error(out, testing.ref_gelu_erf(x.astype(np.float64)), np.float32)
    assert float(np.max(err)) <= 16


@needs_mkl
def test_mkl_computes_exact_gelu_float64():
    pytest.importorskip("mpmath")
    x = np.linspace(-30, 6, 181)
    out = np.empty_like(x)
    MKL.gelu(x, out)()
    err = testing.ulp_error(out, [testing.mp_gelu_erf(v) for v in x], np.float64)
    assert float(np.max(err)) <= 16


@needs_mkl
def test_mkl_runs_one_thread_and_names_what_it_runs():
    assert MKL.threads == 1
    assert MKL.__version__ and MKL.version_string.startswith("Intel")
    if MKL.branch() is not None:
        assert MKL.describe().endswith(f"(libmkl_vml_{MKL.branch()[0]})")


@needs_mkl
def test_mkl_refuses_what_it_does_not_compute(monkeypatch):
    monkeypatch.setitem(bench._peer_cache, "mkl", MKL)
    with pytest.raises(bench.Unavailable, match=r"oneMKL VM has CdfNorm \(exact GELU\) only"):
        bench.prepare("mkl", "gelu_tanh", bench.make_inputs("gelu_tanh", np.float32, 64))
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    with pytest.raises(bench.Unavailable, match=r"oneMKL VM needs contiguous x and out"):
        bench.prepare("mkl", "gelu_erf", {"x": x[::2], "out": np.empty(32, np.float32)})
    with pytest.raises(bench.Unavailable, match=r"oneMKL VM runs float32/float64 .* got float16/float16"):
        bench.prepare("mkl", "gelu_erf", {"x": x.astype(np.float16), "out": np.empty(64, np.float16)})


@needs_mkl
def test_mkl_rows_of_ratios_are_measured(monkeypatch, ratios):
    monkeypatch.setitem(bench._peer_cache, "mkl", MKL)
    r = ratios.Ratios(1, {})
    r.tcfg.update(min_sample=1e-4, max_repeats=1, budget=0.01)
    monkeypatch.setattr(ratios, "N20", 4096)
    ratios._mkl_rows(r)
    speed, bulk, tail = r.rows
    assert speed.measured.endswith("x") and speed.verdict in ("PASS", "FAIL")
    for row in (bulk, tail):
        ours, mkl = (float(v) for v in row.measured.split("; "))
        assert ours <= 1 and mkl > 0
