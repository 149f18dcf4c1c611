// SPDX-License-Identifier: Apache-2.0
// Compile-only: a user's program with -Wall -Wextra -Wpedantic -Werror at
// -O2 for the test architecture (AVX-512 with -march=native on such a CPU),
// and without the -Wno-maybe-uninitialized that lowbit's own tests add for
// GCC 12. GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized wherever
// they are inlined (GCC bug 105593); detail/intrinsics.hpp silences it for
// the intrinsic headers, which this file includes first through lowbit.
#include <lowbit/lowbit.hpp>

#include <cstddef>
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
  const lowbit::trunc_v1<> tr1{.rounding = m};
  tr1(x, 0.05f, 0.0f, 8.0f, 4.0f, y);
}

// Per channel on a batch of images (the row route with blocks): x and y
// [N, C, H, W], the scale [1, C, 1, 1].
void user_channel_calls(const float* x, float* y, const float* s, std::size_t n, std::size_t c, std::size_t hw,
                        lowbit::rounding_mode m) {
  const lowbit::strided_view<const float> xv(x, {n, c, hw, 1}), sv(s, {1, c, 1, 1});
  const lowbit::strided_view<float> yv(y, {n, c, hw, 1});
  lowbit::int_quant<>{.rounding = m}(xv, sv, 0.0f, 8.0f, yv);
  lowbit::trunc<>{.rounding = m}(xv, sv, 0.0f, 8.0f, 0.05f, 4.0f, yv);
  lowbit::trunc_v1<lowbit::semantics::exact>{.rounding = m}(xv, sv, 0.0f, 8.0f, 4.0f, yv);
  lowbit::minifloat_quant<>{.format = lowbit::formats::fp8_e4m3fn, .rounding = m}(xv, sv, yv);
}

}  // namespace lowbit_compile_test
