// SPDX-License-Identifier: Apache-2.0
//
// Kernel dispatches completed unexecuted (HSA_EMU_DISPATCH=noop) of the
// EmuKernel.c code object: a dispatch completes when its kernel arguments
// are as the kernel's metadata says a launch fills them, and fails like an
// unsupported one when a code object v5 kernel's hidden geometry (block
// counts, group sizes, remainders, dimensions; the v5 device runtime reads
// its geometry there) disagrees with the packet. The v5 object is built
// where the toolchain links v5 (LLVM 17 and later); code object v4 kernels
// have no such arguments, and the v5 cases skip.
#include "HSAEmuFixture.h"

#include <fstream>
#include <iterator>
#include <string>

using namespace offloadio::test;

namespace {

[[maybe_unused]] const bool EnvSet =
    (setEmuEnv("abort"), setenv("HSA_EMU_DISPATCH", "noop", 1), true);

/// The v5 hidden block right after EmuKernel's one pointer argument.
constexpr uint32_t HiddenBase = 8;
constexpr uint32_t HiddenBlockSize = 256;

class HSAEmuDispatchTest : public HSAEmuTest {
protected:
  void SetUp() override {
    HSAEmuTest::SetUp();
    std::ifstream In(OFFLOADIO_EMU_KERNEL, std::ios::binary);
    Bytes.assign(std::istreambuf_iterator<char>(In), {});
    ASSERT_GT(Bytes.size(), 64u) << "no code object at " OFFLOADIO_EMU_KERNEL;
    ASSERT_EQ(hsa_code_object_deserialize(Bytes.data(), Bytes.size(), "",
                                          &Code),
              HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_executable_create(HSA_PROFILE_BASE,
                                    HSA_EXECUTABLE_STATE_UNFROZEN, "", &Exec),
              HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_executable_load_code_object(Exec, Gpus[0], Code, ""),
              HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_executable_freeze(Exec, ""), HSA_STATUS_SUCCESS);
    hsa_executable_symbol_t Kernel;
    ASSERT_EQ(hsa_executable_get_symbol_by_name(Exec, "emu_kernel.kd",
                                                &Gpus[0], &Kernel),
              HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_executable_symbol_get_info(
                  Kernel, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &Object),
              HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_executable_symbol_get_info(
                  Kernel,
                  HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                  &KernargSize),
              HSA_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (Exec.handle)
      EXPECT_EQ(hsa_executable_destroy(Exec), HSA_STATUS_SUCCESS);
    if (Code.handle)
      EXPECT_EQ(hsa_code_object_destroy(Code), HSA_STATUS_SUCCESS);
    HSAEmuTest::TearDown();
  }

  bool isV5() const { return KernargSize >= HiddenBase + HiddenBlockSize; }

  /// Kernel arguments as a launch of \p Teams x \p Threads fills them.
  char *kernargs(uint32_t Teams, uint16_t Threads) {
    auto *Args = static_cast<char *>(hostMemory(KernargSize));
    std::memset(Args, 0, KernargSize);
    if (!isV5())
      return Args;
    const uint32_t Blocks[3] = {Teams, 1, 1};
    const uint16_t Groups[3] = {Threads, 1, 1};
    std::memcpy(Args + HiddenBase, Blocks, sizeof(Blocks));
    std::memcpy(Args + HiddenBase + 12, Groups, sizeof(Groups));
    const uint16_t Dims = 1;
    std::memcpy(Args + HiddenBase + 64, &Dims, sizeof(Dims));
    return Args;
  }

  /// Dispatch the kernel on a new queue over \p Teams x \p Threads with
  /// \p Args; the completion signal's final value.
  hsa_signal_value_t dispatch(uint32_t Teams, uint16_t Threads, char *Args) {
    hsa_queue_t *Q = queue();
    hsa_signal_t Done = signal(1);
    uint64_t Index = hsa_queue_add_write_index_relaxed(Q, 1);
    auto *Packet =
        reinterpret_cast<hsa_kernel_dispatch_packet_t *>(Q->base_address) +
        Index % Q->size;
    std::memset(reinterpret_cast<char *>(Packet) + 4, 0, sizeof(*Packet) - 4);
    Packet->setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
    Packet->workgroup_size_x = Threads;
    Packet->workgroup_size_y = Packet->workgroup_size_z = 1;
    Packet->grid_size_x = Teams * Threads;
    Packet->grid_size_y = Packet->grid_size_z = 1;
    Packet->private_segment_size = 1024;
    Packet->group_segment_size = 0;
    Packet->kernel_object = Object;
    Packet->kernarg_address = Args;
    Packet->completion_signal = Done;
    uint16_t Header =
        (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
        (1 << HSA_PACKET_HEADER_BARRIER);
    __atomic_store_n(&Packet->header, Header, __ATOMIC_RELEASE);
    hsa_signal_store_screlease(Q->doorbell_signal, hsa_signal_value_t(Index));
    hsa_signal_value_t Value = waitDone(Done);
    EXPECT_EQ(hsa_signal_destroy(Done), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_queue_destroy(Q), HSA_STATUS_SUCCESS);
    return Value;
  }

  std::string Bytes;
  hsa_code_object_t Code{0};
  hsa_executable_t Exec{0};
  uint64_t Object = 0;
  uint32_t KernargSize = 0;
};

TEST_F(HSAEmuDispatchTest, ArgumentsAsALaunchFillsThemComplete) {
  EXPECT_EQ(dispatch(4, 64, kernargs(4, 64)), 0);
}

TEST_F(HSAEmuDispatchTest, V5HiddenBlockCountThatDisagreesFails) {
  if (!isV5())
    GTEST_SKIP() << "code object v4: no hidden geometry";
  std::string Stderr;
  ::testing::internal::CaptureStderr();
  hsa_signal_value_t Value = dispatch(4, 64, kernargs(3, 64));
  Stderr = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(Value, -1);
  EXPECT_NE(Stderr.find("kernel argument hidden_block_count_x (offset 8) is "
                        "3, but the packet's geometry"),
            std::string::npos)
      << Stderr;
}

TEST_F(HSAEmuDispatchTest, V5UnfilledHiddenBlockFails) {
  if (!isV5())
    GTEST_SKIP() << "code object v4: no hidden geometry";
  char *Args = kernargs(4, 64);
  std::memset(Args + HiddenBase, 0, HiddenBlockSize);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(dispatch(4, 64, Args), -1);
  std::string Stderr = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(Stderr.find("hidden_block_count_x"), std::string::npos) << Stderr;
}

TEST_F(HSAEmuDispatchTest, V5GroupSizeThatDisagreesFails) {
  if (!isV5())
    GTEST_SKIP() << "code object v4: no hidden geometry";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(dispatch(4, 64, kernargs(4, 32)), -1);
  std::string Stderr = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(Stderr.find("kernel argument hidden_group_size_x (offset 20) is "
                        "32, but the packet's geometry (dims 1 grid "
                        "[256,1,1] workgroup [64,1,1]) makes it 64"),
            std::string::npos)
      << Stderr;
}

} // namespace
