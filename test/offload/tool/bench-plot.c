// ompx-io bench --plot FILE renders the results as a PNG (plot-io.sh) and
// leaves nothing else behind: its own CSV is removed, and with --csv that
// CSV is the one plotted and kept.
//
// REQUIRES: ompx-io-tool, gnuplot
// Not in the sanitizer builds: gnuplot, started by the tool, inherits the
// preloaded sanitizer runtime, whose leak report of gnuplot fails the plot.
// UNSUPPORTED: address-sanitizer, thread-sanitizer
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %ompx-io bench --dir %t.dir --sizes 64K --threads 1 --paths direct \
// RUN:   --repeat 1 --no-naive --plot %t.dir/io.png 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PLOT
// RUN: ls -A %t.dir | FileCheck %s --check-prefix=LEFT
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %ompx-io bench --dir %t.dir --sizes 64K --threads 1 --paths direct \
// RUN:   --repeat 1 --no-naive --csv %t.dir/io.csv --plot %t.dir/io.png 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BOTH
// RUN: ls -A %t.dir | FileCheck %s --check-prefix=BOTH-LEFT

// PLOT: wrote {{.*}}/io.png
// LEFT-NOT: csv
// LEFT: io.png
// LEFT-NOT: {{.}}

// BOTH: wrote {{.*}}/io.csv
// BOTH: wrote {{.*}}/io.png
// BOTH-LEFT: io.csv
// BOTH-LEFT-NEXT: io.png
// BOTH-LEFT-NOT: {{.}}
