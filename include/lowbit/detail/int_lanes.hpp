// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/int_lanes.hpp
 * int32 lanes next to float lanes, generic over a scalar and an xsimd batch
 * like the kernels: the bits of a float, integer min/max/select/gather, mask
 * tests, and 2^u from an integer u. FloatQuant and Trunc compute exponents
 * in these.
 */
#ifndef LOWBIT_DETAIL_INT_LANES_HPP
#define LOWBIT_DETAIL_INT_LANES_HPP

#include <bit>
#include <cstdint>
#include <type_traits>

#include "../config.hpp"
#include "simd.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

template <class V>
struct int_lanes {
  using type = std::int32_t;
};
template <class A>
struct int_lanes<xsimd::batch<float, A>> {
  using type = xsimd::batch<std::int32_t, A>;
};
template <class V>
using int_lanes_t = typename int_lanes<V>::type;

LOWBIT_ALWAYS_INLINE std::int32_t float_bits(float v) noexcept { return std::bit_cast<std::int32_t>(v); }
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<std::int32_t, A> float_bits(const xsimd::batch<float, A>& v) noexcept {
  return detail::bit_cast_batch<std::int32_t>(v);
}
LOWBIT_ALWAYS_INLINE float bits_float(std::int32_t v) noexcept { return std::bit_cast<float>(v); }
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<float, A> bits_float(const xsimd::batch<std::int32_t, A>& v) noexcept {
  return detail::bit_cast_batch<float>(v);
}
/// Float holding a small integer value -> int32 (exact).
LOWBIT_ALWAYS_INLINE std::int32_t small_to_int(float v) noexcept { return static_cast<std::int32_t>(v); }
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<std::int32_t, A> small_to_int(const xsimd::batch<float, A>& v) noexcept {
  return xsimd::batch_cast<std::int32_t>(v);
}
LOWBIT_ALWAYS_INLINE std::int32_t imax(std::int32_t a, std::int32_t b) noexcept { return a > b ? a : b; }
LOWBIT_ALWAYS_INLINE std::int32_t imin(std::int32_t a, std::int32_t b) noexcept { return a < b ? a : b; }
// Integer max/min: one instruction from SSE4.1 on (no NaN to worry about).
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<std::int32_t, A> imax(const xsimd::batch<std::int32_t, A>& a,
                                                           const xsimd::batch<std::int32_t, A>& b) noexcept {
  return xsimd::max(a, b);
}
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<std::int32_t, A> imin(const xsimd::batch<std::int32_t, A>& a,
                                                           const xsimd::batch<std::int32_t, A>& b) noexcept {
  return xsimd::min(a, b);
}
LOWBIT_ALWAYS_INLINE std::int32_t iabs(std::int32_t a) noexcept { return a < 0 ? -a : a; }
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<std::int32_t, A> iabs(const xsimd::batch<std::int32_t, A>& a) noexcept {
  return xsimd::abs(a);
}
LOWBIT_ALWAYS_INLINE std::int32_t iselect(bool m, std::int32_t a, std::int32_t b) noexcept {
  return m ? a : b;
}
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<std::int32_t, A> iselect(
    const xsimd::batch_bool<std::int32_t, A>& m, const xsimd::batch<std::int32_t, A>& a,
    const xsimd::batch<std::int32_t, A>& b) noexcept {
#if XSIMD_WITH_AVX512F
  // AVX-512: the blend itself. xsimd 8.1's avx512bw select instantiates its
  // 8- and 16-bit blends for int32 lanes too, and at -O0 GCC defines those
  // intrinsics as macros whose casts do not accept a batch: an -O0 build
  // with -march=native on an AVX-512BW machine did not compile.
  if constexpr (std::is_base_of_v<xsimd::avx512f, A>)
    return xsimd::batch<std::int32_t, A>(_mm512_mask_blend_epi32(static_cast<__mmask16>(m), b, a));
  else
#endif
    return xsimd::select(m, a, b);
}
LOWBIT_ALWAYS_INLINE std::int32_t igather(const std::int32_t* t, std::int32_t i) noexcept { return t[i]; }
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<std::int32_t, A> igather(const std::int32_t* t,
                                                             const xsimd::batch<std::int32_t, A>& i) noexcept {
  return xsimd::batch<std::int32_t, A>::gather(t, i);
}
LOWBIT_ALWAYS_INLINE bool any_lane(bool a) noexcept { return a; }
LOWBIT_ALWAYS_INLINE bool all_lanes(bool a) noexcept { return a; }
template <class T, class A>
LOWBIT_ALWAYS_INLINE bool all_lanes(const xsimd::batch_bool<T, A>& a) noexcept {
  return xsimd::all(a);
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE bool any_lane(const xsimd::batch_bool<T, A>& a) noexcept {
  return xsimd::any(a);
}
/// any_lane(mask_or(a, b)): on AVX-512 one KORTEST of the two masks
/// (GCC 12 moves them to general registers for an OR and a TEST instead).
LOWBIT_ALWAYS_INLINE bool any_lane_of(bool a, bool b) noexcept { return a || b; }
template <class T, class A>
LOWBIT_ALWAYS_INLINE bool any_lane_of(const xsimd::batch_bool<T, A>& a, const xsimd::batch_bool<T, A>& b) noexcept {
#if defined(__AVX512F__)
  if constexpr (std::is_base_of_v<xsimd::avx512f, A> && sizeof(T) == 4)
    return !_kortestz_mask16_u8(a.data, b.data);
  else
#endif
    return xsimd::any(a | b);
}
LOWBIT_ALWAYS_INLINE bool mask_and(bool a, bool b) noexcept { return a && b; }
LOWBIT_ALWAYS_INLINE bool mask_or(bool a, bool b) noexcept { return a || b; }
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch_bool<T, A> mask_and(const xsimd::batch_bool<T, A>& a,
                                                    const xsimd::batch_bool<T, A>& b) noexcept {
  return a & b;
}
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch_bool<T, A> mask_or(const xsimd::batch_bool<T, A>& a,
                                                   const xsimd::batch_bool<T, A>& b) noexcept {
  return a | b;
}

/// 2^u as a float for any int32 u: exact for -149 <= u <= 127, +0 below
/// (2^-150 rounds to even, i.e. 0), +inf above. Two normal powers of two and
/// one correctly rounded product.
template <class I>
LOWBIT_ALWAYS_INLINE auto exp2_int(const I& u) noexcept {
  const I u1 = imin(imax(u, I(-126)), I(127));
  const I u2 = imin(imax(u - u1, I(-126)), I(1));
  const auto p1 = bits_float(I((u1 + I(127)) << 23));
  const auto p2 = bits_float(I((u2 + I(127)) << 23));
  return p1 * p2;
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_INT_LANES_HPP
