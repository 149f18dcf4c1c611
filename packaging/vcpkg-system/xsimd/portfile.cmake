# vcpkg overlay port "xsimd" of lowbit's own, for building offline: it
# packages the xsimd headers installed on this machine (Debian's
# libxsimd-dev: /usr/include/xsimd) instead of downloading xsimd. Used by
# ctest package.vcpkg (docs/packaging.md, section 3, "Offline"):
#   vcpkg install lowbit --overlay-ports=<repo>/packaging/vcpkg --overlay-ports=<repo>/packaging/vcpkg-system/xsimd
# Another copy of the headers: LOWBIT_XSIMD_INCLUDE_DIR=<dir holding xsimd/>
# with VCPKG_KEEP_ENV_VARS=LOWBIT_XSIMD_INCLUDE_DIR (vcpkg clears the
# environment of a port build). The directory is not part of vcpkg's ABI
# hash: after changing it, install with --binarysource=clear.
# It installs what vcpkg's own xsimd port does for CMake and pkg-config:
# share/xsimd/xsimdConfig.cmake (target xsimd, version file that accepts
# the same major version) and share/pkgconfig/xsimd.pc.
set(VCPKG_BUILD_TYPE release)

set(include_dir "$ENV{LOWBIT_XSIMD_INCLUDE_DIR}")
if(include_dir STREQUAL "")
  set(include_dir "/usr/include")
endif()
set(config "${include_dir}/xsimd/config/xsimd_config.hpp")
if(NOT EXISTS "${config}")
  message(FATAL_ERROR "xsimd overlay port: no xsimd headers in ${include_dir} (install libxsimd-dev or set LOWBIT_XSIMD_INCLUDE_DIR)")
endif()
file(READ "${config}" text)
foreach(part MAJOR MINOR PATCH)
  if(NOT text MATCHES "#define[ \t]+XSIMD_VERSION_${part}[ \t]+([0-9]+)")
    message(FATAL_ERROR "xsimd overlay port: no XSIMD_VERSION_${part} in ${config}")
  endif()
  set(v_${part} "${CMAKE_MATCH_1}")
endforeach()
set(xsimd_version "${v_MAJOR}.${v_MINOR}.${v_PATCH}")
message(STATUS "xsimd overlay port: xsimd ${xsimd_version} from ${include_dir}")

file(INSTALL "${include_dir}/xsimd" DESTINATION "${CURRENT_PACKAGES_DIR}/include")

file(WRITE "${CURRENT_PACKAGES_DIR}/share/xsimd/xsimdConfig.cmake" [=[
# xsimd, header-only, packaged from the system's headers by lowbit's overlay port.
get_filename_component(_xsimd_prefix "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
if(NOT TARGET xsimd)
  add_library(xsimd INTERFACE IMPORTED)
  set_target_properties(xsimd PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_xsimd_prefix}/include")
endif()
set(xsimd_INCLUDE_DIRS "${_xsimd_prefix}/include")
unset(_xsimd_prefix)
]=])
file(WRITE "${CURRENT_PACKAGES_DIR}/share/xsimd/xsimdConfigVersion.cmake" "\
set(PACKAGE_VERSION \"${xsimd_version}\")
if(PACKAGE_FIND_VERSION AND NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL \"${v_MAJOR}\")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(PACKAGE_FIND_VERSION AND PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
")
file(WRITE "${CURRENT_PACKAGES_DIR}/share/pkgconfig/xsimd.pc" "\
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include

Name: xsimd
Description: xsimd headers (system copy)
Version: ${xsimd_version}
Cflags: -I\${includedir}
")

if(EXISTS "/usr/share/doc/libxsimd-dev/copyright")
  vcpkg_install_copyright(FILE_LIST "/usr/share/doc/libxsimd-dev/copyright")
else()
  file(WRITE "${CURRENT_PACKAGES_DIR}/share/${PORT}/copyright" "xsimd: BSD-3-Clause (headers taken from ${include_dir})\n")
endif()
