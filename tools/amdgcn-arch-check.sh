#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds every amdgcn lit test for every AMD architecture of the data-centre
# and desktop families (GCN 5 "Vega", CDNA, RDNA) that clang-16, LLVM 16's
# device runtime and Debian's rocm-device-libs support: compiled and linked,
# never run, so no AMD GPU is needed. Prints a table (architecture, tests,
# built, failed), the architectures left out and why, and a last line; exits
# nonzero if a test fails to build for an architecture of the list.
#
#   bash tools/amdgcn-arch-check.sh [ARCH...]   (default: every one in archs)
#
# The compile commands are the lit suite's own: lit runs test/offload with
# -Dcompile_only=1 (test/lit.cfg.py), which keeps of each RUN line only its
# compiles and selects every test that runs on an AMD GPU or on the HSA
# emulation. One clang call per test builds every architecture
# (OFFLOADIO_OFFLOAD_ARCH=a,b,... becomes --offload-arch=a,b,...), so the
# host part is compiled once; a test that fails is built again for each
# architecture alone, to tell which fail.
#
# Every architecture builds the tests with device code: a target construct
# that runs code on the device (not target data, enter data, exit data or
# update) or a declare target. A test without any builds an image without
# device code, alike for every architecture and as costly to link as any
# other (the device runtime is linked in each): those are built for the
# first architecture of the list only.
#
#   OFFLOADIO_BUILD_DIR   the build whose lit configuration, libompx_io and
#                         checkpoint libraries the tests use (default build/)
#   LIT_FILTER            lit's own: only the tests whose names match
#   LIT_FILTER_OUT        lit's own: tests left out (beside this script's own)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
# The build's LLVM (its lit comes from there) decides the compiler, the
# device runtime and the device libraries, and so the architectures.
lit=$(sed -n 's/^OFFLOADIO_LIT:FILEPATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
[[ -n $lit ]] || lit=/usr/lib/llvm-16/build/utils/lit/lit.py
llvm_version=$(sed -n 's|.*/llvm-\([0-9]*\)/.*|\1|p' <<<"$lit")
# The architectures every supported LLVM builds, with what they are.
gcn_cdna=(
  gfx900  # GCN 5, Vega 10: Instinct MI25, Radeon RX Vega 56/64
  gfx902  # GCN 5, Raven Ridge APUs
  gfx906  # GCN 5, Vega 20: Instinct MI50/MI60, Radeon VII
  gfx908  # CDNA 1: Instinct MI100
  gfx90a  # CDNA 2: Instinct MI210/MI250/MI250X
  gfx90c  # GCN 5, Renoir/Lucienne/Cezanne APUs
  gfx940  # CDNA 3: the first MI300 ISA
)
rdna1_2=(
  gfx1010 # RDNA 1, Navi 10: Radeon RX 5700
  gfx1030 # RDNA 2, Navi 21: Radeon RX 6800/6900, Radeon Pro W6800, V620
  gfx1031 # RDNA 2, Navi 22: Radeon RX 6700
  gfx1032 # RDNA 2, Navi 23: Radeon RX 6600
  gfx1033 # RDNA 2, Van Gogh APU
  gfx1034 # RDNA 2, Navi 24: Radeon RX 6500/6400
  gfx1035 # RDNA 2, Rembrandt APUs
  gfx1036 # RDNA 2, Raphael (Ryzen 7000 graphics)
)
case ${llvm_version:-16} in
16)
  # Built: LLVM 16 has a device runtime for each (libomptarget.devicertl.a)
  # and rocm-device-libs 5.2.3 its oclc_isa_version_*.bc.
  archs=("${gcn_cdna[@]}" "${rdna1_2[@]}")
  # Not built, and why (each checked with clang-16 on bookworm). Older
  # families (gfx6 to gfx8, GCN 1 to 4) are outside this check.
  not_built=(
    "gfx904 gfx909: no LLVM 16 device runtime; the device link misses __kmpc_target_init"
    "gfx1011 gfx1012 gfx1013: no LLVM 16 device runtime; the device link misses __kmpc_target_init"
    "gfx1100 gfx1101 gfx1102 gfx1103 (RDNA 3): rocm-device-libs 5.2.3 has no oclc_isa_version_11xx.bc"
    "gfx941 gfx942 gfx950 (CDNA 3/4: MI300A/X, MI350): clang-16 does not know them"
    "gfx1150 gfx1151 gfx1200 gfx1201 (RDNA 3.5, RDNA 4): clang-16 does not know them"
  )
  ;;
17 | 18)
  # Built: clang 17/18 know them, the LLVM device runtime has a
  # libomptarget-amdgpu-<arch>.bc for each (17's none for gfx941 and
  # gfx942), and trixie's rocm-device-libs-17
  # (/usr/lib/llvm-17/lib/clang/17/amdgcn/bitcode) its oclc_isa_version_*.bc.
  archs=(
    "${gcn_cdna[@]}"
    gfx941  # CDNA 3: an MI300X pre-production ISA
    gfx942  # CDNA 3: Instinct MI300A/MI300X, MI325X
    "${rdna1_2[@]}"
    gfx1100 # RDNA 3, Navi 31: Radeon RX 7900, Radeon Pro W7900
    gfx1101 # RDNA 3, Navi 32: Radeon RX 7800/7700
    gfx1102 # RDNA 3, Navi 33: Radeon RX 7600
    gfx1103 # RDNA 3, Phoenix APUs
    gfx1150 # RDNA 3.5, Strix Point APUs
    gfx1151 # RDNA 3.5, Strix Halo APUs
  )
  # Not built, and why (each checked with clang-18 in the trixie root).
  not_built=()
  if ((llvm_version == 17)); then
    archs=("${archs[@]/gfx94[12]*/}")
    archs=($(printf '%s\n' "${archs[@]}" | grep .))
    not_built+=("gfx941 gfx942 (MI300A/X): no LLVM 17 device runtime for them")
  fi
  not_built+=(
    "gfx904 gfx909: no LLVM device runtime for them; the device link misses __kmpc_target_init"
    "gfx1011 gfx1012 gfx1013: no LLVM device runtime for them; the device link misses __kmpc_target_init"
    "gfx1200 gfx1201 (RDNA 4): rocm-device-libs-17 has no oclc_isa_version_12xx.bc, nor the LLVM 18 device runtime a bitcode library"
    "gfx950 (CDNA 4: MI350), gfx1152: clang-18 does not know them"
  )
  ;;
*)
  echo "amdgcn-arch-check: no architecture list for LLVM $llvm_version ($lit)" >&2
  exit 2
  ;;
esac
jobs=$(nproc)
(($#)) && archs=("$@")
start=$SECONDS
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# compile_tests LIT_OUTPUT ARCHS JSON [TEST...]: build the amdgcn lit tests
# (or TESTs) for the comma-separated ARCHS, lit printing as its option
# LIT_OUTPUT says; its results go to JSON. Failures are results, not errors
# (--ignore-fail); a lit that cannot start is an error.
# LIT_FILTER_OUT in the environment leaves tests out (lit's own).
compile_tests() {
  local lit_output=$1 arch_list=$2 json=$3
  shift 3
  OFFLOADIO_BUILD_DIR=$build OFFLOADIO_OFFLOAD_ARCH=$arch_list \
    python3 "$lit" -j"$jobs" --ignore-fail "$lit_output" \
    --param target=amdgcn-amd-amdhsa --param compile_only=1 -o "$json" \
    "${@:-$build/test}"
}

# lit_filter_out REGEX: REGEX, or it beside the caller's own LIT_FILTER_OUT.
lit_filter_out() {
  if [[ -n ${LIT_FILTER_OUT:-} ]]; then
    echo "($LIT_FILTER_OUT)|($1)"
  else
    echo "$1"
  fi
}

# A regular expression matching the lit names of the tests with device code
# (see the top of this file).
device_code_regex() {
  local directive='^\s*#\s*pragma\s+omp\s+((begin\s+)?declare\s+target|target(?!\s+(enter|exit|data|update)\b)(\s|$))'
  (cd "$root/test" && grep -rlP --include='*.c' --include='*.cpp' "$directive" offload) |
    sed 's/[.]/[.]/g' | paste -sd'|' | sed 's/.*/(&)$/'
}

# tests_with CODE JSON...: the tests (paths below test/) whose lit result is
# CODE, one a line.
tests_with() {
  python3 - "$@" <<'EOF'
import json, sys
code, names = sys.argv[1], set()
for path in sys.argv[2:]:
    with open(path) as f:
        for test in json.load(f)["tests"]:
            if test["code"] in code.split(","):
                names.add(test["name"].split(" :: ")[-1])
sys.stdout.writelines(name + "\n" for name in sorted(names))
EOF
}

device_code=$(device_code_regex)
echo "== building the amdgcn lit tests with device code for ${#archs[@]} architectures: ${archs[*]}"
LIT_FILTER_OUT="$(lit_filter_out "^(?!.*$device_code)")" \
  compile_tests -sv "$(IFS=,; echo "${archs[*]}")" "$results/all.json"
echo "== building the amdgcn lit tests without device code for ${archs[0]}"
LIT_FILTER_OUT="$(lit_filter_out "$device_code")" \
  compile_tests -sv "${archs[0]}" "$results/first.json"
mapfile -t built < <(tests_with PASS "$results/all.json")
mapfile -t failed < <(tests_with FAIL,UNRESOLVED,TIMEOUT "$results/all.json")
mapfile -t built_first < <(tests_with PASS "$results/first.json")
mapfile -t failed_first < <(tests_with FAIL,UNRESOLVED,TIMEOUT "$results/first.json")
unsupported=$(tests_with UNSUPPORTED "$results/all.json" "$results/first.json" | grep -c . || true)
total=$((${#built[@]} + ${#failed[@]}))
total_first=$((${#built_first[@]} + ${#failed_first[@]}))

# Which architectures the failed tests fail for (those without device code
# were built for the first one only).
declare -A failed_for
if ((${#failed[@]})); then
  echo "== ${#failed[@]} tests failed; building them for each architecture alone"
  for arch in "${archs[@]}"; do
    compile_tests -q "$arch" "$results/$arch.json" "${failed[@]/#/$root/test/}" \
      &>/dev/null
    failed_for[$arch]=$(tests_with FAIL,UNRESOLVED,TIMEOUT "$results/$arch.json")
  done
fi
if ((${#failed_first[@]})); then
  failed_for[${archs[0]}]+=$'\n'$(printf '%s\n' "${failed_first[@]}")
  failed_for[${archs[0]}]=$(grep . <<<"${failed_for[${archs[0]}]}" || true)
  failed+=("${failed_first[@]}")
fi

echo
printf '%-8s %6s %6s %6s\n' arch tests built failed
bad_archs=0
for arch in "${archs[@]}"; do
  names=()
  [[ -n ${failed_for[$arch]:-} ]] && mapfile -t names <<<"${failed_for[$arch]}"
  tests=$total
  [[ $arch == "${archs[0]}" ]] && tests=$((total + total_first))
  printf '%-8s %6d %6d %6d\n' "$arch" "$tests" $((tests - ${#names[@]})) "${#names[@]}"
  if ((${#names[@]})); then
    bad_archs=$((bad_archs + 1))
    printf '           failed: %s\n' "${names[@]}"
  fi
done
echo "not built:"
printf '  %s\n' "${not_built[@]}"
echo
if ((${#failed[@]})); then
  if ((bad_archs == 0)); then
    echo "failed when built for all architectures at once, built for each alone:"
    printf '  %s\n' "${failed[@]}"
  fi
  echo "amdgcn-arch-check: ${#failed[@]} of $((total + total_first)) tests fail to build for" \
    "$bad_archs of ${#archs[@]} architectures ($((SECONDS - start)) s)"
  exit 1
fi
echo "amdgcn-arch-check: all $total amdgcn lit tests with device code build for" \
  "${#archs[@]} architectures, the $total_first without for ${archs[0]}" \
  "($unsupported tests are not for amdgcn; $((SECONDS - start)) s)"
