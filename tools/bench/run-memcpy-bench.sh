#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-memcpy-bench.sh [--target TRIPLE] [--size BYTES] [--repeat N]
#
# Compiles tools/bench/memcpy-bench.c once and runs it with our plugin and
# with the stock plugin of the same LLVM in this run: omp_target_memcpy H2D and D2H of
# a large buffer (default 2 GiB) from malloc memory and from memory locked
# with llvm_omp_target_lock_mem, 64-byte omp_target_memcpy latency and empty
# `#pragma omp target` latency; then prints both and the ratios.
#   --target x86_64-pc-linux-gnu (default) | nvptx64-nvidia-cuda |
#            amdgcn-amd-amdhsa
# On the GPU machine:
#   CLANG=/opt/llvm16/bin/clang LLVM_LIB=/opt/llvm16/lib \
#     tools/bench/run-memcpy-bench.sh --target nvptx64-nvidia-cuda
# Figures are reported, never asserted (exit 0 unless something broke). See
# tools/bench/common.sh for OFFLOADIO_BUILD_DIR, CLANG, LLVM_LIB, STOCK_LIB,
# CUDA_PATH and OFFLOAD_ARCH.
set -euo pipefail
# shellcheck source=tools/bench/common.sh
source "$(dirname "$0")/common.sh"

triple=$(offload_host_triple)
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
  --target) [[ $# -ge 2 ]] || bench_die "--target needs a triple"; triple=$2; shift 2 ;;
  --target=*) triple=${1#--target=}; shift ;;
  --size | --repeat)
    [[ $# -ge 2 ]] || bench_die "$1 needs a value"
    args+=("$1" "$2"); shift 2 ;;
  --size=* | --repeat=*) args+=("${1%%=*}" "${1#*=}"); shift ;;
  -h | --help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) bench_die "unknown argument '$1' (see --help)" ;;
  esac
done
bench_set_target "$triple"
bench_check_setup

bench_side_by_side memcpy-bench "$triple" "${args[@]}"
mib=$(bench_result "$OURS_LOG" size_mib)
row() { bench_row 40 "$@"; }
echo
echo "== summary ($triple, $mib MiB buffers; GB/s: higher is better, us/ms: lower is better)"
printf '%-40s %10s %10s %11s\n' "" ours stock ours/stock
row "H2D from malloc memory (GB/s)" h2d_gbps
row "D2H to malloc memory (GB/s)" d2h_gbps
row "H2D from locked memory (GB/s)" locked_h2d_gbps
row "D2H to locked memory (GB/s)" locked_d2h_gbps
row "llvm_omp_target_lock_mem (ms)" lock_ms
row "llvm_omp_target_unlock_mem (ms)" unlock_ms
row "64-byte omp_target_memcpy H2D (us)" memcpy64_h2d_us
row "64-byte omp_target_memcpy D2H (us)" memcpy64_d2h_us
row "empty target region (us)" target_empty_us
case $BENCH_LLVM_VERSION in
16)
  echo "note: the stock LLVM 16 plugins' lock returns the same pointer and pins"
  echo "      nothing (measured-baselines.md): its 'locked' rows are pageable copies." ;;
18)
  echo "note: libomptarget 18.1.8's llvm_omp_target_lock_mem returns NULL without"
  echo "      calling any plugin: no 'locked' rows with either plugin." ;;
esac
