#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checkpoint load from Python beside C, in one run.

Loads one safetensors checkpoint (page-cached) with offload_io.load_safetensors
onto a device, and beside it the same file with offloadio-checkpoint (C, the
same library and device) and, where it is installed, the reference
implementation (safetensors.numpy / safetensors.torch). Prints GB/s of each,
best of --repeat, and the ratios to the C tool: what the Python layer costs.

    PYTHONPATH=build/python python3 tools/bench/python-load-bench.py FILE
        [--device cpu|cuda:0|N] [--framework auto|numpy|torch] [--repeat 3]
        [--tool build/bin/offloadio-checkpoint] [--openmp-device N]

Without FILE it writes a checkpoint of --tensors tensors (default 2000) and
--total bytes (default 512M) to a temporary file first.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time


def size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--framework", default="auto")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tensors", type=int, default=2000)
    ap.add_argument("--total", type=size, default=512 << 20)
    ap.add_argument("--tool", default="build/bin/offloadio-checkpoint")
    ap.add_argument("--openmp-device", type=int, default=None,
                    help="the C tool's --device (default: the one --device names)")
    args = ap.parse_args()

    import numpy
    import offload_io

    tmp = None
    path = args.file
    if path is None:
        tmp = tempfile.TemporaryDirectory(prefix="python-load-bench-")
        path = os.path.join(tmp.name, "bench.safetensors")
        per = max(args.total // args.tensors // 4, 1)
        rng = numpy.random.default_rng(1)
        state = {f"layer.{i}.weight": rng.random(per, dtype=numpy.float32) for i in range(args.tensors)}
        offload_io.save_safetensors(state, path)
        del state
    with open(path, "rb") as f:  # into the page cache
        while f.read(64 << 20):
            pass
    with offload_io.Checkpoint(path) as ckpt:
        nbytes = sum(t.nbytes for t in ckpt)
        count = len(ckpt)
    device = int(args.device) if args.device.isdigit() else args.device
    openmp = args.openmp_device
    if openmp is None:
        from offload_io import _devices

        openmp = _devices.resolve(device)
    print(f"== {path}: {count} tensors, {nbytes / 1e9:.3f} GB; device {device} (OpenMP {openmp}); "
          f"best of {args.repeat}")

    def ours() -> None:
        state = offload_io.load_safetensors(path, device=device, framework=args.framework)
        first = next(iter(state.values()), None)
        if first is not None and hasattr(first, "device") and str(first.device).startswith("cuda"):
            import torch

            torch.cuda.synchronize()

    results = {}
    results["offload_io.load_safetensors"] = nbytes / best(ours, args.repeat) / 1e9

    rates = []
    # The package's own libraries for the C tool too (a build tree's tool
    # finds our plugins only through LD_LIBRARY_PATH).
    from offload_io import _config

    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [_config.libdir(), env.get("LD_LIBRARY_PATH")]))
    for _ in range(args.repeat):
        out = subprocess.run([args.tool, "load", path, "--device", str(openmp)], capture_output=True,
                             text=True, env=env)
        match = re.search(r"([0-9.]+) GB/s\s*$", out.stdout.strip().splitlines()[-1] if out.stdout else "")
        if out.returncode != 0 or not match:
            print(f"offloadio-checkpoint failed ({out.returncode}): {out.stdout[-300:]} {out.stderr[-300:]}")
            return 1
        rates.append(float(match.group(1)))
    results["offloadio-checkpoint load (C)"] = max(rates)

    try:
        if str(device).startswith("cuda"):
            from safetensors.torch import load_file

            def reference() -> None:
                load_file(path, device=str(device))
                import torch

                torch.cuda.synchronize()
        else:
            from safetensors.numpy import load_file as np_load

            def reference() -> None:
                np_load(path)
        results["safetensors (reference)"] = nbytes / best(reference, args.repeat) / 1e9
    except ImportError:
        print("(the reference implementation is not installed: not measured)")

    c_rate = results["offloadio-checkpoint load (C)"]
    for name, rate in results.items():
        print(f"  {name:34s} {rate:7.2f} GB/s  {rate / c_rate:5.2f}x C")
    return 0


if __name__ == "__main__":
    sys.exit(main())
