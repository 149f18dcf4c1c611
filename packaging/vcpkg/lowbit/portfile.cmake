# vcpkg overlay port for lowbit, built from this source tree (the port sits
# in packaging/vcpkg/lowbit of the repository):
#   vcpkg install lowbit --overlay-ports=<repo>/packaging/vcpkg
# vcpkg's ABI hash covers this directory, not the checkout's headers: after
# changing lowbit, reinstall without the binary cache (docs/packaging.md,
# "Stale packages"). The version is vcpkg.json's, which ctest
# package.metadata keeps equal to CMakeLists.txt's.
# Header-only: one release configuration, no debug tree.
set(VCPKG_BUILD_TYPE release)

get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT EXISTS "${SOURCE_PATH}/include/lowbit/lowbit.hpp")
  message(FATAL_ERROR "lowbit port: no lowbit source tree at ${SOURCE_PATH}")
endif()

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DLOWBIT_BUILD_TESTS=OFF
    -DLOWBIT_BUILD_BENCHMARKS=OFF
    -DLOWBIT_BUILD_EXAMPLES=OFF
)
vcpkg_cmake_install()

# lowbit installs its CMake package to share/cmake/lowbit: move it to
# share/lowbit, where vcpkg's find_package looks.
vcpkg_cmake_config_fixup(CONFIG_PATH share/cmake/lowbit)
vcpkg_fixup_pkgconfig()

# Header-only: nothing in lib/ or debug/.
file(REMOVE_RECURSE
  "${CURRENT_PACKAGES_DIR}/debug"
  "${CURRENT_PACKAGES_DIR}/lib"
  "${CURRENT_PACKAGES_DIR}/share/doc")

vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
