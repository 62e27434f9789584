#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compatibility of libompx_io's safetensors reader and offloadio-checkpoint
with the reference implementation (python3-safetensors, with python3-numpy),
both ways. Run by safetensors-compat.sh inside the trixie root.

  safetensors-compat.py write DIR       writes, with the reference
      implementation, a file of every dtype (all.safetensors), a file through
      its numpy API (numpy.safetensors) and a checkpoint of three shards with
      its index (sharded/model.safetensors.index.json). Every tensor holds
      the bytes of offloadio-checkpoint's generator for its name, and the
      metadata names the generator, so that `load --verify` checks every
      byte at the offsets our reader found.
  safetensors-compat.py info CKPT INFO  compares the tensors (name, dtype,
      shape) that the reference implementation reads from CKPT (a file or an
      index) with offloadio-checkpoint's `info` output INFO.
  safetensors-compat.py read FILE SEED  reads a file that
      offloadio-checkpoint save wrote with the reference implementation:
      metadata, every tensor's dtype, shape and bytes against the generator,
      and the numpy dtypes through safe_open(framework="numpy").
"""
import json
import os
import re
import sys

import numpy as np
import safetensors
from safetensors import safe_open
from safetensors.numpy import save_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "examples", "checkpoint"))
from checkpoint_pattern import SIZES, pattern  # noqa: E402
SEED = 5
NUMPY = {"U8": np.uint8, "I8": np.int8, "I16": np.int16, "U16": np.uint16,
         "F16": np.float16, "I32": np.int32, "U32": np.uint32,
         "F32": np.float32, "F64": np.float64, "I64": np.int64,
         "U64": np.uint64}
# The reference's serialize_file spells dtypes as numpy and torch do.
SPELLING = {"BOOL": "bool", "U8": "uint8", "I8": "int8",
            "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
            "I16": "int16", "U16": "uint16", "F16": "float16",
            "BF16": "bfloat16", "I32": "int32", "U32": "uint32",
            "F32": "float32", "F64": "float64", "I64": "int64",
            "U64": "uint64"}
META = {"offloadio.generator": "splitmix64-v1", "offloadio.seed": str(SEED)}





def nbytes(dtype, shape):
    count = SIZES[dtype]
    for dim in shape:
        count *= dim
    return count


def raw_tensors(names_shapes):
    """{name: {dtype, shape, data}} for the reference implementation's
    serialize_file, which takes any dtype as raw bytes."""
    out = {}
    for name, dtype, shape in names_shapes:
        out[name] = {"dtype": SPELLING[dtype], "shape": shape,
                     "data": pattern(SEED, name, nbytes(dtype, shape))}
    return out


def write(directory):
    os.makedirs(os.path.join(directory, "sharded"), exist_ok=True)
    shapes = [[3, 5], [7], [], [2, 0, 4], [4, 4, 3]]
    every = [("t.%s.%d" % (d, i), d, shapes[i % len(shapes)])
             for i, d in enumerate(SIZES)]
    safetensors.serialize_file(raw_tensors(every),
                               os.path.join(directory, "all.safetensors"),
                               metadata=META)
    arrays = {}
    for i, (dtype, np_type) in enumerate(sorted(NUMPY.items())):
        name = "np.%s" % dtype
        shape = [5, 3] if i % 2 else [17]
        data = pattern(SEED, name, nbytes(dtype, shape))
        arrays[name] = np.frombuffer(data, dtype=np.dtype(np_type).newbyteorder("<")).reshape(shape)
    save_file(arrays, os.path.join(directory, "numpy.safetensors"), metadata=META)
    weight_map = {}
    for shard in range(3):
        part = [("layers.%d.%s" % (shard * 5 + i, d), d, [3 + i, 2])
                for i, d in enumerate(list(SIZES)[shard * 5:shard * 5 + 5])]
        name = "model-%05d-of-00003.safetensors" % (shard + 1)
        safetensors.serialize_file(raw_tensors(part),
                                   os.path.join(directory, "sharded", name),
                                   metadata=META)
        for tensor_name, _, _ in part:
            weight_map[tensor_name] = name
    with open(os.path.join(directory, "sharded",
                           "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f,
                  indent=2)
    print("wrote %d + %d + %d tensors" % (len(every), len(arrays), len(weight_map)))


def reference_tensors(path):
    """{name: (dtype, shape)} as the reference implementation reads them."""
    files = [path]
    if path.endswith(".json"):
        with open(path) as f:
            weight_map = json.load(f)["weight_map"]
        files = sorted({os.path.join(os.path.dirname(path), s)
                        for s in weight_map.values()})
    out = {}
    for file in files:
        with open(file, "rb") as f:
            for name, t in safetensors.deserialize(f.read()):
                out[name] = (t["dtype"], list(t["shape"]))
    return out


def info(path, info_path):
    ours = {}
    line = re.compile(r"^  (\S+) (\S+) \[([0-9, ]*)\] \[")
    with open(info_path) as f:
        for text in f:
            m = line.match(text)
            if m:
                dims = [int(d) for d in m.group(3).split(",") if d.strip()]
                ours[m.group(1)] = (m.group(2), dims)
    theirs = reference_tensors(path)
    if ours != theirs:
        for name in sorted(set(ours) | set(theirs)):
            if ours.get(name) != theirs.get(name):
                print("%s: ours %s, reference %s" % (name, ours.get(name), theirs.get(name)))
        sys.exit("%s: the tensors differ" % path)
    print("%s: %d tensors as the reference reads them" % (path, len(ours)))


def read(path, seed):
    with open(path, "rb") as f:
        tensors = safetensors.deserialize(f.read())
    with safe_open(path, framework="numpy") as f:
        meta = f.metadata()
        assert meta["offloadio.seed"] == str(seed), meta
        checked = 0
        for name, t in tensors:
            want = pattern(seed, name, nbytes(t["dtype"], t["shape"]))
            if bytes(t["data"]) != want:
                sys.exit("tensor %s: bytes differ from the generator" % name)
            if t["dtype"] in NUMPY:
                array = f.get_tensor(name)
                assert list(array.shape) == list(t["shape"]), name
                if array.astype(array.dtype.newbyteorder("<")).tobytes() != want:
                    sys.exit("tensor %s: numpy reads other bytes" % name)
            checked += 1
    print("the reference read %d tensors of %s" % (checked, path))


def main(argv):
    if len(argv) == 3 and argv[1] == "write":
        write(argv[2])
    elif len(argv) == 4 and argv[1] == "info":
        info(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "read":
        read(argv[2], int(argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
