// SPDX-License-Identifier: Apache-2.0
/**
 * @file nvfp4.hpp
 * NVIDIA's NVFP4: FP4 E2M1 elements in blocks of 16, each block with an
 * FP8 E4M3 scale, under an optional float32 per-tensor scale (two-level
 * scaling). The definition, step by step, with its sources, is in
 * docs/semantics.md ("NVFP4").
 */
#ifndef LOWBIT_NVFP4_HPP
#define LOWBIT_NVFP4_HPP

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "attributes.hpp"
#include "broadcast.hpp"
#include "config.hpp"
#include "detail/block.hpp"
#include "detail/buffer.hpp"
#include "detail/divide.hpp"
#include "detail/elementwise.hpp"
#include "detail/simd.hpp"
#include "error.hpp"
#include "mx_quant.hpp"
#include "parallel.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {

/// v rounded to the nearest FP4 E2M1 value, ties to even, for |v| <= 6
/// (NaN stays NaN): the grid {0, 0.5, 1, 1.5, 2, 3, 4, 6} and negatives;
/// the sign of v is kept (-0 and negative values that round to 0 give -0).
template <class T>
T round_e2m1(T v) noexcept {
  const T a = std::fabs(v);
  // The step of a's binade: 0.5 below 2 (the subnormal and first binades), 1 in [2, 4), 2 in [4, 6].
  const T step = a < T(2) ? T(0.5) : a < T(4) ? T(1) : T(2);
  return std::copysign(std::nearbyint(a / step) * step, v);
}

/// v in [2^-6, 448] rounded to the nearest FP8 E4M3 value, ties to even
/// (every such value is normal: steps of 2^(e - 3)).
template <class T>
T round_e4m3_normal(T v) noexcept {
  int e;
  (void)std::frexp(v, &e);  // v = f * 2^e, f in [0.5, 1)
  const T step = std::ldexp(T(1), e - 1 - 3);
  return std::nearbyint(v / step) * step;
}

/// The E4M3 (FN) code of a value of the format (|v| <= 448, on the grid),
/// or 0x7f for NaN.
inline std::uint8_t e4m3_code(float v) noexcept {
  if (v != v) return 0x7f;
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  const float a = std::fabs(v);
  if (a == 0.0f) return sign;
  const int e = std::max(std::ilogb(a), -6);
  const auto u = static_cast<unsigned>(std::ldexp(a, 3 - e));  // 8 .. 15, or below 8 (subnormal)
  const unsigned ef = u >= 8 ? static_cast<unsigned>(e + 7) : 0u;
  return static_cast<std::uint8_t>(sign | (ef << 3) | (u & 7u));
}

/// The value of an E4M3 (FN) code (0x7f and 0xff: NaN).
inline float e4m3_value(std::uint8_t c) noexcept {
  if ((c & 0x7f) == 0x7f) return std::numeric_limits<float>::quiet_NaN();
  const int ef = (c >> 3) & 15, mf = c & 7;
  const float v = ef == 0 ? std::ldexp(static_cast<float>(mf), -9) : std::ldexp(static_cast<float>(8 + mf), ef - 10);
  return (c & 0x80) ? -v : v;
}

/// The E2M1 code of a value of the grid (sign bit 8), NaN -> 0.
inline std::uint8_t e2m1_code(float v) noexcept {
  if (v != v) return 0;
  static constexpr float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float a = std::fabs(v);
  std::uint8_t k = 0;
  while (k < 7 && grid[k] != a) ++k;
  return static_cast<std::uint8_t>((std::signbit(v) ? 8 : 0) | k);
}

/// The value of an E2M1 code (0 .. 15).
inline float e2m1_value(std::uint8_t c) noexcept {
  static constexpr float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = grid[c & 7];
  return (c & 8) ? -v : v;
}

/// NVFP4's element step of the reference semantics (torchao's float32
/// operations): a = clamp(fl(x / total), -6, 6), rounded to E2M1 (ties to
/// even); stage code stops there; y = fl(q * total). total: the block's
/// fl(p * s8), NaN for a NaN block. Generic over a scalar and a batch.
template <stage St>
struct nvfp4_ref_kernel {
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V X, V total) const noexcept {
    if constexpr (St == stage::dequant) return X * total;
    // detail::quotient: the IEEE quotient on AArch64 too, where xsimd's
    // float division is a refined reciprocal (x / a subnormal total gave
    // -inf there: y of the wrong sign, and NaN for x = 0).
    V a = detail::quotient(X, total);
    a = detail::select(a > V(6.0f), V(6.0f), detail::select(a < V(-6.0f), V(-6.0f), a));
    const V m = detail::abs(a);
    // The step of m's binade (0.5 below 2, 1 below 4, 2 above): m / step
    // and the product are exact, rint rounds ties to even.
    const V step = detail::select(m < V(2.0f), V(0.5f), detail::select(m < V(4.0f), V(1.0f), V(2.0f)));
    V q = detail::copysign(V(detail::rint(detail::quotient(m, step)) * step), a);
    // One NaN, 7fc00000 (as total's): the payload an operation passes on
    // differs between ISAs and compilers, the bits must not.
    q = detail::select(detail::is_nan(q), V(std::numeric_limits<float>::quiet_NaN()), q);
    if constexpr (St == stage::code) return q;
    return q * total;
  }
};

}  // namespace detail

/**
 * NVFP4 fake quantization: x is cut into blocks of `block_size` (16)
 * elements along `axis`; each block gets an FP8 E4M3 scale s8 from its
 * largest magnitude, under the float32 per-tensor scale p (1 for
 * single-level scaling), and each element is rounded to FP4 E2M1 (ties to
 * even) after division by p * s8, then multiplied back.
 *
 * `reference` (the default) computes it as torchao's `nvfp4_quantize` does,
 * in float32 operations: s8 = E4M3(clamp(fl(fl(amax / 6) / p), 2^-6, 448)),
 * total = fl(p * s8), y = fl(E2M1(clamp(fl(x / total), -6, 6)) * total); an
 * infinity in a block is clamped like any large value, a NaN makes its block
 * NaN. `exact` rounds each step once from the exact value (amax / (6 p) to
 * E4M3, x / (p s8) to E2M1, q p s8 to float32), and a NaN or an infinity
 * makes its block NaN (E4M3 has no infinity). docs/semantics.md, "NVFP4".
 *
 * @throws lowbit::error for a tensor_scale that is not finite and > 0 (in
 *         `reference` also one whose float32 p * s8 can be 0 or inf: below
 *         2^-143 or above about 7.6e35), an axis outside x, a block_size of
 *         0, y of the wrong shape or overlapping x. Nothing is written then.
 *
 * **Example**:
 * ```
 * std::vector<float> x{0.1f, -1.0f, 2.5f, 12.0f}, y(4);
 * lowbit::nvfp4_quant<> q{.block_size = 4};
 * q(x, y);  // s8 = 12 / 6 = 2: x / 2 on E2M1's grid -> y = {0, -1, 2, 12}
 * ```
 */
template <semantics S = semantics::reference>
struct nvfp4_quant {
  std::size_t block_size = 16;   ///< elements per block along `axis` (NVFP4: 16)
  std::ptrdiff_t axis = -1;      ///< the blocked axis; negative counts from the end
  execution exec{};              ///< threads for the element step (bit-identical)

  static constexpr const char* name = "lowbit::nvfp4_quant";

  static constexpr auto attributes() {
    return std::tuple{detail::attribute{"block_size", &nvfp4_quant::block_size},
                      detail::attribute{"axis", &nvfp4_quant::axis}};
  }

  /// Single-level scaling (p = 1).
  template <tensor_arg X, tensor_arg Y>
  void operator()(const X& x, Y&& y) const {
    (*this)(x, 1.0f, std::forward<Y>(y));
  }

  /// Two-level scaling with the float32 per-tensor scale p
  /// (nvfp4_tensor_scale(x) gives the usual one).
  template <tensor_arg X, tensor_arg Y>
  void operator()(const X& x, float tensor_scale, Y&& y) const {
    static_assert(std::is_same_v<detail::x_value_t<X>, float>, "lowbit::nvfp4_quant works on float tensors");
    const detail::tensor_in<float> xs(x);
    detail::nd<float> yd = detail::output_nd<float>(std::forward<Y>(y));
    const shape out = xs.get_shape();
    check(out.rank(), tensor_scale);
    detail::check_output(name, yd, out);
    detail::check_output_memory<float, 0>(name, yd, xs.d, {});
    run<detail::stage::fake>(xs.d, tensor_scale, out, [&](const block_data& bd) { fake(bd, xs.d, yd, out); });
  }

  /// The shape of the block scales: x's shape with ceil(n / block_size)
  /// along the axis.
  template <tensor_arg X>
  shape scales_shape(const X& x) const {
    const detail::tensor_in<float> xs(x);
    check(xs.d.rank, 1.0f);
    return detail::block_shape(xs.get_shape(), layout(xs.d.rank));
  }

  /// The blocked axis of a rank-`rank` tensor.
  std::size_t axis_of(std::size_t rank) const noexcept {
    return static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::ptrdiff_t>(rank) : axis);
  }

  // ---- internals, shared with quantize_codes and dequantize below ----

  /// Per block: the E4M3 scale s8 (NaN for a NaN block) and, reference, the
  /// float32 total scale fl(p * s8).
  struct block_data {
    detail::block_layout blocks{};
    detail::buffer<float> s8{0}, total{0};
    float p = 1.0f;
  };

  detail::block_layout layout(std::size_t rank) const noexcept { return {axis_of(rank), block_size}; }

  std::string prefix() const {
    return std::string(name) + (S == semantics::exact ? " (exact semantics)" : "") + ": ";
  }

  void check(std::size_t rank, float p) const {
    if (block_size == 0)
      throw error(prefix() + "block_size = 0 is invalid; expected at least 1 (NVFP4 uses 16)");
    detail::check_block_axis(prefix(), rank, axis);
    if (!(p > 0.0f && p <= std::numeric_limits<float>::max()))
      throw error(prefix() + "tensor_scale = " + detail::format_value(p) +
                  " is invalid; expected a finite number > 0 (1 for single-level scaling)");
    // reference divides by total = fl(p * s8), s8 in [2^-6, 448]: a total of
    // 0 (p below 2^-143) or inf (p above 448's share of FLT_MAX) turns
    // elements into NaN that no E2M1 code holds, where torchao's own codes
    // step gives values of no format.
    if (S == semantics::reference &&
        !(p * 0x1p-6f > 0.0f && p * 448.0f <= std::numeric_limits<float>::max()))
      throw error(prefix() + "tensor_scale = " + detail::format_value(p) +
                  " is invalid in the reference semantics; expected p with p * 2^-6 > 0 and p * 448 finite in "
                  "float32 (from 2^-143 to about 7.6e35): the float32 total scale p * s8 must be neither 0 nor "
                  "inf (the exact semantics take any finite p > 0)");
  }

  /// Computes each block's scales from x, then calls f(block_data).
  template <detail::stage St, class F>
  void run(const detail::nd<const float>& x, float p, const shape& out, F&& f) const {
    block_data bd;
    bd.blocks = layout(out.rank());
    bd.p = p;
    if (out.count() == 0) return f(bd);
    const std::size_t nb = detail::block_shape(out, bd.blocks).count();
    bd.s8 = detail::buffer<float>(nb);
    bd.total = detail::buffer<float>(nb);
    detail::block_reduce(x, bd.blocks, bd.s8.data(), detail::max_abs_bits_reduction{});
    for (std::size_t b = 0; b < nb; ++b) {
      const float amax = bd.s8[b];
      float s8, total;
      if (S == semantics::reference) {
        // torchao: block_scale = amax / 6; / p; clamp [2^-6, 448]; to E4M3 (RNE);
        // total = p * s8. NaN stays NaN; +inf clamps to 448.
        float bs = amax / 6.0f;
        bs = bs / p;
        if (bs != bs) {
          s8 = total = std::numeric_limits<float>::quiet_NaN();
        } else {
          bs = std::min(std::max(bs, 0x1p-6f), 448.0f);
          s8 = detail::round_e4m3_normal(bs);
          total = p * s8;
        }
      } else {
        if (!(amax <= std::numeric_limits<float>::max())) {  // NaN or inf: a NaN block
          s8 = total = std::numeric_limits<float>::quiet_NaN();
        } else {
          // amax / (6 p) in double: never a false tie (docs/semantics.md).
          double bs = static_cast<double>(amax) / (6.0 * static_cast<double>(p));
          bs = std::min(std::max(bs, 0x1p-6), 448.0);
          s8 = static_cast<float>(detail::round_e4m3_normal(bs));
          total = s8;  // unused: the exact step takes p and s8 apart
        }
      }
      bd.s8[b] = s8;
      bd.total[b] = total;
    }
    f(bd);
  }

  /// The element step into y (stage fake) or q (stage code).
  template <detail::stage St = detail::stage::fake>
  void fake(const block_data& bd, const detail::nd<const float>& x, detail::nd<float>& yd, const shape& out) const {
    if (out.count() == 0) return;
    if constexpr (S == semantics::reference) {
      const bool simd = detail::simd_enabled();
      const auto runp = [&](const detail::piece<float, 1>& pc) {
        detail::run_piece(detail::nvfp4_ref_kernel<St>{}, pc, simd);
      };
      const detail::piece_sink<float, 1> sink{&runp, [](const void* o, const detail::piece<float, 1>& pc) {
                                                (*static_cast<const decltype(runp)*>(o))(pc);
                                              }};
      detail::elementwise_blocks<float, 1>(out, x, {}, bd.total.data(), yd, bd.blocks, sink, exec);
    } else {
      // Exact: each element in double (x / (p s8) and q p s8 are exact there
      // or never a false tie), block by block.
      const detail::mx_block_index blk(out, bd.blocks);
      const double p = bd.p;
      // x is read in full before y is written (y may be x): through a copy.
      detail::buffer<float> xv(out.count());
      detail::for_each_element(x, [&](std::size_t i, std::ptrdiff_t off) { xv[i] = x.data[off]; });
      detail::for_each_element(yd, [&](std::size_t i, std::ptrdiff_t off) {
        const float s8 = bd.s8[blk(i)];
        float r;
        if (s8 != s8) {
          r = std::numeric_limits<float>::quiet_NaN();
        } else {
          const double t = p * static_cast<double>(s8);  // exact: 24 + 4 bits
          double a = static_cast<double>(xv[i]) / t;
          a = std::min(std::max(a, -6.0), 6.0);
          const double q = detail::round_e2m1(a);
          r = St == detail::stage::code ? static_cast<float>(q) : static_cast<float>(q * t);
        }
        yd.data[off] = r;
      });
    }
  }
};

/// The usual NVFP4 per-tensor scale of x: max |x| / (448 * 6), in float32
/// (torchao's per_tensor_amax_to_scale), so that the largest block scale
/// can reach E4M3's 448. Not finite for a NaN or infinite x; 0 for an
/// all-zero x (nvfp4_quant rejects both: pass 1 then); below 2^-143, which
/// the reference semantics reject, when max |x| is below 2688 * 2^-143.
template <tensor_arg X>
float nvfp4_tensor_scale(const X& x) {
  static_assert(std::is_same_v<detail::x_value_t<X>, float>, "lowbit::nvfp4_tensor_scale works on float tensors");
  const detail::tensor_in<float> xs(x);
  if (xs.get_shape().count() == 0) return 0.0f;
  float amax = 0.0f;
  std::uint32_t mb = 0;
  detail::for_each_element(xs.d, [&](std::size_t, std::ptrdiff_t off) {
    mb = std::max(mb, std::bit_cast<std::uint32_t>(xs.d.data[off]) & 0x7fffffffu);
  });
  amax = std::bit_cast<float>(mb);
  return amax / (448.0f * 6.0f);
}

/**
 * NVFP4 codes: the E2M1 code of each element (one per byte, 0 .. 15: sign
 * bit 8, then the OCP E2M1 bits; pack two to a byte with lowbit::pack and
 * packings::fp4_e2m1) and each block's E4M3 scale byte (0x7f for a NaN
 * block, whose element codes are 0). `codes` has x's shape, `scales`
 * op.scales_shape(x), both uint8. `dequantize(op, codes, scales,
 * tensor_scale, y)` gives op(x, tensor_scale, y) bit for bit.
 * @throws lowbit::error as op(x, tensor_scale, y) does, and for outputs of
 *         the wrong shape or sharing memory with x or each other. Nothing is
 *         written then.
 */
template <semantics S, tensor_arg X, class Codes, class Scales>
void quantize_codes(const nvfp4_quant<S>& op, const X& x, float tensor_scale, Codes&& codes, Scales&& scales) {
  using Op = nvfp4_quant<S>;
  static_assert(std::is_same_v<detail::x_value_t<X>, float>, "lowbit::nvfp4_quant works on float tensors");
  const detail::tensor_in<float> xs(x);
  detail::nd<std::uint8_t> cd = detail::mx_out_nd<std::uint8_t>(std::forward<Codes>(codes));
  detail::nd<std::uint8_t> sd = detail::mx_out_nd<std::uint8_t>(std::forward<Scales>(scales));
  const shape out = xs.get_shape();
  op.check(out.rank(), tensor_scale);
  detail::check_output(Op::name, cd, out, "codes");
  detail::check_output(Op::name, sd, detail::block_shape(out, op.layout(out.rank())), "scales", "the block shape");
  detail::check_block_code_memory(Op::name, cd, sd, xs.d);
  if (out.count() == 0) return;
  op.template run<detail::stage::code>(xs.d, tensor_scale, out, [&](const typename Op::block_data& bd) {
    detail::buffer<float> q(out.count());
    detail::nd<float> qd;
    detail::set_row_major(qd, out.rank(), out.begin());
    qd.data = q.data();
    op.template fake<detail::stage::code>(bd, xs.d, qd, out);
    const detail::mx_block_index blk(out, bd.blocks);
    detail::for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) {
      cd.data[off] = bd.s8[blk(i)] != bd.s8[blk(i)] ? std::uint8_t(0) : detail::e2m1_code(q[i]);
    });
    detail::for_each_element(sd, [&](std::size_t i, std::ptrdiff_t off) { sd.data[off] = detail::e4m3_code(bd.s8[i]); });
  });
}

/**
 * NVFP4 codes back: y = value(code) * p * value(scale), the product rounded
 * as op(x, tensor_scale, y) rounds it (reference: fl(q * fl(p * s8)); exact:
 * once), each element with its block's scale.
 * @throws lowbit::error for a code above 15, a scale byte that is negative
 *         (sign bit set) and not NaN, shapes that do not match, a bad
 *         tensor_scale or axis, or y sharing memory with the codes or scales.
 *         Nothing is written then.
 */
template <semantics S, class Codes, class Scales, tensor_arg Y>
void dequantize(const nvfp4_quant<S>& op, const Codes& codes, const Scales& scales, float tensor_scale, Y&& y) {
  using Op = nvfp4_quant<S>;
  const detail::nd<const std::uint8_t> cd = detail::mx_in_nd<std::uint8_t>(codes);
  const detail::nd<const std::uint8_t> sd = detail::mx_in_nd<std::uint8_t>(scales);
  detail::nd<float> yd = detail::output_nd<float>(std::forward<Y>(y));
  const shape out = cd.get_shape();
  op.check(out.rank(), tensor_scale);
  const detail::block_layout bl = op.layout(out.rank());
  const shape bs = detail::check_block_dequantize(Op::name, cd, sd, yd, bl);
  if (out.count() == 0) return;
  detail::for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) {
    if (cd.data[off] > 15)
      throw error(std::string(Op::name) + ": " + detail::element_name("codes", cd, i) + " = " +
                  std::to_string(cd.data[off]) + " is invalid; expected an E2M1 code (0 to 15)");
  });
  detail::buffer<float> s8(bs.count());
  detail::for_each_element(sd, [&](std::size_t i, std::ptrdiff_t off) {
    const std::uint8_t c = sd.data[off];
    if ((c & 0x80) && c != 0xff)
      throw error(std::string(Op::name) + ": " + detail::element_name("scales", sd, i) + " = " + std::to_string(c) +
                  " is invalid; expected a non-negative E4M3 scale (0 to 126) or a NaN (127 or 255)");
    s8[i] = detail::e4m3_value(c);
  });
  detail::buffer<float> v(out.count());
  detail::for_each_element(cd, [&](std::size_t i, std::ptrdiff_t off) { v[i] = detail::e2m1_value(cd.data[off]); });
  const detail::mx_block_index blk(out, bl);
  const float p = tensor_scale;
  detail::for_each_element(yd, [&](std::size_t i, std::ptrdiff_t off) {
    const float s = s8[blk(i)];
    if constexpr (S == semantics::reference)
      yd.data[off] = v[i] * (p * s);
    else
      yd.data[off] = static_cast<float>(static_cast<double>(v[i]) * (static_cast<double>(p) * s));
  });
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_NVFP4_HPP
