// SPDX-License-Identifier: Apache-2.0
// Stochastic rounding (detail/stochastic.hpp, rounding_mode::stochastic):
// the rounding step exact on hand-picked values, the draws independent of
// SIMD, threads and call splits, the statistics of the mode (unbiased within
// a stated bound, P(away) = floor(2^r f) / 2^r), every operator that takes
// it, and its errors. The generator and the index-to-draw mapping are tested
// in test_philox.cpp.
#include <lowbit/lowbit.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"
#include "support/test_util.hpp"

using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit::strided_view;
using lowbit_test::bits;
using lowbit_test::require_same_bits;
namespace ld = lowbit::detail;

namespace {

constexpr rounding_mode sr = rounding_mode::stochastic;

template <class T>
std::vector<T> uniform_values(std::size_t n, std::uint32_t seed, T lo, T hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> u(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = u(rng);
  return v;
}

/// Runs `call(op, y)` with SIMD and on the scalar kernels, and compares the bits.
template <class T, class Op, class Call>
void simd_equals_scalar(const Op& op, std::size_t n, const Call& call) {
  std::vector<T> a(n, T(-1)), b(n, T(-2));
  call(op, a);
  {
    const ld::simd_scope off(false);
    call(op, b);
  }
  require_same_bits(a, b);
}

}  // namespace

TEST_CASE("round_stochastic: away from zero exactly when the fraction reaches the threshold", "[stochastic]") {
  const float inf = std::numeric_limits<float>::infinity();
  // Each case on a scalar and, for a threshold the operators can draw (a
  // multiple of 2^-23 in (0, 1]), on a batch of the native width (every
  // lane): with AVX-512 the batch form is trunc(y + copysign(1 - u, y))
  // with the addition rounded toward zero, which must give the scalar's bits.
  auto rs = [](float y, float u) {
    using B = xsimd::batch<float>;
    const float s = ld::round_stochastic(y, u);
    if (u * 0x1p23f == std::floor(u * 0x1p23f)) {
      const B b = ld::round_stochastic(B(y), B(u));
      for (std::size_t l = 0; l < B::size; ++l) CHECK(bits(b.get(l)) == bits(s));
    }
    return s;
  };
  // f = 0.25: threshold 0.25 rounds away, the next float above does not.
  CHECK(rs(2.25f, 0.25f) == 3.0f);
  CHECK(rs(2.25f, std::nextafter(0.25f, 1.0f)) == 2.0f);
  CHECK(rs(-2.25f, 0.25f) == -3.0f);
  CHECK(rs(-2.25f, 0.5f) == -2.0f);
  // The fraction is exact below 1 and near 2^23 (no rounding error).
  CHECK(rs(0x1p-20f, 0x1p-20f) == 1.0f);
  CHECK(rs(0x1p-20f, 0x1p-20f + 0x1p-40f) == 0.0f);
  CHECK(rs(8388607.5f, 0.5f) == 8388608.0f);
  CHECK(rs(8388607.5f, 0.5000001f) == 8388607.0f);
  // One float below the threshold stays, where y + 1 - u is not a float
  // (the batch form's sum rounded to nearest or up would reach 1).
  for (float u : {0x1p-21f, 0x1p-16f, 0.375f, 0x1.fffffcp-2f}) {
    CAPTURE(u);
    CHECK(rs(std::nextafter(u, 0.0f), u) == 0.0f);
    CHECK(bits(rs(-std::nextafter(u, 0.0f), u)) == bits(-0.0f));
    CHECK(rs(u, u) == 1.0f);
    CHECK(rs(-u, u) == -1.0f);
    CHECK(rs(std::nextafter(3.0f + u, 0.0f), u) == 3.0f);
    CHECK(rs(-(3.0f + u), u) == -4.0f);
  }
  // The largest threshold, 1, never rounds away; integral values stay.
  CHECK(rs(0.99999994f, 1.0f) == 0.0f);
  CHECK(rs(5.0f, 0x1p-23f) == 5.0f);
  CHECK(rs(5.0f, 1.0f) == 5.0f);
  CHECK(rs(16777216.0f, 0x1p-23f) == 16777216.0f);
  CHECK(rs(0x1.fffffep+127f, 0x1p-23f) == 0x1.fffffep+127f);
  // Subnormal y: below every threshold (2^-23 at the least).
  CHECK(bits(rs(0x1p-149f, 0x1p-23f)) == bits(0.0f));
  CHECK(bits(rs(-0x1p-130f, 0x1p-23f)) == bits(-0.0f));
  // Signs of zeros kept; infinities stay, NaN stays NaN.
  CHECK(bits(rs(-0.0f, 0.5f)) == bits(-0.0f));
  CHECK(bits(rs(-0.0f, 1.0f)) == bits(-0.0f));
  CHECK(bits(rs(0.0f, 1.0f)) == bits(0.0f));
  CHECK(bits(rs(-0.3f, 0.5f)) == bits(-0.0f));
  CHECK(bits(rs(0.3f, 0.5f)) == bits(0.0f));
  CHECK(rs(inf, 0.5f) == inf);
  CHECK(rs(-inf, 0.5f) == -inf);
  CHECK(std::isnan(ld::round_stochastic(std::numeric_limits<float>::quiet_NaN(), 0.5f)));
  CHECK(std::isnan(ld::round_stochastic(xsimd::batch<float>(std::numeric_limits<float>::quiet_NaN()),
                                        xsimd::batch<float>(0.5f))
                       .get(0)));
  // double lanes.
  CHECK(ld::round_stochastic(-7.75, 0.75) == -8.0);
  CHECK(ld::round_stochastic(-7.75, 0.75 + 0x1p-32) == -7.0);
}

TEST_CASE("stochastic IntQuant: P(away) = floor(2^r f) / 2^r, unbiased within its bound", "[stochastic]") {
  const std::size_t n = 1u << 20;
  SECTION("every element the same fraction: the frequency of rounding up") {
    // y = x / 1 = 3.3f (f = 0.2999999523162842): with r bits, P(up) =
    // floor(2^r f) / 2^r exactly: r = 1 gives 0, r = 2 gives 1/4, r = 3
    // gives 2/8, r = 4 gives 4/16, r = 16 gives 19660 / 65536. Bound: 6
    // standard deviations of a binomial proportion.
    const std::vector<float> x(n, 3.3f);
    std::vector<float> y(n);
    for (const auto& [r, p] : {std::pair{1, 0.0}, std::pair{2, 0.25}, std::pair{3, 0.25}, std::pair{4, 0.25},
                              std::pair{16, 19660.0 / 65536}, std::pair{23, 2516582.0 / 8388608}}) {
      lowbit::int_quant<> q{.rounding = sr, .seed = 0x1234567890abcdefull, .random_bits = r};
      q(x, 1.0f, 0.0f, 8.0f, y);
      std::size_t up = 0, other = 0;
      for (float v : y) {
        up += v == 4.0f;
        other += v != 3.0f && v != 4.0f;
      }
      CHECK(other == 0);
      const double freq = double(up) / double(n);
      const double sd = std::sqrt(p * (1 - p) / double(n));
      CAPTURE(r, p, freq);
      if (p == 0.0)
        CHECK(up == 0);
      else
        CHECK(std::abs(freq - p) <= 6 * sd);
    }
  }
  SECTION("uniform inputs: the mean error is 0 within 6 sigma, and far from 0 for DOWN") {
    // x uniform in [-100, 100), scale 1: the rounding error of each element
    // is q - y; stochastic rounding has mean 0 but for the r-bit
    // truncation of the probability (a bias below 2^-r toward zero, in
    // magnitude), and variance f(1 - f) <= 1/4.
    const std::vector<float> x = uniform_values<float>(n, 7, -100.0f, 100.0f);
    std::vector<float> y(n);
    auto mean_error = [&](rounding_mode m, int r) {
      lowbit::int_quant<> q{.rounding = m, .seed = 42, .random_bits = r};
      q(x, 1.0f, 0.0f, 16.0f, y);
      double s = 0;  // signed error toward +inf; for the magnitude bias, (q - x) sign(x)
      for (std::size_t i = 0; i < n; ++i) s += (double(y[i]) - double(x[i])) * (x[i] < 0 ? -1.0 : 1.0);
      return s / double(n);
    };
    const double bound = 6 * 0.5 / std::sqrt(double(n));  // 6 sigma, sigma <= 1/2 / sqrt(n)
    CHECK(std::abs(mean_error(sr, 16)) <= bound + 0x1p-16);
    CHECK(std::abs(mean_error(sr, 23)) <= bound + 0x1p-23);
    // r = 2: the truncated probability is biased toward zero by a mean of
    // about 1/8 of a step (E[f - floor(4f)/4] = 1/8 for f uniform): visible.
    CHECK(mean_error(sr, 2) < -0.1);
    CHECK(mean_error(sr, 2) > -0.15);
    // DOWN (truncation) has mean error -1/2 in magnitude: the test can fail.
    CHECK(mean_error(rounding_mode::down, 16) < -0.45);
    // Stochastic rounding's mean squared error is larger than ROUND's
    // (1/6 against 1/12 of a step squared for uniform fractions).
    auto mse = [&](rounding_mode m) {
      lowbit::int_quant<> q{.rounding = m, .seed = 42};
      q(x, 1.0f, 0.0f, 16.0f, y);
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += (double(y[i]) - double(x[i])) * (double(y[i]) - double(x[i]));
      return s / double(n);
    };
    CHECK(std::abs(mse(sr) - 1.0 / 6) < 0.005);
    CHECK(std::abs(mse(rounding_mode::half_even) - 1.0 / 12) < 0.005);
  }
}

TEST_CASE("stochastic rounding: the same bits with SIMD and scalar, any length and offset", "[stochastic]") {
  const std::vector<float> xs = lowbit_test::mixed_values<float>(300, 11);
  const std::vector<double> xd = lowbit_test::mixed_values<double>(300, 12);
  for (std::size_t len : {std::size_t(1), std::size_t(3), std::size_t(15), std::size_t(16), std::size_t(17),
                          std::size_t(33), std::size_t(67), std::size_t(255)}) {
    for (std::size_t off : {std::size_t(0), std::size_t(1), std::size_t(5)}) {
      CAPTURE(len, off);
      const std::span<const float> x(xs.data() + off, len);
      const std::span<const double> x2(xd.data() + off, len);
      simd_equals_scalar<float>(lowbit::int_quant<>{.rounding = sr, .seed = 3}, len,
                                [&](const auto& op, std::vector<float>& y) { op(x, 0.5f, 0.0f, 8.0f, y); });
      simd_equals_scalar<float>(lowbit::int_quant<semantics::exact>{.rounding = sr, .seed = 3, .random_bits = 7},
                                len, [&](const auto& op, std::vector<float>& y) { op(x, 0.37f, 1.0f, 5.0f, y); });
      simd_equals_scalar<double>(lowbit::int_quant<semantics::exact>{.rounding = sr, .seed = 4, .random_bits = 32},
                                 len, [&](const auto& op, std::vector<double>& y) { op(x2, 0.25, 0.0, 12.0, y); });
      simd_equals_scalar<double>(lowbit::int_quant<>{.rounding = sr, .seed = 4, .random_bits = 9}, len,
                                 [&](const auto& op, std::vector<double>& y) { op(x2, 0.25, 0.0, 12.0, y); });
      simd_equals_scalar<float>(lowbit::trunc<>{.rounding = sr, .seed = 5}, len, [&](const auto& op, std::vector<float>& y) {
        op(x, 0.25f, 0.0f, 8.0f, 1.0f, 4.0f, y);
      });
      simd_equals_scalar<float>(lowbit::trunc<semantics::exact>{.rounding = sr, .seed = 5}, len,
                                [&](const auto& op, std::vector<float>& y) { op(x, 0.25f, 0.0f, 8.0f, 1.0f, 4.0f, y); });
      simd_equals_scalar<float>(lowbit::trunc_v1<>{.rounding = sr, .seed = 6, .random_bits = 1}, len,
                                [&](const auto& op, std::vector<float>& y) { op(x, 0.25f, 0.0f, 8.0f, 3.0f, y); });
      for (float e : {4.0f, 5.0f, 2.0f}) {
        const float m = e == 4.0f ? 3.0f : e == 5.0f ? 2.0f : 1.0f;
        const float b = e == 4.0f ? 7.0f : e == 5.0f ? 15.0f : 1.0f;
        simd_equals_scalar<float>(lowbit::float_quant<>{.rounding = sr, .seed = 8}, len,
                                  [&](const auto& op, std::vector<float>& y) { op(x, 0.05f, e, m, b, 1e30f, y); });
        simd_equals_scalar<float>(lowbit::float_quant<semantics::exact>{.rounding = sr, .seed = 8}, len,
                                  [&](const auto& op, std::vector<float>& y) { op(x, 0.05f, e, m, b, 1e30f, y); });
      }
      simd_equals_scalar<float>(lowbit::mx_quant<>{.format = lowbit::mx_element::fp4_e2m1, .block_size = 8,
                                                   .rounding = sr, .seed = 9},
                                len, [&](const auto& op, std::vector<float>& y) { op(x, y); });
      simd_equals_scalar<float>(lowbit::mx_quant<semantics::exact>{.format = lowbit::mx_element::fp8_e4m3,
                                                                   .rounding = sr, .seed = 9},
                                len, [&](const auto& op, std::vector<float>& y) { op(x, y); });
    }
  }
}

TEST_CASE("stochastic rounding: the same bits with SIMD and scalar across the kernels' blocks of 512 indices",
          "[stochastic]") {
  // The SIMD kernels take float thresholds from a cache of 512 consecutive
  // flat indices (from a multiple of 512); batches that start off a
  // multiple of 16 cross the blocks' ends, and the index wraps at 2^64.
  const std::vector<float> x = lowbit_test::mixed_values<float>(1700, 13);
  const std::uint64_t wrap = ~std::uint64_t(0) - 700;
  for (std::uint64_t offset : {std::uint64_t(0), std::uint64_t(3), std::uint64_t(509), std::uint64_t(1023), wrap}) {
    for (int r : {5, 16, 23}) {
      CAPTURE(offset, r);
      simd_equals_scalar<float>(lowbit::int_quant<>{.rounding = sr, .seed = 31, .random_bits = r, .index_offset = offset},
                                x.size(), [&](const auto& op, std::vector<float>& y) { op(x, 0.3f, 0.0f, 8.0f, y); });
      simd_equals_scalar<float>(
          lowbit::float_quant<semantics::exact>{.rounding = sr, .seed = 32, .random_bits = r, .index_offset = offset},
          x.size(), [&](const auto& op, std::vector<float>& y) { op(x, 0.05f, 4.0f, 3.0f, 7.0f, 448.0f, y); });
    }
  }
}

TEST_CASE("stochastic rounding: the same bits with SIMD and scalar in the row loop's whole groups", "[stochastic]") {
  // Batches at aligned flat indices take their thresholds a group of the
  // draw mapping at a time (stochastic_source::for_batches; with AVX-512
  // the next group's Philox rounds run between the current group's
  // batches): groups of 256, 128 and 64 (r = 4 and 8, 12 and 16, 17 and
  // 23), runs that start and end inside a group, rows shorter than a group
  // (a group serves several rows), rows of several groups, rows that end
  // inside a batch (the row loop's last batch of a row overlaps the one
  // before: its lanes' indices are their elements'), and indices that
  // wrap at 2^64 (the group after the last is group 0).
  const std::vector<float> x = lowbit_test::mixed_values<float>(4096 + 64, 17);
  const std::uint64_t top = ~std::uint64_t(0) - 1023;  // 2^64 - 1024: a multiple of 256
  for (int r : {4, 8, 12, 16, 17, 23}) {
    for (std::uint64_t offset : {std::uint64_t(0), std::uint64_t(16), std::uint64_t(48), std::uint64_t(208), top,
                                 top + 1024 - 80}) {
      for (std::size_t cols : {std::size_t(16), std::size_t(17), std::size_t(41), std::size_t(48), std::size_t(256),
                               std::size_t(272), std::size_t(4096)}) {
        const std::size_t rows = cols == 4096 ? 1 : 4096 / cols, n = rows * cols;
        CAPTURE(r, offset, cols);
        const strided_view<const float> xv(x.data() + 3, {rows, cols});
        std::vector<float> sc(rows);
        for (std::size_t i = 0; i < rows; ++i) sc[i] = 0.05f * (1.0f + 0.125f * static_cast<float>(i % 5));
        const strided_view<const float> sv(sc.data(), {rows, 1});
        const auto view = [&](std::vector<float>& y) { return strided_view<float>(y.data(), {rows, cols}); };
        simd_equals_scalar<float>(lowbit::int_quant<>{.rounding = sr, .seed = 77, .random_bits = r, .index_offset = offset},
                                  n, [&](const auto& op, std::vector<float>& y) { op(xv, sv, 0.0f, 8.0f, view(y)); });
        simd_equals_scalar<float>(
            lowbit::trunc<semantics::exact>{.rounding = sr, .seed = 78, .random_bits = r, .index_offset = offset}, n,
            [&](const auto& op, std::vector<float>& y) { op(xv, 0.25f, 0.0f, 8.0f, 1.0f, 4.0f, view(y)); });
        simd_equals_scalar<float>(
            lowbit::float_quant<semantics::exact>{.rounding = sr, .seed = 79, .random_bits = r, .index_offset = offset},
            n, [&](const auto& op, std::vector<float>& y) { op(xv, sv, 4.0f, 3.0f, 7.0f, 448.0f, view(y)); });
        simd_equals_scalar<float>(lowbit::float_quant<>{.rounding = sr, .seed = 80, .random_bits = r, .index_offset = offset},
                                  n, [&](const auto& op, std::vector<float>& y) { op(xv, 0.05f, 5.0f, 2.0f, 15.0f, 57344.0f, view(y)); });
      }
    }
  }
}

TEST_CASE("stochastic rounding: the same bits with one thread and two, per tensor and per channel", "[stochastic]") {
  const std::size_t rows = 64, cols = 4099, n = rows * cols;
  const std::vector<float> x = uniform_values<float>(n, 21, -20.0f, 20.0f);
  std::vector<float> scale(rows);
  for (std::size_t r = 0; r < rows; ++r) scale[r] = 0.01f + 0.003f * float(r);
  lowbit::execution two;
  two.threads = 2;
  two.min_elements_per_thread = 1000;
  auto both = [&](auto op, const auto& call) {
    std::vector<float> a(n, -1.0f), b(n, -2.0f);
    op.exec = {};
    call(op, a);
    op.exec = two;
    call(op, b);
    require_same_bits(a, b);
  };
  const strided_view<const float> xv(x.data(), {rows, cols});
  const strided_view<const float> sv(scale.data(), {rows, 1});
  both(lowbit::int_quant<>{.rounding = sr, .seed = 77}, [&](const auto& op, std::vector<float>& y) {
    op(x, 0.03f, 0.0f, 8.0f, y);
  });
  both(lowbit::int_quant<>{.rounding = sr, .seed = 77}, [&](const auto& op, std::vector<float>& y) {
    op(xv, sv, 0.0f, 4.0f, strided_view<float>(y.data(), {rows, cols}));
  });
  both(lowbit::float_quant<semantics::exact>{.rounding = sr, .seed = 78}, [&](const auto& op, std::vector<float>& y) {
    op(xv, sv, 4.0f, 3.0f, 7.0f, 448.0f, strided_view<float>(y.data(), {rows, cols}));
  });
  both(lowbit::trunc<>{.rounding = sr, .seed = 79}, [&](const auto& op, std::vector<float>& y) {
    op(x, 0.03f, 0.0f, 16.0f, 0.12f, 8.0f, y);
  });
  both(lowbit::mx_quant<>{.rounding = sr, .seed = 80}, [&](const auto& op, std::vector<float>& y) { op(x, y); });
  both(lowbit::mx_quant<>{.axis = 0, .rounding = sr, .seed = 80}, [&](const auto& op, std::vector<float>& y) {
    op(xv, strided_view<float>(y.data(), {rows, cols}));
  });
}

TEST_CASE("stochastic rounding: a tensor quantized in pieces gets the draws of one call (index_offset)", "[stochastic]") {
  const std::size_t rows = 40, cols = 37, n = rows * cols;
  const std::vector<float> x = uniform_values<float>(n, 31, -9.0f, 9.0f);
  std::vector<float> whole(n), parts(n, -1.0f);
  lowbit::int_quant<> q{.rounding = sr, .seed = 0xfeedull, .random_bits = 11};
  q(x, 0.125f, 0.0f, 6.0f, whole);
  // Row blocks of 7, 1, 13 and the rest, each a call of its own with the
  // flat index of its first element.
  std::size_t r0 = 0;
  for (std::size_t h : {std::size_t(7), std::size_t(1), std::size_t(13), rows - 21}) {
    lowbit::int_quant<> p = q;
    p.index_offset = r0 * cols;
    p(strided_view<const float>(x.data() + r0 * cols, {h, cols}), 0.125f, 0.0f, 6.0f,
      strided_view<float>(parts.data() + r0 * cols, {h, cols}));
    r0 += h;
  }
  require_same_bits(parts, whole);
  // Without the offset the pieces repeat the first piece's draws: different bits.
  lowbit::int_quant<> p = q;
  std::vector<float> second(7 * cols);
  p(strided_view<const float>(x.data() + 7 * cols, {7, cols}), 0.125f, 0.0f, 6.0f, strided_view<float>(second.data(), {7, cols}));
  CHECK(!std::equal(second.begin(), second.end(), whole.begin() + 7 * cols));
  // A seed of any value is valid, and another seed gives other draws.
  for (std::uint64_t seed : {std::uint64_t(0), std::uint64_t(1), ~std::uint64_t(0)}) {
    lowbit::int_quant<> s = q;
    s.seed = seed;
    std::vector<float> y(n);
    s(x, 0.125f, 0.0f, 6.0f, y);
    if (seed != q.seed) CHECK(y != whole);
  }
}

TEST_CASE("stochastic rounding: group-wise equals IntQuant with expanded parameters, codes match", "[stochastic]") {
  const std::size_t rows = 6, cols = 64, g = 16, n = rows * cols;
  const std::vector<float> x = uniform_values<float>(n, 41, -3.0f, 3.0f);
  std::vector<float> gs(rows * cols / g), full(n);
  for (std::size_t i = 0; i < gs.size(); ++i) gs[i] = 0.05f + 0.01f * float(i % 7);
  for (std::size_t i = 0; i < n; ++i) full[i] = gs[(i / cols) * (cols / g) + (i % cols) / g];
  lowbit::group_int_quant<> gq{.rounding = sr, .group_size = g, .seed = 5};
  lowbit::int_quant<> iq{.rounding = sr, .seed = 5};
  std::vector<float> a(n), b(n);
  const std::vector<float> gz(gs.size(), 0.0f);
  gq(strided_view<const float>(x.data(), {rows, cols}), strided_view<const float>(gs.data(), {rows, cols / g}),
     strided_view<const float>(gz.data(), {rows, cols / g}), 4.0f, strided_view<float>(a.data(), {rows, cols}));
  iq(x, full, 0.0f, 4.0f, b);
  require_same_bits(a, b);
  // Codes: dequantize(quantize_codes(x)) is the fake-quantized output, but
  // that an integer code has no -0 (docs/codes.md): the draws are the same.
  std::vector<std::int8_t> c(n);
  std::vector<float> back(n);
  lowbit::quantize_codes(iq, x, full, 0.0f, 4.0f, c);
  lowbit::dequantize(iq, c, full, 0.0f, 4.0f, back);
  for (std::size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    if (b[i] == 0.0f)
      REQUIRE(back[i] == 0.0f);
    else
      REQUIRE(bits(back[i]) == bits(b[i]));
  }
  // MX codes likewise.
  lowbit::mx_quant<> mx{.format = lowbit::mx_element::fp6_e2m3, .rounding = sr, .seed = 6};
  std::vector<float> y(n), y2(n);
  std::vector<std::uint8_t> mc(n), ms(n / 32);
  mx(x, y);
  lowbit::quantize_codes(mx, x, mc, ms);
  lowbit::dequantize(mx, mc, ms, y2);
  require_same_bits(y2, y);
}

TEST_CASE("stochastic rounding: names, and random_bits out of range is an error with nothing written", "[stochastic][errors]") {
  using lowbit_test::contains_substring;
  lowbit::int_quant<> q;
  lowbit::set_attribute(q, "rounding_mode", "Stochastic");
  lowbit::set_attribute(q, "seed", std::uint64_t(18446744073709551615ull));
  lowbit::set_attribute(q, "random_bits", "8");
  CHECK(q.rounding == sr);
  CHECK(q.seed == ~std::uint64_t(0));
  CHECK(q.random_bits == 8);
  CHECK_THROWS_WITH(lowbit::set_attribute(q, "seed", "-1"), contains_substring("seed"));
  lowbit::mx_quant<> mx;
  lowbit::set_attribute(mx, "rounding", "dither");
  CHECK(mx.rounding == sr);
  CHECK_THROWS_WITH(lowbit::round_integral(0.5f, sr), contains_substring("STOCHASTIC needs a seed"));

  std::vector<float> x{0.3f, 1.7f}, y{-5.0f, -5.0f};
  std::vector<double> xd{0.3, 1.7}, yd{-5.0, -5.0};
  for (int r : {0, -1, 24, 1000}) {
    CAPTURE(r);
    lowbit::int_quant<> a{.rounding = sr, .random_bits = r};
    CHECK_THROWS_WITH(a(x, 1.0f, 0.0f, 8.0f, y),
                      contains_substring("lowbit::int_quant: random_bits = " + std::to_string(r) +
                                         " is out of range; expected an integer from 1 to 23 for float"));
    lowbit::trunc<> t{.rounding = sr, .random_bits = r};
    CHECK_THROWS_WITH(t(x, 1.0f, 0.0f, 8.0f, 1.0f, 4.0f, y), contains_substring("random_bits"));
    lowbit::float_quant<> f{.rounding = sr, .random_bits = r};
    CHECK_THROWS_WITH(f(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y), contains_substring("random_bits"));
    lowbit::mx_quant<> m{.rounding = sr, .random_bits = r};
    CHECK_THROWS_WITH(m(x, y), contains_substring("random_bits"));
    CHECK(y[0] == -5.0f);
    CHECK(y[1] == -5.0f);
  }
  // double: up to 32 bits.
  lowbit::int_quant<> d{.rounding = sr, .random_bits = 33};
  CHECK_THROWS_WITH(d(xd, 1.0, 0.0, 8.0, yd), contains_substring("expected an integer from 1 to 32 for double"));
  CHECK(yd[0] == -5.0);
  d.random_bits = 32;
  d(xd, 1.0, 0.0, 8.0, yd);
  CHECK((yd[0] == 0.0 || yd[0] == 1.0));
  // Other modes ignore random_bits.
  lowbit::int_quant<> h{.rounding = rounding_mode::half_even, .random_bits = 0};
  h(x, 1.0f, 0.0f, 8.0f, y);
  CHECK(y[1] == 2.0f);
}

TEST_CASE("lowbit::round_stochastic and stochastic_draw give what the operators give", "[stochastic]") {
  const std::size_t n = 1000;
  const std::vector<float> x = uniform_values<float>(n, 51, -50.0f, 50.0f);
  const std::vector<double> xd = uniform_values<double>(n, 52, -50.0, 50.0);
  std::vector<float> y(n);
  std::vector<double> yd(n);
  lowbit::int_quant<semantics::exact> q{.rounding = sr, .seed = 99, .random_bits = 12, .index_offset = 5};
  q(x, 1.0f, 0.0f, 16.0f, y);
  lowbit::int_quant<semantics::exact> qd{.rounding = sr, .seed = 99, .random_bits = 30};
  qd(xd, 1.0, 0.0, 16.0, yd);
  for (std::size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    REQUIRE(bits(y[i]) == bits(lowbit::round_stochastic(x[i], 99, 12, i + 5)));
    REQUIRE(bits(yd[i]) == bits(lowbit::round_stochastic(xd[i], 99, 30, i)));
    // The draw decides: away from zero exactly when frac(|x|) >= (d + 1) 2^-12.
    const float a = std::fabs(x[i]), f = a - std::trunc(a);
    const std::uint32_t d = lowbit::stochastic_draw(99, 12, i + 5);
    REQUIRE(d < 4096u);
    REQUIRE((std::fabs(y[i]) == std::trunc(a) + 1) == (f >= float(d + 1) / 4096.0f));
  }
  CHECK_THROWS_WITH(lowbit::stochastic_draw(1, 0, 0), lowbit_test::contains_substring("random_bits = 0"));
  CHECK_THROWS_WITH(lowbit::stochastic_draw(1, 33, 0), lowbit_test::contains_substring("from 1 to 32"));
  CHECK_THROWS_WITH(lowbit::round_stochastic(1.5f, 1, 24, 0), lowbit_test::contains_substring("from 1 to 23"));
  CHECK(lowbit::stochastic_draw(1, 32, 0) == lowbit::stochastic_draw(1, 32, 0));
}
