"""The accuracy each ufunc's docstring claims (src/gx_ops.h) is backed by
gelu_ext.testing.BOUNDS, the bounds the accuracy tests enforce: a docstring
never promises more than the tests check."""
import re

import pytest

from gelu_ext import _ufuncs
from gelu_ext.testing import BOUNDS

CLAIM = re.compile(r"<= (\d+(?:\.\d+)?) ULP in (float16|bfloat16|float32|float64)")
CLAIMS = [(name, float(n), dt, "tail included" in op.ufunc.__doc__)
          for name, op in _ufuncs.OPS.items() for n, dt in CLAIM.findall(op.ufunc.__doc__)]


def test_some_docstrings_make_claims():
    assert {name for name, *_ in CLAIMS} >= {"gelu_erf", "silu", "quick_gelu"}


@pytest.mark.parametrize("name, ulps, dtype, whole_line", CLAIMS,
                         ids=[f"{c[0]}-{c[2]}" for c in CLAIMS])
def test_docstring_claim_is_a_tested_bound(name, ulps, dtype, whole_line):
    if whole_line:      # "tail included": one bound over the whole line, not per region
        regions = ["all"]
    else:
        regions = [r for r in ("all", "bulk", "tail") if (name, dtype, r) in BOUNDS]
    assert regions, f"{name} {dtype}: the docstring claims {ulps} ULP, BOUNDS has no bound"
    for region in regions:
        b = BOUNDS.get((name, dtype, region))
        assert b is not None, f"{name} {dtype}: no bound for region {region!r}"
        assert b.unit.startswith("ULP") and b.value <= ulps, (name, dtype, region, b)
