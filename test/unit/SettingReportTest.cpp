// SPDX-License-Identifier: Apache-2.0
//
// reportEverySetting (offloadio/SettingReport.h), the run-time
// introspection behind ompx_io_get_all_settings: every setting of
// Settings.def in its order, each read by its kind's reader, with its origin;
// a reader's run-time read of a variable stands for the table's.
#include "offloadio/SettingReport.h"
#include "AllSettingsUnset.h"
#include "ScopedEnv.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace offloadio;
using namespace offloadio::test;

namespace {

const SettingReportTy &find(const std::vector<SettingReportTy> &Report,
                            SettingId Id) {
  return Report[unsigned(Id)];
}

TEST(SettingReportTest, EverySettingInTheTablesOrder) {
  AllSettingsUnsetTy Unset;
  std::vector<SettingReportTy> Report = reportEverySetting();
  ASSERT_EQ(Report.size(), NumSettings);
  for (size_t I = 0; I < NumSettings; ++I) {
    const SettingReportTy &R = Report[I];
    EXPECT_EQ(R.Decl, &SettingDecls[I]);
    EXPECT_EQ(R.Read.Name, SettingDecls[I].Name);
    EXPECT_FALSE(R.Read.Raw) << R.Read.Name;
    EXPECT_FALSE(R.Read.Invalid) << R.Read.Name;
    EXPECT_EQ(R.Read.Used, R.Read.Default) << R.Read.Name;
    EXPECT_FALSE(R.Read.Expected.empty()) << R.Read.Name;
  }
  const SettingReportTy &Path = find(Report, SettingId::PageablePath);
  EXPECT_EQ(Path.Read.Used, "auto");
  EXPECT_EQ(Path.Read.Expected, "one of auto, staged, lock");
  EXPECT_EQ(find(Report, SettingId::IOChunkSize).Read.Default, "2M");
  EXPECT_EQ(find(Report, SettingId::AMDGPUAnyFilesystem).Read.Default, "off");
}

TEST(SettingReportTest, EnvironmentAndRefusedValues) {
  AllSettingsUnsetTy Unset;
  setenv("OMPX_IO_CHUNK_SIZE", "4M", 1);
  setenv("LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM", "yes", 1);
  setenv("OFFLOADIO_STAGING_BUFFERS", "banana", 1);
  std::vector<SettingReportTy> Report = reportEverySetting();
  const EnvReadTy &Chunk = find(Report, SettingId::IOChunkSize).Read;
  EXPECT_EQ(Chunk.Raw, std::optional<std::string>("4M"));
  EXPECT_EQ(Chunk.Used, "4M");
  EXPECT_FALSE(Chunk.Invalid);
  const EnvReadTy &Any = find(Report, SettingId::AMDGPUAnyFilesystem).Read;
  EXPECT_EQ(Any.Used, "on");
  EXPECT_FALSE(Any.Invalid);
  const EnvReadTy &Buffers = find(Report, SettingId::StagingBuffers).Read;
  EXPECT_EQ(Buffers.Raw, std::optional<std::string>("banana"));
  EXPECT_TRUE(Buffers.Invalid);
  EXPECT_EQ(Buffers.Used, "32");
  EXPECT_EQ(Buffers.Expected, "an integer from 1 to 4096");
}

TEST(SettingReportTest, ARunTimeReadStandsForTheTables) {
  AllSettingsUnsetTy Unset;
  EnvReadTy RunTime;
  RunTime.Name = settingDecl(SettingId::IOThreads).Name;
  RunTime.Used = "3";
  RunTime.Default = "3";
  RunTime.Expected = "an integer from 1 to 256";
  std::vector<SettingReportTy> Report = reportEverySetting({RunTime});
  const SettingReportTy &Threads = find(Report, SettingId::IOThreads);
  EXPECT_EQ(Threads.Read.Default, "3");
  EXPECT_EQ(Threads.Decl, &settingDecl(SettingId::IOThreads));
  // The others are the table's.
  EXPECT_EQ(find(Report, SettingId::CopyThreads).Read.Default, "12");
}

TEST(SettingReportTest, BothReadersOfAVariableAreReported) {
  AllSettingsUnsetTy Unset;
  std::vector<SettingReportTy> Report = reportEverySetting();
  const SettingReportTy &CUDA = find(Report, SettingId::CUDAStackSize);
  const SettingReportTy &AMDGPU = find(Report, SettingId::AMDGPUStackSize);
  EXPECT_EQ(CUDA.Read.Name, AMDGPU.Read.Name);
  EXPECT_EQ(CUDA.Read.Default, "0");
  EXPECT_EQ(AMDGPU.Read.Default, "0");
}

} // namespace
