#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The mpi stage of tools/test.sh: examples/mpi under Open MPI on the host
# plugin. With 4 ranks it checks the data, that every rank loaded our plugin
# (the example fails with ENODEV otherwise, and prints its line only after
# ompx_io_get_process_budget succeeded) and each rank's threads against its
# budget; then it prints threads and pinned bytes per process with 1, 4
# and 8 ranks.
#   OFFLOADIO_BUILD_DIR=build bash tools/mpi-check.sh [MIB_PER_RANK]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${OFFLOADIO_BUILD_DIR:-$root/build}
mib=${1:-16}
exe=$build/bin/mpi-shards
if [[ ! -x $exe ]]; then
  echo "mpi-check: $exe not built (no MPI found at configure time?)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

run() { # run NP: the example's output, checked; the per-rank lines kept
  local np=$1 out=$work/out.$1
  if ! timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$np" \
      "$exe" "$work" "$mib" >"$out" 2>&1; then
    cat "$out"
    echo "mpi-check: $np ranks: the example failed" >&2
    return 1
  fi
  local ranks
  ranks=$(grep -c '^rank .*; correct$' "$out" || true)
  if [[ $ranks != "$np" ]] || ! grep -q '^aggregate: .* all correct$' "$out"; then
    cat "$out"
    echo "mpi-check: $np ranks: $ranks of $np ranks report correct data" >&2
    return 1
  fi
  # Each rank: its oio-io threads are its one pool, within its CPU budget;
  # its copy helpers no more than their budget.
  if ! python3 - "$out" <<'PY'
import re, sys
bad = 0
for line in open(sys.argv[1]):
    m = re.search(r"io (\d+) of budget (\d+), copy (\d+) of budget (\d+); "
                  r"cpus (\d+)", line)
    if not line.startswith("rank "):
        continue
    io, io_budget, copy, copy_budget, cpus = map(int, m.groups()) if m else (1, 0, 0, 0, 0)
    if not m or io != io_budget or io_budget > max(cpus, 1) or copy > copy_budget:
        print("mpi-check: over budget: " + line.strip())
        bad = 1
sys.exit(bad)
PY
  then
    cat "$out"
    return 1
  fi
  grep -E '^(rank|aggregate)' "$out"
}

status=0
run 4 || status=1
echo "== threads and pinned bytes per process"
for np in 1 4 8; do
  if [[ $np != 4 ]]; then
    run "$np" >/dev/null || { status=1; continue; }
  fi
  python3 - "$np" "$work/out.$np" <<'PY'
import re, sys
np, rows = int(sys.argv[1]), []
for line in open(sys.argv[2]):
    t = re.search(r"threads (\d+), offload-io's (\d+)", line)
    p = re.search(r"pinned cap (\d+) peak (\d+)", line)
    if line.startswith("rank ") and t and p:
        rows.append((int(t[1]), int(t[2]), int(p[1]), int(p[2])))
n = max(len(rows), 1)
print("  %d processes: threads per process %.1f (offload-io's %.1f), pinned "
      "cap per process %d MiB, peak %d KiB" %
      (np, sum(r[0] for r in rows) / n, sum(r[1] for r in rows) / n,
       max((r[2] for r in rows), default=0) >> 20,
       max((r[3] for r in rows), default=0) >> 10))
PY
done
exit $status
