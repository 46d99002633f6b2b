"""The LLaMA-style gated MLP training step (bench/torch_layer.py gated_step's
modules: 768 -> 2048 -> 768, 4096 tokens), transformers' unfused form against
``patch_model(gated_mlp=True)``'s fused SwiGLU, interleaved step by step:
forward and backward wall time, minor page faults of each, process CPU time.

    python bench/torch_cpp/gated_step.py THREADS DTYPE      # e.g. 1 bfloat16
"""
import os, sys, time, resource, statistics, torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import torch_layer as TL
import gelu_ext.torch as gt
nt = int(sys.argv[1]); dt = getattr(torch, sys.argv[2]); torch.set_num_threads(nt)
d, h, tokens = 768, 2048, 4096
torch.manual_seed(0)
ref = TL.UnfusedMLP(d, h).to(dt)
x = torch.randn(tokens, d, dtype=dt, requires_grad=True)
wrapper = torch.nn.Sequential(TL.UnfusedMLP(d, h).to(dt)); wrapper.load_state_dict(torch.nn.Sequential(ref).state_dict())
gt.patch_model(wrapper, gated_mlp=True); fused = wrapper[0]
print(type(fused).__name__, gt.kernels(), nt, dt)
def minflt(): return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def cpu(): return time.process_time()
res = {}
for r in range(7):
    for name, m in (("torch", ref), ("ours", fused)) if r % 2 == 0 else (("ours", fused), ("torch", ref)):
        m.zero_grad(set_to_none=True); x.grad = None
        f0, c0, t0 = minflt(), cpu(), time.perf_counter()
        y = m(x).sum()
        t1, f1 = time.perf_counter(), minflt()
        y.backward()
        t2, f2, c2 = time.perf_counter(), minflt(), cpu()
        res.setdefault(name, []).append((t1 - t0, t2 - t1, f1 - f0, f2 - f1, c2 - c0))
for name, v in res.items():
    v = v[1:]
    med = [statistics.median(c[i] for c in v) * (1e3 if i in (0, 1, 4) else 1) for i in range(5)]
    print(name, "fwd %.1f ms bwd %.1f ms faults fwd %d bwd %d cpu %.1f ms" % tuple(med))
