# SPDX-License-Identifier: Apache-2.0
"""OpenMP device numbers, and how vendor devices ("cuda:1") map to them."""

from __future__ import annotations

import ctypes
import errno
import functools
import operator
from typing import Any, Dict, Tuple

from ._native import DeviceRef, native, raise_errno

# Frameworks' device names, by the plugin target that serves them.
_TARGET_OF_KIND = {"cuda": "cuda", "hip": "amdgpu", "rocm": "amdgpu", "amdgpu": "amdgpu"}


def initial_device() -> int:
    """omp_get_initial_device(): the host, whose memory is plain host memory."""
    return int(native().omp.omp_get_initial_device())


def num_devices() -> int:
    """omp_get_num_devices()."""
    return int(native().omp.omp_get_num_devices())


def checked_device(device: Any) -> int:
    """`device` as a C int: an integer (not a float or bool) within 32 bits; larger
    numbers are no device (OSError ENODEV) rather than wrapped to one."""
    if isinstance(device, bool):
        raise TypeError("offload_io: a device is a number or a name, not a bool")
    number = operator.index(device)
    if not -(1 << 31) <= number < (1 << 31):
        raise OSError(errno.ENODEV, f"offload_io: device {number} does not exist")
    return number


def describe(device: int) -> Tuple[str, int]:
    """(plugin target, device number in the plugin) of an OpenMP device:
    ("cuda", 0), ("x86_64", 2), ("host", -1) for the initial device."""
    ref = DeviceRef()
    if native().io.ompx_io_device_ref(checked_device(device), ctypes.byref(ref)) != 0:
        raise_errno(f"device {device}")
    return ref.target.decode(), int(ref.local)


@functools.lru_cache(maxsize=None)
def _devices_by_ref() -> Dict[Tuple[str, int], int]:
    table = {}
    for d in range(num_devices()):
        try:
            table.setdefault(describe(d), d)
        except OSError:
            continue  # a device of a plugin that is not offload-io's
    return table


def device_of(target: str, local: int) -> int:
    """The OpenMP device that serves device `local` of plugin `target`."""
    try:
        return _devices_by_ref()[(target, int(local))]
    except KeyError:
        served = ", ".join(f"{t}:{n} = {d}" for (t, n), d in sorted(_devices_by_ref().items())) or "none"
        raise ValueError(f"offload_io: no OpenMP device of offload-io serves {target} device {local} "
                         f"(devices served: {served})") from None


def resolve(device: Any) -> int:
    """An OpenMP device number from an int, "cpu", "cuda", "cuda:N" (also "hip:N"),
    or a framework's device object (torch.device)."""
    if isinstance(device, int) or hasattr(device, "__index__") and not isinstance(device, str):
        return checked_device(device)
    kind, index = None, None
    if isinstance(device, str):
        kind, _, rest = device.partition(":")
        index = int(rest) if rest else None
    elif hasattr(device, "type") and hasattr(device, "index"):  # torch.device
        kind, index = device.type, device.index
    if kind == "cpu":
        return initial_device()
    if kind in _TARGET_OF_KIND:
        return device_of(_TARGET_OF_KIND[kind], index or 0)
    raise ValueError(f"offload_io: unknown device {device!r}: use an OpenMP device number, "
                     "'cpu' or 'cuda:N'")
