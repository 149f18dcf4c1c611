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
#include <cstddef>
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
 * \def LOWBIT_DETAIL_PORTABLE_NO_CONTRACT
 * Tests only: when defined before any lowbit header, no_contract() uses its
 * portable fallback (a round trip through volatile memory) on every target,
 * also where it would use an empty asm statement, so that the fallback is
 * compiled and tested on x86-64 and aarch64 too (tests/test_divide.cpp).
 * It changes the definition of inline functions: every translation unit of
 * a program must agree on it (the test is a program of its own for that).
 *
 * \def LOWBIT_DETAIL_NO_CONTRACT_ASM
 * Set by this header: 1 when no_contract() is the empty asm statement, 0
 * when it is the portable fallback.
 */
#if !defined(LOWBIT_DETAIL_PORTABLE_NO_CONTRACT) && (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__))
#define LOWBIT_DETAIL_NO_CONTRACT_ASM 1
#else
#define LOWBIT_DETAIL_NO_CONTRACT_ASM 0
#endif

/**
 * no_contract()'s portable fallback: v stored to volatile memory and loaded
 * back, which the optimiser may not see through, so the value that comes
 * back is not known to be a product. A scalar is one volatile object; a
 * batch is stored lane by lane to an array, each lane passed through a
 * volatile, and reloaded (store_unaligned and load_unaligned exist on every
 * xsimd batch from 8.1 to 14, whatever its architecture). Bit for bit the
 * identity: plain loads and stores, no arithmetic (NaN payloads, -0 and
 * subnormals come back as they were).
 */
template <class V>
LOWBIT_ALWAYS_INLINE V no_contract_portable(V v) noexcept {
  if constexpr (is_batch_v<V>) {
    using T = lane_t<V>;
    T lanes[V::size];
    v.store_unaligned(lanes);
    for (std::size_t i = 0; i < V::size; ++i) {
      volatile T keep = lanes[i];
      lanes[i] = keep;
    }
    return V::load_unaligned(lanes);
  } else {
    volatile V keep = v;
    return keep;
  }
}

/**
 * Returns v unchanged, but hides how it was computed from the optimiser, so
 * that a product is never contracted with a following addition into a
 * fused multiply-add (-ffp-contract=fast, GCC's default outside ISO modes):
 * x * 2^k rounds when the result is subnormal, and fma(x, 2^k, zp) would
 * then differ from the two roundings the operators specify. With GCC or
 * clang on x86 and aarch64, an empty asm statement that claims to modify
 * the register holding v (no instruction); elsewhere, or with
 * LOWBIT_DETAIL_PORTABLE_NO_CONTRACT, no_contract_portable().
 */
template <class V>
LOWBIT_ALWAYS_INLINE V no_contract(V v) noexcept {
#if LOWBIT_DETAIL_NO_CONTRACT_ASM
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
  return no_contract_portable(v);  // other targets: stores and loads
#endif
}

/**
 * `a / b`, the IEEE quotient (correctly rounded), for a scalar or a batch.
 * Every division of lowbit's kernels goes through it. On AArch64 a float
 * batch is divided with fdiv (vdivq_f32): xsimd (8.1 to 14.x) divides float
 * batches there by a reciprocal estimate refined by two Newton-Raphson
 * steps and a product, which is not the quotient (it differs in about 40%
 * of random cases, and gives -inf for x / 2^-140). Double batches (fdiv in
 * xsimd too) and every other architecture: the operator.
 */
template <class V>
LOWBIT_ALWAYS_INLINE V quotient(V a, V b) noexcept {
  if constexpr (is_batch_v<V>) {
    if constexpr (is_neon64<typename V::arch_type> && std::is_same_v<lane_t<V>, float>) {
#if XSIMD_WITH_NEON64
      return V(vdivq_f32(a, b));
#endif
    }
  }
  return a / b;
}

/// The division by the scale: `x / scale`, or, when `recip` is set, the
/// product by `inv`, which exact_reciprocal() has shown to be the same
/// operation. A run-time flag (a branch per batch, always predicted) rather
/// than a template parameter, so that no kernel is compiled twice for it.
struct scale_divider {
  /// 1 / scale, a power of two, in each lane type (exact in the scale's
  /// type). Both are kept so that no conversion runs in the loop: GCC 12
  /// converted a double member with `vcvtsd2ss xmm0, xmm0, mem`, whose merge
  /// into xmm0 chained every batch to the one before (3x slower).
  double inv = 0;
  float inv_f = 0;
  bool recip = false;  ///< multiply by inv instead of dividing
  template <class V>
  LOWBIT_ALWAYS_INLINE V divide(V x, V scale) const noexcept {
    if (recip) {
      if constexpr (std::is_same_v<lane_t<V>, float>)
        return no_contract(V(x * V(inv_f)));
      else
        return no_contract(V(x * V(static_cast<lane_t<V>>(inv))));
    }
    return detail::quotient(x, scale);
  }
  /// The divider of a piece whose scale is the constant `s`: the product
  /// when `allowed` (the SIMD path) and s has an exact reciprocal.
  template <class T>
  static scale_divider for_scale(T s, bool allowed) noexcept {
    if (!allowed || !exact_reciprocal(s)) return {};
    const double inv = 1.0 / static_cast<double>(s);
    return {inv, static_cast<float>(inv), true};
  }
};

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_DIVIDE_HPP
