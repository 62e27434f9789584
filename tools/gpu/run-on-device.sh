#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One build-test-benchmark round on the NVIDIA machine (device tool), from the
# repository root there, for libomptarget OFFLOADIO_LLVM_VERSION (16, the
# default, or 18). Needs .pack/llvm<version>.tar.xz (LLVM 16:
# pack-llvm16-runtime.sh --toolchain; 17/18: tools/gpu/pack-llvm-runtime.sh
# N OUT --toolchain, in the trixie root) and .pack/build-llvm<version>.tar.xz
# (tools/gpu/pack-build.sh on a build for that version) carried.
# Writes logs to $OUT (or /tmp/out). Steps: conformance, lit nvptx64, the
# memcpy benchmark beside the stock plugin, the file benchmark; on request
# (STEPS) the kernel, LLVM-suite, disk, checkpoint (ckpt), ceiling
# (staged-copy ceilings by thread count, run-ceiling-bench.sh), mproc
# (MPROC_RANKS processes, 4 by default, on device MPROC_DEVICE, 0 by default,
# or "rank" for one process per GPU; tools/gpu/mproc.sh) and multi (every
# GPU of the machine at once beside one alone: locked and pageable copies,
# page-cached file reads, one batch across devices, a peer copy;
# tools/gpu/multi-device-bench.c, MULTI_MIB per GPU, 4096 by default; then
# one checkpoint loaded onto one GPU and split over all of them) and
# safetensors (the reference implementation's files written from torch
# tensors in GPU memory, loaded by ours into the GPU, and ours read by torch
# into GPU memory: tools/trixie/safetensors-compat.sh) and python (the
# Python package's tests, test/python, with torch CUDA tensors; the LLVM 16
# pack, whose image library has an nvptx64 image) steps.
set -uo pipefail
root=$(pwd)
out=${OUT:-/tmp/out}
steps=${STEPS:-conf,lit,memcpy,io}
version=${OFFLOADIO_LLVM_VERSION:-16}
# shellcheck source=tools/llvm-suite/version.sh
source tools/llvm-suite/version.sh
llvm_suite_facts "$version" || exit 1
export OFFLOADIO_LLVM_VERSION=$version
# The packed LLVM and our packed build, one folder per version so that
# rounds of two versions on one warm machine do not mix plugins.
llvm=/opt/llvm$version
inst=/opt/offload-io-$version
clang=$llvm/bin/clang-$version
mkdir -p "$out" "$llvm" "$inst/lib"
# A warm machine keeps what an earlier call of this lease unpacked: a
# version whose packs are not carried this time runs from there (at most
# 64 MiB travel per call, less than two LLVMs).
if [[ -e .pack/llvm$version.tar.xz ]]; then
  tar xJf ".pack/llvm$version.tar.xz" -C "$llvm"
  tar xJf ".pack/build-llvm$version.tar.xz" -C "$inst"
elif [[ ! -x $clang || ! -e $inst/bin/ConformanceTest ]]; then
  echo "run-on-device: .pack/llvm$version.tar.xz not carried and LLVM $version not unpacked here before" >&2
  exit 1
fi
# LLVM 17's and 18's suites look for the nvptx device runtime in
# <library dir>/DeviceRTL, where an LLVM build tree keeps it.
ln -sfn . "$llvm/lib/DeviceRTL"
export PATH=$llvm/bin:/usr/local/cuda/bin:$PATH
# clang itself needs libraries from the tarball (libicuuc).
export LD_LIBRARY_PATH=$llvm/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "LLVM $version" > "$out/gpu.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee -a "$out/gpu.txt"
nproc >> "$out/gpu.txt"

if [[ $steps == *conf* ]]; then
  echo "== conformance (cuda)"
  OFFLOADIO_CONFORMANCE_PLUGIN_DIR=$inst/lib OFFLOADIO_CONFORMANCE_PLUGINS=cuda timeout 120 "$inst/bin/ConformanceTest" 2>&1 | tail -15
fi 2>&1 | tee "$out/conformance.log"

if [[ $steps == *lit* ]]; then
  mkdir -p /tmp/lit/test /tmp/lit/include
  # The build's generated headers, where the lit configuration looks.
  cp "$inst"/include/*.h /tmp/lit/include/
  sed -e "s|@PROJECT_SOURCE_DIR@|$root|" -e 's|@PROJECT_BINARY_DIR@|/tmp/lit|' \
      -e "s|@CMAKE_LIBRARY_OUTPUT_DIRECTORY@|$inst/lib|" \
      -e "s|@LLVM_TOOLS_BINARY_DIR@|$llvm/bin|" -e "s|@LLVM_LIBRARY_DIR@|$llvm/lib|" \
      -e "s|@OFFLOADIO_CLANG@|$clang|" \
      -e "s|@OFFLOADIO_LLVM_ABI@|$version|" -e "s|@OFFLOADIO_PLUGIN_FILE_SUFFIX@|$llvm_plugin_suffix|" \
      -e 's|@[A-Z_]*@||g' \
      test/lit.site.cfg.py.in > /tmp/lit/test/lit.site.cfg.py
  echo "== lit nvptx64-nvidia-cuda"
  # In the background, so that a run past LIT_TIMEOUT says which test
  # programs were still running (and for how long) before it is stopped.
  python3 "$llvm/lit/lit.py" -sv -j12 --time-tests --param target=nvptx64-nvidia-cuda \
    /tmp/lit/test > /tmp/lit.out 2>&1 &
  lit_pid=$!
  for ((waited = 0; waited < ${LIT_TIMEOUT:-300}; waited += 5)); do
    kill -0 "$lit_pid" 2>/dev/null || break
    sleep 5
  done
  if kill -0 "$lit_pid" 2>/dev/null; then
    echo "lit: still running after ${LIT_TIMEOUT:-300} s; the test programs running now (seconds, command):"
    ps -eo etimes=,args= | grep -E "/Output/|FileCheck" | grep -v grep | sort -rn | head -20
    # Where each stuck program's threads wait: with gdb a backtrace of
    # each, else their names and kernel wait channels.
    for pid in $(pgrep -f "/tmp/lit/test/.*/Output/.*[.]tmp" | head -4); do
      echo "-- $(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-200)"
      if command -v gdb >/dev/null; then
        timeout 60 gdb -p "$pid" -batch -ex "thread apply all bt 12" 2>/dev/null |
          grep -E "^Thread|^#" | cut -c1-180 | head -120
      else
        for t in /proc/"$pid"/task/*; do
          echo "   $(cat "$t/comm") $(cat "$t/wchan" 2>/dev/null)"
        done
      fi
    done
    kill "$lit_pid" 2>/dev/null; pkill -P "$lit_pid"; pkill -f "/tmp/lit/test/.*/Output/"
  fi
  wait "$lit_pid" 2>/dev/null
  # The summary, or everything after the last test when lit itself failed.
  grep -E "^(FAIL|XPASS|UNRESOLVED)|Passed|Failed|Unsupported|Testing Time|^ *[0-9.]+s: " /tmp/lit.out | tail -40 |
    grep . || tail -30 /tmp/lit.out
  cp /tmp/lit.out "$out/lit-full.log"
fi 2>&1 | tee "$out/lit.log"

if [[ $steps == *memcpy* ]]; then
  echo "== memcpy benchmark, ours and stock, 2 GiB"
  OFFLOADIO_BUILD_DIR=$inst CLANG=$llvm/bin/clang LLVM_LIB=$llvm/lib \
    timeout 200 bash tools/bench/run-memcpy-bench.sh --target nvptx64-nvidia-cuda 2>&1 | tail -40
  # The floor under the small-operation figures: the same operations on the
  # plain driver API, in the same run.
  "$clang" -O2 -I/usr/local/cuda/include tools/gpu/cuda-latency.c -o /tmp/cuda-latency -ldl &&
    timeout 60 /tmp/cuda-latency 50000
  # The small operations again with our plugin alone: kernel launches
  # replayed from graphs or not, and where the time goes (the plugin's own
  # share per entry point; the rest is libomptarget's and the program's).
  echo "== small operations, ours: graphs off, completion flag off, both on, then the profile"
  for cfg in OFFLOADIO_CUDA_GRAPHS=off OFFLOADIO_CUDA_COMPLETION_FLAG=off \
      "OFFLOADIO_CUDA_GRAPHS=on OFFLOADIO_CUDA_COMPLETION_FLAG=on" OFFLOADIO_PROFILE=1; do
    echo "-- $cfg"
    env $cfg LD_LIBRARY_PATH="$inst/lib:$llvm/lib" timeout 60 \
      "$inst/tools-bench/memcpy-bench-cuda" --size 64M --repeat 1 2>&1 |
      grep -E "^(64-byte|empty target)|profile: (entry|launch_kernel|synchronize|data_submit|data_retrieve)"
  done
fi 2>&1 | tee "$out/memcpy.log"

if [[ $steps == *kernels* ]]; then
  # Built for nvptx64 only, with the packed clang: the GPU is device 0.
  echo "== kernel benchmark, ours and stock (generic, reduction, STREAM 2^27 doubles)"
  OFFLOADIO_BUILD_DIR=$inst CLANG=$llvm/bin/clang LLVM_LIB=$llvm/lib \
    STOCK_LIB=$llvm/lib timeout 300 bash tools/bench/run-kernel-bench.sh \
    --target nvptx64-nvidia-cuda
fi 2>&1 | tee "$out/kernels.log"

if [[ $steps == *io* ]]; then
  echo "== file -> device benchmark (page-cached), ompx-io bench"
  export LD_LIBRARY_PATH=$inst/lib:$LD_LIBRARY_PATH
  # The host plugin's 4 devices come first (0-3): the GPU is device 4,
  # which also exercises device numbering across plugins.
  gpu=${OMPX_IO_BENCH_DEVICE:-4}
  $inst/bin/ompx-io info 2>&1 | grep -A8 "^Device $gpu"
  timeout 240 $inst/bin/ompx-io bench --device "$gpu" --sizes 256M,4G \
    --threads 4,8,16 --paths auto,staged --write --repeat 2 --csv "$out/io.csv" 2>&1 | tail -30
fi 2>&1 | tee "$out/io.log"

if [[ $steps == *safetensors* ]]; then
  echo "== safetensors with torch device tensors, both ways"
  gpu=${OMPX_IO_BENCH_DEVICE:-4}
  LD_LIBRARY_PATH=$inst/lib:$llvm/lib "$inst/bin/ompx-io" info 2>&1 | grep -A2 "^Device $gpu"
  OFFLOADIO_LLVM_LIB=$llvm/lib OFFLOADIO_COMPAT_FRAMEWORK=torch timeout 240 \
    bash tools/trixie/safetensors-compat.sh "$inst" "$gpu"
fi 2>&1 | tee "$out/safetensors.log"

if [[ $steps == *python* ]]; then
  echo "== python: offload_io with torch CUDA tensors (test/python)"
  LD_LIBRARY_PATH=$llvm/lib OFFLOAD_IO_TEST_REQUIRE_TORCH_CUDA=1 PYTHONPATH=$inst/python \
    timeout 240 python3 -m unittest discover -s test/python -v 2>&1 | tail -60
  echo "== python: a 4 GiB checkpoint loaded into the GPU from Python, beside C and the reference"
  LD_LIBRARY_PATH=$llvm/lib PYTHONPATH=$inst/python timeout 240 python3 \
    tools/bench/python-load-bench.py --device cuda:0 --total 4G \
    --tool "$inst/bin/offloadio-checkpoint" 2>&1 | tail -8
fi 2>&1 | tee "$out/python.log"

if [[ $steps == *ckpt* ]]; then
  # A safetensors checkpoint of about 2,000 tensors (CKPT_TOTAL, 8 GiB by
  # default) saved and loaded three ways, from the page cache and from disk
  # with O_DIRECT; one file, on the disk, removed afterwards. Built for
  # nvptx64 only: the GPU is device 0.
  echo "== checkpoint benchmark, ${CKPT_TOTAL:-8G}"
  OFFLOADIO_BUILD_DIR=$inst CLANG=$llvm/bin/clang LLVM_LIB=$llvm/lib \
    timeout 540 bash tools/bench/run-checkpoint-bench.sh --target nvptx64-nvidia-cuda \
    --total "${CKPT_TOTAL:-8G}" --repeat "${CKPT_REPEAT:-2}" --odirect \
    --file /root/offload-io-checkpoint.safetensors
fi 2>&1 | tee "$out/ckpt.log"

if [[ $steps == *ceiling* ]]; then
  # Where a staged copy's time goes: the host's copy rates by thread count,
  # the link (pinned DMA), and our pageable copies (CEIL_SIZE, 2 GiB) and
  # page-cached file reads (CEIL_FILE_SIZE, 4 GiB) by thread count, beside
  # the stock plugin's pageable copies. CEIL_CONFIGS: ';'-separated engine
  # settings to run the plugin sweeps under as well ("VAR=VALUE ..."),
  # without the host copy rates again (OFFLOADIO_PROFILE=1 there prints
  # where the copy threads' time goes). Then, unless CEIL_HAND=0, the
  # same file read by a hand-written loop of the driver API alone (pread
  # into two 2 MiB pinned buffers per thread, each DMAed on the thread's
  # stream: tools/gpu/mapped-read-probe.c, mode 2) at the same thread
  # counts: what the staged read's design reaches without the engine; and
  # the DMAs alone out of those buffers (mode 6): what the link carries in
  # 2 MiB pieces.
  echo "== staged-copy ceilings by thread count"
  # Plotted here when the machine has gnuplot; else from the CSV later
  # (run-ceiling-bench.sh --replot).
  IFS=';' read -ra extra <<<"${CEIL_CONFIGS:-}"
  n=0
  for cfg in "" "${extra[@]}"; do
    echo "-- engine settings: ${cfg:-defaults}"
    opts=(--csv "$out/ceiling$n.csv")
    if command -v gnuplot >/dev/null; then
      opts+=(--plot "$out/ceiling$n.png")
    fi
    if ((n)); then
      opts+=(--skip-host)
    fi
    env $cfg OFFLOADIO_BUILD_DIR=$inst CLANG=$llvm/bin/clang \
      LLVM_LIB=$llvm/lib timeout 400 bash tools/bench/run-ceiling-bench.sh \
      --target nvptx64-nvidia-cuda --size "${CEIL_SIZE:-2G}" \
      --file-size "${CEIL_FILE_SIZE:-4G}" --repeat 3 \
      --threads "${CEIL_THREADS:-1,2,4,8,12,16}" "${opts[@]}" | grep -v '^-- \|^plugin: '
    n=$((n + 1))
  done
  if [[ ${CEIL_HAND:-1} != 0 ]]; then
    echo "-- a hand-written pread + DMA loop, 2 MiB buffers, two per thread; the DMAs alone"
    file_mib=${CEIL_FILE_SIZE:-4G}
    case $file_mib in
    *[Gg]) file_mib=$((${file_mib%[Gg]} * 1024)) ;;
    *[Mm]) file_mib=${file_mib%[Mm]} ;;
    esac
    clang -O2 tools/gpu/mapped-read-probe.c -o /tmp/hand-loop -ldl -lpthread &&
      PROBE_MODES=26 PROBE_READ_MIB=2 timeout 300 /tmp/hand-loop /tmp/hand-loop.dat \
        "$file_mib" 2 "${CEIL_THREADS:-1,2,4,8,12,16}"
    rm -f /tmp/hand-loop.dat
  fi
fi 2>&1 | tee "$out/ceiling.log"

if [[ $steps == *mproc* ]]; then
  # MPROC_DEVICE=rank: rank r uses GPU r (one process per GPU).
  echo "== ${MPROC_RANKS:-4} processes on device ${MPROC_DEVICE:-0} (no MPI): data and aggregate rates"
  "$clang" -O2 -fopenmp -fopenmp-targets=nvptx64-nvidia-cuda \
    -Xopenmp-target=nvptx64-nvidia-cuda -march=sm_90 --cuda-path=/usr/local/cuda \
    --libomptarget-nvptx-bc-path=$llvm/lib -Wno-unknown-cuda-version \
    -Iinclude tools/gpu/mproc-shards.c -o /tmp/mproc-shards \
    -L$inst/lib -lompx_io -L$llvm/lib &&
    LD_LIBRARY_PATH=$inst/lib:$LD_LIBRARY_PATH timeout 300 \
      bash tools/gpu/mproc.sh /tmp/mproc-shards /tmp/mproc "${MPROC_MIB:-1024}" \
      "${MPROC_DEVICE:-0}" "${MPROC_RANKS:-4}"
fi 2>&1 | tee "$out/mproc.log"

if [[ $steps == *llvm* ]]; then
  # The LLVM's own libomptarget suite (packed by pack-build.sh into
  # $inst/llvm-suite/test) with the stock CUDA plugin and with
  # ours; fails when a test passing with stock does not pass with ours.
  # Results, lit logs and the plugin check's lists go to $out/llvm-suite;
  # the compiled tests stay here.
  echo "== LLVM $version libomptarget suite, nvptx64-nvidia-cuda: stock plugin and ours"
  OFFLOADIO_PLUGIN_DIR=$inst/lib OFFLOADIO_LLVM_SUITE_DIR=$inst/llvm-suite/test \
    OFFLOADIO_LLVM_SUITE_OUT="$out/llvm-suite" OFFLOADIO_LLVM_SUITE_WORK=/tmp/llvm-suite \
    OFFLOADIO_LLVM_TOOLS=$llvm/bin OFFLOADIO_LLVM_LIB=$llvm/lib \
    OFFLOADIO_CLANG=$clang OFFLOADIO_LIT=$llvm/lit/lit.py \
    OFFLOADIO_CUDA_PATH=/usr/local/cuda OFFLOADIO_OFFLOAD_ARCH=sm_90 \
    timeout 540 bash tools/llvm-suite/gate.sh nvptx64-nvidia-cuda
fi 2>&1 | tee "$out/llvm.log"

if [[ $steps == *disk* ]]; then
  echo "== disk benchmark (O_DIRECT, caches dropped) and two-device checks"
  "$clang" -O2 -fopenmp -fopenmp-targets=nvptx64-nvidia-cuda \
    -Xopenmp-target=nvptx64-nvidia-cuda -march=sm_90 --cuda-path=/usr/local/cuda \
    --libomptarget-nvptx-bc-path=$llvm/lib -Wno-unknown-cuda-version \
    -Iinclude tools/bench/disk-bench.c -o /tmp/disk-bench \
    -L$inst/lib -lompx_io -L$llvm/lib
  # Only the nvptx image: the GPUs are devices 0.. here.
  # DISK_EXTRA_CONFIGS: more engine settings to compare, ';'-separated, each
  # a list of VAR=VALUE words ("OMPX_IO_THREADS=2 OMPX_IO_CHUNK_SIZE=64M;...").
  IFS=';' read -ra extra <<<"${DISK_EXTRA_CONFIGS:-}"
  for cfg in "" "${extra[@]}"; do
    echo "-- engine settings: ${cfg:-defaults}"
    env $cfg LD_LIBRARY_PATH=$inst/lib:$LD_LIBRARY_PATH timeout $((80 + 40 * ${DISK_ROUNDS:-3})) \
      /tmp/disk-bench /root/offload-io-disk.dat ${DISK_MIB:-8192} 0 ${DISK_THREADS:-8} ${DISK_ROUNDS:-3}
  done
fi 2>&1 | tee "$out/disk.log"

if [[ $steps == *multi* ]]; then
  # Built for nvptx64 only: the GPUs are devices 0.., all of them used. Needs
  # two or more (exits 2 otherwise); MULTI_MIB per GPU, the file holds one
  # slice per GPU and is removed afterwards.
  echo "== multi-device benchmark: every GPU at once beside one alone"
  "$clang" -O2 -fopenmp -fopenmp-targets=nvptx64-nvidia-cuda \
    -Xopenmp-target=nvptx64-nvidia-cuda -march=sm_90 --cuda-path=/usr/local/cuda \
    --libomptarget-nvptx-bc-path=$llvm/lib -Wno-unknown-cuda-version \
    -Iinclude tools/gpu/multi-device-bench.c -o /tmp/multi-device-bench \
    -L$inst/lib -lompx_io -L$llvm/lib &&
    LD_LIBRARY_PATH=$inst/lib:$LD_LIBRARY_PATH timeout 300 \
      /tmp/multi-device-bench /root/offload-io-multi.dat "${MULTI_MIB:-4096}"
  rm -f /root/offload-io-multi.dat
  # One checkpoint (MULTI_CKPT_TENSORS of up to 64 MiB, about 16 GiB by
  # default) loaded from the page cache by one call onto the first GPU,
  # then split over every GPU. The tool carries the host plugin's image
  # too: the GPUs are devices MULTI_CKPT_FIRST (4) and up.
  gpus=$(nvidia-smi -L | wc -l)
  first=${MULTI_CKPT_FIRST:-4}
  all=$(seq -s, "$first" $((first + gpus - 1)))
  ckpt=/root/offload-io-multi.safetensors
  echo "== a checkpoint loaded by one call onto device $first, then split over $all"
  export LD_LIBRARY_PATH=$inst/lib:$LD_LIBRARY_PATH
  "$inst/bin/offloadio-checkpoint" save "$ckpt" --tensors "${MULTI_CKPT_TENSORS:-512}" \
    --max-bytes 64M --device "$first" | tail -1
  for devices in "$first" "$all" "$first" "$all"; do
    "$inst/bin/offloadio-checkpoint" load "$ckpt" --devices "$devices" | tail -1
  done
  rm -f "$ckpt"
fi 2>&1 | tee "$out/multi.log"
