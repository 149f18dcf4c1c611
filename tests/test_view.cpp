// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/view.hpp.
#include <lowbit/view.hpp>

#include <array>
#include <limits>
#include <string>
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

// ---- limits: element counts and spans ----------------------------------------

namespace {
constexpr std::size_t big_n = (std::size_t(1) << 31) + 17;  // past INT_MAX and UINT32_MAX / 2
constexpr std::ptrdiff_t pmax = std::numeric_limits<std::ptrdiff_t>::max();

/// An mdspan-like view with whatever extents and strides it is given (no
/// checks of its own, unlike strided_view), of index type I.
template <class I>
struct raw_view {
  using element_type = float;
  using data_handle_type = float*;
  using reference = float&;
  float* p;
  std::array<I, 2> e, s;
  static constexpr std::size_t rank() { return 2; }
  I extent(std::size_t r) const { return e[r]; }
  I stride(std::size_t r) const { return s[r]; }
  float* data_handle() const { return p; }
};
}  // namespace

TEST_CASE("shape: an element count that overflows std::size_t is rejected at construction",
          "[view][errors][large]") {
  const std::size_t big = std::size_t(1) << 40;
  REQUIRE_THROWS_WITH((lowbit::shape{big, big}),
                      lowbit_test::contains_substring("element count of shape [1099511627776, 1099511627776]") &&
                          lowbit_test::contains_substring("overflows std::size_t"));
  // An extent 0 makes the count 0 whatever the other extents are.
  CHECK(lowbit::shape{big, big, 0}.count() == 0);
  CHECK(lowbit::shape{0, big, big}.count() == 0);
  // Past 2^32 and up to SIZE_MAX itself.
  CHECK(lowbit::shape{2, big_n}.count() == 2 * big_n);
  const std::size_t m = std::numeric_limits<std::size_t>::max();
  CHECK(lowbit::shape{m}.count() == m);
  CHECK(lowbit::shape{m / 3, 3}.count() == m / 3 * 3);
  REQUIRE_THROWS_AS((lowbit::shape{m / 3 + 1, 3}), lowbit::error);
}

TEST_CASE("strided_view: broadcast views past 2^31 elements over one element", "[view][large]") {
  float one = 1.5f;
  lowbit::strided_view<float> v(&one, {big_n}, {0});
  CHECK(v.size() == big_n);
  lowbit::strided_view<float> w(&one, {2, big_n}, {1, 0});
  CHECK(w.size() == 2 * big_n);
  const auto d = lowbit::detail::to_nd(w);
  CHECK(d.ext[1] == big_n);
  CHECK(d.str[0] == 1);
  CHECK(d.get_shape().count() == 2 * big_n);
}

TEST_CASE("strided_view: spans whose byte offsets overflow std::ptrdiff_t are rejected",
          "[view][errors][large]") {
  float buf[4] = {};
  double dbuf[1] = {};  // only the geometry matters: nothing is read
  // The largest span allowed for float: (extent - 1) * |stride| * 4 <= PTRDIFF_MAX.
  const std::ptrdiff_t lim = pmax / 4;
  CHECK(lowbit::strided_view<float>(buf, {2}, {lim}).stride(0) == lim);
  CHECK(lowbit::strided_view<float>(buf, {2}, {-lim}).stride(0) == -lim);
  CHECK(lowbit::strided_view<double>(dbuf, {2}, {pmax / 8}).stride(0) == pmax / 8);
  REQUIRE_THROWS_WITH(lowbit::strided_view<float>(buf, {2}, {lim + 1}),
                      lowbit_test::contains_substring("lowbit::strided_view: a view of shape [2] with strides [" +
                                                      std::to_string(lim + 1) + "] spans " +
                                                      std::to_string(lim + 1) + " elements of 4 bytes") &&
                          lowbit_test::contains_substring("expected at most " + std::to_string(lim) + " elements"));
  REQUIRE_THROWS_AS(lowbit::strided_view<double>(dbuf, {2}, {pmax / 8 + 1}), lowbit::error);
  // The sum over dimensions counts, and so do negative strides.
  REQUIRE_THROWS_AS(lowbit::strided_view<float>(buf, {2, 2}, {lim / 2 + 1, -(lim / 2 + 1)}), lowbit::error);
  // |PTRDIFF_MIN| and products past 2^64 do not wrap around.
  REQUIRE_THROWS_WITH(lowbit::strided_view<float>(buf, {2}, {std::numeric_limits<std::ptrdiff_t>::min()}),
                      lowbit_test::contains_substring("spans 9223372036854775808 elements"));
  REQUIRE_THROWS_WITH(lowbit::strided_view<float>(buf, {std::size_t(1) << 40}, {std::ptrdiff_t(1) << 40}),
                      lowbit_test::contains_substring("spans more than 2^64 elements"));
  // A stride along an extent of 1 or 0 is never used.
  CHECK(lowbit::strided_view<float>(buf, {1, 3}, {pmax, 1}).size() == 3);
  CHECK(lowbit::strided_view<float>(buf, {0, 3}, {pmax, pmax}).size() == 0);
  // Row-major views: the size in bytes must fit.
  CHECK(lowbit::strided_view<float>(buf, {std::size_t(1) << 30, 4}).stride(0) == 4);
  REQUIRE_THROWS_AS(lowbit::strided_view<float>(buf, {std::size_t(1) << 61, 2}), lowbit::error);
  REQUIRE_THROWS_AS(lowbit::strided_view<float>(buf, {std::size_t(1) << 62}), lowbit::error);
  CHECK(lowbit::strided_view<float>(buf, {0, std::size_t(1) << 62, 8}).size() == 0);
}

TEST_CASE("tensor arguments: mdspan-like views with out-of-range extents or strides are rejected",
          "[view][errors][large]") {
  float buf[8] = {};
  using lowbit::detail::to_nd;
  CHECK(to_nd(raw_view<std::ptrdiff_t>{buf, {2, 3}, {3, 1}}).ext[0] == 2);
  REQUIRE_THROWS_WITH(to_nd(raw_view<std::ptrdiff_t>{buf, {2, 3}, {pmax / 2, 1}}),
                      lowbit_test::contains_substring("a view of shape [2, 3] with strides [" +
                                                      std::to_string(pmax / 2) + ", 1]"));
  REQUIRE_THROWS_WITH(to_nd(raw_view<std::ptrdiff_t>{buf, {-2, 3}, {3, 1}}),
                      lowbit_test::contains_substring("extent -2 in dimension 0"));
  REQUIRE_THROWS_WITH(to_nd(raw_view<std::size_t>{buf, {2, 3}, {std::size_t(1) << 63, 1}}),
                      lowbit_test::contains_substring("stride 9223372036854775808 in dimension 0") &&
                          lowbit_test::contains_substring("expected a stride that fits in std::ptrdiff_t"));
  REQUIRE_THROWS_WITH(to_nd(raw_view<std::size_t>{buf, {std::size_t(1) << 40, std::size_t(1) << 40}, {0, 0}}),
                      lowbit_test::contains_substring("overflows std::size_t"));
}

TEST_CASE("tensor arguments: floating-point extents and strides are checked, never converted blindly",
          "[view][errors]") {
  float buf[8] = {};
  using lowbit::detail::to_nd;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Integral floating-point values are accepted as they are.
  const auto d = to_nd(raw_view<double>{buf, {2.0, 3.0}, {3.0, 1.0}});
  CHECK(d.ext[0] == 2);
  CHECK(d.ext[1] == 3);
  CHECK(d.str[0] == 3);
  REQUIRE_THROWS_WITH(to_nd(raw_view<double>{buf, {-1.0, 3.0}, {3.0, 1.0}}),
                      lowbit_test::contains_substring("extent -1 in dimension 0; expected a non-negative integer"));
  REQUIRE_THROWS_WITH(to_nd(raw_view<double>{buf, {2.0, nan}, {3.0, 1.0}}),
                      lowbit_test::contains_substring("extent nan in dimension 1"));
  REQUIRE_THROWS_WITH(to_nd(raw_view<double>{buf, {2.5, 3.0}, {3.0, 1.0}}),
                      lowbit_test::contains_substring("extent 2.5 in dimension 0"));
  REQUIRE_THROWS_WITH(to_nd(raw_view<double>{buf, {1e30, 3.0}, {3.0, 1.0}}),
                      lowbit_test::contains_substring("in dimension 0; expected a non-negative integer"));
  REQUIRE_THROWS_WITH(to_nd(raw_view<double>{buf, {2.0, 3.0}, {nan, 1.0}}),
                      lowbit_test::contains_substring("stride nan in dimension 0"));
  REQUIRE_THROWS_WITH(to_nd(raw_view<float>{buf, {2.0f, 3.0f}, {3.0f, 0.5f}}),
                      lowbit_test::contains_substring("stride 0.5 in dimension 1"));
  REQUIRE_THROWS_WITH(to_nd(raw_view<double>{buf, {2.0, 3.0}, {-1e300, 1.0}}),
                      lowbit_test::contains_substring("expected an integer stride that fits in std::ptrdiff_t"));
}

TEST_CASE("shape: extents from a range of floating-point values", "[view][errors]") {
  const std::vector<double> ok{2.0, 3.0};
  CHECK(lowbit::shape(ok.begin(), ok.end()) == lowbit::shape{2, 3});
  for (double bad : {-1.0, std::numeric_limits<double>::quiet_NaN(), 2.5, 1e30,
                     std::numeric_limits<double>::infinity(), -0.5}) {
    const std::vector<double> dims{2.0, bad};
    INFO(bad);
    REQUIRE_THROWS_WITH(lowbit::shape(dims.begin(), dims.end()),
                        lowbit_test::contains_substring("in dimension 1 is invalid; expected a non-negative integer"));
  }
  const std::vector<unsigned long long> huge{2, std::numeric_limits<unsigned long long>::max()};
  REQUIRE_THROWS_AS(lowbit::shape(huge.begin(), huge.end()), lowbit::error);
}

TEST_CASE("views with elements and a null data pointer are rejected", "[view][errors]") {
  REQUIRE_THROWS_WITH(lowbit::strided_view<float>(nullptr, {2, 3}),
                      lowbit_test::contains_substring("a view of shape [2, 3] has a null data pointer"));
  REQUIRE_THROWS_WITH(lowbit::strided_view<float>(nullptr, {2, 3}, {1, 2}),
                      lowbit_test::contains_substring("has a null data pointer"));
  // A view with no elements may be null.
  CHECK(lowbit::strided_view<float>(nullptr, {0, 3}).size() == 0);
  REQUIRE_THROWS_WITH(lowbit::detail::to_nd(raw_view<std::ptrdiff_t>{nullptr, {2, 3}, {3, 1}}),
                      lowbit_test::contains_substring("has a null data pointer"));
  CHECK(lowbit::detail::to_nd(raw_view<std::ptrdiff_t>{nullptr, {2, 0}, {3, 1}}).ext[1] == 0);
}
