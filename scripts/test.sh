#!/usr/bin/env bash
# The whole test suite: set up, build with -Werror, run ctest; then the same
# suite built with AddressSanitizer + UndefinedBehaviorSanitizer.
# Every OpenCL test runs on pocl through the real ICD loader.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
jobs=$(nproc)

echo "== livetrack: build and test (-Wall -Wextra -Werror) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIVETRACK_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== livetrack: build and test under ASan+UBSan =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLIVETRACK_WERROR=ON -DLIVETRACK_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
ctest --test-dir build-asan --output-on-failure -j"$jobs"
