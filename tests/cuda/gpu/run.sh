#!/usr/bin/env bash
# tests/cuda/gpu/run.sh: build the GPU test program with nvcc and run it
# under liblivetrack_cuda.so in both attach modes, printing the reports.
# For a machine with an NVIDIA GPU and driver; needs an existing livetrack
# build (configured where the CUDA toolkit is, so liblivetrack_cuda.so
# exists).
#
# Usage: tests/cuda/gpu/run.sh [BUILD_DIR]     (default: ./build)
#   NVCC=/path/to/nvcc overrides the compiler (default: nvcc on PATH, then
#   /usr/local/cuda/bin/nvcc).
#
# Exits 77 with a reason when there is no nvcc or no usable GPU, 0 when
# both modes report exactly the planted leaks, else 1.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-./build}
[ -d "$build" ] || { echo "run.sh: no build directory $build" >&2; exit 1; }
build=$(cd "$build" && pwd)
library="$build/layer/cuda/liblivetrack_cuda.so"
[ -f "$library" ] || { echo "run.sh: $library is missing (configure with the CUDA toolkit, build liblivetrack_cuda)" >&2; exit 1; }

nvcc=${NVCC:-$(command -v nvcc || true)}
[ -n "$nvcc" ] || nvcc=/usr/local/cuda/bin/nvcc
if [ ! -x "$nvcc" ]; then
  echo "SKIP: no nvcc (set NVCC=/path/to/nvcc)"
  exit 77
fi

out="$build/tests/cuda/gpu"
mkdir -p "$out"
# -g -O0: each call on its own line in the report; -cudart shared: the
# runtime's frames are in libcudart, which livetrack drops from call sites;
# -cudart static (nvcc's default): the runtime is inside the program.
for runtime in shared static; do
  name=cuda_gpu_leaky; [ "$runtime" = static ] && name=cuda_gpu_leaky_static
  echo "run.sh: $nvcc -g -O0 -cudart $runtime -o $out/$name cuda_gpu_leaky.cu"
  "$nvcc" -g -O0 -cudart "$runtime" -o "$out/$name" "$here/cuda_gpu_leaky.cu"
done

checker="$out/cuda_gpu_check"
if [ -x "$checker" ]; then
  # Runs both modes, prints the reports, and checks them.
  exec "$checker" "$out/cuda_gpu_leaky" "$library" "$out/cuda_gpu_leaky_static"
fi

# No checker built: run both modes and print the reports only.
set +e
"$out/cuda_gpu_leaky" >/dev/null 2>&1
status=$?
set -e
if [ "$status" -eq 77 ]; then
  "$out/cuda_gpu_leaky" || true
  exit 77
fi
for program in cuda_gpu_leaky cuda_gpu_leaky_static; do
  for mode in CUPTI interposition; do
    echo "==== $program, $mode mode"
    if [ "$mode" = CUPTI ]; then
      env -u LD_PRELOAD CUDA_INJECTION64_PATH="$library" LIVETRACK_EXIT_REPORT=always "$out/$program" || true
    else
      env -u CUDA_INJECTION64_PATH LD_PRELOAD="$library" LIVETRACK_EXIT_REPORT=always "$out/$program" || true
    fi
  done
done
