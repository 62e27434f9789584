// SPDX-License-Identifier: Apache-2.0
//
// An open safetensors checkpoint: one file, or the shards that a
// model.safetensors.index.json names, each open with its header checked,
// and one list of tensors over them with a lookup by name. What
// ompx_safetensors_t points to.
#ifndef OMPX_IO_SAFETENSORSCHECKPOINT_H
#define OMPX_IO_SAFETENSORSCHECKPOINT_H

#include "SafetensorsHeader.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ompxio {
namespace safetensors {

/// One open file of a checkpoint and its header; closes the file.
class CheckpointFileTy {
public:
  CheckpointFileTy(std::string Path, int Fd) : Path(std::move(Path)), Fd(Fd) {}
  CheckpointFileTy(const CheckpointFileTy &) = delete;
  CheckpointFileTy &operator=(const CheckpointFileTy &) = delete;
  ~CheckpointFileTy();

  const std::string Path;
  const int Fd;
  HeaderTy Header;
};

/// A tensor of the checkpoint: which file, and which of its header.
struct TensorRefTy {
  size_t File;
  size_t Tensor;
};

/// An open checkpoint.
class CheckpointTy {
public:
  /// Opens \p Path: an index when its name ends in ".json", else one
  /// safetensors file (ompx_safetensors_open says what is checked). The
  /// error's message starts with the file it is about.
  static ErrorTy open(const std::string &Path,
                      std::unique_ptr<CheckpointTy> &Out);

  /// The files, in the order of their names for an index.
  const std::vector<std::unique_ptr<CheckpointFileTy>> &files() const {
    return Files;
  }
  /// The tensors, by file and then by offset.
  const std::vector<TensorRefTy> &tensors() const { return Tensors; }
  /// The file of tensor \p Index.
  const CheckpointFileTy &fileOf(size_t Index) const {
    return *Files[Tensors[Index].File];
  }
  /// Tensor \p Index.
  const TensorInfoTy &tensor(size_t Index) const {
    return fileOf(Index).Header.Tensors[Tensors[Index].Tensor];
  }
  /// The index of the tensor named \p Name, if any.
  std::optional<size_t> find(std::string_view Name) const;

private:
  ErrorTy openFile(const std::string &Path);
  ErrorTy openIndex(const std::string &Path);
  /// Sorts the tensors' indices by name, for find.
  void indexNames();

  std::vector<std::unique_ptr<CheckpointFileTy>> Files;
  std::vector<TensorRefTy> Tensors;
  std::vector<size_t> ByName;
};

} // namespace safetensors
} // namespace ompxio

#endif // OMPX_IO_SAFETENSORSCHECKPOINT_H
