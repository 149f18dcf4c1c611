// SPDX-License-Identifier: Apache-2.0
// Exhaustive: for one IntQuant configuration per rounding mode, the SIMD path
// equals the scalar path bit for bit on all 2^32 float32 inputs.
// Hidden ([.exhaustive]); run by the ctest "exhaustive" (label exhaustive).
#include <lowbit/int_quant.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "support/catch.hpp"
#include "exhaustive/sweep.hpp"
#include "support/test_util.hpp"

namespace {

struct config {
  lowbit::rounding_mode mode;
  bool exact;
  bool is_signed;
  bool narrow;
  float scale, zeropt, bitwidth;
};

// One per mode; semantics, signedness, narrow and the parameters vary so the
// sweeps also cover the exact-semantics formulas, unsigned clamps, a zero
// point, a tiny scale and the bipolar path. (A subnormal scale is covered by
// the unit tests only: every division by it takes a microcode assist, which
// would make one sweep take longer than CI allows.)
const config configs[] = {
    {lowbit::rounding_mode::half_even, false, true, false, 0.05f, 0.0f, 8.0f},
    {lowbit::rounding_mode::ceil, true, false, false, 0.37f, 3.0f, 4.0f},
    {lowbit::rounding_mode::floor, false, true, true, 3e-5f, -2.0f, 16.0f},
    {lowbit::rounding_mode::up, true, true, false, 3.0f, 0.5f, 24.0f},
    {lowbit::rounding_mode::down, false, false, true, 0.125f, 0.0f, 2.0f},
    {lowbit::rounding_mode::half_up, false, true, false, 1.0f, 0.0f, 24.0f},
    {lowbit::rounding_mode::half_down, true, false, false, 0.7f, 1.0f, 25.0f},
    {lowbit::rounding_mode::half_up, true, true, false, 0.5f, 0.25f, 1.0f},  // bipolar
};

// lowbit's extensions (ctest exhaustive.extensions); stochastic with seed 0
// and 16 random bits, each element's draw from its index in the sweep's
// block of 2^16.
const config extension_configs[] = {
    {lowbit::rounding_mode::stochastic, false, true, false, 0.05f, 0.0f, 8.0f},
    {lowbit::rounding_mode::stochastic, true, false, false, 0.37f, 3.0f, 24.0f},
    {lowbit::rounding_mode::odd, true, true, false, 0.3f, 0.0f, 8.0f},
    {lowbit::rounding_mode::dpu, false, true, false, 0.5f, 0.0f, 16.0f},
};

template <lowbit::semantics S>
std::int64_t sweep_config(const config& c) {
  lowbit::int_quant<S> op{.is_signed = c.is_signed, .narrow = c.narrow, .rounding = c.mode};
  auto with = [&](bool simd) {
    return [&, simd](const std::vector<float>& x, std::vector<float>& y) {
      auto o = op;
      const lowbit::detail::simd_scope simd_47(simd);  // the SIMD body or the scalar kernels
      o(x, c.scale, c.zeropt, c.bitwidth, y);
    };
  };
  return lowbit_test::sweep_all_float32(with(true), with(false));
}

/// Returns the first input bit pattern where SIMD and scalar differ, or -1.
std::int64_t sweep(const config& c) {
  return c.exact ? sweep_config<lowbit::semantics::exact>(c) : sweep_config<lowbit::semantics::reference>(c);
}

/// Sweeps every configuration, each one a CHECK of its own.
template <std::size_t N>
void check_all(const config (&cs)[N]) {
  for (const config& c : cs) {
    INFO("mode " << lowbit::to_string(c.mode) << (c.exact ? " exact" : " reference")
                 << " signed " << c.is_signed << " narrow " << c.narrow << " scale " << c.scale
                 << " zeropt " << c.zeropt << " bitwidth " << c.bitwidth);
    const std::int64_t first_bad = sweep(c);
    if (first_bad >= 0) INFO("first differing input: " << lowbit_test::show(lowbit_test::f32(std::uint32_t(first_bad))));
    CHECK(first_bad == -1);
  }
}

}  // namespace

TEST_CASE("IntQuant: SIMD equals scalar on all 2^32 float32 inputs", "[.exhaustive][int_quant]") {
  check_all(configs);
}

TEST_CASE("IntQuant, lowbit's extension modes: SIMD equals scalar on all 2^32 float32 inputs",
          "[.exhaustive][extensions][int_quant]") {
  check_all(extension_configs);
}
