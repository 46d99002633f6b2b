"""``python -m gelu_ext moons``: ReLU vs GELU on make_moons, over many seeds.

The article's experiment, done properly: two (or three, with
``--approximate tanh``; any of ReLU, GELU, tanh-GELU, SiLU and quick-GELU with
``--activations``) multilayer perceptrons identical in everything but the
hidden activation, trained with Adam on scikit-learn's ``make_moons``, over
several seeds, with a held-out test set touched once at the end; every arm is
compared, seed by seed, with the first.

Design:

* Everything is NumPy; every hidden activation and its backward pass is a
  gelu_ext kernel (``fast_gelu``/``fast_gelu_grad`` with the bias fused in;
  ``relu``/``relu_grad``, ``silu``/``silu_grad``,
  ``quick_gelu``/``quick_gelu_grad``).  The last three have no fused-bias
  form, so their bias is added in place first.
* All networks of a run (arms x seeds) are trained *together* as one stack:
  each weight is an array of shape ``(arms, seeds, fan_in, fan_out)`` and one
  ``np.matmul`` does a layer for every network.  Training is thousands of tiny
  steps, so per-call overhead, not arithmetic, is the cost; the stack pays it
  once for all networks.  Networks never mix: network ``(a, s)`` only ever
  sees seed ``s``'s data, its own weights and its own Adam moments, and a
  seed's numbers do not depend on which other seeds run with it (tested).
* Parameters, gradients and Adam moments each live in one flat buffer (the
  per-layer arrays are views), so one Adam step is a handful of array ops.
* Per seed: ``make_moons(random_state=seed)``; a stratified 60/20/20
  train/validation/test split (``train_test_split``, ``random_state=seed``);
  inputs standardised with the training set's mean and std; initial weights
  He (Kaiming) uniform, ``U(-sqrt(6/fan_in), +sqrt(6/fan_in))``, biases 0,
  drawn in float64 from ``default_rng([seed, 1])`` and shared by every arm;
  minibatch order a fresh permutation per epoch from ``default_rng([seed, 2])``,
  shared by every arm; the last, smaller minibatch is kept.
* No model selection: the final-epoch weights are evaluated.  The validation
  set is only watched (the loss curves), so it cannot leak into the test
  numbers; the test set is evaluated once, after training.
"""
import argparse
import math
import time

import numpy as np

from gelu_ext import (fast_gelu, fast_gelu_grad, quick_gelu, quick_gelu_grad, relu, relu_grad,
                      silu, silu_grad)
from gelu_ext.jobs import _common

# arm name -> (label, approximate); approximate None means an activation with
# no fused-bias kernel, computed by _unfused(arm)
ARMS = {
    "relu": ("ReLU", None),
    "gelu": ("GELU", "none"),
    "gelu_tanh": ("GELU-tanh", "tanh"),
    "silu": ("SiLU", None),
    "quick_gelu": ("quick-GELU", None),
}
DEFAULT_ARMS = ("relu", "gelu")

CAVEAT = ("Caveat (the article's): one run proves nothing, and on this toy problem the "
          "differences are small; this is no general claim that one activation beats the other.")

SPLIT = (0.6, 0.2, 0.2)   # train / validation / test
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
_INIT_STREAM, _ORDER_STREAM = 1, 2


# ------------------------------------------------------------- the network --

def _check_arms(arms):
    for arm in arms:
        if arm not in ARMS:
            raise ValueError(f"arms must be among {list(ARMS)}, got {arm!r}")
    if len(set(arms)) != len(arms):
        raise ValueError(f"arms must not repeat an activation, got {list(arms)}")


def init_weights(sizes, seed):
    """Initial weights of one network, as a list ``[W1, b1, W2, b2, ...]``.

    He (Kaiming) uniform weights ``U(-sqrt(6/fan_in), sqrt(6/fan_in))`` and
    zero biases, in float64, from ``np.random.default_rng([seed, 1])``.

    Parameters
    ----------
    sizes : sequence of int
        Layer widths, input first, e.g. ``(2, 64, 64, 1)``.
    seed : int

    Returns
    -------
    list of ndarray
        ``W`` of shape ``(fan_in, fan_out)``, ``b`` of shape ``(fan_out,)``.

    Examples
    --------
    >>> [p.shape for p in init_weights((2, 3, 1), seed=0)]
    [(2, 3), (3,), (3, 1), (1,)]
    """
    rng = np.random.default_rng([seed, _INIT_STREAM])
    out = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        lim = math.sqrt(6.0 / fan_in)
        out += [rng.uniform(-lim, lim, size=(fan_in, fan_out)), np.zeros(fan_out)]
    return out


class Stack:
    """``len(arms) x n_seeds`` MLPs with the same layer sizes, stored together.

    ``params[2*l]`` is layer ``l``'s weight, shape ``(A, S, fan_in, fan_out)``,
    ``params[2*l+1]`` its bias, shape ``(A, S, 1, fan_out)``; all are views of
    the flat ``theta`` (and ``grads`` of the flat ``grad``), so the optimiser
    works on one array.

    Parameters
    ----------
    sizes : sequence of int
        Layer widths, input first; the last must be 1 (one logit).
    arms : sequence of str
        Hidden activation of each arm, a key of ``ARMS``: ``'relu'``,
        ``'gelu'``, ``'gelu_tanh'``, ``'silu'``, ``'quick_gelu'``.
    inits : sequence of list of ndarray
        One ``init_weights`` list per seed; every arm starts from it.
    dtype : dtype, optional
    """

    def __init__(self, sizes, arms, inits, dtype=np.float64):
        _check_arms(arms)
        if sizes[-1] != 1:
            raise ValueError(f"sizes must end with 1 (one logit), got {tuple(sizes)}")
        self.sizes, self.arms, self.dtype = tuple(sizes), tuple(arms), np.dtype(dtype)
        A, S = len(arms), len(inits)
        shapes = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            shapes += [(A, S, fan_in, fan_out), (A, S, 1, fan_out)]
        self.theta = np.zeros(sum(math.prod(s) for s in shapes), dtype=self.dtype)
        self.grad = np.zeros_like(self.theta)
        self.params = _views(self.theta, shapes)
        self.grads = _views(self.grad, shapes)
        for s, init in enumerate(inits):
            for p, w in zip(self.params, init):
                p[:, s] = w.reshape(p.shape[2:])    # broadcast over arms; casts to dtype

    def sub(self, seed_index):
        """Parameters of one seed's networks (shape ``(A, 1, ...)``, views)."""
        return [p[:, seed_index:seed_index + 1] for p in self.params]


def _views(flat, shapes):
    out, start = [], 0
    for shape in shapes:
        n = math.prod(shape)
        out.append(flat[start:start + n].reshape(shape))
        start += n
    return out


def _unfused(arm):
    """(forward, backward) of an arm without a fused-bias kernel (looked up
    when called, so a test can spy on the module's names)."""
    return {"relu": (relu, relu_grad), "silu": (silu, silu_grad),
            "quick_gelu": (quick_gelu, quick_gelu_grad)}[arm]


def _activate(arm, u, b, out):
    approximate = ARMS[arm][1]
    if approximate is None:
        np.add(u, b, out=u)        # the cache keeps u + b: the backward pass needs it
        _unfused(arm)[0](u, out=out)
    else:
        fast_gelu(u, approximate, bias=b, out=out)


def _activate_backward(arm, u, b, grad, out):
    approximate = ARMS[arm][1]
    if approximate is None:
        _unfused(arm)[1](u, grad, out=out)
    else:
        fast_gelu_grad(u, grad, approximate, bias=b, out=out)


def forward(params, arms, X, cache=None):
    """Logits of every network in a stack.

    Parameters
    ----------
    params : list of ndarray
        ``Stack.params`` (or ``Stack.sub(s)``), shapes ``(A, S, ...)``.
    arms : sequence of str
    X : ndarray, shape (S, n, features)
        Seed ``s``'s inputs, fed to every arm's network of seed ``s``.
    cache : list, optional
        If given, filled with what the backward pass needs.

    Returns
    -------
    ndarray, shape (A, S, n)
    """
    H = X[None]
    n_layers = len(params) // 2
    for layer in range(n_layers - 1):
        W, b = params[2 * layer], params[2 * layer + 1]
        U = np.matmul(H, W)
        H_next = np.empty_like(U)
        for a, arm in enumerate(arms):
            _activate(arm, U[a], b[a], H_next[a])
        if cache is not None:
            cache.append((H, U))
        H = H_next
    logits = np.matmul(H, params[-2])
    logits += params[-1]
    if cache is not None:
        cache.append((H, None))
    return logits[..., 0]


def bce_with_logits(logits, y):
    """Mean binary cross-entropy of ``sigmoid(logits)`` against 0/1 labels.

    Computed from the logits as ``max(l, 0) - l*y + log1p(exp(-|l|))``, which
    never overflows and keeps full precision for confident predictions.
    Averages over the last axis.
    """
    per = np.maximum(logits, 0) - logits * y + np.log1p(np.exp(-np.abs(logits)))
    return per.mean(axis=-1)


def _sigmoid(z):
    e = np.exp(-np.abs(z))        # <= 1: no overflow on either side
    return np.where(z >= 0, 1, e) / (1 + e)


def loss_and_grad(stack, X, y):
    """Loss of every network on its seed's batch; fills ``stack.grad``.

    Parameters
    ----------
    stack : Stack
    X : ndarray, shape (S, n, features)
    y : ndarray, shape (S, n)
        Labels 0/1, in the stack's dtype.

    Returns
    -------
    ndarray, shape (A, S)
        Each network's mean binary cross-entropy on the batch.  The gradient of
        each loss with respect to its own network's parameters is in
        ``stack.grads`` (networks are independent, so this is also the
        gradient of ``loss.sum()`` with respect to ``stack.theta``).
    """
    params, arms = stack.params, stack.arms
    cache = []
    logits = forward(params, arms, X, cache)
    loss = bce_with_logits(logits, y)
    dH = ((_sigmoid(logits) - y) / X.shape[1])[..., None]
    n_layers = len(params) // 2
    for layer in reversed(range(n_layers)):
        H, U = cache[layer]
        if U is None:
            dU = dH
        else:
            dU = np.empty_like(U)
            b = params[2 * layer + 1]
            for a, arm in enumerate(arms):
                _activate_backward(arm, U[a], b[a], dH[a], dU[a])
        np.matmul(np.swapaxes(H, -1, -2), dU, out=stack.grads[2 * layer])
        np.sum(dU, axis=-2, keepdims=True, out=stack.grads[2 * layer + 1])
        if layer:
            dH = np.matmul(dU, np.swapaxes(params[2 * layer], -1, -2))
    return loss


class Adam:
    """Adam with bias correction on one flat parameter buffer.

    The update is PyTorch's: ``theta -= (lr / (1 - b1**t)) * m /
    (sqrt(v) / sqrt(1 - b2**t) + eps)``.
    """

    def __init__(self, theta, lr, betas=ADAM_BETAS, eps=ADAM_EPS):
        self.lr, self.betas, self.eps = float(lr), tuple(map(float, betas)), float(eps)
        self.m = np.zeros_like(theta)
        self.v = np.zeros_like(theta)
        self.tmp = np.empty_like(theta)
        self.t = 0

    def step(self, theta, grad):
        b1, b2 = self.betas
        m, v, tmp = self.m, self.v, self.tmp
        self.t += 1
        m *= b1
        np.multiply(grad, 1 - b1, out=tmp)
        m += tmp
        v *= b2
        np.multiply(grad, grad, out=tmp)
        tmp *= 1 - b2
        v += tmp
        np.sqrt(v, out=tmp)
        tmp /= math.sqrt(1 - b2 ** self.t)
        tmp += self.eps
        np.divide(m, tmp, out=tmp)
        tmp *= self.lr / (1 - b1 ** self.t)
        theta -= tmp


def epoch_order(rng, n):
    """Minibatch order of one epoch: a permutation of the training indices."""
    return rng.permutation(n)


def train(stack, Xtr, ytr, *, epochs, batch_size, lr, order_rngs, evals=(),
          record_steps=False, report=None):
    """Train every network of ``stack`` in place with Adam on minibatches.

    Parameters
    ----------
    stack : Stack
    Xtr, ytr : ndarray, shapes (S, n, features) and (S, n)
    epochs, batch_size : int
    lr : float
    order_rngs : sequence of numpy.random.Generator
        One per seed; each epoch draws ``epoch_order(rng, n)``.
    evals : sequence of (name, X, y)
        Sets whose full loss is computed after each epoch.
    record_steps : bool
        Also record every minibatch's loss (before its update).
    report : callable, optional
        Called as ``report(epoch, history)`` after each epoch.

    Returns
    -------
    dict of ndarray
        ``history['train']``, shape ``(epochs, A, S)``: each epoch's training
        loss as the mean of its minibatch losses (weighted by batch size, each
        taken before its update: the Keras convention, and free, where a full
        pass over the training set would cost a third of the training);
        ``history[name]``, shape ``(epochs, A, S)``, for each eval set, after
        each epoch; ``history['steps']``, shape ``(steps, A, S)``, if recorded.
    """
    S, n = ytr.shape
    adam = Adam(stack.theta, lr)
    history = {"train": [], **{name: [] for name, _, _ in evals}}
    steps = []
    seed_index = np.arange(S)[:, None]
    for epoch in range(1, epochs + 1):
        order = np.stack([epoch_order(rng, n) for rng in order_rngs])
        total = 0.0
        for start in range(0, n, batch_size):
            idx = order[:, start:start + batch_size]
            loss = loss_and_grad(stack, Xtr[seed_index, idx], ytr[seed_index, idx])
            total = total + loss.astype(np.float64) * idx.shape[1]
            if record_steps:
                steps.append(loss)
            adam.step(stack.theta, stack.grad)
        history["train"].append(total / n)
        for name, X, y in evals:
            history[name].append(bce_with_logits(forward(stack.params, stack.arms, X), y))
        if report is not None:
            report(epoch, history)
    out = {name: np.array(h, dtype=np.float64) for name, h in history.items()}
    if record_steps:
        out["steps"] = np.array(steps, dtype=np.float64)
    return out


# ------------------------------------------------------------ the experiment --

def load_moons(seed, n_samples=2000, noise=0.2):
    """One seed's data: make_moons, stratified 60/20/20 split, standardised.

    Returns
    -------
    dict
        ``train``, ``val``, ``test``: ``(X, y)`` pairs (float64, labels 0/1),
        ``mean``/``std``: the training set's, used to standardise all three.
    """
    datasets = _common.require("sklearn.datasets", "experiment", package="scikit-learn")
    model_selection = _common.require("sklearn.model_selection", "experiment",
                                   package="scikit-learn")
    X, y = datasets.make_moons(n_samples=n_samples, noise=noise, random_state=seed)
    split = model_selection.train_test_split
    X_rest, X_te, y_rest, y_te = split(X, y, test_size=SPLIT[2], stratify=y,
                                       random_state=seed)
    X_tr, X_val, y_tr, y_val = split(X_rest, y_rest, test_size=SPLIT[1] / (1 - SPLIT[2]),
                                     stratify=y_rest, random_state=seed)
    mean, std = X_tr.mean(axis=0), X_tr.std(axis=0)
    f = lambda X: (X - mean) / std                                      # noqa: E731
    return {"train": (f(X_tr), y_tr.astype(np.float64)),
            "val": (f(X_val), y_val.astype(np.float64)),
            "test": (f(X_te), y_te.astype(np.float64)),
            "mean": mean, "std": std}


def _chunks(seeds, per_chunk):
    return [seeds[i:i + per_chunk] for i in range(0, len(seeds), per_chunk)]


def run_experiment(seeds, *, sizes=(2, 64, 64, 1), arms=DEFAULT_ARMS, n_samples=2000,
                   noise=0.2, epochs=100, batch_size=32, lr=1e-3, dtype=np.float64,
                   keep_first=False, progress=None):
    """Train and test every arm for every seed.

    Returns
    -------
    dict
        ``seeds``; ``split`` (set sizes); ``test_accuracy`` and ``test_loss``
        of shape ``(A, S)``; ``train_loss``/``val_loss`` curves of shape
        ``(epochs, A, S)`` (see ``train``); ``seconds``; with ``keep_first``, ``first``:
        the first seed's data and trained parameters (for the plot).
    """
    _check_arms(arms)
    dtype = np.dtype(dtype)
    seeds = list(seeds)
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    # Bound the stacked activations (A x seeds x samples x width) to ~128 MB.
    per_chunk = max(1, min(len(seeds), (1 << 24) // (len(arms) * n_samples * max(sizes))))
    acc, loss, curves_tr, curves_val = [], [], [], []
    first, seconds_data = None, 0.0
    for chunk in _chunks(seeds, per_chunk):
        t_data = time.perf_counter()
        data = [load_moons(s, n_samples, noise) for s in chunk]
        seconds_data += time.perf_counter() - t_data
        stacked = {k: (np.stack([d[k][0] for d in data]).astype(dtype),
                       np.stack([d[k][1] for d in data]).astype(dtype))
                   for k in ("train", "val", "test")}
        split = {k: int(v[1].shape[1]) for k, v in stacked.items()}
        stack = Stack(sizes, arms, [init_weights(sizes, s) for s in chunk], dtype)
        rngs = [np.random.default_rng([s, _ORDER_STREAM]) for s in chunk]
        label = f"seeds {chunk[0]}-{chunk[-1]}" if len(chunk) > 1 else f"seed {chunk[0]}"

        def report(epoch, history, label=label):
            if epoch % 10 == 0 or epoch == epochs:
                val = history["val"][-1].mean(axis=1)
                parts = "  ".join(f"{ARMS[a][0]} {v:.4f}" for a, v in zip(arms, val))
                say(f"moons: {label}: epoch {epoch}/{epochs}, mean validation loss {parts}"
                    f"  ({time.perf_counter() - t0:.1f} s)")

        history = train(stack, *stacked["train"], epochs=epochs, batch_size=batch_size, lr=lr,
                        order_rngs=rngs, evals=[("val", *stacked["val"])],
                        report=report)
        # The test set, once.
        X_te, y_te = stacked["test"]
        logits = forward(stack.params, arms, X_te)
        acc.append(((logits > 0) == (y_te > 0.5)).mean(axis=-1, dtype=np.float64))
        loss.append(bce_with_logits(logits, y_te).astype(np.float64))
        curves_tr.append(history["train"])
        curves_val.append(history["val"])
        if keep_first and first is None:
            first = {"seed": chunk[0], "data": data[0], "params": [p.copy() for p in stack.sub(0)]}
    out = {
        "seeds": seeds,
        "split": split,
        "test_accuracy": np.concatenate(acc, axis=1),
        "test_loss": np.concatenate(loss, axis=1),
        "train_loss": np.concatenate(curves_tr, axis=2),
        "val_loss": np.concatenate(curves_val, axis=2),
        "seconds": {"total": time.perf_counter() - t0, "data": seconds_data},
    }
    if keep_first:
        out["first"] = first
    return out


# --------------------------------------------------------------- statistics --

def t_quantile(p, df):
    """Quantile of Student's t with ``df`` degrees of freedom (SciPy's: the
    job needs scikit-learn, which needs SciPy)."""
    if not 0 < p < 1 or not df > 0:
        raise ValueError(f"need 0 < p < 1 and df > 0, got p={p!r}, df={df!r}")
    stats = _common.require("scipy.stats", "experiment", package="scipy")
    return float(stats.t.ppf(p, df))


def paired_summary(diff, higher_is_better=True):
    """Mean, std, 95% t-interval and win/tie/loss counts of paired differences.

    ``diff`` is (other arm - first arm) per seed; a win is a seed where the other
    arm is better (higher if ``higher_is_better``, else lower), a tie an exact
    equality (common for accuracies, which are multiples of 1/n_test).
    With fewer than two seeds, std and the interval are None.
    """
    diff = np.asarray(diff, dtype=np.float64)
    n = diff.size
    mean = float(diff.mean())
    std = ci = None
    if n >= 2:
        std = float(diff.std(ddof=1))
        half = t_quantile(0.975, n - 1) * std / math.sqrt(n)
        ci = [mean - half, mean + half]
    better = diff > 0 if higher_is_better else diff < 0
    worse = diff < 0 if higher_is_better else diff > 0
    return {"mean": mean, "std": std, "ci95": ci, "n": n, "wins": int(better.sum()),
            "ties": int((diff == 0).sum()), "losses": int(worse.sum())}


def _mean_std(x):
    x = np.asarray(x, dtype=np.float64)
    return {"mean": float(x.mean()), "std": float(x.std(ddof=1)) if x.size > 1 else None}


def summarise(result, arms):
    """The JSON-ready summary: per-seed rows, per-arm mean/std, and the paired
    differences of every arm from the first (``"gelu - relu"``, ...)."""
    acc, loss = result["test_accuracy"], result["test_loss"]
    per_seed = []
    for s, seed in enumerate(result["seeds"]):
        per_seed.append({
            "seed": seed,
            "test": {arm: {"accuracy": float(acc[a, s]), "loss": float(loss[a, s])}
                     for a, arm in enumerate(arms)},
            "curves": {arm: {"train_loss": result["train_loss"][:, a, s].tolist(),
                             "val_loss": result["val_loss"][:, a, s].tolist()}
                       for a, arm in enumerate(arms)},
        })
    summary = {arm: {"accuracy": _mean_std(acc[a]), "loss": _mean_std(loss[a])}
               for a, arm in enumerate(arms)}
    paired = {}
    base = arms[0]
    for a, arm in enumerate(arms[1:], 1):
        paired[f"{arm} - {base}"] = {
            "accuracy": paired_summary(acc[a] - acc[0], higher_is_better=True),
            "loss": paired_summary(loss[a] - loss[0], higher_is_better=False),
        }
    return {"per_seed": per_seed, "summary": summary, "paired": paired}


# ------------------------------------------------------------------- output --

def _fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def format_report(config, result, summary, arms):
    """The text report (stdout) as a list of lines."""
    labels = [ARMS[a][0] for a in arms]
    sp = result["split"]
    seeds = result["seeds"]
    lines = [
        f"{' vs '.join(labels)} on make_moons (n={config['samples']}, noise={config['noise']}; "
        f"train/validation/test {sp['train']}/{sp['val']}/{sp['test']}, stratified)",
        f"MLP {'-'.join(map(str, config['sizes']))}, He-uniform init, Adam lr {config['lr']:g}, "
        f"{config['epochs']} epochs, batch {config['batch_size']}, {config['dtype']}, "
        f"final-epoch weights, seeds {seeds[0]}..{seeds[-1]}",
        "",
    ]
    w = max(10, *(len(x) + 1 for x in labels))
    head = "".join(f"{x:>{w}}" for x in labels)
    lines.append(f"{'':>6}{'test accuracy':^{w * len(arms)}}   {'test loss (BCE)':^{w * len(arms)}}")
    lines.append(f"{'seed':>6}{head}   {head}")
    for row in summary["per_seed"]:
        a_ = "".join(f"{row['test'][a]['accuracy']:>{w}.4f}" for a in arms)
        l_ = "".join(f"{row['test'][a]['loss']:>{w}.4f}" for a in arms)
        lines.append(f"{row['seed']:>6}{a_}   {l_}")
    lines += ["", f"per activation over {len(seeds)} seeds (mean +- std):"]
    for arm, label in zip(arms, labels):
        s = summary["summary"][arm]
        lines.append(f"  {label:<10} accuracy {s['accuracy']['mean']:.4f} +- "
                     f"{_fmt(s['accuracy']['std'], '.4f')}   loss {s['loss']['mean']:.4f} +- "
                     f"{_fmt(s['loss']['std'], '.4f')}")
    for key, p in summary["paired"].items():
        arm, base = key.split(" - ")
        lines += ["", f"paired difference {ARMS[arm][0]} - {ARMS[base][0]} over {len(seeds)} "
                      f"seeds (win = {ARMS[arm][0]} better):"]
        for what, spec in (("accuracy", "+.5f"), ("loss", "+.5f")):
            d = p[what]
            ci = ("n/a (needs >= 2 seeds)" if d["ci95"] is None else
                  f"[{d['ci95'][0]:{spec}}, {d['ci95'][1]:{spec}}]")
            lines.append(f"  test {what:<8} mean {d['mean']:{spec}}  95% CI {ci}  "
                         f"win/tie/loss {d['wins']}/{d['ties']}/{d['losses']}")
    lines += ["", CAVEAT]
    return lines


def plot(path, first, arms, result, seed_index=0):
    """Decision boundaries of every arm for one seed over its data, and the
    train/validation loss curves (matplotlib, without pyplot's global state)."""
    _common.require("matplotlib", "experiment")
    from matplotlib.figure import Figure

    data, params = first["data"], first["params"]
    mean, std = data["mean"], data["std"]
    X_all = np.concatenate([data[k][0] for k in ("train", "val", "test")]) * std + mean
    y_all = np.concatenate([data[k][1] for k in ("train", "val", "test")])
    pad = 0.5
    (x0, y0), (x1, y1) = X_all.min(axis=0) - pad, X_all.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(x0, x1, 200), np.linspace(y0, y1, 200))
    grid = (np.column_stack([gx.ravel(), gy.ravel()]) - mean) / std
    dtype = params[0].dtype
    prob = 1 / (1 + np.exp(-forward(params, arms, grid[None].astype(dtype)).astype(np.float64)))

    A = len(arms)
    fig = Figure(figsize=(4.2 * (A + 1), 4))
    axes = fig.subplots(1, A + 1)
    for a, arm in enumerate(arms):
        ax = axes[a]
        ax.contourf(gx, gy, prob[a, 0].reshape(gx.shape), levels=np.linspace(0, 1, 11),
                    cmap="RdBu_r", alpha=0.35)
        ax.contour(gx, gy, prob[a, 0].reshape(gx.shape), levels=[0.5], colors="k",
                   linewidths=1.2)
        ax.scatter(X_all[:, 0], X_all[:, 1], c=y_all, cmap="RdBu_r", s=4, edgecolors="none")
        acc = result["test_accuracy"][a, seed_index]
        ax.set_title(f"{ARMS[arm][0]}: test accuracy {acc:.4f}")
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
    ax = axes[-1]
    epochs = np.arange(1, result["train_loss"].shape[0] + 1)
    for a, arm in enumerate(arms):
        line, = ax.plot(epochs, result["train_loss"][:, a, seed_index],
                        label=f"{ARMS[arm][0]} train")
        ax.plot(epochs, result["val_loss"][:, a, seed_index], "--", color=line.get_color(),
                label=f"{ARMS[arm][0]} validation")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("binary cross-entropy")
    ax.set_title(f"loss curves, seed {first['seed']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# ---------------------------------------------------------------------- CLI --

def _float_range(positive):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            v = float("nan")
        ok = math.isfinite(v) and (v > 0 if positive else v >= 0)
        if not ok:
            raise argparse.ArgumentTypeError(f"must be a finite number "
                                             f"{'> 0' if positive else '>= 0'}, got {text!r}")
        return v
    return parse


def _hidden(text):
    try:
        widths = tuple(int(t) for t in text.split(","))
    except ValueError:
        widths = ()
    if not widths or min(widths) < 1:
        raise argparse.ArgumentTypeError(
            f"must be comma-separated positive layer widths such as 64,64, got {text!r}")
    return widths


def _activations(text):
    arms = tuple(t.strip() for t in text.split(","))
    bad = [a for a in arms if a not in ARMS]
    twice = sorted({a for a in arms if arms.count(a) > 1})
    if bad or twice or len(arms) < 2:
        why = (f"unknown {', '.join(map(repr, bad))}" if bad else
               f"{', '.join(map(repr, twice))} repeated" if twice else "only one given")
        raise argparse.ArgumentTypeError(
            f"must be two or more different activations, comma-separated, among "
            f"{','.join(ARMS)} ({why}), got {text!r}")
    return arms


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m gelu_ext moons",
        description="ReLU vs GELU (or any of gelu_ext's activations, --activations) on "
                    "scikit-learn's make_moons, over many seeds: per-seed test table, mean "
                    "+- std, paired difference from the first activation with a 95% "
                    "t-interval.  Needs: pip install 'gelu_ext[experiment]'.",
        epilog="Per seed: stratified 60/20/20 train/validation/test split, inputs standardised "
               "with the training set's statistics, He-uniform initial weights and minibatch "
               "order shared by every arm; the final-epoch weights are tested once (the "
               "validation set only gives the loss curves).")
    p.add_argument("--seeds", type=_common.int_at_least(1), default=10, metavar="N",
                   help="number of seeds (default 10)")
    p.add_argument("--seed-start", type=_common.int_at_least(0), default=0, metavar="S",
                   help="first seed; seeds are seed-start .. seed-start+seeds-1 (default 0)")
    p.add_argument("--samples", type=_common.int_at_least(20), default=2000, metavar="N",
                   help="make_moons n_samples (default 2000)")
    p.add_argument("--noise", type=_float_range(False), default=0.2,
                   help="make_moons noise (default 0.2)")
    p.add_argument("--hidden", type=_hidden, default=(64, 64), metavar="W1,W2,...",
                   help="hidden layer widths, comma-separated (default 64,64)")
    p.add_argument("--epochs", type=_common.int_at_least(1), default=100, metavar="N",
                   help="default 100")
    p.add_argument("--batch-size", type=_common.int_at_least(1), default=32, metavar="N",
                   help="minibatch size (default 32)")
    p.add_argument("--lr", type=_float_range(True), default=1e-3,
                   help="Adam learning rate (default 0.001)")
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="default float64")
    arms = p.add_mutually_exclusive_group()
    arms.add_argument("--approximate", choices=("none", "tanh"), default="none",
                      help="'tanh' adds tanh-GELU as a third arm (default none: ReLU vs exact "
                           "GELU)")
    arms.add_argument("--activations", type=_activations, default=None, metavar="A,B,...",
                      help=f"the arms, comma-separated, among {','.join(ARMS)}; every one is "
                           f"compared with the first (default relu,gelu)")
    p.add_argument("--json", metavar="FILE", help="write all results as JSON to FILE")
    p.add_argument("--plot", metavar="FILE.png",
                   help="plot the first seed's decision boundaries and loss curves to FILE.png")
    return p


def main(argv=None):
    """``python -m gelu_ext moons [options]``; returns the exit code."""
    args = _parser().parse_args(argv)
    _common.require("sklearn", "experiment", package="scikit-learn")
    if args.plot:
        _common.require("matplotlib", "experiment")
    arms = args.activations or DEFAULT_ARMS + (("gelu_tanh",) if args.approximate == "tanh" else ())
    sizes = (2, *args.hidden, 1)
    seeds = list(range(args.seed_start, args.seed_start + args.seeds))
    config = {"samples": args.samples, "noise": args.noise, "sizes": list(sizes),
              "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr,
              "adam": {"betas": list(ADAM_BETAS), "eps": ADAM_EPS}, "dtype": args.dtype,
              "approximate": args.approximate, "arms": list(arms), "seeds": seeds,
              "split_fractions": list(SPLIT), "init": "He uniform U(+-sqrt(6/fan_in)), zero bias",
              "selection": "final epoch (validation only watched)",
              "inputs": "standardised with the training set's mean and std"}
    t0, c0 = time.perf_counter(), time.process_time()
    _common.progress(f"moons: {len(seeds)} seed{'s' * (len(seeds) != 1)} x {len(arms)} networks "
                  f"({', '.join(ARMS[a][0] for a in arms)}), {args.epochs} epochs")
    result = run_experiment(seeds, sizes=sizes, arms=arms, n_samples=args.samples,
                            noise=args.noise, epochs=args.epochs, batch_size=args.batch_size,
                            lr=args.lr, dtype=args.dtype, keep_first=bool(args.plot),
                            progress=_common.progress)
    summary = summarise(result, arms)
    for line in format_report(config, result, summary, arms):
        print(line)
    seconds = {"train_and_test": result["seconds"]["total"], "data": result["seconds"]["data"]}
    if args.plot:
        t_plot = time.perf_counter()
        plot(args.plot, result["first"], arms, result)
        seconds["plot"] = time.perf_counter() - t_plot
        _common.progress(f"moons: plot written to {args.plot}")
    seconds["total"] = time.perf_counter() - t0
    # CPU time too: on a shared machine wall time mostly measures the neighbours.
    seconds["cpu_total"] = time.process_time() - c0
    print(f"total time {seconds['total']:.1f} s wall, {seconds['cpu_total']:.1f} s CPU "
          f"({len(seeds)} seed{'s' * (len(seeds) != 1)} x {len(arms)} networks, "
          f"trained together as one stack)")
    if args.json:
        doc = {"experiment": "moons", "config": config, "split": result["split"],
               **summary, "caveat": CAVEAT,
               "environment": _common.machine_info(("sklearn", "scipy", "matplotlib")),
               "seconds": seconds}
        _common.write_json(args.json, doc)
        _common.progress(f"moons: results written to {args.json}")
    return 0
