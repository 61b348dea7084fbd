#!/usr/bin/env bash
# The GPU checks, in two calls that each take a few minutes, on a machine that has python3 with torch (a CUDA
# build), nvcc, cmake, ninja, pybind11, scikit-build-core and transformers, but maybe no package registry and no
# Debian -dev packages:
#
#   bash benchmarks/copy_test_sources.sh       # beforehand, where Debian's packages are: GoogleTest and json sources
#   bash benchmarks/gpu_check.sh build LOG_DIR  # on the GPU machine, from the repository root: install with the
#                                               # tests (build-gpu/, sm90 unless CUDA_ARCHS says otherwise), ctest
#   bash benchmarks/gpu_check.sh bench LOG_DIR  # then: the GPU benchmarks and compare_hf.py
#   bash benchmarks/gpu_check.sh smoke LOG_DIR  # the bench call on the CPU with tiny shapes (CI runs it)
#
# Each step runs even if an earlier one failed; its log and JSON report land in LOG_DIR, LOG_DIR/steps.txt says how
# each step ended, and everything is packed into LOG_DIR.tar.gz at the end. The script fails when a step did.
set -u
cd "$(dirname "$0")/.."
MODE=${1:?usage: gpu_check.sh build|bench|smoke LOG_DIR}
LOG_DIR=$(mkdir -p "${2:?usage: gpu_check.sh build|bench|smoke LOG_DIR}" && cd "$2" && pwd)
PYTHON=${PYTHON:-python3}
[ "$MODE" = smoke ] && [ -x .venv/bin/python ] && PYTHON=.venv/bin/python
# nvcc where the CUDA Toolkit puts it, when PATH lacks it.
command -v nvcc > /dev/null || export PATH="/usr/local/cuda/bin:$PATH"
failed=0
step() {
  local name=$1
  shift
  local start=$SECONDS rc=0
  "$@" > "$LOG_DIR/$name.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || failed=1
  echo "$name: rc=$rc in $((SECONDS - start)) s" | tee -a "$LOG_DIR/steps.txt"
}

install_with_tests() {
  # An interpreter whose packages the system manages may refuse a plain pip install; this is a scratch machine.
  PIP_BREAK_SYSTEM_PACKAGES=1 CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$PYTHON" -m pip install --no-build-isolation \
    --no-deps --no-index \
    --config-settings=build-dir=build-gpu \
    --config-settings=cmake.define.PREFIX_SCORER_BUILD_TESTS=ON \
    --config-settings=cmake.define.PREFIX_SCORER_FUZZ=OFF \
    --config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" \
    --config-settings=cmake.define.PREFIX_SCORER_GTEST_SOURCE_DIR="$PWD/third_party/googletest" \
    --config-settings=cmake.define.PREFIX_SCORER_JSON_INCLUDE_DIR="$PWD/third_party/json" .
}

# The benchmarks and the comparison with transformers: on the GPU in bf16 at the released sizes, or (smoke) the
# same steps on the CPU in fp32 on synthetic:tiny, where compare_hf.py's numbers must also agree.
benchmarks() {
  local bench small big run compare
  bench=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/prefix-scorer-bench
  if [ "$MODE" = smoke ]; then
    small=tiny big=tiny run=(--device cpu --dtype float32 --questions 8)
    compare=(--lmeval-batches 32 --prefix-batches 32)
  else
    small=llama-1b big=llama-8b run=(--device cuda --dtype bfloat16) compare=()
  fi
  step bench-small-mmlu "$bench" --model "synthetic:$small" "${run[@]}" --count-ops true --workload mmlu-shape \
    --mode all --json "$LOG_DIR/bench-small-mmlu.json"
  step bench-small-mmlu-cascade "$bench" --model "synthetic:$small" "${run[@]}" --count-ops true --workload mmlu-shape \
    --cascade-min-prefix-len 0 --json "$LOG_DIR/bench-small-mmlu-cascade.json"
  step bench-small-hellaswag "$bench" --model "synthetic:$small" "${run[@]}" --count-ops true --workload hellaswag-shape \
    --mode all --json "$LOG_DIR/bench-small-hellaswag.json"
  step bench-small-gsm8k "$bench" --model "synthetic:$small" "${run[@]}" --count-ops true --workload gsm8k-shape \
    --mode all --json "$LOG_DIR/bench-small-gsm8k.json"
  step bench-big-mmlu "$bench" --model "synthetic:$big" "${run[@]}" --count-ops true --workload mmlu-shape --mode all \
    --json "$LOG_DIR/bench-big-mmlu.json"
  step compare-hf "$PYTHON" benchmarks/compare_hf.py --bench "$bench" --shape "$small" "${run[@]}" "${compare[@]}" \
    --json "$LOG_DIR/compare-hf.json"
}

case "$MODE" in
  build)
    nvidia-smi > "$LOG_DIR/nvidia-smi.txt" 2>&1
    step install install_with_tests
    step build-info "$PYTHON" -c "import prefix_scorer, json; print(json.dumps(prefix_scorer.build_info()))"
    step ctest ctest --test-dir build-gpu --output-on-failure -j 8
    ;;
  bench)
    nvidia-smi > "$LOG_DIR/nvidia-smi.txt" 2>&1
    benchmarks
    ;;
  smoke)
    benchmarks
    ;;
  *)
    echo "usage: gpu_check.sh build|bench|smoke LOG_DIR" >&2
    exit 2
    ;;
esac
tar -czf "$LOG_DIR.tar.gz" -C "$(dirname "$LOG_DIR")" "$(basename "$LOG_DIR")"
exit "$failed"
