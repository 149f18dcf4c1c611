# cmake -DVCPKG=<vcpkg or empty> -DVCPKG_ROOT=<vcpkg root or empty> -DSOURCE_DIR=<lowbit checkout>
#       -DWORK_DIR=<dir> [-DXSIMD_INCLUDE_DIR=<dir holding xsimd/>] -P lowbit_package_vcpkg.cmake
#
# ctest package.vcpkg: runs the real vcpkg client (classic mode) on the
# overlay port as docs/packaging.md (section 3) writes it, offline:
#   1. a copy of the port's inputs (CMakeLists.txt, LICENSE, cmake/,
#      include/, packaging/vcpkg/ and packaging/vcpkg-system/) in WORK_DIR/src, because the port builds
#      the checkout it sits in and step 4 edits a header;
#   2. the documented offline `vcpkg install lowbit --overlay-ports=...
#      --overlay-ports=.../packaging/vcpkg-system/xsimd` (xsimd from the
#      installed headers), with --enforce-port-checks (every post-build warning an error),
#      and the installed, buildtrees, packages, downloads and binary cache
#      directories in WORK_DIR; vcpkg must print the port's usage file, and
#      the installed lowbit.pc must have no Libs: line;
#   3. a consumer (test_package's CMakeLists.txt and test_package.cpp) with
#      the documented toolchain file, built and run;
#   4. the stale package: a header of the copy changed, `vcpkg remove` and
#      `vcpkg install` restore the old package from the binary cache (reported,
#      not required), and the documented `vcpkg remove lowbit` + `vcpkg
#      install ... --editable` must install the changed header.
# Without vcpkg (VCPKG empty) it prints "lowbit_package_vcpkg: SKIPPED".

cmake_minimum_required(VERSION 3.21)
foreach(var SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "lowbit_package_vcpkg: ${var} not set")
  endif()
endforeach()
if(NOT VCPKG)
  message("lowbit_package_vcpkg: SKIPPED: no vcpkg client (cache variable LOWBIT_VCPKG is empty or OFF: no vcpkg found at configure time)")
  return()
endif()
if(NOT VCPKG_ROOT)
  # The root holds .vcpkg-root; vcpkg finds it next to its own executable.
  file(REAL_PATH "${VCPKG}" real)
  get_filename_component(VCPKG_ROOT "${real}" DIRECTORY)
endif()
if(NOT EXISTS "${VCPKG_ROOT}/.vcpkg-root" OR NOT EXISTS "${VCPKG_ROOT}/scripts/buildsystems/vcpkg.cmake")
  message(FATAL_ERROR "lowbit_package_vcpkg: ${VCPKG_ROOT} is not a vcpkg root (no .vcpkg-root or scripts/); set LOWBIT_VCPKG_ROOT")
endif()
if(NOT XSIMD_INCLUDE_DIR)
  set(XSIMD_INCLUDE_DIR /usr/include)
endif()

# --- the documented install command, from docs/packaging.md section 3 -------------
file(READ "${SOURCE_DIR}/docs/packaging.md" doc)
# Sets `var` to the docs' line that matches `regex` (a whole line), or fails
# naming what is missing.
function(doc_line var regex what)
  if(NOT doc MATCHES "\n(${regex})\n")
    message(FATAL_ERROR "lowbit_package_vcpkg: docs/packaging.md has no ${what}")
  endif()
  set(${var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()
set(port_arg "--overlay-ports=/path/to/lowbit/packaging/vcpkg")
doc_line(install_line "vcpkg install lowbit ${port_arg}"
  "line `vcpkg install lowbit ${port_arg}`")
doc_line(editable_line "vcpkg install lowbit ${port_arg} --editable"
  "line `vcpkg install lowbit ${port_arg} --editable`")
doc_line(offline_line "vcpkg install lowbit ${port_arg} ${port_arg}-system/xsimd"
  "offline install line (with packaging/vcpkg-system/xsimd)")
doc_line(toolchain_line "cmake -S \\. -B build -DCMAKE_TOOLCHAIN_FILE=\"\\$VCPKG_ROOT/scripts/buildsystems/vcpkg\\.cmake\""
  "vcpkg toolchain line for the consumer")

file(REMOVE_RECURSE "${WORK_DIR}")
set(src "${WORK_DIR}/src")
file(MAKE_DIRECTORY "${src}/packaging" "${WORK_DIR}/bincache" "${WORK_DIR}/downloads")
file(COPY "${SOURCE_DIR}/CMakeLists.txt" "${SOURCE_DIR}/LICENSE" "${SOURCE_DIR}/cmake" "${SOURCE_DIR}/include"
  DESTINATION "${src}")
file(COPY "${SOURCE_DIR}/packaging/vcpkg" "${SOURCE_DIR}/packaging/vcpkg-system" DESTINATION "${src}/packaging")

set(ENV{VCPKG_ROOT} "${VCPKG_ROOT}")
set(ENV{VCPKG_FORCE_SYSTEM_BINARIES} 1)    # cmake, ninja, git from PATH: no download
set(ENV{VCPKG_DISABLE_METRICS} 1)
set(ENV{VCPKG_DEFAULT_BINARY_CACHE} "${WORK_DIR}/bincache")
set(ENV{VCPKG_BINARY_SOURCES} "clear;default,readwrite")
set(ENV{LOWBIT_XSIMD_INCLUDE_DIR} "${XSIMD_INCLUDE_DIR}")
set(ENV{VCPKG_KEEP_ENV_VARS} "LOWBIT_XSIMD_INCLUDE_DIR")
set(roots
  "--x-install-root=${WORK_DIR}/installed" "--x-buildtrees-root=${WORK_DIR}/buildtrees"
  "--x-packages-root=${WORK_DIR}/packages" "--downloads-root=${WORK_DIR}/downloads")
set(offline "--overlay-ports=${src}/packaging/vcpkg-system/xsimd" --enforce-port-checks)

# Runs `line` (a documented vcpkg command, /path/to/lowbit = the copy) plus
# extra arguments; its output goes to the log and into `out`.
function(vcpkg_run line out)
  string(REPLACE "/path/to/lowbit" "${src}" line "${line}")
  separate_arguments(args UNIX_COMMAND "${line}")
  list(REMOVE_AT args 0)
  string(JOIN " " shown vcpkg ${args} ${ARGN})
  message(STATUS "lowbit_package_vcpkg: ${shown}")
  execute_process(COMMAND "${VCPKG}" ${args} ${ARGN} WORKING_DIRECTORY "${WORK_DIR}"
    OUTPUT_VARIABLE o ERROR_VARIABLE o RESULT_VARIABLE rc)
  message("${o}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "lowbit_package_vcpkg: `${shown}` failed (${rc})")
  endif()
  set(${out} "${o}" PARENT_SCOPE)
endfunction()

vcpkg_run("vcpkg version" ignored)
vcpkg_run("${offline_line}" out --enforce-port-checks ${roots})
if(NOT out MATCHES "lowbit is header-only")
  message(FATAL_ERROR "lowbit_package_vcpkg: vcpkg did not print the port's usage file")
endif()
file(GLOB triplet_dirs LIST_DIRECTORIES true "${WORK_DIR}/installed/*/share/lowbit")
list(LENGTH triplet_dirs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "lowbit_package_vcpkg: expected one installed share/lowbit, found: ${triplet_dirs}")
endif()
get_filename_component(inst "${triplet_dirs}/../.." ABSOLUTE)
foreach(f share/lowbit/lowbitConfig.cmake share/lowbit/lowbit_dispatch.cmake share/lowbit/usage
    share/lowbit/copyright share/pkgconfig/lowbit.pc include/lowbit/lowbit.hpp)
  if(NOT EXISTS "${inst}/${f}")
    message(FATAL_ERROR "lowbit_package_vcpkg: ${inst}/${f} was not installed")
  endif()
endforeach()
file(STRINGS "${inst}/share/pkgconfig/lowbit.pc" libs REGEX "^Libs")
if(libs)
  message(FATAL_ERROR "lowbit_package_vcpkg: the installed lowbit.pc has `${libs}`")
endif()

# --- a consumer with the documented toolchain file -------------------------------------
set(consumer "${WORK_DIR}/consumer")
file(MAKE_DIRECTORY "${consumer}")
file(COPY "${SOURCE_DIR}/packaging/conan/test_package/CMakeLists.txt"
  "${SOURCE_DIR}/packaging/conan/test_package/test_package.cpp" DESTINATION "${consumer}")
message(STATUS "lowbit_package_vcpkg: cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=\"$VCPKG_ROOT/scripts/buildsystems/vcpkg.cmake\" (VCPKG_INSTALLED_DIR=${WORK_DIR}/installed)")
execute_process(COMMAND "${CMAKE_COMMAND}" -S . -B build
    "-DCMAKE_TOOLCHAIN_FILE=${VCPKG_ROOT}/scripts/buildsystems/vcpkg.cmake"
    "-DVCPKG_INSTALLED_DIR=${WORK_DIR}/installed" -DCMAKE_BUILD_TYPE=Release
  WORKING_DIRECTORY "${consumer}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build build WORKING_DIRECTORY "${consumer}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${consumer}/build/test_package" COMMAND_ERROR_IS_FATAL ANY)

# --- the stale package and --editable ---------------------------------------------------
set(marker "// lowbit_package_vcpkg: changed after the first install")
file(APPEND "${src}/include/lowbit/lowbit.hpp" "${marker}\n")
# `vcpkg remove lowbit`, then `line`; `out` is TRUE if the installed header has the marker.
function(reinstall line out)
  vcpkg_run("vcpkg remove lowbit" ignored ${roots})
  vcpkg_run("${line}" ignored ${offline} ${roots})
  file(READ "${inst}/include/lowbit/lowbit.hpp" installed)
  string(FIND "${installed}" "${marker}" at)
  if(at EQUAL -1)
    set(${out} FALSE PARENT_SCOPE)
  else()
    set(${out} TRUE PARENT_SCOPE)
  endif()
endfunction()
reinstall("${install_line}" fresh)
if(NOT fresh)
  message(STATUS "lowbit_package_vcpkg: as docs/packaging.md says: without --editable the changed header was not installed (the binary cache restored the old package)")
else()
  message(STATUS "lowbit_package_vcpkg: note: this vcpkg rebuilt the port after the header changed; the --editable advice may be obsolete")
endif()
reinstall("${editable_line}" fresh)
if(NOT fresh)
  message(FATAL_ERROR "lowbit_package_vcpkg: after `vcpkg remove lowbit` and `${editable_line}` the installed header is still the old one")
endif()
message(STATUS "lowbit_package_vcpkg: the documented vcpkg commands ran; --editable installed the changed header")
