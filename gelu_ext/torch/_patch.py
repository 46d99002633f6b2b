"""``patch_model``: put gelu_ext's modules into a loaded model, in place.

Design:

* Submodule objects are replaced (``setattr`` on the parent), never
  ``forward`` rebound on an instance: a rebound ``forward`` does not pickle
  and transformers' kernel hub undoes it on ``model.train()``.  The modules
  put in hold no parameters or buffers (``GatedMLP`` holds the original
  block's own Linear modules under their own names), so ``state_dict`` keys
  and tensors are unchanged.
* Which module becomes which: ``torch.nn.GELU``/``ReLU``/``SiLU`` by class,
  and every class of the installed transformers' ``ACT2CLS`` whose
  ``hidden_act`` name ``gelu_ext.activation`` accepts (the table of
  ``gelu_ext._activation``: one table for NumPy and PyTorch).  Classes are
  matched exactly (a subclass may compute something else).  Activation-like
  modules not mapped (``gelu_10``'s clipping, ``tanh`` in BERT's pooler, ...)
  are reported with the reason, and left alone.
* Each module put in keeps the one it replaced in its ``__dict__`` (not as a
  submodule, so no ``state_dict`` key and no traversal): ``unpatch_model``
  puts those objects back, so the original model computes exactly what it did.
"""
from collections import namedtuple
import sys

import torch

from .._activation import _HF_NAMES
from . import nn as gnn

Replaced = namedtuple("Replaced", "name old new")
Skipped = namedtuple("Skipped", "name module reason")

_ORIGINAL = "_gelu_ext_original"

# public gelu_ext function (of _HF_NAMES) -> a factory of our module from the old one
_FACTORY = {
    "fast_gelu": lambda old: gnn.GELU("none"),
    "fast_gelu_tanh": lambda old: gnn.GELU("tanh"),
    "quick_gelu": lambda old: gnn.QuickGELU(),
    "relu": lambda old: gnn.ReLU(getattr(old, "inplace", False)),
    "silu": lambda old: gnn.SiLU(getattr(old, "inplace", False)),
}

# hidden_act names whose class computes something gelu_ext does not, and why
_WHY_NOT = {
    "gelu_10": "clips GELU's output to [-10, 10] (ClippedGELUActivation): a different function",
}


class PatchReport:
    """What ``patch_model`` did: ``replaced`` (``Replaced(name, old, new)``
    per submodule put in) and ``skipped`` (``Skipped(name, module, reason)``
    per activation-like submodule left as it was)."""

    def __init__(self, replaced, skipped):
        self.replaced = replaced
        self.skipped = skipped

    def __len__(self):
        return len(self.replaced)

    def __repr__(self):
        lines = [f"PatchReport: {len(self.replaced)} replaced, {len(self.skipped)} skipped"]
        lines += [f"  {r.name}: {type(r.old).__name__} -> {r.new!r}" for r in self.replaced]
        lines += [f"  {s.name}: {type(s.module).__name__} kept ({s.reason})" for s in self.skipped]
        return "\n".join(lines)


def _transformers_classes():
    """(class -> public gelu_ext name, class -> why not) from the installed
    transformers' ACT2CLS, if transformers is imported (a transformers model
    cannot exist before it is; it is never imported here for nothing)."""
    if "transformers" not in sys.modules:
        return {}, {}
    try:
        from transformers.activations import ACT2CLS
    except ImportError:
        return {}, {}
    mapped, why_not = {}, {}
    for hf_name, entry in ACT2CLS.items():
        cls = entry[0] if isinstance(entry, tuple) else entry
        public = _HF_NAMES.get(hf_name)
        if public is None:
            why_not.setdefault(cls, f"hidden_act {hf_name!r}: " + _WHY_NOT.get(
                hf_name, "not a function gelu_ext computes"))
        elif mapped.setdefault(cls, public) != public:
            # one class under two names that gelu_ext computes differently
            why_not[cls] = f"{cls.__name__} computes {mapped.pop(cls)!r} or {public!r} by its arguments"
    for cls in mapped:
        why_not.pop(cls, None)
    return mapped, why_not


def _torch_factory(module):
    t = type(module)
    if t is torch.nn.GELU:
        return lambda old: gnn.GELU(old.approximate)
    if t is torch.nn.ReLU:
        return _FACTORY["relu"]
    if t is torch.nn.SiLU:
        return _FACTORY["silu"]
    return None


def _activation_like(module):
    mod = type(module).__module__
    return ((mod.startswith("torch.nn.modules.activation") or mod == "transformers.activations")
            and not any(True for _ in module.children())
            and not any(True for _ in module.parameters(recurse=False)))


def _gate_kind(act, mapped):
    """('silu'|'gelu', approximate) for a gated MLP's activation, or None."""
    t = type(act)
    public = mapped.get(t)
    if t is torch.nn.SiLU or public == "silu":
        return "silu", "none"
    if t is torch.nn.GELU:
        return "gelu", act.approximate
    if public in ("fast_gelu", "fast_gelu_tanh"):
        return "gelu", "none" if public == "fast_gelu" else "tanh"
    return None


def _gated_mlp(module, mapped):
    """A GatedMLP for a LLaMA-style block (Linear gate_proj, up_proj,
    down_proj and an act_fn gelu_ext computes), else None."""
    parts = [getattr(module, n, None) for n in ("gate_proj", "up_proj", "down_proj")]
    act = getattr(module, "act_fn", None)
    if not all(isinstance(p, torch.nn.Linear) for p in parts) or not isinstance(act, torch.nn.Module):
        return None
    kind = _gate_kind(act, mapped)
    if kind is None:
        return None
    return gnn.GatedMLP(*parts, gate=kind[0], approximate=kind[1])


def _children(model):
    """(qualified name, parent, attribute) of every submodule, parents first,
    each (parent, attribute) once."""
    out = []
    for pname, parent in model.named_modules(remove_duplicate=True):
        # _modules, not named_children(): that skips a module seen twice
        for cname, child in parent._modules.items():
            if child is None:
                continue
            out.append((f"{pname}.{cname}" if pname else cname, parent, cname))
    return out


def patch_model(model, *, gated_mlp=False, replace_with=None):
    """Swap, in place, ``model``'s activation submodules for gelu_ext's.

    Parameters
    ----------
    model : torch.nn.Module
    gated_mlp : bool, optional
        Also replace each LLaMA-style gated MLP (Linear ``gate_proj``,
        ``up_proj``, ``down_proj`` and a SiLU or GELU ``act_fn``, computing
        ``down_proj(act_fn(gate_proj(x)) * up_proj(x))``) by a ``GatedMLP``
        that fuses the activation and the product (``swiglu``/``geglu``).
    replace_with : str, optional
        A Hugging Face activation name (``"relu"``, ``"gelu"``, ...): every
        activation found is replaced by gelu_ext's module for *that* name
        instead of its own -- the article's experiment of swapping GELU for
        ReLU in a pretrained model.

    Returns
    -------
    PatchReport
        ``.replaced``: ``(name, old module, new module)`` for each swap;
        ``.skipped``: ``(name, module, reason)`` for activation-like modules
        left alone.

    Examples
    --------
    >>> import torch
    >>> from gelu_ext.torch import patch_model, unpatch_model
    >>> m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Tanh())
    >>> report = patch_model(m)
    >>> [(r.name, type(r.new).__name__) for r in report.replaced]
    [('1', 'GELU')]
    >>> [(s.name, type(s.module).__name__) for s in report.skipped]
    [('2', 'Tanh')]
    >>> unpatch_model(m)
    ['1']
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if replace_with is not None and replace_with not in _HF_NAMES:
        raise ValueError(f"replace_with must be None or one of {', '.join(map(repr, _HF_NAMES))}, "
                         f"got {replace_with!r}")
    mapped, why_not = _transformers_classes()
    replaced, skipped, done = [], [], {}

    def swap(name, parent, attr, old, new):
        object.__setattr__(new, _ORIGINAL, old)
        new.train(old.training)
        setattr(parent, attr, new)
        done[id(old)] = new
        replaced.append(Replaced(name, old, new))

    if gated_mlp:
        for name, parent, attr in _children(model):
            old = getattr(parent, attr)
            if id(old) in done:
                setattr(parent, attr, done[id(old)])
                continue
            new = _gated_mlp(old, mapped)
            if new is not None:
                swap(name, parent, attr, old, new)
    for name, parent, attr in _children(model):
        old = getattr(parent, attr)
        if id(old) in done:                 # one module object in two places
            setattr(parent, attr, done[id(old)])
            continue
        factory = _torch_factory(old)
        if factory is None and type(old) in mapped:
            factory = _FACTORY[mapped[type(old)]]
        if factory is not None:
            if replace_with is not None:
                factory = _FACTORY[_HF_NAMES[replace_with]]
            swap(name, parent, attr, old, factory(old))
        elif type(old) in why_not:
            skipped.append(Skipped(name, old, why_not[type(old)]))
        elif _activation_like(old) and _ORIGINAL not in vars(old):
            skipped.append(Skipped(name, old, "not a function gelu_ext computes"))
    return PatchReport(replaced, skipped)


def unpatch_model(model):
    """Put back every module ``patch_model`` replaced in ``model``; returns
    their names.  The original objects come back, so the model computes
    exactly what it did before (bit for bit)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    restored = []
    for name, parent, attr in _children(model):
        new = getattr(parent, attr)
        old = vars(new).get(_ORIGINAL)
        if old is not None:
            old.train(new.training)
            setattr(parent, attr, old)
            restored.append(name)
    return restored
