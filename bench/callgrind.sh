#!/usr/bin/env bash
# bench/callgrind.sh: instructions per call, counted by callgrind, which do
# not move with machine noise the way timings do.
#
# Usage: bench/callgrind.sh [BUILD_DIR] [--quick] [--annotate] [--keep] [--creation-order MODE]
#   BUILD_DIR   an existing build (default ./build); this script builds nothing
#   --quick     only the buffer loop and the registry pair (about 40 s)
#   --annotate  also print, for the buffer loop with call sites off and
#               on, the instructions the layer adds per iteration, function
#               by function (self cost, layer run minus loader run)
#   --keep      keep the callgrind.out files (their directory is printed)
#   --creation-order auto|counter|clock
#               LIVETRACK_CREATION_ORDER for every run (default auto: under
#               valgrind, as on the host, clock where the TSC is invariant)
#
# Each figure is instructions executed (Ir) per loop iteration, inside the
# loop's function only (callgrind --toggle-collect), from two runs of N and
# 3N iterations: the difference divided by 2N, so one-time costs (first
# slab, first stack interned, pocl's lazy set-up) cancel out.
#   registry pair   livetrack_create + livetrack_release, liblivetrack alone
#   buffer          clCreateBuffer + clReleaseMemObject through the loader
#   user event      clCreateUserEvent, clRetainEvent, clReleaseEvent x2
# "direct" calls pocl through its dispatch table (no loader, no layer),
# "loader" goes through the ICD loader without a layer, then the layer with
# call sites off (LIVETRACK_STACK_DEPTH=0) and with 16 frames (default).
# The layer's own cost is "layer - loader".
set -euo pipefail
shopt -s inherit_errexit # a failure inside $(...) stops the script too
export LC_ALL=C

build=./build
quick=0
annotate=0
keep=0
order=auto
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --annotate) annotate=1; shift ;;
    --keep) keep=1; shift ;;
    --creation-order)
      case "${2:-}" in auto|counter|clock) order=$2; shift 2 ;;
        *) echo "bench/callgrind.sh: --creation-order wants auto, counter or clock" >&2; exit 2 ;; esac ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    -*) echo "bench/callgrind.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done

command -v valgrind >/dev/null || { echo "bench/callgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
[ -d "$build" ] || { echo "bench/callgrind.sh: no build directory $build" >&2; exit 1; }
build=$(cd "$build" && pwd)
bench_opencl="$build/bench/bench_opencl"
bench_registry="$build/bench/bench_registry"
layer="$build/layer/opencl/liblivetrack_cl.so"
for f in "$bench_opencl" "$bench_registry" "$layer"; do
  [ -e "$f" ] || { echo "bench/callgrind.sh: $f is missing; build first (cmake --build $build)" >&2; exit 1; }
done

out=$(mktemp -d "${TMPDIR:-/tmp}/livetrack-callgrind.XXXXXX")
if [ "$keep" -eq 0 ] && [ "$annotate" -eq 0 ]; then trap 'rm -rf "$out"' EXIT; fi
source "$(dirname "$0")/clean_environment.sh"
livetrack_clean_environment
export LIVETRACK_CREATION_ORDER=$order

# Ir collected inside function $1 by a command; $2 = file name, then
# environment assignments, --, the command. (The environment is set
# around valgrind, not with env(1) under it: valgrind would count env.)
collect() {
  local fn=$1 name=$2; shift 2
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  env "${vars[@]}" valgrind --tool=callgrind --callgrind-out-file="$out/$name.out" --toggle-collect="$fn" \
    "$@" >"$out/$name.log" 2>&1 || { echo "bench/callgrind.sh: failed: $* (see $out/$name.log)" >&2; tail -5 "$out/$name.log" >&2; exit 1; }
  awk '/^summary:/ { print $2; found = 1 } END { if (!found) exit 1 }' "$out/$name.out" ||
    { echo "bench/callgrind.sh: no summary in $out/$name.out" >&2; exit 1; }
}

# Iterations bench_opencl runs for a loop at a target sample size: the
# sample plus a tenth as warm-up plus one. Prints "scale iterations".
opencl_scale() { # $1 loop, $2 target iterations per sample
  local per_sample
  per_sample=$("$bench_opencl" --help | awk -v l="$1" '$1 == l { gsub(/[(]/, "", $(NF-1)); print $(NF-1) }')
  [ -n "$per_sample" ] || { echo "bench/callgrind.sh: no loop $1 in bench_opencl" >&2; exit 1; }
  awk -v i="$per_sample" -v t="$2" 'BEGIN { s = sprintf("%.6f", t / i); n = int(i * s); print s, n + int(n / 10) + 1 }'
}

# Ir per iteration of an OpenCL loop: $1 loop, $2 its function, $3 path,
# $4 label, then environment assignments.
opencl_ir() {
  local loop=$1 fn=$2 path=$3 label=$4; shift 4
  local scale1 scale2 n1 n2 small large
  read -r scale1 n1 <<<"$(opencl_scale "$loop" 1000)"
  read -r scale2 n2 <<<"$(opencl_scale "$loop" 3000)"
  small=$(collect "$fn" "$loop.$label.1" "$@" -- "$bench_opencl" --loop "$loop" --path "$path" --samples 1 --scale "$scale1")
  large=$(collect "$fn" "$loop.$label.3" "$@" -- "$bench_opencl" --loop "$loop" --path "$path" --samples 1 --scale "$scale2")
  awk -v a="$small" -v b="$large" -v n1="$n1" -v n2="$n2" 'BEGIN { printf "%.0f", (b - a) / (n2 - n1) }'
}

registry_ir() { # $1 label, then environment assignments
  local label=$1; shift
  local small large
  small=$(collect callgrind_pairs "registry.$label.1" "$@" -- "$bench_registry" --only pairs --cycles 2000)
  large=$(collect callgrind_pairs "registry.$label.3" "$@" -- "$bench_registry" --only pairs --cycles 6000)
  awk -v a="$small" -v b="$large" 'BEGIN { printf "%.0f", (b - a) / 4000 }'
}

declare -A ir
start=$SECONDS
ir[registry,off]=$(registry_ir off LIVETRACK_STACK_DEPTH=0)
ir[registry,on]=$(registry_ir on LIVETRACK_STACK_DEPTH=16)
loops=(buffer_create_release:loop_buffer)
[ "$quick" -eq 1 ] || loops+=(user_event_retain_release:loop_user_event)
for entry in "${loops[@]}"; do
  loop=${entry%%:*} fn=${entry#*:}
  ir[$loop,direct]=$(opencl_ir "$loop" "$fn" direct direct)
  ir[$loop,loader]=$(opencl_ir "$loop" "$fn" loader loader)
  ir[$loop,off]=$(opencl_ir "$loop" "$fn" loader off OPENCL_LAYERS="$layer" LIVETRACK_EXIT_REPORT=off LIVETRACK_STACK_DEPTH=0)
  ir[$loop,on]=$(opencl_ir "$loop" "$fn" loader on OPENCL_LAYERS="$layer" LIVETRACK_EXIT_REPORT=off LIVETRACK_STACK_DEPTH=16)
done

echo "# callgrind: instructions (Ir) per iteration, $((SECONDS - start)) s, valgrind $(valgrind --version), creation order $order"
printf '%-28s %10s %10s %12s %12s %12s %12s\n' "loop" "direct" "loader" "layer_off" "layer_16" "added_off" "added_16"
printf '%-28s %10s %10s %12s %12s %12s %12s\n' "registry_create_release" "-" "-" "${ir[registry,off]}" "${ir[registry,on]}" "${ir[registry,off]}" "${ir[registry,on]}"
for entry in "${loops[@]}"; do
  loop=${entry%%:*}
  printf '%-28s %10s %10s %12s %12s %12s %12s\n' "$loop" "${ir[$loop,direct]}" "${ir[$loop,loader]}" "${ir[$loop,off]}" "${ir[$loop,on]}" \
    "$((ir[$loop,off] - ir[$loop,loader]))" "$((ir[$loop,on] - ir[$loop,loader]))"
done
echo "# added_*: what the layer adds per iteration (layer - loader); registry row: the registry alone"

# Self cost of each function per iteration (callgrind_annotate, no
# inlined-source detail), from the 3N run of a side.
self_costs() {
  callgrind_annotate --auto=no --threshold=100 "$1" 2>/dev/null |
    awk '/^ *[0-9,]+ +\([ 0-9.]+%\) +/ && !/PROGRAM TOTALS/ {
           v = $1; gsub(",", "", v); sub(/^ *[0-9,]+ +\([ 0-9.]+%\) +/, "")
           if ($0 !~ /^\?\?\?/) sub(/ \[.*\]$/, "") # keep the module of unnamed code (libunwind)
           cost[$0] += v }
         END { for (f in cost) print cost[f] "\t" f }'
}

if [ "$annotate" -eq 1 ]; then
  # What the layer adds, function by function: self Ir of the layer run
  # minus the loader-only run, per iteration. Costs inside the loader and
  # pocl cancel out; what remains is livetrack's (and libunwind's).
  read -r _ n3 <<<"$(opencl_scale buffer_create_release 3000)"
  self_costs "$out/buffer_create_release.loader.3.out" >"$out/self.loader.tsv"
  for label in off on; do
    echo
    echo "# buffer loop, call sites $([ "$label" = on ] && echo "16 frames" || echo off): Ir per iteration added by the layer, by function (self cost)"
    self_costs "$out/buffer_create_release.$label.3.out" >"$out/self.$label.tsv"
    awk -F'\t' -v n="$n3" 'FNR == NR { base[$2] = $1; next } { cost[$2] = $1 }
         END { for (f in cost) { d = (cost[f] - base[f]) / n; if (d >= 4) printf "%8.0f  %s\n", d, f } }' \
      "$out/self.loader.tsv" "$out/self.$label.tsv" | sort -rn | head -n 25
  done
fi
if [ "$keep" -eq 1 ] || [ "$annotate" -eq 1 ]; then echo "# callgrind files in $out"; fi
