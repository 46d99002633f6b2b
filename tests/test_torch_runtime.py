"""gelu_ext.torch where PyTorch runs a model beyond one eager call: traced
with ``torch.jit.trace`` (saved and loaded), inside DataLoader workers under
each start method, and from several Python threads at once.  Each result is
compared bit for bit with the same computation in this process, serially."""
import multiprocessing
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="gelu_ext.torch needs PyTorch (pip install '.[torch]')")

import gelu_ext.torch as gt                                # noqa: E402
from gelu_ext.torch import functional as GF                # noqa: E402


def patched_mlp():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 32),
                            torch.nn.SiLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(),
                            torch.nn.Linear(32, 4))
    assert len(gt.patch_model(m)) == 3
    return m.eval()


def test_jit_trace_keeps_our_ops_and_round_trips(tmp_path):
    m = patched_mlp()
    x = torch.randn(5, 8)
    traced = torch.jit.trace(m, (x,))
    kinds = {n.kind() for n in traced.inlined_graph.nodes()}
    assert {"gelu_ext::gelu", "gelu_ext::silu", "gelu_ext::relu"} <= kinds, kinds
    path = tmp_path / "traced.pt"
    torch.jit.save(traced, str(path))
    loaded = torch.jit.load(str(path))
    x2 = torch.randn(7, 8)          # another batch size: the trace is not shape-specialised here
    assert torch.equal(loaded(x2), m(x2))


class ActivatedRows(torch.utils.data.Dataset):
    """Rows of a fixed tensor through our GELU and SwiGLU: every item a
    DataLoader worker returns was computed by gelu_ext in that worker."""

    def __init__(self):
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(16, 64, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        row = self.x[i]
        return GF.gelu(row) + GF.swiglu(row, row.flip(0))


@pytest.mark.parametrize("method", [
    "fork", pytest.param("spawn", marks=pytest.mark.slow), pytest.param("forkserver", marks=pytest.mark.slow)])
def test_dataloader_workers_after_threaded_calls(method):
    """Workers under each start method, after this process ran threaded calls
    (the pool's threads are not inherited by a fork: the child starts its own)."""
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method on this platform")
    GF.gelu(torch.randn(1 << 20))           # threaded: the pool's workers exist now
    ds = ActivatedRows()
    want = torch.stack([ds[i] for i in range(len(ds))])
    loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2,
                                         multiprocessing_context=method)
    got = torch.cat(list(loader))
    assert torch.equal(got, want)


def test_python_threads_share_a_patched_model():
    m = patched_mlp()
    g = torch.Generator().manual_seed(2)
    inputs = [torch.randn(64, 8, generator=g) for _ in range(4)]
    with torch.inference_mode():
        want = [m(x) for x in inputs]
    errors, results = [], {}

    def worker(k):
        try:
            with torch.inference_mode():
                results[k] = [m(inputs[k]) for _ in range(50)]
        except Exception as e:          # noqa: BLE001 - reported by the assert below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(4):
        for r in results[k]:
            np.testing.assert_array_equal(r.numpy(), want[k].numpy())
