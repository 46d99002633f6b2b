"""The op spec: every op family of gelu_ext, once.

Design:

* Plain data, standard library only: the generator ``tools/gen_ops.py``
  loads this file by its path at build time (no compiled part, no NumPy, no
  torch), and the package imports it at run time; both read the same rows.
* One table written by hand, ``FAMILIES``: one ``Family`` per forward ufunc
  (an activation, its fused-bias op or its gated op), with only what cannot
  be derived: its bounds, its Hugging Face names and the torch class it
  replaces, the torch op it runs under (and which ``approximate`` it is),
  the C recipe of its kernels.  Its docstrings are in ``gelu_ext/_docs.py``,
  keyed by name.
* Derived from it, by the rules of ``_derive`` below (the spec's
  ``derivatives.yaml``): its derivative ufunc, the two ``torch.ops.gelu_ext``
  ops (forward and gradient) with their schemas, operands, first and second
  derivatives, the activation ``activation()`` and ``patch_model`` use.  The
  package and the generator read the derived tables:
  ``OPS``          one ``Op`` per ufunc: one row of the C op table
                   (``src/gx_ops_table.h``: name, inputs, kind, base,
                   docstring) and of the kernel table (``src/kernels/
                   gx_k_table.h``), with its derivative, its thin Python
                   function, its 0.1.0 alias, its float64 twin and mpmath
                   oracle (functions of ``gelu_ext.testing``, named here so
                   that this module imports neither) and its bounds;
  ``ACTIVATIONS``  one ``Activation`` per function a model names;
  ``TORCH_OPS``    one ``TorchOp`` per ``torch.ops.gelu_ext`` op.
* What is not data stays code, once per op: the formula in C
  (``src/math/gx_math.h``) and its float64 twin and oracle
  (``gelu_ext/testing.py``), its formulas in torch's and ONNX's terms
  (``gelu_ext/torch/_formulas.py``), each keyed by the names here.
* Adding an op: its formulas, one ``Family`` here, its docstrings in
  ``_docs.py``, its own tests; then ``python tools/gen_ops.py --write``
  (the C tables, the stubs, ``gelu_ext.torch.functional`` and ``nn``, the
  README's table).
"""
from typing import NamedTuple, Optional

from . import _docs

KINDS = ("plain", "bias", "gate", "dgate")      # src/gx_ops.h's GX_PLAIN ... GX_DGATE, in order
DTYPES = ("float16", "bfloat16", "float32", "float64")
MODES = ("none", "tanh")                        # torch's approximate=, in the order of its index


class Bound(NamedTuple):
    """``value`` in ``unit``: "ULP" of the exact result, "ULP(s)" of the
    derivative's scale s, or "rel" (relative to max(|exact|, s), and never
    below 1 ULP: subnormal results cannot be relatively accurate, but must not
    be flushed to 0 early)."""
    value: float
    unit: str


def _bounds(f32, f64, half, unit="ULP"):
    """Bounds rows: f32 and f64 a value (region "all") or {region: Bound};
    float16 and bfloat16 ``half`` ULP (results are float32 results rounded once)."""
    rows = []
    for dt, b in (("float32", f32), ("float64", f64)):
        if isinstance(b, dict):
            rows += [(dt, region, v) for region, v in b.items()]
        else:
            rows.append((dt, "all", Bound(b, unit)))
    rows += [(dt, "all", Bound(half, unit)) for dt in ("float16", "bfloat16")]
    return tuple(rows)


# ------------------------------------------------------------- the records --

class Kernels(NamedTuple):
    """How a plain family's kernels compute (src/kernels/; a fused family's
    follow from its base's).  ``f32``/``f64``:
      "stream"   the element formula in streaming blocks (memory-bound ops);
      "formula"  the element formula over the array (gx_math.h's
                 gx_<name>_f32 / gx_<name>_grad_f32d, ..._f64, in double
                 lanes, rounded once);
      "split"    float32 lanes from the tables where they cover x, the
                 formula for the rest (``loop``, ``table``, ``one16``);
      "lut64"    float64: double lanes from gx_lut64.h's table where it
                 covers x, the formula for the rest.
    ``loop``: the table loop family of gx_loop_f32.h ("lut", "sig"): the
    forward op runs <loop>_fwd, its derivative <loop>_grad, a gated op
    <loop>_gate.  ``table``: the tables gx_lut_<table>, gx_lut8_<table>
    (and ..._grad) of gx_lut.h/gx_lut8.h, and gx_lut64_<table>.
    ``one16``: (forward, derivative) 16-bit kernels run the table loop on
    the 16-bit data in one pass: "1" both types, "F16" float16 only where a
    vector holds 16 floats, "0" neither (src/kernels/gx_k_table.h's
    comment says when each wins).  ``tail``: the forward float32 formula
    the split runs for the rest, where it is not gx_<name>_f32."""
    f32: str
    f64: str
    loop: Optional[str] = None
    table: Optional[str] = None
    one16: tuple = ("0", "0")
    tail: Optional[str] = None


class HF(NamedTuple):
    """What a model names: the public function ``activation()`` returns for
    Hugging Face's names, and the torch.nn class ``patch_model`` replaces."""
    public: str                 # the gelu_ext function (gelu_ext.<public>, else _activation.<public>)
    names: tuple                # transformers' ACT2FN / ACT2CLS names, matched exactly
    torch_class: Optional[str] = None   # the torch.nn class replaced
    copy: tuple = ()            # arguments taken from the replaced module where it has them
    class_copy: tuple = ()      # more arguments taken from an instance of torch_class


class Torch(NamedTuple):
    """A torch op's public face: its ``gelu_ext.torch.functional`` function
    and ``nn`` class (docstrings in ``_docs``), taking torch.nn's ``inplace``
    flag or not, and the fused op a ``bias=`` keyword runs."""
    functional: str
    module: str
    inplace: bool = False
    bias: Optional[str] = None


class Family(NamedTuple):
    """One forward ufunc and what follows from it (``_derive``)."""
    name: str                   # the forward ufunc
    kind: str = "plain"         # "plain" f(x), "bias" f(x + b), "gate" f(gate) * up
    base: Optional[str] = None  # a fused family's plain family
    torch: Optional[str] = None  # its torch.ops.gelu_ext op (the gradient op: + "_grad")
    approximate: Optional[str] = None   # its value of that op's approximate= (None: no argument)
    api: Optional[Torch] = None  # functional/nn of the torch op (on one family of the op)
    hf: Optional[HF] = None     # what models name it
    kernels: Optional[Kernels] = None   # a plain family's kernels
    bounds: tuple = ()          # ((dtype, region, Bound), ...) of the forward ufunc
    grad_bounds: tuple = ()     # ... of its derivative
    exact: bool = False         # correctly rounded: the twin's bits, rounded once
    oracle: bool = False        # gelu_ext.testing has mp_<name> and mp_<name>_grad
    alias: bool = False         # its derivative has a 0.1.0 name, ..._backward


_ULP1_BOUNDS = _bounds(1, 2, 1)
_SIG_GRAD = _bounds(2, 4, 1, "ULP(s)")
_TANH = _bounds({"bulk": Bound(2, "ULP"), "tail": Bound(1e-5, "rel")},
                {"bulk": Bound(2, "ULP"), "tail": Bound(1e-13, "rel")}, 1)
_TANH_GRAD = _bounds({"bulk": Bound(2, "ULP(s)"), "tail": Bound(1e-5, "rel")},
                     {"bulk": Bound(4, "ULP(s)"), "tail": Bound(1e-13, "rel")}, 1, "ULP(s)")
_EXACT = _bounds(0, 0, 0)
_ROUNDED = _bounds(0.5, 0.5, 0.5)
_STREAM = Kernels("stream", "stream")

FAMILIES = (
    Family("relu", torch="relu", api=Torch("relu", "ReLU", inplace=True),
           hf=HF("relu", ("relu",), "ReLU", copy=("inplace",)),
           kernels=_STREAM, bounds=_EXACT, grad_bounds=_EXACT, exact=True, alias=True),
    Family("relu2", torch="relu2", api=Torch("relu2", "ReLUSquared"),
           hf=HF("relu2", ("relu2",)),
           kernels=_STREAM, bounds=_ROUNDED, grad_bounds=_ROUNDED, exact=True),
    Family("relu6", torch="relu6", api=Torch("relu6", "ReLU6", inplace=True),
           hf=HF("relu6", ("relu6",), "ReLU6", copy=("inplace",)),
           kernels=_STREAM, bounds=_EXACT, grad_bounds=_EXACT, exact=True),
    Family("gelu_erf", torch="gelu", approximate="none",
           api=Torch("gelu", "GELU", bias="gelu_bias"),
           hf=HF("fast_gelu", ("gelu", "gelu_python"), "GELU", class_copy=("approximate",)),
           kernels=Kernels("split", "lut64", "lut", "erf", ("F16", "1"), tail="gelu_erf_f32_tail"),
           bounds=_ULP1_BOUNDS, grad_bounds=_bounds(2, 4, 1, "ULP(s)"), oracle=True, alias=True),
    Family("gelu_tanh", torch="gelu", approximate="tanh",
           hf=HF("fast_gelu_tanh", ("gelu_new", "gelu_pytorch_tanh", "gelu_python_tanh",
                                    "gelu_accurate", "gelu_fast")),
           kernels=Kernels("split", "lut64", "lut", "tanh", ("F16", "1")),
           bounds=_TANH, grad_bounds=_TANH_GRAD, oracle=True, alias=True),
    Family("silu", torch="silu", api=Torch("silu", "SiLU", inplace=True),
           hf=HF("silu", ("silu", "swish"), "SiLU", copy=("inplace",)),
           kernels=Kernels("split", "formula", "sig", "silu", ("1", "1")),
           bounds=_ULP1_BOUNDS, grad_bounds=_SIG_GRAD, oracle=True),
    Family("quick_gelu", torch="quick_gelu", api=Torch("quick_gelu", "QuickGELU"),
           hf=HF("quick_gelu", ("quick_gelu",)),
           kernels=Kernels("split", "formula", "sig", "quick", ("0", "1")),
           bounds=_ULP1_BOUNDS, grad_bounds=_SIG_GRAD, oracle=True),
    Family("mish", torch="mish", api=Torch("mish", "Mish", inplace=True),
           hf=HF("mish", ("mish",), "Mish", copy=("inplace",)),
           kernels=Kernels("formula", "formula"),
           bounds=_bounds(1, 1, 1), grad_bounds=_bounds(2, 2, 1, "ULP(s)"), oracle=True),
    Family("gelu_erf_bias", "bias", "gelu_erf", torch="gelu_bias", approximate="none", alias=True),
    Family("gelu_tanh_bias", "bias", "gelu_tanh", torch="gelu_bias", approximate="tanh", alias=True),
    Family("swiglu", "gate", "silu", torch="swiglu", api=Torch("swiglu", "SwiGLU")),
    Family("geglu_erf", "gate", "gelu_erf", torch="geglu", approximate="none",
           api=Torch("geglu", "GEGLU")),
    Family("geglu_tanh", "gate", "gelu_tanh", torch="geglu", approximate="tanh"),
)
FAMILY = {f.name: f for f in FAMILIES}


# ----------------------------------------------------------- derived: ops --

class Op(NamedTuple):
    """One ufunc: one row of the C op table and what Python knows of it."""
    name: str                   # public ufunc name; a derivative ends in "_grad" ("_dgate")
    kind: str                   # one of KINDS: how the inputs reach base
    inputs: tuple               # input names: x (, g) (, b); gate, up (, g)
    base: str                   # the op whose formula this one runs (itself if plain)
    family: str                 # the Family it derives from
    doc: str                    # the ufunc's docstring (NumPy prepends the signature)
    grad: Optional[str] = None  # the ufunc of its derivative (plain forward ops)
    thin: Optional[str] = None  # a derivative's thin public function's docstring
    alias: Optional[str] = None  # a second public name (the 0.1.0 name)
    reference: Optional[str] = None     # gelu_ext.testing's float64 twin
    oracle: Optional[str] = None        # gelu_ext.testing's mpmath oracle
    bounds: tuple = ()          # ((dtype, region, Bound), ...)
    exact: bool = False         # correctly rounded: the twin's bits, rounded once

    @property
    def c_id(self):
        return "GX_OP_" + self.name.upper()

    @property
    def is_grad(self):
        return self.name.endswith("_grad") or self.name.endswith("_dgate")


_INPUTS = {("plain", False): ("x",), ("plain", True): ("x", "g"),
           ("bias", False): ("x", "b"), ("bias", True): ("x", "g", "b"),
           ("gate", False): ("gate", "up"), ("gate", True): ("gate", "up", "g")}


def grad_name(f):
    """The derivative ufunc of family ``f``: <name>_grad, a gated op's gate
    gradient <name>_dgate."""
    return f.name + ("_dgate" if f.kind == "gate" else "_grad")


def _ops(f):
    """Family f's two ufuncs: the forward op and its derivative."""
    plain = f.kind == "plain"
    base = f.base or f.name
    d = grad_name(f)
    twin = (lambda n: "ref_" + n) if plain else (lambda n: None)
    mp = (lambda n: "mp_" + n) if f.oracle else (lambda n: None)
    fwd = Op(f.name, f.kind, _INPUTS[f.kind, False], base, f.name, _docs.UFUNC.get(f.name, ""),
             grad=d if plain else None, reference=twin(f.name), oracle=mp(f.name),
             bounds=f.bounds, exact=f.exact)
    der = Op(d, "dgate" if f.kind == "gate" else f.kind, _INPUTS[f.kind, True], base + "_grad",
             f.name, _docs.UFUNC.get(d, ""), thin=_docs.THIN.get(d),
             alias=d[:-len("_grad")] + "_backward" if f.alias else None,
             reference=twin(d), oracle=mp(d), bounds=f.grad_bounds, exact=f.exact)
    return fwd, der


_PAIRS = [_ops(f) for f in FAMILIES]
OPS = tuple(p[0] for p in _PAIRS) + tuple(p[1] for p in _PAIRS)
OP = {op.name: op for op in OPS}


def _split_rows(f):
    """Family f's rows of the float32 split kernels (src/kernels/
    gx_split_rows.h's columns: op, inputs, table loop, whose formula takes
    the rest, gated, ONE16, 32- and 8-piece tables): its forward op's and
    derivative's where its kernels split, a gated op's where its base's do."""
    base = FAMILY[f.base] if f.base else f
    k = base.kernels
    if k.f32 != "split" or f.kind == "bias":
        return ()
    t = k.table
    if f.kind == "gate":
        return ((f.name, 2, k.loop + "_gate", base.name, 1, "0", f"gx_lut_{t}", f"gx_lut8_{t}"),)
    d = grad_name(f)
    return ((f.name, 1, k.loop + "_fwd", f.name, 0, k.one16[0], f"gx_lut_{t}", f"gx_lut8_{t}"),
            (d, 2, k.loop + "_grad", d, 0, k.one16[1], f"gx_lut_{t}_grad", f"gx_lut8_{t}_grad"))


F32_SPLITS = tuple(row for f in FAMILIES for row in _split_rows(f))
SPLIT = frozenset(row[0] for row in F32_SPLITS)     # the ops whose float32 kernel is a split


# ---------------------------------------------------- derived: activations --

class Activation(NamedTuple):
    """A function models name: what ``activation()`` returns for its Hugging
    Face names and what ``patch_model`` puts in for them."""
    public: str                 # the gelu_ext function (gelu_ext.<public>, else _activation.<public>)
    op: str                     # the ufunc computing it
    hf_names: tuple             # transformers' ACT2FN / ACT2CLS names, matched exactly
    module: str                 # the gelu_ext.torch.nn class put in
    module_args: tuple = ()     # ((argument, value), ...) it is built with
    copy: tuple = ()            # arguments taken from the replaced module where it has them
    torch_class: Optional[str] = None   # the torch.nn class replaced by class
    class_copy: tuple = ()      # more arguments taken from an instance of torch_class
    gate: Optional[tuple] = None        # (gate, approximate) of its fused gated MLP, if any


def _api(torch_op):
    """The Torch record one of torch op ``torch_op``'s families carries (None: none)."""
    return next((f.api for f in FAMILIES if f.torch == torch_op and f.api), None)


def _activation(f):
    gated = [g for g in FAMILIES if g.kind == "gate" and g.base == f.name]
    api = _api(f.torch)
    return Activation(f.hf.public, f.name, f.hf.names, api.module if api else "",
                      (("approximate", f.approximate),) if f.approximate else (),
                      f.hf.copy, f.hf.torch_class, f.hf.class_copy,
                      (f.torch, f.approximate or "none") if gated else None)


ACTIVATIONS = tuple(_activation(f) for f in FAMILIES if f.hf)
HF_NAMES = {hf: a.public for a in ACTIVATIONS for hf in a.hf_names}


# ------------------------------------------------------ derived: torch ops --

class Output(NamedTuple):
    """One output of a torch op: the ufunc computing it per ``approximate``
    (keys MODES where the op takes it, else "none") and the op's tensor
    arguments it takes, in the ufunc's order."""
    ufunc: dict
    operands: tuple


class TorchOp(NamedTuple):
    """One ``torch.ops.gelu_ext`` op.  A forward op names its gradient op
    (``grad``); a gradient op has none and is differentiable through ``d1``
    (the elementwise first-derivative op, f'(x) g) and ``d2`` (per
    ``approximate``, the activation whose second derivative, a torch
    expression of ``gelu_ext.torch._formulas``, the double backward uses);
    a gated gradient op's ``gated`` is its forward op.  A forward op with
    ``module``/``functional`` gets them in ``gelu_ext.torch.nn``/
    ``functional``: its tensors (``input`` for a plain op, as
    torch.nn.functional names it), then ``approximate`` where the schema
    has it, ``inplace`` where the flag is set, ``bias=`` where ``bias``
    names the fused op it runs."""
    name: str
    schema: str                 # after the name: "(Tensor x) -> Tensor"
    kind: str                   # "plain" f(x), "bias" f(x + b), "gate" f(gate) * up
    ufuncs: tuple               # one Output per output
    args: tuple                 # the tensor arguments' names
    grad: Optional[str] = None  # forward ops: the gradient op their backward calls
    d1: Optional[str] = None    # the first-derivative op f'(x) g
    d2: Optional[dict] = None   # approximate -> the activation (ufunc) of f''
    gated: Optional[str] = None  # a gated gradient op's forward op
    module: Optional[str] = None     # its gelu_ext.torch.nn class
    functional: Optional[str] = None  # its gelu_ext.torch.functional function
    doc: str = ""               # the functional function's docstring
    module_doc: str = ""        # the nn class's docstring
    inplace: bool = False       # function and module take torch.nn's inplace flag
    bias: Optional[str] = None  # the fused op the function's bias= keyword runs

    @property
    def has_approximate(self):
        return "approximate" in self.schema

    @property
    def single(self):
        return "-> Tensor" in self.schema

    def ufunc(self, approximate=None, output=0):
        """The ufunc (name) of output ``output`` for ``approximate`` (which an
        op without the argument ignores)."""
        names = self.ufuncs[output].ufunc
        return names[approximate or "none"] if self.has_approximate else names["none"]


_ARGS = {"plain": ("x",), "bias": ("x", "bias"), "gate": ("gate", "up")}


def _torch_ops(name):
    """The forward op ``name`` and its gradient op, from its families."""
    fams = [f for f in FAMILIES if f.torch == name]
    by = {f.approximate or "none": f for f in fams}
    f = fams[0]
    approx = f.approximate is not None
    base = FAMILY[f.base] if f.base else f
    A = ", str approximate='none'" if approx else ""
    args = _ARGS[f.kind]
    gargs = args + ("grad",)
    outs = "(Tensor, Tensor)" if f.kind == "gate" else "Tensor"
    d1 = base.torch + "_grad"
    d2 = {m: (FAMILY[b.base] if b.base else b).name for m, b in by.items()}
    api = _api(name)
    fwd = TorchOp(name, f"({', '.join('Tensor ' + a for a in args)}{A}) -> Tensor", f.kind,
                  (Output({m: b.name for m, b in by.items()}, tuple(range(len(args)))),),
                  args, grad=name + "_grad", d1=d1)
    if api:
        fwd = fwd._replace(module=api.module, functional=api.functional,
                           doc=_docs.FUNCTIONAL.get(api.functional, ""),
                           module_doc=_docs.MODULE.get(api.module, ""),
                           inplace=api.inplace, bias=api.bias)
    if f.kind == "gate":      # (d_gate, d_up) = (dgate(gate, up, grad), f(gate) * grad)
        gouts = (Output({m: grad_name(b) for m, b in by.items()}, (0, 1, 2)),
                 Output({m: b.name for m, b in by.items()}, (0, 2)))
    elif f.kind == "bias":    # the ufunc takes (x, g, b)
        gouts = (Output({m: grad_name(b) for m, b in by.items()}, (0, 2, 1)),)
    else:
        gouts = (Output({m: grad_name(b) for m, b in by.items()}, (0, 1)),)
    der = TorchOp(name + "_grad", f"({', '.join('Tensor ' + a for a in gargs)}{A}) -> {outs}",
                  f.kind, gouts, gargs, d1=d1, d2=d2, gated=name if f.kind == "gate" else None)
    return fwd, der


_TPAIRS = [_torch_ops(n) for n in dict.fromkeys(f.torch for f in FAMILIES if f.torch)]
TORCH_OPS = tuple(p[0] for p in _TPAIRS) + tuple(p[1] for p in _TPAIRS)
TORCH_OP = {t.name: t for t in TORCH_OPS}


def check():
    """Problems in the tables (each names the entry): [] when consistent."""
    bad = []
    loops, one16 = ("lut", "sig"), ("0", "1", "F16")
    for f in FAMILIES:
        if f.kind not in ("plain", "bias", "gate"):
            bad.append(f"{f.name}: kind {f.kind!r} is not plain, bias or gate")
        if ((f.kind == "plain") != (f.base is None)
                or (f.base and getattr(FAMILY.get(f.base), "kind", None) != "plain")):
            bad.append(f"{f.name}: a fused family names a plain base, a plain one none")
        if (f.kind == "plain") != (f.kernels is not None):
            bad.append(f"{f.name}: a plain family's kernels are its own, a fused one's its base's")
        k = f.kernels
        if k and (k.f32 not in ("stream", "formula", "split")
                  or k.f64 not in ("stream", "formula", "lut64")
                  or (k.f32 == "split") != (k.loop in loops and k.table is not None)
                  or not set(k.one16) <= set(one16)):
            bad.append(f"{f.name}: kernels {k}")
        base_k = getattr(FAMILY.get(f.base), "kernels", None)
        if f.kind == "gate" and (base_k is None or base_k.f32 != "split"):
            bad.append(f"{f.name}: a gated op's float32 kernel is its base's table split")
        if f.approximate not in (None,) + MODES:
            bad.append(f"{f.name}: approximate {f.approximate!r}")
        same = [g for g in FAMILIES if g.torch == f.torch]
        if f.torch and (len({g.kind for g in same}) > 1
                        or len({g.approximate is None for g in same}) > 1
                        or len(same) != len({g.approximate for g in same})):
            bad.append(f"torch op {f.torch}: its families differ in kind or approximate")
        if f.hf and not (f.torch and f.kind == "plain"):
            bad.append(f"{f.name}: what models name is a plain family with a torch op")
        for key in (f.name, grad_name(f)):
            if key not in _docs.UFUNC:
                bad.append(f"{key}: no docstring in _docs.UFUNC")
        if f.hf and _api(f.torch) is None:
            bad.append(f"{f.name}: what models name needs its torch op's functional/nn (Torch)")
        if f.api and f.api.functional not in _docs.FUNCTIONAL:
            bad.append(f"{f.api.functional}: no docstring in _docs.FUNCTIONAL")
        if f.api and f.api.module not in _docs.MODULE:
            bad.append(f"{f.api.module}: no docstring in _docs.MODULE")
    for t in TORCH_OPS:
        if t.grad and t.kind != "bias" and _api(t.name) is None:
            bad.append(f"torch op {t.name}: no Torch (functional, module) on any of its families")
    for name in _docs.THIN:
        if name not in OP or not OP[name].is_grad:
            bad.append(f"_docs.THIN: {name!r} is not a derivative ufunc")
    for name in _docs.UFUNC:
        if name not in OP:
            bad.append(f"_docs.UFUNC: {name!r} is not a ufunc")
    return bad
