"""The native model against Hugging Face transformers itself, at test time: every fixture checkpoint loaded by
transformers (fp32, eager attention) and by prefix_scorer scores the same pairs within 1e-4, with shared prefixes
cached and packed as trees. The committed numbers (expected_*) are checked by the C++ golden tests."""

import json
import pathlib
import shutil

import pytest
import safetensors.torch
import torch

import prefix_scorer
from prefix_scorer import _testing

import transformers

MODELS = pathlib.Path(__file__).resolve().parents[1] / "data" / "models"
ALL_FIXTURES = sorted(p.name for p in MODELS.iterdir() if (p / "config.json").is_file())
FAMILIES = ALL_FIXTURES
#: The fixtures with recurrent layers (Gated DeltaNet, short convolution, Mamba2): one sequence a row, their state cached at each prefix's end.
RECURRENT = ["qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_next", "olmo_hybrid", "lfm2", "lfm2_moe", "granitemoehybrid", "nemotron_h", "nemotron_h_moe", "lfm3", "falcon_h1", "kimi_linear", "bailing_hybrid"]


def hf_model(model_dir):
    """transformers' model of a fixture, fp32 with eager attention: a multimodal checkpoint (a vision_config beside
    the text model's) loads as the image-text-to-text model it is, and runs on text alone."""
    config = transformers.AutoConfig.from_pretrained(model_dir)
    auto = (transformers.AutoModelForImageTextToText if getattr(config, "vision_config", None) is not None
            else transformers.AutoModelForCausalLM)
    return auto.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager").eval()


def hf_scores(model_dir, pairs, model=None):
    """transformers' (summed logprob, is_greedy) of token pairs, by `model` or the fixture's hf_model."""
    model = model or hf_model(model_dir)
    scores = []
    with torch.no_grad():
        for context, continuation in pairs:
            logprobs = torch.log_softmax(model(torch.tensor([context + continuation])).logits[0], -1)
            rows = logprobs[len(context) - 1:-1]
            target = torch.tensor(continuation)
            scores.append((rows.gather(1, target[:, None]).sum().item(), bool((rows.argmax(-1) == target).all())))
    return scores


@pytest.mark.parametrize("family", FAMILIES)
def test_native_scores_equal_transformers(family):
    rows = json.loads((MODELS / family / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    # Shared prefixes for the prefix path: every context again with a second continuation.
    pairs += [(c, [(x[0] + 1) % 500]) for c, x in pairs]
    model = hf_model(MODELS / family)
    want = hf_scores(MODELS / family, pairs, model=model)
    for options in ({"tree_max_branches": 0, "min_prefix_len": 2}, {}):
        scorer = prefix_scorer.PrefixScorer.from_pretrained(MODELS / family, **options)
        got = scorer.loglikelihood(pairs)
        assert [g[1] for g in got] == [w[1] for w in want], options
        assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4), options
    # lm-eval's results report it: a multimodal model's vision tower counts, though it is not loaded.
    assert scorer.num_parameters == model.num_parameters()


@pytest.mark.parametrize("family", RECURRENT)
def test_recurrent_families_score_as_transformers_by_every_path(family):
    """The plain forward (each row from a zero state) and the prefix path over nested shared prefixes (their state
    cached at each one's end, several contexts per prefix) against transformers at test time; the harness adapters
    serve them natively."""
    pairs = fixture_pairs(family)
    # Nested prefixes: each context cut at two depths, each cut continued by two contexts.
    nested = [(c[:n] + [(i + 7 * j) % 500 for i in range(3 + j)], x) for c, x in pairs[:3] for n in (12, 24) for j in (0, 1)]
    pairs = pairs + nested
    want = hf_scores(MODELS / family, pairs)
    got = _testing.score_plain(str(MODELS / family), "float32", pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want]
    scorer = prefix_scorer.PrefixScorer.from_pretrained(MODELS / family, min_prefix_len=2, keep_cache=True)
    got = scorer.loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want]
    assert scorer.stats["entries_held"] >= 6  # the cuts, the contexts and their common parts cached
    model_type = json.loads((MODELS / family / "config.json").read_text())["model_type"]
    assert prefix_scorer.scorer.native_model_type(str(MODELS / family)) == (model_type, True)


def test_ministral3_text_model_alone_scores_as_transformers(tmp_path):
    """The ministral3 fixture's text model saved alone, as a Ministral3ForCausalLM checkpoint (model.*, lm_head)."""
    whole = hf_model(MODELS / "ministral3")
    text = transformers.Ministral3ForCausalLM(whole.config.text_config).eval()
    state = {f"model.{k}": v for k, v in whole.model.language_model.state_dict().items()}
    text.load_state_dict(dict(state, **{"lm_head.weight": whole.lm_head.weight}))
    text.save_pretrained(tmp_path)
    rows = json.loads((MODELS / "ministral3" / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    want = hf_scores(tmp_path, pairs)
    assert [w[0] for w in want] == pytest.approx([r["logprob"] for r in rows], abs=1e-4)  # the same model
    got = prefix_scorer.PrefixScorer.from_pretrained(tmp_path).loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want]


def test_llama4_wrapper_saved_whole_scores_as_its_text_model(tmp_path):
    """Llama 4 as released: the llama4_text fixture inside Llama4ForConditionalGeneration with a tiny vision tower,
    saved whole (language_model.model.*, language_model.lm_head), scores as the text model alone and counts the
    tower's parameters."""
    text = transformers.AutoConfig.from_pretrained(MODELS / "llama4_text")
    vision = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, image_size=28,
                  patch_size=14, vision_output_dim=32, projector_input_dim=32, projector_output_dim=64)
    config = transformers.Llama4Config(text_config=text.to_dict(), vision_config=vision, image_token_index=511,
                                       boi_token_index=509, eoi_token_index=510)
    whole = transformers.Llama4ForConditionalGeneration(config).eval()
    whole.language_model.load_state_dict(hf_model(MODELS / "llama4_text").state_dict())
    whole.save_pretrained(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["model_type"] == "llama4"
    rows = json.loads((MODELS / "llama4_text" / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    scorer = prefix_scorer.PrefixScorer.from_pretrained(tmp_path)
    got = scorer.loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([r["logprob"] for r in rows], abs=1e-4)
    assert [g[1] for g in got] == [r["is_greedy"] for r in rows]
    assert scorer.num_parameters == whole.num_parameters()


def copy_with_attention_scaled(family, folder, suffixes, factor):
    """The fixture copied into `folder` with the weights whose names end in `suffixes` times `factor` (random weights
    give attention scores too small for positions and scales to show); returns its config."""
    shutil.copytree(MODELS / family, folder, dirs_exist_ok=True)
    tensors = safetensors.torch.load_file(folder / "model.safetensors")
    for name in tensors:
        if name.endswith(suffixes):
            tensors[name] *= factor
    safetensors.torch.save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    return json.loads((folder / "config.json").read_text())


def fixture_pairs(family):
    rows = json.loads((MODELS / family / "expected_loglikelihood.json").read_text())["loglikelihood"]
    return [(r["context_ids"], r["continuation_ids"]) for r in rows]


def assert_scores_as_transformers(model_dir, pairs):
    """The native scores of `pairs` on `model_dir` within 1e-4 of transformers', greedy flags equal; returns them."""
    want = hf_scores(model_dir, pairs)
    got = prefix_scorer.PrefixScorer.from_pretrained(model_dir).loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want]
    return got


@pytest.mark.parametrize("options", [dict(scale_attn_weights=False), dict(scale_attn_by_inverse_layer_idx=True)])
def test_gpt2_attention_options_score_as_transformers(tmp_path, options):
    """GPT-2's unscaled attention scores and its scores divided by the layer's index + 1, on the fixture's weights
    with q, k and v scaled up (random weights give attention scores too small for the options to show)."""
    config = copy_with_attention_scaled("gpt2", tmp_path, ("c_attn.weight",), 12)
    (tmp_path / "config.json").write_text(json.dumps(dict(config, **options)))
    pairs = fixture_pairs("gpt2")
    got = assert_scores_as_transformers(tmp_path, pairs)
    (tmp_path / "config.json").write_text(json.dumps(config))
    default = prefix_scorer.PrefixScorer.from_pretrained(tmp_path).loglikelihood(pairs)
    assert max(abs(g[0] - d[0]) for g, d in zip(got, default)) > 1e-2  # the option changes the numbers


@pytest.mark.parametrize("family", FAMILIES)
def test_greedy_generation_equals_transformers_generate(family):
    """HF generate (greedy, fp32, one prompt at a time, stopping at the model's EOS ids) against the prefix path:
    prompts sharing a 16-token prefix and one without, two rows at a time so that rows join a running batch."""
    model = hf_model(MODELS / family)
    eos = model.generation_config.eos_token_id
    eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    rows = json.loads((MODELS / family / "expected_loglikelihood.json").read_text())["loglikelihood"]
    context = rows[0]["context_ids"]
    prefix = [context[i % len(context)] for i in range(16)]
    prompts = [prefix + [(7 + 31 * r + 13 * i) % 400 for i in range(1 + 2 * r)] for r in range(4)]
    prompts.append(context[-3:])
    want = []
    with torch.no_grad():
        for prompt in prompts:
            out = model.generate(torch.tensor([prompt]), max_new_tokens=8, do_sample=False, pad_token_id=0)
            want.append(out[0, len(prompt):].tolist())
    scorer = prefix_scorer.PrefixScorer.from_pretrained(MODELS / family, min_prefix_len=4, max_batch_rows=2)
    got, stats = scorer.generate([{"prompt": p, "max_new_tokens": 8, "stop_ids": eos} for p in prompts])
    assert [tokens for tokens, _, _ in got] == want
    assert stats["prefix_tokens"] == 16 and stats["prefill_forwards"] > 1


def test_longrope_generation_switches_factors_as_transformers_generate():
    """phi3_longrope takes its long factors past original_max_position_embeddings (40), where transformers' Phi-3
    drops its cache and runs the sequence again: prompts that start below it and grow past it, one that starts past
    it, one that stays below; HF generate one prompt at a time, tokens and log-probabilities."""
    family = "phi3_longrope"
    model = hf_model(MODELS / family)
    assert model.config.original_max_position_embeddings == 40
    context = json.loads((MODELS / family / "expected_loglikelihood.json").read_text())["loglikelihood"][0]["context_ids"]
    prompts = [context[:n] for n in (20, 30, 36, 39, 40, 44)] + [context[:10]]
    new_tokens = [24, 16, 12, 8, 8, 8, 6]
    want, want_logprobs, ties = [], [], []
    with torch.no_grad():
        for prompt, n in zip(prompts, new_tokens):
            out = model.generate(torch.tensor([prompt]), max_new_tokens=n, do_sample=False, pad_token_id=0,
                                 eos_token_id=None, output_scores=True, return_dict_in_generate=True)
            want.append(out.sequences[0, len(prompt):].tolist())
            # Random weights give near-ties (a top-2 gap of 8e-6 here) that float32 noise may break either way:
            # tokens are compared up to the first one.
            steps = [torch.log_softmax(s[0], -1) for s in out.scores]
            gaps = [float(lp.topk(2).values.diff().abs()) for lp in steps]
            ties.append(next((i for i, gap in enumerate(gaps) if gap < 1e-4), n))
            want_logprobs.append([float(lp[t]) for lp, t in zip(steps, want[-1])])
    scorer = prefix_scorer.PrefixScorer.from_pretrained(MODELS / family, min_prefix_len=4, max_batch_rows=3)
    got, stats = scorer.generate([{"prompt": p, "max_new_tokens": n} for p, n in zip(prompts, new_tokens)])
    assert [tokens[:tie] for (tokens, _, _), tie in zip(got, ties)] == [w[:tie] for w, tie in zip(want, ties)]
    # The numbers too: random weights keep the argmax through the short factors' error, not the log-probabilities.
    for (_, _, logprobs), expected, tie in zip(got, want_logprobs, ties):
        assert logprobs[:tie] == pytest.approx(expected[:tie], abs=1e-4)
    compared_past_40 = sum(max(0, len(p) + tie - 40) for p, tie in zip(prompts, ties))
    assert compared_past_40 >= 30, ties  # most of it on the long factors
    assert stats["prefix_tokens"] > 0


def test_proportional_rope_scores_as_transformers(tmp_path):
    """Gemma 4's proportional rope on the llama3 fixture's weights (q and k scaled up, so that positions show in the
    scores): a quarter of each head's frequency pairs turn, over the whole head's exponents."""
    config = copy_with_attention_scaled("llama3", tmp_path, ("q_proj.weight", "k_proj.weight"), 8)
    rope = {"rope_type": "proportional", "rope_theta": 10000.0, "partial_rotary_factor": 0.25}
    (tmp_path / "config.json").write_text(json.dumps(dict(config, rope_parameters=rope)))
    pairs = fixture_pairs("llama3")
    got = assert_scores_as_transformers(tmp_path, pairs)
    # The same share rotated as phi3 rotates it (the first quarter of each head, its own exponents) scores otherwise.
    (tmp_path / "config.json").write_text(json.dumps(dict(config, rope_parameters=dict(rope, rope_type="default"))))
    first_quarter = prefix_scorer.PrefixScorer.from_pretrained(tmp_path).loglikelihood(pairs)
    assert max(abs(g[0] - d[0]) for g, d in zip(got, first_quarter)) > 1e-3


def test_glm4_moe_multi_token_prediction_layer_is_not_read(tmp_path):
    """GLM-4.5's checkpoints carry a multi-token-prediction layer after the last (model.layers.N, with its own
    embedding norms and projection), which transformers leaves unread; the engine reads only the layers the config
    counts, so the scores stay transformers'."""
    shutil.copytree(MODELS / "glm4_moe", tmp_path / "model")
    weights = safetensors.torch.load_file(tmp_path / "model" / "model.safetensors")
    mtp = {k.replace("model.layers.2.", "model.layers.3."): torch.randn_like(v)
           for k, v in weights.items() if k.startswith("model.layers.2.")}
    mtp.update({"model.layers.3.enorm.weight": torch.randn(64), "model.layers.3.hnorm.weight": torch.randn(64),
                "model.layers.3.eh_proj.weight": torch.randn(64, 128)})
    safetensors.torch.save_file(dict(weights, **mtp), tmp_path / "model" / "model.safetensors",
                                metadata={"format": "pt"})
    rows = json.loads((MODELS / "glm4_moe" / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    want = hf_scores(tmp_path / "model", pairs)
    assert [w[0] for w in want] == pytest.approx([r["logprob"] for r in rows], abs=1e-4)  # transformers too
    got = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "model").loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)


def test_gemma4_ignores_what_transformers_ignores_on_load(tmp_path):
    """A Gemma 4 checkpoint as published may carry keys and values for the KV-shared layers, which read another
    layer's: transformers ignores them on load (_keys_to_ignore_on_load_unexpected), and so does prefix_scorer. The
    scores stay transformers' with them there, and a missing tensor the model does read is still an error."""
    shutil.copytree(MODELS / "gemma4_text", tmp_path / "model")
    weights = safetensors.torch.load_file(tmp_path / "model" / "model.safetensors")
    for layer in (3, 4):  # the KV-shared layers
        weights[f"model.layers.{layer}.self_attn.k_proj.weight"] = torch.randn(24, 64)
        weights[f"model.layers.{layer}.self_attn.k_norm.weight"] = torch.randn(12)
    safetensors.torch.save_file(weights, tmp_path / "model" / "model.safetensors", metadata={"format": "pt"})
    rows = json.loads((MODELS / "gemma4_text" / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    want = hf_scores(tmp_path / "model", pairs)
    got = prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "model").loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    del weights["model.layers.2.self_attn.k_proj.weight"]
    safetensors.torch.save_file(weights, tmp_path / "model" / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(RuntimeError, match="model.layers.2.self_attn.k_proj.weight"):
        prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "model")


@pytest.mark.parametrize("change", [{"rope_parameters": {"rope_type": "default", "rope_theta": None}},
                                    {"linear_allow_neg_eigval": False}])
def test_olmo_hybrid_options_score_as_transformers(tmp_path, change):
    """OLMo hybrid as released has no rope (rope_theta null: its attention layers rotate nothing); with
    linear_allow_neg_eigval off its beta is not doubled. Each changes the numbers, and both stay transformers'."""
    shutil.copytree(MODELS / "olmo_hybrid", tmp_path, dirs_exist_ok=True)
    config = json.loads((tmp_path / "config.json").read_text())
    config.update(change)
    (tmp_path / "config.json").write_text(json.dumps(config))
    pairs = fixture_pairs("olmo_hybrid")
    got = assert_scores_as_transformers(tmp_path, pairs)
    fixture = prefix_scorer.PrefixScorer.from_pretrained(MODELS / "olmo_hybrid").loglikelihood(pairs)
    assert max(abs(g[0] - f[0]) for g, f in zip(got, fixture)) > 1e-3


def test_nemotron_h_time_step_min_clamps_as_transformers_full_forward(tmp_path):
    """Nemotron-H clamps each Mamba2 step dt below at time_step_min; at 0.6 the clamp binds on the fixture's steps
    (0.3 to 1.3). Scores equal transformers' full forward on the plain path and on the prefix path, whose rows of one
    token after a cached state run the recurrent step (clamped too, as the full forward is), and differ from the
    fixture's."""
    shutil.copytree(MODELS / "nemotron_h", tmp_path, dirs_exist_ok=True)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(dict(config, time_step_min=0.6)))
    pairs = fixture_pairs("nemotron_h")
    pairs += [(c + x[:-1], x[-1:]) for c, x in pairs[:4]]  # one-token rows after each longer pair's shared prefix
    want = hf_scores(tmp_path, pairs)
    got = _testing.score_plain(str(tmp_path), "float32", pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    scorer = prefix_scorer.PrefixScorer.from_pretrained(tmp_path, min_prefix_len=2)
    got = scorer.loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want]
    fixture = prefix_scorer.PrefixScorer.from_pretrained(MODELS / "nemotron_h").loglikelihood(pairs)
    assert max(abs(g[0] - f[0]) for g, f in zip(got, fixture)) > 1e-3


@pytest.mark.parametrize("norm_before_gate", [True, False])
def test_falcon_h1_gated_norm_scores_as_transformers(tmp_path, norm_before_gate):
    """Falcon-H1 with its Mamba2 norm on (mamba_rms_norm; released checkpoints have it off, as the fixture): RMS-normed
    per group before the gate or after it, the weight multiplied in fp32; on the fixture's weights with the norm's
    weight drawn, plain and prefix paths against transformers, and the two orders giving different numbers."""
    config = transformers.AutoConfig.from_pretrained(MODELS / "falcon_h1")
    config.mamba_rms_norm, config.mamba_norm_before_gate = True, norm_before_gate
    model = transformers.FalconH1ForCausalLM(config).eval()
    state = safetensors.torch.load_file(MODELS / "falcon_h1" / "model.safetensors")
    generator = torch.Generator().manual_seed(4)
    for name, p in model.named_parameters():
        if name.endswith("mamba.norm.weight"):
            state[name] = 1 + 0.3 * torch.randn(p.shape, generator=generator)
    model.load_state_dict(state)
    model.save_pretrained(tmp_path)
    shutil.copy(MODELS / "falcon_h1" / "tokenizer.json", tmp_path / "tokenizer.json")
    pairs = fixture_pairs("falcon_h1")
    want = hf_scores(tmp_path, pairs)
    got = _testing.score_plain(str(tmp_path), "float32", pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    got = prefix_scorer.PrefixScorer.from_pretrained(tmp_path, min_prefix_len=2).loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want]
    fixture = prefix_scorer.PrefixScorer.from_pretrained(MODELS / "falcon_h1").loglikelihood(pairs)
    assert max(abs(g[0] - f[0]) for g, f in zip(got, fixture)) > 1e-3


def test_a_model_of_recurrent_layers_only_scores_as_transformers(tmp_path):
    """LFM2 with every layer a short convolution: no keys and values at all, only states (a cache budget per token
    of zero bytes must not divide anything), shared prefixes cached."""
    torch.manual_seed(0)
    config = transformers.Lfm2Config(vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, layer_types=["conv", "conv"],
                                     conv_bias=True, tie_word_embeddings=False)
    model = transformers.Lfm2ForCausalLM(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("conv.in_proj.weight"):  # the convolution large enough to matter
                p.normal_(0.0, 0.3)
    model.save_pretrained(tmp_path)
    pairs = fixture_pairs("lfm2")
    pairs += [(c, [(x[0] + 1) % 500]) for c, x in pairs]
    want = []  # transformers' own cache needs an attention layer: its forward without one
    with torch.no_grad():
        for context, continuation in pairs:
            logits = model(torch.tensor([context + continuation]), use_cache=False).logits[0]
            rows = torch.log_softmax(logits, -1)[len(context) - 1:-1]
            target = torch.tensor(continuation)
            want.append((rows.gather(1, target[:, None]).sum().item(), bool((rows.argmax(-1) == target).all())))
    scorer = prefix_scorer.PrefixScorer.from_pretrained(tmp_path, min_prefix_len=2, keep_cache=True)
    got = scorer.loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want]
    assert scorer.stats["entries_held"] > 0


def test_kimi_k2_config_scores_as_deepseek_v3(tmp_path):
    """Kimi K2's config as released (model_type kimi_k2, rope_scaling with the older 'type' key and its betas,
    DeepSeek's older router keys) on the deepseek_v3 fixture's weights scores as transformers' DeepSeek V3 on it."""
    rope = {"type": "yarn", "factor": 4.0, "mscale": 1.0, "mscale_all_dim": 0.8,
            "original_max_position_embeddings": 512, "beta_fast": 1.0, "beta_slow": 1.0}
    folders = {}
    for model_type in ("deepseek_v3", "kimi_k2"):
        folder = tmp_path / model_type
        shutil.copytree(MODELS / "deepseek_v3", folder)
        config = json.loads((folder / "config.json").read_text())
        del config["rope_parameters"]
        config.update(model_type=model_type, rope_scaling=rope, topk_method="noaux_tc", scoring_func="sigmoid",
                      moe_layer_freq=1, ep_size=1)
        (folder / "config.json").write_text(json.dumps(config))
        folders[model_type] = folder
    pairs = fixture_pairs("deepseek_v3")
    want = hf_scores(folders["deepseek_v3"], pairs)
    got = prefix_scorer.PrefixScorer.from_pretrained(folders["kimi_k2"]).loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want]
    fixture = [r["logprob"] for r in json.loads((MODELS / "deepseek_v3" / "expected_loglikelihood.json").read_text())["loglikelihood"]]
    assert [w[0] for w in want] != pytest.approx(fixture, abs=1e-6)  # the betas changed the rope: a different model


def test_kimi_linear_as_released_scores_as_saved(tmp_path):
    """Kimi Linear as released: its config keeps the layers and the linear attention's sizes in linear_attn_config
    alone, with keys transformers does not read (mla_use_nope, the router's kind, a rope it never applies), and its
    dense first layer's MLP under mlp (transformers saves it under block_sparse_moe). It scores as the fixture, and
    as transformers loading the same folder; a full-attention layer named where a KDA layer is changes the model."""
    shutil.copytree(MODELS / "kimi_linear", tmp_path / "released")
    folder = tmp_path / "released"
    config = json.loads((folder / "config.json").read_text())
    for key in ("layer_types", "mlp_layer_types", "linear_head_dim", "linear_num_heads", "linear_conv_kernel_dim",
                "head_dim", "qk_head_dim"):
        config.pop(key, None)
    config.update(mla_use_nope=True, moe_router_activation_func="sigmoid", moe_layer_freq=1, use_grouped_topk=True,
                  first_k_dense_replace=1, rope_theta=10000.0, rope_scaling=None, num_nextn_predict_layers=0)
    (folder / "config.json").write_text(json.dumps(config))
    tensors = safetensors.torch.load_file(folder / "model.safetensors")
    dense = [k for k in tensors if k.startswith("model.layers.0.block_sparse_moe.")]
    assert len(dense) == 3
    for name in dense:
        tensors[name.replace(".block_sparse_moe.", ".mlp.")] = tensors.pop(name)
    safetensors.torch.save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    pairs = fixture_pairs("kimi_linear")
    fixture = prefix_scorer.PrefixScorer.from_pretrained(MODELS / "kimi_linear").loglikelihood(pairs)
    got = prefix_scorer.PrefixScorer.from_pretrained(folder).loglikelihood(pairs)
    assert [g[0] for g in got] == pytest.approx([f[0] for f in fixture], abs=1e-6)
    want = hf_scores(folder, pairs)
    assert [g[0] for g in got] == pytest.approx([w[0] for w in want], abs=1e-4)
    config["linear_attn_config"].update(full_attn_layers=[2, 3], kda_layers=[1, 4])
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(RuntimeError, match=r"model.layers.1.self_attn.q_proj.weight' has shape \[30, 64\], expected \[56, 64\]"):
        prefix_scorer.PrefixScorer.from_pretrained(folder)
