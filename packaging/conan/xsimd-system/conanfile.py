# Conan 2 recipe "xsimd" of lowbit's own, for building offline: it packages
# the xsimd headers installed on this machine (Debian's libxsimd-dev puts
# them in /usr/include/xsimd) instead of downloading xsimd from a remote.
# The version is read from the headers (xsimd/config/xsimd_config.hpp).
#   conan create packaging/conan/xsimd-system -s compiler.cppstd=20
#   LOWBIT_XSIMD_INCLUDE_DIR=/opt/xsimd-14/include conan create packaging/conan/xsimd-system -s compiler.cppstd=20
# (the second packages another copy of the headers).
# Used by ctest package.conan (docs/packaging.md, "Offline"). The package
# mirrors conan-center-index's xsimd: header-library, target name xsimd.
import os
import re

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.files import copy

required_conan_version = ">=2.0"



def _include_dir():
    # The directory holding xsimd/xsimd.hpp: LOWBIT_XSIMD_INCLUDE_DIR, else /usr/include.
    return os.environ.get("LOWBIT_XSIMD_INCLUDE_DIR") or "/usr/include"


def _xsimd_version(include_dir):
    config = os.path.join(include_dir, "xsimd", "config", "xsimd_config.hpp")
    if not os.path.isfile(config):
        return None
    text = open(config, encoding="utf-8").read()
    parts = [re.search(rf"#define\s+XSIMD_VERSION_{p}\s+([0-9]+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise ConanException(f"xsimd-system: no XSIMD_VERSION_MAJOR/MINOR/PATCH in {config}")
    return ".".join(m.group(1) for m in parts)


class XsimdSystemConan(ConanFile):
    name = "xsimd"
    description = "The xsimd headers installed on this machine, packaged for offline use (lowbit's test recipe)"
    license = "BSD-3-Clause"
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    no_copy_source = True
    # Nothing to export: the headers are read from include_dir when packaged,
    # so a package of this recipe is only as good as the machine it came from.
    upload_policy = "skip"

    def _found_version(self):
        version = _xsimd_version(_include_dir())
        if version is None:
            raise ConanException(
                f"xsimd-system: no xsimd headers in {_include_dir()}; install libxsimd-dev "
                "or set LOWBIT_XSIMD_INCLUDE_DIR to the directory that holds xsimd/")
        return version

    def set_version(self):
        found = self._found_version()
        if self.version and str(self.version) != found:
            raise ConanException(f"xsimd-system: --version {self.version}, but the headers in {_include_dir()} are {found}")
        self.version = found

    def package_id(self):
        self.info.clear()

    def package(self):
        found = self._found_version()
        if found != str(self.version):
            raise ConanException(f"xsimd-system: packaging {self.version}, but the headers in {_include_dir()} are {found}")
        src = _include_dir()
        copy(self, "*", src=os.path.join(src, "xsimd"), dst=os.path.join(self.package_folder, "include", "xsimd"))
        # Debian's copy of xsimd's license, when it is there.
        for lic in ("/usr/share/doc/libxsimd-dev/copyright",):
            if os.path.isfile(lic):
                copy(self, os.path.basename(lic), src=os.path.dirname(lic),
                     dst=os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.set_property("cmake_file_name", "xsimd")
        self.cpp_info.set_property("cmake_target_name", "xsimd")
        self.cpp_info.set_property("pkg_config_name", "xsimd")
