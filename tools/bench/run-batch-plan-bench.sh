#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-batch-plan-bench.sh [--target TRIPLE] [batch-plan-bench options]
#
# Compiles tools/bench/batch-plan-bench.c for TRIPLE (default
# x86_64-pc-linux-gnu) and runs it with our plugin: one ompx_io batch of
# 1,000,000 operations per pattern whose buffers or file ranges cover each
# other (reads of one range, writes of one source, reads into one
# destination, writes to one range, appends among reads, a random mix),
# printing microseconds per operation for submit and for wait, and each
# submit beside the baseline's, a batch where nothing overlaps. Options
# after the target go to the benchmark (--ops N, --bytes B (1 by default),
# --device D, --repeat R, --pattern NAME (repeatable), --file PATH; the
# file defaults to OFFLOADIO_BUILD_DIR/tools-bench/ and is removed
# afterwards). The log is OFFLOADIO_BUILD_DIR/tools-bench/
# batch-plan-bench.ours.log. Figures are printed, never asserted: the exit
# status is non-zero only when something broke (a failed call, or a pattern
# failing other operations than it must).
set -euo pipefail
# shellcheck source=tools/bench/common.sh
source "$(dirname "$0")/common.sh"

case ${1:-} in
-h | --help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
bench_ompx_io_program batch-plan-bench batch-plan-bench.data "$@"
