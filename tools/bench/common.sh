# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the run-*-bench.sh scripts: toolchain, build directory, offload
# target flags, and running a program with our plugin or the stock one.
#
# Environment (all optional):
#   OFFLOADIO_BUILD_DIR  offload-io build directory (default <repo>/build);
#                        our plugins and libompx_io are in its lib/
#   OFFLOADIO_LLVM_VERSION  the libomptarget (16, 17 or 18) the build serves
#                        (default: what the build was configured for, else 16)
#   CLANG                OpenMP offload compiler (default clang-<version>)
#   LLVM_LIB             that LLVM's library directory: libomp, libomptarget
#                        and the device bitcode (default: the lib/ beside
#                        CLANG's bin/ if it has libomptarget.so, else
#                        /usr/lib/llvm-<version>/lib)
#   STOCK_LIB            where its stock plugins are (default LLVM_LIB)
#   CUDA_PATH            CUDA installation for nvptx64 (default /usr/local/cuda)
#   OFFLOAD_ARCH         GPU architecture (default sm_90 / gfx90a)
# On the GPU machine the toolchain lives in /opt/llvm<version>:
#   CLANG=/opt/llvm16/bin/clang LLVM_LIB=/opt/llvm16/lib

bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tools/targets/offload-targets.sh
source "$bench_root/tools/targets/offload-targets.sh"
# shellcheck source=tools/llvm-suite/version.sh
source "$bench_root/tools/llvm-suite/version.sh"
build=${OFFLOADIO_BUILD_DIR:-$bench_root/build}
BENCH_LLVM_VERSION=$(llvm_suite_version "$build")
llvm_suite_facts "$BENCH_LLVM_VERSION" || exit 1
# What comes before ".so" in a plugin's file name, ours and stock alike.
PLUGIN_SUFFIX=$llvm_plugin_suffix
CLANG=${CLANG:-clang-$BENCH_LLVM_VERSION}
if [[ -z ${LLVM_LIB:-} ]]; then
  # Next to the compiler (/opt/llvm16/bin -> /opt/llvm16/lib), else Debian's.
  LLVM_LIB=/usr/lib/llvm-$BENCH_LLVM_VERSION/lib
  if clang_path=$(command -v "$CLANG" 2>/dev/null) &&
    clang_dir=$(dirname "$(readlink -f "$clang_path")") &&
    [[ -e $clang_dir/../lib/libomptarget.so ]]; then
    LLVM_LIB=$(cd "$clang_dir/../lib" && pwd)
  fi
fi
STOCK_LIB=${STOCK_LIB:-$LLVM_LIB}
CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}

bench_die() {
  echo "$(basename "$0"): error: $*" >&2
  exit 1
}

# bench_set_target TRIPLE: sets TARGET, TARGET_FLAGS (array) and PLUGIN (the
# plugin file's short name, from tools/targets/offload-targets.sh).
bench_set_target() {
  local triple=$1
  PLUGIN=$(offload_target_plugin "$triple") ||
    bench_die "unsupported --target '$triple' ($(offload_target_triples | paste -sd, | sed 's/,/, /g'))"
  TARGET=$triple
  case $triple in
  x86_64-pc-linux-gnu)
    TARGET_FLAGS=(-fopenmp-targets=x86_64-pc-linux-gnu)
    ;;
  nvptx64-nvidia-cuda)
    TARGET_FLAGS=(-fopenmp-targets=nvptx64-nvidia-cuda
      -Xopenmp-target=nvptx64-nvidia-cuda "-march=${OFFLOAD_ARCH:-sm_90}"
      "--cuda-path=$CUDA_PATH" "--libomptarget-nvptx-bc-path=$LLVM_LIB"
      -Wno-unknown-cuda-version)
    ;;
  amdgcn-amd-amdhsa)
    TARGET_FLAGS=(-fopenmp-targets=amdgcn-amd-amdhsa
      -Xopenmp-target=amdgcn-amd-amdhsa "-march=${OFFLOAD_ARCH:-gfx90a}")
    ;;
  *)
    bench_die "no compile flags for --target '$triple' in tools/bench/common.sh"
    ;;
  esac
}

# bench_check_setup: the toolchain and both plugins are where we expect.
bench_check_setup() {
  command -v "$CLANG" >/dev/null || bench_die "compiler '$CLANG' not found (set CLANG)"
  [[ -e $LLVM_LIB/libomptarget.so ]] ||
    bench_die "no libomptarget.so in LLVM_LIB=$LLVM_LIB (set LLVM_LIB)"
  local file=libomptarget.rtl.$PLUGIN$PLUGIN_SUFFIX.so
  [[ -e $build/lib/$file ]] ||
    bench_die "our plugin $build/lib/$file is missing; build first (OFFLOADIO_BUILD_DIR=$build)"
  [[ -e $STOCK_LIB/$file ]] ||
    bench_die "no stock plugin $file (LLVM $BENCH_LLVM_VERSION) in STOCK_LIB=$STOCK_LIB"
}

# bench_compile SRC OUT [EXTRA FLAGS...]
bench_compile() {
  local src=$1 out=$2
  shift 2
  mkdir -p "$(dirname "$out")"
  "$CLANG" -O2 -Wall -pthread -fopenmp "${TARGET_FLAGS[@]}" \
    -DBENCH_TARGET="\"$TARGET\"" -I"$bench_root/tools/bench" "$@" \
    "$src" -o "$out" -L"$LLVM_LIB" -Wl,-rpath,"$LLVM_LIB" -ldl ||
    bench_die "compiling $src failed"
}

# bench_run ours|stock LOG PROGRAM [ARGS...]: runs with exactly our plugin
# directory (then LLVM_LIB) or exactly STOCK_LIB on the library path, tees
# the output into LOG, and checks which plugin the program reports.
bench_run() {
  local which=$1 log=$2
  shift 2
  local ld
  if [[ $which == ours ]]; then
    ld=$build/lib:$LLVM_LIB
  else
    ld=$STOCK_LIB
  fi
  echo "-- $which plugin: LD_LIBRARY_PATH=$ld"
  (
    r=0
    env LD_LIBRARY_PATH="$ld" "$@" 2>&1 || r=$?
    echo "$r" >"$log.rc"
  ) | tee "$log"
  local rc
  rc=$(cat "$log.rc")
  local plugin_line
  plugin_line=$(grep -m1 '^plugin: ' "$log" || true)
  if [[ $which == ours && $plugin_line != *"(offload-io)"* ]]; then
    bench_die "the 'ours' run did not use the offload-io plugin ($plugin_line)"
  fi
  if [[ $which == stock && $plugin_line != *"(stock)"* ]]; then
    bench_die "the 'stock' run did not use the stock plugin ($plugin_line)"
  fi
  return "$rc"
}

# bench_result LOG KEY: the value of KEY=... on the RESULT line of LOG.
bench_result() {
  grep -m1 '^RESULT ' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# bench_ratio A B: A / B with 2 decimals, or "n/a".
bench_ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'
}

# bench_stock_refusal TRIPLE: prints why the stock plugin of this LLVM
# cannot run programs for TRIPLE built here, or nothing. LLVM 18's stock
# CUDA plugin reads a cubin's SM from e_flags in the layout before ELF ABI 8;
# ptxas of CUDA 13 writes ABI 8 for every SM, so stock 18 refuses every
# image (LLVM issue 159088), and a header rewritten to the old layout is
# refused by the driver.
bench_stock_refusal() {
  if [[ $1 == nvptx64-nvidia-cuda && $BENCH_LLVM_VERSION == 18 ]]; then
    local cuda
    cuda=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$CUDA_PATH/include/cuda.h" 2>/dev/null)
    if ((${cuda:-0} >= 13000)); then
      echo "LLVM 18's stock CUDA plugin refuses CUDA $((cuda / 1000))'s cubins (ELF ABI 8 flags, LLVM issue 159088)"
    fi
  fi
}

# bench_side_by_side NAME TRIPLE [ARGS...]: compiles tools/bench/NAME.c for
# TRIPLE once, runs it with our plugin and with the stock one (ARGS passed
# on) unless bench_stock_refusal names a reason, and sets OURS_LOG and
# STOCK_LOG to the two logs (STOCK_LOG empty when stock could not run).
bench_side_by_side() {
  local name=$1 triple=$2
  shift 2
  local out=$build/tools-bench
  local exe=$out/$name-$PLUGIN
  echo "== compiling $name for $triple"
  bench_compile "$bench_root/tools/bench/$name.c" "$exe"
  echo "== $name ($triple, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
  OURS_LOG=$out/$name.ours.log
  STOCK_LOG=$out/$name.stock.log
  bench_run ours "$OURS_LOG" "$exe" "$@" || bench_die "$name failed with our plugin"
  local refusal
  refusal=$(bench_stock_refusal "$triple")
  if [[ -n $refusal ]]; then
    echo "-- stock plugin: not run: $refusal"
    : >"$STOCK_LOG"
    return 0
  fi
  bench_run stock "$STOCK_LOG" "$exe" "$@" || bench_die "$name failed with the stock plugin"
}

# bench_row WIDTH LABEL KEY: one summary line, ours, stock and their ratio,
# from the RESULT lines of OURS_LOG and STOCK_LOG.
bench_row() {
  local a b
  a=$(bench_result "$OURS_LOG" "$3")
  b=$(bench_result "$STOCK_LOG" "$3")
  printf "%-${1}s %10s %10s %11s\n" "$2" "$(bench_fixed "$a")" "$(bench_fixed "$b")" \
    "$(bench_ratio "$a" "$b")"
}

# bench_fixed X: X with 3 decimals, or "n/a" when there is none.
bench_fixed() {
  if [[ -z $1 ]]; then
    echo n/a
  else
    printf "%.3f" "$1"
  fi
}

# bench_ompx_io_program NAME FILE [--target TRIPLE] [ARGS...]: compiles
# tools/bench/NAME.c, a program of libompx_io, for TRIPLE (default
# x86_64-pc-linux-gnu) and runs it with our plugin and libompx_io, given
# --file $build/tools-bench/FILE and ARGS; its log is
# $build/tools-bench/NAME.ours.log.
bench_ompx_io_program() {
  local name=$1 file=$2
  shift 2
  local triple
  triple=$(offload_host_triple)
  if [[ ${1:-} == --target ]]; then
    triple=${2:?--target needs a triple}
    shift 2
  fi
  bench_set_target "$triple"
  command -v "$CLANG" >/dev/null || bench_die "compiler '$CLANG' not found (set CLANG)"
  [[ -e $build/lib/libomptarget.rtl.$PLUGIN$PLUGIN_SUFFIX.so && -e $build/lib/libompx_io.so ]] ||
    bench_die "our $PLUGIN plugin or libompx_io is missing from $build/lib: build first (OFFLOADIO_BUILD_DIR=$build)"
  local out=$build/tools-bench
  local exe=$out/$name-$PLUGIN
  echo "== compiling $name for $triple"
  bench_compile "$bench_root/tools/bench/$name.c" "$exe" \
    -I"$bench_root/include" -I"$build/include" -L"$build/lib" -lompx_io \
    -Wl,-rpath,"$build/lib"
  echo "== $name ($triple, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
  bench_run ours "$out/$name.ours.log" "$exe" --file "$out/$file" "$@" ||
    bench_die "$name failed"
}
