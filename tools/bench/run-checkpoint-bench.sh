#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-checkpoint-bench.sh [--target TRIPLE] [checkpoint-bench options]
#
# Compiles tools/bench/checkpoint-bench.c for TRIPLE (default
# x86_64-pc-linux-gnu) and runs it with our plugin: a safetensors checkpoint
# of about 2,000 tensors saved with one ompx_io batch against plain pwrite,
# then loaded three ways (pread + omp_target_memcpy per tensor,
# ompx_target_pread per tensor, one batch) from the page cache and, with
# --odirect, from disk beside the disk's own O_DIRECT rate. Options after
# the target go to the benchmark (--total 8G by default, --odirect,
# --repeat N, --device D, --file PATH; the file defaults to
# OFFLOADIO_BUILD_DIR/tools-bench/ and is removed afterwards). The log is
# OFFLOADIO_BUILD_DIR/tools-bench/checkpoint-bench.ours.log. Figures are
# printed, never asserted: the exit status is non-zero only when something
# broke (a failed call or a byte that differs).
set -euo pipefail
# shellcheck source=tools/bench/common.sh
source "$(dirname "$0")/common.sh"

case ${1:-} in
-h | --help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
triple=x86_64-pc-linux-gnu
if [[ ${1:-} == --target ]]; then
  triple=${2:?--target needs a triple}
  shift 2
fi
bench_set_target "$triple"
command -v "$CLANG" >/dev/null || bench_die "compiler '$CLANG' not found (set CLANG)"
[[ -e $build/lib/libomptarget.rtl.$PLUGIN.nextgen.so && -e $build/lib/libompx_io.so ]] ||
  bench_die "our $PLUGIN plugin or libompx_io is missing from $build/lib: build first (OFFLOADIO_BUILD_DIR=$build)"
out=$build/tools-bench
exe=$out/checkpoint-bench-$PLUGIN
echo "== compiling checkpoint-bench for $triple"
bench_compile "$bench_root/tools/bench/checkpoint-bench.c" "$exe" \
  -I"$bench_root/include" -I"$build/include" -L"$build/lib" -lompx_io \
  -Wl,-rpath,"$build/lib"
echo "== checkpoint-bench ($triple, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
bench_run ours "$out/checkpoint-bench.ours.log" "$exe" \
  --file "$out/checkpoint-bench.safetensors" "$@" ||
  bench_die "checkpoint-bench failed"
