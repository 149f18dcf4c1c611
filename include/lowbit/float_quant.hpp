// SPDX-License-Identifier: Apache-2.0
/**
 * @file float_quant.hpp
 * QONNX FloatQuant: fake-quantization to a minifloat grid (FP8, FP6, FP4,
 * bfloat16, ...) and back. The whole semantics, step by step, is in
 * docs/semantics.md ("FloatQuant").
 */
#ifndef LOWBIT_FLOAT_QUANT_HPP
#define LOWBIT_FLOAT_QUANT_HPP

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "attributes.hpp"
#include "broadcast.hpp"
#include "config.hpp"
#include "detail/divide.hpp"
#include "detail/driver.hpp"
#include "detail/elementwise.hpp"
#include "detail/int_lanes.hpp"
#include "detail/log2_table.hpp"
#include "detail/minifloat_constants.hpp"
#include "detail/simd.hpp"
#include "detail/stage.hpp"
#include "detail/stochastic.hpp"
#include "error.hpp"
#include "parallel.hpp"
#include "rounding.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {

/// How an overflow is resolved: 0 saturate (+-max), 1 +-inf, 2 NaN.
enum class fq_overflow { saturate, infinity, nan };

/**
 * QONNX's float32 evaluation (reference semantics): the exponent is
 * floor(fl32(log2(fl32(|x| + FLT_MIN)))) - m, raised to emin; the internal
 * scale 2^e is a float32 value (0 below 2^-150, inf above 2^127); x / 2^e and
 * r * 2^e are IEEE operations; the overflow masks follow QONNX.
 *
 * Two paths give the same bits. The fast one serves a batch when the
 * piece's m and emin are constant with m >= 1 and -126 <= emin <= 126
 * (`general` false) and no lane is infinite, NaN or within 64 ulps of the
 * top of its binade: e then lies in [-126, 126], so 2^e and 2^-e are
 * normal floats built from bits, and x / 2^e is x * 2^-e (the same real
 * number, rounded once). The general path handles everything else.
 *
 * `eval` is the whole evaluation, shared by the kernels below: `round`
 * rounds y to an integral value, `ov` resolves overflows, and with
 * `Decline` (a batch of float_quant_ref_kernel) a batch that needs the
 * general path is declined (`ok` false) instead.
 */
struct fq_ref_eval : scale_divider {
  const std::int32_t* thr = nullptr;
  bool general = true;  ///< m or emin vary over the piece, or leave the fast range
  /// For the fast path (general false): the piece's m (capped at 255) and
  /// emin + 127 (the smallest biased exponent of 2^e), as integers shifted
  /// into a float's exponent field (<< 23), so that the loop works on the
  /// exponent field in place, without a shift. Computed once here: the same float
  /// operations in the loop were redone per batch, because GCC does not
  /// hoist a possibly trapping float operation out of a branch.
  std::int32_t m_field = 0, ebmin_field = 0;
  /// A piece with emin < -100, where |x| and fl(|x| + FLT_MIN) may give
  /// different e below 2^-101 (see eval): the per-mode kernels decline a
  /// batch with a lane below 2^-101 (zeros too), the run-time-mode kernel
  /// reads fl(|x| + FLT_MIN)'s bits.
  bool add_min = false;
  /// For ROUND with saturation to a max on the format's grid and a format
  /// in the exact fast kernel's range (exact_fast_range) with m <= 15, set
  /// for the kernel float_quant_ref_kernel<half_even, St, true>: it rounds a
  /// = min(|x|, max) with the magic number c = 2^(u + 23), as
  /// float_quant_exact_fast_kernel does (eval_magic). `magic_add` and
  /// `magic_min` are (23 - m) << 23 and (emin + 150) << 23, `magic_bound`
  /// is max.
  std::int32_t magic_add = 0, magic_min = 0;
  float magic_bound = 0.0f;

  /// The batch of float_quant_ref_kernel's magic form: x / scale and the
  /// rest as eval's fast path, or declined (`ok` false) where eval would
  /// take its general path.
  template <stage St, class V>
  LOWBIT_ALWAYS_INLINE V eval_magic(bool& ok, V X, V scale) const noexcept {
    using I = int_lanes_t<V>;
    if constexpr (St == stage::dequant) return X * scale;
    const V x = this->divide(X, scale);
    const V ax = detail::abs(x);
    // ROUND with saturation to a max on the grid, m <= 15 (the kernel
    // float_quant_ref_kernel<half_even, St, true>). Where eval's fast
    // path is taken (x finite, and with add_min not below 2^-101), it
    // computes q = clamp(2^e rint(x / 2^e), +-max), e = max(k' - m, emin),
    // with k' = floor(fl(log2 |x|)): |x|'s exponent k, or k + 1 within 64
    // ulps of the top of the binade, which the fast path declines. For
    // ROUND with m <= 15 the two give the same q: if k' = k + 1 and k - m
    // >= emin, |x| = 2^(k+1) - t with t <= 2^(k-17), less than half of
    // either step (2^(k-m) or twice that, m <= 15), so both round to
    // 2^(k+1); if k - m < emin, e = emin either way. So this form reads
    // k from |x|'s bits everywhere, without that decline.
    //
    // q = 2^e rint(a / 2^e) with x's sign for a = min(|x|, max): equal
    // for |x| <= max (the product, the quotient and a's exponent are
    // |x|'s), and max for |x| > max (rounding is monotone and max on the
    // grid). a + c, c = 2^(e + 23), lies in [c, 2c) (a < 2^(k+1), m <=
    // 22), whose spacing is 2^e: (a + c) - c is a rounded to a multiple of
    // 2^e, ties to even, exactly (step 3 of the exact fast kernel). Four
    // vector operations fewer than eval's fast path (no binade-top test, no
    // products by 2^-e and 2^e, one bound instead of two, and the sign put
    // back): eleven, as the hand-written FP8 loop (AVX-512).
    const I xb = float_bits(ax);
    if (any_lane(xb > I(0x7f7fffff)) || (add_min && any_lane(xb < I(26 << 23)))) {
      ok = false;
      return x;
    }
    const V a = detail::bound_above(V(magic_bound), ax);
    const I fa = float_bits(a) & I(0x7f800000);
    const V c = bits_float(imax(I(fa + I(magic_add)), I(magic_min)));
    const V q = detail::or_sign(V((a + c) - c), x);
    if constexpr (St == stage::code) return q;
    else return q * scale;
  }

  template <stage St, bool Decline, class V, class Round>
  LOWBIT_ALWAYS_INLINE V eval(bool& ok, Round round, fq_overflow ov, V X, V scale, V mant, V emin,
                              V maxv) const noexcept {
    using I = int_lanes_t<V>;
    if constexpr (St == stage::dequant) return X * scale;
    const V x = this->divide(X, scale);
    const V ax = detail::abs(x);
    // The fast path reads |x|'s bits, not those of a = fl(|x| + FLT_MIN)
    // (the add sat between the division and everything else: 1.15x on
    // E4M3): a = |x| for |x| >= 2^-101 (FLT_MIN = 2^-126 is at most a
    // quarter of |x|'s ulp), and below that both give e = emin when emin >=
    // -100, as k - m <= -102. On a piece with a smaller emin (`add_min`)
    // the per-mode kernels decline the batches with a lane below 2^-101 and
    // the run-time-mode kernel reads a's bits.
    I xb;
    if constexpr (Decline)
      xb = float_bits(ax);
    else
      xb = add_min ? float_bits(V(ax + V(std::numeric_limits<float>::min()))) : float_bits(ax);
    // Built before the branch, so that GCC hoists the broadcasts out of the
    // loop (inside the branch they were redone every batch).
    const I ebmin_f(ebmin_field), m_f(m_field);
    const I ef = xb & I(0x7f800000);  // the exponent field in place (abs clears a NaN's sign too)
    // Only mantissas within 64 ulps of the top of their binade can round up
    // in log2; an all-ones field is an infinite or NaN x.
    V y, p;
    // A declining kernel runs on fast pieces only (`general` false there).
    if ((!Decline && general) || any_lane_of((xb & I(0x7fffc0)) == I(0x7fffc0), ef == I(0x7f800000)) ||
        (Decline && add_min && any_lane(ef < I(26 << 23)))) {
      if constexpr (Decline) {
        ok = false;
        return x;
      } else {
        const I ab = float_bits(V(ax + V(std::numeric_limits<float>::min())));  // a >= +0
        const I be = ab >> 23;
        I k = be - I(127);
        if (any_lane((ab & I(0x7fffc0)) == I(0x7fffc0)))
          k = k + iselect((ab & I(0x7fffff)) >= igather(thr, be), I(1), I(0));
        // a = inf or NaN: log2 is inf/NaN, 2^e = inf, x / 2^e = NaN.
        k = iselect(be == I(255), I(1000), k);
        const I e = imax(k - small_to_int(mant), small_to_int(emin));
        p = exp2_int(e);
        // x / 2^e = x * 2^-e (the same real number, rounded once) whenever
        // 2^-e is a float and 2^e finite, i.e. -127 <= e <= 127; elsewhere
        // (2^e zero, subnormal below 2^-127, or inf) divide.
        const auto direct = (e >= I(-127)) & (e <= I(127));
        y = x * exp2_int(I(I(0) - e));
        if (!all_lanes(direct)) {
          y = bits_float(iselect(direct, float_bits(y), float_bits(detail::quotient(x, p))));
          // x = +-inf (k = 1000, so never direct): x / 2^e is inf / inf, whose
          // NaN is the hardware's default NaN: -NaN (0xffc00000) on x86, +NaN
          // on AArch64. x86's, explicitly, so that the bits do not depend on
          // the architecture (it propagates unchanged through the rounding
          // and the products below).
          y = detail::select(detail::abs(x) == V(std::numeric_limits<float>::infinity()),
                             V(std::bit_cast<float>(std::uint32_t(0xffc00000u))), y);
        }
      }
    } else {
      // The exponent field of 2^e, max(be - m, emin + 127) << 23 with be
      // the biased exponent in [0, 254], in [1, 253] << 23: fewer live
      // constants than forming e first (AVX2 has 16 registers, and each
      // constant spilled is rebuilt in the loop), and no shift (the fields
      // are subtracted in place).
      const I pb = imax(I(ef - m_f), ebmin_f);
      p = bits_float(pb);
      y = x * bits_float(I(I(254 << 23) - pb));  // 2^-e
    }
    const V r = round(y);
    V q = r * p;
    const V nmax = detail::negate(maxv);
    if (ov == fq_overflow::saturate) [[likely]] {
      // select(q < nmax, nmax, q), then select(q > maxv, maxv, q): exactly
      // the bounds (MAXPS / MINPS, detail/simd.hpp).
      q = detail::bound_above(maxv, detail::bound_below(nmax, q));
    } else if (ov == fq_overflow::infinity) {
      const V inf(std::numeric_limits<float>::infinity());
      q = detail::select(q > maxv, inf, detail::select(q < nmax, detail::negate(inf), q));
    } else {
      const auto bad = mask_or(mask_or(q > maxv, q < nmax), detail::abs(q) == V(std::numeric_limits<float>::infinity()));
      q = detail::select(bad, V(std::numeric_limits<float>::quiet_NaN()), q);
    }
    if constexpr (St == stage::code) return q;
    return q * scale;
  }
};

/// Rounds with the mode M (reference semantics).
template <rounding_mode M>
struct fq_round_fixed {
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V y) const noexcept {
    return detail::round_integral<semantics::reference, M>(y);
  }
};

/// Rounds stochastically with the lanes' thresholds `u` (reference
/// semantics): the stochastic kernel's step, without the switch of every
/// mode (compiled at every call site whose mode is not known).
template <class V>
struct fq_round_stochastic {
  V u = V(0);
  LOWBIT_ALWAYS_INLINE V operator()(V y) const noexcept {
    return detail::round_integral_u<semantics::reference, rounding_mode::stochastic>(y, u);
  }
};

/// Rounds with the run-time mode (reference semantics): a switch per batch,
/// always predicted; `u` is the stochastic mode's threshold (unused by the
/// other modes).
template <class V>
struct fq_round_any {
  rounding_mode mode = rounding_mode::half_even;
  V u = V(0);
  LOWBIT_ALWAYS_INLINE V operator()(V y) const noexcept {
    return round_integral_any<semantics::reference>(y, mode, u);
  }
};

/**
 * The reference kernel of everything else, one for all rounding modes: a
 * piece whose m or emin vary or leave the fast range, the scalar path, and
 * the scalar loop of every per-mode kernel (its tails and declined batches).
 * The mode is a run-time member: a switch per batch, always predicted,
 * instead of seven more copies of the loops.
 */
template <stage St = stage::fake>
struct float_quant_ref_any_kernel : fq_ref_eval {
  rounding_mode mode = rounding_mode::half_even;
  fq_overflow ov = fq_overflow::saturate;
  /// The seed and random bits of the stochastic mode (detail/stochastic.hpp).
  stochastic_source rnd{};
  /// The mode may be stochastic: each element's flat output index.
  static constexpr bool index_aware = true;
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(element_index idx, V X, V scale, V mant, V emin, V maxv) const noexcept {
    bool ok = true;
    const fq_round_any<V> round{mode, rnd.template threshold<run_time_mode, V>(mode, idx)};
    return this->template eval<St, false>(ok, round, ov, X, scale, mant, emin, maxv);
  }
};

/**
 * The reference kernel of the stochastic mode, for every piece (fast or
 * general path, in the batch: it declines nothing): the kernel of every
 * mode's steps with the stochastic rounding fixed, so that the row loop
 * draws its thresholds a group at a time (stochastic_kernel) instead of
 * looking them up batch by batch. The same bits as
 * float_quant_ref_any_kernel with mode STOCHASTIC, its scalar loop.
 */
template <stage St = stage::fake>
struct float_quant_ref_stochastic_kernel : fq_ref_eval {
  fq_overflow ov = fq_overflow::saturate;
  /// The seed and random bits (detail/stochastic.hpp).
  stochastic_source rnd{};
  static constexpr bool index_aware = true;
  /// The row loop draws whole groups (stochastic_kernel).
  static constexpr bool stochastic = true;
  /// The scalar loop's kernel: the kernel of every mode, in this mode.
  float_quant_ref_any_kernel<St> scalar_kernel() const noexcept {
    return {*this, rounding_mode::stochastic, ov, rnd};
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(element_index idx, V X, V scale, V mant, V emin, V maxv) const noexcept {
    return eval(rnd.template lanes<V>(idx), X, scale, mant, emin, maxv);
  }
  /// `u`: the lanes' thresholds.
  template <class V>
  LOWBIT_ALWAYS_INLINE V eval(V u, V X, V scale, V mant, V emin, V maxv) const noexcept {
    bool ok = true;
    return fq_ref_eval::template eval<St, false>(ok, fq_round_stochastic<V>{u}, ov, X, scale, mant, emin, maxv);
  }
};

/**
 * The reference kernel of the common case, one per rounding mode M: a
 * piece that takes the fast path (fq_ref_eval, `general` false), with any
 * overflow rule (`ov`). A batch with a lane that needs the general path is
 * declined, and the runner computes it on the scalar loop
 * (declining_kernel), which takes both paths: the mode's batch loops hold
 * the fast path only. (On per-element pieces a run-time mode, fq_round_any,
 * was 1.1-1.2x slower.)
 * St: the whole operator, q only, or q (passed as X) to Y (detail::stage).
 * Magic (M = ROUND only): the batches by fq_ref_eval::eval_magic, for a
 * piece whose format and overflow rule allow it (run_kernel).
 */
template <rounding_mode M, stage St = stage::fake, bool Magic = false>
struct float_quant_ref_kernel : fq_ref_eval {
  static constexpr bool may_decline = true;
  fq_overflow ov = fq_overflow::saturate;  ///< a branch per batch, always predicted
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V X, V scale, V mant, V emin, V maxv) const noexcept {
    bool ok = true;
    return this->template eval<St, false>(ok, fq_round_fixed<M>{}, ov, X, scale, mant, emin, maxv);
  }
  /// The scalar loop's kernel, shared by every mode (scalar_kernel_of).
  float_quant_ref_any_kernel<St> scalar_kernel() const noexcept { return {*this, M, ov}; }
  static_assert(M != rounding_mode::stochastic, "the stochastic mode runs on float_quant_ref_any_kernel");
  static_assert(!Magic || M == rounding_mode::half_even, "the magic form rounds to nearest even");
  template <class V>
  LOWBIT_ALWAYS_INLINE V try_batch(bool& ok, V X, V scale, V mant, V emin, V maxv) const noexcept {
    // Magic: ROUND with saturation to a max on the grid (eval_magic), a
    // loop of its own so that its constants stay in registers.
    if constexpr (Magic) return (void)mant, (void)emin, (void)maxv, this->template eval_magic<St>(ok, X, scale);
    else return this->template eval<St, true>(ok, fq_round_fixed<M>{}, ov, X, scale, mant, emin, maxv);
  }
};

/**
 * The exact semantics (FORMAT.md rule 7): e = floor(log2|x|) from the bits,
 * u = max(e - m, emin), q = 2^u R(x / 2^u) computed exactly, overflow
 * decided on |q| > max after rounding.
 */
/// `Magic` selects the magic-number technique for ROUND, false the bit
/// technique; the operator runs this kernel with M = run_time_mode (bits, on
/// pieces the fast kernel does not take), the magic form serves the technique
/// benchmark (bench/bench_float_quant.cpp) and the fast kernel's tests.
/// The divider (a base) is the power-of-two scale fast path (scale_divider).
/// St: the whole operator, q only, or q (passed as X) to Y (detail::stage).
/// Sat: overflows saturate; else `ov` says how they resolve (infinity or
/// NaN, a run-time member: a branch per batch, always predicted).
/// M may be run_time_mode (the member `mode`): the kernel of a piece that
/// leaves the fast kernel's range (float_quant_exact_fast_kernel).
template <rounding_mode M, bool Magic = M == rounding_mode::half_even, stage St = stage::fake, bool Sat = true>
struct float_quant_exact_kernel : scale_divider {
  fq_overflow ov = fq_overflow::saturate;  ///< with !Sat: infinity or nan
  rounding_mode mode = M;                  ///< for M = run_time_mode
  /// The seed and random bits of the stochastic mode (detail/stochastic.hpp).
  stochastic_source rnd{};
  static constexpr bool index_aware = needs_index<M>;
  /// The mode is stochastic: the row loop draws whole groups (stochastic_kernel).
  static constexpr bool stochastic = M == rounding_mode::stochastic;
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V X, V scale, V mant, V emin, V maxv) const noexcept {
    return eval(V(0.0f), X, scale, mant, emin, maxv);
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(element_index idx, V X, V scale, V mant, V emin, V maxv) const noexcept {
    return eval(rnd.template threshold<M, V>(mode, idx), X, scale, mant, emin, maxv);
  }
  /// `thr`: the stochastic mode's thresholds (unused by the other modes).
  template <class V>
  LOWBIT_ALWAYS_INLINE V eval(V thr, V X, V scale, V mant, V emin, V maxv) const noexcept {
    using I = int_lanes_t<V>;
    if constexpr (St == stage::dequant) return X * scale;
    const V x = this->divide(X, scale);
    const V ax = detail::abs(x);
    // Subnormals are normalised by an exact power-of-two product.
    const I xb = float_bits(x);
    const auto sub = ((xb >> 23) & I(0xff)) == I(0);
    const V xs = x * V(16777216.0f);
    const I nb = iselect(sub, float_bits(xs), xb);
    const I be = (nb >> 23) & I(0xff);
    const I e = be - I(127) - iselect(sub, I(24), I(0));
    const I u = imax(e - small_to_int(mant), small_to_int(emin));
    // q = 2^u R(x / 2^u), computed exactly; a zero q keeps x's sign.
    auto by_bits = [&] {
      const I d = u - e;  // >= -m >= -23
      // y = x * 2^-u if d <= 26 (exact: x's significand with exponent -d),
      // else x's significand scaled into [2^-26, 2^-25): for d >= 26 the
      // true |x / 2^u| is nonzero and below 2^-25, and every rounding mode
      // treats +-(0, 2^-25) alike (the stochastic mode's smallest threshold
      // is 2^-23: toward zero).
      const V y = bits_float(I((nb & I(std::int32_t(0x807fffff))) | I((I(127) - imin(d, I(26))) << 23)));
      const V r = detail::round_step<semantics::exact, M>(y, mode, thr);
      const V p = r * exp2_int(u);                 // exact, or +-inf when 2^u > 2^127
      return detail::select(r == V(0.0f), r, p);  // no 0 * inf
    };
    V q;
    if constexpr (Magic) {
      static_assert(M == rounding_mode::half_even, "the magic-number trick rounds to nearest even only");
      // The magic-number trick, fewer operations than by_bits (the bench
      // float_quant_technique compares the two): with c = 2^(u+23) of x's sign, x + c lies
      // in [2^(u+23), 2^(u+24)), where the float spacing is 2^u, so the
      // addition rounds x to a multiple of 2^u, ties to even, and the
      // subtraction is exact (Sterbenz). |x| >= c means m = 23 and x is on
      // the grid already. c must be finite: u <= 104, else by_bits.
      const auto big = u > I(104);
      const V c = detail::copysign(bits_float(I((imin(u, I(104)) + I(23 + 127)) << 23)), x);
      const V t = x + c;
      q = t - c;
      q = detail::select(ax >= detail::abs(c), x, q);
      q = detail::copysign(q, x);
      if (any_lane(big)) q = bits_float(iselect(big, float_bits(by_bits()), float_bits(q)));
    } else {
      q = by_bits();
    }
    // +-0, +-inf and NaN pass through (inf then overflows below).
    const auto finite_nonzero = mask_and(ax > V(0.0f), ax <= V(std::numeric_limits<float>::max()));
    q = detail::select(finite_nonzero, q, x);
    const auto over = detail::abs(q) > maxv;
    if constexpr (Sat) {
      q = detail::select(over, detail::copysign(maxv, q), q);
    } else if (ov == fq_overflow::infinity) {
      q = detail::select(over, detail::copysign(V(std::numeric_limits<float>::infinity()), q), q);
    } else {
      q = detail::select(over, V(std::numeric_limits<float>::quiet_NaN()), q);
    }
    if constexpr (St == stage::code) return q;
    return q * scale;
  }
};

/// a + b of every int32 value, wrapping as SIMD lanes do: the scalar sum in
/// unsigned arithmetic, so that a NaN's exponent field plus a constant (a
/// lane whose result the fast kernel ignores) is no signed-overflow question
/// for a sanitizer.
LOWBIT_ALWAYS_INLINE std::int32_t wrapping_add(std::int32_t a, std::int32_t b) noexcept {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}
template <class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<std::int32_t, A> wrapping_add(const xsimd::batch<std::int32_t, A>& a,
                                                                const xsimd::batch<std::int32_t, A>& b) noexcept {
  return a + b;
}

/**
 * The exact semantics on a piece whose format is constant and in range
 * (float_quant's state::run, `exact_fast_range`): 0 <= m <= 22, -126 <=
 * emin <= 0 and max < 2^k with k <= 104 + m. The same bits as
 * float_quant_exact_kernel with the format's constants held as integers,
 * which GCC and clang keep in registers, in about the operations of the
 * loop a user would write by hand (bench/hand_kernels.hpp):
 *
 * 1. x = X / scale; a = min(|x|, 2^k). Every |x| >= 2^k rounds to a value
 *    >= 2^k > max in every mode (2^k is on the grid: k > emin), so it
 *    overflows like 2^k itself does, infinities included; a NaN passes.
 *    1'. (`clamped`) When the overflow saturates and max is on the grid
 *    (max = 2^u' n with u' its own step), a = min(|x|, max) instead: every
 *    mode rounds monotonically and leaves max in place, so a value above
 *    max gives max, as the saturation would, and no value at or below max
 *    rounds beyond it; step 4 has nothing left to do and is skipped. The
 *    standard formats (E4M3FN 448, E5M2 57344, E2M1 6, ...) are all so.
 * 2. The biased exponent of the step 2^u, u = max(e - m, emin): the exponent
 *    field of a minus m, raised to emin + 127. A subnormal or zero a has
 *    field 0, whose u is emin as its true exponent's is (emin >= -126 >
 *    e_true - m).
 * 3. ROUND: with c = 2^(u+23), a + c lies in [2^(u+23), 2^(u+24)], whose
 *    spacing is 2^u (a < 2^(e+1) <= 2^(u+m+1) <= c for m <= 22), so the sum
 *    rounds a to a multiple of 2^u, ties to even, and (a + c) - c is exact.
 *    DOWN, UP, HALF_UP and HALF_DOWN, symmetric in the sign, also round a:
 *    t = a * 2^-u is exact (2^-u is a normal float for u in [-126, 126];
 *    u <= 0 scales up, u > 0 only when u = e - m, and then t is in [2^m,
 *    2^(m+1))), rounded to an integral value (trunc, ceil, trunc(t +
 *    pred(1/2)), ceil(t - 1/2)), times 2^u (exact: q <= 2^k). The sign of
 *    x comes last (after the overflow, which only needs |q|), or'ed in
 *    (HALF_DOWN: copied, its ceil gives -0 below 1/2). CEIL and
 *    FLOOR round x * 2^-u, signed, in the same way.
 *    3'. On AVX-512 batches (detail::add_directed, fma_directed) the six
 *    other deterministic modes use the magic number too, the sum rounded
 *    in a direction of its own, so each takes ROUND's operations or one
 *    more: DOWN, UP: (a +rz c) - c, (a +ru c) - c; HALF_UP: fma_rd(c
 *    24929 2^-24, 673, a) - c, i.e. (a + c + h/2) rounded down, h = 2^u;
 *    HALF_DOWN: fma_rd(c - h/2, 1 + 2^-23, a) - c, i.e. (a + c + h/2 - h
 *    2^-24) rounded down; CEIL, FLOOR: (a +ru c') - c', (a +rd c') - c'
 *    with a signed and c' = 1.5 c, m <= 21 (exact_fast_kernel_takes).
 *    Scalars and other ISAs keep the form above; the tests compare the
 *    two.
 * 4. The overflow on |q| > max: saturation to +-max, +-inf, or NaN.
 * 5. Y = q * scale.
 * A NaN x gives x's NaN in every step (abs and copysign keep its payload,
 * arithmetic returns its NaN operand), as float_quant_exact_kernel does.
 * tests/test_float_quant.cpp compares the two on every format and mode.
 */
template <rounding_mode M, stage St = stage::fake>
struct float_quant_exact_fast_kernel : scale_divider {
  fq_overflow ov = fq_overflow::saturate;  ///< a branch per batch, always predicted
  std::int32_t m_int = 0;                  ///< m, 0 .. 22
  std::int32_t ebmin = 1;                  ///< emin + 127, 1 .. 127
  float bound = 1.0f;                      ///< 2^k, the smallest power of two above max; or max (`clamped`)
  rounding_mode mode = M;                  ///< for M = run_time_mode (the scalar loop)
  /// The seed and random bits of the stochastic mode (detail/stochastic.hpp).
  stochastic_source rnd{};
  /// Saturation with a max on the grid: `bound` is max itself, so that
  /// |q| <= max holds without the overflow step (step 1').
  bool clamped = false;
  static constexpr bool index_aware = needs_index<M>;
  /// The mode is stochastic: the row loop draws whole groups (stochastic_kernel).
  static constexpr bool stochastic = M == rounding_mode::stochastic;

  /// The scalar loop's kernel, shared by every mode.
  float_quant_exact_fast_kernel<run_time_mode, St> scalar_kernel() const noexcept {
    return {{*this}, ov, m_int, ebmin, bound, M, rnd, clamped};
  }

  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V X, V scale, V mant, V emin, V maxv) const noexcept {
    return eval(V(0.0f), X, scale, mant, emin, maxv);
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(element_index idx, V X, V scale, V mant, V emin, V maxv) const noexcept {
    return eval(rnd.template threshold<M, V>(mode, idx), X, scale, mant, emin, maxv);
  }
  /// `thr`: the stochastic mode's thresholds (unused by the other modes).
  template <class V>
  LOWBIT_ALWAYS_INLINE V eval(V thr, V X, V scale, V, V, V maxv) const noexcept {
    using I = int_lanes_t<V>;
    if constexpr (St == stage::dequant) return X * scale;
    const V x = this->divide(X, scale);
    // The modes symmetric in the sign round a = min(|x|, bound) and take x's
    // sign at the end; the others (CEIL, FLOOR, ODD, DPU and the scalar
    // loop's run-time mode) round x bounded to [-bound, bound], which is a
    // with x's sign (-0 stays -0, a NaN keeps its bits) in one operation
    // fewer than or_sign(a, x).
    constexpr bool symmetric = M == rounding_mode::half_even || M == rounding_mode::down ||
                               M == rounding_mode::up || M == rounding_mode::half_up ||
                               M == rounding_mode::half_down || M == rounding_mode::stochastic;
    const V a = symmetric ? detail::bound_above(V(bound), detail::abs(x))
                          : detail::bound_above(V(bound), detail::bound_below(V(-bound), x));
    // a's exponent field, in place (its sign bit cleared by the mask): the
    // exponents below are formed as fields (<< 23) with no shift in the loop.
    const I fa = float_bits(a) & I(0x7f800000);
    // The magic-number modes: ROUND everywhere; with additions rounded in
    // a direction of their own (AVX-512 batches), every deterministic mode.
    constexpr bool directed = has_directed_add<V> && M != rounding_mode::stochastic &&
                              M != rounding_mode::odd && M != rounding_mode::dpu &&
                              M != run_time_mode;
    // HALF_DOWN by the magic number and a fused multiply-add wherever it is
    // one instruction (below); HALF_UP so where there is no directed one.
    constexpr bool nudged =
        has_fused_fma<V> && (M == rounding_mode::half_down || (M == rounding_mode::half_up && !directed));
    constexpr bool magic = M == rounding_mode::half_even || directed || nudged;
    // c = 2^(u + 23), u = max(e - m, emin): the field max(fa + (23 - m),
    // ebmin + 23) << 23 with the constants folded into two. a + c lies in
    // [2^(u+23), 2^(u+24)), whose spacing is 2^u (step 3). Finite lanes stay
    // below field 255 (k <= 104 + m, exact_fast_range); a NaN lane's sum
    // wraps, and its result is x's NaN whatever c is.
    // `plus` added to both fields: 0x400000 gives 1.5 c (CEIL, FLOOR).
    const auto magic_c = [&](std::int32_t plus = 0) {
      return bits_float(imax(wrapping_add(fa, I(((23 - m_int) << 23) + plus)), I(((ebmin + 23) << 23) + plus)));
    };
    V q;
    if constexpr (magic && !symmetric) {
      // CEIL, FLOOR: c' = 1.5 c (magic_c's fields plus 2^22, folded into
      // its constants). a is signed and |a| < 2^(u+m+1) <= c / 2 for
      // m <= 21 (exact_fast_kernel_takes: m = 22 takes the general
      // kernel), so a + c' lies in (c, 2c), spacing 2^u: the sum rounded up
      // or down is a's ceil or floor on the grid plus c', and the
      // difference is exact (+0 for a zero result: x's sign is or'ed in,
      // as -0 and the negative values need).
      const V c = magic_c(0x400000);
      constexpr direction d = M == rounding_mode::ceil ? direction::up : direction::down;
      q = or_sign(V(add_directed<d>(a, c) - c), x);
    } else if constexpr (symmetric) {
      V qa;
      if constexpr (M == rounding_mode::half_even) {
        const V c = magic_c();
        qa = (a + c) - c;
      } else if constexpr (nudged) {
        // Step 3 rounding to nearest on a nudged toward zero by less than
        // its ulp: a (1 - 2^-24) = a - v, v = a 2^-24 in [ulp(a) / 2,
        // ulp(a)) (0 for a = 0), summed with c exactly and rounded once.
        // The ties of the grid, odd multiples of h/2 = 2^(u-1) >= ulp(a)
        // (m <= 22, u >= e - m), are multiples of ulp(a): a tie a goes just
        // below itself and rounds down (toward zero: HALF_DOWN), and any
        // other a stays on its side of every tie (a float next to a tie is
        // an ulp or more away). HALF_UP rounds the next float above a,
        // a + ulp(a), so: a + ulp - v' lies strictly between a and the next
        // float, above a tie a and below any other tie; at a = 2^(e+1) - ulp
        // with m = 22 the sum is the tie a itself, which goes to the even
        // 2^(e+1) = HALF_UP(a). The next float is a's bits plus one, but
        // not for a NaN (its payload kept: nextup_or_nan). The same
        // operations as ROUND (HALF_DOWN), or two more (HALF_UP), where the
        // scaling form below takes three to four more.
        const V c = magic_c();
        V a1 = a;
        if constexpr (M == rounding_mode::half_up) a1 = nextup_or_nan(a);
        qa = fused_multiply_add(a1, V(1.0f - 0x1p-24f), c) - c;
      } else if constexpr (directed) {
        // Step 3 with the sum rounded toward zero (DOWN) or up (UP). HALF_UP
        // adds c + h/2, not a float, as an exact product inside one fused
        // multiply-add rounded down: c + h/2 = (c 24929 2^-24) 673 (2^24 +
        // 1 = 97 257 673), each factor a float and the first an exact
        // product of c: floor((a + h/2) / h) on the grid. The exact sum lies
        // in [c, 2c] (a <= c - h/2), where the floats are the multiples of
        // h, so the result is c plus the rounded multiple; - c is exact.
        // One operation more than ROUND, where the two additions of the
        // form before (a +rd h/2, then +rd c) took two; the nudged form
        // above would take two (nextup_or_nan's compare and subtraction).
        // HALF_DOWN takes the nudged form.
        const V c = magic_c();
        if constexpr (M == rounding_mode::down)
          qa = add_directed<direction::toward_zero>(a, c) - c;
        else if constexpr (M == rounding_mode::up)
          qa = add_directed<direction::up>(a, c) - c;
        else {
          static_assert(M == rounding_mode::half_up);  // HALF_DOWN is nudged
          qa = fma_directed<direction::down>(V(c * V(24929 * 0x1p-24f)), V(673.0f), a) - c;
        }
      } else {
        const I eb = imax(I(fa - I(m_int << 23)), I(ebmin << 23));  // 2^u's field
        const V ta = a * bits_float(I(I(254 << 23) - eb));
        V ra;
        if constexpr (M == rounding_mode::down) {
          ra = detail::trunc(ta);
        } else if constexpr (M == rounding_mode::up) {
          ra = detail::ceil(ta);
        } else if constexpr (M == rounding_mode::half_up) {
          // round_integral's form (exact for every ta >= 0).
          ra = detail::trunc(V(ta + V(0.5f - std::numeric_limits<float>::epsilon() / 4)));
        } else if constexpr (M == rounding_mode::stochastic) {
          ra = round_stochastic(ta, thr);  // ta >= 0 exact: away from zero on the magnitude
        } else {
          // ta < 2^23, so ta - 1/2 is exact for ta >= 1/4 (a multiple of
          // ta's spacing, at most 1/2), and for ta < 1/4 lies in (-1/2,
          // -1/4], where ceil gives -0 either way: nearest, ties toward
          // zero.
          ra = detail::ceil(V(ta - V(0.5f)));
        }
        qa = ra * bits_float(eb);
      }
      // qa's sign bit is clear (a >= +0 or a NaN of positive sign, and
      // every step keeps it) except for HALF_DOWN's ceil(ta - 1/2) = -0:
      // x's sign bit is or'ed in.
      const auto signed_q = [&x](V v) {
        if constexpr (M == rounding_mode::half_down && !magic) return detail::copysign(v, x);
        else return detail::or_sign(v, x);
      };
      if (clamped) [[likely]] {
        q = signed_q(qa);
      } else if (ov == fq_overflow::saturate) {
        q = signed_q(detail::bound_above(maxv, qa));
      } else if (ov == fq_overflow::infinity) {
        q = signed_q(detail::select(qa > maxv, V(std::numeric_limits<float>::infinity()), qa));
      } else {
        q = detail::select(qa > maxv, V(std::numeric_limits<float>::quiet_NaN()), detail::copysign(qa, x));
      }
    } else {
      // CEIL, FLOOR and the run-time mode of the scalar loop: with x's sign
      // (a has it).
      const I eb = imax(I(fa - I(m_int << 23)), I(ebmin << 23));  // 2^u's field
      const V t = a * bits_float(I(I(254 << 23) - eb));
      q = detail::round_step<semantics::exact, M>(t, mode, thr) * bits_float(eb);
    }
    if constexpr (!symmetric) {
      if (clamped) [[likely]] {
        // |q| <= max already.
      } else if (ov == fq_overflow::saturate) {
        q = detail::bound_above(maxv, detail::bound_below(detail::negate(maxv), q));
      } else if (ov == fq_overflow::infinity) {
        const V inf(std::numeric_limits<float>::infinity());
        q = detail::select(q > maxv, inf, detail::select(q < detail::negate(maxv), detail::negate(inf), q));
      } else {
        q = detail::select(detail::abs(q) > maxv, V(std::numeric_limits<float>::quiet_NaN()), q);
      }
    }
    if constexpr (St == stage::code) return q;
    return q * scale;
  }
};

/// Whether float_quant_exact_fast_kernel<M> takes a format of m mantissa
/// bits in its range (exact_fast_range): every m up to 22, but CEIL and
/// FLOOR up to 21 (their magic number 1.5 2^(u+23) needs |x| below half of
/// 2^(u+23); at m = 22 the general kernel runs them).
constexpr bool exact_fast_kernel_takes(rounding_mode mode, std::int32_t m_int) noexcept {
  return m_int <= 21 || (mode != rounding_mode::ceil && mode != rounding_mode::floor);
}

/// The constants of float_quant_exact_fast_kernel for a piece of format
/// (m, emin, max), or false when the format leaves its range; `on_grid`:
/// max is a value of the format (a multiple of its own step 2^max(e - m,
/// emin), e its exponent), for the kernel's `clamped`.
inline bool exact_fast_range(float m, float emin, float max, std::int32_t& m_int, std::int32_t& ebmin,
                             float& bound, bool& on_grid) noexcept {
  if (!(m >= 0.0f && m <= 22.0f && emin >= -126.0f && emin <= 0.0f && max > 0.0f &&
        max <= std::numeric_limits<float>::max()))
    return false;
  // k = floor(log2 max) + 1, from the bits (max >= 2^emin is normal).
  const std::int32_t k = ((std::bit_cast<std::int32_t>(max) >> 23) & 0xff) - 127 + 1;
  m_int = static_cast<std::int32_t>(m);
  ebmin = static_cast<std::int32_t>(emin) + 127;  // 1 .. 127: 2^emin = bits(ebmin << 23)
  if (k > 104 + m_int || k > 127 || max < std::bit_cast<float>(ebmin << 23)) return false;
  bound = std::bit_cast<float>((k + 127) << 23);  // k > emin >= -126: a normal power of two
  // max = 1.f 2^(k-1) (normal, >= 2^emin) is a multiple of its step 2^u,
  // u = max(k - 1 - m, emin) <= k - 1, when the fraction f's bits of weight
  // below 2^u are zero: its low u - (k - 1) + 23 bits, 1 to 23 of them.
  const std::int32_t low = std::max(k - 1 - m_int, ebmin - 127) - (k - 1) + 23;
  on_grid = (std::bit_cast<std::uint32_t>(max) & ((std::uint32_t(1) << low) - 1)) == 0;
  return true;
}

}  // namespace detail

/**
 * QONNX FloatQuant: fake-quantizes a float tensor to a signed minifloat grid
 * with `exponent_bitwidth` E, `mantissa_bitwidth` m and `exponent_bias`, and
 * back.
 *
 * For each element, with every parameter broadcast against x (numpy rules):
 * 1. `x = X / scale`,
 * 2. `e = floor(log2|x|) - m`, raised to `1 - bias - m` (subnormals),
 * 3. `q = 2^e * round(x / 2^e)` with `rounding`,
 * 4. `max = min((2 - 2^-m) * 2^(2^E - 1 - bias), max_val)`; values beyond
 *    +-max saturate (saturation), else become +-inf (has_inf) or NaN (has_nan),
 * 5. `Y = q * scale`.
 * The reference semantics reproduce QONNX's float32 evaluation bit for bit
 * (float32 log2, FLT_MIN added before it, +-inf inputs giving NaN); the exact
 * semantics compute the definition exactly. docs/semantics.md lists both.
 *
 * x, y and tensor parameters are float tensors (lowbit::tensor_arg); scalar
 * parameters are converted. Every parameter may be a tensor, including
 * per-channel exponent and mantissa widths, biases and max_val. y must have
 * exactly the broadcast shape (output_shape()); y may be x itself.
 *
 * Parameters accepted in both semantics: exponent_bitwidth an integer >= 1
 * (reference: 1..255), mantissa_bitwidth an integer (exact: 0..23,
 * reference: 0..255), exponent_bias an integer (reference: |bias| <= 2^30),
 * and not saturation = 0 with neither has_inf nor has_nan (QONNX raises).
 * The exact semantics also reject a scale that is not finite and > 0,
 * max_val NaN or <= 0, a smallest step 2^(1 - bias - m) below 2^-149 and a
 * max that is not a finite float.
 *
 * @throws lowbit::error for all of the above, shapes that do not broadcast,
 *         a y of the wrong shape and an invalid rounding mode. Nothing is
 *         written then.
 *
 * **Example** (OCP FP8 E4M3FN):
 * ```
 * std::vector<float> x{0.3f, 464.0f, 470.0f, -1000.0f}, y(4);
 * lowbit::float_quant<> q{.rounding = lowbit::rounding_mode::half_even};
 * q(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y);  // y = {0.3125, 448, 448, -448}
 * ```
 */
template <semantics S = semantics::reference>
struct float_quant {
  rounding_mode rounding = rounding_mode::half_even;  ///< QONNX attribute `rounding_mode`.
  bool has_inf = false;        ///< QONNX attribute `has_inf` (spec: `has_infinity`).
  bool has_nan = false;        ///< QONNX attribute `has_nan`.
  bool has_subnormal = true;   ///< QONNX attribute `has_subnormal`; informational, no effect.
  bool saturation = true;      ///< QONNX attribute `saturation`.
  /// Threads for large calls (opt-in; bit-identical results): lowbit::execution.
  execution exec{};
  /// rounding_mode::stochastic only (a lowbit extension): the seed of the
  /// draws (any value); an element's draw depends only on the seed,
  /// random_bits and its flat index in y.
  std::uint64_t seed = 0;
  /// rounding_mode::stochastic only: bits per draw, 1 to 23.
  int random_bits = 16;
  /// rounding_mode::stochastic only: the flat index of y's element 0 in a
  /// larger tensor quantized in several calls (row-major pieces), so that
  /// every element gets the draw it gets in one call.
  std::uint64_t index_offset = 0;

  static constexpr const char* name = "lowbit::float_quant";
  /// The operator protocol (detail/protocol.hpp); float32 only.
  using inputs = detail::names<"scale", "exponent_bitwidth", "mantissa_bitwidth", "exponent_bias", "max_val">;
  using operands = detail::names<"scale", "mantissa", "emin", "max">;
  static constexpr bool accepts_double = false;
  /// The attributes by QONNX name (`has_inf` also by the spec's
  /// `has_infinity`), for lowbit::set_attribute.
  static constexpr auto attributes() {
    return std::tuple{detail::attribute{"rounding_mode", &float_quant::rounding},
                      detail::attribute{"has_inf", &float_quant::has_inf, "has_infinity"},
                      detail::attribute{"has_nan", &float_quant::has_nan},
                      detail::attribute{"has_subnormal", &float_quant::has_subnormal},
                      detail::attribute{"saturation", &float_quant::saturation},
                      detail::attribute{"seed", &float_quant::seed},
                      detail::attribute{"random_bits", &float_quant::random_bits},
                      detail::attribute{"index_offset", &float_quant::index_offset}};
  }

  /// The numpy broadcast of all six arguments' shapes.
  template <tensor_arg X, tensor_arg Scale, tensor_arg E, tensor_arg Mb, tensor_arg Bias, tensor_arg MaxV>
  shape output_shape(const X& x, const Scale& scale, const E& exponent_bitwidth,
                     const Mb& mantissa_bitwidth, const Bias& exponent_bias, const MaxV& max_val) const {
    return detail::call_output_shape(*this, x, scale, exponent_bitwidth, mantissa_bitwidth, exponent_bias, max_val);
  }

  /// Quantizes x into y. See the class documentation.
  template <tensor_arg X, tensor_arg Scale, tensor_arg E, tensor_arg Mb, tensor_arg Bias, tensor_arg MaxV,
            tensor_arg Y>
  void operator()(const X& x, const Scale& scale, const E& exponent_bitwidth, const Mb& mantissa_bitwidth,
                  const Bias& exponent_bias, const MaxV& max_val, Y&& y) const {
    detail::call(*this, std::forward<Y>(y), x, scale, exponent_bitwidth, mantissa_bitwidth, exponent_bias, max_val);
  }

 private:
  // ---- the protocol's hooks (detail/driver.hpp) ----
  friend struct detail::protocol_access;
  template <class T>
  using args = detail::call_args<float_quant, T>;

  static constexpr bool exact = S == semantics::exact;

  static std::string prefix() {
    return std::string(name) + (exact ? " (exact semantics): " : ": ");
  }

  /// The values an input accepts: lo < v (or lo <= v) and v <= hi, and an
  /// integer when `integer` (NaN never). One type for every input's rule,
  /// so that the check below is one instance.
  struct accepted {
    float lo = 0, hi = 0;
    bool lo_open = false, integer = false;
    /// For a value (a bool) or a batch (its mask: detail::require_elements).
    /// An integer is finite and its own trunc (NaN fails every comparison).
    template <class V>
    auto operator()(V v) const noexcept {
      auto r = detail::mask_and(lo_open ? v > V(lo) : v >= V(lo), v <= V(hi));
      if (integer)
        r = detail::mask_and(r, detail::mask_and(detail::abs(v) <= V(std::numeric_limits<float>::max()),
                                                 v == detail::trunc(v)));
      return r;
    }
  };

  template <class T>
  static void check_each(const detail::nd<const T>& t, const char* what, const char* expected, accepted ok) {
    detail::require_elements(t, ok, [&](T v, std::size_t i) { detail::throw_invalid(prefix(), what, t, i, v, expected); });
  }

  void check_attributes() const {
    detail::check_rounding_mode(rounding, name);
    detail::check_random_bits<float>(random_bits, rounding, name);
    if (!saturation && !has_inf && !has_nan)
      throw error(prefix() +
                  "saturation = 0 needs has_inf = 1 or has_nan = 1 (an overflow must become inf or "
                  "NaN); expected saturation = 1 or one of them set");
  }

  template <class T>
  void check_values(const args<T>& a) const {
    const detail::nd<const T>& es = a.template get<"exponent_bitwidth">();
    const detail::nd<const T>& ms = a.template get<"mantissa_bitwidth">();
    const detail::nd<const T>& bs = a.template get<"exponent_bias">();
    constexpr float inf = std::numeric_limits<float>::infinity();
    if constexpr (exact) {
      check_each(es, "exponent_bitwidth", "an integer >= 1", {.lo = 1, .hi = inf, .integer = true});
      check_each(ms, "mantissa_bitwidth", "an integer from 0 to 23", {.lo = 0, .hi = 23, .integer = true});
      check_each(bs, "exponent_bias", "an integer", {.lo = -inf, .hi = inf, .integer = true});
      check_each(a.template get<"max_val">(), "max_val", "a value > 0 (+inf for no cap)", {.lo = 0, .hi = inf, .lo_open = true});
      check_each(a.template get<"scale">(), "scale", "a finite value > 0",
                 {.lo = 0, .hi = std::numeric_limits<float>::max(), .lo_open = true});
    } else {
      check_each(es, "exponent_bitwidth", "an integer from 1 to 255", {.lo = 1, .hi = 255, .integer = true});
      check_each(ms, "mantissa_bitwidth", "an integer from 0 to 255", {.lo = 0, .hi = 255, .integer = true});
      check_each(bs, "exponent_bias", "an integer from -2^30 to 2^30", {.lo = -1073741824.0f, .hi = 1073741824.0f, .integer = true});
    }
  }

  detail::fq_overflow overflow() const noexcept {
    return saturation ? detail::fq_overflow::saturate
           : has_inf  ? detail::fq_overflow::infinity
                      : detail::fq_overflow::nan;
  }

  /// The constants of the last single format a call on this thread computed
  /// (only one that passed every check): key = the bits of
  /// exponent_bitwidth, mantissa_bitwidth, exponent_bias and max_val.
  struct format_memo {
    std::array<std::uint32_t, 4> key{};
    float mant{}, emin{}, max{};
    bool valid = false;

    static std::array<std::uint32_t, 4> key_of(float e, float m, float b, float mv) noexcept {
      return {std::bit_cast<std::uint32_t>(e), std::bit_cast<std::uint32_t>(m), std::bit_cast<std::uint32_t>(b),
              std::bit_cast<std::uint32_t>(mv)};
    }
    /// Whether it holds the format `k`. Compared word by word: the array
    /// compared whole was built in a vector register, stored and reloaded
    /// (a store-forwarding stall each call).
    bool holds(const std::array<std::uint32_t, 4>& k) const noexcept {
      return valid && key[0] == k[0] && key[1] == k[1] && key[2] == k[2] && key[3] == k[3];
    }
  };
  static format_memo& last_format() noexcept {
    static thread_local format_memo memo;
    return memo;
  }

  /// The scalar route (detail/driver.hpp, scalar_route): every input a
  /// scalar, and a format whose constants this thread has (last_format): a
  /// format seen before, so checked before. Any other call, and the
  /// stochastic mode, takes the general route (which computes and keeps
  /// the format).
  template <class T>
  bool run_scalars(const T* x, T* y, std::size_t n, const std::array<T, inputs::size>& p, bool simd) const {
    using I = inputs;
    using O = operands;
    const T s = p[I::index<"scale">];
    if (rounding == rounding_mode::stochastic) return false;
    if constexpr (exact)
      if (!detail::positive_scale(s)) return false;
    std::array<T, O::size> ops{};
    if (!known_format(p[I::index<"exponent_bitwidth">], p[I::index<"mantissa_bitwidth">], p[I::index<"exponent_bias">],
                      p[I::index<"max_val">], ops))
      return false;
    ops[O::index<"scale">] = s;
    // A loop of its own for the default mode, ROUND (run_splat).
    const auto run = [&](const auto& k) {
      using K = std::remove_cvref_t<decltype(k)>;
      constexpr bool direct = std::is_same_v<K, detail::float_quant_ref_kernel<rounding_mode::half_even, detail::stage::fake>> ||
                              std::is_same_v<K, detail::float_quant_ref_kernel<rounding_mode::half_even, detail::stage::fake, true>> ||
                              std::is_same_v<K, detail::float_quant_exact_fast_kernel<rounding_mode::half_even, detail::stage::fake>>;
      detail::run_splat<direct>(k, x, y, n, ops, simd);
    };
    run_kernel<detail::stage::fake>(rounding, overflow(), exact ? nullptr : detail::log2_roundup_thresholds(),
                                    detail::stochastic_source{seed, random_bits, index_offset}, ops,
                                    std::array<bool, O::size>{}, simd, run,
                                    [&](const auto& k) { detail::run_splat_compact(k, x, y, n, ops, simd); });
    return true;
  }

  /// The row route (detail/driver.hpp, row_route): a scale per row or one,
  /// every format parameter one value of a format this thread has (as for
  /// run_scalars); each row's scale checked as check_values checks it; the
  /// kernel the state's run_with would give the row-mode piece. Any other
  /// call, and the stochastic mode, takes the general route.
  template <class T>
  bool run_rows(const T* x, T* y, std::size_t rows, std::size_t cols, std::size_t blocks,
                const std::array<const T*, inputs::size>& p,
                const std::array<bool, inputs::size>& per_row, bool simd) const {
    using I = inputs;
    using O = operands;
    constexpr std::size_t scale_i = I::index<"scale">;
    if (rounding == rounding_mode::stochastic) return false;
    for (std::size_t i = 0; i < I::size; ++i)
      if (per_row[i] && i != scale_i) return false;
    const T* s = p[scale_i];
    if constexpr (exact)
      if (!detail::all_elements(s, per_row[scale_i] ? rows : 1, [](auto v) { return detail::positive_scale(v); }))
        return false;
    detail::row_inputs<T, O::size> ro;
    if (!known_format(*p[I::index<"exponent_bitwidth">], *p[I::index<"mantissa_bitwidth">],
                      *p[I::index<"exponent_bias">], *p[I::index<"max_val">], ro.v))
      return false;
    ro.operand(O::index<"scale">, s, per_row[scale_i]);
    run_on_piece<detail::stage::fake>(rounding, overflow(), exact ? nullptr : detail::log2_roundup_thresholds(),
                                      detail::stochastic_source{seed, random_bits, index_offset},
                                      ro.piece_of(x, y, rows, cols, blocks), simd);
    return true;
  }

  /// The operands mantissa, emin and max of the format (e, m, bias, max_val)
  /// into `ops`, when it is the format this thread last computed (and so
  /// checked: last_format); false otherwise, `ops` untouched.
  template <class T>
  static bool known_format(T e, T m, T bias, T max_val, std::array<T, operands::size>& ops) noexcept {
    const format_memo& f = last_format();
    if (!f.holds(format_memo::key_of(e, m, bias, max_val))) return false;
    ops[operands::index<"mantissa">] = f.mant;
    ops[operands::index<"emin">] = f.emin;
    ops[operands::index<"max">] = f.max;
    return true;
  }

  /// run_kernel on the piece `pc`, with both batch loops or the loaded loop
  /// alone as run_kernel picks: what the state and the row route run.
  template <detail::stage St, class T>
  static void run_on_piece(rounding_mode mode, detail::fq_overflow ov, const std::int32_t* thr,
                           const detail::stochastic_source& rnd, const detail::piece<T, operands::size>& pc,
                           bool simd) {
    run_kernel<St>(
        mode, ov, thr, rnd, pc.s, pc.vary, simd, [&](const auto& k) { detail::run_piece(k, pc, simd); },
        [&](const auto& k) { detail::run_piece_compact(k, pc, simd); });
  }

  /**
   * The kernel for operands (scale, mantissa, emin, max) that are `s` where
   * `vary` is false (arrays over the piece where it is true), run by
   * `run(k)` (both batch loops) or `compact(k)` (the loaded loop alone).
   */
  template <detail::stage St, class T, class Run, class Compact>
  static void run_kernel(rounding_mode mode, detail::fq_overflow ov, const std::int32_t* thr,
                         const detail::stochastic_source& rnd, const std::array<T, operands::size>& s,
                         const std::array<bool, operands::size>& vary, bool simd, Run&& run, Compact&& compact) {
    using O = operands;
    constexpr std::size_t scale_k = O::index<"scale">, mant_k = O::index<"mantissa">, emin_k = O::index<"emin">;
    // Power-of-two fast path (see int_quant): a constant scale whose
    // reciprocal is exact; the scalar path keeps dividing.
    const auto div = detail::scale_divider::for_scale(s[scale_k], simd && !vary[scale_k]);
    // The reference kernel's fast path needs constant m >= 1 and emin in
    // [-126, 126] over the piece; below emin = -100 (`add_min`) the
    // per-mode kernels, which read |x|'s exponent for that of |x| +
    // FLT_MIN, decline the batches with a lane below 2^-101 (fq_ref_eval).
    // The scalar path (detail::simd_scope off) always takes the general
    // path, so that the SIMD-vs-scalar tests compare the two. Then emin +
    // 127 is in [1, 253] and m >= 1 (any m >= 255 acts as 255: be - m, be <=
    // 254, is below every ebmin either way, and 255 << 23 fits an int32).
    const bool general = !simd || vary[mant_k] || vary[emin_k] || !(s[mant_k] >= 1.0f) ||
                         !(s[emin_k] >= -126.0f && s[emin_k] <= 126.0f);
    // The exact fast kernel's constants (exact_fast_range), which the
    // reference semantics use for ROUND's magic-number kernel.
    constexpr std::size_t max_k = O::index<"max">;
    std::int32_t fm = 0, feb = 1;
    float fbound = 1.0f;
    bool on_grid = false;
    if constexpr (!exact) {
      const std::int32_t m_field = general ? 0 : static_cast<std::int32_t>(std::min(s[mant_k], 255.0f)) << 23;
      const std::int32_t ebmin_field = general ? 0 : static_cast<std::int32_t>(s[emin_k] + 127.0f) << 23;
      const bool add_min = !general && s[emin_k] < -100.0f;
      // Each kernel's fq_ref_eval is filled field by field in place: one
      // built apart and copied into the kernel was reloaded as wide vectors
      // right after its fields were stored one by one (a store-forwarding
      // stall, about 8 ns of a 256-element call on Zen 5).
      const auto with_eval = [&](auto k) {
        detail::fq_ref_eval& ev = k;
        ev.inv = div.inv;
        ev.inv_f = div.inv_f;
        ev.recip = div.recip;
        ev.thr = thr;
        ev.general = general;
        ev.m_field = m_field;
        ev.ebmin_field = ebmin_field;
        ev.add_min = add_min;
        return k;
      };
      // The stochastic mode takes each element's index, which a declining
      // kernel does not: a kernel of its own that declines nothing.
      if (mode == rounding_mode::stochastic) {
        auto k = with_eval(detail::float_quant_ref_stochastic_kernel<St>{});
        k.ov = ov;
        k.rnd = rnd;
        return run(k);
      }
      if (general) {
        auto k = with_eval(detail::float_quant_ref_any_kernel<St>{});
        k.mode = mode;
        k.ov = ov;
        k.rnd = rnd;
        return compact(k);
      }
      // ROUND rounds by the magic number when the format is in the exact
      // fast kernel's range with m <= 15 and saturates to a max on its grid
      // (fq_ref_eval::eval_magic).
      if (mode == rounding_mode::half_even && !vary[max_k] && ov == detail::fq_overflow::saturate &&
          detail::exact_fast_range(s[mant_k], s[emin_k], s[max_k], fm, feb, fbound, on_grid) && on_grid &&
          fm <= 15) {
        auto k = with_eval(detail::float_quant_ref_kernel<rounding_mode::half_even, St, true>{});
        k.magic_add = (23 - fm) << 23;
        k.magic_min = (feb + 23) << 23;
        k.magic_bound = s[max_k];
        k.ov = ov;
        return run(k);
      }
      return detail::with_rounding_mode(mode, [&](auto mc) {
        if constexpr (decltype(mc)::value != rounding_mode::stochastic) {
          auto k = with_eval(detail::float_quant_ref_kernel<decltype(mc)::value, St>{});
          k.ov = ov;
          run(k);
        }
      });
    } else {
      // The fast kernel: a constant format in its range (and the SIMD
      // path, as above); every other piece on the general kernel, one for
      // every mode.
      if (simd && !vary[mant_k] && !vary[emin_k] && !vary[max_k] &&
          detail::exact_fast_range(s[mant_k], s[emin_k], s[max_k], fm, feb, fbound, on_grid) &&
          detail::exact_fast_kernel_takes(mode, fm)) {
        // Saturation to a max on the grid: max is the input's bound (step 1').
        const bool clamped = on_grid && ov == detail::fq_overflow::saturate;
        if (clamped) fbound = s[max_k];
        return detail::with_rounding_mode(mode, [&](auto mc) {
          constexpr rounding_mode M = decltype(mc)::value;
          run(detail::float_quant_exact_fast_kernel<M, St>{div, ov, fm, feb, fbound, M, rnd, clamped});
        });
      }
      if (ov == detail::fq_overflow::saturate)
        compact(detail::float_quant_exact_kernel<detail::run_time_mode, false, St, true>{div, ov, mode, rnd});
      else
        compact(detail::float_quant_exact_kernel<detail::run_time_mode, false, St, false>{div, ov, mode, rnd});
    }
  }

  /// The kernel operands: the scale as given, and per distinct format the
  /// mantissa width, the smallest exponent and the largest value (max),
  /// computed once per format (validated there in the exact semantics).
  template <class T>
  struct state {
    static_assert(std::is_same_v<T, float>, "lowbit::float_quant works on float tensors");
    std::array<const detail::nd<const T>*, operands::size> ops{};
    rounding_mode mode;
    detail::stochastic_source rnd;
    detail::fq_overflow ov;
    const std::int32_t* thr;
    detail::derived_storage<T, 3> store;
    detail::nd<const T> mant_d, emin_d, max_d;

    state(const float_quant& op, const args<T>& a, const shape&)
        : mode(op.rounding),
          rnd{op.seed, op.random_bits, op.index_offset},
          ov(op.overflow()),
          thr(exact ? nullptr : detail::log2_roundup_thresholds()) {
      const detail::nd<const T>& es = a.template get<"exponent_bitwidth">();
      const detail::nd<const T>& ms = a.template get<"mantissa_bitwidth">();
      const detail::nd<const T>& bs = a.template get<"exponent_bias">();
      const detail::nd<const T>& vs = a.template get<"max_val">();
      // ---- per-format constants over the broadcast shape of the format parameters ----
      // (Four scalars, the usual call, need no broadcast.)
      const shape fs = es.rank == 0 && ms.rank == 0 && bs.rank == 0 && vs.rank == 0
                           ? shape{}
                           : broadcast_shape({es.get_shape(), ms.get_shape(), bs.get_shape(), vs.get_shape()},
                                             {"exponent_bitwidth", "mantissa_bitwidth", "exponent_bias", "max_val"},
                                             name);
      const std::size_t R = fs.rank();
      // The distinct formats: a dimension along which no format parameter
      // moves (extent 1, or a stride-0 view) is computed at index 0 only, and
      // the derived arrays have stride 0 there.
      std::array<std::size_t, max_rank> fc{};
      for (std::size_t d = 0; d < R; ++d) {
        bool moving = false;
        for (const detail::nd_geom* g : {&es, &ms, &bs, &vs}) {
          const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(d) - static_cast<std::ptrdiff_t>(R - g->rank);
          if (j >= 0 && g->ext[static_cast<std::size_t>(j)] > 1 && g->str[static_cast<std::size_t>(j)] != 0)
            moving = true;
        }
        fc[d] = moving || fs[d] == 0 ? fs[d] : 1;
      }
      const std::size_t nf = shape(detail::unchecked_t{}, fc.data(), R).count();
      store.allocate(std::max<std::size_t>(nf, 1));
      T* mant_p = store.arr[0];
      T* emin_p = store.arr[1];
      T* max_p = store.arr[2];
      // One format (the usual case): its constants are a pure function of the
      // four parameters, so the last one computed on this thread is reused
      // (the long double arithmetic below is a visible part of a small call).
      // Only formats that passed every check are kept.
      format_memo& memo = last_format();
      std::array<std::uint32_t, 4> key{};
      if (nf == 1) key = format_memo::key_of(es.data[0], ms.data[0], bs.data[0], vs.data[0]);
      if (nf == 1 && memo.holds(key)) {
        mant_p[0] = memo.mant;
        emin_p[0] = memo.emin;
        max_p[0] = memo.max;
      } else {
        // Each operand's own row-major geometry (operands 4..7): its flat
        // index, for messages.
        std::array<detail::nd_geom, 4> own;
        const std::array<const detail::nd_geom*, 4> fp{&es, &ms, &bs, &vs};
        for (std::size_t k = 0; k < 4; ++k) detail::set_row_major(own[k], fp[k]->rank, fp[k]->ext.data());
        const shape fcs(detail::unchecked_t{}, fc.data(), R);
        detail::for_each_position<8>(fcs, {fp[0], fp[1], fp[2], fp[3], &own[0], &own[1], &own[2], &own[3]},
                                     [&](std::size_t flat, const std::array<std::ptrdiff_t, 8>& off) {
          const T E = es.data[off[0]];
          const T m = ms.data[off[1]];
          const T b = bs.data[off[2]];
          const T mv = vs.data[off[3]];
          auto where = [&] {
            return detail::element_name("exponent_bitwidth", es, static_cast<std::size_t>(off[4])) + " = " +
                   detail::format_value(E) + ", " +
                   detail::element_name("mantissa_bitwidth", ms, static_cast<std::size_t>(off[5])) + " = " +
                   detail::format_value(m) + ", " +
                   detail::element_name("exponent_bias", bs, static_cast<std::size_t>(off[6])) + " = " +
                   detail::format_value(b) + ", " +
                   detail::element_name("max_val", vs, static_cast<std::size_t>(off[7])) + " = " +
                   detail::format_value(mv);
          };
          // Exponent of the top binade, 2^E - 1 - bias (exact for the range that matters).
          const long double top = (E >= 400 ? std::ldexp(1.0L, 400) : std::ldexp(1.0L, static_cast<int>(E))) -
                                  1.0L - static_cast<long double>(b);
          const int mi = static_cast<int>(m);
          const long double emin_l = 1.0L - static_cast<long double>(b) - mi;
          if constexpr (exact) {
            if (emin_l < -149.0L)
              throw error(prefix() + "for " + where() + ": the smallest step 2^(1 - bias - m) = 2^" +
                          detail::format_value(static_cast<double>(emin_l)) +  // a huge bias: no integer cast
                          " is below 2^-149; expected bias + m <= 150");
            // max = min(fmt, max_val) must be a finite binary32 value.
            bool fmt_binary32 = top <= 127.0L && top - mi >= -149.0L;
            bool fmt_above = top > 127.0L;  // fmt > FLT_MAX >= any finite max_val
            bool ok;
            float mx;
            if (std::isinf(mv)) {
              ok = fmt_binary32;
              mx = ok ? static_cast<float>(detail::minifloat_largest<long double>(mi, static_cast<long long>(top))) : 0.0f;
            } else if (fmt_above) {
              ok = true;
              mx = mv;
            } else {
              const long double fmt =
                  detail::minifloat_largest<long double>(mi, static_cast<long long>(std::max(top, -1000.0L)));
              if (static_cast<long double>(mv) <= fmt) {
                ok = true;
                mx = mv;
              } else {
                ok = fmt_binary32;
                mx = static_cast<float>(fmt);
              }
            }
            if (!ok)
              throw error(prefix() + "for " + where() +
                          ": max = min((2 - 2^-m) * 2^(2^E - 1 - bias), max_val) is not a finite float; "
                          "expected a format whose largest value is a finite float (or a finite max_val)");
            max_p[flat] = mx;
          } else {
            const long double t = std::clamp(top, -2000.0L, 2000.0L);
            const double fmt = static_cast<double>(detail::minifloat_largest<long double>(mi, static_cast<long long>(t)));
            const double mxd = std::isnan(mv) ? static_cast<double>(mv) : std::min(fmt, static_cast<double>(mv));
            max_p[flat] = static_cast<float>(mxd);
          }
          mant_p[flat] = m;
          emin_p[flat] = static_cast<float>(std::clamp(emin_l, -1000.0L, exact ? 300.0L : 1000.0L));
        });
        if (nf == 1) memo = {key, mant_p[0], emin_p[0], max_p[0], true};
      }
      for (detail::nd_geom* g : {&mant_d, &emin_d, &max_d}) {
        detail::set_row_major(*g, R, fc.data());
        for (std::size_t d = 0; d < R; ++d) {
          g->ext[d] = fs[d];
          if (fc[d] != fs[d]) g->str[d] = 0;
        }
      }
      mant_d.data = mant_p;
      emin_d.data = emin_p;
      max_d.data = max_p;

      ops[operands::index<"scale">] = &a.template get<"scale">();
      ops[operands::index<"mantissa">] = &mant_d;
      ops[operands::index<"emin">] = &emin_d;
      ops[operands::index<"max">] = &max_d;
    }

    template <detail::stage St>
    void run(const detail::piece<T, operands::size>& pc, bool simd) const {
      // The stochastic mode's group cache, on this frame (one per piece and thread).
      detail::with_group_cache(rnd, mode, [&](const detail::stochastic_source& r) { run_with<St>(pc, simd, r); });
    }

    /// run() with the random source `rnd` (the state's, with a group cache).
    template <detail::stage St>
    void run_with(const detail::piece<T, operands::size>& pc, bool simd, const detail::stochastic_source& rnd) const {
      run_on_piece<St>(mode, ov, thr, rnd, pc, simd);
    }
  };
};


LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_FLOAT_QUANT_HPP
