// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/bipolar_quant.hpp.
#include <lowbit/bipolar_quant.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"
#include "support/row_route.hpp"
#include "support/scalar_route.hpp"
#include "support/test_util.hpp"

using lowbit::semantics;
using lowbit::shape;
using lowbit::strided_view;
using lowbit_test::bits;
using lowbit_test::inf;
using lowbit_test::nan_f;

TEST_CASE("bipolar_quant: sign times scale, -0 counts as positive", "[bipolar_quant]") {
  std::vector<float> x{0.3f, -0.0f, 0.0f, -2.0f, inf, -inf, std::numeric_limits<float>::denorm_min(),
                       -std::numeric_limits<float>::denorm_min()};
  std::vector<float> y(x.size());
  lowbit::bipolar_quant<>{}(x, 0.5f, y);
  const std::vector<float> want{0.5f, 0.5f, 0.5f, -0.5f, 0.5f, -0.5f, 0.5f, -0.5f};
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(bits(y[i]) == bits(want[i]));
  lowbit::bipolar_quant<semantics::exact>{}(x, 0.5f, y);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(bits(y[i]) == bits(want[i]));
}

TEST_CASE("bipolar_quant: NaN gives -scale in reference and NaN in exact", "[bipolar_quant]") {
  std::vector<float> x{nan_f, -nan_f}, y(2);
  lowbit::bipolar_quant<>{}(x, 3.0f, y);
  CHECK(y[0] == -3.0f);
  CHECK(y[1] == -3.0f);
  lowbit::bipolar_quant<semantics::exact>{}(x, 3.0f, y);
  CHECK(std::isnan(y[0]));
  CHECK(std::isnan(y[1]));
}

TEST_CASE("bipolar_quant: a NaN scale gives that NaN, quieted, with its own sign, in every lane and tail",
          "[bipolar_quant]") {
  // Reference semantics: (x >= 0 ? 1 : -1) * s, with s a NaN per element:
  // the product is s quieted, its sign kept, as numpy (and the batches)
  // give it, for negative x too; -s would flip the sign (GCC folded the
  // scalar kernel's -1 * s into -s: the tails and the scalar path gave
  // 0xffc00000). Every length through two batches, SIMD and scalar, in
  // place too; NaNs of both signs, quiet and signalling.
  for (const std::uint32_t nb : {0x7fc00000u, 0xffc00000u, 0x7fa00001u, 0xffa00001u, 0x7fc12345u})
    for (const bool simd : {true, false})
      for (std::size_t n = 1; n <= 40; ++n) {
        CAPTURE(nb, simd, n);
        const lowbit::detail::simd_scope path(simd);
        std::vector<float> x(n), s(n, std::bit_cast<float>(nb)), y(n, 42.0f);
        for (std::size_t i = 0; i < n; ++i) x[i] = (i % 3 == 0 ? 1.0f : -1.0f) * (0.5f + static_cast<float>(i));
        lowbit::bipolar_quant<>{}(x, s, y);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < n; ++i) bad += bits(y[i]) != (nb | 0x00400000u);
        CHECK(bad == 0);
        // Per channel: [n, 1] scale over [n, 3].
        std::vector<float> x3(3 * n), y3(3 * n, 42.0f);
        for (std::size_t i = 0; i < 3 * n; ++i) x3[i] = x[i % n];
        lowbit::bipolar_quant<>{}(strided_view<const float>(x3.data(), {n, 3}),
                                  strided_view<const float>(s.data(), {n, 1}), strided_view<float>(y3.data(), {n, 3}));
        bad = 0;
        for (std::size_t i = 0; i < 3 * n; ++i) bad += bits(y3[i]) != (nb | 0x00400000u);
        CHECK(bad == 0);
      }
}

TEST_CASE("bipolar_quant: infinities, subnormal inputs and subnormal scales", "[bipolar_quant]") {
  const float dmin = std::numeric_limits<float>::denorm_min();
  const std::vector<float> x{inf, -inf, dmin, -dmin, 0x1p-130f, -0x1p-130f};
  const std::vector<float> want{0.75f, -0.75f, 0.75f, -0.75f, 0.75f, -0.75f};
  std::vector<float> y(x.size());
  lowbit::bipolar_quant<>{}(x, 0.75f, y);
  CHECK(y == want);
  lowbit::bipolar_quant<lowbit::semantics::exact>{}(x, 0.75f, y);
  CHECK(y == want);
  // A subnormal scale gives subnormal outputs, exactly.
  lowbit::bipolar_quant<lowbit::semantics::exact>{}(x, 0x1p-140f, y);
  CHECK(y[0] == 0x1p-140f);
  CHECK(y[1] == -0x1p-140f);
  lowbit::bipolar_quant<>{}(x, dmin, y);
  CHECK(y[2] == dmin);
  CHECK(y[3] == -dmin);
}

TEST_CASE("bipolar_quant: per-channel scale, rank growth, SIMD equals scalar", "[bipolar_quant]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(3 * 41, 21);
  const std::vector<float> s{0.5f, 2.0f, 1e-40f};
  lowbit::bipolar_quant<semantics::exact> op;
  CHECK(op.output_shape(strided_view<const float>(x.data(), {41}),
                        strided_view<const float>(s.data(), {3, 1})) == shape{3, 41});
  std::vector<float> a(3 * 41), b(3 * 41);
  op(strided_view<const float>(x.data(), {3, 41}), strided_view<const float>(s.data(), {3, 1}), 
     strided_view<float>(a.data(), {3, 41}));
  {
    const lowbit::detail::simd_scope scalar(false);  // the scalar kernels
    op(strided_view<const float>(x.data(), {3, 41}), strided_view<const float>(s.data(), {3, 1}),
       strided_view<float>(b.data(), {3, 41}));
  }
  CHECK(lowbit_test::first_bit_difference(a, b) == -1);
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < 41; ++i) {
      const float xi = x[c * 41 + i];
      const float want = std::isnan(xi) ? nan_f : (xi >= 0 ? s[c] : -s[c]);
      if (std::isnan(want))
        CHECK(std::isnan(a[c * 41 + i]));
      else
        CHECK(bits(a[c * 41 + i]) == bits(want));
    }
  // Every tail length, both paths.
  for (std::size_t n = 0; n <= 2 * xsimd::batch<float>::size + 1; ++n) {
    std::vector<float> xs(x.begin(), x.begin() + n), ya(n + 1, 7.0f), yb(n + 1, 7.0f);
    lowbit::bipolar_quant<> r;
    r(xs, 0.25f, std::span<float>(ya.data(), n));
    const lowbit::detail::simd_scope scalar(false);  // the scalar kernels
    r(xs, 0.25f, std::span<float>(yb.data(), n));
    CHECK(lowbit_test::first_bit_difference(ya, yb) == -1);
    CHECK(ya[n] == 7.0f);
  }
}

TEST_CASE("bipolar_quant: errors leave y untouched", "[bipolar_quant][errors]") {
  std::vector<float> x{1, 2, 3}, y(3, 9.0f);
  std::vector<float> s2{1, 2};
  REQUIRE_THROWS_WITH(lowbit::bipolar_quant<>{}(x, s2, y), lowbit_test::contains_substring("do not broadcast"));
  std::vector<float> y2(2, 9.0f);
  REQUIRE_THROWS_WITH(lowbit::bipolar_quant<>{}(x, 1.0f, y2), lowbit_test::contains_substring("y has shape [2]"));
  for (float bad : {0.0f, -1.0f, inf, nan_f})
    REQUIRE_THROWS_WITH(lowbit::bipolar_quant<semantics::exact>{}(x, bad, y),
                        lowbit_test::contains_substring("scale"));
  CHECK_NOTHROW(lowbit::bipolar_quant<>{}(x, -1.0f, std::vector<float>(3)));  // reference computes it
  for (float v : y) CHECK(v == 9.0f);
  for (float v : y2) CHECK(v == 9.0f);
}

TEST_CASE("bipolar_quant: the scalar route gives the general route's bits", "[bipolar_quant][route]") {
  const std::vector<float> xf = lowbit_test::mixed_values<float>(203, 43);
  const std::vector<double> xd = lowbit_test::mixed_values<double>(203, 47);
  for (const float s : {0.05f, 0.25f, 3.0f, 1e-40f}) {
    CAPTURE(s);
    lowbit_test::require_scalar_route_bits(lowbit::bipolar_quant<>{}, xf, s);
    lowbit_test::require_scalar_route_bits(lowbit::bipolar_quant<lowbit::semantics::exact>{}, xf, s);
    lowbit_test::require_scalar_route_bits(lowbit::bipolar_quant<>{}, xd, double(s));
    lowbit_test::require_scalar_route_bits(lowbit::bipolar_quant<lowbit::semantics::exact>{}, xd, double(s));
  }
  // Reference semantics take any scale, the exact ones reject these. The
  // scalar route's reference loop selects s or -s: zeros and infinities of
  // either sign, and NaNs of either sign, quiet or signaling (which a
  // product by -1 quiets and keeps the sign of, unlike -s).
  for (const float s : {-2.0f, 0.0f, -0.0f, lowbit_test::inf, -lowbit_test::inf, lowbit_test::nan_f,
                        -lowbit_test::nan_f, std::numeric_limits<float>::signaling_NaN(),
                        -std::numeric_limits<float>::signaling_NaN(), -1e-40f}) {
    CAPTURE(s);
    lowbit_test::require_scalar_route_bits(lowbit::bipolar_quant<>{}, xf, s);
    std::vector<float> x{1, -2, 3}, y(3, 42.0f);
    lowbit_test::check_rejected([&] { lowbit::bipolar_quant<lowbit::semantics::exact>{}(x, s, y); }, y, "scale");
  }
}

TEST_CASE("bipolar_quant: the row route gives the general route's bits", "[bipolar_quant][route]") {
  const std::vector<float> xf = lowbit_test::mixed_values<float>(1400, 53);
  const std::vector<double> xd = lowbit_test::mixed_values<double>(1400, 59);
  const std::vector<float> sf{0.05f, 0.25f, 3.0f, 1e-40f, 0.125f, 7.0f, 2.5f};
  const std::vector<double> sd(sf.begin(), sf.end());
  const auto call = [](const auto& op) {
    return [&op](const auto& xv, const auto& sv, const auto& yv) { op(xv, sv, yv); };
  };
  const lowbit::bipolar_quant<> ref;
  const lowbit::bipolar_quant<lowbit::semantics::exact> ex;
  lowbit_test::require_row_route_bits(xf, sf, call(ref));
  lowbit_test::require_row_route_bits(xf, sf, call(ex));
  lowbit_test::require_row_route_bits(xd, sd, call(ref));
  lowbit_test::require_row_route_bits(xd, sd, call(ex));
  // Reference semantics take any scale per row (NaN, zeros, negatives); the
  // exact ones reject them, naming the row, with nothing written.
  const std::vector<float> odd{-2.0f, 0.0f, -0.0f, lowbit_test::nan_f, -lowbit_test::inf, 1.0f, -1e-40f};
  lowbit_test::require_row_route_bits(xf, odd, call(ref));
  const std::vector<float> x(4 * 32, 0.5f), bad{1.0f, 1.0f, 1.0f, -1.0f};
  std::vector<float> y(4 * 32, 42.0f);
  lowbit_test::check_rejected([&] {
    ex(lowbit::strided_view<const float>(x.data(), {4, 32}), lowbit::strided_view<const float>(bad.data(), {4, 1}),
       lowbit::strided_view<float>(y.data(), {4, 32}));
  }, y, "scale[3, 0] = -1");
}
