// SPDX-License-Identifier: Apache-2.0
//
// The settings report of the offload-io extensions: the file engine's
// settings as its reader sees them (__tgt_rtl_ompx_io_settings) and the
// process's CPU share, thread counts and pinned cap with their origins
// (__tgt_rtl_ompx_process_budget), and every setting of Settings.def
// (__tgt_rtl_ompx_settings_info), behind ompx_io_get_settings,
// ompx_io_get_process_budget and ompx_io_get_all_settings.
#include "offloadio/CApiSupport.h"
#include "offloadio/Envar.h"
#include "offloadio/ExtensionABI.h"
#include "offloadio/Plugin.h"
#include "offloadio/ProcessShare.h"
#include "offloadio/SettingReport.h"
#include "offloadio/Settings.h"
#include "offloadio/io/IOEngine.h"

#include "ompx_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace offloadio;

// Extension calls: reached through the table (CApiExtensionTable.cpp), not
// exported.

namespace {
/// Copy \p Text into the fixed C field \p Field, cut to fit.
template <size_t N>
void copySettingText(char (&Field)[N], const std::string &Text) {
  std::snprintf(Field, N, "%s", Text.c_str());
}
} // namespace

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_settings(ompx_io_setting_t *Out,
                                                 uint64_t Capacity,
                                                 uint64_t *Count) {
  if (!Count || (!Out && Capacity))
    return EINVAL;
  // The engine's own reader, observed: its names, defaults and valid values
  // are nowhere else.
  EnvReadLogTy Log;
  (void)IOConfigTy::fromEnv();
  const std::vector<EnvReadTy> &Reads = Log.reads();
  *Count = Reads.size();
  for (uint64_t I = 0; I < Reads.size() && I < Capacity; ++I) {
    const EnvReadTy &R = Reads[I];
    ompx_io_setting_t &S = Out[I];
    S = ompx_io_setting_t();
    copySettingText(S.name, R.Name);
    copySettingText(S.value, R.Used);
    copySettingText(S.default_value, R.Default);
    copySettingText(S.env_value, R.Raw.value_or(""));
    copySettingText(S.valid, R.Expected);
    S.source = R.Invalid ? OMPX_IO_SETTING_INVALID
               : R.Raw   ? OMPX_IO_SETTING_ENVIRONMENT
                         : OMPX_IO_SETTING_DEFAULT;
  }
  return 0;
}

namespace {
/// \p R as the C entry, whole.
ompx_io_setting_info_t settingInfo(const SettingReportTy &R) {
  ompx_io_setting_info_t S = ompx_io_setting_info_t();
  S.size = sizeof(S);
  copySettingText(S.name, R.Decl->Name);
  copySettingText(S.value, R.Read.Used);
  copySettingText(S.default_value, R.Read.Default);
  copySettingText(S.env_value, R.Read.Raw.value_or(""));
  copySettingText(S.valid, R.Read.Expected);
  copySettingText(S.doc, R.Decl->Doc);
  copySettingText(S.layer_name, settingLayerName(R.Decl->Layer));
  S.origin = R.Read.Invalid ? OMPX_IO_SETTING_INVALID
             : R.Read.Raw   ? OMPX_IO_SETTING_ENVIRONMENT
                            : OMPX_IO_SETTING_DEFAULT;
  S.kind = int(R.Decl->Kind);
  S.layer = int(R.Decl->Layer);
  return S;
}
} // namespace

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_settings_info(ompx_io_setting_info_t *Out,
                                                   uint64_t EntrySize,
                                                   uint64_t Capacity,
                                                   uint64_t *Count) {
  if (!Count || (!Out && Capacity) ||
      (Capacity && EntrySize < SettingInfoFirstSize))
    return EINVAL;
  // The readers that know a default or bound at run time (the process's
  // CPUs and memory), observed; the table answers for the others.
  std::vector<EnvReadTy> RunTime;
  {
    EnvReadLogTy Log;
    ProcessShareTy Share = ProcessShareTy::detect();
    (void)PluginSettingsTy::fromEnv(Share);
    (void)IOConfigTy::fromEnv(Share);
    RunTime = Log.reads();
  }
  std::vector<SettingReportTy> Report = reportEverySetting(RunTime);
  *Count = Report.size();
  // An older caller's entries are shorter, a newer caller's longer: each
  // gets what both know, at the caller's stride.
  uint64_t Filled =
      std::min<uint64_t>(EntrySize, sizeof(ompx_io_setting_info_t));
  char *Entry = reinterpret_cast<char *>(Out);
  for (uint64_t I = 0; I < Report.size() && I < Capacity; ++I) {
    ompx_io_setting_info_t S = settingInfo(Report[I]);
    S.size = Filled;
    std::memcpy(Entry + I * EntrySize, &S, Filled);
  }
  return 0;
}

OFFLOADIO_EXTENSION_DEFINITION int32_t
__tgt_rtl_ompx_pinned_budget(ompx_pinned_budget_t *Out) {
  if (!Out)
    return EINVAL;
  // Every plugin of the process shares the account: any of them answers.
  PinnedBudgetStatsTy Stats = thePlugin().getPinnedBudget().getStats();
  Out->cap = Stats.Cap;
  Out->used = Stats.Used;
  Out->peak = Stats.Peak;
  Out->refusals = Stats.Refusals;
  return 0;
}

OFFLOADIO_EXTENSION_DEFINITION int32_t
__tgt_rtl_ompx_process_budget(ompx_io_process_budget_t *Out) {
  if (!Out)
    return EINVAL;
  *Out = ompx_io_process_budget_t();
  GenericPluginTy &Plugin = thePlugin();
  ProcessShareTy Share = ProcessShareTy::detect();
  Out->cpus_online = Share.OnlineCpus;
  Out->cpus_in_mask = Share.MaskCpus;
  Out->local_ranks = Share.LocalRanks;
  Out->local_rank = Share.LocalRank;
  Out->cpus = Share.cpus();
  copySettingText(Out->ranks_variable, Share.RanksVariable);
  copySettingText(Out->cpus_origin, Share.cpusOrigin());
  // The readers, observed, tell whether the environment set each value.
  EnvReadLogTy Log;
  IOConfigTy IO = IOConfigTy::fromEnv(Share);
  auto originOf = [&](const char *Name, const std::string &Default) {
    for (const EnvReadTy &R : Log.reads())
      if (R.Name == Name && R.Raw)
        return R.Invalid ? Default + " (" + Name + "='" + *R.Raw +
                               "' is invalid)"
                         : std::string("the environment (") + Name + "=" +
                               *R.Raw + ")";
    return Default;
  };
  // The pool's share per device is set once, by the first engine.
  unsigned PerDevice = Plugin.getIOWorkersPerDevice();
  Out->io_threads = PerDevice ? PerDevice : IO.Threads;
  Out->io_threads_running = Plugin.getNumIOWorkers();
  copySettingText(Out->io_threads_origin,
                  originOf(settingDecl(SettingId::IOThreads).Name,
                           IOConfigTy::defaultThreadsOrigin(Share)));
  // The plugin's own settings are the ones it read at load; the origins
  // come from reading them again.
  (void)PluginSettingsTy::fromEnv(Share);
  const PluginSettingsTy &Settings = Plugin.getSettings();
  Out->copy_threads = Settings.CopyThreads;
  copySettingText(Out->copy_threads_origin,
                  originOf(settingDecl(SettingId::CopyThreads).Name,
                           PluginSettingsTy::defaultCopyThreadsOrigin(Share)));
  Out->pinned_max = Plugin.getPinnedBudget().getStats().Cap;
  copySettingText(Out->pinned_max_origin,
                  originOf(settingDecl(SettingId::PinnedMax).Name,
                           PluginSettingsTy::defaultPinnedMaxOrigin(Share)));
  return 0;
}

