"""LoRA adapters (``adapter=`` here, ``peft=`` in lm-eval) against peft itself: adapters made by peft on the fixture
checkpoints, scored by transformers with peft's unmerged layers and by prefix_scorer with the adapter merged at load,
within 1e-4; and everything peft can save that a merge cannot honour, refused by name."""

import json
import pathlib

import pytest
import torch

import prefix_scorer

from conftest import DATA
from lora_adapters import ADAPTERS, make_adapter
from test_references import hf_model

MODELS = DATA / "models"


def pairs_of(family):
    rows = json.loads((MODELS / family / "expected_loglikelihood.json").read_text())["loglikelihood"]
    pairs = [(r["context_ids"], r["continuation_ids"]) for r in rows]
    return pairs + [(c, [(x[0] + 1) % 500]) for c, x in pairs]  # shared prefixes, for the prefix path


def transformers_model(family):
    return hf_model(MODELS / family)


def peft_scores(family, adapter, pairs):
    import peft

    return scores_of(peft.PeftModel.from_pretrained(transformers_model(family), adapter).eval(), pairs)


def scores_of(model, pairs):
    scores = []
    with torch.no_grad():
        for context, continuation in pairs:
            logprobs = torch.log_softmax(model(torch.tensor([context + continuation])).logits[0], -1)
            rows = logprobs[len(context) - 1:-1]
            scores.append(float(rows.gather(1, torch.tensor(continuation)[:, None]).sum()))
    return scores


@pytest.fixture(scope="module")
def adapters(tmp_path_factory):
    root = tmp_path_factory.mktemp("adapters")
    return {name: make_adapter(MODELS / family, root / name, **settings)
            for name, (family, settings) in ADAPTERS.items()}


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_merged_adapter_scores_as_peft(adapters, name):
    family = ADAPTERS[name][0]
    pairs = pairs_of(family)
    want = peft_scores(family, adapters[name], pairs)
    base = [s for s, _ in prefix_scorer.PrefixScorer.from_pretrained(MODELS / family).loglikelihood(pairs)]
    assert max(abs(b - w) for b, w in zip(base, want)) > 1e-2  # the adapter matters at this tolerance
    for options in ({"tree_max_branches": 0, "min_prefix_len": 2}, {}):
        scorer = prefix_scorer.PrefixScorer.from_pretrained(MODELS / family, adapter=adapters[name], **options)
        assert [s for s, _ in scorer.loglikelihood(pairs)] == pytest.approx(want, abs=1e-4), options


def test_multimodal_adapter_of_either_layout_scores_alike(adapters, tmp_path):
    """Before transformers 4.52 a multimodal model kept its language model as language_model.model.* and its output
    layer as language_model.lm_head; adapters trained then name those modules. They merge as the newer names do."""
    from safetensors.torch import load_file

    adapter = adapters["multimodal-saved-head"]
    names = load_file(adapter / "adapter_model.safetensors")
    assert any(".vision_tower." in n for n in names)  # the vision tower's factors are there, and left out
    old = {"base_model.model.model.language_model.": "base_model.model.language_model.model.",
           "base_model.model.lm_head.": "base_model.model.language_model.lm_head."}
    renames = [(n, next((n.replace(a, b) for a, b in old.items() if n.startswith(a)), n)) for n in names]
    older = save_with(adapter, tmp_path / "older", renames=[(a, b) for a, b in renames if a != b])
    pairs = pairs_of("mistral3")
    want = prefix_scorer.PrefixScorer.from_pretrained(MODELS / "mistral3", adapter=adapter).loglikelihood(pairs)
    got = prefix_scorer.PrefixScorer.from_pretrained(MODELS / "mistral3", adapter=older).loglikelihood(pairs)
    assert got == want


def test_vocabulary_resized_as_transformers_resizes_it():
    """vocab_size cuts the embeddings' and output layer's rows as resize_token_embeddings does (lm-eval's hf backend
    does it before loading an adapter); growing needs the rows from an adapter."""
    pairs = pairs_of("llama3")
    model = transformers_model("llama3")
    assert model.config.vocab_size == 512
    full = scores_of(model.eval(), pairs)
    model.resize_token_embeddings(500)
    want = scores_of(model.eval(), pairs)
    assert max(abs(a - b) for a, b in zip(full, want)) > 1e-3
    got = prefix_scorer.PrefixScorer.from_pretrained(MODELS / "llama3", vocab_size=500)
    assert [s for s, _ in got.loglikelihood(pairs)] == pytest.approx(want, abs=1e-4)
    assert got.model_info.vocab_size == 500
    with pytest.raises(ValueError, match="cannot grow 'model.embed_tokens.weight' from 512 to 600 tokens: "
                                         "transformers fills new rows at random, and no adapter saves them"):
        prefix_scorer.PrefixScorer.from_pretrained(MODELS / "llama3", vocab_size=600)


def save_with(adapter_dir, out, config_changes=None, renames=()):
    """A copy of an adapter with its config changed, or tensors renamed (old, new)."""
    from safetensors.torch import load_file, save_file

    out.mkdir()
    config = json.loads((adapter_dir / "adapter_config.json").read_text())
    (out / "adapter_config.json").write_text(json.dumps({**config, **(config_changes or {})}))
    tensors = load_file(adapter_dir / "adapter_model.safetensors")
    for old, new in renames:
        tensors[new] = tensors.pop(old)
    save_file(tensors, out / "adapter_model.safetensors")
    return out


def test_what_a_merge_cannot_honour_is_refused_by_name(adapters, tmp_path):
    import peft

    llama = MODELS / "llama3"
    plain = adapters["subset-rslora-patterns"]  # a qwen2 adapter

    def load(adapter, model=MODELS / "qwen2"):
        return prefix_scorer.PrefixScorer.from_pretrained(model, adapter=adapter)

    cases = {
        "use_dora=true": make_adapter(llama, tmp_path / "dora", r=2, target_modules=["q_proj"], use_dora=True),
        "peft_type is 'LOHA'": make_adapter(llama, tmp_path / "loha", config_class=peft.LoHaConfig, r=2,
                                            target_modules=["q_proj"]),
        "bias='all'": save_with(plain, tmp_path / "bias", {"bias": "all"}),
        "lora_bias=true": save_with(plain, tmp_path / "lora_bias", {"lora_bias": True}),
        "trainable_token_indices": save_with(plain, tmp_path / "tokens", {"trainable_token_indices": [1, 2]}),
    }
    for message, adapter in cases.items():
        with pytest.raises(ValueError, match=f"adapter '{adapter}'.*{message}.*use --model hf"):
            load(adapter, llama if message in ("use_dora=true", "peft_type is 'LOHA'") else MODELS / "qwen2")
    factor = "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"
    moved = save_with(plain, tmp_path / "moved", renames=[(f, f.replace("layers.0", "layers.9"))
                                                          for f in (factor, factor.replace("lora_A", "lora_B"))])
    with pytest.raises(ValueError, match="adapts 'model.layers.9.self_attn.q_proj.weight', which the model does not"):
        load(moved)
    with pytest.raises(ValueError, match="is neither a LoRA factor nor in modules_to_save"):
        load(save_with(plain, tmp_path / "stray", renames=[(factor, "base_model.model.model.norm.weight")]))
    with pytest.raises(ValueError, match="has no 'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight'"):
        load(save_with(plain, tmp_path / "no_b", renames=[(factor.replace("lora_A", "lora_B"), factor.replace("lora_A", "lora_B2"))]))
    with pytest.raises(FileNotFoundError, match="has no adapter_model.safetensors"):
        load(tmp_path)
    # Stacked experts' LoRA: a target parameter the merge does not know, and more factor pairs on an experts
    # module than the config names targets.
    experts = adapters["moe-routed-experts"]  # a qwen3_moe adapter
    with pytest.raises(ValueError, match="target_parameters .*mlp.experts.up_proj.* merge"):
        load(save_with(experts, tmp_path / "odd_target", {"target_parameters": ["mlp.experts.up_proj"]}),
             MODELS / "qwen3_moe")
    with pytest.raises(ValueError, match="are not one per target parameter"):
        load(save_with(experts, tmp_path / "one_target", {"target_parameters": ["mlp.experts.down_proj"]}),
             MODELS / "qwen3_moe")
