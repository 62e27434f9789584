#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# safetensors-compat.sh BUILD_DIR [DEVICE]: libompx_io's safetensors reader
# and offloadio-checkpoint against the reference implementation, both ways.
#
# In the trixie root (python3-safetensors, python3-numpy; version-stage.sh
# step safetensors-compat): the reference writes a file of every dtype, a
# file through its numpy API and a sharded checkpoint with its index; ours
# lists them as the reference reads them and loads every byte (--verify,
# against the generator the files were written with). Then ours saves a
# file and the reference reads it, every byte and the numpy dtypes.
#
# With OFFLOADIO_COMPAT_FRAMEWORK=torch (the GPU machine's python3 has torch
# and safetensors; run-on-device.sh step safetensors): the files are written
# from torch tensors in GPU memory (OFFLOADIO_COMPAT_TORCH_DEVICE, cuda:0),
# ours loads them into device DEVICE's memory, and torch reads the file ours
# saved from DEVICE straight into GPU memory.
set -euo pipefail
build=${1:?usage: safetensors-compat.sh BUILD_DIR [DEVICE]}
device=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
tool=$build/bin/offloadio-checkpoint
export LD_LIBRARY_PATH=$build/lib:${OFFLOADIO_LLVM_LIB:-/usr/lib/llvm-${OFFLOADIO_LLVM_VERSION:-18}/lib}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
on=()
[[ -n $device ]] && on=(--device "$device")
compat() { python3 "$here/safetensors-compat.py" "$@"; }
check() {
  "$tool" info "$work/$1" > "$work/info.txt"
  compat info "$work/$1" "$work/info.txt"
  "$tool" load "$work/$1" "${on[@]}" --verify | tee "$work/load.txt"
  grep -q "against the files\? and the generator" "$work/load.txt"
}
if [[ ${OFFLOADIO_COMPAT_FRAMEWORK:-numpy} == torch ]]; then
  gpu=${OFFLOADIO_COMPAT_TORCH_DEVICE:-cuda:0}
  compat write-torch "$work" "$gpu"
  for ckpt in torch.safetensors torch-sharded/model.safetensors.index.json; do
    check "$ckpt"
  done
  "$tool" save "$work/ours.safetensors" --tensors 40 --max-bytes 16K --seed 7 "${on[@]}"
  compat read-torch "$work/ours.safetensors" 7 "$gpu"
else
  compat write "$work"
  for ckpt in all.safetensors numpy.safetensors sharded/model.safetensors.index.json; do
    check "$ckpt"
  done
  "$tool" save "$work/ours.safetensors" --tensors 40 --max-bytes 16K --seed 7 "${on[@]}"
  compat read "$work/ours.safetensors" 7
fi
echo "safetensors-compat: pass"
