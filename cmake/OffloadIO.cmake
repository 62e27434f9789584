# SPDX-License-Identifier: Apache-2.0
# Shared compile settings and the add_offload_plugin() helper.

set(OFFLOADIO_COMMON_FLAGS -Wall -Wextra -Wno-unused-parameter -fno-exceptions
    -fvisibility=hidden -fvisibility-inlines-hidden)

# OFFLOADIO_WERROR: every target compiled here, tests and the HSA emulation
# included, fails on a warning.
if(OFFLOADIO_WERROR)
  add_compile_options(-Werror)
endif()

# SANITIZE: a comma-separated list of address, undefined and thread
# ("address,undefined" is the ASan+UBSan build CI runs). UB reports abort
# (-fno-sanitize-recover) so that they fail the test that triggered them.
set(OFFLOADIO_SANITIZERS "")
set(OFFLOADIO_SANITIZER_RT "")
if(NOT SANITIZE STREQUAL "")
  string(REPLACE "," ";" OFFLOADIO_SANITIZERS "${SANITIZE}")
  list(REMOVE_DUPLICATES OFFLOADIO_SANITIZERS)
  foreach(_san IN LISTS OFFLOADIO_SANITIZERS)
    if(NOT _san MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "SANITIZE='${SANITIZE}': unknown sanitizer '${_san}'; use address, "
                          "undefined, thread, address,undefined or leave it empty")
    endif()
  endforeach()
  if("thread" IN_LIST OFFLOADIO_SANITIZERS AND "address" IN_LIST OFFLOADIO_SANITIZERS)
    message(FATAL_ERROR "SANITIZE='${SANITIZE}': address and thread cannot be combined")
  endif()
  list(JOIN OFFLOADIO_SANITIZERS "," _san_flag)
  add_compile_options(-fsanitize=${_san_flag} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_san_flag})
  if("undefined" IN_LIST OFFLOADIO_SANITIZERS)
    add_compile_options(-fno-sanitize-recover=all)
  endif()

  # Plugins link with --no-undefined, so the sanitizer runtime must be a
  # shared library they can link against (clang puts the static one into
  # executables only). Programs that are not built here (the lit tests) need
  # that same runtime preloaded: OFFLOADIO_SANITIZER_RT names it for lit.
  if("address" IN_LIST OFFLOADIO_SANITIZERS)
    set(_san_runtime libclang_rt.asan-x86_64.so)
  elseif("thread" IN_LIST OFFLOADIO_SANITIZERS)
    set(_san_runtime libclang_rt.tsan-x86_64.so)
  else()
    set(_san_runtime libclang_rt.ubsan_standalone-x86_64.so)
  endif()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_san_runtime}
                  OUTPUT_VARIABLE OFFLOADIO_SANITIZER_RT OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${OFFLOADIO_SANITIZER_RT}" OR NOT EXISTS "${OFFLOADIO_SANITIZER_RT}")
    message(FATAL_ERROR "SANITIZE='${SANITIZE}': ${CMAKE_CXX_COMPILER} has no ${_san_runtime}")
  endif()
  get_filename_component(_san_runtime_dir "${OFFLOADIO_SANITIZER_RT}" DIRECTORY)
  add_link_options(-shared-libsan -Wl,-rpath,${_san_runtime_dir})
  unset(_san_flag)
  unset(_san_runtime)
  unset(_san_runtime_dir)
endif()

# Apply project warnings and LLVM's include paths to a target.
function(offloadio_target_settings Target)
  target_compile_options(${Target} PRIVATE ${OFFLOADIO_COMMON_FLAGS})
  target_include_directories(${Target} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
  target_compile_definitions(${Target} PRIVATE ${LLVM_DEFINITIONS})
endfunction()

# add_offload_plugin(NAME <name> SOURCES ...): builds
# libomptarget.rtl.<name>${OFFLOADIO_PLUGIN_FILE_SUFFIX}.so (the name the
# libomptarget of the build looks for) exporting only __tgt_rtl* symbols,
# linked -Bsymbolic so that RTLD_GLOBAL interposition cannot redirect our own
# calls into another plugin. The target is recorded in the global property
# OFFLOADIO_PLUGIN_TARGETS, where the plugin loader (plugin/loader/) and the
# install rules (OffloadIOInstall.cmake) find every plugin built.
function(add_offload_plugin)
  cmake_parse_arguments(P "" "NAME" "SOURCES;LIBS" ${ARGN})
  set(Target offloadio_plugin_${P_NAME})
  # The C entry points, every device/src/CApi*.cpp of common/ (common/CMakeLists.txt).
  get_property(CApiSources GLOBAL PROPERTY OFFLOADIO_CAPI_SOURCES)
  add_library(${Target} SHARED ${P_SOURCES} ${CApiSources})
  # The file name is also the soname (CMake's default for an unversioned
  # library): libomptarget dlopens exactly this name, and the dynamic loader
  # answers it with an already loaded object whose soname matches
  # (plugin/loader/, docs/install.md).
  set_target_properties(${Target} PROPERTIES
    OUTPUT_NAME "omptarget.rtl.${P_NAME}${OFFLOADIO_PLUGIN_FILE_SUFFIX}"
    PREFIX "lib"
    INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
  set_property(GLOBAL APPEND PROPERTY OFFLOADIO_PLUGIN_TARGETS ${Target})
  offloadio_target_settings(${Target})
  target_link_libraries(${Target} PRIVATE offloadio_common ${P_LIBS})
  # -z nodelete: libLLVM's DynamicLibrary dlcloses every plugin from its
  # static destructor at exit, while our stream workers may still run.
  target_link_options(${Target} PRIVATE
    -Wl,-Bsymbolic -Wl,--no-undefined -Wl,-z,nodelete
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/exports.map)
  set_property(TARGET ${Target} APPEND PROPERTY LINK_DEPENDS
               ${PROJECT_SOURCE_DIR}/cmake/exports.map)
endfunction()
