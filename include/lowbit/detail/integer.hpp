// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/integer.hpp
 * The integer grid shared by IntQuant, Trunc and the codes: bit-width
 * limits and their validation, the clamp, and the scale/zero-point steps
 * `y = x / scale + zeropt` and `Y = (q - zeropt) * scale`.
 */
#ifndef LOWBIT_DETAIL_INTEGER_HPP
#define LOWBIT_DETAIL_INTEGER_HPP

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../config.hpp"
#include "../error.hpp"
#include "../rounding.hpp"
#include "divide.hpp"
#include "elementwise.hpp"
#include "simd.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// Largest bit width accepted for lane type T: 32 for float (the QONNX
/// integer range), 53 for double (every limit is then exact).
template <class T>
inline constexpr int max_bitwidth = std::is_same_v<T, float> ? 32 : 53;

/// The integer range of one bit width, as lane values.
template <class T>
struct int_range {
  T lo, hi;
  bool bipolar;  // signed 1 bit: IntQuant's bipolar path
};

/// Rounds an integer toward zero into T ("the nearest T inside the range").
template <class T>
T toward_zero(std::int64_t v) {
  T f = static_cast<T>(v);
  if (static_cast<long double>(f) > static_cast<long double>(v) && v >= 0)
    f = std::nextafter(f, T(0));
  if (static_cast<long double>(f) < static_cast<long double>(v) && v < 0)
    f = std::nextafter(f, T(0));
  return f;
}

/**
 * The clamp limits of bit width `b` (an integer in 1..max_bitwidth<T>).
 * reference: QONNX's min_int/max_int evaluated in T, so a limit beyond T's
 * precision is rounded to nearest (uint25 max 2^25, int32 max 2^31).
 * exact: the nearest T inside the range, toward zero (2147483520).
 */
template <semantics S, class T>
LOWBIT_ALWAYS_INLINE int_range<T> int_limits(int b, bool is_signed, bool narrow) {
  int_range<T> r{};
  r.bipolar = is_signed && b == 1;
  if constexpr (S == semantics::reference) {
    if (is_signed) {
      const T p = static_cast<T>(std::uint64_t(1) << (b - 1));  // exact: b <= 53
      r.lo = -p;
      if (narrow) r.lo = r.lo + T(1);
      r.hi = p - T(1);
    } else {
      const T p = static_cast<T>(std::uint64_t(1) << b);
      r.lo = T(0);
      r.hi = narrow ? p - T(2) : p - T(1);
    }
  } else {
    if (is_signed) {
      const std::int64_t p = std::int64_t(1) << (b - 1);
      r.lo = toward_zero<T>(-p + (narrow ? 1 : 0));
      r.hi = toward_zero<T>(p - 1);
    } else {
      const std::int64_t p = std::int64_t(1) << b;
      r.lo = T(0);
      r.hi = toward_zero<T>(p - 1 - (narrow ? 1 : 0));
    }
  }
  return r;
}

/// numpy's clip (reference) or the specification's compare-and-replace
/// (exact: only y < lo or y > hi move), as `bound_above(hi, bound_below(lo,
/// y))`: one MAXPS and one MINPS on x86 (detail/simd.hpp).
///
/// For exact this is the definition. For reference, numpy's clip is
/// `y <= lo ? lo : y`, then `t >= hi ? hi : t`: the same values, NaN kept,
/// and a different result only for y == lo or t == hi, where the bounds
/// return y instead of the (equal) limit. The two differ in bits only when
/// both are zeros of opposite signs, which takes y = -0 and a limit of +0.
/// Now y = x / scale + zeropt is -0 only when zeropt is -0 (a round-to-
/// nearest sum is -0 only when both terms are), and then the output
/// (q - zeropt) * scale has q - (-0) = +0 for either zero q; a code drops
/// the sign of zero. So every output keeps its bits (tests/test_int_quant.cpp,
/// "negative zero point").
template <semantics S, class V>
LOWBIT_ALWAYS_INLINE V clamp(V y, V lo, V hi) noexcept {
  return detail::bound_above(hi, detail::bound_below(lo, y));
}

/// y = x / scale + zeropt, two roundings, never fused.
template <class V>
LOWBIT_ALWAYS_INLINE V scaled_input(V x, V scale, V zp) noexcept {
  V y = detail::quotient(x, scale);
  y = y + zp;
  return y;
}

/// The same with the divider of a kernel (division or exact reciprocal).
template <class V>
LOWBIT_ALWAYS_INLINE V scaled_input(const scale_divider& d, V x, V scale, V zp) noexcept {
  V y = d.divide(x, scale);
  y = y + zp;
  return y;
}

/// Y = (q - zeropt) * scale, two roundings, never fused.
template <class V>
LOWBIT_ALWAYS_INLINE V dequantize(V q, V scale, V zp) noexcept {
  V d = q - zp;
  d = d * scale;
  return d;
}

/// A valid bit width: an integer from 1 to max_bitwidth<T>.
template <class T>
LOWBIT_ALWAYS_INLINE bool valid_bitwidth(T b) noexcept {
  return b >= T(1) && b <= T(max_bitwidth<T>) && b == std::trunc(b);
}
/// valid_bitwidth of every lane (require_elements).
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch_bool<T, A> valid_bitwidth(const xsimd::batch<T, A>& b) noexcept {
  using V = xsimd::batch<T, A>;
  return mask_and(mask_and(b >= V(T(1)), b <= V(T(max_bitwidth<T>))), b == detail::trunc(b));
}

/// Checks that every element of a bit-width tensor is an integer in
/// 1..max_bitwidth<T> (both semantics).
template <class T>
void validate_bitwidth_tensor(const nd<const T>& d, const char* op, const char* role) {
  require_elements(d, [](auto b) { return valid_bitwidth(b); }, [&](T b, std::size_t i) {
    throw_invalid(cat(op, ": "), role, d, i, b,
                  std::is_same_v<T, float> ? "an integer from 1 to 32" : "an integer from 1 to 53");
  });
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_INTEGER_HPP
