// SPDX-License-Identifier: Apache-2.0
/**
 * @file bench/hand_kernels.hpp
 * The smallest hand-written loops that compute lowbit's bits for the
 * benchmarked workloads, the baselines `baseline/hand_int_quant`,
 * `baseline/hand_trunc`, `baseline/hand_bipolar_quant` and
 * `baseline/hand_fp8_e4m3` of lowbit-bench: what a user could write instead
 * of calling lowbit (per tensor, no checks, nothing but the arithmetic);
 * IntQuant and Trunc also in the rounding modes that cost more than ROUND
 * (`baseline/hand_int_quant_<mode>`, `baseline/hand_trunc_<mode>`), the
 * bound of what a mode can cost against ROUND.
 * tests/test_hand_kernels.cpp checks them bit for bit against lowbit.
 *
 * Written on xsimd batches, four per iteration, then single batches, then
 * scalar elements, with the same step for batches and scalars. The division,
 * round-to-nearest-even and bit casts are lowbit's exact primitives
 * (lowbit::detail): the plain instructions on x86; on AArch64 they keep the
 * bits where xsimd's own NEON division and rounding do not.
 */
#ifndef LOWBIT_BENCH_HAND_KERNELS_HPP
#define LOWBIT_BENCH_HAND_KERNELS_HPP

#include <lowbit/lowbit.hpp>

#include <cstddef>
#include <cstdint>

namespace lowbit_bench {

/// IntQuant ROUND, exact semantics: y = (rint(clamp(x / s + z, lo, hi)) - z) * s.
/// With S and M: rounding mode M in semantics S, rounded as lowbit rounds
/// IntQuant (round_integral_any_zero: the shortest forms it has, which a
/// hand loop would use too); ROUND is rint in both.
template <lowbit::semantics S = lowbit::semantics::exact, lowbit::rounding_mode M = lowbit::rounding_mode::half_even,
          class V>
LOWBIT_ALWAYS_INLINE V hand_int_quant_step(V x, V s, V z, V lo, V hi) noexcept {
  namespace ld = lowbit::detail;
  V v = ld::quotient(x, s) + z;
  v = ld::bound_above(hi, ld::bound_below(lo, v));
  return (ld::round_integral_any_zero<S, M>(v) - z) * s;
}

/// Trunc (opset 2) with ROUND, t = 2^k given as its reciprocal rt = 1 / t
/// (y / t = y * rt exactly when both are powers of two):
/// y = (rint(clamp(rint(x / s + z) * rt, lo, hi)) - zt) * os, zt = z / t.
/// The bits of both semantics when the ratio out_scale / scale is a power
/// of two.
/// With S and M: the second rounding in mode M of semantics S (the first
/// is always ROUND), as lowbit's round_integral.
template <lowbit::semantics S = lowbit::semantics::exact, lowbit::rounding_mode M = lowbit::rounding_mode::half_even,
          class V>
LOWBIT_ALWAYS_INLINE V hand_trunc_step(V x, V s, V z, V rt, V lo, V hi, V zt, V os) noexcept {
  namespace ld = lowbit::detail;
  V v = ld::rint(ld::quotient(x, s) + z) * rt;
  v = ld::bound_above(hi, ld::bound_below(lo, v));
  return (ld::round_integral<S, M>(v) - zt) * os;
}

/// BipolarQuant, reference semantics: +s for x >= 0 (-0 included), -s
/// below and for NaN, with pos = 1 * s and neg = -1 * s computed once.
template <class V>
LOWBIT_ALWAYS_INLINE V hand_bipolar_quant_step(V x, V pos, V neg) noexcept {
  return lowbit::detail::select(x >= V(0.0f), pos, neg);
}

/// OCP FP8 E4M3FN, ROUND (ties to even), saturating, exact semantics, by
/// the magic number: a = min(|x / s|, 448); M = 2^(max(e, -6) + 20), e the
/// exponent of a from its bits; q = (a + M) - M, with the sign of x / s
/// (rounds a to a multiple of 2^(max(e, -6) - 3): 3 mantissa bits, the
/// subnormal spacing 2^-9 below 2^-6); y = q * s.
template <class V>
LOWBIT_ALWAYS_INLINE V hand_fp8_e4m3_step(V x, V s) noexcept {
  namespace ld = lowbit::detail;
  using I = ld::int_lanes_t<V>;
  const V d = ld::quotient(x, s);
  const V a = ld::bound_above(V(448.0f), ld::abs(d));
  const I e = (ld::float_bits(a) >> 23) - I(127);
  const V m = ld::bits_float(I((ld::imax(e, I(-6)) + I(20 + 127)) << 23));
  const V q = (a + m) - m;
  return ld::copysign(q, d) * s;
}

/// y[i] = f(x[i]) for i in [0, n): four batches per iteration, then single
/// batches, then scalars.
template <class F>
LOWBIT_ALWAYS_INLINE void hand_loop(const float* x, float* y, std::size_t n, const F& fn) noexcept {
  // A local copy: a vector store may alias any memory, so values read
  // through a reference would be reloaded (and broadcast again) every batch.
  const F f = fn;
  using B = xsimd::batch<float>;
  constexpr std::size_t L = B::size;
  std::size_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    f(B::load_unaligned(x + i)).store_unaligned(y + i);
    f(B::load_unaligned(x + i + L)).store_unaligned(y + i + L);
    f(B::load_unaligned(x + i + 2 * L)).store_unaligned(y + i + 2 * L);
    f(B::load_unaligned(x + i + 3 * L)).store_unaligned(y + i + 3 * L);
  }
  for (; i + L <= n; i += L) f(B::load_unaligned(x + i)).store_unaligned(y + i);
  for (; i < n; ++i) y[i] = f(x[i]);
}

/// IntQuant ROUND, exact semantics, per tensor: scale s, zero point z, the
/// integer range [lo, hi]. With S and M: mode M in semantics S.
template <lowbit::semantics S = lowbit::semantics::exact, lowbit::rounding_mode M = lowbit::rounding_mode::half_even>
void hand_int_quant(const float* x, float* y, std::size_t n, float s, float z, float lo, float hi) noexcept {
  hand_loop(x, y, n, [=](auto v) LOWBIT_ALWAYS_INLINE_LAMBDA {
    using V = decltype(v);
    return hand_int_quant_step<S, M>(v, V(s), V(z), V(lo), V(hi));
  });
}

/// Trunc (opset 2), ROUND, per tensor: scale s, zero point z, output scale
/// os, t = 2^k the power of two nearest os / s (given), the output range
/// [lo, hi].
/// With S and M: the second rounding in mode M of semantics S.
template <lowbit::semantics S = lowbit::semantics::exact, lowbit::rounding_mode M = lowbit::rounding_mode::half_even>
void hand_trunc(const float* x, float* y, std::size_t n, float s, float z, float t, float os, float lo,
                float hi) noexcept {
  const float rt = 1.0f / t, zt = z / t;
  hand_loop(x, y, n, [=](auto v) LOWBIT_ALWAYS_INLINE_LAMBDA {
    using V = decltype(v);
    return hand_trunc_step<S, M>(v, V(s), V(z), V(rt), V(lo), V(hi), V(zt), V(os));
  });
}

/// BipolarQuant, reference semantics, per tensor.
inline void hand_bipolar_quant(const float* x, float* y, std::size_t n, float s) noexcept {
  const float pos = 1.0f * s, neg = -1.0f * s;
  hand_loop(x, y, n, [=](auto v) LOWBIT_ALWAYS_INLINE_LAMBDA {
    using V = decltype(v);
    return hand_bipolar_quant_step(v, V(pos), V(neg));
  });
}

/// minifloat_quant of OCP FP8 E4M3FN, ROUND, exact semantics, per tensor.
inline void hand_fp8_e4m3(const float* x, float* y, std::size_t n, float s) noexcept {
  hand_loop(x, y, n, [=](auto v) LOWBIT_ALWAYS_INLINE_LAMBDA {
    using V = decltype(v);
    return hand_fp8_e4m3_step(v, V(s));
  });
}

/// The same per channel: `rows` rows of `cols` elements, row r divided by
/// s[r] (x [rows, cols], scale [rows, 1]): the loop above once per row,
/// what a user would write for per-channel scales.
inline void hand_fp8_e4m3_rows(const float* x, float* y, std::size_t rows, std::size_t cols, const float* s) noexcept {
  for (std::size_t r = 0; r < rows; ++r) hand_fp8_e4m3(x + r * cols, y + r * cols, cols, s[r]);
}

}  // namespace lowbit_bench

#endif  // LOWBIT_BENCH_HAND_KERNELS_HPP
