// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/philox.hpp
 * A counter-based random generator for reproducible stochastic rounding:
 * Philox4x32-10, and the fixed mapping from (seed, bit count, element index)
 * to a random draw.
 *
 * Why counter-based: the draw of an element is a pure function of the seed
 * and of the element's flat output index, so it does not depend on the
 * number of threads, on the tiling of the loops, on the SIMD width or on the
 * ISA (SSE2, AVX2, AVX-512, NEON and the scalar tail all give the same
 * bits). A sequential generator would tie the results to the order in which
 * elements are visited.
 *
 * ## Philox4x32-10
 * Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3"
 * (SC'11), with the round structure of their Random123 library: counter
 * (c0, c1, c2, c3), key (k0, k1), multipliers M0 = 0xD2511F53,
 * M1 = 0xCD9E8D57, Weyl key increments W0 = 0x9E3779B9, W1 = 0xBB67AE85.
 * One round, with (hi, lo) the high and low words of a 32x32->64 product:
 *
 *     (hi0, lo0) = M0 * c0;  (hi1, lo1) = M1 * c2;
 *     (c0, c1, c2, c3) = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
 *
 * Ten rounds; the key is bumped (k0 += W0, k1 += W1, mod 2^32) between two
 * rounds (nine times). Checked against Random123's known-answer vectors
 * (tests/test_philox.cpp).
 *
 * ## The draw mapping (fixed: changing it changes every stochastic result)
 * Parameters: a 64-bit `seed`, a bit count r (1 <= r <= 32) and the
 * element's flat output index i (uint64).
 *   - key = (lo32(seed), hi32(seed)).
 *   - field width w = 8 if r <= 8, 16 if r <= 16, else 32; k = 32 / w fields
 *     per 32-bit word; D = 4k draws per counter (16, 8 or 4); G = 16 D
 *     elements per group (256, 128 or 64).
 *   - g = floor(i / G), e = i mod G. The counter is
 *     (e mod 16, lo32(g), hi32(g), 0); u = floor(e / 16) (0 <= u < D);
 *     word = u mod 4 (Philox output word 0..3); field = floor(u / 4)
 *     (field 0 is the lowest w bits of the word).
 *   - The draw d is the top r bits of that w-bit field:
 *     d = (word >> (w * field + w - r)) & (2^r - 1), 0 <= d < 2^r.
 * The threshold of the element is (d + 1) * 2^-r, exact in float for
 * r <= 23 and in double for r <= 32. Rounding |y| away from zero iff
 * frac(|y|) >= threshold rounds away with probability floor(2^r frac)/2^r.
 *
 * Why this layout: 16 consecutive elements (from a multiple of 16) take 16
 * different counters and the same output word and field. A SIMD kernel of
 * up to 16 lanes working on consecutive elements can compute one Philox per
 * 16 counters and reuse its four output words for the D batches of that
 * group (16 D elements), taking field after field, with no lane
 * transposition. Using only the top r bits of a field of 8, 16 or 32 bits
 * spends 1 Philox per 64 elements for r <= 8 (the usual low-bit case).
 *
 * Which functions: philox4x32_10() (scalar or uint32 batch, in place);
 * stochastic_draw() (the mapping, scalar: the definition);
 * stochastic_draw_lanes() (the same for uint32 lanes of 64-bit indices);
 * stochastic_threshold<V>() (what the kernels call: the thresholds of the
 * elements first, first + step, ... in the lanes of V);
 * stochastic_thresholds_group() (the thresholds of a whole group, one
 * Philox per 16 counters: the fast path for a kernel walking whole groups).
 */
#ifndef LOWBIT_DETAIL_PHILOX_HPP
#define LOWBIT_DETAIL_PHILOX_HPP

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "simd.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

inline constexpr std::uint32_t philox_m0 = 0xD2511F53u;
inline constexpr std::uint32_t philox_m1 = 0xCD9E8D57u;
inline constexpr std::uint32_t philox_w0 = 0x9E3779B9u;
inline constexpr std::uint32_t philox_w1 = 0xBB67AE85u;

/// The seed and bit count of stochastic rounding (see the file comment):
/// bits is r, 1..23 for float outputs, 1..32 for double.
struct stochastic_rounding_params {
  std::uint64_t seed = 0;
  int bits = 0;
};

// ---- 32x32 -> 64 multiply ------------------------------------------------

/// hi:lo = m * x, portable: 16-bit halves and 32-bit lane products (each
/// product of two halves is below 2^32, so nothing overflows). Works for
/// uint32 and for any uint32 batch.
template <class U>
LOWBIT_ALWAYS_INLINE void mulhilo32_portable(std::uint32_t m, const U& x, U& hi, U& lo) noexcept {
  const U low16 = U(0xFFFFu);
  const U ml = U(m & 0xFFFFu), mh = U(m >> 16);
  const U xl = x & low16, xh = x >> 16;
  const U ll = xl * ml, lh = xl * mh, hl = xh * ml, hh = xh * mh;
  const U mid = (ll >> 16) + (lh & low16) + (hl & low16);  // < 3 * 2^16
  hi = hh + (lh >> 16) + (hl >> 16) + (mid >> 16);
  lo = (mid << 16) | (ll & low16);
}

LOWBIT_ALWAYS_INLINE void mulhilo32_portable(std::uint32_t m, std::uint32_t x, std::uint32_t& hi,
                                             std::uint32_t& lo) noexcept {
  const std::uint64_t p = std::uint64_t(m) * x;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}

/// True when mulhilo32() has a faster path than the portable one for the
/// uint32 batches of A (x86: pmuludq on the even and the odd lanes; NEON:
/// vmull_u32 on each half).
template <class A>
inline constexpr bool has_fast_mulhilo32 =
#if XSIMD_WITH_AVX512F
    (std::is_base_of_v<xsimd::avx512f, A> && xsimd::batch<std::uint32_t, A>::size == 16) ||
#endif
#if XSIMD_WITH_AVX2
    (std::is_base_of_v<xsimd::avx2, A> && xsimd::batch<std::uint32_t, A>::size == 8) ||
#endif
#if XSIMD_WITH_SSE2
    (std::is_base_of_v<xsimd::sse2, A> && xsimd::batch<std::uint32_t, A>::size == 4) ||
#endif
#if XSIMD_WITH_NEON
    (std::is_base_of_v<xsimd::neon, A> && xsimd::batch<std::uint32_t, A>::size == 4) ||
#endif
    false;

/// hi:lo = m * x on every lane: the fastest exact way the ISA has. Equal to
/// mulhilo32_portable() (tests/test_philox.cpp).
LOWBIT_ALWAYS_INLINE void mulhilo32(std::uint32_t m, std::uint32_t x, std::uint32_t& hi,
                                    std::uint32_t& lo) noexcept {
  // One 64-bit product (exact): the scalar paths draw per element.
  const std::uint64_t p = std::uint64_t(m) * x;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}
template <class A>
LOWBIT_ALWAYS_INLINE void mulhilo32(std::uint32_t m, const xsimd::batch<std::uint32_t, A>& x,
                                    xsimd::batch<std::uint32_t, A>& hi,
                                    xsimd::batch<std::uint32_t, A>& lo) noexcept {
  using U = xsimd::batch<std::uint32_t, A>;
  // The even lanes' 64-bit products, and the odd lanes' (moved down by 32
  // bits first); the high words are then put back in place in hi, the low
  // words in lo (x86). The lane counts are tested as well as the arch: in xsimd
  // 14 avx derives from sse2 but its batches are 256 bits wide.
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_base_of_v<xsimd::avx512f, A> && U::size == 16) {
    // The maskz forms with every lane selected are the plain instructions;
    // GCC 12 defines the plain intrinsics with _mm512_undefined_epi32(),
    // which -Wuninitialized flags once inlined (GCC bug 105593).
    const __mmask8 all = 0xFF;
    const __m512i v = x, mv = _mm512_set1_epi32(static_cast<int>(m));
    const __m512i even = _mm512_maskz_mul_epu32(all, v, mv);
    const __m512i odd = _mm512_maskz_mul_epu32(all, _mm512_maskz_srli_epi64(all, v, 32), mv);
    const __mmask16 odd_lanes = 0xAAAA;
    hi = U(_mm512_mask_blend_epi32(odd_lanes, _mm512_maskz_srli_epi64(all, even, 32), odd));
    lo = U(_mm512_mask_blend_epi32(odd_lanes, even, _mm512_maskz_slli_epi64(all, odd, 32)));
    return;
  } else
#endif
#if XSIMD_WITH_AVX2
  if constexpr (std::is_base_of_v<xsimd::avx2, A> && U::size == 8) {
    const __m256i v = x, mv = _mm256_set1_epi32(static_cast<int>(m));
    const __m256i even = _mm256_mul_epu32(v, mv);
    const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(v, 32), mv);
    hi = U(_mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA));
    lo = U(_mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA));
    return;
  } else
#endif
#if XSIMD_WITH_SSE2
  if constexpr (std::is_base_of_v<xsimd::sse2, A> && U::size == 4) {
    const __m128i v = x, mv = _mm_set1_epi32(static_cast<int>(m));
    const __m128i even = _mm_mul_epu32(v, mv);
    const __m128i odd = _mm_mul_epu32(_mm_srli_epi64(v, 32), mv);
    const __m128i low32 = _mm_set_epi32(0, -1, 0, -1);  // the low word of each 64-bit lane
    hi = U(_mm_or_si128(_mm_srli_epi64(even, 32), _mm_andnot_si128(low32, odd)));
    lo = U(_mm_or_si128(_mm_and_si128(even, low32), _mm_slli_epi64(odd, 32)));
    return;
  } else
#endif
#if XSIMD_WITH_NEON
  if constexpr (std::is_base_of_v<xsimd::neon, A> && U::size == 4) {
    // vmull_u32 on each half; the products' low words are the even 32-bit
    // elements of the pair, the high words the odd ones (little-endian).
    const uint32x4_t v = x;
    const uint32x2_t mv = vdup_n_u32(m);
    const uint32x4x2_t z = vuzpq_u32(vreinterpretq_u32_u64(vmull_u32(vget_low_u32(v), mv)),
                                     vreinterpretq_u32_u64(vmull_u32(vget_high_u32(v), mv)));
    lo = U(z.val[0]);
    hi = U(z.val[1]);
    return;
  } else
#endif
  {
    mulhilo32_portable<U>(m, x, hi, lo);
  }
}

// ---- Philox4x32-10 -------------------------------------------------------

template <bool Portable, class U>
LOWBIT_ALWAYS_INLINE void philox4x32_10_impl(U& c0, U& c1, U& c2, U& c3, std::uint32_t k0,
                                             std::uint32_t k1) noexcept {
  for (int round = 0; round < 10; ++round) {
    if (round != 0) {
      k0 += philox_w0;
      k1 += philox_w1;
    }
    U hi0, lo0, hi1, lo1;
    if constexpr (Portable) {
      mulhilo32_portable(philox_m0, c0, hi0, lo0);
      mulhilo32_portable(philox_m1, c2, hi1, lo1);
    } else {
      mulhilo32(philox_m0, c0, hi0, lo0);
      mulhilo32(philox_m1, c2, hi1, lo1);
    }
    c0 = hi1 ^ c1 ^ U(k0);
    c1 = lo1;
    c2 = hi0 ^ c3 ^ U(k1);
    c3 = lo0;
  }
}

/// Philox4x32-10 in place: the counter (c0, c1, c2, c3) in, the four random
/// words out. U is std::uint32_t or xsimd::batch<std::uint32_t, A> (one
/// independent counter per lane, the same key).
template <class U>
LOWBIT_ALWAYS_INLINE void philox4x32_10(U& c0, U& c1, U& c2, U& c3, std::uint32_t k0,
                                        std::uint32_t k1) noexcept {
  philox4x32_10_impl<false>(c0, c1, c2, c3, k0, k1);
}

/// The same with the portable multiply on every arch (to test the fast one).
template <class U>
LOWBIT_ALWAYS_INLINE void philox4x32_10_portable(U& c0, U& c1, U& c2, U& c3, std::uint32_t k0,
                                                 std::uint32_t k1) noexcept {
  philox4x32_10_impl<true>(c0, c1, c2, c3, k0, k1);
}

/// Two Philox4x32-10 in place, round by round: the same words as two
/// calls, with two independent chains of multiplications for the CPU to
/// overlap (one call is bound by the latency of its rounds).
template <class U>
LOWBIT_ALWAYS_INLINE void philox4x32_10_x2(U (&a)[4], U (&b)[4], std::uint32_t k0, std::uint32_t k1) noexcept {
  for (int round = 0; round < 10; ++round) {
    if (round != 0) {
      k0 += philox_w0;
      k1 += philox_w1;
    }
    U ahi0, alo0, ahi1, alo1, bhi0, blo0, bhi1, blo1;
    mulhilo32(philox_m0, a[0], ahi0, alo0);
    mulhilo32(philox_m0, b[0], bhi0, blo0);
    mulhilo32(philox_m1, a[2], ahi1, alo1);
    mulhilo32(philox_m1, b[2], bhi1, blo1);
    const U kk0(k0), kk1(k1);
    a[0] = ahi1 ^ a[1] ^ kk0;
    b[0] = bhi1 ^ b[1] ^ kk0;
    a[1] = alo1;
    b[1] = blo1;
    a[2] = ahi0 ^ a[3] ^ kk1;
    b[2] = bhi0 ^ b[3] ^ kk1;
    a[3] = alo0;
    b[3] = blo0;
  }
}

/// Philox4x32-10 of one counter, Random123's argument order.
inline std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> ctr,
                                                  std::array<std::uint32_t, 2> key) noexcept {
  philox4x32_10(ctr[0], ctr[1], ctr[2], ctr[3], key[0], key[1]);
  return ctr;
}

// ---- the draw mapping ----------------------------------------------------

/// w, the field width of the mapping, for r bits.
constexpr int stochastic_field_bits(int r) noexcept { return r <= 8 ? 8 : r <= 16 ? 16 : 32; }
/// log2(G), G the group size of the mapping (elements per 16 counters).
constexpr int stochastic_group_log2(int r) noexcept { return r <= 8 ? 8 : r <= 16 ? 7 : 6; }
/// G, the number of elements of a group of the mapping, for r bits.
constexpr std::size_t stochastic_group_size(int r) noexcept { return std::size_t(1) << stochastic_group_log2(r); }

/// The draw of element i: an integer in [0, 2^r), 1 <= r <= 32. This is the
/// definition of the mapping (file comment), written plainly.
inline std::uint32_t stochastic_draw(std::uint64_t seed, int r, std::uint64_t i) noexcept {
  const int w = stochastic_field_bits(r);
  const std::uint64_t draws_per_counter = 4u * (32u / static_cast<unsigned>(w));  // D
  const std::uint64_t group = 16u * draws_per_counter;                             // G
  const std::uint64_t g = i / group, e = i % group;
  const std::uint64_t u = e / 16;
  const unsigned word = static_cast<unsigned>(u % 4), field = static_cast<unsigned>(u / 4);
  const std::array<std::uint32_t, 4> out = philox4x32_10(
      {static_cast<std::uint32_t>(e % 16), static_cast<std::uint32_t>(g),
       static_cast<std::uint32_t>(g >> 32), 0u},
      {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
  const unsigned shift = static_cast<unsigned>(w) * field + static_cast<unsigned>(w - r);
  const std::uint32_t mask = r >= 32 ? 0xFFFFFFFFu : (std::uint32_t(1) << r) - 1u;
  return (out[word] >> shift) & mask;
}

/// The draws of the elements whose 64-bit indices have the low words
/// idx_lo and the high words idx_hi, lane by lane: the mapping in uint32
/// lanes (U = std::uint32_t or a uint32 batch), with bit operations only
/// (no lane-varying shift, no compare), so every ISA and xsimd version runs
/// it the same way. Equal to stochastic_draw() (tests/test_philox.cpp).
template <class U>
LOWBIT_ALWAYS_INLINE U stochastic_draw_lanes(std::uint64_t seed, int r, const U& idx_lo,
                                             const U& idx_hi) noexcept {
  const int w = stochastic_field_bits(r);
  const int s = stochastic_group_log2(r);
  // g = i >> s in two words, e = i mod G.
  U c0 = idx_lo & U((std::uint32_t(1) << s) - 1u);  // e for now
  const U u = c0 >> 4;
  c0 = c0 & U(15u);
  U c1 = (idx_lo >> s) | (idx_hi << (32 - s));
  U c2 = idx_hi >> s;
  U c3 = U(0u);
  philox4x32_10(c0, c1, c2, c3, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  // Word u mod 4: two selects by the bits of u, as masks (0 - bit).
  const U b0 = U(0u) - (u & U(1u)), b1 = U(0u) - ((u >> 1) & U(1u));
  const U t01 = c0 ^ ((c0 ^ c1) & b0);
  const U t23 = c2 ^ ((c2 ^ c3) & b0);
  U word = t01 ^ ((t01 ^ t23) & b1);
  // Field u / 4 (0..3 for w = 8, 0..1 for w = 16, 0 for w = 32).
  if (w == 16) {
    const U f = U(0u) - ((u >> 2) & U(1u));
    word = word ^ ((word ^ (word >> 16)) & f);
  } else if (w == 8) {
    const U f1 = U(0u) - ((u >> 3) & U(1u));
    word = word ^ ((word ^ (word >> 16)) & f1);
    const U f0 = U(0u) - ((u >> 2) & U(1u));
    word = word ^ ((word ^ (word >> 8)) & f0);
  }
  const std::uint32_t mask = r >= 32 ? 0xFFFFFFFFu : (std::uint32_t(1) << r) - 1u;
  return (word >> (w - r)) & U(mask);
}

/// 2^-r as a float or a double, 1 <= r <= 32 (exact, normal).
template <class T>
LOWBIT_ALWAYS_INLINE T stochastic_unit(int r) noexcept {
  if constexpr (sizeof(T) == 4)
    return std::bit_cast<float>(static_cast<std::uint32_t>(127 - r) << 23);
  else
    return std::bit_cast<double>(static_cast<std::uint64_t>(1023 - r) << 52);
}

/// The threshold (d + 1) * 2^-r of element i, d = stochastic_draw(seed, r, i).
template <class T>
LOWBIT_ALWAYS_INLINE T stochastic_threshold_scalar(std::uint64_t seed, int r, std::uint64_t i) noexcept {
  const std::uint64_t d1 = std::uint64_t(stochastic_draw(seed, r, i)) + 1u;
  return static_cast<T>(d1) * stochastic_unit<T>(r);
}

/// The stochastic-rounding thresholds of the elements at flat indices
/// first, first + step, first + 2 step, ... (mod 2^64), one per lane of V
/// (float, double, or an xsimd batch of either): lane j holds
/// (stochastic_draw(seed, r, first + j step) + 1) * 2^-r, exact.
/// Preconditions: 1 <= r <= 23 for float lanes, 1 <= r <= 32 for double.
/// The result depends on the indices only: not on V's width, nor on how a
/// range of indices is split between calls.
template <class V>
LOWBIT_ALWAYS_INLINE V stochastic_threshold(std::uint64_t seed, int r, std::uint64_t first,
                                            std::ptrdiff_t step) noexcept {
  if constexpr (!is_batch_v<V>) {
    (void)step;
    return stochastic_threshold_scalar<V>(seed, r, first);
  } else {
    using T = typename V::value_type;
    using A = typename V::arch_type;
    constexpr std::size_t n = V::size;
    if constexpr (std::is_same_v<T, float>) {
      if (step == 1) {
        using U = xsimd::batch<std::uint32_t, A>;
        alignas(64) static constexpr std::uint32_t iota[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                               8, 9, 10, 11, 12, 13, 14, 15};
        static_assert(n <= 16);
        const U a = U(static_cast<std::uint32_t>(first));
        const U j = U::load_aligned(iota);
        const U lo = a + j;
        // The carry out of lo32(first) + j into the high word.
        const U carry = ((a & j) | ((a | j) & ~lo)) >> 31;
        const U hi = U(static_cast<std::uint32_t>(first >> 32)) + carry;
        const U d1 = stochastic_draw_lanes(seed, r, lo, hi) + U(1u);  // <= 2^23: exact as int32 and float
        return xsimd::batch_cast<float>(bit_cast_batch<std::int32_t>(d1)) * V(stochastic_unit<float>(r));
      }
    }
    alignas(64) T t[n];
    for (std::size_t j = 0; j < n; ++j)
      t[j] = stochastic_threshold_scalar<T>(
          seed, r, first + static_cast<std::uint64_t>(static_cast<std::int64_t>(j) * step));
    return V::load_aligned(t);
  }
}

// ---- whole groups, with the counters in 64-bit lanes (x86) --------------

/**
 * Philox4x32-10 of 16 counters at once, kept in 64-bit lanes: a 32-bit
 * word lives in the low half of a 64-bit lane, so pmuludq gives the whole
 * product of a round at once (no blend of even and odd lanes), the high
 * word is one shift away, and the garbage left in the high halves never
 * reaches a low half (pmuludq reads low halves only; a shift right by 32
 * of a product brings its high word down, zero-extended). Six instructions
 * per round per register of counters instead of eleven (AVX-512: the
 * three-way XOR is one vpternlog). Q registers of counters (chains) run
 * round by round, so that the rounds' multiplications overlap.
 *
 * `c[q]` holds register q's four words (__m512i: 8 counters; __m256i: 4),
 * in and out; the key (k0, k1) is the same for every lane.
 */
#if XSIMD_WITH_AVX512F
/// One round on one register of counters, with the round's key words
/// broadcast in kk0 and kk1.
LOWBIT_ALWAYS_INLINE void philox_round_lanes64(__m512i (&c)[4], __m512i kk0, __m512i kk1) noexcept {
  const __mmask8 all = 0xFF;
  const __m512i m0 = _mm512_set1_epi64(philox_m0), m1 = _mm512_set1_epi64(philox_m1);
  const __m512i p0 = _mm512_maskz_mul_epu32(all, c[0], m0);
  const __m512i p1 = _mm512_maskz_mul_epu32(all, c[2], m1);
  c[0] = _mm512_ternarylogic_epi64(_mm512_maskz_srli_epi64(all, p1, 32), c[1], kk0, 0x96);  // a ^ b ^ c
  c[1] = p1;
  c[2] = _mm512_ternarylogic_epi64(_mm512_maskz_srli_epi64(all, p0, 32), c[3], kk1, 0x96);
  c[3] = p0;
}

/// The counters (8 h + j, lo32(g), hi32(g), 0), j = 0 .. 7, of group g in
/// one register: half h (0 or 1) of the group's 16.
LOWBIT_ALWAYS_INLINE void philox_counters_lanes64(__m512i (&c)[4], std::uint64_t g, int h) noexcept {
  c[0] = _mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(h * 8));
  c[1] = _mm512_set1_epi64(static_cast<std::uint32_t>(g));
  c[2] = _mm512_set1_epi64(static_cast<std::uint32_t>(g >> 32));
  c[3] = _mm512_setzero_si512();
}

/// One output word of a group's 16 counters in 16 uint32 lanes, counter
/// order, from its two registers (lo: counters 0 .. 7, hi: 8 .. 15).
LOWBIT_ALWAYS_INLINE __m512i philox_pack_lanes64(__m512i lo, __m512i hi) noexcept {
  const __m512i low_words = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  return _mm512_permutex2var_epi32(lo, low_words, hi);
}

template <int Q>
LOWBIT_ALWAYS_INLINE void philox_lanes64(__m512i (&c)[Q][4], std::uint32_t k0, std::uint32_t k1) noexcept {
  for (int round = 0; round < 10; ++round) {
    if (round != 0) {
      k0 += philox_w0;
      k1 += philox_w1;
    }
    const __m512i kk0 = _mm512_set1_epi32(static_cast<int>(k0)), kk1 = _mm512_set1_epi32(static_cast<int>(k1));
    for (int q = 0; q < Q; ++q) philox_round_lanes64(c[q], kk0, kk1);
  }
}
#endif
#if XSIMD_WITH_AVX2
template <int Q>
LOWBIT_ALWAYS_INLINE void philox_lanes64(__m256i (&c)[Q][4], std::uint32_t k0, std::uint32_t k1) noexcept {
  const __m256i m0 = _mm256_set1_epi64x(philox_m0), m1 = _mm256_set1_epi64x(philox_m1);
  for (int round = 0; round < 10; ++round) {
    if (round != 0) {
      k0 += philox_w0;
      k1 += philox_w1;
    }
    const __m256i kk0 = _mm256_set1_epi32(static_cast<int>(k0)), kk1 = _mm256_set1_epi32(static_cast<int>(k1));
    for (int q = 0; q < Q; ++q) {
      const __m256i p0 = _mm256_mul_epu32(c[q][0], m0);
      const __m256i p1 = _mm256_mul_epu32(c[q][2], m1);
      c[q][0] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c[q][1]), kk0);
      c[q][1] = p1;
      c[q][2] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c[q][3]), kk1);
      c[q][3] = p0;
    }
  }
}
#endif

/// The four output words of the 16 counters of each of NG consecutive
/// groups g, g + 1, ..., in uint32 lanes in counter order: words[q][k]
/// (16 / n batches of n lanes each, in words[q][k][0 .. 16/n)) is word k of
/// group g + q. x86 with 8 or 16 float lanes: the 64-bit-lane rounds above;
/// elsewhere philox4x32_10_x2 on uint32 batches.
template <class A, int NG>
LOWBIT_ALWAYS_INLINE void philox_group_words(std::uint32_t k0, std::uint32_t k1, std::uint64_t g,
                                             xsimd::batch<std::uint32_t, A> (&words)[NG][4][16 / xsimd::batch<std::uint32_t, A>::size]) noexcept {
  using U = xsimd::batch<std::uint32_t, A>;
  constexpr std::size_t n = U::size;
  constexpr std::size_t columns = 16 / n;
#if XSIMD_WITH_AVX512F
  if constexpr (std::is_base_of_v<xsimd::avx512f, A> && n == 16) {
    // Two registers per group: counters 0..7 and 8..15, packed back into
    // 16 uint32 lanes by one vpermt2d per word.
    __m512i c[2 * NG][4];
    for (int q = 0; q < 2 * NG; ++q) philox_counters_lanes64(c[q], g + static_cast<std::uint64_t>(q / 2), q % 2);
    philox_lanes64<2 * NG>(c, k0, k1);
    for (int q = 0; q < NG; ++q)
      for (int k = 0; k < 4; ++k) words[q][k][0] = U(philox_pack_lanes64(c[2 * q][k], c[2 * q + 1][k]));
    return;
  } else
#endif
#if XSIMD_WITH_AVX2
  if constexpr (std::is_base_of_v<xsimd::avx2, A> && n == 8) {
    // Four registers per group; register 2h holds the even counters of
    // 8h .. 8h + 7 and register 2h + 1 the odd ones, so that one shift and
    // one blend put the eight words back in counter order.
    __m256i c[4 * NG][4];
    for (int q = 0; q < 4 * NG; ++q) {
      const std::uint64_t gq = g + static_cast<std::uint64_t>(q / 4);
      const long long b = (q % 4 / 2) * 8 + q % 2;
      c[q][0] = _mm256_set_epi64x(b + 6, b + 4, b + 2, b);
      c[q][1] = _mm256_set1_epi64x(static_cast<std::uint32_t>(gq));
      c[q][2] = _mm256_set1_epi64x(static_cast<std::uint32_t>(gq >> 32));
      c[q][3] = _mm256_setzero_si256();
    }
    philox_lanes64<4 * NG>(c, k0, k1);
    for (int q = 0; q < NG; ++q)
      for (int k = 0; k < 4; ++k)
        for (int h = 0; h < 2; ++h)
          words[q][k][h] =
              U(_mm256_blend_epi32(c[4 * q + 2 * h][k], _mm256_slli_epi64(c[4 * q + 2 * h + 1][k], 32), 0xAA));
    return;
  } else
#endif
  {
    alignas(64) static constexpr std::uint32_t iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    // Unit (q, col): group g + q, counters col n .. col n + n - 1; two at a time.
    constexpr std::size_t units = NG * columns;
    auto counter = [&](std::size_t u, U (&c)[4]) {
      const std::uint64_t gq = g + u / columns;
      c[0] = U(static_cast<std::uint32_t>((u % columns) * n)) + U::load_aligned(iota);
      c[1] = U(static_cast<std::uint32_t>(gq));
      c[2] = U(static_cast<std::uint32_t>(gq >> 32));
      c[3] = U(0u);
    };
    auto put = [&](std::size_t u, const U (&c)[4]) {
      for (int k = 0; k < 4; ++k) words[u / columns][k][u % columns] = c[k];
    };
    std::size_t u = 0;
    for (; u + 2 <= units; u += 2) {
      U a[4], b[4];
      counter(u, a);
      counter(u + 1, b);
      philox4x32_10_x2(a, b, k0, k1);
      put(u, a);
      put(u + 1, b);
    }
    if (u < units) {
      U a[4];
      counter(u, a);
      philox4x32_10(a[0], a[1], a[2], a[3], k0, k1);
      put(u, a);
    }
  }
}

/// The thresholds of the G = stochastic_group_size(r) elements of one
/// group from its four Philox words (philox_group_words' layout), in
/// element order into out[0 .. G). float lanes, 1 <= r <= 23.
template <class A>
LOWBIT_ALWAYS_INLINE void stochastic_emit_group(
    const xsimd::batch<std::uint32_t, A> (&wd)[4][16 / xsimd::batch<std::uint32_t, A>::size], int r,
    float* out) noexcept {
  using V = xsimd::batch<float, A>;
  using U = xsimd::batch<std::uint32_t, A>;
  constexpr std::size_t n = U::size;
  constexpr std::size_t columns = 16 / n;
  const int w = stochastic_field_bits(r);
  const int draws = 4 * (32 / w);  // D
  const U mask(r >= 32 ? 0xFFFFFFFFu : (std::uint32_t(1) << r) - 1u);
  const V unit(stochastic_unit<float>(r));
  // Element 16 u + col n + j of a group takes word u mod 4, field u / 4.
  for (int u = 0; u < draws; ++u) {
    const int shift = w * (u >> 2) + w - r;
    for (std::size_t col = 0; col < columns; ++col) {
      float* const at = out + static_cast<std::size_t>(u) * 16 + col * n;
#if XSIMD_WITH_AVX512F
      if constexpr (std::is_base_of_v<xsimd::avx512f, A> && n == 16) {
        // The maskz forms (all lanes): GCC 12 builds the plain shift and
        // conversion on _mm512_undefined_*(), which -Wuninitialized
        // flags once inlined (GCC bug 105593; see mulhilo32). d * 2^-r +
        // 2^-r is exact, so the fused form rounds nothing.
        const __mmask16 all = 0xFFFF;
        const __m512i d = _mm512_and_si512(_mm512_maskz_srl_epi32(all, wd[u & 3][col], _mm_cvtsi32_si128(shift)), mask);
        _mm512_storeu_ps(at, _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(all, d), unit, unit));
        continue;
      }
#endif
      const U d1 = ((wd[u & 3][col] >> shift) & mask) + U(1u);
      const V t = xsimd::batch_cast<float>(bit_cast_batch<std::int32_t>(d1)) * unit;
      t.store_unaligned(at);
    }
  }
}

/// The thresholds of the G = stochastic_group_size(r) elements of each of
/// the `groups` groups g, g + 1, ... (flat indices g G .. (g + groups) G -
/// 1), in element order: out[i] is element g G + i's, for i < groups G (out
/// holds that many floats). Equal to stochastic_threshold<batch<float,
/// A>>(seed, r, g G + b n, 1) batch by batch (tests/test_philox.cpp), but
/// one Philox per 16 counters (the layout the mapping was chosen for),
/// two groups at a time (philox_group_words): the path of a kernel walking
/// whole groups. float lanes, 1 <= r <= 23, groups >= 1.
template <class A>
LOWBIT_ALWAYS_INLINE void stochastic_thresholds_group(std::uint64_t seed, int r, std::uint64_t g, float* out,
                                                      int groups = 1) noexcept {
  using U = xsimd::batch<std::uint32_t, A>;
  constexpr std::size_t n = U::size;
  static_assert(16 % n == 0, "the lane count must divide 16");
  constexpr std::size_t columns = 16 / n;
  const std::size_t G = stochastic_group_size(r);
  const std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  int q = 0;
  for (; q + 2 <= groups; q += 2) {
    U wd[2][4][columns];
    philox_group_words<A, 2>(k0, k1, g + static_cast<std::uint64_t>(q), wd);
    stochastic_emit_group<A>(wd[0], r, out + static_cast<std::size_t>(q) * G);
    stochastic_emit_group<A>(wd[1], r, out + static_cast<std::size_t>(q + 1) * G);
  }
  if (q < groups) {
    U wd[1][4][columns];
    philox_group_words<A, 1>(k0, k1, g + static_cast<std::uint64_t>(q), wd);
    stochastic_emit_group<A>(wd[0], r, out + static_cast<std::size_t>(q) * G);
  }
}

/// True when arch A runs philox_group_stepper: AVX-512 with 16 float lanes.
template <class A>
inline constexpr bool has_philox_group_stepper =
#if XSIMD_WITH_AVX512F
    std::is_base_of_v<xsimd::avx512f, A> && xsimd::batch<std::uint32_t, A>::size == 16;
#else
    false;
#endif

#if XSIMD_WITH_AVX512F
/**
 * Philox4x32-10 of one group's 16 counters (philox_group_words' two
 * registers of 64-bit lanes), run a few rounds at a time: a stochastic row
 * loop runs the next group's rounds between the batches of the current one
 * (stochastic_source::for_batches), so that the multiplications interleave
 * with the batches' own operations (a whole group's Philox, ~130
 * operations on a chain of ten rounds, is too long for the CPU's scheduler
 * to overlap with the batches around it). The same words as
 * philox_group_words<A, 1> (tests/test_philox.cpp).
 */
struct philox_group_stepper {
  /// The round keys, broadcast: k[round][0 or 1] (set_keys).
  struct keys {
    __m512i k[10][2];
  };
  static LOWBIT_ALWAYS_INLINE void set_keys(keys& ks, std::uint64_t seed) noexcept {
    std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      ks.k[round][0] = _mm512_set1_epi32(static_cast<int>(k0));
      ks.k[round][1] = _mm512_set1_epi32(static_cast<int>(k1));
      k0 += philox_w0;
      k1 += philox_w1;
    }
  }

  __m512i c[2][4];

  /// The counters of group g; no round run yet.
  LOWBIT_ALWAYS_INLINE void start(std::uint64_t g) noexcept {
    for (int h = 0; h < 2; ++h) philox_counters_lanes64(c[h], g, h);
  }
  /// The four words in counter order (after the ten rounds).
  template <class A>
  LOWBIT_ALWAYS_INLINE void words(xsimd::batch<std::uint32_t, A> (&wd)[4][1]) const noexcept {
    for (int k = 0; k < 4; ++k) wd[k][0] = xsimd::batch<std::uint32_t, A>(philox_pack_lanes64(c[0][k], c[1][k]));
  }
  /// Round `round` (0 to 9) of both registers.
  LOWBIT_ALWAYS_INLINE void round_at(const keys& ks, int round) noexcept {
    for (int h = 0; h < 2; ++h) philox_round_lanes64(c[h], ks.k[round][0], ks.k[round][1]);
  }
  /// Calls batch(b) for b = 0 .. nb - 1 (nb >= 1), with the ten rounds
  /// spread between them: rounds 10 b / nb to 10 (b + 1) / nb - 1 before
  /// batch b. A loop, not unrolled: the batch (a whole kernel) is compiled
  /// once, where an unrolled schedule compiled it once per batch of every
  /// group size (47 KB of row loop and 3.5 s of g++ for reference
  /// FloatQuant's stochastic kernel); the branches repeat every group.
  template <class F>
  LOWBIT_ALWAYS_INLINE void interleave(const keys& ks, int nb, F&& batch) noexcept {
    int round = 0;
    for (int b = 0; b < nb; ++b) {
      for (const int end = 10 * (b + 1) / nb; round < end; ++round) round_at(ks, round);
      batch(b);
    }
  }
};
#endif

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_PHILOX_HPP
