"""gelu_ext for PyTorch: custom ops with autograd, a functional API, modules,
and ``patch_model`` for a loaded (Hugging Face) model.

Optional: ``pip install 'gelu_ext[torch]'``; ``import gelu_ext`` never
imports torch.  Three ways in:

* functional, with ``torch.nn.functional``'s names and signatures:
  ``gelu_ext.torch.functional.gelu(x, approximate="none")``, ``silu``,
  ``relu``, ... (``functional.__all__``), and the fused ``swiglu(gate, up)``,
  ``geglu(gate, up, approximate)``, ``gelu(x, bias=b)``;
* modules named like ``torch.nn``'s: ``GELU(approximate=...)``, ``ReLU``,
  ``SiLU``, ... (``nn.__all__``), ``SwiGLU``, ``GEGLU``, ``GatedMLP``;
* ``patch_model(model)``: every activation submodule gelu_ext computes
  swapped in place for its module (``gated_mlp=True``: LLaMA's, Phi-3's,
  T5's and ModernBERT's gated MLP blocks fused too); ``unpatch_model(model)``
  undoes it; ``example_inputs=`` (or ``report.check(model, *inputs)``) runs
  one forward and says what ran, which the report cannot know otherwise;
* ``with functional_mode():`` routes ``F.gelu``/``silu``/``relu`` called
  inside a model's ``forward`` to gelu_ext's ops.

A patched model exports with ``torch.onnx.export`` to standard ONNX
operators (``gelu_ext.torch.onnx``) and scripts with ``torch.jit.script``.

The ops themselves are ``torch.ops.gelu_ext.<name>`` (``OPS``): CPU tensors of
float16, bfloat16, float32 and float64, any strides, with fake kernels
(``torch.compile(fullgraph=True)``, ``torch.export``) and autograd whose
backward is itself an op; every ``torch.func`` transform (``grad``,
``jacrev``, ``jacfwd``, ``hessian``, ``jvp``, ``vmap``, per-sample gradients)
and forward-mode AD give their derivatives.  Their bits are the NumPy ufuncs' bits.

Kernels: ``kernels()`` says which CPU kernels the ops run.  ``"cpp"``
where the C++ kernels were built at install next to this torch version
(``pip install --no-build-isolation '.[torch]'`` with torch installed):
outputs from torch's allocator (the last large one freed kept for the
next of its size, so a model's layers do not fault fresh pages:
``empty_cache()`` frees it), work split over torch's own intra-op
threads, no Python per call.  ``"python"`` otherwise: the same ops and
bits, on ``torch.get_num_threads()`` threads of gelu_ext's own pool (one
warning at import says so where this machine could build the C++ ones, and
how).
``GELU_EXT_TORCH_CPP=0`` forces the Python kernels, ``=1`` the C++ ones
(built on first use where not installed).  Either way
``torch.set_num_threads`` is the one budget inside a model;
``gelu_ext.set_num_threads`` governs NumPy callers only.

>>> import torch
>>> from gelu_ext.torch import functional as GF
>>> x = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
>>> y = GF.gelu(x)
>>> y.sum().backward()
>>> x.grad
tensor([-0.0833,  0.5000,  1.0852], dtype=torch.float64)
"""
try:
    import torch as _torch  # noqa: F401
except ImportError as e:      # pragma: no cover - exercised where torch is absent
    raise ImportError("gelu_ext.torch needs PyTorch: pip install 'gelu_ext[torch]' "
                      "(or torch itself)") from e

from ._ops import OPS
from . import functional
from . import nn
from .nn import *  # noqa: F401,F403 -- every module class, as nn.__all__ lists them
from ._patch import patch_model, unpatch_model, PatchReport
from ._mode import functional_mode
from . import onnx as _onnx

_onnx.register()        # torch.onnx.export of our ops without extra arguments: see gelu_ext.torch.onnx

from . import _cpp
from ._cpp import kernels, empty_cache

_cpp._select()          # the C++ CPU kernels where built for this torch: see _cpp

__all__ = ["OPS", "kernels", "empty_cache", "functional"]
__all__ += nn.__all__
__all__ += ["patch_model", "unpatch_model", "PatchReport", "functional_mode"]
