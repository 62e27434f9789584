#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-ceiling-bench.sh [--target TRIPLE] [--size BYTES] [--file-size BYTES]
#                      [--repeat N] [--threads LIST] [--csv FILE]
#                      [--plot FILE.png] [--skip-host]
#   run-ceiling-bench.sh --replot CSV --plot FILE.png   (an earlier run's CSV)
#
# Where the time of a staged copy goes, in one run (tools/bench/ceiling-bench.c):
#   - the host's own copy rates with each thread count of LIST (default
#     1,2,4,8,12,16): memcpy, memcpy into pinned memory, out of pinned memory
#     into fresh and into touched pages, pread of a page-cached file into
#     pinned memory (one large buffer, and two reused 2 MiB buffers per
#     thread as the file engine's workers read: "pread->ring");
#   - the link: omp_target_memcpy from and to pinned memory;
#   - our plugin's pageable omp_target_memcpy (2 GiB by default) with
#     OFFLOADIO_COPY_THREADS set to each count of LIST, and the stock
#     plugin's once;
#   - ompx_target_pread of a page-cached file (--file-size, default
#     --size) into device memory with OMPX_IO_THREADS set to each count of
#     LIST.
# Then one table: every rate against thread count, and each plugin figure as
# a ratio to the link (pinned DMA) of this run. --skip-host leaves out the
# host copy rates (to compare plugin settings quickly). --csv writes the table;
# --plot renders bandwidth against thread count (gnuplot). Figures are
# reported, never asserted. tools/bench/common.sh has the toolchain
# variables.
set -euo pipefail
# shellcheck source=tools/bench/common.sh
source "$(dirname "$0")/common.sh"

triple=$(offload_host_triple)
size=2G
file_size=
repeat=3
threads=1,2,4,8,12,16
csv=
plot=
skip_host=0
replot=
while [[ $# -gt 0 ]]; do
  case $1 in
  --target | --size | --file-size | --repeat | --threads | --csv | --plot | --replot)
    [[ $# -ge 2 ]] || bench_die "$1 needs a value"
    case $1 in
    --target) triple=$2 ;;
    --size) size=$2 ;;
    --file-size) file_size=$2 ;;
    --repeat) repeat=$2 ;;
    --threads) threads=$2 ;;
    --csv) csv=$2 ;;
    --plot) plot=$2 ;;
    --replot) replot=$2 ;;
    esac
    shift 2
    ;;
  --skip-host) skip_host=1; shift ;;
  -h | --help) sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) bench_die "unknown argument '$1' (see --help)" ;;
  esac
done
# plot_csv CSV PNG TITLE: bandwidth against thread count, from a CSV of
# this script.
plot_csv() {
  command -v gnuplot >/dev/null || bench_die "--plot needs gnuplot (apt-get install gnuplot-nox)"
  mkdir -p "$build/tools-bench"
  # Kept comma-separated: a figure a run did not measure is an empty field
  # (gnuplot leaves it out), and spaces would shift the columns after it.
  local data=$build/tools-bench/ceiling.dat xtics link_h2d link_d2h
  tail -n +2 "$1" >"$data"
  xtics=$(cut -d, -f1 "$data" | paste -sd, -)
  link_h2d=$(awk -F, 'NR == 1 { print $13 }' "$data")
  link_d2h=$(awk -F, 'NR == 1 { print $14 }' "$data")
  gnuplot <<EOF
set terminal png noenhanced size 1000,600
set datafile separator ","
set output "$2"
set xtics ($xtics)
set key bottom right
set title "$3"
set xlabel "threads (host copies: threads; ours: OFFLOADIO_COPY_THREADS / OMPX_IO_THREADS)"
set ylabel "GB/s"
set grid
plot "$data" using 1:2 with linespoints title "host memcpy", \
     "$data" using 1:3 with linespoints title "memcpy into pinned", \
     "$data" using 1:6 with linespoints title "pread (page cache) into pinned", \
     "$data" using 1:15 with linespoints title "pread (page cache) into 2 MiB rings", \
     "$data" using 1:7 with linespoints lw 2 title "ours: malloc -> device", \
     "$data" using 1:8 with linespoints lw 2 title "ours: device -> malloc", \
     "$data" using 1:9 with linespoints lw 2 title "ours: file -> device", \
     $link_h2d with lines dt 2 title "link H2D (pinned DMA)", \
     $link_d2h with lines dt 3 title "link D2H (pinned DMA)"
EOF
  echo "plot: $2"
}
if [[ -n $replot ]]; then
  [[ -n $plot ]] || bench_die "--replot needs --plot FILE.png"
  plot_csv "$replot" "$plot" "Staged copies against thread count ($(basename "$replot"))"
  exit 0
fi

[[ $threads =~ ^[0-9]+(,[0-9]+)*$ ]] || bench_die "--threads takes a list like 1,2,4"
bench_set_target "$triple"
bench_check_setup

out=$build/tools-bench
exe=$out/ceiling-bench-$PLUGIN
extra=()
# The file step needs libompx_io, which only our plugins serve.
if [[ -e $build/lib/libompx_io.so ]]; then
  extra=(-DBENCH_OMPX_IO -I"$bench_root/include" -I"$build/include"
    -L"$build/lib" -Wl,-rpath,"$build/lib" -lompx_io)
fi
echo "== compiling ceiling-bench for $triple"
bench_compile "$bench_root/tools/bench/ceiling-bench.c" "$exe" "${extra[@]}"
echo "== ceiling-bench ($triple, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
args=(--size "$size" --repeat "$repeat")
log=$out/ceiling.log
: >"$log"

# run WHICH ENV... -- ARGS...: one run, its output appended to the log.
run() {
  local which=$1 one
  shift
  local envs=()
  while [[ $1 != -- ]]; do
    envs+=("$1")
    shift
  done
  shift
  one=$out/ceiling.one.log
  bench_run "$which" "$one" env "${envs[@]}" "$exe" "$@" >/dev/null ||
    bench_die "ceiling-bench failed ($which ${envs[*]} $*): $(tail -3 "$one")"
  sed "s/^RESULT /RESULT ${envs[*]:-default} /" "$one" >>"$log"
  grep -v '^RESULT ' "$one"
}

if ((skip_host)); then
  run ours -- --link "${args[@]}"
else
  run ours -- --host --link --threads "$threads" "${args[@]}"
fi
for t in ${threads//,/ }; do
  run ours OFFLOADIO_COPY_THREADS="$t" -- --pageable "${args[@]}"
done
run stock -- --pageable "${args[@]}"
if [[ ${#extra[@]} -gt 0 ]]; then
  for t in ${threads//,/ }; do
    run ours OMPX_IO_THREADS="$t" -- --file "${args[@]}" ${file_size:+--file-size "$file_size"}
  done
fi

# value SELECTOR KIND KEY: KEY=... of the RESULT line "RESULT SELECTOR KIND ...".
value() {
  awk -v sel="$1" -v kind="$2" -v key="$3" '
    $1 == "RESULT" && $2 == sel && $3 == kind {
      for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) { print kv[2]; exit } } }' "$log"
}
# host KEY T: a host rate at thread count T.
host() {
  awk -v t="threads=$2" -v key="$1" '
    $1 == "RESULT" && $3 == "host" && $4 == t {
      for (i = 5; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) { print kv[2]; exit } } }' "$log"
}
link_h2d=$(value default link h2d)
link_d2h=$(value default link d2h)
stock_h2d=$(value default pageable h2d)
stock_d2h=$(value default pageable d2h)

echo
echo "== summary ($triple, $size per copy, ${file_size:-$size} file, best of $repeat; GB/s)"
echo "link (pinned DMA, omp_target_memcpy): H2D $link_h2d, D2H $link_d2h"
echo "stock plugin, malloc memory: H2D $stock_h2d, D2H $stock_d2h"
# pread_to_ring comes last so that the columns of earlier CSVs keep their
# places (--replot).
header="threads,memcpy,to_pinned,pinned_to_fresh,pinned_to_touched,pread_to_pinned,ours_h2d,ours_d2h,ours_file,h2d_x_link,d2h_x_link,file_x_link,link_h2d,link_d2h,pread_to_ring"
printf '%7s %7s %9s %13s %13s %13s %11s %8s %8s %9s %10s %10s %10s\n' threads memcpy \
  to-pinned 'pinned->fresh' 'pinned->touch' 'pread->pinned' 'pread->ring' "ours H2D" \
  "ours D2H" "ours file" "H2D/link" "D2H/link" "file/link"
rows=()
for t in ${threads//,/ }; do
  h2d=$(value "OFFLOADIO_COPY_THREADS=$t" pageable h2d)
  d2h=$(value "OFFLOADIO_COPY_THREADS=$t" pageable d2h)
  file=$(value "OMPX_IO_THREADS=$t" file to_device)
  row="$t,$(host memcpy "$t"),$(host to_pinned "$t"),$(host pinned_to_fresh "$t"),$(host pinned_to_touched "$t"),$(host pread_to_pinned "$t"),$h2d,$d2h,${file:-},$(bench_ratio "$h2d" "$link_h2d"),$(bench_ratio "$d2h" "$link_d2h"),$(bench_ratio "$file" "$link_h2d"),$link_h2d,$link_d2h,$(host pread_to_ring "$t")"
  rows+=("$row")
  IFS=, read -r -a f <<<"$row"
  printf '%7s %7s %9s %13s %13s %13s %11s %8s %8s %9s %10s %10s %10s\n' "${f[@]:0:6}" "${f[14]:-}" "${f[@]:6:6}"
done
echo "(x link: a plugin figure over the pinned DMA rate of this run; file/link"
echo " uses the H2D link rate. Staging cannot beat the slower of its copy into"
echo " pinned memory at that thread count and the link.)"
csv_file=${csv:-$out/ceiling.csv}
{ echo "$header"; printf '%s\n' "${rows[@]}"; } >"$csv_file"
echo "CSV: $csv_file"
if [[ -n $plot ]]; then
  plot_csv "$csv_file" "$plot" "Staged copies against thread count ($triple, $size, best of $repeat)"
fi
