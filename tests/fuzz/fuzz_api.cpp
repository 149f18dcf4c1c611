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
 * widths, minifloat formats and the thread settings; and hostile outputs
 * (issue 17): y with strides from -3 to 3 (often two indices on one
 * element), y in the buffer of x or of a tensor parameter (exactly in
 * place, shifted, partially overlapping, interleaved but disjoint), the
 * codes of quantize_codes over x or a parameter, dequantize's y over the
 * codes or a parameter, codes of every code type in and out of a
 * packing's range, and pack/unpack with the codes and the bytes in one
 * buffer.
 *
 * Invariants checked (a violation calls std::abort(), which libFuzzer
 * reports as a crash):
 * - the only exception that escapes the API is lowbit::error;
 * - when lowbit::error is thrown, the output buffer is untouched, guard zones
 *   included;
 * - on success, nothing outside the output view is written (the guard zones
 *   before and after, and the holes between strided elements, keep their
 *   sentinel);
 * - on success, the same call with the scalar kernels (detail::simd_scope) and one thread succeeds
 *   and writes the same bits (also when the first call used two threads);
 * - an output with two indices on one element, or sharing a byte with an
 *   input and not exactly x, is rejected with the whole buffer untouched;
 *   one disjoint from its inputs in the same buffer, or exactly x (in
 *   place), gives the same result as into a buffer of its own (decided by
 *   a brute-force oracle here, independent of the library's own test);
 * - pack rejects every code outside the packing's range, and accepts the
 *   others; unpack then gives the codes back (in their type, or rejected
 *   if it cannot hold the packing, and in int32).
 * AddressSanitizer and UndefinedBehaviorSanitizer catch the rest.
 */
#include "fuzz_support.hpp"

namespace {

using namespace lowbit_fuzz;

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
  std::vector<const tensor<T>*> ps;
  if (!scalars) ps = {&s.t, &z.t, &b.t};
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
      check_call<T>(in, op, want, want_ok, x, ps, [&](const auto& o, const auto& xv, const auto& P, auto yv) {
        o(xv, pv(P, 0, sv), pv(P, 1, zv), pv(P, 2, bv), yv);
      });
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      // Codes, then their dequantization, which must give the fake output.
      std::vector<std::int16_t> codes(want_ok ? want.count() : pick_extent(in));
      const lowbit::shape cs = want_ok ? want : lowbit::shape{codes.size()};
      const auto quantize = [&](const auto& xv, const auto& P, lowbit::strided_view<std::int16_t> cv) {
        lowbit::quantize_codes(op, xv, pv(P, 0, sv), pv(P, 1, zv), pv(P, 2, bv), cv);
      };
      bool ok = false;
      try {
        quantize(x.cview(), views_of(ps), lowbit::strided_view<std::int16_t>(codes.data(), cs));
        ok = true;
      } catch (const lowbit::error&) {
      }
      const int hostile = check_codes_overlap<T>(in, x, ps, cs, ok, codes, quantize);
      if (!ok || hostile < 0) return;
      if (!want_ok) fail("quantize_codes accepted arguments output_shape rejects");
      std::vector<float> y1(codes.size()), y2(codes.size());
      const auto dequantize = [&](lowbit::strided_view<const std::int16_t> cv, const auto& P,
                                  lowbit::strided_view<float> yv) {
        lowbit::dequantize(op, cv, pv(P, 0, sv), pv(P, 1, zv), pv(P, 2, bv), yv);
      };
      try {
        op(x.cview(), sv, zv, bv, lowbit::strided_view<float>(y1.data(), want));
        dequantize(lowbit::strided_view<const std::int16_t>(codes.data(), want), views_of(ps),
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
      if (hostile == 3) check_dequantize_overlap<T>(in, ps, want, codes, y2, dequantize);
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
  std::vector<const tensor<T>*> ps;
  if (!scalars) ps = {&s.t, &z.t, &ib.t, &os.t, &ob.t};
  with_params<T>(scalars, [&](const auto& sv, const auto& zv, const auto& ibv, const auto& osv, const auto& obv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), sv, zv, ibv, osv, obv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    check_call<T>(in, op, want, want_ok, x, ps, [&](const auto& o, const auto& xv, const auto& P, auto yv) {
      o(xv, pv(P, 0, sv), pv(P, 1, zv), pv(P, 2, ibv), pv(P, 3, osv), pv(P, 4, obv), yv);
    });
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
  std::vector<const tensor<T>*> ps;
  if (!scalars) ps = {&s.t, &z.t, &ib.t, &ob.t};
  with_params<T>(scalars, [&](const auto& sv, const auto& zv, const auto& ibv, const auto& obv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), sv, zv, ibv, obv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    check_call<T>(in, op, want, want_ok, x, ps, [&](const auto& o, const auto& xv, const auto& P, auto yv) {
      o(xv, pv(P, 0, sv), pv(P, 1, zv), pv(P, 2, ibv), pv(P, 3, obv), yv);
    });
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
  std::vector<const tensor<T>*> ps;
  if (!scalars) ps = {&s.t};
  with_params<T>(scalars, [&](const auto& sv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), sv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    check_call<T>(in, op, want, want_ok, x, ps,
                  [&](const auto& o, const auto& xv, const auto& P, auto yv) { o(xv, pv(P, 0, sv), yv); });
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
  std::vector<const tensor<T>*> ps;
  if (!scalars) ps = {&s.t, &e.t, &m.t, &b.t, &v.t};
  with_params<T>(scalars, [&](const auto& sv, const auto& ev, const auto& mv, const auto& bv, const auto& vv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), sv, ev, mv, bv, vv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    check_call<T>(in, op, want, want_ok, x, ps, [&](const auto& o, const auto& xv, const auto& P, auto yv) {
      o(xv, pv(P, 0, sv), pv(P, 1, ev), pv(P, 2, mv), pv(P, 3, bv), pv(P, 4, vv), yv);
    });
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
  std::vector<const tensor<T>*> ps;
  if (!scalars) ps = {&s.t};
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
      check_call<T>(in, mq, want, want_ok, x, ps,
                    [&](const auto& o, const auto& xv, const auto& P, auto yv) { o(xv, pv(P, 0, sv), yv); });
      return;
    }
    // Codes (uint16), then back: the fake output, bit for bit.
    if (!want_ok) return;
    std::vector<std::uint16_t> c(want.count());
    const auto quantize = [&](const auto& xv, const auto& P, lowbit::strided_view<std::uint16_t> cv) {
      lowbit::quantize_codes(mq, xv, pv(P, 0, sv), cv);
    };
    bool ok = false;
    try {
      quantize(x.cview(), views_of(ps), lowbit::strided_view<std::uint16_t>(c.data(), want));
      ok = true;
    } catch (const lowbit::error&) {
    }
    const int hostile = check_codes_overlap<T>(in, x, ps, want, ok, c, quantize);
    if (!ok || hostile < 0) return;
    std::vector<float> y1(c.size()), y2(c.size());
    const auto dequantize = [&](lowbit::strided_view<const std::uint16_t> cv, const auto& P,
                                lowbit::strided_view<float> yv) { lowbit::dequantize(mq, cv, pv(P, 0, sv), yv); };
    try {
      mq(x.cview(), sv, lowbit::strided_view<float>(y1.data(), want));
      dequantize(lowbit::strided_view<const std::uint16_t>(c.data(), want), views_of(ps),
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
    if (hostile == 3) check_dequantize_overlap<T>(in, ps, want, c, y2, dequantize);
  }, s);
}

/// A code for packing range lo..hi: `how` 0 any value of C, 1 -3 to 3 (as
/// C: 253 to 255 in uint8), 2 in range, 3 mostly in range, else just
/// outside it or a value that wraps into it as a byte (248, 255, 65528, ...).
template <class C>
C pick_code(FuzzedDataProvider& in, int how, long long lo, long long hi) {
  if (how == 0) return in.ConsumeIntegral<C>();
  if (how == 1) return static_cast<C>(in.ConsumeIntegralInRange<int>(-3, 3));
  const std::uint8_t k = how == 2 ? 0 : in.ConsumeIntegral<std::uint8_t>();
  if (k < 128) return static_cast<C>(in.ConsumeIntegralInRange<long long>(lo, hi));
  static constexpr long long edge[] = {248,   255,   254,   252,    128,    127,        -128,        -1,
                                       -2,    -8,    -9,    8,      16,     4,          65528,       65535,
                                       65534, 32768, -32768, 65536, 256,    2147483647, -2147483647 - 1};
  const std::size_t i = k - 128u;
  if (i < 4) return static_cast<C>(i == 0 ? lo - 1 : i == 1 ? hi + 1 : i == 2 ? lo - 2 : hi + 2);
  return static_cast<C>(edge[(i - 4) % std::size(edge)]);  // modulo 2^bits of C
}

/// pack / unpack of codes of type C, with a packed buffer of the right size
/// or not; then, now and then, packed and codes sharing one buffer.
template <class C>
void fuzz_packing(FuzzedDataProvider& in) {
  static constexpr lowbit::packed_format fmts[] = {lowbit::packings::int4, lowbit::packings::uint4,
                                                   lowbit::packings::int2, lowbit::packings::uint2,
                                                   lowbit::packings::uint1, lowbit::packings::fp6_e2m3};
  lowbit::packed_format f = fmts[in.ConsumeIntegralInRange<std::size_t>(0, std::size(fmts) - 1)];
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) f.bits = in.ConsumeIntegralInRange<int>(-1, 9);
  // The packing's range, computed here (f.min() and f.max() are for valid packings).
  const bool valid = (f.bits == 1 || f.bits == 2 || f.bits == 4 || f.bits == 6) &&
                     !((f.bits == 1 || f.bits == 6) && f.is_signed);
  const long long lo = valid && f.is_signed ? -(1ll << (f.bits - 1)) : 0;
  const long long hi = !valid ? 0 : f.is_signed ? (1ll << (f.bits - 1)) - 1 : (1ll << f.bits) - 1;
  const std::size_t n = in.ConsumeIntegralInRange<std::size_t>(0, 70);
  std::vector<C> codes(n);
  const int how = in.ConsumeIntegralInRange<int>(0, 3);
  bool in_range = true;
  for (auto& c : codes) {
    c = pick_code<C>(in, how, lo, hi);
    in_range = in_range && static_cast<long long>(c) >= lo && static_cast<long long>(c) <= hi;
  }
  const std::size_t want = valid ? lowbit::packed_size(f, n) : n;
  std::size_t size = want;
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {
    const std::size_t d = in.ConsumeIntegralInRange<std::size_t>(0, 2);
    if (size != 0 || d != 0) size = size + d - 1;
  }
  std::vector<std::uint8_t> mem(size + 2 * guard, 0xA5);
  const std::vector<std::uint8_t> before = mem;
  std::span<std::uint8_t> packed(mem.data() + guard, size);
  bool ok = false;
  std::string msg;
  try {
    lowbit::pack(f, codes, packed);
    ok = true;
  } catch (const lowbit::error& e) {
    msg = e.what();
    if (mem != before) fail("pack wrote before throwing");
  }
  if (ok && !(valid && in_range && size == want)) {
    std::fprintf(stderr, "lowbit-fuzz: packing %s, bits %d, signed %d, range %lld..%lld, %zu codes:", f.name, f.bits,
                 int(f.is_signed), lo, hi, n);
    for (C c : codes) std::fprintf(stderr, " %lld", static_cast<long long>(c));
    std::fprintf(stderr, "\n");
    fail(!valid ? "pack accepted an invalid packing"
         : size != want ? "pack accepted a packed of the wrong size"
                        : "pack accepted a code outside the packing's range");
  }
  stats.out_of_range += !ok && valid && !in_range && size == want;
  if (!ok && valid && in_range && size == want) {
    std::fprintf(stderr, "lowbit-fuzz: %s\n", msg.c_str());
    fail("pack rejected codes in range");
  }
  // Codes and packed in one buffer (one byte, 0 as in an exhausted input:
  // none): pack (1, 3), unpack (2, 3).
  const int hostile = in.ConsumeIntegral<std::uint8_t>() % 4;
  if (hostile != 0 && only() == only_t::pack) return;
  const region cr{0, sizeof(C), lowbit::shape{n}, {1}};
  if (hostile & 1) {
    placed p = place(in, host{codes.data(), n * sizeof(C), cr}, region{0, 1, lowbit::shape{size}, {1}});
    const std::vector<std::uint8_t> sep = ok ? std::vector<std::uint8_t>(packed.begin(), packed.end())
                                             : std::vector<std::uint8_t>{};
    run_placed<std::uint8_t>("pack's packed in the codes' buffer", p, false, ok, sep, [&] {
      lowbit::pack(f, std::span<const C>(reinterpret_cast<const C*>(p.a.bytes() + p.h.base), n),
                   std::span<std::uint8_t>(p.a.bytes() + p.o.base, size));
    });
  }
  if (!ok) return;
  for (std::size_t i = 0; i < guard; ++i)
    if (mem[i] != 0xA5 || mem[mem.size() - 1 - i] != 0xA5) fail("pack wrote outside packed");
  // Back into C, which cannot hold a signed packing if it is unsigned.
  const bool holds = !(f.is_signed && std::is_unsigned_v<C>);
  std::vector<C> back(n + 2 * guard, C(0x5A));
  const std::vector<C> back_before = back;
  std::span<C> out(back.data() + guard, n);
  bool uok = false;
  try {
    lowbit::unpack(f, std::span<const std::uint8_t>(packed), out);
    uok = true;
  } catch (const lowbit::error&) {
    if (back != back_before) fail("unpack wrote before throwing");
  }
  if (uok != holds)
    fail(uok ? "unpack into a code type that cannot hold the packing was accepted" : "unpack rejected pack's output");
  if (uok) {
    for (std::size_t i = 0; i < guard; ++i)
      if (back[i] != C(0x5A) || back[back.size() - 1 - i] != C(0x5A)) fail("unpack wrote outside codes");
    if (!std::equal(codes.begin(), codes.end(), out.begin())) fail("unpack(pack(codes)) != codes");
  }
  // The values, whatever C: into int32, which holds every packing.
  std::vector<std::int32_t> wide(n);
  try {
    lowbit::unpack(f, std::span<const std::uint8_t>(packed), wide);
  } catch (const lowbit::error&) {
    fail("unpack into int32 rejected pack's output");
  }
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<long long>(wide[i]) != static_cast<long long>(codes[i])) {
      std::fprintf(stderr, "lowbit-fuzz: packing %s, code %zu: %lld packed, %d unpacked\n", f.name, i,
                   static_cast<long long>(codes[i]), int(wide[i]));
      fail("unpack(pack(codes)) != codes (as int32)");
    }
  ++stats.round_trips;
  if (hostile & 2) {
    placed p = place(in, host{packed.data(), size, region{0, 1, lowbit::shape{size}, {1}}}, cr);
    const std::vector<C> sep = uok ? std::vector<C>(out.begin(), out.end()) : std::vector<C>{};
    run_placed<C>("unpack's codes in packed's buffer", p, false, uok, sep, [&] {
      lowbit::unpack(f, std::span<const std::uint8_t>(p.a.bytes() + p.h.base, size),
                     std::span<C>(reinterpret_cast<C*>(p.a.bytes() + p.o.base), n));
    });
  }
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
  if (only() == only_t::pack ? op < 6 : only() != only_t::all && op >= 6) return 0;
  if (only_op() >= 0 && op != only_op()) return 0;
  const bool exact = in.ConsumeBool();
  const bool dbl = in.ConsumeBool();
  try {
    if (op == 6) {
      dbl ? fuzz_packing<std::int8_t>(in) : fuzz_packing<std::uint8_t>(in);
    } else if (op == 7) {
      // `exact` means nothing to packing: it picks uint16 or int32.
      dbl ? fuzz_packing<std::int16_t>(in) : exact ? fuzz_packing<std::uint16_t>(in) : fuzz_packing<std::int32_t>(in);
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
