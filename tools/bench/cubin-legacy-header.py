#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rewrites, in place, the ELF header of every CUDA cubin embedded in an
offload program from the layout of ELF ABI version 8 (ptxas of CUDA 13, and
of CUDA 12.8 for sm_100 on) to the older one (ABI version 7) that LLVM 18's
stock CUDA plugin reads: it takes a cubin's SM from e_flags bits 0-7, where
version 8 keeps it in bits 8-15, so it refuses every newer cubin and reports
no device (llvm/llvm-project issue 159088; LLVM 18 was never fixed). The
benchmarks give the stock plugin a copy rewritten so; the code is untouched,
and the driver loads either header.

    cubin-legacy-header.py PROGRAM     (prints how many cubins it rewrote)
"""
import struct
import sys

EM_CUDA = 190
ELF_MAGIC = b"\x7fELF"
# Old layout: SM in bits 0-7, the virtual SM in bits 16-23, and the unified
# texture mode and 64-bit address flags (0x100, 0x400) that ptxas of CUDA 12
# sets on every sm_90 cubin.
OLD_TEXMODE_UNIFIED = 0x100
OLD_64BIT_ADDRESS = 0x400


def rewrite(data):
    count = 0
    pos = data.find(ELF_MAGIC, 1)  # the program's own header is at 0
    while pos != -1:
        header = data[pos:pos + 64]
        if len(header) == 64 and header[4] == 2 and header[5] == 1:
            machine = struct.unpack_from("<H", header, 18)[0]
            abi_version = header[8]
            if machine == EM_CUDA and abi_version == 8:
                flags = struct.unpack_from("<I", header, 48)[0]
                sm = (flags >> 8) & 0xFF
                old = sm | OLD_TEXMODE_UNIFIED | OLD_64BIT_ADDRESS | (sm << 16)
                data[pos + 8] = 7
                struct.pack_into("<I", data, pos + 48, old)
                count += 1
        pos = data.find(ELF_MAGIC, pos + 1)
    return count


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: cubin-legacy-header.py PROGRAM")
    with open(sys.argv[1], "rb") as f:
        data = bytearray(f.read())
    count = rewrite(data)
    with open(sys.argv[1], "wb") as f:
        f.write(data)
    print(count)


if __name__ == "__main__":
    main()
