# SPDX-License-Identifier: Apache-2.0
"""Tests of offload_io's safetensors checkpoints with NumPy arrays.

save_safetensors and load_safetensors round trips (every NumPy dtype, scalars,
empty tensors, metadata), onto the host, onto host-plugin devices and split
over several, Checkpoint, sharded checkpoints (an index), errors, and the file
format checked independently (struct and json). ReferenceCompatTest compares
with the reference implementation (`safetensors.numpy`) when it is installed;
OFFLOAD_IO_TEST_REQUIRE_REFERENCE=1 makes its absence a failure.

    PYTHONPATH=build/python python3 -m unittest discover -s test/python -v
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import pathlib
import struct
import tempfile
import unittest
from typing import Any, Dict, Tuple

import numpy

import offload_io
from offload_io import _native  # last_error(): the library's message, to compare with

try:
    import safetensors.numpy as reference
except ImportError:  # trixie's python3-safetensors; not in every environment
    reference = None

REQUIRE_REFERENCE = os.environ.get("OFFLOAD_IO_TEST_REQUIRE_REFERENCE") == "1"

INITIAL = offload_io.initial_device()
HOST_DEVICES = sorted(
    (d for d in range(offload_io.num_devices()) if offload_io.describe_device(d)[0] == "x86_64"),
    key=lambda d: offload_io.describe_device(d)[1])

# The safetensors dtypes NumPy has, and their NumPy types.
NUMPY_DTYPES = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
    "F16": "float16", "I32": "int32", "U32": "uint32", "F32": "float32", "F64": "float64",
    "I64": "int64", "U64": "uint64",
}
SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2, "U16": 2, "F16": 2,
         "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}


def needs_host_devices(n: int):
    return unittest.skipUnless(len(HOST_DEVICES) >= n,
                               f"needs {n} devices of the x86_64 plugin, found {len(HOST_DEVICES)}")


def sample(dtype: str, shape: Tuple[int, ...], rng: numpy.random.Generator) -> numpy.ndarray:
    """Random values of a NumPy dtype, with the extremes of integers and the special values
    of floats where there is room."""
    dt = numpy.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        info = numpy.iinfo(dt)
        a = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
        flat = a.reshape(-1)
        if flat.size >= 2:
            flat[0], flat[1] = info.min, info.max
        return a
    a = (rng.standard_normal(size=shape) * 1000).astype(dt)
    flat = a.reshape(-1)
    if flat.size >= 4:
        flat[:4] = [numpy.inf, -numpy.inf, numpy.nan, -0.0]
    return a


def every_dtype_tensors(seed: int = 1) -> Dict[str, numpy.ndarray]:
    """For each NumPy dtype: a vector, a matrix, a scalar (shape ()) and an empty tensor."""
    rng = numpy.random.default_rng(seed)
    out = {}
    for name, dtype in NUMPY_DTYPES.items():
        out[f"{name.lower()}.vector"] = sample(dtype, (37,), rng)
        out[f"{name.lower()}.matrix"] = sample(dtype, (3, 5, 2), rng)
        out[f"{name.lower()}.scalar"] = sample(dtype, (), rng)
        out[f"{name.lower()}.empty"] = numpy.zeros((0, 4), dtype)
    return out


def parse_file(path: str) -> Tuple[int, Dict[str, Any], bytes]:
    """(header length N, header, data section) of a safetensors file, read with struct and
    json only."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    return n, header, raw[8 + n:]


def write_raw(path: str, header: Dict[str, Any], data: bytes, pad: bool = True) -> None:
    """A safetensors file from a header and a data section, written by hand."""
    text = json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def device_of(array: Any) -> int:
    """The OpenMP device of an array that load_safetensors made: the DeviceBuffer under it,
    or the initial device."""
    obj = array
    while obj is not None:
        if isinstance(obj, offload_io.DeviceBuffer):
            return obj.device
        obj = getattr(obj, "base", None)
    return INITIAL


class CheckpointCase(unittest.TestCase):
    """A temporary directory per test, and comparisons of tensors."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory(prefix="offload_io_st_")
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def file(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def assertTensorsEqual(self, got: Dict[str, Any], expected: Dict[str, numpy.ndarray]) -> None:
        """Same names, and per tensor the same dtype, shape and bytes."""
        self.assertEqual(sorted(got), sorted(expected))
        for name, want in expected.items():
            with self.subTest(tensor=name):
                have = got[name]
                self.assertIsInstance(have, numpy.ndarray)
                self.assertEqual(have.dtype, want.dtype)
                self.assertEqual(have.shape, want.shape)
                self.assertTrue(numpy.array_equal(numpy.frombuffer(have.tobytes(), numpy.uint8),
                                                  numpy.frombuffer(want.tobytes(), numpy.uint8)))

    def assertLibraryError(self, exc: BaseException, code: int, fragment: str) -> None:
        self.assertIsInstance(exc, OSError)
        self.assertEqual(exc.errno, code, str(exc))
        message = _native.last_error()
        self.assertTrue(message)
        self.assertIn(message, str(exc))
        self.assertIn(fragment, str(exc))

    def write_shards(self, tensors: Dict[str, numpy.ndarray], nshards: int = 3,
                     save=None) -> Tuple[str, Dict[str, str]]:
        """tensors split round robin over nshards files (saved with `save`, ours by default)
        and a model.safetensors.index.json; returns its path and the weight map."""
        save = save or (lambda t, p: offload_io.save_safetensors(t, p))
        names = sorted(tensors)
        weight_map = {}
        total = 0
        for k in range(nshards):
            shard = f"model-{k + 1:05d}-of-{nshards:05d}.safetensors"
            part = {n: tensors[n] for n in names[k::nshards]}
            save(part, self.file(shard))
            weight_map.update({n: shard for n in part})
            total += sum(a.nbytes for a in part.values())
        index = self.file("model.safetensors.index.json")
        with open(index, "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
        return index, weight_map


class FormatTest(CheckpointCase):
    """The files save_safetensors writes, read back with struct and json."""

    def check_format(self, path: str, tensors: Dict[str, numpy.ndarray]) -> Dict[str, Any]:
        n, header, data = parse_file(path)
        self.assertEqual(n % 8, 0, "header not padded to 8 bytes")
        with open(path, "rb") as f:
            text = f.read()[8:8 + n].decode("utf-8")
        self.assertEqual(text, text.rstrip(" ") + " " * (len(text) - len(text.rstrip(" "))))
        self.assertTrue(text.rstrip(" ").endswith("}"))
        entries = {k: v for k, v in header.items() if k != "__metadata__"}
        self.assertEqual(sorted(entries), sorted(tensors))
        spans = sorted((tuple(e["data_offsets"]), name) for name, e in entries.items())
        end = 0
        for (begin, stop), name in spans:
            with self.subTest(tensor=name):
                self.assertEqual(begin, end, "data_offsets not contiguous")
                a = tensors[name]
                e = entries[name]
                self.assertEqual(e["shape"], list(a.shape))
                self.assertEqual(numpy.dtype(NUMPY_DTYPES[e["dtype"]]), a.dtype)
                self.assertEqual(stop - begin, a.nbytes)
                self.assertEqual(begin % SIZES[e["dtype"]], 0, "tensor not aligned to its element")
                self.assertEqual(data[begin:stop], a.tobytes())
                end = stop
        self.assertEqual(end, len(data), "data section longer than its tensors")
        return header

    def test_every_dtype(self) -> None:
        tensors = every_dtype_tensors()
        path = self.file("all.safetensors")
        offload_io.save_safetensors(tensors, path)
        header = self.check_format(path, tensors)
        self.assertNotIn("__metadata__", header)
        self.assertEqual({e["dtype"] for e in header.values()}, set(NUMPY_DTYPES))

    def test_layout_order(self) -> None:
        """Largest element first, then by name: every tensor aligned to its element."""
        tensors = every_dtype_tensors(2)
        path = self.file("order.safetensors")
        offload_io.save_safetensors(tensors, path)
        _, header, _ = parse_file(path)
        by_offset = sorted((e["data_offsets"][0], e["data_offsets"][1], name) for name, e in header.items()
                           if e["data_offsets"][1] > e["data_offsets"][0])
        keys = [(-SIZES[header[name]["dtype"]], name) for _, _, name in by_offset]
        self.assertEqual(keys, sorted(keys))

    def test_metadata(self) -> None:
        path = self.file("meta.safetensors")
        offload_io.save_safetensors({"x": numpy.arange(3, dtype=numpy.int16)}, path,
                                    metadata={"format": "np", "step": 12, "ünï": "cödé"})
        header = self.check_format(path, {"x": numpy.arange(3, dtype=numpy.int16)})
        self.assertEqual(header["__metadata__"], {"format": "np", "step": "12", "ünï": "cödé"})

    def test_unicode_names_and_pathlike(self) -> None:
        tensors = {"模型.权重": numpy.ones(5, numpy.float32), "e\u0301": numpy.zeros(2, numpy.uint8)}
        path = pathlib.Path(self.dir) / "uni.safetensors"
        offload_io.save_safetensors(tensors, path)
        self.check_format(str(path), tensors)
        self.assertTensorsEqual(offload_io.load_safetensors(path, framework="numpy"), tensors)

    def test_empty_checkpoint(self) -> None:
        path = self.file("empty.safetensors")
        offload_io.save_safetensors({}, path)
        n, header, data = parse_file(path)
        self.assertEqual((header, data), ({}, b""))
        self.assertEqual(n % 8, 0)
        self.assertEqual(offload_io.load_safetensors(path, framework="numpy"), {})

    def test_overwrites_longer_file(self) -> None:
        path = self.file("over.safetensors")
        with open(path, "wb") as f:
            f.write(b"\xff" * 10000)
        tensors = {"a": numpy.arange(4, dtype=numpy.uint8)}
        offload_io.save_safetensors(tensors, path)
        self.check_format(path, tensors)

    def test_shared_and_overlapping_memory(self) -> None:
        """Tied weights: one array under two names, and overlapping views of one array."""
        base = numpy.arange(64, dtype=numpy.float32)
        tensors = {"embed": base, "lm_head": base, "a": base[0:16], "b": base[8:24]}
        path = self.file("tied.safetensors")
        offload_io.save_safetensors(tensors, path)
        self.check_format(path, tensors)
        self.assertTensorsEqual(offload_io.load_safetensors(path, framework="numpy"), tensors)

    def test_save_errors(self) -> None:
        path = self.file("bad.safetensors")
        with self.assertRaises(TypeError):
            offload_io.save_safetensors({1: numpy.zeros(2)}, path)
        with self.assertRaisesRegex(TypeError, "no safetensors dtype"):
            offload_io.save_safetensors({"c": numpy.zeros(2, numpy.complex64)}, path)
        with self.assertRaisesRegex(TypeError, "no safetensors dtype"):
            offload_io.save_safetensors({"big_endian": numpy.zeros(2, ">f4")}, path)
        with self.assertRaisesRegex(ValueError, "not C-contiguous"):
            offload_io.save_safetensors({"s": numpy.zeros((4, 4), numpy.float32)[:, ::2]}, path)
        with self.assertRaises(TypeError):
            offload_io.save_safetensors({"o": object()}, path)
        with self.assertRaises(OSError) as cm:
            offload_io.save_safetensors({"x": numpy.zeros(2)}, self.file("no/such/dir.safetensors"))
        self.assertEqual(cm.exception.errno, errno.ENOENT)


    # A tensor named "__metadata__" would make a file no reader accepts.
    def test_tensor_named_metadata_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            offload_io.save_safetensors({"__metadata__": numpy.zeros(2, numpy.uint8)},
                                        self.file("m.safetensors"), metadata={"a": "b"})


class RoundTripTest(CheckpointCase):
    """save_safetensors, then load_safetensors onto the host and the host plugin's devices."""

    def setUp(self) -> None:
        super().setUp()
        self.tensors = every_dtype_tensors(3)
        self.path = self.file("model.safetensors")
        offload_io.save_safetensors(self.tensors, self.path, metadata={"kind": "test"})

    def test_load_cpu(self) -> None:
        for device in ("cpu", INITIAL):
            with self.subTest(device=device):
                got = offload_io.load_safetensors(self.path, device=device, framework="numpy")
                self.assertTensorsEqual(got, self.tensors)
                self.assertTrue(all(device_of(a) == INITIAL for a in got.values()))

    def test_load_default_arguments(self) -> None:
        if importlib.util.find_spec("torch") is not None:
            self.skipTest("PyTorch is installed: framework 'auto' gives PyTorch tensors")
        got = offload_io.load_safetensors(self.path)  # "cpu", NumPy without PyTorch
        self.assertTensorsEqual(got, self.tensors)

    def test_loaded_arrays_are_writable_and_independent(self) -> None:
        got = offload_io.load_safetensors(self.path, framework="numpy")
        got["f32.vector"][:] = 0
        again = offload_io.load_safetensors(self.path, framework="numpy")
        self.assertTensorsEqual(again, self.tensors)

    @needs_host_devices(1)
    def test_load_device(self) -> None:
        got = offload_io.load_safetensors(self.path, device=HOST_DEVICES[0], framework="numpy")
        self.assertTensorsEqual(got, self.tensors)
        for name, a in got.items():
            with self.subTest(tensor=name):
                self.assertEqual(device_of(a), HOST_DEVICES[0])

    @needs_host_devices(1)
    def test_device_arrays_save_again(self) -> None:
        got = offload_io.load_safetensors(self.path, device=HOST_DEVICES[0], framework="numpy")
        again = self.file("again.safetensors")
        offload_io.save_safetensors(got, again)
        self.assertTensorsEqual(offload_io.load_safetensors(again, framework="numpy"), self.tensors)

    @needs_host_devices(3)
    def test_split_over_devices(self) -> None:
        devices = HOST_DEVICES[:3]
        got = offload_io.load_safetensors(self.path, device=devices, framework="numpy")
        self.assertTensorsEqual(got, self.tensors)
        placed = {name: device_of(a) for name, a in got.items()}
        self.assertTrue(set(placed.values()) <= set(devices))
        with offload_io.Checkpoint(self.path) as ckpt:
            infos = list(ckpt)
        # The documented split: largest first (equal sizes in checkpoint order), each to the
        # device with the fewest bytes so far, the earlier on a tie.
        load = {d: 0 for d in devices}
        expected = {}
        for info in sorted(infos, key=lambda t: -t.nbytes):
            d = min(devices, key=lambda k: load[k])
            expected[info.name] = d
            load[d] += info.nbytes
        nonempty = {t.name for t in infos if t.nbytes}
        self.assertEqual({n: placed[n] for n in nonempty}, {n: expected[n] for n in nonempty})
        per_device = {d: sum(self.tensors[n].nbytes for n in got if placed[n] == d) for d in devices}
        largest = max(t.nbytes for t in infos)
        self.assertLessEqual(max(per_device.values()) - min(per_device.values()), largest)
        self.assertTrue(all(per_device[d] > 0 for d in devices), per_device)

    @needs_host_devices(3)
    def test_split_balanced_equal_sizes(self) -> None:
        tensors = {f"layer{i:02d}": numpy.full(256, i, numpy.float32) for i in range(12)}
        path = self.file("equal.safetensors")
        offload_io.save_safetensors(tensors, path)
        devices = HOST_DEVICES[:3]
        got = offload_io.load_safetensors(path, device=devices, framework="numpy")
        self.assertTensorsEqual(got, tensors)
        counts = [sum(1 for a in got.values() if device_of(a) == d) for d in devices]
        self.assertEqual(counts, [4, 4, 4])

    @needs_host_devices(1)
    def test_split_with_initial_device(self) -> None:
        got = offload_io.load_safetensors(self.path, device=[HOST_DEVICES[0], "cpu"], framework="numpy")
        self.assertTensorsEqual(got, self.tensors)
        self.assertEqual({device_of(a) for n, a in got.items() if a.nbytes}, {HOST_DEVICES[0], INITIAL})

    @needs_host_devices(4)
    def test_device_map(self) -> None:
        choices = HOST_DEVICES[:4] + [INITIAL, "cpu"]
        names = sorted(self.tensors)
        device_map = {name: choices[i % len(choices)] for i, name in enumerate(names)}
        got = offload_io.load_safetensors(self.path, device=device_map, framework="numpy")
        self.assertTensorsEqual(got, self.tensors)
        for name in names:
            want = device_map[name]
            want = INITIAL if want == "cpu" else want
            self.assertEqual(device_of(got[name]), want, name)

    def test_device_map_missing_name(self) -> None:
        device_map = {name: "cpu" for name in list(self.tensors)[1:]}
        with self.assertRaisesRegex(ValueError, "device map has no device"):
            offload_io.load_safetensors(self.path, device=device_map, framework="numpy")

    def test_empty_device_list(self) -> None:
        with self.assertRaisesRegex(ValueError, "empty list"):
            offload_io.load_safetensors(self.path, device=[], framework="numpy")

    def test_names_subset(self) -> None:
        names = ["f64.matrix", "bool.scalar", "u8.empty", "i16.vector"]
        for device in ["cpu"] + HOST_DEVICES[:1]:
            with self.subTest(device=device):
                got = offload_io.load_safetensors(self.path, device=device, names=names, framework="numpy")
                self.assertTensorsEqual(got, {n: self.tensors[n] for n in names})
        self.assertEqual(offload_io.load_safetensors(self.path, names=[], framework="numpy"), {})
        with self.assertRaises(KeyError):
            offload_io.load_safetensors(self.path, names=["no.such.tensor"], framework="numpy")

    def test_unknown_framework(self) -> None:
        with self.assertRaisesRegex(ValueError, "framework"):
            offload_io.load_safetensors(self.path, framework="jax")

    def test_unknown_device(self) -> None:
        with self.assertRaisesRegex(ValueError, "unknown device"):
            offload_io.load_safetensors(self.path, device="tpu", framework="numpy")
        with self.assertRaises(OSError) as cm:
            offload_io.load_safetensors(self.path, device=offload_io.num_devices() + 5, framework="numpy")
        self.assertEqual(cm.exception.errno, errno.ENODEV)


class CheckpointTest(CheckpointCase):
    """Checkpoint: the header of an open checkpoint."""

    def setUp(self) -> None:
        super().setUp()
        rng = numpy.random.default_rng(4)
        self.tensors = {"w": sample("float32", (4, 6), rng), "b": sample("float64", (6,), rng),
                        "mask": sample("bool", (5,), rng), "step": numpy.array(7, numpy.int64),
                        "none": numpy.zeros((2, 0), numpy.int32)}
        self.path = self.file("ckpt.safetensors")
        offload_io.save_safetensors(self.tensors, self.path, metadata={"a": "1", "b": "two"})

    def test_tensor_info(self) -> None:
        n, header, _ = parse_file(self.path)
        with offload_io.Checkpoint(self.path) as ckpt:
            infos = list(ckpt)
            self.assertEqual(len(ckpt), len(self.tensors))
        self.assertEqual(sorted(t.name for t in infos), sorted(self.tensors))
        self.assertEqual([t.index for t in infos], list(range(len(infos))))
        for info in infos:
            with self.subTest(tensor=info.name):
                self.assertIsInstance(info, offload_io.TensorInfo)
                e = header[info.name]
                self.assertEqual(info.dtype, e["dtype"])
                self.assertEqual(info.shape, tuple(e["shape"]))
                self.assertIsInstance(info.shape, tuple)
                self.assertEqual(info.nbytes, self.tensors[info.name].nbytes)
                self.assertEqual(info.file, 0)
                self.assertEqual(info.file_offset, 8 + n + e["data_offsets"][0])
                with self.assertRaises(Exception):
                    info.nbytes = 0  # frozen

    def test_keys_in_data_order(self) -> None:
        _, header, _ = parse_file(self.path)
        with offload_io.Checkpoint(self.path) as ckpt:
            keys = ckpt.keys()
            offsets = [ckpt[k].file_offset for k in keys]
        self.assertEqual(sorted(keys), sorted(self.tensors))
        self.assertEqual(offsets, sorted(offsets))

    def test_contains_and_getitem(self) -> None:
        with offload_io.Checkpoint(self.path) as ckpt:
            self.assertIn("w", ckpt)
            self.assertNotIn("nope", ckpt)
            self.assertNotIn(3, ckpt)
            self.assertEqual(ckpt["w"].shape, (4, 6))
            with self.assertRaisesRegex(KeyError, "nope"):
                ckpt["nope"]

    def test_metadata_and_files(self) -> None:
        with offload_io.Checkpoint(self.path) as ckpt:
            self.assertEqual(ckpt.metadata(), {"a": "1", "b": "two"})
            self.assertEqual(ckpt.metadata(0), {"a": "1", "b": "two"})
            self.assertEqual(ckpt.metadata(5), {})
            self.assertEqual(ckpt.files, [self.path])
            self.assertEqual(ckpt.path, self.path)
        path = self.file("plain.safetensors")
        offload_io.save_safetensors({"x": numpy.zeros(1)}, path)
        with offload_io.Checkpoint(path) as ckpt:
            self.assertEqual(ckpt.metadata(), {})

    def test_load(self) -> None:
        with offload_io.Checkpoint(self.path) as ckpt:
            self.assertTensorsEqual(ckpt.load(framework="numpy"), self.tensors)
            self.assertTensorsEqual(ckpt.load(names=["w"], framework="numpy"), {"w": self.tensors["w"]})
            if HOST_DEVICES:
                self.assertTensorsEqual(ckpt.load(HOST_DEVICES[-1], framework="numpy"), self.tensors)

    def test_loaded_tensors_outlive_close(self) -> None:
        args = (HOST_DEVICES[0],) if HOST_DEVICES else ()
        with offload_io.Checkpoint(self.path) as ckpt:
            got = ckpt.load(*args, framework="numpy")
        self.assertTensorsEqual(got, self.tensors)

    def test_use_after_close(self) -> None:
        ckpt = offload_io.Checkpoint(self.path)
        with ckpt:
            pass
        for what, call in (("files", lambda: ckpt.files), ("metadata", ckpt.metadata),
                           ("load", lambda: ckpt.load(framework="numpy"))):
            with self.subTest(call=what):
                with self.assertRaisesRegex(ValueError, "is closed"):
                    call()
        ckpt.close()  # twice is fine

    def test_bf16_and_f8_with_numpy(self) -> None:
        path = self.file("bf16.safetensors")
        header = {"bf": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]},
                  "f8": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [4, 8]},
                  "e5": {"dtype": "F8_E5M2", "shape": [2], "data_offsets": [8, 10]},
                  "ok": {"dtype": "U8", "shape": [2], "data_offsets": [10, 12]}}
        write_raw(path, header, bytes(range(12)))
        with offload_io.Checkpoint(path) as ckpt:
            self.assertEqual({t.name: t.dtype for t in ckpt},
                             {"bf": "BF16", "f8": "F8_E4M3", "e5": "F8_E5M2", "ok": "U8"})
        for name in ("bf", "f8", "e5"):
            with self.subTest(tensor=name):
                with self.assertRaisesRegex(TypeError, "NumPy has no"):
                    offload_io.load_safetensors(path, names=[name], framework="numpy")
        with self.assertRaisesRegex(TypeError, "NumPy has no BF16"):
            offload_io.load_safetensors(path, framework="numpy")
        got = offload_io.load_safetensors(path, names=["ok"], framework="numpy")
        self.assertEqual(got["ok"].tobytes(), bytes([10, 11]))

    def test_reads_files_written_by_hand(self) -> None:
        """Unpadded header, a gap between tensors, key order unlike data order."""
        path = self.file("hand.safetensors")
        a = numpy.arange(6, dtype="<i2")
        b = numpy.array([1.5, -2.0], dtype="<f4")
        header = {"b": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]},
                  "a": {"dtype": "I16", "shape": [2, 3], "data_offsets": [0, 12]},
                  "__metadata__": {"x": "y"}}
        write_raw(path, header, a.tobytes() + b"\0" * 4 + b.tobytes(), pad=False)
        got = offload_io.load_safetensors(path, framework="numpy")
        self.assertTensorsEqual(got, {"a": a.reshape(2, 3), "b": b})
        with offload_io.Checkpoint(path) as ckpt:
            self.assertEqual(ckpt.keys(), ["a", "b"])
            self.assertEqual(ckpt.metadata(), {"x": "y"})


class ShardedTest(CheckpointCase):
    """A checkpoint of three shards and a model.safetensors.index.json."""

    def setUp(self) -> None:
        super().setUp()
        self.tensors = every_dtype_tensors(5)
        self.index, self.weight_map = self.write_shards(self.tensors)

    def test_load_through_index(self) -> None:
        got = offload_io.load_safetensors(self.index, framework="numpy")
        self.assertTensorsEqual(got, self.tensors)

    def test_checkpoint_of_index(self) -> None:
        with offload_io.Checkpoint(self.index) as ckpt:
            files = ckpt.files
            self.assertEqual(len(files), 3)
            self.assertEqual(sorted(os.path.basename(f) for f in files),
                             sorted(set(self.weight_map.values())))
            self.assertEqual(files, sorted(files))
            self.assertEqual(sorted(ckpt.keys()), sorted(self.tensors))
            for info in ckpt:
                with self.subTest(tensor=info.name):
                    shard = files[info.file]
                    self.assertEqual(os.path.basename(shard), self.weight_map[info.name])
                    n, header, _ = parse_file(shard)
                    self.assertEqual(info.file_offset, 8 + n + header[info.name]["data_offsets"][0])
            self.assertEqual([t.file for t in ckpt], sorted(t.file for t in ckpt))

    @needs_host_devices(3)
    def test_split_over_devices(self) -> None:
        got = offload_io.load_safetensors(self.index, device=HOST_DEVICES[:3], framework="numpy")
        self.assertTensorsEqual(got, self.tensors)
        used = {device_of(a) for a in got.values() if a.nbytes}
        self.assertEqual(used, set(HOST_DEVICES[:3]))

    @needs_host_devices(1)
    def test_names_across_shards(self) -> None:
        names = sorted(self.tensors)[:7]
        self.assertGreater(len({self.weight_map[n] for n in names}), 1)
        got = offload_io.load_safetensors(self.index, device=HOST_DEVICES[0], names=names, framework="numpy")
        self.assertTensorsEqual(got, {n: self.tensors[n] for n in names})

    def test_unlisted_tensor_of_a_shard_is_not_listed(self) -> None:
        extra = self.file("extra.safetensors")
        offload_io.save_safetensors({"in": numpy.ones(2), "out": numpy.zeros(2)}, extra)
        index = self.file("partial.safetensors.index.json")
        with open(index, "w") as f:
            json.dump({"weight_map": {"in": "extra.safetensors"}}, f)
        with offload_io.Checkpoint(index) as ckpt:
            self.assertEqual(ckpt.keys(), ["in"])

    def test_index_errors(self) -> None:
        cases = [
            ({"weight_map": {"a": "missing.safetensors"}}, errno.ENOENT, "missing.safetensors"),
            ({"weight_map": {"not.there": os.path.basename(next(iter(self.weight_map.values())))}},
             errno.EINVAL, "'not.there' is not in shard"),
            ({"weight_map": {"a": "../x.safetensors"}}, errno.EINVAL, "is not a file name inside"),
            ({"weight_map": {"a": "/etc/passwd"}}, errno.EINVAL, "is not a file name inside"),
            ({"metadata": {}}, errno.EINVAL, "no 'weight_map'"),
        ]
        for i, (content, code, fragment) in enumerate(cases):
            with self.subTest(index=content):
                path = self.file(f"bad{i}.index.json")
                with open(path, "w") as f:
                    json.dump(content, f)
                with self.assertRaises(OSError) as cm:
                    offload_io.load_safetensors(path, framework="numpy")
                self.assertLibraryError(cm.exception, code, fragment)
        path = self.file("notjson.index.json")
        with open(path, "w") as f:
            f.write("{weight_map: }")
        with self.assertRaises(OSError) as cm:
            offload_io.Checkpoint(path)
        self.assertLibraryError(cm.exception, errno.EINVAL, "safetensors index")


class ErrorTest(CheckpointCase):
    """What open and load refuse: errno and the library's message."""

    def test_missing_file(self) -> None:
        path = self.file("missing.safetensors")
        with self.assertRaises(OSError) as cm:
            offload_io.load_safetensors(path, framework="numpy")
        self.assertIsInstance(cm.exception, FileNotFoundError)
        self.assertLibraryError(cm.exception, errno.ENOENT, path)

    def test_directory(self) -> None:
        with self.assertRaises(OSError) as cm:
            offload_io.Checkpoint(self.dir)
        self.assertLibraryError(cm.exception, errno.EISDIR, self.dir)

    def test_malformed_headers(self) -> None:
        def one(dtype: str, shape: list, offsets: list) -> bytes:
            return json.dumps({"t": {"dtype": dtype, "shape": shape, "data_offsets": offsets}}).encode()

        good = {"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
        cases = {
            "not json": (b"{not json}", bytes(8), "not JSON"),
            "not an object": (b"[1, 2, 3]", b"", "safetensors header"),
            "unknown dtype": (one("Q9", [1], [0, 1]), bytes(1), "unknown dtype 'Q9'"),
            "wrong length": (one("F32", [3], [0, 8]), bytes(8), "'t'"),
            "negative dimension": (one("U8", [-1], [0, 0]), b"", "'t'"),
            "overlap": (json.dumps({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                                    "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}).encode(),
                        bytes(6), "overlap"),
            "offsets past the data": (json.dumps(good).encode(), bytes(4), "outside the data section"),
            "missing shape": (json.dumps({"t": {"dtype": "U8", "data_offsets": [0, 1]}}).encode(),
                              bytes(1), "'t'"),
            "bad metadata": (json.dumps({"__metadata__": {"k": 1}}).encode(), b"", "__metadata__"),
        }
        for what, (header, data, fragment) in cases.items():
            with self.subTest(case=what):
                path = self.file("bad.safetensors")
                header += b" " * (-len(header) % 8)
                with open(path, "wb") as f:
                    f.write(struct.pack("<Q", len(header)) + header + data)
                with self.assertRaises(OSError) as cm:
                    offload_io.load_safetensors(path, framework="numpy")
                self.assertLibraryError(cm.exception, errno.EINVAL, fragment)
                self.assertIn(path, str(cm.exception))

    def test_short_files(self) -> None:
        path = self.file("short.safetensors")
        for content, fragment in ((b"", "shorter than the 8-byte header length"),
                                  (b"\x02\0", "shorter than the 8-byte header length"),
                                  (struct.pack("<Q", 64) + b"{}", "more than the")):
            with self.subTest(content=content):
                with open(path, "wb") as f:
                    f.write(content)
                with self.assertRaises(OSError) as cm:
                    offload_io.Checkpoint(path)
                self.assertLibraryError(cm.exception, errno.EINVAL, fragment)

    def test_huge_header_length(self) -> None:
        path = self.file("huge.safetensors")
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", 1 << 40) + b"{}")
        with self.assertRaises(OSError) as cm:
            offload_io.Checkpoint(path)
        self.assertLibraryError(cm.exception, errno.EOVERFLOW, "over the limit")

    def test_truncated_file(self) -> None:
        tensors = every_dtype_tensors(6)
        path = self.file("cut.safetensors")
        offload_io.save_safetensors(tensors, path)
        size = os.path.getsize(path)
        # Cut before open: the header's offsets lie outside the data section.
        cut = self.file("cut2.safetensors")
        with open(path, "rb") as src, open(cut, "wb") as dst:
            dst.write(src.read()[:size - 16])
        with self.assertRaises(OSError) as cm:
            offload_io.load_safetensors(cut, framework="numpy")
        self.assertLibraryError(cm.exception, errno.EINVAL, "outside the data section")
        # Cut after open: the load fails with EIO, naming the file.
        for device in ["cpu"] + HOST_DEVICES[:1]:
            with self.subTest(device=device):
                offload_io.save_safetensors(tensors, path)
                with offload_io.Checkpoint(path) as ckpt:
                    os.truncate(path, size - 16)
                    with self.assertRaises(OSError) as cm:
                        ckpt.load(device, framework="numpy")
                    self.assertEqual(cm.exception.errno, errno.EIO)
                    self.assertIn(path, str(cm.exception))
                    self.assertIn(_native.last_error(), str(cm.exception))


def _require_reference(case: unittest.TestCase) -> None:
    if reference is None:
        if REQUIRE_REFERENCE:
            case.fail("OFFLOAD_IO_TEST_REQUIRE_REFERENCE=1 but `import safetensors.numpy` fails")
        case.skipTest("the reference implementation (safetensors.numpy) is not installed")


class ReferenceCompatTest(CheckpointCase):
    """Round trips with the reference implementation (python3-safetensors), compared byte for
    byte. Skipped without it unless OFFLOAD_IO_TEST_REQUIRE_REFERENCE=1."""

    def setUp(self) -> None:
        _require_reference(self)
        super().setUp()

    def test_reference_save_ours_load(self) -> None:
        tensors = every_dtype_tensors(7)
        path = self.file("ref.safetensors")
        reference.save_file(tensors, path, metadata={"format": "np", "origin": "reference"})
        self.assertTensorsEqual(offload_io.load_safetensors(path, framework="numpy"), tensors)
        with offload_io.Checkpoint(path) as ckpt:
            self.assertEqual(ckpt.metadata(), {"format": "np", "origin": "reference"})
            n, header, _ = parse_file(path)
            for info in ckpt:
                self.assertEqual(info.file_offset, 8 + n + header[info.name]["data_offsets"][0])
        if HOST_DEVICES:
            got = offload_io.load_safetensors(path, device=HOST_DEVICES[:3], framework="numpy")
            self.assertTensorsEqual(got, tensors)

    def test_reference_shards_ours_load(self) -> None:
        tensors = every_dtype_tensors(8)
        index, _ = self.write_shards(tensors, 3, save=lambda t, p: reference.save_file(t, p))
        self.assertTensorsEqual(offload_io.load_safetensors(index, framework="numpy"), tensors)
        if HOST_DEVICES:
            got = offload_io.load_safetensors(index, device=HOST_DEVICES[:3], framework="numpy")
            self.assertTensorsEqual(got, tensors)

    def test_ours_save_reference_load(self) -> None:
        tensors = every_dtype_tensors(9)
        path = self.file("ours.safetensors")
        offload_io.save_safetensors(tensors, path, metadata={"format": "np", "n": "1"})
        got = reference.load_file(path)
        self.assertTensorsEqual(got, tensors)
        from safetensors import safe_open

        with safe_open(path, framework="np") as f:
            self.assertEqual(f.metadata(), {"format": "np", "n": "1"})
            self.assertEqual(sorted(f.keys()), sorted(tensors))

    def test_ours_save_reference_load_shards(self) -> None:
        tensors = every_dtype_tensors(10)
        _, weight_map = self.write_shards(tensors, 3)
        got = {}
        for shard in sorted(set(weight_map.values())):
            got.update(reference.load_file(self.file(shard)))
        self.assertTensorsEqual(got, tensors)

    @needs_host_devices(1)
    def test_device_arrays_saved_for_reference(self) -> None:
        tensors = every_dtype_tensors(11)
        path = self.file("a.safetensors")
        reference.save_file(tensors, path)
        on_device = offload_io.load_safetensors(path, device=HOST_DEVICES[0], framework="numpy")
        again = self.file("b.safetensors")
        offload_io.save_safetensors(on_device, again)
        self.assertTensorsEqual(reference.load_file(again), tensors)

    def test_same_bytes_as_reference(self) -> None:
        """Both files hold every tensor's bytes, and each reads the other's."""
        tensors = every_dtype_tensors(12)
        ours, theirs = self.file("ours.safetensors"), self.file("theirs.safetensors")
        offload_io.save_safetensors(tensors, ours)
        reference.save_file(tensors, theirs)
        _, h1, d1 = parse_file(ours)
        _, h2, d2 = parse_file(theirs)
        self.assertEqual(len(d1), len(d2))
        for name in tensors:
            with self.subTest(tensor=name):
                self.assertEqual((h1[name]["dtype"], h1[name]["shape"]),
                                 (h2[name]["dtype"], h2[name]["shape"]))
                b1 = d1[slice(*h1[name]["data_offsets"])]
                b2 = d2[slice(*h2[name]["data_offsets"])]
                self.assertTrue(numpy.array_equal(numpy.frombuffer(b1, numpy.uint8),
                                                  numpy.frombuffer(b2, numpy.uint8)))
        self.assertTensorsEqual(reference.load_file(ours),
                                offload_io.load_safetensors(theirs, framework="numpy"))

    def test_empty_checkpoint(self) -> None:
        ours, theirs = self.file("ours.safetensors"), self.file("theirs.safetensors")
        offload_io.save_safetensors({}, ours)
        reference.save_file({}, theirs)
        self.assertEqual(reference.load_file(ours), {})
        self.assertEqual(offload_io.load_safetensors(theirs, framework="numpy"), {})


if __name__ == "__main__":
    unittest.main()
