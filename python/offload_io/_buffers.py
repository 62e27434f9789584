# SPDX-License-Identifier: Apache-2.0
"""Memory of Python objects: where it is, how long, and which device holds it.

Objects are read through the CUDA array interface (PyTorch CUDA tensors,
CuPy arrays), NumPy's array interface, DLPack (`__dlpack__`, PyTorch CPU
tensors and anything else that exports it) or offload_io's own DeviceBuffer.
Only C-contiguous memory is accepted: a transfer moves one byte range.
"""

from __future__ import annotations

import ctypes
import operator
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Tuple

from . import _devices

# DLPack device types (dlpack.h).
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_ROCM, _DL_ROCM_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 10, 11, 13


@dataclass
class Memory:
    """One contiguous byte range of an object and the OpenMP device it is memory of."""

    ptr: int
    nbytes: int
    device: int
    readonly: bool
    owner: Any  # keeps the object (and any DLPack capsule) alive


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _contiguous(shape: Sequence[int], strides: Optional[Sequence[int]], itemsize: int) -> bool:
    """Whether strides (in bytes; None: C order) describe C-contiguous memory."""
    if strides is None:
        return True
    expected = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def _typestr_size(typestr: str) -> int:
    return int(typestr[2:])


def _product(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _from_interface(obj: Any, iface: dict, device: int, what: str) -> Memory:
    shape = tuple(iface["shape"])
    itemsize = _typestr_size(iface["typestr"])
    if not _contiguous(shape, iface.get("strides"), itemsize):
        raise ValueError(f"offload_io: {what} is not C-contiguous; pass a contiguous copy")
    ptr, readonly = iface["data"]
    nbytes = _product(shape) * itemsize
    return Memory(int(ptr or 0) + int(iface.get("offset", 0) or 0), nbytes, device, bool(readonly), obj)


def _from_dlpack(obj: Any, what: str) -> Memory:
    capsule = obj.__dlpack__()
    address = _capsule_pointer(capsule, b"dltensor")
    # DLManagedTensor begins with its DLTensor.
    t = _DLTensor.from_address(address)
    shape = [t.shape[i] for i in range(t.ndim)]
    itemsize = (t.dtype.bits * t.dtype.lanes + 7) // 8
    strides = None if not t.strides else [t.strides[i] * itemsize for i in range(t.ndim)]
    if not _contiguous(shape, strides, itemsize):
        raise ValueError(f"offload_io: {what} is not C-contiguous; pass a contiguous copy")
    device = _device_of_dlpack(t.device.device_type, t.device.device_id, what)
    ptr = (t.data or 0) + t.byte_offset
    return Memory(ptr, _product(shape) * itemsize, device, False, (obj, capsule))


def _device_of_dlpack(device_type: int, device_id: int, what: str) -> int:
    if device_type in (_DL_CPU, _DL_CUDA_HOST, _DL_ROCM_HOST):
        return _devices.initial_device()
    if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        return _devices.device_of("cuda", device_id)
    if device_type == _DL_ROCM:
        return _devices.device_of("amdgpu", device_id)
    raise ValueError(f"offload_io: {what} is memory of DLPack device type {device_type}, "
                     "which no offload-io plugin serves")


def _is_torch_tensor(obj: Any) -> bool:
    return type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr") and hasattr(obj, "is_contiguous")


def _from_torch(obj: Any, what: str) -> Memory:
    # Read from the tensor itself: PyTorch's CUDA array interface has no entry for some
    # dtypes (float8, and unsigned ones in older releases).
    if not obj.is_contiguous():
        raise ValueError(f"offload_io: {what} is not contiguous; pass tensor.contiguous()")
    dev = obj.device
    if dev.type == "cpu":
        device = _devices.initial_device()
    elif dev.type == "cuda":
        import torch

        device = _devices.device_of("amdgpu" if getattr(torch.version, "hip", None) else "cuda",
                                    dev.index or 0)
    else:
        raise ValueError(f"offload_io: {what} is memory of torch device {dev}, which no "
                         "offload-io plugin serves")
    return Memory(int(obj.data_ptr()), int(obj.numel()) * int(obj.element_size()), device, False, obj)


def synchronize_streams(objs: Iterable[Any]) -> None:
    """Finish the kernels the program queued on the current streams of the GPUs that
    hold `objs` (PyTorch tensors, CuPy arrays), each stream once: transfers run on
    offload-io's own streams, and must not overtake work that uses the memory."""
    torch_devices = set()
    cupy_seen = False
    for obj in objs:
        if _is_torch_tensor(obj) and obj.device.type == "cuda":
            torch_devices.add(obj.device)
        elif type(obj).__module__.startswith("cupy") and hasattr(obj, "__cuda_array_interface__"):
            cupy_seen = True
    if torch_devices:
        import torch

        for dev in torch_devices:
            torch.cuda.current_stream(dev).synchronize()
    if cupy_seen:
        import cupy

        cupy.cuda.get_current_stream().synchronize()


def memory_of(obj: Any, device: Optional[int] = None, what: str = "buffer",
              synchronize: bool = True) -> Memory:
    """The memory of `obj`; `device`, when given, is the OpenMP device number to use
    instead of the one the object's own device maps to. With `synchronize` the work
    queued on the object's stream finishes first (synchronize_streams); callers that
    take many objects at once pass False and synchronise them together."""
    from ._device_buffer import DeviceBuffer

    if synchronize:
        synchronize_streams((obj,))
    if isinstance(obj, DeviceBuffer):
        mem = Memory(obj.ptr, obj.nbytes, obj.device, False, obj)
    elif _is_torch_tensor(obj):
        mem = _from_torch(obj, what)
    elif hasattr(obj, "__cuda_array_interface__"):
        iface = obj.__cuda_array_interface__
        if hasattr(obj, "__dlpack_device__"):
            dev_type, dev_id = obj.__dlpack_device__()
            owner_device = _device_of_dlpack(int(dev_type), int(dev_id), what)
        elif device is None:
            raise ValueError(f"offload_io: {what} exports the CUDA array interface but not its "
                             "device (__dlpack_device__); pass device=")
        else:
            owner_device = device
        mem = _from_interface(obj, iface, owner_device, what)
    elif hasattr(obj, "__array_interface__"):
        mem = _from_interface(obj, obj.__array_interface__, _devices.initial_device(), what)
    elif hasattr(obj, "__dlpack__"):
        mem = _from_dlpack(obj, what)
    else:
        raise TypeError(f"offload_io: {what} of type {type(obj).__name__} exports no memory "
                        "(DLPack, the CUDA array interface or the array interface)")
    if device is not None:
        mem.device = int(device)
    return mem


def byte_range(mem: Memory, count: Optional[int], what: str) -> Tuple[int, int]:
    """(pointer, count) of the first `count` bytes (all when None)."""
    if count is None:
        return mem.ptr, mem.nbytes
    count = operator.index(count)
    if count < 0 or count > mem.nbytes:
        raise ValueError(f"offload_io: count {count} for {what} of {mem.nbytes} bytes")
    return mem.ptr, count
