"""The fused-bias fast path for C-ordered (..., features) operands
(gelu_ext._ufuncs._bias_rows_ok -> _bias_rows) must give exactly what
the ufunc gives, and hand every other case to the ufunc."""
import numpy as np
import pytest

import gelu_ext
from gelu_ext import _ufuncs

APPROX = ["none", "tanh"]
SHAPES = [(1, 64), (3, 100), (2, 5, 96), (0, 128), (300, 1536)]


def _bias_ufuncs(approximate):
    fwd, fwd_bias, bwd, bwd_bias = _ufuncs.GELU_UFUNCS[approximate]
    return fwd_bias, bwd_bias


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def dt(request):
    return request.param


def _data(shape, dt, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dt)
    b = rng.standard_normal(shape[-1]).astype(dt)
    g = rng.standard_normal(shape).astype(dt)
    return x, b, g


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_row_path_is_taken_and_equals_the_ufunc(shape, dt, approximate):
    x, b, g = _data(shape, dt)
    assert _ufuncs._bias_rows_ok((x,), b, None)
    fwd_bias, bwd_bias = _bias_ufuncs(approximate)
    got = gelu_ext.fast_gelu(x, approximate, bias=b)
    assert got.dtype == dt and got.shape == x.shape
    np.testing.assert_array_equal(got, fwd_bias(x, b))
    np.testing.assert_array_equal(got, gelu_ext.fast_gelu(x + b, approximate))
    got = gelu_ext.fast_gelu_grad(x, g, approximate, bias=b)
    np.testing.assert_array_equal(got, bwd_bias(x, g, b))


@pytest.mark.parametrize("approximate", APPROX)
def test_row_path_threads_give_the_same_bits(dt, approximate):
    x, b, _ = _data((512, 1536), dt)
    try:
        gelu_ext.set_num_threads(1)
        one = gelu_ext.fast_gelu(x, approximate, bias=b)
        gelu_ext.set_num_threads(2)
        two = gelu_ext.fast_gelu(x, approximate, bias=b)
    finally:
        gelu_ext.set_num_threads(None)
    np.testing.assert_array_equal(one.view(np.uint8), two.view(np.uint8))


def test_in_place_on_x(dt):
    x, b, _ = _data((8, 256), dt)
    want = gelu_ext.fast_gelu(x + b)
    assert _ufuncs._bias_rows_ok((x,), b, x)
    res = gelu_ext.fast_gelu(x, bias=b, out=x)
    assert res is x
    np.testing.assert_array_equal(x, want)


def test_out_given_is_returned_and_inputs_untouched(dt):
    x, b, _ = _data((8, 256), dt)
    x0, b0 = x.copy(), b.copy()
    out = np.empty_like(x)
    assert gelu_ext.fast_gelu(x, bias=b, out=out) is out
    np.testing.assert_array_equal(out, gelu_ext.fast_gelu(x + b))
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(b, b0)


@pytest.mark.parametrize("case", ["bias-too-short", "strided-x", "fortran-x", "mixed-dtype",
                                  "bias-2d", "list-input", "out-overlaps-bias", "out-view-of-x",
                                  "subclass", "byteswapped"])
def test_other_cases_go_to_the_ufunc_and_agree(case, dt):
    x, b, _ = _data((6, 128), dt)
    out = None
    if case == "bias-too-short":
        x, b = x[:, :8].copy(), b[:8]
    elif case == "strided-x":
        x = x[:, ::2]
        b = b[::2].copy()
    elif case == "fortran-x":
        x = np.asfortranarray(x)
    elif case == "mixed-dtype":
        b = b.astype(np.float64 if dt == np.float32 else np.float32)
    elif case == "bias-2d":
        b = b[None, :]
    elif case == "list-input":
        x = x.tolist()
    elif case == "out-overlaps-bias":
        buf = np.zeros(6 * 128 + 128, dtype=dt)
        b = buf[:128]
        b[:] = _data((6, 128), dt)[1]
        out = buf[64:64 + 6 * 128].reshape(6, 128)
    elif case == "out-view-of-x":
        out = x[...]
    elif case == "subclass":
        x = x.view(np.matrix) if x.ndim == 2 else x
    elif case == "byteswapped":
        x = x.astype(x.dtype.newbyteorder())
    xa = np.asarray(x)
    assert not _ufuncs._bias_rows_ok((x,), b, out)
    want = gelu_ext.gelu_erf(np.add(xa, b, dtype=np.result_type(xa, b)))
    got = gelu_ext.fast_gelu(x, bias=b, out=out)
    np.testing.assert_array_equal(np.asarray(got), want)
