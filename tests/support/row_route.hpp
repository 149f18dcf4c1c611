// SPDX-License-Identifier: Apache-2.0
// The row route (include/lowbit/detail/driver.hpp, row_route) against the
// general route, for the operator tests: the same per-channel call with its
// per-row parameter as a dense view (the route) and as a view of stride 2
// into a buffer of twice the rows (not dense: the general route, its plan
// and tiling), bit for bit.
#ifndef LOWBIT_TESTS_ROW_ROUTE_HPP
#define LOWBIT_TESTS_ROW_ROUTE_HPP

#include <lowbit/lowbit.hpp>

#include <cstddef>
#include <span>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"

namespace lowbit_test {

/**
 * Requires `call(xv, pv, yv)`, an operator call with pv in the place of its
 * per-row parameter (the other inputs fixed by `call`), to give the general
 * route's bits when pv holds one value per row, `row_values[r]` for row r
 * (cycled): rows 1, 2, 3 and 7; rows of 16, 17, 31, 32, 33 and 100
 * elements (every batch width's whole rows and rows with a last, overlapping
 * batch); x [R, W] with pv [R, 1], x [2, R, W] with pv [2, R, 1] (rows over
 * two dimensions) and x [1, R, 2, W] with pv [1, R, 1, 1] (NCHW); pv
 * repeating over blocks of R rows: x [3, R, W] with pv [R, 1], x [2, R, 2,
 * W] with pv [1, R, 1, 1] (NCHW with N = 2) and x [2, 2, R, W] with pv
 * [1, R, 1] (two dimensions of blocks); out of place
 * and in place; with the SIMD body and with the scalar kernels alone
 * (detail::simd_scope). Rows shorter than a batch (W = 3: the route's
 * short rows, run_short_rows) and pv of one element ([1, 1]: one row of
 * all the elements, as the scalar itself gives) are checked too, and y
 * overlapping pv or x (the general route's errors, with nothing written).
 */
template <class T, class Call>
void require_row_route_bits(const std::vector<T>& x_given, const std::vector<T>& row_values, const Call& call) {
  using CV = lowbit::strided_view<const T>;
  using MV = lowbit::strided_view<T>;
  // x_given cycled to the largest layout's 2 * 2 * 7 * 100 elements.
  std::vector<T> x(2800);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = x_given[i % x_given.size()];
  for (const bool simd : {true, false}) {
    const lowbit::detail::simd_scope path(simd);
    for (const std::size_t rows : {1, 2, 3, 7})
      for (const std::size_t w : {3, 16, 17, 31, 32, 33, 100}) {
        for (int layout = 0; layout < 6; ++layout) {
          CAPTURE(simd, rows, w, layout);
          // x's shape and pv's (dense, and strided by 2), and pv's values.
          const auto d2r = static_cast<std::ptrdiff_t>(2 * rows);
          lowbit::shape xs, ps;
          std::vector<std::ptrdiff_t> pst;
          std::size_t n_rows = rows;
          switch (layout) {
            case 0: xs = {rows, w}, ps = {rows, 1}, pst = {2, 1}; break;
            case 1: xs = {2, rows, w}, ps = {2, rows, 1}, pst = {d2r, 2, 1}, n_rows = 2 * rows; break;
            case 2: xs = {1, rows, 2, w}, ps = {1, rows, 1, 1}, pst = {d2r, 2, 1, 1}; break;
            case 3: xs = {3, rows, w}, ps = {rows, 1}, pst = {2, 1}; break;
            case 4: xs = {2, rows, 2, w}, ps = {1, rows, 1, 1}, pst = {d2r, 2, 1, 1}; break;
            default: xs = {2, 2, rows, w}, ps = {1, rows, 1}, pst = {d2r, 2, 1}; break;
          }
          const std::size_t n = xs.count();
          REQUIRE(n <= x.size());
          std::vector<T> dense(n_rows), spread(2 * n_rows, T(-3));
          for (std::size_t r = 0; r < n_rows; ++r) dense[r] = spread[2 * r] = row_values[r % row_values.size()];
          const CV xv(x.data(), xs);
          std::vector<T> route(n, T(42)), general(n, T(42));
          call(xv, CV(dense.data(), ps), MV(route.data(), xs));
          call(xv, CV(spread.data(), ps, pst), MV(general.data(), xs));
          require_same_bits(route, general);
          std::vector<T> in_place(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
          call(CV(in_place.data(), xs), CV(dense.data(), ps), MV(in_place.data(), xs));
          require_same_bits(in_place, general);
        }
        // One value as a tensor of one element (the route, one row of all
        // the elements): the bits of the scalar (the scalar route) and of
        // the same value per row.
        CAPTURE(simd, rows, w);
        const lowbit::shape xs{rows, w};
        const std::size_t n = rows * w;
        const std::vector<T> one{row_values[0]}, same(rows, row_values[0]);
        std::vector<T> a(n, T(42)), b(n, T(42)), c(n, T(42));
        call(CV(x.data(), xs), CV(one.data(), lowbit::shape{1, 1}), MV(a.data(), xs));
        call(CV(x.data(), xs), row_values[0], MV(b.data(), xs));
        call(CV(x.data(), xs), CV(same.data(), lowbit::shape{rows, 1}), MV(c.data(), xs));
        require_same_bits(a, b);
        require_same_bits(c, b);
      }
  }
  // y over the per-row values, and y shifted by a batch over x: the
  // general route's errors, nothing written.
  constexpr std::size_t rows = 4, w = 32;
  std::vector<T> buf(rows * w + 64);
  require_rejected_untouched(buf, "in memory", [&] {
    call(CV(x.data(), {rows, w}), CV(buf.data() + 8, {rows, 1}), MV(buf.data(), {rows, w}));
  });
  require_rejected_untouched(buf, "in memory without being x itself", [&] {
    call(CV(buf.data(), {rows, w}), CV(row_values.data(), {rows, 1}), MV(buf.data() + 16, {rows, w}));
  });
}

}  // namespace lowbit_test

#endif  // LOWBIT_TESTS_ROW_ROUTE_HPP
