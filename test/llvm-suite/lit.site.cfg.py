# SPDX-License-Identifier: Apache-2.0
# -*- Python -*-
#
# lit site configuration for LLVM's own libomptarget test suite of LLVM 16,
# 17 or 18 (openmp/libomptarget/test, fetched by tools/llvm-suite/fetch.sh),
# run against one plugin: it sets what that version's lit.site.cfg.in would
# have set from CMake, points the test programs at the stock or our plugin,
# and loads upstream's lit.cfg unchanged.  tools/llvm-suite/run.sh drives it:
#
#   lit --param suite_dir=... --param exec_root=... --param plugin=ours ... \
#       <this directory>
#
# Parameters (--param NAME=VALUE):
#   suite_dir    upstream's test directory, the one holding lit.cfg (required)
#   exec_root    directory for the compiled tests and their output (required)
#   plugin       "ours" or "stock" (required)
#   llvm_version the LLVM whose suite, libomptarget and compiler these are
#                (16, 17 or 18; default 16)
#   triple       offload target (default x86_64-pc-linux-gnu)
#   plugin_dir   our build's library directory (required for "ours"; also
#                kept off LD_LIBRARY_PATH for "stock")
#   llvm_tools   directory with clang, FileCheck and not (default
#                /usr/lib/llvm-<llvm_version>/bin)
#   llvm_lib     directory with libomptarget, libomp and the stock plugins
#                (default /usr/lib/llvm-<llvm_version>/lib)
#   cc, cxx      compilers (default <llvm_tools>/clang-<llvm_version>, and cc
#                in g++ mode)
#   cuda_path    CUDA installation (default /usr/local/cuda), nvptx only
#   cuda_arch    GPU architecture number for upstream's unified-memory
#                feature test (default 90), nvptx only
#   extra_flags  further compiler flags, e.g. the nvptx -Xopenmp-target ones
#   check_lib    test/support/plugin_check.c built as a preloadable library
#                (required): it fails any test program that did not run on
#                the expected plugin
#   check_log    file to which every checked program appends its plugin
#   run_timeout  seconds each test program may run (default 120)

import os
import re
import subprocess
import sys

# triple (without upstream's -LTO / -JIT-LTO suffixes) -> plugin base name:
# the one list of tools/targets/offload-targets.def.
_src_root = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(_src_root, "test", "support"))
from offload_targets import read_offload_targets  # noqa: E402

PLUGIN_NAMES = {t: p for t, (p, _) in read_offload_targets(_src_root).items()}

# Every target upstream's CMake knows (LIBOMPTARGET_ALL_TARGETS); tests name
# them in triple-specific RUN lines, which lit.cfg turns into "echo
# ignored-command" for all but the current one.
ALL_TARGETS = [
    "aarch64-unknown-linux-gnu", "aarch64-unknown-linux-gnu-LTO",
    "amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-LTO",
    "powerpc64le-ibm-linux-gnu", "powerpc64le-ibm-linux-gnu-LTO",
    "powerpc64-ibm-linux-gnu", "powerpc64-ibm-linux-gnu-LTO",
    "x86_64-pc-linux-gnu", "x86_64-pc-linux-gnu-LTO",
    "nvptx64-nvidia-cuda", "nvptx64-nvidia-cuda-LTO", "nvptx64-nvidia-cuda-JIT-LTO",
]


def param(name, default=None):
    value = lit_config.params.get(name, default)
    if value is None:
        lit_config.fatal("llvm-suite: --param %s=... is required" % name)
    return value


suite_dir = os.path.abspath(param("suite_dir"))
exec_root = os.path.abspath(param("exec_root"))
plugin = param("plugin")
llvm_version = int(param("llvm_version", "16"))
if llvm_version not in (16, 17, 18):
    lit_config.fatal("llvm-suite: llvm_version must be 16, 17 or 18, not %d" % llvm_version)
triple = param("triple", "x86_64-pc-linux-gnu")
plugin_dir = lit_config.params.get("plugin_dir", "")
llvm_tools = param("llvm_tools", "/usr/lib/llvm-%d/bin" % llvm_version)
llvm_lib = param("llvm_lib", "/usr/lib/llvm-%d/lib" % llvm_version)
cc = param("cc", os.path.join(llvm_tools, "clang-%d" % llvm_version))
cxx = param("cxx", cc + " --driver-mode=g++")
check_lib = param("check_lib")
run_timeout = int(param("run_timeout", "120"))

upstream_cfg = os.path.join(suite_dir, "lit.cfg")
if not os.path.isfile(upstream_cfg):
    lit_config.fatal("llvm-suite: no lit.cfg in %s (run tools/llvm-suite/fetch.sh)" % suite_dir)
if triple not in ALL_TARGETS:
    lit_config.fatal("llvm-suite: unknown target %s" % triple)
base_triple = re.sub(r"(-JIT)?-LTO$", "", triple)
if base_triple not in PLUGIN_NAMES:
    lit_config.fatal("llvm-suite: no plugin of ours for %s" % triple)
if plugin not in ("ours", "stock"):
    lit_config.fatal("llvm-suite: plugin must be 'ours' or 'stock', not '%s'" % plugin)
# 16 looks for libomptarget.rtl.<name>.nextgen.so first; 17 and 18 know one
# name per plugin.
plugin_file = "libomptarget.rtl.%s%s.so" % (
    PLUGIN_NAMES[base_triple], ".nextgen" if llvm_version == 16 else "")
if plugin == "ours" and not os.path.exists(os.path.join(plugin_dir, plugin_file)):
    lit_config.fatal("llvm-suite: plugin=ours needs plugin_dir, our build's library directory "
                     "with %s; got '%s'" % (plugin_file, plugin_dir))
for path in (check_lib, os.path.join(llvm_tools, "FileCheck"), os.path.join(llvm_tools, "not"),
             cc.split()[0]):
    if not os.path.exists(path):
        lit_config.fatal("llvm-suite: not found: %s" % path)


def compiler_version():
    try:
        out = subprocess.run([cc.split()[0], "-dumpversion"], stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        lit_config.fatal("llvm-suite: cannot run %s: %s" % (cc, exc))
    return out


def omp_header_dir():
    version = compiler_version()
    cand = os.path.join(llvm_lib, "clang", version.split(".")[0], "include")
    if os.path.isfile(os.path.join(cand, "omp.h")):
        return cand
    resource = subprocess.run([cc.split()[0], "-print-resource-dir"], stdout=subprocess.PIPE,
                              universal_newlines=True).stdout.strip()
    return os.path.join(resource, "include")


# What upstream's lit.site.cfg.in sets, with the values its CMake would find
# for a build of libomptarget installed in llvm_lib by the clang of the same
# LLVM.
version = compiler_version()
major, minor = version.split(".")[:2]
config.test_c_compiler = cc
config.test_cxx_compiler = cxx
config.test_compiler_features = [
    "clang", "clang-" + major, "clang-%s.%s" % (major, minor), "clang-" + version
]
config.test_openmp_flags = "-fopenmp -pthread"
config.test_extra_flags = lit_config.params.get("extra_flags", "")
config.cuda_path = lit_config.params.get("cuda_path", "/usr/local/cuda")
config.cuda_libdir = ""
config.cuda_test_arch = lit_config.params.get("cuda_arch", "90")
config.libomptarget_obj_root = exec_root
config.library_dir = llvm_lib
config.omp_header_directory = omp_header_dir()
config.omp_host_rtl_directory = llvm_lib
config.llvm_lib_directory = llvm_lib
config.operating_system = "Linux"
config.libomptarget_all_targets = ALL_TARGETS
config.libomptarget_current_target = triple
config.libomptarget_filecheck = os.path.join(llvm_tools, "FileCheck")
config.libomptarget_not = os.path.join(llvm_tools, "not")
# Debian's libomptarget is a release build: LIBOMPTARGET_DEBUG prints nothing.
config.libomptarget_debug = lit_config.params.get("libomptarget_debug", "0") == "1"
# What 17 and 18 add. OMPT: whether libomptarget was built with it, as its
# export of the tool connector says (Debian's 17 and 18 are).
with open(os.path.join(llvm_lib, "libomptarget.so"), "rb") as runtime:
    config.has_libomptarget_ompt = b"ompt_libomptarget_connect" in runtime.read()
# No GPU libc in Debian, and no Fortran compiler is given to the suite.
config.libomptarget_has_libc = False
config.llvm_enabled_projects = ["clang", "openmp"]
config.test_fortran_compiler = ""
config.bin_llvm_tools_dir = llvm_tools
config.llvm_tools_dir = llvm_tools
# 18 links every test with <llvm_library_intdir>/libomptarget.devicertl.a.
config.llvm_library_dir = llvm_lib
config.llvm_library_intdir = llvm_lib
# 18's unified-memory feature for amdgcn looks at the first architecture.
config.amdgpu_test_arch = lit_config.params.get("amdgpu_arch", "")
if llvm_version == 17:
    # 17's lit.cfg uses lit's LLVM helpers (tool substitutions), which its
    # lit.site.cfg.in sets up.
    import lit.llvm

    lit.llvm.initialize(lit_config, config)

# Which plugin the test programs load. libomptarget dlopens
# libomptarget.rtl.<name>.nextgen.so (16) or libomptarget.rtl.<name>.so (17,
# 18, through libLLVM, whose RUNPATH does not reach the LLVM directory) by
# name, so the first directory on LD_LIBRARY_PATH that has one wins: ours
# puts our build's first; stock has only the LLVM directory (and nothing
# inherited that is our build's).
real_plugin_dir = os.path.realpath(plugin_dir) if plugin_dir else None
inherited = [
    d for d in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
    if d and os.path.realpath(d) != real_plugin_dir
]
ld_path = ([plugin_dir] if plugin == "ours" else []) + [llvm_lib] + inherited
config.environment["LD_LIBRARY_PATH"] = os.pathsep.join(ld_path)

# The proof of the plugin in every test program (test/support/plugin_check.c):
# preloaded into every process of the test, judging only those that loaded
# libomptarget.
config.environment["LD_PRELOAD"] = os.path.abspath(check_lib)
config.environment["OFFLOADIO_EXPECT_PLUGIN"] = PLUGIN_NAMES[base_triple]
config.environment["OFFLOADIO_EXPECT_PLUGIN_DIR"] = plugin_dir if plugin == "ours" else llvm_lib
check_log = lit_config.params.get("check_log")
if check_log:
    config.environment["OFFLOADIO_PLUGIN_CHECK_LOG"] = os.path.abspath(check_log)

lit_config.load_config(config, upstream_cfg)

# A hung test program (a deadlocked plugin) must not stall the gate: every
# program run goes through coreutils' timeout, which exits 124 when it hits
# the limit and otherwise passes the program's status or signal on (so
# "%not --crash" still sees a crash). lit's own --timeout needs psutil,
# which the GPU machine may lack.
run_key = "%libomptarget-run-" + triple
for i, (key, value) in enumerate(config.substitutions):
    if key == run_key and value == "%t":
        config.substitutions[i] = (key, "timeout %d %%t" % run_timeout)
        break
else:
    lit_config.fatal("llvm-suite: upstream lit.cfg has no '%s' -> '%%t' substitution" % run_key)
