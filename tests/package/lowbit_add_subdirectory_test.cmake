# ctest package.add_subdirectory, run as
#   cmake -DSOURCE_DIR=<lowbit source> -DWORK_DIR=... -DGENERATOR=... -DCXX=...
#         -DBUILD_TYPE=... -DPREFIX_PATH=... -DXSIMD_DIR=... -P lowbit_add_subdirectory_test.cmake
# Configures tests/package/add_subdirectory (a project that does
# add_subdirectory(lowbit)), builds its consumer and runs it.
cmake_minimum_required(VERSION 3.21)

foreach(var SOURCE_DIR WORK_DIR GENERATOR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "lowbit_add_subdirectory_test: ${var} not set")
  endif()
endforeach()

set(bin "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(init "set(CMAKE_CXX_COMPILER [==[${CXX}]==] CACHE FILEPATH \"\")\n")
string(APPEND init "set(LOWBIT_SOURCE_DIR [==[${SOURCE_DIR}]==] CACHE PATH \"\")\n")
string(APPEND init "set(CMAKE_PREFIX_PATH [==[${PREFIX_PATH}]==] CACHE STRING \"\")\n")
string(APPEND init "set(CMAKE_FIND_USE_PACKAGE_REGISTRY OFF CACHE BOOL \"\")\n")
if(XSIMD_DIR)
  string(APPEND init "set(xsimd_DIR [==[${XSIMD_DIR}]==] CACHE PATH \"\")\n")
endif()
set(config_args)
if(BUILD_TYPE)
  string(APPEND init "set(CMAKE_BUILD_TYPE [==[${BUILD_TYPE}]==] CACHE STRING \"\")\n")
  set(config_args --config "${BUILD_TYPE}")
endif()
file(WRITE "${WORK_DIR}/init.cmake" "${init}")

execute_process(COMMAND "${CMAKE_COMMAND}" -G "${GENERATOR}"
  -S "${SOURCE_DIR}/tests/package/add_subdirectory" -B "${bin}" -C "${WORK_DIR}/init.cmake"
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${bin}" --target consumer ${config_args}
  COMMAND_ERROR_IS_FATAL ANY)
file(GLOB_RECURSE exe "${bin}/consumer" "${bin}/*/consumer" "${bin}/consumer.exe" "${bin}/*/consumer.exe")
if(NOT exe)
  message(FATAL_ERROR "lowbit_add_subdirectory_test: no consumer program under ${bin}")
endif()
list(GET exe 0 exe)
execute_process(COMMAND "${exe}" COMMAND_ERROR_IS_FATAL ANY)
message(STATUS "lowbit_add_subdirectory_test: add_subdirectory(lowbit) consumer built and ran")
