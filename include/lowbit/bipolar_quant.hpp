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
#include "detail/divide.hpp"
#include "detail/driver.hpp"
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
    // q opaque to the optimiser: GCC turns (c ? 1 : -1) * s into c ? s : -s
    // for scalars, and -NaN is not -1 * NaN (that NaN, quieted, with its own
    // sign, as numpy and the batches give it).
    return detail::no_contract(q) * scale;
  }
};

/// The reference kernel for a scalar scale s that is not NaN: pos = s and
/// neg = -s, which are 1 * s and -1 * s exactly, so the product of the
/// general kernel leaves the loop (NaN x gives neg, as there). The same
/// bits as bipolar_quant_kernel<reference> with that scale.
struct bipolar_quant_splat_kernel {
  template <class V>
  LOWBIT_ALWAYS_INLINE V operator()(V x, V pos, V neg) const noexcept {
    using T = lane_t<V>;
    return detail::select(x >= V(T(0)), pos, neg);
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
    return detail::call_output_shape(*this, x, scale);
  }

  /// Binarizes x into y. See the class documentation.
  template <tensor_arg X, tensor_arg Scale, tensor_arg Y>
  void operator()(const X& x, const Scale& scale, Y&& y) const {
    detail::call(*this, std::forward<Y>(y), x, scale);
  }

 private:
  // ---- the protocol's hooks (detail/driver.hpp) ----
  friend struct detail::protocol_access;
  template <class T>
  using args = detail::call_args<bipolar_quant, T>;

  void check_attributes() const {}

  template <class T>
  void check_values(const args<T>& a) const {
    if constexpr (S == semantics::exact) detail::check_scale_positive(name, "scale", a.template get<"scale">());
  }

  /// The scalar route (detail/driver.hpp, scalar_route): a scalar scale.
  template <class T>
  bool run_scalars(const T* x, T* y, std::size_t n, const std::array<T, inputs::size>& p, bool simd) const {
    const T s = p[0];
    if constexpr (S == semantics::exact) {
      if (!detail::positive_scale(s)) return false;
      detail::run_splat(detail::bipolar_quant_kernel<S, detail::stage::fake>{}, x, y, n, p, simd);
    } else {
      // A NaN scale takes the general route: -1 * NaN is that NaN, quieted
      // and with its own sign, not -s.
      if (s != s) return false;
      detail::run_splat(detail::bipolar_quant_splat_kernel{}, x, y, n, std::array<T, 2>{s, -s}, simd);
    }
    return true;
  }

  /// The row route (detail/driver.hpp, row_route): a scale per row or one,
  /// checked as check_values checks it; the state's kernel on the row-mode
  /// piece.
  template <class T>
  bool run_rows(const T* x, T* y, std::size_t rows, std::size_t cols, std::size_t blocks,
                const std::array<const T*, inputs::size>& p,
                const std::array<bool, inputs::size>& per_row, bool simd) const {
    if constexpr (S == semantics::exact)
      if (!detail::all_elements(p[0], per_row[0] ? rows : 1, [](auto v) { return detail::positive_scale(v); }))
        return false;
    detail::run_piece(detail::bipolar_quant_kernel<S, detail::stage::fake>{},
                      detail::rows_piece(x, y, rows, cols, p, per_row, blocks), simd);
    return true;
  }

  /// Codes: -1 and +1 with a signed code type, bits 0 and 1 with an unsigned one.
  template <class C, detail::stage, class T>
  bool check_codes(const args<T>&) const {
    return std::is_unsigned_v<C>;
  }

  template <class T>
  struct state {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "lowbit::bipolar_quant works on float and double tensors");
    std::array<const detail::nd<const T>*, operands::size> ops{};

    state(const bipolar_quant&, const args<T>& a, const shape&) {
      ops[operands::index<"scale">] = &a.template get<"scale">();
    }

    template <detail::stage St>
    void run(const detail::piece<T, operands::size>& pc, bool simd) const {
      detail::run_piece(detail::bipolar_quant_kernel<S, St>{}, pc, simd);
    }
  };
};

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_BIPOLAR_QUANT_HPP
