// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/float_quant.hpp.
#include <lowbit/float_quant.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <variant>
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
using lowbit_test::f32;
using lowbit_test::show;
using lowbit_test::check_rejected;
using lowbit_test::inf;
using lowbit_test::nan_f;
using lowbit_test::require_same_values;
using lowbit_test::same_value;

namespace {

constexpr float flt_max = std::numeric_limits<float>::max();

struct fmt {
  float E, m, bias, max_val;
};
constexpr fmt e4m3{4, 3, 7, 448};       // OCP FP8 E4M3FN
constexpr fmt e4m3_raw{4, 3, 7, inf};   // no cap: 480
constexpr fmt e5m2{5, 2, 15, 57344};    // OCP FP8 E5M2
constexpr fmt e5m2_raw{5, 2, 15, inf};  // no cap: 114688
constexpr fmt e2m1{2, 1, 1, 6};         // OCP FP4 E2M1
constexpr fmt e3m2{3, 2, 3, 28};        // OCP FP6 E3M2
constexpr fmt e8m23{8, 23, 127, flt_max};
constexpr fmt e8m0{8, 0, 127, 0x1p127f};

/// 0 saturate, 1 has_inf, 2 has_nan.
template <semantics S = semantics::reference>
lowbit::float_quant<S> make(rounding_mode m, int ov = 0) {
  lowbit::float_quant<S> q;
  q.rounding = m;
  q.saturation = ov == 0;
  q.has_inf = ov == 1;
  q.has_nan = ov == 2;
  return q;
}

template <semantics S>
float fq1(float x, const fmt& f, rounding_mode m, int ov = 0, float scale = 1.0f) {
  float y = 12345.0f;
  make<S>(m, ov)(std::span<const float>(&x, 1), scale, f.E, f.m, f.bias, f.max_val, std::span<float>(&y, 1));
  return y;
}

/// QONNX's seven modes and lowbit's deterministic extensions (ROUND_TO_ODD,
/// DPU), which the oracles below define too.
const std::vector<rounding_mode> deterministic_modes = [] {
  std::vector<rounding_mode> v(lowbit::all_rounding_modes.begin(), lowbit::all_rounding_modes.end());
  v.insert(v.end(), lowbit::extension_rounding_modes.begin(), lowbit::extension_rounding_modes.end());
  return v;
}();

// ---- independent oracles (double arithmetic, std library) --------------------------

/// R in the exact semantics, on a double that is exactly representable.
double round_exact(double y, rounding_mode m) {
  switch (m) {
    case rounding_mode::half_even: return std::nearbyint(y);
    case rounding_mode::ceil: return std::ceil(y);
    case rounding_mode::floor: return std::floor(y);
    case rounding_mode::down: return std::trunc(y);
    case rounding_mode::up: return std::copysign(std::ceil(std::fabs(y)), y);
    case rounding_mode::half_up: return std::round(y);
    case rounding_mode::half_down: {
      const double t = std::trunc(y);
      return std::fabs(y - t) > 0.5 ? t + std::copysign(1.0, y) : t;
    }
    case rounding_mode::odd: {
      const double f = std::floor(y);
      return f == y ? y : std::fmod(f, 2.0) == 0.0 ? f + 1 : f;
    }
    case rounding_mode::dpu: {
      const double f = std::floor(y);
      return y < 0 && y - f == 0.5 ? std::ceil(y) : std::nearbyint(y);
    }
    case rounding_mode::stochastic: break;  // needs a draw: tests/test_stochastic.cpp
  }
  return 0;
}

/// The exact semantics (FORMAT.md rule 7), in doubles (every step exact).
float oracle_exact(float X, float scale, const fmt& f, rounding_mode mode, int ov) {
  const float x = X / scale;
  const double fmt_max = (2.0 - std::ldexp(1.0, -int(f.m))) * std::ldexp(1.0, (1 << int(f.E)) - 1 - int(f.bias));
  const double mx = std::min(fmt_max, double(f.max_val));
  auto overflow = [&](double sgn) -> double {
    if (ov == 0) return std::copysign(mx, sgn);
    if (ov == 1) return std::copysign(double(inf), sgn);
    return nan_f;
  };
  double q;
  if (std::isnan(x)) return nan_f;
  if (std::isinf(x)) {
    q = overflow(x);
  } else if (x == 0) {
    q = x;
  } else {
    int ex;
    std::frexp(double(x), &ex);  // |x| = f * 2^ex, f in [0.5, 1)
    const int e = ex - 1;
    const int u = std::max(e - int(f.m), 1 - int(f.bias) - int(f.m));
    q = std::ldexp(round_exact(std::ldexp(double(x), -u), mode), u);
    if (q == 0) q = std::copysign(0.0, double(x));
    if (std::fabs(q) > mx) q = overflow(x);
  }
  return float(q) * scale;
}

/// numpy's formulas in float32 (QONNX), the sign from np.sign.
float round_numpy(float y, rounding_mode m) {
  auto sgn = [](float v) { return v > 0 ? 1.0f : v < 0 ? -1.0f : std::isnan(v) ? v : 0.0f; };
  switch (m) {
    case rounding_mode::half_even: return std::nearbyint(y);
    case rounding_mode::ceil: return std::ceil(y);
    case rounding_mode::floor: return std::floor(y);
    case rounding_mode::down: return std::trunc(y);
    case rounding_mode::up: return sgn(y) * std::ceil(std::fabs(y));
    case rounding_mode::half_up: {
      const float h = std::fabs(y) + 0.5f;
      return sgn(y) * std::floor(h);
    }
    case rounding_mode::half_down: {
      const float h = std::fabs(y) - 0.5f;
      return sgn(y) * std::ceil(h);
    }
    case rounding_mode::odd:  // lowbit's extensions: one definition in both semantics
    case rounding_mode::dpu: return static_cast<float>(round_exact(y, m));
    case rounding_mode::stochastic: break;  // needs a draw: tests/test_stochastic.cpp
  }
  return 0;
}

/// QONNX's float32 evaluation, step by step (log2 in double rounded to float32).
float oracle_reference(float X, float scale, const fmt& f, rounding_mode mode, int ov) {
  const float x = X / scale;
  const float a = std::fabs(x) + std::numeric_limits<float>::min();
  const float l = static_cast<float>(std::log2(double(a)));
  float e = std::floor(l) - f.m;
  const float emin = 1.0f - f.bias - f.m;
  e = std::isnan(e) ? e : std::max(e, emin);
  const float p = static_cast<float>(std::exp2(double(e)));
  const float y = x / p;
  const float r = round_numpy(y, mode);
  float q = r * p;
  const double fmt_max = (2.0 - std::ldexp(1.0, -int(f.m))) * std::ldexp(1.0, (1 << int(f.E)) - 1 - int(f.bias));
  const float mx = float(std::min(fmt_max, double(f.max_val)));
  const bool is_inf = std::isinf(q), pos = q > mx, neg = q < -mx;
  if (q < -mx) q = -mx;
  if (q > mx) q = mx;
  if (ov == 1) {
    if (pos) q = inf;
    if (neg) q = -inf;
  } else if (ov == 2) {
    if (pos || neg || is_inf) q = nan_f;
  }
  return q * scale;
}

std::vector<float> interesting_values(std::size_t n, std::uint32_t seed) {
  std::vector<float> v = lowbit_test::mixed_values<float>(n, seed);
  std::mt19937 rng(seed + 1);
  for (std::size_t i = 0; i < n; i += 3) {
    // Any bit pattern (all binades, subnormals, near powers of two).
    std::uint32_t b = rng();
    if (i % 2 == 0) b = (b & 0xff800000u) | (0x7fffffu - (rng() % 64));  // just below 2^k
    v[i] = f32(b);
  }
  return v;
}

const fmt test_formats[] = {e4m3, e4m3_raw, e5m2, e5m2_raw, e2m1, e3m2, e8m23, e8m0,
                            fmt{4, 3, 7, 300}, fmt{3, 0, 1, inf}, fmt{5, 10, 15, inf} /* fp16 */,
                            fmt{8, 7, 127, flt_max} /* bf16 */, fmt{2, 3, -3, 1000}};

}  // namespace

// ---- known values ---------------------------------------------------------------

TEST_CASE("OCP presets: E4M3FN, E5M2, E2M1", "[float_quant]") {
  for (semantics s : {semantics::reference, semantics::exact}) {
    auto q = [&](float x, const fmt& f, int ov = 0, rounding_mode m = rounding_mode::half_even) {
      return s == semantics::exact ? fq1<semantics::exact>(x, f, m, ov) : fq1<semantics::reference>(x, f, m, ov);
    };
    // E4M3FN: max 448, overflow decided after rounding.
    CHECK(q(448.0f, e4m3) == 448.0f);
    CHECK(q(464.0f, e4m3) == 448.0f);        // rounds (ties to even) to 448
    CHECK(q(464.0f, e4m3, 2) == 448.0f);     // ... so it does not overflow
    CHECK(q(470.0f, e4m3) == 448.0f);        // rounds to 480 > 448: saturates
    CHECK(std::isnan(q(470.0f, e4m3, 2)));   // has_nan
    CHECK(q(470.0f, e4m3, 1) == inf);        // has_inf
    CHECK(q(-470.0f, e4m3, 1) == -inf);
    CHECK(q(-1000.0f, e4m3) == -448.0f);
    CHECK(q(0.3f, e4m3) == 0.3125f);
    CHECK(q(0x1p-9f, e4m3) == 0x1p-9f);      // smallest subnormal
    CHECK(q(0x1p-10f, e4m3) == 0.0f);        // tie to even: 0
    CHECK(q(0x1.8p-10f, e4m3) == 0x1p-9f);
    CHECK(q(1000.0f, e4m3_raw) == 480.0f);   // no code reserved
    // E5M2.
    CHECK(q(57344.0f, e5m2) == 57344.0f);
    CHECK(q(1e6f, e5m2) == 57344.0f);
    CHECK(q(1e6f, e5m2_raw) == 114688.0f);
    CHECK(q(0x1p-16f, e5m2) == 0x1p-16f);
    // E2M1: {0, 0.5, 1, 1.5, 2, 3, 4, 6}.
    CHECK(q(6.0f, e2m1) == 6.0f);
    CHECK(q(100.0f, e2m1) == 6.0f);
    CHECK(q(2.5f, e2m1) == 2.0f);
    CHECK(q(3.5f, e2m1) == 4.0f);
    CHECK(q(5.0f, e2m1) == 4.0f);
    CHECK(q(0.75f, e2m1) == 1.0f);
    CHECK(q(0.25f, e2m1) == 0.0f);
    CHECK(q(-0.25f, e2m1) == -0.0f);
    CHECK(bits(q(-0.25f, e2m1)) == bits(-0.0f));
    // Scale: Y = q(X / s) * s.
    CHECK((s == semantics::exact ? fq1<semantics::exact>(3.0f, e2m1, rounding_mode::half_even, 0, 0.5f)
                                 : fq1<semantics::reference>(3.0f, e2m1, rounding_mode::half_even, 0, 0.5f)) ==
          3.0f);
  }
}

TEST_CASE("reference: +-inf gives x86's default NaN, 0xffc00000, on every architecture", "[float_quant]") {
  // x / 2^e = inf / inf is an invalid operation: x86 gives -NaN, AArch64
  // +NaN. The kernel makes x86's explicit, so that the determinism test's
  // aarch64 build gives the same bits; SIMD body, tail and scalar path.
  std::vector<float> x(37);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i % 2) ? inf : -inf;
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (int ov : {0, 1, 2})
      for (bool simd : {true, false}) {
        const lowbit::detail::simd_scope scope(simd);
        std::vector<float> y(x.size(), 1.0f);
        make<semantics::reference>(m, ov)(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y);
        for (std::size_t i = 0; i < y.size(); ++i) {
          INFO("mode " << lowbit::to_string(m) << ", overflow rule " << ov << ", simd " << simd << ", i " << i);
          CHECK(std::bit_cast<std::uint32_t>(y[i]) == 0xffc00000u);
        }
      }
}

TEST_CASE("QUIRKS.md examples in both semantics", "[float_quant]") {
  using S = semantics;
  const auto R = rounding_mode::half_even;
  // 1. HALF_UP on 0.49999997.
  CHECK(fq1<S::reference>(0.249999985f, e2m1, rounding_mode::half_up, 0, 1.0f) == 0.5f);
  CHECK(fq1<S::exact>(0.249999985f, e2m1, rounding_mode::half_up, 0, 1.0f) == 0.0f);
  // 3. HALF_DOWN on E8M23.
  CHECK(fq1<S::reference>(1.0f + 0x1p-23f, e8m23, rounding_mode::half_down) == 1.0f);
  CHECK(fq1<S::exact>(1.0f + 0x1p-23f, e8m23, rounding_mode::half_down) == 1.0f + 0x1p-23f);
  CHECK(fq1<S::reference>(0.49999997f, e8m23, rounding_mode::half_down) == 0.49999994f);
  CHECK(fq1<S::exact>(0.49999997f, e8m23, rounding_mode::half_down) == 0.49999997f);
  // 6. +-inf and overflowing X/scale.
  for (int ov : {0, 1, 2}) {
    CHECK(std::isnan(fq1<S::reference>(inf, e4m3, R, ov)));
    CHECK(std::isnan(fq1<S::reference>(-inf, e4m3, R, ov)));
    CHECK(std::isnan(fq1<S::reference>(flt_max, e4m3, R, ov, 0.5f)));
  }
  CHECK(fq1<S::exact>(inf, e4m3, R, 0) == 448.0f);
  CHECK(fq1<S::exact>(-inf, e4m3, R, 0) == -448.0f);
  CHECK(fq1<S::exact>(inf, e4m3, R, 1) == inf);
  CHECK(std::isnan(fq1<S::exact>(inf, e4m3, R, 2)));
  CHECK(fq1<S::exact>(flt_max, e4m3, R, 0, 0.5f) == 224.0f);  // 448 * 0.5
  // 7. float32 log2 just below a power of two.
  CHECK(fq1<S::reference>(f32(0x3cffffff), e4m3, rounding_mode::floor) == 0.02734375f);
  CHECK(fq1<S::exact>(f32(0x3cffffff), e4m3, rounding_mode::floor) == 0.029296875f);
  CHECK(fq1<S::reference>(255.99998f, e4m3, rounding_mode::floor) == 224.0f);
  CHECK(fq1<S::exact>(255.99998f, e4m3, rounding_mode::floor) == 240.0f);
  CHECK(fq1<S::reference>(255.99998f, e4m3, R) == 256.0f);  // nearest modes unaffected
  // 8. + FLT_MIN with bias 127.
  CHECK(fq1<S::reference>(0x1p-126f, e8m0, R) == 0.0f);
  CHECK(fq1<S::exact>(0x1p-126f, e8m0, R) == 0x1p-126f);
  CHECK(fq1<S::reference>(f32(0x007fffff), e8m0, R) == 0.0f);
  CHECK(fq1<S::exact>(f32(0x007fffff), e8m0, R) == 0x1p-126f);
  // 9. has_subnormal has no effect.
  auto q = make(R);
  q.has_subnormal = false;
  float x = 0x1p-9f, y = 0;
  q(std::span<const float>(&x, 1), 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, std::span<float>(&y, 1));
  CHECK(y == 0x1p-9f);
}

TEST_CASE("zero signs and NaN", "[float_quant]") {
  using S = semantics;
  for (rounding_mode m : lowbit::all_rounding_modes) {
    INFO(lowbit::to_string(m));
    CHECK(bits(fq1<S::exact>(-0.0f, e4m3, m)) == bits(-0.0f));
    CHECK(bits(fq1<S::exact>(0.0f, e4m3, m)) == bits(0.0f));
    CHECK(std::isnan(fq1<S::exact>(nan_f, e4m3, m)));
    CHECK(std::isnan(fq1<S::reference>(nan_f, e4m3, m)));
    CHECK(bits(fq1<S::reference>(0.3f, e4m3, m, 0, 1.0f)) == bits(oracle_reference(0.3f, 1.0f, e4m3, m, 0)));
  }
  CHECK(bits(fq1<S::reference>(0.0f, e4m3, rounding_mode::half_down)) == bits(-0.0f));  // numpy sign
  CHECK(bits(fq1<S::reference>(-0.0f, e4m3, rounding_mode::up)) == bits(0.0f));
}

// ---- against the independent oracles ------------------------------------------------

TEST_CASE("both semantics equal independent step-by-step oracles", "[float_quant][oracle]") {
  const std::vector<float> x = interesting_values(4000, 5);
  std::vector<float> y(x.size());
  for (const fmt& f : test_formats)
    for (rounding_mode m : deterministic_modes)
      for (int ov : {0, 1, 2})
        for (float scale : {1.0f, 0.37f, 3.0f}) {
          INFO("E" << f.E << "M" << f.m << " bias " << f.bias << " max " << f.max_val << " "
                   << lowbit::to_string(m) << " ov " << ov << " scale " << scale);
          std::vector<float> want(x.size());
          for (std::size_t i = 0; i < x.size(); ++i) want[i] = oracle_reference(x[i], scale, f, m, ov);
          make(m, ov)(x, scale, f.E, f.m, f.bias, f.max_val, y);
          require_same_values(y, want);
          for (std::size_t i = 0; i < x.size(); ++i) want[i] = oracle_exact(x[i], scale, f, m, ov);
          make<semantics::exact>(m, ov)(x, scale, f.E, f.m, f.bias, f.max_val, y);
          require_same_values(y, want);
        }
}

TEST_CASE("reference semantics on degenerate scales and formats equal the oracle", "[float_quant][oracle]") {
  const std::vector<float> x = interesting_values(2000, 9);
  std::vector<float> y(x.size()), want(x.size());
  const fmt odd[] = {e4m3, fmt{4, 3, 150, 448}, fmt{4, 3, 140, inf}, fmt{2, 3, -3, 1000}, fmt{8, 23, 127, inf},
                     fmt{3, 30, 3, inf}, fmt{4, 3, 7, 0.5f},
                     // Wide mantissas on the fast path (emin in [-126, 126]):
                     // the kernel caps m at 255 in its exponent-field form.
                     fmt{3, 100, -50, inf}, fmt{3, 200, -100, inf}, fmt{3, 254, -200, inf}, fmt{3, 255, -250, inf},
                     // emin = -100 (the per-mode fast path reads |x| for
                     // |x| + FLT_MIN) and -101, -126 (batches with a lane
                     // below 2^-101 declined to the scalar loop, which adds it).
                     fmt{8, 3, 98, inf}, fmt{8, 3, 99, inf}, fmt{8, 3, 124, inf}};
  for (const fmt& f : odd)
    for (rounding_mode m : deterministic_modes)
      for (int ov : {0, 1, 2})
        for (float scale : {0.0f, -0.0f, -0.5f, inf, -inf, nan_f, 1e-40f, 1e30f, 1.0f}) {
          INFO("E" << f.E << "M" << f.m << " bias " << f.bias << " max " << f.max_val << " "
                   << lowbit::to_string(m) << " ov " << ov << " scale " << scale);
          for (std::size_t i = 0; i < x.size(); ++i) want[i] = oracle_reference(x[i], scale, f, m, ov);
          make(m, ov)(x, scale, f.E, f.m, f.bias, f.max_val, y);
          require_same_values(y, want);
        }
}

TEST_CASE("reference ROUND saturating to a max on the grid (the magic-number kernel) equals the oracle, m = 1 to 22",
          "[float_quant][oracle]") {
  // ROUND with saturation to a max on the format's grid rounds min(|x|,
  // max) by the magic number and reads the exponent from |x|'s bits without
  // declining the tops of binades, where QONNX's float32 log2 rounds up:
  // both exponents give the same q for m <= 15 (float_quant.hpp, eval_magic);
  // m = 16 to 22 keep the fast path with its decline. Inputs within 80 ulps
  // of the top and bottom of every binade of the format's range, ties of its
  // steps, values beyond max, tiny values (below 2^-101, where the reference
  // adds FLT_MIN first), zeros, inf and NaN; scales 1 and 0.5 (multiplied:
  // x / scale keeps the tops of binades) and 0.375 (divided).
  const lowbit::detail::simd_scope simd(true);
  for (float m = 1; m <= 22; ++m)
    for (const fmt& f : {fmt{5, m, 15, inf}, fmt{8, m, 100, 448}, fmt{3, m, 3, inf}}) {
      std::vector<float> x;
      for (int k = -126; k <= 20; ++k)
        for (std::uint32_t j = 0; j < 80; ++j) {
          const std::uint32_t be = static_cast<std::uint32_t>(k + 127) << 23;
          x.push_back(f32(be | (0x7fffffu - j)));
          x.push_back(f32(0x80000000u | be | j));
        }
      for (int k = -20; k <= 20; ++k)  // ties: odd multiples of half a step
        for (int i = 1; i < 40; i += 2) x.push_back(std::ldexp(static_cast<float>(i), k));
      for (std::uint32_t b = 1; b < (26u << 23); b += 999331) x.push_back(f32(b));  // below 2^-101
      for (float v : {0.0f, -0.0f, inf, -inf, nan_f, 1e30f, -448.5f, 3e38f, flt_max}) x.push_back(v);
      std::vector<float> y(x.size()), want(x.size());
      for (float scale : {1.0f, 0.5f, 0.375f}) {
        INFO("E" << f.E << "M" << f.m << " bias " << f.bias << " max " << f.max_val << " scale " << scale);
        for (std::size_t i = 0; i < x.size(); ++i)
          want[i] = oracle_reference(x[i], scale, f, rounding_mode::half_even, 0);
        make(rounding_mode::half_even)(x, scale, f.E, f.m, f.bias, f.max_val, y);
        require_same_values(y, want);
      }
    }
}

TEST_CASE("exhaustive over all float32 near powers of two and in E4M3 range", "[float_quant][oracle]") {
  // Every float with a mantissa within 64 ulps of the top of its binade, both signs.
  std::vector<float> x;
  for (std::uint32_t be = 0; be < 255; ++be)
    for (std::uint32_t j = 0; j < 64; ++j) {
      x.push_back(f32((be << 23) | (0x7fffffu - j)));
      x.push_back(f32(0x80000000u | (be << 23) | j));
    }
  std::vector<float> y(x.size()), want(x.size());
  for (const fmt& f : {e4m3, e8m23, e8m0, e5m2})
    for (rounding_mode m : deterministic_modes) {
      INFO("E" << f.E << "M" << f.m << " " << lowbit::to_string(m));
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = oracle_reference(x[i], 1.0f, f, m, 0);
      make(m)(x, 1.0f, f.E, f.m, f.bias, f.max_val, y);
      require_same_values(y, want);
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = oracle_exact(x[i], 1.0f, f, m, 0);
      make<semantics::exact>(m)(x, 1.0f, f.E, f.m, f.bias, f.max_val, y);
      require_same_values(y, want);
    }
}

TEST_CASE("reference: tiny inputs, where |x| + FLT_MIN is not |x|, at the fast path's smallest emin",
          "[float_quant][oracle]") {
  // The per-mode kernels' fast path reads |x|'s exponent for that of
  // fl(|x| + FLT_MIN), which differ below 2^-101: for emin >= -100 e = emin
  // either way, and for a smaller emin a batch with a lane below 2^-101 is
  // declined to the scalar loop, which adds FLT_MIN. Every 61st float below
  // 2^-95 (subnormals, the ties of |x| + FLT_MIN, tops of binades), both
  // signs, on emin = -100, -101 and -126, with the SIMD path on; with max
  // 448 (on the grid) ROUND takes the magic-number kernel, which declines
  // the same batches.
  std::vector<float> x;
  for (std::uint32_t b = 0; b < (32u << 23); b += 61) {
    x.push_back(f32(b));
    x.push_back(f32(b | 0x80000000u));
  }
  std::vector<float> y(x.size()), want(x.size());
  const lowbit::detail::simd_scope simd(true);
  for (const fmt& f : {fmt{8, 3, 98, inf}, fmt{8, 3, 99, inf}, fmt{8, 3, 124, inf}, fmt{8, 1, 100, inf},
                        fmt{8, 3, 124, 448}})
    for (rounding_mode m : {rounding_mode::half_even, rounding_mode::floor, rounding_mode::up}) {
      INFO("E" << f.E << "M" << f.m << " bias " << f.bias << " " << lowbit::to_string(m));
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = oracle_reference(x[i], 1.0f, f, m, 0);
      make(m)(x, 1.0f, f.E, f.m, f.bias, f.max_val, y);
      require_same_values(y, want);
    }
}

// ---- SIMD, broadcasting, views ----------------------------------------------------------

template <semantics S>
void simd_equals_scalar() {
  constexpr std::size_t L = lowbit::detail::batch<float>::size;
  const std::vector<float> src = interesting_values(4 * L + 64, 17);
  const float sentinel = 777.0f;
  for (rounding_mode m : deterministic_modes)
    for (int ov : {0, 1, 2})
      for (std::size_t n = 0; n <= 2 * L + 1; ++n)
        for (std::size_t mis = 0; mis < 4; ++mis) {
          INFO(lowbit::to_string(m) << " ov " << ov << " n " << n << " misalignment " << mis);
          auto op = make<S>(m, ov);
          std::vector<float> a(n + mis + 2, sentinel), b(n + mis + 2, sentinel);
          std::span<const float> xs(src.data() + mis, n);
          const lowbit::detail::simd_scope simd_347(true);  // the SIMD body or the scalar kernels
          op(xs, 0.37f, 4.0f, 3.0f, 7.0f, 448.0f, std::span<float>(a.data() + mis, n));
          const lowbit::detail::simd_scope simd_349(false);  // the SIMD body or the scalar kernels
          op(xs, 0.37f, 4.0f, 3.0f, 7.0f, 448.0f, std::span<float>(b.data() + mis, n));
          require_same_values(a, b);
          CHECK(bits(a[mis + n]) == bits(sentinel));
          // Per-element formats (loaded parameter group).
          std::vector<float> mb(n), eb(n), bias(n), mv(n);
          for (std::size_t i = 0; i < n; ++i) {
            const fmt& f = test_formats[i % (sizeof test_formats / sizeof test_formats[0])];
            eb[i] = f.E;
            mb[i] = f.m;
            bias[i] = f.bias;
            mv[i] = f.max_val;
          }
          const lowbit::detail::simd_scope simd_362(true);  // the SIMD body or the scalar kernels
          op(xs, 1.0f, eb, mb, bias, mv, std::span<float>(a.data() + mis, n));
          const lowbit::detail::simd_scope simd_364(false);  // the SIMD body or the scalar kernels
          op(xs, 1.0f, eb, mb, bias, mv, std::span<float>(b.data() + mis, n));
          require_same_values(a, b);
        }
}

TEST_CASE("float_quant: SIMD body equals the scalar path for every tail and misalignment", "[float_quant][simd]") {
  simd_equals_scalar<semantics::reference>();
  simd_equals_scalar<semantics::exact>();
}

// detail::add_directed, the exact fast kernel's magic number in the six
// directed modes on AVX-512: the sum of two floats rounded toward zero, up
// and down, against the round-to-nearest sum and its exact error (TwoSum):
// on random pairs of every sign and relative size, on ties and on exact
// sums, whatever the rounding mode of the environment would be.
TEST_CASE("add_directed rounds the exact sum toward zero, up and down", "[float_quant][simd]") {
  namespace d = lowbit::detail;
  using B = d::batch<float>;
  if constexpr (!d::has_directed_add<B>) {
    SUCCEED("no AVX-512 in this build: the kernels use their other form");
  } else {
    constexpr std::size_t L = B::size;
    std::mt19937 rng(5);
    std::vector<float> a, b;
    for (int i = 0; i < 4096; ++i) {
      const float x = std::ldexp(static_cast<float>(rng() & 0xffffff) * ((rng() & 1) ? 1.0f : -1.0f),
                                 static_cast<int>(rng() % 40) - 20);
      const float y = std::ldexp(static_cast<float>(rng() & 0xffffff) * ((rng() & 1) ? 1.0f : -1.0f),
                                 static_cast<int>(rng() % 40) - 20);
      a.push_back(x);
      b.push_back(y);
    }
    for (float x : {1.0f, 0x1p23f, 0x1.000002p0f, 0.0f, -0.0f, 0x1p-149f, -0x1p-149f})
      for (float y : {0x1p-24f, -0x1p-24f, 0x1p-25f, 0x1p23f, 0.0f, -0.0f, -1.0f, 0x1p-149f}) {
        a.push_back(x);
        b.push_back(y);
      }
    while (a.size() % L != 0) {
      a.push_back(1.0f);
      b.push_back(0x1p-30f);
    }
    std::size_t inexact = 0;
    for (std::size_t i = 0; i < a.size(); i += L) {
      const B x = B::load_unaligned(a.data() + i), y = B::load_unaligned(b.data() + i);
      const B rz = d::add_directed<d::direction::toward_zero>(x, y);
      const B ru = d::add_directed<d::direction::up>(x, y);
      const B rd = d::add_directed<d::direction::down>(x, y);
      for (std::size_t j = 0; j < L; ++j) {
        const float p = a[i + j], q = b[i + j];
        const float s = p + q, bb = s - p, e = (p - (s - bb)) + (q - bb);  // p + q = s + e exactly
        const float up = e > 0 ? std::nextafter(s, inf) : s, down = e < 0 ? std::nextafter(s, -inf) : s;
        const float zero = s > 0 || (s == 0 && e > 0) ? down : up;
        inexact += e != 0;
        INFO(show(p) << " + " << show(q));
        // An exact zero sum is +0 in every direction but down (IEEE 754 6.3).
        const float zsign = (s == 0 && e == 0 && !(std::signbit(p) && std::signbit(q))) ? 0.0f : s;
        CHECK(bits(ru.get(j)) == bits(e == 0 ? zsign : up));
        CHECK(bits(rz.get(j)) == bits(e == 0 ? zsign : zero));
        CHECK(bits(rd.get(j)) == bits(e == 0 ? (s == 0 && std::signbit(p) != std::signbit(q) ? -0.0f : s) : down));
      }
    }
    CHECK(inexact > 1000);
  }
}

TEST_CASE("fused_multiply_add rounds once; nextup_or_nan gives the next float and keeps a NaN's bits",
          "[float_quant][simd]") {
  namespace d = lowbit::detail;
  using B = d::batch<float>;
  constexpr std::size_t L = B::size;
  if constexpr (!d::has_fused_fma<B>) {
    SUCCEED("no fused multiply-add in this build: the kernels use their other form");
  } else {
    // a b + c against the same in double (exact for these products, one
    // rounding to float): (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24, which a product
    // rounded first loses.
    const float a[] = {1.0f + 0x1p-12f, 3.0f, 0x1.fffffep0f, 1e-30f, -7.5f, 0.0f};
    const float b[] = {1.0f + 0x1p-12f, 1.0f - 0x1p-24f, 0x1.fffffep0f, 1e-9f, 0.1f, -0.0f};
    const float c[] = {-1.0f, 0x1p23f, -4.0f, 1e-39f, 0.75f, 0.0f};
    for (std::size_t i = 0; i < std::size(a); ++i) {
      const float want = static_cast<float>(static_cast<double>(a[i]) * b[i] + c[i]);
      INFO(show(a[i]) << " * " << show(b[i]) << " + " << show(c[i]));
      CHECK(bits(d::fused_multiply_add(B(a[i]), B(b[i]), B(c[i])).get(L - 1)) == bits(want));
    }
    CHECK(d::fused_multiply_add(B(1.0f + 0x1p-12f), B(1.0f + 0x1p-12f), B(-1.0f)).get(0) == 0x1p-11f + 0x1p-24f);
    // The next float for every a >= +0 (subnormals, binade tops, max, inf
    // to NaN is not asked), a NaN's bits unchanged (0x7fffffff included,
    // which plus one would be -0).
    for (std::uint32_t u : {0x00000000u, 0x00000001u, 0x007fffffu, 0x00800000u, 0x3f7fffffu, 0x3f800000u,
                            0x4b7fffffu, 0x7f7ffffeu}) {
      INFO(std::hex << u);
      CHECK(bits(d::nextup_or_nan(B(f32(u))).get(0)) == u + 1);
    }
    for (std::uint32_t u : {0x7fc00000u, 0x7fc00001u, 0x7fffffffu, 0x7f800001u, 0xffc00000u, 0xffffffffu}) {
      INFO(std::hex << u);
      CHECK(bits(d::nextup_or_nan(B(f32(u))).get(L - 1)) == u);
    }
  }
}

// The exact semantics' fast kernel (a constant format in its range) against
// the general kernel, batch and scalar forms, on formats at the edges of
// the range (m 0, 21 and 22, emin -126 and 0, max just below 2^(104 + m), max
// off the grid) and on values at every edge (zeros, subnormals, ties near
// max and near 2^k, infinities, NaNs with payloads), in every mode and
// overflow rule, and with a max on the grid also in its `clamped` form (the
// input bounded by max, no overflow step); then through the operator
// against the oracle.
TEST_CASE("exact: the fast kernel equals the general kernel and the oracle at the edges of its range",
          "[float_quant][simd][oracle]") {
  namespace d = lowbit::detail;
  using B = d::batch<float>;
  constexpr std::size_t L = B::size;
  struct edge_format {
    float m, emin, max;
    bool on_grid;
  };
  const edge_format formats[] = {{3, -9, 448, true},          {2, -16, 57344, true},
                                 {1, -1, 6, true},            {0, -126, 1.5f, false},
                                 {22, -126, 0x1.8p+125f, true}, {3, 0, 300, false},
                                 {3, -9, 0x1.ep+106f, true},  {0, 0, 0x1p+103f, true},
                                 {5, -126, 0x1.8p-120f, true}, {22, 0, 0x1.fffffep+125f, false},
                                 {3, -9, 464, false},         {3, -9, 0x1p-9f, true},
                                 {3, -9, 0x1.8p-9f, false},   {3, -9, 0x1.cp-7f, true},
                                 {21, -126, 0x1.fffff8p+124f, true}, {21, -3, 0x1.fffffep+10f, false}};
  std::vector<float> v = lowbit_test::mixed_values<float>(64 * L, 41);
  std::mt19937 rng(43);
  for (std::size_t i = 0; i < v.size(); i += 2) v[i] = f32(static_cast<std::uint32_t>(rng()));
  for (const edge_format& f : formats)
    for (float c : {f.max, std::ldexp(1.0f, std::ilogb(f.max) + 1), std::ldexp(1.0f, static_cast<int>(f.emin))})
      for (int k = -3; k <= 3; ++k)
        for (float sgn : {1.0f, -1.0f}) {
          const float t = f32(static_cast<std::uint32_t>(static_cast<std::int64_t>(bits(c)) + k));
          v.push_back(sgn * t);
          v.push_back(sgn * (t + std::ldexp(1.0f, std::ilogb(t) - static_cast<int>(f.m) - 1)));  // a tie
        }
  for (float s : {0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1p-126f, -0x1.fffffcp-127f, inf, -inf, flt_max, -flt_max,
                  f32(0x7fc00001u), f32(0xffc12345u), f32(0x7f800001u), f32(0xff80abcdu)})
    v.push_back(s);
  while (v.size() % L != 0) v.push_back(0.75f);
  for (const edge_format& f : formats) {
    std::int32_t m_int = 0, ebmin = 0;
    float bound = 0;
    bool on_grid = !f.on_grid;
    INFO("m " << f.m << " emin " << f.emin << " max " << show(f.max));
    REQUIRE(d::exact_fast_range(f.m, f.emin, f.max, m_int, ebmin, bound, on_grid));
    REQUIRE(on_grid == f.on_grid);
    for (float scale : {1.0f, 0.37f})
      for (d::fq_overflow ov : {d::fq_overflow::saturate, d::fq_overflow::infinity, d::fq_overflow::nan})
        for (bool clamped : {false, true}) {
          // The clamped form exists for a saturating max on the grid only.
          if (clamped && !(on_grid && ov == d::fq_overflow::saturate)) continue;
          for (rounding_mode mode : deterministic_modes)
            d::with_rounding_mode(mode, [&](auto mc) {
              constexpr rounding_mode M = decltype(mc)::value;
              // CEIL and FLOOR at m = 22 run on the general kernel (the
              // operator's part below covers them).
              if (!d::exact_fast_kernel_takes(M, m_int)) return;
              INFO(lowbit::to_string(M) << " overflow " << int(ov) << " scale " << scale << " clamped " << clamped);
              const d::float_quant_exact_fast_kernel<M> fast{
                  {}, ov, m_int, ebmin, clamped ? f.max : bound, M, {}, clamped};
              const auto fast_scalar = fast.scalar_kernel();
              auto check = [&](auto general) {
                for (std::size_t i = 0; i < v.size(); i += L) {
                  const B x = B::load_unaligned(v.data() + i);
                  const B got = fast(x, B(scale), B(f.m), B(f.emin), B(f.max));
                  const B want = general(x, B(scale), B(f.m), B(f.emin), B(f.max));
                  for (std::size_t j = 0; j < L; ++j) {
                    INFO("x = " << show(v[i + j]));
                    REQUIRE(bits(got.get(j)) == bits(want.get(j)));
                    REQUIRE(bits(fast_scalar(v[i + j], scale, f.m, f.emin, f.max)) == bits(want.get(j)));
                  }
                }
              };
              if (ov == d::fq_overflow::saturate)
                check(d::float_quant_exact_kernel<M, M == rounding_mode::half_even, d::stage::fake, true>{{}, ov});
              else
                check(d::float_quant_exact_kernel<M, M == rounding_mode::half_even, d::stage::fake, false>{{}, ov});
            });
        }
    // Through the operator (E = 8 covers every max here), against the oracle.
    const fmt of{8, f.m, 1 - f.emin - f.m, f.max};
    std::vector<float> y(v.size()), want(v.size());
    for (rounding_mode mode : deterministic_modes)
      for (int ov : {0, 1, 2}) {
        INFO(lowbit::to_string(mode) << " ov " << ov);
        for (std::size_t i = 0; i < v.size(); ++i) want[i] = oracle_exact(v[i], 0.37f, of, mode, ov);
        make<semantics::exact>(mode, ov)(v, 0.37f, of.E, of.m, of.bias, of.max_val, y);
        require_same_values(y, want);
      }
  }
  // Out of range: m 23, emin 1 or -127, max at 2^(105 + m), a max below 2^emin.
  std::int32_t a = 0, b = 0;
  float c = 0;
  bool g = false;
  CHECK_FALSE(d::exact_fast_kernel_takes(rounding_mode::floor, 22));
  CHECK_FALSE(d::exact_fast_kernel_takes(rounding_mode::ceil, 22));
  CHECK(d::exact_fast_kernel_takes(rounding_mode::floor, 21));
  CHECK(d::exact_fast_kernel_takes(rounding_mode::half_down, 22));
  CHECK_FALSE(d::exact_fast_range(23, -126, 448, a, b, c, g));
  CHECK_FALSE(d::exact_fast_range(3, 1, 448, a, b, c, g));
  CHECK_FALSE(d::exact_fast_range(3, -127, 448, a, b, c, g));
  CHECK_FALSE(d::exact_fast_range(3, -9, 0x1p+107f, a, b, c, g));
  CHECK(d::exact_fast_range(3, -9, 0x1.fffffep+106f, a, b, c, g));
  CHECK_FALSE(d::exact_fast_range(3, -9, 0x1p-10f, a, b, c, g));
  CHECK_FALSE(d::exact_fast_range(3, -9, inf, a, b, c, g));
}

TEST_CASE("reference: batches the fast kernels decline (near the top of a binade, inf, NaN) equal the oracle, "
          "per tensor, per channel (row mode), per element and in place",
          "[float_quant][simd][oracle]") {
  // Ordinary values with sparse lanes that need the general path: alone,
  // several batches in a row, at row ends and at the last element.
  const std::size_t R = 37, C = 40, n = R * C;
  std::vector<float> x = lowbit_test::mixed_values<float>(n, 31);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 89 == 7 || (i >= 300 && i < 360 && i % 3 == 0) || i % C == C - 1 || i + 1 == n)
      x[i] = f32((bits(x[i]) & 0xff800000u) | (0x7fffffu - static_cast<std::uint32_t>(i % 64)));
    if (i == 500) x[i] = inf;
    if (i == 777) x[i] = -inf;
    if (i == 901) x[i] = std::numeric_limits<float>::quiet_NaN();
  }
  std::vector<float> sc(n), sr(R);
  for (std::size_t i = 0; i < n; ++i) sc[i] = 0.25f + 0.125f * static_cast<float>(i % 7);
  for (std::size_t r = 0; r < R; ++r) sr[r] = 0.5f + 0.25f * static_cast<float>(r % 5);
  const lowbit::detail::simd_scope simd(true);
  std::vector<float> y(n), want(n);
  for (const fmt& f : {e4m3, e5m2, e2m1})
    for (rounding_mode m : deterministic_modes) {
      INFO("E" << f.E << "M" << f.m << " " << lowbit::to_string(m));
      const auto op = make(m);
      for (int pattern = 0; pattern < 3; ++pattern) {
        INFO("pattern " << pattern);
        auto scale_at = [&](std::size_t i) { return pattern == 0 ? 0.375f : pattern == 1 ? sr[i / C] : sc[i]; };
        for (std::size_t i = 0; i < n; ++i) want[i] = oracle_reference(x[i], scale_at(i), f, m, 0);
        for (bool in_place : {false, true}) {
          INFO("in place " << in_place);
          std::vector<float> xin = x;
          std::vector<float>& out = in_place ? xin : y;
          const auto xs = strided_view<const float>(xin.data(), {R, C});
          const auto ys = strided_view<float>(out.data(), {R, C});
          if (pattern == 0)
            op(xs, 0.375f, f.E, f.m, f.bias, f.max_val, ys);
          else if (pattern == 1)
            op(xs, strided_view<const float>(sr.data(), {R, 1}), f.E, f.m, f.bias, f.max_val, ys);
          else
            op(xs, strided_view<const float>(sc.data(), {R, C}), f.E, f.m, f.bias, f.max_val, ys);
          require_same_values(out, want);
        }
      }
    }
}

template <semantics S>
void per_channel_equals_loop(rounding_mode m) {
  const std::size_t N = 2, C = 4, H = 5, W = 7;
  const std::vector<float> x = interesting_values(N * C * H * W, 23);
  const std::vector<float> scale{0.1f, 0.37f, 2.0f, 1.0f}, E{4, 5, 2, 3}, M{3, 2, 1, 2}, B{7, 15, 1, 3},
      MV{448, 57344, 6, inf};
  std::vector<float> y(x.size());
  auto op = make<S>(m);
  op(strided_view<const float>(x.data(), {N, C, H, W}), strided_view<const float>(scale.data(), {C, 1, 1}),
     strided_view<const float>(E.data(), {C, 1, 1}), strided_view<const float>(M.data(), {1, C, 1, 1}),
     strided_view<const float>(B.data(), {C, 1, 1}), strided_view<const float>(MV.data(), {C, 1, 1}),
     strided_view<float>(y.data(), {N, C, H, W}));
  std::vector<float> want(x.size());
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c) {
      const std::size_t off = (n * C + c) * H * W;
      op(std::span<const float>(x.data() + off, H * W), scale[c], E[c], M[c], B[c], MV[c],
         std::span<float>(want.data() + off, H * W));
    }
  require_same_values(y, want);
}

TEST_CASE("per-channel widths, biases and max_val equal a loop of per-tensor calls",
          "[float_quant][broadcast]") {
  for (rounding_mode m : lowbit::all_rounding_modes) {
    per_channel_equals_loop<semantics::reference>(m);
    per_channel_equals_loop<semantics::exact>(m);
  }
}

// A call with one format reuses the constants of the last format computed
// on its thread: a sequence of formats (the same again, others, one that is
// rejected, a -0 bias) must give what a call with two format elements,
// which never reuses, gives.
template <semantics S>
void format_memo_sequence() {
  const std::vector<float> x = interesting_values(97, 5);
  const fmt seq[] = {e4m3, e5m2, e4m3, e4m3, e2m1, {4, 3, -0.0f, 448}, {4, 3, 0.0f, 448}, e8m0, e4m3_raw, e4m3};
  auto op = make<S>(rounding_mode::half_even);
  for (std::size_t i = 0; i < std::size(seq); ++i) {
    const fmt f = seq[i];
    std::vector<float> got(x.size()), want(2 * x.size());
    op(x, 0.37f, f.E, f.m, f.bias, f.max_val, got);
    // x twice along a new leading dimension, one format per row.
    std::vector<float> x2(x);
    x2.insert(x2.end(), x.begin(), x.end());
    const std::vector<float> E(2, f.E), M(2, f.m), Bi(2, f.bias), MV(2, f.max_val);
    auto col = [](const std::vector<float>& v) { return strided_view<const float>(v.data(), {2, 1}); };
    op(strided_view<const float>(x2.data(), {2, x.size()}), 0.37f, col(E), col(M), col(Bi), col(MV),
       strided_view<float>(want.data(), {2, x.size()}));
    INFO("format " << i);
    require_same_values(got, std::vector<float>(want.begin(), want.begin() + x.size()));
    // A rejected format in between leaves nothing behind.
    if constexpr (S == semantics::exact) {
      std::vector<float> y(x.size(), 7.0f);
      REQUIRE_THROWS_AS(op(x, 0.37f, 4.0f, 3.0f, 1000.0f, 448.0f, y), lowbit::error);
    }
  }
}

TEST_CASE("a per-tensor format reuses its constants only for the same format", "[float_quant]") {
  format_memo_sequence<semantics::reference>();
  format_memo_sequence<semantics::exact>();
}

TEST_CASE("output shape, rank growth, in place, empty", "[float_quant][broadcast]") {
  auto op = make(rounding_mode::half_even);
  std::vector<float> x{1.1f, 2.2f, 3.3f};
  std::vector<float> mb{1, 2};
  strided_view<const float> mv(mb.data(), {2, 1});
  CHECK(op.output_shape(x, 1.0f, 4.0f, mv, 7.0f, 448.0f) == shape{2, 3});
  std::vector<float> y(6);
  op(x, 1.0f, 4.0f, mv, 7.0f, 448.0f, strided_view<float>(y.data(), {2, 3}));
  require_same_values(y, {1.0f, 2.0f, 3.0f, 1.0f, 2.0f, 3.5f});
  std::vector<float> z = x;
  op(z, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, z);
  require_same_values(z, {1.125f, 2.25f, 3.25f});
  std::vector<float> empty;
  CHECK_NOTHROW(op(empty, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, empty));
}

// ---- errors ----------------------------------------------------------------------------

TEST_CASE("float_quant: every error path throws lowbit::error and leaves y untouched", "[float_quant][errors]") {
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  std::vector<float> y(6, 42.0f);
  auto op = make(rounding_mode::half_even);
  auto ex = make<semantics::exact>(rounding_mode::half_even);
  std::vector<float> s4{1, 1, 1, 1};
  check_rejected([&] { op(x, s4, 4.0f, 3.0f, 7.0f, 448.0f, y); }, y, "do not broadcast");
  std::vector<float> y5(5, 42.0f);
  check_rejected([&] { op(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y5); }, y5, "y has shape [5]");
  check_rejected([&] { op(x, 1.0f, 4.5f, 3.0f, 7.0f, 448.0f, y); }, y, "exponent_bitwidth = 4.5");
  check_rejected([&] { op(x, 1.0f, 0.0f, 3.0f, 7.0f, 448.0f, y); }, y, "exponent_bitwidth = 0");
  check_rejected([&] { op(x, 1.0f, 4.0f, -1.0f, 7.0f, 448.0f, y); }, y, "mantissa_bitwidth = -1");
  check_rejected([&] { op(x, 1.0f, 4.0f, nan_f, 7.0f, 448.0f, y); }, y, "mantissa_bitwidth = nan");
  check_rejected([&] { op(x, 1.0f, 4.0f, 3.0f, 7.5f, 448.0f, y); }, y, "exponent_bias = 7.5");
  std::vector<float> mbs{3, 3, 3, 3, 2.5f, 3};
  // x and y [2, 3]: the shapes broadcast, so the value is what fails.
  check_rejected([&] { op(strided_view<const float>(x.data(), {2, 3}), 1.0f, 4.0f, strided_view<const float>(mbs.data(), {2, 3}),
                          7.0f, 448.0f, strided_view<float>(y.data(), {2, 3})); },
                 y, "mantissa_bitwidth[1, 1] = 2.5");
  auto bad_mode = make(static_cast<rounding_mode>(99));
  check_rejected([&] { bad_mode(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y); }, y, "rounding_mode");
  auto no_ov = make(rounding_mode::half_even);
  no_ov.saturation = false;
  check_rejected([&] { no_ov(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y); }, y, "saturation = 0");
  // Exact semantics only.
  check_rejected([&] { ex(x, 1.0f, 4.0f, 24.0f, 7.0f, 448.0f, y); }, y, "mantissa_bitwidth = 24");
  for (float bad : {0.0f, -0.0f, -1.0f, inf, -inf, nan_f}) {
    check_rejected([&] { ex(x, bad, 4.0f, 3.0f, 7.0f, 448.0f, y); }, y, "scale");
    CHECK_NOTHROW(op(x, bad, 4.0f, 3.0f, 7.0f, 448.0f, std::vector<float>(6)));
  }
  for (float bad : {0.0f, -1.0f, nan_f})
    check_rejected([&] { ex(x, 1.0f, 4.0f, 3.0f, 7.0f, bad, y); }, y, "max_val");
  check_rejected([&] { ex(x, 1.0f, 4.0f, 3.0f, 150.0f, 448.0f, y); }, y, "smallest step");
  CHECK_NOTHROW(op(x, 1.0f, 4.0f, 3.0f, 150.0f, 448.0f, std::vector<float>(6)));
  check_rejected([&] { ex(x, 1.0f, 8.0f, 23.0f, 127.0f, inf, y); }, y, "not a finite float");
  CHECK_NOTHROW(ex(x, 1.0f, 8.0f, 23.0f, 127.0f, flt_max, std::vector<float>(6)));
  CHECK_NOTHROW(ex(x, 1.0f, 8.0f, 7.0f, 127.0f, flt_max, std::vector<float>(6)));
  std::vector<float> empty, ey;
  check_rejected([&] { ex(empty, 1.0f, 4.0f, 3.0f, 151.0f, 448.0f, ey); }, ey, "smallest step");
}

TEST_CASE("float_quant: shapes are checked before values (a broadcast view of 2^40 copies)", "[float_quant][errors]") {
  const std::size_t big = std::size_t(1) << 40;
  const std::vector<float> x{0.3f, -0.2f, 5.0f};
  std::vector<float> y(3, 7.0f);
  const float four = 4.0f;
  const lowbit::strided_view<const float> e(&four, {big}, {0});
  REQUIRE_THROWS_WITH(lowbit::float_quant<lowbit::semantics::exact>{}(x, 1.0f, e, 3.0f, 7.0f, 448.0f, y),
                      lowbit_test::contains_substring("x has shape [3] and exponent_bitwidth has shape [1099511627776]"));
  CHECK(y == std::vector<float>(3, 7.0f));
}

TEST_CASE("float_quant: the scalar route gives the general route's bits, every mode, format and overflow",
          "[float_quant][route]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(203, 53);
  struct fmt {
    float e, m, bias, max_val;
  };
  // FP8 E4M3FN and E5M2, FP4 E2M1, m = 0, a max_val below the format's
  // largest, a huge bias (subnormal steps), no cap, and binary32 itself.
  const fmt formats[] = {{4, 3, 7, 448},  {5, 2, 15, 57344}, {2, 1, 1, 6},  {3, 0, 3, 16},
                         {4, 3, 7, 100},  {5, 10, 140, inf}, {4, 3, 7, inf}, {8, 23, 127, 3.0e38f}};
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (int ov = 0; ov < 3; ++ov)
      for (const fmt& f : formats)
        for (const float s : {0.05f, 0.25f, 3.0f}) {
          CAPTURE(lowbit::to_string(m), ov, f.e, f.m, f.bias, f.max_val, s);
          lowbit_test::require_scalar_route_bits(make(m, ov), x, s, f.e, f.m, f.bias, f.max_val);
          lowbit_test::require_scalar_route_bits(make<semantics::exact>(m, ov), x, s, f.e, f.m, f.bias, f.max_val);
        }
  // A format the route has not seen goes the general way and is checked
  // there; a known format with a scale the exact semantics reject too.
  std::vector<float> y(203, 42.0f);
  const auto ex = make<semantics::exact>(rounding_mode::half_even);
  ex(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y);  // known now
  check_rejected([&] { ex(x, -1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y); }, y, "scale");
  check_rejected([&] { ex(x, 1.0f, 4.0f, 3.5f, 7.0f, 448.0f, y); }, y, "mantissa_bitwidth");
  check_rejected([&] { ex(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, std::vector<float>(202)); }, y, "y has shape [202]");
}

TEST_CASE("float_quant: the row route gives the general route's bits, every mode, format and overflow",
          "[float_quant][route]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(1400, 59);
  // Scales per row: a power of two among them (the fast path needs a
  // constant scale, so the row route never takes it), a subnormal-making one.
  const std::vector<float> scales{0.05f, 0.25f, 3.0f, 1e-3f, 0.125f, 7.0f, 1e-30f};
  struct fmt {
    float e, m, bias, max_val;
  };
  const fmt formats[] = {{4, 3, 7, 448}, {5, 2, 15, 57344}, {2, 1, 1, 6}, {4, 3, 7, 100}, {5, 10, 140, inf}};
  for (rounding_mode m : lowbit::all_rounding_modes)
    for (int ov = 0; ov < 3; ++ov)
      for (const fmt& f : formats) {
        CAPTURE(lowbit::to_string(m), ov, f.e, f.m, f.bias, f.max_val);
        const auto ref = make(m, ov);
        const auto ex = make<semantics::exact>(m, ov);
        lowbit_test::require_row_route_bits(x, scales, [&](const auto& xv, const auto& sv, const auto& yv) {
          ref(xv, sv, f.e, f.m, f.bias, f.max_val, yv);
        });
        lowbit_test::require_row_route_bits(x, scales, [&](const auto& xv, const auto& sv, const auto& yv) {
          ex(xv, sv, f.e, f.m, f.bias, f.max_val, yv);
        });
      }
  // A format parameter per row, or a bad scale in one row: the general
  // route (its checks and messages), nothing written.
  const std::vector<float> xs(4 * 32, 0.5f), es{4, 4, 4, 5};
  std::vector<float> y(4 * 32, 42.0f);
  const strided_view<const float> xv(xs.data(), {4, 32});
  const strided_view<float> yv(y.data(), {4, 32});
  const auto ex = make<semantics::exact>(rounding_mode::half_even);
  ex(xv, strided_view<const float>(scales.data(), {4, 1}), strided_view<const float>(es.data(), {4, 1}), 3.0f, 7.0f,
     inf, yv);
  CHECK(y[0] == 0.5f);  // 0.5 / 0.05 = 10 in E4M3: 10 * 0.05
  CHECK(y[3 * 32] == 512.0f * 1e-3f);  // 500 in E5M3 (bias 7): 512
  const std::vector<float> bad{0.25f, 0.25f, -1.0f, 0.25f};
  std::fill(y.begin(), y.end(), 42.0f);
  check_rejected([&] { ex(xv, strided_view<const float>(bad.data(), {4, 1}), 4.0f, 3.0f, 7.0f, 448.0f, yv); }, y,
                 "scale[2, 0] = -1");
}

// ---- the checks of parameter tensors (detail::require_elements) -----------

namespace {

/// One parameter tensor of shape [n, 1] holding `good` but `bad` at row j,
/// x of [n, 2 * 16 + 3]: the call must name row j with its value, whatever
/// batch and tail j falls in, and write nothing; with every row good it runs.
template <semantics S>
void check_parameter_rows(int which, float good, float bad, const char* name, const char* expected) {
  const lowbit::float_quant<S> op;
  constexpr std::size_t w = 35;
  for (const std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(16), std::size_t(17), std::size_t(40)})
    for (std::size_t j = 0; j <= n; ++j) {  // j == n: none bad
      CAPTURE(name, n, j, show(bad));
      std::vector<float> x(n * w), y(n * w, 3.0f);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
      std::vector<float> p(n, good);
      if (j < n) p[j] = bad;
      const strided_view<const float> xv(x.data(), {n, w});
      const strided_view<const float> pv(p.data(), {n, 1});
      const strided_view<float> yv(y.data(), {n, w});
      std::array<float, 5> base{0.25f, 4.0f, 3.0f, 7.0f, 448.0f};  // scale, e, m, bias, max
      auto call = [&] {
        auto arg = [&](int k) -> std::variant<float, strided_view<const float>> {
          if (k == which) return pv;
          return base[static_cast<std::size_t>(k)];
        };
        std::visit([&](auto a0, auto a1, auto a2, auto a3, auto a4) { op(xv, a0, a1, a2, a3, a4, yv); }, arg(0), arg(1),
                   arg(2), arg(3), arg(4));
      };
      if (j < n) {
        const std::string needle = std::string(name) + "[" + std::to_string(j) + ", 0] = ";
        check_rejected(call, y, needle.c_str());
        check_rejected(call, y, expected);
      } else {
        REQUIRE_NOTHROW(call());
      }
    }
}

}  // namespace

TEST_CASE("FloatQuant names the invalid element of a per-channel parameter wherever it falls", "[float_quant]") {
  const float nan = nan_f;
  // exact semantics
  for (const float bad : {0.0f, -0.0f, -1.0f, inf, nan, -inf})
    check_parameter_rows<semantics::exact>(0, 0.25f, bad, "scale", "expected a finite value > 0");
  for (const float bad : {0.0f, 4.5f, -4.0f, inf, nan})
    check_parameter_rows<semantics::exact>(1, 4.0f, bad, "exponent_bitwidth", "an integer >= 1");
  for (const float bad : {24.0f, 2.5f, -1.0f, nan, inf})
    check_parameter_rows<semantics::exact>(2, 3.0f, bad, "mantissa_bitwidth", "an integer from 0 to 23");
  for (const float bad : {7.5f, inf, -inf, nan})
    check_parameter_rows<semantics::exact>(3, 7.0f, bad, "exponent_bias", "expected an integer");
  for (const float bad : {0.0f, -448.0f, nan, -inf})
    check_parameter_rows<semantics::exact>(4, 448.0f, bad, "max_val", "a value > 0");
  // reference semantics (scale and max_val unchecked)
  for (const float bad : {0.0f, 256.0f, 4.5f, nan, inf})
    check_parameter_rows<semantics::reference>(1, 4.0f, bad, "exponent_bitwidth", "an integer from 1 to 255");
  for (const float bad : {256.0f, -1.0f, 0.5f, nan})
    check_parameter_rows<semantics::reference>(2, 3.0f, bad, "mantissa_bitwidth", "an integer from 0 to 255");
  for (const float bad : {1073741952.0f, -1073741952.0f, 0.5f, nan, inf})
    check_parameter_rows<semantics::reference>(3, 7.0f, bad, "exponent_bias", "an integer from -2^30 to 2^30");
}

TEST_CASE("FloatQuant accepts the edge values of per-channel parameters", "[float_quant]") {
  // The bounds themselves pass the checks, a batch at a time and in the
  // tail alike (these calls must not throw).
  constexpr std::size_t n = 17, w = 40;
  std::vector<float> x(n * w, 0.3f), y(n * w);
  const strided_view<const float> xv(x.data(), {n, w});
  const strided_view<float> yv(y.data(), {n, w});
  auto rows = [&](float v) { return std::vector<float>(n, v); };
  const std::vector<float> m0 = rows(0.0f), m23 = rows(23.0f), e1 = rows(1.0f), big_bias = rows(1073741824.0f),
                           maxinf = rows(inf), tiny_scale = rows(std::numeric_limits<float>::denorm_min()),
                           big_scale = rows(std::numeric_limits<float>::max());
  auto pv = [&](const std::vector<float>& v) { return strided_view<const float>(v.data(), {n, 1}); };
  const lowbit::float_quant<semantics::exact> ex;
  REQUIRE_NOTHROW(ex(xv, pv(tiny_scale), 4.0f, pv(m0), 7.0f, 448.0f, yv));
  REQUIRE_NOTHROW(ex(xv, pv(big_scale), 4.0f, pv(m23), 7.0f, pv(maxinf), yv));
  REQUIRE_NOTHROW(ex(xv, 1.0f, pv(e1), 3.0f, 0.0f, 448.0f, yv));
  const lowbit::float_quant<> ref;
  const std::vector<float> e255 = rows(255.0f), m255 = rows(255.0f), nbias = rows(-1073741824.0f);
  REQUIRE_NOTHROW(ref(xv, 1.0f, pv(e255), pv(m255), pv(nbias), 448.0f, yv));
  REQUIRE_NOTHROW(ref(xv, 1.0f, 4.0f, 3.0f, pv(big_bias), 448.0f, yv));
}
