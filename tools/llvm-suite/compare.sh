#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The gate of LLVM's libomptarget suite: puts the results of the stock
# plugin and of ours side by side (counts per lit result, then every test
# whose result differs) and fails when a test that passes with the stock
# plugin does not pass with ours. "Passes" is lit's sense: PASS, or XFAIL (a
# failure upstream expects). A test missing from either file, or an empty
# file, fails the gate too: a run that broke must not look like a clean one.
#
#   compare.sh STOCK.results OURS.results [TITLE]
#
# The files are run.sh's: one "<lit result> <test>" line per test. The
# heading names LLVM $OFFLOADIO_LLVM_VERSION (default 16), as gate.sh sets
# it.
set -euo pipefail
if (($# < 2)); then
  echo "usage: compare.sh STOCK.results OURS.results [TITLE]" >&2
  exit 2
fi
stock=$1
ours=$2
title=${3:-$(basename "${stock%.stock.results}")}
for f in "$stock" "$ours"; do
  if [[ ! -s $f ]]; then
    echo "compare.sh: $f is missing or empty: the suite did not run" >&2
    exit 1
  fi
done

awk -v title="$title" -v llvm="${OFFLOADIO_LLVM_VERSION:-16}" '
  function passes(code) { return code == "PASS" || code == "XFAIL" }
  FNR == 1 { side++ }
  {
    code[side, $2] = $1
    count[side, $1]++
    seen[$2] = 1
    codes[$1] = 1
    total[side]++
  }
  END {
    printf "LLVM %s libomptarget suite, %s: stock | ours\n", llvm, title
    n = 0
    for (c in codes) order[++n] = c
    # Fixed order: by name (few entries, an insertion sort will do).
    for (i = 2; i <= n; i++)
      for (j = i; j > 1 && order[j] < order[j - 1]; j--) {
        t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
      }
    for (i = 1; i <= n; i++)
      printf "  %-12s %4d | %d\n", order[i], count[1, order[i]], count[2, order[i]]
    printf "  %-12s %4d | %d\n", "total", total[1], total[2]
    diffs = 0
    bad = 0
    width = 0
    for (t in seen) {
      res[1, t] = ((1, t) in code) ? code[1, t] : "MISSING"
      res[2, t] = ((2, t) in code) ? code[2, t] : "MISSING"
      if (res[1, t] != res[2, t] && length(t) > width) width = length(t)
    }
    for (t in seen) {
      s = res[1, t]
      o = res[2, t]
      if (s == o) continue
      regression = passes(s) && !passes(o) || s == "MISSING"
      line[++diffs] = sprintf("  %-*s  %s | %s%s", width, t, s, o,
                              regression ? "   <- fails the gate" : "")
      bad += regression
    }
    for (i = 2; i <= diffs; i++)
      for (j = i; j > 1 && line[j] < line[j - 1]; j--) {
        t = line[j]; line[j] = line[j - 1]; line[j - 1] = t
      }
    if (diffs) {
      printf "Tests whose result differs (stock | ours):\n"
      for (i = 1; i <= diffs; i++) print line[i]
    } else {
      printf "Every test has the same result with both plugins.\n"
    }
    if (bad) {
      printf "GATE FAILED: %d test(s) pass with the stock plugin and not with ours\n", bad
      exit 1
    }
    printf "Gate passed: every test that passes with the stock plugin passes with ours.\n"
  }' "$stock" "$ours"
