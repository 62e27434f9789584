// SPDX-License-Identifier: Apache-2.0
#include "SafetensorsCheckpoint.h"
#include "JsonReader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace ompxio {
namespace safetensors {

namespace {

ErrorTy systemError(int Errno, const std::string &Message) {
  return {Errno, Message + ": " + std::strerror(Errno)};
}

ErrorTy indexError(int Errno, const std::string &Path,
                   const std::string &Message) {
  return {Errno, Path + ": safetensors index: " + Message};
}

bool endsWith(std::string_view Text, std::string_view Suffix) {
  return Text.size() >= Suffix.size() &&
         Text.substr(Text.size() - Suffix.size()) == Suffix;
}

/// Whether \p Shard, a file name of an index, stays inside the index's
/// directory: relative, with no ".." component.
bool isInsideDirectory(std::string_view Shard) {
  if (Shard.empty() || Shard.front() == '/')
    return false;
  size_t Start = 0;
  while (Start <= Shard.size()) {
    size_t End = Shard.find('/', Start);
    if (End == std::string_view::npos)
      End = Shard.size();
    if (Shard.substr(Start, End - Start) == "..")
      return false;
    Start = End + 1;
  }
  return true;
}

ErrorTy openReadOnly(const std::string &Path, int &Fd) {
  Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return systemError(errno, "open(" + Path + ", O_RDONLY)");
  return {};
}

/// The whole of the index file \p Path, at most MaxHeaderLength bytes.
ErrorTy readIndexText(const std::string &Path, std::string &Text) {
  int Fd;
  if (ErrorTy Err = openReadOnly(Path, Fd))
    return Err;
  CheckpointFileTy File(Path, Fd); // Closes it.
  struct stat St;
  if (::fstat(Fd, &St) != 0)
    return systemError(errno, "fstat(" + Path + ", fd " +
                                  std::to_string(Fd) + ")");
  uint64_t Size = static_cast<uint64_t>(St.st_size);
  if (Size > MaxHeaderLength)
    return indexError(EOVERFLOW, Path,
                      "the file's " + std::to_string(Size) +
                          " bytes are over the limit of " +
                          std::to_string(MaxHeaderLength) + " bytes");
  Text.assign(Size, '\0');
  return preadFull(Fd, Text.data(), Size, 0, Path);
}

/// The "weight_map" of the index text \p Text: tensor name -> shard file,
/// of a name given twice the last.
ErrorTy parseWeightMap(const std::string &Path, std::string_view Text,
                       std::map<std::string, std::string> &WeightMap) {
  JsonFaultTy Fault;
  std::string Message;
  std::optional<JsonReaderTy> Reader =
      JsonReaderTy::create(Text, MaxHeaderDepth, Fault, Message);
  if (!Reader)
    return indexError(Fault == JsonFaultTy::TooDeep ? EOVERFLOW : EINVAL,
                      Path, Message);
  using KindTy = JsonReaderTy::KindTy;
  if (Reader->kind() != KindTy::Object)
    return indexError(EINVAL, Path, "not a JSON object");
  bool Seen = false;
  std::string Key, Name, Shard;
  Reader->enterObject();
  while (Reader->nextMember(Key)) {
    if (Key != "weight_map") {
      Reader->skipValue();
      continue;
    }
    if (Seen)
      return indexError(EINVAL, Path, "'weight_map' appears twice");
    Seen = true;
    if (Reader->kind() != KindTy::Object)
      return indexError(EINVAL, Path, "'weight_map' is not an object");
    Reader->enterObject();
    while (Reader->nextMember(Name)) {
      if (Reader->kind() != KindTy::String)
        return indexError(EINVAL, Path,
                          "'weight_map' value of tensor '" + shownText(Name) +
                              "' is not a string");
      Reader->readString(Shard);
      if (!isInsideDirectory(Shard))
        return indexError(EINVAL, Path,
                          "tensor '" + shownText(Name) + "': shard '" +
                              shownText(Shard) +
                              "' is not a file name inside the index's "
                              "directory (empty, absolute or with '..')");
      WeightMap[Name] = Shard;
    }
  }
  if (!Seen)
    return indexError(EINVAL, Path, "no 'weight_map'");
  return {};
}

} // namespace

CheckpointFileTy::~CheckpointFileTy() {
  if (Fd >= 0)
    ::close(Fd);
}

ErrorTy CheckpointTy::open(const std::string &Path,
                           std::unique_ptr<CheckpointTy> &Out) {
  auto Checkpoint = std::make_unique<CheckpointTy>();
  ErrorTy Err = endsWith(Path, ".json") ? Checkpoint->openIndex(Path)
                                        : Checkpoint->openFile(Path);
  if (Err)
    return Err;
  Checkpoint->indexNames();
  Out = std::move(Checkpoint);
  return {};
}

ErrorTy CheckpointTy::openFile(const std::string &Path) {
  int Fd;
  if (ErrorTy Err = openReadOnly(Path, Fd))
    return Err;
  Files.push_back(std::make_unique<CheckpointFileTy>(Path, Fd));
  if (ErrorTy Err = readHeader(Fd, Path, Files.back()->Header))
    return Err;
  for (size_t I = 0; I < Files.back()->Header.Tensors.size(); ++I)
    Tensors.push_back({Files.size() - 1, I});
  return {};
}

ErrorTy CheckpointTy::openIndex(const std::string &Path) {
  std::string Text;
  if (ErrorTy Err = readIndexText(Path, Text))
    return Err;
  std::map<std::string, std::string> WeightMap;
  if (ErrorTy Err = parseWeightMap(Path, Text, WeightMap))
    return Err;
  std::string Directory = Path.substr(0, Path.rfind('/') + 1);
  // Shards in the order of their names: the order their names give
  // (model-00001-of-00004, ...) is the order they were written.
  std::map<std::string, size_t> ShardFile;
  for (const auto &[Name, Shard] : WeightMap)
    ShardFile.emplace(Shard, 0);
  for (auto &[Shard, File] : ShardFile) {
    File = Files.size();
    if (ErrorTy Err = openFile(Directory + Shard))
      return Err;
  }
  // openFile listed every tensor of every shard: keep those of the map,
  // found through each shard's names in order.
  std::vector<std::vector<size_t>> ShardByName(Files.size());
  for (size_t File = 0; File < Files.size(); ++File) {
    const std::vector<TensorInfoTy> &InShard = Files[File]->Header.Tensors;
    std::vector<size_t> &Order = ShardByName[File];
    for (size_t I = 0; I < InShard.size(); ++I)
      Order.push_back(I);
    std::sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
      return InShard[A].Name < InShard[B].Name;
    });
  }
  Tensors.clear();
  for (const auto &[Name, Shard] : WeightMap) {
    size_t File = ShardFile[Shard];
    const std::vector<TensorInfoTy> &InShard = Files[File]->Header.Tensors;
    const std::vector<size_t> &Order = ShardByName[File];
    auto Found = std::lower_bound(
        Order.begin(), Order.end(), Name,
        [&](size_t I, const std::string &Key) { return InShard[I].Name < Key; });
    if (Found == Order.end() || InShard[*Found].Name != Name)
      return indexError(EINVAL, Path,
                        "tensor '" + shownText(Name) + "' is not in shard " +
                            Files[File]->Path);
    Tensors.push_back({File, *Found});
  }
  std::sort(Tensors.begin(), Tensors.end(),
            [](const TensorRefTy &A, const TensorRefTy &B) {
              return std::tie(A.File, A.Tensor) < std::tie(B.File, B.Tensor);
            });
  return {};
}

void CheckpointTy::indexNames() {
  ByName.resize(Tensors.size());
  for (size_t I = 0; I < Tensors.size(); ++I)
    ByName[I] = I;
  std::sort(ByName.begin(), ByName.end(), [&](size_t A, size_t B) {
    return tensor(A).Name < tensor(B).Name;
  });
}

std::optional<size_t> CheckpointTy::find(std::string_view Name) const {
  auto It = std::lower_bound(
      ByName.begin(), ByName.end(), Name,
      [&](size_t I, std::string_view Key) { return tensor(I).Name < Key; });
  if (It == ByName.end() || tensor(*It).Name != Name)
    return std::nullopt;
  return *It;
}

} // namespace safetensors
} // namespace ompxio
