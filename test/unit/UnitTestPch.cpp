// SPDX-License-Identifier: Apache-2.0
// The translation unit that builds the unit tests' precompiled header
// (test/unit/CMakeLists.txt); it has no code of its own.
