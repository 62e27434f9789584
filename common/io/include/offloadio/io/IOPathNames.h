// SPDX-License-Identifier: Apache-2.0
//
// The names of the file paths, by their public number (enum ompx_io_path):
// what OMPX_IO_INFO lines, error messages, ompx_io_path_name and the
// OMPX_IO_PATH setting call them. Free of LLVM and of the engine: libompx_io
// names the paths with it too.
#ifndef OFFLOADIO_IO_IOPATHNAMES_H
#define OFFLOADIO_IO_IOPATHNAMES_H

namespace offloadio {

/// Paths that have a name: OMPX_IO_NUM_PATHS.
inline constexpr int NumNamedIOPaths = 4;

/// The name of path \p Path (an enum ompx_io_path value), or "unknown".
inline const char *ioPathNameOf(int Path) {
  static constexpr const char *Names[NumNamedIOPaths] = {"direct", "fastpath",
                                                         "staged", "host"};
  return Path >= 0 && Path < NumNamedIOPaths ? Names[Path] : "unknown";
}

} // namespace offloadio

#endif // OFFLOADIO_IO_IOPATHNAMES_H
