"""The thin public API: fast_gelu, relu, fast_gelu_grad, relu_grad, configuration.

What the thin API promises a user: the seed article's values, argument
validation with actionable messages, special values (NaN, +-inf, +-0, huge
arguments in tanh mode) without floating-point warnings, inputs never
modified, and return types exactly like ``np.tanh``.
"""
import math
import os
import re

import numpy as np
import pytest

import gelu_ext
from gelu_ext import _ufuncs, fast_gelu, fast_gelu_grad, relu, relu_grad
from helpers import ALL_DTYPES, FLOAT_DTYPES, WITHOUT_ML_DTYPES, dtype_id, python_child
from opinfo import OPINFOS, TWINNED, ids

# ------------------------------------------------------- article values --
# The seed article: ReLU(-1) = 0, ReLU(2) = 2, GELU(-1) ~ -0.159,
# GELU(2) ~ 1.954, Phi(1) ~ 0.8413, min GELU ~ -0.170 at x ~ -0.752.


def phi_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@pytest.mark.parametrize("x, want", [(-1.0, 0.0), (2.0, 2.0)], ids=["relu(-1)", "relu(2)"])
def test_article_relu_values(x, want):
    assert relu(x) == want


@pytest.mark.parametrize("x, want", [(-1.0, -0.159), (2.0, 1.954)], ids=["gelu(-1)", "gelu(2)"])
def test_article_gelu_values_to_three_decimals(x, want):
    assert fast_gelu(x) == pytest.approx(want, abs=5e-4)


@pytest.mark.parametrize("x", [-1.0, 2.0, 1.0], ids=["gelu(-1)", "gelu(2)", "gelu(1)"])
def test_gelu_is_x_times_phi(x):
    assert fast_gelu(x) == pytest.approx(x * phi_cdf(x), rel=1e-15)


def test_article_phi_of_one_from_gelu():
    assert fast_gelu(1.0) / 1.0 == pytest.approx(0.8413, abs=5e-5)


@pytest.fixture(scope="module")
def fine_grid():
    x = np.linspace(-3.0, 1.0, 400_001)        # step 1e-5
    return x, fast_gelu(x)


def test_article_gelu_minimum_location(fine_grid):
    x, y = fine_grid
    assert x[np.argmin(y)] == pytest.approx(-0.752, abs=5e-4)


def test_article_gelu_minimum_value(fine_grid):
    _, y = fine_grid
    assert y.min() == pytest.approx(-0.170, abs=5e-4)


def test_gelu_is_not_monotonic(fine_grid):
    _, y = fine_grid
    d = np.diff(y)
    assert (d < 0).any() and (d > 0).any()


@pytest.mark.parametrize("x", [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])
def test_tanh_mode_is_the_tanh_formula(x):
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):            # the formula as written, without cancellation
        X = mpmath.mpf(x)
        u = mpmath.sqrt(2 / mpmath.pi) * (X + mpmath.mpf("0.044715") * X ** 3)
        want = float(X / 2 * (1 + mpmath.tanh(u)))
    assert fast_gelu(x, "tanh") == pytest.approx(want, rel=1e-15, abs=0)


# ------------------------------------------------- approximate validation --

BAD_APPROXIMATE = ["fast", None, 1, "NONE", "Tanh", "", b"none", "erf"]


@pytest.mark.parametrize("bad", BAD_APPROXIMATE, ids=repr)
@pytest.mark.parametrize("fn", [fast_gelu, fast_gelu_grad], ids=lambda f: f.__name__)
def test_approximate_must_be_none_or_tanh(fn, bad):
    msg = re.escape(f"approximate must be 'none' or 'tanh', got {bad!r}")
    with pytest.raises(ValueError, match=msg):
        fn(np.ones(3), approximate=bad)


def test_approximate_message_names_the_bad_value():
    with pytest.raises(ValueError, match=r"^approximate must be 'none' or 'tanh', got 'fast'$"):
        fast_gelu(1.0, "fast")


@pytest.mark.parametrize("mode, ufunc", [("none", gelu_ext.gelu_erf), ("tanh", gelu_ext.gelu_tanh)])
def test_approximate_picks_the_ufunc(mode, ufunc):
    x = np.linspace(-4, 4, 101)
    np.testing.assert_array_equal(fast_gelu(x, approximate=mode), ufunc(x))


@pytest.mark.parametrize("mode, ufunc", [("none", gelu_ext.gelu_erf_grad),
                                         ("tanh", gelu_ext.gelu_tanh_grad)])
def test_approximate_picks_the_grad_ufunc(mode, ufunc):
    x = np.linspace(-4, 4, 101)
    np.testing.assert_array_equal(fast_gelu_grad(x, approximate=mode), ufunc(x, 1.0))


# --------------------------------------------------------- special values --

MAX, NMAX = "max", "-max"      # finfo(dtype).max, resolved per dtype
SPECIAL_X = [np.nan, np.inf, -np.inf, 0.0, -0.0, MAX, NMAX]


def _resolve(v, dt):
    fi = np.finfo(dt)
    return {MAX: fi.max, NMAX: -fi.max}.get(v, v) if isinstance(v, str) else v


def special_cases():
    for op in TWINNED:
        for x in SPECIAL_X:
            for dt in FLOAT_DTYPES:
                yield pytest.param(op, dt, x, id=f"{op.name}-{dtype_id(dt)}-{x}")


@pytest.mark.parametrize("op, dt, x", list(special_cases()))
def test_special_values(op, dt, x):
    """Each op's public function (a derivative's with g = 1) at NaN, +-inf,
    +-0 and +-max gives its float64 twin's value rounded to the dtype,
    without a floating-point warning; a forward op's zeros with the twin's
    sign (a derivative's sign of zero is not specified)."""
    xa = np.array([_resolve(x, dt)], dtype=dt)
    args = [xa, np.ones(1, dt)] if op.is_grad else [xa]
    with np.errstate(over="raise", invalid="raise", divide="raise"):   # and no warning
        got = op.public(*args)
    with np.errstate(all="ignore"):
        want = np.asarray(op.reference(xa.astype(np.float64)), np.float64).astype(dt)
    assert got.dtype == np.dtype(dt)
    if np.isnan(want[0]):
        assert np.isnan(got[0])
    else:
        assert got[0] == want[0]
        if not op.is_grad and want[0] == 0:
            assert np.signbit(got[0]) == np.signbit(want[0]), f"sign of zero: got {got[0]!r}"


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("mode", ["none", "tanh"])
def test_huge_arguments_in_a_whole_array_raise_no_fp_warning(mode, dt):
    fi = np.finfo(dt)
    x = np.array([fi.max, -fi.max, fi.max / 2, -fi.max / 2, 1e4, -1e4, np.inf, -np.inf, np.nan],
                 dtype=dt)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        y = fast_gelu(x, mode)
        g = fast_gelu_grad(x, approximate=mode)
    np.testing.assert_array_equal(y[[0, 2, 4, 6]], x[[0, 2, 4, 6]])
    assert np.all((y[[1, 3, 5, 7]] == 0) & np.signbit(y[[1, 3, 5, 7]]))
    np.testing.assert_array_equal(g[:8], [1, 0, 1, 0, 1, 0, 1, 0])


@pytest.mark.parametrize("mode", ["none", "tanh"])
def test_gelu_grad_nan_grad_propagates(mode):
    got = fast_gelu_grad(np.array([1.0, -1.0]), np.array([np.nan, np.nan]), mode)
    assert np.isnan(got).all()


def test_relu_grad_passes_nan_grad_where_x_positive():
    got = relu_grad(np.array([1.0, -1.0]), np.array([np.nan, np.nan]))
    assert np.isnan(got[0]) and got[1] == 0


# --------------------------------------------------- inputs never modified --

# every op's public function on its operands, and the keyword calls of the
# thin functions that are not one op's (approximate=, bias=, out=)
CALLS = {o.name: (lambda x, g, b, o=o: o.public(*(x, g, b)[:o.nin])) for o in OPINFOS}
CALLS.update({
    "fast_gelu_tanh": lambda x, g, b: fast_gelu(x, "tanh"),
    "fast_gelu_bias": lambda x, g, b: fast_gelu(x, bias=b),
    "fast_gelu_grad": lambda x, g, b: fast_gelu_grad(x, g),
    "fast_gelu_grad_tanh_bias": lambda x, g, b: fast_gelu_grad(x, g, "tanh", bias=b),
    "fast_gelu_out": lambda x, g, b: fast_gelu(x, out=np.empty_like(x)),
})


@pytest.mark.parametrize("dt", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("call", list(CALLS))
def test_inputs_are_not_modified(call, dt):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-5, 5, 64), [np.nan, np.inf, -np.inf, -0.0]]).astype(dt)
    g = rng.uniform(-2, 2, x.size).astype(dt)
    b = rng.uniform(-1, 1, x.size).astype(dt)
    copies = [a.copy() for a in (x, g, b)]
    CALLS[call](x, g, b)
    for a, c in zip((x, g, b), copies):
        assert a.tobytes() == c.tobytes()


@pytest.mark.parametrize("mode", ["none", "tanh"])
def test_in_place_out_is_x(mode):
    x = np.linspace(-4, 4, 33)
    want = fast_gelu(x, mode)
    assert fast_gelu(x, mode, out=x) is x
    np.testing.assert_array_equal(x, want)


def test_out_is_returned_by_every_thin_function():
    x = np.linspace(-4, 4, 9)
    for fn in (lambda o: fast_gelu(x, out=o), lambda o: relu(x, out=o),
               lambda o: fast_gelu_grad(x, out=o), lambda o: relu_grad(x, out=o),
               lambda o: fast_gelu(x, bias=1.0, out=o), lambda o: fast_gelu_grad(x, bias=1.0, out=o)):
        o = np.empty_like(x)
        assert fn(o) is o


# --------------------------------------------------------------- where= --
# Every public function that is one ufunc call takes where= as that ufunc
# does: computed where the mask is True, the rest of out= left alone.  The
# shapes include a (rows, 256) float32 operand with a (256,) bias: the
# row-threaded fused path, which must not take a masked call.

def _where_calls():
    g = np.random.default_rng(3)
    x = g.standard_normal((64, 256))
    gr = g.standard_normal((64, 256))
    b = g.standard_normal(256)
    up = g.standard_normal((64, 256))
    return {
        "fast_gelu": (lambda **k: fast_gelu(x, **k), lambda: gelu_ext.gelu_erf(x)),
        "fast_gelu-tanh": (lambda **k: fast_gelu(x, "tanh", **k), lambda: gelu_ext.gelu_tanh(x)),
        "fast_gelu-bias": (lambda **k: fast_gelu(x, bias=b, **k), lambda: gelu_ext.gelu_erf_bias(x, b)),
        "fast_gelu-bias-rows-f32": (lambda **k: fast_gelu(x.astype(np.float32), bias=b.astype(np.float32), **k),
                                    lambda: gelu_ext.gelu_erf_bias(x.astype(np.float32), b.astype(np.float32))),
        "fast_gelu_grad": (lambda **k: fast_gelu_grad(x, gr, **k), lambda: gelu_ext.gelu_erf_grad(x, gr)),
        "fast_gelu_grad-bias": (lambda **k: fast_gelu_grad(x, gr, bias=b, **k),
                                lambda: gelu_ext.gelu_erf_bias_grad(x, gr, b)),
        "geglu": (lambda **k: gelu_ext.geglu(x, up, "tanh", **k), lambda: gelu_ext.geglu_tanh(x, up)),
        # and every op's public function (a derivative's thin one where it has one)
        **{o.name: (lambda o=o, a=_where_operands(o, x, gr, b, up), **k: o.public(*a, **k),
                    lambda o=o, a=_where_operands(o, x, gr, b, up): o.ufunc(*a))
           for o in OPINFOS},
    }


def _where_operands(o, x, gr, b, up):
    """x (the gate), g, b or up in the order of the op's inputs."""
    roles = {"x": x, "gate": x, "g": gr, "b": b, "up": up}
    return [roles[name] for name in o.spec.inputs]


WHERE_CALLS = list(_where_calls())


@pytest.mark.parametrize("mask_shape", ["full", "broadcast-row"])
@pytest.mark.parametrize("call", WHERE_CALLS)
def test_where_computes_only_where_true_and_leaves_out_alone(call, mask_shape):
    fn, whole = _where_calls()[call]
    want = whole()
    g = np.random.default_rng(5)
    mask = g.random(want.shape if mask_shape == "full" else want.shape[-1:]) < 0.5
    out = np.full(want.shape, 7.0, dtype=want.dtype)
    assert fn(out=out, where=mask) is out
    sel = np.broadcast_to(mask, want.shape)
    np.testing.assert_array_equal(out[sel], want[sel])
    assert (out[~sel] == 7.0).all()


@pytest.mark.parametrize("call", WHERE_CALLS)
def test_where_true_is_the_unmasked_call(call):
    fn, whole = _where_calls()[call]
    np.testing.assert_array_equal(fn(where=True), whole())


@pytest.mark.parametrize("call", WHERE_CALLS)
def test_where_without_out_gives_the_selected_elements(call):
    """As a ufunc called with out=None (which NumPy then does not warn
    about): the unselected elements of the fresh result are whatever the
    allocation held, so only the selected ones are compared."""
    fn, whole = _where_calls()[call]
    want = whole()
    mask = np.random.default_rng(6).random(want.shape) < 0.5
    got = fn(out=None, where=mask)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got[mask], want[mask])


@pytest.mark.parametrize("fn", [gelu_ext.swiglu_grad, gelu_ext.geglu_grad], ids=lambda f: f.__name__)
def test_gated_gradients_refuse_where_by_name(fn):
    """Two results, each summed over broadcast axes: no one mask applies."""
    a = np.ones(4)
    with pytest.raises(TypeError, match="where"):
        fn(a, a, a, where=a > 0)


# ------------------------------------- return types exactly like np.tanh --

INPUTS = {
    "python_float": 1.5,
    "python_int": 2,
    "python_bool": True,
    "float16_scalar": np.float16(1.5),
    "float32_scalar": np.float32(1.5),
    "float64_scalar": np.float64(1.5),
    "int8_scalar": np.int8(3),
    "0d_float32": np.array(1.5, dtype=np.float32),
    "0d_int64": np.array(3),
    "list": [-1.0, 0.5, 2.0],
    "nested_list": [[-1, 0], [1, 2]],
    "tuple": (0.5, -0.5),
    "empty_list": [],
}
# the thin functions (approximate=, a derivative's grad=None) and every
# forward op's public function
THIN = {
    "fast_gelu": fast_gelu,
    "fast_gelu_tanh": lambda x: fast_gelu(x, "tanh"),
    "fast_gelu_grad": fast_gelu_grad,
    **{o.name: o.public for o in OPINFOS if o.nin == 1 or o.spec.thin},
}


@pytest.mark.parametrize("inp", list(INPUTS))
@pytest.mark.parametrize("fn", list(THIN))
def test_return_type_like_np_tanh(fn, inp):
    x = INPUTS[inp]
    got, want = THIN[fn](x), np.tanh(x)
    assert type(got) is type(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("fn", list(THIN))
def test_array_result_dtype_like_np_tanh(fn, dt):
    x = np.ones(3, dtype=dt)
    assert THIN[fn](x).dtype == np.tanh(x).dtype


# ----------------------------------------------------- public surface --

# public functions that are no op's ufunc: the thin API beside the ufuncs
# and the configuration
NOT_UFUNCS = {"fast_gelu", "fast_gelu_grad", "swiglu_grad", "geglu", "geglu_grad",
              "activation", "show_config", "get_num_threads", "set_num_threads"}


def test_all_lists_the_public_api():
    """Every op of the spec under its name and its 0.1.0 alias, the thin
    functions, and nothing else."""
    ops = {o.name for o in OPINFOS} | {o.alias for o in OPINFOS if o.alias}
    assert sorted(gelu_ext.__all__) == sorted(ops | NOT_UFUNCS)


@pytest.mark.parametrize("name", gelu_ext.__all__)
def test_all_names_exist(name):
    assert callable(getattr(gelu_ext, name))


ALIASED = [o for o in OPINFOS if o.alias]


@pytest.mark.parametrize("op", ALIASED, ids=ids(ALIASED))
def test_backward_names_are_the_grad_ufuncs(op):
    """0.1.0's ``*_backward`` ufuncs (README) are the ``*_grad`` ones, not copies."""
    assert getattr(gelu_ext, op.alias) is getattr(gelu_ext._ufuncs, op.name)
    assert getattr(gelu_ext, op.alias).__name__ == op.name


def test_version_is_a_string():
    assert isinstance(gelu_ext.__version__, str) and gelu_ext.__version__


CONFIG = {"activation", "show_config", "get_num_threads", "set_num_threads"}
THIN_FUNCTIONS = [getattr(gelu_ext, n) for n in gelu_ext.__all__
                  if n not in CONFIG and not isinstance(getattr(gelu_ext, n), np.ufunc)]


@pytest.mark.parametrize("fn", THIN_FUNCTIONS, ids=lambda f: f.__name__)
def test_thin_functions_have_numpydoc_docstrings(fn):
    doc = fn.__doc__ or ""
    assert "Examples" in doc and ">>>" in doc


CONFIG_KEYS = {"version", "isa", "best_isa", "compiled_isas", "num_threads"}


def test_show_config_returns_the_keys():
    cfg = gelu_ext.show_config(print_=False)
    assert CONFIG_KEYS <= set(cfg)


def test_show_config_isa_is_compiled_and_runnable():
    cfg = gelu_ext.show_config(print_=False)
    assert cfg["isa"] in cfg["compiled_isas"]
    assert cfg["best_isa"] in cfg["compiled_isas"]
    assert cfg["version"] == gelu_ext.__version__


def test_show_config_prints_every_key(capsys):
    cfg = gelu_ext.show_config()
    out = capsys.readouterr().out
    for key in cfg:
        assert re.search(rf"^{key}\s*:", out, re.M), key


def test_get_num_threads_is_positive():
    assert isinstance(gelu_ext.get_num_threads(), int) and gelu_ext.get_num_threads() >= 1


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, [2]], ids=repr)
def test_set_num_threads_rejects(bad, restore_threads):
    msg = re.escape(f"n must be a non-negative integer or None, got {bad!r}")
    with pytest.raises(ValueError, match=msg):
        gelu_ext.set_num_threads(bad)


@pytest.mark.parametrize("n", [1, 3, np.int64(2)], ids=repr)
def test_set_num_threads_is_reported(n, restore_threads):
    if not _ufuncs._pool_threaded():
        pytest.skip("built without threads: always 1 thread")
    gelu_ext.set_num_threads(n)
    assert gelu_ext.get_num_threads() == int(n)


# ------------------------------------------------------ GELU_EXT_ISA --

def _run_with_env(value, code):
    env = dict(os.environ, GELU_EXT_ISA=value)
    root = os.path.dirname(os.path.dirname(os.path.abspath(gelu_ext.__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return python_child(["-c", WITHOUT_ML_DTYPES + code], env=env, capture_output=True, text=True,
                        timeout=60)


def test_env_isa_baseline_caps_the_path():
    r = _run_with_env("baseline", "import gelu_ext, gelu_ext._ufuncs as u; print(u._get_isa())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "baseline"


def test_env_isa_rejects_unknown_names():
    r = _run_with_env("sse9", "import gelu_ext")
    assert r.returncode != 0
    assert re.search(r"ValueError: GELU_EXT_ISA must be one of .*got 'sse9'", r.stderr)


def test_import_needs_neither_mpmath_nor_scipy_nor_the_jobs(tmp_path):
    """mpmath and SciPy are test extras: ``import gelu_ext`` and
    ``gelu_ext.testing`` must work without them (the twin falls back to
    math.erfc; only the mpmath oracle needs mpmath); the jobs are imported
    only by ``python -m gelu_ext``."""
    code = (
        "import sys\n"
        "sys.modules['mpmath'] = sys.modules['scipy'] = None   # any import of them fails\n"
        "import gelu_ext\n"
        "assert not [m for m in sys.modules if m.startswith('gelu_ext.jobs')]\n"
        "import gelu_ext.testing as t\n"
        "assert abs(float(t.ref_gelu_erf(1.0)) - 0.8413447460685429) < 1e-15\n"
        "try:\n"
        "    t.mp_gelu_erf(1.0)\n"
        "except ImportError as e:\n"
        "    assert 'pip install' in str(e)\n"
        "else:\n"
        "    raise AssertionError('mpmath oracle ran without mpmath')\n"
    )
    r = python_child(["-c", WITHOUT_ML_DTYPES + code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_docstring_examples_run():
    """The Examples sections of the thin functions are true (doctest)."""
    import doctest

    from gelu_ext import _api
    res = doctest.testmod(_api, extraglobs=vars(gelu_ext), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted >= 10 and res.failed == 0, res
