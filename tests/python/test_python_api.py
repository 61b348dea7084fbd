"""The Python package: token-level and text-level scoring against the golden fixtures, rolling windows, errors."""

import gc
import json
import threading
import time
import weakref

import pytest

from conftest import DATA, FIXTURE_MODELS, assert_paired

import prefix_scorer
from prefix_scorer.harness import Scorer


def expected_rows(model):
    return json.loads((DATA / "models" / model / "expected_loglikelihood.json").read_text())["loglikelihood"]


@pytest.mark.parametrize("model", FIXTURE_MODELS)
def test_text_requests_match_golden_loglikelihoods(model):
    rows = expected_rows(model)
    scorer = Scorer(DATA / "models" / model, add_bos_token=False, progress=False, min_prefix_len=4)
    results = scorer.loglikelihood([(r["context"], r["continuation"]) for r in rows])
    for i, ((logprob, greedy), row) in enumerate(assert_paired(results, rows)):
        assert logprob == pytest.approx(row["logprob"], abs=1e-4), i
        assert greedy is row["is_greedy"], i
        assert scorer.encode_pair(row["context"], row["continuation"]) == (row["context_ids"], row["continuation_ids"])


@pytest.mark.parametrize("model", FIXTURE_MODELS)
def test_token_requests_match_golden_loglikelihoods(model):
    rows = expected_rows(model)
    scorer = prefix_scorer.PrefixScorer.from_pretrained(DATA / "models" / model, min_prefix_len=4)
    results = scorer.loglikelihood([(r["context_ids"], r["continuation_ids"]) for r in rows])
    assert [lp for lp, _ in results] == pytest.approx([r["logprob"] for r in rows], abs=1e-4)
    assert [g for _, g in results] == [r["is_greedy"] for r in rows]
    assert scorer.stats["requests"] == len(rows)
    assert scorer.stats["entries_held"] == 0


def plain_logprob(scorer, context, continuation):
    """One request scored alone (no prefix shared with anything)."""
    return scorer.loglikelihood([(context, continuation)])[0][0]


def test_rolling_equals_the_sum_of_per_token_logprobs():
    # lm-eval's windows with max_length 16 over a 70-token text: the first predicts 16 tokens from BOS, each
    # later one predicts up to 16 with the 16 tokens before its first prediction as context.
    harness = Scorer(DATA / "models" / "llama3", max_length=16, add_bos_token=False, progress=False)
    text = "The quick brown fox jumps over the lazy dog, again and again, while the cat sleeps soundly. " * 2
    ids = harness.encode(text)
    assert len(ids) > 40
    token_scorer = prefix_scorer.PrefixScorer.from_pretrained(DATA / "models" / "llama3")
    expected = plain_logprob(token_scorer, [0], ids[:16])
    for start in range(16, len(ids), 16):
        end = min(start + 16, len(ids))
        expected += plain_logprob(token_scorer, ids[max(0, end - 17):start], ids[start:end])
    assert harness.loglikelihood_rolling([text])[0] == pytest.approx(expected, abs=1e-4)


def test_add_bos_token_defaults_to_the_tokenizer():
    rows = expected_rows("llama3")
    default = Scorer(DATA / "models" / "llama3", progress=False)
    assert default.add_bos_token  # the tokenizer.json template adds <|begin_of_text|>
    context_ids, _ = default.encode_pair(rows[0]["context"], rows[0]["continuation"])
    assert context_ids == [0] + rows[0]["context_ids"]
    assert default.encode("<|begin_of_text|>Hi")[:2] != [0, 0]


def test_errors_map_to_python_types():
    with pytest.raises(FileNotFoundError, match="config"):
        prefix_scorer.PrefixScorer.from_pretrained(DATA / "no-such-model")
    scorer = prefix_scorer.PrefixScorer.from_pretrained(DATA / "models" / "llama3")
    with pytest.raises(ValueError, match="request 1: empty continuation"):
        scorer.loglikelihood([([1, 2], [3]), ([1, 2], [])])
    with pytest.raises(ValueError, match="request 0: continuation token 0 is id 512"):
        scorer.loglikelihood([([1, 2], [512])])
    with pytest.raises(TypeError, match="unknown option 'max_cash_bytes'"):
        prefix_scorer.PrefixScorer.from_pretrained(DATA / "models" / "llama3", max_cash_bytes=1)
    with pytest.raises(ValueError, match="min_prefix_len"):
        prefix_scorer.PrefixScorer.from_pretrained(DATA / "models" / "llama3", min_prefix_len=0)
    with pytest.raises(ValueError, match="unknown device"):
        prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny", device="tpu")
    with pytest.raises(ValueError, match="synthetic model has no tokenizer"):
        Scorer("synthetic:tiny")
    with pytest.raises(ValueError, match="invalid UTF-8 at byte 3"):
        prefix_scorer.Tokenizer.from_file(DATA / "tokenizer" / "tokenizer.json").encode(b"ok \xc3\x28")


def test_threads_share_one_scorer():
    scorer = prefix_scorer.PrefixScorer.from_pretrained(DATA / "models" / "qwen2", min_prefix_len=4, keep_cache=True)
    pairs = [(list(range(10, 50)) + [100 + i], [i]) for i in range(1, 30)]
    expected = scorer.loglikelihood(pairs)
    results = [None] * 4

    def work(i):
        results[i] = scorer.loglikelihood(pairs)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert [lp for lp, _ in r] == pytest.approx([lp for lp, _ in expected], abs=1e-6)
    assert scorer.stats["cache_hits"] >= 4


def test_progress_callback_reports_rows():
    seen = []
    scorer = prefix_scorer.PrefixScorer.from_pretrained(
        DATA / "models" / "llama3", max_batch_rows=2, on_progress=lambda done, total: seen.append((done, total)))
    scorer.loglikelihood([([1, 2, 3], [i]) for i in range(4, 9)] + [([7, 8], [9])])
    assert seen[-1] == (2, 2)  # two distinct inputs: the five one-token choices share a row
    assert scorer.model_info.vocab_size == 512


def test_a_released_scorer_frees_its_model():
    # The native scorer keeps the progress callback; it must not keep the Scorer (and the model) alive.
    scorer = Scorer(DATA / "models" / "llama3", progress=False)
    alive = weakref.ref(scorer)
    del scorer
    gc.collect()
    assert alive() is None


def test_stats_can_be_read_while_a_call_runs():
    started = threading.Event()

    def slow_progress(done, total):
        started.set()
        time.sleep(0.3)

    scorer = prefix_scorer.PrefixScorer.from_pretrained(DATA / "models" / "llama3", max_batch_rows=1,
                                                        on_progress=slow_progress)
    worker = threading.Thread(target=scorer.loglikelihood, args=([([1, 2, 3], [4]), ([5, 6], [7])],))
    worker.start()
    assert started.wait(10)
    reader = threading.Thread(target=lambda: scorer.stats)
    reader.start()
    reader.join(20)
    worker.join(20)
    assert not reader.is_alive() and not worker.is_alive()
    assert scorer.stats["requests"] == 2


def test_empty_documents_score_zero_like_lm_eval():
    harness = Scorer(DATA / "models" / "qwen2", add_bos_token=False, progress=False)
    scores = harness.loglikelihood_rolling(["", "Some words."])
    assert scores[0] == 0.0
    assert scores[1] < 0.0


def test_stop_strings_end_rows_alike_in_cpp_and_through_the_python_hook():
    """The native tokenizer's stop strings are checked in C++ (``_core.StopStrings``), an HF tokenizer's by a Python
    hook: the same rows stop at the same tokens."""
    from prefix_scorer.harness import GenerationText

    native = Scorer(DATA / "models" / "qwen3", progress=False)  # its random weights say "mememe... i i i"
    hf = Scorer(DATA / "models" / "qwen3", tokenizer_backend="hf", progress=False)
    prompt = native.encode("Once upon a time")
    free = native.generate([GenerationText(prompt, [], 24, {"do_sample": False})])[0]
    requests = [GenerationText(prompt, [" i"], 24, {"do_sample": False}), GenerationText(prompt, [], 24, {"do_sample": False})]
    stopped = native.generate(requests)
    assert stopped == hf.generate(requests)
    assert " i" in stopped[0] and len(stopped[0]) < len(free) and stopped[1] == free


def test_generation_requests_that_cannot_run_are_refused_by_name():
    from prefix_scorer.harness import GenerationText

    text = Scorer(DATA / "models" / "llama3", progress=False)
    good = GenerationText(text.encode("Hello"), ["\n"], 4, {"do_sample": False})
    with pytest.raises(ValueError, match="generate: request 1: an empty stop string"):
        text.generate([good, good._replace(until=["\n", ""])])
    with pytest.raises(ValueError, match="generate: request 1: the prompt is empty"):
        text.generate([good, good._replace(prompt=[])])
    scorer = prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny")
    with pytest.raises(ValueError, match=r"generate: request 0: unknown keys \['beams'\]"):
        scorer.generate([{"prompt": [1, 2], "beams": 2}])
    with pytest.raises(ValueError, match=r"generate: request 0: temperature must be finite and >= 0"):
        scorer.generate([{"prompt": [1, 2], "do_sample": True, "temperature": -1.0}])
    (tokens, reason, logprobs), = scorer.generate([{"prompt": [1, 2], "max_new_tokens": 3}])[0]
    assert len(tokens) == len(logprobs) == 3 and reason == "max_new_tokens" and all(lp <= 0 for lp in logprobs)
