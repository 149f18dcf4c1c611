# cmake -DCONAN=<conan or empty> -DSOURCE_DIR=<lowbit checkout> -DWORK_DIR=<dir>
#       [-DXSIMD_INCLUDE_DIR=<dir holding xsimd/>] [-DEXTRA_XSIMD_INCLUDE_DIRS=<dir>|<dir>...]
#       -P lowbit_package_conan.cmake
#
# ctest package.conan: runs the real conan client on the commands that
# docs/packaging.md (section 4) writes, as a new user would, offline:
#   1. a fresh CONAN_HOME in WORK_DIR, `conan profile detect` (its default
#      profile, unchanged), the remote conancenter disabled;
#   2. a copy of the recipe's inputs (CMakeLists.txt, LICENSE, cmake/,
#      include/, packaging/conan/) in WORK_DIR/src, so nothing is written
#      into the checkout;
#   3. the documented `conan create packaging/conan/xsimd-system ...` (the
#      xsimd headers at XSIMD_INCLUDE_DIR, packaged by lowbit's own recipe)
#      and `conan create packaging/conan ...` (test_package built and run);
#   4. a consumer with the documented conanfile.txt, test_package's
#      CMakeLists.txt and test_package.cpp, and the documented `conan
#      install` and cmake commands, run line by line; the program is run;
#   5. for each of EXTRA_XSIMD_INCLUDE_DIRS (other xsimd versions), that
#      xsimd packaged too and the documented `conan create packaging/conan`
#      run again: the version range picks the newest xsimd in the cache.
# Without conan (CONAN empty) it prints "lowbit_package_conan: SKIPPED" and
# ctest reports the test as skipped.

cmake_minimum_required(VERSION 3.21)
foreach(var SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "lowbit_package_conan: ${var} not set")
  endif()
endforeach()
if(NOT CONAN)
  message("lowbit_package_conan: SKIPPED: no conan client (cache variable LOWBIT_CONAN is empty or OFF: no conan found at configure time)")
  return()
endif()
if(NOT XSIMD_INCLUDE_DIR)
  set(XSIMD_INCLUDE_DIR /usr/include)
endif()

# --- the documented commands, read from docs/packaging.md ---------------------
file(READ "${SOURCE_DIR}/docs/packaging.md" doc)
string(FIND "${doc}" "\n## 4. Conan 2" at)
if(at EQUAL -1)
  message(FATAL_ERROR "lowbit_package_conan: docs/packaging.md has no section \"## 4. Conan 2\"")
endif()
string(SUBSTRING "${doc}" ${at} -1 doc)
string(SUBSTRING "${doc}" 1 -1 rest)
string(FIND "${rest}" "\n## " next)
if(NOT next EQUAL -1)
  string(SUBSTRING "${rest}" 0 ${next} doc)
endif()
# Fenced blocks: ```sh ... ``` and ```ini ... ```.
string(REGEX MATCHALL "```sh\n[^`]*```" sh_blocks "${doc}")
string(REGEX MATCH "```ini\n([^`]*)```" ini "${doc}")
set(conanfile_txt "${CMAKE_MATCH_1}")
set(xsimd_cmd "")
set(create_cmd "")
set(consumer_lines "")
foreach(block IN LISTS sh_blocks)
  string(REGEX REPLACE "^```sh\n" "" block "${block}")
  string(REGEX REPLACE "```$" "" block "${block}")
  string(REPLACE "\n" ";" lines "${block}")
  if(block MATCHES "(^|\n)conan install ")
    set(consumer_lines "${lines}")
  endif()
  foreach(line IN LISTS lines)
    if(line MATCHES "^conan create packaging/conan/xsimd-system( |$)")
      set(xsimd_cmd "${line}")
    elseif(line MATCHES "^conan create packaging/conan( |$)")
      set(create_cmd "${line}")
    endif()
  endforeach()
endforeach()
foreach(var xsimd_cmd create_cmd consumer_lines conanfile_txt)
  if(NOT ${var})
    message(FATAL_ERROR "lowbit_package_conan: docs/packaging.md section 4 lacks the block for ${var}")
  endif()
endforeach()

# --- a fresh conan home, the detected profile, no network -----------------------
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(ENV{CONAN_HOME} "${WORK_DIR}/conan-home")
function(run dir)
  string(JOIN " " shown ${ARGN})
  message(STATUS "lowbit_package_conan: [${dir}] ${shown}")
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${dir}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "lowbit_package_conan: `${shown}` failed (${rc}) in ${dir}")
  endif()
endfunction()
# A documented line, with `conan` replaced by the program found.
function(run_line dir line)
  separate_arguments(args UNIX_COMMAND "${line}")
  list(GET args 0 prog)
  list(REMOVE_AT args 0)
  if(prog STREQUAL "conan")
    set(prog "${CONAN}")
  endif()
  run("${dir}" "${prog}" ${args})
endfunction()
run("${WORK_DIR}" "${CONAN}" --version)
run("${WORK_DIR}" "${CONAN}" profile detect)
run("${WORK_DIR}" "${CONAN}" profile show)
execute_process(COMMAND "${CONAN}" remote disable conancenter
  OUTPUT_QUIET ERROR_QUIET WORKING_DIRECTORY "${WORK_DIR}")

# --- the recipe's inputs, outside the checkout -----------------------------------
set(src "${WORK_DIR}/src")
file(MAKE_DIRECTORY "${src}/packaging")
file(COPY "${SOURCE_DIR}/CMakeLists.txt" "${SOURCE_DIR}/LICENSE" "${SOURCE_DIR}/cmake" "${SOURCE_DIR}/include"
  DESTINATION "${src}")
file(COPY "${SOURCE_DIR}/packaging/conan" DESTINATION "${src}/packaging"
  PATTERN "test_package/build" EXCLUDE PATTERN "CMakeUserPresets.json" EXCLUDE PATTERN "__pycache__" EXCLUDE)

# --- the documented commands ---------------------------------------------------------
set(ENV{LOWBIT_XSIMD_INCLUDE_DIR} "${XSIMD_INCLUDE_DIR}")
run_line("${src}" "${xsimd_cmd}")
run_line("${src}" "${create_cmd}")

set(consumer "${WORK_DIR}/consumer")
file(MAKE_DIRECTORY "${consumer}")
file(WRITE "${consumer}/conanfile.txt" "${conanfile_txt}")
file(COPY "${SOURCE_DIR}/packaging/conan/test_package/CMakeLists.txt"
  "${SOURCE_DIR}/packaging/conan/test_package/test_package.cpp" DESTINATION "${consumer}")
foreach(line IN LISTS consumer_lines)
  if(NOT line STREQUAL "")
    run_line("${consumer}" "${line}")
  endif()
endforeach()
run("${consumer}" "${consumer}/build/test_package")

# --- other xsimd versions ------------------------------------------------------------
string(REPLACE "|" ";" EXTRA_XSIMD_INCLUDE_DIRS "${EXTRA_XSIMD_INCLUDE_DIRS}")
foreach(dir IN LISTS EXTRA_XSIMD_INCLUDE_DIRS)
  if(dir)
    set(ENV{LOWBIT_XSIMD_INCLUDE_DIR} "${dir}")
    run_line("${src}" "${xsimd_cmd}")
    run_line("${src}" "${create_cmd}")
  endif()
endforeach()
message(STATUS "lowbit_package_conan: the documented conan commands ran with a detected profile")
