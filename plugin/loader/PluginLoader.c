// SPDX-License-Identifier: Apache-2.0
//
// Intentionally without code: liboffloadio_plugins.so.1 exists for its
// NEEDED entries (the plugins) and its RPATH (see CMakeLists.txt here and
// docs/install.md). It exports nothing, so it adds no symbol to a program.
