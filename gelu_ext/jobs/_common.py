"""Small helpers shared by the command-line jobs (``python -m gelu_ext ...``)."""
import importlib
import sys


class MissingExtra(SystemExit):
    """An optional package is missing: one line naming what to install."""

    def __init__(self, package, extra):
        super().__init__(f"gelu_ext: this needs {package}; install it with: "
                         f"pip install 'gelu_ext[{extra}]'")


def require(module, extra, package=None):
    """Import ``module`` or raise MissingExtra naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(package or module.split(".")[0], extra) from None


def progress(msg):
    """One line of progress on stderr (never on stdout, which holds results)."""
    print(msg, file=sys.stderr, flush=True)
