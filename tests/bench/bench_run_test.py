#!/usr/bin/env python3
"""bench/run's own rules, checked on a fake build directory whose benchmark
programs are small scripts (ctest name bench_run_script): the real
benchmarks take minutes and their figures vary, but what bench/run makes
of their output must not.

- it passes no LIVETRACK_* setting, OpenCL layer or Level Zero loader layer
  of the caller's environment to a benchmark;
- the stress section stops when the layer did not load (the loader skips a
  layer it cannot load, and "the layer's share" would compare two runs
  without it);
- a target whose section ran but printed no figure reads MISSING and makes
  --check fail;
- a loop one OpenCL side never printed is left out, not computed as 0
  (which passes every limit).

usage: bench_run_test.py --source DIR --work DIR
"""
import argparse
import os
import shutil
import stat
import subprocess
import sys

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, flush=True)
    return condition


def script(path, body):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def fake_build(root):
    """A build directory bench/run accepts, its programs printing canned lines."""
    shutil.rmtree(root, ignore_errors=True)
    layer = os.path.join(root, "layer/opencl/liblivetrack_cl.so")
    os.makedirs(os.path.dirname(layer))
    open(layer, "w").close()
    open(os.path.join(os.makedirs(os.path.join(root, "bench")) or root, "bench/liblivetrack_bench_passthrough.so"),
         "w").close()
    # The registry: records what reached it, prints only a comment.
    script(os.path.join(root, "bench/bench_registry"),
           'env | grep -E "^(LIVETRACK_|OPENCL_LAYERS|ZE_ENABLE_)" | grep -vE "^LIVETRACK_(EXIT_REPORT|STACK_DEPTH)=" '
           '>> "$(dirname "$0")/seen_environment"\n'
           'echo "# bench_registry: a fake that measures nothing"\n')
    # Stress: the layer never loads, whatever OPENCL_LAYERS says.
    script(os.path.join(root, "bench/bench_stress"),
           'echo "# bench_stress layer no stack_depth 0 rate 0 size 0 free_ratio 1 threads 1 seconds 1"\n'
           'echo "achieved_rate 1000 creates/s"\necho "rss_growth_per_1m 0 KiB"\n')
    # OpenCL: each side says which layer it has; the 16-frame side never
    # prints the workload loop.
    script(os.path.join(root, "bench/bench_opencl"),
           'case "${OPENCL_LAYERS:-}" in\n'
           '  "") echo "# layer no" ;;\n'
           '  *passthrough*) echo "# layer passthrough" ;;\n'
           '  *) echo "# layer yes" ;;\n'
           'esac\n'
           'for loop in buffer_create_release user_event_retain_release marker_event_release; do\n'
           '  echo "$loop 1000 100 100"\n'
           'done\n'
           '[ "${LIVETRACK_STACK_DEPTH:-}" = 16 ] || echo "workload_kernels 1000 100 100"\n')
    return root


def run_bench(source, build, *options, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([os.path.join(source, "bench/run"), build, "--quick", *options], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)


def target_line(output, name):
    return next((line for line in output.splitlines() if line.startswith(name)), "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    build = fake_build(os.path.join(args.work, "fake_build"))

    # 1. The caller's settings stay out; the missing registry figures are
    #    MISSING, and --check fails on them.
    leaked = {"LIVETRACK_STACK_MEMO": "0", "LIVETRACK_FAULT_ALLOC_AFTER": "1000", "LIVETRACK_TRANSPARENT": "1",
              "LIVETRACK_MAX_DIAGNOSTICS": "0", "OPENCL_LAYERS": "/nowhere/layer.so",
              "ZE_ENABLE_TRACING_LAYER": "1", "LIVETRACK_STACK_DEPTH": "3"}
    result = run_bench(args.source, build, "--only", "registry", "--check", env_extra=leaked)
    seen_path = os.path.join(build, "bench/seen_environment")
    seen = open(seen_path).read() if os.path.exists(seen_path) else "(the fake registry never ran)\n"
    check(seen == "", "bench_registry got the caller's settings:\n" + seen)
    check(result.returncode == 4, "--check with registry figures missing exited %d, not 4\n%s%s"
          % (result.returncode, result.stdout, result.stderr))
    ops = target_line(result.stdout, "registry ops/s, 1 thread")
    check(ops.rstrip().endswith("MISSING"), "the unmeasured registry target reads: %r" % ops)
    exit_report = target_line(result.stdout, "exit report")
    check(exit_report.rstrip().endswith("-"), "a section that did not run is not '-': %r" % exit_report)

    # 2. The stress section with a layer that did not load.
    result = run_bench(args.source, build, "--only", "stress")
    check(result.returncode != 0 and "the layer did not load in the stress run" in result.stderr,
          "a stress run without the layer was accepted (exit %d)\n%s%s"
          % (result.returncode, result.stdout[-600:], result.stderr))

    # 3. A loop the 16-frame side never printed.
    result = run_bench(args.source, build, "--only", "opencl", "--rounds", "1", "--check")
    workload = target_line(result.stdout, "16-frame call sites, real workload")
    check(workload.rstrip().endswith("MISSING"), "a workload loop without 16-frame samples reads: %r" % workload)
    check("loop workload_kernels has no samples from every side" in result.stderr,
          "no word on the loop left out:\n" + result.stderr)
    buffer = target_line(result.stdout, "16-frame call sites, buffer")
    check(buffer.rstrip().endswith("PASS"), "a loop every side printed is not judged: %r" % buffer)
    check(result.returncode == 4, "--check with the workload missing exited %d, not 4" % result.returncode)

    print("bench_run_script: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
