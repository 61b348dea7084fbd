import os
import pathlib
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
FIXTURE_MODELS = ["llama3", "mistral", "qwen2", "qwen3"]

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
