#!/usr/bin/env bash
# The whole test suite. Every OpenCL test runs on pocl through the real ICD loader.
#
#   scripts/test.sh          set up; build with -Werror and run ctest; the same suite under
#                            ASan+UBSan; the threaded tests under TSan; each fuzz target for a
#                            bounded time (when clang with libFuzzer is there)
#   scripts/test.sh --long   only the tests labelled `long` (the 10^8-event soak, the out-of-memory
#                            sweep over every allocation), on the release build
#
# Environment: LIVETRACK_FUZZ_SECONDS (default 30) bounds each fuzz target's run; 0 skips fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
jobs=$(nproc)
mode=${1:-all}
fuzz_seconds=${LIVETRACK_FUZZ_SECONDS:-30}

build_release() {
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIVETRACK_WERROR=ON >/dev/null
    cmake --build build -j"$jobs"
}

if [ "$mode" = --long ]; then
    echo "== livetrack: long tests (label long) =="
    build_release
    ctest --test-dir build --output-on-failure -C long -L long
    exit 0
fi
if [ "$mode" != all ]; then
    echo "usage: scripts/test.sh [--long]" >&2
    exit 2
fi

echo "== livetrack: build and test (-Wall -Wextra -Werror) =="
build_release
ctest --test-dir build --output-on-failure -j"$jobs" -LE long

echo "== livetrack: build and test under ASan+UBSan =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLIVETRACK_WERROR=ON -DLIVETRACK_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE long

# The tests that run threads inside livetrack, built with ThreadSanitizer.
# pocl and the loader are not instrumented; none of their frames needed
# suppressing so far (tests/reliability/tsan.supp would hold them, never a
# livetrack frame). Call stacks are off: libunwind's per-thread cache is
# freed at thread exit after TSan has let go of the thread, which crashes
# TSan's mutex interceptor. The crash tests stay out: TSan takes SIGSEGV
# itself, and with handle_segv=0 it stops the child at the report, which
# the fatal-signal handler writes with stdio, best effort by design (see
# layer/core/lifecycle.c), as a "signal-unsafe call inside of a signal".
echo "== livetrack: threaded tests under TSan =="
tsan_targets=(test_registry_threads test_registry_interleave test_creation_order test_report_peak_threads cl_threads livetrack_cl
    test_soak test_fork test_exit fuzz_registry)
tsan_tests='core_(registry|report_peak)_threads(_counter|_clock)?|core_registry_interleave_(counter|clock)'
tsan_tests+='|core_creation_order_(counter|clock)|opencl\.cl_threads'
tsan_tests+='|reliability\.(soak|fork|exit|fuzz_registry(_counter|_clock)?)'
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIVETRACK_WERROR=ON \
    -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=thread" >/dev/null
# The CUDA front end's threads (allocations, primary contexts) on the fake
# driver, where the CUDA headers were found.
# (The list is read whole first: grep -q would close the pipe early, and
# with pipefail make's broken pipe would read as "no such target".)
tsan_target_list=$(cmake --build build-tsan --target help)
if grep -q ' cuda_interpose$' <<<"$tsan_target_list"; then
    tsan_targets+=(livetrack_cuda cuda_interpose)
    tsan_tests+='|cuda\.cuda_interpose'
fi
# Creation numbers past the clock's limit, where x86-64 builds them.
if grep -q ' test_tick_limit_crossing$' <<<"$tsan_target_list"; then
    tsan_targets+=(test_tick_limit_crossing test_creation_order_late test_registry_threads_late)
    tsan_tests+='|core_tick_limit_crossing|core_(creation_order|registry_threads)_late'
fi
cmake --build build-tsan -j"$jobs" --target "${tsan_targets[@]}"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/reliability/tsan.supp" \
    LIVETRACK_STACK_DEPTH=0 ctest --test-dir build-tsan --output-on-failure -R "^($tsan_tests)\$"

# libFuzzer (clang): each target from its seed corpus for a bounded time.
# New inputs go to build-fuzz/corpus, never into the repository.
echo "== livetrack: fuzzing (${fuzz_seconds} s per target) =="
fuzz_targets=(fuzz_registry fuzz_config)
if [ "$fuzz_seconds" = 0 ]; then
    echo "SKIPPED: LIVETRACK_FUZZ_SECONDS=0"
elif ! command -v clang >/dev/null ||
    ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; (void)n; return 0; }' |
    clang -x c -fsanitize=fuzzer - -o /tmp/livetrack-fuzz-probe.$$ 2>/dev/null; then
    echo "SKIPPED: no clang with libFuzzer (install clang and libclang-rt-14-dev)"
else
    rm -f /tmp/livetrack-fuzz-probe.$$
    CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIVETRACK_WERROR=ON -DLIVETRACK_FUZZ=ON \
        >/dev/null
    cmake --build build-fuzz -j"$jobs" --target "${fuzz_targets[@]}"
    for target in "${fuzz_targets[@]}"; do
        corpus=build-fuzz/corpus/$target
        log=build-fuzz/$target.log
        mkdir -p "$corpus"
        if ! build-fuzz/tests/reliability/"$target" "$corpus" tests/reliability/fuzz/corpus/"$target" \
            -max_total_time="$fuzz_seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
            -artifact_prefix=build-fuzz/"$target"- >"$log" 2>&1; then
            grep -v '^livetrack: ' "$log" | tail -60
            echo "FAILED: $target (the input is in build-fuzz/$target-*)"
            exit 1
        fi
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        added=$(sed -n 's/^stat::new_units_added: *//p' "$log")
        echo "$target: $runs inputs in ${fuzz_seconds} s, $added new, no failure"
    done
fi
echo "== livetrack: all tests passed =="
