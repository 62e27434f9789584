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
bench_ompx_io_program checkpoint-bench checkpoint-bench.safetensors "$@"
