# Conan 2 recipe for lowbit, a header-only C++20 library on xsimd.
#   conan create packaging/conan --version 0.1.0
# (run from the repository root; see docs/packaging.md). The package is the
# output of lowbit's own `cmake --install` (headers, CMake config, lowbit.pc,
# license); consumers get lowbit::lowbit through CMakeDeps.
import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, rmdir

required_conan_version = ">=2.0"


class LowbitConan(ConanFile):
    name = "lowbit"
    version = "0.1.0"
    description = "Header-only C++20 low-bit quantization library built on xsimd (QONNX operators)"
    license = "Apache-2.0"
    topics = ("quantization", "simd", "qonnx", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps"
    no_copy_source = True
    def export_sources(self):
        # The recipe lives in packaging/conan: export the library from two levels up.
        root = os.path.join(self.recipe_folder, "..", "..")
        for pattern in ("CMakeLists.txt", "LICENSE", "cmake/*", "include/*"):
            copy(self, pattern, src=root, dst=self.export_sources_folder)

    def layout(self):
        cmake_layout(self, src_folder=".")

    def requirements(self):
        # xsimd 8.1 or later (lowbit is tested with 8.1 and 13).
        self.requires("xsimd/[>=8.1 <14]")

    def package_id(self):
        # Header-only: one package for every setting.
        self.info.clear()

    def validate(self):
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

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        # CMakeDeps writes its own lowbit-config.cmake with target
        # lowbit::lowbit; lowbit's own config (with lowbit_add_dispatch) is
        # also in the package, in share/cmake/lowbit.
        self.cpp_info.set_property("cmake_file_name", "lowbit")
        self.cpp_info.set_property("cmake_target_name", "lowbit::lowbit")
        self.cpp_info.set_property("pkg_config_name", "lowbit")
        if self.settings.os in ("Linux", "FreeBSD"):
            self.cpp_info.system_libs = ["pthread"]
