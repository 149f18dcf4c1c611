// SPDX-License-Identifier: Apache-2.0
/**
 * @file bipolar_quant.hpp
 * QONNX BipolarQuant: binarization to {-scale, +scale}.
 * The whole semantics is in docs/semantics.md ("BipolarQuant").
 */
#ifndef LOWBIT_BIPOLAR_QUANT_HPP
#define LOWBIT_BIPOLAR_QUANT_HPP

#include <array>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "attributes.hpp"
#include "broadcast.hpp"
#include "config.hpp"
#include "detail/elementwise.hpp"
#include "detail/simd.hpp"
#include "detail/stage.hpp"
#include "error.hpp"
#include "parallel.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {

/// q = +1 for x >= 0 (-0 included), -1 below; NaN gives -1 in reference
/// (QONNX's np.where) and NaN in exact. Y = q * scale.
/// St: the whole operator, q only, or q (passed as x) to Y (detail::stage).
template <semantics S, stage St = stage::fake>
struct bipolar_quant_kernel {
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V x, V scale) const noexcept {
    using T = lane_t<V>;
    if constexpr (St == stage::dequant) return x * scale;
    V q = detail::select(x >= V(T(0)), V(T(1)), V(T(-1)));
    if constexpr (S == semantics::exact) q = detail::select(detail::is_nan(x), x, q);
    if constexpr (St == stage::code) return q;
    return q * scale;
  }
};

}  // namespace detail

/**
 * QONNX BipolarQuant: `Y = (X >= 0 ? +1 : -1) * scale`, with scale broadcast
 * against X (numpy rules; the output can have a higher rank than X).
 *
 * -0 counts as >= 0 and gives +scale. NaN gives -scale in the reference
 * semantics (QONNX) and NaN in the exact semantics, which also rejects a
 * scale that is not finite and > 0.
 *
 * Arguments are as for lowbit::int_quant: views of float or double, scalars
 * for the scale; y may be x.
 *
 * @throws lowbit::error for shapes that do not broadcast, a y of the wrong
 *         shape, and (exact) an invalid scale. Nothing is written then.
 *
 * **Example**:
 * ```
 * std::vector<float> x{0.3f, -0.0f, -2.0f}, y(3);
 * lowbit::bipolar_quant<>{}(x, 0.5f, y);  // y = {0.5, 0.5, -0.5}
 * ```
 */
template <semantics S = semantics::reference>
struct bipolar_quant {
  /// Threads for large calls (opt-in; bit-identical results): lowbit::execution.
  execution exec{};

  static constexpr const char* name = "lowbit::bipolar_quant";
  /// The operator protocol (detail/protocol.hpp).
  using inputs = detail::names<"scale">;
  using operands = detail::names<"scale">;
  static constexpr bool accepts_double = true;
  /// BipolarQuant has no attributes (lowbit::set_attribute rejects every name).
  static constexpr auto attributes() { return std::tuple<>{}; }

  /// The broadcast shape of x and scale.
  template <tensor_arg X, tensor_arg Scale>
  shape output_shape(const X& x, const Scale& scale) const {
    if constexpr (!detail::io_types_ok<X, void, float, double>()) {
      return shape{};
    } else {
      using T = std::remove_cv_t<detail::element_t<const X&>>;
      detail::tensor_in<T> xs(x), ss(scale);
      return broadcast_shape({xs.get_shape(), ss.get_shape()}, {"x", "scale"}, name);
    }
  }

  /// Binarizes x into y. See the class documentation.
  template <tensor_arg X, tensor_arg Scale, tensor_arg Y>
  void operator()(const X& x, const Scale& scale, Y&& y) const {
    if constexpr (!detail::io_types_ok<X, Y, float, double>()) {
      return;
    } else {
      using T = std::remove_cv_t<detail::element_t<const X&>>;
      static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                    "lowbit::bipolar_quant works on float and double tensors");
      detail::tensor_in<T> xs(x), ss(scale);
      detail::nd<T> yd = detail::output_nd<T>(std::forward<Y>(y));
      run(xs, ss, yd);
    }
  }

 private:
  friend struct detail::codes_access;

  /// The operator (St = fake), or one of its stages for codes.hpp.
  template <detail::stage St = detail::stage::fake, class T>
  void run(const detail::tensor_in<T>& xs, const detail::tensor_in<T>& ss, detail::nd<T>& yd) const {
    // Shapes and memory first, then values.
    const shape out = broadcast_shape({xs.get_shape(), ss.get_shape()}, {"x", "scale"}, name);
    detail::check_output(name, yd, out);
    detail::check_output_memory<T, 1>(name, yd, xs.d, {{{"scale", &ss.d}}});
    if constexpr (S == semantics::exact) detail::check_scale_positive(name, "scale", ss.d);
    std::array<const detail::nd<const T>*, operands::size> ops{};
    ops[operands::index<"scale">] = &ss.d;
    const auto plan = detail::make_engine_plan(out, xs.d, ops, yd);
    const auto params = detail::data_of(ops);
    const bool simd = detail::simd_enabled();
    detail::elementwise(plan, xs.d.data, params, yd.data, [&](const detail::piece<T, operands::size>& pc) {
      detail::run_piece(detail::bipolar_quant_kernel<S, St>{}, pc, simd);
    }, exec);
  }
};

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_BIPOLAR_QUANT_HPP
