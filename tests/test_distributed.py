"""A dask.distributed LocalCluster of 2 worker processes: the
ufuncs travel to the workers (pickled by name), the workers compute the bits
the local call computes, and each worker runs gelu_ext on one thread.

Why one thread: Dask's nanny starts every worker process with
OMP_NUM_THREADS=1 (its ``distributed.nanny.pre-spawn-environ``), and
gelu_ext's pool takes its default from OMP_NUM_THREADS, so n_workers x
threads_per_worker = cores does not become cores x cores threads.  The README
("Beyond one machine") tells users to rely on exactly this; if either side
changes, this test says so.

The cluster is started and shut down inside the test (context managers), so
no worker process outlives it; it takes a few seconds.
"""
import os

import numpy as np
import pytest

import gelu_ext
from public_calls import bits, make_inputs

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    # dashboard on a free port: distributed 2024.8 (Python 3.9) reads None as
    # 8787, and a second suite running at the same time (CI runs two) then
    # fails the cluster's start with "Port 8787 is already in use"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        c.wait_for_workers(2)
        yield c


def test_two_worker_processes(client):
    pids = client.run(os.getpid)
    assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()


def test_workers_run_gelu_ext_on_one_thread(client):
    assert set(client.run(gelu_ext.get_num_threads).values()) == {1}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_cluster_computes_the_local_bits(client, dtype):
    x, g, b = make_inputs(dtype, (512, 1024))
    dx = da.from_array(x, chunks=(64, 1024))        # 8 chunks of 2^16 elements, spread over both workers
    db = da.from_array(b, chunks=1024)
    lazy = [gelu_ext.fast_gelu(dx), gelu_ext.fast_gelu(dx, "tanh", bias=db)]
    got = client.compute(lazy, sync=True)
    want = [gelu_ext.fast_gelu(x), gelu_ext.fast_gelu(x, "tanh", bias=b)]
    for gv, wv in zip(got, want):
        assert type(gv) is np.ndarray and gv.dtype == wv.dtype
        np.testing.assert_array_equal(bits(gv), bits(wv))
    # a reduction on the cluster (max: exact whatever the order of the chunks)
    peak = client.compute(gelu_ext.fast_gelu(dx).max(axis=0), sync=True)
    np.testing.assert_array_equal(bits(peak), bits(want[0].max(axis=0)))
