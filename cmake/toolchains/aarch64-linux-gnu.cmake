# Cross-compiling lowbit for aarch64 Linux (NEON through xsimd) with Debian's
# cross toolchain, running the tests under qemu user-mode emulation:
#
#   apt-get install g++-aarch64-linux-gnu qemu-user    (scripts/aarch64.sh)
#   cmake --workflow --preset aarch64                  (uses this file)
#
# or by hand: cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#
# The aarch64 C library and loader are the cross toolchain's, in
# /usr/aarch64-linux-gnu (LOWBIT_AARCH64_SYSROOT). The header-only
# dependencies, xsimd and Catch2, are the host's packages: their CMake
# configs give their imported targets /usr/include as include directory,
# and `-isystem /usr/include` on the cross compiler's command line would put
# the x86-64 glibc headers before the aarch64 ones. So this file builds, at
# configure time, a staging prefix <build>/aarch64-deps/usr holding
#   include/xsimd, include/catch2     symlinks to the host's header folders
#   lib/aarch64-linux-gnu/cmake/xsimd copies of xsimd's *.cmake files
#   lib/cmake/Catch2                  a config for Catch2's headers only
# (copies, not symlinks: those files turn a path that resolves to their
# original folder back into /usr). Loaded from the stage, the configs
# compute the stage as their prefix, and the targets' include directory is
# <stage>/usr/include, which holds nothing but those two folders.
# Host packages elsewhere than /usr: set LOWBIT_AARCH64_HOST_PREFIX.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(LOWBIT_AARCH64_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${LOWBIT_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${LOWBIT_AARCH64_TRIPLE}-g++)

if(NOT DEFINED LOWBIT_AARCH64_SYSROOT)
  set(LOWBIT_AARCH64_SYSROOT /usr/${LOWBIT_AARCH64_TRIPLE})
endif()
if(NOT DEFINED LOWBIT_AARCH64_HOST_PREFIX)
  set(LOWBIT_AARCH64_HOST_PREFIX /usr)
endif()
# Passed on to try_compile projects, which read this file again.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES LOWBIT_AARCH64_SYSROOT LOWBIT_AARCH64_HOST_PREFIX)

# --- running aarch64 programs: qemu-aarch64 -L <sysroot> ----------------------
# CMake puts the emulator before every test command that names a target
# (add_test) and Catch2's catch_discover_tests runs the test programs with
# it at build time to list their tests. -L: where qemu finds the aarch64
# loader (/lib/ld-linux-aarch64.so.1) and the C and C++ libraries.
find_program(LOWBIT_QEMU_AARCH64 qemu-aarch64)
if(NOT LOWBIT_QEMU_AARCH64)
  message(FATAL_ERROR "aarch64-linux-gnu.cmake: qemu-aarch64 not found; install qemu-user "
                      "(./scripts/aarch64.sh installs it and the cross compiler)")
endif()
if(NOT EXISTS "${LOWBIT_AARCH64_SYSROOT}/lib/ld-linux-aarch64.so.1")
  message(FATAL_ERROR "aarch64-linux-gnu.cmake: no ${LOWBIT_AARCH64_SYSROOT}/lib/ld-linux-aarch64.so.1; "
                      "install g++-aarch64-linux-gnu or set LOWBIT_AARCH64_SYSROOT")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR "${LOWBIT_QEMU_AARCH64};-L;${LOWBIT_AARCH64_SYSROOT}")

# --- the staging prefix for the host's header-only packages -----------------
# Made by the top-level configure only (try_compile projects find no packages).
get_property(_lowbit_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
set(LOWBIT_AARCH64_STAGE "${CMAKE_BINARY_DIR}/aarch64-deps")
if(NOT _lowbit_in_try_compile)
  set(_stage "${LOWBIT_AARCH64_STAGE}/usr")
  set(_host "${LOWBIT_AARCH64_HOST_PREFIX}")
  file(REMOVE_RECURSE "${LOWBIT_AARCH64_STAGE}")
  file(MAKE_DIRECTORY "${_stage}/include")

  # xsimd (headers only): its config folder copied at the same depth below
  # the stage as below the host prefix (the configs count the levels up to
  # their prefix); a multiarch lib/<x86 triple> becomes lib/aarch64-linux-gnu,
  # where find_package looks for this target.
  if(IS_DIRECTORY "${_host}/include/xsimd")
    file(CREATE_LINK "${_host}/include/xsimd" "${_stage}/include/xsimd" SYMBOLIC)
  endif()
  file(GLOB _dirs LIST_DIRECTORIES true
    "${_host}/share/cmake/xsimd" "${_host}/lib/cmake/xsimd" "${_host}/lib/*-linux-gnu*/cmake/xsimd")
  foreach(_dir IN LISTS _dirs)
    if(IS_DIRECTORY "${_dir}")
      file(RELATIVE_PATH _rel "${_host}" "${_dir}")
      string(REGEX REPLACE "^lib/[^/]*-linux-gnu[^/]*/" "lib/${LOWBIT_AARCH64_TRIPLE}/" _rel "${_rel}")
      file(GLOB _files "${_dir}/*.cmake")
      file(COPY ${_files} DESTINATION "${_stage}/${_rel}")
    endif()
  endforeach()

  # Catch2 2.13 (catch2/catch.hpp): Debian's config also imports
  # Catch2::Catch2WithMain, a prebuilt x86-64 library, so the stage gets a
  # config of its own with the header-only target Catch2::Catch2 (the tests
  # then build their main with the cross compiler), the package's version
  # file, and the package's folder on CMAKE_MODULE_PATH for Catch.cmake
  # (catch_discover_tests). Catch2 3 is a compiled library: not staged.
  set(_catch_dir "${_host}/lib/cmake/Catch2")
  if(EXISTS "${_host}/include/catch2/catch.hpp" AND EXISTS "${_catch_dir}/Catch2ConfigVersion.cmake")
    file(CREATE_LINK "${_host}/include/catch2" "${_stage}/include/catch2" SYMBOLIC)
    file(COPY "${_catch_dir}/Catch2ConfigVersion.cmake" DESTINATION "${_stage}/lib/cmake/Catch2")
    file(WRITE "${_stage}/lib/cmake/Catch2/Catch2Config.cmake"
      "# Written by cmake/toolchains/aarch64-linux-gnu.cmake: the header-only Catch2 2 of\n"
      "# ${_catch_dir}, its headers in ${_stage}/include.\n"
      "if(NOT TARGET Catch2::Catch2)\n"
      "  add_library(Catch2::Catch2 INTERFACE IMPORTED)\n"
      "  set_target_properties(Catch2::Catch2 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES \"${_stage}/include\")\n"
      "endif()\n"
      "list(APPEND CMAKE_MODULE_PATH \"${_catch_dir}\")\n")
  endif()
endif()

# --- where find_* look --------------------------------------------------------
# Packages and headers: the stage and the aarch64 sysroot only; libraries:
# the sysroot; programs (qemu, tools): the host.
set(CMAKE_FIND_ROOT_PATH "${LOWBIT_AARCH64_STAGE}" "${LOWBIT_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
