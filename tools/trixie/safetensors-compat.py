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
  safetensors-compat.py write-torch DIR DEVICE
      as write, from torch tensors in DEVICE's memory ("cuda:0") through
      safetensors.torch.save_file: every dtype this torch has
      (torch.safetensors) and a checkpoint of three shards with its index
      (torch-sharded/model.safetensors.index.json).
  safetensors-compat.py read-torch FILE SEED DEVICE
      as read, through safe_open(framework="pt", device=DEVICE): every
      tensor arrives in DEVICE's memory with the generator's bytes.
"""
import json
import os
import re
import sys

import safetensors
from safetensors import safe_open

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "examples", "checkpoint"))
from checkpoint_pattern import SIZES, pattern  # noqa: E402
SEED = 5
# The dtypes that numpy has, by numpy's name.
NUMPY = {"U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
         "F16": "float16", "I32": "int32", "U32": "uint32",
         "F32": "float32", "F64": "float64", "I64": "int64",
         "U64": "uint64"}
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
    import numpy as np
    from safetensors.numpy import save_file
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


def torch_dtypes():
    """The safetensors dtypes that this torch and its safetensors can
    save and load, and the ones they cannot."""
    import tempfile
    import torch
    from safetensors.torch import load_file, save_file as save_torch
    have, lack = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for dtype, spelling in SPELLING.items():
            try:
                t = torch.empty([2], dtype=getattr(torch, spelling))
                save_torch({"x": t}, os.path.join(tmp, "probe"))
                load_file(os.path.join(tmp, "probe"))
                have.append(dtype)
            except Exception:  # noqa: BLE001  any failure: not supported
                lack.append(dtype)
    return have, lack


def device_tensor(dtype, shape, data, device):
    """A tensor in device memory holding exactly the bytes data."""
    import torch
    kind = getattr(torch, SPELLING[dtype])
    if not data:
        return torch.empty(shape, dtype=kind, device=device)
    host = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    return host.view(kind).reshape(shape).to(device)


def tensor_bytes(tensor):
    import torch
    flat = tensor.detach().reshape(-1).contiguous().cpu()
    return bytes(flat.view(torch.uint8).tolist()) if flat.numel() else b""


def write_torch(directory, device):
    from safetensors.torch import save_file as save_torch
    have, lack = torch_dtypes()
    if lack:
        print("this torch or its safetensors cannot hold %s" % ", ".join(lack))
    shapes = [[3, 5], [7], [], [2, 0, 4], [4, 4, 3]]
    every = {}
    for i, dtype in enumerate(have):
        name = "torch.%s.%d" % (dtype, i)
        shape = shapes[i % len(shapes)]
        every[name] = device_tensor(dtype, shape,
                                    pattern(SEED, name, nbytes(dtype, shape)),
                                    device)
    assert all(t.device.type == device.split(":")[0] for t in every.values())
    save_torch(every, os.path.join(directory, "torch.safetensors"), metadata=META)
    os.makedirs(os.path.join(directory, "torch-sharded"), exist_ok=True)
    weight_map = {}
    per_shard = (len(have) + 2) // 3
    for shard in range(3):
        part = {}
        for i, dtype in enumerate(have[shard * per_shard:(shard + 1) * per_shard]):
            name = "layers.%d.%s" % (shard * per_shard + i, dtype)
            shape = [3 + i, 2]
            part[name] = device_tensor(dtype, shape,
                                       pattern(SEED, name, nbytes(dtype, shape)),
                                       device)
        file = "model-%05d-of-00003.safetensors" % (shard + 1)
        save_torch(part, os.path.join(directory, "torch-sharded", file),
                   metadata=META)
        weight_map.update({name: file for name in part})
    with open(os.path.join(directory, "torch-sharded",
                           "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f,
                  indent=2)
    print("wrote %d + %d tensors from %s memory" % (len(every), len(weight_map), device))


def read_torch(path, seed, device):
    have, _ = torch_dtypes()
    with open(path, "rb") as f:
        tensors = safetensors.deserialize(f.read())
    checked, skipped = 0, []
    with safe_open(path, framework="pt", device=device) as f:
        assert f.metadata()["offloadio.seed"] == str(seed), f.metadata()
        for name, t in tensors:
            if t["dtype"] not in have:
                skipped.append(t["dtype"])
                continue
            tensor = f.get_tensor(name)
            if str(tensor.device) != device or list(tensor.shape) != list(t["shape"]):
                sys.exit("tensor %s: on %s with shape %s" % (name, tensor.device, list(tensor.shape)))
            want = pattern(seed, name, nbytes(t["dtype"], t["shape"]))
            if tensor_bytes(tensor) != want:
                sys.exit("tensor %s: the %s tensor holds other bytes" % (name, device))
            checked += 1
    print("torch read %d tensors of %s into %s memory%s" % (
        checked, path, device,
        "; skipped %s (this torch lacks them)" % ", ".join(sorted(set(skipped)))
        if skipped else ""))


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
    import numpy  # noqa: F401  (safe_open's numpy framework needs it)
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
    elif len(argv) == 4 and argv[1] == "write-torch":
        write_torch(argv[2], argv[3])
    elif len(argv) == 5 and argv[1] == "read-torch":
        read_torch(argv[2], int(argv[3]), argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
