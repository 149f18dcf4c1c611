// SPDX-License-Identifier: Apache-2.0
/**
 * @file fuzz_blocks.cpp
 * libFuzzer target for lowbit's block formats (docs/fuzzing.md), the
 * companion of fuzz_api.cpp and built from the same pieces
 * (fuzz_support.hpp).
 *
 * The input bytes choose an operator (mx_quant, nvfp4_quant, or
 * group_int_quant on float or double), the semantics, the attributes (as
 * fields, in and out of range, and as strings through
 * lowbit::set_attribute: the block formats' names and values, and
 * garbage), block and group sizes (1 to 33, 0 and SIZE_MAX), axes from -7
 * to 6, NVFP4's per-tensor scale (any float, or nvfp4_tensor_scale(x)),
 * shapes of rank 0 to 6, strided views, values of every bit pattern, the
 * thread settings, and what to call: the operator, the codes
 * (quantize_codes and dequantize, uint8 or int8 codes), MX's packed bytes
 * (quantize_packed and dequantize_packed), or group_params.
 *
 * Invariants checked (a violation calls std::abort(), which libFuzzer
 * reports as a crash):
 * - the operator: as in fuzz_api.cpp (check_call): only lowbit::error
 *   escapes, and nothing is written when it is thrown; on success nothing
 *   outside y is written and the scalar kernels on one thread give the same
 *   bits; y placed in x's buffer or in a parameter's (in place, shifted,
 *   interleaved, partial) is accepted or rejected as a brute-force oracle
 *   says, and when accepted gives the bits of a y of its own;
 * - the codes, the scales and group_params' outputs placed in x's buffer,
 *   and dequantize's y in the codes' buffer: the same;
 * - dequantize(quantize_codes(x)) and dequantize_packed(quantize_packed(x))
 *   give op(x) bit for bit (a NaN equals any NaN; MXINT8 gives +0 for -0,
 *   an int8 code having no -0), and quantize_packed gives quantize_codes'
 *   scales;
 * - a call accepted in one form is accepted in the others (the operator,
 *   its codes, its packed bytes).
 * AddressSanitizer and UndefinedBehaviorSanitizer catch the rest.
 */
#include "fuzz_support.hpp"

namespace {

using namespace lowbit_fuzz;

constexpr const char* block_attribute_names[] = {"elem_format", "block_size", "axis", "rounding", "rounding_mode",
                                                 "scale_bits", "shared_exp_method", "scale_rule",
                                                 "flush_fp32_subnorms", "seed", "random_bits", "index_offset",
                                                 "group_size", "signed", "narrow", ""};
constexpr const char* block_attribute_values[] = {"0", "1", "2", "3", "16", "32", "-1", "-2", "8", "9",
                                                  "fp8_e4m3", "fp8_e5m2", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1",
                                                  "int8", "fp7", "nearest", "even", "floor", "dither", "ceil",
                                                  "round_up", "max", "true", "false", "ROUND", "HALF_UP",
                                                  "STOCHASTIC", "", "18446744073709551615"};

std::size_t pick_block(FuzzedDataProvider& in) {
  static constexpr std::size_t sizes[] = {1, 2, 3, 4, 5, 16, 32, 0, 7, 33, SIZE_MAX};
  return sizes[in.ConsumeIntegralInRange<std::size_t>(0, std::size(sizes) - 1)];
}

template <class T>
lowbit::strided_view<T> row_view(std::vector<T>& v, const lowbit::shape& s) {
  return lowbit::strided_view<T>(v.data(), s);
}
template <class T>
lowbit::strided_view<const T> row_cview(const std::vector<T>& v, const lowbit::shape& s) {
  return lowbit::strided_view<const T>(v.data(), s);
}

/// `back` (a dequantization) against `fake` (the operator's y): every bit,
/// except that a NaN equals any NaN, and with `signless_zero` (MXINT8: an
/// int8 code has no -0, docs/semantics.md) a zero equals either zero.
void check_round_trip(const char* what, const std::vector<float>& fake, const std::vector<float>& back,
                      bool signless_zero = false) {
  for (std::size_t i = 0; i < fake.size(); ++i)
    if (!same_result(fake[i], back[i]) && !(signless_zero && fake[i] == 0.0f && back[i] == 0.0f)) {
      std::fprintf(stderr, "element %zu: the operator %a, %s %a\n", i, double(fake[i]), what, double(back[i]));
      fail("a dequantization differs from the operator's output");
    }
}

/// The codes and scales of a block format (`quantize(x view, codes view,
/// scales view)`), the hostile placements of either in x's buffer, the
/// round trip through `dequantize(codes view, scales view, y view)` against
/// `fake` (the operator's y; `signless_zero`: check_round_trip), and
/// dequantize's y in the codes' buffer. Returns whether quantize accepted
/// x (`codes` and `scales` then hold what it wrote).
template <class C, class Quantize, class Dequantize>
bool check_block_codes(FuzzedDataProvider& in, const char* op_name, const tensor<float>& x, const lowbit::shape& bs,
                       bool fake_ok, const std::vector<float>& fake, std::vector<C>& codes,
                       std::vector<std::uint8_t>& scales, bool signless_zero, Quantize&& quantize,
                       Dequantize&& dequantize) {
  const lowbit::shape& xs = x.shp;
  codes.assign(xs.count(), C(0));
  scales.assign(bs.count(), 0);
  bool ok = false;
  try {
    quantize(x.cview(), row_view(codes, xs), row_view(scales, bs));
    ok = true;
  } catch (const lowbit::error&) {
  }
  // 1: the codes in x's buffer, 2: the scales there, 3: dequantize's y in
  // the codes' buffer (after the round trip).
  const int hostile = in.ConsumeIntegral<std::uint8_t>() % 4;
  if (hostile == 1 && only() != only_t::self) {
    placed p = place(in, host_of(x), region{0, sizeof(C), xs, row_major(xs)});
    const std::string what = std::string(op_name) + ": codes in x's buffer";
    run_placed<C>(what.c_str(), p, false, ok, codes, [&] {
      std::vector<std::uint8_t> own(bs.count());
      quantize(view_at<const float>(p.a, p.h), view_at<C>(p.a, p.o), row_view(own, bs));
    });
  } else if (hostile == 2 && only() != only_t::self) {
    placed p = place(in, host_of(x), region{0, 1, bs, row_major(bs)});
    const std::string what = std::string(op_name) + ": scales in x's buffer";
    run_placed<std::uint8_t>(what.c_str(), p, false, ok, scales, [&] {
      std::vector<C> own(xs.count());
      quantize(view_at<const float>(p.a, p.h), row_view(own, xs), view_at<std::uint8_t>(p.a, p.o));
    });
  }
  if (ok != fake_ok) fail(ok ? "quantize_codes accepted what the operator rejected"
                             : "quantize_codes rejected what the operator accepted");
  if (!ok) return false;
  std::vector<float> back(xs.count());
  try {
    dequantize(row_cview(codes, xs), row_cview(scales, bs), row_view(back, xs));
  } catch (const lowbit::error&) {
    fail("dequantize rejected the codes of quantize_codes");
  }
  check_round_trip("dequantize(quantize_codes(x))", fake, back, signless_zero);
  if (hostile == 3 && only() != only_t::self)
    check_dequantize_overlap<float>(in, {}, xs, codes, back,
                                    [&](lowbit::strided_view<const C> cv, const auto&, lowbit::strided_view<float> yv) {
                                      dequantize(cv, row_cview(scales, bs), yv);
                                    });
  return true;
}

/// The operator's y for x in a buffer of its own (`call(y view)`), into
/// `fake`; and x's block shape, into `bs` ([1] when the operator rejects the
/// call). Returns whether the operator accepted it.
template <class Op, class Call>
bool fake_and_blocks(const char* name, const Op& op, const tensor<float>& x, Call&& call, std::vector<float>& fake,
                     lowbit::shape& bs) {
  fake.assign(x.shp.count(), 0.0f);
  bool ok = false;
  try {
    call(row_view(fake, x.shp));
    ok = true;
  } catch (const lowbit::error&) {
  }
  try {
    bs = op.scales_shape(x.cview());
  } catch (const lowbit::error&) {
    if (ok) fail((std::string(name) + " accepted x, scales_shape rejected it").c_str());
    bs = lowbit::shape{1};
  }
  return ok;
}

template <semantics S>
void fuzz_mx(FuzzedDataProvider& in) {
  lowbit::mx_quant<S> op;
  op.format = static_cast<lowbit::mx_element>(in.ConsumeIntegralInRange<int>(0, 6));  // 6: not a format
  op.block_size = pick_block(in);
  op.axis = in.ConsumeIntegralInRange<std::ptrdiff_t>(-7, 6);
  op.rounding = pick_rounding(in);
  op.scale_rule = static_cast<lowbit::mx_scale_rule>(in.ConsumeIntegralInRange<int>(0, 4));
  op.scale_bits = in.ConsumeIntegralInRange<int>(0, 9);
  op.flush_fp32_subnorms = in.ConsumeBool();
  fuzz_attributes(in, op, block_attribute_names, block_attribute_values);
  pick_exec(in, op.exec);
  const tensor<float> x = make_input<float>(in, pick_shape(in));
  lowbit::shape want;
  bool want_ok = true;
  try {
    want = op.output_shape(x.cview());
  } catch (const lowbit::error&) {
    want_ok = false;
  }
  if (in.ConsumeIntegralInRange<int>(0, 2) == 0) {
    check_call<float>(in, op, want, want_ok, x, {},
                      [](const auto& o, const auto& xv, const auto&, auto yv) { o(xv, yv); });
    return;
  }
  // The codes: the operator's own y first (in a buffer of its own).
  std::vector<float> fake;
  lowbit::shape bs;
  const bool fake_ok = fake_and_blocks("mx_quant", op, x, [&](auto yv) { op(x.cview(), yv); }, fake, bs);
  std::vector<std::uint8_t> scales;
  const auto dequantize = [&](const auto& cv, const auto& sv, lowbit::strided_view<float> yv) {
    lowbit::dequantize(op, cv, sv, yv);
  };
  if (op.format == lowbit::mx_element::int8 && in.ConsumeBool()) {
    std::vector<std::int8_t> codes;
    check_block_codes<std::int8_t>(in, "mx_quant", x, bs, fake_ok, fake, codes, scales, true,
                                   [&](const auto& xv, auto cv, auto sv) { lowbit::quantize_codes(op, xv, cv, sv); },
                                   dequantize);
    return;
  }
  std::vector<std::uint8_t> codes;
  const bool int8 = op.format == lowbit::mx_element::int8;
  if (!check_block_codes<std::uint8_t>(in, "mx_quant", x, bs, fake_ok, fake, codes, scales, int8,
                                       [&](const auto& xv, auto cv, auto sv) {
                                         lowbit::quantize_codes(op, xv, cv, sv);
                                       },
                                       dequantize))
    return;
  // The packed bytes: the same scales, and op(x) back.
  std::vector<std::uint8_t> packed(lowbit::mx_packed_size(op.format, x.shp.count())), scales2(bs.count());
  std::vector<float> back(x.shp.count());
  try {
    lowbit::quantize_packed(op, x.cview(), packed, row_view(scales2, bs));
    lowbit::dequantize_packed(op, packed, row_cview(scales2, bs), row_view(back, x.shp));
  } catch (const lowbit::error&) {
    fail("quantize_packed or dequantize_packed rejected what quantize_codes accepted");
  }
  if (scales2 != scales) fail("quantize_packed's scales differ from quantize_codes'");
  check_round_trip("dequantize_packed(quantize_packed(x))", fake, back, int8);
}

template <semantics S>
void fuzz_nvfp4(FuzzedDataProvider& in) {
  lowbit::nvfp4_quant<S> op;
  op.block_size = pick_block(in);
  op.axis = in.ConsumeIntegralInRange<std::ptrdiff_t>(-7, 6);
  fuzz_attributes(in, op, block_attribute_names, block_attribute_values);
  pick_exec(in, op.exec);
  const tensor<float> x = make_input<float>(in, pick_shape(in));
  // The per-tensor scale: 1, x's usual one, or any float.
  const int ts_kind = in.ConsumeIntegralInRange<int>(0, 2);
  const float ts = ts_kind == 0 ? 1.0f : ts_kind == 1 ? lowbit::nvfp4_tensor_scale(x.cview()) : pick_value<float>(in);
  if (in.ConsumeIntegralInRange<int>(0, 2) == 0) {
    check_call<float>(in, op, x.shp, true, x, {},
                      [ts](const auto& o, const auto& xv, const auto&, auto yv) { o(xv, ts, yv); });
    return;
  }
  std::vector<float> fake;
  lowbit::shape bs;
  const bool fake_ok = fake_and_blocks("nvfp4_quant", op, x, [&](auto yv) { op(x.cview(), ts, yv); }, fake, bs);
  std::vector<std::uint8_t> codes, scales;
  check_block_codes<std::uint8_t>(
      in, "nvfp4_quant", x, bs, fake_ok, fake, codes, scales, false,
      [&](const auto& xv, auto cv, auto sv) { lowbit::quantize_codes(op, xv, ts, cv, sv); },
      [&](const auto& cv, const auto& sv, lowbit::strided_view<float> yv) { lowbit::dequantize(op, cv, sv, ts, yv); });
}

template <semantics S, class T>
void fuzz_group(FuzzedDataProvider& in) {
  lowbit::group_int_quant<S> op;
  op.is_signed = in.ConsumeBool();
  op.narrow = in.ConsumeBool();
  op.rounding = pick_rounding(in);
  op.group_size = pick_block(in);
  op.axis = in.ConsumeIntegralInRange<int>(-7, 6);
  fuzz_attributes(in, op, block_attribute_names, block_attribute_values);
  pick_exec(in, op.exec);
  const tensor<T> x = make_input<T>(in, pick_shape(in));
  // The group shape (mostly), or a random one.
  lowbit::shape gs;
  bool gs_ok = true;
  try {
    gs = op.group_shape(x.shp);
  } catch (const lowbit::error&) {
    gs_ok = false;
  }
  const auto group_or_random = [&] { return gs_ok && in.ConsumeIntegralInRange<int>(0, 7) != 0 ? gs : pick_shape(in); };
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    // group_params, its outputs in buffers of their own, then one in x's.
    const int bits = in.ConsumeIntegralInRange<int>(-1, 34);
    const auto mode = static_cast<lowbit::group_params_mode>(in.ConsumeIntegralInRange<int>(0, 3));
    const lowbit::shape ss = group_or_random(), zs = group_or_random();
    std::vector<T> sc(ss.count()), zp(zs.count());
    const auto params = [&](const auto& xv, auto sv, auto zv) {
      lowbit::group_params(xv, op.axis, op.group_size, bits, mode, sv, zv);
    };
    bool ok = false;
    try {
      params(x.cview(), row_view(sc, ss), row_view(zp, zs));
      ok = true;
    } catch (const lowbit::error&) {
    }
    if (only() == only_t::self || in.ConsumeBool()) return;
    const bool scales_there = in.ConsumeBool();
    const lowbit::shape& os = scales_there ? ss : zs;
    placed p = place(in, host_of(x), region{0, sizeof(T), os, row_major(os)});
    run_placed<T>(scales_there ? "group_params' scales in x's buffer" : "group_params' zeropts in x's buffer", p,
                  false, ok, scales_there ? sc : zp, [&] {
                    std::vector<T> own((scales_there ? zs : ss).count());
                    if (scales_there)
                      params(view_at<const T>(p.a, p.h), view_at<T>(p.a, p.o), row_view(own, zs));
                    else
                      params(view_at<const T>(p.a, p.h), row_view(own, ss), view_at<T>(p.a, p.o));
                  });
    return;
  }
  const tensor<T> s = make_input<T>(in, group_or_random());
  const tensor<T> z = make_input<T>(in, group_or_random());
  const bool scalar_bits = in.ConsumeBool();
  param<T> b = make_param<T>(in, x.shp, scalar_bits, true);
  std::vector<const tensor<T>*> ps{&s, &z};
  if (!scalar_bits) ps.push_back(&b.t);
  with_params<T>(scalar_bits, [&](const auto& bv) {
    lowbit::shape want;
    bool want_ok = true;
    try {
      want = op.output_shape(x.cview(), s.cview(), z.cview(), bv);
    } catch (const lowbit::error&) {
      want_ok = false;
    }
    check_call<T>(in, op, want, want_ok, x, ps, [&](const auto& o, const auto& xv, const auto& P, auto yv) {
      o(xv, P[0], P[1], pv(P, 2, bv), yv);
    });
  }, b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const int op = in.ConsumeIntegralInRange<int>(0, 3);
  if (only_op() >= 0 && op != only_op()) return 0;
  const bool exact = in.ConsumeBool();
  try {
    switch (op) {
      case 0: exact ? fuzz_mx<semantics::exact>(in) : fuzz_mx<semantics::reference>(in); break;
      case 1: exact ? fuzz_nvfp4<semantics::exact>(in) : fuzz_nvfp4<semantics::reference>(in); break;
      case 2: exact ? fuzz_group<semantics::exact, float>(in) : fuzz_group<semantics::reference, float>(in); break;
      default: exact ? fuzz_group<semantics::exact, double>(in) : fuzz_group<semantics::reference, double>(in); break;
    }
  } catch (const lowbit::error&) {
    // The documented exception, from a call not wrapped above (a view
    // constructor, output_shape): fine.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lowbit-fuzz-blocks: unexpected exception: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "lowbit-fuzz-blocks: unexpected non-standard exception\n");
    std::abort();
  }
  return 0;
}
