// SPDX-License-Identifier: Apache-2.0
// Exhaustive: the short rounding formulas of rounding.hpp equal the long ones
// they replace, on all 2^32 float32 inputs, as batches and as scalars.
//  - exact HALF_UP, trunc(y + copysign(pred(1/2), y)), against the fraction
//    form t = trunc(y), |y - t| >= 1/2 ? t +- 1 : t, every bit (zeros too);
//  - exact HALF_DOWN (with AVX-512 trunc of y + copysign(1/2 - 2^-25, y)
//    rounded toward zero) against |y - t| > 1/2 ? t +- 1 : t, and exact UP
//    against copysign(ceil(|y|), y), every bit;
//  - reference UP, HALF_UP (trunc(y +- 0.5)) and HALF_DOWN against numpy's
//    sign(y) * f(|y|) written out here, every bit (zeros too);
//  - round_integral_any_zero (IntQuant's UP, HALF_UP and HALF_DOWN in
//    reference semantics) against the same, every bit except for y = -0
//    (either zero allowed there).
// NaN inputs must give NaN; their sign and payload are not compared.
// Hidden ([.exhaustive]); run by the ctest "exhaustive" (label exhaustive).
#include <lowbit/rounding.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "support/catch.hpp"
#include "exhaustive/sweep.hpp"
#include "support/test_util.hpp"

namespace {

using lowbit::rounding_mode;
using lowbit::semantics;
using batch = xsimd::batch<float>;

/// The exact HALF_UP as lowbit computed it before: the fraction form.
float half_up_fraction_form(float y) {
  const float t = std::trunc(y);
  const float d = std::fabs(y - t);
  return d >= 0.5f ? t + std::copysign(1.0f, y) : t;
}

/// The exact HALF_DOWN's fraction form (ties toward zero).
float half_down_fraction_form(float y) {
  const float t = std::trunc(y);
  const float d = std::fabs(y - t);
  return d > 0.5f ? t + std::copysign(1.0f, y) : t;
}

/// numpy's sign(y) * f(|y|), sign(+-0) = +0: the select form lowbit used.
template <rounding_mode M>
float numpy_form(float y) {
  const float a = std::fabs(y);
  float m;
  if constexpr (M == rounding_mode::up)
    m = std::ceil(a);
  else if constexpr (M == rounding_mode::half_up)
    m = std::floor(a + 0.5f);
  else
    m = std::ceil(a - 0.5f);
  return y < 0.0f ? -m : m;
}

/// Canonical NaN for a NaN input, and, when `any_zero`, +0 for a -0 input,
/// so that the sweep's bitwise comparison ignores exactly what is allowed.
void canonicalize(const std::vector<float>& x, std::vector<float>& y, bool any_zero) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      // The result must be a NaN; make any non-NaN visible to the comparison.
      y[i] = std::isnan(y[i]) ? lowbit_test::f32(0x7fc00000u) : lowbit_test::f32(0x00000001u);
    } else if (any_zero && lowbit_test::bits(x[i]) == 0x80000000u && y[i] == 0.0f) {
      y[i] = 0.0f;
    }
  }
}

template <class Batch, class Scalar, class Oracle>
std::int64_t sweep(const Batch& batch_form, const Scalar& scalar_form, const Oracle& oracle, bool any_zero) {
  auto simd = [&](const std::vector<float>& x, std::vector<float>& y) {
    for (std::size_t i = 0; i < x.size(); i += batch::size)
      batch_form(batch::load_unaligned(&x[i])).store_unaligned(&y[i]);
    canonicalize(x, y, any_zero);
  };
  auto reference = [&](const std::vector<float>& x, std::vector<float>& y) {
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = oracle(x[i]);
    canonicalize(x, y, any_zero);
  };
  // The scalar form too, against the oracle's results in b.
  auto check = [&](const std::vector<float>& x, const std::vector<float>& b, std::uint64_t) -> long {
    std::vector<float> s(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) s[i] = scalar_form(x[i]);
    canonicalize(x, s, any_zero);
    for (std::size_t i = 0; i < x.size(); ++i)
      if (lowbit_test::bits(s[i]) != lowbit_test::bits(b[i])) return static_cast<long>(i);
    return -1L;
  };
  return lowbit_test::sweep_all_float32(simd, reference, check);
}

template <rounding_mode M>
std::int64_t sweep_any_zero() {
  return sweep([](batch v) { return lowbit::detail::round_integral_any_zero<semantics::reference, M>(v); },
               [](float v) { return lowbit::detail::round_integral_any_zero<semantics::reference, M>(v); },
               numpy_form<M>, true);
}

template <rounding_mode M>
std::int64_t sweep_reference() {
  return sweep([](batch v) { return lowbit::detail::round_integral<semantics::reference, M>(v); },
               [](float v) { return lowbit::detail::round_integral<semantics::reference, M>(v); },
               numpy_form<M>, false);
}

}  // namespace

TEST_CASE("exact HALF_UP by trunc(y + copysign(pred(1/2), y)) equals the fraction form on all 2^32 inputs",
          "[.exhaustive][rounding]") {
  const std::int64_t bad =
      sweep([](batch v) { return lowbit::detail::round_integral<semantics::exact, rounding_mode::half_up>(v); },
            [](float v) { return lowbit::detail::round_integral<semantics::exact, rounding_mode::half_up>(v); },
            half_up_fraction_form, false);
  INFO("first differing input bits: " << bad);
  CHECK(bad == -1);
}

TEST_CASE("exact HALF_DOWN and UP equal the fraction form and copysign(ceil(|y|), y) on all 2^32 inputs",
          "[.exhaustive][rounding]") {
  const std::int64_t half_down =
      sweep([](batch v) { return lowbit::detail::round_integral<semantics::exact, rounding_mode::half_down>(v); },
            [](float v) { return lowbit::detail::round_integral<semantics::exact, rounding_mode::half_down>(v); },
            half_down_fraction_form, false);
  const std::int64_t up =
      sweep([](batch v) { return lowbit::detail::round_integral<semantics::exact, rounding_mode::up>(v); },
            [](float v) { return lowbit::detail::round_integral<semantics::exact, rounding_mode::up>(v); },
            [](float v) { return std::copysign(std::ceil(std::fabs(v)), v); }, false);
  INFO("first differing input bits: half_down " << half_down << ", up " << up);
  CHECK(half_down == -1);
  CHECK(up == -1);
}

TEST_CASE("reference UP, HALF_UP, HALF_DOWN equal numpy's sign(y) * f(|y|) on all 2^32 inputs",
          "[.exhaustive][rounding]") {
  const std::int64_t up = sweep_reference<rounding_mode::up>();
  const std::int64_t half_up = sweep_reference<rounding_mode::half_up>();
  const std::int64_t half_down = sweep_reference<rounding_mode::half_down>();
  INFO("first differing input bits: up " << up << ", half_up " << half_up << ", half_down " << half_down);
  CHECK(up == -1);
  CHECK(half_up == -1);
  CHECK(half_down == -1);
}

TEST_CASE("round_integral_any_zero equals reference UP, HALF_UP, HALF_DOWN on all 2^32 inputs but -0",
          "[.exhaustive][rounding]") {
  const std::int64_t up = sweep_any_zero<rounding_mode::up>();
  const std::int64_t half_up = sweep_any_zero<rounding_mode::half_up>();
  const std::int64_t half_down = sweep_any_zero<rounding_mode::half_down>();
  INFO("first differing input bits: up " << up << ", half_up " << half_up << ", half_down " << half_down);
  CHECK(up == -1);
  CHECK(half_up == -1);
  CHECK(half_down == -1);
}
