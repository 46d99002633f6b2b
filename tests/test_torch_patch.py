"""patch_model / unpatch_model around what users do in between (PEFT LoRA,
merge_and_unload, swapped children, hooks, train/eval, dtype), the coverage
the report states (nothing replaced, gated MLPs not fused, functional call
sites, ``check`` and ``example_inputs``), the fused Phi-3, T5 and ModernBERT
blocks, and ``functional_mode``.

Models are transformers' classes built from tiny configs with random weights
(no hub); each test takes a second or two, the compiled ones are ``slow``.
"""
import copy
import doctest
import importlib
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="gelu_ext.torch needs PyTorch")

import torch.nn.functional as F  # noqa: E402

import gelu_ext.torch as gt  # noqa: E402
from gelu_ext.torch import functional as GF  # noqa: E402
from gelu_ext.torch._mode import _counting  # noqa: E402

# PEFT asks transformers whether gradient checkpointing is on, by a name
# transformers 5.x deprecates: theirs, not ours
peft_warning = pytest.mark.filterwarnings(
    "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")


def bits(t):
    return t.detach().contiguous().view(-1).view(torch.int32 if t.element_size() == 4
                                                 else torch.int64).numpy()


def transformers_or_skip():
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    return transformers


def tiny(cls_name, config_name, **cfg):
    transformers = transformers_or_skip()
    config = getattr(transformers, config_name)(**cfg)
    torch.manual_seed(0)
    return getattr(transformers, cls_name)(config).eval()


LLAMA = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
             num_key_value_heads=2, vocab_size=100)


def tiny_llama():
    return tiny("LlamaForCausalLM", "LlamaConfig", **LLAMA)


def tiny_phi3(hidden_act="silu"):
    return tiny("Phi3ForCausalLM", "Phi3Config", hidden_act=hidden_act, pad_token_id=0, **LLAMA)


def tiny_t5(feed_forward_proj="gated-gelu"):
    return tiny("T5ForConditionalGeneration", "T5Config", vocab_size=100, d_model=32, d_kv=8,
                d_ff=64, num_layers=2, num_heads=2, feed_forward_proj=feed_forward_proj,
                decoder_start_token_id=0)


def tiny_lfm2():
    # one short-conv layer and one attention layer: both kinds of block
    return tiny("Lfm2ForCausalLM", "Lfm2Config", vocab_size=100, hidden_size=32,
                intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                num_key_value_heads=2, layer_types=["conv", "full_attention"])


def tiny_whisper():
    model = tiny("WhisperModel", "WhisperConfig", vocab_size=100, num_mel_bins=8, encoder_layers=1,
                 decoder_layers=1, d_model=32, encoder_attention_heads=2,
                 decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                 max_source_positions=16, max_target_positions=16, pad_token_id=0,
                 decoder_start_token_id=1)
    feats = torch.randn(1, 8, 32, generator=torch.Generator().manual_seed(2))
    return model, {"input_features": feats, "decoder_input_ids": torch.tensor([[1, 5, 6]])}


def tiny_mamba():
    return tiny("MambaForCausalLM", "MambaConfig", vocab_size=100, hidden_size=32, state_size=4,
                num_hidden_layers=2, expand=2, conv_kernel=4)


def tiny_roberta_mlm():
    return tiny("RobertaForMaskedLM", "RobertaConfig", vocab_size=100, hidden_size=32,
                num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                max_position_embeddings=32)


def tiny_modernbert():
    return tiny("ModernBertForMaskedLM", "ModernBertConfig", vocab_size=100, hidden_size=32,
                intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                max_position_embeddings=32, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                cls_token_id=1, sep_token_id=2)


IDS = torch.randint(0, 100, (2, 7), generator=torch.Generator().manual_seed(1))


def logits(model, **extra):
    with torch.no_grad():
        return model(input_ids=IDS, **extra).logits


def mlps(model):
    return [layer.mlp for layer in model.model.layers]


def lora(model):
    """PEFT LoRA on the gated MLP's gate and up projections, initialised
    non-zero so that it changes the logits."""
    peft = pytest.importorskip("peft")
    cfg = peft.LoraConfig(target_modules=["gate_proj", "up_proj"], init_lora_weights=False)
    torch.manual_seed(2)
    return peft.get_peft_model(model, cfg)


def lora_keys(model):
    return sorted(k for k in model.state_dict() if "lora_" in k)


# ------------------------------------------- unpatch after PEFT LoRA & co --

@peft_warning
def test_unpatch_after_lora_keeps_the_lora_layers_and_the_logits():
    model = tiny_llama()
    without_lora = logits(model)
    never_patched = copy.deepcopy(model)
    gt.patch_model(model, gated_mlp=True)
    peft_model = lora(model)
    keys = lora_keys(peft_model)
    assert len(keys) == 8                        # A and B, gate and up, two layers
    patched = logits(peft_model)
    assert gt.unpatch_model(peft_model) == [f"base_model.model.model.layers.{i}.mlp" for i in (0, 1)]
    assert lora_keys(peft_model) == keys
    assert [type(m).__name__ for m in mlps(peft_model.base_model.model)] == ["LlamaMLP"] * 2
    # the same LoRA put on a model never patched computes the same bits
    twin = lora(never_patched)
    twin.load_state_dict(peft_model.state_dict())
    np.testing.assert_array_equal(bits(logits(peft_model)), bits(logits(twin)))
    # and the patched model computed the same within float32 rounding (its
    # SiLU is gelu_ext's, not torch's)
    torch.testing.assert_close(logits(peft_model), patched, rtol=1e-5, atol=1e-5)
    assert (logits(peft_model) - without_lora).abs().max() > 1e-2       # the LoRA counts


@peft_warning
def test_unpatch_after_merge_and_unload_keeps_the_merged_weights():
    model = tiny_llama()
    never_patched = copy.deepcopy(model)
    gt.patch_model(model, gated_mlp=True)
    peft_model = lora(model)
    twin = lora(never_patched)
    twin.load_state_dict(peft_model.state_dict())
    merged = peft_model.merge_and_unload()
    assert type(mlps(merged)[0]) is gt.GatedMLP
    gt.unpatch_model(merged)
    twin_merged = twin.merge_and_unload()
    assert type(mlps(merged)[0]).__name__ == "LlamaMLP"
    assert type(mlps(merged)[0].gate_proj) is torch.nn.Linear
    np.testing.assert_array_equal(bits(logits(merged)), bits(logits(twin_merged)))


@peft_warning
def test_lora_before_patch_is_fused_around_and_unpatched():
    peft_model = lora(tiny_llama())
    before = logits(peft_model)
    keys = lora_keys(peft_model)
    report = gt.patch_model(peft_model, gated_mlp=True)
    assert [type(r.new).__name__ for r in report.replaced] == ["GatedMLP"] * 2
    assert type(report.replaced[0].new.gate_proj).__name__ == "Linear"       # peft's lora.Linear
    assert "lora_A" in dict(report.replaced[0].new.gate_proj.named_children())
    assert lora_keys(peft_model) == keys
    torch.testing.assert_close(logits(peft_model), before, rtol=1e-5, atol=1e-5)
    gt.unpatch_model(peft_model)
    np.testing.assert_array_equal(bits(logits(peft_model)), bits(before))


def test_unpatch_keeps_a_child_swapped_by_hand():
    model = tiny_llama()
    gt.patch_model(model, gated_mlp=True)
    torch.manual_seed(3)
    down = torch.nn.Linear(64, 32, bias=False)
    mlps(model)[0].down_proj = down
    patched = logits(model)
    gt.unpatch_model(model)
    assert type(mlps(model)[0]).__name__ == "LlamaMLP" and mlps(model)[0].down_proj is down
    torch.testing.assert_close(logits(model), patched, rtol=1e-5, atol=1e-5)


def test_unpatch_carries_a_child_added_to_ours():
    model = tiny_llama()
    gt.patch_model(model, gated_mlp=True)
    probe = torch.nn.Identity()
    mlps(model)[0].probe = probe
    keys = list(model.state_dict())
    gt.unpatch_model(model)
    assert mlps(model)[0].probe is probe and list(model.state_dict()) == keys


def add_forward_hook(mlp):
    mlp.register_forward_hook(lambda *a: None)


def add_forward_pre_hook(mlp):
    mlp.register_forward_pre_hook(lambda *a: None)


def add_parameter(mlp):
    mlp.scale = torch.nn.Parameter(torch.ones(()))


def add_buffer(mlp):
    mlp.register_buffer("mask", torch.ones(3))


def remove_child(mlp):
    del mlp.up_proj


def add_child_the_original_has(mlp):
    mlp.act_fn = torch.nn.Tanh()


@pytest.mark.parametrize("change, message", [
    (add_forward_hook, r"1 forward hook\(s\) set on it since patch_model: LlamaMLP would take "
                       r"them without their handles"),
    (add_forward_pre_hook, r"1 forward pre-hook\(s\)"),
    (add_parameter, r"parameters or buffers 'scale' added to it"),
    (add_buffer, r"parameters or buffers 'mask' added to it"),
    (remove_child, r"its submodule 'up_proj' was removed: LlamaMLP calls it"),
    (add_child_the_original_has, r"submodule 'act_fn' was added to it, but LlamaMLP has its own"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_unpatch_refuses_what_the_original_cannot_take_and_restores_nothing(change, message):
    model = tiny_llama()
    gt.patch_model(model, gated_mlp=True)
    change(mlps(model)[1])
    with pytest.raises(RuntimeError, match=r"restored nothing(.|\n)*model\.layers\.1\.mlp "
                                           r"\(GatedMLP, replacing LlamaMLP\): " + message):
        gt.unpatch_model(model)
    assert [type(m) for m in mlps(model)] == [gt.GatedMLP] * 2


@pytest.mark.parametrize("mode", [True, False], ids=["train", "eval"])
def test_unpatch_gives_the_original_the_current_mode(mode):
    model = tiny_llama().train(not mode)
    gt.patch_model(model, gated_mlp=True)
    model.train(mode)
    gt.unpatch_model(model)
    mlp = mlps(model)[0]
    # act_fn was fused away while the mode changed: it follows its block
    assert [m.training for m in mlp.modules()] == [mode] * 5


class LlamaFormMLP(torch.nn.Module):
    """Not a transformers class: its forward is LLaMA's, so it is fused."""

    def __init__(self, act=None):
        super().__init__()
        self.gate_proj = torch.nn.Linear(8, 16)
        self.up_proj = torch.nn.Linear(8, 16)
        self.down_proj = torch.nn.Linear(16, 8)
        self.act_fn = act if act is not None else torch.nn.SiLU()

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


class OtherGatedMLP(LlamaFormMLP):
    """The same children, another function: gates the up projection."""

    def forward(self, x):
        return self.down_proj(self.act_fn(self.up_proj(x)) * self.gate_proj(x))


def test_shared_block_patched_and_unpatched_as_one_object():
    torch.manual_seed(0)
    block = LlamaFormMLP()
    model = torch.nn.Sequential(block, torch.nn.LayerNorm(8), block)
    gt.patch_model(model, gated_mlp=True)
    assert type(model[0]) is gt.GatedMLP and model[0] is model[2]
    up = torch.nn.Linear(8, 16)
    model[2].up_proj = up
    assert gt.unpatch_model(model) == ["0", "2"]
    assert model[0] is block and model[2] is block and block.up_proj is up


def test_to_dtype_while_patched_reaches_the_original():
    torch.manual_seed(0)
    model = torch.nn.Sequential(LlamaFormMLP())
    gt.patch_model(model, gated_mlp=True)
    model.to(torch.float64)
    x = torch.randn(4, 8, dtype=torch.float64)
    patched = model(x)
    gt.unpatch_model(model)
    assert model[0].down_proj.weight.dtype == torch.float64
    torch.testing.assert_close(model(x), patched, rtol=1e-12, atol=1e-12)


def test_a_module_with_hooks_is_not_replaced_and_says_why():
    act = torch.nn.GELU()
    act.register_forward_hook(lambda *a: None)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), act, torch.nn.Linear(4, 4), torch.nn.SiLU())
    report = gt.patch_model(model)
    assert [r.name for r in report.replaced] == ["3"] and model[1] is act
    assert [(s.name, s.reason) for s in report.skipped] == [
        ("1", "GELU has 1 forward hook(s), which would not run on gelu_ext's module")]


# ------------------------------------------------- what the report states --

def test_patching_nothing_warns_naming_the_model_and_functional_mode():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh())
    with pytest.warns(UserWarning, match=r"patch_model replaced nothing in Sequential(.|\n)*"
                                         r"1 skipped(.|\n)*functional_mode"):
        report = gt.patch_model(model)
    assert len(report) == 0


def test_patching_twice_does_not_warn():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU())
    gt.patch_model(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(gt.patch_model(model)) == 0


def test_lfm2_mlp_not_fused_because_it_calls_silu_as_a_function():
    model = tiny_lfm2()
    with pytest.warns(UserWarning, match="replaced nothing in Lfm2ForCausalLM"):
        report = gt.patch_model(model, gated_mlp=True)
    assert [(s.name, type(s.module).__name__) for s in report.not_fused] == [
        ("model.layers.0.feed_forward", "Lfm2MLP"), ("model.layers.1.feed_forward", "Lfm2MLP")]
    assert "calls the activation as a function" in report.not_fused[0].reason
    assert "functional_mode" in report.not_fused[0].reason


def test_gated_names_with_another_forward_are_not_fused_but_their_activation_is_replaced():
    model = torch.nn.Sequential(OtherGatedMLP())
    report = gt.patch_model(model, gated_mlp=True)
    assert [(s.name, s.reason) for s in report.not_fused] == [
        ("0", "its forward is none of the gated forms gelu_ext fuses (LLaMA's, Phi-3's, T5's, "
              "ModernBERT's), so its activation is replaced alone; closest is LLaMA's, from which "
              "it differs: the same names, other operations")]
    assert [(r.name, type(r.new)) for r in report.replaced] == [("0.act_fn", gt.SiLU)]


def test_llama_form_with_a_function_for_act_fn_is_not_fused():
    block = LlamaFormMLP()
    del block.act_fn
    block.act_fn = F.silu
    model = torch.nn.Sequential(block)
    with pytest.warns(UserWarning, match="replaced nothing"):
        report = gt.patch_model(model, gated_mlp=True)
    assert [(s.name, s.reason) for s in report.not_fused] == [
        ("0", "its forward is LLaMA's gated MLP but act_fn is not a submodule "
              "(a function is reached by functional_mode())")]


def test_t5_gated_relu_is_not_fused_and_its_relu_is_replaced():
    model = tiny_t5("gated-relu")
    report = gt.patch_model(model, gated_mlp=True)
    assert len(report.not_fused) == 4 and "ReLU has no fused gated op" in report.not_fused[0].reason
    assert {type(r.new) for r in report.replaced} == {gt.ReLU} and len(report) == 4


@pytest.mark.parametrize("replace_with, fused", [("gelu_new", "gate='gelu', approximate='tanh'"),
                                                  ("relu", None)])
def test_replace_with_decides_the_gate_of_fused_blocks(replace_with, fused):
    model = torch.nn.Sequential(LlamaFormMLP())
    report = gt.patch_model(model, gated_mlp=True, replace_with=replace_with)
    if fused:
        assert type(model[0]) is gt.GatedMLP and model[0].extra_repr() == fused
    else:
        assert "replace_with='relu' has no fused gated op" in report.not_fused[0].reason
        assert type(model[0].act_fn) is gt.ReLU


def test_check_on_llama_everything_ours_ran():
    model = tiny_llama()
    report = gt.patch_model(model, gated_mlp=True)
    coverage = report.check(model, input_ids=IDS)
    assert coverage.never_called == [] and coverage.torch_activations == {}
    assert coverage.gelu_ext_ops == {"swiglu": 2}
    assert not any(m._forward_pre_hooks or m._forward_hooks for m in model.modules())  # removed


def test_check_on_mamba_finds_the_replaced_act_never_called():
    model = tiny_mamba()
    report = gt.patch_model(model)
    assert [r.name for r in report.replaced] == [f"backbone.layers.{i}.mixer.act" for i in (0, 1)]
    coverage = report.check(model, input_ids=IDS)
    # the mixer builds its activation from the config on each call instead
    assert coverage.never_called == [r.name for r in report.replaced]
    assert coverage.torch_activations == {"silu": 4} and coverage.gelu_ext_ops == {}


def test_check_on_lfm2_counts_torch_silu_then_functional_mode_routes_it():
    model = tiny_lfm2()
    with pytest.warns(UserWarning, match="replaced nothing"):
        report = gt.patch_model(model)
    assert report.check(model, input_ids=IDS).torch_activations == {"silu": 2}
    with gt.functional_mode():
        coverage = report.check(model, input_ids=IDS)
    assert coverage.torch_activations == {} and coverage.gelu_ext_ops == {"silu": 2}


def test_summary_without_a_forward_says_coverage_is_not_verified():
    report = gt.patch_model(tiny_mamba())
    assert report.coverage is None
    assert str(report).startswith("PatchReport: replaced 2 modules (not verified: pass "
                                  "example_inputs= or call report.check(model, ...))")


def test_example_inputs_run_the_check_and_mamba_reads_as_nothing_called():
    report = gt.patch_model(tiny_mamba(), example_inputs={"input_ids": IDS})
    assert report.coverage.never_called == [r.name for r in report.replaced]
    assert str(report).startswith("PatchReport: replaced 2 modules, 0 called by the checked "
                                  "forward, 2 never called; torch activations still run: silu x4")
    assert "backbone.layers.0.mixer.act: SiLUActivation -> SiLU() (never called)" in str(report)


def test_check_keeps_its_coverage_for_the_summary():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU())
    report = gt.patch_model(model)
    coverage = report.check(model, torch.randn(2, 4))
    assert report.coverage is coverage
    assert str(report).startswith("PatchReport: replaced 1 module, 1 called by the checked "
                                  "forward, 0 never called; torch activations still run: none")


@pytest.mark.parametrize("example_inputs", [
    (torch.randn(2, 4),), [torch.randn(2, 4)], {"input": torch.randn(2, 4)}, torch.randn(2, 4),
], ids=["tuple", "list", "dict", "tensor"])
def test_example_inputs_as_arguments_keywords_or_one_tensor(example_inputs):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU())
    report = gt.patch_model(model, example_inputs=example_inputs)
    assert report.coverage.never_called == [] and report.coverage.gelu_ext_ops == {"gelu": 1}


def test_example_inputs_of_another_kind_are_refused_before_patching():
    model = torch.nn.Sequential(torch.nn.GELU())
    with pytest.raises(TypeError, match=r"example_inputs must be a tuple \(positional arguments\), "
                                        r"a dict \(keyword arguments\) or a Tensor, got int"):
        gt.patch_model(model, example_inputs=3)
    assert type(model[0]) is torch.nn.GELU


FUNCTIONAL_SITES = {
    # model: (its tiny build and inputs, the modules listed with what their
    # code calls, where torch's activations run in one forward)
    "mamba": (lambda: (tiny_mamba(), {"input_ids": IDS}),
              {f"backbone.layers.{i}.mixer": (
                  "ACT2FN[...] (a module built per call) in causal_conv1d_update, causal_conv1d_fn",
                  "F.silu in mamba_selective_state_update, mamba_selective_scan") for i in (0, 1)},
              {f"backbone.layers.{i}.mixer": {"silu": 2} for i in (0, 1)}),
    "roberta-mlm": (lambda: (tiny_roberta_mlm(), {"input_ids": IDS}),
                    {"lm_head": ("gelu (a GELUActivation outside the model's modules) in forward",)},
                    {"lm_head": {"gelu": 1}}),
    "whisper": (lambda: tiny_whisper(),
                {"encoder": ("nn.functional.gelu in forward",)},
                {"encoder": {"gelu": 2}}),
    # the short-conv layer's helper applies an activation only when given
    # one: listed by its code, not run
    "lfm2": (lambda: (tiny_lfm2(), {"input_ids": IDS}),
             {"model.layers.0.conv": ("ACT2FN[...] (a module built per call) in "
                                      "causal_conv1d_update, causal_conv1d_fn",),
              **{f"model.layers.{i}.feed_forward": ("F.silu in forward",) for i in (0, 1)}},
             {f"model.layers.{i}.feed_forward": {"silu": 1} for i in (0, 1)}),
}


@pytest.mark.filterwarnings("ignore:patch_model replaced nothing:UserWarning")     # LFM2
@pytest.mark.parametrize("which", list(FUNCTIONAL_SITES))
def test_functional_call_sites_are_listed_by_module(which):
    build, listed, _ = FUNCTIONAL_SITES[which]
    model, _ = build()
    report = gt.patch_model(model)
    assert {f.name: f.calls for f in report.functional} == listed
    lines = str(report).splitlines()
    for name, calls in listed.items():
        assert any(line.startswith(f"  {name}: ") and "; ".join(calls) in line for line in lines)


@pytest.mark.filterwarnings("ignore:patch_model replaced nothing:UserWarning")
@pytest.mark.parametrize("which", list(FUNCTIONAL_SITES))
def test_check_names_the_module_running_each_torch_activation(which):
    build, _, ran = FUNCTIONAL_SITES[which]
    model, inputs = build()
    report = gt.patch_model(model, example_inputs=inputs)
    assert report.coverage.torch_activations_in == ran


@pytest.mark.filterwarnings("ignore:patch_model replaced nothing:UserWarning")
@pytest.mark.parametrize("which", list(FUNCTIONAL_SITES))
def test_functional_mode_reaches_every_listed_call_site(which):
    build, _, _ = FUNCTIONAL_SITES[which]
    model, inputs = build()
    report = gt.patch_model(model)
    with gt.functional_mode():
        coverage = report.check(model, **inputs)
    assert coverage.torch_activations == {} and coverage.torch_activations_in == {}


def test_an_activation_function_held_by_the_instance_is_listed():
    block = LlamaFormMLP()
    del block.act_fn
    block.act_fn = F.silu
    with pytest.warns(UserWarning, match="replaced nothing"):
        report = gt.patch_model(torch.nn.Sequential(block))
    assert [(f.name, f.calls) for f in report.functional] == [
        ("0", ("self.act_fn (F.silu) in forward",))]


def test_modules_whose_forward_calls_no_activation_are_not_listed():
    report = gt.patch_model(tiny_llama(), gated_mlp=True)
    assert report.functional == []


class OldLlamaMLP(LlamaFormMLP):
    """LLaMA's MLP as transformers 4.46 wrote it: a tensor-parallel branch
    before the form gelu_ext fuses."""

    def __init__(self):
        super().__init__()
        self.config = type("Config", (), {"pretraining_tp": 1})()
        self.intermediate_size = 16

    def forward(self, x):
        if self.config.pretraining_tp > 1:
            slice = self.intermediate_size // self.config.pretraining_tp
            gate_proj_slices = self.gate_proj.weight.split(slice, dim=0)
            up_proj_slices = self.up_proj.weight.split(slice, dim=0)
            down_proj_slices = self.down_proj.weight.split(slice, dim=1)
            gate_proj = torch.cat(
                [F.linear(x, gate_proj_slices[i]) for i in range(self.config.pretraining_tp)], dim=-1)
            up_proj = torch.cat([F.linear(x, up_proj_slices[i])
                                 for i in range(self.config.pretraining_tp)], dim=-1)
            intermediate_states = (self.act_fn(gate_proj) * up_proj).split(slice, dim=2)
            down_proj = [F.linear(intermediate_states[i], down_proj_slices[i])
                         for i in range(self.config.pretraining_tp)]
            down_proj = sum(down_proj)
        else:
            down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


class OldQwen2MLP(LlamaFormMLP):
    """Qwen2's MLP as transformers 4.46 wrote it: LLaMA's form, its argument
    named otherwise (which a caller passing it by name would see)."""

    def forward(self, hidden_state):
        return self.down_proj(self.act_fn(self.gate_proj(hidden_state)) * self.up_proj(hidden_state))


@pytest.mark.parametrize("block, differs", [
    (OldLlamaMLP, "also reads config, pretraining_tp, intermediate_size, weight, split, torch, ..."),
    (OldQwen2MLP, "arguments (self, hidden_state), not (self, x)"),
], ids=["llama-4.46", "qwen2-4.46"])
def test_a_gated_mlp_of_another_form_says_how_it_differs(block, differs):
    report = gt.patch_model(torch.nn.Sequential(block()), gated_mlp=True)
    assert report.not_fused[0].reason.endswith(f"closest is LLaMA's, from which it differs: {differs}")


# ------------------------------------ fused Phi-3, T5 and ModernBERT blocks --

@pytest.mark.parametrize("transformers_class, config, fused", [
    ("models.llama.modeling_llama.LlamaMLP", "LlamaConfig", gt.GatedMLP),
    ("models.mistral.modeling_mistral.MistralMLP", "MistralConfig", gt.GatedMLP),
    ("models.qwen2.modeling_qwen2.Qwen2MLP", "Qwen2Config", gt.GatedMLP),
    ("models.gemma.modeling_gemma.GemmaMLP", "GemmaConfig", gt.GatedMLP),
    ("models.phi3.modeling_phi3.Phi3MLP", "Phi3Config", gt.PackedGatedMLP),
    ("models.glm.modeling_glm.GlmMLP", "GlmConfig", gt.PackedGatedMLP),
    ("models.t5.modeling_t5.T5DenseGatedActDense", "T5Config", gt.GatedActDense),
    ("models.mt5.modeling_mt5.MT5DenseGatedActDense", "MT5Config", gt.GatedActDense),
    ("models.longt5.modeling_longt5.LongT5DenseGatedActDense", "LongT5Config", gt.GatedActDense),
    ("models.modernbert.modeling_modernbert.ModernBertMLP", "ModernBertConfig", gt.PackedGatedDense),
], ids=lambda v: v.rsplit(".", 1)[-1] if isinstance(v, str) else "")
def test_transformers_gated_mlp_classes_are_fused(transformers_class, config, fused):
    transformers = transformers_or_skip()
    module, cls = transformers_class.rsplit(".", 1)
    cls = getattr(importlib.import_module(f"transformers.{module}"), cls)
    cfg = getattr(transformers, config)(hidden_size=16, intermediate_size=32, d_model=16, d_ff=32,
                                        num_attention_heads=2, num_key_value_heads=2, num_heads=2,
                                        hidden_act="silu", dense_act_fn="gelu_new")
    torch.manual_seed(0)
    block = cls(cfg).eval()
    x = torch.randn(3, 16)
    before = block(x)
    model = torch.nn.Sequential(block)
    report = gt.patch_model(model, gated_mlp=True)
    assert [type(r.new) for r in report.replaced] == [fused] and report.not_fused == []
    torch.testing.assert_close(model(x), before, rtol=1e-5, atol=1e-6)
    gt.unpatch_model(model)
    assert model[0] is block


def test_packed_gated_mlp_is_the_unfused_gelu_ext_composition_bit_for_bit():
    torch.manual_seed(0)
    gate_up, down = torch.nn.Linear(16, 64), torch.nn.Linear(32, 16)
    x = torch.randn(5, 16)
    gate, up = gate_up(x).chunk(2, dim=-1)
    for g, act in [("silu", GF.silu), ("gelu", GF.gelu)]:
        fused = gt.PackedGatedMLP(gate_up, down, gate=g)(x)
        np.testing.assert_array_equal(bits(fused), bits(down(up * act(gate))))


@pytest.mark.parametrize("hidden_act", ["silu", "gelu"])
def test_tiny_phi3_fused_close_and_unpatched_bit_for_bit(hidden_act):
    model = tiny_phi3(hidden_act)
    before = logits(model)
    report = gt.patch_model(model, gated_mlp=True)
    assert [type(r.new) for r in report.replaced] == [gt.PackedGatedMLP] * 2
    assert report.replaced[0].new.gate == hidden_act
    torch.testing.assert_close(logits(model), before, rtol=1e-5, atol=1e-5)
    saved = copy.deepcopy(model)                  # the original travels with the copy
    for m in (model, saved):
        gt.unpatch_model(m)
        np.testing.assert_array_equal(bits(logits(m)), bits(before))


def test_gated_act_dense_is_the_unfused_gelu_ext_composition_bit_for_bit():
    torch.manual_seed(0)
    wi_0, wi_1, wo = torch.nn.Linear(16, 32), torch.nn.Linear(16, 32), torch.nn.Linear(32, 16)
    x = torch.randn(5, 16)
    fused = gt.GatedActDense(wi_0, wi_1, wo, torch.nn.Dropout(0.1).eval(), approximate="tanh")(x)
    np.testing.assert_array_equal(bits(fused), bits(wo(GF.gelu(wi_0(x), "tanh") * wi_1(x))))


def test_gated_act_dense_casts_to_wo_as_t5_does():
    torch.manual_seed(0)
    wi_0, wi_1 = torch.nn.Linear(16, 32), torch.nn.Linear(16, 32)
    wo = torch.nn.Linear(32, 16).double()
    block = gt.GatedActDense(wi_0, wi_1, wo, torch.nn.Identity())
    assert block(torch.randn(2, 16)).dtype == torch.float64
    with pytest.raises(RuntimeError, match="same dtype"):       # LongT5's form does not cast
        gt.GatedActDense(wi_0, wi_1, wo, torch.nn.Identity(), cast_to_wo=False)(torch.randn(2, 16))


def test_tiny_t5_gated_gelu_fused_close_and_unpatched_bit_for_bit():
    model = tiny_t5()
    before = logits(model, decoder_input_ids=IDS)
    report = gt.patch_model(model, gated_mlp=True)
    assert [type(r.new) for r in report.replaced] == [gt.GatedActDense] * 4
    assert repr(report.replaced[0].new).startswith(
        "GatedActDense(\n  gate='gelu', approximate='tanh', cast_to_wo=True")
    torch.testing.assert_close(logits(model, decoder_input_ids=IDS), before, rtol=1e-5, atol=1e-5)
    assert report.check(model, input_ids=IDS, decoder_input_ids=IDS).gelu_ext_ops == {"geglu": 4}
    gt.unpatch_model(model)
    np.testing.assert_array_equal(bits(logits(model, decoder_input_ids=IDS)), bits(before))


def test_packed_gated_dense_is_the_unfused_gelu_ext_composition_bit_for_bit():
    torch.manual_seed(0)
    wi, wo = torch.nn.Linear(16, 64), torch.nn.Linear(32, 16)
    x = torch.randn(5, 16)
    input, gate = wi(x).chunk(2, dim=-1)
    for approximate in ("none", "tanh"):
        fused = gt.PackedGatedDense(wi, torch.nn.Dropout(0.1).eval(), wo, "gelu", approximate)(x)
        np.testing.assert_array_equal(bits(fused), bits(wo(GF.gelu(input, approximate) * gate)))


def test_tiny_modernbert_geglu_fused_close_and_unpatched_bit_for_bit():
    model = tiny_modernbert()
    before = logits(model)
    keys = list(model.state_dict())
    report = gt.patch_model(model, gated_mlp=True, example_inputs={"input_ids": IDS})
    assert [(r.name, type(r.new)) for r in report.replaced] == [
        ("model.layers.0.mlp", gt.PackedGatedDense), ("model.layers.1.mlp", gt.PackedGatedDense),
        ("head.act", gt.GELU)]
    assert report.not_fused == [] and list(model.state_dict()) == keys
    assert report.coverage.gelu_ext_ops == {"geglu": 2, "gelu": 1}
    torch.testing.assert_close(logits(model), before, rtol=1e-5, atol=1e-5)
    gt.unpatch_model(model)
    np.testing.assert_array_equal(bits(logits(model)), bits(before))


# ---------------------------------------------------------- functional_mode --

X = torch.linspace(-8, 8, 41)          # ReLU6 clips at 6

# torch's spellings that functional_mode routes, each with the op it runs: by
# hand, as they are torch's names, the independent side of the check
ROUTED = [
    ("F.gelu", lambda x: F.gelu(x), lambda x: GF.gelu(x), "gelu"),
    ("F.gelu-tanh", lambda x: F.gelu(x, approximate="tanh"), lambda x: GF.gelu(x, "tanh"), "gelu"),
    ("F.silu", F.silu, GF.silu, "silu"),
    ("F.relu", F.relu, GF.relu, "relu"),
    ("torch.relu", torch.relu, GF.relu, "relu"),
    ("Tensor.relu", torch.Tensor.relu, GF.relu, "relu"),
    ("nn.GELU", torch.nn.GELU(), lambda x: GF.gelu(x), "gelu"),
    ("nn.SiLU", torch.nn.SiLU(), GF.silu, "silu"),
    ("F.relu6", F.relu6, GF.relu6, "relu6"),
    ("F.hardtanh-0-6", lambda x: F.hardtanh(x, 0.0, 6.0), GF.relu6, "relu6"),
    ("nn.ReLU6", torch.nn.ReLU6(), GF.relu6, "relu6"),
]


@pytest.mark.parametrize("torch_fn, ours, op", [r[1:] for r in ROUTED], ids=[r[0] for r in ROUTED])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_functional_mode_routes_to_gelu_ext(torch_fn, ours, op, dtype):
    x = X.to(dtype)
    counter = _counting()
    with gt.functional_mode(), counter:
        y = torch_fn(x)
    assert counter.gelu_ext_ops == {op: 1} and counter.torch_activations == {}
    np.testing.assert_array_equal(bits(y.float()), bits(ours(x).float()))


INPLACE = [
    ("F.relu-inplace", lambda x: F.relu(x, inplace=True), GF.relu),
    ("F.relu_", F.relu_, GF.relu),
    ("torch.relu_", torch.relu_, GF.relu),
    ("Tensor.relu_", torch.Tensor.relu_, GF.relu),
    ("F.silu-inplace", lambda x: F.silu(x, inplace=True), GF.silu),
    ("F.relu6-inplace", lambda x: F.relu6(x, inplace=True), GF.relu6),
    ("nn.ReLU6-inplace", torch.nn.ReLU6(inplace=True), GF.relu6),
]


@pytest.mark.parametrize("torch_fn, ours", [r[1:] for r in INPLACE], ids=[r[0] for r in INPLACE])
def test_functional_mode_inplace_writes_the_input(torch_fn, ours):
    x = X.clone()
    counter = _counting()
    with gt.functional_mode(), counter:
        y = torch_fn(x)
    assert y is x and counter.torch_activations == {} and sum(counter.gelu_ext_ops.values()) == 1
    np.testing.assert_array_equal(bits(x), bits(ours(X)))


@pytest.mark.parametrize("call", [
    lambda: F.relu(torch.arange(-3, 3)),                    # integers: torch's
    lambda: F.gelu(torch.ones(3, device="meta")),           # not a CPU tensor: torch's
    lambda: torch.sigmoid(X),                               # not routed
    lambda: torch.tanh(X),
    lambda: F.hardtanh(X),                                  # bounds (-1, 1): not ReLU6
    lambda: torch.nn.Hardtanh(0.0, 5.0)(X),
], ids=["int-relu", "meta-gelu", "sigmoid", "tanh", "hardtanh", "hardtanh-0-5"])
def test_functional_mode_leaves_everything_else_to_torch(call):
    with gt.functional_mode():
        counter = _counting()
        with counter:
            call()
    assert counter.gelu_ext_ops == {}


def test_functional_mode_gradients_are_gelu_ext_s():
    x = X.double().requires_grad_()
    with gt.functional_mode():
        F.gelu(x).sum().backward()
    x2 = X.double().requires_grad_()
    GF.gelu(x2).sum().backward()
    np.testing.assert_array_equal(bits(x.grad), bits(x2.grad))


def test_functional_mode_on_tiny_lfm2_no_torch_activation_runs():
    model = tiny_lfm2()
    before = logits(model)
    counter = _counting()
    with torch.no_grad(), gt.functional_mode(), counter:
        after = model(input_ids=IDS).logits
    assert counter.torch_activations == {} and counter.gelu_ext_ops == {"silu": 2}
    torch.testing.assert_close(after, before, rtol=1e-5, atol=1e-5)


def test_functional_mode_on_tiny_whisper_no_torch_activation_runs():
    model, inputs = tiny_whisper()
    with torch.no_grad():
        before = model(**inputs).last_hidden_state
    counter = _counting()
    with torch.no_grad(), gt.functional_mode(), counter:
        after = model(**inputs).last_hidden_state
    # the conv stem's two F.gelu calls and the two layers' GELU modules
    assert counter.torch_activations == {} and counter.gelu_ext_ops == {"gelu": 4}
    torch.testing.assert_close(after, before, rtol=1e-5, atol=1e-5)


def aten_activations_compiled(fn, *args, inside=False):
    """Compile ``fn`` (fullgraph) under functional_mode, entered around the
    compiled call or ``inside`` the compiled function, and return (its
    output, the aten activation ops, gelu_ext's ops in the graph AOTAutograd
    hands the backend).  A TorchDispatchMode cannot run around a compiled call
    (dynamo refuses it), so the graph is read instead."""
    from torch._dynamo.backends.common import aot_autograd
    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def in_mode(*a):
        with gt.functional_mode():
            return fn(*a)

    torch._dynamo.reset()
    compiled = torch.compile(in_mode if inside else fn, fullgraph=True,
                             backend=aot_autograd(fw_compiler=record))
    if inside:
        out = compiled(*args)
    else:
        with gt.functional_mode():
            out = compiled(*args)
    ops = [str(n.target) for g in graphs for n in g.graph.nodes if n.op == "call_function"]
    return (out, [o for o in ops if o.startswith("aten.") and o.split(".")[1] in
                  ("gelu", "silu", "relu", "gelu_", "silu_", "relu_", "sigmoid")],
            [o for o in ops if o.startswith("gelu_ext.")])


@pytest.mark.parametrize("inside", [False, True], ids=["around", "inside"])
def test_functional_mode_under_torch_compile_fullgraph(inside):
    def f(x):
        return F.gelu(x) + F.silu(x) * torch.relu(x) + x.relu() + torch.tanh(x)

    out, torch_ops, ours = aten_activations_compiled(f, X, inside=inside)
    assert torch_ops == [] and sorted(ours) == ["gelu_ext.gelu.default", "gelu_ext.relu.default",
                                                "gelu_ext.relu.default", "gelu_ext.silu.default"]
    with gt.functional_mode():
        np.testing.assert_array_equal(bits(out), bits(f(X)))


@pytest.mark.slow
@pytest.mark.parametrize("which", ["lfm2", "whisper"])
def test_functional_mode_compiled_tiny_models(which):
    if which == "whisper" and torch.torch_version.TorchVersion(torch.__version__) < (2, 13):
        pytest.skip("torch before 2.13 cannot compile transformers' Whisper in one graph, with or without "
                    "gelu_ext: its forward deep-copies its config, which dynamo there cannot trace")
    if which == "lfm2":
        model, inputs = tiny_lfm2(), {"input_ids": IDS}
    else:
        model, inputs = tiny_whisper()
    with torch.no_grad():
        before = model(**inputs)[0]
        out, torch_ops, ours = aten_activations_compiled(lambda kw: model(**kw)[0], inputs)
    assert torch_ops == [] and len(ours) == {"lfm2": 2, "whisper": 4}[which]
    torch.testing.assert_close(out, before, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
@pytest.mark.xdist_group("inductor")      # with tests/test_torch.py's: one worker pays inductor's start
def test_functional_mode_tiny_lfm2_compiled_by_inductor():
    model = tiny_lfm2()
    before = logits(model)
    compiled = torch.compile(model, fullgraph=True)
    with torch.no_grad(), gt.functional_mode():
        after = compiled(input_ids=IDS).logits
    torch.testing.assert_close(after, before, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("module", ["gelu_ext.torch._mode", "gelu_ext.torch._patch"])
def test_docstring_examples(module):
    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
