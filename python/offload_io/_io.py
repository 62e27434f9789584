# SPDX-License-Identifier: Apache-2.0
"""File <-> device transfers: synchronous, asynchronous and batched."""

from __future__ import annotations

import ctypes
import errno
import operator
import os
from typing import Any, Dict, List, Optional, Tuple, Union

from ._buffers import Memory, byte_range, memory_of, synchronize_streams
from ._native import IOOp, IOStats, PinnedBudget, Setting, last_error, native, raise_errno

FileLike = Any  # an int descriptor or an object with fileno()

READ, WRITE = 0, 1


def _fd(file: FileLike) -> int:
    if hasattr(file, "fileno"):
        file = file.fileno()
    if isinstance(file, int) and not isinstance(file, bool):
        if not -(1 << 31) <= file < (1 << 31):
            raise OSError(errno.EBADF, f"offload_io: file descriptor {file} does not exist")
        return file
    raise TypeError(f"offload_io: a file is a descriptor or has fileno(), not {type(file).__name__}")


def _offset(offset: Any) -> int:
    """A file offset as off_t: an integer (not a float) within 64 bits; a negative
    one is the library's to refuse (EINVAL), a larger one is EOVERFLOW."""
    value = operator.index(offset)
    if not -(1 << 63) <= value < (1 << 63):
        raise OSError(errno.EOVERFLOW, f"offload_io: offset {value} does not fit a file offset")
    return value


def _transfer_range(reads: bool, buf: Any, count: Optional[int], device: Any,
                    what: str, synchronize: bool = True) -> Tuple[Memory, int, int]:
    """The memory of `buf` for one transfer, and the (pointer, count) it moves; a read
    needs writable memory. `synchronize`: as memory_of."""
    from ._devices import resolve

    mem = memory_of(buf, None if device is None else resolve(device), what, synchronize)
    if reads and mem.readonly:
        raise ValueError(f"offload_io: {what}: a read into a read-only buffer")
    ptr, n = byte_range(mem, count, what)
    return mem, ptr, n


def _transfer(reads: bool, file: FileLike, buf: Any, offset: Any, count: Optional[int],
              device: Any) -> int:
    name = "ompx_target_pread" if reads else "ompx_target_pwrite"
    mem, ptr, n = _transfer_range(reads, buf, count, device, "buffer")
    done = getattr(native().io, name)(_fd(file), ptr, n, _offset(offset), mem.device)
    if done < 0:
        raise_errno(name)
    return int(done)


def pread(file: FileLike, buf: Any, offset: int = 0, count: Optional[int] = None,
          device: Any = None) -> int:
    """Read `count` bytes (all of `buf` when None) of `file` at `offset` into `buf`, memory of
    any device offload-io serves (a tensor, an array, a DeviceBuffer). Returns the bytes read,
    short only at end of file. The device is the buffer's own unless `device` says otherwise.
    Raises OSError with the library's message."""
    return _transfer(True, file, buf, offset, count, device)


def pwrite(file: FileLike, buf: Any, offset: int = 0, count: Optional[int] = None,
           device: Any = None) -> int:
    """Write `count` bytes (all when None) of `buf` to `file` at `offset`; as pread."""
    return _transfer(False, file, buf, offset, count, device)


class _InFlight:
    """Something the library transfers for while Python holds its buffers."""

    _handle: Optional[int] = None

    def wait(self) -> Any:
        raise NotImplementedError

    def __del__(self) -> None:
        # The buffers must outlive the transfer: dropped unwaited, it is waited here.
        if self._handle is not None:
            try:
                self.wait()
            except Exception:
                pass


class Request(_InFlight):
    """An asynchronous transfer in flight. The buffer is kept alive until wait()."""

    def __init__(self, handle: int, owner: Any, what: str) -> None:
        self._handle: Optional[int] = handle
        self._owner = owner
        self._what = what

    def done(self) -> bool:
        """Whether the transfer has completed (wait() then returns at once)."""
        if self._handle is None:
            return True
        rc = native().io.ompx_io_test(self._handle)
        if rc < 0:
            raise_errno("ompx_io_test")
        return rc == 1

    def wait(self) -> int:
        """Wait for the transfer; returns its bytes, or raises OSError. Once only."""
        if self._handle is None:
            raise ValueError(f"offload_io: {self._what} was waited for already")
        handle, self._handle = self._handle, None
        got = native().io.ompx_io_wait(handle)
        self._owner = None
        if got < 0:
            raise_errno(self._what)
        return int(got)

    def __enter__(self) -> "Request":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self.wait()



def _submit(op: str, file: FileLike, buf: Any, offset: int, count: Optional[int], device: Any) -> Request:
    mem, ptr, n = _transfer_range(op == "read", buf, count, device, "buffer")
    handle = ctypes.c_void_p()
    name = "ompx_target_pread_async" if op == "read" else "ompx_target_pwrite_async"
    if getattr(native().io, name)(_fd(file), ptr, n, _offset(offset), mem.device, ctypes.byref(handle)) != 0:
        raise_errno(name)
    return Request(handle.value, mem.owner, f"asynchronous {op} of {n} bytes")


def pread_async(file: FileLike, buf: Any, offset: int = 0, count: Optional[int] = None,
                device: Any = None) -> Request:
    """Start a read as pread does; returns a Request. The descriptor may close after the call."""
    return _submit("read", file, buf, offset, count, device)


def pwrite_async(file: FileLike, buf: Any, offset: int = 0, count: Optional[int] = None,
                 device: Any = None) -> Request:
    """Start a write as pwrite does; returns a Request."""
    return _submit("write", file, buf, offset, count, device)


class Batch(_InFlight):
    """Reads and writes submitted together (one ompx_io batch): any mix of files and devices.

        with offload_io.Batch() as batch:
            batch.read(f, tensor_a, offset=0)
            batch.read(f, tensor_b, offset=4096)
        results = batch.results   # bytes per operation, or the OSError of a failed one
    """

    def __init__(self) -> None:
        self._ops: List[tuple] = []
        self._owners: List[Any] = []
        self._array: Optional[ctypes.Array] = None
        self._handle: Optional[int] = None
        self.results: List[Union[int, OSError]] = []

    def _add(self, opcode: int, file: FileLike, buf: Any, offset: int, count: Optional[int],
             device: Any) -> None:
        if self._array is not None:
            raise ValueError("offload_io: the batch was submitted already")
        # The buffers' streams are synchronised together, at submit().
        mem, ptr, n = _transfer_range(opcode == READ, buf, count, device,
                                      f"buffer of operation {len(self._ops)}", synchronize=False)
        self._ops.append((opcode, _fd(file), ptr, n, _offset(offset), mem.device))
        self._owners.append(mem.owner)

    def read(self, file: FileLike, buf: Any, offset: int = 0, count: Optional[int] = None,
             device: Any = None) -> None:
        """Add a read (as pread)."""
        self._add(READ, file, buf, offset, count, device)

    def write(self, file: FileLike, buf: Any, offset: int = 0, count: Optional[int] = None,
              device: Any = None) -> None:
        """Add a write (as pwrite)."""
        self._add(WRITE, file, buf, offset, count, device)

    def __len__(self) -> int:
        return len(self._ops)

    def submit(self) -> "Batch":
        """Start every operation. Raises OSError when nothing could start."""
        if self._array is not None:
            raise ValueError("offload_io: the batch was submitted already")
        synchronize_streams(self._owners)
        array = (IOOp * max(len(self._ops), 1))()
        for i, (opcode, fd, ptr, n, offset, device) in enumerate(self._ops):
            array[i] = IOOp(opcode, fd, ptr, n, offset, device, -1, 0)
        handle = ctypes.c_void_p()
        if native().io.ompx_io_batch_submit(array, len(self._ops), ctypes.byref(handle)) != 0:
            raise_errno("ompx_io_batch_submit")
        self._array, self._handle = array, handle.value
        return self

    def done(self) -> bool:
        """Whether every operation has completed."""
        if self._handle is None:
            return self._array is not None
        rc = native().io.ompx_io_batch_test(self._handle)
        if rc < 0:
            raise_errno("ompx_io_batch_test")
        return rc == 1

    def wait(self) -> List[Union[int, OSError]]:
        """Wait for every operation; returns (and keeps in `results`) each one's bytes or
        OSError. Raises OSError only when the batch itself cannot be waited for."""
        if self._handle is None:
            raise ValueError("offload_io: the batch is not in flight")
        handle, self._handle = self._handle, None
        failed = native().io.ompx_io_batch_wait(handle)
        if failed < 0:
            raise_errno("ompx_io_batch_wait")
        assert self._array is not None
        # The library's text names every failed operation (the first eight) with its
        # fd, count, offset, device and reason; each error carries it.
        why = last_error() if failed > 0 else ""
        self.results = [
            int(op.result) if op.error == 0 else
            OSError(op.error, f"operation {i}: {os.strerror(op.error)}" + (f" ({why})" if why else ""))
            for i, op in enumerate(self._array[: len(self._ops)])
        ]
        self._owners = []
        return self.results

    def __enter__(self) -> "Batch":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:
            if self._handle is not None:
                self.wait()
            return
        if self._array is None:
            self.submit()
        if self._handle is not None:
            self.wait()



def path_name(path: int) -> str:
    """The name of transfer path number `path` ("direct", "fastpath", "staged", "host")."""
    name = native().io.ompx_io_path_name(int(path))
    return name.decode() if name else f"path {path}"


def stats(device: Any) -> Dict[str, Any]:
    """The file counters of a device: bytes and requests per path, fallbacks."""
    from ._devices import resolve

    s = IOStats()
    if native().io.ompx_io_get_stats(resolve(device), ctypes.byref(s)) != 0:
        raise_errno("ompx_io_get_stats")
    names = [path_name(p) for p in range(4)]
    return {
        "bytes_read": dict(zip(names, s.bytes_read)),
        "bytes_written": dict(zip(names, s.bytes_written)),
        "reads": dict(zip(names, s.reads)),
        "writes": dict(zip(names, s.writes)),
        "fallbacks": int(s.fallbacks),
        "last_fallback": s.last_fallback.decode("utf-8", "replace"),
    }


def settings() -> List[Dict[str, Any]]:
    """The file engine's settings in force (OMPX_IO_* variables): name, value, default,
    env (the environment's text), valid and source ("default", "environment", "invalid")."""
    count = ctypes.c_size_t()
    if native().io.ompx_io_get_settings(None, 0, ctypes.byref(count)) != 0:
        raise_errno("ompx_io_get_settings")
    table = (Setting * max(count.value, 1))()
    if native().io.ompx_io_get_settings(table, count.value, ctypes.byref(count)) != 0:
        raise_errno("ompx_io_get_settings")
    sources = {0: "default", 1: "environment", 2: "invalid"}
    return [
        {"name": s.name.decode(), "value": s.value.decode(), "default": s.default_value.decode(),
         "env": s.env_value.decode(), "valid": s.valid.decode(), "source": sources.get(s.source, str(s.source))}
        for s in table[: count.value]
    ]


def pinned_budget() -> Dict[str, int]:
    """The process's pinned-memory budget: cap, used, peak, refusals (bytes, count)."""
    b = PinnedBudget()
    if native().io.ompx_io_get_pinned_budget(ctypes.byref(b)) != 0:
        raise_errno("ompx_io_get_pinned_budget")
    return {"cap": b.cap, "used": b.used, "peak": b.peak, "refusals": b.refusals}


def version() -> str:
    """The version of libompx_io ("1.2.3")."""
    text = native().io.ompx_io_version(None, None, None)
    return text.decode() if text else ""
