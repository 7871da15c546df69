#!/usr/bin/env bash
# Installs what livetrack needs to build and test on Debian (bookworm):
# the compiler and CMake, the OpenCL ICD loader (ocl-icd, with layer
# support), the OpenCL headers, pocl (a real OpenCL device on the CPU),
# libunwind (call-site capture), elfutils' libdw (symbols), the Level Zero
# loader, clang (libFuzzer, TSan), Python's jsonschema (report schema
# test), Chromium (renders the HTML report in a test) and zlib (gzipped
# pprof profiles).
# Does nothing when everything is already there.
set -euo pipefail

packages=(build-essential cmake pkg-config ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers pocl-opencl-icd clinfo
          libunwind-dev libdw-dev libze1 libze-dev clang libclang-rt-14-dev python3 python3-jsonschema
          chromium zlib1g-dev)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "livetrack: installing ${missing[*]}" >&2
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "livetrack: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1; }
    as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
