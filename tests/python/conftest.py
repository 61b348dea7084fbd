import os
import pathlib
import shutil
import sys

import pytest

# Under pytest-xdist (-n N) each worker computes on one thread: OpenMP pools of two threads each, spinning on the
# same cores, slow each other down several times over (docs/performance.md, "under load").
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
FIXTURE_MODELS = ["llama3", "mistral", "qwen2", "qwen3"]
#: Trained weights, made by tests/make_real_assets.py (git-ignored).
REAL_CHECKPOINT = ROOT / "tests" / "real_assets" / "smollm2-135m-instruct"
REAL_GEMMA3 = ROOT / "tests" / "real_assets" / "gemma3-270m"

# What is tested: the package and prefix-scorer-bench installed in the interpreter running pytest (pip install .),
# or, with PREFIX_SCORER_BUILD=<build folder>, the ones in that CMake build tree.
_BUILD = os.environ.get("PREFIX_SCORER_BUILD")
if _BUILD:
    sys.path.insert(0, str(pathlib.Path(_BUILD) / "python"))
    _BENCH = pathlib.Path(_BUILD) / "benchmarks" / "prefix-scorer-bench"
else:
    _BENCH = pathlib.Path(sys.executable).parent / "prefix-scorer-bench"
    if not _BENCH.is_file():
        _BENCH = pathlib.Path(shutil.which("prefix-scorer-bench") or _BENCH)


@pytest.fixture(scope="session")
def real_checkpoint() -> pathlib.Path:
    """The real-weights checkpoint; a test that needs it skips when it is missing (and fails in CI)."""
    if not (REAL_CHECKPOINT / "stamp.json").is_file():
        pytest.skip(f"{REAL_CHECKPOINT} is missing: make it with .venv/bin/python tests/make_real_assets.py")
    return REAL_CHECKPOINT


@pytest.fixture(scope="session")
def real_gemma3() -> pathlib.Path:
    """Gemma 3 270M's real weights; a test that needs them skips when they are missing (and fails in CI)."""
    if not (REAL_GEMMA3 / "stamp.json").is_file():
        pytest.skip(f"{REAL_GEMMA3} is missing: make it with .venv/bin/python tests/make_real_assets.py")
    return REAL_GEMMA3


@pytest.fixture(scope="session")
def bench() -> pathlib.Path:
    """The prefix-scorer-bench under test."""
    if not _BENCH.is_file():
        pytest.fail(f"prefix-scorer-bench not found at {_BENCH}: pip install . first, or set PREFIX_SCORER_BUILD")
    return _BENCH


def child_env(**extra: str) -> dict:
    """The environment for a Python child process that must import the prefix_scorer under test, offline."""
    import prefix_scorer

    return {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(prefix_scorer.__file__)),
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **extra}


def assert_paired(got, want, what="results"):
    """zip(got, want) once both are known to hold the same, non-zero number of items: a zip over an empty or
    shortened list would check nothing."""
    got, want = list(got), list(want)
    assert len(want) > 0, f"{what}: nothing to compare"
    assert len(got) == len(want), f"{what}: {len(got)} results where {len(want)} were expected"
    return zip(got, want)


# In CI (PREFIX_SCORER_CI=1, set by .ci/run) a skipped test fails unless it was skipped for want of a GPU: a missing
# test dependency or a broken install must not turn into one "SKIPPED" line and a green run.
ALLOWED_SKIP = "needs a GPU"


def _fail_disallowed_skip(report):
    if os.environ.get("PREFIX_SCORER_CI") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if ALLOWED_SKIP not in reason:
            report.outcome = "failed"
            report.longrepr = f"skipped in CI, where only a missing GPU may skip a test: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    _fail_disallowed_skip((yield).get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    _fail_disallowed_skip((yield).get_result())  # a module-level importorskip


def foreign_checkpoint(folder):
    """A tiny random OPT checkpoint with the fixtures' tokenizer: a model_type transformers runs and prefix-scorer
    does not, for the harnesses' fallback to transformers."""
    import shutil

    import torch
    import transformers

    config = transformers.OPTConfig(vocab_size=512, hidden_size=32, word_embed_proj_dim=32, ffn_dim=64,
                                    num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=512,
                                    bos_token_id=0, eos_token_id=2, pad_token_id=1)
    torch.manual_seed(0)
    transformers.OPTForCausalLM(config).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(DATA / "tokenizer" / name, folder / name)
    return folder
