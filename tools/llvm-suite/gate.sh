#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The regression gate against LLVM's own libomptarget test suite of LLVM 16,
# 17 or 18, for one offload target: runs the suite with the stock plugin,
# then with ours (run.sh), and compares the two (compare.sh), which also goes
# to <out>/<triple>.compare.txt. Fails when a test that passes with the
# stock plugin does not pass with ours, or when either run could not run.
#
#   gate.sh [--llvm VERSION] [TRIPLE]      (default x86_64-pc-linux-gnu)
#
# VERSION as for run.sh: default $OFFLOADIO_LLVM_VERSION, else the version
# the build was configured for, else 16. Takes run.sh's variables
# (OFFLOADIO_BUILD_DIR, OFFLOADIO_LLVM_SUITE_OUT, OFFLOADIO_LLVM_TOOLS,
# OFFLOADIO_LLVM_LIB, ...); the suite is fetched once, before both runs,
# unless OFFLOADIO_LLVM_SUITE_DIR names it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tools/llvm-suite/version.sh
source "$here/version.sh"
llvm=
if [[ ${1:-} == --llvm ]]; then
  llvm=${2:?gate.sh: --llvm needs a version}
  shift 2
fi
triple=${1:-x86_64-pc-linux-gnu}
build=${OFFLOADIO_BUILD_DIR:-$root/build}
llvm=${llvm:-$(llvm_suite_version "$build")}
llvm_suite_facts "$llvm"
export OFFLOADIO_LLVM_VERSION=$llvm
out=${OFFLOADIO_LLVM_SUITE_OUT:-$build/llvm-suite}
export OFFLOADIO_LLVM_SUITE_OUT=$out
if [[ -z ${OFFLOADIO_LLVM_SUITE_DIR:-} ]]; then
  OFFLOADIO_LLVM_SUITE_DIR=$(bash "$here/fetch.sh" --llvm "$llvm")
  export OFFLOADIO_LLVM_SUITE_DIR
fi
bash "$here/run.sh" "$triple" stock
bash "$here/run.sh" "$triple" ours
bash "$here/compare.sh" "$out/$triple.stock.results" "$out/$triple.ours.results" "$triple" |
  tee "$out/$triple.compare.txt"
