# SPDX-License-Identifier: Apache-2.0
"""offload_io: file <-> device transfers and safetensors checkpoints for Python.

Reads and writes go straight between files and the memory of any device that
offload-io's OpenMP plugins serve: PyTorch tensors and CuPy arrays on a GPU,
NumPy arrays on the host, or offload_io's own DeviceBuffer.

    import offload_io
    state = offload_io.load_safetensors("model.safetensors.index.json", device="cuda:0")

    with open("data.bin", "rb") as f:
        offload_io.pread(f, tensor)                 # the whole tensor from offset 0

Errors are raised as OSError with the library's message. Device memory that a
framework allocated must stay allocated until its transfers are done (wait for
a Request or a Batch before freeing the tensor).
"""

from ._device_buffer import DeviceBuffer
from ._devices import describe as describe_device
from ._devices import initial_device, num_devices
from ._io import (Batch, Request, path_name, pinned_budget, pread, pread_async,
                  pwrite, pwrite_async, settings, stats, version)
from ._safetensors import (DTYPES, Checkpoint, TensorInfo, load_safetensors,
                           save_safetensors)

__all__ = [
    "Batch", "Checkpoint", "DTYPES", "DeviceBuffer", "Request", "TensorInfo",
    "describe_device", "initial_device", "load_safetensors", "num_devices",
    "path_name", "pinned_budget", "pread", "pread_async", "pwrite", "pwrite_async",
    "save_safetensors", "settings", "stats", "version",
]
