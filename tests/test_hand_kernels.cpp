// SPDX-License-Identifier: Apache-2.0
// bench/hand_kernels.hpp: the hand-written baselines of lowbit-bench compute
// lowbit's bits (exact semantics), on the benchmarks' inputs and beyond.
#include "../bench/hand_kernels.hpp"

#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "support/catch.hpp"
#include "support/test_util.hpp"

namespace {

/// The benchmarks' inputs (x ~ U(-8, 8)) and, past them, values around
/// every scale's grid: zeros, ties, subnormals, the saturation bound.
std::vector<float> inputs(std::size_t n, float s) {
  std::vector<float> x(n);
  std::mt19937 rng(20240601u);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (float& v : x) v = dist(rng);
  const float extra[] = {0.0f, -0.0f, 0.5f * s, -0.5f * s, 1.5f * s, -2.5f * s, 127.5f * s, -128.5f * s,
                         1000.0f * s, -1000.0f * s, 448.0f * s, 464.0f * s, -464.1f * s, 0x1p-7f * s,
                         0x1.8p-9f * s, 0x1p-10f * s, std::numeric_limits<float>::denorm_min()};
  for (std::size_t i = 0; i < sizeof extra / sizeof extra[0] && i < n; ++i) x[n - 1 - i] = extra[i];
  return x;
}

/// The number of elements whose bits differ between a and b (same size).
std::size_t differing_bits(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < a.size(); ++i) bad += lowbit_test::bits(a[i]) != lowbit_test::bits(b[i]);
  return bad;
}

/// Runs `hand(x, y, n, s)` and `lib(x, s, y)` on inputs(n, s) for sizes
/// with and without a tail, below one batch and the benchmarks', and the
/// scales `ss`; every result must have the same bits.
template <class Hand, class Lib>
void check_same_bits(std::initializer_list<float> ss, const Hand& hand, const Lib& lib) {
  for (std::size_t n : {std::size_t(1), std::size_t(37), std::size_t(1000), std::size_t(4096)}) {
    for (float s : ss) {
      CAPTURE(n, s);
      const std::vector<float> x = inputs(n, s);
      std::vector<float> h(n), l(n);
      hand(x.data(), h.data(), n, s);
      lib(x, s, l);
      CHECK(differing_bits(h, l) == 0);
    }
  }
}

}  // namespace

TEST_CASE("hand_int_quant computes exact IntQuant ROUND's bits", "[hand_kernels]") {
  const lowbit::int_quant<lowbit::semantics::exact> q{.is_signed = true, .narrow = false};
  check_same_bits(
      {0.05f, 0.25f, 3.0f},
      [](const float* x, float* y, std::size_t n, float s) { lowbit_bench::hand_int_quant(x, y, n, s, 0.0f, -128.0f, 127.0f); },
      [&](const std::vector<float>& x, float s, std::vector<float>& y) { q(x, s, 0.0f, 8.0f, y); });
}

TEST_CASE("hand_trunc computes Trunc ROUND's bits in both semantics", "[hand_kernels]") {
  // The benchmark's Trunc: int8 on scale s to 4 bits on out_scale 4 s (t = 4),
  // and out_scale s / 2 (t = 1/2: y * 2, so that the clamp acts on more inputs).
  const lowbit::trunc<lowbit::semantics::reference> r{.is_signed = true, .narrow = false,
                                                      .rounding = lowbit::rounding_mode::half_even};
  const lowbit::trunc<lowbit::semantics::exact> e{.is_signed = true, .narrow = false,
                                                  .rounding = lowbit::rounding_mode::half_even};
  for (float k : {4.0f, 0.5f}) {
    CAPTURE(k);
    auto hand = [k](const float* x, float* y, std::size_t n, float s) {
      lowbit_bench::hand_trunc(x, y, n, s, 0.0f, k, k * s, -8.0f, 7.0f);
    };
    check_same_bits({0.05f, 0.25f, 3.0f}, hand, [&](const std::vector<float>& x, float s, std::vector<float>& y) {
      r(x, s, 0.0f, 8.0f, k * s, 4.0f, y);
    });
    check_same_bits({0.05f, 0.25f, 3.0f}, hand, [&](const std::vector<float>& x, float s, std::vector<float>& y) {
      e(x, s, 0.0f, 8.0f, k * s, 4.0f, y);
    });
  }
  // A nonzero zero point, which Trunc subtracts as z / t.
  check_same_bits(
      {0.05f, 0.25f},
      [](const float* x, float* y, std::size_t n, float s) {
        lowbit_bench::hand_trunc(x, y, n, s, 3.0f, 4.0f, 4.0f * s, -8.0f, 7.0f);
      },
      [&](const std::vector<float>& x, float s, std::vector<float>& y) { r(x, s, 3.0f, 8.0f, 4.0f * s, 4.0f, y); });
}

TEST_CASE("hand_int_quant and hand_trunc in UP, HALF_UP and HALF_DOWN compute reference IntQuant's and Trunc's bits",
          "[hand_kernels]") {
  using rm = lowbit::rounding_mode;
  auto one = [](auto mc) {
    constexpr rm M = decltype(mc)::value;
    CAPTURE(lowbit::to_string(M));
    const lowbit::int_quant<lowbit::semantics::reference> q{.is_signed = true, .narrow = false, .rounding = M};
    check_same_bits(
        {0.05f, 0.25f, 3.0f},
        [](const float* x, float* y, std::size_t n, float s) {
          lowbit_bench::hand_int_quant<lowbit::semantics::reference, M>(x, y, n, s, 0.0f, -128.0f, 127.0f);
        },
        [&](const std::vector<float>& x, float s, std::vector<float>& y) { q(x, s, 0.0f, 8.0f, y); });
    const lowbit::trunc<lowbit::semantics::reference> t{.is_signed = true, .narrow = false, .rounding = M};
    for (float k : {4.0f, 0.5f}) {
      CAPTURE(k);
      check_same_bits(
          {0.05f, 0.25f, 3.0f},
          [k](const float* x, float* y, std::size_t n, float s) {
            lowbit_bench::hand_trunc<lowbit::semantics::reference, M>(x, y, n, s, 0.0f, k, k * s, -8.0f, 7.0f);
          },
          [&](const std::vector<float>& x, float s, std::vector<float>& y) { t(x, s, 0.0f, 8.0f, k * s, 4.0f, y); });
    }
  };
  one(std::integral_constant<rm, rm::up>{});
  one(std::integral_constant<rm, rm::half_up>{});
  one(std::integral_constant<rm, rm::half_down>{});
}

TEST_CASE("hand_bipolar_quant computes reference BipolarQuant's bits", "[hand_kernels]") {
  const lowbit::bipolar_quant<lowbit::semantics::reference> q;
  check_same_bits(
      {0.05f, 3.0f, std::numeric_limits<float>::denorm_min()},
      [](const float* x, float* y, std::size_t n, float s) { lowbit_bench::hand_bipolar_quant(x, y, n, s); },
      [&](const std::vector<float>& x, float s, std::vector<float>& y) { q(x, s, y); });
  // NaN and infinities, which the benchmark's inputs do not have: NaN gives -s.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x{nan, -nan, inf, -inf, 0.0f, -0.0f, 1e-45f, -1e-45f};
  std::vector<float> h(x.size()), l(x.size());
  lowbit_bench::hand_bipolar_quant(x.data(), h.data(), x.size(), 0.5f);
  q(x, 0.5f, l);
  CHECK(differing_bits(h, l) == 0);
  CHECK(lowbit_test::bits(h[0]) == lowbit_test::bits(-0.5f));
  CHECK(lowbit_test::bits(h[5]) == lowbit_test::bits(0.5f));
}

TEST_CASE("hand_fp8_e4m3 computes exact FP8 E4M3FN ROUND's bits", "[hand_kernels]") {
  const lowbit::minifloat_quant<lowbit::semantics::exact> q{.format = lowbit::formats::fp8_e4m3fn};
  check_same_bits(
      {1.0f, 0.05f, 0.001f}, [](const float* x, float* y, std::size_t n, float s) { lowbit_bench::hand_fp8_e4m3(x, y, n, s); },
      [&](const std::vector<float>& x, float s, std::vector<float>& y) { q(x, s, y); });
}

TEST_CASE("hand_fp8_e4m3_rows computes exact per-channel FP8 E4M3FN ROUND's bits", "[hand_kernels]") {
  // The benchmarks' channel pattern (64 rows, scales 0.05 .. 0.0815) and
  // rows shorter than a batch, with a tail, and long.
  const lowbit::minifloat_quant<lowbit::semantics::exact> q{.format = lowbit::formats::fp8_e4m3fn};
  const std::size_t rows = 64;
  std::vector<float> s(rows);
  for (std::size_t r = 0; r < rows; ++r) s[r] = 0.05f * (1.0f + 0.01f * static_cast<float>(r));
  for (std::size_t cols : {std::size_t(1), std::size_t(37), std::size_t(64), std::size_t(1024)}) {
    CAPTURE(cols);
    const std::vector<float> x = inputs(rows * cols, 0.05f);
    std::vector<float> h(x.size()), l(x.size());
    lowbit_bench::hand_fp8_e4m3_rows(x.data(), h.data(), rows, cols, s.data());
    q(lowbit::strided_view<const float>(x.data(), {rows, cols}), lowbit::strided_view<const float>(s.data(), {rows, 1}),
      lowbit::strided_view<float>(l.data(), {rows, cols}));
    CHECK(differing_bits(h, l) == 0);
  }
}
