// SPDX-License-Identifier: Apache-2.0
/**
 * @file minifloat.hpp
 * Minifloat formats (FP8, FP6, FP4, ...) as values: a format type, the OCP
 * presets, and `minifloat_quant`, FloatQuant with its format given by one of
 * them. The semantics are FloatQuant's (docs/semantics.md, "FloatQuant").
 */
#ifndef LOWBIT_MINIFLOAT_HPP
#define LOWBIT_MINIFLOAT_HPP

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "error.hpp"
#include "detail/minifloat_constants.hpp"
#include "float_quant.hpp"
#include "rounding.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE


/**
 * A signed minifloat format, described as QONNX FloatQuant describes it:
 * one sign bit, `exponent_bits` E, `mantissa_bits` m, an exponent `bias`,
 * and the largest finite value `max_value`. The grid is every value
 * `+-2^(e - m) * k` with k an integer below 2^(m+1), from the subnormal step
 * 2^(1 - bias - m) up to max_value.
 *
 * `has_inf`, `has_nan` and `saturation` are FloatQuant's attributes: an
 * overflow (after rounding) saturates to +-max_value when `saturation`, else
 * becomes +-inf when `has_inf`, else NaN.
 *
 * **Example**:
 * ```
 * constexpr lowbit::minifloat_format f = lowbit::formats::fp8_e4m3fn;
 * static_assert(f.max_value == 448 && f.min_subnormal() == 0x1p-9);
 * ```
 */
struct minifloat_format {
  int exponent_bits = 4;       ///< E, >= 1.
  int mantissa_bits = 3;       ///< m, >= 0 (<= 23 to be held by binary32).
  int bias = 7;                ///< Exponent bias.
  double max_value = 448.0;    ///< Largest finite value (QONNX's max_val).
  bool has_inf = false;        ///< Overflow gives +-inf when not saturating.
  bool has_nan = true;         ///< Overflow gives NaN when neither saturating nor has_inf.
  bool saturation = true;      ///< Overflow saturates to +-max_value.

  // The three limits below are computed in long long and double, so they
  // are defined for every int value of the fields (no overflow, no shift
  // by a negative or too large count); a power of two beyond double's range
  // is +inf (above 2^1023) or +0 (below 2^-1074).

  /// 2^(1 - bias - m), FloatQuant's smallest step: the smallest positive
  /// value (a subnormal) when m >= 1. With m = 0 the subnormal exponent
  /// field holds only zero, so this is min_normal(), the smallest positive
  /// value. Evaluated as written for any bias and m (a negative m too).
  constexpr double min_subnormal() const noexcept {
    return detail::pow2(1LL - static_cast<long long>(bias) - static_cast<long long>(mantissa_bits));
  }
  /// The smallest positive normal value, 2^(1 - bias), for any bias.
  constexpr double min_normal() const noexcept { return detail::pow2(1LL - static_cast<long long>(bias)); }
  /// The largest value of the bit layout, (2 - 2^-m) * 2^(2^E - 1 - bias),
  /// before max_value caps it (FloatQuant's max, with its max_val = +inf).
  /// It reserves no pattern for inf or NaN, as FloatQuant. +inf when the
  /// power of two is above 2^1023 (e.g. E = 40); NaN when exponent_bits or
  /// mantissa_bits is negative (no such format).
  constexpr double max_encodable() const noexcept {
    if (exponent_bits < 0 || mantissa_bits < 0) return std::numeric_limits<double>::quiet_NaN();
    // 2^E - 1 - bias > 1023 for every bias once E >= 33.
    const long long top = exponent_bits >= 40 ? std::numeric_limits<long long>::max()
                                              : (1LL << exponent_bits) - 1 - static_cast<long long>(bias);
    return detail::minifloat_largest<double>(mantissa_bits, top);
  }
  /// The same format with another overflow behaviour.
  constexpr minifloat_format with_saturation(bool s) const noexcept {
    minifloat_format f = *this;
    f.saturation = s;
    return f;
  }
  friend constexpr bool operator==(const minifloat_format&, const minifloat_format&) = default;
};

/**
 * Presets from the OCP 8-bit Floating Point Specification (OFP8, FP8) and
 * the OCP Microscaling Formats (MX) v1.0 Specification (FP6, FP4). All
 * saturate by default (QONNX FloatQuant's default); use `with_saturation(false)`
 * for the OCP non-saturating conversions (E5M2 then overflows to inf,
 * E4M3FN to NaN).
 */
namespace formats {
/// OCP FP8 E4M3 ("E4M3FN"): bias 7, no infinities, S.1111.111 is NaN; max 448 = 1.75 * 2^8,
/// min subnormal 2^-9.
inline constexpr minifloat_format fp8_e4m3fn{4, 3, 7, 448.0, false, true, true};
/// OCP FP8 E5M2: bias 15, IEEE-like with inf and NaN; max 57344 = 1.75 * 2^15, min subnormal 2^-16.
inline constexpr minifloat_format fp8_e5m2{5, 2, 15, 57344.0, true, true, true};
/// OCP MX FP6 E2M3: bias 1, no inf or NaN; max 7.5 = 1.875 * 2^2, min subnormal 2^-3.
inline constexpr minifloat_format fp6_e2m3{2, 3, 1, 7.5, false, false, true};
/// OCP MX FP6 E3M2: bias 3, no inf or NaN; max 28 = 1.75 * 2^4, min subnormal 2^-4.
inline constexpr minifloat_format fp6_e3m2{3, 2, 3, 28.0, false, false, true};
/// OCP MX FP4 E2M1: bias 1, no inf or NaN; max 6 = 1.5 * 2^2, min subnormal 2^-1.
inline constexpr minifloat_format fp4_e2m1{2, 1, 1, 6.0, false, false, true};
}  // namespace formats

/**
 * FloatQuant to a fixed minifloat format: `y = float_quant(x, scale,
 * format.exponent_bits, format.mantissa_bits, format.bias, format.max_value)`
 * with has_inf, has_nan and saturation taken from the format.
 *
 * **Example**:
 * ```
 * std::vector<float> x{0.3f, 500.0f}, y(2);
 * lowbit::minifloat_quant<> q{.format = lowbit::formats::fp8_e4m3fn};
 * q(x, 1.0f, y);  // y = {0.3125, 448}
 * ```
 * @throws lowbit::error as float_quant does (the format's own values are
 *         checked there, e.g. a format binary32 cannot hold in the exact
 *         semantics).
 */
template <semantics S = semantics::reference>
struct minifloat_quant {
  minifloat_format format = formats::fp8_e4m3fn;       ///< The target format.
  rounding_mode rounding = rounding_mode::half_even;   ///< How values between grid points round.
  execution exec{};                                    ///< As float_quant::exec (threads).
  std::uint64_t seed = 0;         ///< As float_quant::seed (rounding_mode::stochastic).
  int random_bits = 16;           ///< As float_quant::random_bits.
  std::uint64_t index_offset = 0; ///< As float_quant::index_offset.

  /// The equivalent float_quant functor (the format's values then go in as arguments).
  float_quant<S> op() const {
    return float_quant<S>{.rounding = rounding,
                          .has_inf = format.has_inf,
                          .has_nan = format.has_nan,
                          .has_subnormal = true,
                          .saturation = format.saturation,
                          .exec = exec,
                          .seed = seed,
                          .random_bits = random_bits,
                          .index_offset = index_offset};
  }

  /// The broadcast shape of x and scale.
  template <tensor_arg X, tensor_arg Scale>
  shape output_shape(const X& x, const Scale& scale) const {
    return op().output_shape(x, scale, format.exponent_bits, format.mantissa_bits, format.bias,
                             format.max_value);
  }

  /// Quantizes x into y.
  template <tensor_arg X, tensor_arg Scale, tensor_arg Y>
  void operator()(const X& x, const Scale& scale, Y&& y) const {
    op()(x, scale, format.exponent_bits, format.mantissa_bits, format.bias, format.max_value,
         std::forward<Y>(y));
  }
};

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_MINIFLOAT_HPP
