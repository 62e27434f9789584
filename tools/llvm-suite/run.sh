#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs LLVM's own libomptarget test suite of LLVM 16, 17 or 18 (upstream's
# lit.cfg through test/llvm-suite/lit.site.cfg.py) for one offload target
# against one plugin, ours or the stock one, and writes into the output
# directory:
#
#   <triple>.<plugin>.results  one line per test, "<lit result> <test>", sorted
#   <triple>.<plugin>.log      lit's full output, failing tests' commands and
#                              output included
#   <triple>.<plugin>.checked  one line per test program that the plugin check
#                              judged: "<pid> <program> <plugin library>"
#
#   run.sh [--llvm VERSION] TRIPLE ours|stock
#
# VERSION (16, 17 or 18) picks the suite, libomptarget and compiler:
# default $OFFLOADIO_LLVM_VERSION, else the version the build was
# configured for (tools/llvm-suite/version.sh), else 16. 17 and 18 run where
# they are installed, i.e. inside tools/trixie/in-root.sh.
#
# Every process of the tests runs with test/support/plugin_check.c preloaded
# (built here with -DOFFLOADIO_PLUGIN_CHECK_PRELOAD): a test program that did
# not load the triple's plugin from our build (ours) or from the LLVM library
# directory (stock) fails with exit status 97. Exits 0 when the suite ran,
# whatever its tests did; 1 when it could not run or the check never ran.
#
#   OFFLOADIO_BUILD_DIR          our build (default build/); the plugins are
#                                in its lib/
#   OFFLOADIO_PLUGIN_DIR         our plugins, instead of <build>/lib
#   OFFLOADIO_LLVM_SUITE_DIR     upstream's test directory (default: fetch it
#                                with tools/llvm-suite/fetch.sh --llvm VERSION)
#   OFFLOADIO_LLVM_SUITE_OUT     output directory (default <build>/llvm-suite)
#   OFFLOADIO_LLVM_SUITE_WORK    the compiled tests, emptied first (default
#                                <out>/work)
#   OFFLOADIO_LLVM_TOOLS         clang-VERSION, FileCheck, not (default
#                                /usr/lib/llvm-VERSION/bin)
#   OFFLOADIO_LLVM_LIB           libomptarget, libomp and the stock plugins
#                                (default /usr/lib/llvm-VERSION/lib)
#   OFFLOADIO_CLANG              C compiler (default <tools>/clang-VERSION)
#   OFFLOADIO_LIT                lit.py (default
#                                /usr/lib/llvm-VERSION/build/utils/lit/lit.py)
#   OFFLOADIO_CUDA_PATH          CUDA (default /usr/local/cuda), nvptx only
#   OFFLOADIO_OFFLOAD_ARCH       GPU architecture (default sm_90), nvptx only
#   OFFLOADIO_LLVM_SUITE_FLAGS   compiler flags for the target; default for
#                                nvptx64: -Xopenmp-target=... -march=<arch>
#                                --libomptarget-nvptx-bc-path=<llvm lib>;
#                                for amdgcn: -Xopenmp-target=... -march=<arch>
#                                --rocm-device-lib-path=<ROCm device libs>
#   OFFLOADIO_AMDGPU_ARCH        AMD GPU architecture (default gfx90a), amdgcn
#                                only
#   OFFLOADIO_ROCM_DEVICE_LIB_PATH  ROCm device bitcode (default: the first of
#                                /opt/rocm/amdgcn/bitcode and Debian's
#                                /usr/lib/x86_64-linux-gnu/amdgcn/bitcode that
#                                has ocml.bc), amdgcn only
#   OFFLOADIO_HSA_EMU_DIR        for amdgcn: a directory put first on the test
#                                programs' LD_LIBRARY_PATH, where both plugins
#                                find libhsa-runtime64.so (default
#                                <build>/test/hsa-emu, the HSA emulation, when
#                                it was built; empty: the system's runtime);
#                                the LLVM tools folder also goes first on
#                                PATH, for the stock plugin's JIT (lld)
#   OFFLOADIO_LLVM_SUITE_TIMEOUT seconds each test program may run (default 120)
#   OFFLOADIO_LLVM_SUITE_JOBS    lit's -j (default nproc)
#   OFFLOADIO_LLVM_SUITE_FILTER  run only the tests matching this regular
#                                expression (lit's --filter), for diagnosis
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/llvm-suite/version.sh
source "$root/tools/llvm-suite/version.sh"
llvm=
if [[ ${1:-} == --llvm ]]; then
  llvm=${2:?run.sh: --llvm needs a version}
  shift 2
fi
if (($# != 2)) || [[ $2 != ours && $2 != stock ]]; then
  echo "usage: run.sh [--llvm 16|17|18] TRIPLE ours|stock" >&2
  exit 2
fi
triple=$1
plugin=$2
build=${OFFLOADIO_BUILD_DIR:-$root/build}
llvm=${llvm:-$(llvm_suite_version "$build")}
llvm_suite_facts "$llvm"
plugin_dir=${OFFLOADIO_PLUGIN_DIR:-$build/lib}
out=${OFFLOADIO_LLVM_SUITE_OUT:-$build/llvm-suite}
tools=${OFFLOADIO_LLVM_TOOLS:-/usr/lib/llvm-$llvm/bin}
llvm_lib=${OFFLOADIO_LLVM_LIB:-/usr/lib/llvm-$llvm/lib}
cc=${OFFLOADIO_CLANG:-$tools/clang-$llvm}
lit=${OFFLOADIO_LIT:-/usr/lib/llvm-$llvm/build/utils/lit/lit.py}
cuda_path=${OFFLOADIO_CUDA_PATH:-/usr/local/cuda}
arch=${OFFLOADIO_OFFLOAD_ARCH:-sm_90}
timeout_s=${OFFLOADIO_LLVM_SUITE_TIMEOUT:-120}
jobs=${OFFLOADIO_LLVM_SUITE_JOBS:-$(nproc)}
suite=${OFFLOADIO_LLVM_SUITE_DIR:-$(bash "$root/tools/llvm-suite/fetch.sh" --llvm "$llvm")}

if [[ -n ${OFFLOADIO_LLVM_SUITE_FLAGS+set} ]]; then
  flags=$OFFLOADIO_LLVM_SUITE_FLAGS
else
  case $triple in
    nvptx64-nvidia-cuda*)
      flags="-Xopenmp-target=nvptx64-nvidia-cuda -march=$arch"
      flags+=" --libomptarget-nvptx-bc-path=$llvm_lib -Wno-unknown-cuda-version" ;;
    amdgcn-amd-amdhsa*)
      rocm_libs=${OFFLOADIO_ROCM_DEVICE_LIB_PATH:-}
      if [[ -z $rocm_libs ]]; then
        for d in /opt/rocm/amdgcn/bitcode /usr/lib/x86_64-linux-gnu/amdgcn/bitcode; do
          if [[ -e $d/ocml.bc ]]; then
            rocm_libs=$d
            break
          fi
        done
      fi
      flags="-Xopenmp-target=amdgcn-amd-amdhsa -march=${OFFLOADIO_AMDGPU_ARCH:-gfx90a}"
      flags+=${rocm_libs:+ --rocm-device-lib-path=$rocm_libs} ;;
    *) flags="" ;;
  esac
fi
# Both plugins dlopen the HSA runtime by name: for amdgcn the emulation's
# directory goes on LD_LIBRARY_PATH, which the site configuration keeps.
if [[ $triple == amdgcn-amd-amdhsa* ]]; then
  hsa_dir=${OFFLOADIO_HSA_EMU_DIR-}
  if [[ -z ${OFFLOADIO_HSA_EMU_DIR+set} && -e $build/test/hsa-emu/libhsa-runtime64.so.1 ]]; then
    hsa_dir=$build/test/hsa-emu
  fi
  if [[ -n $hsa_dir ]]; then
    export LD_LIBRARY_PATH=$hsa_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  # LLVM 17's and 18's amdgpu plugins compile the IR images of
  # -fopenmp-target-jit programs (upstream's jit/ tests) and link them with
  # the `lld` they find on PATH, as in an LLVM build tree; Debian keeps it
  # in the LLVM tools folder. Without it the stock plugin fails the image
  # and then crashes.
  export PATH=$tools:$PATH
fi

name=$triple.$plugin
work=${OFFLOADIO_LLVM_SUITE_WORK:-$out/work}/$name
results=$out/$name.results
log=$out/$name.log
checked=$out/$name.checked
rm -rf "$work"
rm -f "$results" "$log" "$checked"
mkdir -p "$work" "$out"

check_lib=$work/plugin_check_preload.so
"$cc" -shared -fPIC -O1 -Wall -DOFFLOADIO_PLUGIN_CHECK_PRELOAD \
  "$root/test/support/plugin_check.c" -o "$check_lib"

echo "== LLVM $llvm libomptarget suite: $triple, $plugin plugin ($suite)"
params=(
  --param "suite_dir=$suite" --param "exec_root=$work" --param "plugin=$plugin"
  --param "llvm_version=$llvm" --param "amdgpu_arch=${OFFLOADIO_AMDGPU_ARCH:-gfx90a}"
  --param "triple=$triple" --param "plugin_dir=$plugin_dir"
  --param "llvm_tools=$tools" --param "llvm_lib=$llvm_lib" --param "cc=$cc"
  --param "cuda_path=$cuda_path" --param "cuda_arch=${arch#sm_}"
  --param "extra_flags=$flags" --param "check_lib=$check_lib"
  --param "check_log=$checked" --param "run_timeout=$timeout_s"
)
# lit exits 1 when a test fails; the gate judges the results, not that.
set +e
python3 "$lit" -v -j"$jobs" -o "$work/lit.json" --filter "${OFFLOADIO_LLVM_SUITE_FILTER:-.}" \
  "${params[@]}" "$root/test/llvm-suite" >"$log" 2>&1
lit_status=$?
set -e
if [[ ! -s $work/lit.json ]]; then
  echo "run.sh: lit did not run the suite (exit $lit_status); the end of $log:" >&2
  tail -20 "$log" >&2
  exit 1
fi

python3 - "$work/lit.json" >"$results" <<'EOF'
import json
import sys

# "libomptarget :: <triple> :: api/foo.c" -> "api/foo.c"
tests = json.load(open(sys.argv[1]))["tests"]
for test in sorted(tests, key=lambda t: t["name"]):
    print(test["code"], test["name"].rsplit(" :: ", 1)[-1])
EOF

awk '{ n[$1]++ } END { for (c in n) printf "  %-12s %d\n", c, n[c] }' "$results" | sort
check_failures=$(grep -c "offload-io plugin check: FAILED" "$log" || true)
touch "$checked"
echo "  plugin check: $(wc -l <"$checked") test programs passed it;" \
  "$check_failures reports of a failed check in the log; loaded:"
awk '{ print $3 }' "$checked" | sort | uniq -c | sed 's/^/  /'
echo "  results: $results; lit output: $log"
# Passing tests, yet no program went through the check either way: the
# check was not in force, and the passes prove nothing about the plugin.
if [[ ! -s $checked ]] && ((check_failures == 0)) && grep -q "^PASS " "$results"; then
  echo "run.sh: tests passed but no test program went through the plugin check:" \
    "was $check_lib preloaded?" >&2
  exit 1
fi
