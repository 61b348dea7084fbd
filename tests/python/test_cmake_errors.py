"""CMake stops with a message naming what is missing, on a stand-in torch package (no compiling)."""

import pathlib
import shutil
import subprocess

import pytest

from conftest import ROOT


def fake_torch(root: pathlib.Path, version: str, cuda) -> pathlib.Path:
    """A torch package as pip lays it out, reduced to what CMake reads: version.py and share/cmake/Torch."""
    package = root / "torch"
    config = package / "share" / "cmake" / "Torch"
    config.mkdir(parents=True)
    (package / "version.py").write_text(f"__version__ = '{version}'\ncuda = {cuda!r}\n")
    (config / "TorchConfigVersion.cmake").write_text(
        f'set(PACKAGE_VERSION "{version.split("+")[0]}")\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n')
    (config / "TorchConfig.cmake").write_text("add_library(torch INTERFACE)\n")
    return package / "share" / "cmake"


def configure(tmp_path, prefix, *args):
    proc = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(tmp_path / "build"), f"-DCMAKE_PREFIX_PATH={prefix}",
                           "-DPREFIX_SCORER_BUILD_TESTS=OFF", "-DPREFIX_SCORER_BUILD_PYTHON=OFF", *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    return " ".join((proc.stdout + proc.stderr).split())


def test_an_older_torch_is_named(tmp_path):
    out = configure(tmp_path, fake_torch(tmp_path, "2.1.0", None))
    assert "torch 2.1.0" in out and "too old" in out and "needs torch >= 2.5" in out


def test_cuda_forced_on_a_cpu_only_torch(tmp_path):
    out = configure(tmp_path, fake_torch(tmp_path, "2.11.0+cpu", None), "-DPREFIX_SCORER_CUDA=ON")
    assert "PREFIX_SCORER_CUDA=ON" in out and "CPU-only build" in out and "pip install torch==2.11.0" in out


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs an nvcc to disagree with")
def test_nvcc_of_another_cuda_major(tmp_path):
    out = configure(tmp_path, fake_torch(tmp_path, "2.11.0+cu99", "99.0"))
    assert "built with CUDA 99.0" in out and "install nvcc of CUDA 99" in out


def test_a_cuda_torch_without_nvcc(tmp_path):
    out = configure(tmp_path, fake_torch(tmp_path, "2.11.0+cu130", "13.0"),
                    "-DCMAKE_CUDA_COMPILER=NOTFOUND")
    assert "needs nvcc, which was not found" in out
