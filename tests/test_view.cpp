// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/view.hpp.
#include <lowbit/view.hpp>

#include <array>
#include <span>
#include <vector>

#include "support/catch.hpp"

TEST_CASE("shape: rank, count, equality, printing", "[view]") {
  lowbit::shape s{2, 3, 4};
  CHECK(s.rank() == 3);
  CHECK(s.count() == 24);
  CHECK(s[1] == 3);
  CHECK(s.to_string() == "[2, 3, 4]");
  CHECK(lowbit::shape{}.count() == 1);
  CHECK(lowbit::shape{}.to_string() == "[]");
  CHECK(lowbit::shape{0, 5}.count() == 0);
  CHECK(s == lowbit::shape{2, 3, 4});
  CHECK(!(s == lowbit::shape{2, 3}));
  std::vector<long> dims{5, 6};
  CHECK(lowbit::shape(dims.begin(), dims.end()) == lowbit::shape{5, 6});
}

TEST_CASE("shape: bad extents are errors", "[view][errors]") {
  std::vector<long> neg{2, -1};
  REQUIRE_THROWS_AS(lowbit::shape(neg.begin(), neg.end()), lowbit::error);
  REQUIRE_THROWS_AS((lowbit::shape{1, 1, 1, 1, 1, 1, 1, 1, 1}), lowbit::error);
  const std::size_t big = std::size_t(1) << 40;
  REQUIRE_THROWS_AS((lowbit::shape{big, big}.count()), lowbit::error);
}

TEST_CASE("strided_view: row-major default, explicit strides, const conversion", "[view]") {
  std::array<float, 12> buf{};
  lowbit::strided_view<float> v(buf.data(), {3, 4});
  CHECK(v.rank() == 2);
  CHECK(v.stride(0) == 4);
  CHECK(v.stride(1) == 1);
  CHECK(v.size() == 12);
  lowbit::strided_view<float> t(buf.data(), {4, 3}, {1, 4});  // transposed
  CHECK(t.stride(0) == 1);
  CHECK(t.stride(1) == 4);
  lowbit::strided_view<const float> c = v;
  CHECK(c.data_handle() == buf.data());
  CHECK(c.stride(0) == 4);
  lowbit::strided_view<float> scalar(buf.data(), {});
  CHECK(scalar.rank() == 0);
  CHECK(scalar.size() == 1);
  REQUIRE_THROWS_AS(lowbit::strided_view<float>(buf.data(), {3, 4}, {1}), lowbit::error);
}

TEST_CASE("strided_view: strides known at run time", "[view]") {
  std::array<float, 16> buf{};
  const std::vector<std::ptrdiff_t> st{8, -2};
  lowbit::strided_view<float> v(buf.data() + 6, {2, 4}, st);
  CHECK(v.rank() == 2);
  CHECK(v.stride(0) == 8);
  CHECK(v.stride(1) == -2);
  const std::array<std::ptrdiff_t, 0> none{};
  CHECK(lowbit::strided_view<float>(buf.data(), {}, none).rank() == 0);
  const std::vector<std::ptrdiff_t> one{1};
  REQUIRE_THROWS_WITH(lowbit::strided_view<float>(buf.data(), {3, 4}, one),
                      lowbit_test::contains_substring("1 strides given for a view of shape [3, 4]; expected 2"));
}

TEST_CASE("tensor arguments: spans, vectors, views, scalars", "[view]") {
  STATIC_REQUIRE(lowbit::tensor_arg<float>);
  STATIC_REQUIRE(lowbit::tensor_arg<int>);
  STATIC_REQUIRE(lowbit::tensor_arg<std::span<float>>);
  STATIC_REQUIRE(lowbit::tensor_arg<std::vector<float>&>);
  STATIC_REQUIRE(lowbit::tensor_arg<const std::array<double, 3>&>);
  STATIC_REQUIRE(lowbit::tensor_arg<lowbit::strided_view<const float>>);
  STATIC_REQUIRE(!lowbit::tensor_arg<const char*>);
  std::vector<float> v(7);
  auto d = lowbit::detail::to_nd(v);
  CHECK(d.rank == 1);
  CHECK(d.ext[0] == 7);
  CHECK(d.str[0] == 1);
  CHECK(d.data == v.data());
}
