"""gpt-oss beyond its fixture, against transformers at test time: MXFP4 experts kept as blocks, attention sinks
under cascade attention, the SwiGLU clamp and YaRN's options, each on the fixture's weights."""

import json
import shutil

import pytest
import safetensors.torch
import torch
import transformers

import prefix_scorer
from test_references import MODELS, hf_scores

FIXTURE = MODELS / "gpt_oss"


def fixture_pairs():
    rows = json.loads((FIXTURE / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    return pairs + [(c, [(x[0] + 1) % 500]) for c, x in pairs]  # shared prefixes for the prefix path


def copy_with(tmp_path, **config_changes):
    shutil.copytree(FIXTURE, tmp_path, dirs_exist_ok=True)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(dict(config, **config_changes)))
    return tmp_path


def random_mxfp4(generator, shape):
    """MXFP4 blocks and scales for a [experts, in, out] tensor as gpt-oss stores it: [experts, out, in / 32, 16]
    bytes of two 4-bit codes, and [experts, out, in / 32] exponents near 2^-8 (weights of the fixture's size)."""
    experts, rows_in, rows_out = shape
    blocks = torch.randint(0, 256, (experts, rows_out, rows_in // 32, 16), generator=generator, dtype=torch.uint8)
    scales = torch.randint(117, 121, (experts, rows_out, rows_in // 32), generator=generator, dtype=torch.uint8)
    return blocks, scales


def test_mxfp4_experts_load_as_transformers_dequantizes_them(tmp_path):
    """A checkpoint whose experts are MXFP4 blocks and scales (quantization_config mxfp4), as gpt-oss is published:
    the scores are transformers' with Mxfp4Config(dequantize=True), its path without kernels, on the plain and prefix
    paths. The experts stay MXFP4 (resident within 1.5x of their bytes on disk), the ones a forward routes to
    dequantized just before their products."""
    copy_with(tmp_path, quantization_config={"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]})
    tensors = safetensors.torch.load_file(FIXTURE / "model.safetensors")
    generator = torch.Generator().manual_seed(0)
    for name in [n for n in tensors if n.endswith(("experts.gate_up_proj", "experts.down_proj"))]:
        tensors[name + "_blocks"], tensors[name + "_scales"] = random_mxfp4(generator, tensors.pop(name).shape)
    safetensors.torch.save_file(tensors, tmp_path / "model.safetensors", metadata={"format": "pt"})

    model = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path, dtype=torch.float32, attn_implementation="eager",
        quantization_config=transformers.Mxfp4Config(dequantize=True)).eval()
    pairs = fixture_pairs()
    want = hf_scores(tmp_path, pairs, model=model)
    for options in ({"tree_max_branches": 0, "min_prefix_len": 2}, {}):
        scorer = prefix_scorer.PrefixScorer.from_pretrained(tmp_path, **options)
        got = scorer.loglikelihood(pairs)
        assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4), options
        assert [g[1] for g in got] == [w[1] for w in want], options
    on_disk = sum(t.numel() for name, t in tensors.items() if name.endswith(("_blocks", "_scales")))
    assert on_disk <= scorer.model_info.quantized_weight_bytes <= 1.5 * on_disk
    fixture = prefix_scorer.PrefixScorer.from_pretrained(FIXTURE).loglikelihood(pairs)
    assert max(abs(g[0] - f[0]) for g, f in zip(got, fixture)) > 1e-2  # the dequantized experts are what scored


@pytest.mark.parametrize("changes", [
    # Every layer full: cascade attention applies, the sinks folded into its log-sum-exp merge.
    dict(layer_types=["full_attention"] * 4),
    # The clamp at gpt-oss's own 7.0 (the fixture's 0.1 binds; this one does not).
    dict(swiglu_limit=7.0, swiglu_alpha=1.0),
    # YaRN with its bounds rounded outwards and the attention factor from mscale and mscale_all_dim.
    dict(rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=8.0, beta_fast=16.0, beta_slow=2.0,
                              truncate=True, mscale=0.8, mscale_all_dim=0.5, original_max_position_embeddings=48)),
], ids=["cascade-with-sinks", "swiglu", "yarn-options"])
def test_variants_score_as_transformers(tmp_path, changes):
    copy_with(tmp_path, **changes)
    pairs = fixture_pairs()
    want = hf_scores(tmp_path, pairs)
    for options in ({"tree_max_branches": 0, "min_prefix_len": 2, "cascade_min_prefix_len": 0}, {}):
        scorer = prefix_scorer.PrefixScorer.from_pretrained(tmp_path, **options)
        got = scorer.loglikelihood(pairs)
        assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4), options
        assert [g[1] for g in got] == [w[1] for w in want], options
        if "layer_types" in changes and options:
            assert scorer.stats["cascade_forwards"] > 0 and scorer.stats["cascade_fallbacks"] == 0
    fixture = prefix_scorer.PrefixScorer.from_pretrained(FIXTURE).loglikelihood(pairs)
    assert max(abs(g[0] - f[0]) for g, f in zip(got, fixture)) > 1e-3  # the change moves the numbers
