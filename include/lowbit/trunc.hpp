// SPDX-License-Identifier: Apache-2.0
/**
 * @file trunc.hpp
 * QONNX Trunc (opset 2, lowbit::trunc) and Trunc opset 1 (lowbit::trunc_v1):
 * truncation of a quantized tensor to fewer bits.
 * The whole semantics, step by step, is in docs/semantics.md ("Trunc").
 */
#ifndef LOWBIT_TRUNC_HPP
#define LOWBIT_TRUNC_HPP

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
#include "detail/code_checks.hpp"
#include "detail/driver.hpp"
#include "detail/elementwise.hpp"
#include "detail/int_lanes.hpp"
#include "detail/integer.hpp"
#include "detail/simd.hpp"
#include "detail/stage.hpp"
#include "detail/stochastic.hpp"
#include "error.hpp"
#include "parallel.hpp"
#include "rounding.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {

/**
 * The trunc scale `t = 2^k` of one (scale, out_scale) pair, with
 * `r = out_scale / scale` (one rounding in T).
 *
 * reference: QONNX's `2 ** round(log2(r))`: log2 rounded to T (correctly
 * rounded; for float the float32 log2 lands on k + 1/2 for ratios just below
 * 2^(k+1/2)), then rounded to an integer ties to even. Zero, negative,
 * infinite and NaN ratios give what the float formula gives (0, NaN, inf).
 *
 * exact: k is the integer nearest to the exact log2(r): with e = floor(log2 r),
 * k = e + 1 iff r^2 > 2^(2e+1), i.e. iff the significand m = r / 2^e has
 * m^2 > 2 (never equal). Returns false (reject) when r is not a finite
 * positive T or 2^k is not a finite T.
 */
template <semantics S, class T>
bool trunc_scale(T scale, T out_scale, T& t) noexcept {
  const T r = out_scale / scale;
  if constexpr (S == semantics::reference) {
    // Fast path: with r = m 2^e, m in [1, 2), round(log2 r) is e, or e + 1
    // when m > sqrt 2, as long as m is not within 2^-12 of sqrt 2, where
    // log2 m is within about 2^-12 of 1/2, far more than the error of any
    // log2 rounded to T for |log2 r| < 2^11. Only near sqrt 2 does the
    // rounding of log2 decide (QONNX's formula below, a libm log2 per
    // ratio, is kept for those).
    // Read from the bits for normal r (no libm call: a per-element ratio
    // computes this once per element).
    using U = std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>;
    constexpr int mbits = std::numeric_limits<T>::digits - 1;
    constexpr int bias = std::numeric_limits<T>::max_exponent - 1;
    constexpr U top = U(2 * bias + 1);  // all-ones exponent field
    const U u = std::bit_cast<U>(r);
    const U be = u >> mbits;  // r >= +0: no sign bit
    if (r > T(0) && be >= 1 && be < top) {
      const T m = std::bit_cast<T>((u & ((U(1) << mbits) - 1)) | (U(bias) << mbits));  // [1, 2)
      const T sqrt2 = T(1.4142135623730950488L);
      if (std::fabs(m - sqrt2) > T(0x1p-12)) {
        const int k = static_cast<int>(be) - bias + (m > sqrt2 ? 1 : 0);
        // 2^k for the normal range from bits; 2^128 / 2^1024 is inf.
        t = k <= bias ? std::bit_cast<T>(U(k + bias) << mbits) : std::numeric_limits<T>::infinity();
        return true;
      }
    }
    T l;
    if constexpr (std::is_same_v<T, float>)
      l = static_cast<float>(std::log2(static_cast<long double>(r)));
    else
      l = std::log2(r);
    const T k = std::nearbyint(l);
    if (std::isnan(k))
      t = std::numeric_limits<T>::quiet_NaN();
    else if (k > T(100000))
      t = std::numeric_limits<T>::infinity();
    else if (k < T(-100000))
      t = T(0);
    else
      t = std::ldexp(T(1), static_cast<int>(k));  // rounds 2^k to T (0 or inf beyond range)
    return true;
  } else {
    if (!(r > T(0) && r <= std::numeric_limits<T>::max())) return false;
    const int e = std::ilogb(r);            // exact, subnormals included
    const T m = std::scalbn(r, -e);         // significand in [1, 2), exact
    const int k = e + (std::fma(m, m, T(-2)) > T(0) ? 1 : 0);  // sign of m^2 - 2, exact
    if (k > std::numeric_limits<T>::max_exponent - 1) return false;
    t = std::ldexp(T(1), k);  // k >= e >= min exponent of a subnormal: exact
    return true;
  }
}

/**
 * trunc_scale<reference> over a piece of (scale, out_scale) pairs, as a
 * kernel: `t = k(scale, out_scale)`. A per-element ratio needs one t per
 * element, and the scalar function (a division and two data-dependent
 * branches) costs far more than the quantization itself.
 *
 * A float batch takes the bits fast path of trunc_scale when every lane
 * does (r a positive normal float, significand not within 2^-12 of sqrt 2),
 * with the same float operations, so the same t; any other batch, and
 * every double batch, is done lane by lane by trunc_scale itself.
 */
template <class T>
struct trunc_scale_ref_kernel {
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V scale, V out_scale) const noexcept {
    if constexpr (!is_batch_v<V>) {
      T t;
      trunc_scale<semantics::reference>(scale, out_scale, t);
      return t;
    } else {
      if constexpr (std::is_same_v<T, float>) {
        using I = int_lanes_t<V>;
        I e;
        if (fast_e(scale, out_scale, e)) return bits_float(I(e << 23));  // e = 255: inf
      }
      return lanes(scale, out_scale);
    }
  }
  /**
   * The bits fast path of trunc_scale for a float batch: true, with e the
   * biased exponent field of t = 2^k (e = k + 127, in [1, 255]; 255 is
   * t = 2^128 = inf, as float32 gives it), when every lane takes it.
   *
   * In integers, with u the bits of r = out_scale / scale: r is a positive
   * normal float iff 0x7fffff < u < 0x7f800000 (two signed compares: a
   * negative r has u < 0). Its significand m and sqrt 2 share a binade, so
   * m - sqrt 2 is exact and equals (mb - S) 2^-23, with mb the significand
   * bits of r and S those of float(sqrt 2): |m - sqrt 2| > 2^-12 iff
   * |S - mb| > 2^11, and m > sqrt 2, where round(log2 r) is the exponent
   * plus one, iff S - mb < 0, whose arithmetic shift by 31 is the -1 to
   * subtract. No select and no constant beyond these (AVX2 has no signed
   * <= or >=, and each one cost a compare, an equality and an or).
   */
  template <class V, class I>
  LOWBIT_ALWAYS_INLINE static bool fast_e(V scale, V out_scale, I& e) noexcept {
    constexpr std::int32_t S = std::bit_cast<std::int32_t>(1.4142135623730950488f) & 0x7fffff;
    const I u = float_bits(detail::quotient(out_scale, scale));
    const I nd = I(S) - (u & I(0x7fffff));
    const auto fast = (u > I(0x7fffff)) & (u < I(0x7f800000)) & (iabs(nd) > I(1 << 11));
    if (!all_lanes(fast)) return false;
    e = (u >> 23) - (nd >> 31);
    return true;
  }
  /**
   * 1/t for a float batch on the fast path (fast_e), exact: 2^-k, which is
   * 2^-127 (subnormal) for k = 127 and +0 for t = 2^128 = inf. Multiplying
   * by it gives the bits of dividing by t for every dividend: the product
   * y * 2^-k is the real y / 2^k rounded once, and y * +0 = y / inf (NaN for
   * an infinite y either way). False when some lane is off the fast path.
   *
   * 2^-k is formed as 2^(128 - k) * 2^-1: the field 255 - e = 128 - k is
   * in [0, 254], a normal power of two or +0, and the halving is exact
   * (2^-127 is a float32 subnormal), which covers k = 127 and k = 128
   * without a select.
   */
  template <class V>
  LOWBIT_ALWAYS_INLINE static bool fast_inverse(V scale, V out_scale, V& inv) noexcept {
    using I = int_lanes_t<V>;
    I e;
    if (!fast_e(scale, out_scale, e)) return false;
    inv = V(bits_float(I((I(255) - e) << 23)) * V(0.5f));
    return true;
  }
  /// Every other batch, lane by lane, out of line.
  template <class V>
  LOWBIT_NOINLINE_COLD static V lanes(V scale, V out_scale) noexcept {
    constexpr std::size_t L = V::size;
    alignas(64) T sa[L], oa[L], ta[L];
    scale.store_aligned(sa);
    out_scale.store_aligned(oa);
    for (std::size_t i = 0; i < L; ++i) trunc_scale<semantics::reference>(sa[i], oa[i], ta[i]);
    return V::load_aligned(ta);
  }
};

/**
 * The reference t of n (scale, out_scale) pairs into out: scale a[i * sa]
 * and out_scale b[i * sb] (a stride 0 repeats one value), a float batch at
 * a time (trunc_scale_ref_kernel) when both strides are 0 or 1 and `simd`,
 * else element by element. One run of trunc_scales_ref, and the per-row t
 * of the row route (trunc::run_rows).
 */
template <class T>
void trunc_scales_ref_run(const T* a, std::ptrdiff_t sa, const T* b, std::ptrdiff_t sb, T* out, std::size_t n,
                          bool simd) {
  using K = trunc_scale_ref_kernel<T>;
  std::size_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    using B = batch<float>;
    constexpr std::size_t L = B::size;
    if (simd && (sa == 0 || sa == 1) && (sb == 0 || sb == 1)) {
      for (; i + L <= n; i += L)
        detail::store(out + i, K{}(sa != 0 ? load<B>(a + i) : B(*a), sb != 0 ? load<B>(b + i) : B(*b)));
    }
  }
  for (; i < n; ++i) out[i] = K{}(a[static_cast<std::ptrdiff_t>(i) * sa], b[static_cast<std::ptrdiff_t>(i) * sb]);
}

/**
 * The reference t of every position of the shape `ts` (scale and out_scale
 * broadcast against it), row-major into t: trunc_scale_ref_kernel along
 * each innermost run, a float batch at a time where both operands are
 * contiguous or constant along the run (`simd`), else element by element.
 * The pre-pass of a per-channel (or otherwise partly broadcast) Trunc; a
 * loop of its own rather than the engine, which it would instantiate for
 * one more operand count.
 */
template <class T>
void trunc_scales_ref(const shape& ts, const nd<const T>& ss, const nd<const T>& os, T* t, bool simd) {
  const loop_plan<2> p = make_plan<2>(ts, {&ss, &os});
  const std::ptrdiff_t sa = p.inner_stride(0), sb = p.inner_stride(1);
  std::size_t flat = 0;
  for_each_run(p, [&](const std::array<std::ptrdiff_t, 2>& off, std::size_t n) {
    trunc_scales_ref_run(ss.data + off[0], sa, os.data + off[1], sb, t + flat, n, simd);
    flat += n;
  });
}

/**
 * Replaces t[0, n) by 1/t[i] and returns true when every t[i] is +inf or a
 * power of two 2^k with |k| <= bias - 1 (bias = 127 for float): then 1/t[i]
 * is exact (2^-k, or +0 for +inf) and `y / t[i]` and `y * (1/t[i])` are the
 * same real number rounded once, for every y (y / inf = y * +0, inf / inf =
 * inf * 0 = NaN). Otherwise returns false and leaves t as it was. The
 * inverse is computed from the bits (exponent field e -> 2 bias - e), an
 * involution, which undoes a partial pass.
 *
 * Trunc's t = 2^k varies per channel or per element with the scale; this
 * turns its second division per element into a product.
 */
template <class T>
bool invert_powers_of_two(T* t, std::size_t n) noexcept {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr int mbits = std::numeric_limits<T>::digits - 1;
  constexpr U bias = U(std::numeric_limits<T>::max_exponent - 1);
  constexpr U inf = U(2 * bias + 1) << mbits;
  constexpr U mant = (U(1) << mbits) - 1;
  constexpr U two_bias = (2 * bias) << mbits;
  auto valid = [&](U u) { return u == inf || ((u & mant) == 0 && u >= (U(1) << mbits) && u <= ((2 * bias - 1) << mbits)); };
  auto inverse = [&](U u) { return u == inf ? U(0) : u == 0 ? inf : U(two_bias - u); };
  std::size_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    using B = batch<float>;
    using I = int_lanes_t<B>;
    constexpr std::size_t L = B::size;
    const I iinf(static_cast<std::int32_t>(inf)), imant(static_cast<std::int32_t>(mant));
    const I ilo(std::int32_t(1) << mbits), ihi(static_cast<std::int32_t>((2 * bias - 1) << mbits));
    const I itwo_bias(static_cast<std::int32_t>(two_bias)), izero(0);
    for (; i + L <= n; i += L) {
      const I u = float_bits(B::load_unaligned(t + i));
      const auto is_inf = u == iinf;
      if (!all_lanes(is_inf | (((u & imant) == izero) & (u >= ilo) & (u <= ihi)))) break;
      bits_float(iselect(is_inf, izero, I(itwo_bias - u))).store_unaligned(t + i);
    }
  }
  for (; i < n; ++i) {
    const U u = std::bit_cast<U>(t[i]);
    if (!valid(u)) break;
    t[i] = std::bit_cast<T>(inverse(u));
  }
  if (i == n) return true;
  for (std::size_t j = 0; j < i; ++j) t[j] = std::bit_cast<T>(inverse(std::bit_cast<U>(t[j])));
  return false;
}

/// Trunc v2: y = rint(x/scale + zp); y = y / t; q = R(clamp(y));
/// Y = (q - zp/t) * out_scale. Every step one rounding, never fused.
/// The divider (a base) multiplies when the scale is a power of two with an
/// exact reciprocal (scale_divider); t comes as its exact inverse 1/t
/// (t_inverse) and is multiplied by, on every batch (by_t).
/// St: the whole operator, q only, or q (passed as x) to Y (detail::stage).
/// Inline (reference semantics, float, the SIMD path, t varying per
/// element): the t operand is a dummy and each batch computes its own t (or
/// 1/t) from scale and out_scale, as the pre-pass would
/// (trunc_scale_ref_kernel), instead of reading a t tensor written by a pass
/// of its own. A template parameter, not a flag: a run-time test would sit
/// in every batch of the per-tensor kernel.
template <semantics S, rounding_mode M, stage St = stage::fake, bool Inline = false>
struct trunc_kernel : scale_divider {
  /// Inline: a batch with a lane off trunc_scale_ref_kernel's fast path is
  /// declined and computed on the scalar loop (declining_kernel), so that
  /// the batch loop holds one form of the operator, not two.
  static constexpr bool may_decline = Inline;
  /// The t operand holds 1/t, exact (invert_powers_of_two): multiply by it.
  /// Scalars only: a batch always multiplies (by_t).
  bool t_inverse = false;
  /// The mode when M is run_time_mode (round_step).
  rounding_mode mode = M;
  /// The seed and random bits of the stochastic mode (detail/stochastic.hpp).
  stochastic_source rnd{};
  /// The stochastic mode (and the run-time mode, which may be it) takes
  /// each element's flat output index; a declining (Inline) kernel never
  /// runs it (state::run).
  static constexpr bool index_aware = needs_index<M> && !Inline;
  /// The mode is stochastic: the row loop draws whole groups (stochastic_kernel).
  static constexpr bool stochastic = M == rounding_mode::stochastic && !Inline;
  /// The scalar loop's kernel, shared by every mode (scalar_kernel_of).
  trunc_kernel<S, run_time_mode, St, Inline> scalar_kernel() const noexcept {
    return {*this, t_inverse, mode, rnd};
  }
  /// y / t, with t the t operand, or with its exact inverse 1/t (`inverse`)
  /// by a product: the same real number rounded once. A batch always
  /// multiplies: SIMD runs only when the t operand holds 1/t (t_inverse, or
  /// the Inline kernel's fast path), so that no batch loop holds a run-time
  /// test for it. GCC 12 left two such tests in every batch of the per-tensor
  /// ROUND loop, with zp / t computed again in each (docs/performance.md).
  template <class V>
  LOWBIT_ALWAYS_INLINE V by_t(V v, V t, bool inverse) const noexcept {
    if constexpr (std::is_arithmetic_v<V>) {
      if (!inverse) return detail::quotient(v, t);
    }
    return no_contract(V(v * t));
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V x, V scale, V zp, V t, V out_scale, V lo, V hi) const noexcept {
    if constexpr (Inline) {
      static_assert(S == semantics::reference && std::is_same_v<lane_t<V>, float>);
      return apply(x, scale, zp, trunc_scale_ref_kernel<float>{}(scale, out_scale), false, out_scale, lo, hi);
    } else {
      return apply(x, scale, zp, t, t_inverse, out_scale, lo, hi);
    }
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(element_index idx, V x, V scale, V zp, V t, V out_scale, V lo,
                                    V hi) const noexcept {
    static_assert(!Inline);
    return eval(rnd.template threshold<M, V>(mode, idx), x, scale, zp, t, out_scale, lo, hi);
  }
  /// `u`: the stochastic mode's thresholds (unused by the other modes).
  template <class V>
  LOWBIT_ALWAYS_INLINE V eval(V u, V x, V scale, V zp, V t, V out_scale, V lo, V hi) const noexcept {
    static_assert(!Inline);
    return apply(x, scale, zp, t, t_inverse, out_scale, lo, hi, u);
  }
  /// Inline, a batch: t's exact inverse from the fast path, or declined.
  template <class V>
  LOWBIT_ALWAYS_INLINE V try_batch(bool& ok, V x, V scale, V zp, V, V out_scale, V lo, V hi) const noexcept {
    V inv;
    if (!trunc_scale_ref_kernel<float>::fast_inverse(scale, out_scale, inv)) {
      ok = false;
      return x;
    }
    return apply(x, scale, zp, inv, true, out_scale, lo, hi);
  }
  /// The operator with t (or 1/t when `inverse`) known.
  template <class V>
  LOWBIT_ALWAYS_INLINE V apply(V x, V scale, V zp, V t, bool inverse, V out_scale, V lo, V hi,
                               V u = V(0)) const noexcept {
    if constexpr (St == stage::dequant) return dequantize(x, out_scale, by_t(zp, t, inverse));
    V y = scaled_input(*this, x, scale, zp);
    y = detail::rint(y);
    y = by_t(y, t, inverse);
    // Compare-and-replace in both semantics: QONNX's Trunc uses np.where
    // (y > max, y < min), so -0 passes an unsigned clamp as -0 (unlike
    // IntQuant's np.clip).
    const V q = round_step<S, M>(clamp<semantics::exact>(y, lo, hi), mode, u);
    if constexpr (St == stage::code) return q;
    return dequantize(q, out_scale, by_t(zp, t, inverse));
  }
};

/// Trunc v1: y = rint(x/scale + zp) / 2^(in - out); q = R(y) (no clamp);
/// Y = (q - zp) * scale.
/// The t operand holds 1/t = 2^(out - in), exact (|out - in| <= 52), and a
/// batch multiplies by it: y / t and y * (1/t) are the same real number
/// rounded once, for every y. The scalar path divides by t = 1 / (1/t)
/// (exact), so that the SIMD-vs-scalar tests compare the two. The divider
/// (a base) multiplies by a constant power-of-two scale's exact reciprocal
/// (scale_divider), as in Trunc v2 and IntQuant.
template <semantics S, rounding_mode M, stage St = stage::fake>
struct trunc_v1_kernel : scale_divider {
  /// The mode when M is run_time_mode (round_step).
  rounding_mode mode = M;
  /// The seed and random bits of the stochastic mode (detail/stochastic.hpp).
  stochastic_source rnd{};
  static constexpr bool index_aware = needs_index<M>;
  /// The mode is stochastic: the row loop draws whole groups (stochastic_kernel).
  static constexpr bool stochastic = M == rounding_mode::stochastic;
  /// The scalar loop's kernel, shared by every mode (scalar_kernel_of).
  trunc_v1_kernel<S, run_time_mode, St> scalar_kernel() const noexcept { return {*this, mode, rnd}; }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V x, V scale, V zp, V inv_t) const noexcept {
    return eval(V(0), x, scale, zp, inv_t);
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(element_index idx, V x, V scale, V zp, V inv_t) const noexcept {
    return eval(rnd.template threshold<M, V>(mode, idx), x, scale, zp, inv_t);
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V eval(V u, V x, V scale, V zp, V inv_t) const noexcept {
    if constexpr (St == stage::dequant) return (void)u, (void)inv_t, dequantize(x, scale, zp);
    V y = scaled_input(*this, x, scale, zp);
    y = detail::rint(y);
    if constexpr (std::is_arithmetic_v<V>)
      y = detail::quotient(y, V(V(1) / inv_t));
    else
      y = no_contract(V(y * inv_t));
    const V q = round_step<S, M>(y, mode, u);
    if constexpr (St == stage::code) return q;
    return dequantize(q, scale, zp);
  }
};


}  // namespace detail

/**
 * QONNX Trunc (opset 2): re-quantizes an already quantized tensor to a
 * coarser power-of-two grid with fewer bits (e.g. the truncation after an
 * average pool).
 *
 * For each element, with every parameter broadcast against x (numpy rules):
 * 1. `y = round_half_even(x / scale + zeropt)` (two float operations, then
 *    ties-to-even whatever `rounding` says),
 * 2. `t = 2^k` with `k` the integer nearest to `log2(out_scale / scale)`,
 * 3. `y = y / t`, clamped to the integer range of `out_bitwidth`
 *    (`signed`/`narrow` as in IntQuant, no bipolar special case),
 * 4. `q = round(y)` with `rounding`,
 * 5. `Y = (q - zeropt / t) * out_scale`.
 * `in_bitwidth` is validated but not used, and takes no part in broadcasting.
 * How `k` is chosen (reference: float32 log2 then ties to even; exact: the
 * exact log2) and every other difference between the semantics are listed
 * in docs/semantics.md.
 *
 * Arguments are lowbit::tensor_arg as for lowbit::int_quant. The bit widths
 * may be tensors; they must hold integers from 1 to 32 (float) or 53 (double).
 * y must have exactly the broadcast shape of x, scale, zeropt, out_scale and
 * out_bitwidth (output_shape()). y may be x itself; it must not overlap a
 * parameter.
 *
 * @tparam S semantics::reference (QONNX's float32 results, bit for bit) or
 *           semantics::exact.
 * @throws lowbit::error for shapes that do not broadcast, a y of the wrong
 *         shape, an invalid bit width or rounding mode, and in the exact
 *         semantics a scale or out_scale that is not finite and > 0, or a
 *         ratio out_scale / scale whose 2^k is not a finite value of x's
 *         type. Nothing is written then.
 *
 * **Example**:
 * ```
 * std::vector<float> x{1.0f, 2.5f, -3.0f, 7.0f}, y(4);
 * lowbit::trunc<> tr{.is_signed = true, .narrow = false,
 *                    .rounding = lowbit::rounding_mode::floor};
 * // int8 on scale 0.5 -> 4 bits on scale 2 (t = 4):
 * tr(x, 0.5f, 0.0f, 8.0f, 2.0f, 4.0f, y);  // y = {0, 0, -2, 2}
 * ```
 */
template <semantics S = semantics::reference>
struct trunc {
  bool is_signed = true;                           ///< QONNX attribute `signed`.
  bool narrow = false;                             ///< QONNX attribute `narrow`.
  rounding_mode rounding = rounding_mode::floor;   ///< QONNX attribute `rounding_mode` (default FLOOR).
  /// rounding_mode::stochastic only (a lowbit extension): the seed of the
  /// draws (any value); an element's draw depends only on the seed,
  /// random_bits and its flat index in y.
  std::uint64_t seed = 0;
  /// rounding_mode::stochastic only: bits per draw, 1 to 23 (float) or 32 (double).
  int random_bits = 16;
  /// rounding_mode::stochastic only: the flat index of y's element 0 in a
  /// larger tensor quantized in several calls (row-major pieces), so that
  /// every element gets the draw it gets in one call.
  std::uint64_t index_offset = 0;
  /// Threads for large calls (opt-in; bit-identical results): lowbit::execution.
  execution exec{};

  static constexpr const char* name = "lowbit::trunc";
  /// The operator protocol (detail/protocol.hpp).
  using inputs = detail::names<"scale", "zeropt", "in_bitwidth", "out_scale", "out_bitwidth">;
  using operands = detail::names<"scale", "zeropt", "t", "out_scale", "lo", "hi">;
  static constexpr bool accepts_double = true;
  /// The attributes by QONNX name, for lowbit::set_attribute.
  static constexpr auto attributes() {
    return std::tuple{detail::attribute{"signed", &trunc::is_signed}, detail::attribute{"narrow", &trunc::narrow},
                      detail::attribute{"rounding_mode", &trunc::rounding}, detail::attribute{"seed", &trunc::seed},
                      detail::attribute{"random_bits", &trunc::random_bits},
                      detail::attribute{"index_offset", &trunc::index_offset}};
  }

  /// The numpy broadcast of x, scale, zeropt, out_scale and out_bitwidth
  /// (in_bitwidth takes no part, as in QONNX).
  template <tensor_arg X, tensor_arg Scale, tensor_arg Zeropt, tensor_arg InBw, tensor_arg OutScale,
            tensor_arg OutBw>
  shape output_shape(const X& x, const Scale& scale, const Zeropt& zeropt, const InBw& in_bitwidth,
                     const OutScale& out_scale, const OutBw& out_bitwidth) const {
    return detail::call_output_shape(*this, x, scale, zeropt, in_bitwidth, out_scale, out_bitwidth);
  }

  /// Truncates x into y. See the class documentation.
  template <tensor_arg X, tensor_arg Scale, tensor_arg Zeropt, tensor_arg InBw, tensor_arg OutScale,
            tensor_arg OutBw, tensor_arg Y>
  void operator()(const X& x, const Scale& scale, const Zeropt& zeropt, const InBw& in_bitwidth,
                  const OutScale& out_scale, const OutBw& out_bitwidth, Y&& y) const {
    detail::call(*this, std::forward<Y>(y), x, scale, zeropt, in_bitwidth, out_scale, out_bitwidth);
  }

 private:
  // ---- the protocol's hooks (detail/driver.hpp) ----
  friend struct detail::protocol_access;
  template <class T>
  using args = detail::call_args<trunc, T>;

  void check_attributes() const { detail::check_rounding_mode(rounding, name); }

  /// in_bitwidth takes no part in the output shape.
  template <class T>
  std::array<bool, inputs::size> broadcast_inputs(const args<T>&) const {
    return {true, true, false, true, true};
  }

  template <class T>
  void check_values(const args<T>& a) const {
    detail::check_random_bits<T>(random_bits, rounding, name);
    detail::validate_bitwidth_tensor(a.template get<"in_bitwidth">(), name, "in_bitwidth");
    detail::validate_bitwidth_tensor(a.template get<"out_bitwidth">(), name, "out_bitwidth");
    if constexpr (S == semantics::exact) {
      detail::check_scale_positive(name, "scale", a.template get<"scale">());
      detail::check_scale_positive(name, "out_scale", a.template get<"out_scale">());
    }
  }

  /// The scalar route (detail/driver.hpp, scalar_route): every input a
  /// scalar, checked as check_values and the state check them; the
  /// operands and kernel the state and run_with would give the one
  /// constant piece (t from the scalar path, inverted when a power of two).
  /// Not for the stochastic mode (each element's index, the group cache).
  template <class T>
  bool run_scalars(const T* x, T* y, std::size_t n, const std::array<T, inputs::size>& p, bool simd) const {
    using I = inputs;
    using O = operands;
    const T s = p[I::index<"scale">], os = p[I::index<"out_scale">], ob = p[I::index<"out_bitwidth">];
    if (rounding == rounding_mode::stochastic || !detail::valid_bitwidth(p[I::index<"in_bitwidth">]) ||
        !detail::valid_bitwidth(ob))
      return false;
    std::array<T, O::size> ops{};
    if constexpr (S == semantics::exact) {
      if (!detail::positive_scale(s) || !detail::positive_scale(os) ||
          !detail::trunc_scale<S>(s, os, ops[O::index<"t">]))
        return false;
    } else {
      ops[O::index<"t">] = detail::trunc_scale_ref_kernel<T>{}(s, os);
    }
    const auto r = detail::int_limits<S, T>(static_cast<int>(ob), is_signed, narrow);
    ops[O::index<"scale">] = s;
    ops[O::index<"zeropt">] = p[I::index<"zeropt">];
    ops[O::index<"out_scale">] = os;
    ops[O::index<"lo">] = r.lo;
    ops[O::index<"hi">] = r.hi;
    using D = detail::scale_divider;
    const bool t_inverse = simd && detail::invert_powers_of_two(&ops[O::index<"t">], 1);
    // SIMD only with 1/t (trunc_kernel::by_t): a t without an exact inverse
    // (2^127, a subnormal, 0 or NaN: out_scale / scale beyond float's range)
    // goes to the scalar path.
    simd = simd && t_inverse;
    const D sd = D::for_scale(s, simd);
    detail::with_rounding_mode(rounding, [&](auto mc) {
      constexpr rounding_mode M = decltype(mc)::value;
      // A loop of its own for ROUND and the default, FLOOR (run_splat).
      constexpr bool direct = M == rounding_mode::half_even || M == rounding_mode::floor;
      if constexpr (M != rounding_mode::stochastic)
        detail::run_splat<direct>(
            detail::trunc_kernel<S, M, detail::stage::fake>{sd, t_inverse, M, {seed, random_bits, index_offset}}, x,
            y, n, ops, simd);
    });
    return true;
  }

  /// The row route (detail/driver.hpp, row_route): x and y dense rows of
  /// `cols` elements, scale, zeropt and out_scale one value or one value per
  /// row (per_row), the bit widths one value each. The values are checked as
  /// check_values and the state check them, t is computed per row as the
  /// state computes it per element (trunc_scales_ref_run, trunc_scale), and
  /// the kernel run_with would pick runs on the row-mode piece the engine
  /// would build. Declines (false, nothing written) the stochastic mode, a
  /// bit width per row and any value the general route rejects, which then
  /// throws its message.
  template <class T>
  bool run_rows(const T* x, T* y, std::size_t rows, std::size_t cols, std::size_t blocks,
                const std::array<const T*, inputs::size>& p,
                const std::array<bool, inputs::size>& per_row, bool simd) const {
    using I = inputs;
    using O = operands;
    constexpr std::size_t scale_i = I::index<"scale">, zeropt_i = I::index<"zeropt">, os_i = I::index<"out_scale">,
                          ib_i = I::index<"in_bitwidth">, ob_i = I::index<"out_bitwidth">;
    const T ob = *p[ob_i];
    if (rounding == rounding_mode::stochastic || per_row[ib_i] || per_row[ob_i] ||
        !detail::valid_bitwidth(*p[ib_i]) || !detail::valid_bitwidth(ob))
      return false;
    const std::size_t ns = per_row[scale_i] ? rows : 1, nos = per_row[os_i] ? rows : 1;
    const std::size_t nt = std::max(ns, nos);
    if constexpr (S == semantics::exact) {
      const auto positive = [](auto v) { return detail::positive_scale(v); };
      if (!detail::all_elements(p[scale_i], ns, positive) || !detail::all_elements(p[os_i], nos, positive))
        return false;
    }
    // t per row (or one t), on the stack for up to 256 rows.
    constexpr std::size_t stack_rows = 256;
    alignas(64) T t_stack[stack_rows];
    detail::derived_storage<T, 1> t_heap;
    T* t = t_stack;
    if (nt > stack_rows) {
      t_heap.allocate(nt);
      t = t_heap.arr[0];
    }
    const std::ptrdiff_t ss = ns > 1 ? 1 : 0, sos = nos > 1 ? 1 : 0;
    if constexpr (S == semantics::exact) {
      for (std::size_t r = 0; r < nt; ++r)
        if (!detail::trunc_scale<S>(p[scale_i][std::ptrdiff_t(r) * ss], p[os_i][std::ptrdiff_t(r) * sos], t[r]))
          return false;
    } else {
      detail::trunc_scales_ref_run(p[scale_i], ss, p[os_i], sos, t, nt, simd);
    }
    // SIMD only with 1/t, as the state (run_with).
    const bool t_inverse = simd && detail::invert_powers_of_two(t, nt);
    simd = simd && t_inverse;
    const auto r = detail::int_limits<S, T>(static_cast<int>(ob), is_signed, narrow);
    detail::row_inputs<T, O::size> ro;
    ro.v[O::index<"lo">] = r.lo;
    ro.v[O::index<"hi">] = r.hi;
    ro.operand(O::index<"scale">, p[scale_i], per_row[scale_i]);
    ro.operand(O::index<"zeropt">, p[zeropt_i], per_row[zeropt_i]);
    ro.operand(O::index<"out_scale">, p[os_i], per_row[os_i]);
    ro.operand(O::index<"t">, t, nt > 1);
    const detail::piece<T, O::size> pc = ro.piece_of(x, y, rows, cols, blocks);
    constexpr std::size_t scale_k = O::index<"scale">;
    const detail::scale_divider sd = detail::scale_divider::for_scale(pc.s[scale_k], simd && !pc.vary[scale_k]);
    detail::with_rounding_mode(rounding, [&](auto mc) {
      constexpr rounding_mode M = decltype(mc)::value;
      if constexpr (M != rounding_mode::stochastic)
        detail::run_piece(detail::trunc_kernel<S, M, detail::stage::fake>{sd, t_inverse, M, {seed, random_bits, index_offset}},
                          pc, simd);
    });
    return true;
  }

  /// Codes of type C hold the clamp range of every out_bitwidth.
  template <class C, detail::stage St, class T>
  bool check_codes(const args<T>& a) const {
    if constexpr (St == detail::stage::code)
      detail::check_limits<C, S, T>(name, "out_bitwidth", a.template get<"out_bitwidth">(), is_signed, narrow, false);
    return false;
  }

  /// The kernel operands: scale, zeropt and out_scale as given, the trunc
  /// scale t per element of broadcast(scale, out_scale), and the clamp
  /// limits per out_bitwidth element.
  template <class T>
  struct state {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "lowbit::trunc works on float and double tensors");
    std::array<const detail::nd<const T>*, operands::size> ops{};
    rounding_mode mode;
    detail::stochastic_source rnd;
    bool simd, t_inline = false, t_inverse = false;
    detail::derived_storage<T, 1> tst;
    detail::derived_storage<T, 2> lim;
    T t_dummy = T(1);
    detail::nd<const T> t_d, lo_d, hi_d;

    static shape t_shape(const args<T>& a) {
      if (a.template get<"scale">().rank == 0 && a.template get<"out_scale">().rank == 0) return shape{};  // the usual call
      return broadcast_shape({a.template get<"scale">().get_shape(), a.template get<"out_scale">().get_shape()},
                             {"scale", "out_scale"}, name);
    }

    state(const trunc& op, const args<T>& a, const shape& out)
        : state(op, a, out, t_shape(a)) {}

    state(const trunc& op, const args<T>& a, const shape& out, const shape& ts)
        : mode(op.rounding),
          rnd{op.seed, op.random_bits, op.index_offset},
          simd(detail::simd_enabled()),
          // A t for every output element (a per-element scale or out_scale):
          // the SIMD kernel computes each t where it uses it (trunc_kernel's
          // Inline) rather than in a pass of its own over a t tensor, which it
          // would read once. The scalar path keeps the pass, so the tests
          // compare the two.
          // (Not for the stochastic mode: a declining kernel takes no index.)
          t_inline(S == semantics::reference && std::is_same_v<T, float> && simd && ts.count() > 1 &&
                   ts.count() == out.count() && op.rounding != rounding_mode::stochastic),
          tst(t_inline ? 0 : ts.count()),
          lim(a.template get<"out_bitwidth">().rank == 0 ? 1 : a.template get<"out_bitwidth">().get_shape().count()) {
      const detail::nd<const T>& ss = a.template get<"scale">();
      const detail::nd<const T>& os = a.template get<"out_scale">();
      const detail::nd<const T>& ob = a.template get<"out_bitwidth">();
      T* t = tst.arr[0];
      if constexpr (S == semantics::exact) {
        // Checked only for a nonempty output (the ratio is a property of
        // the computation, not of one input).
        if (out.count() != 0)
          detail::for_each_position<2>(ts, {&ss, &os}, [&](std::size_t i, const std::array<std::ptrdiff_t, 2>& off) {
            const T sv = ss.data[off[0]], o = os.data[off[1]];
            if (!detail::trunc_scale<S>(sv, o, t[i]))
              detail::throw_error(name, " (exact semantics): ",
                                  detail::element_name("out_scale / scale", detail::row_major_nd<T>(ts, t), i),
                                  " = ", detail::format_value(o), " / ", detail::format_value(sv),
                                  " is invalid; expected a ratio whose nearest power of two 2^k is a finite "
                                  "nonzero value (ratio neither overflowing nor underflowing)");
          });
      } else if (!t_inline && out.count() != 0 && ts.count() == 1) {
        // One (scale, out_scale) pair: the kernel's scalar path, directly.
        t[0] = detail::trunc_scale_ref_kernel<T>{}(ss.data[0], os.data[0]);
      } else if (!t_inline && out.count() != 0) {  // with t_inline, no t tensor: a constant dummy operand
        detail::trunc_scales_ref(ts, ss, os, t, simd);  // never rejects
      }
      auto limits = [&](T b, std::size_t i) {
        const auto r = detail::int_limits<S, T>(static_cast<int>(b), op.is_signed, op.narrow);
        lim.arr[0][i] = r.lo;
        lim.arr[1][i] = r.hi;
        return true;
      };
      if (ob.rank == 0)  // a scalar out_bitwidth, directly
        limits(*ob.data, 0);
      else
        detail::visit_elements(ob, limits);
      // The SIMD path multiplies by 1/t when every t allows it (the scalar
      // path keeps dividing, so the SIMD-vs-scalar tests compare the two).
      t_inverse = !t_inline && simd && out.count() != 0 && detail::invert_powers_of_two(t, ts.count());
      // The descriptors are filled in place (a geometry built elsewhere and
      // copied whole is reloaded as wide vectors: a store-forwarding stall).
      if (t_inline) {
        t_d.rank = 0;
        t_d.data = &t_dummy;
      } else {
        detail::set_row_major(t_d, ts.rank(), ts.begin());
        t_d.data = t;
      }
      for (detail::nd_geom* g : {&lo_d, &hi_d}) detail::set_row_major(*g, ob.rank, ob.ext.data());
      lo_d.data = lim.arr[0];
      hi_d.data = lim.arr[1];
      using O = operands;
      ops[O::index<"scale">] = &ss;
      ops[O::index<"zeropt">] = &a.template get<"zeropt">();
      ops[O::index<"t">] = &t_d;
      ops[O::index<"out_scale">] = &os;
      ops[O::index<"lo">] = &lo_d;
      ops[O::index<"hi">] = &hi_d;
    }

    template <detail::stage St>
    void run(const detail::piece<T, operands::size>& pc, bool simd_on) const {
      // The stochastic mode's group cache, on this frame (one per piece and thread).
      detail::with_group_cache(rnd, mode, [&](const detail::stochastic_source& r) { run_with<St>(pc, simd_on, r); });
    }

    /// run() with the random source `rnd` (the state's, with a group cache).
    template <detail::stage St>
    void run_with(const detail::piece<T, operands::size>& pc, bool simd_on, const detail::stochastic_source& rnd) const {
      constexpr std::size_t scale_k = operands::index<"scale">;
      // Power-of-two fast path (see int_quant): a constant scale with an
      // exact reciprocal is multiplied by it (the scalar path keeps
      // dividing); t, by its exact inverse (trunc_kernel::by_t).
      using D = detail::scale_divider;
      if constexpr (S == semantics::reference && std::is_same_v<T, float>) {
        // Per-element t: one loop for every mode (the mode a run-time
        // switch per batch, beside the division that computes t).
        using K = detail::trunc_kernel<S, detail::run_time_mode, St, true>;
        if (t_inline)
          return detail::run_piece_compact(K{D::for_scale(pc.s[scale_k], simd_on && !pc.vary[scale_k]), false, mode},
                                           pc, simd_on);
      }
      // SIMD only with 1/t (trunc_kernel::by_t): a t without an exact
      // inverse (2^127, a subnormal, 0 or NaN) goes to the scalar path.
      const bool simd_t = simd_on && t_inverse;
      const D sd = D::for_scale(pc.s[scale_k], simd_t && !pc.vary[scale_k]);
      detail::with_rounding_mode(mode, [&](auto mc) {
        detail::run_piece(detail::trunc_kernel<S, decltype(mc)::value, St>{sd, t_inverse, decltype(mc)::value, rnd},
                          pc, simd_t);
      });
    }
  };
};

/**
 * QONNX Trunc opset 1 (`Trunc_v1`): drops `in_bitwidth - out_bitwidth`
 * low bits of an already quantized tensor, without clamping.
 *
 * For each element, with every parameter broadcast against x (numpy rules):
 * 1. `y = round_half_even(x / scale + zeropt)`,
 * 2. `y = y / 2^(in_bitwidth - out_bitwidth)` (out_bitwidth > in_bitwidth allowed),
 * 3. `q = round(y)` with `rounding` (no clamping),
 * 4. `Y = (q - zeropt) * scale`.
 * Both bit widths must be integers from 1 to 32 (float) or 53 (double) and
 * take part in broadcasting. Arguments, output and errors as lowbit::trunc
 * (the exact semantics reject a scale that is not finite and > 0).
 *
 * **Example**:
 * ```
 * std::vector<float> x{1000.0f}, y(1);
 * lowbit::trunc_v1<> tr{.rounding = lowbit::rounding_mode::floor};
 * tr(x, 1.0f, 0.0f, 8.0f, 4.0f, y);  // y = {62}: 1000 / 16, floored
 * ```
 */
template <semantics S = semantics::reference>
struct trunc_v1 {
  rounding_mode rounding = rounding_mode::floor;   ///< QONNX attribute `rounding_mode` (default FLOOR).
  /// rounding_mode::stochastic only (a lowbit extension): the seed of the
  /// draws (any value); an element's draw depends only on the seed,
  /// random_bits and its flat index in y.
  std::uint64_t seed = 0;
  /// rounding_mode::stochastic only: bits per draw, 1 to 23 (float) or 32 (double).
  int random_bits = 16;
  /// rounding_mode::stochastic only: the flat index of y's element 0 in a
  /// larger tensor quantized in several calls (row-major pieces), so that
  /// every element gets the draw it gets in one call.
  std::uint64_t index_offset = 0;
  /// Threads for large calls (opt-in; bit-identical results): lowbit::execution.
  execution exec{};

  static constexpr const char* name = "lowbit::trunc_v1";
  /// The operator protocol (detail/protocol.hpp).
  using inputs = detail::names<"scale", "zeropt", "in_bitwidth", "out_bitwidth">;
  using operands = detail::names<"scale", "zeropt", "t">;
  static constexpr bool accepts_double = true;
  /// The attributes by QONNX name, for lowbit::set_attribute.
  static constexpr auto attributes() {
    return std::tuple{detail::attribute{"rounding_mode", &trunc_v1::rounding},
                      detail::attribute{"seed", &trunc_v1::seed},
                      detail::attribute{"random_bits", &trunc_v1::random_bits},
                      detail::attribute{"index_offset", &trunc_v1::index_offset}};
  }

  /// The numpy broadcast of x, scale, zeropt, in_bitwidth and out_bitwidth.
  template <tensor_arg X, tensor_arg Scale, tensor_arg Zeropt, tensor_arg InBw, tensor_arg OutBw>
  shape output_shape(const X& x, const Scale& scale, const Zeropt& zeropt, const InBw& in_bitwidth,
                     const OutBw& out_bitwidth) const {
    return detail::call_output_shape(*this, x, scale, zeropt, in_bitwidth, out_bitwidth);
  }

  /// Truncates x into y. See the class documentation.
  template <tensor_arg X, tensor_arg Scale, tensor_arg Zeropt, tensor_arg InBw, tensor_arg OutBw,
            tensor_arg Y>
  void operator()(const X& x, const Scale& scale, const Zeropt& zeropt, const InBw& in_bitwidth,
                  const OutBw& out_bitwidth, Y&& y) const {
    detail::call(*this, std::forward<Y>(y), x, scale, zeropt, in_bitwidth, out_bitwidth);
  }

 private:
  // ---- the protocol's hooks (detail/driver.hpp) ----
  friend struct detail::protocol_access;
  template <class T>
  using args = detail::call_args<trunc_v1, T>;

  void check_attributes() const { detail::check_rounding_mode(rounding, name); }

  template <class T>
  void check_values(const args<T>& a) const {
    detail::check_random_bits<T>(random_bits, rounding, name);
    detail::validate_bitwidth_tensor(a.template get<"in_bitwidth">(), name, "in_bitwidth");
    detail::validate_bitwidth_tensor(a.template get<"out_bitwidth">(), name, "out_bitwidth");
    if constexpr (S == semantics::exact) detail::check_scale_positive(name, "scale", a.template get<"scale">());
  }

  /// Trunc v1 does not clamp: only the values decide whether a q has a code.
  template <class C, detail::stage, class T>
  bool check_codes(const args<T>&) const {
    return false;
  }

  /// The t operand of valid bit widths ib and ob: 1/t = 2^(ob - ib), exact
  /// (|ob - ib| <= 52).
  template <class T>
  static T inverse_t(T ib, T ob) noexcept {
    return std::ldexp(T(1), static_cast<int>(ob) - static_cast<int>(ib));
  }

  /// The routes' t operand (inverse_t); false for a bit width check_values
  /// rejects, or the stochastic mode (each element's index, the group
  /// cache): the general route then.
  template <class T>
  bool route_inverse_t(T ib, T ob, T& inv_t) const {
    if (rounding == rounding_mode::stochastic || !detail::valid_bitwidth(ib) || !detail::valid_bitwidth(ob))
      return false;
    inv_t = inverse_t(ib, ob);
    return true;
  }

  /// The scalar route (detail/driver.hpp, scalar_route): every input a
  /// scalar, checked as check_values checks them; the operands and kernel
  /// the state and run_with would give the one constant piece.
  template <class T>
  bool run_scalars(const T* x, T* y, std::size_t n, const std::array<T, inputs::size>& p, bool simd) const {
    using I = inputs;
    using O = operands;
    std::array<T, O::size> ops{};
    const T s = p[I::index<"scale">];
    if (!route_inverse_t(p[I::index<"in_bitwidth">], p[I::index<"out_bitwidth">], ops[O::index<"t">])) return false;
    if constexpr (S == semantics::exact)
      if (!detail::positive_scale(s)) return false;
    ops[O::index<"scale">] = s;
    ops[O::index<"zeropt">] = p[I::index<"zeropt">];
    const auto sd = detail::scale_divider::for_scale(s, simd);
    detail::with_rounding_mode(rounding, [&](auto mc) {
      constexpr rounding_mode M = decltype(mc)::value;
      // A loop of its own for the default, FLOOR, and ROUND (run_splat).
      constexpr bool direct = M == rounding_mode::half_even || M == rounding_mode::floor;
      if constexpr (M != rounding_mode::stochastic)
        detail::run_splat<direct>(
            detail::trunc_v1_kernel<S, M, detail::stage::fake>{sd, M, {seed, random_bits, index_offset}}, x, y, n,
            ops, simd);
    });
    return true;
  }

  /// The row route (detail/driver.hpp, row_route): scale and zeropt one
  /// value or one per row of a block, the bit widths one value each,
  /// checked as check_values checks them; the state's kernel on the
  /// row-mode piece. A bit width per row takes the general route.
  template <class T>
  bool run_rows(const T* x, T* y, std::size_t rows, std::size_t cols, std::size_t blocks,
                const std::array<const T*, inputs::size>& p, const std::array<bool, inputs::size>& per_row,
                bool simd) const {
    using I = inputs;
    using O = operands;
    constexpr std::size_t scale_i = I::index<"scale">, ib_i = I::index<"in_bitwidth">, ob_i = I::index<"out_bitwidth">;
    detail::row_inputs<T, O::size> ro;
    if (per_row[ib_i] || per_row[ob_i] || !route_inverse_t(*p[ib_i], *p[ob_i], ro.v[O::index<"t">])) return false;
    if constexpr (S == semantics::exact)
      if (!detail::all_elements(p[scale_i], per_row[scale_i] ? rows : 1,
                                [](auto v) { return detail::positive_scale(v); }))
        return false;
    ro.operand(O::index<"scale">, p[scale_i], per_row[scale_i]);
    ro.operand(O::index<"zeropt">, p[I::index<"zeropt">], per_row[I::index<"zeropt">]);
    const detail::piece<T, O::size> pc = ro.piece_of(x, y, rows, cols, blocks);
    constexpr std::size_t scale_k = O::index<"scale">;
    const auto sd = detail::scale_divider::for_scale(pc.s[scale_k], simd && !pc.vary[scale_k]);
    detail::with_rounding_mode(rounding, [&](auto mc) {
      constexpr rounding_mode M = decltype(mc)::value;
      if constexpr (M != rounding_mode::stochastic)
        detail::run_piece(
            detail::trunc_v1_kernel<S, M, detail::stage::fake>{sd, M, {seed, random_bits, index_offset}}, pc, simd);
    });
    return true;
  }

  /// The kernel operands: scale and zeropt as given, and 1/t = 2^(out - in)
  /// per element of broadcast(in_bitwidth, out_bitwidth) (exact): the
  /// operand named t holds t's inverse (trunc_v1_kernel).
  template <class T>
  struct state {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "lowbit::trunc_v1 works on float and double tensors");
    std::array<const detail::nd<const T>*, operands::size> ops{};
    rounding_mode mode;
    detail::stochastic_source rnd;
    shape ts;
    detail::derived_storage<T, 1> tst;
    detail::nd<const T> t_d;

    state(const trunc_v1& op, const args<T>& a, const shape&)
        : mode(op.rounding),
          rnd{op.seed, op.random_bits, op.index_offset},
          ts(broadcast_shape({a.template get<"in_bitwidth">().get_shape(), a.template get<"out_bitwidth">().get_shape()},
                             {"in_bitwidth", "out_bitwidth"}, name)),
          tst(ts.count()) {
      const detail::nd<const T>& ib = a.template get<"in_bitwidth">();
      const detail::nd<const T>& ob = a.template get<"out_bitwidth">();
      T* t = tst.arr[0];
      detail::for_each_position<2>(ts, {&ib, &ob}, [&](std::size_t i, const std::array<std::ptrdiff_t, 2>& off) {
        t[i] = inverse_t(ib.data[off[0]], ob.data[off[1]]);
      });
      detail::set_row_major(t_d, ts.rank(), ts.begin());
      t_d.data = t;
      ops[operands::index<"scale">] = &a.template get<"scale">();
      ops[operands::index<"zeropt">] = &a.template get<"zeropt">();
      ops[operands::index<"t">] = &t_d;
    }

    template <detail::stage St>
    void run(const detail::piece<T, operands::size>& pc, bool simd) const {
      // The stochastic mode's group cache, on this frame (one per piece and thread).
      detail::with_group_cache(rnd, mode, [&](const detail::stochastic_source& r) { run_with<St>(pc, simd, r); });
    }

    /// run() with the random source `rnd` (the state's, with a group cache).
    template <detail::stage St>
    void run_with(const detail::piece<T, operands::size>& pc, bool simd, const detail::stochastic_source& rnd) const {
      // Power-of-two fast path (see int_quant): a constant scale with an
      // exact reciprocal is multiplied by it; the scalar path keeps dividing.
      constexpr std::size_t scale_k = operands::index<"scale">;
      const auto sd = detail::scale_divider::for_scale(pc.s[scale_k], simd && !pc.vary[scale_k]);
      detail::with_rounding_mode(mode, [&](auto mc) {
        detail::run_piece(detail::trunc_v1_kernel<S, decltype(mc)::value, St>{sd, decltype(mc)::value, rnd}, pc, simd);
      });
    }
  };
};

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_TRUNC_HPP
