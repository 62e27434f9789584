#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-memcpy-bench.sh [--target TRIPLE] [--size BYTES] [--repeat N]
#
# Compiles tools/bench/memcpy-bench.c once and runs it with our plugin and
# with the stock LLVM 16 plugin in this run: omp_target_memcpy H2D and D2H of
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

triple=x86_64-pc-linux-gnu
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

out=$build/tools-bench
exe=$out/memcpy-bench-$PLUGIN
echo "== compiling memcpy-bench for $triple"
bench_compile "$bench_root/tools/bench/memcpy-bench.c" "$exe"

echo "== memcpy-bench ($triple, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
bench_run ours "$out/memcpy-bench.ours.log" "$exe" "${args[@]}" ||
  bench_die "memcpy-bench failed with our plugin"
bench_run stock "$out/memcpy-bench.stock.log" "$exe" "${args[@]}" ||
  bench_die "memcpy-bench failed with the stock plugin"

o=$out/memcpy-bench.ours.log
s=$out/memcpy-bench.stock.log
mib=$(bench_result "$o" size_mib)
row() {
  local label=$1 key=$2 a b
  a=$(bench_result "$o" "$key")
  b=$(bench_result "$s" "$key")
  printf '%-40s %10.3f %10.3f %11s\n' "$label" "$a" "$b" "$(bench_ratio "$a" "$b")"
}
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
echo "note: the stock LLVM 16 plugins' lock returns the same pointer and pins"
echo "      nothing (measured-baselines.md): its 'locked' rows are pageable copies."
