// SPDX-License-Identifier: Apache-2.0
/**
 * @file codes.hpp
 * Integer and minifloat codes: what a deployed network stores instead of
 * the fake-quantized floats, and the way back.
 *
 * - `quantize_codes(op, x, params..., codes)` writes q, the value on the
 *   operator's grid before dequantization, as an integer code (IntQuant,
 *   Trunc, Trunc v1, BipolarQuant) or a minifloat bit pattern
 *   (minifloat_quant).
 * - `dequantize(op, codes, params..., y)` maps codes back with the same
 *   parameters, broadcast the same way.
 *
 * Both run the operator's own kernel, split at q (detail::stage), so
 * `dequantize(quantize_codes(x))` is the fake-quantized output bit for bit,
 * in both semantics and every rounding mode. The rules, code by operator,
 * are in docs/codes.md.
 */
#ifndef LOWBIT_CODES_HPP
#define LOWBIT_CODES_HPP

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "bipolar_quant.hpp"
#include "code_type.hpp"
#include "broadcast.hpp"
#include "config.hpp"
#include "detail/buffer.hpp"
#include "detail/code_checks.hpp"
#include "detail/driver.hpp"
#include "detail/elementwise.hpp"
#include "detail/stage.hpp"
#include "error.hpp"
#include "float_quant.hpp"
#include "int_quant.hpp"
#include "minifloat.hpp"
#include "trunc.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {

/// True when `g` is row-major contiguous (strides of size 1 ignored).
inline bool is_row_major(const nd_geom& g) noexcept {
  std::ptrdiff_t st = 1;
  for (std::size_t r = g.rank; r-- > 0;) {
    if (g.ext[r] != 1 && g.str[r] != st) return false;
    st *= static_cast<std::ptrdiff_t>(g.ext[r]);
  }
  return true;
}

/// The element of `g` that broadcasts to row-major position `flat` of `out`.
template <class T>
T broadcast_value(const nd<const T>& g, const shape& out, std::size_t flat) {
  return g.data[broadcast_offset(g, out, flat)];
}

/// The codes output argument: a view of a code_type.
template <class V>
auto codes_out_nd(V&& v) {
  using E = element_t<V&&>;
  static_assert(!std::is_arithmetic_v<std::remove_cvref_t<V>>, "lowbit: the codes output must be a view");
  static_assert(!std::is_const_v<E>, "lowbit: the codes output view must have a non-const element type");
  static_assert(code_type<std::remove_cv_t<E>>,
                "lowbit: codes must be int8, uint8, int16, uint16 or int32 (lowbit::code_type)");
  nd<std::remove_cv_t<E>> d;
  d.data = fill_nd(v, d);
  return d;
}

/// The codes input argument: a view of a code_type.
template <class V>
auto codes_in_nd(const V& v) {
  using E = std::remove_cv_t<element_t<const V&>>;
  static_assert(!std::is_arithmetic_v<std::remove_cvref_t<V>>, "lowbit: codes must be a view");
  static_assert(code_type<E>, "lowbit: codes must be int8, uint8, int16, uint16 or int32 (lowbit::code_type)");
  nd<const E> d;
  d.data = fill_nd(v, d);
  return d;
}

/// c[i] = C(q[i]) for i < n, q already validated (integers in C's range).
template <class C, class T>
void convert_codes(const T* q, C* c, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<C>(q[i]);
}

/**
 * Checks that the codes output `cd` has the shape `out`, never writes one
 * element twice, and shares no byte with x or a parameter (`ins`): codes
 * are never made in place, their element type is not x's.
 */
template <class C, class T, std::size_t N>
void check_codes_output(const char* op, const nd<C>& cd, const shape& out,
                        const std::array<std::pair<const char*, const nd<const T>*>, N>& ins) {
  check_output(op, cd, out, "codes");
  const mem_tensor cm = mem_of("codes", cd);
  if (mem_empty(cm)) return;
  for (const auto& [name, d] : ins) check_disjoint(op, cm, mem_of(name, *d));
}

/// Checks that the output `y` of a dequantize has the shape `out` and
/// shares no byte with the codes or an input.
template <class T, class C, std::size_t N>
void check_dequantize_output(const char* op, const nd<T>& yd, const shape& out, const nd<const C>& cd,
                             const std::array<std::pair<const char*, const nd<const T>*>, N>& ins) {
  check_output(op, yd, out);
  const mem_tensor ym = mem_of("y", yd);
  if (mem_empty(ym)) return;
  check_disjoint(op, ym, mem_of("codes", cd));
  for (const auto& [name, d] : ins) check_disjoint(op, ym, mem_of(name, *d));
}

/// x and the inputs of a call, named, for check_codes_output.
template <class Op, class T>
std::array<std::pair<const char*, const nd<const T>*>, 1 + Op::inputs::size> named_with_x(const call_args<Op, T>& a) {
  std::array<std::pair<const char*, const nd<const T>*>, 1 + Op::inputs::size> r{};
  r[0] = {"x", a.t[0]};
  const auto in = a.named();
  for (std::size_t i = 0; i < in.size(); ++i) r[1 + i] = in[i];
  return r;
}

/**
 * Checks that every value of `q` (row-major, shape `out`, the values of
 * output `what`) has a code of type C: an integer in C's range (NaN has
 * none). `bits`: q in {-1, +1} is written as 0 / 1. `x` is named with the
 * offending element when it has the output shape (codes), else not (a side
 * output such as block scales).
 */
template <class C, class T>
void check_code_values(const char* op, const char* what, const shape& out, const T* q, const nd<const T>* x,
                       bool bits) {
  // C's range as lo <= q < end, both bounds exact in T: C's minimum is 0 or
  // -2^k, and max + 1 = 2^k (C's maximum itself, 2^31 - 1 for int32, is no
  // float: it would round to 2^31, which int32 cannot hold).
  const T lo = bits ? T(-1) : static_cast<T>(std::numeric_limits<C>::min());
  const T end = bits ? T(2) : std::ldexp(T(1), std::numeric_limits<C>::digits);
  const long long lo_int = bits ? -1 : static_cast<long long>(std::numeric_limits<C>::min());
  const long long hi_int = bits ? 1 : static_cast<long long>(std::numeric_limits<C>::max());
  // Validate: every q inside C's range (NaN fails) and an integer (always,
  // for the grids of these operators; checked only when the range test fails).
  const std::size_t n = out.count();
  int ok = 1;
  for (std::size_t i = 0; i < n; ++i) ok &= static_cast<int>(q[i] >= lo) & static_cast<int>(q[i] < end);
  if (ok) return;
  nd<T> qd;
  set_row_major(qd, out.rank(), out.begin());
  for (std::size_t i = 0; i < n; ++i)
    if (!(q[i] >= lo && q[i] < end && q[i] == std::trunc(q[i])))
      throw error(std::string(op) + ": " + element_name(what, qd, i) + (x != nullptr ? " would be q = " : " would be ") +
                  format_integral(q[i]) +
                  (x != nullptr ? " (x = " + format_value(broadcast_value(*x, out, i)) + ")" : std::string()) +
                  "; expected " +
                  (std::isnan(q[i]) ? std::string("a number (NaN has no integer code)")
                                    : "an integer from " + std::to_string(lo_int) + " to " + std::to_string(hi_int) +
                                          " (" + code_type_name<C>() + " codes" + (bits ? " as bits" : "") + ")"));
}

/// Writes q (row-major, cd's shape), already checked by check_code_values,
/// to the codes cd.
template <class C, class T>
void store_codes(const T* q, nd<C>& cd, bool bits) {
  // Two branch-free loops over local pointers (a store through an 8-bit C
  // may alias anything, so q[i] through a member would be reloaded each
  // time); the compiler vectorizes them at -O3.
  const std::size_t n = cd.get_shape().count();
  if (is_row_major(cd)) {
    C* const c = cd.data;
    if (bits)
      for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<C>(q[i] > T(0));
    else
      convert_codes(q, c, n);
  } else {
    for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) {
      cd.data[off] = bits ? static_cast<C>(q[i] > T(0)) : static_cast<C>(q[i]);
    });
  }
}

/**
 * Checks Op's side outputs `sd` against their shapes `ss`: each has its
 * shape and shares no byte with x, an input, the codes or another side
 * output.
 */
template <class Op, class T, class C, std::size_t NS, class... S>
void check_side_outputs(const call_args<Op, T>& a, const std::array<shape, NS>& ss, const nd<C>& cd,
                        const nd<S>&... sd) {
  using outs = code_outputs_of<Op>;
  const auto ins = named_with_x(a);
  std::array<mem_tensor, NS> mem{};
  std::size_t i = 0;
  ((check_output(Op::name, sd, ss[i], outs::c_str[1 + i], "the shape"), mem[i] = mem_of(outs::c_str[1 + i], sd), ++i),
   ...);
  const mem_tensor cm = mem_of("codes", cd);
  for (std::size_t k = 0; k < NS; ++k) {
    if (mem_empty(mem[k])) continue;
    for (const auto& [name, d] : ins) check_disjoint(Op::name, mem[k], mem_of(name, *d));
    if (!mem_empty(cm)) check_disjoint(Op::name, mem[k], cm);
    for (std::size_t j = 0; j < k; ++j)
      if (!mem_empty(mem[j])) check_disjoint(Op::name, mem[k], mem[j]);
  }
}

/**
 * The codes stage of any operator with integer codes (detail/driver.hpp):
 * validate as the operator does, with the codes (and the side outputs Op
 * declares, `sd`) as its outputs (their shapes, and no byte shared with x,
 * an input or each other), let the operator check the code type
 * (check_codes), run stage `code` into scratch tensors, check that every
 * value of every output has a code, and only then write them all.
 */
template <class Op, class T, class C, class... S>
void quantize_codes_of(const Op& op, const call_args<Op, T>& a, nd<C>& cd, nd<S>&... sd) {
  constexpr std::size_t NS = sizeof...(S);
  static_assert(NS + 1 == code_outputs_of<Op>::size, "lowbit: one view per output of the code stage");
  std::array<shape, NS> ss{};
  const shape out = validate(op, a, "x", [&](const shape& s) {
    check_codes_output(Op::name, cd, s, named_with_x(a));
    if constexpr (NS != 0) {
      ss = protocol_access::side_shapes(op, a, s);
      check_side_outputs(a, ss, cd, sd...);
    }
  });
  const bool bits = protocol_access::check_codes<C, stage::code>(op, a);
  buffer<T> q(out.count());
  nd<T> qd;
  set_row_major(qd, out.rank(), out.begin());
  qd.data = q.data();
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    std::array<buffer<T>, NS> side{buffer<T>(ss[I].count())...};
    execute<stage::code>(op, a, out, qd, [&](const auto& st) { (st.template side<I>(side[I].data()), ...); });
    using outs = code_outputs_of<Op>;
    [[maybe_unused]] const nd<const T>* const no_x = nullptr;  // a side output's values are not x's
    check_code_values<C>(Op::name, "codes", out, q.data(), &a.x(), bits);
    (check_code_values<S>(Op::name, outs::c_str[1 + I], ss[I], side[I].data(), no_x, false), ...);
    store_codes(q.data(), cd, bits);
    (store_codes(side[I].data(), sd, false), ...);
  }(std::make_index_sequence<NS>{});
}

/**
 * The dequantize stage: `a.t[0]` is a placeholder with the codes' geometry
 * (named "codes" in messages), replaced by their values once everything
 * is validated.
 */
template <class Op, class T, class C>
void dequantize_of(const Op& op, call_args<Op, T>& a, const nd<const C>& cd, nd<T>& yd) {
  const shape out = validate(op, a, "codes", [&](const shape& s) {
    check_dequantize_output(Op::name, yd, s, cd, a.named());
  });
  const bool bits = protocol_access::check_codes<C, stage::dequant>(op, a);
  const buffer<T> v = codes_to_values<T>(Op::name, cd, bits);
  const nd<const T> xd = row_major_nd<T>(cd.get_shape(), v.data());
  a.t[0] = &xd;
  execute<stage::dequant>(op, a, out, yd);
}

/// Reads the arguments of a dequantize: codes, the operator's inputs (as
/// T, y's element type), and y; hands them to `f(args, codes, y)`.
template <class Op, class T, class Codes, class Y, class F, class... P>
void read_dequantize_args(F&& f, const Codes& codes, Y&& y, const P&... p) {
  const auto cd = codes_in_nd(codes);
  nd<T> yd = output_nd<T>(std::forward<Y>(y));
  nd<const T> placeholder;
  static_cast<nd_geom&>(placeholder) = cd;
  read_args<Op, T>(
      [&](const call_args<Op, T>& a0) {
        call_args<Op, T> a = a0;
        a.t[0] = &placeholder;
        f(a, cd, yd);
      },
      T(0), p...);
}

/// Codes to lane values (row-major, the codes' shape), for stage dequant.
/// `bits`: 0 -> -1, 1 -> +1, anything else rejected.
template <class T, class C>
buffer<T> codes_to_values(const char* op, const nd<const C>& cd, bool bits) {
  const std::size_t n = cd.get_shape().count();
  buffer<T> v(n);
  bool bad = false;
  if (is_row_major(cd) && !bits) {
    const C* const c = cd.data;
    T* const vp = v.data();
    for (std::size_t i = 0; i < n; ++i) vp[i] = static_cast<T>(c[i]);
  } else {
    for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) {
      const C c = cd.data[off];
      if (bits) {
        bad |= c > C(1) || c < C(0);
        v[i] = c ? T(1) : T(-1);
      } else {
        v[i] = static_cast<T>(c);
      }
    });
  }
  if (bad)
    for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) {
      const C c = cd.data[off];
      if (c > C(1) || c < C(0))
        throw error(std::string(op) + ": " + element_name("codes", cd, i) + " = " +
                    std::to_string(static_cast<long long>(c)) +
                    " is invalid; expected a bit, 0 (for -1) or 1 (for +1)");
    });
  return v;
}

template <class V>
using code_value_t = std::remove_cv_t<element_t<V>>;

// ---- minifloat bit patterns ----

/// Bits of a code: 1 + E + m.
inline int minifloat_bits(const minifloat_format& f) noexcept { return 1 + f.exponent_bits + f.mantissa_bits; }

/**
 * Checks that `f` has a bit layout (1 sign bit, E exponent bits, m mantissa
 * bits, at most `max_bits` in all) whose every finite value is a float32.
 *
 * The values are FloatQuant's: exponent field 0 holds the subnormals
 * k * 2^(1 - bias - m), k < 2^m (with m = 0 only zero: E8M0 with bias 127
 * has no 2^-127, its smallest positive value is 2^-126), field ef >= 1
 * holds (2^m + k) * 2^(ef - bias - m). Reserved patterns: with has_inf the
 * all-ones field is inf (k = 0) and NaN (k != 0), so m >= 1 is needed;
 * else with has_nan the all-ones pattern (field and mantissa) is NaN, which
 * for m = 0 takes the whole all-ones field (E8M0: 0xff is NaN, 2^127 the
 * largest value).
 *
 * Every finite value is a float32 iff the smallest step 2^(1 - bias - m) is
 * at least 2^-149 and the top binade's exponent, ef_top - bias, is at most
 * 127, where ef_top is the largest exponent field with a finite value
 * (2^E - 1, or 2^E - 2 when that field is reserved; for ef_top = 0 the
 * largest subnormal is below 2^(-bias + 1), and the same bound applies).
 * Significands have at most 24 bits (m <= 23), so the range decides. A
 * degenerate format whose only finite value is zero (E1M0 with has_nan) is
 * held to the same bounds.
 */
inline void check_minifloat_layout(const char* op, const minifloat_format& f, int max_bits) {
  auto fail = [&](const std::string& what) {
    throw error(std::string(op) + ": format E" + std::to_string(f.exponent_bits) + "M" +
                std::to_string(f.mantissa_bits) + " bias " + std::to_string(f.bias) + ": " + what);
  };
  if (f.exponent_bits < 1 || f.exponent_bits > 8)
    fail("exponent_bits = " + std::to_string(f.exponent_bits) + " is invalid; expected 1 to 8");
  if (f.mantissa_bits < 0 || f.mantissa_bits > 23)
    fail("mantissa_bits = " + std::to_string(f.mantissa_bits) + " is invalid; expected 0 to 23");
  if (minifloat_bits(f) > max_bits)
    fail("a code has " + std::to_string(minifloat_bits(f)) + " bits; expected at most " +
         std::to_string(max_bits) + " (the code type's)");
  // With has_inf, the all-ones exponent holds inf (mantissa zero) and NaN
  // (any other mantissa): with no mantissa bits there is no NaN pattern.
  if (f.has_inf && f.mantissa_bits == 0)
    fail("has_inf with mantissa_bits = 0 leaves no bit pattern for NaN; expected at least 1 mantissa bit");
  const long long step = 1LL - f.bias - f.mantissa_bits;
  if (step < -149)
    fail("its smallest step 2^(1 - bias - m) = 2^" + std::to_string(step) +
         " is not a float32 value; expected 2^(1 - bias - m) >= 2^-149");
  // The largest exponent field with a finite value: the all-ones field is
  // inf and NaN with has_inf, and only NaN with has_nan and m = 0.
  const bool top_field_reserved = f.has_inf || (f.has_nan && f.mantissa_bits == 0);
  const long long ef_top = (1LL << f.exponent_bits) - 1 - (top_field_reserved ? 1 : 0);
  const long long top = ef_top - f.bias;
  if (top > 127)
    fail("its largest finite values have exponent " + std::to_string(ef_top) + " - bias = " + std::to_string(top) +
         " (2^" + std::to_string(top) + " and above are not float32 values); expected an exponent <= 127");
}

}  // namespace detail

/**
 * The bit pattern of `v` in format `f`: sign, E exponent bits, m mantissa
 * bits, from the top (the OCP layout for the presets: E4M3FN 448 is 0x7e,
 * E5M2 inf is 0x7c). `+-inf` needs `has_inf` (exponent all ones, mantissa
 * zero); NaN needs `has_inf` or `has_nan` (E4M3FN style: all ones) and is
 * written as the all-ones pattern with the sign of v. The values are
 * FloatQuant's (detail::check_minifloat_layout): with no mantissa bits the
 * exponent field 0 holds only zero, so E8M0 with bias 127 and has_nan has
 * +-2^-126 .. +-2^127 in fields 1 .. 254 and NaN in 255 (OCP's unsigned
 * E8M0 scale, whose field 0 is 2^-127, is another layout).
 * @throws lowbit::error if the format's layout has a value that is not a
 *         float32, or if v is not a value of the format (off the grid,
 *         beyond its range, or on a pattern reserved for inf or NaN).
 */
inline std::uint32_t encode_minifloat(const minifloat_format& f, float v) {
  detail::check_minifloat_layout("lowbit::encode_minifloat", f, 32);
  const int E = f.exponent_bits, m = f.mantissa_bits;
  const std::uint32_t emax = (1u << E) - 1, mmax = (1u << m) - 1;
  const std::uint32_t sign = std::signbit(v) ? 1u << (E + m) : 0u;
  auto fail = [&](const char* why) -> std::uint32_t {
    throw error("lowbit::encode_minifloat: v = " + detail::format_value(v) + " " + why + " in format E" +
                std::to_string(E) + "M" + std::to_string(m) + " bias " + std::to_string(f.bias) +
                "; expected a value of the format");
  };
  if (std::isnan(v)) {
    if (!f.has_inf && !f.has_nan) return fail("has no code (the format has no NaN)");
    return sign | (emax << m) | mmax;
  }
  if (std::isinf(v)) {
    if (!f.has_inf) return fail("has no code (the format has no infinities)");
    return sign | (emax << m);
  }
  const double a = std::fabs(static_cast<double>(v));
  if (a == 0.0) return sign;
  int ex;
  (void)std::frexp(a, &ex);
  const int e = std::max(ex - 1, 1 - f.bias);         // exponent of a's binade, or the subnormal one
  const double units = std::ldexp(a, m - e);           // a / 2^(e - m), exact
  if (units != std::floor(units)) return fail("is off the grid");
  const std::uint64_t u = static_cast<std::uint64_t>(units);
  std::uint32_t ef, mf;
  if (ex - 1 < 1 - f.bias) {  // subnormal: u < 2^m
    ef = 0;
    mf = static_cast<std::uint32_t>(u);
  } else {
    const long long biased = static_cast<long long>(e) + f.bias;
    if (biased > static_cast<long long>(emax)) return fail("is beyond the range");
    ef = static_cast<std::uint32_t>(biased);
    mf = static_cast<std::uint32_t>(u - (std::uint64_t(1) << m));
  }
  if (f.has_inf && ef == emax) return fail("falls on a pattern reserved for inf and NaN");
  if (!f.has_inf && f.has_nan && ef == emax && mf == mmax) return fail("falls on the NaN pattern");
  return sign | (ef << m) | mf;
}

/**
 * The value of bit pattern `code` in format `f` (the inverse of
 * encode_minifloat; every NaN pattern gives a quiet NaN with its sign).
 * @throws lowbit::error if code has bits above the format's 1 + E + m.
 */
inline float decode_minifloat(const minifloat_format& f, std::uint32_t code) {
  detail::check_minifloat_layout("lowbit::decode_minifloat", f, 32);
  const int E = f.exponent_bits, m = f.mantissa_bits;
  const int nbits = 1 + E + m;
  if (nbits < 32 && (code >> nbits) != 0)
    throw error("lowbit::decode_minifloat: code = " + std::to_string(code) + " is invalid; expected a " +
                std::to_string(nbits) + "-bit pattern (below " + std::to_string(1ull << nbits) + ")");
  const std::uint32_t emax = (1u << E) - 1, mmax = (1u << m) - 1;
  const bool neg = (code >> (E + m)) & 1u;
  const std::uint32_t ef = (code >> m) & emax, mf = code & mmax;
  float r;
  if (f.has_inf && ef == emax)
    r = mf == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  else if (!f.has_inf && f.has_nan && ef == emax && mf == mmax)
    r = std::numeric_limits<float>::quiet_NaN();
  else if (ef == 0)
    r = static_cast<float>(std::ldexp(static_cast<double>(mf), 1 - f.bias - m));
  else
    r = static_cast<float>(
        std::ldexp(static_cast<double>((std::uint64_t(1) << m) + mf), static_cast<int>(ef) - f.bias - m));
  return neg ? -r : r;
}

// ---- integer codes: IntQuant, Trunc, Trunc v1, BipolarQuant ---------------

namespace detail {
/// Operators whose q are integers: they declare check_codes (driver.hpp).
template <class Op>
concept integer_code_operator = element_operator<Op> && protocol_access::has_codes<Op>;
}  // namespace detail

/**
 * An operator's integer codes: q, the value on the operator's grid before
 * dequantization, as integers of a lowbit::code_type. Called as the
 * operator is, with `codes` (a view of int8, uint8, int16, uint16 or int32
 * with the output shape) in place of y:
 *
 * - IntQuant: `codes = round(clamp(x / scale + zeropt))`, the zero point
 *   included (as ONNX QuantizeLinear). Signed 1-bit is bipolar: codes -1
 *   and +1, or bits 0 and 1 with an unsigned code type.
 * - Trunc (opset 2): q of lowbit::trunc, clamped to the range of
 *   out_bitwidth, before `Y = (q - zeropt / t) * out_scale`.
 * - Trunc v1: q of lowbit::trunc_v1. Trunc v1 does not clamp, so only the
 *   values decide: a q outside the code type's range is an error.
 * - BipolarQuant: -1 and +1 with a signed code type, bits 0 (for -1) and
 *   1 (for +1) with an unsigned one (ready for lowbit::pack with
 *   lowbit::packings::uint1). NaN: -1 in the reference semantics (QONNX),
 *   an error in the exact ones.
 *
 * The codes come from the operator's own kernel, stopped at q, so
 * `dequantize(op, quantize_codes(op, x, ...), ...)` is `op(x, ...)` bit for
 * bit. Minifloat bit patterns: the minifloat_quant overload below.
 *
 * @throws lowbit::error as the operator does; if the clamp range of some bit
 *         width does not fit the code type (uint8 holds up to 8 bits
 *         unsigned; int32 up to 31 bits signed in the reference semantics,
 *         where QONNX's int32 maximum is 2^31, and 32 in the exact ones);
 *         for unsigned codes of a signed IntQuant whose bit width is not 1;
 *         if the codes overlap x or an input; or if some q has no code (NaN
 *         from a NaN x or 0/0, or a q outside the code type's range).
 *         Nothing is written then.
 *
 * **Example**:
 * ```
 * std::vector<float> x{0.26f, -1.3f, 7.9f};
 * std::vector<std::int8_t> c(3);
 * lowbit::int_quant<> q{.is_signed = true};
 * lowbit::quantize_codes(q, x, 0.5f, 0.0f, 4.0f, c);  // c = {1, -3, 7}
 * ```
 */
template <detail::integer_code_operator Op, class X, class... Rest>
  requires(sizeof...(Rest) == Op::inputs::size + detail::code_outputs_of<Op>::size)
void quantize_codes(const Op& op, const X& x, Rest&&... inputs_then_codes) {
  if constexpr (detail::call_types_ok<Op, X, void>()) {
    using T = detail::x_value_t<X>;
    constexpr std::size_t NI = Op::inputs::size, NO = detail::code_outputs_of<Op>::size;
    // The outputs (the codes, then any side outputs) follow the inputs.
    auto all = std::forward_as_tuple(std::forward<Rest>(inputs_then_codes)...);
    [&]<std::size_t... I, std::size_t... O>(std::index_sequence<I...>, std::index_sequence<O...>) {
      auto outs = std::make_tuple(detail::codes_out_nd(std::forward<std::tuple_element_t<NI + O, decltype(all)>>(
          std::get<NI + O>(all)))...);
      detail::read_args<Op, T>(
          [&](const detail::call_args<Op, T>& a) { detail::quantize_codes_of(op, a, std::get<O>(outs)...); }, x,
          std::get<I>(all)...);
    }(std::make_index_sequence<NI>{}, std::make_index_sequence<NO>{});
  }
}

/**
 * Integer codes back to the operator's output, with the same inputs,
 * broadcast the same way (y has the broadcast shape of the codes and the
 * inputs): IntQuant `y = (codes - zeropt) * scale`; Trunc
 * `y = (codes - zeropt / t) * out_scale`; Trunc v1 `y = (codes - zeropt) * scale`;
 * BipolarQuant `y = codes * scale`. Bits (unsigned codes of a signed
 * IntQuant or of BipolarQuant) map 0 to -1 and 1 to +1. Codes are not
 * checked against the bit widths.
 * @throws lowbit::error as the operator does for the inputs and y; if y
 *         overlaps the codes; for bits, a bit width other than 1 (IntQuant)
 *         or a code other than 0 and 1. Nothing is written then.
 */
template <detail::integer_code_operator Op, class Codes, class... Rest>
  requires(sizeof...(Rest) == Op::inputs::size + 1)
void dequantize(const Op& op, const Codes& codes, Rest&&... inputs_then_y) {
  auto&& y = std::get<sizeof...(Rest) - 1>(std::forward_as_tuple(inputs_then_y...));
  using T = std::remove_cv_t<detail::element_t<decltype(y)>>;
  static_assert(std::is_same_v<T, float> || (Op::accepts_double && std::is_same_v<T, double>),
                "lowbit: dequantize writes a float tensor (or a double one, where the operator accepts double)");
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    const auto& in = std::forward_as_tuple(inputs_then_y...);
    detail::read_dequantize_args<Op, T>(
        [&](detail::call_args<Op, T>& a, const auto& cd, detail::nd<T>& yd) { detail::dequantize_of(op, a, cd, yd); },
        codes, std::forward<decltype(y)>(y), std::get<I>(in)...);
  }(std::make_index_sequence<Op::inputs::size>{});
}

// ---- FloatQuant (minifloat formats) -------------------------------------------

/**
 * FloatQuant to minifloat codes: the bit pattern (encode_minifloat) of q,
 * the value of lowbit::minifloat_quant before `Y = q * scale`. An 8-bit
 * format fits uint8 codes (the OCP layout for the presets), up to 16 bits
 * uint16 (E8M0, 9 bits with its sign, needs uint16). Arguments as for
 * minifloat_quant, with `codes` in place of y.
 * @throws lowbit::error as minifloat_quant does; if a code does not fit the
 *         code type or some value of the format is not a float32; if some q
 *         has no code (NaN in a format without NaN, e.g. the MX formats, or
 *         +-inf without infinities). Nothing is written then.
 */
template <semantics S, tensor_arg X, tensor_arg Scale, tensor_arg Codes>
void quantize_codes(const minifloat_quant<S>& mq, const X& x, const Scale& scale, Codes&& codes) {
  using T = detail::x_value_t<X>;
  using C = detail::code_value_t<Codes&&>;
  using Op = float_quant<S>;
  static_assert(std::is_same_v<T, float>, "lowbit: minifloat codes are made from float tensors");
  static_assert(std::is_unsigned_v<C>, "lowbit: minifloat codes are bit patterns: use uint8 or uint16");
  auto cd = detail::codes_out_nd(std::forward<Codes>(codes));
  const minifloat_format& f = mq.format;
  detail::check_minifloat_layout(Op::name, f, std::numeric_limits<C>::digits);
  const Op op = mq.op();
  detail::read_args<Op, T>(
      [&](const detail::call_args<Op, T>& a) {
        const shape out = detail::validate(op, a, "x", [&](const shape& s) {
          detail::check_codes_output(Op::name, cd, s, detail::named_with_x(a));
        });
        detail::buffer<T> q(out.count());
        detail::nd<T> qd;
        detail::set_row_major(qd, out.rank(), out.begin());
        qd.data = q.data();
        detail::execute<detail::stage::code>(op, a, out, qd);
        detail::buffer<C> c(q.size());
        for (std::size_t i = 0; i < q.size(); ++i) {
          try {
            c[i] = static_cast<C>(encode_minifloat(f, q[i]));
          } catch (const error& e) {
            throw error(std::string(Op::name) + ": " + detail::element_name("codes", qd, i) + " (x = " +
                        detail::format_value(detail::broadcast_value(a.x(), out, i)) + "): " + e.what());
          }
        }
        detail::for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) { cd.data[off] = c[i]; });
      },
      x, scale, f.exponent_bits, f.mantissa_bits, f.bias, f.max_value);
}

/// Minifloat codes back: `y = decode_minifloat(codes) * scale`. Codes of a
/// signed code type work too (the format then has at most 7, 15 or 31 bits).
/// @throws lowbit::error for a code that is not a pattern of the format's
///         1 + E + m bits (above it, or negative), for codes whose shape does
///         not broadcast against scale, and as minifloat_quant does.
///         Nothing is written then.
template <semantics S, tensor_arg Codes, tensor_arg Scale, tensor_arg Y>
void dequantize(const minifloat_quant<S>& mq, const Codes& codes, const Scale& scale, Y&& y) {
  using T = std::remove_cv_t<detail::element_t<Y&&>>;
  using C = detail::code_value_t<const Codes&>;
  using Op = float_quant<S>;
  static_assert(std::is_same_v<T, float>, "lowbit: minifloat codes decode to float tensors");
  const minifloat_format& f = mq.format;
  detail::check_minifloat_layout(Op::name, f, std::numeric_limits<C>::digits);
  const Op op = mq.op();
  detail::read_dequantize_args<Op, T>(
      [&](detail::call_args<Op, T>& a, const detail::nd<const C>& cd, detail::nd<T>& yd) {
        const shape out = detail::validate(op, a, "codes", [&](const shape& s) {
          detail::check_dequantize_output(Op::name, yd, s, cd, a.named());
        });
        detail::buffer<T> v(cd.get_shape().count());
        const int nbits = detail::minifloat_bits(f);
        // A code is a bit pattern 0 .. 2^nbits - 1 (nbits <= C's digits: a
        // signed C's negative values are never patterns).
        const long long limit = 1LL << nbits;
        detail::for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) {
          const C c = cd.data[off];
          if (static_cast<long long>(c) < 0 || static_cast<long long>(c) >= limit)
            throw error(std::string(Op::name) + ": " + detail::element_name("codes", cd, i) + " = " +
                        std::to_string(static_cast<long long>(c)) + " is invalid; expected a " +
                        std::to_string(nbits) + "-bit pattern (0 to " + std::to_string(limit - 1) + ")");
          v[i] = decode_minifloat(f, static_cast<std::uint32_t>(c));
        });
        const detail::nd<const T> xd = detail::row_major_nd<T>(cd.get_shape(), v.data());
        a.t[0] = &xd;
        detail::execute<detail::stage::dequant>(op, a, out, yd);
      },
      codes, std::forward<Y>(y), scale, f.exponent_bits, f.mantissa_bits, f.bias, f.max_value);
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_CODES_HPP
