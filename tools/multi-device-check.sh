#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The multi-device stage of tools/test.sh: the GPU round's two-GPU programs
# on the host plugin's devices, so that their code paths (several devices
# at once, one process per device) run in every CI run:
#   - tools/gpu/multi-device-bench.c on 2 devices: one region locked once
#     for both, pageable copies, page-cached file reads, one batch across
#     devices, a peer copy; it checks the data on every device and that our
#     plugin is loaded (its figures mean nothing here);
#   - tools/gpu/mproc.sh with one process per device (DEVICE=rank);
#   - offloadio-checkpoint: a checkpoint saved from device 0, loaded with
#     one call split over devices 0 and 1 (load --devices 0,1 --verify).
#   OFFLOADIO_BUILD_DIR=build bash tools/multi-device-check.sh [MIB]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
mib=${1:-64}
clang=${CLANG:-clang-16}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$build/lib:/usr/lib/llvm-16/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

compile() { # compile SRC OUT
  "$clang" -O2 -Wall -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu \
    -I"$root/include" -I"$build/include" "$1" -o "$2" -L"$build/lib" -lompx_io
}
compile "$root/tools/gpu/multi-device-bench.c" "$work/multi-device-bench"
compile "$root/tools/gpu/mproc-shards.c" "$work/mproc-shards"

echo "== multi-device-bench, 2 devices, $mib MiB each"
timeout 300 "$work/multi-device-bench" "$work/multi.dat" "$mib" 2
rm -f "$work/multi.dat"
echo "== one process per device (mproc.sh, DEVICE=rank, 2 processes)"
timeout 300 bash "$root/tools/gpu/mproc.sh" "$work/mproc-shards" "$work/mproc" \
  "$mib" rank 2
echo "== a checkpoint split over 2 devices in one call (offloadio-checkpoint load --devices 0,1)"
timeout 300 "$build/bin/offloadio-checkpoint" save "$work/ckpt.safetensors" \
  --tensors 64 --max-bytes "$(( mib * 1024 / 32 ))K" --device 0
timeout 300 "$build/bin/offloadio-checkpoint" load "$work/ckpt.safetensors" \
  --devices 0,1 --verify
