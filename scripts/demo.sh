#!/usr/bin/env bash
# The main job: set up, build, and run the leaky sample under the layer.
# The sample prints the live objects through the extension; at exit the
# layer prints its leak report (the 20 events the sample never released).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "\$ OPENCL_LAYERS=$PWD/build/layer/opencl/liblivetrack_cl.so build/samples/leaky_events" >&2
OPENCL_LAYERS="$PWD/build/layer/opencl/liblivetrack_cl.so" build/samples/leaky_events
