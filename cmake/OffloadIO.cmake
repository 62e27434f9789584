# SPDX-License-Identifier: Apache-2.0
# Shared compile settings and the add_offload_plugin() helper.

set(OFFLOADIO_COMMON_FLAGS -Wall -Wextra -Wno-unused-parameter -fno-exceptions
    -fvisibility=hidden -fvisibility-inlines-hidden)

# Plugins link with --no-undefined, so the sanitizer runtime must be a shared
# library they can link against (clang puts the static one into executables
# only).
if(NOT SANITIZE STREQUAL "")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-x86_64.so
                  OUTPUT_VARIABLE OFFLOADIO_SANITIZER_RT OUTPUT_STRIP_TRAILING_WHITESPACE)
  get_filename_component(OFFLOADIO_SANITIZER_RT_DIR "${OFFLOADIO_SANITIZER_RT}" DIRECTORY)
  add_link_options(-shared-libsan -Wl,-rpath,${OFFLOADIO_SANITIZER_RT_DIR})
endif()
if(SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(SANITIZE STREQUAL "undefined")
  add_compile_options(-fsanitize=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=undefined)
elseif(SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread)
  add_link_options(-fsanitize=thread)
elseif(NOT SANITIZE STREQUAL "")
  message(FATAL_ERROR "SANITIZE must be address, undefined, thread or empty, not '${SANITIZE}'")
endif()

# Apply project warnings and LLVM's include paths to a target.
function(offloadio_target_settings Target)
  target_compile_options(${Target} PRIVATE ${OFFLOADIO_COMMON_FLAGS})
  target_include_directories(${Target} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
  target_compile_definitions(${Target} PRIVATE ${LLVM_DEFINITIONS})
endfunction()

# add_offload_plugin(NAME <name> SOURCES ...): builds
# libomptarget.rtl.<name>.nextgen.so exporting only __tgt_rtl* symbols,
# linked -Bsymbolic so that RTLD_GLOBAL interposition cannot redirect our own
# calls into another plugin.
function(add_offload_plugin)
  cmake_parse_arguments(P "" "NAME" "SOURCES;LIBS" ${ARGN})
  set(Target offloadio_plugin_${P_NAME})
  add_library(${Target} SHARED ${P_SOURCES} ${PROJECT_SOURCE_DIR}/common/src/CApi.cpp)
  set_target_properties(${Target} PROPERTIES
    OUTPUT_NAME "omptarget.rtl.${P_NAME}.nextgen"
    PREFIX "lib")
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
