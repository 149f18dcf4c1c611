// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/int_quant.hpp.
#include <lowbit/int_quant.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"
#include "support/row_route.hpp"
#include "support/scalar_route.hpp"
#include "support/test_util.hpp"

using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit::shape;
using lowbit::strided_view;
using lowbit_test::bits;
using lowbit_test::show;
using lowbit_test::check_rejected;
using lowbit_test::inf;
using lowbit_test::nan_f;
using lowbit_test::require_same_bits;

namespace {

template <semantics S = semantics::reference>
lowbit::int_quant<S> make(bool is_signed, bool narrow, rounding_mode m) {
  return lowbit::int_quant<S>{.is_signed = is_signed, .narrow = narrow, .rounding = m};
}

template <semantics S>
float iq1(float x, float scale, float zp, float bw, bool is_signed, bool narrow, rounding_mode m) {
  float y = 12345.0f;
  std::span<const float> xs(&x, 1);
  std::span<float> ys(&y, 1);
  make<S>(is_signed, narrow, m)(xs, scale, zp, bw, ys);
  return y;
}

}  // namespace

// ---- known values ---------------------------------------------------------

TEST_CASE("int8 signed round-trip of simple values", "[int_quant]") {
  std::vector<float> x{0.26f, -1.3f, 7.9f, 2.5f, -100.0f, 100.0f}, y(6);
  make(true, false, rounding_mode::half_even)(x, 0.5f, 0.0f, 4.0f, y);
  require_same_bits(y, {0.5f, -1.5f, 3.5f, 2.5f, -4.0f, 3.5f});
  make(true, true, rounding_mode::half_even)(x, 0.5f, 0.0f, 4.0f, y);  // narrow: [-7, 7]
  require_same_bits(y, {0.5f, -1.5f, 3.5f, 2.5f, -3.5f, 3.5f});
  make(false, false, rounding_mode::half_even)(x, 0.5f, 0.0f, 4.0f, y);  // [0, 15]
  require_same_bits(y, {0.5f, 0.0f, 7.5f, 2.5f, 0.0f, 7.5f});
  make(false, true, rounding_mode::half_even)(x, 0.5f, 0.0f, 4.0f, y);  // narrow unsigned: [0, 14]
  require_same_bits(y, {0.5f, 0.0f, 7.0f, 2.5f, 0.0f, 7.0f});
}

TEST_CASE("zero point shifts the grid and is removed again", "[int_quant]") {
  std::vector<float> x{0.0f, 1.0f, -1.0f, 10.0f}, y(4);
  // uint4 with zeropt 8: y = x/0.25 + 8 in [0, 15] -> q - 8.
  make(false, false, rounding_mode::half_even)(x, 0.25f, 8.0f, 4.0f, y);
  require_same_bits(y, {0.0f, 1.0f, -1.0f, 1.75f});
}

TEST_CASE("signed 1-bit is bipolar in both semantics", "[int_quant]") {
  using S = semantics;
  for (rounding_mode m : lowbit::all_rounding_modes) {
    CHECK(iq1<S::reference>(0.3f, 2.0f, 0.0f, 1.0f, true, true, m) == 2.0f);
    CHECK(iq1<S::reference>(-0.0f, 2.0f, 0.0f, 1.0f, true, false, m) == 2.0f);
    CHECK(iq1<S::reference>(-5.0f, 2.0f, 0.0f, 1.0f, true, false, m) == -2.0f);
    CHECK(iq1<S::exact>(-0.0f, 2.0f, 0.0f, 1.0f, true, false, m) == 2.0f);
    // NaN: -1 in reference (QUIRKS.md 12), NaN in exact.
    CHECK(bits(iq1<S::reference>(nan_f, 0.5f, 0.25f, 1.0f, true, false, m)) == bits(-0.625f));
    CHECK(std::isnan(iq1<S::exact>(nan_f, 0.5f, 0.25f, 1.0f, true, false, m)));
  }
  // Unsigned 1 bit is an ordinary [0, 1] grid; narrow makes it [0, 0].
  CHECK(iq1<S::exact>(0.7f, 1.0f, 0.0f, 1.0f, false, false, rounding_mode::half_even) == 1.0f);
  CHECK(iq1<S::exact>(0.7f, 1.0f, 0.0f, 1.0f, false, true, rounding_mode::half_even) == 0.0f);
}

TEST_CASE("the two semantics differ exactly where QUIRKS.md says", "[int_quant]") {
  using S = semantics;
  const auto hu = rounding_mode::half_up, hd = rounding_mode::half_down, re = rounding_mode::half_even;
  // 1. HALF_UP of 0.49999997.
  CHECK(iq1<S::reference>(0.49999997f, 1, 0, 8, true, false, hu) == 1.0f);
  CHECK(iq1<S::exact>(0.49999997f, 1, 0, 8, true, false, hu) == 0.0f);
  // 2./3. odd integers in [2^23, 2^24).
  CHECK(iq1<S::reference>(8388609.0f, 1, 0, 24, false, false, hu) == 8388610.0f);
  CHECK(iq1<S::exact>(8388609.0f, 1, 0, 24, false, false, hu) == 8388609.0f);
  CHECK(iq1<S::reference>(16777215.0f, 1, 0, 24, false, false, hu) == 16777216.0f);
  CHECK(iq1<S::reference>(8388609.0f, 1, 0, 24, false, false, hd) == 8388608.0f);
  // 4. signed zeros.
  CHECK(bits(iq1<S::reference>(0.3f, 1, 0, 8, true, false, hd)) == bits(-0.0f));
  CHECK(bits(iq1<S::exact>(0.3f, 1, 0, 8, true, false, hd)) == bits(0.0f));
  // HALF_DOWN of -0.3 (y = -0.3): numpy gives +0, exact -0.
  CHECK(bits(iq1<S::reference>(-0.3f, 1, 0, 8, true, false, hd)) == bits(0.0f));
  CHECK(bits(iq1<S::exact>(-0.3f, 1, 0, 8, true, false, hd)) == bits(-0.0f));
  // A small negative y rounds to -0 in both (signed), and -0 - 0 stays -0.
  CHECK(bits(iq1<S::reference>(-0.3f, 1, 0, 8, true, false, re)) == bits(-0.0f));
  CHECK(bits(iq1<S::exact>(-0.3f, 1, 0, 8, true, false, re)) == bits(-0.0f));
  // Unsigned clamp of -0: numpy clip gives +0, the specification keeps -0,
  // and the kernel's clamp (MAXPS) keeps it too. In IntQuant's output this
  // never shows: y = -0 needs zeropt = -0, and then q - zeropt = +0 either
  // way ("a negative zero point" below checks every path).
  CHECK(bits(lowbit::detail::clamp<S::exact>(-0.0f, 0.0f, 255.0f)) == bits(-0.0f));
  CHECK(bits(iq1<S::exact>(-0.0f, 1, -0.0f, 8, false, false, re)) == bits(0.0f));
  CHECK(bits(iq1<S::reference>(-0.0f, 1, -0.0f, 8, false, false, re)) == bits(0.0f));
  // IEEE: -0 + (+0) = +0, so x = -0 with zeropt 0 gives +0 (FORMAT.md).
  CHECK(bits(iq1<S::exact>(-0.0f, 1, 0, 8, true, false, re)) == bits(0.0f));
  // 13. limits beyond float32 precision.
  CHECK(iq1<S::reference>(1e10f, 1, 0, 25, false, false, re) == 33554432.0f);
  CHECK(iq1<S::exact>(1e10f, 1, 0, 25, false, false, re) == 33554430.0f);
  CHECK(iq1<S::reference>(1e10f, 1, 0, 32, true, false, re) == 2147483648.0f);
  CHECK(iq1<S::exact>(1e10f, 1, 0, 32, true, false, re) == 2147483520.0f);
  CHECK(iq1<S::exact>(-1e10f, 1, 0, 32, true, true, re) == -2147483520.0f);
  CHECK(iq1<S::exact>(-1e10f, 1, 0, 32, true, false, re) == -2147483648.0f);
  CHECK(iq1<S::exact>(1e10f, 1, 0, 32, false, false, re) == 4294967040.0f);
  CHECK(iq1<S::reference>(1e10f, 1, 0, 32, false, false, re) == 4294967296.0f);
}

// The kernels clamp with MAXPS / MINPS, which return y where numpy's clip
// returns the (equal) limit: only the sign of a zero y can differ, and y is
// -0 only with zeropt = -0. The output must still be numpy's, bit for bit.
TEST_CASE("a negative zero point: the output is numpy's clip, bit for bit", "[int_quant]") {
  const float inf = std::numeric_limits<float>::infinity(), nan_f = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{-0.0f, 0.0f, -0.3f, 0.3f, -1e-30f, 1e-30f, -0x1p-149f, 0x1p-149f, -2.5f, 2.5f,
                       300.0f, -300.0f, inf, -inf, nan_f};
  x.resize(3 * 64 + 5, -0.0f);  // a SIMD body and a tail of zeros
  for (rounding_mode m : lowbit::all_rounding_modes) {
    lowbit::detail::with_rounding_mode(m, [&](auto mc) {
      constexpr rounding_mode M = decltype(mc)::value;
      for (int v = 0; v < 6; ++v) {
        const bool is_signed = v >= 4, narrow = v % 2 == 1;
        const float bw = v < 2 ? 1.0f : v < 4 ? 4.0f : 8.0f;  // unsigned narrow 1 bit: [0, 0]
        for (float zp : {-0.0f, 0.0f}) {
          for (float scale : {1.0f, 0.5f, 0.3f}) {
            const auto r = lowbit::detail::int_limits<semantics::reference, float>(static_cast<int>(bw), is_signed, narrow);
            std::vector<float> want(x.size());
            for (std::size_t i = 0; i < x.size(); ++i) {
              float y = x[i] / scale;
              y = y + zp;
              y = y <= r.lo ? r.lo : y;  // numpy's clip: max, then min
              y = y >= r.hi ? r.hi : y;
              float d = lowbit::detail::round_integral<semantics::reference, M>(y) - zp;
              want[i] = d * scale;
            }
            for (bool simd : {true, false}) {
              auto op = make<semantics::reference>(is_signed, narrow, m);
              const lowbit::detail::simd_scope simd_149(simd);  // the SIMD body or the scalar kernels
              std::vector<float> got(x.size());
              op(x, scale, zp, bw, got);
              INFO("mode " << lowbit::to_string(m) << " bw " << bw << " signed " << is_signed << " narrow "
                           << narrow << " zp " << zp << " scale " << scale << " simd " << simd);
              require_same_bits(got, want);
            }
          }
        }
      }
    });
  }
}

TEST_CASE("special values", "[int_quant]") {
  using S = semantics;
  const auto re = rounding_mode::half_even;
  for (int sem = 0; sem < 2; ++sem) {
    auto f = [&](float x, float s) {
      return sem ? iq1<S::exact>(x, s, 0, 8, true, false, re)
                 : iq1<S::reference>(x, s, 0, 8, true, false, re);
    };
    CHECK(f(inf, 1) == 127.0f);   // clamped
    CHECK(f(-inf, 1) == -128.0f);
    CHECK(std::isnan(f(nan_f, 1)));
    CHECK(bits(f(-0.0f, 1)) == bits(0.0f));   // -0 + 0 = +0
    CHECK(bits(f(-0.3f, 1)) == bits(-0.0f));  // rounds to -0, kept
    CHECK(bits(f(std::numeric_limits<float>::denorm_min(), 1)) == bits(0.0f));
    // A subnormal scale: results are subnormal multiples of it.
    const float ds = std::numeric_limits<float>::denorm_min();
    CHECK(bits(f(3 * ds, ds)) == bits(3 * ds));
  }
  // reference computes a zero or negative scale as QONNX does.
  CHECK(std::isnan(iq1<S::reference>(0.0f, 0.0f, 0, 8, true, false, re)));          // 0/0
  CHECK(iq1<S::reference>(1.0f, 0.0f, 0, 8, true, false, re) == 0.0f * 127.0f);      // inf -> 127 * 0
  CHECK(iq1<S::reference>(1.0f, -0.5f, 0, 8, true, false, re) == 1.0f);              // (-2) * -0.5
}

TEST_CASE("float64 tensors use the same formulas in binary64", "[int_quant]") {
  std::vector<double> x{0.1, 2.5, -3.7, 1e300}, y(4);
  make(true, false, rounding_mode::half_even)(x, 0.1, 0.0, 8.0, y);
  std::vector<double> want(4);
  for (int i = 0; i < 4; ++i) {
    double v = x[i] / 0.1;
    v = std::min(std::max(v, -128.0), 127.0);
    want[i] = std::nearbyint(v) * 0.1;
  }
  require_same_bits(y, want);
  // 53-bit limits are exact in double.
  std::vector<double> big{1e300}, out(1);
  lowbit::int_quant<semantics::exact>{.is_signed = false}(big, 1.0, 0.0, 53.0, out);
  CHECK(out[0] == 9007199254740991.0);
  REQUIRE_THROWS_AS(make(true, false, rounding_mode::half_even)(x, 0.1, 0.0, 54.0, y), lowbit::error);
}

// ---- SIMD body == scalar path, every tail, misalignment ----------------------

template <semantics S, class T>
void simd_equals_scalar() {
  const std::size_t L = xsimd::batch<T>::size;
  const std::vector<T> src = lowbit_test::mixed_values<T>(4 * L + 8, 7);
  const T sentinel = T(-12345.5);
  for (rounding_mode m : lowbit::all_rounding_modes) {
    // int8, uint5, narrow int8, bipolar (signed 1 bit).
    for (int variant = 0; variant < 4; ++variant) {
      auto op = make<S>(variant != 1, variant == 2, m);
      const T bw = variant == 1 ? T(5) : variant == 3 ? T(1) : T(8);
      for (std::size_t n = 0; n <= 2 * L + 1; ++n) {
        for (std::size_t mis : {std::size_t(0), std::size_t(1), std::size_t(3), L / 2 + 1}) {
          std::vector<T> xs(src.begin() + mis, src.begin() + mis + n);
          std::vector<T> a(n + mis + 2, sentinel), b(n + mis + 2, sentinel);
          // Misaligned input and output: start at element `mis` of the buffer.
          std::vector<T> xbuf(n + mis);
          std::copy(xs.begin(), xs.end(), xbuf.begin() + mis);
          std::span<const T> xin(xbuf.data() + mis, n);
          // Odd parameters on even misalignments, scale 1 and zeropt 0 (small
          // negative y, so signed zeros) on odd ones.
          const T scale = mis % 2 ? T(1) : T(0.37), zp = mis % 2 ? T(0) : T(1);
          const lowbit::detail::simd_scope simd_227(true);  // the SIMD body or the scalar kernels
          op(xin, scale, zp, bw, std::span<T>(a.data() + mis, n));
          const lowbit::detail::simd_scope simd_229(false);  // the SIMD body or the scalar kernels
          op(xin, scale, zp, bw, std::span<T>(b.data() + mis, n));
          INFO("mode " << lowbit::to_string(m) << " variant " << variant << " n " << n << " mis " << mis);
          require_same_bits(a, b);
          // Nothing written outside [mis, mis + n).
          for (std::size_t i = 0; i < mis; ++i) CHECK(bits(a[i]) == bits(sentinel));
          CHECK(bits(a[mis + n]) == bits(sentinel));
          CHECK(bits(a[mis + n + 1]) == bits(sentinel));
        }
      }
    }
  }
}

TEST_CASE("SIMD body equals the scalar path for every tail and misalignment", "[int_quant][simd]") {
  simd_equals_scalar<semantics::reference, float>();
  simd_equals_scalar<semantics::exact, float>();
  simd_equals_scalar<semantics::reference, double>();
  simd_equals_scalar<semantics::exact, double>();
}

// ---- the power-of-two fast path ------------------------------------------------

TEST_CASE("exact_reciprocal accepts exactly the powers of two with a finite nonzero reciprocal",
          "[int_quant][pow2]") {
  using lowbit::detail::exact_reciprocal;
  for (float s : {1.0f, 0.5f, -0.25f, 0x1p-126f, 0x1p-127f, 0x1p127f, 0x1p126f}) CHECK(exact_reciprocal(s));
  // 2^-128 .. 2^-149: the reciprocal overflows; the rest are not powers of two.
  for (float s : {0x1p-128f, 0x1p-149f, 0.0f, -0.0f, 0.3f, 3.0f, 0x1.000002p0f, inf, -inf, nan_f})
    CHECK_FALSE(exact_reciprocal(s));
  CHECK(exact_reciprocal(0x1p-1022));
  CHECK(exact_reciprocal(0x1p1023));
  CHECK_FALSE(exact_reciprocal(0x1p-1024));  // 1 / 2^-1024 = 2^1024 overflows
  CHECK_FALSE(exact_reciprocal(0.1));
  // Every binade, subnormals included, against frexp: |s| is a power of two
  // iff its significand is 1/2, and then 1 / s must be finite.
  auto oracle = [](auto s) {
    int e = 0;
    return std::fabs(std::frexp(s, &e)) == decltype(s)(0.5) && std::isfinite(decltype(s)(1) / s);
  };
  for (int e = -149; e <= 127; ++e)
    for (float sig : {1.0f, 1.0000001f, 1.5f, 1.9999999f})
      for (float sg : {1.0f, -1.0f}) {
        const float s = sg * std::ldexp(sig, e);
        if (s == 0.0f) continue;
        INFO("s = " << s);
        CHECK(exact_reciprocal(s) == oracle(s));
      }
  for (int e = -1074; e <= 1023; e += 7)
    for (double sig : {1.0, 1.0000000000000002, 1.5}) {
      const double s = std::ldexp(sig, e);
      if (s == 0.0) continue;
      INFO("s = " << s);
      CHECK(exact_reciprocal(s) == oracle(s));
    }
}

template <semantics S, class T>
void pow2_scale_equals_division(T scale) {
  // The SIMD path multiplies by 1 / scale; the scalar path divides.
  const std::vector<T> x = lowbit_test::mixed_values<T>(200, 3);
  std::vector<T> a(x.size()), b(x.size());
  for (rounding_mode m : lowbit::all_rounding_modes) {
    auto op = make<S>(true, false, m);
    const lowbit::detail::simd_scope simd_293(true);  // the SIMD body or the scalar kernels
    op(x, scale, T(0), T(8), a);
    const lowbit::detail::simd_scope simd_295(false);  // the SIMD body or the scalar kernels
    op(x, scale, T(0), T(8), b);
    INFO("mode " << lowbit::to_string(m) << " scale " << scale);
    require_same_bits(a, b);
  }
}

TEST_CASE("a power-of-two scale gives the bits of the division, at the ends of the range",
          "[int_quant][pow2]") {
  for (float s : {0.25f, 1.0f, 0x1p-126f, 0x1p-127f, 0x1p-128f, 0x1p127f, 0x1p-149f, 0x1p-140f}) {
    pow2_scale_equals_division<semantics::reference>(s);
    pow2_scale_equals_division<semantics::exact>(s);
  }
  pow2_scale_equals_division<semantics::reference>(-0.5f);  // reference accepts a negative scale
  for (double s : {0.125, 0x1p-1022, 0x1p-1023, 0x1p1023, 0x1p-1074})
    pow2_scale_equals_division<semantics::exact>(s);
  // Known values on the fast path: 3.3 / 0.25 = 13.2 -> 13 -> 3.25; -0 / 0.25
  // + 0 = +0 in the reference semantics.
  std::vector<float> x{3.3f, -0.0f, 0x1p-149f}, y(3);
  make(true, false, rounding_mode::half_even)(x, 0.25f, 0.0f, 8.0f, y);
  CHECK(bits(y[0]) == bits(3.25f));
  CHECK(bits(y[1]) == bits(0.0f));
  CHECK(bits(y[2]) == bits(0.0f));
}

// ---- broadcasting --------------------------------------------------------------

template <semantics S>
void per_channel_equals_per_tensor_loop(rounding_mode m, std::size_t H, std::size_t W) {
  const std::size_t N = 2, C = 3;
  const std::vector<float> x = lowbit_test::mixed_values<float>(N * C * H * W, 11);
  const std::vector<float> scale{0.1f, 0.37f, 2.0f}, zp{0.0f, 3.0f, -1.0f}, bw{8.0f, 3.0f, 1.0f};
  std::vector<float> y(x.size());
  strided_view<const float> xv(x.data(), {N, C, H, W});
  strided_view<const float> sv(scale.data(), {1, C, 1, 1});
  strided_view<const float> zv(zp.data(), {C, 1, 1});
  strided_view<const float> bv(bw.data(), {C, 1, 1});
  auto op = make<S>(true, false, m);
  op(xv, sv, zv, bv, strided_view<float>(y.data(), {N, C, H, W}));
  std::vector<float> want(x.size());
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c) {
      const std::size_t off = (n * C + c) * H * W;
      op(std::span<const float>(x.data() + off, H * W), scale[c], zp[c], bw[c],
         std::span<float>(want.data() + off, H * W));
    }
  require_same_bits(y, want);
}

TEST_CASE("per-channel parameters (incl. bit widths) equal a loop of per-tensor calls",
          "[int_quant][broadcast]") {
  for (rounding_mode m : lowbit::all_rounding_modes) {
    INFO(lowbit::to_string(m));
    // Short rows (processed as 2-D tiles) and long rows (one run per row).
    per_channel_equals_per_tensor_loop<semantics::reference>(m, 5, 7);
    per_channel_equals_per_tensor_loop<semantics::exact>(m, 5, 7);
    per_channel_equals_per_tensor_loop<semantics::reference>(m, 1, 300);
    per_channel_equals_per_tensor_loop<semantics::exact>(m, 3, 700);
  }
}

TEST_CASE("per-element parameters equal element-wise per-tensor calls", "[int_quant][broadcast]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(37, 3);
  std::vector<float> scale(37), zp(37), bw(37), y(37);
  for (std::size_t i = 0; i < 37; ++i) {
    scale[i] = 0.05f * float(i + 1);
    zp[i] = float(int(i % 5) - 2);
    bw[i] = float(1 + i % 9);
  }
  auto op = make(true, false, rounding_mode::half_up);
  op(x, scale, zp, bw, y);
  for (std::size_t i = 0; i < 37; ++i) {
    INFO("i = " << i);
    CHECK(bits(y[i]) == bits(iq1<semantics::reference>(x[i], scale[i], zp[i], bw[i], true, false,
                                                       rounding_mode::half_up)));
  }
}

TEST_CASE("the output rank grows with higher-rank parameters", "[int_quant][broadcast]") {
  std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> scale{1.0f, 0.5f, 0.25f};
  auto op = make(true, false, rounding_mode::half_even);
  strided_view<const float> sv(scale.data(), {3, 1});
  CHECK(op.output_shape(x, sv, 0.0f, 8.0f) == shape{3, 4});
  std::vector<float> y(12);
  op(x, sv, 0.0f, 8.0f, strided_view<float>(y.data(), {3, 4}));
  require_same_bits(y, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4});
  // A bipolar bit width takes no part in broadcasting (as in QONNX).
  std::vector<float> bw_ones{1.0f, 1.0f, 1.0f};
  strided_view<const float> bv(bw_ones.data(), {3, 1, 1});
  CHECK(op.output_shape(x, 1.0f, 0.0f, bv) == shape{4});
  CHECK(make(false, false, rounding_mode::half_even).output_shape(x, 1.0f, 0.0f, bv) == shape{3, 1, 4});
}

// ---- views -------------------------------------------------------------------

TEST_CASE("strided, transposed, negative-stride and broadcast views", "[int_quant][view]") {
  std::vector<float> base(24);
  for (std::size_t i = 0; i < base.size(); ++i) base[i] = float(i) * 0.3f - 3.0f;
  auto op = make(true, false, rounding_mode::floor);
  // Every other element of a [4, 6] buffer as [4, 3]; output transposed.
  strided_view<const float> xv(base.data(), {4, 3}, {6, 2});
  std::vector<float> out(12, -99.0f);
  strided_view<float> yv(out.data(), {4, 3}, {1, 4});
  op(xv, 0.5f, 0.0f, 8.0f, yv);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      CHECK(bits(out[j * 4 + i]) == bits(iq1<semantics::reference>(base[i * 6 + j * 2], 0.5f, 0, 8, true,
                                                                   false, rounding_mode::floor)));
  // Negative stride: reversed.
  strided_view<const float> rev(base.data() + 23, {24}, {-1});
  std::vector<float> r(24), f(24);
  op(rev, 0.5f, 0.0f, 8.0f, r);
  op(base, 0.5f, 0.0f, 8.0f, f);
  for (std::size_t i = 0; i < 24; ++i) CHECK(bits(r[i]) == bits(f[23 - i]));
  // x broadcast along a stride-0 dimension.
  strided_view<const float> rep(base.data(), {3, 24}, {0, 1});
  std::vector<float> rr(72);
  op(rep, 0.5f, 0.0f, 8.0f, strided_view<float>(rr.data(), {3, 24}));
  for (std::size_t i = 0; i < 72; ++i) CHECK(bits(rr[i]) == bits(f[i % 24]));
  // A strided scale tensor (every other element).
  std::vector<float> sc{0.5f, 9.0f, 0.25f, 9.0f, 2.0f, 9.0f};
  strided_view<const float> scv(sc.data(), {3, 1}, {2, 1});
  std::vector<float> y3(72);
  op(strided_view<const float>(base.data(), {3, 24}, {0, 1}), scv, 0.0f, 8.0f,
     strided_view<float>(y3.data(), {3, 24}));
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < 24; ++i)
      CHECK(bits(y3[c * 24 + i]) == bits(iq1<semantics::reference>(base[i], sc[2 * c], 0, 8, true, false,
                                                                   rounding_mode::floor)));
}

TEST_CASE("rank-0 and empty tensors", "[int_quant][view]") {
  auto op = make(true, false, rounding_mode::half_even);
  float x = 2.6f, y = 0.0f;
  op(strided_view<const float>(&x, {}), 1.0f, 0.0f, 8.0f, strided_view<float>(&y, {}));
  CHECK(y == 3.0f);
  std::vector<float> ex, ey;
  op(ex, 1.0f, 0.0f, 8.0f, ey);  // nothing to do, no error
  std::vector<float> buf(4, 7.0f);
  op(strided_view<const float>(buf.data(), {0, 4}), 1.0f, 0.0f, 8.0f, strided_view<float>(buf.data(), {0, 4}));
  CHECK(buf[0] == 7.0f);
  // Parameters are still validated when x is empty.
  REQUIRE_THROWS_AS(op(ex, 1.0f, 0.0f, 0.0f, ey), lowbit::error);
}

TEST_CASE("in place equals out of place", "[int_quant]") {
  for (rounding_mode m : lowbit::all_rounding_modes) {
    std::vector<float> x = lowbit_test::mixed_values<float>(101, 5), y(101);
    auto op = make(false, true, m);
    op(x, 0.7f, 3.0f, 6.0f, y);
    op(x, 0.7f, 3.0f, 6.0f, x);
    require_same_bits(x, y);
    // Strided in place.
    std::vector<float> a = lowbit_test::mixed_values<float>(60, 9), b = a;
    strided_view<float> av(a.data(), {6, 5}, {1, 12});
    std::vector<float> want(30);
    op(strided_view<const float>(av), 0.7f, 3.0f, 6.0f, strided_view<float>(want.data(), {6, 5}));
    op(strided_view<const float>(av), 0.7f, 3.0f, 6.0f, av);
    for (std::size_t i = 0; i < 6; ++i)
      for (std::size_t j = 0; j < 5; ++j) CHECK(bits(a[i + 12 * j]) == bits(want[i * 5 + j]));
  }
}

// ---- errors: the message names the culprit, nothing is written ------------------

TEST_CASE("every error path throws lowbit::error and leaves y untouched", "[int_quant][errors]") {
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  std::vector<float> y(6, 42.0f);
  auto op = make(true, false, rounding_mode::half_even);
  auto ex = make<semantics::exact>(true, false, rounding_mode::half_even);
  std::vector<float> s4{1, 1, 1, 1};
  check_rejected([&] { op(x, s4, 0.0f, 8.0f, y); }, y, "do not broadcast");
  std::vector<float> y5(5, 42.0f);
  check_rejected([&] { op(x, 1.0f, 0.0f, 8.0f, y5); }, y5, "y has shape [5]");
  check_rejected([&] { op(x, 1.0f, 0.0f, 8.0f, strided_view<float>(y.data(), {2, 3})); }, y, "[6]");
  check_rejected([&] { op(x, 1.0f, 0.0f, 8.5f, y); }, y, "bitwidth = 8.5");
  check_rejected([&] { op(x, 1.0f, 0.0f, 0.0f, y); }, y, "expected an integer from 1 to 32");
  check_rejected([&] { op(x, 1.0f, 0.0f, 33.0f, y); }, y, "bitwidth = 33");
  check_rejected([&] { op(x, 1.0f, 0.0f, nan_f, y); }, y, "bitwidth = nan");
  check_rejected([&] { op(x, 1.0f, 0.0f, -inf, y); }, y, "bitwidth = -inf");
  std::vector<float> bws{8, 8, 0.5f, 8, 8, 8};
  // x and y [2, 3]: the shapes broadcast, so the value is what fails.
  check_rejected([&] { op(strided_view<const float>(x.data(), {2, 3}), 1.0f, 0.0f, strided_view<const float>(bws.data(), {2, 3}),
                          strided_view<float>(y.data(), {2, 3})); }, y,
                 "bitwidth[0, 2] = 0.5");
  auto bad_mode = make(true, false, static_cast<rounding_mode>(99));
  check_rejected([&] { bad_mode(x, 1.0f, 0.0f, 8.0f, y); }, y, "rounding_mode");
  strided_view<const float> x23(x.data(), {2, 3});
  check_rejected([&] { op(x23, 1.0f, 0.0f, 8.0f, strided_view<float>(y.data(), {2, 3}, {0, 1})); }, y,
                 "stride 0");
  // The exact semantics reject nonsensical scales; reference computes them.
  for (float bad : {0.0f, -0.0f, -1.0f, inf, -inf, nan_f}) {
    check_rejected([&] { ex(x, bad, 0.0f, 8.0f, y); }, y, "scale");
    CHECK_NOTHROW(op(x, bad, 0.0f, 8.0f, std::vector<float>(6)));
  }
  std::vector<float> scales{1, 1, 1, 1, 1, -2};
  check_rejected([&] { ex(x, scales, 0.0f, 8.0f, y); }, y, "scale[5] = -2");
}

TEST_CASE("a bit-width tensor with no elements is not bipolar: it must broadcast", "[int_quant][errors]") {
  // QONNX's `bitwidth == 1 and signed` is false for an empty array, so the
  // bit width takes part in broadcasting, and [0] does not broadcast with [3].
  const std::vector<float> x{1.0f, 2.0f, 3.0f}, empty;
  std::vector<float> y{7.0f, 7.0f, 7.0f};
  for (bool is_signed : {true, false}) {
    INFO("signed " << is_signed);
    REQUIRE_THROWS_WITH(lowbit::int_quant<>{.is_signed = is_signed}(x, 1.0f, 0.0f, empty, y),
                        lowbit_test::contains_substring("x has shape [3] and bitwidth has shape [0]"));
    REQUIRE_THROWS_AS(lowbit::int_quant<>{.is_signed = is_signed}.output_shape(x, 1.0f, 0.0f, empty), lowbit::error);
    // output_shape() checks the attributes as the call does.
    const lowbit::int_quant<> bad_mode{.is_signed = is_signed, .rounding = static_cast<lowbit::rounding_mode>(42)};
    REQUIRE_THROWS_WITH(bad_mode.output_shape(x, 1.0f, 0.0f, 8.0f),
                        lowbit_test::contains_substring("rounding_mode = 42 is not a lowbit::rounding_mode value"));
    CHECK(y == std::vector<float>{7.0f, 7.0f, 7.0f});
  }
  // With an empty x too, the output is empty and nothing is computed.
  std::vector<float> none;
  lowbit::int_quant<>{}(none, 1.0f, 0.0f, empty, none);
  CHECK(lowbit::int_quant<>{}.output_shape(none, 1.0f, 0.0f, empty) == lowbit::shape{0});
}

TEST_CASE("shapes are checked before values, and a broadcast view's value once", "[int_quant][errors]") {
  // Views of 2^40 copies of one value (stride 0) next to x [3]: validating
  // them element by element took hours; now the broadcast error comes at
  // once, and a bipolar bit width is recognised from its one value.
  const std::size_t big = std::size_t(1) << 40;
  const std::vector<float> x{0.3f, -0.2f, 5.0f};
  std::vector<float> y(3, 7.0f);
  const float eight = 8.0f, one = 1.0f, half = 0.5f;
  const strided_view<const float> bw8(&eight, {big}, {0}), bw1(&one, {big}, {0}), s(&half, {big}, {0});
  REQUIRE_THROWS_WITH(lowbit::int_quant<>{}(x, 1.0f, 0.0f, bw8, y),
                      lowbit_test::contains_substring("x has shape [3] and bitwidth has shape [1099511627776]"));
  REQUIRE_THROWS_WITH(lowbit::int_quant<lowbit::semantics::exact>{}(x, s, 0.0f, 8.0f, y),
                      lowbit_test::contains_substring("x has shape [3] and scale has shape [1099511627776]"));
  CHECK(y == std::vector<float>(3, 7.0f));
  // Signed with every bit width 1: bipolar, and the bit width takes no part
  // in the shape (QONNX), so this call is valid.
  lowbit::int_quant<>{}(x, 1.0f, 0.0f, bw1, y);
  CHECK(y == std::vector<float>{1.0f, -1.0f, 1.0f});
  // A bad value in a broadcast view is found and named at index 0.
  const float bad = 0.5f;
  REQUIRE_THROWS_WITH(lowbit::int_quant<>{}(strided_view<const float>(x.data(), {3, 1}), 1.0f, 0.0f,
                                            strided_view<const float>(&bad, {3, 1}, {0, 0}),
                                            strided_view<float>(y.data(), {3, 1})),
                      lowbit_test::contains_substring("bitwidth[0, 0] = 0.5 is invalid"));
}

// ---- bit widths that vary, some of them 1 (bipolar) ------------------------------

// Every element equals a one-element call with its own scalar parameters
// (which takes the plain or the bipolar kernel, never the mixed path), on
// the SIMD and the scalar path: per-channel bit widths over long rows (row
// mode), per-element bit widths over several chunks, and in place.
template <semantics S>
void mixed_bipolar_case(rounding_mode m, bool simd) {
  const lowbit::int_quant<S> op{.is_signed = true, .rounding = m};
  const lowbit::detail::simd_scope path(simd);
  auto one = [&](float x, float s, float b) {
    float y = -1.0f;
    op(std::span<const float>(&x, 1), s, 0.5f, b, std::span<float>(&y, 1));
    return y;
  };
  {  // per channel, rows of 300: row mode
    const std::size_t C = 8, W = 300;
    const std::vector<float> x = lowbit_test::mixed_values<float>(C * W, 21);
    const std::vector<float> bw{1, 8, 1, 4, 2, 1, 8, 3}, sc{0.5f, 0.25f, 3.0f, 0.1f, 1.0f, 0.7f, 2.0f, 0.05f};
    std::vector<float> y(C * W);
    op(strided_view<const float>(x.data(), {C, W}), strided_view<const float>(sc.data(), {C, 1}), 0.5f,
       strided_view<const float>(bw.data(), {C, 1}), strided_view<float>(y.data(), {C, W}));
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t w = 0; w < W; ++w) {
        INFO("channel " << c << " column " << w << " x " << show(x[c * W + w]));
        REQUIRE(bits(y[c * W + w]) == bits(one(x[c * W + w], sc[c], bw[c])));
      }
  }
  {  // per element, three chunks and a tail; then in place
    const std::size_t N = 3 * 512 + 37;
    std::vector<float> x = lowbit_test::mixed_values<float>(N, 22), bw(N), sc(N), y(N);
    for (std::size_t i = 0; i < N; ++i) {
      bw[i] = i % 3 == 0 ? 1.0f : i % 3 == 1 ? 8.0f : 3.0f;
      sc[i] = 0.05f + 0.01f * static_cast<float>(i % 17);
    }
    op(x, sc, 0.5f, bw, y);
    for (std::size_t i = 0; i < N; ++i) {
      INFO("element " << i << " x " << show(x[i]));
      REQUIRE(bits(y[i]) == bits(one(x[i], sc[i], bw[i])));
    }
    op(x, sc, 0.5f, bw, x);
    require_same_bits(x, y);
  }
}

TEST_CASE("bit widths that vary, some bipolar: each element as if alone", "[int_quant][bipolar]") {
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (bool simd : {true, false}) {
      INFO("mode " << lowbit::to_string(m) << " simd " << simd);
      mixed_bipolar_case<semantics::reference>(m, simd);
      mixed_bipolar_case<semantics::exact>(m, simd);
    }
}

// ---- the direct route of a per-tensor call (detail::run_dense_constant) ----------

TEST_CASE("a per-tensor call on dense x and y gives the general route's bits, every mode and width",
          "[int_quant][route]") {
  // Scalar parameters take the direct route; the same values as tensors of
  // one element (rank 1) take the general one (make_engine_plan).
  const std::vector<float> x = lowbit_test::mixed_values<float>(203, 11);
  auto both = [&](const auto& op, float s, float z, float b) {
    for (const std::size_t n : {std::size_t(2), std::size_t(15), std::size_t(16), std::size_t(17), std::size_t(203)}) {
      const std::span<const float> xs(x.data(), n);
      std::vector<float> direct(n, 42.0f), general(n, 42.0f);
      const std::vector<float> sv{s}, zv{z}, bv{b};
      op(xs, s, z, b, direct);
      op(xs, sv, zv, bv, general);
      require_same_bits(direct, general);
      // In place, and as a [1, n] view (a leading extent 1).
      std::vector<float> in_place(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
      op(in_place, s, z, b, in_place);
      require_same_bits(in_place, general);
      std::vector<float> two_d(n, 42.0f);
      op(strided_view<const float>(x.data(), {1, n}), s, z, b, strided_view<float>(two_d.data(), {1, n}));
      require_same_bits(two_d, general);
    }
  };
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (const bool is_signed : {true, false})
      for (const float b : {1.0f, 2.0f, 8.0f, 24.0f, 32.0f})
        for (const float s : {0.05f, 0.25f, 3.0f}) {
          CAPTURE(static_cast<int>(m), is_signed, b, s);
          both(make(is_signed, false, m), s, 0.0f, b);
          both(make(is_signed, true, m), s, 2.0f, b);
          both(make<semantics::exact>(is_signed, false, m), s, -1.0f, b);
        }
}

TEST_CASE("the direct route still checks everything before writing: overlap, shape, values",
          "[int_quant][route][errors]") {
  // x and y dense and of one shape, scalar parameters: the direct route's
  // calls, each rejected with nothing written.
  std::vector<float> buf(40);
  for (const std::ptrdiff_t shift : {1, -1, 5, -15}) {
    CAPTURE(shift);
    lowbit_test::require_rejected_untouched(buf, "overlaps x (shape [16], strides [1]) in memory without being x itself",
                                            [&] {
                                              make(true, false, rounding_mode::half_even)(
                                                  std::span<const float>(buf.data() + 16, 16), 0.05f, 0.0f, 8.0f,
                                                  std::span<float>(buf.data() + 16 + shift, 16));
                                            });
  }
  std::vector<float> x{1, 2, 3, 4, 5, 6}, y(6, 42.0f);
  auto op = make(true, false, rounding_mode::half_even);
  check_rejected([&] { op(x, 1.0f, 0.0f, 0.5f, y); }, y, "bitwidth = 0.5");
  check_rejected([&] { make<semantics::exact>(true, false, rounding_mode::half_even)(x, -1.0f, 0.0f, 8.0f, y); }, y,
                 "scale");
  check_rejected([&] { make(true, false, static_cast<rounding_mode>(42))(x, 1.0f, 0.0f, 8.0f, y); }, y,
                 "rounding_mode");
  std::vector<float> y7(7, 42.0f);
  check_rejected([&] { op(x, 1.0f, 0.0f, 8.0f, y7); }, y7, "y has shape [7]");
}

// ---- the scalar route (detail::scalar_route, int_quant::run_scalars) -------------

TEST_CASE("int_quant: the scalar route gives the general route's bits, every mode, width, type and path",
          "[int_quant][route]") {
  const std::vector<float> xf = lowbit_test::mixed_values<float>(203, 29);
  const std::vector<double> xd = lowbit_test::mixed_values<double>(203, 31);
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (const bool is_signed : {true, false})
      for (const bool narrow : {false, true})
        for (const float b : {1.0f, 2.0f, 8.0f, 24.0f, 32.0f})
          for (const float s : {0.05f, 0.25f, 3.0f}) {
            CAPTURE(lowbit::to_string(m), is_signed, narrow, b, s);
            const float z = narrow ? 2.0f : 0.0f;
            lowbit_test::require_scalar_route_bits(make(is_signed, narrow, m), xf, s, z, b);
            lowbit_test::require_scalar_route_bits(make<semantics::exact>(is_signed, narrow, m), xf, s, -z, b);
            lowbit_test::require_scalar_route_bits(make(is_signed, narrow, m), xd, double(s), double(z), double(b));
            lowbit_test::require_scalar_route_bits(make<semantics::exact>(is_signed, narrow, m), xd, double(s), -double(z),
                                                   double(b));
          }
  // A scalar scale the exact semantics reject, and bit widths out of range,
  // leave the route for the general one's message, with nothing written.
  std::vector<float> x{1, 2, 3, 4, 5, 6}, y(6, 42.0f);
  check_rejected([&] { make<semantics::exact>(true, false, rounding_mode::floor)(x, 0.0f, 0.0f, 8.0f, y); }, y,
                 "scale");
  check_rejected([&] { make<semantics::exact>(true, false, rounding_mode::floor)(x, inf, 0.0f, 8.0f, y); }, y, "scale");
  check_rejected([&] { make(false, false, rounding_mode::floor)(x, 1.0f, 0.0f, 33.0f, y); }, y, "bitwidth = 33");
  check_rejected([&] { make(false, false, rounding_mode::floor)(x, 1.0f, 0.0f, nan_f, y); }, y, "bitwidth");
}

// ---- the row route (detail::row_route, int_quant::run_rows) ----------------------

TEST_CASE("int_quant: the row route gives the general route's bits, every mode, width, type and parameter",
          "[int_quant][route]") {
  const std::vector<float> xf = lowbit_test::mixed_values<float>(1400, 37);
  const std::vector<double> xd = lowbit_test::mixed_values<double>(1400, 41);
  // Per-row scales (a power of two among them: the divider's fast path
  // needs a constant scale) and zero points.
  const std::vector<float> sf{0.05f, 0.25f, 3.0f, 0.125f, 1e-3f, 7.0f, 1e-30f}, zf{0.0f, 2.0f, -3.0f, 1.5f, 0.0f, 7.0f, -1.0f};
  const std::vector<double> sd(sf.begin(), sf.end()), zd(zf.begin(), zf.end());
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (const bool is_signed : {true, false})
      for (const bool narrow : {false, true})
        for (const float b : {2.0f, 8.0f, 24.0f}) {
          CAPTURE(lowbit::to_string(m), is_signed, narrow, b);
          const auto ref = make(is_signed, narrow, m);
          const auto ex = make<semantics::exact>(is_signed, narrow, m);
          // scale per row; zero point per row; both (the same rows).
          lowbit_test::require_row_route_bits(xf, sf, [&](const auto& xv, const auto& sv, const auto& yv) {
            ref(xv, sv, 1.0f, b, yv);
          });
          lowbit_test::require_row_route_bits(xf, sf, [&](const auto& xv, const auto& sv, const auto& yv) {
            ex(xv, sv, -1.0f, b, yv);
          });
          lowbit_test::require_row_route_bits(xf, zf, [&](const auto& xv, const auto& zv, const auto& yv) {
            ex(xv, 0.25f, zv, b, yv);
          });
          lowbit_test::require_row_route_bits(xd, sd, [&](const auto& xv, const auto& sv, const auto& yv) {
            ref(xv, sv, sv, double(b), yv);
          });
          lowbit_test::require_row_route_bits(xd, zd, [&](const auto& xv, const auto& zv, const auto& yv) {
            ex(xv, 0.05, zv, double(b), yv);
          });
        }
  // A bit width per row, a bipolar one, or a bad scale in one row: the
  // general route (its checks and messages).
  const std::vector<float> x(4 * 32, 0.3f), s{0.25f, 0.25f, 0.5f, 0.25f}, bits{8, 8, 2, 8};
  std::vector<float> y(4 * 32, 42.0f);
  const lowbit::strided_view<const float> xv(x.data(), {4, 32}), sv(s.data(), {4, 1});
  const lowbit::strided_view<float> yv(y.data(), {4, 32});
  make<semantics::exact>(true, false, rounding_mode::half_even)(xv, sv, 0.0f,
                                                                lowbit::strided_view<const float>(bits.data(), {4, 1}), yv);
  CHECK(y[0] == 0.25f);       // round(1.2) * 0.25
  CHECK(y[2 * 32] == 0.5f);   // 2 bits, [-2, 1]: round(0.6) * 0.5
  make<semantics::exact>(true, false, rounding_mode::half_even)(xv, sv, 0.0f, 1.0f, yv);
  CHECK(y[0] == 0.25f);  // bipolar: +s for x >= 0
  CHECK(y[2 * 32] == 0.5f);
  const std::vector<float> bad{0.25f, 0.25f, 0.0f, 0.25f};
  std::fill(y.begin(), y.end(), 42.0f);
  check_rejected([&] {
    make<semantics::exact>(true, false, rounding_mode::half_even)(xv, lowbit::strided_view<const float>(bad.data(), {4, 1}),
                                                                  0.0f, 8.0f, yv);
  }, y, "scale[2, 0] = 0");
}

TEST_CASE("int_quant: per-channel parameters over a batch (x [N, C, H, W], scale [1, C, 1, 1]): every element's "
          "parameters, both routes",
          "[int_quant][route]") {
  // x [3, 5, 2, 20]; scale and zero point of the shapes below, against the
  // same call with both expanded to x's shape (one value per element: the
  // general route), bit for bit. Scale [1, 5, 1, 1] and zero point
  // [5, 1, 1] repeat every 5 rows (the row route over 3 blocks); a zero
  // point [3, 5, 1, 1] (every row) or [3, 1, 1, 1] (per image) with that
  // scale does not repeat with it (the general route).
  const std::size_t n = 3, c = 5, h = 2, w = 20, count = n * c * h * w;
  const std::vector<float> x = lowbit_test::mixed_values<float>(count, 43);
  const lowbit::shape xs{n, c, h, w};
  const std::vector<float> sv{0.05f, 0.25f, 3.0f, 0.125f, 1e-3f};
  std::vector<float> zv(n * c);
  for (std::size_t i = 0; i < zv.size(); ++i) zv[i] = static_cast<float>(int(i % 7) - 3);
  struct param {
    lowbit::shape shape;
    std::size_t (*index)(std::size_t img, std::size_t ch);  // into the values
  };
  const param scale_c{{1, c, 1, 1}, [](std::size_t, std::size_t ch) { return ch; }};
  const param zero_c{{c, 1, 1}, [](std::size_t, std::size_t ch) { return ch; }};
  const param zero_nc{{n, c, 1, 1}, [](std::size_t img, std::size_t ch) { return img * 5 + ch; }};
  const param zero_n{{n, 1, 1, 1}, [](std::size_t img, std::size_t) { return img; }};
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (const bool simd : {true, false})
      for (const param* z : {&zero_c, &zero_nc, &zero_n}) {
        CAPTURE(lowbit::to_string(m), simd, z->shape);
        const lowbit::detail::simd_scope path(simd);
        std::vector<float> se(count), ze(count);
        for (std::size_t i = 0; i < count; ++i) {
          const std::size_t img = i / (c * h * w), ch = i / (h * w) % c;
          se[i] = sv[scale_c.index(img, ch)];
          ze[i] = zv[z->index(img, ch)];
        }
        for (const bool exact : {false, true}) {
          std::vector<float> got(count, 42.0f), want(count, 42.0f);
          const lowbit::strided_view<const float> xv(x.data(), xs);
          const lowbit::strided_view<const float> sview(sv.data(), scale_c.shape), zview(zv.data(), z->shape);
          const lowbit::strided_view<const float> se_v(se.data(), xs), ze_v(ze.data(), xs);
          if (exact) {
            make<semantics::exact>(true, false, m)(xv, sview, zview, 4.0f, lowbit::strided_view<float>(got.data(), xs));
            make<semantics::exact>(true, false, m)(xv, se_v, ze_v, 4.0f, lowbit::strided_view<float>(want.data(), xs));
          } else {
            make(true, false, m)(xv, sview, zview, 4.0f, lowbit::strided_view<float>(got.data(), xs));
            make(true, false, m)(xv, se_v, ze_v, 4.0f, lowbit::strided_view<float>(want.data(), xs));
          }
          lowbit_test::require_same_bits(got, want);
        }
      }
  // A bad scale in one channel: the general route's message, nothing written.
  const std::vector<float> bad{0.25f, 0.25f, 0.0f, 0.25f, 0.25f};
  std::vector<float> y(count, 42.0f);
  check_rejected([&] {
    make<semantics::exact>(true, false, rounding_mode::half_even)(
        lowbit::strided_view<const float>(x.data(), xs), lowbit::strided_view<const float>(bad.data(), {1, c, 1, 1}),
        0.0f, 8.0f, lowbit::strided_view<float>(y.data(), xs));
  }, y, "scale[0, 2, 0, 0] = 0");
}

// ---- the checks of parameter tensors (detail::require_elements) -----------

namespace {

/// A per-channel bit width (which = 2) or exact scale (which = 0) of shape
/// [n, 1] holding `good` but `bad` at row j: the call names row j with its
/// value, whichever batch or tail j falls in (float and double batches
/// differ in width), and writes nothing; with every row good (or bad the
/// same as good) it runs.
template <class T, semantics S>
void check_int_parameter_rows(int which, T good, T bad, const char* needle) {
  const lowbit::int_quant<S> op;
  constexpr std::size_t w = 35;
  for (const std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(8), std::size_t(9), std::size_t(17),
                              std::size_t(40)})
    for (std::size_t j = 0; j <= n; ++j) {  // j == n: none bad
      CAPTURE(n, j, show(static_cast<double>(bad)));
      std::vector<T> x(n * w), y(n * w, T(3));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = T(0.01) * static_cast<T>(i % 97) - T(0.4);
      std::vector<T> p(n, good);
      if (j < n) p[j] = bad;
      const strided_view<const T> xv(x.data(), {n, w});
      const strided_view<const T> pv(p.data(), {n, 1});
      const strided_view<T> yv(y.data(), {n, w});
      auto call = [&] {
        if (which == 0)
          op(xv, pv, T(0), T(8), yv);
        else
          op(xv, T(0.25), T(0), pv, yv);
      };
      if (j < n && !(bad == good)) {  // bad == good: the edge values, none rejected
        lowbit_test::require_rejected_untouched(
            y, std::string(which == 0 ? "scale[" : "bitwidth[") + std::to_string(j) + ", 0] = ", call);
        lowbit_test::require_rejected_untouched(y, needle, call);
      } else {
        REQUIRE_NOTHROW(call());
      }
    }
}

}  // namespace

TEST_CASE("int_quant names the invalid element of a per-channel scale or bit width wherever it falls",
          "[int_quant]") {
  const double dinf = std::numeric_limits<double>::infinity(), dnan = std::numeric_limits<double>::quiet_NaN();
  for (const float bad : {0.5f, 0.0f, 33.0f, -4.0f, 4.5f, inf, nan_f})
    check_int_parameter_rows<float, semantics::reference>(2, 4.0f, bad, "expected an integer from 1 to 32");
  for (const double bad : {0.5, 54.0, 7.25, dinf, dnan})
    check_int_parameter_rows<double, semantics::reference>(2, 8.0, bad, "expected an integer from 1 to 53");
  for (const float bad : {0.0f, -0.0f, -1.0f, inf, nan_f})
    check_int_parameter_rows<float, semantics::exact>(0, 0.125f, bad, "expected a finite value > 0");
  for (const double bad : {0.0, -2.0, dinf, dnan})
    check_int_parameter_rows<double, semantics::exact>(0, 0.125, bad, "expected a finite value > 0");
  // The edges pass: 1 and the widest width, the smallest and largest scales.
  for (const float good : {1.0f, 32.0f}) check_int_parameter_rows<float, semantics::reference>(2, good, good, "");
  for (const double good : {1.0, 53.0}) check_int_parameter_rows<double, semantics::reference>(2, good, good, "");
  for (const double good : {std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max()})
    check_int_parameter_rows<double, semantics::exact>(0, good, good, "");
}
