# Installation (issue 6): `cmake --install` puts in the usual GNU places
#   bin/livetrack                      the command
#   lib/liblivetrack.so*               the registry (public C API)
#   lib/liblivetrack_{cl,ze,cuda}.so   the front ends (those that were built)
#   include/livetrack/livetrack.h, include/CL/cl_ext_live_object_tracking.h
#   lib/pkgconfig/livetrack.pc         pkg-config
#   lib/cmake/livetrack/               find_package(livetrack) -> livetrack::livetrack
# Included last from the top-level CMakeLists.txt, when every target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The version users see is the public header's (the one the JSON report and
# `livetrack --version` give), so read it from there.
file(STRINGS "${PROJECT_SOURCE_DIR}/include/livetrack/livetrack.h" _lt_version_lines
     REGEX "^#define LIVETRACK_VERSION_(MAJOR|MINOR|PATCH) ")
foreach(_lt_part MAJOR MINOR PATCH)
  string(REGEX REPLACE ".*LIVETRACK_VERSION_${_lt_part} ([0-9]+).*" "\\1" _lt_${_lt_part} "${_lt_version_lines}")
endforeach()
set(LIVETRACK_PACKAGE_VERSION "${_lt_MAJOR}.${_lt_MINOR}.${_lt_PATCH}")

set(_lt_front_ends livetrack_cl)
foreach(_lt_target livetrack_ze livetrack_cuda)
  if(TARGET ${_lt_target})
    list(APPEND _lt_front_ends ${_lt_target})
  endif()
endforeach()

# The front ends find liblivetrack.so beside themselves wherever the tree
# is installed (a loader dlopens them by absolute path, so no search path
# of the program's can be relied on).
set_target_properties(${_lt_front_ends} PROPERTIES INSTALL_RPATH "$ORIGIN")

# The core's include directory is a source path; exported, it must become
# the installed one.
set_property(TARGET livetrack PROPERTY INTERFACE_INCLUDE_DIRECTORIES
             "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>")

install(TARGETS livetrack EXPORT livetrackTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${_lt_front_ends} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS livetrack_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES "${PROJECT_SOURCE_DIR}/ext/CL/cl_ext_live_object_tracking.h"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/CL)

# CMake package: livetrack::livetrack, plus the paths of the command and the
# OpenCL layer for test suites that run programs under livetrack.
set(_lt_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/livetrack)
install(EXPORT livetrackTargets NAMESPACE livetrack:: DESTINATION ${_lt_cmake_dir})
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/livetrackConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/livetrackConfig.cmake"
  INSTALL_DESTINATION ${_lt_cmake_dir}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a new minor version may change the API.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/livetrackConfigVersion.cmake"
  VERSION ${LIVETRACK_PACKAGE_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cmake/livetrackConfig.cmake"
              "${PROJECT_BINARY_DIR}/cmake/livetrackConfigVersion.cmake"
        DESTINATION ${_lt_cmake_dir})

# pkg-config: paths relative to the .pc file itself (${pcfiledir}), so
# `cmake --install --prefix ANYWHERE` and moved trees stay right.
set(_lt_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(LIVETRACK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _lt_up "/prefix/${_lt_pc_dir}" "/prefix")
  string(REGEX REPLACE "/$" "" _lt_up "${_lt_up}")
  set(LIVETRACK_PC_PREFIX "\${pcfiledir}/${_lt_up}")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/livetrack.pc.in" "${PROJECT_BINARY_DIR}/cmake/livetrack.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/cmake/livetrack.pc" DESTINATION ${_lt_pc_dir})
