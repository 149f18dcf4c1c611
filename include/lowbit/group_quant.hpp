// SPDX-License-Identifier: Apache-2.0
/**
 * @file group_quant.hpp
 * Group-wise IntQuant: IntQuant with one scale and zero point per group of
 * `group_size` consecutive elements along an axis (the last group of a line
 * ragged), the int4/int8 weight format of GPTQ, AWQ and ONNX's blocked
 * QuantizeLinear; and the per-group parameters weight quantizers derive
 * from the values (min/max, asymmetric and symmetric).
 * The whole semantics, step by step, is in docs/semantics.md
 * ("Group-wise IntQuant").
 */
#ifndef LOWBIT_GROUP_QUANT_HPP
#define LOWBIT_GROUP_QUANT_HPP

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "attributes.hpp"
#include "broadcast.hpp"
#include "config.hpp"
#include "detail/block.hpp"
#include "detail/buffer.hpp"
#include "detail/code_checks.hpp"
#include "detail/driver.hpp"
#include "detail/elementwise.hpp"
#include "detail/integer.hpp"
#include "detail/simd.hpp"
#include "detail/stage.hpp"
#include "error.hpp"
#include "int_quant.hpp"
#include "parallel.hpp"
#include "rounding.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {

/// The axis `axis` of a tensor of rank `rank` as an index: numpy's rule,
/// -1 the last axis, -rank the first. Throws for any other value.
inline std::size_t group_axis(const char* op, int axis, const shape& s) {
  const long long r = static_cast<long long>(s.rank());
  if (r == 0)
    throw_error(op, ": axis = ", dec(axis), " is invalid for a tensor of shape ", s.to_string(),
                "; expected a tensor with an axis (x has rank 0)");
  if (axis < -r || axis >= r)
    throw_error(op, ": axis = ", dec(axis), " is invalid for a tensor of shape ", s.to_string(), "; expected an axis from ",
                dec(-r), " to ", dec(r - 1), " (negative axes count from the last, -1)");
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// A group size of 0 has no groups.
inline void check_group_size(const char* op, std::size_t k) {
  if (k == 0) throw_error(op, ": group_size = 0 is invalid; expected at least 1");
}

/// "x's shape [4, 300] in groups of 128 along axis 1: ceil(300 / 128) = 3",
/// for the messages of a parameter of the wrong shape.
LOWBIT_NOINLINE_COLD inline std::string group_shape_reason(const shape& x, block_layout b) {
  const std::size_t n = x[b.axis];
  return cat("x's shape ", x.to_string(), " in groups of ", dec(b.k), " along axis ", dec(b.axis), ": ceil(", dec(n),
             " / ", dec(b.k), ") = ", dec(n / b.k + (n % b.k != 0)), " groups");
}

/// Checks that the parameter `name` has exactly the group shape `gs` of x.
template <class T>
void check_group_param(const char* op, const char* name, const nd_geom& p, const shape& x, block_layout b,
                       const shape& gs) {
  if (!has_shape(p, gs)) [[unlikely]]
    throw_error(op, ": ", name, " has shape ", p.get_shape().to_string(), "; expected the group shape ", gs.to_string(),
                " (", group_shape_reason(x, b), ")");
}

/// The larger value; NaN if either is NaN (a NaN poisons its group).
/// Between +0 and -0 either may be returned: group_params' results do not
/// depend on the sign of a zero minimum or maximum (see there).
template <class T>
struct max_reduction {
  T init = -std::numeric_limits<T>::infinity();
  template <class V>
  LOWBIT_ALWAYS_INLINE V map(V v) const noexcept {
    return v;
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V combine(V a, V b) const noexcept {
    const V m = detail::select(a < b, b, a);
    return detail::select(detail::is_nan(a), a, detail::select(detail::is_nan(b), b, m));
  }
};

/// The smaller value; NaN if either is NaN.
template <class T>
struct min_reduction {
  T init = std::numeric_limits<T>::infinity();
  template <class V>
  LOWBIT_ALWAYS_INLINE V map(V v) const noexcept {
    return v;
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V combine(V a, V b) const noexcept {
    const V m = detail::select(b < a, b, a);
    return detail::select(detail::is_nan(a), a, detail::select(detail::is_nan(b), b, m));
  }
};

}  // namespace detail

/**
 * Group-wise IntQuant: IntQuant (lowbit::int_quant) with one scale and one
 * zero point per group of `group_size` consecutive elements of x along
 * dimension `axis`. When group_size does not divide the extent n of that
 * dimension, the last group of every line holds the n % group_size
 * elements left over (a ragged group).
 *
 * scale and zeropt have the **group shape**: x's shape with extent
 * ceil(n / group_size) along `axis`, any strides (scale[..., g, ...] is the
 * scale of the elements g * group_size .. g * group_size + group_size - 1).
 * bitwidth is one value (a scalar or a one-element tensor). Each element is
 * computed exactly as IntQuant computes it with its group's scale and zero
 * point (the same kernels, both semantics, every rounding mode), so the
 * result is int_quant's with the parameters expanded to x's shape, bit for
 * bit:
 * 1. `y = x / scale[g] + zeropt[g]` (true division),
 * 2. if `is_signed` and `bitwidth == 1`: `q = y >= 0 ? +1 : -1` (bipolar),
 * 3. else `q = round(clamp(y, min_int, max_int))` with `rounding`,
 * 4. `Y = (q - zeropt[g]) * scale[g]`.
 *
 * The output has x's shape; y may be x itself (in place), and must not
 * overlap scale or zeropt. Groups are formed along the axis whatever x's
 * strides. lowbit::quantize_codes and lowbit::dequantize take the operator
 * as they take int_quant (codes = q); group_params derives the parameters.
 *
 * Attributes beyond IntQuant's: `group_size` (default 128, the group size
 * of GPTQ's and AWQ's int4 checkpoints; set_attribute also accepts ONNX
 * QuantizeLinear's name `block_size`) and `axis` (default -1, the last
 * axis: the input features of a [out_features, in_features] weight, along
 * which GPTQ and AWQ form groups; negative axes count from the last, as in
 * numpy and ONNX).
 *
 * @tparam S semantics::reference (QONNX's float32 results, bit for bit) or
 *           semantics::exact, as for int_quant.
 * @throws lowbit::error, before anything is written, for an axis outside
 *         -rank..rank-1 (or an x of rank 0), group_size 0, a scale or
 *         zeropt not of the group shape, a bitwidth with more than one
 *         element or not an integer from 1 to 32 (53 for double), an
 *         invalid rounding mode, a y of the wrong shape or overlapping,
 *         and in the exact semantics a scale that is not finite and > 0.
 *
 * **Example**:
 * ```
 * // A [2, 6] weight, groups of 4 along the last axis: 2 groups per row,
 * // the second ragged (2 elements); unsigned 4-bit codes.
 * lowbit::group_int_quant<> q{.is_signed = false, .group_size = 4};
 * std::vector<float> w(12), y(12), scale{0.1f, 0.2f, 0.05f, 0.5f}, zp{8, 8, 7, 0};
 * q(lowbit::strided_view<const float>(w.data(), {2, 6}), lowbit::strided_view<const float>(scale.data(), {2, 2}),
 *   lowbit::strided_view<const float>(zp.data(), {2, 2}), 4.0f, lowbit::strided_view<float>(y.data(), {2, 6}));
 * ```
 */
template <semantics S = semantics::reference>
struct group_int_quant {
  bool is_signed = true;                              ///< QONNX attribute `signed`.
  bool narrow = false;                                ///< QONNX attribute `narrow`.
  rounding_mode rounding = rounding_mode::half_even;  ///< QONNX attribute `rounding_mode`.
  /// Elements per group along `axis` (at least 1); attribute `group_size`
  /// (or ONNX's `block_size`).
  std::size_t group_size = 128;
  /// The grouped dimension of x: 0 .. rank-1, or -rank .. -1 from the last.
  int axis = -1;
  /// Threads for large calls (opt-in; bit-identical results): lowbit::execution.
  execution exec{};
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

  static constexpr const char* name = "lowbit::group_int_quant";
  /// The operator protocol (detail/protocol.hpp): IntQuant's inputs and
  /// kernel operands; scale and zeropt are read one value per group.
  using inputs = detail::names<"scale", "zeropt", "bitwidth">;
  using operands = detail::names<"scale", "zeropt", "lo", "hi", "bipolar">;
  static constexpr bool accepts_double = true;
  /// The attributes by name, for lowbit::set_attribute.
  static constexpr auto attributes() {
    return std::tuple{detail::attribute{"signed", &group_int_quant::is_signed},
                      detail::attribute{"narrow", &group_int_quant::narrow},
                      detail::attribute{"rounding_mode", &group_int_quant::rounding},
                      detail::attribute{"group_size", &group_int_quant::group_size, "block_size"},
                      detail::attribute{"axis", &group_int_quant::axis},
                      detail::attribute{"seed", &group_int_quant::seed},
                      detail::attribute{"random_bits", &group_int_quant::random_bits},
                      detail::attribute{"index_offset", &group_int_quant::index_offset}};
  }

  /**
   * The group shape for an x of shape `x_shape`: the shape of scale and
   * zeropt (and of group_params' outputs).
   * @throws lowbit::error for an axis not of x_shape or group_size 0.
   */
  shape group_shape(const shape& x_shape) const {
    detail::check_group_size(name, group_size);
    return detail::block_shape(x_shape, {detail::group_axis(name, axis, x_shape), group_size});
  }

  /**
   * The shape of the output for these arguments: x's shape (scale, zeropt
   * and bitwidth take no part in broadcasting).
   * @throws lowbit::error as operator() does for the attributes, shapes and
   *         bit width.
   */
  template <tensor_arg X, tensor_arg Scale, tensor_arg Zeropt, tensor_arg Bitwidth>
  shape output_shape(const X& x, const Scale& scale, const Zeropt& zeropt, const Bitwidth& bitwidth) const {
    return detail::call_output_shape(*this, x, scale, zeropt, bitwidth);
  }

  /// Quantizes x into y. See the class documentation.
  template <tensor_arg X, tensor_arg Scale, tensor_arg Zeropt, tensor_arg Bitwidth, tensor_arg Y>
  void operator()(const X& x, const Scale& scale, const Zeropt& zeropt, const Bitwidth& bitwidth, Y&& y) const {
    detail::call(*this, std::forward<Y>(y), x, scale, zeropt, bitwidth);
  }

 private:
  // ---- the protocol's hooks (detail/driver.hpp) ----
  friend struct detail::protocol_access;
  template <class T>
  using args = detail::call_args<group_int_quant, T>;

  void check_attributes() const {
    detail::check_rounding_mode(rounding, name);
    detail::check_group_size(name, group_size);
  }

  /// The output has x's shape: the parameters are per group, and the bit
  /// width one value.
  template <class T>
  std::array<bool, inputs::size> broadcast_inputs(const args<T>&) const {
    return {false, false, false};
  }

  /// The layout, the parameters' shapes and the bit width (output_shape()
  /// makes these checks too).
  template <class T>
  void check_shape_values(const args<T>& a) const {
    const shape xs = a.x().get_shape();
    const detail::block_layout b{detail::group_axis(name, axis, xs), group_size};
    if (xs.rank() >= max_rank)
      detail::throw_error(name, ": x has shape ", xs.to_string(), " of rank ", detail::dec(xs.rank()),
                          "; expected a rank below ", detail::dec(max_rank), " (the groups split the axis in two)");
    const shape gs = detail::block_shape(xs, b);
    detail::check_group_param<T>(name, "scale", a.template get<"scale">(), xs, b, gs);
    detail::check_group_param<T>(name, "zeropt", a.template get<"zeropt">(), xs, b, gs);
    const detail::nd<const T>& bs = a.template get<"bitwidth">();
    if (bs.rank != 0 && bs.get_shape().count() != 1)
      detail::throw_error(name, ": bitwidth has shape ", bs.get_shape().to_string(),
                          "; expected one value (a scalar or a one-element tensor): every group has the same bit width");
    detail::validate_bitwidth_tensor(bs, name, "bitwidth");
  }

  template <class T>
  void check_values(const args<T>& a) const {
    detail::check_random_bits<T>(random_bits, rounding, name);
    check_shape_values(a);
    if constexpr (S == semantics::exact) detail::check_scale_positive(name, "scale", a.template get<"scale">());
  }

  /// Codes of type C, as int_quant: unsigned codes of a signed operator
  /// are bits (bit width 1); the clamp range must fit C.
  template <class C, detail::stage St, class T>
  bool check_codes(const args<T>& a) const {
    const detail::nd<const T>& bs = a.template get<"bitwidth">();
    const bool bits = std::is_unsigned_v<C> && is_signed;
    if (bits) detail::check_bits_bitwidth(name, detail::code_type_name<C>(), bs);
    if constexpr (St == detail::stage::code) detail::check_limits<C, S, T>(name, "bitwidth", bs, is_signed, narrow, true);
    return bits;
  }

  /// The kernel operands: scale and zeropt per group (read in place by the
  /// block step), the clamp limits and the bipolar flag of the one bit width.
  template <class T>
  struct state {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "lowbit::group_int_quant works on float and double tensors");
    std::array<const detail::nd<const T>*, operands::size> ops{};
    /// The block step's hooks (detail/driver.hpp): the groups, and which
    /// operands hold one value per group.
    detail::block_layout blocks;
    std::array<bool, operands::size> per_block{};
    rounding_mode mode;
    detail::stochastic_source rnd;
    bool bipolar = false;
    T lo = T(0), hi = T(0), bip = T(0);
    detail::nd<const T> lo_d, hi_d, bip_d;  // rank 0

    state(const group_int_quant& op, const args<T>& a, const shape& out)
        : mode(op.rounding), rnd{op.seed, op.random_bits, op.index_offset} {
      blocks = {detail::group_axis(name, op.axis, out), op.group_size};
      const auto r = detail::int_limits<S, T>(static_cast<int>(*a.template get<"bitwidth">().data), op.is_signed,
                                              op.narrow);
      bipolar = r.bipolar;
      if (!bipolar) {
        lo = r.lo;
        hi = r.hi;
      }
      bip = bipolar ? T(1) : T(0);
      lo_d.data = &lo;
      hi_d.data = &hi;
      bip_d.data = &bip;
      using O = operands;
      ops[O::index<"scale">] = &a.template get<"scale">();
      ops[O::index<"zeropt">] = &a.template get<"zeropt">();
      ops[O::index<"lo">] = &lo_d;
      ops[O::index<"hi">] = &hi_d;
      ops[O::index<"bipolar">] = &bip_d;
      per_block[O::index<"scale">] = per_block[O::index<"zeropt">] = true;
    }
    state(const state&) = delete;
    state& operator=(const state&) = delete;

    /// IntQuant's kernels on a piece: the bipolar one for signed 1 bit, else
    /// the rounding mode's (a group's power-of-two scale constant over the
    /// piece multiplies by its exact reciprocal, as in int_quant).
    template <detail::stage St>
    void run(const detail::piece<T, operands::size>& pc, bool simd) const {
      // The stochastic mode's group cache, on this frame (one per piece and thread).
      detail::with_group_cache(rnd, mode, [&](const detail::stochastic_source& r) { run_with<St>(pc, simd, r); });
    }

    /// run() with the random source `rnd` (the state's, with a group cache).
    template <detail::stage St>
    void run_with(const detail::piece<T, operands::size>& pc, bool simd, const detail::stochastic_source& rnd) const {
      if (bipolar) return detail::run_piece(detail::int_quant_bipolar_kernel<S, St>{}, pc, simd);
      constexpr std::size_t scale_k = operands::index<"scale">;
      detail::with_rounding_mode(mode, [&](auto mc) {
        constexpr rounding_mode M = decltype(mc)::value;
        const detail::int_quant_kernel<S, M, St> k{
            detail::scale_divider::for_scale(pc.s[scale_k], simd && !pc.vary[scale_k]), M, rnd};
        detail::run_piece(k, pc, simd);
      });
    }
  };
};

// ---- parameters derived from each group ------------------------------------

/**
 * How group_params derives a group's scale and zero point from its values
 * (AWQ's pseudo_quantize_tensor, docs/semantics.md "Group-wise IntQuant").
 */
enum class group_params_mode {
  /// min/max of the group: scale = max(max - min, 1e-5) / (2^b - 1), zero
  /// point = clamp(-round(min / scale), 0, 2^b - 1); unsigned codes 0..2^b-1.
  asymmetric,
  /// max |x| of the group: scale = max(max|x|, 1e-5) / (2^(b-1) - 1), zero
  /// point 0; signed codes -2^(b-1)..2^(b-1)-1.
  symmetric,
  /// GPTQ's find_params (asymmetric): the range widened to hold 0
  /// (min <= 0 <= max), [-1, 1] for a group of zeros; scale = (max - min) /
  /// (2^b - 1), zero point = round(-min / scale); unsigned codes 0..2^b-1.
  asymmetric_gptq,
};

namespace detail {

/// Throws for the first element of x (row-major) that is NaN or infinite,
/// naming it and its group.
template <class T>
[[noreturn]] LOWBIT_NOINLINE_COLD void throw_non_finite_group(const char* op, const nd<const T>& x, block_layout b) {
  const shape xs = x.get_shape(), gs = block_shape(xs, b);
  std::size_t bad = 0;
  T v = T(0);
  bool found = false;
  visit_elements(x, [&](T e, std::size_t i) {
    if (std::isfinite(e)) return true;
    bad = i;
    v = e;
    found = true;
    return false;
  });
  std::array<std::size_t, max_rank> idx{};
  for (std::size_t r = xs.rank(), f = bad; r-- > 0;) {
    idx[r] = f % xs[r];
    f /= xs[r];
  }
  idx[b.axis] /= b.k;
  std::size_t g = 0;
  for (std::size_t r = 0; r < gs.rank(); ++r) g = g * gs[r] + idx[r];
  nd_geom gg;
  set_row_major(gg, gs.rank(), gs.begin());
  throw_error(op, ": ", element_name("x", x, bad), " = ", found ? format_value(v) : std::string("?"), " in group ",
              element_name("", gg, g), " is invalid; expected finite values (a group's scale and zero point are ",
              "undefined with NaN or infinity)");
}

template <class T>
void group_params_of(const nd<const T>& x, int axis, std::size_t group_size, int bitwidth, group_params_mode mode,
                     nd<T>& sd, nd<T>& zd) {
  static constexpr const char* op = "lowbit::group_params";
  check_group_size(op, group_size);
  const shape xs = x.get_shape();
  const block_layout b{group_axis(op, axis, xs), group_size};
  const bool sym = mode == group_params_mode::symmetric, gptq = mode == group_params_mode::asymmetric_gptq;
  if (mode != group_params_mode::asymmetric && !sym && !gptq)
    throw_error(op, ": mode = ", dec(static_cast<int>(mode)),
                " is invalid; expected asymmetric, symmetric or asymmetric_gptq");
  const int min_b = sym ? 2 : 1;
  if (bitwidth < min_b || bitwidth > 24)
    throw_error(op, ": bitwidth = ", dec(bitwidth), " is invalid; expected an integer from ", dec(min_b),
                " to 24 (", sym ? "symmetric: 2^(b-1) - 1 >= 1" : "asymmetric", ", 2^b - 1 exact in float)");
  const shape gs = block_shape(xs, b);
  check_output(op, sd, gs, "scales", "the group shape");
  check_output(op, zd, gs, "zeropts", "the group shape");
  const mem_tensor sm = mem_of("scales", sd), zm = mem_of("zeropts", zd), xm = mem_of("x", x);
  if (!mem_empty(sm)) {
    check_disjoint(op, sm, xm);
    if (!mem_empty(zm)) check_disjoint(op, sm, zm);
  }
  if (!mem_empty(zm)) check_disjoint(op, zm, xm);
  const std::size_t ng = gs.count();
  if (ng == 0) return;
  // Every check is made; the values are computed into scratch arrays, checked
  // (finite), and only then written.
  const bool simd = simd_enabled();
  buffer<T> s(ng), z(ng);
  const T eps = T(1e-5);  // AWQ's clamp(min=1e-5), in x's type
  if (sym) {
    block_reduce(x, b, s.data(), max_abs_reduction<T>{}, simd);
    const T maxq = static_cast<T>((1 << (bitwidth - 1)) - 1);
    for (std::size_t g = 0; g < ng; ++g) {
      T a = s[g];
      if (!std::isfinite(a)) throw_non_finite_group(op, x, b);
      if (a < eps) a = eps;
      s[g] = a / maxq;
      z[g] = T(0);
    }
  } else {
    block_reduce(x, b, s.data(), max_reduction<T>{}, simd);
    block_reduce(x, b, z.data(), min_reduction<T>{}, simd);
    const T maxq = static_cast<T>((1 << bitwidth) - 1);
    for (std::size_t g = 0; g < ng; ++g) {
      T mx = s[g], mn = z[g];
      if (!std::isfinite(mx) || !std::isfinite(mn)) throw_non_finite_group(op, x, b);
      if (gptq) {
        // torch.minimum(min, 0), torch.maximum(max, 0); a range of zeros
        // (either sign) becomes [-1, 1].
        if (mn > T(0)) mn = T(0);
        if (mx < T(0)) mx = T(0);
        if (mn == T(0) && mx == T(0)) {
          mn = T(-1);
          mx = T(1);
        }
      }
      T r = mx - mn;  // AWQ: +-0 - +-0 is +-0, clamped to eps below whatever the signs
      if (!std::isfinite(r)) {
        nd_geom gg;
        set_row_major(gg, gs.rank(), gs.begin());
        throw_error(op, ": group ", element_name("", gg, g), " has max - min = ", format_value(mx), " - (",
                    format_value(mn), "), which overflows to infinity; expected a range max - min below ",
                    format_value(std::numeric_limits<T>::max()));
      }
      T zp;
      T sc;
      if (gptq) {
        // r > 0 (min <= 0 <= max, not both 0), so -min / scale is within
        // [0, maxq (1 + 2 ulp)]: the clamp below (GPTQ has none) changes
        // nothing unless b > 22.
        sc = r / maxq;
        zp = round_integral<semantics::exact, rounding_mode::half_even>(T(-mn / sc));
      } else {
        if (r < eps) r = eps;
        sc = r / maxq;
        zp = -round_integral<semantics::exact, rounding_mode::half_even>(T(mn / sc));
      }
      if (zp < T(0)) zp = T(0);
      if (zp > maxq) zp = maxq;
      s[g] = sc;
      z[g] = zp + T(0);  // +0 for a zero point of -0 (a zero minimum)
    }
  }
  for_each_element(sd, [&](std::size_t i, std::ptrdiff_t off) { sd.data[off] = s[i]; });
  for_each_element(zd, [&](std::size_t i, std::ptrdiff_t off) { zd.data[off] = z[i]; });
}

}  // namespace detail

/**
 * The scale and zero point of every group of x, derived from the group's
 * values as the weight quantizer AWQ does (mit-han-lab/llm-awq,
 * awq/quantize/quantizer.py, pseudo_quantize_tensor), each step one
 * rounding in x's type (float: float32):
 *
 * - asymmetric (AWQ's `zero_point=True`): `mx`, `mn` the group's largest
 *   and smallest values (0 is *not* added to the range, unlike GPTQ's
 *   find_params); `r = max(mx - mn, 1e-5)`; `scale = r / (2^b - 1)`;
 *   `zeropt = clamp(-round_half_even(mn / scale), 0, 2^b - 1)` (+0 for
 *   zero). Quantize with is_signed = false (codes 0 .. 2^b - 1).
 * - symmetric (AWQ's `zero_point=False`): `a = max(max |x|, 1e-5)`;
 *   `scale = a / (2^(b-1) - 1)`; `zeropt = 0`. Quantize with
 *   is_signed = true (codes -2^(b-1) .. 2^(b-1) - 1).
 * - asymmetric_gptq (GPTQ's find_params, IST-DASLab/gptq quant.py, with
 *   sym=False and mse=False): `mn = min(min, 0)`, `mx = max(max, 0)`, both
 *   zero: `mn = -1, mx = 1`; `scale = (mx - mn) / (2^b - 1)`;
 *   `zeropt = round_half_even(-mn / scale)` (clamped to 0 .. 2^b - 1, a
 *   no-op for b <= 22). Quantize with is_signed = false.
 *
 * group_quantizer(mode, axis, group_size) gives the matching operator.
 * Groups, axis and group_size are those of group_int_quant; scales and
 * zeropts are views of x's element type with the group shape. A group of
 * equal values v has r = 1e-5 (asymmetric): it comes back as about
 * +-1e-5, not v, as in AWQ (docs/semantics.md lists the degenerate groups).
 *
 * @throws lowbit::error, before anything is written, for an axis outside
 *         -rank..rank-1, group_size 0, a bitwidth outside 1..24 (asymmetric modes)
 *         or 2..24 (symmetric), outputs not of the group shape or
 *         overlapping x or each other, a NaN or infinite element (naming it
 *         and its group; AWQ asserts that no value is NaN), or a group whose
 *         max - min overflows.
 *
 * **Example**:
 * ```
 * std::vector<float> w{-1.0f, 0.5f, 2.0f, 0.25f}, s(1), z(1);
 * lowbit::group_params(w, -1, 128, 4, lowbit::group_params_mode::asymmetric, s, z);
 * // s = {0.2f} (3 / 15), z = {5} (-round(-1 / 0.2))
 * ```
 */
template <tensor_arg X, tensor_arg Scales, tensor_arg Zeropts>
void group_params(const X& x, int axis, std::size_t group_size, int bitwidth, group_params_mode mode, Scales&& scales,
                  Zeropts&& zeropts) {
  if constexpr (detail::io_types_ok<X, Scales, float, double>() && detail::io_types_ok<X, Zeropts, float, double>()) {
    using T = detail::x_value_t<X>;
    const detail::tensor_in<T> xs(x);
    detail::nd<T> sd = detail::output_nd<T>(std::forward<Scales>(scales));
    detail::nd<T> zd = detail::output_nd<T>(std::forward<Zeropts>(zeropts));
    detail::group_params_of(xs.d, axis, group_size, bitwidth, mode, sd, zd);
  }
}

/**
 * The group_int_quant that goes with group_params' `mode`: unsigned for
 * asymmetric, signed for symmetric, not narrow, ROUND (half to even, as
 * torch.round), with the given axis and group size.
 */
template <semantics S = semantics::reference>
group_int_quant<S> group_quantizer(group_params_mode mode, int axis = -1, std::size_t group_size = 128) {
  group_int_quant<S> q;
  q.is_signed = mode == group_params_mode::symmetric;  // asymmetric, asymmetric_gptq: unsigned
  q.narrow = false;
  q.rounding = rounding_mode::half_even;
  q.axis = axis;
  q.group_size = group_size;
  return q;
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_GROUP_QUANT_HPP
