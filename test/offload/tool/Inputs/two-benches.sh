#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# two-benches.sh DIR OUT COMMAND...: runs COMMAND --dir DIR twice at once
# (output into OUT.1 and OUT.2), fails unless both succeed, then lists what
# they left in DIR (their test files must be gone).
set -u
dir=$1 out=$2
shift 2
"$@" --dir "$dir" >"$out.1" 2>&1 &
first=$!
"$@" --dir "$dir" >"$out.2" 2>&1 &
second=$!
rc=0
wait "$first" || { echo "first run failed: $?"; cat "$out.1"; rc=1; }
wait "$second" || { echo "second run failed: $?"; cat "$out.2"; rc=1; }
echo "left in dir: [$(ls -A "$dir")]"
exit $rc
