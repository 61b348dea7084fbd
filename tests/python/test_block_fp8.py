"""Block-FP8 checkpoints (quantization_config quant_method "fp8" with weight_block_size, as DeepSeek, Qwen, MiniMax
and GLM ship them) load dequantized as transformers dequantizes them: a fixture's projections quantized here to
float8_e4m3fn in blocks of 8 x 8 with fp32 scales score as transformers' own dequantized model scores them."""

import json
import shutil

import pytest
import safetensors.torch
import torch
import transformers

import prefix_scorer
from test_references import MODELS, hf_scores

BLOCK = 8


def quantize_blocks(weight):
    """weight [rows, cols] (multiples of BLOCK) as e4m3 values and the per-block scales that restore them."""
    rows, cols = weight.shape
    blocks = weight.reshape(rows // BLOCK, BLOCK, cols // BLOCK, BLOCK)
    scales = blocks.abs().amax(dim=(1, 3)) / 448.0
    values = (blocks / scales[:, None, :, None]).reshape(rows, cols).to(torch.float8_e4m3fn)
    return values, scales.float()


@pytest.mark.parametrize("family", ["glm4_moe", "qwen3", "deepseek_v3"])
def test_block_fp8_checkpoint_scores_as_transformers_dequantizes_it(family, tmp_path):
    shutil.copytree(MODELS / family, tmp_path, dirs_exist_ok=True)
    tensors = safetensors.torch.load_file(tmp_path / "model.safetensors")
    quantized = {}
    for name, tensor in tensors.items():
        # every projection (experts' too) that blocks tile, as transformers' dequantizer needs (all of them in these
        # fixtures, deepseek_v3's latent projections included); not the router, norms or embeddings
        if name.endswith(("_proj.weight", "_mqa.weight")) and all(size % BLOCK == 0 for size in tensor.shape):
            quantized[name], quantized[name + "_scale_inv"] = quantize_blocks(tensor)
        else:
            quantized[name] = tensor
    if family == "deepseek_v3":  # the tensors the loader reorders (kv_a's rotated rows) and splits (kv_b) among them
        for name in ("kv_a_proj_with_mqa", "kv_b_proj", "q_b_proj"):
            assert f"model.layers.0.self_attn.{name}.weight_scale_inv" in quantized
    safetensors.torch.save_file(quantized, tmp_path / "model.safetensors", metadata={"format": "pt"})
    config = json.loads((tmp_path / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [BLOCK, BLOCK],
                                     "activation_scheme": "dynamic", "fmt": "e4m3"}
    (tmp_path / "config.json").write_text(json.dumps(config))

    model = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path, dtype=torch.float32, attn_implementation="eager",
        quantization_config=transformers.FineGrainedFP8Config(weight_block_size=(BLOCK, BLOCK), dequantize=True)).eval()
    rows = json.loads((MODELS / family / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    want = hf_scores(tmp_path, pairs, model=model)
    # The quantization moved the numbers (so the test sees it), and the engine follows it.
    assert max(abs(w[0] - r["logprob"]) for w, r in zip(want, rows)) > 1e-3
    scorer = prefix_scorer.PrefixScorer.from_pretrained(tmp_path)
    got = scorer.loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    # Projections placed whole and routed experts stay FP8 (a quarter of their fp32 bytes), dequantized before each
    # product (the experts a forward routes to); those the loader reorders or splits (deepseek_v3's kv_a, kv_b, q_b)
    # are dequantized at load.
    kept = scorer.model_info.quantized_weight_bytes
    assert 0 < kept <= 1.5 * sum(t.numel() * t.element_size() for name, t in quantized.items()
                                 if t.dtype == torch.float8_e4m3fn or name.endswith("_scale_inv"))
    experts = sum(t.numel() * t.element_size() for name, t in quantized.items() if ".experts." in name
                  and (t.dtype == torch.float8_e4m3fn or name.endswith("_scale_inv")))
    assert kept >= experts > 0 or family == "qwen3"
    assert [g[1] for g in got] == [w[1] for w in want]
