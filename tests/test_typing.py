"""Types: the installed package ships py.typed and its stubs, the
stubs declare exactly the public names, and mypy --strict accepts the typed
usage file tests/typecheck/usage.py (whose ``type: ignore`` lines are calls the
stubs must reject)."""
import ast
from importlib import resources
from pathlib import Path

import pytest

import gelu_ext
from helpers import python_child

ROOT = Path(__file__).resolve().parents[1]


def _stub_text():
    return resources.files("gelu_ext").joinpath("__init__.pyi").read_text()


def _stub_names():
    """Names the stub defines at top level, without the private ones
    (``_Scalar``) and dunders (``__version__``)."""
    names = set()
    for node in ast.parse(_stub_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def test_installed_package_is_typed():
    pkg = resources.files("gelu_ext")
    assert pkg.joinpath("py.typed").is_file(), "py.typed is not installed (pyproject.toml package-data)"
    assert pkg.joinpath("__init__.pyi").is_file(), "__init__.pyi is not installed (pyproject.toml package-data)"


def test_stub_declares_every_public_name():
    missing = sorted(set(gelu_ext.__all__) - _stub_names())
    assert not missing, f"gelu_ext/__init__.pyi lacks stubs for public names {missing}: add them"


def test_stub_declares_nothing_that_is_not_public():
    extra = sorted(_stub_names() - set(gelu_ext.__all__))
    assert not extra, f"gelu_ext/__init__.pyi declares {extra}, which are not in gelu_ext.__all__"


def test_usage_type_checks(tmp_path):
    pytest.importorskip("mypy")
    if not (ROOT / "tests" / "typecheck" / "usage.py").is_file():
        pytest.skip("tests/typecheck/usage.py is not here (tests run outside the repository)")
    # the configuration ([tool.mypy] in pyproject.toml) names the file and
    # --strict; mypy reads the checkout's stubs and imports nothing of it
    r = python_child(["-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                      "--cache-dir", str(tmp_path), "--no-error-summary"],
                     cwd=ROOT, imports_gelu_ext=False, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
