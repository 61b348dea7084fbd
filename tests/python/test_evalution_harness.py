"""Evalution from PyPI: ``prefix_scorer.evalution.PrefixScorer`` as an Evalution engine, run through Evalution's
own runtime on local data (its HellaSwag, MMLU and C4 suites reading tests/data/lm_eval_tasks), against
Evalution's own Transformers engine on the same tiny checkpoint: the same scores, logprobs within 1e-4."""

import dataclasses
import json

import pytest

from conftest import DATA, assert_paired, foreign_checkpoint

import evalution  # noqa: F401

from evalution.benchmarks import C4, MMLU, HellaSwag  # noqa: E402
from evalution.benchmarks.gsm8k import GSM8K  # noqa: E402
from evalution.config import Model  # noqa: E402
from evalution.engines.base import (  # noqa: E402
    BaseEngine,
    BaseInferenceSession,
    GenerationRequest,
    LoglikelihoodRequest,
    RollingLoglikelihoodRequest,
)
from evalution.engines.transformers import Transformers  # noqa: E402

from prefix_scorer.evalution import PrefixScorer  # noqa: E402

MODEL = str(DATA / "models" / "llama3")
TASKS = DATA / "lm_eval_tasks"
SUBJECTS = ("anatomy", "astronomy", "virology")


def jsonl(name):
    return [json.loads(line) for line in (TASKS / name).read_text().splitlines()]


def hellaswag_rows():
    rows = []
    for row in jsonl("hellaswag.jsonl"):
        first, second = row["ctx"].rsplit(". ", 1)
        rows.append({"activity_label": "Local", "ctx_a": first + ".", "ctx_b": second, "endings": row["endings"],
                     "label": str(row["label"]), "source_id": "local", "split_type": "indomain"})
    return {"validation": rows}


def mmlu_rows():
    return {split: [dict(row, subject=subject) for subject in SUBJECTS
                    for row in jsonl(f"mmlu_{subject}_{split}.jsonl")] for split in ("dev", "test")}


def loader(rows):
    def load(*_args, split, **_kwargs):
        return list(rows[split])
    return load


# Evalution's suites with their dataset loaders pointed at the local rows (they take the hub's schema).
@dataclasses.dataclass(slots=True)
class LocalHellaSwag(HellaSwag):
    dataset_path: str = "local/hellaswag"

    def dataset_loader(self):
        return loader(hellaswag_rows())


@dataclasses.dataclass(slots=True)
class LocalMMLU(MMLU):
    dataset_path: str = "local/mmlu"
    stream: bool = False

    def dataset_loader(self):
        return loader(mmlu_rows())


@dataclasses.dataclass(slots=True)
class LocalC4(C4):
    dataset_path: str = "local/text"
    dataset_name: str = None
    stream: bool = False

    def dataset_loader(self):
        return loader({"validation": [{"text": row["page"]} for row in jsonl("wikitext.jsonl")]})


@dataclasses.dataclass(slots=True)
class LocalGSM8K(GSM8K):
    dataset_path: str = "local/gsm8k"
    stream: bool = False

    def dataset_loader(self):
        rows = [{"question": row["question"], "answer": f"#### {row['answer']}"} for row in jsonl("gsm8k.jsonl")]
        return loader({"test": rows, "train": rows})


def reference_engine():
    return Transformers(device="cpu", dtype="float32", attn_implementation="eager", batch_size=4, seed=0,
                        continuous_batching=False)


def run_suites(engine):
    run = engine.model(path=MODEL, label="llama3-fixture")
    for suite in (LocalHellaSwag(), LocalMMLU(num_fewshot=5), LocalC4()):
        run.run(suite)
    return run.result()


def assert_same_scores(got, want, where):
    """Accuracies equal; perplexities (exponentials of summed logprobs) equal to the logprobs' float32 precision."""
    assert got.keys() == want.keys(), where
    for key, value in want.items():
        if "perplexity" in key or "bits_per_byte" in key:
            assert got[key] == pytest.approx(value, rel=1e-4), (where, key)
        else:
            assert got[key] == value, (where, key)


def test_suites_score_as_evalution_transformers_engine():
    theirs, ours = run_suites(reference_engine()), run_suites(PrefixScorer(device="cpu", dtype="float32"))
    assert [t.name for t in ours.tests] == [t.name for t in theirs.tests]
    for mine, want in assert_paired(ours.tests, theirs.tests, "suites"):
        assert_same_scores(mine.metrics, want.metrics, want.name)
        for got, expected in assert_paired(mine.samples, want.samples, want.name):
            assert_same_scores(got.scores, expected.scores, (want.name, expected.index))
            if "choice_logprobs" in expected.metadata:
                assert got.metadata["choice_logprobs"] == pytest.approx(expected.metadata["choice_logprobs"],
                                                                       abs=1e-4), (want.name, expected.index)
            else:  # rolling: a document's sum, added up in float32 by transformers
                assert got.metadata["logprob"] == pytest.approx(expected.metadata["logprob"], abs=1e-4, rel=1e-6)
                assert got.metadata["token_count"] == expected.metadata["token_count"]
    # The runtime asks for the execution once, as the session starts.
    assert ours.engine["execution"]["engine"] == "prefix-scorer" and ours.engine["execution"]["device"] == "cpu"


def sessions(**tokenizer_kwargs):
    model = Model(path=MODEL, tokenizer_kwargs=tokenizer_kwargs)
    return PrefixScorer(device="cpu", dtype="float32").build(model), reference_engine().build(model)


def test_edge_requests_score_as_evalution_transformers_engine():
    # A window of 32 tokens (the tokenizer's model_max_length, as Evalution reads it) cuts a long continuation
    # into windows and a long document into several.
    ours, theirs = sessions(model_max_length=32)
    long_text = " ".join(f"word{i}" for i in range(40))
    requests = [LoglikelihoodRequest(context="", continuation="Hello world"),
                LoglikelihoodRequest(context="<|begin_of_text|>Question:", continuation=" yes"),
                LoglikelihoodRequest(context="Trailing space ", continuation="next"),
                LoglikelihoodRequest(context_input_ids=[5, 6, 7], continuation_input_ids=[8, 9]),
                LoglikelihoodRequest(context="Story:", continuation=long_text, metadata={"id": 7})]
    got, want = ours.loglikelihood(requests), theirs.loglikelihood(requests)
    assert [o.token_count for o in got] == [o.token_count for o in want]
    assert want[-1].token_count > 32  # scored in several windows
    assert [o.logprob for o in got] == pytest.approx([o.logprob for o in want], abs=1e-4)
    assert [o.is_greedy for o in got] == [o.is_greedy for o in want]
    assert got[-1].metadata == {"id": 7}
    rolling = [RollingLoglikelihoodRequest(text=long_text), RollingLoglikelihoodRequest(text="", input_ids=[3, 4, 5])]
    got_rolling, want_rolling = ours.loglikelihood_rolling(rolling), theirs.loglikelihood_rolling(rolling)
    assert [o.token_count for o in got_rolling] == [o.token_count for o in want_rolling]
    assert [o.logprob for o in got_rolling] == pytest.approx([o.logprob for o in want_rolling], abs=1e-4)
    streamed = dict(ours.loglikelihood_continuous(enumerate(requests)))
    assert sorted(streamed) == list(range(len(requests)))
    assert [streamed[i].logprob for i in range(len(requests))] == pytest.approx([o.logprob for o in got], abs=1e-6)
    for session in (ours, theirs):
        session.close()


def test_generation_gives_evalution_transformers_engine_texts():
    # The qwen3 fixture's random weights say "mememe... i i i": a stop string inside that, one at its start, none.
    model = Model(path=str(DATA / "models" / "qwen3"))
    ours, theirs = PrefixScorer(device="cpu", dtype="float32").build(model), reference_engine().build(model)
    shots = "Question: Tom has 3 apples and buys 2 more.\nAnswer: 5\n\n" * 3
    requests = [GenerationRequest(prompt=shots + f"Question: {q}\nAnswer:", stop=stop, max_new_tokens=16,
                                  metadata={"q": i})
                for i, (q, stop) in enumerate([("Once upon a time", [" i"]), ("How many?", ["\n\n", "Question:"]),
                                               ("Two plus two?", []), ("Why?", ["me"])])]
    requests.append(GenerationRequest(rendered_prompt="Once upon a time", input_ids=None, max_new_tokens=12))
    got, want = ours.generate(requests), theirs.generate(requests)
    assert [(o.prompt, o.text, o.metadata) for o in got] == [(o.prompt, o.text, o.metadata) for o in want]
    assert any(o.text for o in got) and len({o.text for o in got}) > 1
    streamed = dict(ours.generate_continuous(enumerate(requests)))
    assert [streamed[i].text for i in range(len(requests))] == [o.text for o in got]
    for session in (ours, theirs):
        session.close()


def test_chat_messages_render_as_evalution_transformers_engine(tmp_path):
    import shutil

    model_dir = tmp_path / "chat"
    shutil.copytree(DATA / "models" / "qwen3", model_dir)
    config = json.loads((model_dir / "tokenizer_config.json").read_text())
    config["chat_template"] = ("{% for m in messages %}<|begin_of_text|>{{ m['role'] }}: {{ m['content'] }}\n"
                               "{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"
                               "{% if mood is defined %} ({{ mood }}){% endif %}")
    (model_dir / "tokenizer_config.json").write_text(json.dumps(config))
    model = Model(path=str(model_dir))
    ours, theirs = PrefixScorer(device="cpu", dtype="float32").build(model), reference_engine().build(model)
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Once upon a time"}]
    # One max_new_tokens for all: that engine gives every request of a batch the batch's largest.
    requests = [GenerationRequest(messages=chat, max_new_tokens=12, stop=[" i"]),
                GenerationRequest(messages=chat, max_new_tokens=12, chat_template_kwargs={"mood": "calm"}),
                GenerationRequest(messages=chat[1:], add_generation_prompt=False, max_new_tokens=12)]
    got, want = ours.generate(requests), theirs.generate(requests)
    assert [(o.prompt, o.text) for o in got] == [(o.prompt, o.text) for o in want]
    assert "(calm)" in got[1].prompt and got[0].prompt.endswith("assistant:") and not got[2].prompt.endswith(":")
    for session in (ours, theirs):
        session.close()


def test_gsm8k_suite_generates_as_evalution_transformers_engine():
    # Evalution's own GSM8K suite (8-shot chain of thought, its stop strings and answer extraction) on local rows,
    # through its runtime. The random weights answer every question alike here; the session test above has outputs
    # that differ and stop strings that cut them.
    def run_gsm8k(engine):
        run = engine.model(path=str(DATA / "models" / "qwen3"), label="qwen3-fixture")
        run.run(LocalGSM8K(max_new_tokens=24))
        return run.result()

    theirs, ours = run_gsm8k(reference_engine()), run_gsm8k(PrefixScorer(device="cpu", dtype="float32"))
    (want,), (got,) = theirs.tests, ours.tests
    assert got.metrics == want.metrics
    predictions = [(s.index, s.prediction) for s in got.samples]
    assert predictions == [(s.index, s.prediction) for s in want.samples] and len(predictions) == 6


def test_session_lifecycle_and_what_it_refuses():
    engine = PrefixScorer(device="cpu", dtype="float32")
    assert isinstance(engine, BaseEngine) and engine.to_dict()["keep_cache"] is True
    session = engine.build(Model(path=MODEL))
    assert isinstance(session, BaseInferenceSession)
    shots = "The following are questions about anatomy.\n\nWhich bone is longest?\nAnswer: B\n\n"
    session.loglikelihood([LoglikelihoodRequest(context=shots + question, continuation=f" {c}")
                           for question in ("Which organ pumps blood?\nAnswer:", "Where is the tibia?\nAnswer:")
                           for c in "ABCD"])
    assert session.describe_execution()["cache"]["entries_held"] > 0  # the shots' prefix, kept for the next call
    session.gc()
    assert session.describe_execution()["cache"]["entries_held"] == 0
    with pytest.raises(ValueError, match="loglikelihood request 1: the continuation is empty"):
        session.loglikelihood([LoglikelihoodRequest(context="a", continuation=" b"),
                               LoglikelihoodRequest(context="a", continuation="")])
    with pytest.raises(ValueError, match="generation request 0: do_sample=True needs a temperature above 0"):
        session.generate([GenerationRequest(prompt="Q:", do_sample=True)])  # Evalution's default temperature is 0
    with pytest.raises(ValueError, match="generation request 1: num_beams=4; prefix-scorer does not run beam search"):
        session.generate([GenerationRequest(prompt="Q:"), GenerationRequest(prompt="Q:", num_beams=4)])
    session.close()
    with pytest.raises(RuntimeError, match="closed"):
        session.loglikelihood([LoglikelihoodRequest(context="a", continuation=" b")])


def test_a_model_type_without_a_native_engine_is_served_by_evalution_transformers(tmp_path):
    """OPT, which transformers runs and prefix-scorer does not: Evalution's Transformers engine serves it, with one
    warning naming the type, its own numbers, and an execution description saying so; native_only=True refuses."""
    model = Model(path=str(foreign_checkpoint(tmp_path / "opt")))
    with pytest.warns(UserWarning, match="model_type 'opt' natively"):
        ours = PrefixScorer(device="cpu", dtype="float32", batch_size=4).build(model)
    theirs = reference_engine().build(model)
    requests = [LoglikelihoodRequest(context="Question: Is the sky blue?", continuation=" Yes"),
                LoglikelihoodRequest(context="The capital of France is", continuation=" Paris.")]
    got, want = ours.loglikelihood(requests), theirs.loglikelihood(requests)
    assert [o.logprob for o in got] == pytest.approx([o.logprob for o in want], abs=1e-4)
    assert ours.describe_execution()["engine"] == "transformers"
    for session in (ours, theirs):
        session.close()
    with pytest.raises(ValueError, match="'opt' is not one prefix-scorer runs natively"):
        PrefixScorer(device="cpu", native_only=True).build(model)
