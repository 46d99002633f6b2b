"""gelu_ext.torch without PyTorch: a clear ImportError naming the extra, and
gelu_ext itself unaffected (it never imports torch)."""
from helpers import python_child

CODE = """
import sys
sys.modules["torch"] = None          # as if torch were not installed
import gelu_ext
assert "torch" in sys.modules and sys.modules["torch"] is None
try:
    import gelu_ext.torch
except ImportError as e:
    print(e)
else:
    raise SystemExit("imported without torch")
"""


def test_import_without_torch_names_the_extra(tmp_path):
    r = python_child(["-c", CODE], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "gelu_ext.torch needs PyTorch: pip install 'gelu_ext[torch]'" in r.stdout
