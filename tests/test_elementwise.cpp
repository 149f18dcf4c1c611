// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/elementwise.hpp: the helpers the
// operators validate their arguments with.
#include <lowbit/detail/elementwise.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "support/catch.hpp"

using lowbit::detail::nd;

namespace {

nd<const float> view(const float* p, std::initializer_list<std::size_t> ext,
                     std::initializer_list<std::ptrdiff_t> str) {
  nd<const float> d;
  d.data = p;
  d.rank = ext.size();
  std::size_t r = 0;
  for (std::size_t e : ext) d.ext[r++] = e;
  r = 0;
  for (std::ptrdiff_t s : str) d.str[r++] = s;
  return d;
}

}  // namespace

TEST_CASE("check_elements visits each distinct element once, with its flat index", "[elementwise]") {
  const float v[6] = {0, 1, 2, 3, 4, 5};
  std::vector<std::pair<float, std::size_t>> seen;
  auto record = [&](float x, std::size_t flat) {
    seen.emplace_back(x, flat);
    return true;
  };
  // Row-major [2, 3]: every element, in order.
  lowbit::detail::check_elements(view(v, {2, 3}, {3, 1}), record);
  REQUIRE(seen.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) CHECK(seen[i] == std::pair<float, std::size_t>(float(i), i));
  // [4, 3] with stride 0 in dimension 0: the row once, at flat 0..2.
  seen.clear();
  lowbit::detail::check_elements(view(v, {4, 3}, {0, 1}), record);
  REQUIRE(seen.size() == 3);
  CHECK(seen[2] == std::pair<float, std::size_t>(2.0f, 2));
  // [3, 2^40] with strides [2, 0]: three visits, the flat index counts the broadcast dimension.
  seen.clear();
  const std::size_t big = std::size_t(1) << 40;
  lowbit::detail::check_elements(view(v, {3, big}, {2, 0}), record);
  REQUIRE(seen.size() == 3);
  CHECK(seen[1] == std::pair<float, std::size_t>(2.0f, big));
  CHECK(seen[2] == std::pair<float, std::size_t>(4.0f, 2 * big));
  // Negative strides, an empty tensor, rank 0, early stop.
  seen.clear();
  lowbit::detail::check_elements(view(v + 5, {3}, {-2}), record);
  REQUIRE(seen.size() == 3);
  CHECK(seen[2].first == 1.0f);
  seen.clear();
  lowbit::detail::check_elements(view(v, {3, 0}, {1, 1}), record);
  CHECK(seen.empty());
  lowbit::detail::check_elements(view(v + 4, {}, {}), record);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].first == 4.0f);
  int calls = 0;
  lowbit::detail::check_elements(view(v, {6}, {1}), [&](float, std::size_t) { return ++calls < 2; });
  CHECK(calls == 2);
}

TEST_CASE("io_types_ok accepts the operators' argument types", "[elementwise]") {
  using lowbit::detail::io_types_ok;
  STATIC_REQUIRE(io_types_ok<std::vector<float>, std::vector<float>&, float, double>());
  STATIC_REQUIRE(io_types_ok<std::span<const double>, std::span<double>, float, double>());
  STATIC_REQUIRE(io_types_ok<std::vector<float>, void, float>());
  // The rejections are static_asserts (one diagnostic each), so they are
  // compile-fail cases and not instantiated here.
}
