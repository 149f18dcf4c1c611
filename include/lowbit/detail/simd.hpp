// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/simd.hpp
 * The vocabulary in which every kernel is written once, generic over a
 * scalar (`float`, `double`) and an xsimd batch of it. The scalar tail and
 * the SIMD body of a loop instantiate the same kernel with `V = T` and
 * `V = batch<T>`, so they cannot disagree.
 *
 * Every operation here is exact (IEEE-754, no rounding beyond what the named
 * operation does) and keeps the sign of zero and NaN the way the C library
 * function of the same name does. Rounding to integral uses the CPU's
 * instruction where the ISA has one (SSE4.1, AVX, AVX-512, AArch64) and an
 * exact emulation elsewhere (SSE2): see rint().
 */
#ifndef LOWBIT_DETAIL_SIMD_HPP
#define LOWBIT_DETAIL_SIMD_HPP

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../config.hpp"
#include "xsimd_compat.hpp"

#include "intrinsics.hpp"  // immintrin.h on x86

LOWBIT_BEGIN_DETAIL_NAMESPACE

// ---- lane type traits --------------------------------------------------

template <class V>
struct lane_type {
  using type = V;
};
template <class T, class A>
struct lane_type<xsimd::batch<T, A>> {
  using type = T;
};
template <class V>
using lane_t = typename lane_type<V>::type;

template <class V>
inline constexpr std::size_t lanes = 1;
template <class T, class A>
inline constexpr std::size_t lanes<xsimd::batch<T, A>> = xsimd::batch<T, A>::size;

// ---- load / store / splat ----------------------------------------------

template <class V, class T>
LOWBIT_ALWAYS_INLINE V load(const T* p) noexcept {
  if constexpr (is_batch_v<V>)
    return V::load_unaligned(p);
  else
    return *p;
}

template <class T>
LOWBIT_ALWAYS_INLINE void store(T* p, T v) noexcept {
  *p = v;
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE void store(T* p, const xsimd::batch<T, A>& v) noexcept {
  v.store_unaligned(p);
}

/**
 * A non-temporal (streaming) store of a whole batch to `p`, which must be
 * aligned to the batch's size: the data goes to memory without being read
 * into the caches first. x86 (SSE2, AVX, AVX-512) only; elsewhere an
 * aligned store. Call stream_fence() after the last one.
 */
template <class T, class A>
LOWBIT_ALWAYS_INLINE void store_stream(T* p, const xsimd::batch<T, A>& v) noexcept {
  // Chosen by register size (comparing vector types trips -Wignored-attributes).
  using R = typename xsimd::batch<T, A>::register_type;
  [[maybe_unused]] const R r = v;
  [[maybe_unused]] constexpr bool f = std::is_same_v<T, float>;
  [[maybe_unused]] constexpr bool d = std::is_same_v<T, double>;
#if defined(__AVX512F__)
  if constexpr (sizeof(R) == 64 && f) return _mm512_stream_ps(p, r);
  if constexpr (sizeof(R) == 64 && d) return _mm512_stream_pd(p, r);
#endif
#if defined(__AVX__)
  if constexpr (sizeof(R) == 32 && f) return _mm256_stream_ps(p, r);
  if constexpr (sizeof(R) == 32 && d) return _mm256_stream_pd(p, r);
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(R) == 16 && f) return _mm_stream_ps(p, r);
  if constexpr (sizeof(R) == 16 && d) return _mm_stream_pd(p, r);
#endif
  v.store_aligned(p);
}

/// Orders the streaming stores before any later store (x86 sfence).
LOWBIT_ALWAYS_INLINE void stream_fence() noexcept {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

template <class V>
LOWBIT_ALWAYS_INLINE V splat(lane_t<V> v) noexcept {
  return V(v);
}

// ---- select (xsimd 8.1 has no scalar select) ---------------------------

template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T select(bool m, T a, T b) noexcept {
  return m ? a : b;
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> select(const xsimd::batch_bool<T, A>& m,
                                                const xsimd::batch<T, A>& a,
                                                const xsimd::batch<T, A>& b) noexcept {
  return xsimd::select(m, a, b);
}

// ---- bounds: x86's maxps / minps, operand order included -----------------
//
// bound_below(lo, y) is `lo > y ? lo : y` and bound_above(hi, y) is
// `hi < y ? hi : y`, exactly: y is returned when the compare is false, so a
// NaN y stays NaN (and is returned bit for bit), and when lo == y (or
// hi == y) y is returned. That is the definition of x86's MAXPS / MINPS with
// lo (hi) as the first operand, one instruction where a compare and a blend
// take two (or three with AVX-512's mask registers). xsimd's min and max
// promise neither NaN handling nor operand order across versions and
// architectures, so the intrinsics are called directly; elsewhere the
// select is the definition.

template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T bound_below(T lo, T y) noexcept {
  return lo > y ? lo : y;
}
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T bound_above(T hi, T y) noexcept {
  return hi < y ? hi : y;
}

template <bool below, class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> bound(const xsimd::batch<T, A>& a,
                                               const xsimd::batch<T, A>& y) noexcept {
  using B [[maybe_unused]] = xsimd::batch<T, A>;  // unused off x86
  [[maybe_unused]] constexpr bool f32 = std::is_same_v<T, float>;
#if defined(__AVX512F__)
  if constexpr (std::is_base_of_v<xsimd::avx512f, A>) {
    if constexpr (f32)
      return B(below ? _mm512_max_ps(a, y) : _mm512_min_ps(a, y));
    else
      return B(below ? _mm512_max_pd(a, y) : _mm512_min_pd(a, y));
  } else
#endif
#if defined(__AVX__)
  if constexpr (std::is_base_of_v<xsimd::avx, A>) {
    if constexpr (f32)
      return B(below ? _mm256_max_ps(a, y) : _mm256_min_ps(a, y));
    else
      return B(below ? _mm256_max_pd(a, y) : _mm256_min_pd(a, y));
  } else
#endif
#if defined(__SSE2__)
  if constexpr (std::is_base_of_v<xsimd::sse2, A>) {
    if constexpr (f32)
      return B(below ? _mm_max_ps(a, y) : _mm_min_ps(a, y));
    else
      return B(below ? _mm_max_pd(a, y) : _mm_min_pd(a, y));
  } else
#endif
  if constexpr (below) {
    return xsimd::select(a > y, a, y);
  } else {
    return xsimd::select(a < y, a, y);
  }
}

template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> bound_below(const xsimd::batch<T, A>& lo,
                                                     const xsimd::batch<T, A>& y) noexcept {
  return detail::bound<true>(lo, y);
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> bound_above(const xsimd::batch<T, A>& hi,
                                                     const xsimd::batch<T, A>& y) noexcept {
  return detail::bound<false>(hi, y);
}

template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE bool is_nan(T v) noexcept {
  return v != v;
}
/// Never `v != v` on a batch: xsimd's operator!= is an ordered compare
/// (false for NaN) on AVX and AVX-512 but unordered (true) on SSE2.
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch_bool<T, A> is_nan(const xsimd::batch<T, A>& v) noexcept {
  return xsimd::isnan(v);
}

// ---- sign manipulation ----------------------------------------------------

template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T abs(T v) noexcept {
  return std::fabs(v);
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> abs(const xsimd::batch<T, A>& v) noexcept {
  return xsimd::abs(v);
}

/// -v by flipping the sign bit (exact for zeros and NaN). Never unary minus
/// on a batch: xsimd 8.1 computes it as `0 - v` on AVX-512, which turns -0
/// into +0 where SSE2 and AVX flip the bit.
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T negate(T v) noexcept {
  return -v;
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> negate(const xsimd::batch<T, A>& v) noexcept {
  return xsimd::bitwise_xor(v, xsimd::batch<T, A>(T(-0.0)));
}

/// The sign bit of v alone (+0 or -0; for NaN, the NaN's sign).
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T sign_bit(T v) noexcept {
  return std::signbit(v) ? T(-0.0) : T(0.0);
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> sign_bit(const xsimd::batch<T, A>& v) noexcept {
  return xsimd::bitwise_and(v, xsimd::batch<T, A>(T(-0.0)));
}

/// The bitwise exclusive or of two floating-point values.
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T bitwise_xor(T a, T b) noexcept {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  return std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(a) ^ std::bit_cast<U>(b)));
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> bitwise_xor(const xsimd::batch<T, A>& a,
                                                     const xsimd::batch<T, A>& b) noexcept {
  return xsimd::bitwise_xor(a, b);
}

/// The magnitude of `mag` with the sign bit of `sgn` (NaN signs included).
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T copysign(T mag, T sgn) noexcept {
  return std::copysign(mag, sgn);
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> copysign(const xsimd::batch<T, A>& mag,
                                                  const xsimd::batch<T, A>& sgn) noexcept {
  return xsimd::copysign(mag, sgn);
}

/// With AVX-512 on 512-bit batches: vpternlog's bitwise function Imm of a,
/// sgn and the sign-bit mask, one instruction. or_sign and xor_sign use it:
/// GCC 12 leaves their and and or (xor) apart, or fuses them only sometimes.
template <int Imm, class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> sign_ternlog(const xsimd::batch<T, A>& a, const xsimd::batch<T, A>& sgn) noexcept {
#if defined(__AVX512F__)
  if constexpr (sizeof(T) == 4) {
    return xsimd::batch<T, A>(_mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(a), _mm512_castps_si512(sgn), _mm512_set1_epi32(static_cast<int>(0x80000000u)), Imm)));
  } else {
    return xsimd::batch<T, A>(_mm512_castsi512_pd(
        _mm512_ternarylogic_epi64(_mm512_castpd_si512(a), _mm512_castpd_si512(sgn),
                                  _mm512_set1_epi64(static_cast<long long>(0x8000000000000000ull)), Imm)));
  }
#else
  static_assert(Imm < 0, "sign_ternlog needs AVX-512");
  return (void)sgn, a;
#endif
}
template <class V>
inline constexpr bool has_sign_ternlog = false;
#if defined(__AVX512F__)
template <class T, class A>
inline constexpr bool has_sign_ternlog<xsimd::batch<T, A>> =
    std::is_base_of_v<xsimd::avx512f, A> && sizeof(xsimd::batch<T, A>) == 64;
#endif

/// copysign(mag, sgn) for a `mag` whose sign bit is clear (+0, positive, or
/// a NaN of positive sign): the sign bit of sgn or'ed in. One bitwise
/// operation where copysign takes two (AVX-512: one vpternlog, imm 0xF8 =
/// A | (B & C)).
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T or_sign(T mag, T sgn) noexcept {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  return std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(mag) | std::bit_cast<U>(sign_bit(sgn))));
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> or_sign(const xsimd::batch<T, A>& mag,
                                                 const xsimd::batch<T, A>& sgn) noexcept {
  if constexpr (has_sign_ternlog<xsimd::batch<T, A>>) return sign_ternlog<0xF8>(mag, sgn);
  else return xsimd::bitwise_or(mag, sign_bit(sgn));
}

/// v with the sign bit of `sgn` xor'ed in: -v where sgn's sign bit is set
/// (zeros and NaN included), v elsewhere (AVX-512: one vpternlog, imm 0x78
/// = A ^ (B & C)).
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T xor_sign(T v, T sgn) noexcept {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  return std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(v) ^ std::bit_cast<U>(sign_bit(sgn))));
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> xor_sign(const xsimd::batch<T, A>& v, const xsimd::batch<T, A>& sgn) noexcept {
  if constexpr (has_sign_ternlog<xsimd::batch<T, A>>) return sign_ternlog<0x78>(v, sgn);
  else return xsimd::bitwise_xor(v, sign_bit(sgn));
}

/// numpy's sign(y) as a factor, but +1 for both zeros and for a NaN: -1 for
/// y < 0 (-inf included), +1 for every other y. Only with AVX-512 on
/// 512-bit batches (has_sign_factor<V>): one vfixupimm, which maps each
/// class of y to a constant by a table of nibbles, one per class (QNaN,
/// SNaN, zero, +1, -inf, +inf, negative, positive; +1 is 0xA, -1 is 9). A
/// factor f lets fma(f, c, y) = fl(y + copysign(c, y)) (f c is exact) and
/// f y = |y| take no operation of their own; a NaN y then passes through
/// them as it passes through y + c, quieted with its own sign.
template <class V>
inline constexpr bool has_sign_factor = has_sign_ternlog<V>;
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> sign_factor(const xsimd::batch<T, A>& y) noexcept {
  static_assert(has_sign_factor<xsimd::batch<T, A>>, "sign_factor needs AVX-512");
#if defined(__AVX512F__)
  constexpr int table = static_cast<int>(0xA9A9AAAAu);
  if constexpr (sizeof(T) == 4) return xsimd::batch<T, A>(_mm512_fixupimm_ps(y, y, _mm512_set1_epi32(table), 0));
  else return xsimd::batch<T, A>(_mm512_fixupimm_pd(y, y, _mm512_set1_epi64(table), 0));
#else
  return y;
#endif
}

/// Batches whose fused multiply-add is one instruction, one rounding:
/// AVX-512, FMA3 (x86 compiled with -mfma: AVX2 machines from Haswell and
/// Zen on) and AArch64's NEON. Elsewhere (SSE2, AVX without FMA) xsimd's fma
/// is a product and a sum, two roundings, so nothing calls it there.
template <class V>
inline constexpr bool has_fused_fma = false;
#if defined(__AVX512F__) || defined(__FMA__) || XSIMD_WITH_NEON64
template <class T, class A>
inline constexpr bool has_fused_fma<xsimd::batch<T, A>> =
    std::is_floating_point_v<T> &&
#if XSIMD_WITH_NEON64
    std::is_base_of_v<xsimd::neon64, A>;
#elif defined(__AVX512F__) && !defined(__FMA__)
    sizeof(xsimd::batch<T, A>) == 64;
#else
    true;
#endif
#endif

/// fl(a * b + c), one rounding (a fused multiply-add), for batches where
/// has_fused_fma<V>; the kernels call it by name where an exact product
/// makes it the same as a product and a sum, or where they want the single
/// rounding (-ffp-contract never introduces or removes this one).
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> fused_multiply_add(const xsimd::batch<T, A>& a, const xsimd::batch<T, A>& b,
                                                           const xsimd::batch<T, A>& c) noexcept {
  static_assert(has_fused_fma<xsimd::batch<T, A>>, "fused_multiply_add needs AVX-512, FMA3 or AArch64");
  using B = xsimd::batch<T, A>;
  [[maybe_unused]] constexpr bool f32 = sizeof(T) == 4;
#if XSIMD_WITH_NEON64
  if constexpr (f32) return B(vfmaq_f32(c, a, b));
  else return B(vfmaq_f64(c, a, b));
#else
  if constexpr (sizeof(B) == 64) {
#if defined(__AVX512F__)
    if constexpr (f32) return B(_mm512_fmadd_ps(a, b, c));
    else return B(_mm512_fmadd_pd(a, b, c));
#endif
  } else if constexpr (sizeof(B) == 32) {
#if defined(__FMA__)
    if constexpr (f32) return B(_mm256_fmadd_ps(a, b, c));
    else return B(_mm256_fmadd_pd(a, b, c));
#endif
  } else {
#if defined(__FMA__)
    if constexpr (f32) return B(_mm_fmadd_ps(a, b, c));
    else return B(_mm_fmadd_pd(a, b, c));
#endif
  }
  return a * b + c;  // not reached: has_fused_fma
#endif
}

/// The next float above a for a >= +0 (its bits plus one), and a itself
/// for a NaN (its payload kept, where bits plus one would change it or
/// wrap 0x7fffffff to -0): a compare and an integer subtraction of its
/// all-ones (-1) lanes. For float batches.
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<float, A> nextup_or_nan(const xsimd::batch<float, A>& a) noexcept {
  using B = xsimd::batch<float, A>;
#if XSIMD_WITH_NEON64
  if constexpr (std::is_base_of_v<xsimd::neon64, A>)
    return B(vreinterpretq_f32_u32(vsubq_u32(vreinterpretq_u32_f32(a), vceqq_f32(a, a))));
#elif defined(__AVX512F__) || defined(__AVX2__) || defined(__SSE2__)
  if constexpr (sizeof(B) == 64) {
#if defined(__AVX512F__)
    const __m512i b = _mm512_castps_si512(a);
    const __mmask16 number = _mm512_cmp_ps_mask(a, a, _CMP_EQ_OQ);
    return B(_mm512_castsi512_ps(_mm512_mask_add_epi32(b, number, b, _mm512_set1_epi32(1))));
#endif
  } else if constexpr (sizeof(B) == 32) {
#if defined(__AVX2__)
    const __m256i number = _mm256_castps_si256(_mm256_cmp_ps(a, a, _CMP_EQ_OQ));
    return B(_mm256_castsi256_ps(_mm256_sub_epi32(_mm256_castps_si256(a), number)));
#endif
  } else if constexpr (sizeof(B) == 16) {
    return B(_mm_castsi128_ps(_mm_sub_epi32(_mm_castps_si128(a), _mm_castps_si128(_mm_cmpeq_ps(a, a)))));
  }
#endif
  const xsimd::batch<std::int32_t, A> next = detail::bit_cast_batch<std::int32_t>(a) + 1;
  return detail::select(a == a, detail::bit_cast_batch<float>(next), a);
}

// ---- additions rounded in a fixed direction --------------------------------
//
// AVX-512's embedded rounding gives an addition a rounding direction of its
// own (and no exceptions), whatever MXCSR says: one instruction for what
// would otherwise take a change of the FPU's rounding mode. Kernels use it
// where `has_directed_add<V>` and keep another exact technique elsewhere
// (scalars, AVX2, SSE2, NEON).

/// The direction of add_directed.
enum class direction { toward_zero, up, down };

template <class V>
inline constexpr bool has_directed_add = false;
#if defined(__AVX512F__)
template <class A>
inline constexpr bool has_directed_add<xsimd::batch<float, A>> = std::is_base_of_v<xsimd::avx512f, A>;
#endif

#if defined(__AVX512F__)
/// The embedded-rounding operand of direction D, exceptions suppressed.
template <direction D>
inline constexpr int embedded_rounding =
    (D == direction::toward_zero ? _MM_FROUND_TO_ZERO
     : D == direction::up        ? _MM_FROUND_TO_POS_INF
                                 : _MM_FROUND_TO_NEG_INF) |
    _MM_FROUND_NO_EXC;
#endif

/// fl(a + b) rounded in direction D; only where has_directed_add<V>.
template <direction D, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<float, A> add_directed(const xsimd::batch<float, A>& a,
                                                          const xsimd::batch<float, A>& b) noexcept {
  static_assert(has_directed_add<xsimd::batch<float, A>>, "add_directed needs AVX-512");
#if defined(__AVX512F__)
  return xsimd::batch<float, A>(_mm512_add_round_ps(a, b, embedded_rounding<D>));
#else
  return a + b;
#endif
}

/// fl(a * b + c) with the product and the sum exact and one rounding, in
/// direction D (AVX-512's embedded rounding on a fused multiply-add); only
/// where has_directed_add<V>. The kernels call it by name where they want
/// this single rounding, which -ffp-contract never introduces or removes.
template <direction D, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<float, A> fma_directed(const xsimd::batch<float, A>& a,
                                                          const xsimd::batch<float, A>& b,
                                                          const xsimd::batch<float, A>& c) noexcept {
  static_assert(has_directed_add<xsimd::batch<float, A>>, "fma_directed needs AVX-512");
#if defined(__AVX512F__)
  return xsimd::batch<float, A>(_mm512_fmadd_round_ps(a, b, c, embedded_rounding<D>));
#else
  return a * b + c;
#endif
}

// ---- rounding to integral, exact, sign of the argument kept --------------
//
// Scalars use the C library. Batches use the ISA's instruction when there is
// one; otherwise (SSE2) rint is emulated with the 2^(p-1) trick, which is
// exact for |x| < 2^(p-1) in round-to-nearest-even, and every other mode is
// derived from rint. Values with |x| >= 2^(p-1) (p = 24 or 53) are already
// integers and NaN passes through unchanged; the emulation selects x for both.
// All of this assumes the default floating-point environment
// (round-to-nearest-even, no flush-to-zero), as IEEE-754 and QONNX do.

template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> rint_emulated(const xsimd::batch<T, A>& x) noexcept {
  using B = xsimd::batch<T, A>;
  const B two_p(T(1) / std::numeric_limits<T>::epsilon());  // 2^23 or 2^52
  const B ax = xsimd::abs(x);
  B r = ax + two_p;
  r = r - two_p;
  r = xsimd::copysign(r, x);
  return xsimd::select(ax < two_p, r, x);
}

/// Nearest integer, ties to even.
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T rint(T v) noexcept {
  return std::nearbyint(v);
}
// AArch64: frintn / frintm / frintp / frintz, called directly. xsimd (8.1
// to 14.x) has no NEON rounding kernels: its generic ceil, floor and trunc
// go through a conversion to integers, which gives +0 for ceil(-0.2) and
// trunc(-0.2) where IEEE (and x86's roundps) gives -0.
#if XSIMD_WITH_NEON64
template <class A>
inline constexpr bool is_neon64 = std::is_base_of_v<xsimd::neon64, A>;
#else
template <class A>
inline constexpr bool is_neon64 = false;
#endif

/// M: 'n' nearest (ties to even), 'm' toward -inf, 'p' toward +inf, 'z' toward 0.
template <char M, class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> neon64_round(const xsimd::batch<T, A>& x) noexcept {
#if XSIMD_WITH_NEON64
  using B = xsimd::batch<T, A>;
  static_assert(M == 'n' || M == 'm' || M == 'p' || M == 'z');
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (M == 'n') return B(vrndnq_f32(x));
    else if constexpr (M == 'm') return B(vrndmq_f32(x));
    else if constexpr (M == 'p') return B(vrndpq_f32(x));
    else return B(vrndq_f32(x));
  } else {
    if constexpr (M == 'n') return B(vrndnq_f64(x));
    else if constexpr (M == 'm') return B(vrndmq_f64(x));
    else if constexpr (M == 'p') return B(vrndpq_f64(x));
    else return B(vrndq_f64(x));
  }
#else
  return x;
#endif
}

template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> rint(const xsimd::batch<T, A>& x) noexcept {
  if constexpr (is_neon64<A>)
    return detail::neon64_round<'n'>(x);
  else if constexpr (has_native_round<A>)
    return xsimd::nearbyint(x);
  else
    return detail::rint_emulated(x);
}

template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T floor(T v) noexcept {
  return std::floor(v);
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> floor(const xsimd::batch<T, A>& x) noexcept {
  if constexpr (is_neon64<A>)
    return detail::neon64_round<'m'>(x);
  else if constexpr (has_native_round<A>) {
    return xsimd::floor(x);
  } else {
    using B = xsimd::batch<T, A>;
    B r = detail::rint_emulated(x);
    r = xsimd::select(r > x, r - B(T(1)), r);
    return xsimd::copysign(r, x);
  }
}

template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T ceil(T v) noexcept {
  return std::ceil(v);
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> ceil(const xsimd::batch<T, A>& x) noexcept {
  if constexpr (is_neon64<A>)
    return detail::neon64_round<'p'>(x);
  else if constexpr (has_native_round<A>) {
    return xsimd::ceil(x);
  } else {
    using B = xsimd::batch<T, A>;
    B r = detail::rint_emulated(x);
    r = xsimd::select(r < x, r + B(T(1)), r);
    return xsimd::copysign(r, x);
  }
}

/// Toward zero.
template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
LOWBIT_ALWAYS_INLINE T trunc(T v) noexcept {
  return std::trunc(v);
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<T, A> trunc(const xsimd::batch<T, A>& x) noexcept {
  if constexpr (is_neon64<A>)
    return detail::neon64_round<'z'>(x);
  else if constexpr (has_native_round<A>)
    return xsimd::trunc(x);
  else
    return xsimd::copysign(detail::floor(xsimd::abs(x)), x);
}

// ---- the scalar-only hook (tests and benchmarks) -----------------------------

/// This thread's switch between the SIMD body (true, the default) and the
/// scalar kernels only (false). The results are identical bit for bit; the
/// scalar path is a baseline for benchmarks and an independent check of the
/// SIMD body in the tests. Not part of the API: use simd_scope.
inline bool& simd_flag() noexcept {
  thread_local bool on = true;
  return on;
}

/// Whether the operators called on this thread run their SIMD body. Read
/// once per call, on the calling thread (the threads of lowbit::execution
/// run the call's choice).
inline bool simd_enabled() noexcept { return simd_flag(); }

/// While alive, the operators called on this thread run the SIMD body
/// (`on`) or the scalar kernels only. Tests and benchmarks only.
class simd_scope {
 public:
  explicit simd_scope(bool on) noexcept : saved_(simd_flag()) { simd_flag() = on; }
  ~simd_scope() { simd_flag() = saved_; }
  simd_scope(const simd_scope&) = delete;
  simd_scope& operator=(const simd_scope&) = delete;

 private:
  bool saved_;
};

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_SIMD_HPP
