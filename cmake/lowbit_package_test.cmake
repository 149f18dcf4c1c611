# Packaging test, run by ctest as
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -DBUILD_TYPE=...
#         -DPREFIX_PATH=... -DXSIMD_DIR=... [-DXSIMD_INCLUDES=<dir>|...]
#         [-DTEST_PACKAGE_DIR=<repo>/packaging/conan/test_package] [-DDISPATCH=ON]
#         -P lowbit_package_test.cmake
# Installs the build tree to WORK_DIR/stage, writes a consumer project that
# does find_package(lowbit CONFIG REQUIRED) and includes every public header,
# then configures, builds and runs it. With TEST_PACKAGE_DIR, the conan
# recipe's test_package project is built against the stage and run, and its
# source once more with the flags of the installed lowbit.pc. With DISPATCH,
# a second consumer uses the installed lowbit_add_dispatch (ARCHS sse2 avx2,
# built at -O0 to keep the test short) and checks dispatch::run() against the operator.
cmake_minimum_required(VERSION 3.21)

foreach(var BUILD_DIR WORK_DIR GENERATOR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "lowbit_package_test: ${var} not set")
  endif()
endforeach()

set(stage "${WORK_DIR}/stage")
set(src "${WORK_DIR}/consumer")
set(bin "${WORK_DIR}/consumer-build")
file(REMOVE_RECURSE "${stage}" "${src}" "${bin}")

set(config_args)
if(BUILD_TYPE)
  set(config_args --config "${BUILD_TYPE}")
endif()
execute_process(
  COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${stage}" ${config_args}
  COMMAND_ERROR_IS_FATAL ANY)

# Every installed public header (not detail/), included once each.
file(GLOB_RECURSE headers RELATIVE "${stage}/include" "${stage}/include/lowbit/*.hpp")
list(FILTER headers EXCLUDE REGEX "/detail/")
list(SORT headers)
if(NOT headers)
  message(FATAL_ERROR "lowbit_package_test: no headers installed under ${stage}/include/lowbit")
endif()
set(includes "")
foreach(h IN LISTS headers)
  string(APPEND includes "#include <${h}>\n")
endforeach()
file(WRITE "${src}/main.cpp" "${includes}\nint main() { return 0; }\n")

file(WRITE "${src}/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.21)
project(lowbit_consumer LANGUAGES CXX)
find_package(lowbit 0.1 CONFIG REQUIRED)
message(STATUS "consumer: lowbit ${lowbit_VERSION} from ${lowbit_DIR}")
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE lowbit::lowbit)
]=])

# Settings go through an initial-cache file: lists survive it unsplit.
list(PREPEND PREFIX_PATH "${stage}")
set(init "set(CMAKE_CXX_COMPILER [==[${CXX}]==] CACHE FILEPATH \"\")\n")
string(APPEND init "set(CMAKE_PREFIX_PATH [==[${PREFIX_PATH}]==] CACHE STRING \"\")\n")
string(APPEND init "set(CMAKE_FIND_USE_PACKAGE_REGISTRY OFF CACHE BOOL \"\")\n")
if(XSIMD_DIR)
  string(APPEND init "set(xsimd_DIR [==[${XSIMD_DIR}]==] CACHE PATH \"\")\n")
endif()
if(BUILD_TYPE)
  string(APPEND init "set(CMAKE_BUILD_TYPE [==[${BUILD_TYPE}]==] CACHE STRING \"\")\n")
endif()
file(WRITE "${WORK_DIR}/init.cmake" "${init}")
set(configure_args -G "${GENERATOR}" -S "${src}" -B "${bin}" -C "${WORK_DIR}/init.cmake")
execute_process(COMMAND "${CMAKE_COMMAND}" ${configure_args} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${bin}" ${config_args} COMMAND_ERROR_IS_FATAL ANY)

file(GLOB_RECURSE exe "${bin}/consumer" "${bin}/*/consumer" "${bin}/consumer.exe" "${bin}/*/consumer.exe")
list(GET exe 0 exe)
execute_process(COMMAND "${exe}" COMMAND_ERROR_IS_FATAL ANY)
list(LENGTH headers n)
message(STATUS "lowbit_package_test: installed package found, ${n} public headers compiled, consumer ran")

# The conan recipe's test_package (CMakeLists.txt and test_package.cpp, as
# they are), built against the same staged install with CMAKE_PREFIX_PATH.
if(TEST_PACKAGE_DIR)
  set(tbin "${WORK_DIR}/test_package-build")
  file(REMOVE_RECURSE "${tbin}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -G "${GENERATOR}" -S "${TEST_PACKAGE_DIR}" -B "${tbin}"
    -C "${WORK_DIR}/init.cmake" COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND "${CMAKE_COMMAND}" --build "${tbin}" ${config_args} COMMAND_ERROR_IS_FATAL ANY)
  file(GLOB_RECURSE texe "${tbin}/test_package" "${tbin}/*/test_package" "${tbin}/test_package.exe" "${tbin}/*/test_package.exe")
  if(NOT texe)
    message(FATAL_ERROR "lowbit_package_test: no test_package program under ${tbin}")
  endif()
  list(GET texe 0 texe)
  execute_process(COMMAND "${texe}" COMMAND_ERROR_IS_FATAL ANY)
  message(STATUS "lowbit_package_test: packaging/conan/test_package built against the staged install and ran")

  # pkg-config: the installed lowbit.pc gives the flags to build the same
  # source by hand. Skipped (and said so) without pkg-config or xsimd.pc.
  find_program(pkg_config NAMES pkg-config pkgconf)
  if(NOT pkg_config)
    message(STATUS "lowbit_package_test: pkg-config step SKIPPED: no pkg-config program")
  elseif(NOT EXISTS "${stage}/share/pkgconfig/lowbit.pc")
    message(FATAL_ERROR "lowbit_package_test: ${stage}/share/pkgconfig/lowbit.pc was not installed")
  else()
    if(DEFINED ENV{PKG_CONFIG_PATH} AND NOT "$ENV{PKG_CONFIG_PATH}" STREQUAL "")
      set(ENV{PKG_CONFIG_PATH} "${stage}/share/pkgconfig:$ENV{PKG_CONFIG_PATH}")
    else()
      set(ENV{PKG_CONFIG_PATH} "${stage}/share/pkgconfig")
    endif()
    execute_process(COMMAND "${pkg_config}" --exists xsimd RESULT_VARIABLE has_xsimd_pc)
    if(NOT has_xsimd_pc EQUAL 0)
      message(STATUS "lowbit_package_test: pkg-config step SKIPPED: xsimd has no .pc file on the pkg-config path")
    else()
      execute_process(COMMAND "${pkg_config}" --cflags --libs lowbit
        OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
      separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
      # This leg's xsimd first (its .pc may name /usr/include).
      set(xsimd_flags)
      string(REPLACE "|" ";" XSIMD_INCLUDES "${XSIMD_INCLUDES}")
      foreach(dir IN LISTS XSIMD_INCLUDES)
        if(dir AND NOT dir MATCHES "^/usr(/local)?/include/?$")
          list(APPEND xsimd_flags -isystem "${dir}")
        endif()
      endforeach()
      set(pexe "${WORK_DIR}/test_package-pkg-config")
      execute_process(COMMAND "${CXX}" -std=c++20 ${xsimd_flags} "${TEST_PACKAGE_DIR}/test_package.cpp"
        ${pc_flags} -o "${pexe}" COMMAND_ERROR_IS_FATAL ANY)
      execute_process(COMMAND "${pexe}" COMMAND_ERROR_IS_FATAL ANY)
      list(JOIN pc_flags " " pc_flags)
      message(STATUS "lowbit_package_test: test_package.cpp built with `pkg-config --cflags --libs lowbit` (${pc_flags}) and ran")
    endif()
  endif()
endif()

if(NOT DISPATCH)
  return()
endif()
set(dsrc "${WORK_DIR}/consumer-dispatch")
set(dbin "${WORK_DIR}/consumer-dispatch-build")
file(REMOVE_RECURSE "${dsrc}" "${dbin}")
file(WRITE "${dsrc}/main.cpp" [=[
#include <lowbit/dispatch.hpp>
#include <lowbit/int_quant.hpp>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  const std::vector<float> x{0.3f, -1.7f, 2.5f, 100.0f, -0.25f, 7.75f, 1e-40f, -3.5f, 0.74f};
  std::vector<float> got(x.size()), want(x.size());
  const lowbit::int_quant<> q;
  lowbit::dispatch::run(q, x, 0.5f, 0.0f, 4.0f, got);
  q(x, 0.5f, 0.0f, 4.0f, want);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::bit_cast<std::uint32_t>(got[i]) != std::bit_cast<std::uint32_t>(want[i])) {
      std::printf("consumer-dispatch: element %zu differs: %a vs %a\n", i, got[i], want[i]);
      return 1;
    }
  std::printf("consumer-dispatch: lowbit::dispatch::run on %s matches the operator\n",
              std::string(lowbit::dispatch::active()).c_str());
  return 0;
}
]=])
file(WRITE "${dsrc}/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.21)
project(lowbit_consumer_dispatch LANGUAGES CXX)
find_package(lowbit 0.1 CONFIG REQUIRED)
if(NOT COMMAND lowbit_add_dispatch OR NOT EXISTS "${lowbit_DIR}/lowbit_dispatch_check.cmake")
  message(FATAL_ERROR "the lowbit package does not provide lowbit_add_dispatch and lowbit_dispatch_check.cmake")
endif()
add_executable(consumer-dispatch main.cpp)
target_link_libraries(consumer-dispatch PRIVATE lowbit::lowbit)
lowbit_add_dispatch(consumer-dispatch ARCHS avx2 sse2)
]=])
string(REGEX REPLACE "set\\(CMAKE_BUILD_TYPE [^\n]*\n" "" dinit "${init}")
string(APPEND dinit "set(CMAKE_BUILD_TYPE Debug CACHE STRING \"\")\n")
string(APPEND dinit "set(CMAKE_CXX_FLAGS_DEBUG -O0 CACHE STRING \"\")\n")
file(WRITE "${WORK_DIR}/init-dispatch.cmake" "${dinit}")
execute_process(COMMAND "${CMAKE_COMMAND}" -G "${GENERATOR}" -S "${dsrc}" -B "${dbin}"
  -C "${WORK_DIR}/init-dispatch.cmake" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${dbin}" --config Debug COMMAND_ERROR_IS_FATAL ANY)
file(GLOB_RECURSE dexe "${dbin}/consumer-dispatch" "${dbin}/*/consumer-dispatch")
list(GET dexe 0 dexe)
execute_process(COMMAND "${dexe}" COMMAND_ERROR_IS_FATAL ANY)
