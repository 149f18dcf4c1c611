// SPDX-License-Identifier: Apache-2.0
/**
 * @file error_stats.hpp
 * Quantization error statistics of a tensor and its quantized version: MSE,
 * SQNR, bias, max |error| and the clipped fraction, accumulated in double.
 */
#ifndef LOWBIT_ERROR_STATS_HPP
#define LOWBIT_ERROR_STATS_HPP

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>

#include "config.hpp"
#include "detail/elementwise.hpp"
#include "error.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE

/// Statistics of the error `e = y - x` over the elements where both are finite.
struct error_stats_result {
  std::size_t count = 0;      ///< Elements included (x and y both finite).
  std::size_t nonfinite = 0;  ///< Elements left out (x or y NaN or infinite).
  double mse = 0;             ///< mean(e^2).
  double sqnr_db = 0;         ///< 10 log10(sum x^2 / sum e^2); +inf when e = 0 everywhere, NaN when count = 0.
  double bias = 0;            ///< mean(e), the mean signed error.
  double max_abs_error = 0;   ///< max |e|.
  double clipped_fraction = 0;  ///< Fraction of the counted x outside [range_lo, range_hi].
};

/**
 * Error statistics of `y` (a quantized tensor) against `x` (the original).
 * x and y must have the same shape and element type (float or double); they
 * may be any lowbit::tensor_arg view. Sums are taken in double, in row-major
 * order. An element counts as clipped when its x lies outside the
 * quantizer's range `[range_lo, range_hi]` (for int_quant, `(min_int -
 * zeropt) * scale` to `(max_int - zeropt) * scale`; for a minifloat format,
 * `-max` to `max`); the default range clips nothing.
 *
 * **Example**:
 * ```
 * std::vector<float> x{1, 2, 3, 4}, y{1, 2.5f, 3, 3};
 * auto s = lowbit::error_stats(x, y, 0.0, 3.5);
 * // s.mse = 0.3125, s.bias = -0.125, s.max_abs_error = 1,
 * // s.sqnr_db = 10 log10(30 / 1.25), s.clipped_fraction = 0.25
 * ```
 * @throws lowbit::error when the shapes differ or the range is NaN or
 *         empty (range_lo > range_hi).
 */
template <tensor_arg X, tensor_arg Y>
error_stats_result error_stats(const X& x, const Y& y, double range_lo = -std::numeric_limits<double>::infinity(),
                               double range_hi = std::numeric_limits<double>::infinity()) {
  using T = detail::scalar_value_t<const X&>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "lowbit::error_stats works on float and double tensors");
  static_assert(std::is_same_v<detail::scalar_value_t<const Y&>, T>, "lowbit::error_stats: x and y must have the same element type");
  constexpr const char* name = "lowbit::error_stats";
  const detail::tensor_in<T> xs(x), ys(y);
  if (!(xs.get_shape() == ys.get_shape()))
    throw error(std::string(name) + ": y has shape " + ys.get_shape().to_string() + "; expected x's shape " +
                xs.get_shape().to_string());
  if (!(range_lo <= range_hi))
    throw error(std::string(name) + ": range [" + detail::format_value(range_lo) + ", " +
                detail::format_value(range_hi) + "] is invalid; expected range_lo <= range_hi, neither NaN");
  error_stats_result r;
  double se = 0, sx = 0, sd = 0;
  std::size_t clipped = 0;
  // x's and y's elements side by side, in row-major order.
  detail::for_each_position<2>(xs.get_shape(), {&xs.d, &ys.d},
                               [&](std::size_t, const std::array<std::ptrdiff_t, 2>& off) {
    const T xv = xs.d.data[off[0]], yv = ys.d.data[off[1]];
    if (!std::isfinite(xv) || !std::isfinite(yv)) {
      ++r.nonfinite;
      return true;
    }
    const double xd = static_cast<double>(xv);
    const double e = static_cast<double>(yv) - xd;
    ++r.count;
    se += e * e;
    sx += xd * xd;
    sd += e;
    r.max_abs_error = std::fmax(r.max_abs_error, std::fabs(e));
    clipped += (xd < range_lo || xd > range_hi) ? 1 : 0;
    return true;
  });
  if (r.count == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    r.mse = r.sqnr_db = r.bias = r.clipped_fraction = nan;
    return r;
  }
  const double n = static_cast<double>(r.count);
  r.mse = se / n;
  r.bias = sd / n;
  r.clipped_fraction = static_cast<double>(clipped) / n;
  r.sqnr_db = se == 0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(sx / se);
  return r;
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_ERROR_STATS_HPP
