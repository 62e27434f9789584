#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: installs what is missing, builds, then runs the
# unit tests (ctest) and the lit suite against our plugin, and LLVM 16's own
# libomptarget suite with the stock x86_64 plugin and ours (a test passing
# with stock must pass with ours: docs/llvm-suite.md). Every amdgcn lit test
# is also compiled and linked, not run, for each AMD architecture that
# clang-16 and the device libraries support (tools/amdgcn-arch-check.sh).
# Then it builds twice more, under ASan+UBSan and under TSan, and runs the
# unit, conformance and x86_64 lit suites on each. The normal build is also
# installed into a temporary prefix, and examples/consumer is built against
# it and run with no LD_LIBRARY_PATH (tools/install-check.sh); its Debian
# packages are built and installed with apt into a clean bookworm root, where
# the README's first program must run on our plugin (tools/package/). Then
# the same for libomptarget 18 and 17 in a Debian trixie root
# (tools/trixie/), the packages for 18 into a clean trixie root.
#
# Every stage runs, whatever the earlier ones did, except the suites of a
# build that failed (they have nothing to run); the end is one summary of
# all stages (name, result, seconds), and the exit status is nonzero if any
# stage failed.
#
#   OFFLOADIO_BUILD_DIR        the normal build (default build/)
#   OFFLOADIO_SANITIZERS       1 (default): both sanitizer builds; asan or tsan:
#                              only that one; 0: none (quicker local runs)
#   OFFLOADIO_ASAN_BUILD_DIR   default <build dir>-asan
#   OFFLOADIO_TSAN_BUILD_DIR   default <build dir>-tsan
#   OFFLOADIO_LLVM_SUITE_CACHE where LLVM's tests are kept once fetched
#                              (default /var/cache/offload-io/llvm16-suite)
#   OFFLOADIO_TRIXIE_VERSIONS  the libomptarget versions built and tested in
#                              the Debian trixie root besides 16 (default
#                              "18 17"; empty: none)
set -uo pipefail
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

# One entry per stage, in the order they ran.
stage_names=()
stage_results=()
stage_seconds=()

# stage NAME COMMAND...: run one stage, record its result and time; returns
# the command's status so that callers can skip what depends on it.
stage() {
  local name=$1 start=$SECONDS rc
  shift
  echo "== $name"
  "$@"
  rc=$?
  stage_names+=("$name")
  stage_seconds+=($((SECONDS - start)))
  if ((rc == 0)); then
    stage_results+=(pass)
  else
    stage_results+=("FAIL (exit $rc)")
    echo "== $name: FAILED (exit $rc)" >&2
  fi
  return $rc
}

# skip NAME WHY: record a stage that could not run.
skip() {
  echo "== $1: skipped ($2)"
  stage_names+=("$1")
  stage_results+=("skipped ($2)")
  stage_seconds+=(0)
}

# Stage bodies; each runs in a subshell so that a failing command ends only
# its own stage.
# The lit suite is in ctest too (label "lit"); it has its own stage here.
unit_tests() (cd "$1" && ctest --output-on-failure -j"$jobs" -LE lit)
lit_suite() { python3 "$lit" -sv -j"$jobs" "$1/test"; }
# Warnings are errors in CI's builds (OFFLOADIO_WERROR).
build_with() {
  local dir=$1
  shift
  OFFLOADIO_BUILD_DIR=$dir bash "$root/tools/build.sh" -DOFFLOADIO_WERROR=ON "$@"
}
# The lit tests beside test/offload/amdgpu that launch no kernel and check
# what every device must answer alike: hostile batches, descriptors and
# depend tasks, the order of the checks, interior unlocks.
amdgcn_shared_tests='io/(batch-basic|batch-errors|batch-closed-fd|errors-einval|errors-linux-order|last-error|free-in-flight|depend-(threads|exit|capture|last-error|errors))[.]c|lock/(lock-rules|lock-unlock-interior|ompx-lock-mem)[.]c'
amdgcn_lit() {
  # The emulation runs no kernels: the data-path tests of test/offload/amdgpu
  # and the shared ones above run here; kernels need real AMD hardware.
  python3 "$lit" -sv -j"$jobs" \
    --param target=amdgcn-amd-amdhsa \
    --filter "amdgcn-amd-amdhsa :: offload/(amdgpu/|$amdgcn_shared_tests)" \
    "$build/test"
}
# Every amdgcn lit test built for each supported AMD architecture; none is
# run, so no AMD GPU is needed.
amdgcn_archs() {
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/amdgcn-arch-check.sh"
}
# LLVM's own suite; its tests are fetched (Debian's source package) into a
# cache the first time. Not in the sanitizer builds: upstream's RUN lines
# start the test programs directly, so nothing could preload the sanitizer
# runtime that a sanitized plugin needs (test/lit.cfg.py's run_env).
llvm_gate() {
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/llvm-suite/gate.sh" x86_64-pc-linux-gnu
}
# The same gate for amdgcn on the HSA emulation: both plugins run the same
# programs on it (kernels fail alike on both, as the emulation runs none).
llvm_gate_amdgcn() {
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/llvm-suite/gate.sh" amdgcn-amd-amdhsa
}
# The conformance suite against the stock amdgpu plugin on the emulation,
# each case's result against test/hsa-emu/stock-conformance.expected.
stock_conformance() {
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/hsa-emu/stock-conformance.sh"
}
# Install, then build and run examples/consumer against the installed tree.
# Only for the normal build: the sanitizer builds are not installable
# products.
install_check() {
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/install-check.sh"
}
# The Debian packages of a build (tools/package/make-debs.sh), installed
# with apt into a clean Debian root of SUITE, where the README's first
# program is built as the -dev package says and must run on our plugin.
deb_check() { # SUITE LLVM BUILD
  local debs
  debs=$(ls "$3"/dist/offload-io*_*.deb) || return 1
  # shellcheck disable=SC2086
  bash "$root/tools/package/deb-install-check.sh" "$1" "$2" $debs
}
make_debs() {
  rm -rf "$build/dist"
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/package/make-debs.sh" "$build/dist"
}
# The checkpoint benchmark on the host plugin, small: the figures only
# (nothing is asserted but that every byte arrives).
checkpoint_bench() {
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/bench/run-checkpoint-bench.sh" \
    --total 128M --repeat 2 --odirect
}
# The staged-copy ceilings on the host plugin, small: the host's copy rates
# by thread count beside what the plugin reaches (figures only).
ceiling_bench() {
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/bench/run-ceiling-bench.sh" \
    --size 128M --repeat 2 --threads 1,2
}

# The Python package's tests (test/python) with the distribution's python3
# and NumPy, on the build's host plugin; the reference implementation's
# round trips run in the trixie root (version-stage.sh python).
python_tests() {
  PYTHONPATH=$build/python /usr/bin/python3 -m unittest discover -s "$root/test/python"
}

# The GPU round's two-GPU programs on the host plugin's devices: several
# devices at once and one process per device (data checked).
multi_device_check() {
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/multi-device-check.sh"
}

# examples/mpi under mpirun with 4 ranks on the host plugin: data, our
# plugin in every rank, threads within each rank's budget; then threads and
# pinned bytes per process with 1, 4 and 8 ranks.
mpi_check() {
  OFFLOADIO_BUILD_DIR=$build bash "$root/tools/mpi-check.sh"
}

# suites DIR WHAT: the unit and conformance tests (ctest) and the x86_64 lit
# suite of build DIR, as two stages.
suites() {
  stage "unit and conformance tests$2" unit_tests "$1"
  stage "lit: x86_64-pc-linux-gnu (host plugin)$2" lit_suite "$1"
}

# sanitized NAME DIR WHAT FLAGS...: one sanitizer build and its suites.
sanitized() {
  local name=$1 dir=$2 what=$3
  shift 3
  if stage "build: $name into $dir" build_with "$dir" "$@"; then
    suites "$dir" "$what"
  else
    skip "unit and conformance tests$what" "its build failed"
    skip "lit: x86_64-pc-linux-gnu (host plugin)$what" "its build failed"
  fi
}

# A failed install may still leave everything needed in place: the build
# goes on and tells.
stage "install: Debian packages" bash "$root/tools/install-deps.sh"
if stage "build: $build" build_with "$build"; then
  suites "$build" ""
  if [[ -e $build/test/hsa-emu/libhsa-runtime64.so.1 ]]; then
    stage "lit: amdgcn-amd-amdhsa data path (AMDGPU plugin on the HSA emulation)" amdgcn_lit
    stage "conformance: the stock amdgpu plugin on the HSA emulation" stock_conformance
    stage "LLVM 16 libomptarget suite, amdgcn on the HSA emulation: stock plugin and ours" \
      llvm_gate_amdgcn
  else
    skip "lit: amdgcn-amd-amdhsa data path" "no HSA emulation built"
    skip "conformance: the stock amdgpu plugin" "no HSA emulation built"
    skip "LLVM 16 libomptarget suite, amdgcn" "no HSA emulation built"
  fi
  if [[ -e $build/lib/libomptarget.rtl.amdgpu.nextgen.so ]]; then
    stage "build: amdgcn lit tests for every supported AMD architecture" amdgcn_archs
  else
    skip "build: amdgcn lit tests for every supported AMD architecture" \
      "no AMDGPU plugin built"
  fi
  stage "python: offload_io on the host plugin (test/python)" python_tests
  stage "LLVM 16 libomptarget suite, x86_64: stock plugin and ours" llvm_gate
  stage "install: examples/consumer against the installed tree" install_check
  if stage "packages: the Debian packages of $build (tools/package/make-debs.sh)" make_debs; then
    stage "packages: installed with apt into a clean bookworm, the first program on our plugin" \
      deb_check bookworm 16 "$build"
  else
    skip "packages: installed with apt into a clean bookworm" "no packages built"
  fi
  stage "benchmark: checkpoint save and load, host plugin (128 MiB)" checkpoint_bench
  stage "benchmark: staged-copy ceilings by thread count, host plugin (128 MiB)" ceiling_bench
  stage "multi-device: two devices at once and one process per device (host plugin)" \
    multi_device_check
  if [[ -x $build/bin/mpi-shards ]] && command -v mpirun >/dev/null; then
    stage "mpi: examples/mpi, 4 ranks under mpirun (host plugin)" mpi_check
  else
    skip "mpi: examples/mpi" "no MPI found"
  fi
else
  for name in "unit and conformance tests" "lit: x86_64-pc-linux-gnu (host plugin)" \
              "lit: amdgcn-amd-amdhsa data path" \
              "conformance: the stock amdgpu plugin" \
              "LLVM 16 libomptarget suite, amdgcn" \
              "build: amdgcn lit tests for every supported AMD architecture" \
              "python: offload_io on the host plugin" \
              "LLVM 16 libomptarget suite, x86_64: stock plugin and ours" \
              "install: examples/consumer against the installed tree" \
              "packages: the Debian packages" \
              "benchmark: checkpoint save and load, host plugin" \
              "benchmark: staged-copy ceilings" \
              "multi-device: two devices at once" \
              "mpi: examples/mpi"; do
    skip "$name" "its build failed"
  done
fi

# libomptarget 18 and 17, in a Debian trixie root (bookworm has neither):
# the same build, its unit, conformance and x86_64 lit suites, and that
# version's own libomptarget suite, stock plugin against ours; for 18 (the
# AMD generation of MI300) also the AMDGPU data path on the HSA emulation,
# the amdgcn lit tests built for every AMD architecture LLVM 18 supports, and
# on the emulation the conformance suite against LLVM 18's stock amdgpu
# plugin and LLVM 18's own suite for amdgcn, stock plugin against ours.
# OFFLOADIO_TRIXIE_VERSIONS picks the versions (empty: none).
in_trixie() {
  bash "$root/tools/trixie/in-root.sh" bash "$root/tools/trixie/version-stage.sh" "$@"
}
trixie_versions=${OFFLOADIO_TRIXIE_VERSIONS-18 17}
if [[ -n $trixie_versions ]]; then
  if stage "trixie root: Debian trixie with LLVM 17 and 18 (tools/trixie/make-root.sh)"       bash "$root/tools/trixie/make-root.sh"; then
    for v in $trixie_versions; do
      vbuild=$build-llvm$v
      if stage "build: LLVM $v into $vbuild (trixie root)" in_trixie "$v" "$vbuild" build; then
        stage "unit and conformance tests, LLVM $v" in_trixie "$v" "$vbuild" unit
        stage "lit: x86_64-pc-linux-gnu (host plugin), LLVM $v" in_trixie "$v" "$vbuild" lit
        stage "LLVM $v libomptarget suite, x86_64: stock plugin and ours" \
          in_trixie "$v" "$vbuild" suite
        if ((v == 18)); then
          stage "lit: amdgcn-amd-amdhsa data path on the HSA emulation, LLVM $v" \
            in_trixie "$v" "$vbuild" amdgcn-lit
          stage "build: amdgcn lit tests for every AMD architecture of LLVM $v" \
            in_trixie "$v" "$vbuild" amdgcn-archs
          stage "conformance: LLVM $v's stock amdgpu plugin on the HSA emulation" \
            in_trixie "$v" "$vbuild" amdgcn-conformance
          stage "LLVM $v libomptarget suite, amdgcn on the HSA emulation: stock plugin and ours" \
            in_trixie "$v" "$vbuild" amdgcn-suite
          stage "safetensors: the reference implementation and ours, both ways, LLVM $v" \
            in_trixie "$v" "$vbuild" safetensors-compat
          stage "python: offload_io with the reference safetensors, LLVM $v" \
            in_trixie "$v" "$vbuild" python
          rm -rf "$vbuild/dist"
          if stage "packages: the Debian packages of $vbuild (trixie root)" \
              in_trixie "$v" "$vbuild" debs; then
            stage "packages: installed with apt into a clean trixie, the first program on our plugin" \
              deb_check trixie "$v" "$vbuild"
          fi
        fi
      else
        skip "LLVM $v suites" "its build failed"
      fi
    done
  else
    skip "LLVM 17 and 18" "no trixie root"
  fi
fi

# Sanitizer builds. The conformance suite drives all three plugins (amdgpu
# on the HSA emulation); the amdgcn lit data-path tests are left to the
# normal build above, to keep the added time down.
if [[ $sanitizers == 1 || $sanitizers == asan ]]; then
  sanitized SANITIZE=address,undefined "${OFFLOADIO_ASAN_BUILD_DIR:-$build-asan}" \
    " under ASan+UBSan" -DSANITIZE=address,undefined
fi
if [[ $sanitizers == 1 || $sanitizers == tsan ]]; then
  sanitized SANITIZE=thread "${OFFLOADIO_TSAN_BUILD_DIR:-$build-tsan}" \
    " under TSan" -DSANITIZE=thread
fi

failed=0
echo
echo "== summary"
for i in "${!stage_names[@]}"; do
  printf '  %-8s %5ss  %s\n' "${stage_results[$i]%% *}" "${stage_seconds[$i]}" \
    "${stage_names[$i]}${stage_results[$i]#"${stage_results[$i]%% *}"}"
  [[ ${stage_results[$i]} == FAIL* ]] && failed=$((failed + 1))
done
if ((failed)); then
  echo "test.sh: $failed of ${#stage_names[@]} stages failed"
  exit 1
fi
echo "test.sh: all ${#stage_names[@]} stages passed or were skipped"
