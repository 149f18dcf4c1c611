// SPDX-License-Identifier: Apache-2.0
/**
 * @file mx_quant.hpp
 * OCP Microscaling (MX) block quantization: blocks of k elements along an
 * axis share one power-of-two scale (an E8M0 exponent); each element is
 * quantized to FP8, FP6, FP4 or int8 after division by it. The whole
 * semantics, step by step, with the reference's quirks and where the exact
 * semantics differ, is in docs/semantics.md ("MX block quantization").
 */
#ifndef LOWBIT_MX_QUANT_HPP
#define LOWBIT_MX_QUANT_HPP

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "attributes.hpp"
#include "broadcast.hpp"
#include "config.hpp"
#include "detail/block.hpp"
#include "detail/buffer.hpp"
#include "detail/driver.hpp"
#include "detail/elementwise.hpp"
#include "detail/int_lanes.hpp"
#include "detail/log2_table.hpp"
#include "detail/simd.hpp"
#include "detail/stage.hpp"
#include "detail/stochastic.hpp"
#include "error.hpp"
#include "packing.hpp"
#include "parallel.hpp"
#include "rounding.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE

/// The element formats of OCP MX v1.0 (the names are microxcaling's).
enum class mx_element {
  fp8_e4m3,  ///< MXFP8 E4M3: max 448, subnormals down to 2^-9.
  fp8_e5m2,  ///< MXFP8 E5M2: max 57344, subnormals down to 2^-16.
  fp6_e3m2,  ///< MXFP6 E3M2: max 28, subnormals down to 2^-4.
  fp6_e2m3,  ///< MXFP6 E2M3: max 7.5, subnormals down to 2^-3.
  fp4_e2m1,  ///< MXFP4 E2M1: max 6, values 0, 0.5, 1, 1.5, 2, 3, 4, 6.
  int8,      ///< MXINT8: k / 64 for |k| <= 127.
};

/// Every MX element format, in declaration order.
inline constexpr std::array<mx_element, 6> all_mx_elements = {mx_element::fp8_e4m3, mx_element::fp8_e5m2,
                                                              mx_element::fp6_e3m2, mx_element::fp6_e2m3,
                                                              mx_element::fp4_e2m1, mx_element::int8};

/// The reference's name of a format ("fp8_e4m3"), or "?" outside the enum.
constexpr std::string_view to_string(mx_element f) noexcept {
  switch (f) {
    case mx_element::fp8_e4m3: return "fp8_e4m3";
    case mx_element::fp8_e5m2: return "fp8_e5m2";
    case mx_element::fp6_e3m2: return "fp6_e3m2";
    case mx_element::fp6_e2m3: return "fp6_e2m3";
    case mx_element::fp4_e2m1: return "fp4_e2m1";
    case mx_element::int8: return "int8";
  }
  return "?";
}

/**
 * How a block's shared exponent is chosen from its largest magnitude amax
 * (emax: the exponent of the element format's largest power of two, e.g. 8
 * for E4M3; max_norm: its largest value, e.g. 448). docs/semantics.md
 * compares them and says where each comes from.
 */
enum class mx_scale_rule {
  floor,     ///< floor(log2 amax) - emax: OCP MX v1.0 section 6.3, microxcaling, torchao FLOOR.
  ceil,      ///< ceil(log2 amax) - emax: torchao CEIL.
  even,      ///< floor(log2 of amax rounded to the element's m fraction bits) - emax: torchao EVEN.
  round_up,  ///< ceil(log2(amax / max_norm)): cuBLAS / NVIDIA's MXFP8 recipe, torchao RCEIL.
};

/// The name of a rule ("floor"), or "?" outside the enum.
constexpr std::string_view to_string(mx_scale_rule r) noexcept {
  switch (r) {
    case mx_scale_rule::floor: return "floor";
    case mx_scale_rule::ceil: return "ceil";
    case mx_scale_rule::even: return "even";
    case mx_scale_rule::round_up: return "round_up";
  }
  return "?";
}

/// microxcaling's `shared_exp_method`: only `max` (one exponent per block,
/// from its largest magnitude) is MX.
enum class mx_shared_exp { max };

/**
 * The parameters of an MX element format: `m` fraction bits, `emax` the
 * exponent of its largest binade, `min_exp` its smallest normal exponent
 * (subnormals below share it), `max_norm` its largest value. int8 is
 * described as a grid of step 2^-6 with one binade: m = 6, emax = min_exp
 * = 0, max_norm = 127/64.
 */
struct mx_element_info {
  int m;
  int emax;
  int min_exp;
  float max_norm;
  int bits;  ///< bits per element code
};

/// The parameters of format `f` (OCP MX v1.0 table 2; microxcaling's
/// `_get_format_params`).
constexpr mx_element_info info(mx_element f) noexcept {
  switch (f) {
    case mx_element::fp8_e4m3: return {3, 8, -6, 448.0f, 8};
    case mx_element::fp8_e5m2: return {2, 15, -14, 57344.0f, 8};
    case mx_element::fp6_e3m2: return {2, 4, -2, 28.0f, 6};
    case mx_element::fp6_e2m3: return {3, 2, 0, 7.5f, 6};
    case mx_element::fp4_e2m1: return {1, 2, 0, 6.0f, 4};
    case mx_element::int8: return {6, 0, 0, 127.0f / 64.0f, 8};
  }
  return {3, 8, -6, 448.0f, 8};
}

/**
 * An E8M0 scale (OCP MX v1.0 section 5.4.1): 8 exponent bits, bias 127, no
 * sign and no mantissa; `bits` = 0 .. 254 is 2^(bits - 127) (0 is 2^-127,
 * a float32 subnormal), 255 is NaN.
 */
struct e8m0 {
  std::uint8_t bits = 127;

  /// The scale 2^e for -127 <= e <= 127; NaN for any other e.
  static constexpr e8m0 from_exponent(int e) noexcept {
    return {static_cast<std::uint8_t>(e >= -127 && e <= 127 ? e + 127 : 255)};
  }
  constexpr bool is_nan() const noexcept { return bits == 255; }
  /// The exponent e of 2^e (meaningless for NaN).
  constexpr int exponent() const noexcept { return int(bits) - 127; }
  /// The value as a float32: 2^(bits - 127), or NaN.
  float value() const noexcept {
    if (bits == 255) return std::numeric_limits<float>::quiet_NaN();
    if (bits == 0) return std::bit_cast<float>(std::uint32_t(0x00400000u));
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 23);
  }
  friend constexpr bool operator==(e8m0, e8m0) = default;
};

// ---- attribute values by name (lowbit::set_attribute) ----

/// "fp8_e4m3", ... (any letter case).
inline bool parse_attribute_value(std::type_identity<mx_element>, std::string_view v, mx_element& out) {
  for (mx_element f : all_mx_elements)
    if (detail::iequals(v, to_string(f))) return out = f, true;
  return false;
}
constexpr const char* attribute_values(std::type_identity<mx_element>) noexcept {
  return "one of fp8_e4m3, fp8_e5m2, fp6_e3m2, fp6_e2m3, fp4_e2m1, int8";
}
/// "floor", "ceil", "even", "round_up" (or torchao's "rceil").
inline bool parse_attribute_value(std::type_identity<mx_scale_rule>, std::string_view v, mx_scale_rule& out) {
  for (mx_scale_rule r : {mx_scale_rule::floor, mx_scale_rule::ceil, mx_scale_rule::even, mx_scale_rule::round_up})
    if (detail::iequals(v, to_string(r))) return out = r, true;
  if (detail::iequals(v, "rceil")) return out = mx_scale_rule::round_up, true;
  return false;
}
constexpr const char* attribute_values(std::type_identity<mx_scale_rule>) noexcept {
  return "one of floor, ceil, even, round_up (or rceil)";
}
inline bool parse_attribute_value(std::type_identity<mx_shared_exp>, std::string_view v, mx_shared_exp& out) {
  if (detail::iequals(v, "max")) return out = mx_shared_exp::max, true;
  return false;
}
constexpr const char* attribute_values(std::type_identity<mx_shared_exp>) noexcept {
  return "max (one exponent per block; microxcaling's 'none' is not MX)";
}

namespace detail {

/// The blocked axis of a block format: x has an axis, `axis` is one of its
/// dimensions (-rank .. rank - 1), and the rank leaves room to split it.
inline void check_block_axis(const std::string& prefix, std::size_t rank, std::ptrdiff_t axis) {
  const auto r = static_cast<std::ptrdiff_t>(rank);
  if (rank == 0) throw error(prefix + "x is a scalar (rank 0); expected a tensor with at least one axis to block");
  if (axis < -r || axis >= r)
    throw error(prefix + "axis = " + std::to_string(axis) + " is invalid for a tensor of rank " +
                std::to_string(rank) + "; expected " + std::to_string(-r) + " to " + std::to_string(r - 1));
  if (rank >= max_rank)
    throw error(prefix + "x has rank " + std::to_string(rank) + "; expected a rank below " +
                std::to_string(max_rank) + " (a block format splits its axis in two)");
}

/// microxcaling's rounding names: `nearest` (ties away from zero), `even`
/// (ties to even), `floor` (toward zero), `dither` (stochastic: with
/// lowbit's reproducible draws, seed and random_bits).
inline bool parse_mx_rounding(std::string_view v, rounding_mode& out) {
  if (iequals(v, "nearest")) return out = rounding_mode::half_up, true;
  if (iequals(v, "even")) return out = rounding_mode::half_even, true;
  if (iequals(v, "floor")) return out = rounding_mode::down, true;
  if (iequals(v, "dither")) return out = rounding_mode::stochastic, true;
  return false;
}

/// The clamp of a shared exponent with `scale_bits` bits: +-(2^(bits-1) - 1).
constexpr int mx_scale_emax(int scale_bits) noexcept { return (1 << (scale_bits - 1)) - 1; }

/**
 * The shared exponent of a block whose largest magnitude is `amax` (NaN if
 * the block holds a NaN, +inf if it holds an infinity), before the clamp:
 * `ok` false for a NaN scale. `flush` is set when the block is flushed
 * (flush_fp32_subnorms). Returns se; the caller clamps and marks NaN.
 */
struct mx_block_exponent {
  int se = 0;
  bool nan = false;
  bool flush = false;
};

/// floor(log2 a) for a finite a > 0, exact (subnormals included).
inline int exact_floor_log2(float a) noexcept { return std::ilogb(a); }

/// 2^e as a float32 for -149 <= e <= 127.
inline float mx_pow2(int e) noexcept {
  return e >= -126 ? std::bit_cast<float>(static_cast<std::uint32_t>(e + 127) << 23)
                   : std::bit_cast<float>(std::uint32_t(1) << (e + 149));
}

template <semantics S>
mx_block_exponent mx_shared_exponent(float amax, mx_element f, mx_scale_rule rule, int scale_bits, bool flush) {
  const mx_element_info fi = info(f);
  const int smax = mx_scale_emax(scale_bits);
  mx_block_exponent r;
  if (!(amax <= std::numeric_limits<float>::max())) {  // NaN or inf in the block
    r.nan = true;
    return r;
  }
  long se;
  if (S == semantics::reference && rule == mx_scale_rule::floor) {
    // microxcaling: E = floor(log2f(amax)), amax = 0 taken as 2^-126;
    // log2f is correctly rounded, so the top of each binade rounds up
    // (FORMAT-mx.md step 3).
    const std::uint32_t b = std::bit_cast<std::uint32_t>(amax);
    int E;
    if (amax == 0.0f) {
      E = -126;
    } else if (b < 0x00800000u) {
      // Subnormal: the 22 largest (007fffea .. 007fffff) round up to -126;
      // the others are below -126 (-127 stands for them: every use clamps).
      E = b >= 0x007fffeau ? -126 : -127;
    } else {
      const std::int32_t be = static_cast<std::int32_t>(b >> 23);
      E = be - 127 + ((static_cast<std::int32_t>(b & 0x7fffffu) >= log2_roundup_thresholds()[be]) ? 1 : 0);
    }
    r.flush = flush && !(E > -127);
    se = long(E) - fi.emax;
  } else {
    r.flush = flush && amax < std::numeric_limits<float>::min();
    if (amax == 0.0f) {
      r.se = -smax;
      return r;
    }
    // E = floor(log2 amax) and amax's significand in [1, 2), from the bits
    // (a subnormal amax through ilogb and ldexp, both exact).
    const std::uint32_t b = std::bit_cast<std::uint32_t>(amax);
    const bool normal = b >= 0x00800000u;
    const int E = normal ? static_cast<int>(b >> 23) - 127 : exact_floor_log2(amax);
    const float mant =
        normal ? std::bit_cast<float>((b & 0x7fffffu) | 0x3f800000u) : std::ldexp(amax, -E);
    switch (rule) {
      case mx_scale_rule::floor: se = long(E) - fi.emax; break;
      case mx_scale_rule::ceil: se = long(E) - fi.emax + (mant != 1.0f); break;
      case mx_scale_rule::even:
        // amax rounded to m fraction bits reaches 2^(E+1) iff its
        // significand is at least 2 - 2^-(m+1) (the tie rounds up: its
        // lower neighbour 2 - 2^-m is odd).
        se = long(E) - fi.emax + (mant >= 2.0f - mx_pow2(-(fi.m + 1)));
        break;
      case mx_scale_rule::round_up:
      default: {
        // The smallest e with amax <= max_norm * 2^e.
        const float top = fi.max_norm * mx_pow2(-fi.emax);  // max_norm's significand (exact)
        se = long(E) - fi.emax + (mant > top);
        break;
      }
    }
  }
  if (se > smax) {
    r.nan = true;
  } else {
    r.se = static_cast<int>(se < -smax ? -smax : se);
  }
  return r;
}

/**
 * The element step of MX quantization, for one block value v: the block's
 * scale 2^se (NaN for a NaN block), negated for a flushed block. Generic
 * over a scalar and a batch.
 *
 * 1. a = x / 2^se, as x * 2^-se (the same real number, rounded once).
 * 2. p = the element exponent of |a|: floor(log2 |a|) (reference: of the
 *    float32-rounded log2, from a table), raised to min_exp.
 * 3. s = a * 2^(m - p) (exact); r = s rounded to an integer (the reference's
 *    formulas for nearest, even and floor; the exact roundings otherwise).
 * 4. q = r * 2^(p - m), clamped to +-max_norm (NaN passes); stage code
 *    stops here.
 * 5. y = q * 2^se.
 */
template <semantics S, rounding_mode M, stage St>
struct mx_kernel {
  std::int32_t m = 3, min_exp = -6;
  float max_norm = 448.0f;
  const std::int32_t* thr = nullptr;  ///< reference: the log2 rounding table
  rounding_mode mode = M;             ///< the mode, for M = run_time_mode
  /// The seed and random bits of the stochastic mode (detail/stochastic.hpp).
  stochastic_source rnd{};
  static constexpr bool index_aware = needs_index<M>;
  /// The mode is stochastic: the row loop draws whole groups (stochastic_kernel).
  static constexpr bool stochastic = M == rounding_mode::stochastic;

  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V X, V v) const noexcept {
    return eval(V(0.0f), X, v);
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(element_index idx, V X, V v) const noexcept {
    return eval(rnd.template threshold<M, V>(mode, idx), X, v);
  }
  /// `u`: the stochastic mode's thresholds (unused by the other modes).
  template <class V>
  LOWBIT_ALWAYS_INLINE V eval(V u, V X, V v) const noexcept {
    using I = int_lanes_t<V>;
    const V sc = detail::abs(v);
    if constexpr (St == stage::dequant) return X * sc;
    // 2^-se: exactly (254 << 23) - bits for -126 <= se <= 126; the two
    // ends, 2^-127 (a subnormal) and 2^127, swap; NaN stays NaN.
    const I sb = float_bits(sc);
    I rb = iselect(sb == I(0x00400000), I(0x7f000000), I(I(254 << 23) - sb));
    rb = iselect(sb == I(0x7f000000), I(0x00400000), rb);
    const V recip = detail::select(detail::is_nan(sc), sc, bits_float(rb));
    V a = X * recip;
    if constexpr (S == semantics::exact) {
      // A quotient that underflowed to 0 keeps being nonzero: any magnitude
      // below 2^-126 rounds alike (it is far below the smallest step).
      const auto lost = mask_and(a == V(0.0f), detail::abs(X) > V(0.0f));
      a = detail::select(lost, detail::copysign(V(std::numeric_limits<float>::denorm_min()), X), a);
    }
    const I ab = float_bits(detail::abs(a));
    I k = (ab >> 23) - I(127);
    if constexpr (S == semantics::reference) {
      const auto near_top = (ab & I(0x7fffc0)) == I(0x7fffc0);
      if (any_lane(near_top)) k = k + iselect((ab & I(0x7fffff)) >= igather(thr, ab >> 23), I(1), I(0));
    }
    // (Not capped at emax: the reference's rounded log2 gives emax + 1 to
    // an |a| just below 2^(emax+1), a coarser grid; FORMAT-mx.md quirk 4.)
    const I p = imax(k, I(min_exp));
    const V s = a * bits_float(I((I(m) - p + I(127)) << 23));
    const V r = round(s, u);
    V q = r * bits_float(I((p - I(m) + I(127)) << 23));
    const V hi(max_norm);
    const V lo = detail::negate(hi);
    q = detail::select(q > hi, hi, detail::select(q < lo, lo, q));
    // A flushed block (v < 0): zeros, +0 in the reference (its sign(0) =
    // 0), x's sign in the exact semantics.
    const auto flushed = v < V(0.0f);
    if constexpr (S == semantics::reference)
      q = detail::select(flushed, V(0.0f), q);
    else
      q = detail::select(flushed, detail::sign_bit(X), q);
    // Every NaN (a NaN block's) is the one quiet NaN 7fc00000, the block
    // value's own: which operand's payload an operation passes on differs
    // between ISAs and compilers, the bits must not.
    q = detail::select(detail::is_nan(q), V(std::numeric_limits<float>::quiet_NaN()), q);
    if constexpr (St == stage::code) return q;
    return q * sc;
  }

  template <class V>
  LOWBIT_ALWAYS_INLINE V round(V s, V u) const noexcept {
    if constexpr (M == run_time_mode) {
      return switch_mode(mode, [&](auto mc) LOWBIT_ALWAYS_INLINE_LAMBDA { return round_as<decltype(mc)::value>(s, u); });
    } else {
      return round_as<M>(s, u);
    }
  }

  template <rounding_mode R, class V>
  LOWBIT_ALWAYS_INLINE static V round_as(V s, V u) noexcept {
    if constexpr (R == rounding_mode::stochastic) {
      // microxcaling's `dither`, sign(s) * floor(|s| + rand), with the
      // reproducible draws: away from zero with probability floor(2^r f) /
      // 2^r. Zero signs as below (reference: s = +-0 gives +0).
      if constexpr (S == semantics::exact) return round_stochastic(s, u);
      else return round_stochastic(V(s + V(0.0f)), u);
    } else if constexpr (S == semantics::exact) {
      return (void)u, detail::round_integral<semantics::exact, R>(s);
    } else if constexpr (R == rounding_mode::half_up) {
      // nearest: sign(s) * floor(fl(|s| + 0.5)), sign(+-0) = 0.
      return detail::round_integral<semantics::reference, rounding_mode::half_up>(s);
    } else if constexpr (R == rounding_mode::half_even) {
      // even: sign(s) * (floor(fl(|s| + 0.5)) - t), t = 1 when fl(|s| - 0.5)
      // is an even integer (microxcaling's (|s| - 0.5) % 2 == 0).
      const V as = detail::abs(s);
      const V n = detail::floor(V(as + V(0.5f)));
      const V d = as - V(0.5f);
      const V half = d * V(0.5f);
      const auto tie = detail::floor(half) == half;
      const V mag = detail::select(tie, V(n - V(1.0f)), n);
      return detail::bitwise_xor(mag, detail::sign_bit(V(s + V(0.0f))));
    } else if constexpr (R == rounding_mode::down) {
      // floor: sign(s) * floor(|s|).
      return detail::bitwise_xor(detail::floor(detail::abs(s)), detail::sign_bit(V(s + V(0.0f))));
    } else {
      // The modes microxcaling lacks: exact, with its zero signs (s = +-0
      // gives +0, a negative s rounded to zero -0).
      return detail::round_integral<semantics::exact, R>(V(s + V(0.0f)));
    }
  }
};

/// The decoded values of every code of an element format (index: the code;
/// int8 codes are two's complement bytes), for dequantize.
inline std::array<float, 256> mx_code_values(mx_element f) {
  std::array<float, 256> t{};
  const mx_element_info fi = info(f);
  const int n = 1 << fi.bits;
  for (int c = 0; c < 256; ++c) {
    if (c >= n) {
      t[static_cast<std::size_t>(c)] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    if (f == mx_element::int8) {
      const int k = c < 128 ? c : c - 256;
      t[static_cast<std::size_t>(c)] = static_cast<float>(k) / 64.0f;
      continue;
    }
    const int E = fi.bits - 1 - fi.m;
    const int bias = (1 << (E - 1)) - 1;
    const int sign = c >> (fi.bits - 1), ef = (c >> fi.m) & ((1 << E) - 1), mf = c & ((1 << fi.m) - 1);
    float v = ef == 0 ? std::ldexp(static_cast<float>(mf), 1 - bias - fi.m)
                      : std::ldexp(static_cast<float>((1 << fi.m) + mf), ef - bias - fi.m);
    // E4M3 (FN): S.1111.111 is NaN; E5M2: exponent 11111 is inf (mantissa 0) or NaN.
    if (f == mx_element::fp8_e4m3 && (c & 0x7f) == 0x7f) v = std::numeric_limits<float>::quiet_NaN();
    if (f == mx_element::fp8_e5m2 && ef == 31)
      v = mf == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
    t[static_cast<std::size_t>(c)] = sign ? -v : v;
  }
  return t;
}

/// The code of an element value q of format f (q on the format's grid,
/// |q| <= max_norm, or NaN: code 0, the block's NaN scale decides).
inline std::uint8_t mx_encode(mx_element f, float q) noexcept {
  const mx_element_info fi = info(f);
  if (q != q) return 0;
  if (f == mx_element::int8) return static_cast<std::uint8_t>(static_cast<std::int8_t>(q * 64.0f));
  const int E = fi.bits - 1 - fi.m;
  const int bias = (1 << (E - 1)) - 1;
  const std::uint32_t sign = std::signbit(q) ? 1u << (fi.bits - 1) : 0u;
  const float a = std::fabs(q);
  if (a == 0.0f) return static_cast<std::uint8_t>(sign);
  const int e = std::max(std::ilogb(a), 1 - bias);                       // the binade, or the subnormal one
  const auto u = static_cast<std::uint32_t>(std::ldexp(a, fi.m - e));  // exact: q is on the grid
  const std::uint32_t ef = u >= (1u << fi.m) ? static_cast<std::uint32_t>(e + bias) : 0u;
  const std::uint32_t mf = u & ((1u << fi.m) - 1);
  return static_cast<std::uint8_t>(sign | (ef << fi.m) | mf);
}

}  // namespace detail

/**
 * OCP MX block quantization (fake quantization): x is cut into blocks of
 * `block_size` elements along `axis` (the last block of a line may be
 * shorter), each block gets a shared scale 2^se from its largest magnitude
 * (`scale_rule`), and every element is quantized to `format` after division
 * by the scale, then multiplied back: `y = q * 2^se`.
 *
 * `reference` (the default) reproduces microsoft/microxcaling's
 * `quantize_mx_op` bit for bit, quirks included (its float32-rounded log2,
 * a NaN or inf poisoning its block, the exponent clamp at -127, zero signs);
 * `exact` computes OCP MX v1.0 with exact exponents from the bits. The
 * steps and every difference: docs/semantics.md, "MX block quantization".
 *
 * Attributes by name (lowbit::set_attribute): `elem_format`, `block_size`,
 * `axis`, `rounding` (microxcaling's names: nearest = ties away from zero,
 * even, floor = toward zero), `rounding_mode` (lowbit's names: every mode),
 * `scale_bits`, `shared_exp_method` (max), `flush_fp32_subnorms` and
 * `scale_rule`.
 *
 * x is a float tensor of rank 1 to 7 (any view lowbit takes), y a tensor of
 * x's shape, possibly x itself.
 *
 * @throws lowbit::error for an axis outside x, a block_size of 0, a
 *         scale_bits outside 1 .. 8, an invalid enumerator, a y of the wrong
 *         shape or overlapping x. Nothing is written then.
 *
 * **Example**:
 * ```
 * std::vector<float> x{0.3f, -2.9f, 6.0f, 100.0f}, y(4);
 * lowbit::mx_quant<> mx{.format = lowbit::mx_element::fp4_e2m1, .block_size = 4};
 * mx(x, y);  // scale 2^4 (floor(log2 100) - 2): y = {0, -0, 8, 96}
 * ```
 */
template <semantics S = semantics::reference>
struct mx_quant {
  mx_element format = mx_element::fp8_e4m3;      ///< the element format
  std::size_t block_size = 32;                   ///< elements per block along `axis`, >= 1
  std::ptrdiff_t axis = -1;                      ///< the blocked axis; negative counts from the end
  rounding_mode rounding = rounding_mode::half_up;  ///< microxcaling's default, `nearest`
  mx_scale_rule scale_rule = mx_scale_rule::floor;  ///< how the shared exponent is chosen
  int scale_bits = 8;                            ///< bits of the shared exponent: |se| <= 2^(bits-1) - 1
  bool flush_fp32_subnorms = false;              ///< zero blocks whose largest magnitude is subnormal
  mx_shared_exp shared_exp_method = mx_shared_exp::max;
  /// Threads for large calls (opt-in; bit-identical results): lowbit::execution.
  execution exec{};
  /// rounding_mode::stochastic (`dither`) only: the seed of the draws (any
  /// value); an element's draw depends only on the seed, random_bits and
  /// its flat index in y.
  std::uint64_t seed = 0;
  /// rounding_mode::stochastic only: bits per draw, 1 to 23.
  int random_bits = 16;
  /// rounding_mode::stochastic only: the flat index of y's element 0 in a
  /// larger tensor quantized in several calls (row-major pieces), so that
  /// every element gets the draw it gets in one call.
  std::uint64_t index_offset = 0;

  static constexpr const char* name = "lowbit::mx_quant";
  /// The operator protocol (detail/protocol.hpp): no inputs besides x; the
  /// kernel's one operand is each element's block scale.
  using inputs = detail::names<>;
  using operands = detail::names<"block_scale">;
  static constexpr bool accepts_double = false;

  static constexpr auto attributes() {
    return std::tuple{detail::attribute{"elem_format", &mx_quant::format},
                      detail::attribute{"block_size", &mx_quant::block_size},
                      detail::attribute{"axis", &mx_quant::axis},
                      detail::attribute{"rounding", &mx_quant::rounding, std::string_view{}, &detail::parse_mx_rounding,
                                        "nearest, even, floor or dither (microxcaling's names; rounding_mode takes "
                                        "lowbit's)"},
                      detail::attribute{"rounding_mode", &mx_quant::rounding},
                      detail::attribute{"scale_bits", &mx_quant::scale_bits},
                      detail::attribute{"shared_exp_method", &mx_quant::shared_exp_method},
                      detail::attribute{"flush_fp32_subnorms", &mx_quant::flush_fp32_subnorms},
                      detail::attribute{"scale_rule", &mx_quant::scale_rule},
                      detail::attribute{"seed", &mx_quant::seed},
                      detail::attribute{"random_bits", &mx_quant::random_bits},
                      detail::attribute{"index_offset", &mx_quant::index_offset}};
  }

  /// x's shape (checked as a call checks it).
  template <tensor_arg X>
  shape output_shape(const X& x) const {
    return detail::call_output_shape(*this, x);
  }

  /// The shape of the block scales: x's shape with ceil(n / block_size)
  /// along the axis.
  template <tensor_arg X>
  shape scales_shape(const X& x) const {
    const shape s = output_shape(x);
    check_attributes();
    check_axis(s.rank());
    return detail::block_shape(s, layout(s.rank()));
  }

  /// Quantizes x into y. See the class documentation.
  template <tensor_arg X, tensor_arg Y>
  void operator()(const X& x, Y&& y) const {
    detail::call(*this, std::forward<Y>(y), x);
  }

  /// The blocked axis as a dimension of a rank-`rank` tensor (after
  /// check_axis).
  std::size_t axis_of(std::size_t rank) const noexcept {
    return static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::ptrdiff_t>(rank) : axis);
  }

  /// For the codes functions below (not part of the API).
  void check_attributes_public() const { check_attributes(); }
  void check_axis_public(std::size_t rank) const { check_axis(rank); }
  detail::block_layout layout_public(std::size_t rank) const noexcept { return layout(rank); }

 private:
  // ---- the protocol's hooks (detail/driver.hpp) ----
  friend struct detail::protocol_access;
  template <class T>
  using args = detail::call_args<mx_quant, T>;

  detail::block_layout layout(std::size_t rank) const noexcept { return {axis_of(rank), block_size}; }

  std::string prefix() const {
    return std::string(name) + (S == semantics::exact ? " (exact semantics)" : "") + ": ";
  }

  void check_attributes() const {
    if (to_string(format) == "?")
      throw error(prefix() + "elem_format = " + std::to_string(static_cast<int>(format)) +
                  " is not a lowbit::mx_element value; expected one of fp8_e4m3, fp8_e5m2, fp6_e3m2, "
                  "fp6_e2m3, fp4_e2m1, int8");
    if (to_string(scale_rule) == "?")
      throw error(prefix() + "scale_rule = " + std::to_string(static_cast<int>(scale_rule)) +
                  " is not a lowbit::mx_scale_rule value; expected floor, ceil, even or round_up");
    if (shared_exp_method != mx_shared_exp::max)
      throw error(prefix() + "shared_exp_method = " + std::to_string(static_cast<int>(shared_exp_method)) +
                  " is invalid; expected max");
    detail::check_rounding_mode(rounding, name);
    detail::check_random_bits<float>(random_bits, rounding, name);
    if (block_size == 0)
      throw error(prefix() + "block_size = 0 is invalid; expected at least 1 (elements per block)");
    if (scale_bits < 1 || scale_bits > 8)
      throw error(prefix() + "scale_bits = " + std::to_string(scale_bits) +
                  " is invalid; expected 1 to 8 (8: the E8M0 scale of OCP MX)");
  }

  void check_axis(std::size_t rank) const { detail::check_block_axis(prefix(), rank, axis); }

  /// The axis against x's rank (output_shape() makes this check too).
  template <class T>
  void check_shape_values(const args<T>& a) const {
    check_axis(a.x().rank);
  }

  template <class T>
  void check_values(const args<T>& a) const {
    check_shape_values(a);
  }

 public:
  /**
   * The state of one call: each block's shared exponent and the value the
   * kernel reads (detail::mx_kernel).
   */
  template <class T>
  struct state {
    static_assert(std::is_same_v<T, float>, "lowbit::mx_quant works on float tensors");
    static constexpr bool block_fed = true;
    std::array<const detail::nd<const T>*, 1> ops{};
    detail::block_layout blocks{};
    detail::buffer<T> values;       ///< per block: 2^se, NaN, or -2^se (flushed)
    detail::buffer<std::uint8_t> codes;  ///< per block: the E8M0 byte (255: NaN)
    mx_element format;
    rounding_mode mode;
    detail::stochastic_source rnd;

    state(const mx_quant& op, const args<T>& a, const shape& out)
        : blocks(op.layout(out.rank())),
          values(out.count() ? detail::block_shape(out, blocks).count() : 0),
          codes(values.size()),
          format(op.format),
          mode(op.rounding),
          rnd{op.seed, op.random_bits, op.index_offset} {
      if (out.count() == 0) return;
      detail::block_reduce(a.x(), blocks, values.data(), detail::max_abs_bits_reduction{});
      for (std::size_t b = 0; b < values.size(); ++b) {
        const detail::mx_block_exponent e =
            detail::mx_shared_exponent<S>(values[b], op.format, op.scale_rule, op.scale_bits, op.flush_fp32_subnorms);
        if (e.nan) {
          values[b] = std::numeric_limits<T>::quiet_NaN();
          codes[b] = 255;
        } else {
          const T sc = detail::mx_pow2(e.se);
          values[b] = e.flush ? -sc : sc;
          codes[b] = static_cast<std::uint8_t>(e.se + 127);
        }
      }
    }

    const T* block_values() const noexcept { return values.data(); }

    template <detail::stage St>
    void run(const detail::piece<T, 1>& pc, bool simd) const {
      // The stochastic mode's group cache, on this frame (one per piece and thread).
      detail::with_group_cache(rnd, mode, [&](const detail::stochastic_source& r) { run_with<St>(pc, simd, r); });
    }

    /// run() with the random source `rnd` (the state's, with a group cache).
    template <detail::stage St>
    void run_with(const detail::piece<T, 1>& pc, bool simd, const detail::stochastic_source& rnd) const {
      const mx_element_info fi = info(format);
      const std::int32_t* thr = S == semantics::reference ? detail::log2_roundup_thresholds() : nullptr;
      detail::with_rounding_mode(mode, [&](auto mc) {
        const detail::mx_kernel<S, decltype(mc)::value, St> k{fi.m, fi.min_exp, fi.max_norm, thr,
                                                              decltype(mc)::value, rnd};
        detail::run_piece(k, pc, simd);
      });
    }
  };
};

namespace detail {

/// An output view of element type E (float block scales, or byte codes).
template <class E, class V>
nd<E> mx_out_nd(V&& v) {
  using VE = element_t<V&&>;
  static_assert(!std::is_arithmetic_v<std::remove_cvref_t<V>>, "lowbit: an MX output must be a view");
  static_assert(!std::is_const_v<VE>, "lowbit: an MX output view must have a non-const element type");
  static_assert(std::is_same_v<std::remove_cv_t<VE>, E>, "lowbit: wrong element type for this MX output");
  nd<E> d;
  d.data = fill_nd(v, d);
  return d;
}

/// An input view of element type E.
template <class E, class V>
nd<const E> mx_in_nd(const V& v) {
  using VE = std::remove_cv_t<element_t<const V&>>;
  static_assert(!std::is_arithmetic_v<std::remove_cvref_t<V>>, "lowbit: MX codes and scales must be views");
  static_assert(std::is_same_v<VE, E>, "lowbit: wrong element type for this MX input");
  nd<const E> d;
  d.data = fill_nd(v, d);
  return d;
}

/// The codes and scales of a block format's codes stage share no byte with
/// x or each other (their shapes are checked by the caller).
template <class C>
void check_block_code_memory(const char* op, const nd<C>& cd, const nd<std::uint8_t>& sd, const nd<const float>& x) {
  const mem_tensor cm = mem_of("codes", cd), sm = mem_of("scales", sd), xm = mem_of("x", x);
  if (!mem_empty(cm)) check_disjoint(op, cm, xm);
  if (!mem_empty(sm)) {
    check_disjoint(op, sm, xm);
    if (!mem_empty(cm)) check_disjoint(op, sm, cm);
  }
}

/// A block format's dequantize arguments: scales of the block shape of the
/// codes (blocked by `bl`), y of the codes' shape sharing no byte with
/// either. Returns the block shape.
template <class C>
shape check_block_dequantize(const char* op, const nd<const C>& cd, const nd<const std::uint8_t>& sd,
                             const nd<float>& yd, block_layout bl) {
  const shape out = cd.get_shape();
  const shape bs = block_shape(out, bl);
  if (!(sd.get_shape() == bs))
    throw error(std::string(op) + ": scales has shape " + sd.get_shape().to_string() + "; expected the block shape " +
                bs.to_string() + " of codes of shape " + out.to_string());
  check_output(op, yd, out, "y", "the shape of the codes");
  const mem_tensor ym = mem_of("y", yd);
  if (!mem_empty(ym)) {
    check_disjoint(op, ym, mem_of("codes", cd));
    check_disjoint(op, ym, mem_of("scales", sd));
  }
  return bs;
}

/// Reads x, validates the attributes and axis, builds the call's state and
/// hands `f(args, out, state)` the lot; `check_out(out)` checks the
/// outputs first.
template <semantics S, class X, class CheckOut, class F>
void with_mx_state(const mx_quant<S>& op, const X& x, CheckOut&& check_out, F&& f) {
  using Op = mx_quant<S>;
  static_assert(std::is_same_v<x_value_t<X>, float>, "lowbit::mx_quant works on float tensors");
  read_args<Op, float>(
      [&](const call_args<Op, float>& a) {
        const shape out = validate(op, a, "x", check_out);
        protocol_access::with_state(op, a, out, [&](const auto& st) { f(a, out, st); });
      },
      x);
}

/// The flat index, in the block shape, of the block of each row-major
/// position of a tensor of shape `out` blocked by `b`: a table filled by
/// nested loops (no division per element).
struct mx_block_index {
  buffer<std::size_t> idx;
  mx_block_index(const shape& out, block_layout b) : idx(out.count()) {
    std::size_t inner = 1, outer = 1;
    for (std::size_t d = b.axis + 1; d < out.rank(); ++d) inner *= out[d];
    for (std::size_t d = 0; d < b.axis; ++d) outer *= out[d];
    const std::size_t n = out[b.axis], nb = n / b.k + (n % b.k != 0);
    std::size_t i = 0;
    for (std::size_t o = 0; o < outer; ++o)
      for (std::size_t c = 0; c < n; ++c) {
        const std::size_t base = (o * nb + c / b.k) * inner;
        for (std::size_t in = 0; in < inner; ++in) idx[i++] = base + in;
      }
  }
  std::size_t operator()(std::size_t i) const noexcept { return idx[i]; }
};

}  // namespace detail

/**
 * Each block's scale for a call of `op` on x, as `op(x, y)` computes it:
 * float scales get 2^se (NaN for a block holding a NaN or an infinity, or
 * whose exponent exceeds the clamp), uint8 scales the E8M0 byte se + 127
 * (255 for NaN). `scales` has op.scales_shape(x): x's shape with
 * ceil(n / block_size) along the axis, row-major order of blocks.
 * @throws lowbit::error as op(x, y) does, for scales of another shape or
 *         sharing memory with x. Nothing is written then.
 */
template <semantics S, tensor_arg X, class Scales>
void mx_scales(const mx_quant<S>& op, const X& x, Scales&& scales) {
  using E = std::remove_cv_t<detail::element_t<Scales&&>>;
  static_assert(std::is_same_v<E, float> || std::is_same_v<E, std::uint8_t>,
                "lowbit::mx_scales writes float scales (2^se) or uint8 E8M0 bytes");
  detail::nd<E> sd = detail::mx_out_nd<E>(std::forward<Scales>(scales));
  detail::with_mx_state(
      op, x,
      [&](const shape& out) {
        op.check_axis_public(out.rank());
        detail::check_output(mx_quant<S>::name, sd, detail::block_shape(out, op.layout_public(out.rank())),
                             "scales", "the block shape");
      },
      [&](const auto& a, const shape& out, const auto& st) {
        detail::check_disjoint(mx_quant<S>::name, detail::mem_of("scales", sd), detail::mem_of("x", a.x()));
        if (out.count() == 0) return;
        detail::for_each_element(sd, [&](std::size_t i, std::ptrdiff_t off) {
          if constexpr (std::is_same_v<E, float>)
            sd.data[off] = e8m0{st.codes[i]}.value();
          else
            sd.data[off] = st.codes[i];
        });
      });
}

/**
 * MX codes: the element codes of `op(x, y)` (one per byte, in the OCP bit
 * layout: sign, exponent, mantissa from the top of the format's 8, 6 or 4
 * bits; int8 as two's complement; pack FP4 codes two to a byte with
 * lowbit::pack) and each block's E8M0 scale byte. `codes` has x's shape
 * (uint8; int8 also for the int8 format), `scales` op.scales_shape(x)
 * (uint8). Elements of a NaN block (scale byte 255) get code 0: the scale
 * alone makes them NaN. `dequantize(op, codes, scales, y)` gives op(x, y)
 * bit for bit.
 * @throws lowbit::error as op(x, y) does, for outputs of the wrong shape or
 *         sharing memory with x or each other. Nothing is written then.
 */
template <semantics S, tensor_arg X, class Codes, class Scales>
void quantize_codes(const mx_quant<S>& op, const X& x, Codes&& codes, Scales&& scales) {
  using C = std::remove_cv_t<detail::element_t<Codes&&>>;
  static_assert(std::is_same_v<C, std::uint8_t> || std::is_same_v<C, std::int8_t>,
                "lowbit: MX element codes are bytes (uint8, or int8 for the int8 format)");
  using Op = mx_quant<S>;
  detail::nd<C> cd = detail::mx_out_nd<C>(std::forward<Codes>(codes));
  detail::nd<std::uint8_t> sd = detail::mx_out_nd<std::uint8_t>(std::forward<Scales>(scales));
  detail::with_mx_state(
      op, x,
      [&](const shape& out) {
        op.check_axis_public(out.rank());
        detail::check_output(Op::name, cd, out, "codes");
        detail::check_output(Op::name, sd, detail::block_shape(out, op.layout_public(out.rank())), "scales",
                             "the block shape");
      },
      [&](const auto& a, const shape& out, const auto& st) {
        if (std::is_same_v<C, std::int8_t> && op.format != mx_element::int8)
          throw error(std::string(Op::name) + ": int8 codes hold the int8 format only; expected uint8 codes for " +
                      std::string(to_string(op.format)));
        detail::check_block_code_memory(Op::name, cd, sd, a.x());
        if (out.count() == 0) return;
        detail::buffer<float> q(out.count());
        detail::nd<float> qd;
        detail::set_row_major(qd, out.rank(), out.begin());
        qd.data = q.data();
        // Stage code: q, the element value, from the same kernel.
        const bool simd = detail::simd_enabled();
        const auto run = [&](const detail::piece<float, 1>& pc) { st.template run<detail::stage::code>(pc, simd); };
        const detail::piece_sink<float, 1> sink{&run, [](const void* o, const detail::piece<float, 1>& pc) {
                                                  (*static_cast<const decltype(run)*>(o))(pc);
                                                }};
        detail::elementwise_blocks<float, 1>(out, a.x(), {}, st.block_values(), qd, st.blocks, sink, op.exec);
        detail::for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) {
          cd.data[off] = static_cast<C>(detail::mx_encode(op.format, q[i]));
        });
        detail::for_each_element(sd, [&](std::size_t i, std::ptrdiff_t off) { sd.data[off] = st.codes[i]; });
      });
}

/**
 * MX codes back: `y = value(code) * 2^se`, each element with its block's
 * scale (255: NaN), bit for bit op(x, y) for the codes of quantize_codes
 * (but +0 for a -0 of MXINT8: an int8 code has no -0).
 * y has the codes' shape; scales op.scales_shape(y).
 * @throws lowbit::error for an axis outside the codes, a code that is not a
 *         pattern of the format (an FP6 byte above 63, an FP4 byte above
 *         15), shapes that do not match, or y sharing memory with the codes
 *         or scales. Nothing is written then.
 */
template <semantics S, class Codes, class Scales, tensor_arg Y>
void dequantize(const mx_quant<S>& op, const Codes& codes, const Scales& scales, Y&& y) {
  using C = std::remove_cv_t<detail::element_t<const Codes&>>;
  static_assert(std::is_same_v<C, std::uint8_t> || std::is_same_v<C, std::int8_t>,
                "lowbit: MX element codes are bytes (uint8, or int8 for the int8 format)");
  using Op = mx_quant<S>;
  const detail::nd<const C> cd = detail::mx_in_nd<C>(codes);
  const detail::nd<const std::uint8_t> sd = detail::mx_in_nd<std::uint8_t>(scales);
  detail::nd<float> yd = detail::output_nd<float>(std::forward<Y>(y));
  op.check_attributes_public();
  if (std::is_same_v<C, std::int8_t> && op.format != mx_element::int8)
    throw error(std::string(Op::name) + ": int8 codes hold the int8 format only; expected uint8 codes for " +
                std::string(to_string(op.format)));
  const shape out = cd.get_shape();
  op.check_axis_public(out.rank());
  const detail::block_layout bl = op.layout_public(out.rank());
  const shape bs = detail::check_block_dequantize(Op::name, cd, sd, yd, bl);
  if (out.count() == 0) return;
  const mx_element_info fi = info(op.format);
  const int limit = 1 << fi.bits;
  detail::for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) {
    const int c = static_cast<int>(static_cast<std::uint8_t>(cd.data[off]));
    if (c >= limit)
      throw error(std::string(Op::name) + ": " + detail::element_name("codes", cd, i) + " = " + std::to_string(c) +
                  " is invalid; expected a " + std::to_string(fi.bits) + "-bit " + std::string(to_string(op.format)) +
                  " code (0 to " + std::to_string(limit - 1) + ")");
  });
  const std::array<float, 256> table = detail::mx_code_values(op.format);
  detail::buffer<float> sv(bs.count());
  detail::for_each_element(sd, [&](std::size_t i, std::ptrdiff_t off) { sv[i] = e8m0{sd.data[off]}.value(); });
  detail::buffer<float> v(out.count());
  detail::for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) {
    v[i] = table[static_cast<std::uint8_t>(cd.data[off])];
  });
  const detail::mx_block_index blk(out, bl);
  detail::for_each_element(yd, [&](std::size_t i, std::ptrdiff_t off) { yd.data[off] = v[i] * sv[blk(i)]; });
}


/**
 * The element codes of quantize_codes packed in the ONNX/OCP convention
 * (lowbit::pack): FP4 two to a byte (packings::fp4_e2m1), FP6 four in three
 * bytes (packings::fp6_e2m3 / fp6_e3m2), FP8 and int8 one per byte, in the
 * row-major order of x's elements. `packed` is a contiguous range of
 * exactly mx_packed_size(op.format, count) bytes; `scales` as for
 * quantize_codes.
 * @throws lowbit::error as quantize_codes does, for packed of another size
 *         or sharing memory with x or the scales. Nothing is written then.
 */
inline std::size_t mx_packed_size(mx_element f, std::size_t count) {
  const int bits = info(f).bits;
  return bits == 8 ? count : packed_size(packed_format{bits, false, "mx"}, count);
}

template <semantics S, tensor_arg X, class Packed, class Scales>
  requires std::ranges::contiguous_range<Packed&> && std::ranges::sized_range<Packed&>
void quantize_packed(const mx_quant<S>& op, const X& x, Packed&& packed, Scales&& scales) {
  using Op = mx_quant<S>;
  static_assert(std::is_same_v<std::ranges::range_reference_t<Packed&>, std::uint8_t&>,
                "lowbit::quantize_packed: packed must be a mutable contiguous range of std::uint8_t");
  const detail::tensor_in<float> xs(x);
  const shape out = xs.get_shape();
  const std::size_t n = out.count(), want = mx_packed_size(op.format, n);
  std::uint8_t* const pb = std::ranges::data(packed);
  if (std::ranges::size(packed) != want)
    throw error(std::string(Op::name) + ": packed has " + std::to_string(std::ranges::size(packed)) +
                " bytes; expected " + std::to_string(want) + " for " + std::to_string(n) + " " +
                std::string(to_string(op.format)) + " codes");
  detail::nd<std::uint8_t> pd;
  const std::size_t flat[1] = {want};
  detail::set_row_major(pd, 1, flat);
  pd.data = pb;
  const detail::mem_tensor pm = detail::mem_of("packed", pd);
  if (!detail::mem_empty(pm)) detail::check_disjoint(Op::name, pm, detail::mem_of("x", xs.d));
  detail::nd<std::uint8_t> sd = detail::mx_out_nd<std::uint8_t>(std::forward<Scales>(scales));
  if (!detail::mem_empty(pm)) detail::check_disjoint(Op::name, pm, detail::mem_of("scales", sd));
  detail::buffer<std::uint8_t> codes(n);
  quantize_codes(op, x, strided_view<std::uint8_t>(codes.data(), out), strided_view<std::uint8_t>(sd.data, sd.get_shape(), std::span<const std::ptrdiff_t>(sd.str.data(), sd.rank)));
  const int bits = info(op.format).bits;
  if (bits == 8) {
    for (std::size_t i = 0; i < n; ++i) pb[i] = codes[i];
  } else {
    pack(packed_format{bits, false, bits == 4 ? "fp4_e2m1" : "fp6"}, std::span<const std::uint8_t>(codes.data(), n),
         std::span<std::uint8_t>(pb, want));
  }
}

/**
 * quantize_packed's bytes back: `y = value(code) * 2^se`, y of any shape
 * whose element count the bytes hold (row-major order), scales its block
 * shape.
 * @throws lowbit::error as dequantize does, for packed of another size or
 *         nonzero padding bits. Nothing is written then.
 */
template <semantics S, class Packed, class Scales, tensor_arg Y>
  requires std::ranges::contiguous_range<const Packed&> && std::ranges::sized_range<const Packed&>
void dequantize_packed(const mx_quant<S>& op, const Packed& packed, const Scales& scales, Y&& y) {
  using Op = mx_quant<S>;
  detail::nd<float> yd = detail::output_nd<float>(std::forward<Y>(y));
  const shape out = yd.get_shape();
  const std::size_t n = out.count(), want = mx_packed_size(op.format, n);
  const std::uint8_t* const pb = std::ranges::data(packed);
  if (std::ranges::size(packed) != want)
    throw error(std::string(Op::name) + ": packed has " + std::to_string(std::ranges::size(packed)) +
                " bytes; expected " + std::to_string(want) + " for " + std::to_string(n) + " " +
                std::string(to_string(op.format)) + " codes");
  detail::buffer<std::uint8_t> codes(n);
  const int bits = info(op.format).bits;
  if (bits == 8) {
    for (std::size_t i = 0; i < n; ++i) codes[i] = pb[i];
  } else {
    unpack(packed_format{bits, false, bits == 4 ? "fp4_e2m1" : "fp6"}, std::span<const std::uint8_t>(pb, want),
           std::span<std::uint8_t>(codes.data(), n));
  }
  // (y may not share memory with packed: checked against the codes' copy by
  // dequantize, and here against the bytes themselves.)
  detail::nd<const std::uint8_t> pd;
  const std::size_t flat[1] = {want};
  detail::set_row_major(pd, 1, flat);
  pd.data = pb;
  const detail::mem_tensor ym = detail::mem_of("y", yd);
  if (!detail::mem_empty(ym) && want != 0) detail::check_disjoint(Op::name, ym, detail::mem_of("packed", pd));
  dequantize(op, strided_view<const std::uint8_t>(codes.data(), out), scales,
             strided_view<float>(yd.data, out, std::span<const std::ptrdiff_t>(yd.str.data(), yd.rank)));
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_MX_QUANT_HPP
