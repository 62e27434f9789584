# SPDX-License-Identifier: Apache-2.0
"""The C libraries of offload-io, loaded with ctypes, and their prototypes.

Loading order matters: the plugin loader first (so that libomptarget, when it
looks for its plugins, finds offload-io's already loaded), then libompx_io,
then the offload image library, whose registration brings up the devices of
every plugin (libomptarget reports no device until some image is registered).
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Optional

from . import _config

c_ssize_t = ctypes.c_ssize_t
c_off_t = ctypes.c_int64


class IOOp(ctypes.Structure):
    """ompx_io_op_t."""

    _fields_ = [
        ("opcode", ctypes.c_int),
        ("fd", ctypes.c_int),
        ("device_buf", ctypes.c_void_p),
        ("count", ctypes.c_size_t),
        ("offset", c_off_t),
        ("device_num", ctypes.c_int),
        ("result", c_ssize_t),
        ("error", ctypes.c_int),
    ]


class IOStats(ctypes.Structure):
    """ompx_io_stats_t."""

    _fields_ = [
        ("bytes_read", ctypes.c_uint64 * 4),
        ("bytes_written", ctypes.c_uint64 * 4),
        ("reads", ctypes.c_uint64 * 4),
        ("writes", ctypes.c_uint64 * 4),
        ("fallbacks", ctypes.c_uint64),
        ("last_fallback", ctypes.c_char * 160),
    ]


class PinnedBudget(ctypes.Structure):
    """ompx_pinned_budget_t."""

    _fields_ = [(n, ctypes.c_uint64) for n in ("cap", "used", "peak", "refusals")]


class Setting(ctypes.Structure):
    """ompx_io_setting_t."""

    _fields_ = [
        ("name", ctypes.c_char * 32),
        ("value", ctypes.c_char * 64),
        ("default_value", ctypes.c_char * 64),
        ("env_value", ctypes.c_char * 128),
        ("valid", ctypes.c_char * 128),
        ("source", ctypes.c_int),
    ]


class DeviceRef(ctypes.Structure):
    """ompx_io_device_ref_t."""

    _fields_ = [("target", ctypes.c_char * 32), ("local", ctypes.c_int32)]


class SafetensorsTensor(ctypes.Structure):
    """ompx_safetensors_tensor_t."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int),
        ("ndim", ctypes.c_size_t),
        ("shape", ctypes.POINTER(ctypes.c_uint64)),
        ("nbytes", ctypes.c_uint64),
        ("data_begin", ctypes.c_uint64),
        ("data_end", ctypes.c_uint64),
        ("file_offset", ctypes.c_uint64),
        ("file", ctypes.c_size_t),
    ]


class SafetensorsLoad(ctypes.Structure):
    """ompx_safetensors_load_t."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("index", ctypes.c_size_t),
        ("device_buf", ctypes.c_void_p),
        ("buf_size", ctypes.c_size_t),
        ("device_num", ctypes.c_int),
        ("result", c_ssize_t),
        ("error", ctypes.c_int),
    ]


class SafetensorsPlaced(ctypes.Structure):
    """ompx_safetensors_placed_t."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("index", ctypes.c_size_t),
        ("device_num", ctypes.c_int),
        ("device_ptr", ctypes.c_void_p),
        ("nbytes", ctypes.c_uint64),
    ]


_P = ctypes.c_void_p
_PROTOTYPES = {
    # libompx_io: ompx_io.h
    "ompx_target_pread": (c_ssize_t, [ctypes.c_int, _P, ctypes.c_size_t, c_off_t, ctypes.c_int]),
    "ompx_target_pwrite": (c_ssize_t, [ctypes.c_int, _P, ctypes.c_size_t, c_off_t, ctypes.c_int]),
    "ompx_target_pread_async": (
        ctypes.c_int, [ctypes.c_int, _P, ctypes.c_size_t, c_off_t, ctypes.c_int, ctypes.POINTER(_P)]),
    "ompx_target_pwrite_async": (
        ctypes.c_int, [ctypes.c_int, _P, ctypes.c_size_t, c_off_t, ctypes.c_int, ctypes.POINTER(_P)]),
    "ompx_io_test": (ctypes.c_int, [_P]),
    "ompx_io_wait": (c_ssize_t, [_P]),
    "ompx_io_batch_submit": (ctypes.c_int, [ctypes.POINTER(IOOp), ctypes.c_size_t, ctypes.POINTER(_P)]),
    "ompx_io_batch_test": (ctypes.c_int, [_P]),
    "ompx_io_batch_wait": (c_ssize_t, [_P]),
    "ompx_io_path_name": (ctypes.c_char_p, [ctypes.c_int]),
    "ompx_io_get_stats": (ctypes.c_int, [ctypes.c_int, ctypes.POINTER(IOStats)]),
    "ompx_io_get_pinned_budget": (ctypes.c_int, [ctypes.POINTER(PinnedBudget)]),
    "ompx_io_get_settings": (
        ctypes.c_int, [ctypes.POINTER(Setting), ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "ompx_io_device_ref": (ctypes.c_int, [ctypes.c_int, ctypes.POINTER(DeviceRef)]),
    "ompx_io_last_error": (ctypes.c_char_p, []),
    "ompx_io_version": (
        ctypes.c_char_p, [ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
    # ompx_safetensors.h
    "ompx_safetensors_dtype_name": (ctypes.c_char_p, [ctypes.c_int]),
    "ompx_safetensors_dtype_size": (ctypes.c_size_t, [ctypes.c_int]),
    "ompx_safetensors_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "ompx_safetensors_close": (ctypes.c_int, [_P]),
    "ompx_safetensors_num_files": (ctypes.c_size_t, [_P]),
    "ompx_safetensors_file_path": (ctypes.c_char_p, [_P, ctypes.c_size_t]),
    "ompx_safetensors_num_metadata": (ctypes.c_size_t, [_P, ctypes.c_size_t]),
    "ompx_safetensors_metadata": (
        ctypes.c_int,
        [_P, ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]),
    "ompx_safetensors_num_tensors": (ctypes.c_size_t, [_P]),
    "ompx_safetensors_tensor": (ctypes.c_int, [_P, ctypes.c_size_t, ctypes.POINTER(SafetensorsTensor)]),
    "ompx_safetensors_find": (c_ssize_t, [_P, ctypes.c_char_p]),
    "ompx_safetensors_load": (c_ssize_t, [_P, ctypes.POINTER(SafetensorsLoad), ctypes.c_size_t]),
    "ompx_safetensors_load_mapped": (
        ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.POINTER(ctypes.c_int),
                       ctypes.POINTER(_P)]),
    "ompx_safetensors_placement_count": (ctypes.c_size_t, [_P]),
    "ompx_safetensors_placement_tensor": (ctypes.c_int, [_P, ctypes.c_size_t, ctypes.POINTER(SafetensorsPlaced)]),
    "ompx_safetensors_placement_free": (ctypes.c_int, [_P]),
}

# libomp's device calls, reached through the image library's dependencies.
_OMP_PROTOTYPES = {
    "omp_get_num_devices": (ctypes.c_int, []),
    "omp_get_initial_device": (ctypes.c_int, []),
    "omp_target_alloc": (_P, [ctypes.c_size_t, ctypes.c_int]),
    "omp_target_free": (None, [_P, ctypes.c_int]),
}


class Native:
    """The loaded libraries: `io` (libompx_io) and `omp` (libomp's calls)."""

    def __init__(self, libdir: str) -> None:
        def load(name: str) -> ctypes.CDLL:
            path = os.path.join(libdir, name)
            try:
                return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL, use_errno=True)
            except OSError as exc:
                raise ImportError(
                    f"offload_io: cannot load {path} ({exc}); the package belongs with the "
                    f"offload-io libraries of {libdir}: reinstall offload-io") from exc

        self.plugins = load(_config.PLUGIN_LOADER)
        self.io = load(_config.IO_LIBRARY)
        self.devices = load(_config.DEVICES_LIBRARY)
        for table, lib in ((_PROTOTYPES, self.io), (_OMP_PROTOTYPES, self.devices)):
            for name, (restype, argtypes) in table.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
        self.omp = self.devices


_lock = threading.Lock()
_native: Optional[Native] = None


def native() -> Native:
    """The libraries, loaded at the first call."""
    global _native
    with _lock:
        if _native is None:
            _native = Native(_config.libdir())
        return _native


def last_error() -> str:
    """ompx_io_last_error() of this thread, decoded."""
    text = native().io.ompx_io_last_error()
    return text.decode("utf-8", "replace") if text else ""


def raise_errno(what: str) -> None:
    """Raise OSError for a failed call: its errno and ompx_io_last_error()'s text, or
    `what` and the errno's text when the library said nothing."""
    err = ctypes.get_errno() or 0
    # The library's message names the call, the buffer and the device already.
    raise OSError(err, last_error() or f"{what}: {os.strerror(err)}")
