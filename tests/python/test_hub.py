"""Hub names (org/name, at a revision) found in a Hugging Face cache laid out as huggingface_hub lays it out, offline."""

import shutil

import pytest

import prefix_scorer
from conftest import DATA
from prefix_scorer.harness import Scorer
from prefix_scorer.hub import resolve_checkpoint
from prefix_scorer.lm_eval import PrefixScorerLM

MODELS = DATA / "models"


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """A cache holding org/tiny at two revisions: main (the llama3 fixture) and v2 (the qwen2 fixture)."""
    repo = tmp_path / "hub" / "models--org--tiny"
    for ref, commit, fixture in (("main", "a" * 40, "llama3"), ("v2", "b" * 40, "qwen2")):
        shutil.copytree(MODELS / fixture, repo / "snapshots" / commit)
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return repo


def test_a_hub_name_loads_its_snapshot_at_each_revision(hub_cache):
    assert resolve_checkpoint("org/tiny") == str(hub_cache / "snapshots" / ("a" * 40))
    assert resolve_checkpoint("org/tiny", "v2") == str(hub_cache / "snapshots" / ("b" * 40))
    assert resolve_checkpoint("org/tiny", "b" * 40) == str(hub_cache / "snapshots" / ("b" * 40))  # a commit
    assert prefix_scorer.PrefixScorer.from_pretrained("org/tiny").model_info.model_type == "llama"
    assert prefix_scorer.PrefixScorer.from_pretrained("org/tiny", revision="v2").model_info.model_type == "qwen2"
    text = Scorer("org/tiny", revision="v2", progress=False)  # the tokenizer from the same snapshot
    want = Scorer(MODELS / "qwen2", progress=False).loglikelihood([("Hello", " world")])
    assert text.loglikelihood([("Hello", " world")]) == want
    lm = PrefixScorerLM(pretrained="org/tiny", revision="v2")
    assert lm.scorer.model_info.model_type == "qwen2"


def test_a_name_the_cache_lacks_says_where_it_looked(hub_cache):
    with pytest.raises(FileNotFoundError, match=r"'org/other' \(revision 'main'\) is neither a folder nor in the "
                                                r"Hugging Face cache: looked for .*models--org--other"):
        prefix_scorer.PrefixScorer.from_pretrained("org/other")
    partial = hub_cache.parent / "models--org--partial"  # an earlier tokenizer download left no weights
    (partial / "snapshots" / ("c" * 40)).mkdir(parents=True)
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(MODELS / "llama3" / name, partial / "snapshots" / ("c" * 40) / name)
    (partial / "refs").mkdir()
    (partial / "refs" / "main").write_text("c" * 40)
    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        resolve_checkpoint("org/partial")
    with pytest.raises(FileNotFoundError, match="revision 'v9'"):
        resolve_checkpoint("org/tiny", "v9")
    with pytest.raises(ValueError, match="revision='v2' applies to hub names only"):
        resolve_checkpoint(str(MODELS / "llama3"), "v2")
