"""Mish, x tanh(softplus(x)): what the spec-driven op tests cannot know --
its special values beside torch's, and the Hugging Face and torch modules
patch_model replaces with ours.  (Its bounds, dtypes, paths, layouts, torch
op, derivatives and ONNX graph are the op tests', drawn from the spec.)"""
import numpy as np
import pytest

import gelu_ext
from gelu_ext import testing

SPECIAL = [np.nan, 0.0, -0.0, np.inf, -np.inf, 1e30, -1e30, 1.0, -1.0]
# the limits: x tanh(softplus(x)) -> x as x -> inf, -> -0 as x -> -inf
LIMIT = [np.nan, 0.0, -0.0, np.inf, -0.0, 1e30, -0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_are_the_limits(dtype):
    x = np.array(SPECIAL, dtype=dtype)
    got = gelu_ext.mish(x)
    testing.assert_same_bits(got[:len(LIMIT)], np.array(LIMIT, dtype=dtype), "mish")
    np.testing.assert_array_equal(gelu_ext.mish_grad(np.array([np.inf, -np.inf], dtype=dtype)),
                                  np.array([1.0, 0.0], dtype=dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_are_torchs_but_at_minus_inf(dtype):
    """torch's mish(-inf) is -inf * tanh(0) = NaN; ours is the limit, -0
    (as our silu(-inf), where torch's is NaN too)."""
    torch = pytest.importorskip("torch")
    x = np.array(SPECIAL[:7], dtype=dtype)
    theirs = torch.nn.functional.mish(torch.from_numpy(x)).numpy()
    ours = gelu_ext.mish(x)
    keep = x != -np.inf
    testing.assert_same_bits(ours[keep], theirs[keep], "mish")


def test_patch_model_replaces_torchs_and_transformers_mish():
    torch = pytest.importorskip("torch")
    gt = pytest.importorskip("gelu_ext.torch")
    acts = [torch.nn.Mish()]
    try:
        from transformers.activations import ACT2FN
        acts.append(ACT2FN["mish"])
    except ImportError:
        pass
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), *acts)
    x = torch.randn(3, 4, dtype=torch.float32)
    with torch.no_grad():
        want = model(x)
    report = gt.patch_model(model)
    assert len(report.replaced) == len(acts), report
    assert all(type(m) is gt.nn.Mish for m in list(model)[1:])
    with torch.no_grad():
        got = model(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
