"""xarray DataArrays: every public array function of gelu_ext
returns a DataArray with the input's dims and coords and the NumPy call's bits;
on a Dask-backed DataArray the result stays lazy.  A bias is a DataArray over
the feature dim, aligned by name as xarray does.

The functions come from ``gelu_ext.__all__`` through tests/public_calls.py.
The quick tier runs the pairwise subset of call x dtype x backend
(helpers.quick_tier: every call on both dtypes and both backends); the full
run runs all of it.
"""
import numpy as np
import pytest

import gelu_ext
from helpers import quick_tier
from public_calls import bits, make_inputs, public_calls, results

xr = pytest.importorskip("xarray")

SHAPE = (16, 96)


def _wrap(x, g, b):
    coords = {"batch": np.arange(SHAPE[0]), "feature": [f"f{i}" for i in range(SHAPE[1])]}
    dims = ("batch", "feature")
    return (xr.DataArray(x, dims=dims, coords=coords), xr.DataArray(g, dims=dims, coords=coords),
            xr.DataArray(b, dims=("feature",), coords={"feature": coords["feature"]}))


def dataarray_cases():
    for case in public_calls():
        for dtype in [np.float32, np.float64]:
            for backend in ["numpy", "dask"]:
                yield ((case[0], np.dtype(dtype).name, backend),
                       pytest.param(case, dtype, backend, id=f"{case[0]}-{np.dtype(dtype).name}-{backend}"))


@pytest.mark.parametrize("case, dtype, backend", quick_tier(dataarray_cases()))
def test_dataarray_keeps_dims_and_coords(case, dtype, backend):
    _, f, call = case
    x, g, b = make_inputs(dtype, SHAPE)
    ax, ag, ab = _wrap(x, g, b)
    if backend == "dask":
        pytest.importorskip("dask.array")
        ax, ag = ax.chunk({"batch": 8}), ag.chunk({"batch": 8})
    got = results(call(f, ax, ag, ab))
    want = results(call(f, x, g, b))
    assert len(got) == len(want)
    for gt, w in zip(got, want):
        assert isinstance(gt, xr.DataArray)
        assert gt.dims == ax.dims
        xr.testing.assert_identical(gt.coords.to_dataset(), ax.coords.to_dataset())
        if backend == "dask":
            import dask.array as da
            assert isinstance(gt.data, da.Array), "the Dask-backed DataArray was computed eagerly"
            assert gt.chunks == ax.chunks
            gt = gt.compute()
        assert gt.dtype == w.dtype
        np.testing.assert_array_equal(bits(gt.values), bits(w))


def test_gated_grad_of_a_broadcast_up_on_dataarrays():
    x, g, b = make_inputs(np.float32, SHAPE)
    ax, ag, ab = _wrap(x, g, b)
    d_gate, d_up = gelu_ext.geglu_grad(ax, ab, ag)
    assert d_up.dims == ("feature",)
    np.testing.assert_array_equal(bits(d_gate.values), bits(gelu_ext.geglu_grad(x, b, g)[0]))
