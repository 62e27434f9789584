#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-kernel-bench.sh [--target TRIPLE] [--size N] [--repeat R] [--dot-sizes N,N]
#
# Compiles tools/bench/kernel-bench.c once and runs it with our plugin and
# with the stock plugin of the same LLVM in this run: a generic-mode `teams
# distribute` with a nested `parallel for` (and its generic-SPMD twin),
# `teams distribute` over 1024 and 10^6 iterations, a dot-product reduction
# and the STREAM kernels; then prints each kernel's median time, GB/s and
# launch geometry for both, and the time ratio ours/stock.
#   --target x86_64-pc-linux-gnu (default) | nvptx64-nvidia-cuda |
#            amdgcn-amd-amdhsa
#   --size N       doubles per STREAM array (default 2^27; 1M, 2^20 work)
#   --repeat R     timed runs per kernel after one warm-up (default 5)
#   --dot-sizes L  doubles per dot-product vector (default 2^25,2^28)
# On the GPU machine:
#   CLANG=/opt/llvm16/bin/clang LLVM_LIB=/opt/llvm16/lib \
#     tools/bench/run-kernel-bench.sh --target nvptx64-nvidia-cuda
# On the host plugin, as a check that the script works (not a measurement):
#   tools/bench/run-kernel-bench.sh --size 1M --dot-sizes 1M,4M --repeat 3
# Figures are reported, never asserted (exit 0 unless something broke); a
# kernel whose geometry differs between the plugins is marked. See
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
  --size | --repeat | --dot-sizes)
    [[ $# -ge 2 ]] || bench_die "$1 needs a value"
    args+=("$1" "$2"); shift 2 ;;
  --size=* | --repeat=* | --dot-sizes=*) args+=("${1%%=*}" "${1#*=}"); shift ;;
  -h | --help) sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) bench_die "unknown argument '$1' (see --help)" ;;
  esac
done
bench_set_target "$triple"
bench_check_setup

bench_side_by_side kernel-bench "$triple" "${args[@]}"

# The fields of one "kernel NAME: MS ms, GBPS GB/s, teams T threads N" line:
# "MS GBPS T N", or nothing when LOG has no line for NAME.
kernel_fields() {
  awk -v name="$2:" '$1 == "kernel" && $2 == name { print $3, $5, $8, $10; exit }' "$1"
}

echo
echo "== summary ($triple; median ms: lower is better; geometry: teams x threads)"
printf '%-22s %10s %10s %11s %11s %11s  %-14s %-14s\n' \
  kernel "ours ms" "stock ms" ours/stock "ours GB/s" "stock GB/s" "ours geometry" "stock geometry"
awk '$1 == "kernel" { sub(/:$/, "", $2); print $2 }' "$OURS_LOG" | while read -r name; do
  read -r oms ogb ote oth <<<"$(kernel_fields "$OURS_LOG" "$name")"
  read -r sms sgb ste sth <<<"$(kernel_fields "$STOCK_LOG" "$name")"
  mark=""
  if [[ "$ote x $oth" != "${ste:-} x ${sth:-}" ]]; then
    mark="  <- geometry differs"
  fi
  printf '%-22s %10s %10s %11s %11s %11s  %-14s %-14s%s\n' "$name" "$oms" "${sms:-n/a}" \
    "$(bench_ratio "$oms" "${sms:-}")" "$ogb" "${sgb:-n/a}" "$ote x $oth" \
    "${ste:-?} x ${sth:-?}" "$mark"
done
