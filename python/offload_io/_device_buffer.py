# SPDX-License-Identifier: Apache-2.0
"""DeviceBuffer: memory that OpenMP allocated on a device (omp_target_alloc)."""

from __future__ import annotations

import operator
from typing import Any, Dict, Optional

from . import _devices
from ._native import native


class DeviceBuffer:
    """`nbytes` of memory of OpenMP device `device`, freed by free(), by leaving a
    `with` block, or when the object goes. Frameworks view it without a copy: NumPy
    (np.asarray) where the host can address it (the initial device and the x86_64
    plugin's devices), PyTorch and CuPy through the CUDA array interface on a
    CUDA device."""

    def __init__(self, nbytes: int, device: Any = None) -> None:
        self.device = _devices.initial_device() if device is None else _devices.resolve(device)
        self.nbytes = operator.index(nbytes)
        if self.nbytes < 0:
            raise ValueError(f"offload_io: DeviceBuffer of {nbytes} bytes")
        self.ptr: int = 0
        # A device no plugin of ours serves is refused here (ENODEV): libomptarget
        # ends the process for a device number out of its range.
        self._target = _devices.describe(self.device)
        ptr = native().omp.omp_target_alloc(max(self.nbytes, 1), self.device)
        if not ptr:
            raise MemoryError(f"offload_io: omp_target_alloc of {self.nbytes} bytes on device "
                              f"{self.device} failed")
        self.ptr = ptr

    def free(self) -> None:
        """Give the memory back (omp_target_free, which waits for transfers using it)."""
        if getattr(self, "ptr", 0):
            native().omp.omp_target_free(self.ptr, self.device)
            self.ptr = 0

    def __enter__(self) -> "DeviceBuffer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.free()

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:  # interpreter shutdown: the library may be gone
            pass

    def __len__(self) -> int:
        return self.nbytes

    def __repr__(self) -> str:
        return f"DeviceBuffer({self.nbytes} bytes on device {self.device} ({self._target[0]}))"

    def _interface(self) -> Dict[str, Any]:
        if not self.ptr:
            raise ValueError("offload_io: the DeviceBuffer was freed")
        return {"shape": (self.nbytes,), "typestr": "|u1", "data": (self.ptr, False), "version": 3,
                "strides": None}

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        if self._target[0] not in ("host", "x86_64"):
            raise AttributeError("__array_interface__: memory of a GPU is not host memory")
        return self._interface()

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        if self._target[0] != "cuda":
            raise AttributeError("__cuda_array_interface__: not memory of a CUDA device")
        return self._interface()

    def __dlpack_device__(self) -> Optional[tuple]:
        target, local = self._target
        if target == "cuda":
            return (2, local)
        if target == "amdgpu":
            return (10, local)
        return (1, 0)
