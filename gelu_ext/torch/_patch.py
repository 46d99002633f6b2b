"""``patch_model``: put gelu_ext's modules into a loaded model, in place.

Design:

* Submodule objects are replaced (``setattr`` on the parent), never
  ``forward`` rebound on an instance: a rebound ``forward`` does not pickle
  and transformers' kernel hub undoes it on ``model.train()``.  The modules
  put in hold no parameters or buffers (``GatedMLP`` and the other fused
  blocks hold the original block's own submodules under their own names), so
  ``state_dict`` keys and tensors are unchanged.
* Which activation becomes which: ``torch.nn.GELU``/``ReLU``/``SiLU`` by
  class, and every class of the installed transformers' ``ACT2CLS`` whose
  ``hidden_act`` name ``gelu_ext.activation`` accepts (the table of
  ``gelu_ext._activation``: one table for NumPy and PyTorch).  Classes are
  matched exactly (a subclass may compute something else).  Activation-like
  modules not mapped (``gelu_10``'s clipping, ``tanh`` in BERT's pooler, ...)
  are reported with the reason, and left alone.
* Which gated MLP is fused (``gated_mlp=True``): one whose ``forward`` is one
  of the forms of ``_GATED_FORMS``, recognised by its code (bytecode, names,
  constants), not by its class name or its attributes: transformers generates
  its MLPs from a few templates (in 5.x, 139 classes share LlamaMLP's
  forward), and a block with ``gate_proj``/``up_proj`` but another forward
  may compute anything.  Blocks that look gated but are not fused are
  reported in ``not_fused`` with the reason; their activation submodule, if
  any, is still replaced alone.
* A module that has hooks (or a ``forward`` set on the instance) is not
  replaced, and reported: the hooks would not run on ours.
* Each module put in keeps the one it replaced in its ``__dict__`` (not as a
  submodule, so no ``state_dict`` key and no traversal): ``unpatch_model``
  puts those objects back, with the submodules ours holds *now* (a LoRA layer
  PEFT put in, a merged Linear, any child swapped since), so what was done to
  the patched model stays done.  What the original cannot take (hooks,
  parameters or buffers added to our module, a child removed) makes
  ``unpatch_model`` refuse, naming it, before it changes anything.
* What runs is only known by running: ``PatchReport.check`` (or
  ``patch_model(..., example_inputs=)``) runs one forward and reports
  replaced modules never called and torch activations still computed, by the
  module running them (``functional_mode`` in ``_mode.py`` reaches those).
  Until then the report's summary says its coverage is not verified: a
  module put in may never be called (Mamba's mixer builds its activation on
  each call), so "replaced" is not "covered".
* Activations a ``forward`` calls as functions are listed (``functional``),
  not reached: covering them would mean rebinding that ``forward``.  They
  are found in the code, as the gated forms are (see ``_functional_calls``),
  and ``functional_mode`` runs them on gelu_ext's ops.
"""
from collections import Counter, namedtuple
import builtins
import dis
import inspect
import sys
import types
import warnings

import torch

from .. import _spec
from .._activation import _HF_NAMES
from . import nn as gnn
from ._mode import _ROUTES, _counting

Replaced = namedtuple("Replaced", "name old new")
Skipped = namedtuple("Skipped", "name module reason")
Functional = namedtuple("Functional", "name module calls")

# in the __dict__ of a module put in: the module it replaced, and the names of
# the original's children it took (held under the same names)
_ORIGINAL = "_gelu_ext_original"
_TAKEN = "_gelu_ext_taken"

def _factory(act, copy):
    """A factory of ``act``'s module (an ``Activation`` of the op spec) from
    the module it replaces: its ``module_args``, with the replaced module's
    own value of each argument of ``copy`` it has (``inplace``, and
    ``torch.nn.GELU``'s ``approximate`` when replaced by class)."""
    cls, args = getattr(gnn, act.module), dict(act.module_args)

    def factory(old):
        return cls(**{**args, **{k: getattr(old, k) for k in copy if hasattr(old, k)}})

    return factory


# public gelu_ext function (of _HF_NAMES) -> a factory of our module from the old one
_FACTORY = {a.public: _factory(a, a.copy) for a in _spec.ACTIVATIONS}
# torch.nn class -> a factory of the module that replaces it by class
_TORCH_CLASSES = {getattr(torch.nn, a.torch_class): _factory(a, a.copy + a.class_copy)
                  for a in _spec.ACTIVATIONS if a.torch_class}
# public gelu_ext function -> (gate, approximate) of its fused gated op
_GATE = {a.public: a.gate for a in _spec.ACTIVATIONS if a.gate}
# "swiglu and geglu take GELU and SiLU": the fused gated ops, the modules they fuse
_FUSED = (" and ".join(t.functional for t in _spec.TORCH_OPS if t.kind == "gate" and t.functional)
          + " take " + " and ".join(dict.fromkeys(a.module for a in _spec.ACTIVATIONS if a.gate)))

# hidden_act names whose class computes something gelu_ext does not, and why
_WHY_NOT = {
    "gelu_10": "clips GELU's output to [-10, 10] (ClippedGELUActivation): a different function",
}


class PatchReport:
    """What ``patch_model`` did: ``replaced`` (``Replaced(name, old, new)``
    per submodule put in), ``skipped`` (``Skipped(name, module, reason)`` per
    activation-like submodule left as it was), ``not_fused`` (with
    ``gated_mlp=True``: ``Skipped`` per block that looks like a gated MLP but
    was not fused, with the reason) and ``functional`` (``Functional(name,
    module, calls)`` per module whose ``forward`` calls an activation as a
    function, which no module swap reaches: ``calls`` says which and where).

    ``coverage`` is what one forward showed (``check``'s ``Coverage``), or
    None: until a forward has run, a module put in is not known to run (a
    model may build its activation on each call instead), and the summary
    says so."""

    def __init__(self, replaced, skipped, not_fused=(), functional=()):
        self.replaced = replaced
        self.skipped = skipped
        self.not_fused = list(not_fused)
        self.functional = list(functional)
        self.coverage = None

    def __len__(self):
        return len(self.replaced)

    def _summary(self):
        n = len(self.replaced)
        head = f"replaced {n} module{'' if n == 1 else 's'}"
        cov = self.coverage
        if cov is None:
            head += " (not verified: pass example_inputs= or call report.check(model, ...))"
        else:
            head += (f", {n - len(cov.never_called)} called by the checked forward, "
                     f"{len(cov.never_called)} never called; torch activations still run: "
                     + (", ".join(f"{op} x{k}" for op, k in sorted(cov.torch_activations.items()))
                        or "none"))
        k = len(self.functional)
        return (f"PatchReport: {head}; {len(self.skipped)} skipped, {len(self.not_fused)} gated "
                f"MLPs not fused, {k} module{'' if k == 1 else 's'} whose forward can call "
                f"activations as functions")

    def __repr__(self):
        never = set(self.coverage.never_called) if self.coverage is not None else set()
        lines = [self._summary()]
        lines += [f"  {r.name}: {type(r.old).__name__} -> {r.new!r}"
                  + (" (never called)" if r.name in never else "") for r in self.replaced]
        lines += [f"  {s.name}: {type(s.module).__name__} kept ({s.reason})" for s in self.skipped]
        lines += [f"  {s.name}: {type(s.module).__name__} not fused ({s.reason})"
                  for s in self.not_fused]
        lines += [f"  {f.name or '(the model)'}: {type(f.module).__name__} can call "
                  f"{'; '.join(f.calls)} (torch's unless under functional_mode())"
                  for f in self.functional]
        if self.coverage is not None:
            lines += [f"  torch {', '.join(f'{op} x{k}' for op, k in sorted(ops.items()))} "
                      f"ran in {where or '(the model)'}"
                      for where, ops in self.coverage.torch_activations_in.items()]
        return "\n".join(lines)

    def check(self, model, *args, **kwargs):
        """Run ``model(*args, **kwargs)`` once under ``torch.no_grad()`` and
        say what ran: which modules put in were never called, and which of
        torch's activation ops still ran, and in which module (a ``forward``
        calling ``F.silu`` itself, or an activation module built on the fly,
        as Mamba's mixer does); ``patch_model`` cannot see either without
        running the model.  The result is kept as ``coverage``, which the
        summary then states.

        Returns
        -------
        Coverage
            ``never_called``: names (as in ``replaced``) of modules put in
            that the forward did not call; ``torch_activations``: ``{aten op
            name: calls}`` for torch's gelu, silu, relu and sigmoid (the last
            is how quick GELU and hand-written SiLU are computed);
            ``gelu_ext_ops``: ``{op name: calls}`` for ``torch.ops.gelu_ext``;
            ``torch_activations_in``: ``{module name: {aten op name: calls}}``,
            the innermost module of the model running when each of torch's
            ran (``""``: the model's own ``forward``).  Where
            ``torch_activations`` is not empty, ``with
            gelu_ext.torch.functional_mode():`` routes the functional calls
            to gelu_ext.
        """
        calls, stack, handles = Counter(), [], []

        def enter(module, _):
            calls[id(module)] += 1
            stack.append(names[id(module)])

        def leave(*_):
            stack.pop()

        names = {id(m): name for name, m in model.named_modules()}
        try:
            for m in model.modules():
                if isinstance(m, torch.jit.ScriptModule):
                    continue            # takes no hooks: what it runs counts for its caller
                handles.append(m.register_forward_pre_hook(enter))
                # always_call: a forward that raises still leaves the stack
                handles.append(m.register_forward_hook(leave, always_call=True))
            counter = _counting(where=lambda: stack[-1] if stack else "")
            with torch.no_grad(), counter:
                model(*args, **kwargs)
        finally:
            for h in handles:
                h.remove()
        self.coverage = Coverage(
            [r.name for r in self.replaced if calls[id(r.new)] == 0],
            dict(counter.torch_activations), dict(counter.gelu_ext_ops),
            {where: dict(ops) for where, ops in counter.torch_activations_in.items()})
        return self.coverage


class Coverage(namedtuple("Coverage",
                          "never_called torch_activations gelu_ext_ops torch_activations_in")):
    """What ``PatchReport.check`` saw run (see there)."""

    def __repr__(self):
        return (f"Coverage: never called {self.never_called or 'none'}; "
                f"torch activations {self.torch_activations or 'none'}"
                + (f" (in {self.torch_activations_in})" if self.torch_activations_in else "")
                + f"; gelu_ext ops {self.gelu_ext_ops or 'none'}")


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
    return _TORCH_CLASSES.get(type(module))


def _activation_like(module):
    mod = type(module).__module__
    return ((mod.startswith("torch.nn.modules.activation") or mod == "transformers.activations")
            and not any(True for _ in module.children())
            and not any(True for _ in module.parameters(recurse=False)))


def _gate_kind(act, mapped, replace_with=None):
    """('silu'|'gelu', approximate) for a gated MLP's activation (or for
    ``replace_with``'s, which takes the place of every activation
    ``patch_model`` replaces), or None."""
    t = type(act)
    public = mapped.get(t)
    if replace_with is not None and (public is not None or _torch_factory(act) is not None):
        t, public = None, _HF_NAMES[replace_with]
    if t is torch.nn.GELU:
        return "gelu", act.approximate
    if public is None and t is not None:
        public = next((a.public for a in _spec.ACTIVATIONS
                       if a.torch_class and getattr(torch.nn, a.torch_class) is t), None)
    return _GATE.get(public)


# The gated MLP forms gelu_ext fuses, each a fingerprint: a class whose
# forward compiles to the same code (bytecode, names, constants; line numbers
# and comments do not count) computes exactly that, and the row's module
# computes it with the activation and the product fused (``swiglu``/``geglu``
# rerun the unfused kernel, and IEEE products commute, so the fused block
# gives the bits of our unfused composition).  The forms are fixed here, not
# read from the installed transformers: if transformers changes a forward,
# its blocks stop matching (reported in ``not_fused``) instead of being fused
# as something they no longer are.

def _llama_form(self, x):
    down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
    return down_proj


def _llama_form_return(self, x):
    return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


def _phi3_form(self, hidden_states):
    up_states = self.gate_up_proj(hidden_states)
    gate, up_states = up_states.chunk(2, dim=-1)
    up_states = up_states * self.activation_fn(gate)
    return self.down_proj(up_states)


def _t5_form(self, hidden_states):
    hidden_gelu = self.act(self.wi_0(hidden_states))
    hidden_linear = self.wi_1(hidden_states)
    hidden_states = hidden_gelu * hidden_linear
    hidden_states = self.dropout(hidden_states)
    if (
        isinstance(self.wo.weight, torch.Tensor)
        and hidden_states.dtype != self.wo.weight.dtype
        and self.wo.weight.dtype != torch.int8
    ):
        hidden_states = hidden_states.to(self.wo.weight.dtype)
    hidden_states = self.wo(hidden_states)
    return hidden_states


def _t5_form_no_cast(self, hidden_states):
    hidden_gelu = self.act(self.wi_0(hidden_states))
    hidden_linear = self.wi_1(hidden_states)
    hidden_states = hidden_gelu * hidden_linear
    hidden_states = self.dropout(hidden_states)
    hidden_states = self.wo(hidden_states)
    return hidden_states


def _modernbert_form(self, hidden_states):
    input, gate = self.Wi(hidden_states).chunk(2, dim=-1)
    return self.Wo(self.drop(self.act(input) * gate))


GatedForm = namedtuple("GatedForm", "name forward act children cls kwargs")

_LLAMA_CHILDREN = ("gate_proj", "up_proj", "down_proj")
_T5_CHILDREN = ("wi_0", "wi_1", "wo", "dropout")

_GATED_FORMS = (
    GatedForm("LLaMA's", _llama_form, "act_fn", _LLAMA_CHILDREN, gnn.GatedMLP, {}),
    GatedForm("LLaMA's", _llama_form_return, "act_fn", _LLAMA_CHILDREN, gnn.GatedMLP, {}),
    GatedForm("Phi-3's", _phi3_form, "activation_fn", ("gate_up_proj", "down_proj"),
              gnn.PackedGatedMLP, {}),
    GatedForm("T5's", _t5_form, "act", _T5_CHILDREN, gnn.GatedActDense, {"cast_to_wo": True}),
    GatedForm("T5's", _t5_form_no_cast, "act", _T5_CHILDREN, gnn.GatedActDense,
              {"cast_to_wo": False}),
    GatedForm("ModernBERT's", _modernbert_form, "act", ("Wi", "drop", "Wo"), gnn.PackedGatedDense,
              {}),
)

# children by which a block looks like a gated MLP, for the not_fused report
_GATED_LOOKS = (("gate_proj", "up_proj"), ("gate_up_proj",), ("wi_0", "wi_1"), ("w1", "w3"),
                ("Wi", "Wo"))


def _code(f):
    c = f.__code__
    return c.co_code, c.co_names, c.co_consts, c.co_varnames, c.co_argcount


_FORM_OF_CODE = {_code(f.forward): f for f in _GATED_FORMS}

_HOOKS = {"_forward_hooks": "forward hook", "_forward_pre_hooks": "forward pre-hook",
          "_backward_hooks": "backward hook", "_backward_pre_hooks": "backward pre-hook",
          "_state_dict_hooks": "state_dict hook", "_state_dict_pre_hooks": "state_dict pre-hook",
          "_load_state_dict_pre_hooks": "load_state_dict pre-hook",
          "_load_state_dict_post_hooks": "load_state_dict post-hook"}


def _hooks(module):
    """What is set on ``module`` itself that a module put in its place would
    not run: its hooks, and a ``forward`` set on the instance."""
    found = [f"{len(vars(module)[k])} {what}(s)" for k, what in _HOOKS.items() if vars(module).get(k)]
    if "forward" in vars(module):
        found.append("a forward set on the instance")
    return found


def _droppable(module, keep=()):
    """Why ``module`` cannot leave the model's tree (None if it can) when a
    module holding its children ``keep`` takes its place: hooks that would
    stop running, or state that would leave ``state_dict``."""
    hidden = [c for n, c in module._modules.items() if c is not None and n not in keep]
    for m in [module, *(d for c in hidden for d in c.modules())]:
        found = _hooks(m)
        if found:
            return f"{type(m).__name__} has {', '.join(found)}, which would not run on gelu_ext's module"
        if m._parameters or m._buffers:
            return (f"{type(m).__name__} holds parameters or buffers "
                    f"({', '.join([*m._parameters, *m._buffers])}) gelu_ext's module would not hold")
    return None


def _how_it_differs(module):
    """How ``module``'s forward differs from the closest form of
    ``_GATED_FORMS`` whose submodules it has, as a phrase (or ""): so a
    block of another transformers version says what to look at."""
    fwd = getattr(type(module), "forward", None)
    if not hasattr(fwd, "__code__"):
        return ""
    code, best = fwd.__code__, None
    for form in _GATED_FORMS:
        if any(module._modules.get(n) is None for n in (*form.children, form.act)):
            continue
        ref = form.forward.__code__
        args, ref_args = code.co_varnames[:code.co_argcount], ref.co_varnames[:ref.co_argcount]
        extra = [n for n in dict.fromkeys(code.co_names) if n not in ref.co_names]
        lacks = [n for n in dict.fromkeys(ref.co_names) if n not in code.co_names]
        diffs = []
        if args != ref_args:
            diffs.append(f"arguments ({', '.join(args)}), not ({', '.join(ref_args)})")
        if extra:
            diffs.append(f"also reads {', '.join(extra[:6])}{', ...' if len(extra) > 6 else ''}")
        if lacks:
            diffs.append(f"does not read {', '.join(lacks)}")
        if not diffs:
            diffs.append("the same names, other operations")
        score = (args != ref_args) + len(extra) + len(lacks)
        if best is None or score < best[0]:
            best = (score, form.name, diffs)
    return f"; closest is {best[1]}, from which it differs: {'; '.join(best[2])}" if best else ""


def _gated_mlp(module, mapped, replace_with=None):
    """(fused module, names of the children it took) for a gated MLP
    ``_GATED_FORMS`` knows, (None, reason) for one that only looks gated,
    (None, None) for anything else."""
    if type(module).__module__.startswith(gnn.__name__):
        return None, None                               # ours already
    form = _FORM_OF_CODE.get(_code(type(module).forward)) if hasattr(
        type(module).forward, "__code__") else None
    if form is None:
        if any(all(module._modules.get(n) is not None for n in names) for names in _GATED_LOOKS):
            if not any(_activation_like(c) or type(c) in mapped for c in module.children()):
                return None, ("no activation submodule: its forward calls the activation as a "
                              "function (gelu_ext.torch.functional_mode() reaches it)")
            return None, (f"its forward is none of the gated forms gelu_ext fuses "
                          f"({', '.join(dict.fromkeys(f.name for f in _GATED_FORMS))}), so its "
                          f"activation is replaced alone{_how_it_differs(module)}")
        return None, None
    missing = [n for n in (*form.children, form.act) if module._modules.get(n) is None]
    if missing:
        return None, (f"its forward is {form.name} gated MLP but {', '.join(missing)} "
                      f"is not a submodule (a function is reached by functional_mode())")
    children = [module._modules[n] for n in form.children]
    act = module._modules[form.act]
    kind = _gate_kind(act, mapped, replace_with)
    if kind is None and replace_with is not None and (type(act) in mapped or _torch_factory(act)):
        return None, (f"replace_with={replace_with!r} has no fused gated op ({_FUSED}): "
                      f"the activation is replaced alone")
    if kind is None:
        return None, (f"its activation {type(act).__name__} has no fused gated op "
                      f"({_FUSED}): it is replaced alone "
                      f"if gelu_ext computes it")
    why = _droppable(module, keep=form.children)
    if why is not None:
        return None, why
    return form.cls(*children, gate=kind[0], approximate=kind[1], **form.kwargs), form.children


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


# Activations a forward calls as functions (``F.silu(self.w1(x))``,
# RoBERTa's ``gelu(x)``, Mamba's ``ACT2FN[self.activation](out)``): no module
# swap reaches them, so they are listed by the module whose forward makes
# them.  Found in the code, as ``_GATED_FORMS`` are: each global (or closure
# variable) the forward loads, with the attributes read from it, is resolved
# to its object, and a function of the forward's own source module it calls
# (Mamba's ``mamba_selective_scan``) is read in turn.  What runs only by a
# path the code does not name (an op looked up by string) is for ``check``.

# torch's activation functions, as functional_mode routes them, by their
# usual spelling (hardtanh is left out: only hardtanh(x, 0, 6) is ReLU6)
def _spelling(f):
    for prefix, namespace in (("F", torch.nn.functional), ("torch", torch)):
        if getattr(namespace, f.__name__, None) is f:
            return f"{prefix}.{f.__name__}"
    return f"Tensor.{f.__name__}"


_ACT_FUNCTIONS = {f: _spelling(f) for f in _ROUTES if f is not torch.nn.functional.hardtanh}
_LOADS = frozenset(["LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME"])
_ATTRS = frozenset(["LOAD_ATTR", "LOAD_METHOD"])


def _codes(code):
    """``code`` and the code objects nested in it (comprehensions, inner
    functions), which read the same globals."""
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _codes(c)


def _closure(fn):
    """``{name: value}`` of ``fn``'s closure variables."""
    out = {}
    for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[var] = cell.cell_contents
        except ValueError:          # a cell not yet filled
            pass
    return out


def _loaded(fn):
    """(dotted spelling, object) of each global or closure variable ``fn``
    loads, with the attributes read from it, in order; (spelling, None)
    where an attribute cannot be read."""
    code = fn.__code__
    scope = dict(vars(builtins))
    scope.update(getattr(fn, "__globals__", {}))
    scope.update(_closure(fn))
    for c in _codes(code):
        chain = None
        for ins in [*dis.get_instructions(c), None]:
            if chain is not None and ins is not None and ins.opname in _ATTRS:
                obj = chain[1]
                try:
                    obj = None if obj is None else inspect.getattr_static(obj, ins.argval)
                except AttributeError:
                    obj = None
                chain = (f"{chain[0]}.{ins.argval}", obj)
                continue
            if chain is not None:
                yield chain
                chain = None
            if ins is not None and ins.opname in _LOADS and ins.argval in scope:
                chain = (ins.argval, scope[ins.argval])


def _activation_class(obj, mapped):
    return isinstance(obj, type) and (obj in _TORCH_CLASSES or obj in mapped)


def _functional_calls(fn, home, mapped, seen, place="forward"):
    """(what, where) for each activation ``fn`` calls as a function, and the
    functions of module ``home`` it calls do: ``where`` names the function
    (``place`` for ``fn`` itself)."""
    fn = inspect.unwrap(fn)
    # by function, not code: one code runs under many closures (a kernel
    # hub wrapper per function)
    if not isinstance(fn, types.FunctionType) or fn in seen:
        return []
    seen.add(fn)
    # a decorator's wrapper holds what it wraps in its closure, whatever
    # module that comes from (transformers stacks several on a forward)
    wrapped = [id(v) for v in _closure(fn).values() if isinstance(v, types.FunctionType)]
    found = []
    for spelling, obj in _loaded(fn):
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if type(obj).__name__ == "ClassInstantier" and type(obj).__module__ == "transformers.activations":
            found.append((f"{spelling}[...] (a module built per call)", place))
        elif _activation_class(obj, mapped):
            found.append((f"{spelling}(...) (a module built per call)", place))
        elif isinstance(obj, torch.nn.Module):
            if _activation_like(obj) or type(obj) in mapped or _torch_factory(obj):
                found.append((f"{spelling} (a {type(obj).__name__} outside the model's modules)",
                              place))
            else:                   # a function wrapped as a module (transformers' kernel hub)
                found += _functional_calls(type(obj).forward, home, mapped, seen, spelling)
        elif _is_act_function(obj):
            found.append((spelling, place))
        elif isinstance(obj, types.FunctionType) and id(obj) in wrapped:
            found += _functional_calls(obj, home, mapped, seen, place)
        elif isinstance(obj, types.FunctionType) and inspect.unwrap(obj).__module__ == home:
            found += _functional_calls(obj, home, mapped, seen, inspect.unwrap(obj).__name__)
    return found


def _is_act_function(obj):
    try:
        return obj in _ACT_FUNCTIONS
    except TypeError:               # unhashable
        return False


def _self_functions(fn, module):
    """(``self.<name>``, "forward") for the functions among
    ``_ACT_FUNCTIONS`` that ``fn`` (a method) reads from ``module``'s own
    attributes (``self.act_fn = F.silu`` set in ``__init__``)."""
    code, own = fn.__code__, vars(module)
    if not code.co_argcount:
        return []
    found, prev = [], None
    for ins in dis.get_instructions(code):
        if (prev is not None and prev.opname == "LOAD_FAST" and prev.argval == code.co_varnames[0]
                and ins.opname in _ATTRS and _is_act_function(own.get(ins.argval))):
            found.append((f"self.{ins.argval} ({_ACT_FUNCTIONS[own[ins.argval]]})", "forward"))
        prev = ins
    return found


def _functional(model, mapped):
    """``Functional`` per module of ``model`` whose class's ``forward`` calls
    an activation as a function; torch's and gelu_ext's modules, and
    activation modules, are left out (their ``forward`` *is* the
    activation)."""
    out, by_class = [], {}
    for name, module in model.named_modules():
        cls = type(module)
        fwd = getattr(cls, "forward", None)
        if (cls.__module__.startswith(("torch.", gnn.__name__)) or _activation_like(module)
                or cls in mapped or not isinstance(fwd, types.FunctionType)):
            continue
        if cls not in by_class:
            by_class[cls] = _functional_calls(fwd, cls.__module__, mapped, set())
        places = {}
        for what, where in by_class[cls] + _self_functions(fwd, module):
            places.setdefault(what, {})[where] = None
        if places:
            out.append(Functional(name, module, tuple(f"{what} in {', '.join(where)}"
                                                      for what, where in places.items())))
    return out
def patch_model(model, *, gated_mlp=False, replace_with=None, example_inputs=None):
    """Swap, in place, ``model``'s activation submodules for gelu_ext's.

    Parameters
    ----------
    model : torch.nn.Module
    gated_mlp : bool, optional
        Also replace each gated MLP block of a form gelu_ext fuses by a module
        that fuses the activation and the product (``swiglu``/``geglu``):
        LLaMA's ``down_proj(act_fn(gate_proj(x)) * up_proj(x))`` by
        ``GatedMLP``, Phi-3's packed ``gate_up_proj`` by ``PackedGatedMLP``,
        T5's gated-gelu ``wo(dropout(act(wi_0(x)) * wi_1(x)))`` by
        ``GatedActDense``, ModernBERT's packed ``Wo(drop(act(input) *
        gate))`` by ``PackedGatedDense``.  A block is recognised by its
        ``forward``'s code, so the many transformers classes that copy these
        forms are fused too; blocks that look gated but are not fused are in
        ``not_fused``, with how they differ from the closest form.
    replace_with : str, optional
        A Hugging Face activation name (``"relu"``, ``"gelu"``, ...): every
        activation found is replaced by gelu_ext's module for *that* name
        instead of its own -- the article's experiment of swapping GELU for
        ReLU in a pretrained model.
    example_inputs : tuple, dict or Tensor, optional
        Inputs of one forward (positional arguments, keyword arguments, or
        the one input), run once after patching by ``report.check``: the
        report then says which modules put in ran, which never did, and
        which of torch's activations still run, where.  Without them the
        report's summary says its coverage is not verified.

    Returns
    -------
    PatchReport
        ``.replaced``: ``(name, old module, new module)`` for each swap;
        ``.skipped``: ``(name, module, reason)`` for activation-like modules
        left alone; ``.not_fused``: the same for gated MLPs not fused;
        ``.functional``: ``(name, module, calls)`` for modules whose
        ``forward`` calls an activation as a function (found in its code;
        ``functional_mode`` routes ``F.gelu``/``F.silu``/``F.relu`` calls);
        ``.coverage``: what the forward of ``example_inputs`` ran, or None;
        ``.check(model, *inputs)`` runs one forward and says what ran.

    Warns
    -----
    UserWarning
        When nothing was replaced and the model holds none of gelu_ext's
        modules: its activations are not modules gelu_ext computes, or its
        ``forward`` calls them as functions (``functional_mode`` reaches those).
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
    >>> print(report)  # doctest: +ELLIPSIS
    PatchReport: replaced 1 module (not verified: pass example_inputs= or ...); 1 skipped, ...
      1: GELU -> GELU(approximate='none')
      2: Tanh kept (...not a function gelu_ext computes)
    >>> report.check(m, torch.randn(3, 4)).never_called
    []
    >>> print(report)  # doctest: +ELLIPSIS
    PatchReport: replaced 1 module, 1 called by the checked forward, 0 never called; torch ...
    ...
    >>> unpatch_model(m)
    ['1']
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if replace_with is not None and replace_with not in _HF_NAMES:
        raise ValueError(f"replace_with must be None or one of {', '.join(map(repr, _HF_NAMES))}, "
                         f"got {replace_with!r}")
    if example_inputs is not None and not isinstance(example_inputs, (tuple, list, dict, torch.Tensor)):
        raise TypeError(f"example_inputs must be a tuple (positional arguments), a dict (keyword "
                        f"arguments) or a Tensor, got {type(example_inputs).__name__}")
    mapped, why_not = _transformers_classes()
    replaced, skipped, not_fused, done = [], [], [], {}

    def swap(name, parent, attr, old, new, taken=()):
        object.__setattr__(new, _ORIGINAL, old)
        object.__setattr__(new, _TAKEN, tuple(taken))
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
            new, taken = _gated_mlp(old, mapped, replace_with)
            if new is not None:
                swap(name, parent, attr, old, new, taken)
            elif taken is not None:
                not_fused.append(Skipped(name, old, taken))
    for name, parent, attr in _children(model):
        old = getattr(parent, attr)
        if id(old) in done:                 # one module object in two places
            setattr(parent, attr, done[id(old)])
            continue
        factory = _torch_factory(old)
        if factory is None and type(old) in mapped:
            factory = _FACTORY[mapped[type(old)]]
        if factory is not None:
            why = _droppable(old)
            if why is not None:
                skipped.append(Skipped(name, old, why))
                continue
            if replace_with is not None:
                factory = _FACTORY[_HF_NAMES[replace_with]]
            swap(name, parent, attr, old, factory(old))
        elif type(old) in why_not:
            skipped.append(Skipped(name, old, why_not[type(old)]))
        elif _activation_like(old):
            skipped.append(Skipped(name, old, "not a function gelu_ext computes"))
    if not replaced and not any(_ORIGINAL in vars(m) for m in model.modules()):
        warnings.warn(
            f"patch_model replaced nothing in {type(model).__name__}: it has no activation module "
            f"gelu_ext computes ({len(skipped)} skipped, {len(not_fused)} gated MLPs not fused: see "
            f"the returned report); activations its forward calls as functions (F.gelu, F.silu, "
            f"F.relu) run on gelu_ext's kernels inside `with gelu_ext.torch.functional_mode():`",
            UserWarning, stacklevel=2)
    report = PatchReport(replaced, skipped, not_fused, _functional(model, mapped))
    if isinstance(example_inputs, dict):
        report.check(model, **example_inputs)
    elif isinstance(example_inputs, (tuple, list)):
        report.check(model, *example_inputs)
    elif example_inputs is not None:
        report.check(model, example_inputs)
    return report


def _unpatch_problems(new, old):
    """What ``old`` cannot take from ``new`` (ours, in its place since
    ``patch_model``), as phrases; empty if it can take everything."""
    problems = []
    orig = type(old).__name__
    found = _hooks(new)
    if found:
        problems.append(f"{', '.join(found)} set on it since patch_model: {orig} would take them "
                        f"without their handles (handle.remove() would no longer reach them); "
                        f"remove them, unpatch, and set them again")
    added = [*new._parameters, *new._buffers]
    if added:
        problems.append(f"parameters or buffers {', '.join(map(repr, added))} added to it: {orig} "
                        f"does not use them and its state_dict would change; delete them first")
    taken = vars(new).get(_TAKEN, ())
    for n in taken:
        if new._modules.get(n) is None:
            problems.append(f"its submodule {n!r} was removed: {orig} calls it; put one back first")
    for n, child in new._modules.items():
        if child is None or n in taken:
            continue
        if n in old._modules:
            problems.append(f"submodule {n!r} was added to it, but {orig} has its own {n!r}, "
                            f"which its forward calls; rename or remove the added one")
        elif n in vars(old) or hasattr(type(old), n):
            problems.append(f"submodule {n!r} was added to it, but {n!r} is another attribute "
                            f"of {orig}; rename or remove the added one")
    return problems


def _restore(new, old):
    """Give ``old`` ``new``'s submodules (those it took, as they are now, and
    any added since) and its train/eval mode."""
    taken = vars(new).get(_TAKEN, ())
    for n, child in new._modules.items():
        if child is not None and old._modules.get(n) is not child:
            setattr(old, n, child)
    # the original's own children ours did not hold (an activation fused away)
    # missed every train()/eval() since: they get the mode the block has now
    old.training = new.training
    for n, child in old._modules.items():
        if child is not None and n not in taken and n not in new._modules:
            child.train(new.training)


def unpatch_model(model):
    """Put back every module ``patch_model`` replaced in ``model``; returns
    their names.

    The original objects come back holding the submodules ours holds now: a
    LoRA layer PEFT put in (or the Linear ``merge_and_unload`` left), any
    submodule swapped or added since, and the train/eval mode.  So the model
    computes what the patched one did, with torch's activations (bit for bit
    what the original would compute with those submodules).  If something was
    done to one of our modules that the original cannot take (hooks,
    parameters or buffers added to it, a submodule it calls removed), nothing
    is restored: a ``RuntimeError`` names each module and what changed.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    places, originals, problems = [], {}, []
    for name, parent, attr in _children(model):
        new = getattr(parent, attr)
        old = vars(new).get(_ORIGINAL)
        if old is None:
            continue
        places.append((name, parent, attr, old))
        if id(new) not in originals:        # one module object in two places: once
            originals[id(new)] = (new, old)
            problems += [f"  {name} ({type(new).__name__}, replacing {type(old).__name__}): {p}"
                         for p in _unpatch_problems(new, old)]
    if problems:
        raise RuntimeError("unpatch_model restored nothing: the original modules cannot take what "
                           "changed in gelu_ext's since patch_model:\n" + "\n".join(problems))
    for new, old in originals.values():
        _restore(new, old)
    for name, parent, attr, old in places:
        setattr(parent, attr, old)
    return [name for name, *_ in places]
