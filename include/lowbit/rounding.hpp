// SPDX-License-Identifier: Apache-2.0
/**
 * @file rounding.hpp
 * The QONNX rounding modes: the enum, its string names, and the rounding
 * functions in both semantics.
 */
#ifndef LOWBIT_ROUNDING_HPP
#define LOWBIT_ROUNDING_HPP

#include <array>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "config.hpp"
#include "detail/int_lanes.hpp"
#include "detail/quote.hpp"
#include "detail/simd.hpp"
#include "error.hpp"

LOWBIT_BEGIN_NAMESPACE

/**
 * The rounding modes of the QONNX IntQuant, Trunc and FloatQuant operators.
 *
 * The IntQuant specification's table (`y` -> result):
 *
 * | y    | half_even (ROUND) | ceil | floor | up | down | half_up | half_down |
 * |------|------|------|------|------|------|------|------|
 * |  5.5 |  6 |  6 |  5 |  6 |  5 |  6 |  5 |
 * |  2.5 |  2 |  3 |  2 |  3 |  2 |  3 |  2 |
 * |  1.6 |  2 |  2 |  1 |  2 |  1 |  2 |  2 |
 * |  1.1 |  1 |  2 |  1 |  2 |  1 |  1 |  1 |
 * |  1.0 |  1 |  1 |  1 |  1 |  1 |  1 |  1 |
 * | -1.0 | -1 | -1 | -1 | -1 | -1 | -1 | -1 |
 * | -1.1 | -1 | -1 | -2 | -2 | -1 | -1 | -1 |
 * | -1.6 | -2 | -1 | -2 | -2 | -1 | -2 | -2 |
 * | -2.5 | -2 | -2 | -3 | -3 | -2 | -3 | -2 |
 * | -5.5 | -6 | -5 | -6 | -6 | -5 | -6 | -5 |
 *
 * For readers from HLS, the ac_types names: half_even = AC_RND_CONV,
 * floor = AC_TRN, down = AC_TRN_ZERO, half_up = AC_RND_INF,
 * half_down = AC_RND_ZERO; ceil and up have no ac_types mode.
 */
enum class rounding_mode {
  half_even,  ///< "ROUND" or "HALF_EVEN": nearest, ties to even (numpy's round).
  ceil,       ///< "CEIL": toward +infinity.
  floor,      ///< "FLOOR": toward -infinity.
  up,         ///< "UP": away from zero.
  down,       ///< "DOWN": toward zero (truncation).
  half_up,    ///< "HALF_UP": nearest, ties away from zero.
  half_down,  ///< "HALF_DOWN" (or "TIES_TO_ZERO"): nearest, ties toward zero.
  // ---- lowbit's extensions: QONNX rejects these names (docs/semantics.md,
  // "Rounding modes beyond QONNX") ----
  odd,         ///< "ROUND_TO_ODD": an integral y stays, any other y goes to the odd one of floor(y), ceil(y).
  dpu,         ///< "DPU": Brevitas's dpu_round: ties to even, except negative ties, which go toward +infinity.
  stochastic,  ///< "STOCHASTIC": away from zero with probability frac(|y|) (in `random_bits` bits), reproducible.
};

/// QONNX's seven rounding modes, in declaration order (every mode the
/// QONNX operators accept; the reference semantics reproduces QONNX's
/// formula for each).
inline constexpr std::array<rounding_mode, 7> all_rounding_modes = {
    rounding_mode::half_even, rounding_mode::ceil, rounding_mode::floor,   rounding_mode::up,
    rounding_mode::down,      rounding_mode::half_up, rounding_mode::half_down};

/// The deterministic modes lowbit adds to QONNX's (QONNX rejects them): the
/// same definition in both semantics.
inline constexpr std::array<rounding_mode, 2> extension_rounding_modes = {rounding_mode::odd, rounding_mode::dpu};

/// The canonical QONNX name of a mode ("ROUND" for half_even), or "?" for a
/// value outside the enum.
constexpr std::string_view to_string(rounding_mode m) noexcept {
  switch (m) {
    case rounding_mode::half_even: return "ROUND";
    case rounding_mode::ceil: return "CEIL";
    case rounding_mode::floor: return "FLOOR";
    case rounding_mode::up: return "UP";
    case rounding_mode::down: return "DOWN";
    case rounding_mode::half_up: return "HALF_UP";
    case rounding_mode::half_down: return "HALF_DOWN";
    case rounding_mode::odd: return "ROUND_TO_ODD";
    case rounding_mode::dpu: return "DPU";
    case rounding_mode::stochastic: return "STOCHASTIC";
  }
  return "?";
}

/// True when `m` is one of the enumerators (a value cast from an integer
/// may not be).
constexpr bool is_valid(rounding_mode m) noexcept { return to_string(m) != "?"; }

/// True for QONNX's seven modes, false for lowbit's extensions (and for an
/// invalid value).
constexpr bool is_qonnx_mode(rounding_mode m) noexcept {
  return is_valid(m) && m != rounding_mode::odd && m != rounding_mode::dpu && m != rounding_mode::stochastic;
}

/**
 * Parses a rounding mode name, ignoring case. QONNX's names: ROUND,
 * HALF_EVEN, CEIL, FLOOR, UP, DOWN, HALF_UP, HALF_DOWN. lowbit's
 * extensions (QONNX rejects them): ROUND_TO_ODD, DPU and STOCHASTIC, and
 * the aliases TIES_TO_EVEN (= ROUND), TIES_TO_ZERO (= HALF_DOWN), TIES_AWAY
 * and TIES_AWAY_FROM_ZERO (= HALF_UP), and Brevitas's ROUND_TO_ZERO (=
 * DOWN: Brevitas's round_to_zero is sign(y) * floor(|y|)).
 *
 * @throws lowbit::error for any other string; the message lists the accepted
 *         names and shows the string quoted, with C-style escapes (a NUL as
 *         `\x00`) and cut after 64 bytes (detail::quote).
 *
 * **Example**:
 * ```
 * auto m = lowbit::parse_rounding_mode("half_up");  // rounding_mode::half_up
 * ```
 */
inline rounding_mode parse_rounding_mode(std::string_view name) {
  // The longest name is 19 characters: a longer string is not copied whole.
  std::string up(name.substr(0, 20));
  for (char& c : up)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  if (up == "ROUND" || up == "HALF_EVEN" || up == "TIES_TO_EVEN") return rounding_mode::half_even;
  if (up == "TIES_TO_ZERO") return rounding_mode::half_down;
  if (up == "TIES_AWAY" || up == "TIES_AWAY_FROM_ZERO") return rounding_mode::half_up;
  if (up == "ROUND_TO_ZERO") return rounding_mode::down;
  for (rounding_mode m : all_rounding_modes)
    if (up == to_string(m)) return m;
  for (rounding_mode m : {rounding_mode::odd, rounding_mode::dpu, rounding_mode::stochastic})
    if (up == to_string(m)) return m;
  throw error("lowbit: rounding_mode " + detail::quote(name) +
              " is unknown; expected one of ROUND, HALF_EVEN, CEIL, FLOOR, UP, DOWN, "
              "HALF_UP, HALF_DOWN (QONNX's), or lowbit's extensions ROUND_TO_ODD, DPU, STOCHASTIC, "
              "TIES_TO_EVEN, TIES_TO_ZERO, TIES_AWAY, TIES_AWAY_FROM_ZERO, ROUND_TO_ZERO (case-insensitive)");
}

namespace detail {

inline void check_rounding_mode(rounding_mode m, const char* op) {
  if (!is_valid(m)) [[unlikely]]
    throw_error(op, ": rounding_mode = ", dec(static_cast<int>(m)),
                " is not a lowbit::rounding_mode value; expected one of ROUND, CEIL, FLOOR, UP, "
                "DOWN, HALF_UP, HALF_DOWN, ROUND_TO_ODD, DPU, STOCHASTIC");
}

/// The random-bit count of stochastic rounding: 1 to 23 for float, 1 to 32
/// for double (every threshold (d + 1) 2^-r is then exact in the type).
template <class T>
inline constexpr int max_random_bits = std::is_same_v<T, float> ? 23 : 32;

template <class T>
void check_random_bits(int bits, rounding_mode m, const char* op) {
  if (m == rounding_mode::stochastic && (bits < 1 || bits > max_random_bits<T>)) [[unlikely]]
    throw_error(op, ": random_bits = ", dec(bits), " is out of range; expected an integer from 1 to ",
                dec(max_random_bits<T>), " for ", std::is_same_v<T, float> ? "float" : "double",
                " tensors (stochastic rounding)");
}

/// Stochastic rounding of y given the lane's threshold u = (d + 1) 2^-r
/// (detail/stochastic.hpp): |y| goes away from zero when its fraction
/// f = |y| - trunc(|y|) is >= u, so with d uniform on [0, 2^r) the
/// probability is floor(2^r f) / 2^r. f is exact (|y| and trunc(|y|) are
/// within a factor two for |y| >= 1; f = |y| below), and so is the compare:
/// no rounding error anywhere. The sign of y is kept (zeros included);
/// +-inf stay (f is NaN, the compare false), a NaN stays a NaN.
///
/// With AVX-512 (has_directed_add) the same bits in three operations:
/// trunc(y + copysign(1 - u, y)) with the addition rounded toward zero,
/// for u a threshold the mapping draws, (d + 1) 2^-r with r <= 23 (every
/// caller's). 1 - u = (2^r - 1 - d) 2^-r is then exact, and so is the
/// magnitude's floor: the exact sum |y| + 1 - u has the integral part
/// trunc(|y|) + [f >= u] (f + 1 - u is in [0, 2), at least 1 iff f >= u),
/// and a sum rounded toward zero lands in [floor of the sum, the sum]
/// (that floor is representable below 2^24; from 2^23 |y| is integral and
/// the rounded sum lies in [|y|, |y| + 1)), so its trunc is that integral
/// part. Zeros keep their sign (u = 1 adds a zero of y's sign; otherwise
/// trunc of a value of y's sign), +-inf and NaN pass.
template <class V>
LOWBIT_ALWAYS_INLINE V round_stochastic(V y, V u) noexcept {
  using T = lane_t<V>;
  if constexpr (has_directed_add<V>) {
    const V c = detail::or_sign(V(V(T(1)) - u), y);
    return detail::trunc(add_directed<direction::toward_zero>(y, c));
  } else {
    const V a = detail::abs(y);
    const V t = detail::trunc(a);
    const V r = detail::select(V(a - t) >= u, V(t + V(T(1))), t);
    return detail::or_sign(r, y);  // r >= +0 (or a NaN of positive sign)
  }
}

/// numpy's f(|y|) of reference UP and HALF_DOWN: ceil(|y|), and
/// ceil(fl(|y| - 0.5)) (a zero result is -0 for |y| <= 0.5).
template <rounding_mode M, class V>
LOWBIT_ALWAYS_INLINE V reference_magnitude(V y) noexcept {
  static_assert(M == rounding_mode::up || M == rounding_mode::half_down);
  using T = lane_t<V>;
  const V a = detail::abs(y);
  if constexpr (M == rounding_mode::up)
    return detail::ceil(a);
  else
    return detail::ceil(V(a - V(T(0.5))));
}

/**
 * Rounds `y` to an integral value with mode `M` in semantics `S`, generic
 * over scalar and batch.
 *
 * exact: IEEE roundToIntegral; the result keeps the sign of `y`.
 * reference: numpy's formulas as QONNX writes them, with numpy's sign(0) = +0
 * and `|y| +- 0.5` rounded to the lane type (QUIRKS.md 1-4).
 */
template <semantics S, rounding_mode M, class V>
LOWBIT_ALWAYS_INLINE V round_integral(V y) noexcept {
  using T = lane_t<V>;
  if constexpr (M == rounding_mode::stochastic) {
    // Needs each lane's threshold (round_integral_u, round_stochastic):
    // never reached from a kernel, and lowbit::round_integral rejects the
    // mode. A NaN, so that a generic caller that dispatches on every mode
    // (with_rounding_mode) compiles and a misuse cannot pass unnoticed.
    return (void)y, V(std::numeric_limits<T>::quiet_NaN());
  } else if constexpr (M == rounding_mode::half_even) {
    return detail::rint(y);
  } else if constexpr (M == rounding_mode::odd) {
    // f = floor(y); a non-integral y has |y| < 2^(digits - 1), so f, f + 1 and
    // f / 2 are exact, and f is even when f / 2 is integral. An integral y
    // (zeros, infinities) stays; a NaN gives a NaN (y == f is false).
    const V f = detail::floor(y);
    const V h = f * V(T(0.5));
    const V odd = detail::select(detail::floor(h) == h, V(f + V(T(1))), f);
    return detail::select(y == f, y, odd);
  } else if constexpr (M == rounding_mode::dpu) {
    // Brevitas's dpu_round: where((y < 0) & (y - floor(y) == 0.5), ceil(y),
    // round(y)), round being ties to even. y - floor(y) is exact for
    // |y| >= 1; for -1 < y < 0 it is fl(1 + y), which is 0.5 for y = -0.5
    // and for y = -(0.5 - ulp/2) alone, whose ceil and rint are both -0.
    const V f = detail::floor(y);
    const auto neg_tie = mask_and(y < V(T(0)), V(y - f) == V(T(0.5)));
    return detail::select(neg_tie, detail::ceil(y), detail::rint(y));
  } else if constexpr (M == rounding_mode::ceil) {
    return detail::ceil(y);
  } else if constexpr (M == rounding_mode::floor) {
    return detail::floor(y);
  } else if constexpr (M == rounding_mode::down) {
    return detail::trunc(y);
  } else if constexpr (S == semantics::reference) {
    // numpy: np.sign(y) * f(np.abs(y)), with sign(+-0) = +0, sign(NaN) = NaN.
    // The product is exact: +-m for y != 0, and for y = +-0 it is
    // +0 * m = m (m is then +-0). So it is computed with a select or a sign
    // bit, which no compiler can contract with the subtraction that follows
    // (-ffp-contract). A NaN y gives a NaN (its sign is not specified).
    if constexpr (M == rounding_mode::half_up) {
      // The same bits as numpy's form, by one truncation: for y < 0,
      // fl(y - 0.5) = -fl(|y| + 0.5) (rounding to nearest is symmetric) and
      // trunc(-v) = -floor(v) for v >= 0; for any other y, -0 included,
      // fl(y + 0.5) = fl(|y| + 0.5) > 0. tests/exhaustive/exhaustive_rounding.cpp
      // checks every float32 against the select form.
      if constexpr (detail::has_sign_factor<V>) {
        // AVX-512: y + h as fma(f, 1/2, y), f = +-1 the sign factor (+1 for
        // either zero): one vfixupimm where the compare and select took two.
        return detail::trunc(detail::fused_multiply_add(detail::sign_factor(y), V(T(0.5)), y));
      } else {
        const V h = detail::select(y < V(T(0)), V(T(-0.5)), V(T(0.5)));
        return detail::trunc(V(y + h));
      }
    } else if constexpr (M == rounding_mode::half_down && detail::has_sign_factor<V>) {
      // AVX-512: f = sign_factor(y) is numpy's sign(y) but +1 for -0 (its
      // sign bit is that of y + 0, below), and f y - 1/2 = fl(|y| - 1/2) in
      // one fused multiply-add (f y = |y| exactly): four operations, five below.
      const V f = detail::sign_factor(y);
      return detail::xor_sign(detail::ceil(detail::fused_multiply_add(f, y, V(T(-0.5)))), f);
    } else {
      // sign(y) * m: m with the sign bit of y + 0 xor'ed in. y + 0 is y
      // for every y but -0, which it makes +0 (numpy's sign(-0) = +0); a
      // zero m keeps numpy's sign (+0.3 -> -0, -0.3 -> +0). Two operations
      // where the compare and the select took three.
      return detail::xor_sign(reference_magnitude<M>(y), V(y + V(T(0))));
    }
  } else {
    if constexpr (M == rounding_mode::up) {
      return detail::or_sign(detail::ceil(detail::abs(y)), y);
    } else if constexpr (M == rounding_mode::half_up) {
      // trunc(y + copysign(pred(1/2), y)): for a = |y| and k = floor(a + 1/2),
      // a + pred(1/2) lies in [k - 2^-25, k + 1 - 2^-25 - ulp(a)], which
      // rounds into [k, k + 1) (docs/performance.md gives the proof; the
      // exhaustive sweep tests/exhaustive/exhaustive_rounding.cpp checks every
      // float32 against the fraction form below). The sign of y is kept, zeros
      // and NaN included.
      const V c = detail::or_sign(V(T(T(0.5) - std::numeric_limits<T>::epsilon() / 4)), y);
      return detail::trunc(y + c);
    } else if constexpr (has_directed_add<V>) {
      // trunc(y + copysign(1/2 - 2^-25, y)) with the addition rounded toward
      // zero: round_stochastic's form with the threshold u = 1/2 + 2^-25
      // (docs/performance.md). For a = |y| the exact sum a + 1/2 - 2^-25 has
      // the integral part floor(a) + [f > 1/2], f = a - floor(a): a nonzero
      // f is a multiple of 2^-24 (a >= 1/2) or f = a < 1/2, so f >= 1/2 +
      // 2^-25 iff f > 1/2. A sum rounded toward zero lands between that
      // integer (a float: below 2^24, and from 2^24 on a is integral and the
      // sum rounds to a) and the sum, so trunc gives it. Three operations
      // where the fraction form below takes seven; zeros keep y's sign (a
      // sum below 1 of y's sign), +-inf and NaN pass.
      static_assert(M == rounding_mode::half_down);
      const V c = detail::or_sign(V(T(T(0.5) - std::numeric_limits<T>::epsilon() / 4)), y);
      return detail::trunc(add_directed<direction::toward_zero>(y, c));
    } else {
      // t = detail::trunc(y); the fraction y - t is exact (same sign, |t| <= |y|,
      // Sterbenz for |y| >= 1, t = 0 below). Ties go toward zero. NaN: t and
      // d are NaN, the compare is false, NaN is returned.
      static_assert(M == rounding_mode::half_down);
      const V t = detail::trunc(y);
      const V d = detail::abs(y - t);
      const V away = t + detail::or_sign(V(T(1)), y);
      return detail::select(d > V(T(0.5)), away, t);
    }
  }
}

/**
 * round_integral<S, M>(y) for a caller that cannot tell the two zeros apart
 * when y is -0, and treats every NaN alike: for every other y the result has
 * the same bits. IntQuant is such a caller: its y = x / scale + zeropt is -0
 * only when zeropt is -0, and then (q - zeropt) * scale is +0 * scale
 * whichever zero q is (int_quant.hpp, clamp).
 *
 * It saves work on numpy's sign(y) in reference UP, HALF_UP and HALF_DOWN:
 * sign(y) * f(|y|) has f(|y|) >= +0 or f(|y|) = -0, so for y != 0 it is
 * f(|y|) with the sign bit of y xor'ed in (a zero f(|y|) included:
 * HALF_DOWN(+0.3) = -0 and HALF_DOWN(-0.3) = +0 stay). Only y = -0 differs
 * (numpy's sign(-0) is +0), so UP and HALF_DOWN skip round_integral's
 * y + 0 that maps -0 to +0, and HALF_UP its select. HALF_UP uses
 * fl(y + copysign(1/2, y)) = sign(y) * fl(|y| + 1/2) (rounding to nearest
 * is symmetric), truncated. tests/exhaustive/exhaustive_rounding.cpp checks
 * all three against round_integral on every float32.
 */
template <semantics S, rounding_mode M, class V>
LOWBIT_ALWAYS_INLINE V round_integral_any_zero(V y) noexcept {
  using T = lane_t<V>;
  if constexpr (S == semantics::reference && M == rounding_mode::half_up) {
    return detail::trunc(y + detail::or_sign(V(T(0.5)), y));
  } else if constexpr (S == semantics::reference &&
                       (M == rounding_mode::up || M == rounding_mode::half_down)) {
    return detail::xor_sign(reference_magnitude<M>(y), y);
  } else {
    return detail::round_integral<S, M>(y);
  }
}

/// Calls `f(std::integral_constant<rounding_mode, M>{})` for M = m, inlined:
/// the switch of the run-time-mode kernels (a switch per element or batch,
/// always predicted). An invalid m is taken as half_even.
template <class F>
LOWBIT_ALWAYS_INLINE decltype(auto) switch_mode(rounding_mode m, F&& f) {
  using rm = rounding_mode;
  switch (m) {
    case rm::ceil: return f(std::integral_constant<rm, rm::ceil>{});
    case rm::floor: return f(std::integral_constant<rm, rm::floor>{});
    case rm::up: return f(std::integral_constant<rm, rm::up>{});
    case rm::down: return f(std::integral_constant<rm, rm::down>{});
    case rm::half_up: return f(std::integral_constant<rm, rm::half_up>{});
    case rm::half_down: return f(std::integral_constant<rm, rm::half_down>{});
    case rm::odd: return f(std::integral_constant<rm, rm::odd>{});
    case rm::dpu: return f(std::integral_constant<rm, rm::dpu>{});
    case rm::stochastic: return f(std::integral_constant<rm, rm::stochastic>{});
    case rm::half_even: break;
  }
  return f(std::integral_constant<rm, rm::half_even>{});
}

/// Calls `f(std::integral_constant<rounding_mode, M>{})` with the mode as a
/// compile-time constant (a call of its own, around kernels).
template <class F>
decltype(auto) with_rounding_mode(rounding_mode m, F&& f) {
  return switch_mode(m, f);
}

/// round_integral<S, M>(y), or for M = stochastic round_stochastic(y, u)
/// (u: the lane's threshold, detail/stochastic.hpp; ignored otherwise).
template <semantics S, rounding_mode M, class V>
LOWBIT_ALWAYS_INLINE V round_integral_u(V y, V u) noexcept {
  if constexpr (M == rounding_mode::stochastic)
    return round_stochastic(y, u);
  else
    return (void)u, round_integral<S, M>(y);
}

/// round_integral_u<S, M>(y, u) for the run-time mode m (switch_mode).
template <semantics S, class V>
LOWBIT_ALWAYS_INLINE V round_integral_any(V y, rounding_mode m, V u) noexcept {
  return switch_mode(m, [&](auto mc) LOWBIT_ALWAYS_INLINE_LAMBDA {
    return round_integral_u<S, decltype(mc)::value>(y, u);
  });
}

/**
 * The rounding mode of a kernel that takes its mode at run time. A kernel
 * templated on a rounding mode M rounds with round_step<S, M>(y, mode, u):
 * for a fixed mode that is round_integral_u<S, M>(y, u); for M =
 * run_time_mode it is a switch on the kernel's member `mode` at the
 * rounding step alone (per element or batch, always predicted), so that one
 * loop serves every mode: the scalar loop of the per-mode kernels (their
 * scalar_kernel) and the kernel of a rare piece kind. Never a mode a user
 * can pass (check_rounding_mode rejects it). `u` is the stochastic
 * threshold of the lanes (detail/stochastic.hpp), used by the stochastic
 * mode only.
 */
inline constexpr rounding_mode run_time_mode = static_cast<rounding_mode>(-1);

/// round_integral_u<S, M>(y, u), or round_integral_any<S>(y, m, u) for run_time_mode.
template <semantics S, rounding_mode M, class V>
LOWBIT_ALWAYS_INLINE V round_step(V y, rounding_mode m, V u = V(0)) noexcept {
  if constexpr (M == run_time_mode)
    return round_integral_any<S>(y, m, u);
  else
    return (void)m, round_integral_u<S, M>(y, u);
}

/// round_integral_any_zero<S, M>(y) likewise (the run-time mode a switch).
template <semantics S, rounding_mode M, class V>
LOWBIT_ALWAYS_INLINE V round_step_any_zero(V y, rounding_mode m, V u = V(0)) noexcept {
  if constexpr (M == run_time_mode) {
    return switch_mode(m, [&](auto mc) LOWBIT_ALWAYS_INLINE_LAMBDA {
      return round_step_any_zero<S, decltype(mc)::value>(y, m, u);
    });
  } else if constexpr (M == rounding_mode::stochastic) {
    return (void)m, round_stochastic(y, u);
  } else {
    return (void)m, (void)u, round_integral_any_zero<S, M>(y);
  }
}

}  // namespace detail

/**
 * Rounds one value to an integral value with `mode`, as the operators do.
 *
 * In `semantics::exact` this is IEEE-754 roundToIntegral in the named
 * direction: the result keeps the sign of `y` (-0.3 -> -0), NaN stays NaN and
 * infinities stay infinite. In `semantics::reference` it is the numpy formula
 * QONNX uses (see rounding_mode and docs/semantics.md): UP, HALF_UP and
 * HALF_DOWN go through numpy's sign(), so zeros come out as QONNX gives them
 * (HALF_DOWN(+0.3) = -0, UP(-0) = +0) and `|y| + 0.5` is rounded first
 * (HALF_UP(0.49999997f) = 1).
 *
 * @throws lowbit::error if `mode` is not a valid enumerator.
 *
 * **Example**:
 * ```
 * float a = lowbit::round_integral(2.5f, lowbit::rounding_mode::half_even);  // 2
 * float b = lowbit::round_integral<lowbit::semantics::exact>(-0.3f,
 *                                  lowbit::rounding_mode::up);              // -1
 * ```
 */
template <semantics S = semantics::reference, class T>
T round_integral(T y, rounding_mode mode) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "lowbit::round_integral takes float or double");
  detail::check_rounding_mode(mode, "lowbit::round_integral");
  if (mode == rounding_mode::stochastic) [[unlikely]]
    detail::throw_error("lowbit::round_integral: rounding_mode = STOCHASTIC needs a seed and an element index; "
                        "expected a deterministic mode (use lowbit::round_stochastic)");
  return detail::with_rounding_mode(mode, [&](auto m) {
    if constexpr (decltype(m)::value == rounding_mode::stochastic)
      return y;  // not reached
    else
      return detail::round_integral<S, decltype(m)::value>(y);
  });
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_ROUNDING_HPP
