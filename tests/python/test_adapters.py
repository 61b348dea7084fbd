"""The lm-evaluation-harness adapter's own logic (argument parsing, order, tokenization hooks, rolling), and its
registration with lm-eval. The harnesses end to end: test_lm_eval_harness.py and test_evalution_harness.py."""

import json
from types import SimpleNamespace

import pytest

from conftest import DATA

from prefix_scorer import lm_eval as pl
from prefix_scorer.harness import Scorer

MODEL = DATA / "models" / "llama3"
ROWS = json.loads((MODEL / "expected_loglikelihood.json").read_text())["loglikelihood"]


def test_model_args_parse_like_lm_eval_strings():
    assert pl.parse_model_args(batch_size="8", max_length="128", add_bos_token="False", min_prefix_len="16",
                               keep_cache="true") == {
        "add_bos_token": False, "max_length": 128, "max_batch_tokens": 8 * 512,  # a memory hint, no row cap
        "min_prefix_len": 16, "keep_cache": True}
    assert pl.parse_model_args(batch_size="auto") == {"add_bos_token": None}
    assert pl.parse_model_args(batch_size=1) == {"add_bos_token": None}  # lm-eval's command-line default
    with pytest.warns(UserWarning, match="max_batch_size"):
        assert pl.parse_model_args(max_batch_size=64, trust_remote_code=None) == {"add_bos_token": None}
    assert pl.parse_model_args(tokenizer="/t", tokenizer_backend="hf") == {
        "add_bos_token": None, "tokenizer": "/t", "tokenizer_backend": "hf"}
    assert pl.parse_model_args(peft="/adapter") == {"add_bos_token": None, "adapter": "/adapter"}
    with pytest.raises(ValueError, match="cannot honour model argument delta='/d': apply the delta"):
        pl.parse_model_args(delta="/d")
    with pytest.raises(ValueError, match="cannot honour model argument backend='seq2seq'"):
        pl.parse_model_args(backend="seq2seq")
    assert pl.parse_model_args(backend="causal", autogptq="False") == {"add_bos_token": None}
    with pytest.warns(UserWarning, match="fewer than two visible GPUs"):
        assert pl.parse_model_args(parallelize="True") == {"add_bos_token": None}  # no GPU here
    with pytest.raises(TypeError, match="unknown model argument 'temperature'"):
        pl.parse_model_args(temperature="0.5")
    with pytest.raises(ValueError, match="batch_size"):
        pl.parse_model_args(batch_size="0")
    with pytest.raises(ValueError, match="true or false"):
        pl.parse_model_args(add_bos_token="perhaps")


def test_a_continuation_of_no_tokens_scores_as_the_hf_backend_scores_it():
    """(0.0, True): hf sums no log-probabilities and its greedy check over no tokens holds; the rest are scored."""
    scorer = Scorer(MODEL)
    pairs = [(ROWS[0]["context_ids"], ROWS[0]["continuation_ids"]), (ROWS[1]["context_ids"], []),
             (ROWS[1]["context_ids"], ROWS[1]["continuation_ids"])]
    got = scorer.loglikelihood_tokens(pairs)
    want = scorer.loglikelihood_tokens([pairs[0], pairs[2]])
    assert got == [want[0], (0.0, True), want[1]]


def test_every_argument_of_lm_eval_hf_is_served_harmless_or_refused():
    import inspect

    from lm_eval.models.huggingface import HFLM

    served = {"self", "kwargs", "pretrained", "revision", "device", "dtype", "max_length", "batch_size",
              "add_bos_token", "tokenizer", "parallelize", "chat_template_args", "enable_thinking", "peft"}
    known = served | pl.HARMLESS_ARGS | set(pl.REFUSED_ARGS)
    assert set(inspect.signature(HFLM.__init__).parameters) - known == set()
    for name in pl.REFUSED_ARGS:  # hf's own default passes, anything else is refused
        default = inspect.signature(HFLM.__init__).parameters.get(name)
        if default is not None and default.default is not inspect.Parameter.empty:
            pl.parse_model_args(**{name: default.default})


def test_lm_eval_model_scores_requests_in_order():
    lm = pl.PrefixScorerLM(pretrained=str(MODEL), add_bos_token="false", batch_size="4", device=None)
    order = [3, 0, 9, 7, 1, 10, 1]  # rows 9 and 10 are greedy (1 and 3 tokens)
    assert {ROWS[i]["is_greedy"] for i in order} == {True, False}
    requests = [SimpleNamespace(args=(ROWS[i]["context"], ROWS[i]["continuation"])) for i in order]
    results = lm.loglikelihood(requests, disable_tqdm=True)
    assert [lp for lp, _ in results] == pytest.approx([ROWS[i]["logprob"] for i in order], abs=1e-4)
    assert [g for _, g in results] == [ROWS[i]["is_greedy"] for i in order]
    # TemplateLM's own path hands encoded pairs to _loglikelihood_tokens.
    tokens = lm._loglikelihood_tokens([(None, ROWS[i]["context_ids"], ROWS[i]["continuation_ids"]) for i in order])
    assert [lp for lp, _ in tokens] == pytest.approx([lp for lp, _ in results], abs=1e-6)
    assert lm.tok_encode("Hello") == lm.scorer.encode("Hello")
    assert lm.tok_encode("Hello", add_special_tokens=True)[0] == 0
    assert lm.tok_encode("Hello world", left_truncate_len=2) == lm.tok_encode("Hello world")[-2:]
    assert lm.prefix_token_id == 0 and lm.eot_token_id == 1
    assert lm.tokenizer_name.endswith("llama3")
    assert lm.scorer.stats["requests"] >= 5


def transformers_rolling(text, max_length):
    """lm-eval's own rolling windows of `text`, each scored by transformers: the reference, on another code path."""
    import torch
    import transformers
    from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

    model = transformers.AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.float32).eval()
    ids = Scorer(MODEL, add_bos_token=False, progress=False).encode(text)
    total = 0.0
    for window in get_rolling_token_windows(ids, prefix_token=0, max_seq_len=max_length, context_len=1):
        context, continuation = make_disjoint_window(window)
        with torch.no_grad():
            logits = model(torch.tensor([context + continuation])).logits[0, len(context) - 1:-1]
        total += torch.log_softmax(logits, -1).gather(1, torch.tensor(continuation)[:, None]).sum().item()
    return total


def test_lm_eval_rolling_and_generation():
    lm = pl.PrefixScorerLM(pretrained=str(MODEL), add_bos_token="false", max_length="16")
    text = "A long document of plain words, long enough to need several windows of sixteen tokens."
    rolled = lm.loglikelihood_rolling([SimpleNamespace(args=(text,))], disable_tqdm=True)
    assert len(rolled) == 1
    assert rolled[0] == pytest.approx(transformers_rolling(text, 16), abs=1e-4)
    # lm-eval's default of 256 new tokens leaves no room for a context in max_length 16: refused, as hf refuses it
    with pytest.raises(ValueError, match="request 0: max_gen_toks 256 leaves no room for the context in max_length 16"):
        lm.generate_until([SimpleNamespace(args=("Q:", {"until": ["\n"]}))])
    (text,) = lm.generate_until([SimpleNamespace(args=("Q:", {"until": ["\n"], "max_gen_toks": 4}))])
    assert isinstance(text, str) and "\n" not in text


def test_lm_eval_registers_the_model():
    from lm_eval.api.registry import get_model

    assert get_model("prefix-scorer") is pl.PrefixScorerLM


def test_dtype_auto_is_the_checkpoints_own_as_in_the_hf_backend(tmp_path):
    import shutil

    import prefix_scorer

    shutil.copytree(MODEL, tmp_path / "bf16")
    config = tmp_path / "bf16" / "config.json"
    config.write_text(config.read_text().replace('"dtype": "float32"', '"dtype": "bfloat16"'))
    assert pl.PrefixScorerLM(pretrained=str(tmp_path / "bf16")).scorer.dtype == "bfloat16"  # hf's "auto"
    assert pl.PrefixScorerLM(pretrained=str(tmp_path / "bf16"), dtype="float32").scorer.dtype == "float32"
    assert prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "bf16", dtype="auto").dtype == "bfloat16"
    assert prefix_scorer.PrefixScorer.from_pretrained(tmp_path / "bf16").dtype == "float32"  # None: the CPU's rule
    assert prefix_scorer.PrefixScorer.from_pretrained("synthetic:tiny", dtype="auto").dtype == "float32"


def test_generation_takes_the_checkpoints_generation_config_as_hf_generate_does(tmp_path):
    import shutil

    from prefix_scorer.harness import GenerationText, Scorer

    model = tmp_path / "model"
    shutil.copytree(MODEL, model)
    config = json.loads((model / "generation_config.json").read_text())
    prompt = Scorer(model, progress=False).encode("Once upon a time")
    greedy = GenerationText(prompt, [], 6, {"do_sample": False})
    sampled = GenerationText(prompt, [], 6, {"do_sample": True, "temperature": 0.7, "seed": 3})
    # top_k and top_p from the file (then transformers' 50 and 1.0): a top_k of 1 makes sampling greedy.
    (model / "generation_config.json").write_text(json.dumps({**config, "top_k": 1}))
    scorer = Scorer(model, progress=False)
    assert scorer.generate([sampled]) == scorer.generate([greedy])
    (model / "generation_config.json").write_text(json.dumps({**config, "repetition_penalty": 1.05}))
    with pytest.raises(ValueError, match=r"request 0: the checkpoint.s generation_config.json sets "
                                         r"repetition_penalty=1.05, which prefix-scorer does not apply"):
        Scorer(model, progress=False).generate([greedy, greedy])
    (model / "generation_config.json").write_text(json.dumps({**config, "typical_p": 0.9}))
    assert Scorer(model, progress=False).generate([greedy])  # a sampling-only setting: greedy ignores it, as hf
    with pytest.raises(ValueError, match="typical_p=0.9"):
        Scorer(model, progress=False).generate([sampled])
    lm = pl.PrefixScorerLM(pretrained=str(MODEL))
    with pytest.raises(ValueError, match="request 0: do_sample=True needs a temperature above 0"):
        lm.generate_until([type("Req", (), {"args": ("Hi", {"until": ["\n"], "do_sample": True})})()])
