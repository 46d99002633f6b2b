"""gelu_ext.torch measured where it is used: the custom ops'
per-call overhead over the bare ufunc, a BERT-size feed-forward block with
our GELU against torch's own (forward and forward + backward, float32 and
bfloat16), a LLaMA-style gated MLP training step fused (SwiGLU) against
unfused, the whole all-MiniLM-L6-v2 encoder patched against unpatched (when
its wheel and transformers are installed), and the FFN with gelu_ext's pool
at one thread and at torch's thread count.  What one GELU call costs
(``--only-call-costs`` runs these alone): per call at <= 2^14 elements
under inference_mode and with autograd against F.gelu (and torch.relu, the
cost of a C++ op); the alternating pattern (a torch op, then
the GELU, both allocating) with minor page faults per pair; torch.profiler
time per GELU call inside the real MiniLM (float32 and bfloat16, 1 and 2
threads); and (not with --quick) the torch.compile'd MiniLM.
``--compiled`` alone times compiled unpatched against compiled patched for
MiniLM and a BERT-base FFN, float32 and bfloat16, 1 and 2 threads, eager,
torch.compile's default, max-autotune-no-cudagraphs and freezing.

Usage::

    python bench/torch_layer.py [--quick] [--tokens 4096] [--json FILE]
                                [--only-call-costs] [--kernels python|cpp|both]
    python bench/torch_layer.py --compiled [--dtypes float32,bfloat16]
                                [--modes eager,default,max-autotune-no-cudagraphs,freezing]
                                [--models minilm,ffn]

Every table compares entries timed side by side in one process, interleaved
(``gelu_ext.jobs._common.measure``); ratios are torch's time over ours (> 1:
ours is faster).  The ISA path is gelu_ext's best unless GELU_EXT_ISA caps it
(e.g. GELU_EXT_ISA=avx2); torch picks its own (ATEN_CPU_CAPABILITY=avx2 holds
it to AVX2).  ``--quick`` shrinks every size so the script runs in seconds
(CI keeps it from rotting; its numbers mean nothing).
"""
import argparse
import resource
import sys
import time

import numpy as np

import gelu_ext
from gelu_ext.jobs import _common

torch = _common.require("torch", "torch")
import gelu_ext.torch as gt                          # noqa: E402
from gelu_ext.torch import functional as GF          # noqa: E402


def _name(dtype):
    """torch.bfloat16 -> 'bfloat16'."""
    return str(dtype).split(".")[1]


def us(t):
    return f"{t.median * 1e6:9.1f}"


def table(title, rows, header):
    print(f"\n{title}")
    print(header)
    for r in rows:
        print(r)
    sys.stdout.flush()


class _Threads:
    """``with _Threads(n):`` torch and gelu_ext both at ``n`` threads."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.saved = torch.get_num_threads()
        torch.set_num_threads(self.n)
        gelu_ext.set_num_threads(self.n)

    def __exit__(self, *exc):
        torch.set_num_threads(self.saved)
        gelu_ext.set_num_threads(None)
        return False


def _thread_counts():
    return sorted({1, torch.get_num_threads()})


# The CPU kernels "ours" runs on (--kernels): the ones gelu_ext.torch chose
# at import (the default: gelu_ext.torch.kernels()), the Python ones, the
# C++ ones (gelu_ext/torch/csrc; built on first use where not installed), or
# both, side by side in one process, each entry switching its kernels in
# before each of its samples (the dispatcher holds one kernel per key).
_PATHS = ["python"]


def _use(path):
    from gelu_ext.torch import _cpp
    _cpp.use(path == "cpp")


def _suffix(path):
    return " C++" if path == "cpp" and len(_PATHS) > 1 else ""


def _per_path(ours):
    """``ours`` (name -> call) once per path of _PATHS, and the setups that
    switch each entry's kernels in."""
    calls, setup = {}, {}
    for path in _PATHS:
        for k, f in ours.items():
            calls[k + _suffix(path)] = f
            if len(_PATHS) > 1:
                setup[k + _suffix(path)] = lambda p=path: _use(p)
    return calls, setup


def overhead(sizes, budget):
    """Per call of exact GELU, float32: the op, the functional form and
    F.gelu under inference_mode, with autograd (requires_grad) and under
    no_grad (an input that requires grad, gradients off), against
    the ufunc on the same memory and torch.relu (a C++ op's cost), at one
    thread and at torch's count (on a loaded machine torch's parallel
    regions can wait milliseconds for a descheduled thread)."""
    rows, out = [], {}
    for n, nt in ((n, nt) for nt in _thread_counts() for n in sizes):
        x = torch.randn(n)
        xg = x.clone().requires_grad_()
        xn, on = x.numpy(), np.empty(n, np.float32)
        ours = {
            "inference_mode": _per_path({"op": lambda: torch.ops.gelu_ext.gelu(x),
                                         "functional": lambda: GF.gelu(x)}),
            "autograd": _per_path({"op": lambda: torch.ops.gelu_ext.gelu(xg),
                                   "functional": lambda: GF.gelu(xg)}),
            "no_grad": _per_path({"op": lambda: torch.ops.gelu_ext.gelu(xg),
                                  "functional": lambda: GF.gelu(xg)}),
        }
        modes = {
            "inference_mode": {
                "ufunc": lambda: gelu_ext.fast_gelu(xn),
                "ufunc out=": lambda: gelu_ext.fast_gelu(xn, out=on),
                "torch.relu": lambda: torch.relu(x),
                "torch F.gelu": lambda: torch.nn.functional.gelu(x),
                **ours["inference_mode"][0],
            },
            "autograd": {
                "torch F.gelu": lambda: torch.nn.functional.gelu(xg),
                **ours["autograd"][0],
            },
            # a parameter-fed input under no_grad, as generate() and pipelines run
            "no_grad": {
                "torch F.gelu": lambda: torch.nn.functional.gelu(xg),
                **ours["no_grad"][0],
            },
        }
        for mode, calls in modes.items():
            # (set_grad_enabled sets the mode when made: made after
            # inference_mode is entered, so each one restores what it found)
            with _Threads(nt), torch.inference_mode(mode == "inference_mode"), \
                    torch.set_grad_enabled(mode != "no_grad"):
                t = _common.measure(calls, budget=budget, setup=ours[mode][1])
            base = t["torch F.gelu"].median
            out[f"{n} {nt} {mode}"] = {k: v.median for k, v in t.items()}
            for k, v in t.items():
                rows.append(f"2^{int(np.log2(n)):<3d} {nt:3d} {mode:15s} {k:14s} {us(v)}  "
                            f"{(v.median - base) * 1e6:+9.1f}")
    table("Per-call time of exact GELU, float32 (median us; last column: minus F.gelu's "
          "in the same mode; goal: ours within +1.5 us under inference_mode, +3 with autograd)",
          rows, "size  thr mode            entry             median  over F.gelu")
    return out


def _minflt():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def alternating(sizes, budget):
    """A torch op, then the GELU, both allocating (inference_mode), as in a
    model: ours against F.gelu, with minor page faults per pair.  The GELU's
    share is the pair minus the torch op alone; ratio torch/ours of it."""
    rows, out = [], {}
    for dtype, nt, n in ((d, nt, n) for d in (torch.float32, torch.bfloat16, torch.float16)
                         for nt in _thread_counts() for n in sizes):
        x = torch.randn(n, dtype=dtype)
        with _Threads(nt), torch.inference_mode():
            ours, setup = _per_path({"add, ours": lambda: GF.gelu(torch.add(x, 1.0))})
            calls = {"add": lambda: torch.add(x, 1.0),
                     "add, F.gelu": lambda: torch.nn.functional.gelu(torch.add(x, 1.0)),
                     **ours}
            t = _common.measure(calls, min_sample=1e-3, budget=budget, setup=setup)
            faults = {}
            for k, f in calls.items():
                reps = max(3, min(200, int(0.05 / max(t[k].median, 1e-6))))
                if k in setup:
                    setup[k]()
                f()
                f0 = _minflt()
                for _ in range(reps):
                    f()
                faults[k] = (_minflt() - f0) / reps
        add = t["add"].median
        g_torch, g_ours = t["add, F.gelu"].median - add, t["add, ours"].median - add
        dt = _name(dtype)
        out[f"{dt} {nt} {n}"] = {"median": {k: v.median for k, v in t.items()}, "faults": faults}
        row = (f"{dt:9s} {nt:3d} 2^{int(np.log2(n)):<3d} {add * 1e6:9.1f} {g_torch * 1e6:9.1f} "
               f"{g_ours * 1e6:9.1f}   {g_torch / g_ours if g_ours > 0 else float('nan'):5.2f}x"
               f" {faults['add, F.gelu']:8.1f} {faults['add, ours']:8.1f}")
        if "add, ours C++" in t:
            g_cpp = t["add, ours C++"].median - add
            row += (f"   {g_cpp * 1e6:9.1f}   {g_torch / g_cpp if g_cpp > 0 else float('nan'):5.2f}x"
                    f" {faults['add, ours C++']:8.1f}")
        rows.append(row)
    header = "dtype     thr size       add    F.gelu      ours   torch/ours  faults(torch) faults(ours)"
    if len(_PATHS) > 1:
        header += "    ours C++  torch/C++  faults(C++)"
    table("Alternating: y = x + 1 (torch), then GELU(y), both allocating, inference_mode "
          "(median us; GELU = pair - add alone; faults: minor page faults per pair)", rows, header)
    return out


def ffn(tokens, d, h, dtype):
    torch.manual_seed(0)
    lin1, lin2 = torch.nn.Linear(d, h).to(dtype), torch.nn.Linear(h, d).to(dtype)
    x = torch.randn(tokens, d, dtype=dtype)
    return lin1, lin2, x


def ffn_block(tokens, d, h, budget):
    """Linear d->h, GELU, Linear h->d over ``tokens`` rows: torch's GELU vs ours."""
    res = {}
    rows = []
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        lin1, lin2, x = ffn(tokens, d, h, dtype)
        xg = x.clone().requires_grad_()
        acts = {"torch": torch.nn.GELU(), "ours": gt.GELU()}

        def fwd(act):
            def f():
                with torch.inference_mode():
                    return lin2(act(lin1(x)))
            return f

        def train(act):
            def f():
                lin1.zero_grad(set_to_none=True)
                lin2.zero_grad(set_to_none=True)
                lin2(act(lin1(xg))).sum().backward()
            return f

        def act_only(act):
            pre = lin1(x).detach()

            def f():
                with torch.inference_mode():
                    return act(pre)
            return f

        modes = [("GELU alone", act_only), ("forward", fwd), ("forward+backward", train)]
        if dtype == torch.float16:
            # torch's CPU float16 matmuls are ~30x its float32 ones: a float16
            # training step would time torch's Linear backward, not GELU
            modes = modes[:2]
        for mode, make in modes:
            t = _common.measure({k: make(a) for k, a in acts.items()}, min_sample=0.0,
                                min_repeats=5, max_repeats=15, budget=budget)
            ratio = t["torch"].median / t["ours"].median
            res[(_name(dtype), mode)] = {k: v.median for k, v in t.items()}
            rows.append(f"{_name(dtype):9s} {mode:17s} {t['torch'].median * 1e3:9.2f} "
                        f"{t['ours'].median * 1e3:9.2f}   {ratio:5.2f}x")
    table(f"FFN block: Linear {d}->{h}, GELU, Linear {h}->{d}, {tokens} tokens (median ms)",
          rows, "dtype     mode                  torch      ours   torch/ours")
    return res


class UnfusedMLP(torch.nn.Module):
    """LLaMA's MLP as transformers writes it."""

    def __init__(self, d, h):
        super().__init__()
        self.gate_proj = torch.nn.Linear(d, h, bias=False)
        self.up_proj = torch.nn.Linear(d, h, bias=False)
        self.down_proj = torch.nn.Linear(h, d, bias=False)
        self.act_fn = torch.nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


def gated_step(tokens, d, h, budget):
    """One forward+backward of a LLaMA-style MLP: transformers' unfused form
    vs ``patch_model(gated_mlp=True)``'s fused SwiGLU, float32 and bfloat16."""
    rows, res = [], {}
    for dtype in (torch.float32, torch.bfloat16):
        torch.manual_seed(0)
        ref = UnfusedMLP(d, h).to(dtype)
        x = torch.randn(tokens, d, dtype=dtype, requires_grad=True)
        wrapper = torch.nn.Sequential(UnfusedMLP(d, h).to(dtype))
        wrapper.load_state_dict(torch.nn.Sequential(ref).state_dict())
        gt.patch_model(wrapper, gated_mlp=True)
        fused = wrapper[0]

        def step(m):
            def f():
                m.zero_grad(set_to_none=True)
                m(x).sum().backward()
            return f

        t = _common.measure({"torch": step(ref), "ours": step(fused)}, min_sample=0.0,
                            min_repeats=5, max_repeats=15, budget=budget)
        res[_name(dtype)] = {k: v.median for k, v in t.items()}
        rows.append(f"{_name(dtype):9s} {t['torch'].median * 1e3:9.2f} "
                    f"{t['ours'].median * 1e3:9.2f}   {t['torch'].median / t['ours'].median:5.2f}x")
    table(f"Gated MLP training step (SwiGLU), {d}->{h}->{d}, {tokens} tokens (median ms)",
          rows, "dtype         torch      ours   torch/ours")
    return res


def _load_minilm():
    """(transformers, BertModel class, model dir) or None, saying why."""
    try:
        import transformers
        from gelu_ext.jobs import bert
        model_dir = bert.check_model_dir(bert.default_model_dir())
    except (Exception, SystemExit) as e:          # the wheel or transformers is missing
        print(f"\nMiniLM: skipped ({type(e).__name__}: {e})")
        return None
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    return transformers, model_dir


_PAIRS = {}


def _minilm_pair(loaded, dtype=torch.float32):
    """(unpatched, patched) MiniLM in ``dtype``, loaded once per dtype."""
    if dtype in _PAIRS:
        return _PAIRS[dtype]
    transformers, model_dir = loaded
    models = []
    for _ in range(2):
        m = transformers.BertModel.from_pretrained(str(model_dir), local_files_only=True)
        models.append(m.to(dtype).eval())
    gt.patch_model(models[1])
    _PAIRS[dtype] = models
    return models


def _minilm_batch(batch, seq, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1000, 30000, (batch, seq), generator=g)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids),
            "token_type_ids": torch.zeros_like(ids)}


def minilm(loaded, budget, batch_size):
    """The whole all-MiniLM-L6-v2 encoder, inference, unpatched vs patched."""
    if loaded is None:
        return None
    plain, patched = _minilm_pair(loaded)
    batch = _minilm_batch(batch_size, 128)

    def run(m):
        def f():
            with torch.inference_mode():
                return m(**batch).last_hidden_state
        return f

    t = _common.measure({"torch": run(plain), "ours": run(patched)}, min_sample=0.0,
                        min_repeats=5, max_repeats=15, budget=budget)
    table(f"all-MiniLM-L6-v2 encoder, transformers {loaded[0].__version__}, batch {batch_size} "
          f"x 128 tokens, float32 (median ms)",
          [f"{t['torch'].median * 1e3:9.2f} {t['ours'].median * 1e3:9.2f}   "
           f"{t['torch'].median / t['ours'].median:5.2f}x"],
          "unpatched   patched   unpatched/patched")
    return {k: v.median for k, v in t.items()}


def _sentences():
    """The sentences of the BERT job's pairs (gelu_ext/jobs/data), 120 of them."""
    from importlib import resources
    text = resources.files("gelu_ext.jobs.data").joinpath("sentence_pairs.tsv").read_text("utf-8")
    rows = [line.split("\t") for line in text.splitlines()
            if line and not line.startswith("#") and not line.startswith("label")]
    return [s for r in rows for s in r[1:3]]


def encode(loaded, budget, thread_counts, batch_size=32, count=None, dtypes=(torch.float32, torch.bfloat16)):
    """sentence-transformers' ``encode`` -- the way most users run this model
    -- unpatched vs patched, in each of ``dtypes``, at each thread count."""
    if loaded is None:
        return None
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        print(f"\nencode: skipped (sentence-transformers: {e})")
        return None
    sentences = _sentences()[:count]
    rows, res = [], {}
    for dtype in dtypes:
        plain, patched = (SentenceTransformer(str(loaded[1]), device="cpu").to(dtype) for _ in range(2))
        gt.patch_model(patched)
        for nt in thread_counts:
            with _Threads(nt):
                t = _common.measure(
                    {m: (lambda st=st: st.encode(sentences, batch_size=batch_size,
                                                 convert_to_numpy=False))
                     for m, st in (("torch", plain), ("ours", patched))},
                    min_sample=0.0, min_repeats=5, max_repeats=15, budget=budget)
            dt = _name(dtype)
            res[f"{dt} {nt}"] = {k: v.median for k, v in t.items()}
            rows.append(f"{dt:9s} {nt:3d} {t['torch'].median * 1e3:9.2f} {t['ours'].median * 1e3:9.2f}"
                        f"   {t['torch'].median / t['ours'].median:5.2f}x")
    table(f"sentence-transformers encode of {len(sentences)} sentences, batch {batch_size} "
          f"(median ms; unpatched / patched)", rows, "dtype     thr  unpatched   patched   ratio")
    return res


_GELU_EVENTS = ("aten::gelu", "gelu_ext::gelu")


def _label(ev, labels):
    """The record_function label of ``labels`` that encloses profiler event ``ev``."""
    p = ev.cpu_parent
    while p is not None and p.name not in labels:
        p = p.cpu_parent
    return None if p is None else p.name


def _count_faults(model, faults, current):
    """Hooks on each of MiniLM's activation modules appending the minor page
    faults of every call (the whole process's: torch's worker threads
    touch output pages too) to ``faults[current[0]]``; returns their handles."""
    def pre(mod, args):
        mod._gx_minflt = _minflt()

    def post(mod, args, out):
        faults[current[0]].append(_minflt() - mod._gx_minflt)

    act = [layer.intermediate.intermediate_act_fn for layer in model.encoder.layer]
    return [h for a in act for h in (a.register_forward_pre_hook(pre), a.register_forward_hook(post))]


def in_model(loaded, shapes, dtypes, thread_counts, rounds):
    """torch.profiler time per GELU call inside the real MiniLM, unpatched
    (aten::gelu) against patched (gelu_ext::gelu, on each kernel path of
    --kernels), inference_mode: the median over calls of each event's total
    CPU time (its own allocation included; the module and functional
    wrappers around the op are not), the forwards alternating in one
    profiled session, each under a record_function naming its entry, at
    least two rounds so that each side runs both first and second.  Also
    the whole forward's median, unpatched over patched, and the median
    minor page faults per GELU call (forward hooks on the activation
    modules): at 32x128 a call's output (12.6 MB in float16) can land on
    heap pages glibc has just returned to the kernel, and faulting them
    back in (~1.7 us a page here) can double the call -- a property of
    where the allocator put the output, not of the kernel."""
    if loaded is None:
        return None
    from torch.profiler import ProfilerActivity, profile, record_function
    rows, out = [], {}
    saved = torch.get_num_threads()
    for dtype in dtypes:
        plain, patched = _minilm_pair(loaded, dtype)
        dt = _name(dtype)
        entries = [("torch", plain, None)] + [("ours" + _suffix(p), patched, p) for p in _PATHS]
        labels = {k for k, _, _ in entries}
        for nt in thread_counts:
            torch.set_num_threads(nt)
            gelu_ext.set_num_threads(nt)
            for b, s in shapes:
                batch = _minilm_batch(b, s)
                n = max(2, rounds // max(1, (b * s) // 256))
                walls = {k: [] for k in labels}
                per = {k: [] for k in labels}
                faults = {k: [] for k in labels}
                with torch.inference_mode():
                    for _, m, path in entries:
                        if path is not None and len(_PATHS) > 1:
                            _use(path)
                        m(**batch)                      # warm-up
                    current = [None]
                    hooks = [h for m in {id(m): m for _, m, _ in entries}.values()
                             for h in _count_faults(m, faults, current)]
                    with profile(activities=[ProfilerActivity.CPU]) as prof:
                        for r in range(n):
                            for k, m, path in (entries if r % 2 == 0 else entries[::-1]):
                                if path is not None and len(_PATHS) > 1:
                                    _use(path)
                                current[0] = k
                                t0 = time.perf_counter()
                                with record_function(k):
                                    m(**batch)
                                walls[k].append(time.perf_counter() - t0)
                for h in hooks:
                    h.remove()
                for ev in prof.events():
                    if ev.name in _GELU_EVENTS:
                        k = _label(ev, labels)
                        if k is not None:
                            per[k].append(ev.cpu_time_total)
                g = {k: float(np.median(v)) if v else float("nan") for k, v in per.items()}
                w = {k: float(np.median(v)) for k, v in walls.items()}
                fl = {k: float(np.median(v)) if v else float("nan") for k, v in faults.items()}
                out[f"{dt} {nt} {b}x{s}"] = {"gelu_us": g, "forward_s": w, "calls": len(per["ours"]),
                                            "gelu_faults": fl}
                row = (f"{dt:9s} {nt:3d}  {b:3d}x{s:<4d} {b * s * 1536:9d} {g['torch']:9.1f} "
                       f"{g['ours']:9.1f}   {g['torch'] / g['ours']:5.2f}x   {w['torch'] * 1e3:8.2f} "
                       f"{w['ours'] * 1e3:8.2f}  {w['torch'] / w['ours']:5.2f}x   "
                       f"{fl['torch']:6.0f} {fl['ours']:6.0f}")
                if "ours C++" in g:
                    row += (f"   {g['ours C++']:9.1f}   {g['torch'] / g['ours C++']:5.2f}x "
                            f"{w['ours C++'] * 1e3:8.2f}  {w['torch'] / w['ours C++']:5.2f}x")
                rows.append(row)
    torch.set_num_threads(saved)
    gelu_ext.set_num_threads(None)
    header = ("dtype     thr  batch x seq  elements  aten::gelu  ours   torch/ours  "
              "fwd torch  fwd ours  ratio   faults: torch  ours")
    if len(_PATHS) > 1:
        header += "   ours C++  torch/C++  fwd C++  ratio"
    table("Inside all-MiniLM-L6-v2, inference_mode: torch.profiler time per GELU call "
          "(median us) and the whole forward (median ms), unpatched vs patched, interleaved",
          rows, header)
    return out


# How the compiled rows compile: torch.compile's default, its
# max-autotune-no-cudagraphs mode, and inductor's freezing (inference: the
# weights become constants, oneDNN-packed, and a linear's pointwise
# successor can become a oneDNN post-op -- bfloat16's GELU does, ours cannot).
_COMPILE_MODES = ("eager", "default", "max-autotune-no-cudagraphs", "freezing")


def _cpp_stats():
    from gelu_ext.torch import _cpp
    if hasattr(_cpp, "_threading_stats"):
        return _cpp._threading_stats()
    return {"threaded": 0, "stalls": 0, "serial": 0}     # a tree before the back-off


def _compile(m, mode):
    if mode == "eager":
        return m
    if mode == "max-autotune-no-cudagraphs":
        return torch.compile(m, mode=mode)
    return torch.compile(m)


def _bert_ffn_pair(dtype):
    """(unpatched, patched) BERT-base FFN: Linear 768->3072, GELU, Linear 3072->768."""
    models = []
    for _ in range(2):
        torch.manual_seed(0)
        models.append(torch.nn.Sequential(torch.nn.Linear(768, 3072), torch.nn.GELU(),
                                          torch.nn.Linear(3072, 768)).to(dtype).eval())
    gt.patch_model(models[1])
    return models


def compiled(loaded, budget, dtypes=(torch.float32,), modes=("eager", "default"),
             models=("minilm",), thread_counts=None, idle_wait=60.0):
    """Compiled patched against compiled unpatched, each of ``modes``
    (_COMPILE_MODES; eager: not compiled) in each of ``dtypes`` at each of
    ``thread_counts``: all-MiniLM-L6-v2 at 8 x 64 ("minilm") and a BERT-base
    FFN over 512 tokens ("ffn"), inference (no_grad: freezing needs it).
    Each (model, dtype, mode) compiles its pair afresh (torch._dynamo.reset:
    the pairs share one forward, and dynamo's cache per code object would
    fill) and times it at every thread count, the machine idle first where
    it becomes so within ``idle_wait`` seconds; the "other" column is the
    CPUs other processes kept busy meanwhile (on 2 cores every parallel
    region can then wait for a descheduled thread, and a graph with one
    more region loses more)."""
    thread_counts = thread_counts or _thread_counts()
    rows, res = [], {}
    for model in models:
        if model == "minilm" and loaded is None:
            continue
        for dtype in dtypes:
            if model == "minilm":
                plain, patched = _minilm_pair(loaded, dtype)
                batch = _minilm_batch(8, 64)
                shape = "8 x 64"

                def call(m):
                    return lambda: m(**batch).last_hidden_state
            else:
                plain, patched = _bert_ffn_pair(dtype)
                x = torch.randn(512, 768, dtype=dtype, generator=torch.Generator().manual_seed(0))
                shape = "512 x 768"

                def call(m):
                    return lambda: m(x)
            for mode in modes:
                torch._dynamo.reset()
                t0 = time.perf_counter()
                calls = {}
                with torch._inductor.config.patch(freezing=mode == "freezing"), torch.no_grad():
                    for k, m in (("unpatched", plain), ("patched", patched)):
                        f = call(_compile(m, mode))
                        f()                                    # compiles
                        calls[k] = f
                compile_s = time.perf_counter() - t0

                def run(f):
                    def g():
                        with torch.no_grad():
                            return f()
                    return g

                timed = {k: run(f) for k, f in calls.items()}
                for nt in thread_counts:
                    with _Threads(nt):
                        _common.OtherLoad.wait(idle_wait)
                        s0 = _cpp_stats()
                        with _common.OtherLoad() as load:
                            t = _common.measure(timed, min_sample=0.0, min_repeats=15,
                                                max_repeats=41, budget=budget)
                        s1 = _cpp_stats()
                    u, p = t["unpatched"].median, t["patched"].median
                    other = float("nan") if load.cpus is None else load.cpus
                    serial = {k: s1[k] - s0[k] for k in s1}
                    res[f"{model} {_name(dtype)} {mode} {nt}"] = {
                        "unpatched": u, "patched": p, "compile_s": compile_s, "other_cpus": other,
                        "cpp_threading": serial}
                    calls = serial["threaded"] + serial["serial"]
                    rows.append(f"{model:7s} {shape:10s} {_name(dtype):9s} {mode:27s} {nt:3d} "
                                f"{u * 1e3:9.2f} {p * 1e3:9.2f}   {u / p:5.2f}x   {other:5.2f}"
                                f"   {compile_s:6.1f}   "
                                + (f"{serial['serial']:5d}/{calls}" if calls else "    -"))
                    _common.progress(rows[-1])
    torch._dynamo.reset()
    table("Compiled (inductor) unpatched vs patched, inference: all-MiniLM-L6-v2 and a BERT-base "
          "FFN (Linear 768->3072, GELU, Linear 3072->768); median ms, interleaved; ratio "
          "unpatched / patched (> 1: patched faster); other: CPUs other processes kept busy "
          "meanwhile; compile: seconds for both models; serial: our large calls run on one "
          "thread after a stall, of all (the C++ kernels' back-off, csrc/ops.cpp)",
          rows, "model   shape      dtype     mode                        thr unpatched   "
                "patched   ratio   other  compile   serial")
    return res


def threads(tokens, d, h, repeats):
    """The FFN's GELU right after its matmul (torch's threads just busy), with
    gelu_ext's pool at one thread and at torch's count: the ufunc on the
    matmul's output (``gelu_ext.set_num_threads`` governs it; the ops follow
    ``torch.get_num_threads()``)."""
    lin1, _, x = ffn(tokens, d, h, torch.float32)
    counts = sorted({1, torch.get_num_threads()})
    with torch.inference_mode():
        holder = {}
        med, pool = _common.medians_after(lambda: holder.__setitem__("h", lin1(x)),
                                          lambda: gelu_ext.fast_gelu(holder["h"].numpy()), counts, repeats)
    table(f"GELU of the FFN right after its matmul, torch threads {torch.get_num_threads()} "
          f"(median ms){' ' + pool.note if pool.note else ''}",
          [f"{k:7d} {v * 1e3:9.3f}" for k, v in med.items()], "gelu_ext threads    ms")
    return med


def _shapes(text):
    """'1x16,8x64' -> ((1, 16), (8, 64))."""
    out = []
    for t in text.split(","):
        try:
            b, q = (int(v) for v in t.lower().split("x"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"each shape is BATCHxSEQ, e.g. 8x64, got {t!r}")
        if b < 1 or q < 1:
            raise argparse.ArgumentTypeError(f"batch and sequence must be at least 1, got {t!r}")
        out.append((b, q))
    return tuple(out)


def _dtypes(text):
    """'float16,bfloat16' -> (torch.float16, torch.bfloat16)."""
    names = ("float32", "bfloat16", "float16")
    bad = [t for t in text.split(",") if t not in names]
    if bad:
        raise argparse.ArgumentTypeError(f"{', '.join(bad)}: not one of {', '.join(names)}")
    return tuple(getattr(torch, t) for t in text.split(","))


def _modes(text):
    """'default,freezing' -> ('default', 'freezing')."""
    bad = [t for t in text.split(",") if t not in _COMPILE_MODES]
    if bad:
        raise argparse.ArgumentTypeError(f"{', '.join(bad)}: not one of {', '.join(_COMPILE_MODES)}")
    return tuple(text.split(","))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    p.add_argument("--tokens", type=_common.int_at_least(1), default=4096,
                   help="rows of the FFN input (batch x sequence), default 4096")
    p.add_argument("--json", help="write the medians here")
    p.add_argument("--only-call-costs", action="store_true",
                   help="only the tables of what one GELU call costs (per call, alternating, in-model, "
                        "encode, compiled)")
    p.add_argument("--kernels", choices=("python", "cpp", "both"), default=None,
                   help="the ops' CPU kernels for 'ours': those gelu_ext.torch chose at import "
                        "(default: the C++ ones where built for this torch), the Python ones, the "
                        "C++ ones (built on first use where not installed), or both side by side "
                        "in the per-call, alternating and in-model tables (the other tables then "
                        "run the Python ones)")
    p.add_argument("--in-model", metavar="SHAPES", type=_shapes,
                   help="only the in-model table, at these batch x seq shapes (e.g. 1x16,8x64)")
    p.add_argument("--compiled", action="store_true",
                   help="only the compiled-model rows: MiniLM and a BERT-base FFN, in each of "
                        "--dtypes and --modes, at 1 and 2 threads")
    p.add_argument("--idle-wait", type=float, default=60.0, metavar="SECONDS",
                   help="with --compiled: how long each row waits for an idle machine (default 60)")
    p.add_argument("--models", type=lambda t: tuple(t.split(",")), default=("minilm", "ffn"),
                   help="with --compiled: minilm, ffn or both (default)")
    p.add_argument("--dtypes", type=_dtypes, default=None,
                   help="with --in-model or --compiled: its dtypes, default float32,bfloat16,float16 "
                        "(--compiled: float32,bfloat16)")
    p.add_argument("--modes", type=_modes, default=_COMPILE_MODES,
                   help=f"with --compiled: how to compile, default {','.join(_COMPILE_MODES)}")
    a = p.parse_args(argv)
    import gelu_ext.torch
    kernels = a.kernels or gelu_ext.torch.kernels()
    _PATHS[:] = {"python": ["python"], "cpp": ["cpp"], "both": ["python", "cpp"]}[kernels]
    if kernels != "both":
        _use(kernels)
    info = _common.machine_info(("torch",))
    for line in _common.header_lines(info):
        print(line)
    print(f"torch   : {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
          f"CPU capability {torch.backends.cpu.get_cpu_capability()}")
    print(f"ours    : the {' and '.join({'python': 'Python', 'cpp': 'C++'}[k] for k in _PATHS)} kernels"
          + (" ('ours' the Python ones, 'ours C++' the C++ ones)" if len(_PATHS) > 1 else ""))
    if a.quick:
        sizes, tokens, d, h, budget, mb, reps = (1 << 8,), 16, 32, 128, 0.05, 2, 3
        alt_sizes, shapes, dtypes, counts, rounds = (1 << 12,), ((1, 16),), (torch.float32,), (1,), 2
    else:
        sizes, tokens, d, h, budget, mb, reps = (1 << 8, 1 << 14), a.tokens, 768, 3072, 4.0, 32, 41
        alt_sizes = (1 << 12, 1 << 16, 1 << 20, 1 << 22)
        shapes = ((1, 16), (1, 128), (8, 64), (32, 128))
        dtypes, counts, rounds = (torch.float32, torch.bfloat16, torch.float16), (1, 2), 12
    loaded = _load_minilm()
    if a.in_model or a.compiled:
        doc = {"machine": info}
        if a.in_model:
            doc["in_model"] = in_model(loaded, a.in_model, a.dtypes or dtypes, counts, rounds)
        if a.compiled:
            doc["compiled"] = compiled(loaded, budget, dtypes=a.dtypes or (torch.float32, torch.bfloat16),
                                       modes=a.modes, models=a.models, thread_counts=counts,
                                       idle_wait=a.idle_wait)
        if a.json:
            _common.write_json(a.json, doc)
        return 0
    doc = {"machine": info,
           "overhead": overhead(sizes, budget),
           "alternating": alternating(alt_sizes, budget),
           "in_model": in_model(loaded, shapes, dtypes, counts, rounds)}
    if len(_PATHS) > 1:
        _use("python")
    # (the smoke run loads the model twice, not four times: one dtype)
    doc["encode"] = (encode(loaded, budget, counts, batch_size=4, count=8, dtypes=dtypes) if a.quick
                     else encode(loaded, budget, counts))
    if a.only_call_costs:
        doc["compiled"] = None if a.quick else compiled(loaded, budget, idle_wait=0)
    else:
        doc.update({"ffn": {" ".join(k): v for k, v in ffn_block(tokens, d, h, budget).items()},
                    "gated": gated_step(tokens, d, h * 2 // 3, budget),
                    "minilm": minilm(loaded, budget, mb),
                    "threads": threads(tokens, d, h, reps),
                    "compiled": None if a.quick else compiled(loaded, budget, idle_wait=0)})
    if a.json:
        _common.write_json(a.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
