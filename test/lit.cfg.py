# SPDX-License-Identifier: Apache-2.0
# -*- Python -*-
#
# lit configuration for the offload-io OpenMP offload tests (test/offload).
#
# Two ways in, the same suite:
#   lit <build>/test                 the generated <build>/test/lit.site.cfg.py
#                                    (test/lit.site.cfg.py.in) loads this file
#   lit test/offload/io/pread-basic.c  from the source tree: lit finds this
#                                    file, which loads the site configuration
#                                    of the build in $OFFLOADIO_BUILD_DIR
#                                    (default: build/ beside test/)
# The site configuration defines
#   config.offloadio_src_root, config.offloadio_obj_root,
#   config.offloadio_plugin_dir, config.offloadio_hsa_emu_dir,
#   config.offloadio_llvm_abi (the libomptarget version the build serves:
#   16, 17 or 18), config.offloadio_plugin_suffix (".nextgen" for 16, else
#   empty), config.llvm_tools_dir, config.llvm_lib_dir, config.clang,
#   config.cuda_path.
#
# Features of the libomptarget version: "llvm-16", "llvm-17" or "llvm-18",
# and "clang-<version>" for the compiler of the same LLVM. Where a test
# checks what libomptarget itself prints, whose prefix changed in 18, its
# CHECK lines say [[LIBOMPTARGET]] and its FileCheck gets
# %libomptarget-prefix-def ("Libomptarget" before 18, "omptarget" from 18 on).
#
# Select the offload target with  lit -Dtarget=<triple> <build>/test
# (default x86_64-pc-linux-gnu).  With -Dcompile_only=1 the tests are only
# built: of each RUN line only the compiles run (test/support/offloadio_lit.py),
# into <build>/test/offload-<triple>-compile-<arch>[+<arch>...], and for
# amdgcn every test that runs on an AMD GPU or on the HSA emulation is
# selected (tools/amdgcn-arch-check.sh builds them for every AMD architecture).
# Environment overrides for the toolchain:
#   OFFLOADIO_CLANG       compiler used for the tests (clang-<version>)
#   OFFLOADIO_CLANGXX     C++ compiler (default: OFFLOADIO_CLANG --driver-mode=g++)
#   OFFLOADIO_LLVM_TOOLS  directory holding FileCheck, not, llvm-omp-device-info
#   OFFLOADIO_LLVM_LIB    LLVM library directory (libomp, libomptarget, stock plugins)
#   OFFLOADIO_OFFLOAD_ARCH  GPU architecture (default sm_90 / gfx90a); for
#                         amdgcn a comma-separated list is allowed
#   OFFLOADIO_ROCM_DEVICE_LIB_PATH  ROCm device bitcode directory (amdgcn only)

import glob
import os
import shutil
import re
import shlex
import subprocess
import sys
import tempfile

import lit.util

# --------------------------------------------------------------------------
# The build under test
# --------------------------------------------------------------------------

# Started from the source tree, no site configuration has run yet: load the
# build's, which sets the build's paths and does not load this file again.
test_dir = os.path.dirname(os.path.abspath(__file__))
if not hasattr(config, "offloadio_obj_root"):
    build_dir = os.environ.get("OFFLOADIO_BUILD_DIR") or os.path.join(
        os.path.dirname(test_dir), "build"
    )
    site_cfg = os.path.join(build_dir, "test", "lit.site.cfg.py")
    if not os.path.isfile(site_cfg):
        lit_config.fatal(
            "offload-io: no build in %s (%s is missing). Build first "
            "(bash tools/build.sh), or set OFFLOADIO_BUILD_DIR to the build "
            "directory." % (build_dir, site_cfg)
        )
    config.offloadio_site_loaded_by_suite = True
    lit_config.load_config(config, site_cfg)
# The tests, their helpers and suppressions come from the tree holding this
# file, which is the one lit found the tests in, even where the build was
# configured from another checkout.
config.offloadio_src_root = os.path.dirname(test_dir)

# --------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------

# triple -> (plugin base name, plugin-kind feature), the host's first: the
# one list of tools/targets/offload-targets.def.
sys.path.insert(0, os.path.join(config.offloadio_src_root, "test", "support"))
from offload_targets import read_offload_targets  # noqa: E402

OFFLOAD_TARGETS = read_offload_targets(config.offloadio_src_root)
HOST_TRIPLE = next(iter(OFFLOAD_TARGETS))

target_triple = lit_config.params.get("target", HOST_TRIPLE)
if target_triple not in OFFLOAD_TARGETS:
    lit_config.fatal(
        "offload-io: unsupported target '%s' (supported: %s)"
        % (target_triple, ", ".join(sorted(OFFLOAD_TARGETS)))
    )
plugin_name, plugin_feature = OFFLOAD_TARGETS[target_triple]
offload_arch = {
    "nvptx64-nvidia-cuda": os.environ.get("OFFLOADIO_OFFLOAD_ARCH", "sm_90"),
    "amdgcn-amd-amdhsa": os.environ.get("OFFLOADIO_OFFLOAD_ARCH", "gfx90a"),
}.get(target_triple)
compile_only = lit.util.pythonize_bool(lit_config.params.get("compile_only", False))

# --------------------------------------------------------------------------
# Test format
# --------------------------------------------------------------------------

# lit's ShTest, keeping sanitizer reports (test/support/offloadio_lit.py). It
# lives in a module (test/support is on sys.path, see Targets) because lit
# sends the format to its worker processes.
from offloadio_lit import OffloadShTest  # noqa: E402

# --------------------------------------------------------------------------
# Basic suite setup
# --------------------------------------------------------------------------

config.name = "offload-io :: " + target_triple
config.test_format = OffloadShTest(execute_external=False)
config.suffixes = [".c", ".cpp"]
# The suite's root is this file's folder, so that lit finds this file from a
# test's path; of its folders only offload/ holds lit tests (the rest are
# unit tests, fuzzers and support code), so test names start "offload/".
config.test_source_root = test_dir
exec_dir = "offload-" + target_triple
if compile_only:
    # Kept apart from the runs' outputs, and one per architecture so that
    # several can build at once.
    exec_dir += "-compile" + ("-" + offload_arch.replace(",", "+") if offload_arch else "")
config.test_exec_root = os.path.join(config.offloadio_obj_root, "test", exec_dir)
config.excludes = ["Inputs"] + [
    entry for entry in os.listdir(config.test_source_root) if entry != "offload"
]

# Toolchain locations, overridable from the environment.
config.clang = os.environ.get("OFFLOADIO_CLANG") or config.clang
config.llvm_tools_dir = os.environ.get("OFFLOADIO_LLVM_TOOLS") or config.llvm_tools_dir
config.llvm_lib_dir = os.environ.get("OFFLOADIO_LLVM_LIB") or config.llvm_lib_dir
clangxx = os.environ.get("OFFLOADIO_CLANGXX") or (config.clang + " --driver-mode=g++")
# The programs that compile-only runs keep of the RUN lines.
config.offloadio_compilers = [shlex.split(config.clang)[0], shlex.split(clangxx)[0]]

plugin_dir = config.offloadio_plugin_dir
hsa_emu_dir = getattr(config, "offloadio_hsa_emu_dir", "")
src_root = config.offloadio_src_root

# --------------------------------------------------------------------------
# Sanity checks before running anything
# --------------------------------------------------------------------------

if not os.path.isfile(config.clang) and not lit.util.which(config.clang):
    lit_config.fatal("offload-io: compiler not found: %s (set OFFLOADIO_CLANG)" % config.clang)

for tool in ("FileCheck", "not"):
    if not os.path.isfile(os.path.join(config.llvm_tools_dir, tool)):
        lit_config.fatal(
            "offload-io: %s not found in %s (set OFFLOADIO_LLVM_TOOLS)"
            % (tool, config.llvm_tools_dir)
        )

# Site configurations older than the version fields served libomptarget 16.
llvm_abi = int(getattr(config, "offloadio_llvm_abi", "16") or "16")
plugin_suffix = getattr(config, "offloadio_plugin_suffix", ".nextgen" if llvm_abi == 16 else "")
plugin_file = os.path.join(plugin_dir, "libomptarget.rtl.%s%s.so" % (plugin_name, plugin_suffix))
if not os.path.exists(plugin_file):
    lit_config.fatal(
        "offload-io: plugin for target %s not found: %s\n"
        "  Build the offload-io plugins first (cmake --build <build>), or pick another "
        "target with -Dtarget=<triple>." % (target_triple, plugin_file)
    )

# --------------------------------------------------------------------------
# Features
# --------------------------------------------------------------------------

config.available_features.add(target_triple)
config.available_features.add(plugin_feature)
config.available_features.add("clang-%d" % llvm_abi)
config.available_features.add("llvm-%d" % llvm_abi)
if target_triple == HOST_TRIPLE:
    config.available_features.add("unified_shared_memory")


def cuda_toolkit_version():
    """CUDA_VERSION of the toolkit's cuda.h (13000 for 13.0), or 0."""
    try:
        with open(os.path.join(config.cuda_path, "include", "cuda.h")) as f:
            for line in f:
                if line.startswith("#define CUDA_VERSION "):
                    return int(line.split()[2])
    except (OSError, ValueError, IndexError):
        pass
    return 0


# "stock-runs-images": the stock plugin of this LLVM accepts the images the
# toolchain builds. LLVM 18's stock CUDA plugin reads a cubin's SM from
# e_flags in the layout before ELF ABI 8, which ptxas of CUDA 13 no longer
# writes (LLVM issue 159088): it refuses every image and runs the regions on
# the host. Tests wrap their stock runs in %if stock-runs-images.
if not (target_triple == "nvptx64-nvidia-cuda" and llvm_abi >= 18
        and cuda_toolkit_version() >= 13000):
    config.available_features.add("stock-runs-images")

# What the amdgpu plugin finds in a run that does not use the emulation:
# a real HSA runtime ("hsa-runtime"), and whether this machine has the KFD
# device node an AMD GPU needs ("amd-kfd").
import ctypes.util

if ctypes.util.find_library("hsa-runtime64"):
    config.available_features.add("hsa-runtime")
if os.path.exists("/dev/kfd"):
    config.available_features.add("amd-kfd")

hsa_emulation = False
if target_triple == "amdgcn-amd-amdhsa":
    if os.environ.get("OFFLOADIO_HSA_EMULATION") == "1":
        hsa_emulation = True
    elif hsa_emu_dir and os.path.exists(os.path.join(hsa_emu_dir, "libhsa-runtime64.so.1")):
        hsa_emulation = True
    if hsa_emulation:
        config.available_features.add("hsa-emulation")

# Compile-only runs select a test if it would run on any of these machines,
# each given as the features it adds: what a test builds into does not depend
# on the machine that builds it, so the features found above for this one are
# dropped. amdgcn tests run on AMD GPUs or on the HSA emulation
# ("amdgpu-hardware" is the feature of a run on a real GPU).
config.offloadio_compile_only = compile_only
config.offloadio_compile_machines = [set()]
if compile_only and target_triple == "amdgcn-amd-amdhsa":
    config.available_features -= {"hsa-runtime", "amd-kfd", "hsa-emulation"}
    config.offloadio_compile_machines = [
        {"hsa-runtime", "amd-kfd", "amdgpu-hardware"},
        {"hsa-emulation"},
    ]

# --------------------------------------------------------------------------
# Environment
# --------------------------------------------------------------------------

PASSTHROUGH_PREFIXES = ("LIBOMPTARGET_", "OMP_", "OMPX_", "OFFLOADIO_")
PASSTHROUGH_NAMES = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
for var, value in os.environ.items():
    if var.startswith(PASSTHROUGH_PREFIXES) or var in PASSTHROUGH_NAMES:
        config.environment[var] = value

ld_path = [plugin_dir]
if target_triple == "amdgcn-amd-amdhsa" and hsa_emu_dir:
    ld_path.append(hsa_emu_dir)
ld_path.append(config.llvm_lib_dir)
inherited_ld_path = os.environ.get("LD_LIBRARY_PATH", "")
if inherited_ld_path:
    ld_path.append(inherited_ld_path)
config.environment["LD_LIBRARY_PATH"] = os.pathsep.join(ld_path)

# Read by test/support/plugin_check.c, linked into every test program.
config.environment["OFFLOADIO_EXPECT_PLUGIN"] = plugin_name
config.environment["OFFLOADIO_EXPECT_PLUGIN_DIR"] = plugin_dir

# --------------------------------------------------------------------------
# Sanitized builds (SANITIZE=...)
# --------------------------------------------------------------------------

# The test programs are built here without sanitizers and link the stock
# libomptarget, which dlopens our sanitized plugin. The sanitizer runtime must
# be in the process from its start (ASan and TSan refuse to load later), so
# the programs, and only they, run with it preloaded: run_env starts every
# "%libomptarget-run-*" command line. Compilers and FileCheck run without it.
# The *_OPTIONS are inert in processes without a sanitizer runtime.
sanitize = getattr(config, "offloadio_sanitize", "") or ""
run_env = ""
if sanitize:
    sanitizer_rt = config.offloadio_sanitizer_rt
    if not os.path.isfile(sanitizer_rt):
        lit_config.fatal("offload-io: sanitizer runtime not found: %s" % sanitizer_rt)
    for name in sanitize.split(","):
        config.available_features.add(name + "-sanitizer")
    run_env = "env LD_PRELOAD=%s " % sanitizer_rt
    supp_dir = os.path.join(src_root, "test", "sanitizers")

    def sanitizer_options(var, options):
        # Options from the caller's environment come last and win.
        inherited = os.environ.get(var)
        config.environment[var] = ":".join(options + ([inherited] if inherited else []))

    # Leak checking stays on. Allocation stacks hold only the allocating
    # function (malloc_context_size=2): lsan.supp names the stock libraries
    # whose own allocations leak at exit, and must not match memory that our
    # plugin allocated while called from them. For deeper stacks when
    # debugging a leak of ours: ASAN_OPTIONS=malloc_context_size=30.
    sanitizer_options("ASAN_OPTIONS", ["detect_leaks=1", "malloc_context_size=2"])
    sanitizer_options(
        "LSAN_OPTIONS", ["suppressions=" + os.path.join(supp_dir, "lsan.supp")]
    )
    sanitizer_options("UBSAN_OPTIONS", ["print_stacktrace=1", "halt_on_error=1"])
    sanitizer_options(
        "TSAN_OPTIONS", ["suppressions=" + os.path.join(supp_dir, "tsan.supp")]
    )
    # libomp loads LLVM's Archer tool when it finds TSan in the process; the
    # LLVM 16 Archer crashes (a null dereference in its callback from
    # __kmp_fork_call) on libomptarget's hidden helper threads: it stays off.
    sanitizer_options("ARCHER_OPTIONS", ["enable=0"])
# A hung program (a deadlocked plugin) fails its test after this many
# seconds instead of stalling the whole run: every program of ours starts
# through coreutils' timeout, which exits 124 at the limit and otherwise
# passes the program's status or signal on (so "%not --crash" still sees a
# crash). lit's own --timeout needs psutil, which the GPU machine may lack.
program_timeout_s = 300
run_env = "timeout %d %s" % (program_timeout_s, run_env)
# "%run-env PROGRAM" starts a program that loads our plugins other than
# through %libomptarget-run-* (llvm-omp-device-info, say): "env" in a plain
# build. Local configurations find it here too.
config.offloadio_run_env = run_env.strip() or "env"

# Leak checks: "%lsan-env" starts a command line that runs a program under
# LeakSanitizer, so that memory unreachable at exit fails the test. Builds
# with ASan have it already (run_env); builds without sanitizers preload
# GCC's standalone runtime (liblsan.so.0, which clang's libgcc dependency
# installs). The "lsan" feature says whether either is in force.
lsan_env = run_env.strip() or "env"
if target_triple == "nvptx64-nvidia-cuda":
    # The CUDA driver maps terabytes of address space that a leak check
    # scans at exit: the runs did not finish in minutes on an H200. Leaks
    # are checked on the host plugin and the HSA emulation, which share
    # every line of the code under test but the backend's.
    pass
elif "address" in sanitize.split(","):
    config.available_features.add("lsan")
elif not sanitize:
    import ctypes.util

    lsan_runtime = ctypes.util.find_library("lsan")
    if lsan_runtime:
        config.available_features.add("lsan")
        lsan_env = "env LD_PRELOAD=%s LSAN_OPTIONS=exitcode=23" % lsan_runtime

# --------------------------------------------------------------------------
# The plugin check object, built once per configuration
# --------------------------------------------------------------------------

plugin_check_src = os.path.join(src_root, "test", "support", "plugin_check.c")
plugin_check_obj = os.path.join(config.test_exec_root, "plugin_check.o")


def build_plugin_check():
    os.makedirs(config.test_exec_root, exist_ok=True)
    fd, tmp_obj = tempfile.mkstemp(
        prefix="plugin_check.", suffix=".o", dir=config.test_exec_root
    )
    os.close(fd)
    cmd = [config.clang, "-c", "-fPIC", "-O1", "-Wall", plugin_check_src, "-o", tmp_obj]
    try:
        proc = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True
        )
    except OSError as exc:
        os.unlink(tmp_obj)
        lit_config.fatal("offload-io: cannot run %s: %s" % (config.clang, exc))
    if proc.returncode != 0:
        os.unlink(tmp_obj)
        lit_config.fatal(
            "offload-io: failed to compile %s:\n$ %s\n%s"
            % (plugin_check_src, " ".join(cmd), proc.stdout)
        )
    os.replace(tmp_obj, plugin_check_obj)


build_plugin_check()

# --------------------------------------------------------------------------
# Compiler flags
# --------------------------------------------------------------------------

openmp_flags = "-fopenmp -pthread"
# clang 16 adds an rpath to its own library directory unless told not to;
# 17 dropped that, and the option with it.
if llvm_abi == 16:
    openmp_flags += " -fno-openmp-implicit-rpath"
# The generated ompx_version.h lies in the build's include directory.
include_flags = "-I%s -I%s -I%s" % (
    os.path.join(src_root, "include"),
    os.path.join(config.offloadio_obj_root, "include"),
    os.path.join(src_root, "test", "support"),
)
link_flags = "-L%s -L%s -Wl,-rpath,%s -Wl,-rpath,%s %s" % (
    plugin_dir,
    config.llvm_lib_dir,
    plugin_dir,
    config.llvm_lib_dir,
    plugin_check_obj,
)
# libompx_io.so (include/ompx_io.h) is built next to the plugins; link it when
# it is there (a plugin directory holding only stock plugins has none).
if os.path.exists(os.path.join(plugin_dir, "libompx_io.so")):
    link_flags += " -lompx_io"
    config.available_features.add("ompx-io")

# The ompx-io command-line tool, built with an x86_64 image (and the images
# of OFFLOADIO_TOOL_TARGETS): "%ompx-io" runs it, tested on the x86_64 run.
ompx_io_tool = os.path.join(config.offloadio_obj_root, "bin", "ompx-io")
if os.path.exists(ompx_io_tool) and target_triple == "x86_64-pc-linux-gnu":
    config.available_features.add("ompx-io-tool")
# The checkpoint example (examples/checkpoint): its host part is two static
# libraries of the build; "%checkpoint-link" is what a program compiled for
# the lit target needs besides them: the example's offload source, the
# libraries, LLVM (llvm::json) and libompx_io.
checkpoint_static = os.path.join(plugin_dir, "static")
checkpoint_libs = [
    os.path.join(checkpoint_static, "liboffloadio_checkpoint_host.a"),
    os.path.join(checkpoint_static, "liboffloadio_safetensors.a"),
]
if "ompx-io" in config.available_features and all(map(os.path.exists, checkpoint_libs)):
    config.available_features.add("checkpoint-example")
checkpoint_link = " ".join(
    [os.path.join(src_root, "examples", "checkpoint", "DeviceFill.c")]
    + checkpoint_libs
    + ["-L" + plugin_dir, "-lompx_io", "-L" + config.llvm_lib_dir,
       "-l:libLLVM-%d.so.1" % llvm_abi, "-lstdc++", "-lm"]
)
# ompx-io bench --plot renders with gnuplot.
if shutil.which("gnuplot"):
    config.available_features.add("gnuplot")


def find_rocm_device_libs():
    env = os.environ.get("OFFLOADIO_ROCM_DEVICE_LIB_PATH")
    if env:
        return env
    # Debian trixie's rocm-device-libs-17 installs into clang 17's resource
    # directory, which clang 18 does not search.
    in_clang = sorted(glob.glob("/usr/lib/llvm-*/lib/clang/*/amdgcn/bitcode"),
                      reverse=True)
    for cand in [
        "/opt/rocm/amdgcn/bitcode",
        "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode",
        "/usr/lib/amdgcn/bitcode",
    ] + in_clang:
        if os.path.exists(os.path.join(cand, "ocml.bc")):
            return cand
    return None


def target_flags(triple):
    flags = ["-fopenmp-targets=" + triple]
    if triple == "nvptx64-nvidia-cuda":
        flags += [
            "-Xopenmp-target=nvptx64-nvidia-cuda",
            "-march=" + offload_arch,
            "--cuda-path=" + config.cuda_path,
            "--libomptarget-nvptx-bc-path=" + config.llvm_lib_dir,
            "-Wno-unknown-cuda-version",
        ]
    elif triple == "amdgcn-amd-amdhsa":
        # A comma-separated list builds one image per architecture.
        flags.append("--offload-arch=" + offload_arch)
        rocm_libs = find_rocm_device_libs()
        if rocm_libs:
            flags.append("--rocm-device-lib-path=" + rocm_libs)
    return " ".join(flags)


# --------------------------------------------------------------------------
# Substitutions
# --------------------------------------------------------------------------

file_check = os.path.join(config.llvm_tools_dir, "FileCheck")
not_tool = os.path.join(config.llvm_tools_dir, "not")
IGNORED = "echo ignored-command"


def target_substitutions(name, triple, active):
    """Substitutions for target `triple`, spelled with suffix `name`."""
    if not active:
        keys = [
            "clang", "clangxx", "libomptarget-compile", "libomptarget-compilexx",
            "libomptarget-compileopt", "libomptarget-run", "libomptarget-run-fail",
            "libomptarget-compile-and-run", "libomptarget-compilexx-and-run",
            "libomptarget-compileopt-and-run", "libomptarget-compile-run-and-check",
            "libomptarget-compilexx-run-and-check", "libomptarget-compileopt-run-and-check",
            "fcheck",
        ]
        return [("%" + k + "-" + name, IGNORED) for k in keys]

    common = " ".join([openmp_flags, include_flags, target_flags(triple), link_flags])
    cc = "%s %s" % (config.clang, common)
    cxx = "%s %s" % (clangxx, common)
    compile_c = cc + " %s -o %t"
    compile_cxx = cxx + " %s -o %t"
    compile_opt = cc + " -O3 %s -o %t"
    run = run_env + "%t"
    run_fail = not_tool + " --crash " + run
    fcheck = file_check + " %s"
    return [
        ("%clang-" + name, cc),
        ("%clangxx-" + name, cxx),
        ("%libomptarget-compile-" + name, compile_c),
        ("%libomptarget-compilexx-" + name, compile_cxx),
        ("%libomptarget-compileopt-" + name, compile_opt),
        ("%libomptarget-run-" + name, run),
        ("%libomptarget-run-fail-" + name, run_fail),
        ("%libomptarget-compile-and-run-" + name, compile_c + " && " + run),
        ("%libomptarget-compilexx-and-run-" + name, compile_cxx + " && " + run),
        ("%libomptarget-compileopt-and-run-" + name, compile_opt + " && " + run),
        ("%libomptarget-compile-run-and-check-" + name,
         compile_c + " && " + run + " | " + fcheck),
        ("%libomptarget-compilexx-run-and-check-" + name,
         compile_cxx + " && " + run + " | " + fcheck),
        ("%libomptarget-compileopt-run-and-check-" + name,
         compile_opt + " && " + run + " | " + fcheck),
        ("%fcheck-" + name, fcheck),
    ]


# The stock plugin of the lit target, for tests that compare it with ours:
# LD_LIBRARY_PATH holds the LLVM library directory, not ours (and, for
# amdgcn, the HSA emulation, which the stock plugin dlopens by name as
# libhsa-runtime64.so), and the plugin check expects the stock plugin.
stock_ld_path = config.llvm_lib_dir
if target_triple == "amdgcn-amd-amdhsa" and hsa_emu_dir:
    stock_ld_path = os.pathsep.join([config.llvm_lib_dir, hsa_emu_dir])
run_stock = "env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%s OFFLOADIO_EXPECT_PLUGIN_DIR=%s %s%%t" % (
    stock_ld_path, config.llvm_lib_dir, run_env)

subs = []
for triple in OFFLOAD_TARGETS:
    subs += target_substitutions(triple, triple, triple == target_triple)
subs += target_substitutions("generic", target_triple, True)
subs += [
    ("%not", not_tool),
    ("%FileCheck", file_check),
    ("%plugin-dir", plugin_dir),
    ("%plugin-name", plugin_name),
    ("%llvm-lib-dir", config.llvm_lib_dir),
    ("%llvm-tools-dir", config.llvm_tools_dir),
    ("%stock-ld-path", stock_ld_path),
    ("%stock-plugin-dir", config.llvm_lib_dir),
    ("%run-stock-generic", run_stock),
    ("%target-triple", target_triple),
    ("%run-env", config.offloadio_run_env),
    ("%ompx-io", config.offloadio_run_env + " " + ompx_io_tool),
    ("%checkpoint-link", checkpoint_link),
    ("%lsan-env", lsan_env),
    # What libomptarget's own messages start with ("Libomptarget message:",
    # "Libomptarget fatal error 1:"): "omptarget" from 18 on. A FileCheck
    # given %libomptarget-prefix-def matches it as [[LIBOMPTARGET]].
    ("%libomptarget-prefix-def",
     "-DLIBOMPTARGET=" + ("omptarget" if llvm_abi >= 18 else "Libomptarget")),
    ("%llvm-abi", str(llvm_abi)),
    # What comes before ".so" in our plugins' file names (".nextgen" for
    # 16): [[PLUGIN_SUFFIX]] to a FileCheck given %plugin-suffix-def.
    ("%plugin-suffix-def", "-DPLUGIN_SUFFIX=" + plugin_suffix),
]

# Longest names first so that no name is replaced by a shorter prefix; the
# lookahead keeps e.g. "%clang-generic" from matching inside a longer word.
subs.sort(key=lambda kv: len(kv[0]), reverse=True)
for key, value in subs:
    config.substitutions.append((re.escape(key) + r"(?![\w-])", value.replace("\\", "\\\\")))

# A bare "FileCheck" at the start of a command (not part of a path or of
# %FileCheck) becomes the full path.
config.substitutions.append((r"(?<![\w/%.-])FileCheck\b", file_check))
