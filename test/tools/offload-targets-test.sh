#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# offload-targets-test.sh ROOT CC: the readers of the one list of offload
# targets (tools/targets/offload-targets.def) agree: the C header
# (offload-targets.h, compiled with CC), the shell file
# (offload-targets.sh), the lit reader (test/support/offload_targets.py) and
# CMake's (cmake/OffloadTargets.cmake) each give the same "triple plugin"
# table, the host's first; and each refuses what it must: an unknown
# triple, and (CMake) a line it cannot read.
set -euo pipefail
root=${1:?usage: offload-targets-test.sh ROOT CC}
cc=${2:?usage: offload-targets-test.sh ROOT CC}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "offload-targets-test: FAIL: $*" >&2
  exit 1
}

# shell
# shellcheck source=tools/targets/offload-targets.sh
source "$root/tools/targets/offload-targets.sh"
for t in $(offload_target_triples); do
  echo "$t $(offload_target_plugin "$t")"
done >"$work/shell"
if offload_target_plugin no-such-triple >/dev/null; then
  fail "shell: an unknown triple has a plugin"
fi
[[ $(offload_host_triple) == "$(head -1 "$work/shell" | cut -d' ' -f1)" ]] ||
  fail "shell: the host triple is not the first"
[[ $(offload_host_plugin) == "$(head -1 "$work/shell" | cut -d' ' -f2)" ]] ||
  fail "shell: the host plugin is not the first"

# C
cat >"$work/t.c" <<C
#include "$root/tools/targets/offload-targets.h"
#include <stdio.h>
int main(void) {
  for (size_t I = 0; I < OFFLOADIO_NUM_OFFLOAD_TARGETS; ++I) {
    const OffloadTarget *T = offloadTargetOf(OffloadTargets[I].Triple);
    if (T != &OffloadTargets[I])
      return 2;
    printf("%s %s\n", T->Triple, T->Plugin);
  }
  if (offloadTargetOf("no-such-triple") || offloadHostTarget() != OffloadTargets)
    return 3;
  return 0;
}
C
"$cc" -std=c11 -Wall -Werror "$work/t.c" -o "$work/t" || fail "C: does not compile"
"$work/t" >"$work/c" || fail "C: lookups wrong (exit $?)"

# lit
python3 - "$root" >"$work/lit" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/test/support")
from offload_targets import read_offload_targets
targets = read_offload_targets(sys.argv[1])
assert "no-such-triple" not in targets
for triple, (plugin, _) in targets.items():
    print(triple, plugin)
PY

# CMake
cmake -DPROJECT_SOURCE_DIR="$root" -P "$root/cmake/OffloadTargets.cmake" \
  >"$work/cmake" 2>&1 || fail "CMake: $(cat "$work/cmake")"
printf '%s\n' 'OFFLOADIO_OFFLOAD_TARGET(x86_64-pc-linux-gnu, "x86_64", "f")' \
  >"$work/bad.def"
if cmake -DPROJECT_SOURCE_DIR="$root" -DOFFLOADIO_OFFLOAD_TARGETS_DEF="$work/bad.def" \
  -P "$root/cmake/OffloadTargets.cmake" >/dev/null 2>&1; then
  fail "CMake: read an unquoted triple"
fi

[[ $(wc -l <"$work/shell") -ge 3 ]] || fail "shell: fewer than 3 targets"
for reader in c lit cmake; do
  diff -u "$work/shell" "$work/$reader" >&2 ||
    fail "$reader and shell read different tables"
done
echo "offload-targets-test: OK ($(wc -l <"$work/shell") targets, 4 readers)"
