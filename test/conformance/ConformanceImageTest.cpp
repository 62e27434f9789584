// SPDX-License-Identifier: Apache-2.0
//
// Conformance: an image through the entry points of the libomptarget
// version served (ConformanceABI.h): accepted, loaded, its kernel and
// global found by name, the global read and written through its device
// address and the kernel launched with the version's implicit first
// argument. The image (ConformanceHostImage.c) is an x86_64 shared object,
// so only the x86_64 plugin runs these; the others skip them.
#include "ConformanceFixture.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#ifndef OFFLOADIO_CONFORMANCE_HOST_IMAGE
#error "OFFLOADIO_CONFORMANCE_HOST_IMAGE must name the x86_64 test image"
#endif

namespace offloadio::conformance {

namespace {

constexpr const char *KernelName = "conformance_store";
constexpr const char *GlobalName = "conformance_global";
constexpr const char *FirstArgName = "conformance_first_arg";

/// The test image's bytes with the entries libomptarget would pass: the
/// kernel, then the globals.
class TestImageTy {
public:
  TestImageTy() {
    std::ifstream In(OFFLOADIO_CONFORMANCE_HOST_IMAGE, std::ios::binary);
    Bytes.assign(std::istreambuf_iterator<char>(In),
                 std::istreambuf_iterator<char>());
    // The host addresses of the entries: anything unique will do.
    Entries = {{&HostKernel, const_cast<char *>(KernelName), 0, 0, 0},
               {&HostGlobal, const_cast<char *>(GlobalName), sizeof(int), 0, 0},
               {&HostFirstArg, const_cast<char *>(FirstArgName), sizeof(void *),
                0, 0}};
    Image.ImageStart = Bytes.data();
    Image.ImageEnd = Bytes.data() + Bytes.size();
    Image.EntriesBegin = Entries.data();
    Image.EntriesEnd = Entries.data() + Entries.size();
  }
  bool read() const { return !Bytes.empty(); }
  __tgt_device_image Image{};

private:
  std::vector<char> Bytes;
  std::vector<__tgt_offload_entry> Entries;
  char HostKernel = 0;
  int HostGlobal = 0;
  void *HostFirstArg = nullptr;
};

} // namespace

TEST_P(DeviceConformance, LoadsAnImageAndLaunchesItsKernel) {
  if (GetParam() != "x86_64")
    GTEST_SKIP() << "the test image is an x86_64 shared object";
  TestImageTy Img;
  ASSERT_TRUE(Img.read()) << "cannot read " OFFLOADIO_CONFORMANCE_HOST_IMAGE;
  EXPECT_NE(P->is_valid_binary(&Img.Image), 0);
  __tgt_device_image Garbage = Img.Image;
  char Junk[64] = "not an image";
  Garbage.ImageStart = Junk;
  Garbage.ImageEnd = Junk + sizeof(Junk);
  EXPECT_EQ(P->is_valid_binary(&Garbage), 0);

  LoadedImageTy Loaded;
  ASSERT_TRUE(loadImage(*P, Dev, Img.Image, Loaded));
  void *Kernel = findEntry(*P, Loaded, KernelName, 0);
  void *Global = findEntry(*P, Loaded, GlobalName, sizeof(int));
  void *FirstArg = findEntry(*P, Loaded, FirstArgName, sizeof(void *));
  ASSERT_NE(Kernel, nullptr) << "kernel " << KernelName;
  ASSERT_NE(Global, nullptr) << "global " << GlobalName;
  ASSERT_NE(FirstArg, nullptr) << "global " << FirstArgName;
  EXPECT_EQ(findEntry(*P, Loaded, "no_such_entry", 0), nullptr);

  // The global as the image initialised it, then as written here.
  int Value = 0;
  ASSERT_EQ(P->data_retrieve(Dev, &Value, Global, sizeof(Value)),
            OFFLOAD_SUCCESS);
  EXPECT_EQ(Value, 0x5eed);
  Value = 4242;
  ASSERT_EQ(P->data_submit(Dev, Global, &Value, sizeof(Value)),
            OFFLOAD_SUCCESS);

  // The kernel copies the global into Out, passed twice (ConformanceHost
  // Image.c says why).
  int *Out = static_cast<int *>(alloc(sizeof(int)));
  ASSERT_NE(Out, nullptr);
  int Zero = 0;
  ASSERT_EQ(P->data_submit(Dev, Out, &Zero, sizeof(Zero)), OFFLOAD_SUCCESS);
  void *Args[] = {Out, Out};
  ptrdiff_t Offsets[] = {0, 0};
  KernelArgsTy KA{};
  KA.Version = 2;
  KA.NumArgs = 2;
  KA.NumTeams[0] = 1;
  KA.ThreadLimit[0] = 1;
  AsyncTy AI(P, Dev);
  ASSERT_EQ(P->launch_kernel(Dev, Kernel, Args, Offsets, &KA, &AI),
            OFFLOAD_SUCCESS);
  ASSERT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
  int Result = 0;
  ASSERT_EQ(P->data_retrieve(Dev, &Result, Out, sizeof(Result)),
            OFFLOAD_SUCCESS);
  EXPECT_EQ(Result, 4242);

  void *First = nullptr;
  ASSERT_EQ(P->data_retrieve(Dev, &First, FirstArg, sizeof(First)),
            OFFLOAD_SUCCESS);
  void *ExpectedFirst = kernelsTakeLaunchEnvironment()
                            ? reinterpret_cast<void *>(~uintptr_t(0))
                            : static_cast<void *>(Out);
  EXPECT_EQ(First, ExpectedFirst)
      << "the kernel's first argument under libomptarget "
      << ConformanceABIVersion;
}

} // namespace offloadio::conformance
