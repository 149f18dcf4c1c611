# Conan 2 recipe for lowbit, a header-only C++20 library on xsimd.
# From the repository root (docs/packaging.md, section 4):
#   conan create packaging/conan --build=missing -s compiler.cppstd=20
# `conan profile detect` writes the compiler's default standard (gnu17 for
# g++ 12), so the documented commands pass -s compiler.cppstd=20, as for
# conan-center-index's C++20 recipes. The version is read from
# CMakeLists.txt's project(VERSION), the one place it is written.
import os
import re

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir

required_conan_version = ">=2.0"


class LowbitConan(ConanFile):
    name = "lowbit"
    description = "Header-only C++20 low-bit quantization library built on xsimd (QONNX operators)"
    license = "Apache-2.0"
    topics = ("quantization", "simd", "qonnx", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps"
    no_copy_source = True

    def set_version(self):
        # Called when the recipe is exported from the checkout: the version
        # is project(lowbit VERSION x.y.z) in the top-level CMakeLists.txt.
        cmakelists = os.path.join(self.recipe_folder, "..", "..", "CMakeLists.txt")
        found = re.search(r"project\(lowbit\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", load(self, cmakelists))
        if not found:
            raise ConanException(f"lowbit: no project(lowbit VERSION x.y.z) in {cmakelists}")
        if self.version and str(self.version) != found.group(1):
            raise ConanException(f"lowbit: --version {self.version} is not CMakeLists.txt's {found.group(1)}")
        self.version = found.group(1)

    def export_sources(self):
        # The recipe lives in packaging/conan: export the library from two levels up.
        root = os.path.join(self.recipe_folder, "..", "..")
        for pattern in ("CMakeLists.txt", "LICENSE", "cmake/*", "include/*"):
            copy(self, pattern, src=root, dst=self.export_sources_folder)

    def layout(self):
        cmake_layout(self, src_folder=".")

    def requirements(self):
        # xsimd 8.1 or later; lowbit is tested with 8.1, 13.x and 14.x.
        self.requires("xsimd/[>=8.1 <15]")

    def package_id(self):
        # Header-only: one package for every setting.
        self.info.clear()

    def validate(self):
        # A detected profile says gnu17 on g++ 12: pass -s compiler.cppstd=20.
        if self.settings.get_safe("compiler.cppstd"):
            check_min_cppstd(self, 20)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["LOWBIT_BUILD_TESTS"] = False
        tc.cache_variables["LOWBIT_BUILD_BENCHMARKS"] = False
        tc.cache_variables["LOWBIT_BUILD_EXAMPLES"] = False
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()

    def package(self):
        cmake = CMake(self)
        cmake.install()
        copy(self, "LICENSE", src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))
        # conan-center-index's rules: no CMake config or .pc file of the
        # library's own (CMakeDeps and PkgConfigDeps write them), and one
        # license copy (licenses/). lowbit_add_dispatch is kept as a CMake
        # build module that CMakeDeps includes (package_info).
        share = os.path.join(self.package_folder, "share")
        modules = os.path.join(self.package_folder, "lib", "cmake", "lowbit")
        for module in ("lowbit_dispatch.cmake", "lowbit_dispatch_check.cmake"):
            copy(self, module, src=os.path.join(share, "cmake", "lowbit"), dst=modules)
        rmdir(self, share)

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.set_property("cmake_file_name", "lowbit")
        self.cpp_info.set_property("cmake_target_name", "lowbit::lowbit")
        self.cpp_info.set_property("pkg_config_name", "lowbit")
        # lowbit_add_dispatch (docs/dispatch.md), included by CMakeDeps'
        # lowbit-config.cmake after the target lowbit::lowbit is defined.
        self.cpp_info.set_property("cmake_build_modules", [os.path.join("lib", "cmake", "lowbit", "lowbit_dispatch.cmake")])
        # The thread pool (lowbit/parallel.hpp, opt-in threads) uses std::thread.
        if self.settings.os in ("Linux", "FreeBSD"):
            self.cpp_info.system_libs = ["pthread"]
