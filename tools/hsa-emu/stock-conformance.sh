#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The conformance suite (test/conformance) against LLVM 16's or 18's own
# amdgpu plugin on the HSA emulation: every case runs in a process of its
# own (the stock plugin crashes on some hostile inputs), and its result (OK,
# FAILED, SKIPPED or CRASHED) is compared with that version's expected file,
# test/hsa-emu/stock-conformance.expected (16) or
# stock-conformance-<N>.expected, which says why each case that is not OK
# with the stock plugin is not (RESULT|RESULT where either may come, with the
# reason). The version is the one the build was configured for
# (tools/llvm-suite/version.sh): its ConformanceTest speaks that ABI.
# Fails when a result differs from the expected one, or when a case of the
# suite has no expected result, or an expected case no longer exists.
#
#   OFFLOADIO_BUILD_DIR=build bash tools/hsa-emu/stock-conformance.sh
#
#   OFFLOADIO_LLVM_VERSION the libomptarget version (default: the build's,
#                          else 16)
#   OFFLOADIO_LLVM_LIB     the stock plugins (default /usr/lib/llvm-<N>/lib)
#   OFFLOADIO_HSA_EMU_DIR  the emulation (default <build>/test/hsa-emu)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/llvm-suite/version.sh
source "$root/tools/llvm-suite/version.sh"
build=${OFFLOADIO_BUILD_DIR:-$root/build}
llvm=$(llvm_suite_version "$build")
llvm_suite_facts "$llvm"
llvm_lib=${OFFLOADIO_LLVM_LIB:-/usr/lib/llvm-$llvm/lib}
emu=${OFFLOADIO_HSA_EMU_DIR:-$build/test/hsa-emu}
if [[ $llvm == 16 ]]; then
  expected=$root/test/hsa-emu/stock-conformance.expected
else
  expected=$root/test/hsa-emu/stock-conformance-$llvm.expected
fi
exe=$build/unittests/ConformanceTest
for f in "$exe" "$emu/libhsa-runtime64.so" "$llvm_lib/libomptarget.rtl.amdgpu$llvm_plugin_suffix.so" \
  "$expected"; do
  if [[ ! -e $f ]]; then
    echo "stock-conformance: not found: $f" >&2
    exit 1
  fi
done
echo "stock-conformance: LLVM $llvm's amdgpu plugin ($llvm_lib) against $expected"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# No expected-failure list of ours applies to the stock plugin: an empty
# directory stands for it.
mkdir "$work/no-xfail"
export LD_LIBRARY_PATH=$emu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OFFLOADIO_CONFORMANCE_PLUGIN_DIR=$llvm_lib OFFLOADIO_CONFORMANCE_PLUGINS=amdgpu
export OFFLOADIO_CONFORMANCE_XFAIL_DIR=$work/no-xfail

"$exe" --gtest_list_tests | awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }' >"$work/cases"
if [[ ! -s $work/cases ]]; then
  echo "stock-conformance: $exe lists no cases" >&2
  exit 1
fi

# One result per case: gtest's own verdict, or CRASHED when the process
# died of a signal, or TIMEOUT.
: >"$work/results"
while read -r case; do
  set +e
  timeout 120 "$exe" --gtest_filter="$case" </dev/null >"$work/log" 2>&1
  rc=$?
  set -e
  if ((rc == 124)); then
    result=TIMEOUT
  elif ((rc > 128)); then
    result=CRASHED
  else
    result=$(grep -oE '^\[ +(OK|FAILED|SKIPPED) +\]' "$work/log" | head -n1 | tr -d '[] ' || true)
    result=${result:-NONE}
  fi
  echo "$case $result" >>"$work/results"
done <"$work/cases"

# "Case RESULT # why" lines; blank lines and comment lines are skipped.
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$expected" | awk '{ print $1, $2 }' | sort >"$work/expected"
sort "$work/results" >"$work/actual"
printf '%-72s %-8s %s\n' "case (stock amdgpu plugin)" result expected
bad=0
while read -r case result; do
  want=$(awk -v c="$case" '$1 == c { print $2 }' "$work/expected")
  mark=""
  if [[ -z $want ]]; then
    mark="  <- no expected result"
    bad=1
  elif [[ "|$want|" != *"|$result|"* ]]; then
    mark="  <- differs"
    bad=1
  fi
  printf '%-72s %-8s %s%s\n' "$case" "$result" "${want:--}" "$mark"
done <"$work/actual"
while read -r case _; do
  if ! grep -q "^$case " "$work/actual"; then
    echo "stock-conformance: $case is expected but the suite has no such case" >&2
    bad=1
  fi
done <"$work/expected"
awk '{ n[$2]++ } END { for (r in n) printf "%s %d\n", r, n[r] }' "$work/actual" | sort |
  tr '\n' ' ' | sed 's/ $/\n/'
if ((bad)); then
  echo "stock-conformance: FAILED: results differ from $expected" >&2
  exit 1
fi
echo "stock-conformance: every result as expected"
