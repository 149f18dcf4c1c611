// SPDX-License-Identifier: Apache-2.0
// ctest package.odr: the two units linked together agree bit for bit, and
// with the values the operators are documented to give.
#include <bit>
#include <cstdint>
#include <cstdio>

#include "odr.hpp"

int main() {
  const lowbit_odr::results a = lowbit_odr::from_a();
  const lowbit_odr::results b = lowbit_odr::from_b();
  // IntQuant signed 4 bits, scale 0.5, half-even: {0.52, -2.6, 15.8, 2.5, -200, 0, -1.48, 6}
  // -> {1, -3, 7, 2, -8, 0, -1, 6} * 0.5; BipolarQuant scale 0.5; FloatQuant E4M3FN.
  const lowbit_odr::results want{0.5f, -1.5f, 3.5f, 1.0f, -4.0f, 0.0f, -0.5f, 3.0f,
                                 0.5f, 0.5f, -0.5f,
                                 0.3125f, 448.0f, 448.0f, -448.0f};
  int bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto wa = std::bit_cast<std::uint32_t>(a[i]);
    const auto wb = std::bit_cast<std::uint32_t>(b[i]);
    const auto ww = std::bit_cast<std::uint32_t>(want[i]);
    if (wa != wb || wa != ww) {
      std::printf("package.odr: result %zu: unit a %a, unit b %a, expected %a\n", i, a[i], b[i], want[i]);
      ++bad;
    }
  }
  if (bad != 0) return 1;
  std::printf("package.odr: two units with every public header linked; %zu results agree\n", want.size());
  return 0;
}
