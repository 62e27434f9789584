/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bytes the checkpoint example generates: a counter-based generator
 * (splitmix64 of seed, tensor key and word index), so that the device fills
 * a tensor in parallel and the host recomputes any byte to verify it. C, so
 * that the OpenMP offload source compiles it for the device too.
 */
#ifndef OFFLOADIO_EXAMPLES_CHECKPOINT_PATTERN_H
#define OFFLOADIO_EXAMPLES_CHECKPOINT_PATTERN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The metadata keys that record how a file's tensors were generated. */
#define CKPT_METADATA_GENERATOR "offloadio.generator"
#define CKPT_METADATA_SEED "offloadio.seed"
/** The value of CKPT_METADATA_GENERATOR for this generator. */
#define CKPT_GENERATOR_NAME "splitmix64-v1"

/** The key of a tensor: FNV-1a of its name, so that the bytes do not depend
 *  on the tensor's position in the file. */
static inline uint64_t ckptTensorKey(const char *Name, uint64_t Length) {
  uint64_t H = 0xcbf29ce484222325ull;
  for (uint64_t I = 0; I < Length; ++I)
    H = (H ^ (unsigned char)Name[I]) * 0x100000001b3ull;
  return H;
}

/** Byte Offset of the tensor with key Key under Seed. */
static inline unsigned char ckptPatternByte(uint64_t Seed, uint64_t Key,
                                            uint64_t Offset) {
  uint64_t Z = Seed ^ (Key * 0x9e3779b97f4a7c15ull) ^
               ((Offset >> 3) * 0xbf58476d1ce4e5b9ull);
  Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
  Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
  Z ^= Z >> 31;
  return (unsigned char)(Z >> (8 * (Offset & 7)));
}

/** Fills Bytes bytes of device memory Buf of Device with the tensor's
 *  pattern, in a target region. 0, or -1 when the region could not run
 *  on Device. */
int ckptFillDevice(void *Buf, uint64_t Bytes, uint64_t Seed, uint64_t Key,
                   int Device);

#ifdef __cplusplus
}
#endif

#endif /* OFFLOADIO_EXAMPLES_CHECKPOINT_PATTERN_H */
