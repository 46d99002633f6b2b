"""The package imported from a source checkout that was never built.

``python -m gelu_ext`` and ``python -c`` put the working directory first on
sys.path, so started in a checkout they find its gelu_ext/ -- Python
sources without the compiled extension unless it was built in place -- ahead
of the installed package.  There the installed gelu_ext takes this one's
place in sys.modules, as if Python had been started anywhere else; with no
installed copy the ImportError says how to get one.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _built(path):
    return importlib.machinery.PathFinder.find_spec("_ufuncs", list(path)) is not None


def hand_over(name, path):
    """Nothing where ``path`` (the package's ``__path__``) holds the compiled
    extension; else the installed package, loaded into sys.modules[name]."""
    if _built(path):
        return
    checkout = {os.path.realpath(os.path.dirname(p)) for p in path}
    rest = [p for p in sys.path if os.path.realpath(p or os.curdir) not in checkout]
    spec = importlib.machinery.PathFinder.find_spec(name, rest)
    if spec is None or not _built(spec.submodule_search_locations or ()):
        raise ImportError(f"{name} was imported from {path[0]}, a source tree with no compiled extension, "
                          f"and is not installed elsewhere: pip install . (then run from anywhere), or "
                          f"python setup.py build_ext --inplace to use the tree itself")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
