"""The call table of tests/public_calls.py covers every public array function,
so the Dask, xarray and cluster tests cannot silently skip a new one.  Runs
without any optional package: coverage must not lapse where Dask is absent."""
import numpy as np
import pytest

import gelu_ext
import public_calls


def test_every_public_function_has_a_call():
    unknown = public_calls.unknown_names()
    assert not unknown, (
        f"public functions {unknown} are neither ufuncs nor in the call table: add a row saying how to "
        f"call each (or the name to NOT_ARRAY if it takes no arrays) in tests/public_calls.py, so the "
        f"Dask/xarray/cluster tests cover it")


def test_call_table_has_no_stale_rows():
    assert not public_calls.stale_names(), "tests/public_calls.py names functions that are no longer public"


@pytest.mark.parametrize("case", public_calls.public_calls(), ids=lambda c: c[0])
def test_call_runs_on_numpy(case):
    """Each row of the table calls its function correctly (on NumPy, the
    reference the other array types are compared with)."""
    _, f, call = case
    x, g, b = public_calls.make_inputs(np.float32, shape=(4, 8))
    for y in public_calls.results(call(f, x, g, b)):
        assert isinstance(y, np.ndarray) and y.shape == x.shape and y.dtype == np.float32
