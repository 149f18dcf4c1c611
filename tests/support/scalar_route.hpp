// SPDX-License-Identifier: Apache-2.0
// The scalar route (include/lowbit/detail/driver.hpp, scalar_route) against
// the general route, for the operator tests: the same call with its
// scalars passed as scalars (the route) and as one-element vectors (the
// general route: descriptors, state, plan), bit for bit.
#ifndef LOWBIT_TESTS_SCALAR_ROUTE_HPP
#define LOWBIT_TESTS_SCALAR_ROUTE_HPP

#include <lowbit/lowbit.hpp>

#include <cstddef>
#include <span>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"

namespace lowbit_test {

/**
 * Requires `op(x[0, n), p..., y)` to give the general route's bits for n in
 * 1, 2, 3, 7, 15, 16, 17, 31, 33, 55, 63 and 203 (every batch width's body
 * and tail, float and double: the loop of two batches an iteration, a
 * single batch after it and the scalar tail), out of place and in place,
 * with the SIMD body and with the scalar kernels alone (detail::simd_scope),
 * and a call whose y is x's range shifted by a batch to be rejected with
 * nothing written (the general route's overlap error). The same with x and
 * y as views (detail::scalar_view_route): 1-D and 2-D dense strided views,
 * a view with a span, in place; a view of stride 2 (not dense: the general
 * route) and views of different shapes (the general route's shape error)
 * are checked too.
 */
template <class T, class Op, class... P>
void require_scalar_route_bits(const Op& op, const std::vector<T>& x, P... p) {
  for (const bool simd : {true, false}) {
    const lowbit::detail::simd_scope path(simd);
    for (const std::size_t n : {1, 2, 3, 7, 15, 16, 17, 31, 33, 55, 63, 203}) {
      CAPTURE(simd, n);
      REQUIRE(n <= x.size());
      const std::span<const T> xs(x.data(), n);
      std::vector<T> route(n, T(42)), general(n, T(42));
      op(xs, p..., route);
      op(xs, std::vector<T>{static_cast<T>(p)}..., general);
      require_same_bits(route, general);
      std::vector<T> in_place(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
      op(in_place, p..., in_place);
      require_same_bits(in_place, general);
      // Views: [n], [rows, n / rows] (rows 3 where n allows), with a span.
      using CV = lowbit::strided_view<const T>;
      using MV = lowbit::strided_view<T>;
      const std::size_t rows = n % 3 == 0 ? 3 : 1;
      const lowbit::shape flat{n}, two{rows, n / rows};
      std::vector<T> v1(n, T(42)), v2(n, T(42)), v3(n, T(42)), v4(n, T(42));
      op(CV(x.data(), flat), p..., MV(v1.data(), flat));
      require_same_bits(v1, general);
      op(CV(x.data(), two), p..., MV(v2.data(), two));
      require_same_bits(v2, general);
      op(xs, p..., MV(v3.data(), flat));
      require_same_bits(v3, general);
      op(CV(x.data(), flat), p..., std::span<T>(v4));
      require_same_bits(v4, general);
      std::vector<T> view_in_place(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
      op(CV(view_in_place.data(), two), p..., MV(view_in_place.data(), two));
      require_same_bits(view_in_place, general);
      // Every other element of a buffer of 2n: not dense, the general route.
      std::vector<T> spread(2 * n, T(-7)), strided_out(n, T(42));
      for (std::size_t i = 0; i < n; ++i) spread[2 * i] = x[i];
      op(CV(spread.data(), flat, {2}), p..., MV(strided_out.data(), flat));
      require_same_bits(strided_out, general);
    }
  }
  {
    // Views of different shapes, [4, 8] and [8, 4] (or [32]): the general
    // route's shape error, nothing written.
    std::vector<T> in(32, T(1)), out(32);
    require_rejected_untouched(out, "has shape [8, 4]; expected", [&] {
      op(lowbit::strided_view<const T>(in.data(), {4, 8}), p..., lowbit::strided_view<T>(out.data(), {8, 4}));
    });
    require_rejected_untouched(out, "has shape [32]; expected", [&] {
      op(lowbit::strided_view<const T>(in.data(), {4, 8}), p..., std::span<T>(out));
    });
  }
  std::vector<T> buf(40);
  require_rejected_untouched(buf, "in memory without being x itself", [&] {
    op(std::span<const T>(buf.data(), 32), p..., std::span<T>(buf.data() + 8, 32));
  });
  require_rejected_untouched(buf, "in memory without being x itself", [&] {
    op(lowbit::strided_view<const T>(buf.data(), {4, 8}), p..., lowbit::strided_view<T>(buf.data() + 8, {4, 8}));
  });
}

}  // namespace lowbit_test

#endif  // LOWBIT_TESTS_SCALAR_ROUTE_HPP
