"""The make_moons experiment (``python -m gelu_ext moons``, gelu_ext.jobs.moons).

The network code is checked against finite differences and, when torch is
installed, against the same network trained by PyTorch; the experiment itself
(needs scikit-learn, the ``experiment`` extra) for accuracy, determinism and
its command line.
"""
import json
import re
import sys

import numpy as np
import pytest

from gelu_ext import _spec
from gelu_ext.jobs import moons as M
from helpers import WITHOUT_ML_DTYPES, python_child
from opinfo import torch_formula

ARM_IDS = list(M.ARMS)
# Small enough to run in a fraction of a second, big enough to train.
SMALL = ["--samples", "300", "--epochs", "3", "--hidden", "16,16", "--seeds", "2"]


def _random_stack(arm, rng, sizes=(2, 5, 4, 1), n_seeds=2):
    stack = M.Stack(sizes, (arm,), [M.init_weights(sizes, s) for s in range(n_seeds)])
    stack.theta[:] = rng.standard_normal(stack.theta.size)   # nonzero biases too
    X = rng.standard_normal((n_seeds, 6, sizes[0]))
    y = (rng.random((n_seeds, 6)) < 0.5).astype(np.float64)
    return stack, X, y


# ------------------------------------------------------------ gradients --

@pytest.mark.parametrize("arm", ARM_IDS, ids=ARM_IDS)
def test_gradient_matches_central_differences_for_every_parameter(arm):
    rng = np.random.default_rng(42)
    stack, X, y = _random_stack(arm, rng)
    h = 1e-5
    cache = []
    M.forward(stack.params, stack.arms, X, cache)
    # ReLU's kink: no pre-activation may come near 0, else a step of h could
    # cross it and the difference quotient would be meaningless.
    assert min(np.abs(U).min() for _, U in cache[:-1]) > 100 * h

    M.loss_and_grad(stack, X, y)
    analytic = stack.grad.copy()
    numeric = np.empty_like(analytic)
    for k in range(stack.theta.size):
        keep = stack.theta[k]
        stack.theta[k] = keep + h
        up = M.loss_and_grad(stack, X, y).sum()   # networks are independent
        stack.theta[k] = keep - h
        down = M.loss_and_grad(stack, X, y).sum()
        stack.theta[k] = keep
        numeric[k] = (up - down) / (2 * h)

    assert np.count_nonzero(analytic) > analytic.size // 2
    views_a = M._views(analytic, [p.shape for p in stack.params])
    views_n = M._views(numeric, [p.shape for p in stack.params])
    for i, (a, n) in enumerate(zip(views_a, views_n)):
        rel = np.linalg.norm(n - a) / np.linalg.norm(a)
        assert rel < 1e-6, f"parameter {i}: relative error {rel:.2e}"
    # Element by element too; 1e-9 absolute covers the rounding of the
    # quotient itself (eps * |loss| / h ~ 1e-11).
    np.testing.assert_allclose(numeric, analytic, rtol=1e-6, atol=1e-9)


def test_bce_with_logits_is_stable_and_exact():
    logits = np.array([-800.0, -30.0, -1.0, 0.0, 2.0, 40.0, 800.0])
    y = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    got = M.bce_with_logits(logits, y)
    # -log(sigmoid) written out: softplus(-l) for y=1, softplus(l) for y=0
    per = np.where(y == 1, np.logaddexp(0, -logits), np.logaddexp(0, logits))
    assert np.isfinite(got)
    np.testing.assert_allclose(got, per.mean(), rtol=1e-15)


def test_hidden_activations_are_gelu_ext_kernels_with_the_bias_fused(monkeypatch):
    calls = []
    for name in ("fast_gelu", "fast_gelu_grad"):
        real = getattr(M, name)

        def spy(*args, _real=real, _name=name, **kw):
            calls.append((_name, args[-1], kw.get("bias") is not None))
            return _real(*args, **kw)
        monkeypatch.setattr(M, name, spy)
    stack, X, y = _random_stack("gelu_tanh", np.random.default_rng(0))
    M.loss_and_grad(stack, X, y)
    assert sorted(set(calls)) == [("fast_gelu", "tanh", True), ("fast_gelu_grad", "tanh", True)]


UNFUSED = [arm for arm, (_, approximate) in M.ARMS.items() if approximate is None]


@pytest.mark.parametrize("arm", UNFUSED)
def test_unfused_arms_are_gelu_ext_kernels_on_the_biased_input(arm, monkeypatch):
    """No fused-bias kernel: the forward pass adds the bias in place and the
    backward pass sees that same u + b; the two functions are an op of the
    spec and its derivative."""
    names = tuple(f.__name__ for f in M._unfused(arm))
    assert _spec.OP[names[0]].grad == names[1]
    seen = {}
    for name in names:
        real = getattr(M, name)

        def spy(u, *args, _real=real, _name=name, **kw):
            seen.setdefault(_name, []).append(u.copy())
            return _real(u, *args, **kw)
        monkeypatch.setattr(M, name, spy)
    stack, X, y = _random_stack(arm, np.random.default_rng(0))
    M.loss_and_grad(stack, X, y)
    fwd, bwd = (seen[n] for n in names)
    assert len(fwd) == len(bwd) == 2                      # two hidden layers
    W1, b1 = stack.params[0][0], stack.params[1][0]
    np.testing.assert_array_equal(fwd[0], X @ W1 + b1)   # u + b, not u
    for f, b in zip(fwd, bwd[::-1]):                       # backward runs last layer first
        np.testing.assert_array_equal(f, b)


# ---------------------------------------------------------------- torch --

def arm_form(arm):
    """torch's own form of the arm's activation (a fused arm runs fast_gelu)."""
    approximate = M.ARMS[arm][1]
    if approximate:
        return torch_formula("gelu_erf" if approximate == "none" else "gelu_tanh")
    return torch_formula(M._unfused(arm)[0].__name__)


def _torch_trajectory(torch, sizes, init, arm, X, y, *, epochs, batch_size, lr, order_seed):
    F = torch.nn.functional
    act = arm_form(arm)
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        lin = torch.nn.Linear(fan_in, fan_out, dtype=torch.float64)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(init[2 * i].T))
            lin.bias.copy_(torch.from_numpy(init[2 * i + 1]))
        layers.append(lin)
    opt = torch.optim.Adam([p for lin in layers for p in lin.parameters()], lr=lr,
                           betas=M.ADAM_BETAS, eps=M.ADAM_EPS)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    rng = np.random.default_rng(order_seed)
    losses = []
    for _ in range(epochs):
        order = M.epoch_order(rng, len(y))
        for start in range(0, len(y), batch_size):
            idx = torch.from_numpy(order[start:start + batch_size])
            h = Xt[idx]
            for lin in layers[:-1]:
                h = act(lin(h))
            loss = F.binary_cross_entropy_with_logits(layers[-1](h)[:, 0], yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    final = []
    for lin in layers:
        final += [lin.weight.detach().numpy().T, lin.bias.detach().numpy()]
    return np.array(losses), final


@pytest.mark.slow
@pytest.mark.parametrize("arm", ARM_IDS, ids=ARM_IDS)
def test_same_loss_trajectory_as_pytorch(arm):
    torch = pytest.importorskip("torch")
    sizes, epochs, batch_size, lr = (2, 16, 16, 1), 3, 16, 5e-3
    rng = np.random.default_rng(7)
    X = rng.standard_normal((80, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(np.float64)     # XOR-like: needs the hidden layers
    init = M.init_weights(sizes, seed=3)

    stack = M.Stack(sizes, (arm,), [init])
    ours = M.train(stack, X[None], y[None], epochs=epochs, batch_size=batch_size, lr=lr,
                   order_rngs=[np.random.default_rng(11)], record_steps=True)["steps"][:, 0, 0]
    theirs, final = _torch_trajectory(torch, sizes, init, arm, X, y, epochs=epochs,
                                      batch_size=batch_size, lr=lr, order_seed=11)

    assert len(ours) == epochs * 5
    assert abs(ours[-1] - ours[0]) > 0.05        # the weights really moved
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    for p, q in zip(stack.sub(0), final):
        np.testing.assert_allclose(p[0, 0].reshape(q.shape), q, rtol=1e-6, atol=1e-12)


# ----------------------------------------------------------- statistics --

def test_t_quantile_is_students():
    assert M.t_quantile(0.975, 1) == pytest.approx(12.7062047, rel=1e-8)
    assert M.t_quantile(0.025, 9) == pytest.approx(-2.2621572, rel=1e-7)
    with pytest.raises(ValueError, match="need 0 < p < 1 and df > 0, got p=1.5"):
        M.t_quantile(1.5, 3)


def test_paired_summary_counts_and_interval():
    diff = np.array([0.01, 0.0, -0.005, 0.02, 0.0025])
    s = M.paired_summary(diff)
    assert (s["wins"], s["ties"], s["losses"]) == (3, 1, 1)
    assert s["ci95"][0] < s["mean"] < s["ci95"][1]
    half = M.t_quantile(0.975, 4) * diff.std(ddof=1) / np.sqrt(5)
    np.testing.assert_allclose(s["ci95"], [diff.mean() - half, diff.mean() + half])
    lower_better = M.paired_summary(diff, higher_is_better=False)
    assert (lower_better["wins"], lower_better["losses"]) == (1, 3)
    assert M.paired_summary([0.01])["ci95"] is None


# ----------------------------------------------------------- experiment --

def test_run_experiment_defaults_are_the_command_line_defaults():
    import inspect
    args = M._parser().parse_args([])
    defaults = {k: v.default for k, v in inspect.signature(M.run_experiment).parameters.items()}
    assert defaults["sizes"] == (2, *args.hidden, 1)
    assert defaults["arms"] == ("relu", "gelu") and args.approximate == "none"
    assert args.activations is None
    assert (defaults["n_samples"], defaults["noise"]) == (args.samples, args.noise)
    assert (defaults["epochs"], defaults["batch_size"], defaults["lr"]) == (
        args.epochs, args.batch_size, args.lr)
    assert np.dtype(defaults["dtype"]) == np.dtype(args.dtype)


@pytest.mark.slow
def test_both_networks_reach_093_test_accuracy_on_default_settings():
    pytest.importorskip("sklearn")
    result = M.run_experiment([0, 1])            # the defaults: 2000 samples, 100 epochs, ...
    acc = result["test_accuracy"]
    assert acc.shape == (2, 2)
    assert acc.min() >= 0.93, acc


def test_a_seeds_numbers_do_not_depend_on_the_other_seeds():
    pytest.importorskip("sklearn")
    kw = dict(n_samples=300, epochs=3, sizes=(2, 16, 16, 1), arms=("relu", "gelu", "gelu_tanh"))
    together = M.run_experiment([0, 1, 2], **kw)
    alone = M.run_experiment([1], **kw)
    for key in ("test_accuracy", "test_loss", "train_loss", "val_loss"):
        np.testing.assert_array_equal(together[key][..., 1], alone[key][..., 0], err_msg=key)


def test_float32_runs_in_float32():
    pytest.importorskip("sklearn")
    result = M.run_experiment([0], n_samples=300, epochs=2, sizes=(2, 8, 1),
                              dtype=np.float32, keep_first=True)
    assert all(p.dtype == np.float32 for p in result["first"]["params"])
    assert np.isfinite(result["test_loss"]).all()


def _without_seconds(obj):
    if isinstance(obj, dict):
        return {k: _without_seconds(v) for k, v in obj.items() if k != "seconds"}
    if isinstance(obj, list):
        return [_without_seconds(v) for v in obj]
    return obj


def test_same_arguments_give_the_same_numbers(tmp_path, capsys):
    pytest.importorskip("sklearn")
    docs, outs = [], []
    for i in range(2):
        path = tmp_path / f"run{i}.json"
        assert M.main(SMALL + ["--approximate", "tanh", "--json", str(path)]) == 0
        outs.append([l for l in capsys.readouterr().out.splitlines()
                     if not l.startswith("total time")])
        docs.append(json.loads(path.read_text()))
    assert outs[0] == outs[1]
    assert _without_seconds(docs[0]) == _without_seconds(docs[1])
    doc = docs[0]
    assert [r["seed"] for r in doc["per_seed"]] == [0, 1]
    assert set(doc["paired"]) == {"gelu - relu", "gelu_tanh - relu"}
    assert len(doc["per_seed"][0]["curves"]["gelu"]["val_loss"]) == 3
    assert "seconds" in doc and doc["caveat"] == M.CAVEAT
    assert M.CAVEAT in outs[0]


def _report(capsys):
    return [l for l in capsys.readouterr().out.splitlines() if not l.startswith("total time")]


def test_activations_relu_gelu_is_the_default_run(capsys):
    pytest.importorskip("sklearn")
    assert M.main(SMALL) == 0
    default = _report(capsys)
    assert M.main(SMALL + ["--activations", "relu,gelu"]) == 0
    assert _report(capsys) == default
    assert default[0].startswith("ReLU vs GELU on make_moons")


def test_activations_are_paired_against_the_first(tmp_path, capsys):
    pytest.importorskip("sklearn")
    path = tmp_path / "run.json"
    assert M.main(SMALL + ["--activations", "silu,relu,quick_gelu", "--json", str(path)]) == 0
    out = _report(capsys)
    doc = json.loads(path.read_text())
    assert doc["config"]["arms"] == ["silu", "relu", "quick_gelu"]
    assert list(doc["paired"]) == ["relu - silu", "quick_gelu - silu"]
    for key, p in doc["paired"].items():
        arm = key.split(" - ")[0]
        diff = [r["test"][arm]["loss"] - r["test"]["silu"]["loss"] for r in doc["per_seed"]]
        assert p["loss"]["mean"] == pytest.approx(np.mean(diff), rel=1e-12, abs=1e-15)
    assert out[0].startswith("SiLU vs ReLU vs quick-GELU on make_moons")
    assert "paired difference quick-GELU - SiLU over 2 seeds (win = quick-GELU better):" in out


def test_an_arms_numbers_do_not_depend_on_the_other_arms():
    pytest.importorskip("sklearn")
    kw = dict(n_samples=300, epochs=3, sizes=(2, 16, 16, 1))
    alone = M.run_experiment([0], arms=("silu", "relu"), **kw)
    mixed = M.run_experiment([0], arms=("gelu", "quick_gelu", "silu"), **kw)
    for key in ("test_accuracy", "test_loss", "train_loss", "val_loss"):
        np.testing.assert_array_equal(alone[key][..., 0, :], mixed[key][..., 2, :], err_msg=key)


def test_stack_rejects_an_unknown_or_repeated_arm():
    init = [M.init_weights((2, 3, 1), 0)]
    with pytest.raises(ValueError, match="arms must be among .*'quick_gelu'.*, got 'swish'"):
        M.Stack((2, 3, 1), ("relu", "swish"), init)
    with pytest.raises(ValueError, match=r"arms must not repeat an activation, got \['silu', 'silu'\]"):
        M.Stack((2, 3, 1), ("silu", "silu"), init)


def test_plot_writes_a_png(tmp_path, capsys):
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    path = tmp_path / "moons.png"
    assert M.main(SMALL + ["--seeds", "1", "--plot", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_scikit_learn_one_line_names_the_extra(tmp_path):
    code = (WITHOUT_ML_DTYPES + "import sys; sys.modules['sklearn'] = None\n"
            "from gelu_ext.__main__ import main\n"
            "sys.exit(main(['moons', '--seeds', '1']))")
    proc = python_child(["-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "gelu_ext: this needs scikit-learn; install it with: pip install 'gelu_ext[experiment]'"]


def test_plot_without_matplotlib_names_the_extra(monkeypatch, tmp_path):
    pytest.importorskip("sklearn")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SystemExit, match=r"matplotlib.*pip install 'gelu_ext\[experiment\]'"):
        M.main(["--plot", str(tmp_path / "x.png")])


@pytest.mark.parametrize("argv, option", [
    (["--seeds", "0"], "--seeds"),
    (["--seed-start", "-1"], "--seed-start"),
    (["--samples", "10"], "--samples"),
    (["--noise", "-0.1"], "--noise"),
    (["--noise", "nan"], "--noise"),
    (["--hidden", "64,x"], "--hidden"),
    (["--hidden", "64,0"], "--hidden"),
    (["--hidden", ""], "--hidden"),
    (["--epochs", "1.5"], "--epochs"),
    (["--batch-size", "0"], "--batch-size"),
    (["--lr", "0"], "--lr"),
    (["--dtype", "float16"], "--dtype"),
    (["--approximate", "fast"], "--approximate"),
    (["--activations", "relu"], "--activations: .*only one given"),
    (["--activations", "relu,swish"], "--activations: .*unknown 'swish'"),
    (["--activations", "gelu,relu,gelu"], "--activations: .*'gelu' repeated"),
    (["--activations", "relu,silu", "--approximate", "tanh"], "not allowed with argument"),
    (["--unknown"], "unrecognized"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_options_are_argparse_errors(argv, option, capsys):
    with pytest.raises(SystemExit) as exc:
        M.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert re.search(option, err), err
