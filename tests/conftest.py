"""Fixtures of the gelu_ext test suite (helpers are in helpers.py and
gelu_ext.testing).

Process-wide settings the tests touch (ISA path, AMD loop choices, bfloat16
rounding, thread count, parallel threshold) are changed only through these
fixtures, which restore them, so test order never matters.
"""
import os

# Under pytest-xdist (`pytest -n 2`) the workers fill the cores, so each
# keeps OpenBLAS (NumPy's BLAS: the real BERT's matrix products, the moons
# networks) to one thread, unless the caller set it: its threads wait for
# each other by spinning, and beside another busy worker that spinning is
# most of what they cost (an order of magnitude more CPU time with a
# thread per core).  Set before NumPy is first imported, which is when
# OpenBLAS reads it; the tests' own child processes inherit it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest                                              # noqa: E402

import gelu_ext                                            # noqa: E402
from gelu_ext import _test_hooks, _ufuncs                  # noqa: E402
from helpers import usable_isas                            # noqa: E402


def pytest_configure(config):
    # pytest-xdist's own marker (tests it should keep on one worker under
    # --dist loadgroup), known where pytest-xdist is not installed too
    config.addinivalue_line("markers", "xdist_group(name): run on one pytest-xdist worker under --dist loadgroup")


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (`pytest -n 2`, the everyday run) the ``idle``
    tests are skipped, not run: they assert how the thread pool shared the
    cores, and the other workers keep those cores busy.  `pytest -m idle`
    runs them alone; the README's test command (no -n) runs them too."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    skip = pytest.mark.skip(reason="needs the machine to itself (pytest-xdist workers share it): run `pytest -m idle`")
    for item in items:
        if "idle" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=usable_isas())
def isa(request):
    """Run the test on one ISA path, then restore the previous one."""
    before = _ufuncs._get_isa()
    _ufuncs._set_isa(request.param)
    try:
        yield request.param
    finally:
        _ufuncs._set_isa(before)


def _switched(setter, getter, value):
    """Set a process-wide loop choice for one test (yields the setting then
    in force, as ``getter`` reads it), then restore the one before."""
    before = setter(value)
    try:
        yield getter()
    finally:
        setter(before)


@pytest.fixture(params=[0, 1], ids=["prefetch-gather", "plain-loads"])
def plain_loads(request):
    """Run the test with the plain_loads choices off, then on
    (_test_hooks.set_plain_loads: ReLU's plain loop, 16-bit forward tables
    without gathers, SiLU in one pass), whatever this CPU's vendor; then
    restore the CPU's own choice."""
    yield from _switched(_test_hooks.set_plain_loads, _ufuncs._plain_loads, request.param)


@pytest.fixture(params=[0, 1], ids=["int-rounding", "bf16-insn"])
def bf16cvt(request):
    """Run the test with bfloat16 results rounded by integer operations, then
    by AVX512-BF16's vcvtneps2bf16 (_test_hooks.set_bf16cvt; where the CPU lacks it
    the second run repeats the first); then restore the CPU's own choice."""
    yield from _switched(_test_hooks.set_bf16cvt, _ufuncs._bf16cvt, request.param)


@pytest.fixture
def restore_threads():
    """Restore the thread count and parallel threshold a test changes."""
    threshold = _ufuncs._get_parallel_threshold()
    try:
        yield
    finally:
        gelu_ext.set_num_threads(None)
        _test_hooks.set_parallel_threshold(threshold)
