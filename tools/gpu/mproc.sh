#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Several processes (RANKS, 4 by default) on one node, without MPI: each
# gets the variables mpirun would set (OMPI_COMM_WORLD_LOCAL_SIZE/RANK), so
# the plugins budget its threads and pinned memory as one rank of RANKS.
# DEVICE (0 by default) is the device every rank uses, sharing it; the word
# "rank" gives rank r device r instead (one process per GPU: RANKS must not
# exceed the devices). Checks every rank's data and prints the aggregate
# rates (total bytes over the slowest rank's time). Step mproc of
# tools/gpu/run-on-device.sh (MPROC_DEVICE, MPROC_RANKS).
#   mproc.sh EXE DIR [MIB_PER_RANK] [DEVICE|rank] [RANKS]
set -uo pipefail
exe=$1 dir=$2 mib=${3:-1024} dev=${4:-0} ranks=${5:-4}
if [[ $dev == rank ]]; then
  where="one device each (rank r on device r)"
elif [[ $dev =~ ^[0-9]+$ ]]; then
  where="one device (device $dev)"
else
  echo "mproc.sh: DEVICE must be a device number or 'rank', not '$dev'" >&2
  exit 2
fi
mkdir -p "$dir"
"$exe" prepare "$dir/mproc.in" "$mib" "$ranks" || exit 1
: > "$dir/mproc.ckpt"
pids=()
for ((r = 0; r < ranks; ++r)); do
  OMPI_COMM_WORLD_LOCAL_SIZE=$ranks OMPI_COMM_WORLD_LOCAL_RANK=$r \
    "$exe" run "$dir" "$mib" "$([[ $dev == rank ]] && echo "$r" || echo "$dev")" \
    > "$dir/rank.$r" 2>&1 &
  pids+=($!)
done
status=0
for ((r = 0; r < ranks; ++r)); do
  wait "${pids[$r]}" || status=1
  cat "$dir/rank.$r"
done
cat "$dir"/rank.* | WHERE=$where RANKS=$ranks python3 -c '
import os, re, sys
ranks = int(os.environ["RANKS"])
rows = [l for l in sys.stdin if l.startswith("rank ")]
good = sum(l.rstrip().endswith(" correct") for l in rows)
num = lambda k: [float(re.search(k + r" ([0-9.]+)", l)[1]) for l in rows]
if rows:
    total = sum(num("bytes"))
    print("aggregate: %d processes on %s, read %.2f GB/s, write %.2f GB/s, "
          "%d of %d correct" % (len(rows), os.environ["WHERE"],
                                total / max(num("read_s")) / 1e9,
                                total / max(num("write_s")) / 1e9, good, ranks))
sys.exit(0 if good == ranks else 1)' || status=1
rm -f "$dir/mproc.in" "$dir/mproc.ckpt" "$dir"/rank.*
exit $status
