# SPDX-License-Identifier: Apache-2.0
"""The bytes offloadio-checkpoint's generator (Pattern.h) gives each tensor,
for the Python scripts that write or check its files
(test/offload/io/Inputs/safetensors-files.py,
tools/trixie/safetensors-compat.py): splitmix64 of the seed, the FNV-1a
hash of the tensor's name and the word's number, little-endian."""
import struct

M64 = (1 << 64) - 1
# Bytes per element of every safetensors dtype.
SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2,
         "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4,
         "F64": 8, "I64": 8, "U64": 8}


def pattern_word(seed, key, word):
    z = seed ^ ((key * 0x9E3779B97F4A7C15) & M64) ^ ((word * 0xBF58476D1CE4E5B9) & M64)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def fnv1a(name):
    h = 0xCBF29CE484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


def pattern(seed, name, count):
    """The first count bytes the generator gives the tensor name."""
    key = fnv1a(name)
    words = (count + 7) // 8
    return b"".join(struct.pack("<Q", pattern_word(seed, key, w))
                    for w in range(words))[:count]
