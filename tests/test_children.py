"""Child interpreters test the package this process tests.

A child Python started in the checkout puts it first on sys.path and
imports the source tree's gelu_ext/, which has no compiled extension unless
one was built in place: the suite then fails after a normal install, or
tests the wrong copy.  Every test starts its children through
helpers.python_child; these tests hold it to that.
"""
import ast
import os
from pathlib import Path

import pytest

import gelu_ext
from helpers import child_cwd, python_child

TESTS = Path(__file__).resolve().parent


def test_a_child_imports_the_parents_gelu_ext():
    r = python_child(["-c", "import gelu_ext; print(gelu_ext.__file__)"], capture_output=True, text=True,
                     timeout=120)
    assert r.returncode == 0, r.stderr
    assert os.path.realpath(r.stdout.strip()) == os.path.realpath(gelu_ext.__file__)


def test_a_directory_with_another_gelu_ext_is_refused(tmp_path):
    (tmp_path / "gelu_ext").mkdir()
    (tmp_path / "gelu_ext" / "__init__.py").write_text("")
    with pytest.raises(ValueError, match="would import .*gelu_ext, not the tested"):
        child_cwd(tmp_path)


def test_the_directory_of_the_tested_gelu_ext_is_allowed():
    """A checkout built in place is the tested package: its root is fine."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(gelu_ext.__file__)))
    assert child_cwd(root) == root


def _starts_python_directly(path):
    """Lines of ``path`` that name sys.executable (a child started around
    python_child)."""
    tree = ast.parse(path.read_text(), str(path))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "executable"
            and isinstance(node.value, ast.Name) and node.value.id == "sys"]


def test_no_test_starts_python_but_through_python_child():
    found = {p.name: lines for p in sorted(TESTS.glob("*.py")) if p.name != "helpers.py"
             for lines in [_starts_python_directly(p)] if lines}
    assert not found, f"sys.executable used outside helpers.python_child: {found}"


def test_the_scan_sees_a_direct_start(tmp_path):
    bad = tmp_path / "test_bad.py"
    bad.write_text("import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'pass'])\n")
    assert _starts_python_directly(bad) == [2]
