"""Checkpoints whose projections are stored as integer codes (compressed-tensors' pack-quantized, GPTQ v1 and v2,
AWQ gemm) or as compressed-tensors' FP8, laid out as those releases lay them out: a fixture's projections are
quantized here, written in each format, and the engine must score the checkpoint as transformers scores its exact
dequantization in fp32 (the codes and scales turned back into a plain checkpoint by this file, not by the engine).
Quantization methods the engine does not read are refused by name, and the harnesses hand them to transformers."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import safetensors.torch
import torch
import transformers
from compressed_tensors.compressors.nvfp4.base import NVFP4PackedCompressor
from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme

import prefix_scorer
from prefix_scorer.lm_eval import PrefixScorerLM
from prefix_scorer.scorer import native_refusal
from test_references import MODELS, hf_scores

FAMILY = "llama3"  # hidden 64, MLP 160, kv width 32: every projection splits into groups of 32 and words of 8 codes
GROUP = 32
PROJECTIONS = ("_proj.weight",)


def quantize_groups(weight, bits, symmetric, g_idx=None):
    """weight [out, in] as unsigned codes [out, in], zero points and scales [out, groups] (per input's group: g_idx,
    else consecutive groups of GROUP), such that (codes - zeros) * scales approximates it."""
    out, inputs = weight.shape
    g_idx = torch.arange(inputs) // GROUP if g_idx is None else g_idx
    groups = int(g_idx.max()) + 1
    top = 2 ** bits - 1
    lo = torch.stack([weight[:, g_idx == g].amin(1) for g in range(groups)], 1).clamp(max=0)
    hi = torch.stack([weight[:, g_idx == g].amax(1) for g in range(groups)], 1).clamp(min=0)
    if symmetric:
        scales = torch.maximum(hi, -lo) / (top // 2)
        zeros = torch.full_like(scales, 2 ** (bits - 1), dtype=torch.int32)
    else:
        scales = (hi - lo) / top
        zeros = torch.round(-lo / scales).clamp(0, top).to(torch.int32)
    codes = torch.round(weight / scales[:, g_idx]) + zeros[:, g_idx]
    return codes.clamp(0, top).to(torch.int32), zeros, scales


def dequantized(codes, zeros, scales, g_idx=None):
    g_idx = torch.arange(codes.shape[1]) // GROUP if g_idx is None else g_idx
    return (codes - zeros[:, g_idx]).float() * scales[:, g_idx].float()


def as_int32(words):
    """int64 words of 32 bits as int32 (two's complement)."""
    return torch.where(words >= 2 ** 31, words - 2 ** 32, words).to(torch.int32)


def pack(codes, bits, order=None):
    per_word = 32 // bits
    rows, n = codes.shape
    groups = codes.reshape(rows, n // per_word, per_word).to(torch.int64)
    if order is not None:
        groups = groups[:, :, order]
    words = sum(groups[:, :, k] << (bits * k) for k in range(per_word))
    return as_int32(words)


FP4 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def nvfp4(weight):
    """weight [out, in] as NVFP4: E2M1 codes [out, in] (sign in bit 3), e4m3 scales [out, in / 16] and the global
    scale that maps the largest magnitude to 448 x 6, as compressed-tensors' NVFP4 scheme makes them."""
    groups = weight.reshape(weight.shape[0], -1, 16)
    global_scale = (448.0 * 6.0 / weight.abs().amax()).reshape(1).float()
    scales = (groups.abs().amax(-1) / 6.0 * global_scale).to(torch.float8_e4m3fn)
    scaled = groups / (scales.float() / global_scale).clamp(min=1e-12)[..., None]
    codes = (scaled.abs()[..., None] - FP4[:8]).abs().argmin(-1) + 8 * (scaled < 0)
    return codes.reshape(weight.shape), scales, global_scale


def write_format(fmt, name, weight, tensors, dense):
    """Projection `name` ([out, in]) in format `fmt` into `tensors`; its exact dequantization into dense[name]."""
    module = name[: -len(".weight")]
    inputs = weight.shape[1]
    shuffled = torch.randperm(inputs, generator=torch.Generator().manual_seed(inputs)) // GROUP  # act-order groups
    if fmt == "ct-nvfp4":  # two codes a byte, the even input's in the low bits
        codes, scales, global_scale = nvfp4(weight)
        tensors[name + "_packed"] = (codes[:, 0::2] | (codes[:, 1::2] << 4)).to(torch.uint8)
        tensors[name + "_scale"], tensors[name + "_global_scale"] = scales, global_scale
        dense[name] = FP4[codes] * (scales.float() / global_scale).repeat_interleave(16, 1)
        return
    if fmt == "ct-fp8-channel":
        scales = weight.abs().amax(1, keepdim=True) / 448.0
        values = (weight / scales).to(torch.float8_e4m3fn)
        tensors[name], tensors[name + "_scale"] = values, scales
        dense[name] = values.float() * scales
        return
    g_idx = {"ct-w4-asym-actorder": shuffled, "gptq-v1-desc-act": shuffled,
             "ct-w8-channel": torch.zeros(inputs, dtype=torch.long)}.get(fmt, torch.arange(inputs) // GROUP)
    bits = 8 if fmt in ("ct-w8-channel", "gptq-v2-w8") else 4
    symmetric = fmt in ("ct-w4-sym", "ct-w8-channel", "gptq-v1-desc-act")
    codes, zeros, scales = quantize_groups(weight, bits, symmetric, g_idx)
    if fmt.startswith("ct-"):  # signed codes and zero points stored plus 2^(bits-1): the unsigned ones
        tensors[name + "_packed"] = pack(codes, bits)
        tensors[name + "_scale"] = scales
        tensors[name + "_shape"] = torch.tensor(weight.shape)
        if not symmetric:  # zero points packed along the output
            tensors[name + "_zero_point"] = pack(zeros.t().contiguous(), bits).t().contiguous()
        if fmt == "ct-w4-asym-actorder":
            tensors[name + "_g_idx"] = g_idx.to(torch.int32)
    elif fmt.startswith("gptq"):  # codes packed along the input, zero points along the output (v1: minus one)
        tensors[module + ".qweight"] = pack(codes, bits).t().contiguous()
        tensors[module + ".qzeros"] = pack((zeros - int(fmt == "gptq-v1-desc-act")).t().contiguous(), bits)
        tensors[module + ".g_idx"] = g_idx.to(torch.int32)
    elif fmt == "awq":  # both along the output, in AWQ's nibble order
        order = [0, 2, 4, 6, 1, 3, 5, 7]
        tensors[module + ".qweight"] = pack(codes.t().contiguous(), bits, order)
        tensors[module + ".qzeros"] = pack(zeros.t().contiguous(), bits, order)
    if fmt.startswith(("gptq", "awq")):
        scales = scales.half()
        tensors[module + ".scales"] = scales.t().contiguous()
    dense[name] = dequantized(codes, zeros, scales, g_idx)


CONFIGS = {
    "ct-w4-sym": {"quant_method": "compressed-tensors", "format": "pack-quantized", "quantization_status": "compressed",
                  "ignore": ["lm_head"], "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                      "num_bits": 4, "type": "int", "symmetric": True, "strategy": "group", "group_size": GROUP}}}},
    "ct-w4-asym-actorder": {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
                            "quantization_status": "compressed",
                            "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                                "num_bits": 4, "type": "int", "symmetric": False, "strategy": "group",
                                "group_size": GROUP, "actorder": "weight"}}}},
    "ct-w8-channel": {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
                      "quantization_status": "compressed",
                      "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                          "num_bits": 8, "type": "int", "symmetric": True, "strategy": "channel"}}}},
    "ct-fp8-channel": {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
                       "quantization_status": "compressed",
                       "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                           "num_bits": 8, "type": "float", "symmetric": True, "strategy": "channel"}}}},
    "ct-nvfp4": {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "ignore": ["lm_head"],
                 "quantization_status": "compressed", "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                     "num_bits": 4, "type": "float", "symmetric": True, "strategy": "tensor_group",
                     "group_size": 16}}}},
    "gptq-v1-desc-act": {"quant_method": "gptq", "bits": 4, "group_size": GROUP, "desc_act": True, "sym": True},
    "gptq-v2": {"quant_method": "gptq", "bits": 4, "group_size": GROUP, "desc_act": False, "sym": False,
                "checkpoint_format": "gptq_v2"},
    "gptq-v2-w8": {"quant_method": "gptq", "bits": 8, "group_size": GROUP, "desc_act": False, "sym": False,
                   "checkpoint_format": "gptq_v2"},
    "awq": {"quant_method": "awq", "bits": 4, "group_size": GROUP, "version": "gemm", "zero_point": True},
}


def quantized_checkpoint(fmt, folder, dense_folder, family=FAMILY):
    """The fixture with every attention and MLP projection (a mixture's experts' too) in format `fmt` (folder), and
    its exact dequantization as a plain checkpoint (dense_folder)."""
    for f in (folder, dense_folder):
        shutil.copytree(MODELS / family, f, dirs_exist_ok=True)
    tensors = safetensors.torch.load_file(MODELS / family / "model.safetensors")
    stored, dense = {}, dict(tensors)
    for name, tensor in tensors.items():
        if name.endswith(PROJECTIONS):
            write_format(fmt, name, tensor, stored, dense)
        else:
            stored[name] = tensor
    assert len(dense) == len(tensors) and any(name.endswith("down_proj.weight") for name in dense)
    safetensors.torch.save_file(stored, folder / "model.safetensors", metadata={"format": "pt"})
    safetensors.torch.save_file(dense, dense_folder / "model.safetensors", metadata={"format": "pt"})
    config = json.loads((folder / "config.json").read_text())
    config["quantization_config"] = CONFIGS[fmt]
    (folder / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize("fmt", list(CONFIGS))
def test_quantized_checkpoint_scores_as_transformers_scores_its_dequantization(fmt, tmp_path):
    quantized_checkpoint(fmt, tmp_path / "quantized", tmp_path / "dense")
    rows = json.loads((MODELS / FAMILY / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    pairs += [(c, [(x[0] + 1) % 500]) for c, x in pairs]  # shared prefixes for the prefix path
    want = hf_scores(tmp_path / "dense", pairs)
    # The quantization moved the numbers (so the test sees a format read wrong), and the engine follows it.
    assert max(abs(w[0] - r["logprob"]) for w, r in zip(want, rows)) > 1e-3
    for options in ({"tree_max_branches": 0, "min_prefix_len": 2}, {}):
        got = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "quantized", **options).loglikelihood(pairs)
        assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4), options
        assert [g[1] for g in got] == [w[1] for w in want], options
    assert native_refusal(tmp_path / "quantized") is None
    # Every format stays so: resident within 1.5x of the quantized matrices' bytes on disk; in fp32 each product takes
    # them dequantized as the dense checkpoint holds them (only its matmuls' shapes differ: q, k, v apart).
    info = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "quantized").model_info
    on_disk = quantized_bytes(tmp_path / "quantized")
    assert 0.9 * on_disk <= info.quantized_weight_bytes <= 1.5 * on_disk
    results_info = PrefixScorerLM(pretrained=str(tmp_path / "quantized")).get_model_info()  # lm-eval's results
    assert results_info["model_quantized_weight_bytes"] == info.quantized_weight_bytes
    dense = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "dense").loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([d[0] for d in dense], abs=1e-5)


def quantized_bytes(folder):
    """The bytes of the checkpoint's quantized matrices (FP8 values, codes, scales, zero points, group indices)."""
    tensors = safetensors.torch.load_file(folder / "model.safetensors")
    parts = ("_packed", "_scale", "_scale_inv", "_zero_point", "_g_idx", "_shape", ".qweight", ".qzeros", ".scales",
             ".g_idx")
    return sum(t.numel() * t.element_size() for name, t in tensors.items()
               if name.endswith(parts) or t.dtype == torch.float8_e4m3fn)


@pytest.mark.parametrize("fmt", ["ct-w4-sym", "ct-w8-channel", "ct-fp8-channel"])
def test_compressed_tensors_checkpoints_score_as_transformers_loading_them_itself(fmt, tmp_path):
    """transformers loads these checkpoints itself (compressed-tensors decompressing them into fp32): the engine
    scores them as it does, plain and prefix paths."""
    quantized_checkpoint(fmt, tmp_path / "quantized", tmp_path / "dense")
    rows = json.loads((MODELS / FAMILY / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    pairs += [(c, [(x[0] + 1) % 500]) for c, x in pairs]
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "quantized", dtype=torch.float32).eval()
    want = hf_scores(tmp_path / "quantized", pairs, model=model)
    assert max(abs(w[0] - r["logprob"]) for w, r in zip(want, rows)) > 1e-3
    for options in ({"tree_max_branches": 0, "min_prefix_len": 2}, {}):
        got = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "quantized", **options).loglikelihood(pairs)
        assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4), options
        assert [g[1] for g in got] == [w[1] for w in want], options


def test_nvfp4_weights_written_here_are_what_compressed_tensors_decompresses():
    """This file's NVFP4 layout (codes two a byte, e4m3 scales per 16, a global scale) against compressed-tensors'
    own decompressor, which rounds the dequantized weight to bf16 (transformers' fp32 models then refuse to multiply
    it, so the scores are checked against the fp32 dequantization above)."""
    weight = torch.randn(32, 64, generator=torch.Generator().manual_seed(0)) * 0.05
    tensors, dense = {}, {}
    write_format("ct-nvfp4", "w.weight", weight, tensors, dense)
    scheme = QuantizationScheme(targets=["Linear"], weights=QuantizationArgs(
        num_bits=4, type="float", strategy="tensor_group", group_size=16, symmetric=True))
    theirs = NVFP4PackedCompressor.decompress({k[len("w."):]: v for k, v in tensors.items()}, scheme)["weight"]
    assert theirs.dtype == torch.bfloat16 and torch.equal(theirs, dense["w.weight"].bfloat16())
    assert (dense["w.weight"] - weight).abs().max() > 1e-4  # quantized: a misread layout shows


@pytest.mark.parametrize("fmt", ["ct-w4-sym", "gptq-v1-desc-act", "gptq-v2-w8", "ct-fp8-channel", "ct-nvfp4"])
def test_experts_stored_quantized_one_by_one_score_as_their_dequantization(fmt, tmp_path):
    """A mixture whose experts are saved one by one in a quantized form, as Kimi K2 Thinking (W4A16) and Qwen3's FP8
    releases ship them: scored as transformers scores the exact dequantization, plain and prefix paths. 4- and 8-bit
    codes (act-order's with their inputs sorted by group), FP8 and NVFP4 stay so: the experts a forward routes to
    are dequantized just before their products."""
    family = "qwen3_moe"  # hidden 64, experts' MLP 32: groups of 32 inputs
    quantized_checkpoint(fmt, tmp_path / "quantized", tmp_path / "dense", family)
    rows = json.loads((MODELS / family / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    pairs += [(c, [(x[0] + 1) % 500]) for c, x in pairs]
    want = hf_scores(tmp_path / "dense", pairs)
    assert max(abs(w[0] - r["logprob"]) for w, r in zip(want, rows)) > 1e-3
    for options in ({"tree_max_branches": 0, "min_prefix_len": 2}, {}):
        scorer = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "quantized", **options)
        got = scorer.loglikelihood(pairs)
        assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4), options
        assert [g[1] for g in got] == [w[1] for w in want], options
    on_disk, kept = quantized_bytes(tmp_path / "quantized"), scorer.model_info.quantized_weight_bytes
    assert 0.9 * on_disk <= kept <= 1.5 * on_disk


@pytest.mark.parametrize("fmt", ["ct-w4-sym", "gptq-v1-desc-act", "awq", "ct-w8-channel"])
def test_integer_codes_in_bfloat16_score_as_their_dequantization_rounded_to_bfloat16(fmt, tmp_path):
    """In bf16 on the CPU, ATen's int4 matmul runs 4-bit codes kept as they are (act-order by gathering the inputs),
    its int8 matmul 8-bit codes with a scale a channel; the reference is the engine on the exact dequantization
    rounded to bf16 (the dense checkpoint)."""
    quantized_checkpoint(fmt, tmp_path / "quantized", tmp_path / "dense")
    rows = json.loads((MODELS / FAMILY / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    pairs += [(c, [(x[0] + 1) % 500]) for c, x in pairs]
    want = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "dense", dtype="bfloat16").loglikelihood(pairs)
    scorer = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "quantized", dtype="bfloat16")
    assert scorer.model_info.quantized_weight_bytes > 0
    got = scorer.loglikelihood(pairs)
    # Within 5e-3 a scored token (bf16's own rounding moves these scores up to 1.8e-3 a token from fp32's): the kernel
    # takes each group's scale and its zero point folded in, (8 - zero) * scale, in bf16 (the int8 kernel: each
    # channel's scale), an error shared by the group's weights where the reference rounds each weight on its own. A
    # wrong layout is off by 0.1 and more.
    assert all(abs(g[0] - w[0]) <= 5e-3 * len(c) for g, w, (_, c) in zip(got, want, pairs))
    assert sum(g[1] == w[1] for g, w in zip(got, want)) >= 0.95 * len(pairs)


@pytest.mark.parametrize("quantization, why", [
    ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "quant_method 'bitsandbytes' is not supported"),
    ({"quant_method": "gptq", "bits": 3}, "gptq with 3 bits is not supported"),
    ({"quant_method": "awq", "version": "gemv"}, "awq version 'gemv' is not supported"),
    ({"quant_method": "compressed-tensors", "format": "marlin-24", "config_groups": {"g": {"weights": {
        "num_bits": 4, "type": "int", "strategy": "group"}}}}, "format 'marlin-24' is not supported"),
])
def test_a_quantization_the_engine_does_not_read_is_refused_by_name_and_left_to_transformers(quantization, why, tmp_path):
    shutil.copytree(MODELS / FAMILY, tmp_path, dirs_exist_ok=True)
    config = json.loads((tmp_path / "config.json").read_text())
    config["quantization_config"] = quantization
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=why):
        prefix_scorer.PrefixScorer.from_pretrained(tmp_path)
    assert why in native_refusal(tmp_path) and "model_type 'llama'" in native_refusal(tmp_path)
    with pytest.raises(ValueError, match=f"{why}.*native_only=True"):
        PrefixScorerLM(pretrained=str(tmp_path), native_only="True")


def test_tensors_of_the_dtypes_quantized_releases_save_beside_their_weights_are_read(tmp_path):
    """float8_e5m2, float8_e8m0fnu (MX formats' power-of-two scales), uint16 and uint32 tensors in the file: its
    header is read, and the model scores as without them."""
    shutil.copytree(MODELS / FAMILY, tmp_path, dirs_exist_ok=True)
    tensors = safetensors.torch.load_file(tmp_path / "model.safetensors")
    tensors.update({"extra.e5m2": torch.ones(4).to(torch.float8_e5m2), "extra.e8m0": torch.ones(4).to(torch.float8_e8m0fnu),
                    "extra.u16": torch.arange(4).to(torch.uint16), "extra.u32": torch.arange(4).to(torch.uint32)})
    safetensors.torch.save_file(tensors, tmp_path / "model.safetensors", metadata={"format": "pt"})
    pairs = [([1, 2, 3], [4, 5])]
    want = prefix_scorer.PrefixScorer.from_pretrained(MODELS / FAMILY).loglikelihood(pairs)
    assert prefix_scorer.PrefixScorer.from_pretrained(tmp_path).loglikelihood(pairs) == want


@pytest.mark.parametrize("family, fmt", [("llama3", "ct-w4-sym"), ("qwen3_moe", "ct-fp8-channel"),
                                         ("qwen3_moe", "ct-nvfp4"), ("qwen3_moe", "gptq-v1-desc-act")])
def test_greedy_generation_from_kept_weights_equals_transformers_generate_on_their_dequantization(family, fmt, tmp_path):
    """Generation from weights kept as stored (4-bit codes; FP8, NVFP4 and act-order 4-bit experts, those each step
    routes to dequantized): HF generate (greedy, fp32, one prompt at a time) on the exact dequantization, against prompts sharing
    a prefix, two rows at a time so that rows join a running batch."""
    quantized_checkpoint(fmt, tmp_path / "quantized", tmp_path / "dense", family)
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "dense", dtype=torch.float32,
                                                              attn_implementation="eager").eval()
    context = json.loads((MODELS / family / "expected_loglikelihood.json").read_text())["loglikelihood"][0]["context_ids"]
    prefix = [context[i % len(context)] for i in range(16)]
    prompts = [prefix + [(7 + 31 * r + 13 * i) % 400 for i in range(1 + 2 * r)] for r in range(3)] + [context[-3:]]
    with torch.no_grad():
        want = [model.generate(torch.tensor([p]), max_new_tokens=8, do_sample=False, pad_token_id=0,
                               eos_token_id=None)[0, len(p):].tolist() for p in prompts]
    scorer = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "quantized", min_prefix_len=4, max_batch_rows=2)
    assert scorer.model_info.quantized_weight_bytes > 0
    got, _ = scorer.generate([{"prompt": p, "max_new_tokens": 8} for p in prompts])
    assert [tokens for tokens, _, _ in got] == want


def test_experts_of_one_layer_in_two_forms_and_misshapen_nvfp4_scales_are_refused_by_name(tmp_path):
    """A layer whose experts are stored some quantized, some not, cannot be stacked; NVFP4 scales that do not cover
    the codes are named with their tensor."""
    quantized_checkpoint("ct-fp8-channel", tmp_path / "mixed", tmp_path / "dense", "qwen3_moe")
    tensors = safetensors.torch.load_file(tmp_path / "mixed" / "model.safetensors")
    name = "model.layers.0.mlp.experts.1.up_proj.weight"
    tensors[name] = tensors[name].float() * tensors.pop(name + "_scale")  # expert 1's up plain, the others FP8
    safetensors.torch.save_file(tensors, tmp_path / "mixed" / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(Exception, match="layer 0: its experts' weights are stored in more than one form"):
        prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "mixed")

    quantized_checkpoint("ct-nvfp4", tmp_path / "nvfp4", tmp_path / "dense", FAMILY)
    tensors = safetensors.torch.load_file(tmp_path / "nvfp4" / "model.safetensors")
    name = "model.layers.0.self_attn.q_proj.weight"
    tensors[name + "_scale"] = tensors[name + "_scale"][:, :-1].contiguous()
    safetensors.torch.save_file(tensors, tmp_path / "nvfp4" / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(Exception, match=f"tensor '{name}': NVFP4 codes .* need scales"):
        prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "nvfp4")


RESIDENT_GROWTH = """
import gc, sys
import prefix_scorer

def anonymous_bytes():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("RssAnon:"))

prefix_scorer.PrefixScorer.from_pretrained(sys.argv[2])  # torch's and the engine's first-use allocations
gc.collect()
before = anonymous_bytes()
scorer = prefix_scorer.PrefixScorer.from_pretrained(sys.argv[1])
print(anonymous_bytes() - before, scorer.model_info.weight_bytes, scorer.model_info.quantized_weight_bytes)
"""


@pytest.mark.parametrize("fmt", ["ct-w4-sym", "gptq-v2-w8", "ct-fp8-channel"])
def test_the_process_grows_by_the_stored_bytes_not_by_their_dequantization(fmt, tmp_path):
    """The process's own resident memory, not only the engine's count: loading a checkpoint whose projections are
    4-bit codes, 8-bit codes or FP8 grows the process's anonymous memory by about their bytes on disk (within 1.5x)
    plus the weights kept plain, where their fp32 dequantization would take 4x to 8x those bytes. glibc is told to
    hand large freed blocks back, so that what the load freed does not count."""
    config = transformers.LlamaConfig(hidden_size=1024, intermediate_size=4096, num_hidden_layers=2,
                                      num_attention_heads=8, num_key_value_heads=8, vocab_size=512,
                                      tie_word_embeddings=False, torch_dtype="float32")
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(tmp_path / "plain")
    shutil.copy(MODELS / FAMILY / "tokenizer.json", tmp_path / "plain")
    tensors = safetensors.torch.load_file(tmp_path / "plain" / "model.safetensors")
    stored, dense = {}, {}
    for name, tensor in tensors.items():
        if name.endswith(PROJECTIONS):
            write_format(fmt, name, tensor, stored, dense)
        else:
            stored[name] = tensor
    shutil.copytree(tmp_path / "plain", tmp_path / "quantized")
    safetensors.torch.save_file(stored, tmp_path / "quantized" / "model.safetensors", metadata={"format": "pt"})
    with open(tmp_path / "quantized" / "config.json") as f:
        saved = json.load(f)
    saved["quantization_config"] = CONFIGS[fmt]
    (tmp_path / "quantized" / "config.json").write_text(json.dumps(saved))

    def growth(folder):
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072", MALLOC_TRIM_THRESHOLD_="131072")
        out = subprocess.run([sys.executable, "-c", RESIDENT_GROWTH, str(folder), str(MODELS / FAMILY)], env=env,
                             capture_output=True, text=True, check=True).stdout
        return [int(v) for v in out.split()]

    plain_growth, plain_bytes, _ = growth(tmp_path / "plain")
    kept_growth, _, quantized = growth(tmp_path / "quantized")
    on_disk = quantized_bytes(tmp_path / "quantized")
    rest = sum(t.numel() * t.element_size() for t in stored.values()) - on_disk  # embeddings, norms, output layer
    print(f"\n{fmt}: the plain checkpoint grew the process by {plain_growth / 2**20:.1f} MiB ({plain_bytes / 2**20:.1f} "
          f"MiB of weights); the quantized one by {kept_growth / 2**20:.1f} MiB ({on_disk / 2**20:.1f} MiB stored "
          f"quantized, {rest / 2**20:.1f} MiB plain)")
    assert plain_growth >= 0.9 * plain_bytes  # the meter sees weights
    assert 0.9 * on_disk <= quantized <= 1.5 * on_disk
    assert kept_growth <= 1.5 * on_disk + rest + 8 * 2**20
