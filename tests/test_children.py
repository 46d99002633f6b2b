"""Child interpreters test the package this process tests.

A child Python started in the checkout puts it first on sys.path and
imports the source tree's gelu_ext/, which has no compiled extension unless
one was built in place: the suite then fails after a normal install, or
tests the wrong copy.  Every test starts its children through
helpers.python_child; these tests hold it to that.
"""
import ast
import os
import shutil
from pathlib import Path

import pytest

import gelu_ext
from helpers import child_cwd, python_child

TESTS = Path(__file__).resolve().parent
PACKAGE = os.path.dirname(os.path.abspath(gelu_ext.__file__))


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


# ------------------------------------------- a checkout never built --
# `pip install . && python -m gelu_ext` in the checkout: the checkout's
# gelu_ext/ (sources only) comes first on sys.path and hands over to the
# installed package.

def _unbuilt_checkout(root):
    """A copy of the tested package's Python sources, no compiled module."""
    shutil.copytree(PACKAGE, root / "gelu_ext",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "*.json"))
    assert not list((root / "gelu_ext").glob("_ufuncs*"))
    return root


def test_an_unbuilt_checkout_first_on_sys_path_hands_over_to_the_installed_package(tmp_path):
    checkout = _unbuilt_checkout(tmp_path / "checkout")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")]))
    code = ("import sys, gelu_ext, gelu_ext.__main__\n"
            "assert sys.modules['gelu_ext'] is gelu_ext\n"
            "print(gelu_ext.__file__, gelu_ext.__main__.__file__, gelu_ext.fast_gelu(0.0))")
    r = python_child(["-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    init, main, zero = r.stdout.split()
    assert os.path.dirname(os.path.realpath(init)) == os.path.realpath(PACKAGE)
    assert os.path.dirname(os.path.realpath(main)) == os.path.realpath(PACKAGE)
    assert zero == "0.0"


def test_an_unbuilt_checkout_with_nothing_installed_says_what_to_do(tmp_path):
    checkout = _unbuilt_checkout(tmp_path / "checkout")
    # -S: no site-packages, PYTHONPATH the checkout alone: no gelu_ext but its
    env = dict(os.environ, PYTHONPATH=str(checkout))
    r = python_child(["-S", "-c", "import gelu_ext"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert ("a source tree with no compiled extension, and is not installed elsewhere: pip install ."
            in r.stderr.splitlines()[-1]), r.stderr
