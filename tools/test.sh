#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: installs what is missing, builds, then runs the
# unit tests (ctest) and the lit suite against our plugin, and LLVM 16's own
# libomptarget suite with the stock x86_64 plugin and ours (a test passing
# with stock must pass with ours: docs/llvm-suite.md). Then it builds twice
# more, under ASan+UBSan and under TSan, and runs the unit, conformance and
# x86_64 lit suites on each. Fails on any failure.
#
#   OFFLOADIO_BUILD_DIR        the normal build (default build/)
#   OFFLOADIO_SANITIZERS       1 (default): both sanitizer builds; asan or tsan:
#                              only that one; 0: none (quicker local runs)
#   OFFLOADIO_ASAN_BUILD_DIR   default <build dir>-asan
#   OFFLOADIO_TSAN_BUILD_DIR   default <build dir>-tsan
#   OFFLOADIO_LLVM_SUITE_CACHE where LLVM's tests are kept once fetched
#                              (default /var/cache/offload-io/llvm16-suite)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
sanitizers=${OFFLOADIO_SANITIZERS:-1}
case $sanitizers in
  0 | 1 | asan | tsan) ;;
  *) echo "test.sh: OFFLOADIO_SANITIZERS must be 0, 1, asan or tsan, not '$sanitizers'" >&2
     exit 2 ;;
esac
lit=/usr/lib/llvm-16/build/utils/lit/lit.py
jobs=$(nproc)

# run_suites DIR WHAT: the unit and conformance tests (ctest) and the
# x86_64 lit suite of build DIR.
run_suites() {
  echo "== unit and conformance tests$2"
  (cd "$1" && ctest --output-on-failure -j"$jobs")
  echo "== lit: x86_64-pc-linux-gnu (host plugin)$2"
  python3 "$lit" -sv -j"$jobs" "$1/test"
}

bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh"
run_suites "$build" ""
if [[ -e $build/test/hsa-emu/libhsa-runtime64.so.1 ]]; then
  # The emulation runs no kernels: only the data-path tests of
  # test/offload/amdgpu run here; kernels need real AMD hardware.
  echo "== lit: amdgcn-amd-amdhsa data path (AMDGPU plugin on the HSA emulation)"
  python3 "$lit" -sv -j"$jobs" \
    --param target=amdgcn-amd-amdhsa --filter 'amdgcn-amd-amdhsa :: amdgpu/' \
    "$build/test"
fi

# LLVM's own suite; its tests are fetched (Debian's source package) into a
# cache the first time. Not in the sanitizer builds: upstream's RUN lines
# start the test programs directly, so nothing could preload the sanitizer
# runtime that a sanitized plugin needs (our lit.cfg.py's run_env).
echo "== LLVM 16 libomptarget suite, x86_64-pc-linux-gnu: stock plugin and ours"
OFFLOADIO_BUILD_DIR=$build bash "$root/tools/llvm-suite/gate.sh" x86_64-pc-linux-gnu

# Sanitizer builds. The conformance suite drives all three plugins (amdgpu
# on the HSA emulation); the amdgcn lit data-path tests are left to the
# normal build above, to keep the added time down.
if [[ $sanitizers == 1 || $sanitizers == asan ]]; then
  dir=${OFFLOADIO_ASAN_BUILD_DIR:-$build-asan}
  echo "== build: SANITIZE=address,undefined into $dir"
  OFFLOADIO_BUILD_DIR=$dir bash "$root/tools/build.sh" -DSANITIZE=address,undefined
  run_suites "$dir" " under ASan+UBSan"
fi
if [[ $sanitizers == 1 || $sanitizers == tsan ]]; then
  dir=${OFFLOADIO_TSAN_BUILD_DIR:-$build-tsan}
  echo "== build: SANITIZE=thread into $dir"
  OFFLOADIO_BUILD_DIR=$dir bash "$root/tools/build.sh" -DSANITIZE=thread
  run_suites "$dir" " under TSan"
fi
