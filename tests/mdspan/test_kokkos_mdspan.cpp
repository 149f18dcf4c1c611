// SPDX-License-Identifier: Apache-2.0
// lowbit's operators on the reference mdspan (kokkos/mdspan: its release
// 0.6.0 has <experimental/mdspan> and namespace std::experimental, later
// sources <mdspan/mdspan.hpp> and namespace Kokkos; both work), not the mock of tests/compile/mdspan_mock.cpp: layout_right,
// layout_left and layout_stride, const element types, static, dynamic and
// mixed extents, rank 0 to 3, broadcasting through an mdspan scale.
// Built only when find_package(mdspan) finds it (ctest mdspan.kokkos,
// docs/testing.md). Every result is compared bit for bit with the same
// operator called element by element on scalars, the positions read from
// the view's own mapping (never by indexing through the view: in C++20
// Kokkos mdspan has operator(), not operator[]).
#if __has_include(<mdspan/mdspan.hpp>)
#include <mdspan/mdspan.hpp>
namespace K = MDSPAN_IMPL_STANDARD_NAMESPACE;
#else
#include <experimental/mdspan>
namespace K = std::experimental;
#endif

#include <lowbit/lowbit.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "support/catch.hpp"

namespace {

using std::size_t;

static_assert(lowbit::mdspan_like<K::mdspan<float, K::dextents<size_t, 2>>>);
static_assert(lowbit::mdspan_like<K::mdspan<const float, K::extents<size_t, 3, 5>, K::layout_left>>);
static_assert(lowbit::mdspan_like<K::mdspan<const double, K::dextents<int, 3>, K::layout_stride>>);
static_assert(lowbit::mdspan_like<K::mdspan<const float, K::extents<size_t>>>);
static_assert(lowbit::tensor_arg<K::mdspan<const float, K::extents<size_t, 2, K::dynamic_extent>>>);

std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }

// Inputs that hit ties, clamping, negative zero and subnormals.
std::vector<float> inputs(size_t n) {
  const float pattern[] = {0.25f, -1.25f, 3.75f, 100.0f, -0.0f, 1e-40f, -7.5f, 0.74f, 2.5f, -3.25f, 0.5f};
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = pattern[i % std::size(pattern)] * float(1 + i % 3);
  return v;
}

// The offsets of all elements of a rank-N mapping, row-major order of indices.
template <class Mapping>
std::vector<size_t> offsets(const Mapping& m) {
  constexpr size_t rank = Mapping::extents_type::rank();
  std::vector<size_t> out;
  if constexpr (rank == 0) {
    out.push_back(size_t(m()));
  } else {
    std::array<typename Mapping::index_type, rank> idx{};
    size_t total = 1;
    for (size_t r = 0; r < rank; ++r) total *= size_t(m.extents().extent(r));
    for (size_t k = 0; k < total; ++k) {
      out.push_back(size_t(std::apply([&](auto... i) { return m(i...); }, idx)));
      for (size_t r = rank; r-- > 0;) {
        if (++idx[r] < m.extents().extent(r)) break;
        idx[r] = 0;
      }
    }
  }
  return out;
}

// Runs int_quant on views x and y over buffers xb and yb (same mapping), and
// checks every element against the scalar call; elements of yb outside the
// view keep their sentinel.
template <class XView, class YView>
void check_int_quant(XView x, YView y, const std::vector<float>& xb, std::vector<float>& yb) {
  const float sentinel = -12345.0f;
  std::fill(yb.begin(), yb.end(), sentinel);
  const lowbit::int_quant<> q{.is_signed = true, .rounding = lowbit::rounding_mode::half_even};
  q(x, 0.5f, 0.0f, 4.0f, y);
  const auto offs = offsets(y.mapping());
  std::vector<bool> in_view(yb.size(), false);
  for (size_t k = 0; k < offs.size(); ++k) {
    const size_t o = offs[k];
    in_view[o] = true;
    float want = 0.0f;
    q(std::span<const float>(&xb[o], 1), 0.5f, 0.0f, 4.0f, std::span<float>(&want, 1));
    INFO("element " << k << " at offset " << o << " x = " << xb[o]);
    REQUIRE(bits(yb[o]) == bits(want));
  }
  for (size_t o = 0; o < yb.size(); ++o)
    if (!in_view[o]) REQUIRE(bits(yb[o]) == bits(sentinel));
}

}  // namespace

TEST_CASE("kokkos mdspan: layout_right, static and dynamic extents", "[mdspan]") {
  // 7 x 37: a SIMD body and a tail in every row; the fast (flat) path.
  const auto xb = inputs(7 * 37);
  std::vector<float> yb(xb.size());
  SECTION("dynamic extents") {
    K::mdspan<const float, K::dextents<size_t, 2>> x(xb.data(), 7, 37);
    K::mdspan<float, K::dextents<size_t, 2>> y(yb.data(), 7, 37);
    check_int_quant(x, y, xb, yb);
  }
  SECTION("static extents") {
    K::mdspan<const float, K::extents<size_t, 7, 37>> x(xb.data());
    K::mdspan<float, K::extents<size_t, 7, 37>> y(yb.data());
    check_int_quant(x, y, xb, yb);
  }
  SECTION("mixed extents, int index type, rank 3") {
    K::mdspan<const float, K::extents<int, 7, K::dynamic_extent, 1>> x(xb.data(), 37);
    K::mdspan<float, K::extents<int, 7, K::dynamic_extent, 1>> y(yb.data(), 37);
    check_int_quant(x, y, xb, yb);
  }
}

TEST_CASE("kokkos mdspan: layout_left", "[mdspan]") {
  const auto xb = inputs(9 * 20);
  std::vector<float> yb(xb.size());
  SECTION("dynamic extents") {
    K::mdspan<const float, K::dextents<size_t, 2>, K::layout_left> x(xb.data(), 9, 20);
    K::mdspan<float, K::dextents<size_t, 2>, K::layout_left> y(yb.data(), 9, 20);
    check_int_quant(x, y, xb, yb);
  }
  SECTION("static extents, rank 3") {
    K::mdspan<const float, K::extents<size_t, 3, 3, 20>, K::layout_left> x(xb.data());
    K::mdspan<float, K::extents<size_t, 3, 3, 20>, K::layout_left> y(yb.data());
    check_int_quant(x, y, xb, yb);
  }
}

TEST_CASE("kokkos mdspan: layout_stride with gaps and a non-unit inner stride", "[mdspan]") {
  using ext = K::dextents<size_t, 2>;
  using map = K::layout_stride::mapping<ext>;
  SECTION("padded rows (row stride 41 for 37 columns)") {
    const auto xb = inputs(6 * 41);
    std::vector<float> yb(xb.size());
    const map m(ext(6, 37), std::array<size_t, 2>{41, 1});
    K::mdspan<const float, ext, K::layout_stride> x(xb.data(), m);
    K::mdspan<float, ext, K::layout_stride> y(yb.data(), m);
    check_int_quant(x, y, xb, yb);
  }
  SECTION("every third element (inner stride 3), transposed") {
    const auto xb = inputs(3 * 5 * 11);
    std::vector<float> yb(xb.size());
    const map m(ext(11, 5), std::array<size_t, 2>{3, 33});
    K::mdspan<const float, ext, K::layout_stride> x(xb.data(), m);
    K::mdspan<float, ext, K::layout_stride> y(yb.data(), m);
    check_int_quant(x, y, xb, yb);
  }
  SECTION("static extents") {
    using sext = K::extents<size_t, 4, 9>;
    const auto xb = inputs(4 * 2 * 9 + 1);
    std::vector<float> yb(xb.size());
    const K::layout_stride::mapping<sext> m(sext{}, std::array<size_t, 2>{1, 8});
    K::mdspan<const float, sext, K::layout_stride> x(xb.data(), m);
    K::mdspan<float, sext, K::layout_stride> y(yb.data(), m);
    check_int_quant(x, y, xb, yb);
  }
}

TEST_CASE("kokkos mdspan: x in one layout, y in another", "[mdspan]") {
  const auto xb = inputs(5 * 19);
  std::vector<float> yb(xb.size(), 0.0f);
  K::mdspan<const float, K::dextents<size_t, 2>, K::layout_left> x(xb.data(), 5, 19);
  K::mdspan<float, K::dextents<size_t, 2>> y(yb.data(), 5, 19);
  const lowbit::int_quant<> q{.is_signed = true, .rounding = lowbit::rounding_mode::half_even};
  q(x, 0.5f, 0.0f, 4.0f, y);
  for (size_t i = 0; i < 5; ++i)
    for (size_t j = 0; j < 19; ++j) {
      const float xi = xb[x.mapping()(i, j)];
      float want = 0.0f;
      q(std::span<const float>(&xi, 1), 0.5f, 0.0f, 4.0f, std::span<float>(&want, 1));
      INFO("(" << i << ", " << j << ")");
      REQUIRE(bits(yb[y.mapping()(i, j)]) == bits(want));
    }
}

TEST_CASE("kokkos mdspan: broadcast parameters (per-row scale, rank-0 zero point), float_quant", "[mdspan]") {
  const auto xb = inputs(4 * 13);
  std::vector<float> yb(xb.size(), 0.0f);
  const std::array<float, 4> scales{0.5f, 0.25f, 2.0f, 0.125f};
  const float zero = 0.0f;
  K::mdspan<const float, K::dextents<size_t, 2>> x(xb.data(), 4, 13);
  K::mdspan<float, K::dextents<size_t, 2>> y(yb.data(), 4, 13);
  K::mdspan<const float, K::extents<size_t, 4, 1>> s(scales.data());
  K::mdspan<const float, K::extents<size_t>> z(&zero);

  SECTION("int_quant") {
    const lowbit::int_quant<> q{.is_signed = true, .rounding = lowbit::rounding_mode::half_even};
    q(x, s, z, 4.0f, y);
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 13; ++j) {
        float want = 0.0f;
        q(std::span<const float>(&xb[i * 13 + j], 1), scales[i], 0.0f, 4.0f, std::span<float>(&want, 1));
        INFO("(" << i << ", " << j << ")");
        REQUIRE(bits(yb[i * 13 + j]) == bits(want));
      }
  }
  SECTION("float_quant E4M3") {
    const lowbit::float_quant<> f{.rounding = lowbit::rounding_mode::half_even};
    f(x, s, 4.0f, 3.0f, 7.0f, 448.0f, y);
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 13; ++j) {
        float want = 0.0f;
        f(std::span<const float>(&xb[i * 13 + j], 1), scales[i], 4.0f, 3.0f, 7.0f, 448.0f,
          std::span<float>(&want, 1));
        INFO("(" << i << ", " << j << ")");
        REQUIRE(bits(yb[i * 13 + j]) == bits(want));
      }
  }
}
