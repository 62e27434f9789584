# SPDX-License-Identifier: Apache-2.0
# Install rules, the CMake package and the pkg-config files: everything
# `cmake --install <build> --prefix <P>` puts under <P> (docs/install.md).
#
#   lib/        the plugins, liboffloadio_plugins.so.1 (the plugin loader),
#               libompx_io.so.<version>
#   lib/cmake/offload-io/   find_package(offload-io CONFIG):
#               offloadio::ompx_io, offloadio::plugins,
#               offloadio_offload_targets() and the compiler check
#   lib/pkgconfig/          offload-io.pc, offload-io-plugins.pc
#   include/    every public header of include/
#   bin/        ompx-io, offloadio-checkpoint (examples/checkpoint)
#   share/man/man1/ompx-io.1, share/bash-completion/completions/ompx-io
#   share/doc/offload-io/   README.md, LICENSE, docs/
include(CMakePackageConfigHelpers)

set(OFFLOADIO_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/offload-io)

# The plugins are not exported targets: nothing links them directly; the
# loader has them as NEEDED.
get_property(_plugins GLOBAL PROPERTY OFFLOADIO_PLUGIN_TARGETS)
install(TARGETS ${_plugins} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# libompx_io is useless without our plugins (every call on a device of a
# stock plugin fails with ENODEV), so the installed one brings them: it has
# the loader as NEEDED (libompx_io/CMakeLists.txt), and offloadio::ompx_io
# links offloadio::plugins; only the installed one, as the build tree's tests
# choose their plugins with LD_LIBRARY_PATH.
target_link_libraries(ompx_io_installed INTERFACE $<INSTALL_INTERFACE:offloadio::plugins>)
install(TARGETS ompx_io_installed offloadio_plugin_loader offloadio_plugins
  EXPORT offload-io-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT offload-io-targets NAMESPACE offloadio::
  DESTINATION ${OFFLOADIO_CMAKE_PACKAGE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/offload-ioConfig.cmake.in
  ${PROJECT_BINARY_DIR}/offload-ioConfig.cmake
  INSTALL_DESTINATION ${OFFLOADIO_CMAKE_PACKAGE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/offload-ioConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
configure_file(${PROJECT_SOURCE_DIR}/cmake/offload-ioOffloadFlags.cmake.in
  ${PROJECT_BINARY_DIR}/offload-ioOffloadFlags.cmake @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/offload-ioConfig.cmake
              ${PROJECT_BINARY_DIR}/offload-ioConfigVersion.cmake
              ${PROJECT_BINARY_DIR}/offload-ioOffloadFlags.cmake
  DESTINATION ${OFFLOADIO_CMAKE_PACKAGE_DIR})

# pkg-config: the prefix is found relative to the .pc file, so an install
# with `--prefix` chosen at install time (not at configure time) is right.
file(RELATIVE_PATH OFFLOADIO_PC_TO_PREFIX
  /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" OFFLOADIO_PC_TO_PREFIX "${OFFLOADIO_PC_TO_PREFIX}")
foreach(_pc offload-io offload-io-plugins)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${_pc}.pc.in
                 ${PROJECT_BINARY_DIR}/pkgconfig/${_pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${_pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# Every header of include/, whatever is added there, and the generated
# version header beside them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/ompx_version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

if(TARGET ompx-io)
  install(PROGRAMS ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/ompx-io
          DESTINATION ${CMAKE_INSTALL_BINDIR})
  # What `ompx-io bench --plot` runs, found beside the installed tool.
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/bench/plot-io.sh
          DESTINATION ${CMAKE_INSTALL_DATADIR}/offload-io)
  install(FILES ${PROJECT_SOURCE_DIR}/tools/ompx-io/ompx-io.1
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${PROJECT_SOURCE_DIR}/tools/ompx-io/ompx-io.bash-completion
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
          RENAME ompx-io)
endif()

if(TARGET offloadio-checkpoint)
  install(PROGRAMS ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/offloadio-checkpoint
          DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
unset(_plugins)
unset(_pc)
