// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/broadcast.hpp.
#include <lowbit/broadcast.hpp>

#include "support/catch.hpp"

using lowbit::shape;

TEST_CASE("broadcast_shape follows numpy", "[broadcast]") {
  CHECK(lowbit::broadcast_shape({shape{2, 3, 4}, shape{}}) == shape{2, 3, 4});
  CHECK(lowbit::broadcast_shape({shape{2, 3, 4}, shape{3, 1}}) == shape{2, 3, 4});
  CHECK(lowbit::broadcast_shape({shape{2, 1, 4}, shape{5, 1}}) == shape{2, 5, 4});
  CHECK(lowbit::broadcast_shape({shape{4}, shape{3, 1, 1}}) == shape{3, 1, 4});  // rank grows
  CHECK(lowbit::broadcast_shape({shape{0, 3}, shape{1, 3}}) == shape{0, 3});
  CHECK(lowbit::broadcast_shape({shape{}, shape{}}) == shape{});
  CHECK(lowbit::broadcast_shape({shape{1, 1}, shape{}}) == shape{1, 1});
}

TEST_CASE("broadcast_shape names both tensors when shapes clash", "[broadcast][errors]") {
  REQUIRE_THROWS_AS(lowbit::broadcast_shape({shape{2, 3}, shape{4}}), lowbit::error);
  REQUIRE_THROWS_WITH(lowbit::broadcast_shape({shape{2, 3}, shape{4}}, {"x", "scale"}, "op"),
                      lowbit_test::contains_substring("x has shape [2, 3]") &&
                          lowbit_test::contains_substring("scale has shape [4]") &&
                          lowbit_test::contains_substring("3 vs 4"));
}

TEST_CASE("loop plans drop size-1 dimensions and merge contiguous ones", "[broadcast]") {
  using lowbit::detail::nd_geom;
  auto geom = [](shape s, std::initializer_list<std::ptrdiff_t> st) {
    nd_geom g;
    g.rank = s.rank();
    for (std::size_t r = 0; r < s.rank(); ++r) g.ext[r] = s[r];
    std::size_t r = 0;
    for (auto v : st) g.str[r++] = v;
    return g;
  };
  // x [2, 3, 4] contiguous, scale [3, 1] per channel: runs of 4 with scale splatted.
  const nd_geom x = geom({2, 3, 4}, {12, 4, 1});
  const nd_geom s = geom({3, 1}, {1, 1});
  auto p = lowbit::detail::make_plan<3>(shape{2, 3, 4}, {&x, &s, &x});
  CHECK(p.count == 24);
  CHECK(p.run_length() == 4);
  CHECK(p.inner_stride(0) == 1);
  CHECK(p.inner_stride(1) == 0);
  std::size_t runs = 0, total = 0;
  std::ptrdiff_t last_scale = -1;
  bool scale_steps = true;
  lowbit::detail::for_each_run(p, [&](const std::array<std::ptrdiff_t, 3>& off, std::size_t n) {
    scale_steps = scale_steps && off[1] == (last_scale + 1) % 3;
    last_scale = off[1];
    ++runs;
    total += n;
  });
  CHECK(runs == 6);
  CHECK(total == 24);
  CHECK(scale_steps);
  // Everything per tensor: one run over all elements.
  const nd_geom scalar = geom({}, {});
  auto q = lowbit::detail::make_plan<3>(shape{2, 3, 4}, {&x, &scalar, &x});
  CHECK(q.rank == 1);
  CHECK(q.run_length() == 24);
  // Rank 0 everywhere: one element.
  auto r = lowbit::detail::make_plan<2>(shape{}, {&scalar, &scalar});
  CHECK(r.count == 1);
  CHECK(r.run_length() == 1);
  // Empty: no runs.
  const nd_geom empty = geom({0, 4}, {4, 1});
  auto e = lowbit::detail::make_plan<2>(shape{0, 4}, {&empty, &empty});
  std::size_t calls = 0;
  lowbit::detail::for_each_run(e, [&](const auto&, std::size_t) { ++calls; });
  CHECK(calls == 0);
}
