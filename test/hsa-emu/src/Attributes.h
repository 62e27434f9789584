// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: writing the answers of the *_get_info calls into the caller's
// value buffer.
#ifndef HSAEMU_ATTRIBUTES_H
#define HSAEMU_ATTRIBUTES_H

#include <hsa/hsa.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace hsaemu {

/// Store \p V at \p Value, as the HSA info calls answer.
template <typename T> hsa_status_t put(void *Value, T V) {
  std::memcpy(Value, &V, sizeof(T));
  return HSA_STATUS_SUCCESS;
}

/// Store \p Name at \p Value, a character array of \p Capacity bytes.
inline hsa_status_t putName(void *Value, const std::string &Name,
                            size_t Capacity) {
  // Fixed-size character arrays of the HSA API (64 bytes for names).
  std::memset(Value, 0, Capacity);
  std::memcpy(Value, Name.data(), std::min(Name.size(), Capacity - 1));
  return HSA_STATUS_SUCCESS;
}

/// The attribute \p Attr as an integer. Callers pass extension attributes
/// (hsa_amd_agent_info_t, hsa_amd_system_info_t) through the core enum
/// parameter, outside the range of its enumerators, and reading such a value
/// as the enum type is undefined: copy its bytes instead.
template <typename EnumTy> int rawAttribute(const EnumTy &Attr) {
  static_assert(sizeof(EnumTy) == sizeof(int), "HSA enums are int-sized");
  int Raw;
  std::memcpy(&Raw, &Attr, sizeof(Raw));
  return Raw;
}

} // namespace hsaemu

#endif // HSAEMU_ATTRIBUTES_H
