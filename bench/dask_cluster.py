"""Beyond one process: fast_gelu over a chunked Zarr array, in one
process and on a dask.distributed LocalCluster, same data, same pipeline.

Usage::

    python bench/dask_cluster.py [--n N] [--chunk C] [--repeats R] [--workers W] [--dir DIR]

The data: N float32 values (2 N(0, 1)), shape (N/4096, 4096), written once
to an uncompressed Zarr store in a temporary directory under DIR (default
/dev/shm where it exists, so the rows measure computing and scheduling, not a
disk or a codec), chunks of C elements (whole rows).  Two pipelines:

* reduce: ``fast_gelu(x).sum()`` (a float64 sum per chunk, then of chunks);
* store:  ``fast_gelu(x)`` written to a second Zarr store (uncompressed too).

Each runs in three ways:

* ``numpy``: one process, one call on the whole array read into memory
  (``fast_gelu`` on gelu_ext's default threads);
* ``dask threads``: one process, Dask's threaded scheduler (one thread per
  CPU), each chunk a ``fast_gelu`` call -- the calls share gelu_ext's pool,
  at most ``get_num_threads()`` threads computing;
* ``LocalCluster``: W worker processes x 1 thread (the Dask nanny starts
  them with OMP_NUM_THREADS=1, so gelu_ext runs one thread in each).

Plus the ceiling: ``fast_gelu`` alone on an in-memory array (out=).  Every
entry is timed R times, the entries interleaved (order reversed every other
round), after one warm-up each; the table shows the median (and quartiles)
and elements per second.  The cluster's start-up is timed apart.  The
cluster and the temporary stores are removed on exit, whatever happens.

A benchmark, not a test: it prints numbers and asserts nothing, except that
every way computes the same reduction as NumPy.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import gelu_ext
from gelu_ext.jobs import _common

COLS = 4096


def _args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=_common.int_at_least(COLS), default=1 << 26,
                   help="elements (a multiple of 4096; default 2^26, 256 MiB of float32)")
    p.add_argument("--chunk", type=_common.int_at_least(COLS), default=1 << 22,
                   help="elements per chunk, whole rows (default 2^22, 16 MiB)")
    p.add_argument("--repeats", type=_common.int_at_least(1), default=7)
    p.add_argument("--workers", type=_common.int_at_least(1), default=2,
                   help="LocalCluster worker processes, 1 thread each (default 2)")
    p.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                   help="where the temporary Zarr stores go (default /dev/shm if present)")
    a = p.parse_args(argv)
    if a.n % COLS or a.chunk % COLS:
        p.error(f"--n and --chunk must be multiples of {COLS}, got {a.n} and {a.chunk}")
    return a


def _no_codec():
    """Zarr's keyword for "store uncompressed" (zarr 3 and 2 spell it apart)."""
    import zarr
    return {"compressors": None} if int(zarr.__version__.split(".")[0]) >= 3 else {"compressor": None}


def _write_input(path, n, chunk):
    import dask.array as da
    rng = np.random.default_rng(0)
    x = (2 * rng.standard_normal((n // COLS, COLS), dtype=np.float32))
    da.to_zarr(da.from_array(x, chunks=(chunk // COLS, COLS)), str(path), **_no_codec())
    return x


def _load(url):
    import zarr
    return zarr.open_array(str(url), mode="r")[...]


def _pipelines(src, dst, chunk, scheduler):
    """name -> callable for one way of running (scheduler: a Dask scheduler
    or None for plain NumPy); each returns the reduction's value or None."""
    import dask
    import dask.array as da
    import zarr

    if scheduler is None:
        def reduce_():
            return float(gelu_ext.fast_gelu(_load(src)).sum(dtype=np.float64))

        def store():
            y = gelu_ext.fast_gelu(_load(src))
            kw = dict(shape=y.shape, chunks=(chunk // COLS, COLS), dtype=y.dtype, **_no_codec())
            if hasattr(zarr, "create_array"):                       # zarr 3
                z = zarr.create_array(str(dst), overwrite=True, **kw)
            else:
                z = zarr.open_array(str(dst), mode="w", **kw)
            z[...] = y
        return {"reduce": reduce_, "store": store}

    def reduce_():
        x = da.from_zarr(str(src))
        with dask.config.set(scheduler=scheduler):
            return float(gelu_ext.fast_gelu(x).sum(dtype=np.float64).compute())

    def store():
        x = da.from_zarr(str(src))
        with dask.config.set(scheduler=scheduler):
            da.to_zarr(gelu_ext.fast_gelu(x), str(dst), mode="w", **_no_codec())
    return {"reduce": reduce_, "store": store}


def main(argv=None):
    a = _args(argv)
    dask = _common.require("dask", "test", "dask[array]")
    distributed = _common.require("distributed", "test")
    _common.require("zarr", "test", "zarr")
    import dask.array  # noqa: F401  (its version in the header)
    import zarr  # noqa: F401

    info = _common.machine_info(modules=("dask", "distributed", "zarr"))
    load0 = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="gelu_ext_dask_", dir=a.dir))
    try:
        src, dst = tmp / "x.zarr", tmp / "y.zarr"
        _common.progress(f"writing {a.n} float32 to {src} ...")
        x = _write_input(src, a.n, a.chunk)
        want = float(gelu_ext.fast_gelu(x).sum(dtype=np.float64))
        out = np.empty_like(x)

        t0 = time.perf_counter()
        with distributed.LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster, set_as_default=False) as client:
            client.wait_for_workers(a.workers)
            startup = time.perf_counter() - t0
            worker_threads = sorted(set(client.run(gelu_ext.get_num_threads).values()))

            ways = {"numpy": None, "dask threads": "threads", "LocalCluster": client.get}
            calls = {("ceiling", "fast_gelu in memory"): lambda: gelu_ext.fast_gelu(x, out=out)}
            for way, sched in ways.items():
                for pipe, f in _pipelines(src, tmp / f"y-{way.replace(' ', '_')}.zarr", a.chunk, sched).items():
                    calls[(pipe, way)] = f
            for key in [k for k in calls if k[0] == "reduce"]:
                got = calls[key]()
                if not np.isclose(got, want, rtol=1e-9):
                    raise SystemExit(f"{key[1]}: sum {got!r}, NumPy says {want!r}")
            _common.progress(f"timing {len(calls)} entries x {a.repeats} repeats ...")
            timings = _common.measure(calls, min_sample=0.0, min_repeats=a.repeats, max_repeats=a.repeats,
                                      budget=0.0)
        load1 = os.getloadavg()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"python bench/dask_cluster.py {' '.join(sys.argv[1:] if argv is None else argv)}".rstrip())
    for line in _common.header_lines(info):
        print(line)
    print(f"data    : {a.n} float32 = {a.n * 4 / 2**20:g} MiB, shape ({a.n // COLS}, {COLS}), chunks of "
          f"{a.chunk} ({a.n // a.chunk} chunks), uncompressed Zarr in {a.dir or tempfile.gettempdir()}")
    print(f"threads : this process {gelu_ext.get_num_threads()} (gelu_ext), Dask threaded scheduler "
          f"{os.cpu_count()}; LocalCluster {a.workers} processes x 1 thread, gelu_ext threads in each: "
          f"{', '.join(map(str, worker_threads))}; cluster start-up {startup:.1f} s (not in the table)")
    print(f"load avg: {load0[0]:.2f} before, {load1[0]:.2f} after (1-minute)")
    print(f"timing  : median [quartiles] of {a.repeats} interleaved runs after a warm-up")
    print()
    base = {pipe: timings[(pipe, "numpy")].median for pipe in ("reduce", "store")}
    print("| pipeline | how | median s [q1, q3] | Melem/s | vs numpy |")
    print("|---|---|---|---|---|")
    for (pipe, way), t in sorted(timings.items(), key=lambda kv: ("ceiling", "reduce", "store").index(kv[0][0])):
        rel = f"{base[pipe] / t.median:.2f}x" if pipe in base else "-"
        print(f"| {pipe} | {way} | {t.median:.3f} [{t.q1:.3f}, {t.q3:.3f}] | {a.n / t.median / 1e6:.0f} | {rel} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
