// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/minifloat_constants.hpp
 * Powers of two as constant expressions, and the largest value of a
 * minifloat bit layout: computed here only, for minifloat_format,
 * FloatQuant and data_type.
 */
#ifndef LOWBIT_DETAIL_MINIFLOAT_CONSTANTS_HPP
#define LOWBIT_DETAIL_MINIFLOAT_CONSTANTS_HPP

#include <limits>

#include "../config.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// 2^e as a constant expression, for any e: exact for every power of two R
/// holds (subnormals included: -1074 <= e <= 1023 for double), +0 below,
/// +inf above.
template <class R = double>
constexpr R pow2(long long e) noexcept {
  constexpr long long hi = std::numeric_limits<R>::max_exponent - 1;
  constexpr long long lo = std::numeric_limits<R>::min_exponent - std::numeric_limits<R>::digits;
  if (e > hi) return std::numeric_limits<R>::infinity();
  if (e < lo) return R(0);
  R r = 1;
  for (; e >= 64; e -= 64) r *= R(0x1p64);
  for (; e <= -64; e += 64) r *= R(0x1p-64);
  for (; e > 0; --e) r *= R(2);
  for (; e < 0; ++e) r *= R(0.5);
  return r;
}

/// The largest value of a minifloat bit layout with m mantissa bits whose
/// top binade is 2^top (top = 2^E - 1 - bias), (2 - 2^-m) * 2^top, in R:
/// the one formula behind every minifloat maximum (minifloat_format,
/// FloatQuant's max, data_type). Rounded once when it leaves R's range.
template <class R>
constexpr R minifloat_largest(long long m, long long top) noexcept {
  return (R(2) - pow2<R>(-m)) * pow2<R>(top);
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_MINIFLOAT_CONSTANTS_HPP
