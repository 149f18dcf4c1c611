# Every public header compiles on its own, run by ctest package.headers.* as
#   cmake -DCXX=<compiler or empty> -DCOMPILER_NAME=<name> -DINCLUDE_DIR=<repo>/include
#         -DSYSTEM_INCLUDES=<dir>|<dir>... -DWORK_DIR=<dir> -P lowbit_header_check.cmake
# For each include/lowbit/*.hpp (not detail/) a one-line source
# `#include <lowbit/X.hpp>` is checked with -fsyntax-only -std=c++20 -Wall
# -Wextra -Wpedantic -Werror, without -march (the compiler's baseline).
# xsimd's directories (other than /usr/include) are -isystem: its warnings
# are not lowbit's. With CXX empty (compiler not found at configure time)
# the test prints SKIPPED and ctest reports it as skipped.
cmake_minimum_required(VERSION 3.21)

foreach(var COMPILER_NAME INCLUDE_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "lowbit_header_check: ${var} not set")
  endif()
endforeach()
if(NOT CXX)
  message("lowbit_header_check: SKIPPED: ${COMPILER_NAME} was not found when lowbit was configured")
  return()
endif()

file(GLOB headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/lowbit/*.hpp")
list(SORT headers)
if(NOT headers)
  message(FATAL_ERROR "lowbit_header_check: no headers in ${INCLUDE_DIR}/lowbit")
endif()

set(flags -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror "-I${INCLUDE_DIR}")
string(REPLACE "|" ";" SYSTEM_INCLUDES "${SYSTEM_INCLUDES}")
foreach(dir IN LISTS SYSTEM_INCLUDES)
  # The compilers' own system directories stay where they are: -isystem
  # /usr/include would reorder them and break #include_next in <cstdlib>.
  if(dir AND NOT dir MATCHES "^/usr(/local)?/include/?$")
    list(APPEND flags -isystem "${dir}")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(failed "")
foreach(h IN LISTS headers)
  get_filename_component(stem "${h}" NAME_WE)
  set(src "${WORK_DIR}/${stem}.cpp")
  file(WRITE "${src}" "#include <${h}>\n")
  execute_process(COMMAND "${CXX}" ${flags} "${src}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0)
    message(STATUS "${COMPILER_NAME}: ${h} ok")
  else()
    message("${COMPILER_NAME}: ${h} FAILED\n${out}")
    list(APPEND failed "${h}")
  endif()
endforeach()

list(LENGTH headers n)
if(failed)
  list(LENGTH failed nf)
  list(JOIN failed ", " failed)
  message(FATAL_ERROR "lowbit_header_check: ${nf} of ${n} public headers fail alone under ${COMPILER_NAME} (${CXX}): ${failed}")
endif()
message(STATUS "lowbit_header_check: ${n} public headers compile alone under ${COMPILER_NAME} (${CXX}) with -Wall -Wextra -Wpedantic -Werror")
