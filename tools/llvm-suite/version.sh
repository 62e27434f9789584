# SPDX-License-Identifier: Apache-2.0
# Sourced by the llvm-suite scripts: which LLVM's libomptarget suite they
# serve, and that version's Debian facts, in one place.
#
#   llvm_suite_version [BUILD_DIR]
#       prints the version: $OFFLOADIO_LLVM_VERSION if set, else the
#       libomptarget version BUILD_DIR was configured for (the
#       offloadio_llvm_abi of its test/lit.site.cfg.py), else 16
#   llvm_suite_facts VERSION
#       sets, for 16, 17 or 18 (fails for another):
#         llvm_pkg        the Debian source package (llvm-toolchain-<v>)
#         llvm_dist       the Debian release that has it (bookworm, trixie)
#         llvm_runtime    the binary package of its libomptarget (libomp5-<v>)
#         llvm_default_version  the source version used when that binary
#                         package is not installed
#         llvm_plugin_suffix    what comes before ".so" in a plugin's name
#                         (".nextgen" for 16; 17 and 18 have one name)

llvm_suite_version() {
  local build=${1:-}
  if [[ -n ${OFFLOADIO_LLVM_VERSION:-} ]]; then
    echo "$OFFLOADIO_LLVM_VERSION"
  elif [[ -n $build ]] && grep -qs '^config.offloadio_llvm_abi = "[0-9]' "$build/test/lit.site.cfg.py"; then
    sed -n 's/^config.offloadio_llvm_abi = "\([0-9]*\)"$/\1/p' "$build/test/lit.site.cfg.py" | head -n1
  else
    echo 16
  fi
}

llvm_suite_facts() {
  llvm_pkg=llvm-toolchain-$1
  llvm_runtime=libomp5-$1
  case $1 in
    16) llvm_dist=bookworm llvm_default_version=1:16.0.6-15~deb12u1 llvm_plugin_suffix=.nextgen ;;
    17) llvm_dist=trixie llvm_default_version=1:17.0.6-22 llvm_plugin_suffix= ;;
    18) llvm_dist=trixie llvm_default_version=1:18.1.8-18 llvm_plugin_suffix= ;;
    *)
      echo "llvm-suite: LLVM $1 is not served (16, 17 or 18)" >&2
      return 1
      ;;
  esac
}
