"""gelu_ext.torch measured where it is used (issue 40): the custom ops'
per-call overhead over the bare ufunc, a BERT-size feed-forward block with
our GELU against torch's own (forward and forward + backward, float32 and
bfloat16), a LLaMA-style gated MLP training step fused (SwiGLU) against
unfused, the whole all-MiniLM-L6-v2 encoder patched against unpatched (when
its wheel and transformers are installed), and the FFN with gelu_ext's pool
at one thread and at torch's thread count.

Usage::

    python bench/torch_layer.py [--quick] [--tokens 4096] [--json FILE]

Every table compares entries timed side by side in one process, interleaved
(``gelu_ext.jobs._common.measure``); ratios are torch's time over ours (> 1:
ours is faster).  The ISA path is gelu_ext's best unless GELU_EXT_ISA caps it
(e.g. GELU_EXT_ISA=avx2); torch picks its own (ATEN_CPU_CAPABILITY=avx2 holds
it to AVX2).  ``--quick`` shrinks every size so the script runs in seconds
(CI keeps it from rotting; its numbers mean nothing).
"""
import argparse
import sys

import numpy as np

import gelu_ext
from gelu_ext.jobs import _common

torch = _common.require("torch", "torch")
import gelu_ext.torch as gt                          # noqa: E402
from gelu_ext.torch import functional as GF          # noqa: E402


def us(t):
    return f"{t.median * 1e6:9.1f}"


def table(title, rows, header):
    print(f"\n{title}")
    print(header)
    for r in rows:
        print(r)
    sys.stdout.flush()


def overhead(sizes, budget):
    """Per call of exact GELU, float32: the op in each grad mode against the
    ufunc on the same memory (allocating, and into a preallocated out)."""
    rows, out = [], {}
    for n in sizes:
        x = torch.randn(n)
        xg = x.clone().requires_grad_()
        xn, on = x.numpy(), np.empty(n, np.float32)

        def in_inference():
            with torch.inference_mode():
                return torch.ops.gelu_ext.gelu(x)

        calls = {
            "ufunc": lambda: gelu_ext.fast_gelu(xn),
            "ufunc out=": lambda: gelu_ext.fast_gelu(xn, out=on),
            "op": lambda: torch.ops.gelu_ext.gelu(x),
            "op inference_mode": in_inference,
            "op requires_grad": lambda: torch.ops.gelu_ext.gelu(xg),
            "functional requires_grad": lambda: GF.gelu(xg),
            "torch F.gelu": lambda: torch.nn.functional.gelu(x),
        }
        t = _common.measure(calls, budget=budget)
        base = t["ufunc"].median
        out[n] = {k: v.median for k, v in t.items()}
        for k, v in t.items():
            rows.append(f"2^{int(np.log2(n)):<3d} {k:26s} {us(v)}  {(v.median - base) * 1e6:+9.1f}")
    table("Per-call time of exact GELU, float32 (median us; last column: minus the allocating ufunc's)",
          rows, "size  entry                         median  over ufunc")
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
            res[(str(dtype).split(".")[1], mode)] = {k: v.median for k, v in t.items()}
            rows.append(f"{str(dtype).split('.')[1]:9s} {mode:17s} {t['torch'].median * 1e3:9.2f} "
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
        res[str(dtype).split(".")[1]] = {k: v.median for k, v in t.items()}
        rows.append(f"{str(dtype).split('.')[1]:9s} {t['torch'].median * 1e3:9.2f} "
                    f"{t['ours'].median * 1e3:9.2f}   {t['torch'].median / t['ours'].median:5.2f}x")
    table(f"Gated MLP training step (SwiGLU), {d}->{h}->{d}, {tokens} tokens (median ms)",
          rows, "dtype         torch      ours   torch/ours")
    return res


def minilm(budget, batch_size):
    """The whole all-MiniLM-L6-v2 encoder, inference, unpatched vs patched."""
    try:
        import transformers
        from gelu_ext.jobs import bert
        model_dir = bert.check_model_dir(bert.default_model_dir())
    except Exception as e:               # the wheel or transformers is missing
        print(f"\nMiniLM encoder: skipped ({type(e).__name__}: {e})")
        return None
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    plain = transformers.BertModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    patched = transformers.BertModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    gt.patch_model(patched)
    tok = bert.load_tokenizer(model_dir, 128)
    texts = (list(bert.FIDELITY_SENTENCES) * batch_size)[:batch_size]
    ids, mask, types = bert.tokenize(tok, texts, pad_to=128)
    batch = {"input_ids": torch.from_numpy(np.asarray(ids, np.int64)),
             "attention_mask": torch.from_numpy(np.asarray(mask, np.int64)),
             "token_type_ids": torch.from_numpy(np.asarray(types, np.int64))}

    def run(m):
        def f():
            with torch.inference_mode():
                return m(**batch).last_hidden_state
        return f

    t = _common.measure({"torch": run(plain), "ours": run(patched)}, min_sample=0.0,
                        min_repeats=5, max_repeats=15, budget=budget)
    table(f"all-MiniLM-L6-v2 encoder, transformers {transformers.__version__}, batch {batch_size} "
          f"x 128 tokens, float32 (median ms)",
          [f"{t['torch'].median * 1e3:9.2f} {t['ours'].median * 1e3:9.2f}   "
           f"{t['torch'].median / t['ours'].median:5.2f}x"],
          "unpatched   patched   unpatched/patched")
    return {k: v.median for k, v in t.items()}


def threads(tokens, d, h, repeats):
    """The FFN's GELU right after its matmul (torch's threads just busy), with
    gelu_ext at one thread and at torch's count."""
    lin1, _, x = ffn(tokens, d, h, torch.float32)
    counts = sorted({1, torch.get_num_threads()})
    with torch.inference_mode():
        holder = {}
        med, pool = _common.medians_after(lambda: holder.__setitem__("h", lin1(x)),
                                          lambda: GF.gelu(holder["h"]), counts, repeats)
    table(f"GELU of the FFN right after its matmul, torch threads {torch.get_num_threads()} "
          f"(median ms){' ' + pool.note if pool.note else ''}",
          [f"{k:7d} {v * 1e3:9.3f}" for k, v in med.items()], "gelu_ext threads    ms")
    return med


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    p.add_argument("--tokens", type=_common.int_at_least(1), default=4096,
                   help="rows of the FFN input (batch x sequence), default 4096")
    p.add_argument("--json", help="write the medians here")
    a = p.parse_args(argv)
    info = _common.machine_info(("torch",))
    for line in _common.header_lines(info):
        print(line)
    print(f"torch   : {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
          f"CPU capability {torch.backends.cpu.get_cpu_capability()}")
    if a.quick:
        sizes, tokens, d, h, budget, mb, reps = (1 << 10,), 16, 32, 128, 0.05, 2, 3
    else:
        sizes, tokens, d, h, budget, mb, reps = (1 << 14, 1 << 20), a.tokens, 768, 3072, 4.0, 32, 41
    doc = {"machine": info,
           "overhead": overhead(sizes, budget),
           "ffn": {" ".join(k): v for k, v in ffn_block(tokens, d, h, budget).items()},
           "gated": gated_step(tokens, d, h * 2 // 3, budget),
           "minilm": minilm(budget, mb),
           "threads": threads(tokens, d, h, reps)}
    if a.json:
        _common.write_json(a.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
