import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
FIXTURE_MODELS = ["llama3", "mistral", "qwen2", "qwen3"]

# The package as the build tree holds it ($PREFIX_SCORER_BUILD, else ./build), unless one is importable already.
_BUILD_PYTHON = pathlib.Path(os.environ.get("PREFIX_SCORER_BUILD", ROOT / "build")) / "python"
if (_BUILD_PYTHON / "prefix_scorer").is_dir():
    sys.path.insert(0, str(_BUILD_PYTHON))


@pytest.fixture(scope="session")
def bench() -> pathlib.Path:
    """The prefix-scorer-bench binary: $PREFIX_SCORER_BENCH, else the one in ./build."""
    path = pathlib.Path(os.environ.get("PREFIX_SCORER_BENCH", ROOT / "build" / "benchmarks" / "prefix-scorer-bench"))
    if not path.is_file():
        pytest.fail(f"prefix-scorer-bench not found at {path}: build first or set PREFIX_SCORER_BENCH")
    return path
