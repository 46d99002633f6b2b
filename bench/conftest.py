"""pytest-benchmark suite configuration: sizes, the opt-in 2^24 case, machine info.

Sizes: 16, 4096, 65536 and 2^20 by default; ``--bench-huge`` adds 2^24
(memory-bound, slow: about 0.1-1 GB of arrays per case; marked ``huge``, so
``-m huge`` selects only those); ``--bench-sizes`` replaces the list.
Under ``--benchmark-disable`` (CI's smoke run: each benchmark body runs once,
untimed) only the small sizes run, so the suite
checks that every benchmark still works in well under a minute.
"""
import pytest

from gelu_ext.jobs import bench

# JAX's CPU thread pool is sized once, when jax is imported; this suite pins it
# to one thread (a user's own XLA_FLAGS win), so JAX appears in the 1-thread
# groups only.
bench.jax_single_thread()

SIZES = (16, 4096, 65536, 1 << 20)
HUGE = 1 << 24
SMOKE_SIZES = (16, 4096)


def pytest_addoption(parser):
    group = parser.getgroup("gelu_ext benchmarks")
    group.addoption("--bench-huge", action="store_true", default=False,
                    help="also benchmark 2^24 elements (memory-bound; needs ~1 GB and minutes)")
    group.addoption("--bench-sizes", default=None, metavar="N,N,...",
                    help="comma-separated element counts replacing the default sizes, e.g. 4096,2^20")


def pytest_configure(config):
    config.addinivalue_line("markers", "huge: the 2^24-element cases (selected by --bench-huge)")


def _sizes(config):
    text = config.getoption("--bench-sizes")
    if text:
        try:
            return [bench._parse_size(s) for s in text.split(",") if s.strip()]
        except Exception as e:          # argparse.ArgumentTypeError carries the message
            raise pytest.UsageError(f"--bench-sizes: {e}") from None
    base = SMOKE_SIZES if config.getoption("benchmark_disable", default=False) else SIZES
    return list(base) + ([HUGE] if config.getoption("--bench-huge") else [])


def pytest_generate_tests(metafunc):
    if "size" in metafunc.fixturenames:
        sizes = _sizes(metafunc.config)
        params = [pytest.param(n, id=bench._size_id(n), marks=[pytest.mark.huge] if n >= HUGE else [])
                  for n in sizes]
        metafunc.parametrize("size", params)


@pytest.fixture(scope="session")
def machine():
    """Machine, ISA path and versions (imports the installed peers once)."""
    return bench.machine_info()
