// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/trunc.hpp (Trunc opset 2 and opset 1).
#include <lowbit/trunc.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"
#include "support/row_route.hpp"
#include "support/scalar_route.hpp"
#include "support/test_util.hpp"

using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit::shape;
using lowbit::strided_view;
using lowbit_test::bits;
using lowbit_test::show;
using lowbit_test::check_rejected;
using lowbit_test::inf;
using lowbit_test::nan_f;
using lowbit_test::require_same_bits;

namespace {

constexpr float flt_max = std::numeric_limits<float>::max();

template <semantics S = semantics::reference>
lowbit::trunc<S> make(bool is_signed, bool narrow, rounding_mode m) {
  return lowbit::trunc<S>{.is_signed = is_signed, .narrow = narrow, .rounding = m};
}

template <semantics S>
float tr1(float x, float scale, float zp, float in_bw, float out_scale, float out_bw, bool is_signed,
          bool narrow, rounding_mode m) {
  float y = 12345.0f;
  make<S>(is_signed, narrow, m)(std::span<const float>(&x, 1), scale, zp, in_bw, out_scale, out_bw,
                                std::span<float>(&y, 1));
  return y;
}

template <semantics S>
float v1(float x, float scale, float zp, float in_bw, float out_bw, rounding_mode m) {
  float y = 12345.0f;
  lowbit::trunc_v1<S>{.rounding = m}(std::span<const float>(&x, 1), scale, zp, in_bw, out_bw,
                                     std::span<float>(&y, 1));
  return y;
}

/// The trunc scale t of a (scale, out_scale) pair; NaN when rejected.
template <semantics S>
float tscale(float scale, float out_scale) {
  float t = 0.0f;
  return lowbit::detail::trunc_scale<S>(scale, out_scale, t) ? t : nan_f;
}

}  // namespace

// ---- known values ---------------------------------------------------------

TEST_CASE("trunc: int8 on scale 0.5 to 4 bits on scale 2", "[trunc]") {
  std::vector<float> x{1.0f, 2.5f, -3.0f, 7.0f, 100.0f, -100.0f}, y(6);
  // y = x / 0.5 in {2, 5, -6, 14, 200, -200}; t = 4; floor(y / 4), clamp [-8, 7].
  make(true, false, rounding_mode::floor)(x, 0.5f, 0.0f, 8.0f, 2.0f, 4.0f, y);
  require_same_bits(y, {0.0f, 2.0f, -4.0f, 6.0f, 14.0f, -16.0f});
  make<semantics::exact>(true, false, rounding_mode::floor)(x, 0.5f, 0.0f, 8.0f, 2.0f, 4.0f, y);
  require_same_bits(y, {0.0f, 2.0f, -4.0f, 6.0f, 14.0f, -16.0f});
  // Unsigned narrow: [0, 14].
  make(false, true, rounding_mode::half_even)(x, 0.5f, 0.0f, 8.0f, 2.0f, 4.0f, y);
  require_same_bits(y, {0.0f, 2.0f, 0.0f, 8.0f, 28.0f, 0.0f});
}

TEST_CASE("trunc: the input is rounded half-even first whatever the mode (QUIRKS 10)", "[trunc]") {
  using S = semantics;
  const auto fl = rounding_mode::floor;
  CHECK(tr1<S::reference>(2.5f, 1, 0, 8, 1, 8, true, false, fl) == 2.0f);
  CHECK(tr1<S::exact>(2.5f, 1, 0, 8, 1, 8, true, false, fl) == 2.0f);
  CHECK(tr1<S::reference>(3.5f, 1, 0, 8, 1, 8, true, false, fl) == 4.0f);
  CHECK(tr1<S::exact>(3.5f, 1, 0, 8, 1, 8, true, false, fl) == 4.0f);
  // The output uses out_scale (not t * scale) and zeropt / t.
  // x = 10, scale 1, zp 4: y = 14, t = 2 (out_scale 2.5 -> log2 1.32 -> 1): q = 7,
  // Y = (7 - 2) * 2.5.
  CHECK(tr1<S::reference>(10.0f, 1, 4, 8, 2.5f, 8, true, false, fl) == 12.5f);
  CHECK(tr1<S::exact>(10.0f, 1, 4, 8, 2.5f, 8, true, false, fl) == 12.5f);
}

TEST_CASE("trunc: the trunc scale 2^round(log2(out_scale / scale)) (QUIRKS 10)", "[trunc]") {
  using S = semantics;
  struct row {
    float ratio, ref, exact;
  };
  const row rows[] = {
      {2.828427f, 4.0f, 2.0f},     {5.656854f, 4.0f, 4.0f},   {11.313708f, 16.0f, 8.0f},
      {0.70710677f, 1.0f, 0.5f},   {1.4142135f, 1.0f, 1.0f},  {1.4142137f, 2.0f, 2.0f},
      {3.0f, 4.0f, 4.0f},          {6.0f, 8.0f, 8.0f},        {22.627417f, 16.0f, 16.0f},
      {45.254833f, 64.0f, 32.0f},  {1.0f, 1.0f, 1.0f},        {0.75f, 1.0f, 1.0f},
  };
  for (const row& r : rows) {
    INFO("ratio " << show(r.ratio));
    CHECK(tscale<S::reference>(1.0f, r.ratio) == r.ref);
    CHECK(tscale<S::exact>(1.0f, r.ratio) == r.exact);
  }
  CHECK(tscale<S::exact>(1.0f, 0.17677669f) == 0.125f);
  // The ratio is one float division: scale 0.5, out_scale 1.4142135 -> 2.828427.
  CHECK(tscale<S::reference>(0.5f, 1.4142135f) == 4.0f);
  CHECK(tscale<S::exact>(0.5f, 1.4142135f) == 2.0f);
  // Through the operator: x = 8, scale 1, out_scale 2.828427, FLOOR, int32.
  // reference t = 4: q = 2; exact t = 2: q = 4.
  CHECK(tr1<S::reference>(8, 1, 0, 8, 2.828427f, 32, true, false, rounding_mode::floor) ==
        2.0f * 2.828427f);
  CHECK(tr1<S::exact>(8, 1, 0, 8, 2.828427f, 32, true, false, rounding_mode::floor) ==
        4.0f * 2.828427f);
  // Extreme ratios: exact rejects those without a finite binary32 t.
  CHECK(std::isnan(tscale<S::exact>(1e-30f, 3e38f)));        // overflows to inf
  CHECK(std::isnan(tscale<S::exact>(3e38f, 1e-30f)));        // underflows to 0
  CHECK(std::isnan(tscale<S::exact>(1.0f, flt_max)));        // k = 128
  CHECK(tscale<S::exact>(1.0f, 0x1.6p127f) == 0x1p127f);     // k = 127
  CHECK(tscale<S::exact>(1.0f, std::numeric_limits<float>::denorm_min()) == 0x1p-149f);
  CHECK(tscale<S::reference>(1e-30f, 3e38f) == inf);
  CHECK(tscale<S::reference>(3e38f, 1e-30f) == 0.0f);
  CHECK(std::isnan(tscale<S::reference>(-1.0f, 2.0f)));
}

TEST_CASE("trunc: the fast trunc scale equals QONNX's formula 2^round(fl(log2 r))", "[trunc]") {
  // QONNX's formula evaluated directly (float32 log2 correctly rounded via
  // long double; double log2 from libm), against trunc_scale's fast path,
  // on ratios around every 2^(k + 1/2) (where the formula's rounding
  // decides), powers of two, subnormals, the extremes and random values.
  auto formula_f = [](float r) {
    const float k = std::nearbyint(static_cast<float>(std::log2(static_cast<long double>(r))));
    return std::ldexp(1.0f, static_cast<int>(k));
  };
  auto formula_d = [](double r) { return std::ldexp(1.0, static_cast<int>(std::nearbyint(std::log2(r)))); };
  std::vector<float> rs{1.0f, 2.0f, 0.5f, 0x1p-149f, 0x1p-127f, 0x1.fffffep127f, 3.0f, 0.7f};
  for (int k = -149; k <= 127; ++k) {
    const float c = static_cast<float>(std::ldexp(1.4142135623730950488L, k));
    float lo = c, hi = c;
    for (int step = 0; step < 40; ++step) {
      if (lo > 0.0f) rs.push_back(lo);  // near 2^-149 the steps reach 0, whose log2 is -inf
      rs.push_back(hi);
      lo = std::nextafter(lo, 0.0f);
      hi = std::nextafter(hi, inf);
    }
    rs.push_back(static_cast<float>(std::ldexp(1.4142135623730950488L * (1 + 0x1p-12L), k)));
    rs.push_back(static_cast<float>(std::ldexp(1.4142135623730950488L * (1 - 0x1p-12L), k)));
    rs.push_back(std::ldexp(1.3f, k));
    rs.push_back(std::ldexp(1.9999999f, k));
  }
  std::uint32_t state = 12345;
  for (int i = 0; i < 20000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float r = lowbit_test::f32((state >> 1) & 0x7f7fffffu);  // finite, >= 0
    if (r > 0) rs.push_back(r);
  }
  for (float r : rs) {
    float t = -1.0f;
    REQUIRE(lowbit::detail::trunc_scale<semantics::reference>(1.0f, r, t));
    INFO("r = " << show(r));
    CHECK(bits(t) == bits(formula_f(r)));
    double td = -1.0;
    const double rd = static_cast<double>(r) * 0x1p-500;
    REQUIRE(lowbit::detail::trunc_scale<semantics::reference>(1.0, rd, td));
    INFO("rd = " << rd);
    CHECK(td == formula_d(rd));
  }
}

// The per-element pre-pass computes t a batch at a time (integer fast path,
// lane-by-lane fallback): the same bits as trunc_scale on every pair.
TEST_CASE("trunc: the batch trunc scale equals trunc_scale on every pair", "[trunc][simd]") {
  using B = xsimd::batch<float>;
  constexpr std::size_t L = B::size;
  const float nan_f = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> rs{1.0f, 2.0f, 0.5f, 0x1p-149f, 0x1p-127f, 0x1p-126f, 0x1.fffffep127f, 0x1p127f,
                        0x1.6a09e6p0f, 0x1.6a09e8p0f, 0.0f, -0.0f, -1.0f, inf, -inf, nan_f};
  for (int k = -149; k <= 127; ++k) {
    for (long double f : {1.0L, 1.3L, 1.9999999L, 1.4142135623730950488L * (1 + 0x1p-12L),
                          1.4142135623730950488L * (1 - 0x1p-12L), 1.4142135623730950488L})
      for (int step = -3; step <= 3; ++step) {
        const float c = static_cast<float>(std::ldexp(f, k));
        rs.push_back(std::nextafter(c, step < 0 ? 0.0f : inf));
        rs.push_back(c);
      }
  }
  std::uint32_t state = 777;
  for (int i = 0; i < 20000; ++i) {
    state = state * 1664525u + 1013904223u;
    rs.push_back(lowbit_test::f32(state));  // every class, both signs
  }
  // Pairs (scale, out_scale): the ratio as out_scale over scale 1, and over
  // a few other scales (one more rounding), in runs of whole batches.
  std::vector<float> sc, os;
  for (float r : rs)
    for (float s : {1.0f, 3.0f, 0.1f, 0x1p-140f}) {
      sc.push_back(s);
      os.push_back(r);
    }
  while (sc.size() % L) {
    sc.push_back(1.0f);
    os.push_back(2.0f);
  }
  const lowbit::detail::trunc_scale_ref_kernel<float> k;
  std::size_t checked = 0, inverted = 0;
  for (std::size_t i = 0; i < sc.size(); i += L) {
    alignas(64) float got[L], inv[L];
    k(B::load_unaligned(&sc[i]), B::load_unaligned(&os[i])).store_aligned(got);
    B iv;
    const bool fast = k.fast_inverse(B::load_unaligned(&sc[i]), B::load_unaligned(&os[i]), iv);
    iv.store_aligned(inv);
    for (std::size_t j = 0; j < L; ++j) {
      float want = -1.0f;
      lowbit::detail::trunc_scale<semantics::reference>(sc[i + j], os[i + j], want);
      INFO("scale " << show(sc[i + j]) << " out_scale " << show(os[i + j]));
      REQUIRE(bits(got[j]) == bits(want));
      CHECK(bits(k(sc[i + j], os[i + j])) == bits(want));
      // The inverse that the Trunc kernel multiplies by: 2^-k exactly,
      // subnormal 2^-127 included, and +0 for t = inf.
      if (fast) {
        REQUIRE(bits(inv[j]) == bits(want == inf ? 0.0f : 1.0f / want));
        ++inverted;
      }
      ++checked;
    }
  }
  CHECK(checked >= 4 * rs.size());
  CHECK(inverted >= checked / 8);  // the fast path is exercised (30640 of 173136 here)
}

TEST_CASE("trunc: clamp to out_bitwidth, no bipolar special case", "[trunc]") {
  using S = semantics;
  const auto re = rounding_mode::half_even;
  for (int sem = 0; sem < 2; ++sem) {
    auto f = [&](float x, bool sg, bool nw) {
      return sem ? tr1<S::exact>(x, 1, 0, 8, 1, 1, sg, nw, re)
                 : tr1<S::reference>(x, 1, 0, 8, 1, 1, sg, nw, re);
    };
    CHECK(f(5.0f, true, false) == 0.0f);    // signed 1 bit: [-1, 0]
    CHECK(f(-5.0f, true, false) == -1.0f);
    CHECK(f(-5.0f, true, true) == 0.0f);    // narrow: [0, 0]
    CHECK(f(5.0f, false, false) == 1.0f);   // unsigned 1 bit: [0, 1]
    CHECK(f(inf, true, false) == 0.0f);
    CHECK(std::isnan(f(nan_f, true, false)));
  }
}

TEST_CASE("trunc: the two semantics differ exactly where QUIRKS.md says", "[trunc]") {
  using S = semantics;
  const auto hu = rounding_mode::half_up, up = rounding_mode::up, re = rounding_mode::half_even;
  // 2. HALF_UP on odd integers in [2^23, 2^24): uint24, out_scale / scale = 2.
  CHECK(tr1<S::reference>(33554430.0f, 1, 0, 26, 2, 24, false, false, hu) == 33554432.0f);
  CHECK(tr1<S::exact>(33554430.0f, 1, 0, 26, 2, 24, false, false, hu) == 33554430.0f);
  // 13. out_bitwidth 25: limit 2^25 (reference) vs 33554430 (exact).
  CHECK(tr1<S::reference>(0x1p26f, 1, 0, 32, 2, 25, false, false, re) == 0x1p26f);
  CHECK(tr1<S::exact>(0x1p26f, 1, 0, 32, 2, 25, false, false, re) == 67108860.0f);
  CHECK(tr1<S::reference>(1e10f, 1, 0, 32, 1, 32, true, false, re) == 2147483648.0f);
  CHECK(tr1<S::exact>(1e10f, 1, 0, 32, 1, 32, true, false, re) == 2147483520.0f);
  // 16. A small negative x/scale is pre-rounded to -0: unsigned UP gives +0
  // in reference (numpy's sign), -0 in exact; FLOOR keeps -0 in both, also
  // through the unsigned clamp.
  CHECK(bits(tr1<S::reference>(-0.25f, 0.5f, 0, 8, 1, 4, false, false, up)) == bits(0.0f));
  CHECK(bits(tr1<S::exact>(-0.25f, 0.5f, 0, 8, 1, 4, false, false, up)) == bits(-0.0f));
  CHECK(bits(tr1<S::reference>(-0.25f, 0.5f, 0, 8, 1, 4, false, false, hu)) == bits(0.0f));
  CHECK(bits(tr1<S::exact>(-0.25f, 0.5f, 0, 8, 1, 4, false, false, hu)) == bits(-0.0f));
  for (rounding_mode m : {rounding_mode::floor, rounding_mode::ceil, rounding_mode::down,
                          rounding_mode::half_even, rounding_mode::half_down}) {
    INFO(lowbit::to_string(m));
    CHECK(bits(tr1<S::reference>(-0.25f, 0.5f, 0, 8, 1, 4, false, false, m)) == bits(-0.0f));
    CHECK(bits(tr1<S::exact>(-0.25f, 0.5f, 0, 8, 1, 4, false, false, m)) == bits(-0.0f));
  }
  // IEEE: -0 + zeropt(+0) = +0.
  CHECK(bits(tr1<S::exact>(-0.0f, 1, 0, 8, 1, 8, true, false, re)) == bits(0.0f));
  // The reference computes what the exact semantics reject.
  CHECK_NOTHROW(tr1<S::reference>(1.0f, 1e-30f, 0, 8, 3e38f, 8, true, false, re));
  CHECK_NOTHROW(tr1<S::reference>(1.0f, 0.0f, 0, 8, 1, 8, true, false, re));
  CHECK_NOTHROW(tr1<S::reference>(1.0f, -1.0f, 0, 8, 1, 8, true, false, re));
}

TEST_CASE("trunc_v1: no clamping, half-even pre-rounding (QUIRKS 11)", "[trunc_v1]") {
  using S = semantics;
  const auto fl = rounding_mode::floor;
  CHECK(v1<S::reference>(1000.0f, 1, 0, 8, 4, fl) == 62.0f);
  CHECK(v1<S::exact>(1000.0f, 1, 0, 8, 4, fl) == 62.0f);
  CHECK(v1<S::reference>(2.5f, 1, 0, 8, 8, fl) == 2.0f);
  CHECK(v1<S::exact>(3.5f, 1, 0, 8, 8, fl) == 4.0f);
  // out_bitwidth > in_bitwidth multiplies.
  CHECK(v1<S::exact>(3.0f, 1, 0, 4, 6, fl) == 12.0f);
  // Y = (q - zeropt) * scale: x = 3, scale 0.5, zp 1 -> y = 7, / 4 -> 1.75.
  CHECK(v1<S::exact>(3.0f, 0.5f, 1, 8, 6, rounding_mode::ceil) == 0.5f);
  CHECK(v1<S::reference>(3.0f, 0.5f, 1, 8, 6, rounding_mode::floor) == 0.0f);
  // 16 for v1: a small negative x/scale pre-rounds to -0.
  CHECK(bits(v1<S::reference>(-0.25f, 1, 0, 8, 4, rounding_mode::up)) == bits(0.0f));
  CHECK(bits(v1<S::exact>(-0.25f, 1, 0, 8, 4, rounding_mode::up)) == bits(-0.0f));
  CHECK(std::isnan(v1<S::exact>(nan_f, 1, 0, 8, 4, fl)));
  CHECK(v1<S::exact>(inf, 1, 0, 8, 4, fl) == inf);
}

TEST_CASE("trunc: special values of x in both semantics (docs/semantics.md table)", "[trunc]") {
  // int8 on scale 0.5 to 4 bits on out_scale 2 (t = 4), signed, zero point 0.
  auto both = [](float x, rounding_mode m) {
    return std::pair{tr1<semantics::reference>(x, 0.5f, 0.0f, 8.0f, 2.0f, 4.0f, true, false, m),
                     tr1<semantics::exact>(x, 0.5f, 0.0f, 8.0f, 2.0f, 4.0f, true, false, m)};
  };
  for (rounding_mode m : lowbit::all_rounding_modes) {
    INFO(lowbit::to_string(m));
    for (float z : {0.0f, -0.0f}) {
      // y = +0 after the pre-rounding; reference HALF_DOWN then gives -0
      // (numpy: sign(0) * ceil(|0| - 0.5) = 0 * -0).
      const auto [r, e] = both(z, m);
      CHECK(bits(r) == bits(m == rounding_mode::half_down ? -0.0f : 0.0f));
      CHECK(bits(e) == bits(0.0f));
    }
    const auto [rn, en] = both(nan_f, m);
    CHECK(std::isnan(rn));
    CHECK(std::isnan(en));
    const auto [rp, ep] = both(inf, m);  // clamped to max = 7: 7 * 2
    CHECK(rp == 14.0f);
    CHECK(ep == 14.0f);
    const auto [rm, em] = both(-inf, m);  // clamped to min = -8
    CHECK(rm == -16.0f);
    CHECK(em == -16.0f);
    // A small negative x pre-rounds to -0: kept except by reference UP / HALF_UP.
    const auto [rs, es] = both(-0.1f, m);
    const bool plus = m == rounding_mode::up || m == rounding_mode::half_up;
    CHECK(bits(rs) == bits(plus ? 0.0f : -0.0f));
    CHECK(bits(es) == bits(-0.0f));
    // Subnormal x pre-rounds to a zero of its sign.
    const auto [rd, ed] = both(-std::numeric_limits<float>::denorm_min(), m);
    CHECK(bits(ed) == bits(-0.0f));
    CHECK(bits(rd) == bits(plus ? 0.0f : -0.0f));
    // Opset 1 does not clamp: +-inf stay.
    CHECK(v1<semantics::reference>(inf, 1.0f, 0.0f, 8.0f, 4.0f, m) == inf);
    CHECK(v1<semantics::exact>(-inf, 1.0f, 0.0f, 8.0f, 4.0f, m) == -inf);
    CHECK(std::isnan(v1<semantics::exact>(nan_f, 1.0f, 0.0f, 8.0f, 4.0f, m)));
  }
}

TEST_CASE("trunc: subnormal scales give exact subnormal results", "[trunc]") {
  // scale 2^-140, out_scale 2^-138 (both subnormal): t = 4. x = 12 * 2^-140 -> 12 -> 3 -> 3 * 2^-138.
  const float s = 0x1p-140f, os = 0x1p-138f;
  for (rounding_mode m : {rounding_mode::floor, rounding_mode::half_even, rounding_mode::ceil}) {
    CHECK(tr1<semantics::reference>(12 * s, s, 0.0f, 8.0f, os, 4.0f, true, false, m) == 3 * os);
    CHECK(tr1<semantics::exact>(12 * s, s, 0.0f, 8.0f, os, 4.0f, true, false, m) == 3 * os);
    CHECK(tr1<semantics::exact>(-12 * s, s, 0.0f, 8.0f, os, 4.0f, true, false, m) == -3 * os);
    CHECK(v1<semantics::exact>(-12 * s, s, 0.0f, 8.0f, 6.0f, m) == -3 * s);  // 2^(8-6) = 4
  }
  CHECK(std::fpclassify(3 * os) == FP_SUBNORMAL);
}

TEST_CASE("trunc: float64 tensors", "[trunc]") {
  std::vector<double> x{0.1, 2.5, -3.7, 1e300}, y(4);
  lowbit::trunc<semantics::exact>{.is_signed = true, .rounding = rounding_mode::floor}(
      x, 0.1, 0.0, 8.0, 0.4, 8.0, y);
  std::vector<double> want(4);
  for (int i = 0; i < 4; ++i) {
    double v = std::nearbyint(x[i] / 0.1) / 4.0;
    v = std::min(std::max(v, -128.0), 127.0);
    want[i] = std::floor(v) * 0.4;
  }
  require_same_bits(y, want);
}

// ---- SIMD body == scalar path, every tail, misalignment ----------------------

template <semantics S, class T>
void simd_equals_scalar() {
  const std::size_t L = xsimd::batch<T>::size;
  const std::vector<T> src = lowbit_test::mixed_values<T>(4 * L + 8, 7);
  const T sentinel = T(-12345.5);
  for (rounding_mode m : lowbit::all_rounding_modes) {
    for (int variant = 0; variant < 5; ++variant) {
      auto op = make<S>(variant != 1, variant == 2, m);
      lowbit::trunc_v1<S> op1{.rounding = m};
      const T obw = variant == 1 ? T(5) : variant == 3 ? T(1) : T(8);
      for (std::size_t n = 0; n <= 2 * L + 1; ++n) {
        for (std::size_t mis : {std::size_t(0), std::size_t(1), std::size_t(3), L / 2 + 1}) {
          std::vector<T> xbuf(n + mis);
          std::copy(src.begin() + mis, src.begin() + mis + n, xbuf.begin() + mis);
          std::span<const T> xin(xbuf.data() + mis, n);
          const T scale = mis % 2 ? T(1) : T(0.37), zp = mis % 2 ? T(0) : T(1);
          const T out_scale = variant == 4 ? T(2.828427) : T(4) * scale;
          INFO("mode " << lowbit::to_string(m) << " variant " << variant << " n " << n << " mis " << mis);
          {
            std::vector<T> a(n + mis + 2, sentinel), b(n + mis + 2, sentinel);
            const lowbit::detail::simd_scope simd_387(true);  // the SIMD body or the scalar kernels
            op(xin, scale, zp, T(8), out_scale, obw, std::span<T>(a.data() + mis, n));
            const lowbit::detail::simd_scope simd_389(false);  // the SIMD body or the scalar kernels
            op(xin, scale, zp, T(8), out_scale, obw, std::span<T>(b.data() + mis, n));
            require_same_bits(a, b);
            for (std::size_t i = 0; i < mis; ++i) CHECK(bits(a[i]) == bits(sentinel));
            CHECK(bits(a[mis + n]) == bits(sentinel));
            CHECK(bits(a[mis + n + 1]) == bits(sentinel));
          }
          {
            std::vector<T> a(n + mis + 2, sentinel), b(n + mis + 2, sentinel);
            const lowbit::detail::simd_scope simd_398(true);  // the SIMD body or the scalar kernels
            op1(xin, scale, zp, T(8), obw, std::span<T>(a.data() + mis, n));
            const lowbit::detail::simd_scope simd_400(false);  // the SIMD body or the scalar kernels
            op1(xin, scale, zp, T(8), obw, std::span<T>(b.data() + mis, n));
            require_same_bits(a, b);
            for (std::size_t i = 0; i < mis; ++i) CHECK(bits(a[i]) == bits(sentinel));
            CHECK(bits(a[mis + n]) == bits(sentinel));
            CHECK(bits(a[mis + n + 1]) == bits(sentinel));
          }
        }
      }
    }
  }
}

TEST_CASE("trunc: SIMD body equals the scalar path for every tail and misalignment",
          "[trunc][trunc_v1][simd]") {
  simd_equals_scalar<semantics::reference, float>();
  simd_equals_scalar<semantics::exact, float>();
  simd_equals_scalar<semantics::reference, double>();
  simd_equals_scalar<semantics::exact, double>();
}

TEST_CASE("trunc: powers of two are inverted exactly, all or none", "[trunc][simd]") {
  using lowbit::detail::invert_powers_of_two;
  // Every invertible kind, over more than one batch plus a tail.
  std::vector<float> t;
  for (int k = -126; k <= 126; k += 7) t.push_back(std::ldexp(1.0f, k));
  t.push_back(std::ldexp(1.0f, 126));
  t.push_back(std::ldexp(1.0f, -126));
  t.push_back(inf);
  std::vector<float> r = t;
  REQUIRE(invert_powers_of_two(r.data(), r.size()));
  for (std::size_t i = 0; i < t.size(); ++i) {
    INFO("t = " << show(t[i]));
    CHECK(bits(r[i]) == bits(t[i] == inf ? 0.0f : 1.0f / t[i]));
  }
  std::vector<double> td{1.0, std::ldexp(1.0, -1022), std::ldexp(1.0, 1022), std::numeric_limits<double>::infinity()};
  REQUIRE(invert_powers_of_two(td.data(), td.size()));
  CHECK(td[1] == std::ldexp(1.0, 1022));
  CHECK(td[2] == std::ldexp(1.0, -1022));
  CHECK(bits(td[3]) == bits(0.0));
  // One value that is not invertible (2^127, whose inverse is subnormal; a
  // subnormal; 0; a non-power; negative; NaN), after a batch's worth of
  // good ones, at the end: nothing changes.
  for (float bad : {std::ldexp(1.0f, 127), std::ldexp(1.0f, -130), 0.0f, 3.0f, -2.0f, nan_f}) {
    for (std::size_t at : {std::size_t(0), std::size_t(5), std::size_t(17), std::size_t(40)}) {
      std::vector<float> u(41, 0.5f);
      u[at] = bad;
      const std::vector<float> before = u;
      INFO("bad = " << show(bad) << " at " << at);
      CHECK_FALSE(invert_powers_of_two(u.data(), u.size()));
      for (std::size_t i = 0; i < u.size(); ++i) CHECK(bits(u[i]) == bits(before[i]));
    }
  }
}

TEST_CASE("trunc: a per-element t (inf, 2^-126, 2^126, or one not invertible): SIMD equals scalar",
          "[trunc][simd][broadcast]") {
  const std::size_t n = 67;
  const std::vector<float> x = lowbit_test::mixed_values<float>(n, 5);
  // The SIMD path computes a per-element t inside the kernel (1/t on the
  // bits fast path, t and a division on any other batch); the scalar path
  // reads a t tensor computed first. Variants: 0 every t invertible, 1 one t
  // subnormal, 2 t = 2^127 (whose inverse is subnormal), ratios within 2^-12
  // of sqrt 2 (off the fast path), and zero, negative and NaN ratios.
  for (int variant : {0, 1, 2}) {
    const bool invertible = variant == 0;
    std::vector<float> scale(n), osc(n), y(n), want(n);
    for (std::size_t i = 0; i < n; ++i) {
      scale[i] = 0.375f + 0.01f * float(i);
      const int k = i % 4 == 0 ? 126 : i % 4 == 1 ? -126 : int(i % 9) - 4;
      osc[i] = std::ldexp(scale[i], k);
    }
    osc[3] = std::numeric_limits<float>::max();  // t = inf (reference)
    if (variant == 1) osc[n - 2] = std::ldexp(scale[n - 2], -135);  // t subnormal
    if (variant == 2) {
      for (std::size_t i = 0; i < n; i += 5) osc[i] = std::ldexp(scale[i], 127);
      // Off the fast path in the first batch or two only, so that the
      // later ones multiply by 2^-127.
      osc[2] = scale[2] * 1.41421f;
      osc[4] = scale[4] * 1.41422f;
      osc[6] = 0.0f;
      osc[7] = -1.0f;
      osc[8] = nan_f;
      osc[9] = -0.0f;
    }
    for (rounding_mode m : lowbit::all_rounding_modes) {
      INFO("mode " << lowbit::to_string(m) << " invertible " << invertible);
      auto op = make(false, false, m);
      const lowbit::detail::simd_scope simd_488(true);  // the SIMD body or the scalar kernels
      op(x, scale, 0.25f, 8.0f, osc, 6.0f, y);
      const lowbit::detail::simd_scope simd_490(false);  // the SIMD body or the scalar kernels
      op(x, scale, 0.25f, 8.0f, osc, 6.0f, want);
      lowbit_test::require_same_bits(y, want);
    }
  }
}

TEST_CASE("trunc: a t without an exact inverse (2^127, subnormal), per tensor and per channel, divides",
          "[trunc][simd][broadcast]") {
  // The SIMD kernels multiply by 1/t (trunc_kernel::by_t); a t whose inverse
  // is not a float takes the scalar path, which divides. Both semantics,
  // every mode, SIMD on and off (the same bits), per tensor (the scalar
  // route) and per channel (the general route), 67 elements a row (batches
  // and a tail). With scale 2^-10 and out_scale 2^117, t = 2^127; with
  // scale 2^10 and out_scale 2^-130, t = 2^-140. A batch multiplied by t
  // instead of divided gives other values than the ones below.
  const std::size_t n = 67;
  std::vector<float> x = lowbit_test::mixed_values<float>(n, 7);
  const float big = 0x1.8p117f, small = 3072.0f;  // x / scale = 1.5 * 2^127 and 3
  for (std::size_t i = 0; i < n; i += 6) x[i] = i % 12 == 0 ? big : -big;
  for (std::size_t i = 1; i < n; i += 6) x[i] = i % 12 == 1 ? small : -small;
  auto expect = [&](std::vector<float>& y, bool t_big, rounding_mode m) {
    // t = 2^127: y / t = +-1.5, rounded by m, times 2^117. t = 2^-140: y / t
    // overflows and is clamped to [-128, 127], times 2^-130.
    const bool up = m == rounding_mode::half_even || m == rounding_mode::ceil || m == rounding_mode::up ||
                    m == rounding_mode::half_up;
    for (std::size_t i = 0; i < n; i += 6) {
      const bool pos = i % 12 == 0;
      float q = up ? 2.0f : 1.0f;
      if (m == rounding_mode::ceil) q = pos ? 2.0f : 1.0f;
      if (m == rounding_mode::floor) q = pos ? 1.0f : 2.0f;
      if (t_big) CHECK(bits(y[i]) == bits(pos ? q * 0x1p117f : -q * 0x1p117f));
    }
    for (std::size_t i = 1; i < n; i += 6)
      if (!t_big) CHECK(bits(y[i]) == bits(i % 12 == 1 ? 127.0f * 0x1p-130f : -128.0f * 0x1p-130f));
  };
  auto run = [&]<semantics S>() {
    for (const bool t_big : {true, false}) {
      const float s = t_big ? 0x1p-10f : 0x1p10f, os = t_big ? 0x1p117f : 0x1p-130f;
      for (rounding_mode m : lowbit::all_rounding_modes) {
        INFO("semantics " << lowbit::to_string(S) << " t " << (t_big ? "2^127" : "2^-140") << " mode "
                          << lowbit::to_string(m));
        const auto op = make<S>(true, false, m);
        std::vector<float> y(n), want(n);
        {
          const lowbit::detail::simd_scope simd_on(true);
          op(x, s, 0.0f, 8.0f, os, 8.0f, y);
        }
        {
          const lowbit::detail::simd_scope simd_off(false);
          op(x, s, 0.0f, 8.0f, os, 8.0f, want);
        }
        require_same_bits(y, want);
        expect(y, t_big, m);
        // Per channel: three rows of x, the scale per row (the same value).
        std::vector<float> x3(3 * n), y3(3 * n);
        for (std::size_t r = 0; r < 3; ++r) std::copy(x.begin(), x.end(), x3.begin() + long(r * n));
        const std::vector<float> s3(3, s);
        {
          const lowbit::detail::simd_scope simd_on(true);
          op(strided_view<const float>(x3.data(), {3, n}), strided_view<const float>(s3.data(), {3, 1}), 0.0f, 8.0f,
             os, 8.0f, strided_view<float>(y3.data(), {3, n}));
        }
        for (std::size_t r = 0; r < 3; ++r)
          require_same_bits(std::vector<float>(y3.begin() + long(r * n), y3.begin() + long((r + 1) * n)), want);
      }
    }
  };
  run.template operator()<semantics::reference>();
  run.template operator()<semantics::exact>();
}

// ---- broadcasting --------------------------------------------------------------

template <semantics S>
void per_channel_equals_per_tensor_loop(rounding_mode m, std::size_t H, std::size_t W) {
  const std::size_t N = 2, C = 3;
  const std::vector<float> x = lowbit_test::mixed_values<float>(N * C * H * W, 11);
  const std::vector<float> scale{0.1f, 0.37f, 2.0f}, zp{0.0f, 3.0f, -1.0f}, obw{8.0f, 3.0f, 1.0f},
      osc{0.8f, 0.37f, 5.656854f}, ibw{12.0f, 9.0f, 4.0f};
  strided_view<const float> xv(x.data(), {N, C, H, W});
  strided_view<const float> sv(scale.data(), {1, C, 1, 1});
  strided_view<const float> zv(zp.data(), {C, 1, 1});
  strided_view<const float> bv(obw.data(), {C, 1, 1});
  strided_view<const float> ov(osc.data(), {C, 1, 1});
  strided_view<const float> iv(ibw.data(), {C, 1, 1});
  {
    std::vector<float> y(x.size());
    auto op = make<S>(true, false, m);
    op(xv, sv, zv, 8.0f, ov, bv, strided_view<float>(y.data(), {N, C, H, W}));
    std::vector<float> want(x.size());
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t c = 0; c < C; ++c) {
        const std::size_t off = (n * C + c) * H * W;
        op(std::span<const float>(x.data() + off, H * W), scale[c], zp[c], 8.0f, osc[c], obw[c],
           std::span<float>(want.data() + off, H * W));
      }
    require_same_bits(y, want);
    // A per-channel out_scale with a per-tensor scale, and the reverse.
    op(xv, 0.5f, zv, 8.0f, ov, bv, strided_view<float>(y.data(), {N, C, H, W}));
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t c = 0; c < C; ++c) {
        const std::size_t off = (n * C + c) * H * W;
        op(std::span<const float>(x.data() + off, H * W), 0.5f, zp[c], 8.0f, osc[c], obw[c],
           std::span<float>(want.data() + off, H * W));
      }
    require_same_bits(y, want);
    op(xv, sv, 0.0f, 8.0f, 3.0f, 6.0f, strided_view<float>(y.data(), {N, C, H, W}));
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t c = 0; c < C; ++c) {
        const std::size_t off = (n * C + c) * H * W;
        op(std::span<const float>(x.data() + off, H * W), scale[c], 0.0f, 8.0f, 3.0f, 6.0f,
           std::span<float>(want.data() + off, H * W));
      }
    require_same_bits(y, want);
  }
  {
    std::vector<float> y(x.size());
    lowbit::trunc_v1<S> op{.rounding = m};
    op(xv, sv, zv, iv, bv, strided_view<float>(y.data(), {N, C, H, W}));
    std::vector<float> want(x.size());
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t c = 0; c < C; ++c) {
        const std::size_t off = (n * C + c) * H * W;
        op(std::span<const float>(x.data() + off, H * W), scale[c], zp[c], ibw[c], obw[c],
           std::span<float>(want.data() + off, H * W));
      }
    require_same_bits(y, want);
  }
}

TEST_CASE("trunc: per-channel parameters equal a loop of per-tensor calls",
          "[trunc][trunc_v1][broadcast]") {
  for (rounding_mode m : lowbit::all_rounding_modes) {
    INFO(lowbit::to_string(m));
    per_channel_equals_per_tensor_loop<semantics::reference>(m, 5, 7);
    per_channel_equals_per_tensor_loop<semantics::exact>(m, 5, 7);
    per_channel_equals_per_tensor_loop<semantics::reference>(m, 1, 300);
    per_channel_equals_per_tensor_loop<semantics::exact>(m, 3, 700);
  }
}

TEST_CASE("trunc: per-element parameters equal element-wise calls", "[trunc][broadcast]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(37, 3);
  std::vector<float> scale(37), zp(37), osc(37), bw(37), y(37);
  for (std::size_t i = 0; i < 37; ++i) {
    scale[i] = 0.05f * float(i + 1);
    zp[i] = float(int(i % 5) - 2);
    osc[i] = scale[i] * (0.3f + 0.7f * float(i % 11));
    bw[i] = float(1 + i % 9);
  }
  for (int sem = 0; sem < 2; ++sem) {
    if (sem)
      make<semantics::exact>(true, false, rounding_mode::half_up)(x, scale, zp, 8.0f, osc, bw, y);
    else
      make(true, false, rounding_mode::half_up)(x, scale, zp, 8.0f, osc, bw, y);
    for (std::size_t i = 0; i < 37; ++i) {
      INFO("i = " << i << " sem " << sem);
      const float want =
          sem ? tr1<semantics::exact>(x[i], scale[i], zp[i], 8, osc[i], bw[i], true, false,
                                      rounding_mode::half_up)
              : tr1<semantics::reference>(x[i], scale[i], zp[i], 8, osc[i], bw[i], true, false,
                                          rounding_mode::half_up);
      CHECK(bits(y[i]) == bits(want));
    }
  }
}

TEST_CASE("trunc: a t tensor smaller than the output (the reference pre-pass) equals one-element calls",
          "[trunc][broadcast][simd]") {
  // x [2, 3, 40]; scale [3, 40] and out_scale [40] (contiguous along the
  // runs: batches), or out_scale [3, 40] read with a stride of 2 (element by
  // element): t has 120 of the 240 positions, so it is computed once, before
  // the quantization, not inside the kernel. Ratios on and off the bits
  // fast path: near sqrt 2, 2^126 and 2^-126, max (t = inf), zero, negative
  // and NaN; a bad lane in one batch only.
  const std::size_t N = 2, C = 3, W = 40;
  const std::vector<float> x = lowbit_test::mixed_values<float>(N * C * W, 17);
  std::vector<float> scale(C * W), osc_w(W), osc_cw(2 * C * W);
  for (std::size_t i = 0; i < C * W; ++i) scale[i] = 0.125f + 0.03f * float(i % 29);
  for (std::size_t w = 0; w < W; ++w) osc_w[w] = 0.2f + 0.17f * float(w % 13);
  for (std::size_t i = 0; i < 2 * C * W; ++i) osc_cw[i] = std::ldexp(1.1f + 0.01f * float(i % 37), int(i % 7) - 3);
  osc_w[5] = scale[5] * 1.41421f;  // near sqrt 2: off the fast path (first batch only)
  osc_w[21] = flt_max;
  osc_cw[2 * 7] = std::ldexp(scale[7], 126);
  osc_cw[2 * 50] = std::ldexp(scale[50], -126);
  osc_cw[2 * 51] = 0.0f;
  osc_cw[2 * 52] = -1.0f;
  osc_cw[2 * 53] = nan_f;
  strided_view<const float> xv(x.data(), {N, C, W});
  strided_view<const float> sv(scale.data(), {C, W});
  strided_view<const float> ow(osc_w.data(), {W});
  strided_view<const float> ocw(osc_cw.data(), {C, W}, {std::ptrdiff_t(2 * W), 2});
  for (rounding_mode m : lowbit::all_rounding_modes) {
    for (int which = 0; which < 2; ++which) {
      for (bool simd : {true, false}) {
        INFO(lowbit::to_string(m) << (which ? " strided out_scale [3, 40]" : " out_scale [40]")
                                  << (simd ? " SIMD" : " scalar"));
        const lowbit::detail::simd_scope scope(simd);
        std::vector<float> y(x.size());
        auto op = make(true, false, m);
        if (which)
          op(xv, sv, 0.5f, 8.0f, ocw, 5.0f, strided_view<float>(y.data(), {N, C, W}));
        else
          op(xv, sv, 0.5f, 8.0f, ow, 5.0f, strided_view<float>(y.data(), {N, C, W}));
        for (std::size_t i = 0; i < x.size(); ++i) {
          const std::size_t cw = i % (C * W), w = i % W;
          const float o = which ? osc_cw[2 * cw] : osc_w[w];
          const float want = tr1<semantics::reference>(x[i], scale[cw], 0.5f, 8.0f, o, 5.0f, true, false, m);
          INFO("i = " << i << " x = " << show(x[i]) << " out_scale = " << show(o));
          REQUIRE(bits(y[i]) == bits(want));
        }
      }
    }
  }
}

TEST_CASE("trunc: output shapes; in_bitwidth takes no part (opset 2), does in opset 1",
          "[trunc][trunc_v1][broadcast]") {
  std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> three{8.0f, 8.0f, 8.0f};
  strided_view<const float> col(three.data(), {3, 1, 1});
  auto op = make(true, false, rounding_mode::half_even);
  CHECK(op.output_shape(x, 1.0f, 0.0f, col, 1.0f, 8.0f) == shape{4});
  CHECK(op.output_shape(x, 1.0f, 0.0f, 8.0f, col, 8.0f) == shape{3, 1, 4});
  CHECK(op.output_shape(x, 1.0f, 0.0f, 8.0f, 1.0f, col) == shape{3, 1, 4});
  lowbit::trunc_v1<> op1;
  CHECK(op1.output_shape(x, 1.0f, 0.0f, col, 8.0f) == shape{3, 1, 4});
  CHECK(op1.output_shape(x, 1.0f, 0.0f, 8.0f, col) == shape{3, 1, 4});
  std::vector<float> y(4);
  op(x, 1.0f, 0.0f, col, 1.0f, 8.0f, y);  // in_bitwidth [3,1,1] does not grow y
  require_same_bits(y, {1, 2, 3, 4});
  // Rank 0 and empty.
  float xs = 2.6f, ys = 0.0f;
  op(strided_view<const float>(&xs, {}), 1.0f, 0.0f, 8.0f, 1.0f, 8.0f, strided_view<float>(&ys, {}));
  CHECK(ys == 3.0f);
  std::vector<float> ex, ey;
  op(ex, 1.0f, 0.0f, 8.0f, 1.0f, 8.0f, ey);
  REQUIRE_THROWS_AS(op(ex, 1.0f, 0.0f, 0.0f, 1.0f, 8.0f, ey), lowbit::error);
  REQUIRE_THROWS_AS(make<semantics::exact>(true, false, rounding_mode::floor)(ex, 1.0f, 0.0f, 8.0f,
                                                                              0.0f, 8.0f, ey),
                    lowbit::error);
}

TEST_CASE("trunc: in place and strided equal out of place", "[trunc][trunc_v1]") {
  for (rounding_mode m : lowbit::all_rounding_modes) {
    std::vector<float> x = lowbit_test::mixed_values<float>(101, 5), y(101);
    auto op = make(false, true, m);
    op(x, 0.7f, 3.0f, 8.0f, 2.9f, 6.0f, y);
    std::vector<float> xi = x;
    op(xi, 0.7f, 3.0f, 8.0f, 2.9f, 6.0f, xi);
    require_same_bits(xi, y);
    lowbit::trunc_v1<> op1{.rounding = m};
    op1(x, 0.7f, 3.0f, 8.0f, 6.0f, y);
    op1(x, 0.7f, 3.0f, 8.0f, 6.0f, x);
    require_same_bits(x, y);
    // Strided input, transposed output.
    std::vector<float> base = lowbit_test::mixed_values<float>(24, 9);
    strided_view<const float> xv(base.data(), {4, 3}, {6, 2});
    std::vector<float> out(12), ref(12);
    op(xv, 0.5f, 0.0f, 8.0f, 2.0f, 4.0f, strided_view<float>(out.data(), {4, 3}, {1, 4}));
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 3; ++j) {
        float o = 0;
        op(std::span<const float>(&base[i * 6 + j * 2], 1), 0.5f, 0.0f, 8.0f, 2.0f, 4.0f,
           std::span<float>(&o, 1));
        CHECK(bits(out[j * 4 + i]) == bits(o));
      }
  }
}

// ---- errors: the message names the culprit, nothing is written ------------------

TEST_CASE("trunc: every error path throws lowbit::error and leaves y untouched",
          "[trunc][trunc_v1][errors]") {
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  std::vector<float> y(6, 42.0f);
  auto op = make(true, false, rounding_mode::floor);
  auto ex = make<semantics::exact>(true, false, rounding_mode::floor);
  lowbit::trunc_v1<> op1;
  lowbit::trunc_v1<semantics::exact> ex1;
  std::vector<float> s4{1, 1, 1, 1};
  check_rejected([&] { op(x, s4, 0.0f, 8.0f, 1.0f, 8.0f, y); }, y, "do not broadcast");
  check_rejected([&] { op(x, 1.0f, 0.0f, 8.0f, s4, 8.0f, y); }, y, "out_scale");
  check_rejected([&] { op1(x, 1.0f, 0.0f, s4, 8.0f, y); }, y, "in_bitwidth");
  std::vector<float> y5(5, 42.0f);
  check_rejected([&] { op(x, 1.0f, 0.0f, 8.0f, 1.0f, 8.0f, y5); }, y5, "y has shape [5]");
  check_rejected([&] { op1(x, 1.0f, 0.0f, 8.0f, 4.0f, y5); }, y5, "y has shape [5]");
  // Bit widths, validated in both semantics, in_bitwidth too (though unused).
  check_rejected([&] { op(x, 1.0f, 0.0f, 8.5f, 1.0f, 8.0f, y); }, y, "in_bitwidth = 8.5");
  check_rejected([&] { op(x, 1.0f, 0.0f, 8.0f, 1.0f, 0.0f, y); }, y, "out_bitwidth = 0");
  check_rejected([&] { op(x, 1.0f, 0.0f, 33.0f, 1.0f, 8.0f, y); }, y, "expected an integer from 1 to 32");
  check_rejected([&] { ex(x, 1.0f, 0.0f, 8.0f, 1.0f, nan_f, y); }, y, "out_bitwidth = nan");
  check_rejected([&] { op1(x, 1.0f, 0.0f, 8.0f, -inf, y); }, y, "out_bitwidth = -inf");
  check_rejected([&] { ex1(x, 1.0f, 0.0f, 0.5f, 4.0f, y); }, y, "in_bitwidth = 0.5");
  std::vector<float> bws{8, 8, 0.5f, 8, 8, 8};
  // x and y [2, 3]: the shapes broadcast, so the value is what fails.
  check_rejected([&] { op(strided_view<const float>(x.data(), {2, 3}), 1.0f, 0.0f, 8.0f, 1.0f,
                          strided_view<const float>(bws.data(), {2, 3}), strided_view<float>(y.data(), {2, 3})); },
                 y, "out_bitwidth[0, 2] = 0.5");
  auto bad_mode = make(true, false, static_cast<rounding_mode>(99));
  check_rejected([&] { bad_mode(x, 1.0f, 0.0f, 8.0f, 1.0f, 8.0f, y); }, y, "rounding_mode");
  lowbit::trunc_v1<> bad_mode1{.rounding = static_cast<rounding_mode>(99)};
  check_rejected([&] { bad_mode1(x, 1.0f, 0.0f, 8.0f, 4.0f, y); }, y, "rounding_mode");
  // Exact: scales and out_scales that are not finite and > 0.
  for (float bad : {0.0f, -0.0f, -1.0f, inf, -inf, nan_f}) {
    check_rejected([&] { ex(x, bad, 0.0f, 8.0f, 1.0f, 8.0f, y); }, y, "scale");
    check_rejected([&] { ex(x, 1.0f, 0.0f, 8.0f, bad, 8.0f, y); }, y, "out_scale");
    check_rejected([&] { ex1(x, bad, 0.0f, 8.0f, 4.0f, y); }, y, "scale");
    CHECK_NOTHROW(op(x, bad, 0.0f, 8.0f, 1.0f, 8.0f, std::vector<float>(6)));
    CHECK_NOTHROW(op(x, 1.0f, 0.0f, 8.0f, bad, 8.0f, std::vector<float>(6)));
    CHECK_NOTHROW(op1(x, bad, 0.0f, 8.0f, 4.0f, std::vector<float>(6)));
  }
  // Exact: ratios without a finite binary32 t (per element of the pair).
  check_rejected([&] { ex(x, 1e-30f, 0.0f, 8.0f, 3e38f, 8.0f, y); }, y, "out_scale / scale");
  check_rejected([&] { ex(x, 3e38f, 0.0f, 8.0f, 1e-30f, 8.0f, y); }, y, "out_scale / scale");
  check_rejected([&] { ex(x, 1.0f, 0.0f, 8.0f, flt_max, 8.0f, y); }, y, "out_scale / scale");
  std::vector<float> sc{1, 1, 1e-30f};
  std::vector<float> oc{1, 1e30f};
  check_rejected([&] { ex(strided_view<const float>(x.data(), {2, 3}), sc,
                         0.0f, 8.0f, strided_view<const float>(oc.data(), {2, 1}), 8.0f,
                         strided_view<float>(y.data(), {2, 3})); },
                 y, "out_scale / scale[1, 2]");
  CHECK_NOTHROW(op(x, 1e-30f, 0.0f, 8.0f, 3e38f, 8.0f, std::vector<float>(6)));
}

TEST_CASE("trunc: shapes are checked before values (a broadcast view of 2^40 copies)", "[trunc][errors]") {
  const std::size_t big = std::size_t(1) << 40;
  const std::vector<float> x{0.3f, -0.2f, 5.0f};
  std::vector<float> y(3, 7.0f);
  const float eight = 8.0f, half = 0.5f;
  const lowbit::strided_view<const float> bw8(&eight, {big}, {0}), s(&half, {big}, {0});
  REQUIRE_THROWS_WITH(lowbit::trunc<>{}(x, 1.0f, 0.0f, 8.0f, 1.0f, bw8, y),
                      lowbit_test::contains_substring("x has shape [3] and out_bitwidth has shape [1099511627776]"));
  REQUIRE_THROWS_WITH(lowbit::trunc<lowbit::semantics::exact>{}(x, s, 0.0f, 8.0f, 1.0f, 4.0f, y),
                      lowbit_test::contains_substring("x has shape [3] and scale has shape [1099511627776]"));
  REQUIRE_THROWS_WITH(lowbit::trunc_v1<>{}(x, 1.0f, 0.0f, bw8, 4.0f, y),
                      lowbit_test::contains_substring("x has shape [3] and in_bitwidth has shape [1099511627776]"));
  CHECK(y == std::vector<float>(3, 7.0f));
  // in_bitwidth takes no part in Trunc's shape: a broadcast view of it is valid, its one value checked.
  lowbit::trunc<>{}(x, 1.0f, 0.0f, bw8, 1.0f, 8.0f, y);
  CHECK(y == std::vector<float>{0.0f, -0.0f, 5.0f});
}

TEST_CASE("trunc: the scalar route gives the general route's bits, every mode, width, type and path",
          "[trunc][route]") {
  const std::vector<float> xf = lowbit_test::mixed_values<float>(203, 37);
  const std::vector<double> xd = lowbit_test::mixed_values<double>(203, 41);
  // (scale, out_scale): t a power of two below and above 1 (inverted), t
  // from a ratio that is not one (rounded log2), and t = 1.
  const std::pair<float, float> scales[] = {{0.25f, 4.0f}, {2.0f, 0.5f}, {0.05f, 0.35f}, {3.0f, 3.0f}, {0.1f, 0.1f}};
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (const bool is_signed : {true, false})
      for (const auto& [in_b, out_b] : {std::pair{8.0f, 4.0f}, std::pair{4.0f, 8.0f}, std::pair{32.0f, 1.0f}})
        for (const auto& [s, os] : scales) {
          CAPTURE(lowbit::to_string(m), is_signed, in_b, out_b, s, os);
          lowbit_test::require_scalar_route_bits(make(is_signed, false, m), xf, s, 1.0f, in_b, os, out_b);
          lowbit_test::require_scalar_route_bits(make<semantics::exact>(is_signed, true, m), xf, s, -1.0f, in_b, os,
                                                 out_b);
          lowbit_test::require_scalar_route_bits(make(is_signed, true, m), xd, double(s), 0.0, double(in_b),
                                                 double(os), double(out_b));
          lowbit_test::require_scalar_route_bits(make<semantics::exact>(is_signed, false, m), xd, double(s), 2.0,
                                                 double(in_b), double(os), double(out_b));
        }
  // Values the route leaves to the general route's messages, nothing written.
  std::vector<float> x{1, 2, 3, 4, 5, 6}, y(6, 42.0f);
  const auto ex = make<semantics::exact>(true, false, rounding_mode::floor);
  check_rejected([&] { ex(x, 1e-30f, 0.0f, 8.0f, 3e38f, 8.0f, y); }, y, "out_scale / scale");
  check_rejected([&] { ex(x, -1.0f, 0.0f, 8.0f, 1.0f, 8.0f, y); }, y, "scale");
  check_rejected([&] { ex(x, 1.0f, 0.0f, 8.0f, 0.0f, 8.0f, y); }, y, "out_scale");
  check_rejected([&] { make(true, false, rounding_mode::floor)(x, 1.0f, 0.0f, 0.0f, 1.0f, 8.0f, y); }, y,
                 "in_bitwidth = 0");
  check_rejected([&] { make(true, false, rounding_mode::floor)(x, 1.0f, 0.0f, 8.0f, 1.0f, 8.5f, y); }, y,
                 "out_bitwidth = 8.5");
}

TEST_CASE("trunc_v1: the scalar and row routes give the general route's bits, every mode, width, type and path",
          "[trunc][trunc_v1][route]") {
  const std::vector<float> xf = lowbit_test::mixed_values<float>(1400, 43);
  const std::vector<double> xd = lowbit_test::mixed_values<double>(1400, 47);
  // Scales per row (powers of two among them: the divider's fast path for a
  // constant scale) and zero points per row.
  const std::vector<float> sf{0.05f, 0.25f, 3.0f, 0.125f, 1e-3f, 7.0f, 1e-30f};
  const std::vector<float> zf{0.0f, 2.0f, -3.0f, 1.5f, 0.0f, 7.0f, -1.0f};
  const std::vector<double> sd(sf.begin(), sf.end()), zd(zf.begin(), zf.end());
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (const auto& bw :
         {std::pair{8.0f, 4.0f}, std::pair{4.0f, 8.0f}, std::pair{32.0f, 1.0f}, std::pair{3.0f, 3.0f}}) {
      const float in_b = bw.first, out_b = bw.second;  // not bindings: clang 14 cannot capture those
      CAPTURE(lowbit::to_string(m), in_b, out_b);
      const lowbit::trunc_v1<> ref{.rounding = m};
      const lowbit::trunc_v1<semantics::exact> ex{.rounding = m};
      for (const float s : {0.25f, 0.05f, 3.0f}) {
        lowbit_test::require_scalar_route_bits(ref, xf, s, 1.0f, in_b, out_b);
        lowbit_test::require_scalar_route_bits(ex, xf, s, -1.5f, in_b, out_b);
        lowbit_test::require_scalar_route_bits(ref, xd, double(s), 0.0, double(in_b), double(out_b));
        lowbit_test::require_scalar_route_bits(ex, xd, double(s), 2.0, double(in_b), double(out_b));
      }
      lowbit_test::require_row_route_bits(xf, sf, [&](const auto& xv, const auto& sv, const auto& yv) {
        ref(xv, sv, 1.0f, in_b, out_b, yv);
      });
      lowbit_test::require_row_route_bits(xf, sf, [&](const auto& xv, const auto& sv, const auto& yv) {
        ex(xv, sv, -1.0f, in_b, out_b, yv);
      });
      lowbit_test::require_row_route_bits(xf, zf, [&](const auto& xv, const auto& zv, const auto& yv) {
        ex(xv, 0.25f, zv, in_b, out_b, yv);
      });
      lowbit_test::require_row_route_bits(xf, sf, [&](const auto& xv, const auto& sv, const auto& yv) {
        ref(xv, sv, sv, in_b, out_b, yv);
      });
      lowbit_test::require_row_route_bits(xd, sd, [&](const auto& xv, const auto& sv, const auto& yv) {
        ref(xv, sv, 0.0, double(in_b), double(out_b), yv);
      });
      lowbit_test::require_row_route_bits(xd, zd, [&](const auto& xv, const auto& zv, const auto& yv) {
        ex(xv, 0.05, zv, double(in_b), double(out_b), yv);
      });
    }
  // A bit width per row (the general route), against one-element calls;
  // values the routes leave to the general route's messages, nothing
  // written.
  const std::vector<float> x(4 * 32, 37.3f), s{0.25f, 0.25f, 0.5f, 0.25f}, ob{4, 4, 2, 4};
  std::vector<float> y(4 * 32, 42.0f);
  const strided_view<const float> xv(x.data(), {4, 32}), sv(s.data(), {4, 1});
  const strided_view<float> yv(y.data(), {4, 32});
  const lowbit::trunc_v1<semantics::exact> ex{.rounding = rounding_mode::floor};
  ex(xv, sv, 0.0f, 8.0f, strided_view<const float>(ob.data(), {4, 1}), yv);
  std::vector<float> one(1);
  ex(std::span<const float>(x.data(), 1), 0.25f, 0.0f, 8.0f, 4.0f, one);
  CHECK(y[0] == one[0]);
  CHECK(y[0] == 9.0f * 0.25f);  // round(149.2) = 149, / 16 floored: 9, times the scale
  ex(std::span<const float>(x.data(), 1), 0.5f, 0.0f, 8.0f, 2.0f, one);
  CHECK(y[2 * 32] == one[0]);
  CHECK(y[2 * 32] == 1.0f * 0.5f);  // round(74.6) = 75, / 64 floored: 1, times the scale
  const std::vector<float> bad{0.25f, 0.25f, 0.0f, 0.25f};
  std::fill(y.begin(), y.end(), 42.0f);
  check_rejected([&] { ex(xv, strided_view<const float>(bad.data(), {4, 1}), 0.0f, 8.0f, 4.0f, yv); }, y,
                 "scale[2, 0] = 0");
  check_rejected([&] { ex(xv, sv, 0.0f, 8.0f, 0.0f, yv); }, y, "out_bitwidth = 0");
  check_rejected([&] { ex(xv, sv, 0.0f, 8.5f, 4.0f, yv); }, y, "in_bitwidth = 8.5");
  std::vector<float> xs{1, 2, 3, 4, 5, 6}, ys(6, 42.0f);
  check_rejected([&] { ex(xs, -1.0f, 0.0f, 8.0f, 4.0f, ys); }, ys, "scale");
  check_rejected([&] { ex(xs, 1.0f, 0.0f, 33.0f, 4.0f, ys); }, ys, "in_bitwidth = 33");
  check_rejected([&] { lowbit::trunc_v1<>{}(xs, 1.0f, 0.0f, 8.0f, 0.5f, ys); }, ys, "out_bitwidth = 0.5");
}

// ---- the row route (detail::row_route, trunc::run_rows) -------------------------

TEST_CASE("trunc: the row route gives the general route's bits, every mode, width, type and parameter",
          "[trunc][route]") {
  const std::vector<float> xf = lowbit_test::mixed_values<float>(1400, 37);
  const std::vector<double> xd = lowbit_test::mixed_values<double>(1400, 41);
  // Per-row scales: with out_scale 0.35, t = 8, 1, 1/8, 4, 256, 1/16 and
  // 2^98 (ratios rounded to powers of two, below and above 1); with scale
  // 1e-30, the out_scale 1.7e8 gives t = 2^127, which has no exact inverse
  // (the scalar path, for every row). Zero points per row.
  const std::vector<float> sf{0.05f, 0.25f, 3.0f, 0.125f, 1e-3f, 7.0f, 1e-30f};
  const std::vector<float> osf{0.35f, 1.0f, 2.0f, 1.7e8f, 0.5f, 3.0f, 1e-3f};
  const std::vector<float> zf{0.0f, 2.0f, -3.0f, 1.5f, 0.0f, 7.0f, -1.0f};
  const std::vector<double> sd(sf.begin(), sf.end()), zd(zf.begin(), zf.end());
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (const bool is_signed : {true, false})
      for (const bool narrow : {false, true})
        for (const auto& bw : {std::pair{8.0f, 4.0f}, std::pair{4.0f, 8.0f}, std::pair{32.0f, 24.0f}}) {
          const float in_b = bw.first, out_b = bw.second;  // not bindings: clang 14 cannot capture those
          CAPTURE(lowbit::to_string(m), is_signed, narrow, in_b, out_b);
          const auto ref = make(is_signed, narrow, m);
          const auto ex = make<semantics::exact>(is_signed, narrow, m);
          // scale per row; out_scale per row; zero point per row; scale
          // and zero point per row (the same rows); double.
          lowbit_test::require_row_route_bits(xf, sf, [&](const auto& xv, const auto& sv, const auto& yv) {
            ref(xv, sv, 1.0f, in_b, 0.35f, out_b, yv);
          });
          lowbit_test::require_row_route_bits(xf, sf, [&](const auto& xv, const auto& sv, const auto& yv) {
            ex(xv, sv, -1.0f, in_b, 0.35f, out_b, yv);
          });
          lowbit_test::require_row_route_bits(xf, osf, [&](const auto& xv, const auto& ov, const auto& yv) {
            ref(xv, 1e-30f, 0.0f, in_b, ov, out_b, yv);
          });
          lowbit_test::require_row_route_bits(xf, osf, [&](const auto& xv, const auto& ov, const auto& yv) {
            ex(xv, 0.05f, 0.0f, in_b, ov, out_b, yv);
          });
          lowbit_test::require_row_route_bits(xf, zf, [&](const auto& xv, const auto& zv, const auto& yv) {
            ex(xv, 0.25f, zv, in_b, 2.0f, out_b, yv);
          });
          lowbit_test::require_row_route_bits(xf, sf, [&](const auto& xv, const auto& sv, const auto& yv) {
            ref(xv, sv, sv, in_b, 0.5f, out_b, yv);
          });
          lowbit_test::require_row_route_bits(xd, sd, [&](const auto& xv, const auto& sv, const auto& yv) {
            ref(xv, sv, 0.0, double(in_b), 0.35, double(out_b), yv);
          });
          lowbit_test::require_row_route_bits(xd, zd, [&](const auto& xv, const auto& zv, const auto& yv) {
            ex(xv, 0.05, zv, double(in_b), 0.35, double(out_b), yv);
          });
        }
  // An out_bitwidth or in_bitwidth per row (the general route), against
  // one-element calls; a bad scale or ratio in one row (the general route's
  // messages, nothing written).
  const std::vector<float> x(4 * 32, 2.3f), s{0.25f, 0.25f, 0.5f, 0.25f}, ob{8, 8, 2, 8}, ib{8, 8, 9, 8};
  std::vector<float> y(4 * 32, 42.0f);
  const strided_view<const float> xv(x.data(), {4, 32}), sv(s.data(), {4, 1});
  const strided_view<float> yv(y.data(), {4, 32});
  const auto ex = make<semantics::exact>(true, false, rounding_mode::half_even);
  ex(xv, sv, 0.0f, 8.0f, 1.0f, strided_view<const float>(ob.data(), {4, 1}), yv);
  CHECK(y[0] == tr1<semantics::exact>(2.3f, 0.25f, 0.0f, 8.0f, 1.0f, 8.0f, true, false, rounding_mode::half_even));
  CHECK(y[2 * 32] == 1.0f);  // 2 bits: round(4.6) = 5 / t = 2 -> 2.5, clamped to 1, times out_scale 1
  CHECK(y[2 * 32] == tr1<semantics::exact>(2.3f, 0.5f, 0.0f, 8.0f, 1.0f, 2.0f, true, false, rounding_mode::half_even));
  std::fill(y.begin(), y.end(), 42.0f);
  ex(xv, sv, 0.0f, strided_view<const float>(ib.data(), {4, 1}), 1.0f, 8.0f, yv);
  CHECK(y[2 * 32] == tr1<semantics::exact>(2.3f, 0.5f, 0.0f, 9.0f, 1.0f, 8.0f, true, false, rounding_mode::half_even));
  const std::vector<float> bad{0.25f, 0.25f, 0.0f, 0.25f}, huge{1.0f, 1.0f, 1.0f, 3e38f};
  std::fill(y.begin(), y.end(), 42.0f);
  check_rejected([&] { ex(xv, strided_view<const float>(bad.data(), {4, 1}), 0.0f, 8.0f, 1.0f, 8.0f, yv); }, y,
                 "scale[2, 0] = 0");
  check_rejected([&] { ex(xv, 1e-30f, 0.0f, 8.0f, strided_view<const float>(huge.data(), {4, 1}), 8.0f, yv); }, y,
                 "out_scale / scale");
}
