#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# plot-io.sh CSV OUT.png [TITLE]
#
# Renders the CSV written by `ompx-io bench --csv` as a PNG: throughput (GB/s,
# best sample) against transfer size, one line per op x path x thread count.
# ompx_io paths are solid lines, the plain pread/pwrite and naive baselines
# dashed. Needs gnuplot (gnuplot-nox); uses the pngcairo terminal where the
# gnuplot build has it, else png.
set -euo pipefail

usage() {
  echo "usage: $(basename "$0") CSV OUT.png [TITLE]" >&2
  exit 2
}
[[ $# -eq 2 || $# -eq 3 ]] || usage
csv=$1
out=$2
title=${3:-"ompx-io bench: file <-> device throughput (page-cached)"}
[[ -r $csv ]] || { echo "plot-io.sh: cannot read $csv" >&2; exit 1; }
command -v gnuplot >/dev/null || {
  echo "plot-io.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2
  exit 1
}
header=$(head -n1 "$csv")
[[ $header == op,path,effective_path,size_bytes,threads,* ]] || {
  echo "plot-io.sh: $csv is not an 'ompx-io bench --csv' file" >&2
  exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One data file per series, sorted by size: "<size_bytes> <gbps_best>".
awk -F, -v dir="$tmp" 'NR > 1 {
    label = $2
    if ($2 != $3) label = label "(" $3 ")"
    if ($2 !~ /^(pread|pwrite)-/ && $2 != "naive") label = label ", " $5 " thr"
    key = $1 " " label
    if (!(key in file)) {
      n++
      file[key] = sprintf("%s/s%03d.dat", dir, n)
      base = ($2 ~ /^(pread|pwrite)-/ || $2 == "naive") ? 1 : 0
      printf "%s\t%d\t%s\t%s\n", file[key], base, label, $1 > (dir "/series")
    }
    print $4, $7 | ("sort -n > " file[key])
  }
  END { for (k in file) close("sort -n > " file[k]) }' "$csv"
[[ -s $tmp/series ]] || { echo "plot-io.sh: $csv has no results" >&2; exit 1; }

if echo 'set terminal pngcairo' | gnuplot 2>&1 | grep -qi 'unknown\|error'; then
  term=png
else
  term='pngcairo font "sans,10"'
fi
ops=$(cut -f4 "$tmp/series" | sort -u)
nops=$(wc -w <<<"$ops")
width=$((nops > 1 ? 2000 : 1200))

# Binary-unit labels at the measured sizes; x range padded so the end
# tics are inside the plot.
read -r xmin xmax tics < <(awk -F, 'NR > 1 { print $4 }' "$csv" | sort -nu | awk '
  function lab(b) {
    if (b >= 1073741824 && b % 1073741824 == 0) return (b / 1073741824) "G"
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) "M"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) "K"
    return b
  }
  NR == 1 { min = $1 }
  { max = $1; s = s (NR > 1 ? "," : "") "\"" lab($1) "\"" $1 }
  END { print min / 1.4, max * 1.4, s }')

colors=('#1f77b4' '#d62728' '#2ca02c' '#9467bd' '#ff7f0e' '#17becf' '#8c564b'
        '#e377c2' '#7f7f7f' '#bcbd22' '#000000' '#393b79' '#637939' '#8c6d31'
        '#843c39' '#7b4173')
{
  echo "set terminal $term size $width,750"
  echo "set output '$out'"
  echo "set logscale x 2"
  echo "set xrange [$xmin:$xmax]"
  echo "set xtics ($tics)"
  echo "set xlabel 'transfer size'"
  echo "set ylabel 'GB/s (1e9 bytes/s, best sample)'"
  echo "set yrange [0:*]"
  echo "set grid"
  echo "set key outside right top"
  if ((nops > 1)); then
    echo "set multiplot layout 1,$nops title \"$title\""
  fi
  for op in $ops; do
    if ((nops > 1)); then
      echo "set title '$op: $( [[ $op == read ]] && echo 'file -> device' || echo 'device -> file')'"
    else
      # shellcheck disable=SC2028 # \n is for gnuplot
      echo "set title \"$title\\n$op: $( [[ $op == read ]] && echo 'file -> device' || echo 'device -> file')\""
    fi
    plot="plot"
    sep=""
    i=0
    while IFS=$'\t' read -r file base label sop; do
      [[ $sop == "$op" ]] || continue
      if [[ $base == 1 ]]; then
        style="lw 2 dt 2 pt 6"
      else
        style="lw 2 dt 1 pt 7"
      fi
      color=${colors[$((i % ${#colors[@]}))]}
      i=$((i + 1))
      plot+="$sep '$file' using 1:2 with linespoints $style lc rgb '$color' title \"$label\""
      sep=", \\"$'\n'"    "
    done < "$tmp/series"
    echo "$plot"
  done
  if ((nops > 1)); then
    echo "unset multiplot"
  fi
} > "$tmp/plot.gp"

gnuplot "$tmp/plot.gp"
echo "plot-io.sh: wrote $out"
