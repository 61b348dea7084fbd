"""A C++ program built against the installed package (tests/consumer) scores as the Python API does."""

import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import DATA, ROOT

import prefix_scorer


def test_cpp_consumer_finds_the_installed_package_and_scores(tmp_path):
    if os.environ.get("PREFIX_SCORER_BUILD"):
        pytest.skip("a build tree has no installed CMake package: run against pip install .")
    prefix_path = f"{prefix_scorer.cmake_prefix_path};{torch.utils.cmake_prefix_path}"
    configure = ["cmake", "-S", ROOT / "tests" / "consumer", "-B", tmp_path, "-G", "Ninja",
                 f"-DCMAKE_PREFIX_PATH={prefix_path}", f"-DPython_EXECUTABLE={sys.executable}"]
    for command in (configure, ["cmake", "--build", tmp_path]):
        proc = subprocess.run(list(map(str, command)), capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]

    model = DATA / "models" / "llama3"
    row = json.loads((model / "expected_loglikelihood.json").read_text())["loglikelihood"][0]
    context, continuation = row["context_ids"], row["continuation_ids"]
    proc = subprocess.run([str(tmp_path / "score_one"), str(model), ",".join(map(str, context)),
                           ",".join(map(str, continuation))], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    logprob, is_greedy = proc.stdout.split()
    assert float(logprob) == pytest.approx(row["logprob"], abs=1e-4)
    assert bool(int(is_greedy)) == row["is_greedy"]
    (want,) = prefix_scorer.PrefixScorer.from_pretrained(model).loglikelihood([(context, continuation)])
    assert float(logprob) == pytest.approx(want[0], abs=1e-6)
