// SPDX-License-Identifier: Apache-2.0
// lowbit::nvfp4_quant (include/lowbit/nvfp4.hpp): NVFP4 two-level block
// scaling. Hand-computed blocks (ties, zeros, all-equal blocks, outliers,
// NaN and inf), then two oracles written from the definition in
// docs/semantics.md, not from the kernels: the reference one repeats
// torchao's float32 steps, rounding to E4M3 and E2M1 by searching the
// format's values; the exact one rounds in long double the same way.
#include "support/catch.hpp"
#include "support/test_util.hpp"

#include <lowbit/lowbit.hpp>
#include <lowbit/nvfp4.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using lowbit::nvfp4_quant;
using lowbit::semantics;
using lowbit_test::bits;
using lowbit_test::show;

const float qnan = std::numeric_limits<float>::quiet_NaN();
constexpr float inf = std::numeric_limits<float>::infinity();

template <semantics S = semantics::reference>
std::vector<float> run(std::vector<float> x, std::size_t k, float p = 1.0f) {
  nvfp4_quant<S> q;
  q.block_size = k;
  std::vector<float> y(x.size(), 7.0f);
  q(x, p, y);
  return y;
}

bool same(float a, float b) { return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b)); }

// Every non-negative value of a format, ascending, with its code (ties go
// to the even code).
std::vector<long double> e2m1_values() { return {0, 0.5L, 1, 1.5L, 2, 3, 4, 6}; }
std::vector<long double> e4m3_values() {
  std::vector<long double> v;
  for (int c = 0; c < 127; ++c) {
    const int ef = c >> 3, mf = c & 7;
    v.push_back(ef == 0 ? std::ldexp(static_cast<long double>(mf), -9)
                        : std::ldexp(static_cast<long double>(8 + mf), ef - 10));
  }
  return v;
}
/// a >= 0 rounded to the nearest of `vals` (ascending), ties to the even index.
long double nearest(long double a, const std::vector<long double>& vals) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < vals.size(); ++i) {
    const long double d = std::fabs(a - vals[i]), db = std::fabs(a - vals[best]);
    if (d < db || (d == db && i % 2 == 0)) best = i;
  }
  return vals[best];
}

/// The oracle over a row-major [rows, cols] tensor, blocks of k along the last axis.
std::vector<float> oracle(const std::vector<float>& x, std::size_t rows, std::size_t cols, std::size_t k, float p,
                          bool reference) {
  static const std::vector<long double> e2m1 = e2m1_values(), e4m3 = e4m3_values();
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c0 = 0; c0 < cols; c0 += k) {
      const std::size_t c1 = std::min(cols, c0 + k);
      float amax = 0.0f;
      bool has_nan = false, has_inf = false;
      for (std::size_t c = c0; c < c1; ++c) {
        const float v = x[r * cols + c];
        has_nan |= std::isnan(v);
        has_inf |= std::isinf(v);
        if (!std::isnan(v)) amax = std::max(amax, std::fabs(v));
      }
      for (std::size_t c = c0; c < c1; ++c) {
        const float v = x[r * cols + c];
        float out;
        if (reference) {
          if (has_nan) {
            out = qnan;
          } else {
            float bs = amax / 6.0f;
            bs = bs / p;
            bs = std::min(std::max(bs, 0x1p-6f), 448.0f);
            const float s8 = static_cast<float>(nearest(bs, e4m3));
            const float total = p * s8;
            float a = v / total;
            a = std::min(std::max(a, -6.0f), 6.0f);
            const float q = std::copysign(static_cast<float>(nearest(std::fabs(a), e2m1)), a);
            out = q * total;
          }
        } else {
          if (has_nan || has_inf) {
            out = qnan;
          } else {
            long double bs = static_cast<long double>(amax) / (6.0L * p);
            bs = std::min(std::max(bs, 0x1p-6L), 448.0L);
            const long double s8 = nearest(bs, e4m3);
            long double a = static_cast<long double>(v) / (static_cast<long double>(p) * s8);
            a = std::min(std::max(a, -6.0L), 6.0L);
            const long double q = std::copysign(nearest(std::fabs(a), e2m1), a);
            out = static_cast<float>(q * p * s8);
          }
        }
        y[r * cols + c] = out;
      }
    }
  return y;
}

std::vector<float> test_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) {
    const unsigned kind = rng() % 8;
    const float sign = (rng() & 1) ? -1.0f : 1.0f;
    const int e = static_cast<int>(rng() % 24) - 12;
    if (kind == 0)
      x = 0.0f;
    else if (kind == 1)  // values on or next to E2M1 grid midpoints times a block scale
      x = std::nextafter(std::ldexp(static_cast<float>(1 + rng() % 13) * 0.25f, e),
                         (rng() & 1) ? 1e30f : -1e30f);
    else if (kind == 2)
      x = std::ldexp(static_cast<float>(1 + rng() % 13) * 0.25f, e);
    else
      x = std::ldexp(static_cast<float>(rng() % (1u << 24)) / 16777216.0f, e);
    x *= sign;
  }
  return v;
}

}  // namespace

TEST_CASE("nvfp4: hand-computed blocks", "[nvfp4]") {
  // amax 12: s8 = 12 / 6 = 2; x / 2 = {0.05, -0.5, 1.25, 6}: 1.25 is a tie -> 1 (even).
  {
    const auto y = run({0.1f, -1.0f, 2.5f, 12.0f}, 4);
    CHECK(bits(y[0]) == bits(0.0f));
    CHECK(bits(y[1]) == bits(-1.0f));
    CHECK(bits(y[2]) == bits(2.0f));
    CHECK(bits(y[3]) == bits(12.0f));
  }
  // Ties with s8 = 1 (amax 6): 0.25 -> 0, 0.75 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4, -5 -> -4.
  {
    const auto y = run({6.0f, 0.25f, 0.75f, 1.75f, 2.5f, 3.5f, 5.0f, -5.0f}, 8);
    const float want[] = {6.0f, 0.0f, 1.0f, 2.0f, 2.0f, 4.0f, 4.0f, -4.0f};
    for (int i = 0; i < 8; ++i) CHECK(bits(y[i]) == bits(want[i]));
  }
  // Zeros: an all-zero block keeps its signs (scale clamped up to 2^-6).
  {
    const auto y = run({-0.0f, 0.0f, -0.0f, 0.0f}, 4);
    CHECK(bits(y[0]) == bits(-0.0f));
    CHECK(bits(y[1]) == bits(0.0f));
  }
  // A negative value that rounds to 0 gives -0.
  CHECK(bits(run({6.0f, -0.2f}, 2)[1]) == bits(-0.0f));
  // All equal: 3 -> s8 = 0.5, 3 / 0.5 = 6, y = 3.
  for (float v : run({3.0f, 3.0f, 3.0f, 3.0f}, 4)) CHECK(v == 3.0f);
  // The scale's own rounding: amax 7 -> 7 / 6 = 1.1667 -> E4M3 1.125; 7 / 1.125 = 6.2 -> 6; y = 6.75.
  CHECK(run({7.0f}, 1)[0] == 6.75f);
  // An outlier: amax 1000 -> 166.67 -> E4M3 160; 1000 / 160 = 6.25 -> 6 (clamped): 960; the rest 0.
  {
    const auto y = run({1000.0f, 1.0f, 2.0f, 3.0f}, 4);
    CHECK(y[0] == 960.0f);
    CHECK(y[1] == 0.0f);
    CHECK(y[3] == 0.0f);
  }
  // Beyond E4M3's range: amax 1e4 -> 1666 -> clamped to 448; 1e4 / 448 -> 6: y = 2688.
  CHECK(run({1e4f}, 1)[0] == 2688.0f);
  // Below it: amax 0.01 -> 0.00167 -> clamped to 2^-6; 0.64 -> 0.5: y = 2^-7.
  CHECK(run({0.01f}, 1)[0] == 0x1p-7f);
  // Two-level, p = 0.01: amax 3 -> 0.5 / 0.01 = 50 -> E4M3 48 (a tie, to even); total = fl(0.01 * 48).
  {
    const float total = 0.01f * 48.0f;
    const auto y = run({1.0f, 2.0f, 3.0f}, 3, 0.01f);
    CHECK(bits(y[0]) == bits(2.0f * total));  // 1 / 0.48 = 2.08 -> 2
    CHECK(bits(y[1]) == bits(4.0f * total));  // 4.17 -> 4
    CHECK(bits(y[2]) == bits(6.0f * total));  // 6.25 -> 6
  }
  // NaN poisons its block in both semantics; inf is clamped in the reference
  // (torchao: the scale saturates at 448) and poisons its block in exact.
  {
    const auto r = run({qnan, 1.0f, 2.0f, 3.0f}, 2);
    CHECK((std::isnan(r[0]) && std::isnan(r[1])));
    CHECK(r[2] == 2.0f);
    const auto ri = run({inf, 1.0f}, 2);
    CHECK(ri[0] == 2688.0f);
    CHECK(ri[1] == 0.0f);
    const auto e = run<semantics::exact>({inf, 1.0f, 2.0f, 3.0f}, 2);
    CHECK((std::isnan(e[0]) && std::isnan(e[1])));
    CHECK(e[2] == 2.0f);
  }
  // p = 1 is single-level scaling.
  {
    const std::vector<float> x{0.3f, -1.7f, 5.0f, 0.001f};
    nvfp4_quant<> q;
    std::vector<float> a(4), b(4);
    q(x, a);
    q(x, 1.0f, b);
    for (int i = 0; i < 4; ++i) CHECK(bits(a[i]) == bits(b[i]));
  }
}

TEST_CASE("nvfp4: both semantics equal their oracles", "[nvfp4]") {
  std::uint32_t seed = 1;
  for (float p : {1.0f, 0.01f, 0.37f, 3.1e-4f, 1e3f})
    for (std::size_t k : {1u, 5u, 16u, 40u}) {
      const std::size_t rows = 6, cols = 50;
      const std::vector<float> x = test_values(rows * cols, seed++);
      const lowbit::shape sh{rows, cols};
      for (int exact = 0; exact < 2; ++exact) {
        const std::vector<float> want = oracle(x, rows, cols, k, p, exact == 0);
        for (int path = 0; path < 3; ++path) {
          const lowbit::detail::simd_scope scope(path != 1);
          std::vector<float> y(x.size(), 7.0f);
          auto go = [&](auto q) {
            q.block_size = k;
            if (path == 2) {
              q.exec.threads = 2;
              q.exec.min_elements_per_thread = 1;
            }
            q(lowbit::strided_view<const float>(x.data(), sh), p, lowbit::strided_view<float>(y.data(), sh));
          };
          if (exact)
            go(nvfp4_quant<semantics::exact>{});
          else
            go(nvfp4_quant<>{});
          for (std::size_t i = 0; i < x.size(); ++i)
            if (!same(y[i], want[i])) {
              FAIL_CHECK("exact " << exact << " path " << path << " p " << p << " k " << k << " [" << i << "] x "
                                  << show(x[i]) << " got " << show(y[i]) << " want " << show(want[i]));
              break;
            }
        }
      }
    }
}

TEST_CASE("nvfp4: E2M1 ties under every E4M3 block scale, and subnormal totals, on every path", "[nvfp4]") {
  // Blocks of two: 6 * s8 (which makes the block scale s8, p = 1) and a
  // probe t * s8 on a tie t of E2M1 or a float next to it. x / total must
  // be the IEEE quotient: AArch64's xsimd division (a refined reciprocal)
  // is off by an ulp often enough to move ties. Then p = 2^-143, where
  // every total is subnormal (the division gave -inf there on AArch64).
  std::vector<float> x;
  for (int c = 8; c < 127; ++c) {  // every normal positive E4M3 value, 2^-6 to 448
    const float s8 = std::ldexp(1.0f + static_cast<float>(c & 7) / 8.0f, (c >> 3) - 7);
    for (float t : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f})
      for (float probe : {t * s8, std::nextafter(t * s8, 0.0f), std::nextafter(t * s8, 1e30f)})
        for (float sign : {1.0f, -1.0f}) {
          x.push_back(6.0f * s8);
          x.push_back(sign * probe);
        }
  }
  const lowbit::shape sh{x.size()};
  for (float p : {1.0f, 0x1p-143f, 0x1p-140f}) {
    const std::vector<float> want = oracle(x, 1, x.size(), 2, p, true);
    for (int path = 0; path < 2; ++path) {
      const lowbit::detail::simd_scope scope(path == 0);
      std::vector<float> y(x.size(), 7.0f);
      nvfp4_quant<>{.block_size = 2}(lowbit::strided_view<const float>(x.data(), sh), p,
                                     lowbit::strided_view<float>(y.data(), sh));
      std::size_t bad = 0;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!same(y[i], want[i]) && bad++ < 5)
          FAIL_CHECK("p " << p << " simd " << (path == 0) << " [" << i << "] x " << show(x[i]) << " got "
                          << show(y[i]) << " want " << show(want[i]));
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("nvfp4: a non-last axis, and in place", "[nvfp4]") {
  const std::vector<float> x = test_values(40 * 3, 99);
  // Blocks along axis 0 of [40, 3] equal blocks along the last axis of the transpose.
  std::vector<float> xt(x.size());
  for (std::size_t i = 0; i < 40; ++i)
    for (std::size_t j = 0; j < 3; ++j) xt[j * 40 + i] = x[i * 3 + j];
  nvfp4_quant<> q;
  q.axis = 0;
  std::vector<float> y(x.size()), yt(x.size());
  q(lowbit::strided_view<const float>(x.data(), {40, 3}), lowbit::strided_view<float>(y.data(), {40, 3}));
  nvfp4_quant<> qt;
  qt(lowbit::strided_view<const float>(xt.data(), {3, 40}), lowbit::strided_view<float>(yt.data(), {3, 40}));
  for (std::size_t i = 0; i < 40; ++i)
    for (std::size_t j = 0; j < 3; ++j) CHECK(bits(y[i * 3 + j]) == bits(yt[j * 40 + i]));
  std::vector<float> inplace = x;
  q(lowbit::strided_view<const float>(inplace.data(), {40, 3}), lowbit::strided_view<float>(inplace.data(), {40, 3}));
  CHECK(lowbit_test::first_bit_difference(inplace, y) == -1);
}

TEST_CASE("nvfp4: codes and E4M3 scales round-trip; the tensor scale", "[nvfp4][codes]") {
  const std::size_t rows = 4, cols = 37;
  std::vector<float> x = test_values(rows * cols, 7);
  x[5] = qnan;  // one NaN block
  const lowbit::shape sh{rows, cols};
  const auto xv = lowbit::strided_view<const float>(x.data(), sh);
  auto check_round_trip = [&](auto q, float p) {
    std::vector<float> y(x.size()), back(x.size(), 9.0f);
    q(xv, p, lowbit::strided_view<float>(y.data(), sh));
    const lowbit::shape ss = q.scales_shape(xv);
    CHECK(ss == lowbit::shape{4, 3});
    std::vector<std::uint8_t> codes(x.size()), scales(ss.count());
    lowbit::quantize_codes(q, xv, p, lowbit::strided_view<std::uint8_t>(codes.data(), sh),
                           lowbit::strided_view<std::uint8_t>(scales.data(), ss));
    for (std::uint8_t c : codes) CHECK(c <= 15);
    CHECK(scales[0] == 0x7f);  // the NaN block
    lowbit::dequantize(q, lowbit::strided_view<const std::uint8_t>(codes.data(), sh),
                       lowbit::strided_view<const std::uint8_t>(scales.data(), ss), p,
                       lowbit::strided_view<float>(back.data(), sh));
    CHECK(lowbit_test::first_bit_difference(back, y) == -1);
    // Packed two to a byte, and back.
    std::vector<std::uint8_t> packed(lowbit::packed_size(lowbit::packings::fp4_e2m1, codes.size())), un(codes.size());
    lowbit::pack(lowbit::packings::fp4_e2m1, codes, packed);
    lowbit::unpack(lowbit::packings::fp4_e2m1, packed, un);
    CHECK(un == codes);
  };
  check_round_trip(nvfp4_quant<>{}, 1.0f);
  check_round_trip(nvfp4_quant<>{}, 0.013f);
  check_round_trip(nvfp4_quant<semantics::exact>{}, 0.013f);
  // Codes of known values: amax 6 -> s8 1 (E4M3 0x38); 6 -> 0x7, -0.5 -> 0x9, 1.5 -> 0x3.
  {
    nvfp4_quant<> q;
    q.block_size = 3;
    std::vector<float> v{6.0f, -0.5f, 1.5f};
    std::vector<std::uint8_t> c(3), s(1);
    lowbit::quantize_codes(q, v, 1.0f, c, s);
    CHECK(c == std::vector<std::uint8_t>{0x7, 0x9, 0x3});
    CHECK(s[0] == 0x38);
  }
  // The per-tensor scale: amax / 2688.
  const std::vector<float> t{1.0f, -2688.0f, 3.0f};
  CHECK(lowbit::nvfp4_tensor_scale(t) == 1.0f);
  CHECK(lowbit::nvfp4_tensor_scale(std::vector<float>{0.5f, -26.88f}) == 26.88f / 2688.0f);
}

TEST_CASE("nvfp4: errors before anything is written", "[nvfp4]") {
  using lowbit_test::contains_substring;
  const std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> y(4, 9.0f);
  nvfp4_quant<> q;
  CHECK_THROWS_WITH(q(x, 0.0f, y), contains_substring("tensor_scale = 0 is invalid; expected a finite number > 0"));
  CHECK_THROWS_WITH(q(x, qnan, y), contains_substring("tensor_scale = "));
  CHECK_THROWS_WITH(q(x, -1.0f, y), contains_substring("tensor_scale = -1"));
  // reference: p must keep the float32 total p * s8 (s8 from 2^-6 to 448)
  // off 0 and inf. With p = 2^-145 every total was 0, and a zero element
  // came out as 0 / 0 = NaN, which no E2M1 code holds (found by fuzz_blocks).
  for (float p : {0x1p-145f, 0x1p-144f, 1e36f, std::numeric_limits<float>::max()})
    CHECK_THROWS_WITH(q(x, p, y), contains_substring("is invalid in the reference semantics; expected p with p * 2^-6 > "
                                                     "0 and p * 448 finite in float32"));
  CHECK(y == std::vector<float>(4, 9.0f));
  std::vector<std::uint8_t> c(4, 9), s(1, 9);
  CHECK_THROWS_WITH(lowbit::quantize_codes(q, x, 0x1p-145f, c, s), contains_substring("reference semantics"));
  CHECK(c == std::vector<std::uint8_t>(4, 9));
  // The bounds themselves are taken: 2^-143 (p * 2^-6 is the smallest
  // subnormal) and the largest p with p * 448 finite.
  q(x, 0x1p-143f, y);  // s8 clamps to 448, every x / total to 6: y = 6 * 448 * 2^-143 (subnormal, exact)
  for (float v : y) CHECK(bits(v) == bits(2688.0f * 0x1p-143f));
  q(x, 0x1.fcp-144f, y);  // p * 2^-6 = 0.99 * 2^-149 rounds up to 2^-149: taken
  const float pmax = std::nextafter(std::numeric_limits<float>::max() / 448.0f, 0.0f);
  REQUIRE(pmax * 448.0f <= std::numeric_limits<float>::max());
  q(x, pmax, y);  // every block scale clamps to 2^-6: x / total rounds to 0
  for (float v : y) CHECK(bits(v) == bits(0.0f));
  y.assign(4, 9.0f);
  // The exact semantics take any finite p > 0: 2^-145 gives the zeros of
  // values far below the block's step, as rounding once says.
  const std::vector<float> zx{0.0f, -0.0f, 1e-44f, 0.0f};
  nvfp4_quant<lowbit::semantics::exact>{}(zx, 0x1p-145f, y);
  CHECK(bits(y[0]) == bits(0.0f));
  CHECK(bits(y[1]) == bits(-0.0f));
  y.assign(4, 9.0f);
  auto bad = q;
  bad.block_size = 0;
  CHECK_THROWS_WITH(bad(x, y), contains_substring("block_size = 0"));
  bad = q;
  bad.axis = 1;
  CHECK_THROWS_WITH(bad(x, y), contains_substring("axis = 1 is invalid for a tensor of rank 1"));
  std::vector<float> small(3, 9.0f);
  CHECK_THROWS_WITH(q(x, small), contains_substring("shape"));
  CHECK(y == std::vector<float>(4, 9.0f));
  CHECK(small == std::vector<float>(3, 9.0f));
  std::vector<float> buf{1, 2, 3, 4, 5};
  CHECK_THROWS_WITH(q(std::span<const float>(buf.data(), 4), std::span<float>(buf.data() + 1, 4)),
                    contains_substring("overlaps x"));
  CHECK(buf == std::vector<float>{1, 2, 3, 4, 5});
  // dequantize: a code above 15, a negative scale byte.
  std::vector<std::uint8_t> codes{1, 16, 2, 3}, scales{0x38};
  CHECK_THROWS_WITH(lowbit::dequantize(q, codes, scales, 1.0f, y), contains_substring("codes[1] = 16 is invalid"));
  codes[1] = 1;
  scales[0] = 0x80;
  CHECK_THROWS_WITH(lowbit::dequantize(q, codes, scales, 1.0f, y),
                    contains_substring("scales[0] = 128 is invalid; expected a non-negative E4M3 scale (0 to 126) "
                                       "or a NaN (127 or 255)"));
  CHECK(y == std::vector<float>(4, 9.0f));
  // Both E4M3 NaN bytes make the block NaN.
  for (std::uint8_t nan_byte : {std::uint8_t(0x7f), std::uint8_t(0xff)}) {
    scales[0] = nan_byte;
    lowbit::dequantize(q, codes, scales, 1.0f, y);
    for (float v : y) CHECK(std::isnan(v));
    y.assign(4, 9.0f);
  }
}
