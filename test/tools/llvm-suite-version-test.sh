#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# llvm-suite-version-test.sh ROOT: the llvm-suite scripts' one place of
# LLVM versions (tools/llvm-suite/version.sh) picks the version as its
# header says (OFFLOADIO_LLVM_VERSION, else the build's site configuration,
# else 16), knows 16, 17 and 18 and refuses others; compare.sh's heading
# names the version, and its gate still fails a test that passes with stock
# only.
set -euo pipefail
root=${1:?usage: llvm-suite-version-test.sh ROOT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "llvm-suite-version-test: FAIL: $*" >&2
  exit 1
}
# shellcheck source=tools/llvm-suite/version.sh
source "$root/tools/llvm-suite/version.sh"
unset OFFLOADIO_LLVM_VERSION

[[ $(llvm_suite_version) == 16 ]] || fail "no build, no variable: not 16"
[[ $(llvm_suite_version "$work/none") == 16 ]] || fail "a missing build: not 16"
mkdir -p "$work/b18/test"
echo 'config.offloadio_llvm_abi = "18"' >"$work/b18/test/lit.site.cfg.py"
[[ $(llvm_suite_version "$work/b18") == 18 ]] || fail "the build's 18 not read"
[[ $(OFFLOADIO_LLVM_VERSION=17 llvm_suite_version "$work/b18") == 17 ]] ||
  fail "OFFLOADIO_LLVM_VERSION does not win over the build"

for v in 16 17 18; do
  llvm_suite_facts "$v" || fail "$v refused"
  [[ $llvm_pkg == "llvm-toolchain-$v" && $llvm_runtime == "libomp5-$v" ]] ||
    fail "$v: package names $llvm_pkg $llvm_runtime"
  [[ $llvm_default_version == 1:$v.* ]] || fail "$v: default version $llvm_default_version"
done
llvm_suite_facts 16 && [[ $llvm_dist == bookworm && $llvm_plugin_suffix == .nextgen ]] ||
  fail "16: $llvm_dist '$llvm_plugin_suffix'"
for v in 17 18; do
  llvm_suite_facts "$v" && [[ $llvm_dist == trixie && -z $llvm_plugin_suffix ]] ||
    fail "$v: $llvm_dist '$llvm_plugin_suffix'"
done
for v in 15 19 x; do
  if llvm_suite_facts "$v" 2>/dev/null; then
    fail "$v accepted"
  fi
done

printf 'PASS a.c\nPASS b.c\n' >"$work/stock"
printf 'PASS a.c\nFAIL b.c\n' >"$work/ours"
OFFLOADIO_LLVM_VERSION=18 bash "$root/tools/llvm-suite/compare.sh" "$work/stock" "$work/stock" t \
  >"$work/same" || fail "compare.sh: identical results fail the gate"
grep -q "^LLVM 18 libomptarget suite, t: stock | ours" "$work/same" ||
  fail "compare.sh: heading $(head -1 "$work/same")"
if bash "$root/tools/llvm-suite/compare.sh" "$work/stock" "$work/ours" t >"$work/worse"; then
  fail "compare.sh: a test passing with stock only passes the gate"
fi
grep -q "^LLVM 16 libomptarget suite" "$work/worse" || fail "compare.sh: default heading"
echo "llvm-suite-version-test: PASS"
