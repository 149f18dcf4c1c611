// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/minifloat.hpp: the OCP presets against the values
// the specs publish, and minifloat_quant against the decode-table oracle.
#include <lowbit/minifloat.hpp>

#include <climits>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/minifloat_oracle.hpp"
#include "support/checks.hpp"
#include "support/test_util.hpp"

using lowbit::minifloat_format;
using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit_test::bits;
using lowbit_test::show;
using lowbit_test::same_value;
namespace formats = lowbit::formats;

namespace {

struct published {
  const char* name;
  minifloat_format f;
  int e, m, bias;
  double max, min_normal, min_subnormal;
  bool has_inf;
};

// OCP 8-bit Floating Point Specification (OFP8) rev 1.0, table 1, and OCP
// Microscaling Formats (MX) v1.0, tables 2 and 3: max normal, min normal,
// min subnormal.
const published ocp[] = {
    {"FP8 E4M3FN", formats::fp8_e4m3fn, 4, 3, 7, 448.0, 0x1p-6, 0x1p-9, false},
    {"FP8 E5M2", formats::fp8_e5m2, 5, 2, 15, 57344.0, 0x1p-14, 0x1p-16, true},
    {"FP6 E2M3", formats::fp6_e2m3, 2, 3, 1, 7.5, 1.0, 0.125, false},
    {"FP6 E3M2", formats::fp6_e3m2, 3, 2, 3, 28.0, 0.25, 0.0625, false},
    {"FP4 E2M1", formats::fp4_e2m1, 2, 1, 1, 6.0, 1.0, 0.5, false},
};


}  // namespace

TEST_CASE("OCP presets: layout, max, min normal and min subnormal as published", "[minifloat]") {
  for (const published& p : ocp) {
    INFO(p.name);
    CHECK(p.f.exponent_bits == p.e);
    CHECK(p.f.mantissa_bits == p.m);
    CHECK(p.f.bias == p.bias);
    CHECK(p.f.max_value == p.max);
    CHECK(p.f.min_normal() == p.min_normal);
    CHECK(p.f.min_subnormal() == p.min_subnormal);
    CHECK(p.f.has_inf == p.has_inf);
    CHECK(p.f.saturation);
    CHECK(p.f.max_value <= p.f.max_encodable());
    // The largest code is max and the smallest positive one min_subnormal, in both semantics.
    for (semantics s : {semantics::reference, semantics::exact}) {
      const float x[] = {static_cast<float>(p.max), static_cast<float>(p.min_subnormal),
                         static_cast<float>(p.max) * 4, static_cast<float>(p.min_subnormal) / 4};
      float y[4] = {};
      if (s == semantics::exact)
        lowbit::minifloat_quant<semantics::exact>{.format = p.f}(std::span<const float>(x), 1.0f, std::span<float>(y));
      else
        lowbit::minifloat_quant<>{.format = p.f}(std::span<const float>(x), 1.0f, std::span<float>(y));
      CHECK(y[0] == static_cast<float>(p.max));
      CHECK(y[1] == static_cast<float>(p.min_subnormal));
      CHECK(y[2] == static_cast<float>(p.max));  // saturates
      CHECK(bits(y[3]) == bits(0.0f));
    }
  }
  // The bit-layout maxima before the cap: E4M3FN's S.1111.111 and E5M2's top
  // binade are NaN/inf codes in OCP, so max_value lies below them.
  CHECK(formats::fp8_e4m3fn.max_encodable() == 480.0);
  CHECK(formats::fp8_e5m2.max_encodable() == 114688.0);
  CHECK(formats::fp4_e2m1.max_encodable() == 6.0);
  CHECK(formats::fp6_e2m3.max_encodable() == 7.5);
  CHECK(formats::fp6_e3m2.max_encodable() == 28.0);
}

TEST_CASE("minifloat_quant: overflow follows the format's flags", "[minifloat]") {
  const float x[] = {60000.0f, 61440.0f, -1e9f, std::numeric_limits<float>::infinity()};
  float y[4] = {};
  // E5M2 non-saturating: 61440 ties to 65536 (even) and overflows to inf; 60000 rounds to 57344.
  lowbit::minifloat_quant<semantics::exact> q{.format = formats::fp8_e5m2.with_saturation(false)};
  q(std::span<const float>(x), 1.0f, std::span<float>(y));
  CHECK(y[0] == 57344.0f);
  CHECK(y[1] == std::numeric_limits<float>::infinity());
  CHECK(y[2] == -std::numeric_limits<float>::infinity());
  CHECK(y[3] == std::numeric_limits<float>::infinity());
  // E4M3FN non-saturating: NaN.
  lowbit::minifloat_quant<semantics::exact> q2{.format = formats::fp8_e4m3fn.with_saturation(false)};
  const float x2[] = {464.0f, 465.0f};
  float y2[2] = {};
  q2(std::span<const float>(x2), 1.0f, std::span<float>(y2));
  CHECK(y2[0] == 448.0f);
  CHECK(std::isnan(y2[1]));
  // FP4 without inf or NaN cannot be non-saturating: rejected, y untouched.
  lowbit::minifloat_quant<> q3{.format = formats::fp4_e2m1.with_saturation(false)};
  float y3[2] = {5.0f, 5.0f};
  REQUIRE_THROWS_AS(q3(std::span<const float>(x2), 1.0f, std::span<float>(y3)), lowbit::error);
  CHECK(y3[0] == 5.0f);
  CHECK(y3[1] == 5.0f);
  // A scale and per-channel scales go through.
  lowbit::minifloat_quant<> q4{.format = formats::fp4_e2m1};
  const float x4[] = {3.0f, 5.0f};
  const float s4[] = {0.5f, 2.0f};
  float y4[2] = {};
  q4(std::span<const float>(x4), std::span<const float>(s4), std::span<float>(y4));
  CHECK(y4[0] == 3.0f);  // 6 * 0.5
  CHECK(y4[1] == 4.0f);  // 2.5 -> 2 (tie to even) * 2
  CHECK(q4.output_shape(std::span<const float>(x4), 1.0f) == lowbit::shape{2});
}

TEST_CASE("the decode-table oracle itself: E2M1's codes", "[minifloat][oracle]") {
  const lowbit_test::minifloat_oracle o(formats::fp4_e2m1);
  std::vector<double> v;
  for (const auto& c : o.codes()) v.push_back(c.value);
  // The eight codes, then the first grid point above max (8).
  CHECK(v == std::vector<double>{0, 0.5, 1, 1.5, 2, 3, 4, 6, 8});
  CHECK(o(2.5f, rounding_mode::half_even) == 2.0f);
  CHECK(o(2.5f, rounding_mode::half_up) == 3.0f);
  CHECK(o(-2.5f, rounding_mode::half_down) == -2.0f);
  CHECK(o(-2.1f, rounding_mode::floor) == -3.0f);
  // 7 ties between 6 (mantissa 1, odd) and 8 (even, above max): 8, which saturates.
  CHECK(o(7.0f, rounding_mode::half_even) == 6.0f);
  CHECK(o(-0.2f, rounding_mode::ceil) == -0.0f);
  CHECK(bits(o(-0.2f, rounding_mode::ceil)) == bits(-0.0f));
  CHECK(o(-0.2f, rounding_mode::floor) == -0.5f);
}

TEST_CASE("minifloat_quant equals the decode-table oracle at every code, midpoint and one ulp either side",
          "[minifloat][oracle]") {
  std::vector<minifloat_format> fs;
  for (const published& p : ocp) {
    fs.push_back(p.f);
    if (p.f.has_inf || p.f.has_nan) fs.push_back(p.f.with_saturation(false));
  }
  for (const minifloat_format& f : fs) {
    const lowbit_test::minifloat_oracle oracle(f);
    const std::vector<float> x = oracle.probe_points();
    std::vector<float> a(x.size()), b(x.size());
    for (rounding_mode m : lowbit::all_rounding_modes) {
      INFO("E" << f.exponent_bits << "M" << f.mantissa_bits << " saturation " << f.saturation << " "
               << lowbit::to_string(m));
      lowbit::minifloat_quant<semantics::exact> q{.format = f, .rounding = m};
      const lowbit::detail::simd_scope simd_152(true);  // the SIMD body or the scalar kernels
      q(x, 1.0f, a);
      const lowbit::detail::simd_scope simd_154(false);  // the SIMD body or the scalar kernels
      q(x, 1.0f, b);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const float want = oracle(x[i], m);
        if (!same_value(b[i], want) || !same_value(a[i], b[i])) {
          INFO("x = " << show(x[i]) << ": oracle " << show(want) << ", scalar " << show(b[i]) << ", SIMD "
                      << show(a[i]));
          CHECK(false);
          break;
        }
      }
    }
  }
}

namespace {
// Constant expressions, so a signed overflow or a bad shift inside would
// not compile (the build fails rather than the test).
constexpr double inf_d = std::numeric_limits<double>::infinity();
static_assert(minifloat_format{4, 3, INT_MIN, 448.0}.min_normal() == inf_d);
static_assert(minifloat_format{4, 3, INT_MIN, 448.0}.min_subnormal() == inf_d);
static_assert(minifloat_format{4, 3, INT_MAX, 448.0}.min_normal() == 0.0);
static_assert(minifloat_format{40, 3, 7, 448.0}.max_encodable() == inf_d);
static_assert(minifloat_format{8, 23, 128, 0.0}.max_encodable() == static_cast<double>(std::numeric_limits<float>::max()));
static_assert(formats::fp8_e4m3fn.min_subnormal() == 0x1p-9 && formats::fp8_e4m3fn.max_encodable() == 480.0);
}  // namespace

TEST_CASE("minifloat_format: min_subnormal, min_normal and max_encodable are defined for every int field",
          "[minifloat]") {
  // Runtime values (no constant folding): UBSan sees every operation.
  auto fmt = [](int e, int m, int b) {
    volatile int ve = e, vm = m, vb = b;
    return minifloat_format{ve, vm, vb, 448.0};
  };
  const double inf_v = std::numeric_limits<double>::infinity();
  // The bias: 1 - bias and 1 - bias - m in long long, 2^k beyond double's
  // range as 0 or inf.
  CHECK(fmt(4, 3, INT_MIN).min_normal() == inf_v);
  CHECK(fmt(4, 3, INT_MIN).min_subnormal() == inf_v);
  CHECK(fmt(4, 3, INT_MAX).min_normal() == 0.0);
  CHECK(fmt(4, 3, INT_MAX).min_subnormal() == 0.0);
  CHECK(fmt(4, INT_MAX, INT_MIN).min_subnormal() == 0x1p2);  // 2^(1 + 2^31 - (2^31 - 1))
  CHECK(fmt(4, INT_MIN, INT_MAX).min_subnormal() == 0x1p2);  // 2^(1 - (2^31 - 1) + 2^31)
  CHECK(fmt(4, 3, -1022).min_normal() == 0x1p1023);
  CHECK(fmt(4, 3, -1023).min_normal() == inf_v);
  CHECK(fmt(4, 3, 1075).min_normal() == 0x1p-1074);  // the smallest subnormal double, exact
  CHECK(fmt(4, 3, 1076).min_normal() == 0.0);
  CHECK(fmt(4, 3, 1070).min_subnormal() == 0x1p-1072);
  CHECK(fmt(4, 0, 7).min_subnormal() == fmt(4, 0, 7).min_normal());  // m = 0: both 2^(1 - bias)
  // The exponent bits: no shift by 40 or by a negative count.
  for (int e : {33, 40, 63, 64, 1000, INT_MAX}) {
    INFO("exponent_bits " << e);
    CHECK(fmt(e, 3, 7).max_encodable() == inf_v);
    CHECK(fmt(e, 3, INT_MIN).max_encodable() == inf_v);
    CHECK(fmt(e, 3, INT_MAX).max_encodable() == inf_v);  // 2^E - 1 - bias > 1023 once E >= 33
  }
  CHECK(fmt(32, 3, INT_MAX).max_encodable() == inf_v);  // 2^32 - 1 - (2^31 - 1) = 2^31
  CHECK(fmt(31, 0, INT_MAX).max_encodable() == 1.0);   // 2^31 - 1 - (2^31 - 1) = 0
  CHECK(fmt(8, 23, 128).max_encodable() == static_cast<double>(std::numeric_limits<float>::max()));
  CHECK(fmt(8, 23, 2000).max_encodable() == 0.0);
  CHECK(fmt(0, 3, 7).max_encodable() == 1.875 * 0x1p-7);  // E = 0: 2^0 - 1 - 7, evaluated as written
  for (int bad : {-1, -40, INT_MIN}) {
    INFO("negative field " << bad);
    CHECK(std::isnan(fmt(bad, 3, 7).max_encodable()));
    CHECK(std::isnan(fmt(4, bad, 7).max_encodable()));
  }
  // Mantissa bits beyond double's precision: 2 - 2^-m rounds to 2.
  CHECK(fmt(4, INT_MAX, 7).max_encodable() == 512.0);
  CHECK(fmt(4, 2000, 7).max_encodable() == 512.0);
  CHECK(fmt(4, INT_MAX, 7).min_subnormal() == 0.0);
  CHECK(fmt(4, -5, 7).min_subnormal() == 0x1p-1);  // 2^(1 - 7 + 5)
}
