// SPDX-License-Identifier: Apache-2.0
// The package test of the conan recipe (packaging/conan), also built by
// ctest package.find_package against a staged `cmake --install`.
// One IntQuant call whose results are exact; exit status 0 if they are right.
#include <lowbit/lowbit.hpp>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  // IntQuant, signed 4 bits, scale 0.5, zero point 0, ROUND (half to even):
  // x / 0.5 = {0.52, -2.6, 15.8, 2.5} -> {1, -3, 7 (clamped), 2} -> y * 0.5.
  const lowbit::int_quant<> quant{.is_signed = true, .rounding = lowbit::rounding_mode::half_even};
  const std::vector<float> x{0.26f, -1.3f, 7.9f, 1.25f};
  const std::vector<float> want{0.5f, -1.5f, 3.5f, 1.0f};
  std::vector<float> y(x.size());
  quant(x, 0.5f, 0.0f, 4.0f, y);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(y[i]) != std::bit_cast<std::uint32_t>(want[i])) {
      std::printf("test_package: element %zu is %a, expected %a\n", i, y[i], want[i]);
      return 1;
    }
  }
  std::printf("test_package: lowbit int_quant gives {0.5, -1.5, 3.5, 1}\n");
  return 0;
}
