#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# safetensors-compat.sh BUILD_DIR: libompx_io's safetensors reader and
# offloadio-checkpoint against the reference implementation, both ways, in
# the trixie root (python3-safetensors, python3-numpy; version-stage.sh step
# safetensors-compat). The reference writes a file of every dtype, a file
# through its numpy API and a sharded checkpoint with its index; ours lists
# them as the reference reads them and loads every byte (--verify, against
# the generator the files were written with). Then ours saves a file and
# the reference reads it, every byte and the numpy dtypes.
set -euo pipefail
build=${1:?usage: safetensors-compat.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tool=$build/bin/offloadio-checkpoint
export LD_LIBRARY_PATH=$build/lib:/usr/lib/llvm-${OFFLOADIO_LLVM_VERSION:-18}/lib
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/safetensors-compat.py" write "$work"
for ckpt in all.safetensors numpy.safetensors sharded/model.safetensors.index.json; do
  "$tool" info "$work/$ckpt" > "$work/info.txt"
  python3 "$here/safetensors-compat.py" info "$work/$ckpt" "$work/info.txt"
  "$tool" load "$work/$ckpt" --verify | tee "$work/load.txt"
  grep -q "against the files\? and the generator" "$work/load.txt"
done
"$tool" save "$work/ours.safetensors" --tensors 40 --max-bytes 16K --seed 7
python3 "$here/safetensors-compat.py" read "$work/ours.safetensors" 7
echo "safetensors-compat: pass"
