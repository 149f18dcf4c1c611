// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/error_stats.hpp, against hand-computed values.
#include <lowbit/error_stats.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"

using lowbit_test::contains_substring;

TEST_CASE("error_stats: hand-computed values", "[error_stats]") {
  // e = y - x = {0, 0.5, 0, -1}: sum e^2 = 1.25, sum x^2 = 30, sum e = -0.5.
  const std::vector<float> x{1, 2, 3, 4}, y{1, 2.5f, 3, 3};
  const auto s = lowbit::error_stats(x, y, 0.0, 3.5);
  CHECK(s.count == 4);
  CHECK(s.nonfinite == 0);
  CHECK(s.mse == 0.3125);
  CHECK(s.bias == -0.125);
  CHECK(s.max_abs_error == 1.0);
  CHECK(s.sqnr_db == 10.0 * std::log10(24.0));  // 13.802112...
  CHECK(std::fabs(s.sqnr_db - 13.8021124171) < 1e-9);
  CHECK(s.clipped_fraction == 0.25);  // x = 4 > 3.5
  // No range: nothing is clipped.
  CHECK(lowbit::error_stats(x, y).clipped_fraction == 0.0);
}

TEST_CASE("error_stats: exact results, non-finite elements, views, float64", "[error_stats]") {
  const std::vector<double> x{0.5, -0.25}, y{0.5, -0.25};
  const auto s = lowbit::error_stats(x, y);
  CHECK(s.mse == 0.0);
  CHECK(s.sqnr_db == std::numeric_limits<double>::infinity());
  // NaN and inf pairs are counted apart and left out of the sums.
  const std::vector<float> a{1, lowbit_test::nan_f, 2, 3}, b{1.5f, 0, lowbit_test::inf, 3};
  const auto t = lowbit::error_stats(a, b);
  CHECK(t.count == 2);
  CHECK(t.nonfinite == 2);
  CHECK(t.mse == 0.125);
  CHECK(t.bias == 0.25);
  // A transposed view of y pairs element (i, j) of x with y's (i, j).
  const std::vector<float> xm{1, 2, 3, 4, 5, 6}, yt{1, 4, 2, 5, 3, 6};  // yt = x^T stored [3, 2]
  const lowbit::strided_view<const float> xv(xm.data(), {2, 3});
  const lowbit::strided_view<const float> yv(yt.data(), {2, 3}, {1, 2});
  CHECK(lowbit::error_stats(xv, yv).mse == 0.0);
  // Nothing finite: NaN statistics.
  const std::vector<float> n{lowbit_test::nan_f};
  const auto u = lowbit::error_stats(n, n);
  CHECK(u.count == 0);
  CHECK(std::isnan(u.mse));
  CHECK(std::isnan(u.sqnr_db));
}

TEST_CASE("error_stats: errors", "[error_stats][errors]") {
  const std::vector<float> x{1, 2, 3}, y{1, 2};
  REQUIRE_THROWS_WITH(lowbit::error_stats(x, y),
                      contains_substring("lowbit::error_stats: y has shape [2]; expected x's shape [3]"));
  REQUIRE_THROWS_WITH(lowbit::error_stats(x, x, 1.0, 0.0), contains_substring("range [1, 0] is invalid"));
  REQUIRE_THROWS_AS(lowbit::error_stats(x, x, std::nan(""), 0.0), lowbit::error);
}
