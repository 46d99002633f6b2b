"""The op spec (gelu_ext/_spec.py) is consistent, and what is generated from
it (src/gx_ops_table.h, the stubs' block, the README's table) is up to date."""
import subprocess
import sys
from pathlib import Path

import pytest

import gelu_ext
from gelu_ext import _spec, _ufuncs

ROOT = Path(__file__).resolve().parents[1]


def test_spec_is_consistent():
    assert _spec.check() == []


def test_generated_files_match_the_spec():
    gen = ROOT / "src" / "tables" / "gen_ops.py"
    if not gen.is_file():
        pytest.skip("src/tables/gen_ops.py is not here (tests run outside the repository)")
    r = subprocess.run([sys.executable, str(gen), "--check"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_compiled_table_is_the_spec():
    """The built extension's op table is the spec's (a stale build fails)."""
    assert [(o.name, o.nin, o.kind, o.base) for o in _ufuncs.OPS.values()] == [
        (op.name, len(op.inputs), op.kind, op.base) for op in _spec.OPS]
    for op in _spec.OPS:
        assert _ufuncs.OPS[op.name].ufunc.__doc__.endswith(op.doc)


def test_every_op_and_alias_is_public():
    for op in _spec.OPS:
        assert op.name in gelu_ext.__all__
        assert op.alias is None or getattr(gelu_ext, op.alias) is getattr(_ufuncs, op.name)


def test_torch_names_exist():
    torch = pytest.importorskip("torch")
    from gelu_ext.torch import functional, nn
    for t in _spec.TORCH_OPS:
        assert hasattr(torch.ops.gelu_ext, t.name)
        assert t.module is None or t.module in nn.__all__
        assert t.functional is None or t.functional in functional.__all__
    for a in _spec.ACTIVATIONS:
        assert a.module in nn.__all__
        assert a.torch_class is None or hasattr(torch.nn, a.torch_class)
