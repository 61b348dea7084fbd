#!/usr/bin/env bash
# The GPU checks in one run, on a machine that has python3 with torch (a CUDA build), nvcc, cmake, ninja, pybind11,
# scikit-build-core and transformers, but maybe no package registry and no Debian -dev packages:
#
#   bash benchmarks/copy_test_sources.sh   # beforehand, where Debian's packages are: GoogleTest and json sources
#   bash benchmarks/gpu_check.sh LOG_DIR   # on the GPU machine, from the repository root
#
# Installs the project into that python as CI does (pip install --no-build-isolation ., tests built in
# build-gpu/), runs the tests (the CUDA ones included), the GPU benchmarks and compare_hf.py, and leaves every
# log and JSON report in LOG_DIR. Each step runs even if an earlier one failed.
set -u
cd "$(dirname "$0")/.."
LOG_DIR=$(mkdir -p "${1:?usage: gpu_check.sh LOG_DIR}" && cd "$1" && pwd)
step() {
  local name=$1
  shift
  local start=$SECONDS
  "$@" > "$LOG_DIR/$name.log" 2>&1
  echo "$name: rc=$? in $((SECONDS - start)) s" | tee -a "$LOG_DIR/steps.txt"
}
nvidia-smi > "$LOG_DIR/nvidia-smi.txt" 2>&1
# An interpreter whose packages the system manages may refuse a plain pip install; this is a scratch machine.
export PIP_BREAK_SYSTEM_PACKAGES=1 CMAKE_BUILD_PARALLEL_LEVEL=16
step install python3 -m pip install --no-build-isolation --no-deps --no-index \
  --config-settings=build-dir=build-gpu \
  --config-settings=cmake.define.PREFIX_SCORER_BUILD_TESTS=ON \
  --config-settings=cmake.define.PREFIX_SCORER_GTEST_SOURCE_DIR="$PWD/third_party/googletest" \
  --config-settings=cmake.define.PREFIX_SCORER_JSON_INCLUDE_DIR="$PWD/third_party/json" .
step build-info python3 -c "import prefix_scorer, json; print(json.dumps(prefix_scorer.build_info()))"
step ctest ctest --test-dir build-gpu --output-on-failure -j 8

BENCH=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/prefix-scorer-bench
GPU=(--device cuda --dtype bfloat16)
step bench-1b-mmlu "$BENCH" --model synthetic:llama-1b "${GPU[@]}" --workload mmlu-shape --mode all --json "$LOG_DIR/bench-1b-mmlu.json"
step bench-1b-mmlu-cascade "$BENCH" --model synthetic:llama-1b "${GPU[@]}" --workload mmlu-shape --cascade-min-prefix-len 0 --json "$LOG_DIR/bench-1b-mmlu-cascade.json"
step bench-1b-hellaswag "$BENCH" --model synthetic:llama-1b "${GPU[@]}" --workload hellaswag-shape --mode all --json "$LOG_DIR/bench-1b-hellaswag.json"
step bench-8b-mmlu "$BENCH" --model synthetic:llama-8b "${GPU[@]}" --workload mmlu-shape --mode all --json "$LOG_DIR/bench-8b-mmlu.json"
step bench-8b-hellaswag "$BENCH" --model synthetic:llama-8b "${GPU[@]}" --workload hellaswag-shape --mode all --json "$LOG_DIR/bench-8b-hellaswag.json"
step compare-hf-1b python3 benchmarks/compare_hf.py --bench "$BENCH" --shape llama-1b --json "$LOG_DIR/compare-hf-1b.json"
cat "$LOG_DIR/steps.txt"
