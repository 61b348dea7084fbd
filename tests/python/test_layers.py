"""The source tree's layers: the engine (src/model/) never includes the scoring pipeline (src/scoring/) or
generation (src/generation/), scoring never includes generation (which builds on it), and every project include
names its layer's folder."""

import re

from conftest import ROOT

SRC = ROOT / "src"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
LAYERS = ("model", "scoring", "generation", "tokenizer")


def includes(folder):
    """(file, included path) of every quoted include of the C++ and CUDA sources under `folder`."""
    for path in sorted(folder.rglob("*")):
        if path.suffix in (".h", ".cpp", ".cu"):
            for included in INCLUDE.findall(path.read_text()):
                yield path.relative_to(ROOT), included


def test_the_layer_folders_exist_and_hold_sources():
    for layer in LAYERS:
        assert any((SRC / layer).glob("*.cpp")), layer


def test_the_engine_does_not_include_the_scoring_pipeline():
    found = [(str(path), inc) for path, inc in includes(SRC / "model") if inc.startswith(("scoring/", "generation/"))]
    assert found == []


def test_scoring_does_not_include_generation():
    found = [(str(path), inc) for path, inc in includes(SRC / "scoring") if inc.startswith("generation/")]
    assert found == []


def test_internal_headers_are_named_by_their_layer_folder():
    # "rows.h" alone would resolve only through an include path that hides which layer it belongs to.
    for path, inc in includes(SRC):
        if not inc.startswith("prefix_scorer/"):
            assert (SRC / inc).is_file(), (str(path), inc)


# Inside the engine, what each folder may include of it (a folder, or a header at src/model/'s top): config.json's
# reading knows nothing of tensors; the ops know the config and the forward's batch, not the layers or the model;
# the checkpoint knows the config and the Linear it fills; the cache the config and the counted host copies.
ENGINE_FOLDERS = {
    "config": ("config",),
    "families": ("config", "families"),
    "ops": ("ops", "cpu", "cuda", "config", "forward_batch.h"),
    "cpu": ("ops", "cpu"),
    "cuda": ("ops", "cuda", "device_memory.h"),  # the CUDA half of device memory's queries
    "checkpoint": ("config", "checkpoint", "ops"),
    "cache": ("config", "cache", "host_transfers.h"),
}


def test_engine_folders_include_only_the_folders_below_them():
    found = []
    for folder, allowed in ENGINE_FOLDERS.items():
        for path, inc in includes(SRC / "model" / folder):
            if inc.startswith("model/") and inc.split("/")[1] not in allowed:
                found.append((str(path), inc))
    assert found == []
