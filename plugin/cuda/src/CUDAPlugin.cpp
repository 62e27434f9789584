// SPDX-License-Identifier: Apache-2.0
//
// The CUDA plugin: libomptarget.rtl.cuda.nextgen.so. Discovers devices
// through the driver API, accepts cubin images the devices can run, and pins
// host memory for all of its devices.
#include "CUDAApi.h"
#include "CUDADevice.h"
#include "CUDAImage.h"

#include "offloadio/Plugin.h"

#include "llvm/ADT/SmallVector.h"

#include <unistd.h>

#include <map>
#include <mutex>
#include <vector>

using namespace offloadio;
using namespace offloadio::cuda;

namespace {

class CUDAPluginTy final : public GenericPluginTy {
public:
  CUDAPluginTy() : GenericPluginTy("cuda") {}

protected:
  Expected<int32_t> initImpl() override;
  Expected<std::unique_ptr<GenericDeviceTy>>
  createDeviceImpl(int32_t DeviceId) override;
  bool isImageCompatibleImpl(const __tgt_device_image &Image,
                             llvm::StringRef Arch) override;
  Expected<void *> pinHostMemoryImpl(void *HstPtr, size_t Size) override;
  Error unpinHostMemoryImpl(void *HstPtr, void *DevAccessiblePtr,
                            size_t Size) override;
  bool isDataExchangableImpl(int32_t SrcId, int32_t DstId) override;

private:
  /// Report why the plugin has no devices; the plugin then loads quietly
  /// with 0 devices and libomptarget moves on.
  int32_t noDevices(Error Why);

  /// The context host registrations are made in (they are PORTABLE, so
  /// valid for every context): device 0's primary context, retained on
  /// first use and kept for the plugin's lifetime.
  Error activatePinningContext();

  /// A page span the plugin registered with cuMemHostRegister, and how many
  /// pinned regions of the map use some page of it.
  struct PinChunkTy {
    uintptr_t End;
    uint64_t Users;
    /// Registered by someone else (cuMemHostRegister said the pages were
    /// already registered): used, never unregistered by us.
    bool Foreign;
  };
  /// Register every page of [Begin, End) not registered yet and count one
  /// user on every chunk that intersects it.
  Error acquirePages(uintptr_t Begin, uintptr_t End);
  /// Drop one user of every chunk intersecting [Begin, End); unregister
  /// those left without users. The counts stay consistent even when the
  /// driver fails.
  Error releasePages(uintptr_t Begin, uintptr_t End);

  std::unique_ptr<CUDAApiTy> Api;
  /// Driver handles of the devices, by plugin-local number.
  std::vector<CUdevice> CUDevices;
  /// Compute capability of each device, for the image check.
  std::vector<std::pair<int, int>> ComputeCapabilities;

  std::mutex PinLock;
  CUcontext PinContext = nullptr;
  /// Registered chunks keyed by their first byte; pairwise disjoint and
  /// page aligned.
  std::map<uintptr_t, PinChunkTy> PinChunks;
  /// Regions pinned through pinHostMemoryImpl and not yet unpinned, with
  /// how many times each is pinned: besides the map's regions, copies of
  /// unlocked memory pin their range for the copy (pinForCopy), possibly the
  /// same range from several threads at once.
  std::map<std::pair<uintptr_t, size_t>, unsigned> PinnedRegions;
  uintptr_t PageSize = 4096;
};

int32_t CUDAPluginTy::noDevices(Error Why) {
  getInfo().print(~0u, -1, "no CUDA devices available: {0}",
                  takeErrorMessage(std::move(Why)));
  Api.reset();
  return 0;
}

Expected<int32_t> CUDAPluginTy::initImpl() {
  long Page = sysconf(_SC_PAGESIZE);
  if (Page > 0)
    PageSize = uintptr_t(Page);

  auto Loaded = CUDAApiTy::load();
  if (!Loaded)
    return noDevices(Loaded.takeError());
  Api = std::move(*Loaded);

  // A driver without a usable GPU (none installed, none visible through
  // CUDA_VISIBLE_DEVICES, a driver/kernel mismatch) is no error for an
  // OpenMP program: it just has no cuda devices.
  if (auto Err = checkCU(*Api, Api->cuInit(0), "cuInit", "flags 0"))
    return noDevices(std::move(Err));
  int Count = 0;
  if (auto Err = checkCU(*Api, Api->cuDeviceGetCount(&Count),
                         "cuDeviceGetCount", "after cuInit"))
    return noDevices(std::move(Err));
  if (Count <= 0)
    return noDevices(makeError(ErrorCode::NotFound,
                               "the driver reports no CUDA devices"));

  for (int I = 0; I < Count; ++I) {
    CUdevice Device;
    if (auto Err = checkCU(*Api, Api->cuDeviceGet(&Device, I), "cuDeviceGet",
                           "ordinal {0} of {1}", I, Count))
      return std::move(Err);
    int Major = 0, Minor = 0;
    if (auto Err = checkCU(
            *Api,
            Api->cuDeviceGetAttribute(
                &Major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, Device),
            "cuDeviceGetAttribute", "COMPUTE_CAPABILITY_MAJOR of device {0}",
            I))
      return std::move(Err);
    if (auto Err = checkCU(
            *Api,
            Api->cuDeviceGetAttribute(
                &Minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, Device),
            "cuDeviceGetAttribute", "COMPUTE_CAPABILITY_MINOR of device {0}",
            I))
      return std::move(Err);
    CUDevices.push_back(Device);
    ComputeCapabilities.emplace_back(Major, Minor);
  }
  return int32_t(Count);
}

Expected<std::unique_ptr<GenericDeviceTy>>
CUDAPluginTy::createDeviceImpl(int32_t DeviceId) {
  return std::make_unique<CUDADeviceTy>(*this, DeviceId, *Api,
                                        CUDevices[DeviceId]);
}

bool CUDAPluginTy::isImageCompatibleImpl(const __tgt_device_image &Image,
                                         llvm::StringRef Arch) {
  if (!Api || CUDevices.empty())
    return false;
  llvm::StringRef Bytes(static_cast<const char *>(Image.ImageStart),
                        static_cast<const char *>(Image.ImageEnd) -
                            static_cast<const char *>(Image.ImageStart));
  if (!isCubin(Bytes))
    return false;
  // clang 16 records the target in the OffloadBinary ("sm_90"); without it
  // (or with something that is no CUDA architecture) the cubin's ELF flags
  // tell.
  std::optional<CUDAArchTy> Target = parseCUDAArch(Arch);
  if (!Target)
    Target = readCubinArch(Bytes);
  if (!Target) {
    getInfo().print(InfoPluginKernel, -1,
                    "image at {0}: cannot tell its architecture ('{1}'), "
                    "leaving the check to the driver",
                    Image.ImageStart, Arch);
    return true;
  }
  // v16 asks once per plugin, not per device: accept only what every
  // device can run, so that no device fails to load an accepted image.
  for (size_t I = 0; I < ComputeCapabilities.size(); ++I) {
    auto [Major, Minor] = ComputeCapabilities[I];
    if (!isArchCompatible(*Target, Major, Minor)) {
      getInfo().print(InfoPluginKernel, int32_t(I),
                      "image for sm_{0}{1}{2} cannot run on compute "
                      "capability {3}.{4}",
                      Target->Major, Target->Minor,
                      Target->ArchSpecific ? "a" : "", Major, Minor);
      return false;
    }
  }
  return true;
}

bool CUDAPluginTy::isDataExchangableImpl(int32_t SrcId, int32_t DstId) {
  if (!Api)
    return false;
  CUdevice Src = CUDevices[SrcId], Dst = CUDevices[DstId];
  if (Src == Dst)
    return true;
  int CanAccess = 0;
  if (auto Err = checkCU(*Api, Api->cuDeviceCanAccessPeer(&CanAccess, Src, Dst),
                         "cuDeviceCanAccessPeer", "device {0} to device {1}",
                         SrcId, DstId)) {
    getInfo().error(SrcId, takeErrorMessage(std::move(Err)));
    return false;
  }
  return CanAccess != 0;
}

Error CUDAPluginTy::activatePinningContext() {
  if (!Api)
    return makeError(ErrorCode::InvalidDevice,
                     "cannot pin host memory: the cuda plugin has no devices");
  if (!PinContext)
    if (auto Err =
            checkCU(*Api, Api->cuDevicePrimaryCtxRetain(&PinContext, CUDevices[0]),
                    "cuDevicePrimaryCtxRetain",
                    "device 0, for host memory registration"))
      return Err;
  return checkCU(*Api, Api->cuCtxSetCurrent(PinContext), "cuCtxSetCurrent",
                 "primary context {0} of device 0, for host memory "
                 "registration",
                 PinContext);
}

Error CUDAPluginTy::acquirePages(uintptr_t Begin, uintptr_t End) {
  // First register the gaps between existing chunks, remembering them so
  // that a failure can undo exactly what this call did.
  llvm::SmallVector<uintptr_t, 4> Registered;
  auto Undo = [&] {
    for (uintptr_t Start : Registered) {
      auto It = PinChunks.find(Start);
      if (!It->second.Foreign)
        Api->cuMemHostUnregister(reinterpret_cast<void *>(Start));
      PinChunks.erase(It);
    }
  };
  uintptr_t Cursor = Begin;
  auto It = PinChunks.upper_bound(Begin);
  if (It != PinChunks.begin() && std::prev(It)->second.End > Begin)
    --It;
  while (Cursor < End) {
    uintptr_t GapEnd = (It != PinChunks.end() && It->first < End) ? It->first
                                                                   : End;
    if (Cursor < GapEnd) {
      void *Ptr = reinterpret_cast<void *>(Cursor);
      size_t Bytes = GapEnd - Cursor;
      CUresult Result = Api->cuMemHostRegister(
          Ptr, Bytes,
          CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
      bool Foreign = Result == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
      if (!Foreign)
        if (auto Err = checkCU(*Api, Result, "cuMemHostRegister",
                               "{0} bytes at {1} (page span of a lock)", Bytes,
                               Ptr)) {
          Undo();
          return Err;
        }
      PinChunks.emplace(Cursor, PinChunkTy{GapEnd, 0, Foreign});
      Registered.push_back(Cursor);
    }
    if (It == PinChunks.end() || It->first >= End)
      break;
    Cursor = It->second.End;
    ++It;
  }
  // Every page of [Begin, End) is now in some chunk: count this user.
  for (auto C = PinChunks.lower_bound(Begin);
       C != PinChunks.end() && C->first < End; ++C)
    ++C->second.Users;
  auto First = PinChunks.upper_bound(Begin);
  if (First != PinChunks.begin()) {
    --First;
    if (First->first < Begin && First->second.End > Begin)
      ++First->second.Users;
  }
  return Error::success();
}

Error CUDAPluginTy::releasePages(uintptr_t Begin, uintptr_t End) {
  Error Result = Error::success();
  auto It = PinChunks.upper_bound(Begin);
  if (It != PinChunks.begin() && std::prev(It)->second.End > Begin)
    --It;
  while (It != PinChunks.end() && It->first < End) {
    PinChunkTy &Chunk = It->second;
    if (--Chunk.Users > 0) {
      ++It;
      continue;
    }
    if (!Chunk.Foreign) {
      void *Ptr = reinterpret_cast<void *>(It->first);
      // On failure the chunk is forgotten all the same: its pages are in a
      // state we cannot know, and keeping it would leave the counts of the
      // other chunks inconsistent with the regions still pinned.
      if (auto Err = checkCU(*Api, Api->cuMemHostUnregister(Ptr),
                             "cuMemHostUnregister", "{0} bytes at {1}",
                             Chunk.End - It->first, Ptr))
        Result = llvm::joinErrors(std::move(Result), std::move(Err));
    }
    It = PinChunks.erase(It);
  }
  return Result;
}

Expected<void *> CUDAPluginTy::pinHostMemoryImpl(void *HstPtr, size_t Size) {
  // The map keeps exact byte ranges, but the driver registers whole pages
  // and refuses to register a page twice: two regions of the map that
  // share a page (or a page span) share the registration, counted here.
  if (Size == 0)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot pin 0 bytes at {0}", HstPtr);
  auto Addr = reinterpret_cast<uintptr_t>(HstPtr);
  if (Size > UINTPTR_MAX - Addr - PageSize)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot pin {0} bytes at {1}: the range wraps around",
                     Size, HstPtr);
  std::lock_guard<std::mutex> Guard(PinLock);
  if (auto Err = activatePinningContext())
    return std::move(Err);
  uintptr_t Begin = Addr & ~(PageSize - 1);
  uintptr_t End = (Addr + Size + PageSize - 1) & ~(PageSize - 1);
  if (auto Err = acquirePages(Begin, End))
    return std::move(Err);

  // The device address of the first byte; with unified addressing (every
  // 64-bit system the driver supports) it is the host address itself.
  auto Fail = [&](Error Err) -> Error {
    llvm::consumeError(releasePages(Begin, End));
    return Err;
  };
  CUdeviceptr First = 0, Last = 0;
  if (auto Err = checkCU(*Api, Api->cuMemHostGetDevicePointer(&First, HstPtr, 0),
                         "cuMemHostGetDevicePointer", "{0} ({1} bytes locked)",
                         HstPtr, Size))
    return Fail(std::move(Err));
  // A region may span several registrations; it is usable as one range only
  // if the device sees it contiguously.
  void *LastByte = static_cast<char *>(HstPtr) + Size - 1;
  if (auto Err = checkCU(*Api, Api->cuMemHostGetDevicePointer(&Last, LastByte, 0),
                         "cuMemHostGetDevicePointer", "{0} (last byte of {1} "
                         "bytes locked at {2})",
                         LastByte, Size, HstPtr))
    return Fail(std::move(Err));
  if (Last - First != Size - 1)
    return Fail(makeError(ErrorCode::Unsupported,
                          "locked range {0} ({1} bytes) is not contiguous in "
                          "the device address space ({2:x} .. {3:x})",
                          HstPtr, Size, First, Last));
  ++PinnedRegions[{Addr, Size}];
  return reinterpret_cast<void *>(First);
}

Error CUDAPluginTy::unpinHostMemoryImpl(void *HstPtr, void *DevAccessiblePtr,
                                        size_t Size) {
  std::lock_guard<std::mutex> Guard(PinLock);
  if (auto Err = activatePinningContext())
    return Err;
  auto Addr = reinterpret_cast<uintptr_t>(HstPtr);
  // Forget the region before touching the driver: if unregistering fails,
  // the map keeps the region and may ask again, and that second call must
  // not release the shared pages a second time.
  auto Region = PinnedRegions.find({Addr, Size});
  if (Region == PinnedRegions.end())
    return Error::success();
  if (--Region->second == 0)
    PinnedRegions.erase(Region);
  uintptr_t Begin = Addr & ~(PageSize - 1);
  uintptr_t End = (Addr + Size + PageSize - 1) & ~(PageSize - 1);
  return releasePages(Begin, End);
}

} // namespace

std::unique_ptr<GenericPluginTy> offloadio::createPlugin() {
  return std::make_unique<CUDAPluginTy>();
}
