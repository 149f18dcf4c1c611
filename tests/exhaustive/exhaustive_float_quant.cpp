// SPDX-License-Identifier: Apache-2.0
// Exhaustive: FloatQuant to OCP FP8 E4M3FN, FP8 E5M2 and FP4 E2M1, exact
// semantics, scale 1, every rounding mode: on all 2^32 float32 inputs the
// SIMD path equals the scalar path bit for bit, and on a fixed sample of
// every block (1 input in 251) the scalar path equals the decode-table
// oracle. (tests/test_minifloat.cpp checks the oracle on every code,
// midpoint and one ulp either side.)
// The reference semantics are swept for E4M3FN too: the SIMD path (its
// fast path, and with scale 1 the power-of-two product) against the scalar
// path, which always takes the general path and divides.
// Hidden ([.exhaustive]); run by the ctest "exhaustive" (label exhaustive).
#include <lowbit/minifloat.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "exhaustive/sweep.hpp"
#include "support/catch.hpp"
#include "support/minifloat_oracle.hpp"
#include "support/test_util.hpp"

TEST_CASE("FloatQuant E4M3FN/E5M2/E2M1: SIMD equals scalar on all 2^32 inputs, scalar equals the oracle",
          "[.exhaustive][float_quant]") {
  using lowbit::semantics;
  const std::pair<const char*, lowbit::minifloat_format> formats[] = {
      {"E4M3FN", lowbit::formats::fp8_e4m3fn},
      {"E5M2", lowbit::formats::fp8_e5m2},
      {"E2M1", lowbit::formats::fp4_e2m1},
  };
  for (const auto& [fname, f] : formats) {
    const lowbit_test::minifloat_oracle oracle(f);
    for (lowbit::rounding_mode m : lowbit::all_rounding_modes) {
      INFO(fname << " " << lowbit::to_string(m));
      const lowbit::minifloat_quant<semantics::exact> q{.format = f, .rounding = m};
      auto with = [&](bool simd) {
        return [&, simd](const std::vector<float>& x, std::vector<float>& y) {
          auto o = q;
          const lowbit::detail::simd_scope simd_39(simd);  // the SIMD body or the scalar kernels
          o(x, 1.0f, y);
        };
      };
      auto check = [&](const std::vector<float>& x, const std::vector<float>& y, std::uint64_t) {
        for (std::size_t i = 0; i < x.size(); i += 251) {
          const float want = oracle(x[i], m);
          const bool ok = (std::isnan(want) && std::isnan(y[i])) || lowbit_test::bits(want) == lowbit_test::bits(y[i]);
          if (!ok) return static_cast<long>(i);
        }
        return -1L;
      };
      const std::int64_t first_bad = lowbit_test::sweep_all_float32(with(true), with(false), check);
      if (first_bad >= 0) {
        const float x = lowbit_test::f32(static_cast<std::uint32_t>(first_bad));
        float y[2] = {};
        auto o = q;
        const lowbit::detail::simd_scope simd_56(false);  // the SIMD body or the scalar kernels
        o(std::span<const float>(&x, 1), 1.0f, std::span<float>(y, 1));
        INFO("first failing input " << lowbit_test::show(x) << ": scalar " << lowbit_test::show(y[0])
                                    << ", oracle " << lowbit_test::show(oracle(x, m)));
        CHECK(first_bad == -1);
      }
    }
  }
}

TEST_CASE("FloatQuant E4M3FN in reference semantics: SIMD equals scalar on all 2^32 inputs",
          "[.exhaustive][float_quant]") {
  using lowbit::semantics;
  struct config {
    lowbit::rounding_mode mode;
    float scale;
    lowbit::minifloat_format format = lowbit::formats::fp8_e4m3fn;
  };
  // The SIMD path's directed modes share the rounding step with the scalar
  // path, so one of them suffices; ROUND has a kernel of its own (the
  // magic-number form of formats that saturate to a max on their grid), run
  // on E4M3FN and on E2M1 (m = 1, emin = 0), and with a scale that is not a
  // power of two.
  const config configs[] = {{lowbit::rounding_mode::half_even, 1.0f},
                            {lowbit::rounding_mode::ceil, 1.0f},
                            {lowbit::rounding_mode::half_even, 0.3f},
                            {lowbit::rounding_mode::half_even, 1.0f, lowbit::formats::fp4_e2m1}};
  for (const config& c : configs) {
    INFO(lowbit::to_string(c.mode) << " scale " << c.scale << " mantissa bits " << c.format.mantissa_bits);
    const lowbit::minifloat_quant<semantics::reference> q{.format = c.format, .rounding = c.mode};
    auto with = [&](bool simd) {
      return [&, simd](const std::vector<float>& x, std::vector<float>& y) {
        auto o = q;
        const lowbit::detail::simd_scope simd_84(simd);  // the SIMD body or the scalar kernels
        o(x, c.scale, y);
      };
    };
    const std::int64_t first_bad = lowbit_test::sweep_all_float32(with(true), with(false));
    if (first_bad >= 0) INFO("first differing input: " << lowbit_test::show(lowbit_test::f32(std::uint32_t(first_bad))));
    CHECK(first_bad == -1);
  }
}

TEST_CASE("FloatQuant E4M3FN, lowbit's extension modes: SIMD equals scalar on all 2^32 inputs",
          "[.exhaustive][extensions][float_quant]") {
  // STOCHASTIC (seed 0, 16 bits: the fast kernel against the general one),
  // ROUND_TO_ODD and DPU, exact and reference semantics.
  using lowbit::rounding_mode;
  for (rounding_mode m : {rounding_mode::stochastic, rounding_mode::odd, rounding_mode::dpu}) {
    for (bool exact : {true, false}) {
      INFO(lowbit::to_string(m) << (exact ? " exact" : " reference"));
      auto with = [&](bool simd) {
        return [&, simd](const std::vector<float>& x, std::vector<float>& y) {
          const lowbit::detail::simd_scope scope(simd);
          if (exact)
            lowbit::float_quant<lowbit::semantics::exact>{.rounding = m}(x, 0.75f, 4.0f, 3.0f, 7.0f, 448.0f, y);
          else
            lowbit::float_quant<>{.rounding = m}(x, 0.75f, 4.0f, 3.0f, 7.0f, 448.0f, y);
        };
      };
      const std::int64_t first_bad = lowbit_test::sweep_all_float32(with(true), with(false));
      if (first_bad >= 0) INFO("first differing input: " << lowbit_test::show(lowbit_test::f32(std::uint32_t(first_bad))));
      CHECK(first_bad == -1);
    }
  }
}
