# SPDX-License-Identifier: Apache-2.0
# The offload targets (tools/targets/offload-targets.def) for CMake:
# OFFLOADIO_OFFLOAD_TRIPLES (the host's first) and, for each triple T,
# OFFLOADIO_PLUGIN_OF_<T> (its plugin's short name).
if(NOT OFFLOADIO_OFFLOAD_TARGETS_DEF)
  set(OFFLOADIO_OFFLOAD_TARGETS_DEF
      ${PROJECT_SOURCE_DIR}/tools/targets/offload-targets.def)
endif()
file(STRINGS ${OFFLOADIO_OFFLOAD_TARGETS_DEF} _lines
     REGEX "^OFFLOADIO_OFFLOAD_TARGET\\(")
set(OFFLOADIO_OFFLOAD_TRIPLES)
foreach(_line IN LISTS _lines)
  if(NOT _line MATCHES "^OFFLOADIO_OFFLOAD_TARGET\\(\"([^\"]*)\", *\"([^\"]*)\"")
    message(FATAL_ERROR "offload-targets.def: cannot read '${_line}'")
  endif()
  list(APPEND OFFLOADIO_OFFLOAD_TRIPLES ${CMAKE_MATCH_1})
  set(OFFLOADIO_PLUGIN_OF_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
endforeach()
list(GET OFFLOADIO_OFFLOAD_TRIPLES 0 OFFLOADIO_HOST_TRIPLE)
if(NOT CMAKE_SCRIPT_MODE_FILE)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${OFFLOADIO_OFFLOAD_TARGETS_DEF})
else()
  # cmake -DPROJECT_SOURCE_DIR=... -P OffloadTargets.cmake (its test):
  # print the table as "triple plugin" lines.
  foreach(_t IN LISTS OFFLOADIO_OFFLOAD_TRIPLES)
    message(NOTICE "${_t} ${OFFLOADIO_PLUGIN_OF_${_t}}")
  endforeach()
endif()
