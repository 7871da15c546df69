#!/usr/bin/env python3
"""bench/run's own rules, checked on a fake build directory whose benchmark
programs are small scripts (ctest name bench_run_script): the real
benchmarks take minutes and their figures vary, but what bench/run makes
of their output must not.

- it passes no LIVETRACK_* setting, OpenCL layer or Level Zero loader layer
  of the caller's environment to a benchmark;
- the stress section, and each OpenCL side, stop when the layer they ran
  with did not load (the loader skips a layer it cannot load, and "the
  layer's share" would compare two runs without it);
- each OpenCL figure is the median of its side's samples, ratio and norm
  taken against the side without a layer;
- a target whose section ran but printed no figure reads MISSING and makes
  --check fail;
- a loop one OpenCL side never printed is left out, not computed as 0
  (which passes every limit);
- and, with --bench-opencl, of the real program: the live100k loops have
  10^5 buffers live at the scale bench/run passes, not a scaled share.

usage: bench_run_test.py --source DIR --work DIR [--bench-opencl PROGRAM]
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
    # OpenCL: each side says which layer it has (but see broken_side) and
    # prints its own figures, so that a ratio or norm computed from the
    # wrong sides, or upside down, shows. Per loop three samples, the first
    # an outlier only a median ignores: ns through the loader, ns direct.
    #   off 100/100, floor 110/100, cs0 150/120, cs16 190/100:
    #   ratio cs0 1.50, cs16 1.90; norm cs0 1.25, cs16 1.90, floor 1.10.
    # The 16-frame side never prints the workload loop. A side named in
    # bench/broken_side says the wrong layer (a file: bench/run clears
    # the environment).
    script(os.path.join(root, "bench/bench_opencl"),
           'case "${OPENCL_LAYERS:-}" in\n'
           '  "") side=off layer=no wrong=yes; figures="100 100" ;;\n'
           '  *passthrough*) side=floor layer=passthrough wrong=no; figures="110 100" ;;\n'
           '  *) side=cs${LIVETRACK_STACK_DEPTH:-16} layer=yes wrong=no\n'
           '     figures=$([ "$side" = cs0 ] && echo "150 120" || echo "190 100") ;;\n'
           'esac\n'
           'broken=$(cat "$(dirname "$0")/broken_side" 2>/dev/null || true)\n'
           '[ "$broken" = "$side" ] && layer=$wrong\n'
           'echo "# layer $layer"\n'
           'loops="buffer_create_release user_event_retain_release marker_event_release"\n'
           '[ "$side" = cs16 ] || loops="$loops workload_kernels"\n'
           'for loop in $loops; do\n'
           '  echo "$loop 1000 9999 1"; echo "$loop 1000 $figures"; echo "$loop 1000 $figures"\n'
           'done\n')
    return root


def run_bench(source, build, *options, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    # bench/run's raw directories go beside the fake build, not into /tmp.
    env["TMPDIR"] = os.path.join(os.path.dirname(build), "raw")
    return subprocess.run([os.path.join(source, "bench/run"), build, "--quick", *options], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)


def target_line(output, name):
    return next((line for line in output.splitlines() if line.startswith(name)), "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--bench-opencl", help="the built bench_opencl (runs on the installed OpenCL driver)")
    args = parser.parse_args()
    build = fake_build(os.path.join(args.work, "fake_build"))
    shutil.rmtree(os.path.join(args.work, "raw"), ignore_errors=True)
    os.makedirs(os.path.join(args.work, "raw"))

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

    # 3. Each side's figures where they belong; a loop the 16-frame side
    #    never printed.
    result = run_bench(args.source, build, "--only", "opencl", "--rounds", "1", "--check")
    row = target_line(result.stdout, "buffer_create_release").split()
    # loop, off/cs0/cs16 ns, cs0 ratio, cs0 norm, cs16 ratio, cs16 norm, floor norm, cs0 / floor
    check(row[1:] == ["100.0", "150.0", "190.0", "1.50", "1.25", "1.90", "1.90", "1.10", "1.14"],
          "the buffer loop's medians, ratios and norms read: %r" % row)
    workload = target_line(result.stdout, "16-frame call sites, real workload")
    check(workload.rstrip().endswith("MISSING"), "a workload loop without 16-frame samples reads: %r" % workload)
    check("loop workload_kernels has no samples from every side" in result.stderr,
          "no word on the loop left out:\n" + result.stderr)
    buffer = target_line(result.stdout, "16-frame call sites, buffer")
    check(buffer.split()[-4:] == ["1.900", "<=", "2.0", "PASS"], "the 16-frame buffer target reads: %r" % buffer)
    tracking = target_line(result.stdout, "tracking only (cs0), buffer")
    check(tracking.split()[-4:] == ["1.250", "<=", "1.10", "MISS"],
          "the tracking-only buffer target reads: %r" % tracking)
    check(result.returncode == 4, "--check with the workload missing exited %d, not 4" % result.returncode)

    # 4. An OpenCL side whose layer is not the one it was run with: the
    #    loader skips a layer it cannot load, and the norms would compare
    #    runs without it.
    broken_path = os.path.join(build, "bench/broken_side")
    for side, message in [("cs0", "the layer did not load"), ("cs16", "the layer did not load"),
                          ("floor", "the pass-through layer did not load"),
                          ("off", "a layer is loaded in the run without it")]:
        with open(broken_path, "w") as f:
            f.write(side + "\n")
        result = run_bench(args.source, build, "--only", "opencl", "--rounds", "1")
        check(result.returncode == 1 and message in result.stderr,
              "an OpenCL %s side with the wrong layer was accepted (exit %d)\n%s%s"
              % (side, result.returncode, result.stdout[-600:], result.stderr))
    os.remove(broken_path)

    # 5. The real bench_opencl at --quick's scale: the live-set loops keep
    #    their 10^5 buffers (their names, and docs/PERFORMANCE.md, say
    #    100k), the buffer loop is scaled. One direct sample each.
    if args.bench_opencl:
        scale = "0.2"
        result = subprocess.run([args.bench_opencl, "--scale", scale, "--samples", "1", "--path", "direct",
                                 "--loop", "buffer_create_release", "--loop", "live100k_release_fifo",
                                 "--loop", "live100k_release_random"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=100)
        counts = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()
                  if line and not line.startswith("#")}
        expected = {"buffer_create_release": "20000", "live100k_release_fifo": "100000",
                    "live100k_release_random": "100000"}
        check(result.returncode == 0 and counts == expected,
              "bench_opencl --scale %s ran (loop: iterations) %r, not %r (exit %d)\n%s"
              % (scale, counts, expected, result.returncode, result.stderr[-600:]))

    print("bench_run_script: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
