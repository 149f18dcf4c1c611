// SPDX-License-Identifier: Apache-2.0
/**
 * @file int_quant.hpp
 * QONNX IntQuant (alias Quant): uniform integer fake-quantization.
 * The whole semantics, step by step, is in docs/semantics.md ("IntQuant").
 */
#ifndef LOWBIT_INT_QUANT_HPP
#define LOWBIT_INT_QUANT_HPP

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

#include "attributes.hpp"
#include "broadcast.hpp"
#include "config.hpp"
#include "detail/code_checks.hpp"
#include "detail/divide.hpp"
#include "detail/driver.hpp"
#include "detail/elementwise.hpp"
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

/// The divider (a base) multiplies when the scale is a power of two with an
/// exact reciprocal (the power-of-two fast path, scale_divider).
/// St (detail::stage) selects the whole operator, q only, or the
/// dequantization of a q passed as x (codes.hpp); likewise below.
template <semantics S, rounding_mode M, stage St = stage::fake>
struct int_quant_kernel : scale_divider {
  /// The mode when M is run_time_mode (round_step).
  rounding_mode mode = M;
  /// The seed and random bits of the stochastic mode (detail/stochastic.hpp).
  stochastic_source rnd{};
  /// The stochastic mode (and the run-time mode, which may be it) takes
  /// each element's flat output index.
  static constexpr bool index_aware = needs_index<M>;
  /// The mode is stochastic: the row loop draws whole groups (stochastic_kernel).
  static constexpr bool stochastic = M == rounding_mode::stochastic;
  /// The scalar loop's kernel, shared by every mode (scalar_kernel_of).
  int_quant_kernel<S, run_time_mode, St> scalar_kernel() const noexcept { return {*this, mode, rnd}; }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V x, V scale, V zp, V lo, V hi, V bipolar) const noexcept {
    return eval(V(0), x, scale, zp, lo, hi, bipolar);
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(element_index idx, V x, V scale, V zp, V lo, V hi, V bipolar) const noexcept {
    return eval(rnd.template threshold<M, V>(mode, idx), x, scale, zp, lo, hi, bipolar);
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V eval(V u, V x, V scale, V zp, V lo, V hi, V /*bipolar*/) const noexcept {
    if constexpr (St == stage::dequant) {
      return (void)u, dequantize(x, scale, zp);
    } else {
      const V y = scaled_input(*this, x, scale, zp);
      const V q = round_step_any_zero<S, M>(clamp<S>(y, lo, hi), mode, u);
      if constexpr (St == stage::code) return q;
      else return dequantize(q, scale, zp);
    }
  }
};

/// Signed 1-bit IntQuant: q = +1 for y >= 0 (-0 included), -1 below;
/// NaN gives -1 in reference (QONNX's np.where) and NaN in exact.
template <semantics S, stage St = stage::fake>
struct int_quant_bipolar_kernel {
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V x, V scale, V zp, V, V, V) const noexcept {
    using T = lane_t<V>;
    if constexpr (St == stage::dequant) {
      return dequantize(x, scale, zp);
    } else {
      const V y = scaled_input(x, scale, zp);
      V q = detail::select(y >= V(T(0)), V(T(1)), V(T(-1)));
      if constexpr (S == semantics::exact) q = detail::select(detail::is_nan(y), y, q);
      if constexpr (St == stage::code) return q;
      else return dequantize(q, scale, zp);
    }
  }
};

}  // namespace detail

/**
 * QONNX IntQuant (also registered as Quant): fake-quantizes a float tensor to
 * a uniform integer grid and back.
 *
 * For each element, with every parameter broadcast against x (numpy rules):
 * 1. `y = x / scale + zeropt` (two float operations, true division),
 * 2. if `is_signed` and `bitwidth == 1`: `q = y >= 0 ? +1 : -1` (bipolar),
 * 3. else `q = round(clamp(y, min_int, max_int))` with `rounding`,
 * 4. `Y = (q - zeropt) * scale`.
 * `min_int..max_int` is `-2^(b-1)..2^(b-1)-1` signed, `0..2^b-1` unsigned;
 * `narrow` raises a signed minimum by one and lowers an unsigned maximum by one.
 * Special values, the limits for b > 24 and every difference between the two
 * semantics are listed in docs/semantics.md.
 *
 * Arguments are lowbit::tensor_arg: std::span, std::vector, lowbit::strided_view,
 * std::mdspan or Kokkos mdspan, and, for the parameters, plain scalars. x and
 * y have element type float or double; tensor parameters have x's element
 * type. The bit width may be a tensor (per-channel bit widths); it must hold
 * integers from 1 to 32 (float) or 53 (double). y must have exactly the
 * broadcast shape (output_shape()), which can have a higher rank than x. y may
 * be x itself (in place); it must not overlap a parameter.
 *
 * @tparam S semantics::reference (QONNX's float32 results, bit for bit) or
 *           semantics::exact.
 * @throws lowbit::error for shapes that do not broadcast, a y of the wrong
 *         shape, an invalid bit width or rounding mode, and in the exact
 *         semantics a scale that is not finite and > 0. Nothing is written then.
 *
 * **Example**:
 * ```
 * std::vector<float> x{0.26f, -1.3f, 7.9f}, y(3);
 * lowbit::int_quant<> q{.is_signed = true, .narrow = false,
 *                       .rounding = lowbit::rounding_mode::half_even};
 * q(x, 0.5f, 0.0f, 4.0f, y);  // y = {0.5, -1.5, 3.5}
 * ```
 */
template <semantics S = semantics::reference>
struct int_quant {
  bool is_signed = true;                               ///< QONNX attribute `signed`.
  bool narrow = false;                                 ///< QONNX attribute `narrow`.
  rounding_mode rounding = rounding_mode::half_even;   ///< QONNX attribute `rounding_mode`.
  /// Threads for large calls (opt-in; bit-identical results): lowbit::execution.
  execution exec{};
  /// rounding_mode::stochastic only (a lowbit extension): the seed of the
  /// draws. Any value is valid; the draw of an element depends only on the
  /// seed, random_bits and the element's flat index in y.
  std::uint64_t seed = 0;
  /// rounding_mode::stochastic only: bits per draw, 1 to 23 (float) or 32 (double).
  int random_bits = 16;
  /// rounding_mode::stochastic only: the flat index of y's element 0 in a
  /// larger tensor quantized in several calls (row-major pieces), so that
  /// every element gets the draw it gets in one call.
  std::uint64_t index_offset = 0;

  static constexpr const char* name = "lowbit::int_quant";
  /// The operator protocol (detail/protocol.hpp): the inputs after x, the
  /// kernel's operands, and x's element types.
  using inputs = detail::names<"scale", "zeropt", "bitwidth">;
  using operands = detail::names<"scale", "zeropt", "lo", "hi", "bipolar">;
  static constexpr bool accepts_double = true;
  /// The attributes by QONNX name, for lowbit::set_attribute.
  static constexpr auto attributes() {
    return std::tuple{detail::attribute{"signed", &int_quant::is_signed},
                      detail::attribute{"narrow", &int_quant::narrow},
                      detail::attribute{"rounding_mode", &int_quant::rounding},
                      detail::attribute{"seed", &int_quant::seed},
                      detail::attribute{"random_bits", &int_quant::random_bits},
                      detail::attribute{"index_offset", &int_quant::index_offset}};
  }

  /**
   * The shape of the output for these arguments: the numpy broadcast of x,
   * scale, zeropt and bitwidth, where a bitwidth that makes the operator
   * bipolar (signed, all ones) takes no part, as in QONNX.
   * @throws lowbit::error as operator() does for the attributes, shapes and
   *         bit widths.
   */
  template <tensor_arg X, tensor_arg Scale, tensor_arg Zeropt, tensor_arg Bitwidth>
  shape output_shape(const X& x, const Scale& scale, const Zeropt& zeropt,
                     const Bitwidth& bitwidth) const {
    return detail::call_output_shape(*this, x, scale, zeropt, bitwidth);
  }

  /// Quantizes x into y. See the class documentation.
  template <tensor_arg X, tensor_arg Scale, tensor_arg Zeropt, tensor_arg Bitwidth, tensor_arg Y>
  void operator()(const X& x, const Scale& scale, const Zeropt& zeropt, const Bitwidth& bitwidth,
                  Y&& y) const {
    detail::call(*this, std::forward<Y>(y), x, scale, zeropt, bitwidth);
  }

 private:
  // ---- the protocol's hooks (detail/driver.hpp) ----
  friend struct detail::protocol_access;
  template <class T>
  using args = detail::call_args<int_quant, T>;

  /// QONNX's bipolar case: signed, and every bit width 1. A bit-width
  /// tensor with no elements is not (QONNX's `bitwidth == 1` test is false
  /// for it), so it then takes part in broadcasting, and fails there
  /// against a non-empty x. Reads each distinct element once; validates
  /// nothing.
  template <class T>
  bool bipolar_bits(const args<T>& a) const {
    const detail::nd<const T>& bs = a.template get<"bitwidth">();
    if (bs.rank == 0) return is_signed && *bs.data == T(1);  // a scalar (count 1), checked on every call
    if (!is_signed || bs.get_shape().count() == 0) return false;
    bool all = true;
    detail::check_elements(bs, [&](T b, std::size_t) { return all = b == T(1); });
    return all;
  }

  void check_attributes() const { detail::check_rounding_mode(rounding, name); }

  /// A bipolar bit width takes no part in the output shape.
  template <class T>
  std::array<bool, inputs::size> broadcast_inputs(const args<T>& a) const {
    return {true, true, !bipolar_bits(a)};
  }

  template <class T>
  void check_shape_values(const args<T>& a) const {
    if (!bipolar_bits(a)) detail::validate_bitwidth_tensor(a.template get<"bitwidth">(), name, "bitwidth");
  }

  template <class T>
  void check_values(const args<T>& a) const {
    detail::check_random_bits<T>(random_bits, rounding, name);
    check_shape_values(a);
    if constexpr (S == semantics::exact) detail::check_scale_positive(name, "scale", a.template get<"scale">());
  }

  /// The scalar route (detail/driver.hpp, scalar_route): scale, zeropt and
  /// bitwidth scalars, checked as check_values checks them; the kernel and
  /// operands the state and run_with would give the one constant piece.
  /// Not for the stochastic mode (each element's index, the group cache).
  template <class T>
  bool run_scalars(const T* x, T* y, std::size_t n, const std::array<T, inputs::size>& p, bool simd) const {
    using I = inputs;
    using O = operands;
    const T s = p[I::index<"scale">], b = p[I::index<"bitwidth">];
    if (rounding == rounding_mode::stochastic || !detail::valid_bitwidth(b)) return false;
    if constexpr (S == semantics::exact)
      if (!detail::positive_scale(s)) return false;
    const auto r = detail::int_limits<S, T>(static_cast<int>(b), is_signed, narrow);
    std::array<T, O::size> ops{};
    ops[O::index<"scale">] = s;
    ops[O::index<"zeropt">] = p[I::index<"zeropt">];
    if (r.bipolar) {  // lo = hi = 0 and the flag, as the state has them
      ops[O::index<"bipolar">] = T(1);
      detail::run_splat(detail::int_quant_bipolar_kernel<S, detail::stage::fake>{}, x, y, n, ops, simd);
      return true;
    }
    ops[O::index<"lo">] = r.lo;
    ops[O::index<"hi">] = r.hi;
    detail::with_rounding_mode(rounding, [&](auto mc) {
      constexpr rounding_mode M = decltype(mc)::value;
      if constexpr (M != rounding_mode::stochastic) {
        const detail::int_quant_kernel<S, M, detail::stage::fake> k{detail::scale_divider::for_scale(s, simd), M,
                                                                   {seed, random_bits, index_offset}};
        detail::run_splat<M == rounding_mode::half_even>(k, x, y, n, ops, simd);  // its own loop: the default
      }
    });
    return true;
  }

  /// The row route (detail/driver.hpp, row_route): scale and zeropt one
  /// value or one per row, one bit width (not bipolar: the general route),
  /// checked as check_values checks them; the kernel the state's run_with
  /// would give the row-mode piece. Not for the stochastic mode.
  template <class T>
  bool run_rows(const T* x, T* y, std::size_t rows, std::size_t cols, std::size_t blocks,
                const std::array<const T*, inputs::size>& p,
                const std::array<bool, inputs::size>& per_row, bool simd) const {
    using I = inputs;
    using O = operands;
    constexpr std::size_t scale_i = I::index<"scale">, zeropt_i = I::index<"zeropt">, bits_i = I::index<"bitwidth">;
    const T b = *p[bits_i];
    if (rounding == rounding_mode::stochastic || per_row[bits_i] || !detail::valid_bitwidth(b)) return false;
    if constexpr (S == semantics::exact)
      if (!detail::all_elements(p[scale_i], per_row[scale_i] ? rows : 1,
                                [](auto v) { return detail::positive_scale(v); }))
        return false;
    const auto r = detail::int_limits<S, T>(static_cast<int>(b), is_signed, narrow);
    if (r.bipolar) return false;
    detail::row_inputs<T, O::size> ro;
    ro.v[O::index<"lo">] = r.lo;
    ro.v[O::index<"hi">] = r.hi;
    ro.operand(O::index<"scale">, p[scale_i], per_row[scale_i]);
    ro.operand(O::index<"zeropt">, p[zeropt_i], per_row[zeropt_i]);
    const detail::piece<T, O::size> pc = ro.piece_of(x, y, rows, cols, blocks);
    detail::with_rounding_mode(rounding, [&](auto mc) {
      constexpr rounding_mode M = decltype(mc)::value;
      if constexpr (M != rounding_mode::stochastic) {
        constexpr std::size_t scale_k = O::index<"scale">;
        const detail::int_quant_kernel<S, M, detail::stage::fake> k{
            detail::scale_divider::for_scale(pc.s[scale_k], simd && !pc.vary[scale_k]), M,
            {seed, random_bits, index_offset}};
        detail::run_piece(k, pc, simd);
      }
    });
    return true;
  }

  /// Codes of type C: unsigned codes of a signed IntQuant are bits (bit
  /// width 1); the clamp range of every other bit width must fit C.
  template <class C, detail::stage St, class T>
  bool check_codes(const args<T>& a) const {
    const detail::nd<const T>& bs = a.template get<"bitwidth">();
    const bool bits = std::is_unsigned_v<C> && is_signed;
    if (bits) detail::check_bits_bitwidth(name, detail::code_type_name<C>(), bs);
    if constexpr (St == detail::stage::code) detail::check_limits<C, S, T>(name, "bitwidth", bs, is_signed, narrow, true);
    return bits;
  }

  /// The kernel operands: scale and zeropt as given, the clamp limits and
  /// the bipolar flag per bit-width element (row-major in bitwidth's shape).
  template <class T>
  struct state {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "lowbit::int_quant works on float and double tensors");
    std::array<const detail::nd<const T>*, operands::size> ops{};
    rounding_mode mode;
    detail::stochastic_source rnd;
    bool bipolar, any_bipolar;
    detail::derived_storage<T, 3> lim;  // lo, hi, bipolar flag
    detail::nd<const T> lo_d, hi_d, bip_d;

    state(const int_quant& op, const args<T>& a, const shape&)
        : mode(op.rounding),
          rnd{op.seed, op.random_bits, op.index_offset},
          bipolar(op.bipolar_bits(a)),
          any_bipolar(bipolar),
          lim(bipolar || a.template get<"bitwidth">().rank == 0 ? 1
                                                                : a.template get<"bitwidth">().get_shape().count()) {
      const detail::nd<const T>& bs = a.template get<"bitwidth">();
      T* const lo_p = lim.arr[0];
      T* const hi_p = lim.arr[1];
      T* const bip_p = lim.arr[2];
      if (bipolar) {
        lo_p[0] = hi_p[0] = T(0);
        bip_p[0] = T(1);
      } else if (bs.rank == 0) {  // a scalar bit width (the descriptors stay rank 0)
        const auto r = detail::int_limits<S, T>(static_cast<int>(*bs.data), op.is_signed, op.narrow);
        lo_p[0] = r.lo;
        hi_p[0] = r.hi;
        bip_p[0] = r.bipolar ? T(1) : T(0);
        any_bipolar = r.bipolar;
      } else {
        detail::visit_elements(bs, [&](T b, std::size_t i) {
          const auto r = detail::int_limits<S, T>(static_cast<int>(b), op.is_signed, op.narrow);
          lo_p[i] = r.lo;
          hi_p[i] = r.hi;
          bip_p[i] = r.bipolar ? T(1) : T(0);
          any_bipolar = any_bipolar || r.bipolar;
          return true;
        });
        for (detail::nd_geom* g : {&lo_d, &hi_d, &bip_d}) detail::set_row_major(*g, bs.rank, bs.ext.data());
      }
      lo_d.data = lo_p;
      hi_d.data = hi_p;
      bip_d.data = bip_p;
      using O = operands;
      ops[O::index<"scale">] = &a.template get<"scale">();
      ops[O::index<"zeropt">] = &a.template get<"zeropt">();
      ops[O::index<"lo">] = &lo_d;
      ops[O::index<"hi">] = &hi_d;
      ops[O::index<"bipolar">] = &bip_d;
    }

    template <detail::stage St>
    void run(const detail::piece<T, operands::size>& pc, bool simd) const {
      // The stochastic mode's group cache, on this frame (one per piece and thread).
      detail::with_group_cache(rnd, mode, [&](const detail::stochastic_source& r) { run_with<St>(pc, simd, r); });
    }

    /// run() with the random source `rnd` (the state's, with a group cache).
    template <detail::stage St>
    void run_with(const detail::piece<T, operands::size>& pc, bool simd, const detail::stochastic_source& rnd) const {
      constexpr std::size_t scale_k = operands::index<"scale">, bipolar_k = operands::index<"bipolar">;
      // The bipolar kernel when every element of the piece is bipolar, the
      // mixed one when some may be, else the plain one.
      const bool bits_vary = pc.vary[bipolar_k];
      const bool piece_bipolar = bits_vary ? bipolar : pc.s[bipolar_k] != T(0);
      if (piece_bipolar) return detail::run_piece(detail::int_quant_bipolar_kernel<S, St>{}, pc, simd);
      detail::with_rounding_mode(mode, [&](auto mc) {
        constexpr rounding_mode M = decltype(mc)::value;
        // A constant power-of-two scale: multiply by its exact reciprocal
        // (the same result on every input; the scalar path keeps dividing,
        // so the SIMD-vs-scalar tests check this path too).
        const detail::int_quant_kernel<S, M, St> k{
            detail::scale_divider::for_scale(pc.s[scale_k], simd && !pc.vary[scale_k]), M, rnd};
        if (bits_vary && any_bipolar)
          run_mixed<St>(k, pc, simd);
        else
          detail::run_piece(k, pc, simd);
      });
    }

    /**
     * Bit widths that vary over the piece, some of them 1 (bipolar): with
     * the kernels every call has anyway, not a third kernel per rounding
     * mode. A chunk at a time (detail::for_each_chunk; a row-mode row is
     * one constant chunk), every element through kernel k, or the bipolar
     * kernel for a bipolar constant chunk, then the bipolar elements again
     * through the bipolar kernel (scalar: the same bits), from a copy of x
     * (y may be x).
     */
    template <detail::stage St, class K>
    void run_mixed(const K& k, const detail::piece<T, operands::size>& pc, bool simd) const {
      using O = operands;
      constexpr std::size_t bipolar_k = O::index<"bipolar">;
      const detail::int_quant_bipolar_kernel<S, St> bk{};
      alignas(64) T xs[detail::chunk_elems];
      detail::for_each_chunk(pc, detail::chunk_elems, [&](const detail::piece<T, O::size>& c) {
        if (!c.vary[bipolar_k]) {  // a constant chunk: bipolar or not throughout
          if (c.s[bipolar_k] != T(0))
            detail::run_piece(bk, c, simd);
          else
            detail::run_piece(k, c, simd);
          return;
        }
        std::copy_n(c.x, c.n, xs);
        detail::piece<T, O::size> sub = c;
        sub.x = xs;
        detail::run_piece(k, sub, simd);
        auto at = [&](std::size_t i, std::size_t j) { return c.vary[i] ? c.p[i][j] : c.s[i]; };
        for (std::size_t j = 0; j < c.n; ++j)
          if (at(bipolar_k, j) != T(0))
            c.y[j] = bk(xs[j], at(O::index<"scale">, j), at(O::index<"zeropt">, j), at(O::index<"lo">, j),
                        at(O::index<"hi">, j), at(bipolar_k, j));
      });
    }
  };
};

/// QONNX's older name for IntQuant.
template <semantics S = semantics::reference>
using quant = int_quant<S>;

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_INT_QUANT_HPP
