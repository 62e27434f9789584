// SPDX-License-Identifier: Apache-2.0
//
// The table of every setting (Settings.def) as data: its name, kind,
// layer, default, bounds, choices and one line of documentation. Free of
// LLVM: libompx_io reads its settings through it too.
#ifndef OFFLOADIO_SETTINGTABLE_H
#define OFFLOADIO_SETTINGTABLE_H

#include <cstddef>
#include <cstdint>

namespace offloadio {

/// How a setting's value is written (Settings.def).
enum class SettingKindTy { Bool, Int, Size, Choice, InfoMask, Path };

/// Who reads a setting (Settings.def).
enum class SettingLayerTy { Plugin, Device, IOEngine, Host, CUDA, AMDGPU };

/// One enumerator per line of Settings.def, in its order.
enum class SettingId : unsigned {
#define OFFLOADIO_SETTING(Id, Name, Kind, Layer, Default, Min, Max, Choices,   \
                          Doc)                                                 \
  Id,
#include "offloadio/Settings.def"
};

/// One line of Settings.def.
struct SettingDeclTy {
  const char *Name;     ///< The environment variable.
  SettingKindTy Kind;   ///< How its value is written.
  SettingLayerTy Layer; ///< Who reads it.
  uint64_t Default;     ///< Default (Choice: its index; Bool: 0 or 1).
  uint64_t Min, Max;    ///< Bounds of Int and Size.
  const char *Choices;  ///< "a,b,c" for Choice, "" otherwise.
  const char *Doc;      ///< One line of documentation.
};

/// Every setting, indexed by SettingId.
inline constexpr SettingDeclTy SettingDecls[] = {
#define OFFLOADIO_SETTING(Id, Name, Kind, Layer, Default, Min, Max, Choices,   \
                          Doc)                                                 \
  {Name,                                                                       \
   SettingKindTy::Kind,                                                        \
   SettingLayerTy::Layer,                                                      \
   uint64_t(Default),                                                          \
   uint64_t(Min),                                                              \
   uint64_t(Max),                                                              \
   Choices,                                                                    \
   Doc},
#include "offloadio/Settings.def"
};

/// Number of settings.
inline constexpr size_t NumSettings =
    sizeof(SettingDecls) / sizeof(*SettingDecls);

/// The declaration of \p Id.
constexpr const SettingDeclTy &settingDecl(SettingId Id) {
  return SettingDecls[unsigned(Id)];
}

/// "plugin", "device", "io-engine", "host", "cuda" or "amdgpu".
const char *settingLayerName(SettingLayerTy Layer);

} // namespace offloadio

#endif // OFFLOADIO_SETTINGTABLE_H
