"""The GPU script's smoke form (benchmarks/gpu_check.sh smoke): every benchmark step and compare_hf.py run on the
CPU with tiny shapes, its logs packed into one archive, and transformers' numbers in compare_hf.py agree with the
native scorer's."""

import json
import subprocess
import tarfile

from conftest import ROOT


def test_the_gpu_script_smoke_form_runs_every_step_and_transformers_agrees(tmp_path):
    logs = tmp_path / "gpu-logs"
    proc = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), "smoke", str(logs)],
                          capture_output=True, text=True, timeout=1200)
    steps = (logs / "steps.txt").read_text()
    failed = [line.split(":")[0] for line in steps.splitlines() if "rc=0 " not in line]
    tails = {name: (logs / f"{name}.log").read_text()[-2000:] for name in failed}
    assert proc.returncode == 0 and not failed, (steps, tails)
    assert len(steps.splitlines()) == 6, steps
    report = json.loads((logs / "compare-hf.json").read_text())
    assert report["device"] == "cpu" and report["dtype"] == "float32" and report["requests"] > 0
    for name in ("hf-lmeval", "hf-prefix"):  # fp32, same weights: within the fixtures' 1e-4
        assert report["modes"][name]["max_abs_logprob_diff"] < 1e-4, report
        assert report["modes"][name]["is_greedy_agreement"] == 1.0, report
    with tarfile.open(f"{logs}.tar.gz") as archive:
        assert "gpu-logs/steps.txt" in archive.getnames() and "gpu-logs/compare-hf.json" in archive.getnames()
