#!/usr/bin/env bash
# For a GPU machine without libgtest-dev and nlohmann-json3-dev: run where those packages are installed; copies their
# sources into the git-ignored third_party/, which benchmarks/gpu_check.sh builds the tests with (copy it along
# with the sources).
set -euo pipefail
cd "$(dirname "$0")/.."
test -d /usr/src/googletest || { echo "install libgtest-dev first (bash .ci/install-deps)" >&2; exit 1; }
test -f /usr/include/nlohmann/json.hpp || { echo "install nlohmann-json3-dev first" >&2; exit 1; }
rm -rf third_party && mkdir -p third_party/json/nlohmann
cp -r /usr/src/googletest third_party/googletest
cp /usr/include/nlohmann/*.hpp third_party/json/nlohmann/
cp -r /usr/include/nlohmann/detail /usr/include/nlohmann/thirdparty third_party/json/nlohmann/ 2>/dev/null || true
du -sh third_party
