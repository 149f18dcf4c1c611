// SPDX-License-Identifier: Apache-2.0
/**
 * @file fuzz_api.cpp
 * libFuzzer target for lowbit's public API (docs/fuzzing.md).
 *
 * The input bytes choose an operator (int_quant, trunc, trunc_v1,
 * bipolar_quant, float_quant, minifloat_quant, the codes API and the
 * packing API), the semantics, the element type, the attributes (as enum
 * values, including invalid ones, and as strings through
 * lowbit::set_attribute, including garbage), shapes of rank 0 to 6 with
 * small extents (0 and 1 often), strided views (positive, negative and zero
 * strides), broadcast parameter shapes (per tensor, per channel, or random,
 * which mostly do not broadcast), float values (every bit pattern), bit
 * widths, minifloat formats and the thread settings.
 *
 * Invariants checked (a violation calls std::abort(), which libFuzzer
 * reports as a crash):
 * - the only exception that escapes the API is lowbit::error;
 * - when lowbit::error is thrown, the output buffer is untouched, guard zones
 *   included;
 * - on success, nothing outside the output view is written (the guard zones
 *   before and after, and the holes between strided elements, keep their
 *   sentinel);
 * - on success, the same call with use_simd = false and one thread succeeds
 *   and writes the same bits (also when the first call used two threads);
 * - pack then unpack gives the codes back.
 * AddressSanitizer and UndefinedBehaviorSanitizer catch the rest.
 */
#include <lowbit/lowbit.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

namespace {

using lowbit::semantics;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "lowbit-fuzz: invariant violated: %s\n", what);
  std::abort();
}

/// The same bits, except that NaN equals NaN: a NaN's sign and payload are
/// unspecified (docs/semantics.md), so SIMD and scalar code may differ there.
template <class T>
bool same_result(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}

// Guard elements before and after every buffer.
constexpr std::size_t guard = 8;
// At most this many elements in a tensor (keeps an input fast).
constexpr std::size_t max_elems = 2048;

/// A float or double from the bytes: every bit pattern, or one of the
/// values that matter (signed zeros, infinities, NaN, subnormals, ties).
template <class T>
T pick_value(FuzzedDataProvider& in) {
  const std::uint8_t k = in.ConsumeIntegral<std::uint8_t>();
  if (k < 64) {
    if constexpr (std::is_same_v<T, float>)
      return std::bit_cast<float>(in.ConsumeIntegral<std::uint32_t>());
    else
      return std::bit_cast<double>(in.ConsumeIntegral<std::uint64_t>());
  }
  if (k < 160) return static_cast<T>(static_cast<int>(k) - 112) / T(4);  // -12 .. 11.75 in quarters
  static constexpr double table[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 7.5, 448.0, 57344.0, 0.3,
                                     1e-45, 1.17549435e-38, 3.4028234663852886e38, 1e30, 4.9e-324,
                                     2147483648.0, 16777217.0, 0.1, 255.5};
  const std::size_t i = k - 160u;
  if (i < std::size(table)) return static_cast<T>(table[i]);
  switch (k % 4) {
    case 0: return std::numeric_limits<T>::infinity();
    case 1: return -std::numeric_limits<T>::infinity();
    case 2: return std::numeric_limits<T>::quiet_NaN();
    default: return -std::numeric_limits<T>::quiet_NaN();
  }
}

/// A bit width: mostly valid, sometimes 0, negative, fractional, NaN, huge.
template <class T>
T pick_bitwidth(FuzzedDataProvider& in) {
  const std::uint8_t k = in.ConsumeIntegral<std::uint8_t>();
  if (k < 200) return static_cast<T>(k % 34);  // 0 .. 33
  return pick_value<T>(in);
}

/// A tensor in a buffer with guard zones: shape, strides and the offset of
/// element [0, ..., 0] in `mem`.
template <class T>
struct tensor {
  lowbit::shape shp;
  std::vector<std::ptrdiff_t> str;
  std::vector<T> mem;
  std::ptrdiff_t origin = 0;
  bool distinct = true;  // no two elements share a memory location

  lowbit::strided_view<T> view() { return lowbit::strided_view<T>(mem.data() + origin, shp, str); }
  lowbit::strided_view<const T> cview() const {
    return lowbit::strided_view<const T>(mem.data() + origin, shp, str);
  }
  /// Offsets (from mem.data()) of every element, row-major.
  std::vector<std::ptrdiff_t> offsets() const {
    std::vector<std::ptrdiff_t> o;
    const std::size_t n = shp.count();
    std::array<std::size_t, lowbit::max_rank> idx{};
    for (std::size_t f = 0; f < n; ++f) {
      std::ptrdiff_t off = origin;
      for (std::size_t r = 0; r < shp.rank(); ++r) off += static_cast<std::ptrdiff_t>(idx[r]) * str[r];
      o.push_back(off);
      for (std::size_t r = shp.rank(); r-- > 0;) {
        if (++idx[r] < shp[r]) break;
        idx[r] = 0;
      }
    }
    return o;
  }
};

std::size_t pick_extent(FuzzedDataProvider& in) {
  static constexpr std::size_t ext[] = {1, 1, 2, 3, 0, 1, 4, 5, 2, 7, 16, 33};
  return ext[in.ConsumeIntegralInRange<std::size_t>(0, std::size(ext) - 1)];
}

/// A random shape of rank 0 to 6, at most max_elems elements.
lowbit::shape pick_shape(FuzzedDataProvider& in) {
  const std::size_t rank = in.ConsumeIntegralInRange<std::size_t>(0, 6);
  std::vector<std::size_t> d;
  std::size_t n = 1;
  for (std::size_t r = 0; r < rank; ++r) {
    std::size_t e = pick_extent(in);
    if (n * std::max<std::size_t>(e, 1) > max_elems) e = 1;
    n *= std::max<std::size_t>(e, 1);
    d.push_back(e);
  }
  return lowbit::shape(d.begin(), d.end());
}

/// Lays out a tensor of shape `s`. Layouts: 0 row-major, 1 a permuted and
/// padded layout with random signs (distinct elements), 2 arbitrary strides
/// from -5 to 5 (elements may alias: inputs only).
template <class T>
tensor<T> make_layout(FuzzedDataProvider& in, const lowbit::shape& s, bool allow_alias) {
  tensor<T> t;
  t.shp = s;
  const std::size_t R = s.rank();
  t.str.assign(R, 0);
  const int mode = in.ConsumeIntegralInRange<int>(0, allow_alias ? 2 : 1);
  if (mode == 2) {
    for (std::size_t r = 0; r < R; ++r) t.str[r] = in.ConsumeIntegralInRange<std::ptrdiff_t>(-5, 5);
    t.distinct = false;
  } else {
    std::vector<std::size_t> order(R);
    for (std::size_t r = 0; r < R; ++r) order[r] = R - 1 - r;  // innermost first
    if (mode == 1)
      for (std::size_t r = 0; r + 1 < R; ++r)
        std::swap(order[r], order[in.ConsumeIntegralInRange<std::size_t>(r, R - 1)]);
    std::ptrdiff_t step = 1;
    for (std::size_t r : order) {
      const std::ptrdiff_t pad = mode == 1 ? in.ConsumeIntegralInRange<std::ptrdiff_t>(0, 2) : 0;
      const std::ptrdiff_t st = step + (mode == 1 && s[r] > 1 ? pad : 0);
      const bool neg = mode == 1 && in.ConsumeBool();
      t.str[r] = neg ? -st : st;
      step = st * static_cast<std::ptrdiff_t>(std::max<std::size_t>(s[r], 1));
    }
    // An extent-1 dimension may have any stride, zero included.
    for (std::size_t r = 0; r < R; ++r)
      if (s[r] == 1 && mode == 1 && in.ConsumeBool()) t.str[r] = in.ConsumeIntegralInRange<std::ptrdiff_t>(-3, 3);
  }
  std::ptrdiff_t lo = 0, hi = 0;
  if (s.count() != 0)
    for (std::size_t r = 0; r < R; ++r) {
      const std::ptrdiff_t span = static_cast<std::ptrdiff_t>(s[r] - 1) * t.str[r];
      (span < 0 ? lo : hi) += span;
    }
  t.mem.assign(static_cast<std::size_t>(hi - lo + 1) + 2 * guard, T(0));
  t.origin = static_cast<std::ptrdiff_t>(guard) - lo;
  return t;
}

template <class T>
tensor<T> make_input(FuzzedDataProvider& in, const lowbit::shape& s, bool bitwidth = false) {
  tensor<T> t = make_layout<T>(in, s, true);
  for (std::ptrdiff_t o : t.offsets())
    t.mem[static_cast<std::size_t>(o)] = bitwidth ? pick_bitwidth<T>(in) : pick_value<T>(in);
  return t;
}

/// A parameter's shape for input shape x: per tensor, per channel (one
/// dimension of x, trailing-aligned), x's own shape, or a random one.
lowbit::shape pick_param_shape(FuzzedDataProvider& in, const lowbit::shape& x) {
  switch (in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: return lowbit::shape{};
    case 1: return lowbit::shape{1};
    case 2: {
      if (x.rank() == 0) return lowbit::shape{};
      const std::size_t keep = in.ConsumeIntegralInRange<std::size_t>(0, x.rank() - 1);
      const std::size_t first = in.ConsumeIntegralInRange<std::size_t>(0, keep);
      std::vector<std::size_t> d;
      for (std::size_t r = first; r < x.rank(); ++r) d.push_back(r == keep ? x[r] : 1);
      return lowbit::shape(d.begin(), d.end());
    }
    case 3: return x;
    default: return pick_shape(in);
  }
}

/// A parameter: a plain scalar, or a view of a tensor.
template <class T>
struct param {
  bool is_scalar = true;
  T scalar{};
  tensor<T> t;
};

template <class T>
param<T> make_param(FuzzedDataProvider& in, const lowbit::shape& x, bool scalar, bool bitwidth) {
  param<T> p;
  p.is_scalar = scalar;
  if (scalar)
    p.scalar = bitwidth ? pick_bitwidth<T>(in) : pick_value<T>(in);
  else
    p.t = make_input<T>(in, pick_param_shape(in, x), bitwidth);
  return p;
}

/// Calls f with every parameter as a scalar (all scalars) or as a view.
template <class T, class F, class... P>
void with_params(bool scalars, F&& f, P&... p) {
  if (scalars)
    f(p.scalar...);
  else
    f(p.t.cview()...);
}

/// Random attribute names and values for lowbit::set_attribute.
void fuzz_attributes(FuzzedDataProvider& in, auto& op) {
  static constexpr const char* names[] = {"signed", "narrow", "rounding_mode", "has_inf", "has_infinity",
                                          "has_nan", "has_subnormal", "saturation", "", "Signed"};
  static constexpr const char* values[] = {"0", "1", "true", "false", "ROUND", "round", "Half_Even", "CEIL",
                                           "floor", "UP", "down", "HALF_UP", "half_down", "2", "", "-1"};
  const int n = in.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < n; ++i) {
    std::string name, value;
    const std::uint8_t k = in.ConsumeIntegral<std::uint8_t>();
    name = k < 240 ? names[k % std::size(names)] : in.ConsumeRandomLengthString(16);
    const std::uint8_t v = in.ConsumeIntegral<std::uint8_t>();
    auto before = op;
    try {
      if (v < 200)
        lowbit::set_attribute(op, name, values[v % std::size(values)]);
      else if (v < 230)
        lowbit::set_attribute(op, name, static_cast<int>(in.ConsumeIntegralInRange<int>(-2, 3)));
      else
        lowbit::set_attribute(op, name, in.ConsumeRandomLengthString(16));
    } catch (const lowbit::error&) {
      // op must be unchanged: compare the attribute fields we know.
      if constexpr (requires { op.rounding; })
        if (before.rounding != op.rounding) fail("set_attribute changed the operator and threw");
    }
  }
}

lowbit::rounding_mode pick_rounding(FuzzedDataProvider& in) {
  const std::uint8_t k = in.ConsumeIntegral<std::uint8_t>();
  if (k < 250) return static_cast<lowbit::rounding_mode>(k % 7);
  return static_cast<lowbit::rounding_mode>(static_cast<int>(k) - 245);  // 5..10: some invalid
}

void pick_exec(FuzzedDataProvider& in, lowbit::execution& e) {
  if (in.ConsumeIntegralInRange<int>(0, 3) != 0) return;
  e.threads = 2;
  e.min_elements_per_thread = in.ConsumeIntegralInRange<std::size_t>(1, 64);
  if (in.ConsumeBool()) e.stream_min_elements = in.ConsumeIntegralInRange<std::size_t>(0, 64);
}

/// Runs call(op, y) into a fresh output and checks the invariants against
/// the same call with use_simd = false on one thread.
template <class T, class Op, class Call>
void check_call(FuzzedDataProvider& in, const Op& op, const lowbit::shape& want, bool want_ok, Call&& call) {
  // The output: the right shape (when there is one) or a random one.
  lowbit::shape ys = want;
  bool mutated = !want_ok || in.ConsumeIntegralInRange<int>(0, 15) == 0;
  if (mutated) ys = pick_shape(in);
  tensor<T> y = make_layout<T>(in, ys, false);
  // A zero stride along an extent above 1 must be rejected.
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0)
    for (std::size_t r = 0; r < ys.rank(); ++r)
      if (ys[r] > 1) {
        y.str[r] = 0;
        y.distinct = false;
        mutated = true;
        break;
      }
  const T sentinel = std::bit_cast<T>(std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>(
      std::is_same_v<T, float> ? 0x7fa5a5a5u : 0x7ff5a5a5a5a5a5a5ull));
  std::fill(y.mem.begin(), y.mem.end(), sentinel);
  const std::vector<T> before = y.mem;
  bool ok = false;
  try {
    call(op, y.view());
    ok = true;
  } catch (const lowbit::error&) {
    if (std::memcmp(before.data(), y.mem.data(), before.size() * sizeof(T)) != 0)
      fail("output written before lowbit::error was thrown");
  }
  if (!ok) return;
  if (mutated && !(ys == want)) fail("a y of the wrong shape was accepted");
  // Nothing outside the view written.
  std::vector<char> in_view(y.mem.size(), 0);
  for (std::ptrdiff_t o : y.offsets()) in_view[static_cast<std::size_t>(o)] = 1;
  for (std::size_t i = 0; i < y.mem.size(); ++i)
    if (!in_view[i] && std::memcmp(&y.mem[i], &before[i], sizeof(T)) != 0) fail("write outside the output view");
  // The scalar path on one thread gives the same bits.
  Op ref = op;
  ref.use_simd = false;
  ref.exec = lowbit::execution{};
  tensor<T> y2 = y;
  y2.mem = before;
  try {
    call(ref, y2.view());
  } catch (const lowbit::error&) {
    fail("use_simd = false threw where use_simd = true did not");
  }
  for (std::size_t i = 0; i < y.mem.size(); ++i)
    if (!same_result(y.mem[i], y2.mem[i])) {
      std::fprintf(stderr, "element %zu of %zu: SIMD/threaded %a, scalar %a\n", i, y.mem.size(), double(y.mem[i]),
                   double(y2.mem[i]));
      fail("SIMD (or threaded) result differs from the scalar one");
    }
}

template <semantics S, class T>
void fuzz_int_quant(FuzzedDataProvider& in) {
  lowbit::int_quant<S> op{.is_signed = in.ConsumeBool(), .narrow = in.ConsumeBool(), .rounding = pick_rounding(in)};
  fuzz_attributes(in, op);
  pick_exec(in, op.exec);
  const tensor<T> x = make_input<T>(in, pick_shape(in));
  const bool scalars = in.ConsumeBool();
  auto s = make_param<T>(in, x.shp, scalars, false);
  auto z = make_param<T>(in, x.shp, scalars, false);
  auto b = make_param<T>(in, x.shp, scalars, true);
  const int what = in.ConsumeIntegralInRange<int>(0, 3);
  with_params<T>(scalars, [&](const auto& sv, const auto& zv, const auto& bv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), sv, zv, bv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    if (what != 0 || !std::is_same_v<T, float>) {
      check_call<T>(in, op, want, want_ok,
                    [&](const auto& o, auto yv) { o(x.cview(), sv, zv, bv, yv); });
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      // Codes, then their dequantization, which must give the fake output.
      std::vector<std::int16_t> codes(want_ok ? want.count() : pick_extent(in));
      const lowbit::shape cs = want_ok ? want : lowbit::shape{codes.size()};
      bool ok = false;
      try {
        lowbit::quantize_codes(op, x.cview(), sv, zv, bv, lowbit::strided_view<std::int16_t>(codes.data(), cs));
        ok = true;
      } catch (const lowbit::error&) {
      }
      if (!ok) return;
      if (!want_ok) fail("quantize_codes accepted arguments output_shape rejects");
      std::vector<float> y1(codes.size()), y2(codes.size());
      try {
        op(x.cview(), sv, zv, bv, lowbit::strided_view<float>(y1.data(), want));
        lowbit::dequantize(op, lowbit::strided_view<const std::int16_t>(codes.data(), want), sv, zv, bv,
                           lowbit::strided_view<float>(y2.data(), want));
      } catch (const lowbit::error&) {
        fail("int_quant or dequantize threw after quantize_codes succeeded");
      }
      // Bits, except that an integer code has no sign of zero: a -0 of
      // int_quant comes back as +0, or with a negative scale (reference
      // semantics) a +0 as -0 (docs/codes.md).
      for (std::size_t i = 0; i < y1.size(); ++i)
        if (std::bit_cast<std::uint32_t>(y1[i]) != std::bit_cast<std::uint32_t>(y2[i]) &&
            !(y1[i] == 0.0f && y2[i] == 0.0f)) {
          std::fprintf(stderr, "element %zu: int_quant %a, dequantize %a, code %d\n", i, double(y1[i]),
                       double(y2[i]), int(codes[i]));
          fail("dequantize(quantize_codes(x)) differs from int_quant(x)");
        }
    }
  }, s, z, b);
}

template <semantics S, class T>
void fuzz_trunc(FuzzedDataProvider& in) {
  lowbit::trunc<S> op{.is_signed = in.ConsumeBool(), .narrow = in.ConsumeBool(), .rounding = pick_rounding(in)};
  fuzz_attributes(in, op);
  pick_exec(in, op.exec);
  const tensor<T> x = make_input<T>(in, pick_shape(in));
  const bool scalars = in.ConsumeBool();
  auto s = make_param<T>(in, x.shp, scalars, false);
  auto z = make_param<T>(in, x.shp, scalars, false);
  auto ib = make_param<T>(in, x.shp, scalars, true);
  auto os = make_param<T>(in, x.shp, scalars, false);
  auto ob = make_param<T>(in, x.shp, scalars, true);
  with_params<T>(scalars, [&](const auto& sv, const auto& zv, const auto& ibv, const auto& osv, const auto& obv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), sv, zv, ibv, osv, obv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    check_call<T>(in, op, want, want_ok, [&](const auto& o, auto yv) { o(x.cview(), sv, zv, ibv, osv, obv, yv); });
  }, s, z, ib, os, ob);
}

template <semantics S, class T>
void fuzz_trunc_v1(FuzzedDataProvider& in) {
  lowbit::trunc_v1<S> op{.rounding = pick_rounding(in)};
  fuzz_attributes(in, op);
  pick_exec(in, op.exec);
  const tensor<T> x = make_input<T>(in, pick_shape(in));
  const bool scalars = in.ConsumeBool();
  auto s = make_param<T>(in, x.shp, scalars, false);
  auto z = make_param<T>(in, x.shp, scalars, false);
  auto ib = make_param<T>(in, x.shp, scalars, true);
  auto ob = make_param<T>(in, x.shp, scalars, true);
  with_params<T>(scalars, [&](const auto& sv, const auto& zv, const auto& ibv, const auto& obv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), sv, zv, ibv, obv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    check_call<T>(in, op, want, want_ok, [&](const auto& o, auto yv) { o(x.cview(), sv, zv, ibv, obv, yv); });
  }, s, z, ib, ob);
}

template <semantics S, class T>
void fuzz_bipolar_quant(FuzzedDataProvider& in) {
  lowbit::bipolar_quant<S> op;
  fuzz_attributes(in, op);
  pick_exec(in, op.exec);
  const tensor<T> x = make_input<T>(in, pick_shape(in));
  const bool scalars = in.ConsumeBool();
  auto s = make_param<T>(in, x.shp, scalars, false);
  with_params<T>(scalars, [&](const auto& sv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), sv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    check_call<T>(in, op, want, want_ok, [&](const auto& o, auto yv) { o(x.cview(), sv, yv); });
  }, s);
}

template <semantics S>
void fuzz_float_quant(FuzzedDataProvider& in) {
  using T = float;
  lowbit::float_quant<S> op{.rounding = pick_rounding(in), .has_inf = in.ConsumeBool(), .has_nan = in.ConsumeBool(),
                            .has_subnormal = in.ConsumeBool(), .saturation = in.ConsumeBool()};
  fuzz_attributes(in, op);
  pick_exec(in, op.exec);
  const tensor<T> x = make_input<T>(in, pick_shape(in));
  const bool scalars = in.ConsumeBool();
  auto s = make_param<T>(in, x.shp, scalars, false);
  auto e = make_param<T>(in, x.shp, scalars, true);
  auto m = make_param<T>(in, x.shp, scalars, true);
  auto b = make_param<T>(in, x.shp, scalars, false);
  auto v = make_param<T>(in, x.shp, scalars, false);
  with_params<T>(scalars, [&](const auto& sv, const auto& ev, const auto& mv, const auto& bv, const auto& vv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), sv, ev, mv, bv, vv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    check_call<T>(in, op, want, want_ok, [&](const auto& o, auto yv) { o(x.cview(), sv, ev, mv, bv, vv, yv); });
  }, s, e, m, b, v);
}

lowbit::minifloat_format pick_format(FuzzedDataProvider& in) {
  static constexpr lowbit::minifloat_format presets[] = {lowbit::formats::fp8_e4m3fn, lowbit::formats::fp8_e5m2,
                                                         lowbit::formats::fp6_e2m3, lowbit::formats::fp6_e3m2,
                                                         lowbit::formats::fp4_e2m1};
  lowbit::minifloat_format f = presets[in.ConsumeIntegralInRange<std::size_t>(0, std::size(presets) - 1)];
  if (in.ConsumeBool()) {
    f.exponent_bits = in.ConsumeIntegralInRange<int>(-1, 10);
    f.mantissa_bits = in.ConsumeIntegralInRange<int>(-1, 25);
    f.bias = in.ConsumeIntegralInRange<int>(-20, 140);
    // max_encodable() shifts by exponent_bits: only for a sane layout.
    const bool sane = f.exponent_bits >= 1 && f.mantissa_bits >= 0;
    f.max_value = sane && in.ConsumeBool() ? f.max_encodable() : static_cast<double>(pick_value<float>(in));
    f.has_inf = in.ConsumeBool();
    f.has_nan = in.ConsumeBool();
    f.saturation = in.ConsumeBool();
  }
  return f;
}

template <semantics S>
void fuzz_minifloat(FuzzedDataProvider& in) {
  using T = float;
  lowbit::minifloat_quant<S> mq{.format = pick_format(in), .rounding = pick_rounding(in)};
  pick_exec(in, mq.exec);
  const tensor<T> x = make_input<T>(in, pick_shape(in));
  const bool scalars = in.ConsumeBool();
  auto s = make_param<T>(in, x.shp, scalars, false);
  const bool codes = in.ConsumeBool();
  with_params<T>(scalars, [&](const auto& sv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = mq.output_shape(x.cview(), sv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    if (!codes) {
      check_call<T>(in, mq, want, want_ok, [&](const auto& o, auto yv) { o(x.cview(), sv, yv); });
      return;
    }
    // Codes (uint16), then back: the fake output, bit for bit.
    if (!want_ok) return;
    std::vector<std::uint16_t> c(want.count());
    try {
      lowbit::quantize_codes(mq, x.cview(), sv, lowbit::strided_view<std::uint16_t>(c.data(), want));
    } catch (const lowbit::error&) {
      return;
    }
    std::vector<float> y1(c.size()), y2(c.size());
    try {
      mq(x.cview(), sv, lowbit::strided_view<float>(y1.data(), want));
      lowbit::dequantize(mq, lowbit::strided_view<const std::uint16_t>(c.data(), want), sv,
                         lowbit::strided_view<float>(y2.data(), want));
    } catch (const lowbit::error&) {
      fail("minifloat_quant or dequantize threw after quantize_codes succeeded");
    }
    for (std::size_t i = 0; i < y1.size(); ++i)
      if (!same_result(y1[i], y2[i])) {
        std::fprintf(stderr, "element %zu: minifloat_quant %a (0x%08x), dequantize %a (0x%08x), code 0x%x\n", i,
                     double(y1[i]), std::bit_cast<std::uint32_t>(y1[i]), double(y2[i]),
                     std::bit_cast<std::uint32_t>(y2[i]), unsigned(c[i]));
        const lowbit::minifloat_format& f = mq.format;
        std::fprintf(stderr,
                     "format: e %d m %d bias %d max_value %a has_inf %d has_nan %d saturation %d; rounding %d\n",
                     f.exponent_bits, f.mantissa_bits, f.bias, f.max_value, int(f.has_inf), int(f.has_nan),
                     int(f.saturation), static_cast<int>(mq.rounding));
        fail("dequantize(quantize_codes(x)) differs from minifloat_quant(x)");
      }
  }, s);
}

/// pack / unpack of random codes, with a packed buffer of the right size or not.
template <class C>
void fuzz_packing(FuzzedDataProvider& in) {
  static constexpr lowbit::packed_format fmts[] = {lowbit::packings::int4, lowbit::packings::uint4,
                                                   lowbit::packings::int2, lowbit::packings::uint2,
                                                   lowbit::packings::uint1};
  lowbit::packed_format f = fmts[in.ConsumeIntegralInRange<std::size_t>(0, std::size(fmts) - 1)];
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) f.bits = in.ConsumeIntegralInRange<int>(-1, 9);
  const std::size_t n = in.ConsumeIntegralInRange<std::size_t>(0, 70);
  std::vector<C> codes(n);
  const bool small = in.ConsumeBool();
  for (auto& c : codes)
    c = small ? static_cast<C>(in.ConsumeIntegralInRange<int>(-3, 3)) : in.ConsumeIntegral<C>();
  const bool valid_bits = f.bits == 1 || f.bits == 2 || f.bits == 4;
  std::size_t size = valid_bits ? lowbit::packed_size(f, n) : n;
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) size += in.ConsumeIntegralInRange<std::size_t>(0, 2) - 1;
  std::vector<std::uint8_t> mem(size + 2 * guard, 0xA5);
  const std::vector<std::uint8_t> before = mem;
  std::span<std::uint8_t> packed(mem.data() + guard, size);
  try {
    lowbit::pack(f, codes, packed);
  } catch (const lowbit::error&) {
    if (mem != before) fail("pack wrote before throwing");
    return;
  }
  for (std::size_t i = 0; i < guard; ++i)
    if (mem[i] != 0xA5 || mem[mem.size() - 1 - i] != 0xA5) fail("pack wrote outside packed");
  std::vector<C> back(n + 2 * guard, C(0x5A));
  std::span<C> out(back.data() + guard, n);
  try {
    lowbit::unpack(f, std::span<const std::uint8_t>(packed), out);
  } catch (const lowbit::error&) {
    return;  // e.g. signed codes into an unsigned code type
  }
  for (std::size_t i = 0; i < guard; ++i)
    if (back[i] != C(0x5A) || back[back.size() - 1 - i] != C(0x5A)) fail("unpack wrote outside codes");
  if (!std::equal(codes.begin(), codes.end(), out.begin())) fail("unpack(pack(codes)) != codes");
}

template <semantics S>
void fuzz_one(FuzzedDataProvider& in, int op, bool dbl) {
  switch (op) {
    case 0: dbl ? fuzz_int_quant<S, double>(in) : fuzz_int_quant<S, float>(in); break;
    case 1: dbl ? fuzz_trunc<S, double>(in) : fuzz_trunc<S, float>(in); break;
    case 2: dbl ? fuzz_trunc_v1<S, double>(in) : fuzz_trunc_v1<S, float>(in); break;
    case 3: dbl ? fuzz_bipolar_quant<S, double>(in) : fuzz_bipolar_quant<S, float>(in); break;
    case 4: fuzz_float_quant<S>(in); break;
    case 5: fuzz_minifloat<S>(in); break;
    default: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const int op = in.ConsumeIntegralInRange<int>(0, 7);
  const bool exact = in.ConsumeBool();
  const bool dbl = in.ConsumeBool();
  try {
    if (op == 6) {
      dbl ? fuzz_packing<std::int8_t>(in) : fuzz_packing<std::uint8_t>(in);
    } else if (op == 7) {
      dbl ? fuzz_packing<std::int16_t>(in) : fuzz_packing<std::int32_t>(in);
    } else if (exact) {
      fuzz_one<semantics::exact>(in, op, dbl);
    } else {
      fuzz_one<semantics::reference>(in, op, dbl);
    }
  } catch (const lowbit::error&) {
    // The documented exception, from a call not wrapped above (a view
    // constructor, output_shape): fine.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lowbit-fuzz: unexpected exception: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "lowbit-fuzz: unexpected non-standard exception\n");
    std::abort();
  }
  return 0;
}
