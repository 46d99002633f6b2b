"""gelu_ext's ufuncs as PyTorch custom ops (``torch.ops.gelu_ext.*``).

Design:

* One table, the op spec's ``TORCH_OPS`` (``gelu_ext/_spec.py``): each
  record is an op of the ``gelu_ext`` namespace, its schema, the ufuncs that
  compute it, its kind (elementwise, fused bias, gated), the gradient op a
  forward op's backward calls and the first and second derivatives a
  gradient op's double backward uses.  Registration loops over the table;
  the derivative formulas branch on the kind, never on an op's name.
* The kernel is the ufuncs' own inner loop.  The common call -- every
  operand a contiguous tensor of one float dtype and one shape -- runs it
  straight over the tensors' memory (``_ufuncs._apply_at``: what the ufunc's
  loop does for a contiguous run, without ~2 us of ufunc machinery), with
  the loop codes looked up in a table made at import (``_FAST``), one dtype
  and layout check and nothing else computed per call.  Every other call
  (broadcasting, strides, mixed dtypes) runs the ufuncs themselves over
  ndarrays that view the tensors' memory (``_ufuncs._array_at``; any strides,
  float16 included).  Either way outputs come from torch's allocator
  (``_new_output``) and the results are the ufuncs' bits by construction.
  bfloat16 has no NumPy dtype: the general path views its tensors as
  ml_dtypes' bfloat16 (still shared memory), which runs the ufuncs' bfloat16
  loops.  Without ml_dtypes a bfloat16 operand is a TypeError saying so on
  both paths: a float32 detour would not give the same bits for the fused
  and gradient ops, whose bfloat16 loops round the activation before the
  product as the unfused bfloat16 composition does (``gelu_ext[torch]``
  installs ml_dtypes).
* Threads: an op runs on ``torch.get_num_threads()`` threads of gelu_ext's
  pool (a count for the calling thread only, ``_set_thread_num_threads``),
  so ``torch.set_num_threads`` is the one budget inside a model while NumPy
  callers keep ``gelu_ext.set_num_threads``'.
* These are the Python kernels: where the C++ ones were built for this
  torch (``_cpp``, ``csrc/ops.cpp``: the same table and loops, torch's
  allocator and intra-op threads, no Python per call) they take the CPU key
  instead, and a C++ gate at AutogradCPU calls the autograd below
  (``AUTOGRAD_ENTRIES``) only where a derivative may be asked for; this file
  keeps everything else either way.
* The fake kernel (``torch.compile``, ``torch.export``, meta tensors)
  allocates the output with the same function as the real kernel
  (``_new_output``), so shapes, dtypes and strides agree by construction.
* Autograd: each forward op's backward calls a gradient op (itself a custom
  op, so ``torch.compile`` traces the backward too); a broadcast operand's
  gradient is summed back to its shape with ``sum_to_size``, as autograd
  does for torch's own broadcasting ops.  The gradient ops are
  differentiable too (double backward, e.g. for gradient penalties): their
  backward uses the activations' second derivatives written as torch
  expressions (``_formulas.D2``), and our ops for everything else.  Each op also has a
  JVP (forward-mode AD) and a vmap rule, so every ``torch.func`` transform
  works: see the autograd section for why it is not ``register_autograd``.
* Dtypes: float16, bfloat16, float32, float64 are kept; mixed float operands
  are promoted as torch promotes them (``torch.result_type``) before the
  kernel runs, so ``(float32, float64)`` computes in float64.  Anything else
  is a ``TypeError`` naming the argument, raised before any output exists.
"""
import numpy as np
import torch

from .. import _spec, _ufuncs
from . import _private
from ._formulas import D2 as _D2

NS = "gelu_ext"

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_APPROXIMATE = {"none": "erf", "tanh": "tanh"}


def check_approximate(approximate):
    if approximate not in _APPROXIMATE:
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return _APPROXIMATE[approximate]


# ------------------------------------------------------------ the kernels --

_BF16 = []          # [ml_dtypes' bfloat16 NumPy dtype or None], looked up once


def _bfloat16_dtype():
    if not _BF16:
        _BF16.append(_ufuncs._bfloat16()[0])
    return _BF16[0]


_NP_DTYPES = {torch.float16: np.dtype(np.float16), torch.float32: np.dtype(np.float32),
              torch.float64: np.dtype(np.float64)}


_CONTIGUOUS = torch.contiguous_format


def _as_numpy(t, bf16):
    """An ndarray over ``t``'s memory (same elements, same strides), not
    ``t.numpy()``, which would leave ``t``'s storage non-resizable for good."""
    dtype = bf16 if t.dtype == torch.bfloat16 else _NP_DTYPES[t.dtype]
    return _ufuncs._array_at(t.data_ptr(), tuple(t.shape), t.stride(), dtype, t)


def _result_dtype(names, tensors):
    dt = tensors[0].dtype
    for name, t in zip(names, tensors):
        if t.dtype not in _FLOATS:
            raise TypeError(f"{name} must be a float16, bfloat16, float32 or float64 tensor, "
                            f"got {t.dtype}")
        if t.dtype != dt:
            dt = torch.promote_types(dt, t.dtype)
    if dt == torch.bfloat16 and _bfloat16_dtype() is None:
        raise TypeError(f"bfloat16 tensors need ml_dtypes, which gives the ufuncs their "
                        f"bfloat16 loops: pip install 'gelu_ext[torch]' (or ml_dtypes); "
                        f"{_ufuncs._bfloat16()[1]}")
    return dt


def _new_output(tensors, dtype, same_shapes):
    """The output of an op over ``tensors``: C-contiguous, unless the first
    operand has the broadcast shape and is not contiguous, where it is
    ``torch.empty_like`` of it (its dense layout kept).  The real and the
    fake kernel both call this (the fast path spells its first branch out),
    so their strides agree by construction.
    From torch's allocator, as torch's own ops allocate: the output is an
    ordinary tensor (``resize_`` works), and next to torch's own
    allocations it reuses their memory rather than faulting in fresh pages
    of another allocator's (a NumPy-allocated output took ~7x the page
    faults of torch's own op when the two ops alternate).
    ``empty_like(x, memory_format=contiguous_format)`` where the shape is
    x's: inside a kernel it costs ~0.3 us where ``new_empty(shape)`` costs
    ~3 (parsing the shape), most of a 256-element call.
    ``same_shapes``: the caller knows all shapes are equal
    (torch.broadcast_shapes costs ~10 us, as much as the rest of a small call)."""
    x = tensors[0]
    if same_shapes or len(tensors) == 1:
        shape = x.shape
    else:
        shape = torch.broadcast_shapes(*(t.shape for t in tensors))
    if shape == x.shape:
        if x.is_contiguous():
            return torch.empty_like(x, dtype=dtype, memory_format=_CONTIGUOUS)
        return torch.empty_like(x, dtype=dtype)
    return x.new_empty(shape, dtype=dtype)


def _run(ufuncs, names, tensors):
    """``ufunc(*tensors)`` for each ufunc of ``ufuncs``, each into a new
    tensor; the ufuncs' own operand lists are index tuples into ``tensors``.
    The general path: any strides, broadcasting, mixed dtypes."""
    dt = _result_dtype(names, tensors)
    args = [t if t.dtype == dt else t.to(dt) for t in tensors]
    shape = args[0].shape
    same = all(a.shape == shape for a in args)      # real shapes here, not symbolic
    outs = [_new_output([args[i] for i in idx], dt, same) for _, idx in ufuncs]
    bf16 = _bfloat16_dtype() if dt == torch.bfloat16 else None
    views = [_as_numpy(a, bf16) for a in args]
    was = _ufuncs._set_thread_num_threads(torch.get_num_threads())
    try:
        for (uf, idx), o in zip(ufuncs, outs):
            uf(*(views[i] for i in idx), out=_as_numpy(o, bf16))
    finally:
        _ufuncs._set_thread_num_threads(was)
    return outs


# Called by every fake-kernel call, which every trace (torch.export, the
# ONNX exporter, torch.compile) makes first: see onnx.register, which adds
# the hook.
FAKE_HOOKS = []


def _fake(ufuncs, names, tensors):
    for hook in FAKE_HOOKS:
        hook()
    dt = _result_dtype(names, tensors)
    return [_new_output([tensors[i] for i in idx], dt, False) for _, idx in ufuncs]


# -------------------------------------------------------------- the table --
# The ops are the op spec's TORCH_OPS (gelu_ext/_spec.py), one TorchOp each:
# schema, (ufunc per approximate, operand indices) per output, tensor
# argument names, kind, gradient op, first and second derivatives.  Here
# each ufunc name is resolved: {approximate: ufunc} for an op that takes
# approximate, the ufunc itself otherwise.

def _resolve(names, has_approximate):
    if has_approximate:
        return {a: getattr(_ufuncs, names[a]) for a in _APPROXIMATE}
    return getattr(_ufuncs, names["none"])


_OPS = {t.name: t for t in _spec.TORCH_OPS}
_UFUNCS = {t.name: [(_resolve(out.ufunc, t.has_approximate), out.operands) for out in t.ufuncs]
           for t in _spec.TORCH_OPS}


def _pick(ufuncs, approximate):
    """The row's (ufunc, indices) list with the approximate chosen."""
    if approximate is None:
        return ufuncs
    check_approximate(approximate)
    return [(uf[approximate], idx) for uf, idx in ufuncs]


_DT_NAMES = {torch.float16: "float16", torch.bfloat16: "bfloat16",
             torch.float32: "float32", torch.float64: "float64"}


def _fast_table(ufuncs, has_approximate):
    """{(approximate or None, torch dtype): ((loop code, operand indices), ...)}
    for one op: what its fast path looks up instead of computing per call."""
    return {(approximate, dt): tuple((_ufuncs._loop_code(uf.__name__, dt_name), idx)
                                     for uf, idx in _pick(ufuncs, approximate))
            for approximate in (tuple(_APPROXIMATE) if has_approximate else (None,))
            for dt, dt_name in _DT_NAMES.items()}


def _make(name, spec):
    schema, ufuncs, names = spec.schema, _UFUNCS[name], spec.args
    has_approximate = spec.has_approximate
    single = spec.single
    n = len(names)
    default = "none" if has_approximate else None
    fast = _fast_table(ufuncs, has_approximate)
    bfloat16, get_num_threads, apply_at = torch.bfloat16, torch.get_num_threads, _ufuncs._apply_at

    def split(args, kwargs):
        # torch passes the schema's arguments positionally (trailing defaults
        # left out) or, from other callers, by keyword
        approximate = None
        if has_approximate:
            approximate = kwargs["approximate"] if "approximate" in kwargs else (
                args[n] if len(args) > n else "none")
        return args[:n], approximate

    def general(args, kwargs):
        tensors, approximate = split(args, kwargs)
        outs = _run(_pick(ufuncs, approximate), names, tensors)
        return outs[0] if single else tuple(outs)

    # The fast path's one check: the operands' dtype has loops (the table has
    # it), the layout is contiguous, shapes and dtypes agree; bfloat16 also
    # asks for ml_dtypes, as the general path does (the same error).
    if n == 1:

        def kernel(*args, **kwargs):
            x = args[0]
            codes = fast.get((args[1] if len(args) > 1 else default, x.dtype))
            if (codes is None or kwargs or not x.is_contiguous()
                    or (x.dtype is bfloat16 and _bfloat16_dtype() is None)):
                return general(args, kwargs)
            out = torch.empty_like(x, memory_format=_CONTIGUOUS)     # as _new_output
            apply_at(codes[0][0], (x.data_ptr(),), out.data_ptr(), out.numel(), get_num_threads())
            return out
    else:
        def kernel(*args, **kwargs):
            x = args[0]
            codes = fast.get((args[n] if len(args) > n else default, x.dtype))
            if codes is None or kwargs or (x.dtype is bfloat16 and _bfloat16_dtype() is None):
                return general(args, kwargs)
            dt, shape = x.dtype, x.shape
            for t in args[:n]:
                if t.dtype is not dt or t.shape != shape or not t.is_contiguous():
                    return general(args, kwargs)
            ptrs = [t.data_ptr() for t in args[:n]]
            nt = get_num_threads()
            outs = []
            for code, idx in codes:
                out = torch.empty_like(x, memory_format=_CONTIGUOUS)     # as _new_output
                apply_at(code, tuple(ptrs[i] for i in idx), out.data_ptr(), out.numel(), nt)
                outs.append(out)
            return outs[0] if single else tuple(outs)

    def fake(*args, **kwargs):
        tensors, approximate = split(args, kwargs)
        outs = _fake(_pick(ufuncs, approximate), names, tensors)
        return outs[0] if single else tuple(outs)

    kernel.__name__ = name
    kernel.__doc__ = f"gelu_ext's {name} ufunc(s) over CPU tensors."
    _LIB.define(name + schema, tags=(torch.Tag.pt2_compliant_tag,))
    _PY_KERNELS[name] = kernel
    torch.library.register_fake(f"{NS}::{name}", fake, lib=_LIB)
    return getattr(torch.ops.gelu_ext, name)


# define + impl rather than torch.library.custom_op: the same schema, fake
# kernel and autograd, but the dispatcher calls the kernel directly, where
# custom_op adds a Python layer per call (~7 us of ~17 on a 2^10 call).
_LIB = torch.library.Library(NS, "DEF")
_PY_KERNELS = {}        # op name -> its Python CPU kernel
OPS = {name: _make(name, spec) for name, spec in _OPS.items()}


# The CPU kernels live in a Library of their own so that the C++ ones
# (gelu_ext.torch._cpp: the default where they were built for this torch)
# can take their place and give it back: the dispatcher holds one kernel per
# key, a second registration overrides the first with a warning.  The Python
# kernels go in here, first; _cpp swaps them out as gelu_ext.torch imports.
_CPU_LIB = []


def _python_cpu_kernels(on):
    """Register the Python CPU kernels (``on``) or remove them."""
    if on and not _CPU_LIB:
        lib = torch.library.Library(NS, "IMPL", "CPU")
        for name, kernel in _PY_KERNELS.items():
            lib.impl(name, kernel)
        _CPU_LIB.append(lib)
    elif not on and _CPU_LIB:
        _private.destroy_library(_CPU_LIB.pop())


def _cpp_table():
    """The C++ kernels' table (gelu_ext/torch/csrc/ops.cpp, register_ops),
    one record per op: its tensor arguments' names, whether it takes
    approximate, and per (approximate, dtype) the loop code and operand
    indices of each output -- the fast path's table (``_fast_table``), one
    source for both."""
    rows = []
    for name, spec in _OPS.items():
        entries = [{"approximate": 0 if approximate in (None, "none") else 1, "dtype": _DT_NAMES[dt],
                    "outputs": [{"loop": code, "operands": list(idx)} for code, idx in codes]}
                   for (approximate, dt), codes in _fast_table(_UFUNCS[name], spec.has_approximate).items()]
        rows.append({"name": name, "args": list(spec.args), "approximate": spec.has_approximate,
                     "entries": entries})
    return rows


_python_cpu_kernels(True)


# --------------------------------------------------------------- autograd --
# Each op has its own autograd.Function (backward and jvp, both through our
# ops), applied by our kernel at the Autograd key, and a vmap rule
# (register_vmap), so every transform of torch.func and forward-mode AD
# (``torch.autograd.forward_ad``, ``torch.autograd.functional``'s
# forward-mode strategies) gets the ops' derivatives.  Why not
# ``torch.library.register_autograd`` (torch 2.13): the Function it generates
# has no ``setup_context``, so ``torch.func.grad``/``jacrev``/``hessian``
# refuse it ("it must override the setup_context staticmethod"), and no
# ``jvp``, and its kernel skips autograd unless an input requires grad, so a
# dual tensor's tangent was silently dropped (``jvp``/``jacfwd`` gave zeros).
#
# Where the Function is applied: our Autograd-key kernel runs where aten's
# own autograd kernels (VariableType) run, inside the functorch level being
# processed, on that level's wrapped tensors.  So the Function must record
# on this level only, as aten's kernels do: a ``_SingleLevelFunction``
# applied under ``enable_single_level_autograd_function`` -- what torch
# itself applies for an autograd.Function under grad/jvp transforms
# (torch/_functorch/autograd_function.py, custom_function_call_grad).  A
# plain ``Function.apply`` there hands the call to functorch's
# ``custom_function_call``, which finds no kernel at the Autograd key
# ("could not find kernel for HigherOrderOperator custom_function_call at
# dispatch key AutogradCPU"); the single-level Function without the guard
# trips functorch's assert ("incorrectly used with ... _SingleLevelFunction").
# Its forward calls the op below autograd, which unwraps to the next level
# down; its backward and jvp call our ops, which go through the same kernel
# at whatever level they run.  vmap never needs the Function: the op's vmap
# rule runs the kernel once over the whole batch, whatever level it is at.

def _setup_context(ctx, inputs, output):
    n = sum(isinstance(a, torch.Tensor) for a in inputs)
    ctx.save_for_backward(*inputs[:n])
    ctx.save_for_forward(*inputs[:n])        # for jvp (forward-mode AD)
    ctx.extra = tuple(inputs[n:])           # approximate, where the op has it


def _reduce(grad, t):
    """``grad`` (at the broadcast shape) summed to ``t``'s shape and dtype."""
    if grad.shape != t.shape:
        grad = grad.sum_to_size(t.shape)
    return grad.to(t.dtype)


def _tangents(tangents, saved):
    """A jvp's tangents, None (that input has none) as a 0-d zero: every JVP
    formula also takes all the saved inputs, so its result still has the
    output's (broadcast) shape."""
    return [torch.zeros((), dtype=t.dtype) if d is None else d for d, t in zip(tangents, saved)]


def _backward_for(spec):
    grad_op = OPS[spec.grad]

    def backward(ctx, grad):
        saved = ctx.saved_tensors
        nones = tuple(None for _ in ctx.extra)
        if spec.kind == "gate":
            gate, up = saved
            d_gate, d_up = grad_op(gate, up, grad, *ctx.extra)
            return (_reduce(d_gate, gate), _reduce(d_up, up), *nones)
        if spec.kind == "bias":
            x, bias = saved
            d = grad_op(x, bias, grad, *ctx.extra)
            return (_reduce(d, x), _reduce(d, bias), *nones)
        (x,) = saved
        return (_reduce(grad_op(x, grad, *ctx.extra), x), *nones)

    return backward


# The JVP of an elementwise activation is f'(x) t: the gradient op applied to
# the tangent.

def _jvp_for(spec):
    grad_op = OPS[spec.grad]
    first = OPS[spec.d1]
    op = OPS[spec.name]

    def jvp(ctx, *tangents):
        saved, extra = ctx.saved_tensors, ctx.extra
        ts = _tangents(tangents, saved)
        if spec.kind == "gate":                 # f'(gate) up t_gate + f(gate) t_up
            (gate, up), (t_gate, t_up) = saved, ts
            return first(gate, up * t_gate, *extra) + op(gate, t_up, *extra)
        if spec.kind == "bias":                 # f'(x + b) (t_x + t_b)
            (x, b), (t_x, t_b) = saved, ts
            return grad_op(x, b, t_x + t_b, *extra)
        (x,), (t,) = saved, ts
        return grad_op(x, t, *extra)

    return jvp


# ---------------------------------------------------------- double backward --
# The gradient ops are differentiable too: their derivatives need the
# activations' second derivatives, which gelu_ext has no kernels for, so
# they are torch expressions (``_formulas.D2``, by the spec's d2; computed in
# float32 at least: a few ULP, not the <= 1 ULP of the kernels), times our
# own ops for every first derivative and forward value.  Third and higher
# derivatives follow by the same rules.


def _d2_of(spec):
    """(second derivative by approximate, or the one of an op without it)."""
    if spec.has_approximate:
        return {a: _D2[spec.d2[a]] for a in _APPROXIMATE}
    return _D2[spec.d2["none"]]


def _second(d2, x):
    """d2(x) in float32 at least, cast back to x's dtype."""
    wide = x.float() if x.element_size() < 4 else x
    return d2(wide).to(x.dtype)


def _double_backward_for(spec):
    d2s, first, op = _d2_of(spec), OPS[spec.d1], OPS[spec.name]
    fwd = OPS[spec.gated] if spec.gated else None

    def backward(ctx, *grads):
        saved, extra = ctx.saved_tensors, ctx.extra
        d2 = d2s[extra[0] if extra else "none"] if isinstance(d2s, dict) else d2s
        nones = tuple(None for _ in extra)
        if spec.kind == "plain":                                 # G(x, g) = f'(x) g
            (gg,), (x, g) = grads, saved
            return (_reduce(_second(d2, x) * g * gg, x), _reduce(op(x, gg, *extra), g), *nones)
        if spec.kind == "bias":                                  # G(x, b, g) = f'(x + b) g
            (gg,), (x, b, g) = grads, saved
            dxb = _second(d2, x + b) * g * gg
            return (_reduce(dxb, x), _reduce(dxb, b), _reduce(op(x, b, gg, *extra), g), *nones)
        # (A, B) = (f'(gate) up grad, f(gate) grad)
        (ga, gb), (gate, up, grad) = grads, saved
        zero = torch.zeros((), dtype=gate.dtype)
        ga = zero if ga is None else ga
        gb = zero if gb is None else gb
        d_gate = _second(d2, gate) * up * grad * ga + first(gate, grad * gb, *extra)
        d_up = first(gate, grad * ga, *extra)
        d_grad = first(gate, up * ga, *extra) + fwd(gate, gb, *extra)
        return (_reduce(d_gate, gate), _reduce(d_up, up), _reduce(d_grad, grad), *nones)

    return backward


def _grad_jvp_for(spec):
    """The gradient op's JVP (forward over reverse: ``hessian``, ``jacfwd``
    of a gradient), the same derivatives as its backward above."""
    d2s, first, op = _d2_of(spec), OPS[spec.d1], OPS[spec.name]
    fwd = OPS[spec.gated] if spec.gated else None

    def jvp(ctx, *tangents):
        saved, extra = ctx.saved_tensors, ctx.extra
        d2 = d2s[extra[0] if extra else "none"] if isinstance(d2s, dict) else d2s
        ts = _tangents(tangents, saved)
        if spec.kind == "plain":                                 # G(x, g) = f'(x) g
            (x, g), (t_x, t_g) = saved, ts
            return _second(d2, x) * g * t_x + op(x, t_g, *extra)
        if spec.kind == "bias":                                  # G(x, b, g) = f'(x + b) g
            (x, b, g), (t_x, t_b, t_g) = saved, ts
            return _second(d2, x + b) * g * (t_x + t_b) + op(x, b, t_g, *extra)
        # (A, B) = (f'(gate) up grad, f(gate) grad)
        (gate, up, grad), (t_gate, t_up, t_grad) = saved, ts
        d_a = _second(d2, gate) * up * grad * t_gate + first(gate, t_up * grad + up * t_grad, *extra)
        d_b = first(gate, grad * t_gate, *extra) + fwd(gate, t_grad, *extra)
        return d_a, d_b

    return jvp


# ----------------------------------------------------------- registration --

def _function(name, backward, jvp):
    """The op's Function; its forward is the op itself below autograd."""
    op = OPS[name]
    fwd_grad_enabled = _private.set_fwd_grad_enabled
    functorch_active = _private.functorch_transforms_active
    below_autograd = _private.AutoDispatchBelowAutograd

    def forward(*args):
        if functorch_active():
            # Function.apply turned both grad modes off for this level; the
            # levels below (a transform outside this one: jacrev(jacrev),
            # hessian, or plain autograd) need theirs back, as
            # custom_function_call_grad's forward does, or they record
            # nothing for this op: a silent zero second derivative.  (Outside
            # functorch the Function's own node is the only level: nothing
            # below it records, so the modes stay as apply set them.)
            with torch.enable_grad(), fwd_grad_enabled(True), below_autograd():
                return op(*args)
        with below_autograd():
            return op(*args)

    return type(f"gelu_ext_{name}", (_private.SingleLevelFunction,), {
        "forward": staticmethod(forward), "setup_context": staticmethod(_setup_context),
        "backward": staticmethod(backward), "jvp": staticmethod(jvp)})


def _derivative_entry(function):
    """The op with its derivatives: the Function applied on the level being
    processed.  The Autograd kernels below call it where a derivative may be
    asked for; so does the C++ one (csrc/ops.cpp, AutogradGate)."""
    enable_single_level_autograd_function = _private.enable_single_level_autograd_function
    functorch_active = _private.functorch_transforms_active

    def entry(*args):
        # The single-level guard only where functorch is active: outside it
        # the Function's apply is the plain C++ one, and the guard (a
        # generator context manager) cost ~1.5 us of the ~4 us a call with
        # autograd spent over F.gelu's.
        if functorch_active():
            with enable_single_level_autograd_function():
                return function.apply(*args)
        return function.apply(*args)

    return entry


def _autograd_kernel(name, entry):
    overload = OPS[name].default
    below_autograd = _private.after_autograd_keyset
    forward_ad = _private.forward_ad
    functorch_active = _private.functorch_transforms_active
    auto_below_autograd = _private.AutoDispatchBelowAutograd
    grad_enabled, any_requires_grad = torch.is_grad_enabled, _private.any_requires_grad

    def kernel(keyset, *args):
        # The Function where a derivative may be asked for: an input that
        # requires grad, any dual level (a tangent's level is not cheap to
        # read, and a dual tensor need not require grad), any functorch
        # transform; otherwise straight to the kernel, as aten's ops do.
        if (functorch_active() or forward_ad._current_level >= 0
                or (grad_enabled() and any_requires_grad(*args))):
            return entry(*args)
        with auto_below_autograd():
            return overload.redispatch(keyset & below_autograd, *args)

    return kernel


def _vmap_rule(spec):
    """Each batched operand's batch dimension moved to the front and, where
    the operands' ranks differ, ones inserted after it, so the batch
    dimensions line up and the rest broadcasts as the unbatched op's
    operands do; one kernel call computes the whole batch."""
    op = OPS[spec.name]
    n = len(spec.args)
    out_dims = 0 if spec.single else (0, 0)

    def rule(info, in_dims, *args):
        tensors, dims = args[:n], in_dims[:n]
        rank = max(t.dim() - (d is not None) for t, d in zip(tensors, dims))
        aligned = [t if d is None else
                   t.movedim(d, 0)[(slice(None),) + (None,) * (rank + 1 - t.dim())]
                   for t, d in zip(tensors, dims)]
        return op(*aligned, *args[n:]), out_dims

    return rule


_FUNCTIONS = {}
AUTOGRAD_ENTRIES = {}        # op name -> its _derivative_entry
for _spec_op in _spec.TORCH_OPS:
    _name = _spec_op.name
    if _spec_op.grad is not None:
        _FUNCTIONS[_name] = _function(_name, _backward_for(_spec_op), _jvp_for(_spec_op))
    else:
        _FUNCTIONS[_name] = _function(_name, _double_backward_for(_spec_op), _grad_jvp_for(_spec_op))
    AUTOGRAD_ENTRIES[_name] = _derivative_entry(_FUNCTIONS[_name])
    _LIB.impl(_name, _autograd_kernel(_name, AUTOGRAD_ENTRIES[_name]), "Autograd", with_keyset=True)
    torch.library.register_vmap(f"{NS}::{_name}", _vmap_rule(_spec_op), lib=_LIB)
