#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The check of docs/errors-and-env.md's defaults and valid values against
Settings.def (check-errors-and-env.py) on the page as it is (no problem) and
on copies with one wrong cell each (that problem, named).

Usage: check-errors-and-env-test.py <source root>
"""
import importlib.util
import os
import sys

root = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "check", os.path.join(here, "check-errors-and-env.py"))
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

doc = open(os.path.join(root, "docs", "errors-and-env.md"),
           encoding="utf-8").read()
declared = check.setting_declarations(root)
assert len(declared) == len(check.declared_settings(root)), \
    "every line of Settings.def is read"
assert check.declared_value_problems(root, doc) == [], \
    check.declared_value_problems(root, doc)

# (row as the page has it, the row broken, a word of the expected problem)
CASES = [
    ("| `OMPX_IO_CHUNK_SIZE` | 2 MiB | size 64K to 1G",
     "| `OMPX_IO_CHUNK_SIZE` | 4 MiB | size 64K to 1G",
     "OMPX_IO_CHUNK_SIZE (layer IOEngine) gives the default 4 MiB"),
    ("| `OMPX_IO_CHUNK_SIZE` | 2 MiB | size 64K to 1G",
     "| `OMPX_IO_CHUNK_SIZE` | 2 MiB | size 64K to 2G",
     "gives the maximum 2G"),
    ("| `OMPX_IO_RING_DEPTH` | 2 | 1 to 64",
     "| `OMPX_IO_RING_DEPTH` | two | 1 to 64",
     "gives the default 'two' in words"),
    ("| `OFFLOADIO_PAGEABLE_PATH` | auto | `auto`, `staged`, `lock`",
     "| `OFFLOADIO_PAGEABLE_PATH` | auto | `auto`, `staged`",
     "does not list the choice lock"),
    ("| `OFFLOADIO_PAGEABLE_PATH` | auto | `auto`, `staged`, `lock`",
     "| `OFFLOADIO_PAGEABLE_PATH` | auto | `auto`, `staged`, `lock`, `pin`",
     "lists `pin`"),
    ("| `OFFLOADIO_CUDA_GRAPHS` | on | boolean",
     "| `OFFLOADIO_CUDA_GRAPHS` | off | boolean",
     "OFFLOADIO_CUDA_GRAPHS (layer CUDA) gives the default 'off'"),
    ("| `OFFLOADIO_CUDA_GRAPHS` | on | boolean",
     "| `OFFLOADIO_CUDA_GRAPHS` | on | on or off",
     "does not say its valid values are a boolean"),
    ("| `LIBOMPTARGET_STACK_SIZE` | unset (0) | size 0 to 1M",
     "| `LIBOMPTARGET_STACK_SIZE` | unset (0) | size 0 to 2M",
     "LIBOMPTARGET_STACK_SIZE (layer AMDGPU) gives the maximum 2M"),
    ("| `OFFLOADIO_STAGING_BUFFERS` | 32 | 1 to 4096",
     "| `OFFLOADIO_STAGING_BUFFERS` | 32 | integer",
     "name no bounds"),
]
failures = 0
for good, bad, expected in CASES:
    assert good in doc, "the page no longer has: " + good
    problems = check.declared_value_problems(root, doc.replace(good, bad, 1))
    if not any(expected in p for p in problems):
        failures += 1
        print("FAIL: %r gave %r" % (bad, problems))
print("%d cases, %d failures" % (len(CASES), failures))
sys.exit(1 if failures else 0)
