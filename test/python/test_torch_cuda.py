# SPDX-License-Identifier: Apache-2.0
"""Tests of offload_io with PyTorch CUDA tensors (the GPU machine).

Skipped unless `import torch` works and torch.cuda.is_available(); the
comparisons with safetensors.torch run where that is importable too.

    PYTHONPATH=build-gpu/python python3 -m unittest discover -s test/python -v
"""

from __future__ import annotations

import errno
import json
import os
import struct
import tempfile
import unittest
from typing import Any, Dict, List, Tuple

import numpy

import offload_io
from offload_io import _native  # last_error(): the library's message, to compare with

try:
    import torch
except ImportError:
    torch = None

try:
    import safetensors.torch as reference
except ImportError:
    reference = None

HAVE_CUDA = torch is not None and torch.cuda.is_available()
INITIAL = offload_io.initial_device()


def _devices_of(target: str) -> List[int]:
    """The OpenMP devices of a plugin target, by their number there."""
    found = []
    for d in range(offload_io.num_devices()):
        try:
            t, local = offload_io.describe_device(d)
        except OSError:
            continue
        if t == target:
            found.append((local, d))
    return [d for _, d in sorted(found)]


CUDA_DEVICES = _devices_of("cuda") if HAVE_CUDA else []
HOST_DEVICES = _devices_of("x86_64")

# The safetensors dtypes and their PyTorch names (some only in newer PyTorch).
TORCH_DTYPES = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
    "I16": "int16", "U16": "uint16", "F16": "float16", "BF16": "bfloat16", "I32": "int32",
    "U32": "uint32", "F32": "float32", "F64": "float64", "I64": "int64", "U64": "uint64",
}


def torch_dtypes() -> Dict[str, Any]:
    """The safetensors dtypes this PyTorch has."""
    return {k: getattr(torch, v) for k, v in TORCH_DTYPES.items() if hasattr(torch, v)}


def random_tensor(dtype: Any, shape: Tuple[int, ...], gen: Any) -> Any:
    """A CPU tensor of random bytes (random 0/1 for bool)."""
    n = 1
    for s in shape:
        n *= s
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
    size = torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(0, 256, (n * size,), dtype=torch.uint8, generator=gen)
    return raw.view(dtype).reshape(shape)


def every_dtype_tensors(seed: int = 1) -> Dict[str, Any]:
    """CPU tensors: for each dtype a vector, a matrix, a scalar and an empty tensor."""
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for name, dtype in torch_dtypes().items():
        out[f"{name.lower()}.vector"] = random_tensor(dtype, (33,), gen)
        out[f"{name.lower()}.matrix"] = random_tensor(dtype, (4, 3, 2), gen)
        out[f"{name.lower()}.scalar"] = random_tensor(dtype, (), gen)
        out[f"{name.lower()}.empty"] = torch.empty((0, 5), dtype=dtype)
    return out


def raw_bytes(t: Any) -> bytes:
    """The bytes of a tensor of any device and dtype."""
    flat = t.detach().to("cpu").contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def ready(t: Any) -> Any:
    """t, once the kernels that fill it are done: offload_io reads and writes the tensor's
    memory outside PyTorch's streams."""
    torch.cuda.synchronize(t.device)
    return t


PATTERN = bytes((i * 13 + 5) % 256 for i in range(1 << 16))


# On the GPU machine's round (tools/gpu/run-on-device.sh, step python) a skip
# would hide a broken setup: OFFLOAD_IO_TEST_REQUIRE_TORCH_CUDA=1 makes it a failure.
REQUIRE_TORCH_CUDA = os.environ.get("OFFLOAD_IO_TEST_REQUIRE_TORCH_CUDA") == "1"


@unittest.skipUnless(HAVE_CUDA or REQUIRE_TORCH_CUDA, "needs PyTorch with CUDA")
class TorchCudaCase(unittest.TestCase):
    def setUp(self) -> None:
        if not HAVE_CUDA:
            self.fail("OFFLOAD_IO_TEST_REQUIRE_TORCH_CUDA=1 but PyTorch sees no CUDA device")
        if not CUDA_DEVICES:
            self.fail("PyTorch sees a CUDA device, but no OpenMP device of offload-io is a CUDA one")
        tmp = tempfile.TemporaryDirectory(prefix="offload_io_cuda_")
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.path = os.path.join(self.dir, "data.bin")
        with open(self.path, "wb") as f:
            f.write(PATTERN)
        self.cuda = CUDA_DEVICES[0]

    def file(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def open_fd(self, flags: int = os.O_RDWR, path: str = "") -> int:
        fd = os.open(path or self.path, flags | os.O_CREAT, 0o600)
        self.addCleanup(os.close, fd)
        return fd

    def assertTensorsEqual(self, got: Dict[str, Any], expected: Dict[str, Any], device: Any = None) -> None:
        """Same names, and per tensor the same dtype, shape and bytes (and device, if given)."""
        self.assertEqual(sorted(got), sorted(expected))
        for name, want in expected.items():
            with self.subTest(tensor=name):
                have = got[name]
                self.assertIsInstance(have, torch.Tensor)
                self.assertEqual(have.dtype, want.dtype)
                self.assertEqual(tuple(have.shape), tuple(want.shape))
                if device is not None:
                    self.assertEqual(have.device, torch.device(device))
                self.assertEqual(raw_bytes(have), raw_bytes(want))

    def assertLibraryError(self, exc: BaseException, code: int, fragment: str) -> None:
        self.assertIsInstance(exc, OSError)
        self.assertEqual(exc.errno, code, str(exc))
        self.assertIn(_native.last_error(), str(exc))
        self.assertIn(fragment, str(exc))


class CudaIOTest(TorchCudaCase):
    """pread, pwrite, async and batch with CUDA tensors; the device comes from the tensor."""

    def test_pread_infers_device(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        t = ready(torch.zeros(1000, dtype=torch.float32, device="cuda:0"))
        self.assertEqual(offload_io.pread(fd, t, offset=64), 4000)
        torch.cuda.synchronize()
        self.assertEqual(raw_bytes(t), PATTERN[64:4064])

    def test_pread_count_and_short_read(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        t = ready(torch.full((256,), 0xEE, dtype=torch.uint8, device="cuda:0"))
        self.assertEqual(offload_io.pread(fd, t, offset=3, count=50), 50)
        self.assertEqual(offload_io.pread(fd, t[100:], offset=len(PATTERN) - 20), 20)
        torch.cuda.synchronize()
        data = raw_bytes(t)
        self.assertEqual(data[:50], PATTERN[3:53])
        self.assertEqual(data[50:100], b"\xee" * 50)
        self.assertEqual(data[100:120], PATTERN[-20:])
        self.assertEqual(data[120:], b"\xee" * 136)

    def test_pwrite_from_cuda_tensor(self) -> None:
        out = self.file("out.bin")
        fd = self.open_fd(os.O_WRONLY, out)
        t = ready(torch.arange(5000, dtype=torch.int64, device="cuda:0"))
        torch.cuda.synchronize()
        self.assertEqual(offload_io.pwrite(fd, t, offset=8), t.numel() * 8)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), bytes(8) + raw_bytes(t))

    def test_every_cuda_device(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        for local in range(torch.cuda.device_count()):
            with self.subTest(cuda=local):
                t = ready(torch.zeros(4096, dtype=torch.uint8, device=f"cuda:{local}"))
                self.assertEqual(offload_io.pread(fd, t, offset=local * 100), 4096)
                torch.cuda.synchronize(local)
                self.assertEqual(raw_bytes(t), PATTERN[local * 100:local * 100 + 4096])

    def test_device_names(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        t = ready(torch.zeros(16, dtype=torch.uint8, device="cuda:0"))
        for device in ("cuda:0", "cuda", torch.device("cuda:0"), self.cuda):
            with self.subTest(device=device):
                self.assertEqual(offload_io.pread(fd, t, device=device), 16)

    def test_async_and_batch(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = ready(torch.zeros(2048, dtype=torch.uint8, device="cuda:0"))
        b = ready(torch.zeros(2048, dtype=torch.uint8, device="cuda:0"))
        h = numpy.zeros(2048, numpy.uint8)
        self.assertEqual(offload_io.pread_async(fd, a, offset=100).wait(), 2048)
        with offload_io.Batch() as batch:
            batch.read(fd, b, offset=200)
            batch.read(fd, h, offset=300)
        self.assertEqual(batch.results, [2048, 2048])
        torch.cuda.synchronize()
        self.assertEqual(raw_bytes(a), PATTERN[100:2148])
        self.assertEqual(raw_bytes(b), PATTERN[200:2248])
        self.assertEqual(h.tobytes(), PATTERN[300:2348])

    def test_stats(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        before = offload_io.stats(self.cuda)
        t = ready(torch.zeros(1 << 16, dtype=torch.uint8, device="cuda:0"))
        offload_io.pread(fd, t)
        after = offload_io.stats(self.cuda)
        self.assertEqual(sum(after["bytes_read"].values()) - sum(before["bytes_read"].values()), 1 << 16)

    def test_non_contiguous_is_value_error(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        t = ready(torch.zeros((8, 8), dtype=torch.float32, device="cuda:0"))
        with self.assertRaisesRegex(ValueError, "not C-contiguous"):
            offload_io.pread(fd, t.T)

    def test_tensor_of_another_device_is_efault(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        cpu = torch.zeros(16, dtype=torch.uint8)
        with self.assertRaises(OSError) as cm:
            offload_io.pread(fd, cpu, device="cuda:0")
        self.assertLibraryError(cm.exception, errno.EFAULT, "device")
        gpu = ready(torch.zeros(16, dtype=torch.uint8, device="cuda:0"))
        if HOST_DEVICES:
            with self.assertRaises(OSError) as cm:
                offload_io.pread(fd, gpu, device=HOST_DEVICES[0])
            self.assertLibraryError(cm.exception, errno.EFAULT, "is not memory of this device")
        if len(CUDA_DEVICES) > 1:
            with self.assertRaises(OSError) as cm:
                offload_io.pread(fd, gpu, device=CUDA_DEVICES[1])
            self.assertLibraryError(cm.exception, errno.EFAULT, "device")

    def test_cpu_tensor(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        t = torch.zeros(100, dtype=torch.int16)  # DLPack, the initial device
        self.assertEqual(offload_io.pread(fd, t), 200)
        self.assertEqual(raw_bytes(t), PATTERN[:200])


class CudaSafetensorsTest(TorchCudaCase):
    """Checkpoints onto and from CUDA tensors, compared with safetensors.torch."""

    def save(self, tensors: Dict[str, Any], path: str) -> None:
        """Save CPU tensors with the reference, or with ours where it is missing."""
        if reference is not None:
            reference.save_file(tensors, path)
        else:
            offload_io.save_safetensors(tensors, path)

    def test_all_dtypes_present(self) -> None:
        have = torch_dtypes()
        version = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
        if version >= (2, 3):
            self.assertEqual(len(have), 15, sorted(set(TORCH_DTYPES) - set(have)))

    def test_load_cuda(self) -> None:
        tensors = every_dtype_tensors(1)
        path = self.file("model.safetensors")
        self.save(tensors, path)
        got = offload_io.load_safetensors(path, device="cuda:0")
        torch.cuda.synchronize()
        self.assertTensorsEqual(got, tensors, device="cuda:0")
        if reference is not None:
            theirs = reference.load_file(path, device="cuda:0")
            self.assertTensorsEqual(got, theirs, device="cuda:0")

    def test_load_by_dtype(self) -> None:
        """One dtype per checkpoint, so that a failing dtype is named."""
        for name, dtype in torch_dtypes().items():
            with self.subTest(dtype=name):
                gen = torch.Generator().manual_seed(3)
                tensors = {"t": random_tensor(dtype, (17, 3), gen), "s": random_tensor(dtype, (), gen)}
                path = self.file(f"{name}.safetensors")
                self.save(tensors, path)
                got = offload_io.load_safetensors(path, device="cuda:0", framework="torch")
                torch.cuda.synchronize()
                self.assertTensorsEqual(got, tensors, device="cuda:0")

    def test_save_from_cuda(self) -> None:
        tensors = every_dtype_tensors(2)
        on_gpu = {k: v.to("cuda:0") for k, v in tensors.items()}
        torch.cuda.synchronize()  # the copies run on PyTorch's stream
        path = self.file("from_gpu.safetensors")
        offload_io.save_safetensors(on_gpu, path, metadata={"format": "pt"})
        if reference is not None:
            self.assertTensorsEqual(reference.load_file(path), tensors, device="cpu")
        self.assertTensorsEqual(offload_io.load_safetensors(path, device="cpu", framework="torch"), tensors)

    def test_save_by_dtype_from_cuda(self) -> None:
        for name, dtype in torch_dtypes().items():
            with self.subTest(dtype=name):
                gen = torch.Generator().manual_seed(4)
                tensors = {"t": random_tensor(dtype, (9, 2), gen)}
                path = self.file(f"save_{name}.safetensors")
                offload_io.save_safetensors({"t": ready(tensors["t"].to("cuda:0"))}, path)
                with open(path, "rb") as f:
                    (n,) = struct.unpack("<Q", f.read(8))
                    header = json.loads(f.read(n))
                self.assertEqual(header["t"]["dtype"], name)
                if reference is not None:
                    self.assertTensorsEqual(reference.load_file(path), tensors)

    def test_load_sharded(self) -> None:
        tensors = every_dtype_tensors(5)
        names = sorted(tensors)
        weight_map = {}
        for k in range(3):
            shard = f"model-{k + 1:05d}-of-00003.safetensors"
            part = {n: tensors[n] for n in names[k::3]}
            self.save(part, self.file(shard))
            weight_map.update({n: shard for n in part})
        index = self.file("model.safetensors.index.json")
        with open(index, "w") as f:
            json.dump({"metadata": {}, "weight_map": weight_map}, f)
        got = offload_io.load_safetensors(index, device=torch.device("cuda:0"), framework="torch")
        torch.cuda.synchronize()
        self.assertTensorsEqual(got, tensors, device="cuda:0")

    def test_split_over_gpus_and_host(self) -> None:
        tensors = every_dtype_tensors(6)
        path = self.file("split.safetensors")
        self.save(tensors, path)
        devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())] + ["cpu"]
        got = offload_io.load_safetensors(path, device=devices, framework="torch")
        torch.cuda.synchronize()
        self.assertTensorsEqual(got, tensors)
        used = {str(t.device) for t in got.values() if t.numel()}
        self.assertEqual(used, {str(torch.device(d)) for d in devices})

    def test_names_and_device_map(self) -> None:
        tensors = every_dtype_tensors(7)
        path = self.file("map.safetensors")
        self.save(tensors, path)
        names = sorted(tensors)[:6]
        device_map = {n: ("cuda:0" if i % 2 else "cpu") for i, n in enumerate(names)}
        got = offload_io.load_safetensors(path, device=device_map, names=names, framework="torch")
        torch.cuda.synchronize()
        self.assertTensorsEqual(got, {n: tensors[n] for n in names})
        for n in names:
            self.assertEqual(got[n].device, torch.device(device_map[n]))


if __name__ == "__main__":
    unittest.main()
