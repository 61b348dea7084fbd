"""The build and the platform: the torch it is built against, what --build-info reports, the installed layout."""

import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch

import prefix_scorer
from prefix_scorer._torch_check import check_torch


def test_build_info_names_the_running_torch_and_its_cuda():
    info = prefix_scorer.build_info()
    assert info["version"] == prefix_scorer.__version__
    assert info["torch"] == torch.__version__
    assert info["tokenizer"] is True
    if torch.version.cuda:  # a CUDA torch: the project's CUDA code is compiled, with torch's CUDA major
        assert info["cuda"].split(".")[0] == torch.version.cuda.split(".")[0]
        assert info["cuda_architectures"] and all(isinstance(a, int) for a in info["cuda_architectures"])
    else:
        assert info["cuda"] is None


def test_bench_build_info_is_the_same_json(bench):
    proc = subprocess.run([str(bench), "--build-info"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    expected = prefix_scorer.build_info()
    for key in ("version", "torch", "cuda", "cuda_architectures", "tokenizer", "blas"):
        assert printed[key] == expected[key], key


def test_another_torch_is_refused_naming_both_versions():
    check_torch("2.11.0+cu130", "2.11.0+cu130")
    with pytest.raises(ImportError, match=r"built against torch 2\.11\.0\+cu130, but torch 2\.5\.1 is installed"):
        check_torch("2.11.0+cu130", "2.5.1")


def test_import_refuses_another_torch_before_loading_the_module():
    code = "import torch; torch.__version__ = '2.1.0'; import prefix_scorer"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and "torch 2.1.0 is installed" in proc.stderr
    assert torch.__version__ in proc.stderr


def test_installed_package_carries_its_cmake_config():
    if os.environ.get("PREFIX_SCORER_BUILD"):
        pytest.skip("a build tree has no installed CMake package: run against pip install .")
    config = pathlib.Path(prefix_scorer.cmake_prefix_path) / "prefix_scorer" / "prefix_scorerConfig.cmake"
    assert config.is_file()
    include = pathlib.Path(prefix_scorer.__file__).parent / "include" / "prefix_scorer"
    assert (include / "prefix_scorer.h").is_file()
    # Only the user API is installed: no header of the internal units under src/.
    internal = {p.name for p in (pathlib.Path(__file__).resolve().parents[2] / "src").rglob("*.h")}
    installed = {p.name for p in include.glob("*.h")}
    assert installed and not installed & internal, installed & internal
