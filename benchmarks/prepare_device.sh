#!/usr/bin/env bash
# Run where Debian's packages are, before benchmarks/device_check.sh runs on a GPU machine without them: copies
# the GoogleTest and nlohmann-json sources into the git-ignored third_party/, which must travel with the
# working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
test -d /usr/src/googletest || { echo "install libgtest-dev first (bash .ci/install-deps)" >&2; exit 1; }
test -f /usr/include/nlohmann/json.hpp || { echo "install nlohmann-json3-dev first" >&2; exit 1; }
rm -rf third_party && mkdir -p third_party/json/nlohmann
cp -r /usr/src/googletest third_party/googletest
cp /usr/include/nlohmann/*.hpp third_party/json/nlohmann/
cp -r /usr/include/nlohmann/detail /usr/include/nlohmann/thirdparty third_party/json/nlohmann/ 2>/dev/null || true
du -sh third_party
