"""Every private torch API gelu_ext.torch uses, looked up in one place.

Design:

* torch promises nothing about a name with a leading underscore: any
  release may rename or drop it.  So each one the layer needs is looked up
  here, once, as ``gelu_ext.torch`` imports, with the torch releases it was
  checked on and what happens where it is missing: a fallback through
  public torch where one does the same job, otherwise an ``ImportError``
  that names the API and this torch (``missing``), never an
  ``AttributeError`` from deep inside an op.  The other modules take these
  names from here and reach for no other private torch name.
* "checked on torch 2.10.0-2.14.1" means the whole torch suite
  (tests/test_torch*.py) passed on 2.10.0, 2.12.1, 2.13.0 and 2.14.1
  (``CHECKED``); pyproject.toml's floor is the oldest of them.
* The C++ kernels (csrc/ops.cpp) use three private C++ APIs of their own,
  checked by the compiler when they are built: ``c10::impl::
  tls_local_dispatch_key_set`` and ``Tensor::_fw_grad`` (the autograd gate:
  whether a derivative may be asked for) and ``at::detail::empty_cpu`` (the
  outputs).  Checked on torch 2.10.0-2.14.1; missing, the build of
  ``gelu_ext.torch._C`` fails and the Python kernels run (``_cpp``).
* Nothing here changes torch: it only reads.
"""
import os

import torch
import torch.autograd.forward_ad as forward_ad

CHECKED = "2.10.0, 2.12.1, 2.13.0 and 2.14.1"


def missing(name, what):
    """The ImportError for a private torch API this torch lacks."""
    return ImportError(
        f"gelu_ext.torch needs {name} ({what}), which torch {torch.__version__} does not have; "
        f"gelu_ext.torch was checked on torch {CHECKED} (pip install 'torch>=2.10')")


def _required(obj, attr, name, what):
    value = getattr(obj, attr, None)
    if value is None:
        raise missing(name, what)
    return value


# -------------------------------------------------------------- autograd --
# The ops' autograd.Function records on the functorch level being processed
# only, as aten's own autograd kernels do (_ops, "Where the Function is
# applied").  No public spelling exists; without these the ops could not
# compose with torch.func, so each is required.

# checked on torch 2.10.0-2.14.1; missing: ImportError
SingleLevelFunction = _required(torch.autograd.function, "_SingleLevelFunction",
                                "torch.autograd.function._SingleLevelFunction",
                                "the ops' derivatives under torch.func")

# checked on torch 2.10.0-2.14.1; missing: ImportError
try:
    from torch._functorch.utils import enable_single_level_autograd_function
except ImportError:
    raise missing("torch._functorch.utils.enable_single_level_autograd_function",
                  "the ops' derivatives under torch.func") from None

# checked on torch 2.10.0-2.14.1; missing: ImportError
functorch_transforms_active = _required(torch._C, "_are_functorch_transforms_active",
                                        "torch._C._are_functorch_transforms_active",
                                        "whether a torch.func transform is running")

# The op below autograd, as aten's autograd kernels call it.
# checked on torch 2.10.0-2.14.1; missing: ImportError
AutoDispatchBelowAutograd = _required(torch._C, "_AutoDispatchBelowAutograd",
                                      "torch._C._AutoDispatchBelowAutograd",
                                      "calling an op below its autograd kernel")

# checked on torch 2.10.0-2.14.1; missing: ImportError
after_autograd_keyset = _required(torch._C, "_after_autograd_keyset", "torch._C._after_autograd_keyset",
                                  "redispatching an op below its autograd kernel")

# Forward-mode AD: the levels below a transform get their forward grad mode
# back, and the autograd kernel asks whether any dual level is open (read
# per call as forward_ad._current_level: the module rebinds it).
# checked on torch 2.10.0-2.14.1; missing: ImportError
set_fwd_grad_enabled = _required(forward_ad, "_set_fwd_grad_enabled",
                                 "torch.autograd.forward_ad._set_fwd_grad_enabled",
                                 "forward-mode AD through the ops")
if not isinstance(getattr(forward_ad, "_current_level", None), int):
    raise missing("torch.autograd.forward_ad._current_level", "forward-mode AD through the ops")


def _any_requires_grad_py(*args):
    return any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)


# Whether any argument requires grad, in C (the autograd kernel asks it on
# every call).  checked on torch 2.10.0-2.14.1 (added in 2.8); missing: the
# same answer in Python, ~0.2 us slower a call
any_requires_grad = getattr(torch._C, "_any_requires_grad", None) or _any_requires_grad_py


# ------------------------------------------------------------ registration --

# Removes a Library's registrations (the Python CPU kernels, when the C++
# ones take their key).  checked on torch 2.10.0-2.14.1; missing: the
# Python kernels cannot be taken out, so the C++ ones do not load (_cpp's
# warning says so) and the Python kernels run
_destroy = getattr(torch.library.Library, "_destroy", None)


def destroy_library(lib):
    if _destroy is None:
        raise missing("torch.library.Library._destroy", "handing the ops' CPU key to the C++ kernels")
    _destroy(lib)


# The mode PatchReport.check and the tests count the ops that ran with.
# checked on torch 2.10.0-2.14.1; missing: ImportError
try:
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:
    raise missing("torch.utils._python_dispatch.TorchDispatchMode",
                  "counting the ops a forward runs") from None


def decomposition_table():
    """torch's table of decompositions, which the dynamo ONNX exporter reads
    (gelu_ext.torch.onnx), or None.  checked on torch 2.10.0-2.14.1;
    missing: ``torch.onnx.export`` of our ops needs the explicit
    ``custom_translation_table=gelu_ext.torch.onnx.ONNX_TRANSLATIONS``."""
    try:
        from torch._decomp import decomposition_table as table
    except ImportError:
        return None
    return table if isinstance(table, dict) else None


def build_directory(name, verbose=False):
    """Where torch.utils.cpp_extension builds extension ``name`` (the C++
    kernels built on first use).  checked on torch 2.10.0-2.14.1 (its
    ``_get_build_directory``); missing: TORCH_EXTENSIONS_DIR, else
    ~/.cache/torch_extensions/<name>, as torch's own default."""
    from torch.utils import cpp_extension
    get = getattr(cpp_extension, "_get_build_directory", None)
    if get is not None:
        return get(name, verbose)
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "torch_extensions")
    return os.path.join(root, name)
