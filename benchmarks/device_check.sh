#!/usr/bin/env bash
# One prepared run on the device machine (one H200): build against its pip torch, run the tests (the CUDA ones
# included) and the GPU benchmarks, and leave every log and JSON report under $OUT. Prepare third_party/ first
# with benchmarks/prepare_device.sh and carry it. Each step runs even if an earlier one failed.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
step() {
  local name=$1
  shift
  local start=$SECONDS
  "$@" > "$OUT/$name.log" 2>&1
  echo "$name: rc=$? in $((SECONDS - start)) s" | tee -a "$OUT/steps.txt"
}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
TORCH_CMAKE=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
PYBIND_CMAKE=$(python3 -m pybind11 --cmakedir)
step configure cmake -S . -B build-gpu -G Ninja -DCMAKE_PREFIX_PATH="$TORCH_CMAKE;$PYBIND_CMAKE" \
  -DPREFIX_SCORER_GTEST_SOURCE_DIR="$PWD/third_party/googletest" \
  -DPREFIX_SCORER_JSON_INCLUDE_DIR="$PWD/third_party/json" -DPython_EXECUTABLE="$(command -v python3)"
step build cmake --build build-gpu -j 16
step ctest ctest --test-dir build-gpu --output-on-failure -j 8

BENCH=build-gpu/benchmarks/prefix-scorer-bench
GPU=(--device cuda --dtype bfloat16)
step bench-1b-mmlu "$BENCH" --model synthetic:llama-1b "${GPU[@]}" --workload mmlu-shape --mode all --json "$OUT/bench-1b-mmlu.json"
step bench-1b-mmlu-cascade "$BENCH" --model synthetic:llama-1b "${GPU[@]}" --workload mmlu-shape --cascade-attention 1 --json "$OUT/bench-1b-mmlu-cascade.json"
step bench-1b-hellaswag "$BENCH" --model synthetic:llama-1b "${GPU[@]}" --workload hellaswag-shape --mode all --json "$OUT/bench-1b-hellaswag.json"
step bench-8b-mmlu "$BENCH" --model synthetic:llama-8b "${GPU[@]}" --workload mmlu-shape --mode all --json "$OUT/bench-8b-mmlu.json"
step bench-8b-hellaswag "$BENCH" --model synthetic:llama-8b "${GPU[@]}" --workload hellaswag-shape --mode all --json "$OUT/bench-8b-hellaswag.json"
step compare-hf-1b env PYTHONPATH=build-gpu/python python3 benchmarks/compare_hf.py --bench "$BENCH" --shape llama-1b --json "$OUT/compare-hf-1b.json"
cat "$OUT/steps.txt"
