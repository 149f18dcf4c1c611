// SPDX-License-Identifier: Apache-2.0
// Compile-only: a user's program with -Wall -Wextra -Wpedantic -Werror at
// -O2 for the test architecture (AVX-512 with -march=native on such a CPU),
// and without the -Wno-maybe-uninitialized that lowbit's own tests add for
// GCC 12. GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized wherever
// they are inlined (GCC bug 105593); detail/intrinsics.hpp silences it for
// the intrinsic headers, which this file includes first through lowbit.
#include <lowbit/lowbit.hpp>

#include <span>

namespace lowbit_compile_test {

void user_calls(std::span<const float> x, std::span<float> y, lowbit::rounding_mode m) {
  const lowbit::int_quant<> iq{.rounding = m};
  iq(x, 0.05f, 0.0f, 8.0f, y);
  const lowbit::int_quant<lowbit::semantics::exact> iqx{.rounding = m};
  iqx(x, 0.05f, 0.0f, 8.0f, y);
  const lowbit::trunc<lowbit::semantics::exact> tr{.rounding = m};
  tr(x, 0.05f, 0.0f, 8.0f, 0.05f, 4.0f, y);
  const lowbit::minifloat_quant<> fq{.format = lowbit::formats::fp8_e4m3fn, .rounding = m};
  fq(x, 0.05f, y);
  const lowbit::minifloat_quant<lowbit::semantics::exact> fqx{.format = lowbit::formats::fp8_e5m2, .rounding = m};
  fqx(x, 0.05f, y);
  const lowbit::bipolar_quant<> bq{};
  bq(x, 0.05f, y);
}

}  // namespace lowbit_compile_test
