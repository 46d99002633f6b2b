"""xarray DataArrays (issue 15): every public array function of gelu_ext
returns a DataArray with the input's dims and coords and the NumPy call's bits;
on a Dask-backed DataArray the result stays lazy.  A bias is a DataArray over
the feature dim, aligned by name as xarray does.

The functions come from ``gelu_ext.__all__`` through tests/public_calls.py.
"""
import numpy as np
import pytest

from public_calls import bits, make_inputs, public_calls

xr = pytest.importorskip("xarray")

SHAPE = (16, 96)


def _wrap(x, g, b):
    coords = {"batch": np.arange(SHAPE[0]), "feature": [f"f{i}" for i in range(SHAPE[1])]}
    dims = ("batch", "feature")
    return (xr.DataArray(x, dims=dims, coords=coords), xr.DataArray(g, dims=dims, coords=coords),
            xr.DataArray(b, dims=("feature",), coords={"feature": coords["feature"]}))


@pytest.mark.parametrize("backend", ["numpy", "dask"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", public_calls(), ids=lambda c: c[0])
def test_dataarray_keeps_dims_and_coords(case, dtype, backend):
    _, f, call = case
    x, g, b = make_inputs(dtype, SHAPE)
    ax, ag, ab = _wrap(x, g, b)
    if backend == "dask":
        pytest.importorskip("dask.array")
        ax, ag = ax.chunk({"batch": 8}), ag.chunk({"batch": 8})
    got = call(f, ax, ag, ab)
    assert isinstance(got, xr.DataArray)
    assert got.dims == ax.dims
    xr.testing.assert_identical(got.coords.to_dataset(), ax.coords.to_dataset())
    if backend == "dask":
        import dask.array as da
        assert isinstance(got.data, da.Array), "the Dask-backed DataArray was computed eagerly"
        assert got.chunks == ax.chunks
        got = got.compute()
    want = call(f, x, g, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(bits(got.values), bits(want))
