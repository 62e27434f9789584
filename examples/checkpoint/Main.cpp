// SPDX-License-Identifier: Apache-2.0
//
// offloadio-checkpoint: saves generated tensors from device memory as a
// safetensors file, loads a file into device memory and verifies every
// byte, or prints a file's header. Saves and loads are one ompx_io batch
// each (CheckpointIO.h).
#include "CheckpointIO.h"
#include "Pattern.h"
#include "Safetensors.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

using namespace offloadio;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using safetensors::DTypeTy;
using safetensors::HeaderTy;
using safetensors::TensorInfoTy;

namespace {

constexpr const char *Usage =
    "usage: offloadio-checkpoint save FILE [--tensors N] [--max-bytes SIZE]\n"
    "                                 [--seed S] [--device D]\n"
    "       offloadio-checkpoint load FILE [--device D]\n"
    "       offloadio-checkpoint info FILE\n"
    "save: generates N tensors (default 16) of up to SIZE bytes each (default\n"
    "  1M; K, M, G suffixes) in memory of device D (default: the default\n"
    "  device) and writes them as a safetensors file with one ompx_io batch.\n"
    "load: reads every tensor of FILE into memory of device D with one batch\n"
    "  and checks every byte against the file (and against the generator, for\n"
    "  files that save wrote). Exit status 0 only when all bytes match.\n"
    "info: prints the header.\n";

/// The command line, parsed.
struct OptionsTy {
  std::string Command;
  std::string Path;
  uint64_t Tensors = 16;
  uint64_t MaxBytes = 1 << 20;
  uint64_t Seed = 1;
  int Device = -1;
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
    } else {
      return usageError("unknown option '" + Option + "' for " + Opts.Command);
    }
  }
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
std::vector<TensorInfoTy> generateTensors(const OptionsTy &Opts) {
  static constexpr DTypeTy DTypes[] = {DTypeTy::F32, DTypeTy::BF16,
                                       DTypeTy::F16, DTypeTy::I64,
                                       DTypeTy::U8,  DTypeTy::F64};
  ShapeRandomTy Random{Opts.Seed};
  std::vector<TensorInfoTy> Tensors;
  for (uint64_t I = 0; I < Opts.Tensors; ++I) {
    TensorInfoTy T;
    T.Name = llvm::formatv("layers.{0}.{1}", I / 2, I % 2 ? "bias" : "weight");
    T.DType = DTypes[Random.below(std::size(DTypes))];
    uint64_t Elements =
        std::max<uint64_t>(1, Opts.MaxBytes / safetensors::dtypeSize(T.DType));
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

uint64_t tensorKey(const TensorInfoTy &T) {
  return ckptTensorKey(T.Name.data(), T.Name.size());
}

Error save(const OptionsTy &Opts, int Device) {
  HeaderTy Header;
  Header.Tensors = generateTensors(Opts);
  if (Error Err = safetensors::layOutContiguously(Header.Tensors))
    return Err;
  Header.Metadata = {{"format", "pt"},
                     {CKPT_METADATA_GENERATOR, CKPT_GENERATOR_NAME},
                     {CKPT_METADATA_SEED, std::to_string(Opts.Seed)}};
  std::vector<checkpoint::DeviceBufferTy> Buffers;
  for (const TensorInfoTy &T : Header.Tensors) {
    Expected<checkpoint::DeviceBufferTy> Buffer =
        checkpoint::DeviceBufferTy::allocate(T.bytes(), Device);
    if (!Buffer)
      return Buffer.takeError();
    if (ckptFillDevice(Buffer->data(), T.bytes(), Opts.Seed, tensorKey(T),
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

Expected<HeaderTy> openAndReadHeader(StringRef Path, int &Fd) {
  Fd = ::open(Path.str().c_str(), O_RDONLY);
  if (Fd < 0)
    return llvm::createStringError(
        std::error_code(errno, std::generic_category()),
        "open(" + Path + ", O_RDONLY): " + std::strerror(errno));
  return safetensors::readHeader(Fd, Path);
}

/// The seed of a file that save generated, from its metadata.
std::optional<uint64_t> generatorSeed(const HeaderTy &Header) {
  bool Generated = false;
  std::optional<uint64_t> Seed;
  for (const auto &KV : Header.Metadata) {
    if (KV.first == CKPT_METADATA_GENERATOR)
      Generated = KV.second == CKPT_GENERATOR_NAME;
    uint64_t Value;
    if (KV.first == CKPT_METADATA_SEED && !StringRef(KV.second).getAsInteger(10, Value))
      Seed = Value;
  }
  return Generated ? Seed : std::nullopt;
}

/// Every byte of each buffer against the file and, when \p Seed is set,
/// against the generator.
Error verify(int Fd, StringRef Path, const HeaderTy &Header,
             llvm::ArrayRef<checkpoint::DeviceBufferTy> Buffers, int Device,
             std::optional<uint64_t> Seed) {
  std::vector<char> FromDevice, FromFile;
  for (size_t I = 0; I < Header.Tensors.size(); ++I) {
    const TensorInfoTy &T = Header.Tensors[I];
    if (T.bytes() == 0)
      continue;
    FromDevice.resize(T.bytes());
    FromFile.resize(T.bytes());
    if (omp_target_memcpy(FromDevice.data(), Buffers[I].data(), T.bytes(), 0,
                          0, omp_get_initial_device(), Device) != 0)
      return llvm::createStringError(
          std::make_error_code(std::errc::io_error),
          llvm::formatv("omp_target_memcpy({0} bytes of tensor '{1}' from {2} "
                        "of device {3}) failed",
                        T.bytes(), T.Name, Buffers[I].data(), Device)
              .str());
    if (Error Err = safetensors::preadFull(Fd, FromFile.data(), T.bytes(),
                                           Header.dataOffset() + T.Begin, Path))
      return Err;
    uint64_t Key = tensorKey(T);
    for (uint64_t B = 0; B < T.bytes(); ++B) {
      unsigned char Got = static_cast<unsigned char>(FromDevice[B]);
      unsigned char File = static_cast<unsigned char>(FromFile[B]);
      unsigned char Want = Seed ? ckptPatternByte(*Seed, Key, B) : File;
      if (Got != File || File != Want)
        return llvm::createStringError(
            std::make_error_code(std::errc::io_error),
            llvm::formatv("tensor '{0}' byte {1}: device has {2:x2}, file has "
                          "{3:x2}{4}",
                          T.Name, B, Got, File,
                          Seed ? llvm::formatv(", generator gives {0:x2}", Want)
                                     .str()
                               : std::string())
                .str());
    }
  }
  return Error::success();
}

Error load(const OptionsTy &Opts, int Device) {
  int Fd = -1;
  Expected<HeaderTy> Header = openAndReadHeader(Opts.Path, Fd);
  FileTy File(Fd);
  if (!Header)
    return Header.takeError();
  Expected<std::vector<checkpoint::DeviceBufferTy>> Buffers =
      checkpoint::loadCheckpoint(File.fd(), Opts.Path, *Header, Device);
  if (!Buffers)
    return Buffers.takeError();
  llvm::outs() << llvm::formatv("loaded {0} tensors, {1} bytes, into device "
                                "{2} in one batch\n",
                                Header->Tensors.size(), Header->dataBytes(),
                                Device);
  std::optional<uint64_t> Seed = generatorSeed(*Header);
  if (Error Err = verify(File.fd(), Opts.Path, *Header, *Buffers, Device, Seed))
    return Err;
  llvm::outs() << llvm::formatv("verified {0} bytes against the file{1}\n",
                                Header->dataBytes(),
                                Seed ? " and the generator" : "");
  return Error::success();
}

Error info(const OptionsTy &Opts) {
  int Fd = -1;
  Expected<HeaderTy> Header = openAndReadHeader(Opts.Path, Fd);
  FileTy File(Fd);
  if (!Header)
    return Header.takeError();
  llvm::outs() << llvm::formatv("{0}: {1} tensors, header {2} bytes, data "
                                "section at offset {3}, {4} bytes\n",
                                Opts.Path, Header->Tensors.size(),
                                Header->HeaderLength, Header->dataOffset(),
                                Header->dataBytes());
  for (const auto &KV : Header->Metadata)
    llvm::outs() << "  metadata " << KV.first << " = " << KV.second << "\n";
  for (const TensorInfoTy &T : Header->Tensors) {
    std::vector<std::string> Dims;
    for (uint64_t Dim : T.Shape)
      Dims.push_back(std::to_string(Dim));
    llvm::outs() << llvm::formatv("  {0} {1} [{2}] [{3}, {4})\n", T.Name,
                                  safetensors::dtypeName(T.DType),
                                  llvm::join(Dims, ", "), T.Begin, T.End);
  }
  return Error::success();
}

Error run(int Argc, char **Argv) {
  Expected<OptionsTy> Opts = parseOptions(Argc, Argv);
  if (!Opts)
    return Opts.takeError();
  if (Opts->Command == "info")
    return info(*Opts);
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
