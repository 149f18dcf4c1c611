// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/divide.hpp
 * The division by a scale, and its power-of-two fast path: a product by the
 * reciprocal where that is provably the same operation.
 */
#ifndef LOWBIT_DETAIL_DIVIDE_HPP
#define LOWBIT_DETAIL_DIVIDE_HPP

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../config.hpp"
#include "simd.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/**
 * Whether `x / s == x * (1 / s)` for every x, NaN and infinities included:
 * |s| is a power of two whose reciprocal is a finite, nonzero T. Both sides
 * are then the same real number rounded once (no fused operation, no flush
 * to zero), so the multiplication is the division, bit for bit. The
 * power-of-two fast path of IntQuant, Trunc and FloatQuant rests on this.
 */
template <class T>
bool exact_reciprocal(T s) noexcept {
  if (!(std::isfinite(s) && s != T(0))) return false;
  // |s| a power of two: a normal with a zero significand field, or a
  // subnormal with a single bit set (read from the bits: no libm call).
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr int mbits = std::numeric_limits<T>::digits - 1;
  const U u = std::bit_cast<U>(std::fabs(s));
  const U frac = u & ((U(1) << mbits) - 1);
  if (!((u >> mbits) != 0 ? frac == 0 : std::has_single_bit(u))) return false;
  const T r = T(1) / s;
  return std::isfinite(r) && r != T(0);
}

/**
 * Returns v unchanged, but hides how it was computed from the optimiser, so
 * that a product is never contracted with a following addition into a
 * fused multiply-add (-ffp-contract=fast, GCC's default outside ISO modes):
 * x * 2^k rounds when the result is subnormal, and fma(x, 2^k, zp) would
 * then differ from the two roundings the operators specify.
 */
template <class V>
LOWBIT_ALWAYS_INLINE V no_contract(V v) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__))
#if defined(__aarch64__)
#define LOWBIT_DETAIL_VREG "+w"
#else
#define LOWBIT_DETAIL_VREG "+v"
#endif
  if constexpr (is_batch_v<V>) {
    typename V::register_type r = v;
    __asm__("" : LOWBIT_DETAIL_VREG(r));
    return V(r);
  } else {
    __asm__("" : LOWBIT_DETAIL_VREG(v));
    return v;
  }
#undef LOWBIT_DETAIL_VREG
#else
  volatile V keep = v;  // other targets: a store and a load
  return keep;
#endif
}

/// The division by the scale: `x / scale`, or, when `recip` is set, the
/// product by `inv`, which exact_reciprocal() has shown to be the same
/// operation. A run-time flag (a branch per batch, always predicted) rather
/// than a template parameter, so that no kernel is compiled twice for it.
struct scale_divider {
  double inv = 0;      ///< 1 / scale, a power of two (exact in float and double).
  bool recip = false;  ///< multiply by inv instead of dividing
  template <class V>
  LOWBIT_ALWAYS_INLINE V divide(V x, V scale) const noexcept {
    if (recip) return no_contract(V(x * V(static_cast<lane_t<V>>(inv))));
    return x / scale;
  }
  /// The divider of a piece whose scale is the constant `s`: the product
  /// when `allowed` (the SIMD path) and s has an exact reciprocal.
  template <class T>
  static scale_divider for_scale(T s, bool allowed) noexcept {
    if (!allowed || !exact_reciprocal(s)) return {};
    return {1.0 / static_cast<double>(s), true};
  }
};

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_DIVIDE_HPP
