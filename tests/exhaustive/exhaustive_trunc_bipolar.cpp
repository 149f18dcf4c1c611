// SPDX-License-Identifier: Apache-2.0
// Exhaustive: one Trunc configuration and one BipolarQuant configuration,
// SIMD equals scalar bit for bit on all 2^32 float32 inputs.
// Hidden ([.exhaustive]); run by the ctest "exhaustive" (label exhaustive).
#include <lowbit/bipolar_quant.hpp>
#include <lowbit/trunc.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "exhaustive/sweep.hpp"
#include "support/catch.hpp"
#include "support/test_util.hpp"

namespace {

template <class Run>
void expect_no_difference(const Run& run) {
  auto with = [&](bool simd) {
    return [&, simd](const std::vector<float>& x, std::vector<float>& y) { run(simd, x, y); };
  };
  const std::int64_t first_bad = lowbit_test::sweep_all_float32(with(true), with(false));
  if (first_bad >= 0)
    INFO("first differing input: " << lowbit_test::show(lowbit_test::f32(static_cast<std::uint32_t>(first_bad))));
  CHECK(first_bad == -1);
}

}  // namespace

TEST_CASE("Trunc (opset 2): SIMD equals scalar on all 2^32 inputs", "[.exhaustive][trunc]") {
  // Reference semantics, HALF_UP (numpy's formula), signed narrow, a zero
  // point, t = 2^round(log2(1.5 / 0.375)) = 4, clamp to 4 bits.
  lowbit::trunc<> op{.is_signed = true, .narrow = true, .rounding = lowbit::rounding_mode::half_up};
  expect_no_difference([&](bool simd, const std::vector<float>& x, std::vector<float>& y) {
    auto o = op;
    const lowbit::detail::simd_scope simd_37(simd);  // the SIMD body or the scalar kernels
    o(x, 0.375f, 3.0f, 8.0f, 1.5f, 4.0f, y);
  });
}

TEST_CASE("Trunc (opset 2) with a power-of-two scale: SIMD equals scalar on all 2^32 inputs",
          "[.exhaustive][trunc]") {
  // Exact semantics, ROUND, unsigned: scale 0.25 and t = 4 take the
  // power-of-two fast path (products by 4 and 0.25) in the SIMD run; the
  // scalar run divides.
  lowbit::trunc<lowbit::semantics::exact> op{.is_signed = false, .narrow = false,
                                             .rounding = lowbit::rounding_mode::half_even};
  expect_no_difference([&](bool simd, const std::vector<float>& x, std::vector<float>& y) {
    auto o = op;
    const lowbit::detail::simd_scope simd_51(simd);  // the SIMD body or the scalar kernels
    o(x, 0.25f, 0.0f, 8.0f, 1.0f, 4.0f, y);
  });
}

TEST_CASE("BipolarQuant: SIMD equals scalar on all 2^32 inputs", "[.exhaustive][bipolar_quant]") {
  lowbit::bipolar_quant<> op;
  expect_no_difference([&](bool simd, const std::vector<float>& x, std::vector<float>& y) {
    auto o = op;
    const lowbit::detail::simd_scope simd_60(simd);  // the SIMD body or the scalar kernels
    o(x, 0.75f, y);
  });
}
