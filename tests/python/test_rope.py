"""Rope frequencies as the engine reads them from config.json and computes them, against transformers' own
ROPE_INIT_FUNCTIONS on the same config (the fixtures cover the rope types the supported families use end to end)."""

import pytest
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from prefix_scorer import _testing  # built and installed with the test suite (PREFIX_SCORER_BUILD_TESTS=ON)

ROPES = {
    "linear": {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
    "llama3": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
    # Gemma 4's full-attention layers: a quarter of the frequencies turn, over the whole head's exponents.
    "proportional": {"rope_type": "proportional", "rope_theta": 1000000.0, "partial_rotary_factor": 0.25},
    "proportional, scaled, odd share": {"rope_type": "proportional", "rope_theta": 10000.0,
                                        "partial_rotary_factor": 0.3, "factor": 2.0},
}


@pytest.mark.parametrize("name", ROPES)
def test_rope_frequencies_match_transformers(name):
    config = transformers.LlamaConfig(hidden_size=256, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
                                      intermediate_size=64, num_hidden_layers=1, vocab_size=32,
                                      max_position_embeddings=256, rope_parameters=dict(ROPES[name]))
    want, _ = ROPE_INIT_FUNCTIONS[ROPES[name]["rope_type"]](config, "cpu")
    got = _testing.rope_frequencies(config.to_json_string())
    assert len(got) == want.numel() == 32
    assert got == pytest.approx(want.tolist(), rel=1e-6, abs=0)
