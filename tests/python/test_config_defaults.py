"""Every supported family's config defaults as the engine fills them in, against transformers' own config class: a
config.json that gives the sizes alone must be read with transformers' norm epsilon, tied embeddings, head size,
rope base and rotated share, since a checkpoint's config may omit any of them."""

import json
import warnings

import pytest
import transformers

from prefix_scorer import _core, _testing  # _testing: built and installed with the test suite

SIZES = dict(vocab_size=262144, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4)
EPS_KEYS = ("rms_norm_eps", "layer_norm_eps", "norm_eps", "layer_norm_epsilon", "norm_epsilon")
# Types the engine reads that transformers 5.24 registers under another name (Kimi K2's config is DeepSeek V3's).
NOT_IN_TRANSFORMERS = {"kimi_k2"}
# Sizes some types need besides: wrappers whose default audio tokens lie past 262,144 (Gemma 4's per-layer table as
# long as the vocabulary); MiMo-V2-Flash's sliding layers, with twice the kv heads, need fewer than the 4 heads.
EXTRA_SIZES = {"gemma4": dict(vocab_size=270000, vocab_size_per_layer_input=270000),
               "apertus1p5": dict(vocab_size=270000), "mimo_v2_flash": dict(num_key_value_heads=2)}


def text_types():
    return [t for t in _core.supported_model_types() if t not in NOT_IN_TRANSFORMERS]


def flat_rope(config: dict) -> dict:
    """rope_parameters when it is one rope (not one per layer type), else {}."""
    rope = config.get("rope_parameters") or {}
    return rope if "rope_type" in rope else {}


@pytest.mark.parametrize("model_type", text_types())
def test_sizes_alone_read_with_transformers_defaults(model_type):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapper = "text_config" in transformers.CONFIG_MAPPING[model_type].sub_configs
        text = dict(SIZES, **EXTRA_SIZES.get(model_type, {}))
        sizes = dict(text_config=text) if wrapper else text  # a multimodal wrapper's sizes are its text model's
        ours = json.loads(_testing.config_as_read(json.dumps(dict(model_type=model_type, **sizes))))
        theirs = transformers.AutoConfig.for_model(model_type, **sizes).get_text_config().to_dict()
    if "text_config" in ours:
        ours = ours["text_config"]
    compared = 0
    latent = "kv_lora_rank" in ours  # whose head_dim is the rotated part of a key, not transformers' head_dim
    for key in (*EPS_KEYS, "tie_word_embeddings", *(() if latent else ("head_dim",))):
        if key in theirs and theirs[key] is not None and key in ours:
            assert ours[key] == pytest.approx(theirs[key], rel=1e-12), f"{model_type}: {key}"
            compared += 1
    for key in ("rope_theta", "partial_rotary_factor"):
        if key in flat_rope(theirs) and key in flat_rope(ours):
            assert flat_rope(ours)[key] == pytest.approx(flat_rope(theirs)[key], rel=1e-12), f"{model_type}: {key}"
    assert compared >= 2, f"{model_type}: no norm epsilon or tie to compare ({sorted(ours)})"
