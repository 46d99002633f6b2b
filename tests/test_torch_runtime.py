"""gelu_ext.torch where PyTorch runs a model beyond one eager call: traced
with ``torch.jit.trace`` (saved and loaded), inside DataLoader workers under
each start method, and from several Python threads at once.  Each result is
compared bit for bit with the same computation in this process, serially.
Last, which threads do the ops' work under torch's thread budget."""
import multiprocessing
import os
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="gelu_ext.torch needs PyTorch (pip install '.[torch]')")

import gelu_ext.torch as gt                                # noqa: E402
from gelu_ext.torch import functional as GF                # noqa: E402
from helpers import python_child                           # noqa: E402


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


# ------------------------------------------------------------ one budget --
# Which threads of a process do the work of our ops, observed from outside
# the op: each thread's CPU time (/proc/self/task/*/stat) across calls of
# exact GELU over 2^22 float32 elements (until the busiest thread has used
# 0.3 s), in a fresh process (nothing threaded before), under the thread
# count torch is given -- by torch.set_num_threads, or by an affinity mask
# of one CPU (torch's default count follows the mask).  A thread counts as
# working if it used at least a fifth of the busiest thread's CPU time: the
# op's chunks are equal shares.  The child takes its thread counts as
# phases ("1,2": set_num_threads(1), measured, then set_num_threads(2),
# measured: a count changed while the process runs is followed too) and
# prints one line per phase.
_BUDGET_CHILD = r"""
import json, os, sys
if sys.argv[2] == "mask":
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
import torch
import gelu_ext.torch as gt
from gelu_ext import _test_hooks

def cpu_ticks():
    ticks = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:             # a thread that ended in between
            continue
        ticks[tid] = int(fields[11]) + int(fields[12])     # utime + stime
    return ticks

x = torch.randn(1 << 22)
for threads in sys.argv[1].split(","):
    if threads != "default":
        torch.set_num_threads(int(threads))
    y = torch.ops.gelu_ext.gelu(x)
    before = cpu_ticks()
    for _ in range(100):            # until the busiest thread has 30 ticks (0.3 s at 100 Hz)
        for _ in range(20):
            y = torch.ops.gelu_ext.gelu(x)
        after = cpu_ticks()
        used = {t: after[t] - before.get(t, 0) for t in after}
        top = max(used.values())
        if top >= 30:
            break
    print(json.dumps({"kernels": gt.kernels(), "torch_threads": torch.get_num_threads(),
                      "working": sum(u >= max(top / 5, 1) for u in used.values()),
                      "pool_workers": _test_hooks.pool_workers(), "ticks": top}), flush=True)
"""


def _budget_run(threads, mask, env_kernels):
    import json
    env = dict(os.environ)
    env.pop("GELU_EXT_TORCH_CPP", None)
    env.pop("OMP_NUM_THREADS", None)
    if env_kernels is not None:
        env["GELU_EXT_TORCH_CPP"] = env_kernels
    out = python_child(["-c", _BUDGET_CHILD, threads, mask], env=env, capture_output=True, text=True,
                       timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    phases = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(phases) == len(threads.split(",")), out.stdout
    return phases


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or not hasattr(os, "sched_setaffinity"),
                    reason="per-thread CPU times from /proc and affinity masks: Linux only")
@pytest.mark.parametrize("kernels", ["default", "0"], ids=["default-kernels", "python-kernels"])
@pytest.mark.parametrize("threads, mask", [("1,2", "all"), ("default", "mask")],
                         ids=["set_num_threads(1)-then-(2)", "one-cpu-mask"])
def test_ops_work_on_torch_thread_budget(threads, mask, kernels):
    if mask == "all" and len(os.sched_getaffinity(0)) < 2:
        threads = "1"               # the second phase needs two CPUs
    phases = _budget_run(threads, mask, None if kernels == "default" else kernels)
    for phase, count in zip(phases, threads.split(",")):
        _check_budget(phase, 2 if count == "2" else 1)


def _check_budget(r, want):
    assert r["torch_threads"] == want, r
    assert r["ticks"] >= 30, r              # enough CPU time measured to tell threads apart
    if r["kernels"] == "cpp":
        # chunks on torch's own threads: gelu_ext's pool never starts
        assert r["pool_workers"] == 0, r
    else:
        # gelu_ext's pool, as many threads as torch's count, never more
        assert r["pool_workers"] <= want - 1, r
    # no thread beyond torch's count ever works; that the second thread takes
    # its share is for an idle machine (below): on busy cores both kernels run
    # calls on the caller alone after a stall, by design (gx_pool.c's back-off
    # for the Python kernels, ops.cpp's over torch's threads for the C++
    # ones), and CI's torch step runs beside other jobs
    assert 1 <= r["working"] <= want, r


@pytest.mark.idle
@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or len(os.sched_getaffinity(0)) < 2,
                    reason="per-thread CPU times from /proc and two CPUs: Linux only")
@pytest.mark.parametrize("kernels", ["default", "0"], ids=["default-kernels", "python-kernels"])
def test_ops_split_over_torch_s_two_threads_on_an_idle_machine(kernels):
    r, = _budget_run("2", "all", None if kernels == "default" else kernels)
    assert r["torch_threads"] == 2 and r["ticks"] >= 30 and r["working"] == 2, r
    assert r["pool_workers"] == (0 if r["kernels"] == "cpp" else 1), r
