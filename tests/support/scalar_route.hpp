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
 * nothing written (the general route's overlap error).
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
    }
  }
  std::vector<T> buf(40);
  require_rejected_untouched(buf, "in memory without being x itself", [&] {
    op(std::span<const T>(buf.data(), 32), p..., std::span<T>(buf.data() + 8, 32));
  });
}

}  // namespace lowbit_test

#endif  // LOWBIT_TESTS_SCALAR_ROUTE_HPP
