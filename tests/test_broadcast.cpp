// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/broadcast.hpp.
#include <lowbit/broadcast.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <lowbit/int_quant.hpp>

#include "support/catch.hpp"
#include "support/test_util.hpp"

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

// ---- limits and tensors past 2^31 elements ------------------------------------

namespace {
constexpr std::size_t two31 = std::size_t(1) << 31;
}  // namespace

TEST_CASE("broadcast_shape rejects a broadcast whose element count overflows", "[broadcast][errors][large]") {
  const std::size_t big = std::size_t(1) << 40;
  REQUIRE_THROWS_WITH(lowbit::broadcast_shape({shape{big, 1}, shape{1, big}}, {"x", "scale"}, "op"),
                      lowbit_test::contains_substring("op: the broadcast of x [1099511627776, 1], scale [1, "
                                                      "1099511627776] has shape [1099511627776, 1099511627776]") &&
                          lowbit_test::contains_substring("overflows std::size_t"));
  CHECK(lowbit::broadcast_shape({shape{0, 1, 1}, shape{1, big, 1}, shape{big}}) == shape{0, big, big});
  CHECK(lowbit::broadcast_shape({shape{2, 1}, shape{1, two31 + 17}}).count() == 2 * (two31 + 17));
}

TEST_CASE("loop plans and outer loops address positions and offsets past 2^31", "[broadcast][large]") {
  using lowbit::detail::nd_geom;
  // x [3, 2^31 + 17] with row stride 2^33 + 5 (an offset no 32-bit index
  // holds), scale per row [3, 1], y [3, 2^31 + 17] with stride -1 inner.
  const std::size_t n = two31 + 17;
  const std::ptrdiff_t big_stride = (std::ptrdiff_t(1) << 33) + 5;
  nd_geom x, s, y;
  x.rank = s.rank = y.rank = 2;
  x.ext = {3, n};
  x.str = {big_stride, 1};
  s.ext = {3, 1};
  s.str = {1, 0};
  y.ext = {3, n};
  y.str = {std::ptrdiff_t(n), -1};
  const auto p = lowbit::detail::make_plan<3>(shape{3, n}, {&x, &s, &y});
  REQUIRE(p.rank == 2);
  CHECK(p.count == 3 * n);
  CHECK(p.ext[1] == n);
  // The last few positions of each row, through the outer loop over both
  // dimensions (positions past 2^32).
  for (std::size_t row = 0; row < 3; ++row) {
    const std::size_t first = row * n + n - 3, last = row * n + n;
    std::size_t pos = first;
    bool ok = true;
    lowbit::detail::for_each_outer_range(p, first, last, [&](const std::array<std::ptrdiff_t, 3>& off) {
      const std::ptrdiff_t i = std::ptrdiff_t(pos / n), j = std::ptrdiff_t(pos % n);
      ok = ok && off[0] == i * big_stride + j && off[1] == i && off[2] == i * std::ptrdiff_t(n) - j;
      ++pos;
    });
    CHECK(ok);
    CHECK(pos == last);
  }
  // Dimensions merge only when the product stride * extent is exact: a
  // stride whose product would overflow std::ptrdiff_t never merges.
  nd_geom a;
  a.rank = 2;
  a.ext = {2, two31};
  a.str = {std::ptrdiff_t(1) << 62, std::ptrdiff_t(1) << 32};
  const auto q = lowbit::detail::make_plan<1>(shape{2, two31}, {&a});
  CHECK(q.rank == 2);
}

#if defined(__linux__)
#include <sys/mman.h>

TEST_CASE("int_quant reads and writes element offsets past 2^32 (sparse memory)", "[broadcast][large]") {
  // 24 GiB of address space, of which only the few pages the views touch
  // are ever backed by memory.
  const std::size_t bytes = std::size_t(24) << 30;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    WARN("mmap of 24 GiB of address space failed; test skipped");
    return;
  }
  float* base = static_cast<float*>(mem);
  const std::size_t elems = bytes / sizeof(float);
  const std::size_t rows = 3, cols = 300;
  const std::ptrdiff_t rs = (std::ptrdiff_t(1) << 31) + 3;  // row stride, in elements
  // x rows at 0, rs, 2 rs; scale rows at 1000 + ...; y runs backwards from the end.
  lowbit::strided_view<float> xv(base, {rows, cols}, {rs, 1});
  lowbit::strided_view<float> sv(base + 1000, {rows, 1}, {rs, 1});
  float* yend = base + (elems - 8);
  lowbit::strided_view<float> yv(yend, {rows, cols}, {-rs, -1});
  REQUIRE(static_cast<std::size_t>(2 * rs + cols) < elems);
  const auto xs = lowbit_test::mixed_values<float>(rows * cols, 31);
  const float scales[rows] = {0.25f, 3.0f, 0.0625f};
  for (std::size_t i = 0; i < rows; ++i) {
    base[1000 + std::ptrdiff_t(i) * rs] = scales[i];
    for (std::size_t j = 0; j < cols; ++j) base[std::ptrdiff_t(i) * rs + std::ptrdiff_t(j)] = xs[i * cols + j];
  }
  // The same call on compact copies.
  std::vector<float> want(rows * cols);
  lowbit::int_quant<> q{.rounding = lowbit::rounding_mode::half_even};
  q(lowbit::strided_view<const float>(xs.data(), {rows, cols}), lowbit::strided_view<const float>(scales, {rows, 1}),
    0.0f, 8.0f, lowbit::strided_view<float>(want.data(), {rows, cols}));
  for (bool simd : {true, false}) {
    const lowbit::detail::simd_scope simd_176(simd);  // the SIMD body or the scalar kernels
    q(lowbit::strided_view<const float>(xv), lowbit::strided_view<const float>(sv), 0.0f, 8.0f, yv);
    bool same = true;
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j)
        same = same && lowbit_test::bits(yend[-std::ptrdiff_t(i) * rs - std::ptrdiff_t(j)]) ==
                           lowbit_test::bits(want[i * cols + j]);
    CHECK(same);
  }
  munmap(mem, bytes);
}
#endif

TEST_CASE("the engine visits 2^31 + 2^16 positions, its output folded onto a small buffer",
          "[broadcast][large]") {
  // x, scale and y are [K, M] views with strides {a, a}: position (i, j) is
  // element a * (i + j). K * M > 2^31 positions, K + M - 1 distinct
  // elements. Every write to y[i + j] computes the same value from
  // x[2 (i + j)] and scale[i + j], so y must equal IntQuant applied to the
  // distinct elements once; a position addressed wrongly (truncated to 32
  // bits, or mixed up between operands) leaves a different value. The
  // operators reject such a y (it writes elements twice), so this drives
  // the engine under them directly, with IntQuant's kernel: it keeps the
  // test at 1 MiB instead of 8 GiB.
  using lowbit::detail::nd;
  const std::size_t K = std::size_t(1) << 16, M = (std::size_t(1) << 15) + 1, L = K + M - 1;
  REQUIRE(K * M > two31 + 17);
  std::vector<float> x(2 * L), s(L), y(L, -1.0f), want(L);
  const auto v = lowbit_test::mixed_values<float>(L, 77);
  for (std::size_t i = 0; i < L; ++i) {
    x[2 * i] = v[i];
    x[2 * i + 1] = std::numeric_limits<float>::quiet_NaN();  // never read
    s[i] = std::ldexp(1.0f, int(i % 7) - 3);
  }
  lowbit::int_quant<> q{.is_signed = false, .rounding = lowbit::rounding_mode::half_even};
  std::vector<float> xe(L);
  for (std::size_t i = 0; i < L; ++i) xe[i] = x[2 * i];
  q(xe, s, 0.0f, 6.0f, want);

  auto folded = [&](float* p, std::ptrdiff_t a) {
    nd<float> d;
    d.data = p;
    d.rank = 2;
    d.ext = {K, M};
    d.str = {a, a};
    return d;
  };
  const nd<float> xd = folded(x.data(), 2), sd = folded(s.data(), 1), yd = folded(y.data(), 1);
  const float zero = 0.0f, hi = 63.0f;  // zeropt, and uint6's limits (lo = zeropt = 0), bipolar flag 0
  nd<const float> cd;  // a rank-0 constant
  cd.rank = 0;
  cd.data = &zero;
  nd<const float> hd = cd;
  hd.data = &hi;
  const auto plan = lowbit::detail::make_engine_plan<5>(shape{K, M}, xd, {&sd, &cd, &cd, &hd, &cd}, yd);
  const std::array<const float*, 5> params{s.data(), &zero, &zero, &hi, &zero};
  lowbit::execution one;
  one.stream_min_elements = std::numeric_limits<std::size_t>::max();
  for (bool simd : {true, false}) {
    std::fill(y.begin(), y.end(), -1.0f);
    lowbit::detail::elementwise(plan, x.data(), params, y.data(), [&](const lowbit::detail::piece<float, 5>& pc) {
      lowbit::detail::run_piece(
          lowbit::detail::int_quant_kernel<lowbit::semantics::reference, lowbit::rounding_mode::half_even>{}, pc, simd);
    }, one);
    CHECK(lowbit_test::first_bit_difference(y, want) == -1);
  }
  // The operator itself rejects this y, writing nothing.
  std::fill(y.begin(), y.end(), -1.0f);
  REQUIRE_THROWS_WITH(q(lowbit::strided_view<const float>(x.data(), {K, M}, {2, 2}),
                        lowbit::strided_view<const float>(s.data(), {K, M}, {1, 1}), 0.0f, 6.0f,
                        lowbit::strided_view<float>(y.data(), {K, M}, {1, 1})),
                      lowbit_test::contains_substring("writes one element twice"));
  CHECK(y == std::vector<float>(L, -1.0f));
}

namespace {
/// An mdspan-like view with whatever extents and strides it is given.
struct raw_view2 {
  using element_type = float;
  using data_handle_type = float*;
  using reference = float&;
  float* p;
  std::array<std::size_t, 2> e;
  std::array<std::ptrdiff_t, 2> s;
  static constexpr std::size_t rank() { return 2; }
  std::size_t extent(std::size_t r) const { return e[r]; }
  std::ptrdiff_t stride(std::size_t r) const { return s[r]; }
  float* data_handle() const { return p; }
};
}  // namespace

TEST_CASE("int_quant rejects overflowing extents and spans and writes nothing", "[broadcast][errors][large]") {
  const float sentinel = 42.0f;
  std::vector<float> buf(8, 1.0f), y(6, sentinel);
  lowbit::int_quant<> q;
  auto untouched = [&] {
    for (float v : y)
      if (lowbit_test::bits(v) != lowbit_test::bits(sentinel)) return false;
    return true;
  };
  const std::ptrdiff_t pmax = std::numeric_limits<std::ptrdiff_t>::max();
  // x: a span of (2 - 1) * (PTRDIFF_MAX / 2) floats, far past PTRDIFF_MAX bytes.
  REQUIRE_THROWS_WITH(q(raw_view2{buf.data(), {2, 3}, {pmax / 2, 1}}, 1.0f, 0.0f, 8.0f,
                        lowbit::strided_view<float>(y.data(), {2, 3})),
                      lowbit_test::contains_substring("a view of shape [2, 3] with strides [" +
                                                      std::to_string(pmax / 2) + ", 1]") &&
                          lowbit_test::contains_substring("fits in std::ptrdiff_t"));
  CHECK(untouched());
  // y: the same.
  REQUIRE_THROWS_AS(q(buf, 1.0f, 0.0f, 8.0f, raw_view2{y.data(), {2, 3}, {3, pmax / 3}}), lowbit::error);
  CHECK(untouched());
  // x and scale broadcast to more than SIZE_MAX elements (zero strides, one
  // element of memory each).
  float one = 1.0f, two = 2.0f;
  const std::size_t big = std::size_t(1) << 40;
  REQUIRE_THROWS_WITH(q(lowbit::strided_view<const float>(&one, {big, 1}, {0, 0}),
                        lowbit::strided_view<const float>(&two, {1, big}, {0, 0}), 0.0f, 8.0f,
                        lowbit::strided_view<float>(y.data(), {2, 3})),
                      lowbit_test::contains_substring("lowbit::int_quant: the broadcast of x [1099511627776, 1], "
                                                      "scale [1, 1099511627776]") &&
                          lowbit_test::contains_substring("overflows std::size_t"));
  CHECK(untouched());
}
