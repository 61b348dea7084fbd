#!/usr/bin/env bash
# Run here, before benchmarks/device_check.sh goes to the device machine: copies the sources that machine lacks
# (GoogleTest, nlohmann-json; from this machine's Debian packages) into the git-ignored third_party/, which the
# device call must carry.
set -euo pipefail
cd "$(dirname "$0")/.."
test -d /usr/src/googletest || { echo "install libgtest-dev first (bash .ci/install-deps)" >&2; exit 1; }
test -f /usr/include/nlohmann/json.hpp || { echo "install nlohmann-json3-dev first" >&2; exit 1; }
rm -rf third_party && mkdir -p third_party/json/nlohmann
cp -r /usr/src/googletest third_party/googletest
cp /usr/include/nlohmann/*.hpp third_party/json/nlohmann/
cp -r /usr/include/nlohmann/detail /usr/include/nlohmann/thirdparty third_party/json/nlohmann/ 2>/dev/null || true
du -sh third_party
