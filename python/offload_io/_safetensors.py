# SPDX-License-Identifier: Apache-2.0
"""Safetensors checkpoints: one file or the shards of a model.safetensors.index.json.

Headers are read and checked by libompx_io; tensors are allocated by the framework
asked (PyTorch, NumPy, CuPy) on the device asked and read with one ompx_io batch.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _devices
from ._buffers import memory_of, synchronize_streams
from ._device_buffer import DeviceBuffer
from ._io import Batch
from ._native import (SafetensorsLoad, SafetensorsTensor, last_error, native,
                      raise_errno)

DTYPES = ("BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "I16", "U16", "F16", "BF16",
          "I32", "U32", "F32", "F64", "I64", "U64")
_SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2, "U16": 2,
          "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}
_NUMPY = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
          "F16": "float16", "I32": "int32", "U32": "uint32", "F32": "float32",
          "F64": "float64", "I64": "int64", "U64": "uint64"}
_TORCH = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "F8_E4M3": "float8_e4m3fn",
          "F8_E5M2": "float8_e5m2", "I16": "int16", "U16": "uint16", "F16": "float16",
          "BF16": "bfloat16", "I32": "int32", "U32": "uint32", "F32": "float32",
          "F64": "float64", "I64": "int64", "U64": "uint64"}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a checkpoint, as its header describes it."""

    name: str
    dtype: str
    shape: Tuple[int, ...]
    nbytes: int
    file: int
    file_offset: int
    index: int


def _framework(name: str, device_target: str) -> str:
    if name != "auto":
        if name not in ("torch", "numpy", "cupy"):
            raise ValueError(f"offload_io: framework {name!r}: use 'torch', 'numpy' or 'cupy'")
        return name
    try:
        import torch  # noqa: F401

        return "torch"
    except ImportError:
        return "cupy" if device_target in ("cuda", "amdgpu") else "numpy"


def _numpy_dtype(dtype: str) -> Any:
    import numpy

    if dtype not in _NUMPY:
        raise TypeError(f"offload_io: NumPy has no {dtype}; load with framework='torch'")
    return numpy.dtype(_NUMPY[dtype])


class Checkpoint:
    """An open checkpoint. Iterating gives its TensorInfo; `load` reads tensors.

        with offload_io.Checkpoint("model.safetensors.index.json") as ckpt:
            state = ckpt.load(device="cuda:0")
    """

    def __init__(self, path: "os.PathLike[str] | str") -> None:
        self.path = os.fspath(path)
        handle = ctypes.c_void_p()
        if native().io.ompx_safetensors_open(self.path.encode(), ctypes.byref(handle)) != 0:
            raise_errno(f"open {self.path}")
        self._handle: Optional[int] = handle.value
        self._tensors = [self._describe(i) for i in range(native().io.ompx_safetensors_num_tensors(self._handle))]
        self._by_name = {t.name: t for t in self._tensors}

    def _open_handle(self) -> int:
        if self._handle is None:
            raise ValueError(f"offload_io: checkpoint {self.path} is closed")
        return self._handle

    def _describe(self, index: int) -> TensorInfo:
        t = SafetensorsTensor()
        if native().io.ompx_safetensors_tensor(self._handle, index, ctypes.byref(t)) != 0:
            raise_errno(f"tensor {index} of {self.path}")
        return TensorInfo(t.name.decode("utf-8", "replace"), DTYPES[t.dtype],
                          tuple(int(t.shape[i]) for i in range(t.ndim)), int(t.nbytes), int(t.file),
                          int(t.file_offset), index)

    @property
    def files(self) -> List[str]:
        """The checkpoint's files: one, or the index's shards."""
        h = self._open_handle()
        return [native().io.ompx_safetensors_file_path(h, i).decode()
                for i in range(native().io.ompx_safetensors_num_files(h))]

    def metadata(self, file: int = 0) -> Dict[str, str]:
        """The "__metadata__" of one of its files."""
        h = self._open_handle()
        out = {}
        for i in range(native().io.ompx_safetensors_num_metadata(h, file)):
            key, value = ctypes.c_char_p(), ctypes.c_char_p()
            if native().io.ompx_safetensors_metadata(h, file, i, ctypes.byref(key), ctypes.byref(value)) != 0:
                raise_errno(f"metadata of {self.path}")
            out[key.value.decode()] = value.value.decode()
        return out

    def __len__(self) -> int:
        return len(self._tensors)

    def __iter__(self) -> Iterator[TensorInfo]:
        return iter(self._tensors)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> TensorInfo:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"offload_io: {self.path} has no tensor {name!r}") from None

    def keys(self) -> List[str]:
        """The tensors' names, in the order of their data."""
        return [t.name for t in self._tensors]

    def close(self) -> None:
        """Close the files; loaded tensors stay valid."""
        if self._handle is not None:
            native().io.ompx_safetensors_close(self._handle)
            self._handle = None

    def __enter__(self) -> "Checkpoint":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _placement(self, tensors: Sequence[TensorInfo], device: Any) -> List[int]:
        """The OpenMP device of each tensor: one device, a map name -> device, or a list of
        devices over which the tensors are split by bytes (largest first, each to the device
        with the fewest bytes so far)."""
        if isinstance(device, Mapping):
            missing = [t.name for t in tensors if t.name not in device]
            if missing:
                raise ValueError(f"offload_io: the device map has no device for {missing[:3]}")
            return [_devices.resolve(device[t.name]) for t in tensors]
        if isinstance(device, (list, tuple)):
            devices = [_devices.resolve(d) for d in device]
            if not devices:
                raise ValueError("offload_io: an empty list of devices")
            load = [0] * len(devices)
            out = [0] * len(tensors)
            order = sorted(range(len(tensors)), key=lambda i: -tensors[i].nbytes)
            for i in order:
                k = min(range(len(devices)), key=lambda d: load[d])
                out[i] = devices[k]
                load[k] += tensors[i].nbytes
            return out
        d = _devices.resolve(device)
        return [d] * len(tensors)

    def load(self, device: Any = "cpu", names: Optional[Sequence[str]] = None,
             framework: str = "auto") -> Dict[str, Any]:
        """Read tensors (all, or `names`) into new tensors of `framework` ("auto": PyTorch
        when it is installed) on `device`: an OpenMP device number, "cpu", "cuda:N", a
        map name -> device, or a list of devices to split the tensors over. Returns a dict
        name -> tensor. Devices of the host plugin (x86_64) get memory from omp_target_alloc,
        seen as NumPy arrays (or PyTorch tensors over them)."""
        h = self._open_handle()
        tensors = [self[n] for n in names] if names is not None else list(self._tensors)
        placement = self._placement(tensors, device)
        targets = {dev: _devices.describe(dev) for dev in set(placement)}
        out: Dict[str, Any] = {}
        loads = (SafetensorsLoad * max(len(tensors), 1))()
        for i, (t, dev) in enumerate(zip(tensors, placement)):
            target, local = targets[dev]
            value = _allocate(t, dev, target, local, _framework(framework, target))
            out[t.name] = value
            ptr = memory_of(value, dev, f"tensor {t.name}", synchronize=False).ptr if t.nbytes else None
            loads[i] = SafetensorsLoad(None, t.index, ptr, t.nbytes, dev, -1, 0)
        # A framework's allocator may hand out memory that work queued before still uses.
        synchronize_streams(out.values())
        failed = native().io.ompx_safetensors_load(h, loads, len(tensors))
        if failed < 0:
            raise_errno(f"load from {self.path}")
        if failed > 0:
            first = next(e for e in loads[: len(tensors)] if e.error)
            raise OSError(first.error, f"load from {self.path}: {last_error()}")
        return out


def _allocate(t: TensorInfo, device: int, target: str, local: int, framework: str) -> Any:
    """A new tensor of `framework` for `t` on OpenMP device `device`."""
    if target == "x86_64":
        # Memory of a host-plugin device: only OpenMP allocates it.
        import numpy

        raw = DeviceBuffer(t.nbytes, device)
        if framework == "torch":
            import torch

            flat = torch.frombuffer(numpy.asarray(raw), dtype=torch.uint8) if t.nbytes else torch.empty(0, dtype=torch.uint8)
            return flat.view(getattr(torch, _TORCH[t.dtype])).reshape(t.shape)
        return numpy.asarray(raw).view(_numpy_dtype(t.dtype)).reshape(t.shape)
    if framework == "torch":
        import torch

        where = "cpu" if target == "host" else f"cuda:{local}"
        return torch.empty(t.shape, dtype=getattr(torch, _TORCH[t.dtype]), device=where)
    if framework == "cupy":
        import cupy

        if target == "host":
            raise ValueError("offload_io: CuPy arrays live on GPUs; load to the host with 'numpy'")
        with cupy.cuda.Device(local):
            return cupy.empty(t.shape, dtype=_numpy_dtype(t.dtype))
    import numpy

    if target != "host":
        raise ValueError(f"offload_io: NumPy arrays are host memory; load to device {device} "
                         "with framework='torch' or 'cupy'")
    return numpy.empty(t.shape, dtype=_numpy_dtype(t.dtype))


def load_safetensors(path: "os.PathLike[str] | str", device: Any = "cpu", framework: str = "auto",
                     names: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Load a safetensors file or a sharded checkpoint (its .index.json) onto `device`
    (see Checkpoint.load); returns a dict name -> tensor."""
    with Checkpoint(path) as ckpt:
        return ckpt.load(device=device, names=names, framework=framework)


def _dtype_name(value: Any) -> str:
    dtype = getattr(value, "dtype", None)
    text = str(dtype).replace("torch.", "")
    for name, spelling in _TORCH.items():
        if text == spelling:
            return name
    for name, spelling in _NUMPY.items():
        if text == spelling:
            return name
    raise TypeError(f"offload_io: no safetensors dtype for {dtype}")


def save_safetensors(tensors: Mapping[str, Any], path: "os.PathLike[str] | str",
                     metadata: Optional[Mapping[str, str]] = None) -> None:
    """Write `tensors` (name -> tensor or array, C-contiguous, on any device offload-io
    serves) to one safetensors file, straight from their devices' memory with one batch.
    Tensors are laid out by element size, largest first, then by name, so every tensor
    is aligned to its element."""
    path = os.fspath(path)
    entries = []
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"offload_io: tensor names are strings, not {type(name).__name__}")
        if name == "__metadata__":
            raise ValueError("offload_io: '__metadata__' is the header's metadata, not a tensor name")
        dtype = _dtype_name(value)
        mem = memory_of(value, None, f"tensor {name}", synchronize=False)
        shape = tuple(int(d) for d in getattr(value, "shape"))
        entries.append((name, dtype, shape, mem, value))
    entries.sort(key=lambda e: (-_SIZES[e[1]], e[0]))
    header: Dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    offset = 0
    for name, dtype, shape, mem, _ in entries:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + mem.nbytes]}
        offset += mem.nbytes
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        prefix = struct.pack("<Q", len(text)) + text
        if os.pwrite(fd, prefix, 0) != len(prefix):
            raise OSError(f"offload_io: short write of the header of {path}")
        batch = Batch()
        base = len(prefix)
        written = [e for e in entries if e[3].nbytes]
        for name, _, _, mem, value in written:
            batch.write(fd, value, offset=base + header[name]["data_offsets"][0], device=mem.device)
        if written:
            results = batch.submit().wait()
            for (name, *_), result in zip(written, results):
                if isinstance(result, OSError):
                    raise OSError(result.errno, f"write of tensor {name} to {path}: {last_error()}")
    finally:
        os.close(fd)
