// SPDX-License-Identifier: Apache-2.0
//
// offloadio-checkpoint: saves generated tensors from device memory as a
// safetensors file, loads a file or a sharded checkpoint (its
// model.safetensors.index.json) into device memory, timed, and on request
// verifies every byte, or prints a checkpoint's headers. A save is one
// ompx_io batch (CheckpointIO.h); a load onto one device is one
// ompx_safetensors_load, one batch, per file; a load onto several devices
// is one ompx_safetensors_load_split, one batch for the whole checkpoint.
#include "CheckpointIO.h"
#include "Pattern.h"
#include "SafetensorsWriter.h"

#include "ompx_io.h"
#include "ompx_safetensors.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <optional>
#include <omp.h>
#include <unistd.h>

using namespace offloadio;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using checkpoint::HeaderSpecTy;
using checkpoint::TensorSpecTy;

namespace {

constexpr const char *Usage =
    "usage: offloadio-checkpoint save FILE [--tensors N] [--max-bytes SIZE]\n"
    "                                 [--seed S] [--device D]\n"
    "       offloadio-checkpoint load PATH [--device D | --devices D,D...]\n"
    "                                 [--verify]\n"
    "       offloadio-checkpoint info PATH\n"
    "save: generates N tensors (default 16) of up to SIZE bytes each (default\n"
    "  1M; K, M, G suffixes) in memory of device D (default: the default\n"
    "  device) and writes them as a safetensors file with one ompx_io batch.\n"
    "load: reads every tensor of PATH (a .safetensors file, or the\n"
    "  model.safetensors.index.json of a sharded checkpoint) into memory of\n"
    "  device D, one batch per file, and prints GB/s per file and in total.\n"
    "  --devices D,D...: allocates and loads every tensor with one call and\n"
    "  one batch, split evenly by bytes over those devices (largest tensor\n"
    "  first, to the device with the fewest bytes so far); prints the\n"
    "  tensors and bytes per file and per device and GB/s in total.\n"
    "  --verify: then checks every byte against the file (and against the\n"
    "  generator, for files that save wrote); exit status 0 only when all\n"
    "  bytes match.\n"
    "info: prints the header of each file.\n";

/// The command line, parsed.
struct OptionsTy {
  std::string Command;
  std::string Path;
  uint64_t Tensors = 16;
  uint64_t MaxBytes = 1 << 20;
  uint64_t Seed = 1;
  int Device = -1;
  /// --devices: an even split over these; empty: one device.
  std::vector<int> Devices;
  bool Verify = false;
};

Error usageError(const llvm::Twine &Message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                 Message + "\n" + Usage);
}

/// A byte count with an optional K, M or G suffix (powers of 1024).
Expected<uint64_t> parseSize(StringRef Option, StringRef Text) {
  uint64_t Scale = 1;
  StringRef Digits = Text;
  if (Digits.consume_back("K") || Digits.consume_back("k"))
    Scale = 1ull << 10;
  else if (Digits.consume_back("M"))
    Scale = 1ull << 20;
  else if (Digits.consume_back("G"))
    Scale = 1ull << 30;
  uint64_t Value;
  if (Digits.getAsInteger(10, Value) ||
      __builtin_mul_overflow(Value, Scale, &Value))
    return usageError(Option + ": not a size: '" + Text + "'");
  return Value;
}

Expected<OptionsTy> parseOptions(int Argc, char **Argv) {
  OptionsTy Opts;
  if (Argc < 3)
    return usageError("missing command or file");
  Opts.Command = Argv[1];
  Opts.Path = Argv[2];
  if (Opts.Command != "save" && Opts.Command != "load" && Opts.Command != "info")
    return usageError("unknown command '" + Opts.Command + "'");
  for (int I = 3; I < Argc; ++I) {
    StringRef Option = Argv[I];
    if (Option == "--verify" && Opts.Command == "load") {
      Opts.Verify = true;
      continue;
    }
    if (I + 1 >= Argc)
      return usageError(Option + ": missing value");
    StringRef Value = Argv[++I];
    if (Option == "--tensors" && Opts.Command == "save") {
      if (Value.getAsInteger(10, Opts.Tensors) || Opts.Tensors == 0)
        return usageError("--tensors: not a positive count: '" + Value + "'");
    } else if (Option == "--max-bytes" && Opts.Command == "save") {
      Expected<uint64_t> Size = parseSize(Option, Value);
      if (!Size)
        return Size.takeError();
      Opts.MaxBytes = *Size;
    } else if (Option == "--seed" && Opts.Command == "save") {
      if (Value.getAsInteger(10, Opts.Seed))
        return usageError("--seed: not a number: '" + Value + "'");
    } else if (Option == "--device" && Opts.Command != "info") {
      if (Value.getAsInteger(10, Opts.Device) || Opts.Device < 0)
        return usageError("--device: not a device number: '" + Value + "'");
    } else if (Option == "--devices" && Opts.Command == "load") {
      llvm::SmallVector<StringRef, 8> Items;
      Value.split(Items, ',');
      for (StringRef Item : Items) {
        int Number;
        if (Item.getAsInteger(10, Number) || Number < 0)
          return usageError("--devices: not a list of device numbers: '" +
                            Value + "'");
        Opts.Devices.push_back(Number);
      }
    } else {
      return usageError("unknown option '" + Option + "' for " + Opts.Command);
    }
  }
  if (Opts.Device >= 0 && !Opts.Devices.empty())
    return usageError("--device and --devices: give one of them");
  return Opts;
}

Expected<int> resolveDevice(int Requested) {
  int Device = Requested < 0 ? omp_get_default_device() : Requested;
  if (Device != omp_get_initial_device() &&
      (Device < 0 || Device >= omp_get_num_devices()))
    return llvm::createStringError(
        std::make_error_code(std::errc::no_such_device),
        llvm::formatv("device {0} does not exist ({1} offload devices; the "
                      "initial device is {2})",
                      Device, omp_get_num_devices(), omp_get_initial_device())
            .str());
  return Device;
}

/// splitmix64 steps: the shapes and dtypes of generated tensors.
struct ShapeRandomTy {
  uint64_t State;
  uint64_t next() {
    uint64_t Z = (State += 0x9e3779b97f4a7c15ull);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
    return Z ^ (Z >> 31);
  }
  uint64_t below(uint64_t N) { return N ? next() % N : 0; }
};

/// N tensors of mixed dtypes and ranks, each at most MaxBytes; the fourth
/// is empty, as files from real models have some.
std::vector<TensorSpecTy> generateTensors(const OptionsTy &Opts) {
  static constexpr int DTypes[] = {OMPX_SAFETENSORS_F32, OMPX_SAFETENSORS_BF16,
                                   OMPX_SAFETENSORS_F16, OMPX_SAFETENSORS_I64,
                                   OMPX_SAFETENSORS_U8,  OMPX_SAFETENSORS_F64};
  ShapeRandomTy Random{Opts.Seed};
  std::vector<TensorSpecTy> Tensors;
  for (uint64_t I = 0; I < Opts.Tensors; ++I) {
    TensorSpecTy T;
    T.Name = llvm::formatv("layers.{0}.{1}", I / 2, I % 2 ? "bias" : "weight");
    T.DType = DTypes[Random.below(std::size(DTypes))];
    uint64_t Elements =
        std::max<uint64_t>(1, Opts.MaxBytes / ompx_safetensors_dtype_size(T.DType));
    uint64_t Count = 1 + Random.below(Elements);
    if (I == 3) {
      T.Shape = {0, 4};
    } else if (Count >= 64 && Random.below(2)) {
      uint64_t Rows = 1 + Random.below(64);
      T.Shape = {Rows, Count / Rows};
    } else {
      T.Shape = {Count};
    }
    Tensors.push_back(std::move(T));
  }
  return Tensors;
}

uint64_t tensorKey(StringRef Name) {
  return ckptTensorKey(Name.data(), Name.size());
}

Error save(const OptionsTy &Opts, int Device) {
  HeaderSpecTy Header;
  Header.Tensors = generateTensors(Opts);
  if (Error Err = checkpoint::layOutContiguously(Header.Tensors))
    return Err;
  Header.Metadata = {{"format", "pt"},
                     {CKPT_METADATA_GENERATOR, CKPT_GENERATOR_NAME},
                     {CKPT_METADATA_SEED, std::to_string(Opts.Seed)}};
  std::vector<checkpoint::DeviceBufferTy> Buffers;
  for (const TensorSpecTy &T : Header.Tensors) {
    Expected<checkpoint::DeviceBufferTy> Buffer =
        checkpoint::DeviceBufferTy::allocate(T.bytes(), Device);
    if (!Buffer)
      return Buffer.takeError();
    if (ckptFillDevice(Buffer->data(), T.bytes(), Opts.Seed, tensorKey(T.Name),
                       Device) != 0)
      return llvm::createStringError(
          std::make_error_code(std::errc::no_such_device),
          llvm::formatv("filling tensor '{0}' ({1} bytes at {2}) on device "
                        "{3}: the target region did not run there",
                        T.Name, T.bytes(), Buffer->data(), Device)
              .str());
    Buffers.push_back(std::move(*Buffer));
  }
  if (Error Err = checkpoint::saveCheckpoint(Opts.Path, Header, Buffers))
    return Err;
  llvm::outs() << llvm::formatv("saved {0} tensors, {1} bytes of data at "
                                "offset {2}, from device {3} to {4} in one "
                                "batch\n",
                                Header.Tensors.size(), Header.dataBytes(),
                                Header.dataOffset(), Device, Opts.Path);
  return Error::success();
}

/// An open file, closed on destruction.
class FileTy {
public:
  explicit FileTy(int Fd) : Fd(Fd) {}
  FileTy(const FileTy &) = delete;
  FileTy &operator=(const FileTy &) = delete;
  ~FileTy() {
    if (Fd >= 0)
      ::close(Fd);
  }
  int fd() const { return Fd; }

private:
  int Fd;
};

/// An open checkpoint (ompx_safetensors.h), closed on destruction.
class CheckpointTy {
public:
  CheckpointTy(const CheckpointTy &) = delete;
  CheckpointTy &operator=(const CheckpointTy &) = delete;
  ~CheckpointTy() { ompx_safetensors_close(Handle); }

  static Expected<std::unique_ptr<CheckpointTy>> open(StringRef Path) {
    ompx_safetensors_t Handle;
    if (ompx_safetensors_open(Path.str().c_str(), &Handle) != 0)
      return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                     ompx_io_last_error());
    return std::unique_ptr<CheckpointTy>(new CheckpointTy(Handle));
  }
  ompx_safetensors_t handle() const { return Handle; }

  /// Tensor \p Index; the checkpoint has it.
  ompx_safetensors_tensor_t tensor(size_t Index) const {
    ompx_safetensors_tensor_t T;
    [[maybe_unused]] int Status = ompx_safetensors_tensor(Handle, Index, &T);
    assert(Status == 0 && "a tensor of the checkpoint");
    return T;
  }

private:
  explicit CheckpointTy(ompx_safetensors_t Handle) : Handle(Handle) {}
  ompx_safetensors_t Handle;
};

std::string shapeText(const ompx_safetensors_tensor_t &T) {
  std::vector<std::string> Dims;
  for (size_t D = 0; D < T.ndim; ++D)
    Dims.push_back(std::to_string(T.shape[D]));
  return llvm::join(Dims, ", ");
}

/// The seed of a file that save generated, from its metadata.
std::optional<uint64_t> generatorSeed(const CheckpointTy &C, size_t File) {
  bool Generated = false;
  std::optional<uint64_t> Seed;
  for (size_t I = 0; I < ompx_safetensors_num_metadata(C.handle(), File); ++I) {
    const char *Key, *Value;
    if (ompx_safetensors_metadata(C.handle(), File, I, &Key, &Value) != 0)
      continue;
    if (StringRef(Key) == CKPT_METADATA_GENERATOR)
      Generated = StringRef(Value) == CKPT_GENERATOR_NAME;
    uint64_t Number;
    if (StringRef(Key) == CKPT_METADATA_SEED &&
        !StringRef(Value).getAsInteger(10, Number))
      Seed = Number;
  }
  return Generated ? Seed : std::nullopt;
}

/// Reads exactly \p Size bytes of \p Fd at \p Offset.
Error preadFull(int Fd, char *Buf, uint64_t Size, uint64_t Offset,
                StringRef Path) {
  for (uint64_t Done = 0; Done < Size;) {
    ssize_t N = ::pread(Fd, Buf + Done, Size - Done,
                        static_cast<off_t>(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return llvm::createStringError(
          std::make_error_code(std::errc::io_error),
          llvm::formatv("pread({0}, {1} bytes, offset {2}): {3}", Path,
                        Size - Done, Offset + Done,
                        N < 0 ? std::strerror(errno) : "end of file")
              .str());
    Done += static_cast<uint64_t>(N);
  }
  return Error::success();
}

/// Where a tensor was loaded: memory of a device.
struct LoadedTensorTy {
  void *Ptr = nullptr;
  int Device = 0;
};

/// Every byte of each tensor of file \p File of \p C, loaded into
/// \p Loaded (by tensor index), against the file and, for files that save
/// wrote, against the generator; \p WithGenerator becomes false for a file
/// that save did not write.
Error verifyFile(const CheckpointTy &C, size_t File,
                 llvm::ArrayRef<LoadedTensorTy> Loaded, bool &WithGenerator) {
  const char *Path = ompx_safetensors_file_path(C.handle(), File);
  FileTy Fd(::open(Path, O_RDONLY));
  if (Fd.fd() < 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                   llvm::formatv("open({0}, O_RDONLY): {1}", Path,
                                                 std::strerror(errno))
                                       .str());
  std::optional<uint64_t> Seed = generatorSeed(C, File);
  WithGenerator = WithGenerator && Seed;
  std::vector<char> FromDevice, FromFile;
  for (size_t I = 0; I < ompx_safetensors_num_tensors(C.handle()); ++I) {
    ompx_safetensors_tensor_t T = C.tensor(I);
    if (T.file != File || T.nbytes == 0)
      continue;
    FromDevice.resize(T.nbytes);
    FromFile.resize(T.nbytes);
    if (omp_target_memcpy(FromDevice.data(), Loaded[I].Ptr, T.nbytes, 0, 0,
                          omp_get_initial_device(), Loaded[I].Device) != 0)
      return llvm::createStringError(
          std::make_error_code(std::errc::io_error),
          llvm::formatv("omp_target_memcpy({0} bytes of tensor '{1}' from {2} "
                        "of device {3}) failed",
                        T.nbytes, T.name, Loaded[I].Ptr, Loaded[I].Device)
              .str());
    if (Error Err = preadFull(Fd.fd(), FromFile.data(), T.nbytes,
                              T.file_offset, Path))
      return Err;
    uint64_t Key = tensorKey(T.name);
    for (uint64_t B = 0; B < T.nbytes; ++B) {
      unsigned char Got = static_cast<unsigned char>(FromDevice[B]);
      unsigned char InFile = static_cast<unsigned char>(FromFile[B]);
      unsigned char Want = Seed ? ckptPatternByte(*Seed, Key, B) : InFile;
      if (Got != InFile || InFile != Want)
        return llvm::createStringError(
            std::make_error_code(std::errc::io_error),
            llvm::formatv("tensor '{0}' byte {1}: device has {2:x2}, file has "
                          "{3:x2}{4}",
                          T.name, B, Got, InFile,
                          Seed ? llvm::formatv(", generator gives {0:x2}", Want)
                                     .str()
                               : std::string())
                .str());
    }
  }
  return Error::success();
}

double gbPerSecond(uint64_t Bytes, double Seconds) {
  return Seconds > 0 ? double(Bytes) / Seconds / 1e9 : 0.0;
}

/// Loads every tensor of file \p File of \p C into new buffers of
/// \p Device (placed in \p Buffers by tensor index) with one
/// ompx_safetensors_load, timed; prints the file's line.
Error loadFile(const CheckpointTy &C, size_t File, int Device,
               std::vector<checkpoint::DeviceBufferTy> &Buffers,
               uint64_t &Tensors, uint64_t &Bytes, double &Seconds) {
  std::vector<ompx_safetensors_load_t> Loads;
  for (size_t I = 0; I < ompx_safetensors_num_tensors(C.handle()); ++I) {
    ompx_safetensors_tensor_t T = C.tensor(I);
    if (T.file != File)
      continue;
    Expected<checkpoint::DeviceBufferTy> Buffer =
        checkpoint::DeviceBufferTy::allocate(T.nbytes, Device);
    if (!Buffer)
      return llvm::createStringError(
          std::make_error_code(std::errc::not_enough_memory),
          llvm::formatv("tensor '{0}': {1}", T.name,
                        toString(Buffer.takeError()))
              .str());
    ompx_safetensors_load_t L;
    std::memset(&L, 0, sizeof(L));
    L.index = I;
    L.device_buf = Buffer->data();
    L.buf_size = T.nbytes;
    L.device_num = Device;
    Loads.push_back(L);
    Buffers[I] = std::move(*Buffer);
    Bytes += T.nbytes;
  }
  uint64_t FileBytes = 0;
  for (const ompx_safetensors_load_t &L : Loads)
    FileBytes += L.buf_size;
  auto Start = std::chrono::steady_clock::now();
  ssize_t Failed = ompx_safetensors_load(C.handle(), Loads.data(), Loads.size());
  double Elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  if (Failed != 0)
    return llvm::createStringError(std::make_error_code(std::errc::io_error),
                                   ompx_io_last_error());
  Tensors += Loads.size();
  Seconds += Elapsed;
  llvm::outs() << llvm::formatv("{0}: {1} tensors, {2} bytes in one batch, "
                                "{3:f3} s, {4:f2} GB/s\n",
                                ompx_safetensors_file_path(C.handle(), File),
                                Loads.size(), FileBytes, Elapsed,
                                gbPerSecond(FileBytes, Elapsed));
  return Error::success();
}

Error load(const OptionsTy &Opts, int Device) {
  Expected<std::unique_ptr<CheckpointTy>> C = CheckpointTy::open(Opts.Path);
  if (!C)
    return C.takeError();
  size_t Files = ompx_safetensors_num_files((*C)->handle());
  std::vector<checkpoint::DeviceBufferTy> Buffers(
      ompx_safetensors_num_tensors((*C)->handle()));
  uint64_t Tensors = 0, Bytes = 0;
  double Seconds = 0;
  for (size_t File = 0; File < Files; ++File)
    if (Error Err = loadFile(**C, File, Device, Buffers, Tensors, Bytes, Seconds))
      return Err;
  llvm::outs() << llvm::formatv("loaded {0} tensors, {1} bytes, from {2} "
                                "file{3} into device {4}: {5:f3} s, {6:f2} "
                                "GB/s\n",
                                Tensors, Bytes, Files, Files == 1 ? "" : "s",
                                Device, Seconds, gbPerSecond(Bytes, Seconds));
  if (!Opts.Verify)
    return Error::success();
  std::vector<LoadedTensorTy> Loaded;
  for (const checkpoint::DeviceBufferTy &B : Buffers)
    Loaded.push_back({B.data(), Device});
  bool WithGenerator = true;
  for (size_t File = 0; File < Files; ++File)
    if (Error Err = verifyFile(**C, File, Loaded, WithGenerator))
      return Err;
  llvm::outs() << llvm::formatv("verified {0} bytes against the file{1}{2}\n",
                                Bytes, Files == 1 ? "" : "s",
                                WithGenerator ? " and the generator" : "");
  return Error::success();
}

/// The device memory of ompx_safetensors_load_split, freed on destruction.
class PlacementTy {
public:
  PlacementTy() = default;
  PlacementTy(const PlacementTy &) = delete;
  PlacementTy &operator=(const PlacementTy &) = delete;
  ~PlacementTy() {
    if (Handle)
      ompx_safetensors_placement_free(Handle);
  }
  ompx_safetensors_placement_t *out() { return &Handle; }
  ompx_safetensors_placement_t handle() const { return Handle; }

private:
  ompx_safetensors_placement_t Handle = nullptr;
};

/// The devices of \p Devices as "0,1,2".
std::string deviceList(llvm::ArrayRef<int> Devices) {
  std::vector<std::string> Numbers;
  for (int D : Devices)
    Numbers.push_back(std::to_string(D));
  return llvm::join(Numbers, ",");
}

/// Loads every tensor of the checkpoint onto Opts.Devices, split evenly,
/// with one ompx_safetensors_load_split (allocation and one batch), timed;
/// prints the tensors and bytes of each file and device, and the total.
Error loadSplit(const OptionsTy &Opts) {
  Expected<std::unique_ptr<CheckpointTy>> C = CheckpointTy::open(Opts.Path);
  if (!C)
    return C.takeError();
  ompx_safetensors_t H = (*C)->handle();
  PlacementTy Placement;
  auto Start = std::chrono::steady_clock::now();
  int Status = ompx_safetensors_load_split(H, nullptr, 0, Opts.Devices.data(),
                                           Opts.Devices.size(),
                                           Placement.out());
  double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  if (Status != 0)
    return llvm::createStringError(
        std::error_code(errno, std::generic_category()), ompx_io_last_error());
  size_t Files = ompx_safetensors_num_files(H);
  size_t Count = ompx_safetensors_placement_count(Placement.handle());
  std::vector<LoadedTensorTy> Loaded(ompx_safetensors_num_tensors(H));
  std::vector<uint64_t> FileTensors(Files), FileBytes(Files);
  std::vector<uint64_t> DeviceTensors(Opts.Devices.size()),
      DeviceBytes(Opts.Devices.size());
  uint64_t Bytes = 0;
  for (size_t I = 0; I < Count; ++I) {
    ompx_safetensors_placed_t P;
    if (ompx_safetensors_placement_tensor(Placement.handle(), I, &P) != 0)
      return llvm::createStringError(std::make_error_code(std::errc::io_error),
                                     ompx_io_last_error());
    Loaded[P.index] = {P.device_ptr, P.device_num};
    size_t File = (*C)->tensor(P.index).file;
    ++FileTensors[File];
    FileBytes[File] += P.nbytes;
    size_t D = std::find(Opts.Devices.begin(), Opts.Devices.end(),
                         P.device_num) -
               Opts.Devices.begin();
    ++DeviceTensors[D];
    DeviceBytes[D] += P.nbytes;
    Bytes += P.nbytes;
  }
  for (size_t File = 0; File < Files; ++File)
    llvm::outs() << llvm::formatv("{0}: {1} tensors, {2} bytes\n",
                                  ompx_safetensors_file_path(H, File),
                                  FileTensors[File], FileBytes[File]);
  for (size_t D = 0; D < Opts.Devices.size(); ++D)
    llvm::outs() << llvm::formatv("device {0}: {1} tensors, {2} bytes\n",
                                  Opts.Devices[D], DeviceTensors[D],
                                  DeviceBytes[D]);
  llvm::outs() << llvm::formatv("loaded {0} tensors, {1} bytes, from {2} "
                                "file{3} onto devices {4} in one call and one "
                                "batch: {5:f3} s, {6:f2} GB/s\n",
                                Count, Bytes, Files, Files == 1 ? "" : "s",
                                deviceList(Opts.Devices), Seconds,
                                gbPerSecond(Bytes, Seconds));
  if (!Opts.Verify)
    return Error::success();
  bool WithGenerator = true;
  for (size_t File = 0; File < Files; ++File)
    if (Error Err = verifyFile(**C, File, Loaded, WithGenerator))
      return Err;
  llvm::outs() << llvm::formatv("verified {0} bytes on {1} devices against "
                                "the file{2}{3}\n",
                                Bytes, Opts.Devices.size(),
                                Files == 1 ? "" : "s",
                                WithGenerator ? " and the generator" : "");
  return Error::success();
}

Error info(const OptionsTy &Opts) {
  Expected<std::unique_ptr<CheckpointTy>> C = CheckpointTy::open(Opts.Path);
  if (!C)
    return C.takeError();
  ompx_safetensors_t H = (*C)->handle();
  for (size_t File = 0; File < ompx_safetensors_num_files(H); ++File) {
    uint64_t HeaderBytes = ompx_safetensors_header_bytes(H, File);
    uint64_t DataBytes = 0, Count = 0;
    for (size_t I = 0; I < ompx_safetensors_num_tensors(H); ++I) {
      ompx_safetensors_tensor_t T = (*C)->tensor(I);
      if (T.file == File) {
        DataBytes = std::max(DataBytes, T.data_end);
        ++Count;
      }
    }
    llvm::outs() << llvm::formatv("{0}: {1} tensors, header {2} bytes, data "
                                  "section at offset {3}, {4} bytes\n",
                                  ompx_safetensors_file_path(H, File), Count,
                                  HeaderBytes, 8 + HeaderBytes, DataBytes);
    for (size_t I = 0; I < ompx_safetensors_num_metadata(H, File); ++I) {
      const char *Key, *Value;
      if (ompx_safetensors_metadata(H, File, I, &Key, &Value) == 0)
        llvm::outs() << "  metadata " << Key << " = " << Value << "\n";
    }
    for (size_t I = 0; I < ompx_safetensors_num_tensors(H); ++I) {
      ompx_safetensors_tensor_t T = (*C)->tensor(I);
      if (T.file == File)
        llvm::outs() << llvm::formatv("  {0} {1} [{2}] [{3}, {4})\n", T.name,
                                      ompx_safetensors_dtype_name(T.dtype),
                                      shapeText(T), T.data_begin, T.data_end);
    }
  }
  return Error::success();
}

Error run(int Argc, char **Argv) {
  Expected<OptionsTy> Opts = parseOptions(Argc, Argv);
  if (!Opts)
    return Opts.takeError();
  if (Opts->Command == "info")
    return info(*Opts);
  if (!Opts->Devices.empty())
    return loadSplit(*Opts);
  Expected<int> Device = resolveDevice(Opts->Device);
  if (!Device)
    return Device.takeError();
  if (Opts->Command == "save")
    return save(*Opts, *Device);
  return load(*Opts, *Device);
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc == 2 && (StringRef(Argv[1]) == "--help" || StringRef(Argv[1]) == "-h")) {
    llvm::outs() << Usage;
    return 0;
  }
  if (Error Err = run(Argc, Argv)) {
    llvm::outs().flush();
    llvm::errs() << "offloadio-checkpoint: error: " << toString(std::move(Err))
                 << "\n";
    return 1;
  }
  return 0;
}
