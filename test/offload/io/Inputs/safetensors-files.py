#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Safetensors files for the checkpoint lit tests, written with Python's own
json module, independent of examples/checkpoint.

  safetensors-files.py malformed DIR   writes one malformed file per case
  safetensors-files.py duplicates FILE writes a valid file that names a
                                       tensor twice (the last entry counts)
  safetensors-files.py check FILE SEED verifies a file that
                                       offloadio-checkpoint save wrote: the
                                       header, the layout, every data byte
  safetensors-files.py flip FILE       changes the last data byte
  safetensors-files.py make FILE SEED  writes a file of generated tensors
                                       as offloadio-checkpoint save would
  safetensors-files.py sharded DIR SEED  writes two shards of generated
                                       tensors of every dtype and their
                                       model.safetensors.index.json
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "examples", "checkpoint"))
from checkpoint_pattern import SIZES, pattern  # noqa: E402


def header(entries):
    text = json.dumps(entries).encode()
    return struct.pack("<Q", len(text)) + text


def raw_header(text):
    """A header from JSON text, for what a dict cannot hold: a name twice,
    nesting deeper than json.dumps goes, bytes that are not UTF-8."""
    return struct.pack("<Q", len(text)) + text


def members(*pairs):
    """JSON object text of (name, value) pairs, names repeated as given."""
    return ("{" + ", ".join("%s: %s" % (json.dumps(k), json.dumps(v))
                            for k, v in pairs) + "}").encode()


def tensor(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def malformed(directory):
    good = tensor("F32", [2, 2], 0, 16)
    data = bytes(64)
    cases = {
        "short": b"abc",
        "truncated": struct.pack("<Q", 100) + b"{" * 20,
        "absurd": struct.pack("<Q", 1 << 40) + b"{}",
        "not-json": struct.pack("<Q", 9) + b"{\"a\": 1," + data,
        "not-object": header([1, 2]) + data,
        "missing-dtype": header({"w": {"shape": [4], "data_offsets": [0, 16]}}) + data,
        "dtype-type": header({"w": tensor(4, [4], 0, 16)}) + data,
        "unknown-dtype": header({"w": tensor("F128", [1], 0, 16)}) + data,
        "negative-dim": header({"w": tensor("F32", [4, -1], 0, 16)}) + data,
        "fractional-dim": header({"w": tensor("U8", [2.5], 0, 2)}) + data,
        "outside": header({"w": tensor("F32", [32], 0, 128)}) + data,
        "begin-after-end": header({"w": tensor("F32", [1], 8, 4)}) + data,
        "overlap": header({"a": good, "b": tensor("F32", [4], 8, 24)}) + data,
        "size-mismatch": header({"w": tensor("BF16", [3, 3], 0, 16)}) + data,
        "metadata": header({"__metadata__": {"epoch": 3}, "w": good}) + data,
        # Nested 100,000 levels deep: under __metadata__, and as a tensor.
        "deep-arrays": raw_header(b'{"__metadata__": ' + b"[" * DEEP + b"]" * DEEP + b"}") + data,
        "deep-objects": raw_header(b'{"a": ' * DEEP + b"1" + b"}" * DEEP) + data,
        # An invalid entry, then a valid one of the same name.
        "duplicate-dtype": raw_header(members(("w", tensor("F128", [4], 0, 16)), ("w", good))) + data,
        "duplicate-dim": raw_header(members(("w", tensor("F32", [4, -1], 0, 16)), ("w", good))) + data,
        "duplicate-metadata": raw_header(members(("__metadata__", {}), ("__metadata__", {}), ("w", good))) + data,
        "not-utf8": raw_header(b'{"w\xff": 1}') + data,
    }
    for name, content in cases.items():
        with open("%s/%s.safetensors" % (directory, name), "wb") as f:
            f.write(content)


# Deeper than any header; a recursive parser runs out of stack on it.
DEEP = 100000


def duplicates(path):
    # "a" three times: the last entry, [8, 24), is the tensor; "b" fills
    # [0, 8). Every entry is valid on its own.
    text = members(("a", tensor("U8", [8], 0, 8)),
                   ("b", tensor("F32", [2], 0, 8)),
                   ("a", tensor("I64", [1], 16, 24)),
                   ("a", tensor("F16", [2, 4], 8, 24)))
    with open(path, "wb") as f:
        f.write(raw_header(text) + bytes(range(24)))






def check(path, seed):
    raw = open(path, "rb").read()
    (length,) = struct.unpack("<Q", raw[:8])
    entries = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    meta = entries.pop("__metadata__")
    assert meta["offloadio.seed"] == str(seed), meta
    end = 0
    checked = 0
    for name, t in sorted(entries.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, stop = t["data_offsets"]
        assert begin == end, "%s starts at %d, not %d" % (name, begin, end)
        count = SIZES[t["dtype"]]
        for dim in t["shape"]:
            count *= dim
        assert stop - begin == count, name
        if data[begin:stop] != pattern(seed, name, count):
            sys.exit("tensor %s: bytes differ from the generator" % name)
        end = stop
        checked += count
    assert end == len(data), "data section of %d bytes, tensors end at %d" % (len(data), end)
    print("checked %d tensors, %d bytes" % (len(entries), checked))


def make(path, seed, specs=None):
    # Mixed dtypes and ranks, an empty tensor, a name JSON must escape; the
    # header padded with spaces to a data section on an 8-byte boundary.
    specs = specs or [("embed", "F32", [97, 33]), ("norm \"q\"", "BF16", [257]),
                      ("empty", "I64", [0, 3]), ("head.w", "U8", [4099]),
                      ("head.b", "F64", [5, 7, 3])]
    entries = {"__metadata__": {"offloadio.generator": "splitmix64-v1",
                                "offloadio.seed": str(seed)}}
    data = b""
    for name, dtype, shape in specs:
        count = SIZES[dtype]
        for dim in shape:
            count *= dim
        entries[name] = tensor(dtype, shape, len(data), len(data) + count)
        data += pattern(seed, name, count)
    text = json.dumps(entries).encode()
    text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def sharded(directory, seed):
    """Two shards of generated tensors of every dtype and the
    model.safetensors.index.json that maps them."""
    # In the order the lit test's CHECK lines name them.
    dtypes = ["BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "U16", "I16", "F16",
              "BF16", "U32", "I32", "F32", "U64", "I64", "F64"]
    weight_map = {}
    for shard in range(2):
        name = "model-%05d-of-00002.safetensors" % (shard + 1)
        specs = [("layers.%d.%s" % (i, d), d, [i + 1, 3])
                 for i, d in enumerate(dtypes) if i % 2 == shard]
        make(directory + "/" + name, seed, specs)
        for spec in specs:
            weight_map[spec[0]] = name
    with open(directory + "/model.safetensors.index.json", "w") as f:
        json.dump({"metadata": {"total_size": 1}, "weight_map": weight_map}, f)


def flip(path):
    with open(path, "r+b") as f:
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 0xFF]))


if __name__ == "__main__":
    if sys.argv[1] == "malformed":
        malformed(sys.argv[2])
    elif sys.argv[1] == "duplicates":
        duplicates(sys.argv[2])
    elif sys.argv[1] == "check":
        check(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "sharded":
        sharded(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "flip":
        flip(sys.argv[2])
    else:
        sys.exit("unknown command " + sys.argv[1])
