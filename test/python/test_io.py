# SPDX-License-Identifier: Apache-2.0
"""Tests of offload_io's transfer calls with NumPy arrays and DeviceBuffer.

Run with the built package on the path and the host plugin's devices:

    PYTHONPATH=build/python python3 -m unittest discover -s test/python -v

NumPy arrays are host memory (the initial device); memory of a host-plugin
(x86_64) device comes from offload_io.DeviceBuffer. Every error test checks
the errno and that the exception's text is the library's message
(ompx_io_last_error()).
"""

from __future__ import annotations

import errno
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

import numpy

import offload_io
from offload_io import _native  # last_error(): the library's message, to compare with

INITIAL = offload_io.initial_device()
# The OpenMP devices of the host plugin, by their number there.
HOST_DEVICES = sorted(
    (d for d in range(offload_io.num_devices()) if offload_io.describe_device(d)[0] == "x86_64"),
    key=lambda d: offload_io.describe_device(d)[1])
NO_DEVICE = offload_io.num_devices() + 5  # an OpenMP device no plugin serves
PATTERN = bytes((i * 7 + 3) % 256 for i in range(1 << 16))


def needs_host_devices(n: int):
    """Skip unless the host plugin serves at least n devices."""
    return unittest.skipUnless(len(HOST_DEVICES) >= n,
                               f"needs {n} devices of the x86_64 plugin, found {len(HOST_DEVICES)}")


def closed_fd() -> int:
    """A descriptor number that is not open in this process."""
    for fd in range(4000, 5000):
        try:
            os.fstat(fd)
        except OSError as exc:
            if exc.errno == errno.EBADF:
                return fd
    raise RuntimeError("no closed descriptor between 4000 and 5000")


class TempFileCase(unittest.TestCase):
    """A temporary directory per test, and a file of PATTERN in it."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory(prefix="offload_io_test_")
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.path = os.path.join(self.dir, "data.bin")
        with open(self.path, "wb") as f:
            f.write(PATTERN)

    def open_fd(self, flags: int = os.O_RDWR, path: str = "") -> int:
        fd = os.open(path or self.path, flags | os.O_CREAT, 0o600)
        self.addCleanup(os.close, fd)
        return fd

    def file_bytes(self, path: str = "") -> bytes:
        with open(path or self.path, "rb") as f:
            return f.read()

    def assertLibraryError(self, exc: BaseException, code: int, fragment: str) -> None:
        """exc is an OSError of errno `code` whose text is the library's message and holds
        `fragment`."""
        self.assertIsInstance(exc, OSError)
        self.assertEqual(exc.errno, code, str(exc))
        message = _native.last_error()
        self.assertTrue(message, "ompx_io_last_error() is empty after a failed call")
        self.assertIn(message, str(exc))
        self.assertIn(fragment, str(exc))


class LibraryTest(unittest.TestCase):
    """version, num_devices, initial_device, describe_device, path_name."""

    def test_version(self) -> None:
        self.assertRegex(offload_io.version(), r"^\d+\.\d+\.\d+$")

    def test_num_devices(self) -> None:
        n = offload_io.num_devices()
        self.assertIsInstance(n, int)
        self.assertGreaterEqual(n, 1)
        self.assertGreaterEqual(len(HOST_DEVICES), 1)

    def test_initial_device(self) -> None:
        self.assertEqual(offload_io.initial_device(), offload_io.num_devices())
        self.assertEqual(offload_io.describe_device(INITIAL), ("host", -1))

    @needs_host_devices(4)
    def test_describe_host_plugin_devices(self) -> None:
        locals_ = [offload_io.describe_device(d) for d in HOST_DEVICES]
        self.assertEqual(locals_[:4], [("x86_64", i) for i in range(4)])

    def test_describe_every_device(self) -> None:
        for d in range(offload_io.num_devices()):
            target, local = offload_io.describe_device(d)
            self.assertIsInstance(target, str)
            self.assertTrue(target)
            self.assertGreaterEqual(local, 0)

    def test_describe_device_enodev(self) -> None:
        for device in (NO_DEVICE, -5):
            with self.subTest(device=device):
                with self.assertRaises(OSError) as cm:
                    offload_io.describe_device(device)
                self.assertEqual(cm.exception.errno, errno.ENODEV)
                self.assertIn(_native.last_error(), str(cm.exception))
                self.assertIn(f"device {device} does not exist", str(cm.exception))

    def test_path_names(self) -> None:
        self.assertEqual([offload_io.path_name(p) for p in range(4)],
                         ["direct", "fastpath", "staged", "host"])
        self.assertIsInstance(offload_io.path_name(99), str)

    def test_all_exported(self) -> None:
        for name in offload_io.__all__:
            self.assertTrue(hasattr(offload_io, name), name)


class HostArrayIOTest(TempFileCase):
    """pread and pwrite with NumPy arrays (the initial device)."""

    def test_pread_whole_array(self) -> None:
        a = numpy.zeros(4096, numpy.uint8)
        fd = self.open_fd(os.O_RDONLY)
        self.assertEqual(offload_io.pread(fd, a), 4096)
        self.assertEqual(a.tobytes(), PATTERN[:4096])

    def test_pread_offset_and_count(self) -> None:
        a = numpy.full(100, 0xEE, numpy.uint8)
        fd = self.open_fd(os.O_RDONLY)
        self.assertEqual(offload_io.pread(fd, a, offset=1000, count=40), 40)
        self.assertEqual(a[:40].tobytes(), PATTERN[1000:1040])
        self.assertTrue((a[40:] == 0xEE).all(), "bytes past count changed")

    def test_pread_typed_array(self) -> None:
        a = numpy.zeros((16, 8), numpy.float32)
        fd = self.open_fd(os.O_RDONLY)
        self.assertEqual(offload_io.pread(fd, a, offset=8), a.nbytes)
        expected = numpy.frombuffer(PATTERN[8:8 + a.nbytes], numpy.float32).reshape(16, 8)
        self.assertTrue(numpy.array_equal(a.view(numpy.uint32), expected.view(numpy.uint32)))

    def test_pread_short_at_end_of_file(self) -> None:
        a = numpy.full(100, 0xEE, numpy.uint8)
        fd = self.open_fd(os.O_RDONLY)
        self.assertEqual(offload_io.pread(fd, a, offset=len(PATTERN) - 30), 30)
        self.assertEqual(a[:30].tobytes(), PATTERN[-30:])
        self.assertTrue((a[30:] == 0xEE).all(), "the buffer past the bytes read changed")
        self.assertEqual(offload_io.pread(fd, a, offset=len(PATTERN)), 0)
        self.assertEqual(offload_io.pread(fd, a, offset=len(PATTERN) + 4096), 0)

    def test_pread_count_zero(self) -> None:
        a = numpy.full(8, 1, numpy.uint8)
        fd = self.open_fd(os.O_RDONLY)
        self.assertEqual(offload_io.pread(fd, a, count=0), 0)
        self.assertTrue((a == 1).all())

    def test_pread_empty_array(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        self.assertEqual(offload_io.pread(fd, numpy.zeros(0, numpy.float64)), 0)

    def test_pread_file_object(self) -> None:
        a = numpy.zeros(64, numpy.uint8)
        with open(self.path, "rb") as f:
            self.assertEqual(offload_io.pread(f, a, 64), 64)
            # pread leaves the file's position alone.
            self.assertEqual(f.tell(), 0)
        self.assertEqual(a.tobytes(), PATTERN[64:128])

    def test_pread_scalar_array(self) -> None:
        a = numpy.zeros((), numpy.uint64)
        fd = self.open_fd(os.O_RDONLY)
        self.assertEqual(offload_io.pread(fd, a, offset=16), 8)
        self.assertEqual(a.tobytes(), PATTERN[16:24])

    def test_pread_explicit_initial_device(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        for device in (INITIAL, "cpu"):
            with self.subTest(device=device):
                a = numpy.zeros(32, numpy.uint8)
                self.assertEqual(offload_io.pread(fd, a, device=device), 32)
                self.assertEqual(a.tobytes(), PATTERN[:32])

    def test_pwrite_whole_array(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        a = numpy.arange(1000, dtype=numpy.int32)
        fd = self.open_fd(os.O_WRONLY, out)
        self.assertEqual(offload_io.pwrite(fd, a), 4000)
        self.assertEqual(self.file_bytes(out), a.tobytes())

    def test_pwrite_offset_and_count(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        a = numpy.frombuffer(PATTERN[:256], numpy.uint8).copy()
        fd = self.open_fd(os.O_WRONLY, out)
        self.assertEqual(offload_io.pwrite(fd, a, offset=100, count=10), 10)
        self.assertEqual(self.file_bytes(out), bytes(100) + PATTERN[:10])

    def test_pwrite_file_object_and_read_only_array(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        a = numpy.arange(16, dtype=numpy.uint16)
        a.setflags(write=False)  # writing from a read-only array is fine
        with open(out, "wb") as f:
            self.assertEqual(offload_io.pwrite(f, a), 32)
        self.assertEqual(self.file_bytes(out), a.tobytes())

    def test_pwrite_then_pread_round_trip(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        a = numpy.linspace(-1.0, 1.0, 333, dtype=numpy.float64)
        b = numpy.zeros_like(a)
        fd = self.open_fd(os.O_RDWR, out)
        self.assertEqual(offload_io.pwrite(fd, a, offset=12), a.nbytes)
        self.assertEqual(offload_io.pread(fd, b, offset=12), b.nbytes)
        self.assertTrue(numpy.array_equal(a, b))

    def test_dlpack_only_object(self) -> None:
        """An object that exports DLPack only (no array interface)."""

        class DLPackOnly:
            def __init__(self, array: numpy.ndarray) -> None:
                self.array = array

            def __dlpack__(self, stream=None):
                return self.array.__dlpack__()

            def __dlpack_device__(self):
                return self.array.__dlpack_device__()

        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros((4, 4), numpy.uint16)
        self.assertEqual(offload_io.pread(fd, DLPackOnly(a), offset=2), 32)
        self.assertEqual(a.tobytes(), PATTERN[2:34])
        with self.assertRaises(ValueError):
            offload_io.pread(fd, DLPackOnly(a[:, :2]))


@needs_host_devices(4)
class DeviceIOTest(TempFileCase):
    """pread and pwrite with DeviceBuffer memory of the host plugin's devices."""

    def test_pread_into_each_device(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        for device in HOST_DEVICES[:4]:
            with self.subTest(device=device), offload_io.DeviceBuffer(4096, device) as buf:
                offset = 512 * (device + 1)
                self.assertEqual(offload_io.pread(fd, buf, offset=offset), 4096)
                self.assertEqual(numpy.asarray(buf).tobytes(), PATTERN[offset:offset + 4096])

    def test_pwrite_from_each_device(self) -> None:
        for device in HOST_DEVICES[:4]:
            with self.subTest(device=device), offload_io.DeviceBuffer(1000, device) as buf:
                out = os.path.join(self.dir, f"out{device}.bin")
                view = numpy.asarray(buf)
                view[:] = numpy.frombuffer(PATTERN[device:device + 1000], numpy.uint8)
                with open(out, "wb") as f:
                    self.assertEqual(offload_io.pwrite(f, buf, offset=8), 1000)
                self.assertEqual(self.file_bytes(out), bytes(8) + PATTERN[device:device + 1000])

    def test_count_offset_and_short_read(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        with offload_io.DeviceBuffer(256, HOST_DEVICES[1]) as buf:
            view = numpy.asarray(buf)
            view[:] = 0xEE
            self.assertEqual(offload_io.pread(fd, buf, offset=3, count=50), 50)
            self.assertEqual(view[:50].tobytes(), PATTERN[3:53])
            self.assertTrue((view[50:] == 0xEE).all())
            self.assertEqual(offload_io.pread(fd, buf, offset=len(PATTERN) - 7), 7)
            self.assertEqual(view[:7].tobytes(), PATTERN[-7:])
            self.assertEqual(view[7:50].tobytes(), PATTERN[10:53])

    def test_explicit_own_device(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        device = HOST_DEVICES[2]
        with offload_io.DeviceBuffer(64, device) as buf:
            self.assertEqual(offload_io.pread(fd, buf, device=device), 64)
            self.assertEqual(numpy.asarray(buf).tobytes(), PATTERN[:64])

    def test_device_to_device_through_a_file(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        fd = self.open_fd(os.O_RDWR, out)
        src = offload_io.DeviceBuffer(8192, HOST_DEVICES[0])
        dst = offload_io.DeviceBuffer(8192, HOST_DEVICES[3])
        self.addCleanup(src.free)
        self.addCleanup(dst.free)
        numpy.asarray(src)[:] = numpy.frombuffer(PATTERN[:8192], numpy.uint8)
        self.assertEqual(offload_io.pwrite(fd, src), 8192)
        self.assertEqual(offload_io.pread(fd, dst), 8192)
        self.assertEqual(numpy.asarray(dst).tobytes(), PATTERN[:8192])


class IOErrorTest(TempFileCase):
    """Errors of pread and pwrite: errno and the library's message."""

    @needs_host_devices(1)
    def test_host_array_on_device_is_efault(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(16, numpy.uint8)
        for call in (offload_io.pread, offload_io.pwrite):
            with self.subTest(call=call.__name__):
                with self.assertRaises(OSError) as cm:
                    call(fd if call is offload_io.pread else self.open_fd(os.O_WRONLY), a,
                         device=HOST_DEVICES[0])
                self.assertLibraryError(cm.exception, errno.EFAULT, "is not memory of this device")

    @needs_host_devices(2)
    def test_buffer_of_another_device_is_efault(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        with offload_io.DeviceBuffer(16, HOST_DEVICES[0]) as buf:
            with self.assertRaises(OSError) as cm:
                offload_io.pread(fd, buf, device=HOST_DEVICES[1])
            self.assertLibraryError(cm.exception, errno.EFAULT, "is not memory of this device")

    def test_closed_fd_is_ebadf(self) -> None:
        bad = closed_fd()
        cases = [("host", numpy.zeros(8, numpy.uint8))]
        if HOST_DEVICES:
            buf = offload_io.DeviceBuffer(8, HOST_DEVICES[0])
            self.addCleanup(buf.free)
            cases.append(("device", buf))
        for where, target in cases:
            for call in (offload_io.pread, offload_io.pwrite):
                with self.subTest(where=where, call=call.__name__):
                    with self.assertRaises(OSError) as cm:
                        call(bad, target)
                    self.assertLibraryError(cm.exception, errno.EBADF, f"fd {bad} is not open")

    def test_write_to_read_only_fd_is_ebadf(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        with self.assertRaises(OSError) as cm:
            offload_io.pwrite(fd, numpy.zeros(8, numpy.uint8))
        self.assertLibraryError(cm.exception, errno.EBADF, "is not open for writing")

    def test_read_from_write_only_fd_is_ebadf(self) -> None:
        fd = self.open_fd(os.O_WRONLY)
        with self.assertRaises(OSError) as cm:
            offload_io.pread(fd, numpy.zeros(8, numpy.uint8))
        self.assertLibraryError(cm.exception, errno.EBADF, "is not open for reading")

    def test_negative_offset_is_einval(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        targets = [numpy.zeros(8, numpy.uint8)]
        if HOST_DEVICES:
            buf = offload_io.DeviceBuffer(8, HOST_DEVICES[0])
            self.addCleanup(buf.free)
            targets.append(buf)
        for target in targets:
            for call in (offload_io.pread, offload_io.pwrite):
                with self.subTest(target=type(target).__name__, call=call.__name__):
                    with self.assertRaises(OSError) as cm:
                        call(fd, target, offset=-1)
                    self.assertLibraryError(cm.exception, errno.EINVAL, "negative offset -1")

    def test_directory_is_eisdir(self) -> None:
        fd = os.open(self.dir, os.O_RDONLY)
        self.addCleanup(os.close, fd)
        with self.assertRaises(OSError) as cm:
            offload_io.pread(fd, numpy.zeros(8, numpy.uint8))
        self.assertLibraryError(cm.exception, errno.EISDIR, "is a directory")

    def test_system_call_error_is_passed_on(self) -> None:
        # /proc/self/mem at offset 0 (an unmapped page): pread(2) fails with EIO.
        fd = os.open("/proc/self/mem", os.O_RDONLY)
        self.addCleanup(os.close, fd)
        with self.assertRaises(OSError) as cm:
            offload_io.pread(fd, numpy.zeros(8, numpy.uint8))
        self.assertLibraryError(cm.exception, errno.EIO, "pread(")

    def test_bad_device_is_enodev(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        for call in (offload_io.pread, offload_io.pwrite):
            with self.subTest(call=call.__name__):
                with self.assertRaises(OSError) as cm:
                    call(fd, numpy.zeros(8, numpy.uint8), device=NO_DEVICE)
                self.assertLibraryError(cm.exception, errno.ENODEV, f"device {NO_DEVICE} does not exist")

    def test_read_only_array_is_value_error(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(8, numpy.uint8)
        a.setflags(write=False)
        with self.assertRaisesRegex(ValueError, "read-only"):
            offload_io.pread(fd, a)
        with self.assertRaisesRegex(ValueError, "read-only"):
            offload_io.pread(fd, numpy.frombuffer(b"12345678", numpy.uint8))

    def test_non_contiguous_array_is_value_error(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        for a in (numpy.zeros(16, numpy.uint8)[::2], numpy.zeros((4, 4), numpy.int32).T,
                  numpy.zeros((4, 4), numpy.int32)[:, 1:3]):
            for call in (offload_io.pread, offload_io.pwrite):
                with self.subTest(shape=a.shape, strides=a.strides, call=call.__name__):
                    with self.assertRaisesRegex(ValueError, "not C-contiguous"):
                        call(fd, a)

    def test_contiguous_slice_is_accepted(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros((4, 4), numpy.uint8)
        self.assertEqual(offload_io.pread(fd, a[1:3]), 8)  # rows: contiguous, at an offset
        self.assertEqual(a[1:3].tobytes(), PATTERN[:8])
        self.assertTrue((a[0] == 0).all() and (a[3] == 0).all())
        b = numpy.zeros((4, 1), numpy.uint8)
        self.assertEqual(offload_io.pread(fd, b.T), 4)  # unit dimension: contiguous
        self.assertEqual(b.tobytes(), PATTERN[:4])

    def test_object_with_no_memory_is_type_error(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        for obj in (object(), b"bytes", [1, 2, 3], None):
            for call in (offload_io.pread, offload_io.pwrite):
                with self.subTest(obj=type(obj).__name__, call=call.__name__):
                    with self.assertRaisesRegex(TypeError, "exports no memory"):
                        call(fd, obj)

    def test_file_that_is_no_file_is_type_error(self) -> None:
        with self.assertRaisesRegex(TypeError, "descriptor"):
            offload_io.pread(self.path, numpy.zeros(8, numpy.uint8))

    def test_count_larger_than_buffer_is_value_error(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        targets = [numpy.zeros(8, numpy.uint8)]
        if HOST_DEVICES:
            buf = offload_io.DeviceBuffer(8, HOST_DEVICES[0])
            self.addCleanup(buf.free)
            targets.append(buf)
        for target in targets:
            for call in (offload_io.pread, offload_io.pwrite):
                for count in (9, -1):
                    with self.subTest(target=type(target).__name__, call=call.__name__, count=count):
                        with self.assertRaisesRegex(ValueError, f"count {count}"):
                            call(fd, target, count=count)

    def test_device_names(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(8, numpy.uint8)
        with self.assertRaisesRegex(ValueError, "unknown device"):
            offload_io.pread(fd, a, device="tpu:0")
        with self.assertRaises(TypeError):
            offload_io.pread(fd, a, device=True)
        if not any(offload_io.describe_device(d)[0] == "cuda" for d in range(offload_io.num_devices())):
            with self.assertRaisesRegex(ValueError, "no OpenMP device of offload-io serves cuda"):
                offload_io.pread(fd, a, device="cuda:0")

    def test_error_leaves_file_alone(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        with self.assertRaises(OSError):
            offload_io.pwrite(fd, numpy.ones(8, numpy.uint8), offset=-8)
        self.assertEqual(self.file_bytes(), PATTERN)


class AsyncTest(TempFileCase):
    """pread_async and pwrite_async: Request."""

    def test_read_wait(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(3000, numpy.uint8)
        req = offload_io.pread_async(fd, a, offset=77)
        self.assertIsInstance(req, offload_io.Request)
        self.assertEqual(req.wait(), 3000)
        self.assertTrue(req.done())
        self.assertEqual(a.tobytes(), PATTERN[77:3077])

    def test_done_polls_until_complete(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(len(PATTERN), numpy.uint8)
        req = offload_io.pread_async(fd, a)
        for _ in range(1000):  # at most about 1 s
            if req.done():
                break
            time.sleep(0.001)
        self.assertTrue(req.done())
        self.assertEqual(req.wait(), len(PATTERN))
        self.assertEqual(a.tobytes(), PATTERN)

    def test_second_wait_is_value_error(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        req = offload_io.pread_async(fd, numpy.zeros(8, numpy.uint8))
        self.assertEqual(req.wait(), 8)
        with self.assertRaisesRegex(ValueError, "waited for already"):
            req.wait()

    def test_context_manager_waits(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        fd = self.open_fd(os.O_WRONLY, out)
        a = numpy.arange(256, dtype=numpy.uint8)
        with offload_io.pwrite_async(fd, a, offset=4) as req:
            pass
        self.assertTrue(req.done())
        self.assertEqual(self.file_bytes(out), bytes(4) + a.tobytes())
        with self.assertRaises(ValueError):
            req.wait()

    def test_context_manager_after_wait(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(8, numpy.uint8)
        with offload_io.pread_async(fd, a) as req:
            self.assertEqual(req.wait(), 8)
        self.assertEqual(a.tobytes(), PATTERN[:8])

    def test_write_async_then_read_async(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        fd = self.open_fd(os.O_RDWR, out)
        a = numpy.random.default_rng(5).integers(0, 1 << 30, 1000, dtype=numpy.int64)
        self.assertEqual(offload_io.pwrite_async(fd, a).wait(), a.nbytes)
        b = numpy.zeros_like(a)
        self.assertEqual(offload_io.pread_async(fd, b).wait(), b.nbytes)
        self.assertTrue(numpy.array_equal(a, b))

    def test_short_read_at_end_of_file(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(64, numpy.uint8)
        self.assertEqual(offload_io.pread_async(fd, a, offset=len(PATTERN) - 10).wait(), 10)
        self.assertEqual(a[:10].tobytes(), PATTERN[-10:])

    def test_descriptor_may_close_after_submission(self) -> None:
        a = numpy.zeros(100, numpy.uint8)
        with open(self.path, "rb") as f:
            req = offload_io.pread_async(f, a, offset=5)
        self.assertEqual(req.wait(), 100)
        self.assertEqual(a.tobytes(), PATTERN[5:105])

    def test_request_keeps_buffer_alive(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        req = offload_io.pread_async(fd, numpy.zeros(1 << 16, numpy.uint8))
        gc.collect()
        self.assertEqual(req.wait(), 1 << 16)

    def test_dropped_request_is_waited(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        fd = self.open_fd(os.O_WRONLY, out)
        offload_io.pwrite_async(fd, numpy.full(64, 9, numpy.uint8))
        gc.collect()
        self.assertEqual(self.file_bytes(out), bytes([9]) * 64)

    @needs_host_devices(4)
    def test_each_device(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        bufs = [offload_io.DeviceBuffer(1024, d) for d in HOST_DEVICES[:4]]
        for b in bufs:
            self.addCleanup(b.free)
        reqs = [offload_io.pread_async(fd, b, offset=1024 * i) for i, b in enumerate(bufs)]
        self.assertEqual([r.wait() for r in reqs], [1024] * 4)
        for i, b in enumerate(bufs):
            self.assertEqual(numpy.asarray(b).tobytes(), PATTERN[1024 * i:1024 * (i + 1)])

    def test_submission_errors(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        bad = closed_fd()
        a = numpy.zeros(8, numpy.uint8)
        cases = [
            ("closed fd", dict(file=bad, buf=a), errno.EBADF, f"fd {bad} is not open"),
            ("negative offset", dict(file=fd, buf=a, offset=-3), errno.EINVAL, "negative offset -3"),
            ("bad device", dict(file=fd, buf=a, device=NO_DEVICE), errno.ENODEV, "does not exist"),
        ]
        if HOST_DEVICES:
            cases.append(("host array on a device", dict(file=fd, buf=a, device=HOST_DEVICES[0]),
                          errno.EFAULT, "is not memory of this device"))
        for what, kwargs, code, fragment in cases:
            for call in (offload_io.pread_async, offload_io.pwrite_async):
                with self.subTest(what=what, call=call.__name__):
                    with self.assertRaises(OSError) as cm:
                        call(**kwargs)
                    self.assertLibraryError(cm.exception, code, fragment)
                    self.assertIn(call.__name__.replace("p", "ompx_target_p", 1), str(cm.exception))

    def test_submission_value_errors(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        ro = numpy.zeros(8, numpy.uint8)
        ro.setflags(write=False)
        with self.assertRaisesRegex(ValueError, "read-only"):
            offload_io.pread_async(fd, ro)
        offload_io.pwrite_async(fd, ro).wait()
        with self.assertRaisesRegex(ValueError, "not C-contiguous"):
            offload_io.pread_async(fd, numpy.zeros(8, numpy.uint8)[::2])
        with self.assertRaisesRegex(ValueError, "count 9"):
            offload_io.pwrite_async(fd, numpy.zeros(8, numpy.uint8), count=9)
        with self.assertRaises(TypeError):
            offload_io.pread_async(fd, object())

    def test_error_at_wait(self) -> None:
        # Submission accepts /proc/self/mem; its pread(2) at offset 0 fails with EIO.
        fd = os.open("/proc/self/mem", os.O_RDONLY)
        self.addCleanup(os.close, fd)
        targets = [numpy.zeros(8, numpy.uint8)]
        if HOST_DEVICES:
            buf = offload_io.DeviceBuffer(8, HOST_DEVICES[0])
            self.addCleanup(buf.free)
            targets.append(buf)
        for target in targets:
            with self.subTest(target=type(target).__name__):
                req = offload_io.pread_async(fd, target)
                with self.assertRaises(OSError) as cm:
                    req.wait()
                self.assertLibraryError(cm.exception, errno.EIO, "ompx_io_wait")
                with self.assertRaises(ValueError):
                    req.wait()


class BatchTest(TempFileCase):
    """Batch: reads and writes submitted together."""

    @needs_host_devices(4)
    def test_mixed_reads_and_writes_over_devices(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        src = self.open_fd(os.O_RDONLY)
        dst = self.open_fd(os.O_WRONLY, out)
        bufs = [offload_io.DeviceBuffer(2048, d) for d in HOST_DEVICES[:4]]
        for b in bufs:
            self.addCleanup(b.free)
        host_in = numpy.zeros(2048, numpy.uint8)
        host_out = numpy.arange(2048, dtype=numpy.uint16).astype(numpy.uint8)
        writers = [offload_io.DeviceBuffer(512, d) for d in HOST_DEVICES[:4]]
        for i, w in enumerate(writers):
            self.addCleanup(w.free)
            numpy.asarray(w)[:] = i + 1
        batch = offload_io.Batch()
        for i, b in enumerate(bufs):
            batch.read(src, b, offset=2048 * i)
        batch.read(src, host_in, offset=2048 * 4)
        for i, w in enumerate(writers):
            batch.write(dst, w, offset=512 * i)
        batch.write(dst, host_out, offset=2048)
        self.assertEqual(len(batch), 10)
        self.assertFalse(batch.done())
        self.assertIs(batch.submit(), batch)
        results = batch.wait()
        self.assertEqual(results, [2048] * 5 + [512] * 4 + [2048])
        self.assertEqual(batch.results, results)
        self.assertTrue(batch.done())
        for i, b in enumerate(bufs):
            self.assertEqual(numpy.asarray(b).tobytes(), PATTERN[2048 * i:2048 * (i + 1)])
        self.assertEqual(host_in.tobytes(), PATTERN[2048 * 4:2048 * 5])
        expected = b"".join(bytes([i + 1]) * 512 for i in range(4)) + host_out.tobytes()
        self.assertEqual(self.file_bytes(out), expected)

    def test_context_manager(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(100, numpy.uint8)
        b = numpy.zeros(100, numpy.uint8)
        with offload_io.Batch() as batch:
            batch.read(fd, a, offset=0)
            batch.read(fd, b, offset=len(PATTERN) - 40)  # short at end of file
        self.assertEqual(batch.results, [100, 40])
        self.assertEqual(a.tobytes(), PATTERN[:100])
        self.assertEqual(b[:40].tobytes(), PATTERN[-40:])

    def test_context_manager_after_submit(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(10, numpy.uint8)
        with offload_io.Batch() as batch:
            batch.read(fd, a, count=4)
            batch.submit()
        self.assertEqual(batch.results, [4])

    def test_exception_in_block_submits_nothing(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        fd = self.open_fd(os.O_WRONLY, out)
        with self.assertRaises(KeyError):
            with offload_io.Batch() as batch:
                batch.write(fd, numpy.ones(8, numpy.uint8))
                raise KeyError("stop")
        self.assertEqual(batch.results, [])
        self.assertEqual(self.file_bytes(out), b"")

    def test_per_operation_errors(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        bad = closed_fd()
        good1 = numpy.zeros(16, numpy.uint8)
        good2 = numpy.zeros(16, numpy.uint8)
        batch = offload_io.Batch()
        batch.read(fd, good1, offset=0)
        batch.read(bad, numpy.zeros(16, numpy.uint8))                       # EBADF
        batch.read(fd, numpy.zeros(16, numpy.uint8), device=NO_DEVICE)       # ENODEV
        expected = {1: errno.EBADF, 2: errno.ENODEV}
        if HOST_DEVICES:
            batch.read(fd, numpy.zeros(16, numpy.uint8), device=HOST_DEVICES[0])  # EFAULT
            expected[3] = errno.EFAULT
        batch.read(fd, good2, offset=16)
        results = batch.submit().wait()
        self.assertEqual(results[0], 16)
        self.assertEqual(results[-1], 16)
        for i, code in expected.items():
            with self.subTest(operation=i):
                self.assertIsInstance(results[i], OSError)
                self.assertEqual(results[i].errno, code)
                self.assertIn(f"operation {i}", str(results[i]))
        self.assertEqual(good1.tobytes(), PATTERN[:16])
        self.assertEqual(good2.tobytes(), PATTERN[16:32])

    # Each failed operation's OSError carries the library's text.
    def test_per_operation_errors_carry_library_message(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        bad = closed_fd()
        batch = offload_io.Batch()
        batch.read(fd, numpy.zeros(16, numpy.uint8))
        batch.read(bad, numpy.zeros(16, numpy.uint8))
        results = batch.submit().wait()
        self.assertEqual(results[1].errno, errno.EBADF)
        self.assertIn(f"fd {bad} is not open", str(results[1]))

    def test_overlapping_destinations_both_fail(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(32, numpy.uint8)
        c = numpy.zeros(8, numpy.uint8)
        batch = offload_io.Batch()
        batch.read(fd, a[0:16])
        batch.read(fd, a[8:24], offset=100)
        batch.read(fd, c, offset=200)
        results = batch.submit().wait()
        self.assertEqual([getattr(r, "errno", r) for r in results], [errno.EINVAL, errno.EINVAL, 8])
        self.assertIn("overlaps", _native.last_error())
        self.assertEqual(c.tobytes(), PATTERN[200:208])

    def test_operation_error_at_run_time(self) -> None:
        mem = os.open("/proc/self/mem", os.O_RDONLY)
        self.addCleanup(os.close, mem)
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(8, numpy.uint8)
        with offload_io.Batch() as batch:
            batch.read(mem, numpy.zeros(8, numpy.uint8))
            batch.read(fd, a, offset=8)
        self.assertEqual(batch.results[0].errno, errno.EIO)
        self.assertEqual(batch.results[1], 8)
        self.assertEqual(a.tobytes(), PATTERN[8:16])

    def test_empty_batch_is_einval(self) -> None:
        with self.assertRaises(OSError) as cm:
            offload_io.Batch().submit()
        self.assertLibraryError(cm.exception, errno.EINVAL, "nops is 0")
        with self.assertRaises(OSError) as cm:
            with offload_io.Batch():
                pass
        self.assertEqual(cm.exception.errno, errno.EINVAL)

    def test_misuse_is_value_error(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        batch = offload_io.Batch()
        with self.assertRaisesRegex(ValueError, "not in flight"):
            batch.wait()
        self.assertFalse(batch.done())
        batch.read(fd, numpy.zeros(4, numpy.uint8))
        batch.submit()
        with self.assertRaisesRegex(ValueError, "submitted already"):
            batch.submit()
        with self.assertRaisesRegex(ValueError, "submitted already"):
            batch.read(fd, numpy.zeros(4, numpy.uint8))
        self.assertEqual(batch.wait(), [4])
        with self.assertRaisesRegex(ValueError, "not in flight"):
            batch.wait()
        self.assertTrue(batch.done())

    def test_add_errors(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        ro = numpy.zeros(4, numpy.uint8)
        ro.setflags(write=False)
        batch = offload_io.Batch()
        with self.assertRaisesRegex(ValueError, "read-only"):
            batch.read(fd, ro)
        with self.assertRaisesRegex(ValueError, "not C-contiguous"):
            batch.read(fd, numpy.zeros(8, numpy.uint8)[::2])
        with self.assertRaisesRegex(ValueError, "count 5"):
            batch.read(fd, numpy.zeros(4, numpy.uint8), count=5)
        with self.assertRaises(TypeError):
            batch.write(fd, object())
        self.assertEqual(len(batch), 0)
        batch.write(fd, ro)  # a write from read-only memory is fine
        self.assertEqual(len(batch), 1)

    def test_dropped_batch_is_waited(self) -> None:
        out = os.path.join(self.dir, "out.bin")
        fd = self.open_fd(os.O_WRONLY, out)
        batch = offload_io.Batch()
        batch.write(fd, numpy.full(32, 3, numpy.uint8))
        batch.submit()
        del batch
        gc.collect()
        self.assertEqual(self.file_bytes(out), bytes([3]) * 32)


# Offsets and device numbers that do not fit off_t and int are refused, never wrapped
# by ctypes; floats are refused, not truncated.
class IntegerRangeTest(TempFileCase):
    """Offsets and device numbers that do not fit the C types are refused, not wrapped."""

    REFUSED = (OSError, OverflowError, ValueError, TypeError)

    def test_offset_beyond_int64(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        a = numpy.zeros(8, numpy.uint8)
        with self.assertRaises(self.REFUSED):
            offload_io.pread(fd, a, offset=2 ** 64 + 1)  # wraps to offset 1 today

    def test_offset_beyond_int64_in_batch(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        batch = offload_io.Batch()
        with self.assertRaises(self.REFUSED):
            batch.read(fd, numpy.zeros(8, numpy.uint8), offset=2 ** 64 + 2)
            batch.submit().wait()
            if isinstance(batch.results[0], OSError):
                raise batch.results[0]

    def test_float_offset(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        with self.assertRaises(self.REFUSED):
            offload_io.pread(fd, numpy.zeros(8, numpy.uint8), offset=1.5)

    @needs_host_devices(1)
    def test_device_beyond_int32(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        with offload_io.DeviceBuffer(8, HOST_DEVICES[0]) as buf:
            with self.assertRaises(self.REFUSED):
                offload_io.pread(fd, buf, device=2 ** 32 + HOST_DEVICES[0])  # device 0 today

    def test_describe_device_beyond_int32(self) -> None:
        with self.assertRaises(OSError) as cm:
            offload_io.describe_device(2 ** 32 + 1)
        self.assertEqual(cm.exception.errno, errno.ENODEV)


class ThreadTest(TempFileCase):
    """Calls from several threads at once; each thread's error carries its own message."""

    def test_concurrent_reads_and_errors(self) -> None:
        import threading

        fd = self.open_fd(os.O_RDONLY)
        devices = (HOST_DEVICES[:4] or []) + [INITIAL]
        failures = []
        barrier = threading.Barrier(len(devices) * 2)

        def reader(device: int, k: int) -> None:
            try:
                buf = (numpy.zeros(4096, numpy.uint8) if device == INITIAL
                       else offload_io.DeviceBuffer(4096, device))
                barrier.wait(timeout=10)
                for i in range(20):
                    offset = (k * 20 + i) * 64
                    if offload_io.pread(fd, buf, offset=offset) != 4096:
                        failures.append(f"device {device}: short read")
                    if numpy.asarray(buf).tobytes() != PATTERN[offset:offset + 4096]:
                        failures.append(f"device {device}: wrong bytes at {offset}")
            except Exception as exc:  # reported below
                failures.append(f"device {device}: {exc!r}")

        def failer(k: int) -> None:
            try:
                barrier.wait(timeout=10)
                for i in range(20):
                    offset = -(k * 100 + i + 1)
                    try:
                        offload_io.pread(fd, numpy.zeros(8, numpy.uint8), offset=offset)
                    except OSError as exc:
                        if f"negative offset {offset}" not in str(exc):
                            failures.append(f"thread {k}: message of another call: {exc}")
                    else:
                        failures.append(f"thread {k}: offset {offset} accepted")
            except Exception as exc:
                failures.append(f"thread {k}: {exc!r}")

        threads = [threading.Thread(target=reader, args=(d, k)) for k, d in enumerate(devices)]
        threads += [threading.Thread(target=failer, args=(k,)) for k in range(len(devices))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        self.assertFalse(any(t.is_alive() for t in threads), "a thread did not finish")
        self.assertEqual(failures, [])


class StatsSettingsTest(TempFileCase):
    """stats, settings, pinned_budget."""

    @staticmethod
    def total(stats: dict, key: str) -> int:
        return sum(stats[key].values())

    def test_stats_layout(self) -> None:
        s = offload_io.stats(INITIAL)
        for key in ("bytes_read", "bytes_written", "reads", "writes"):
            self.assertEqual(sorted(s[key]), sorted(["direct", "fastpath", "staged", "host"]))
            self.assertTrue(all(isinstance(v, int) and v >= 0 for v in s[key].values()))
        self.assertIsInstance(s["fallbacks"], int)
        self.assertIsInstance(s["last_fallback"], str)
        self.assertEqual(offload_io.stats("cpu")["bytes_read"].keys(), s["bytes_read"].keys())

    def test_initial_device_counts_on_host_path(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        before = offload_io.stats(INITIAL)
        offload_io.pread(fd, numpy.zeros(1000, numpy.uint8))
        offload_io.pwrite(fd, numpy.zeros(300, numpy.uint8), offset=len(PATTERN))
        after = offload_io.stats(INITIAL)
        self.assertEqual(after["bytes_read"]["host"] - before["bytes_read"]["host"], 1000)
        self.assertEqual(after["bytes_written"]["host"] - before["bytes_written"]["host"], 300)
        self.assertEqual(after["reads"]["host"] - before["reads"]["host"], 1)
        self.assertEqual(after["writes"]["host"] - before["writes"]["host"], 1)
        self.assertEqual(self.total(after, "bytes_read") - self.total(before, "bytes_read"), 1000)

    @needs_host_devices(2)
    def test_device_counts(self) -> None:
        fd = self.open_fd(os.O_RDWR)
        dev, other = HOST_DEVICES[0], HOST_DEVICES[1]
        before, before_other = offload_io.stats(dev), offload_io.stats(other)
        with offload_io.DeviceBuffer(4096, dev) as buf:
            offload_io.pread(fd, buf)
            offload_io.pread(fd, buf, count=100)
            offload_io.pwrite(fd, buf, offset=len(PATTERN), count=2000)
        after, after_other = offload_io.stats(dev), offload_io.stats(other)
        self.assertEqual(self.total(after, "bytes_read") - self.total(before, "bytes_read"), 4196)
        self.assertEqual(self.total(after, "bytes_written") - self.total(before, "bytes_written"), 2000)
        self.assertEqual(self.total(after, "reads") - self.total(before, "reads"), 2)
        self.assertEqual(self.total(after, "writes") - self.total(before, "writes"), 1)
        # The host plugin reads straight into its memory, never through the host path.
        self.assertEqual(after["bytes_read"]["direct"] - before["bytes_read"]["direct"], 4196)
        self.assertEqual(after["bytes_read"]["host"], before["bytes_read"]["host"])
        self.assertEqual(after_other, before_other)

    def test_stats_bad_device(self) -> None:
        with self.assertRaises(OSError) as cm:
            offload_io.stats(NO_DEVICE)
        self.assertEqual(cm.exception.errno, errno.ENODEV)
        self.assertIn(_native.last_error(), str(cm.exception))
        self.assertIn("ompx_io_get_stats", str(cm.exception))

    def test_settings(self) -> None:
        table = offload_io.settings()
        names = [s["name"] for s in table]
        self.assertIn("OMPX_IO_THREADS", names)
        self.assertEqual(len(names), len(set(names)))
        for s in table:
            with self.subTest(name=s["name"]):
                self.assertEqual(set(s), {"name", "value", "default", "env", "valid", "source"})
                self.assertTrue(s["name"].startswith("OMPX_IO_"))
                self.assertIn(s["source"], ("default", "environment", "invalid"))
                self.assertTrue(s["valid"])
                if s["source"] == "default":
                    self.assertEqual(s["value"], s["default"])
                    self.assertEqual(s["env"], os.environ.get(s["name"], ""))

    def _settings_in_child(self, value: str) -> "tuple[dict, str]":
        code = ("import json, offload_io\n"
                "entry = [s for s in offload_io.settings() if s['name'] == 'OMPX_IO_THREADS'][0]\n"
                "print(json.dumps(entry))\n")
        env = dict(os.environ, OMPX_IO_THREADS=value)
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr

    def test_setting_from_environment(self) -> None:
        entry, _ = self._settings_in_child("3")
        self.assertEqual(entry["source"], "environment")
        self.assertEqual(entry["value"], "3")
        self.assertEqual(entry["env"], "3")

    def test_invalid_setting(self) -> None:
        entry, stderr = self._settings_in_child("bogus")
        self.assertEqual(entry["source"], "invalid")
        self.assertEqual(entry["env"], "bogus")
        self.assertEqual(entry["value"], entry["default"])
        self.assertRegex(stderr, r"OMPX_IO_THREADS='bogus'")

    def test_pinned_budget(self) -> None:
        b = offload_io.pinned_budget()
        self.assertEqual(set(b), {"cap", "used", "peak", "refusals"})
        for key, value in b.items():
            self.assertIsInstance(value, int, key)
            self.assertGreaterEqual(value, 0, key)
        self.assertGreater(b["cap"], 0)
        self.assertLessEqual(b["used"], b["cap"])
        self.assertGreaterEqual(b["peak"], b["used"])


class DeviceBufferTest(TempFileCase):
    """DeviceBuffer: omp_target_alloc memory."""

    @needs_host_devices(4)
    def test_attributes_and_repr(self) -> None:
        for device in HOST_DEVICES[:4]:
            with self.subTest(device=device):
                buf = offload_io.DeviceBuffer(100, device)
                self.addCleanup(buf.free)
                self.assertEqual(buf.device, device)
                self.assertEqual(buf.nbytes, 100)
                self.assertEqual(len(buf), 100)
                self.assertNotEqual(buf.ptr, 0)
                self.assertEqual(repr(buf), f"DeviceBuffer(100 bytes on device {device} (x86_64))")

    def test_initial_device_buffer(self) -> None:
        for device in (None, "cpu", INITIAL):
            with self.subTest(device=device), offload_io.DeviceBuffer(16, device) as buf:
                self.assertEqual(buf.device, INITIAL)
                self.assertIn("(host)", repr(buf))
                view = numpy.asarray(buf)
                view[:] = 7
                fd = self.open_fd(os.O_RDONLY)
                self.assertEqual(offload_io.pread(fd, buf), 16)
                self.assertEqual(view.tobytes(), PATTERN[:16])

    @needs_host_devices(1)
    def test_free_and_context_manager(self) -> None:
        buf = offload_io.DeviceBuffer(64, HOST_DEVICES[0])
        buf.free()
        self.assertEqual(buf.ptr, 0)
        buf.free()  # twice is fine
        with self.assertRaisesRegex(ValueError, "freed"):
            buf.__array_interface__
        with offload_io.DeviceBuffer(64, HOST_DEVICES[0]) as buf2:
            self.assertNotEqual(buf2.ptr, 0)
        self.assertEqual(buf2.ptr, 0)

    @needs_host_devices(1)
    def test_freed_buffer_is_refused(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        buf = offload_io.DeviceBuffer(64, HOST_DEVICES[0])
        buf.free()
        with self.assertRaises((OSError, ValueError)) as cm:
            offload_io.pread(fd, buf)
        if isinstance(cm.exception, OSError):
            self.assertLibraryError(cm.exception, errno.EFAULT, "null buffer")

    @needs_host_devices(1)
    def test_array_interface(self) -> None:
        with offload_io.DeviceBuffer(32, HOST_DEVICES[0]) as buf:
            iface = buf.__array_interface__
            self.assertEqual(iface["shape"], (32,))
            self.assertEqual(iface["typestr"], "|u1")
            self.assertEqual(iface["data"], (buf.ptr, False))
            view = numpy.asarray(buf)
            self.assertEqual(view.dtype, numpy.uint8)
            self.assertEqual(view.shape, (32,))
            self.assertTrue(view.flags.writeable)
            view[:] = numpy.arange(32, dtype=numpy.uint8)
            out = os.path.join(self.dir, "out.bin")
            fd = self.open_fd(os.O_WRONLY, out)
            self.assertEqual(offload_io.pwrite(fd, buf), 32)
            self.assertEqual(self.file_bytes(out), bytes(range(32)))
            # The view keeps the buffer alive, and sees its memory.
            self.assertIs(view.base, buf)

    @needs_host_devices(1)
    def test_no_cuda_array_interface_and_dlpack_device(self) -> None:
        with offload_io.DeviceBuffer(8, HOST_DEVICES[0]) as buf:
            self.assertFalse(hasattr(buf, "__cuda_array_interface__"))
            self.assertEqual(buf.__dlpack_device__(), (1, 0))

    @needs_host_devices(1)
    def test_zero_bytes(self) -> None:
        fd = self.open_fd(os.O_RDONLY)
        with offload_io.DeviceBuffer(0, HOST_DEVICES[0]) as buf:
            self.assertEqual(len(buf), 0)
            self.assertEqual(numpy.asarray(buf).shape, (0,))
            self.assertEqual(offload_io.pread(fd, buf), 0)

    def test_negative_size(self) -> None:
        with self.assertRaises(ValueError):
            offload_io.DeviceBuffer(-1, HOST_DEVICES[0] if HOST_DEVICES else None)

    # A device no plugin serves is ENODEV, checked before omp_target_alloc (libomptarget
    # ends the process for a device out of its range): run in a child process.
    def test_bad_device_is_enodev(self) -> None:
        code = ("import offload_io\n"
                "try:\n"
                f"    offload_io.DeviceBuffer(16, {NO_DEVICE})\n"
                "except OSError as e:\n"
                "    print('OSError', e.errno, e)\n")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"OSError {errno.ENODEV} ", proc.stdout, proc.stderr)
        self.assertIn("does not exist", proc.stdout)

    @needs_host_devices(1)
    def test_freed_when_collected(self) -> None:
        # Many allocations dropped without free(): __del__ gives the memory back.
        for _ in range(200):
            offload_io.DeviceBuffer(1 << 20, HOST_DEVICES[0])
        gc.collect()


if __name__ == "__main__":
    unittest.main()
