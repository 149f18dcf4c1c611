// SPDX-License-Identifier: Apache-2.0
// lowbit::mx_quant (include/lowbit/mx_quant.hpp): OCP MX block quantization.
//
// Two scalar oracles written from the definitions, not from the kernels:
// `ref_oracle` follows FORMAT-mx.md (microxcaling) step by step in float32
// operations, its log2 as (float)log2((double)v); `exact_oracle` computes
// OCP MX v1.0 in double, where every step is exact. Both are compared with
// lowbit bit for bit on random tensors rich in edge values, for every
// format, rounding mode, scale rule, axis and block size (ragged included),
// on the SIMD and the scalar path, with 1 and 2 threads.
#include "support/catch.hpp"
#include "support/test_util.hpp"

#include <lowbit/lowbit.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using lowbit::mx_element;
using lowbit::mx_quant;
using lowbit::mx_scale_rule;
using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit_test::bits;
using lowbit_test::f32;
using lowbit_test::show;

constexpr float inf = std::numeric_limits<float>::infinity();
const float qnan = std::numeric_limits<float>::quiet_NaN();

struct fmt_params {
  int m, emax, min_exp;
  float max_norm;
};
// FORMAT-mx.md's table, written out again here.
fmt_params params_of(mx_element f) {
  switch (f) {
    case mx_element::fp8_e4m3: return {3, 8, -6, 448.0f};
    case mx_element::fp8_e5m2: return {2, 15, -14, 57344.0f};
    case mx_element::fp6_e3m2: return {2, 4, -2, 28.0f};
    case mx_element::fp6_e2m3: return {3, 2, 0, 7.5f};
    case mx_element::fp4_e2m1: return {1, 2, 0, 6.0f};
    case mx_element::int8: return {6, 0, 0, 1.984375f};
  }
  return {};
}

struct config {
  mx_element fmt = mx_element::fp8_e4m3;
  rounding_mode mode = rounding_mode::half_up;
  mx_scale_rule rule = mx_scale_rule::floor;
  int scale_bits = 8;
  bool flush = false;
};

int floor_log2_exact(double a) {  // a > 0 finite
  int e;
  (void)std::frexp(a, &e);
  return e - 1;
}

/// The shared exponent of a block by the rules, in double (exact); amax
/// finite. `ref_floor`: microxcaling's rounded log2 instead.
struct oracle_exp {
  bool nan = false;
  int se = 0;
  bool flush = false;
};
oracle_exp shared_exp(float amax, const config& c, bool reference) {
  const fmt_params p = params_of(c.fmt);
  const int smax = (1 << (c.scale_bits - 1)) - 1;
  oracle_exp r;
  if (std::isnan(amax) || std::isinf(amax)) return r.nan = true, r;
  long se;
  if (reference && c.rule == mx_scale_rule::floor) {
    const float a = amax == 0.0f ? 0x1p-126f : amax;
    const float l = static_cast<float>(std::log2(static_cast<double>(a)));
    const int E = static_cast<int>(std::floor(l));
    r.flush = c.flush && !(E > -127);
    se = E - p.emax;
  } else {
    r.flush = c.flush && amax < 0x1p-126f;
    if (amax == 0.0f) return r.se = -smax, r;
    const double a = amax;
    const int E = floor_log2_exact(a);
    switch (c.rule) {
      case mx_scale_rule::floor: se = E - p.emax; break;
      case mx_scale_rule::ceil: se = (a == std::ldexp(1.0, E) ? E : E + 1) - p.emax; break;
      case mx_scale_rule::even: {
        // amax rounded to m fraction bits, ties to even, then its exponent.
        const double units = std::nearbyint(std::ldexp(a, p.m - E));  // in [2^m, 2^(m+1)]
        se = floor_log2_exact(std::ldexp(units, E - p.m)) - p.emax;
        break;
      }
      case mx_scale_rule::round_up:
      default: {
        // The smallest e with amax <= max_norm * 2^e.
        int e = E - p.emax - 2;
        while (a > std::ldexp(static_cast<double>(p.max_norm), e)) ++e;
        se = e;
      }
    }
  }
  if (se > smax) return r.nan = true, r;
  r.se = static_cast<int>(std::max<long>(se, -smax));
  return r;
}

// Rounds s (exact double) with mode m; keeps the sign of s.
double round_exact(double s, rounding_mode m) {
  const double a = std::fabs(s);
  double r = 0;
  switch (m) {
    case rounding_mode::half_even: r = std::nearbyint(a); break;
    case rounding_mode::ceil: return std::ceil(s);
    case rounding_mode::floor: return std::floor(s);
    case rounding_mode::up: r = std::ceil(a); break;
    case rounding_mode::down: r = std::floor(a); break;
    case rounding_mode::half_up: r = std::floor(a + 0.5); break;
    case rounding_mode::half_down: r = std::ceil(a - 0.5); break;
    case rounding_mode::odd: {
      const double f = std::floor(s);
      return f == s ? s : std::fmod(f, 2.0) == 0.0 ? f + 1 : f;
    }
    case rounding_mode::dpu: return s < 0 && s - std::floor(s) == 0.5 ? std::ceil(s) : std::nearbyint(s);
    case rounding_mode::stochastic: break;  // needs a draw: tests/test_stochastic.cpp
  }
  return std::copysign(r, s);
}

float ref_element(float x, float scale, const fmt_params& p, bool is_int, rounding_mode mode) {
  // FORMAT-mx.md steps 6-8, float32 operations.
  const float a = x / scale;
  float s;
  int pe = 0;
  if (is_int) {
    s = a * 64.0f;
  } else {
    const float aa = std::fabs(a);
    const float l = static_cast<float>(std::log2(static_cast<double>(aa == 0.0f ? 1.0f : aa)));
    pe = std::max(static_cast<int>(std::floor(l)), p.min_exp);
    s = a * std::ldexp(1.0f, p.m - pe);
  }
  const float sg = s > 0 ? 1.0f : s < 0 ? -1.0f : 0.0f;
  float r;
  const float as = std::fabs(s);
  if (std::isnan(s)) {
    r = s;
  } else if (mode == rounding_mode::half_up) {
    r = sg * std::floor(as + 0.5f);
  } else if (mode == rounding_mode::half_even) {
    const float d = as - 0.5f;
    const float t = (std::fmod(d, 2.0f) == 0.0f && d >= 0.0f) ? 1.0f : 0.0f;
    r = sg * (std::floor(as + 0.5f) - t);
  } else if (mode == rounding_mode::down) {
    r = sg * std::floor(as);
  } else {
    // Modes the reference lacks: exact rounding with its zero signs.
    r = static_cast<float>(round_exact(static_cast<double>(s), mode));
    if (s == 0.0f) r = 0.0f;
  }
  float q = is_int ? r / 64.0f : r * std::ldexp(1.0f, pe - p.m);
  if (q > p.max_norm) q = p.max_norm;
  if (q < -p.max_norm) q = -p.max_norm;
  return q * scale;
}

float exact_element(float x, int se, const fmt_params& p, bool is_int, rounding_mode mode) {
  const double a = std::ldexp(static_cast<double>(x), -se);  // exact
  int pe = 0;
  if (!is_int) pe = a == 0.0 ? p.min_exp : std::max(floor_log2_exact(std::fabs(a)), p.min_exp);
  const int m = is_int ? 6 : p.m;
  const double s = std::ldexp(a, m - pe);
  double q = std::ldexp(round_exact(s, mode), pe - m);
  q = std::clamp(q, -static_cast<double>(p.max_norm), static_cast<double>(p.max_norm));
  if (q == 0.0) q = std::copysign(0.0, x);
  return static_cast<float>(std::ldexp(q, se));
}

/// The oracle over a row-major tensor of shape `dims`, blocks of k along axis.
std::vector<float> oracle(const std::vector<float>& x, const std::vector<std::size_t>& dims, std::size_t axis,
                          std::size_t k, const config& c, bool reference, std::vector<float>* scales = nullptr) {
  const fmt_params p = params_of(c.fmt);
  const bool is_int = c.fmt == mx_element::int8;
  std::size_t inner = 1, outer = 1;
  for (std::size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  for (std::size_t d = 0; d < axis; ++d) outer *= dims[d];
  const std::size_t n = dims[axis], nb = (n + k - 1) / k;
  std::vector<float> y(x.size());
  if (scales) scales->assign(outer * nb * inner, 0.0f);
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t i = 0; i < inner; ++i)
      for (std::size_t b = 0; b < nb; ++b) {
        const std::size_t c0 = b * k, c1 = std::min(n, c0 + k);
        auto at = [&](std::size_t cc) { return (o * n + cc) * inner + i; };
        float amax = 0.0f;
        bool has_nan = false;
        for (std::size_t cc = c0; cc < c1; ++cc) {
          const float v = x[at(cc)];
          if (std::isnan(v)) has_nan = true;
          amax = std::max(amax, std::fabs(v));
        }
        if (has_nan) amax = qnan;
        const oracle_exp e = shared_exp(amax, c, reference);
        const float sc = e.nan ? qnan : std::ldexp(1.0f, e.se);
        if (scales) (*scales)[(o * nb + b) * inner + i] = sc;
        for (std::size_t cc = c0; cc < c1; ++cc) {
          const float v = x[at(cc)];
          float out;
          if (e.nan)
            out = qnan;
          else if (e.flush)
            out = reference ? 0.0f : std::copysign(0.0f, v);
          else
            out = reference ? ref_element(v, sc, p, is_int, c.mode) : exact_element(v, e.se, p, is_int, c.mode);
          y[at(cc)] = out;
        }
      }
  return y;
}

/// Values around every power of two and grid midpoint of the format, ties,
/// the log2 windows, subnormals, zeros, and now and then NaN and inf.
std::vector<float> edge_values(std::size_t n, std::uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned kind = rng() % 10;
    const int e = static_cast<int>(rng() % 40) - 20;
    const float sign = (rng() & 1) ? -1.0f : 1.0f;
    float x;
    if (kind == 0) {
      // Just below a power of two (the log2 windows), up to 50 ulps.
      x = f32(bits(std::ldexp(1.0f, e)) - 1 - rng() % 50);
    } else if (kind == 1) {
      // A grid midpoint or value of a 1- to 3-bit mantissa, +-2 ulps.
      const float g = std::ldexp(1.0f + static_cast<float>(rng() % 16) / 16.0f, e);
      x = f32(bits(g) + static_cast<std::uint32_t>(static_cast<int>(rng() % 5) - 2));
    } else if (kind == 2) {
      x = std::ldexp(static_cast<float>(rng() % 1000), -149 + static_cast<int>(rng() % 30));  // tiny
    } else if (kind == 3) {
      x = 0.0f;
    } else if (kind == 4 && specials && rng() % 8 == 0) {
      const float sp[] = {qnan, inf, -inf, std::numeric_limits<float>::max(), f32(0x7f7fffd4), f32(0x7f7fffd3)};
      x = sp[rng() % 6];
    } else {
      x = std::ldexp(static_cast<float>(rng() % (1u << 24)) / 16777216.0f, e);
    }
    v[i] = sign * x;
  }
  return v;
}

template <semantics S>
mx_quant<S> make_op(const config& c, std::size_t k, std::ptrdiff_t axis) {
  mx_quant<S> op;
  op.format = c.fmt;
  op.block_size = k;
  op.axis = axis;
  op.rounding = c.mode;
  op.scale_rule = c.rule;
  op.scale_bits = c.scale_bits;
  op.flush_fp32_subnorms = c.flush;
  return op;
}

template <semantics S>
void check_against_oracle(const std::vector<float>& x, const std::vector<std::size_t>& dims, std::size_t axis,
                          std::size_t k, const config& c) {
  const bool ref = S == semantics::reference;
  std::vector<float> want_scales;
  const std::vector<float> want = oracle(x, dims, axis, k, c, ref, &want_scales);
  const lowbit::shape sh(dims.begin(), dims.end());
  const auto xv = lowbit::strided_view<const float>(x.data(), sh);
  for (int path = 0; path < 3; ++path) {
    mx_quant<S> op = make_op<S>(c, k, static_cast<std::ptrdiff_t>(axis));
    if (path == 2) {
      op.exec.threads = 2;
      op.exec.min_elements_per_thread = 1;
    }
    const lowbit::detail::simd_scope scope(path != 1);
    std::vector<float> y(x.size(), 7.0f);
    op(xv, lowbit::strided_view<float>(y.data(), sh));
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (bits(y[i]) == bits(want[i]) || (std::isnan(y[i]) && std::isnan(want[i]))) continue;
      FAIL_CHECK("path " << path << " fmt " << lowbit::to_string(c.fmt) << " mode " << lowbit::to_string(c.mode)
                         << " rule " << lowbit::to_string(c.rule) << " flush " << c.flush << " k " << k << " axis "
                         << axis << " [" << i << "] x " << show(x[i]) << " got " << show(y[i]) << " want "
                         << show(want[i]));
      return;
    }
    if (path == 0) {
      std::vector<float> s(want_scales.size());
      lowbit::mx_scales(op, xv, lowbit::strided_view<float>(s.data(), op.scales_shape(xv)));
      for (std::size_t b = 0; b < s.size(); ++b)
        if (!(bits(s[b]) == bits(want_scales[b]) || (std::isnan(s[b]) && std::isnan(want_scales[b])))) {
          FAIL_CHECK("scale [" << b << "] got " << show(s[b]) << " want " << show(want_scales[b]));
          return;
        }
    }
  }
}

// QONNX's modes and lowbit's deterministic extensions (the oracle defines them).
const std::vector<rounding_mode> modes = [] {
  std::vector<rounding_mode> v(lowbit::all_rounding_modes.begin(), lowbit::all_rounding_modes.end());
  v.insert(v.end(), lowbit::extension_rounding_modes.begin(), lowbit::extension_rounding_modes.end());
  return v;
}();
const std::vector<mx_scale_rule> rules{mx_scale_rule::floor, mx_scale_rule::ceil, mx_scale_rule::even,
                                       mx_scale_rule::round_up};

}  // namespace

TEST_CASE("mx_quant: both semantics equal their oracles on every format, mode and scale rule", "[mx_quant]") {
  std::uint32_t seed = 1;
  for (mx_element f : lowbit::all_mx_elements)
    for (rounding_mode m : modes)
      for (mx_scale_rule r : rules)
        for (bool flush : {false, true}) {
          const config c{f, m, r, 8, flush};
          // [7, 37] blocked along the last axis (k = 8: a ragged block of 5),
          // then along the first (k = 3).
          const std::vector<float> x = edge_values(7 * 37, seed++, true);
          check_against_oracle<semantics::reference>(x, {7, 37}, 1, 8, c);
          check_against_oracle<semantics::exact>(x, {7, 37}, 1, 8, c);
          check_against_oracle<semantics::reference>(x, {7, 37}, 0, 3, c);
          check_against_oracle<semantics::exact>(x, {7, 37}, 0, 3, c);
        }
}

TEST_CASE("mx_quant: block sizes, ranks and axes, ragged and oversized blocks", "[mx_quant]") {
  std::uint32_t seed = 1000;
  const config c{mx_element::fp8_e4m3, rounding_mode::half_even, mx_scale_rule::floor, 8, false};
  for (std::size_t k : {1u, 2u, 4u, 16u, 20u, 32u, 48u, 100u}) {
    const std::vector<float> x = edge_values(3 * 5 * 40, seed++, false);
    for (std::size_t axis = 0; axis < 3; ++axis) {
      check_against_oracle<semantics::reference>(x, {3, 5, 40}, axis, k, c);
      check_against_oracle<semantics::exact>(x, {3, 5, 40}, axis, k, c);
    }
  }
  // Rank 1 and rank 4, int8 and fp4.
  for (mx_element f : {mx_element::int8, mx_element::fp4_e2m1}) {
    const config ci{f, rounding_mode::half_up, mx_scale_rule::floor, 8, false};
    const std::vector<float> x1 = edge_values(1000, seed++, true);
    check_against_oracle<semantics::reference>(x1, {1000}, 0, 32, ci);
    check_against_oracle<semantics::exact>(x1, {1000}, 0, 32, ci);
    const std::vector<float> x4 = edge_values(2 * 3 * 4 * 33, seed++, true);
    for (std::size_t axis = 0; axis < 4; ++axis) check_against_oracle<semantics::reference>(x4, {2, 3, 4, 33}, axis, 2, ci);
  }
}

TEST_CASE("mx_quant: smaller scale_bits clamp the shared exponent", "[mx_quant]") {
  std::uint32_t seed = 2000;
  for (int sb : {1, 3, 5, 8})
    for (mx_element f : {mx_element::fp8_e5m2, mx_element::int8}) {
      const config c{f, rounding_mode::half_up, mx_scale_rule::floor, sb, false};
      const std::vector<float> x = edge_values(4 * 64, seed++, true);
      check_against_oracle<semantics::reference>(x, {4, 64}, 1, 16, c);
      check_against_oracle<semantics::exact>(x, {4, 64}, 1, 16, c);
    }
  // scale_bits 1: |se| <= 0. 100 (se = 6 - 8 = -2, raised to 0) is rounded
  // on e4m3's own grid: 12.5 steps of 8 -> 104; 1000 (se = 9 - 8 = 1 > 0) is a
  // NaN block, as in microxcaling.
  mx_quant<> op;
  op.scale_bits = 1;
  op.block_size = 1;
  std::vector<float> x{100.0f, 1000.0f}, y(2);
  op(x, y);
  CHECK(bits(y[0]) == bits(104.0f));
  CHECK(std::isnan(y[1]));
}

TEST_CASE("mx_quant reference: FORMAT-mx.md's examples and quirks", "[mx_quant]") {
  auto run = [](mx_element f, rounding_mode m, std::vector<float> x, std::size_t k, bool flush = false) {
    mx_quant<> op;
    op.format = f;
    op.rounding = m;
    op.block_size = k;
    op.flush_fp32_subnorms = flush;
    std::vector<float> y(x.size());
    op(x, y);
    return y;
  };
  const auto e4m3 = mx_element::fp8_e4m3, int8 = mx_element::int8;
  const auto nearest = rounding_mode::half_up, even = rounding_mode::half_even, tz = rounding_mode::down;
  // Quirk 1: NaN or inf poisons its block only.
  {
    const auto y = run(e4m3, nearest, {qnan, 1, 2, 3, 1, 2, 3, 4}, 4);
    for (int i = 0; i < 4; ++i) CHECK(std::isnan(y[i]));
    CHECK(y[4] == 1.0f);
    CHECK(y[7] == 4.0f);
    const auto z = run(int8, nearest, {inf, 1, 2, 3, -inf, 2, 3, 4}, 4);
    for (float v : z) CHECK(std::isnan(v));
  }
  // Quirk 2: the rounded log2 of amax: 7.9999995 with 1 gives [8, 1].
  {
    const auto y = run(e4m3, nearest, {f32(0x40ffffff), 1.0f}, 32);
    CHECK(bits(y[0]) == bits(8.0f));
    CHECK(bits(y[1]) == bits(1.0f));
  }
  // Quirk 3: the largest floats overflow to inf (fp, nearest), stay finite in floor, NaN in int8.
  {
    const float fmax = std::numeric_limits<float>::max();
    auto y = run(e4m3, nearest, {fmax, 1.0f}, 32);
    CHECK(bits(y[0]) == bits(inf));
    CHECK(bits(y[1]) == bits(0.0f));
    y = run(mx_element::fp4_e2m1, nearest, {fmax, 1.0f, -3e38f}, 32);
    CHECK(bits(y[2]) == bits(-inf));
    y = run(e4m3, tz, {fmax}, 32);
    CHECK(bits(y[0]) == 0x7f600000u);
    y = run(e4m3, nearest, {f32(0x7f7fffd3)}, 32);
    CHECK(bits(y[0]) == 0x7f600000u);
    y = run(int8, nearest, {fmax, 1.0f}, 32);
    CHECK((std::isnan(y[0]) && std::isnan(y[1])));
  }
  // Quirk 4: the rounded log2 of an element (floor): 255.99998 gives 224.
  {
    const auto y = run(e4m3, tz, {f32(0x437fffff), f32(0x437ffff0), 256.0f}, 32);
    CHECK(bits(y[0]) == bits(224.0f));
    CHECK(bits(y[1]) == bits(240.0f));
  }
  // Quirk 5: zero signs.
  {
    auto y = run(int8, nearest, {1.0f, -1e-3f, -0.0f}, 32);
    CHECK(bits(y[1]) == bits(-0.0f));
    CHECK(bits(y[2]) == bits(0.0f));
    y = run(e4m3, nearest, {3e38f, -1e-20f, -1e-30f, -0x1p-126f}, 32);
    CHECK(bits(y[0]) == bits(2.9774707e38f));
    for (int i = 1; i < 4; ++i) CHECK(bits(y[i]) == bits(0.0f));
  }
  // Quirk 6: floor rounds toward zero.
  {
    const auto y = run(int8, tz, {1.0f, -1.3f / 64, 1.3f / 64}, 32);
    CHECK(bits(y[1]) == bits(-1.0f / 64));
    CHECK(bits(y[2]) == bits(1.0f / 64));
  }
  // Quirk 7: 0.49999997 of a step gives one step (nearest, even), 0 in floor.
  {
    CHECK(bits(run(e4m3, nearest, {256.0f, f32(0x3a7fffff)}, 32)[1]) == 0x3b000000u);
    CHECK(bits(run(e4m3, even, {256.0f, f32(0x3a7fffff)}, 32)[1]) == 0x3b000000u);
    CHECK(bits(run(e4m3, tz, {256.0f, f32(0x3a7fffff)}, 32)[1]) == bits(0.0f));
  }
  // Quirk 8: ties. e5m2 9 in a block of max 9: nearest 10, even 8; int8 -0.5/64 in even: -0.
  {
    CHECK(run(mx_element::fp8_e5m2, nearest, {9.0f}, 32)[0] == 10.0f);
    CHECK(run(mx_element::fp8_e5m2, even, {9.0f}, 32)[0] == 8.0f);
    CHECK(bits(run(int8, even, {1.0f, -0.5f / 64}, 32)[1]) == bits(-0.0f));
  }
  // Quirk 9: clamped after rounding: 500 * 2^se gives 448 * 2^se.
  CHECK(run(e4m3, nearest, {500.0f}, 32)[0] == 448.0f);
  // Quirk 10: an all-zero block's scale is 2^-126 for int8, 2^-127 for fp.
  {
    std::vector<float> x(4, 0.0f), s(1);
    mx_quant<> op;
    op.block_size = 4;
    lowbit::mx_scales(op, x, s);
    CHECK(bits(s[0]) == 0x00400000u);
    op.format = int8;
    lowbit::mx_scales(op, x, s);
    CHECK(bits(s[0]) == 0x00800000u);
  }
  // Quirk 11: flush misses the 22 largest subnormals.
  {
    auto y = run(int8, nearest, {f32(0x007fffe9)}, 32, true);
    CHECK(bits(y[0]) == bits(0.0f));
    y = run(int8, nearest, {f32(0x007fffea)}, 32, true);
    CHECK(bits(y[0]) != bits(0.0f));
    y = run(int8, nearest, {0x1p-126f, 0x1p-127f, -0x1p-140f}, 32, true);
    CHECK(bits(y[0]) == bits(0x1p-126f));
    CHECK(bits(y[1]) == bits(0x1p-127f));
    CHECK(bits(y[2]) == bits(-0.0f));
    y = run(int8, nearest, {f32(0x007fffe9)}, 32, false);
    CHECK(bits(y[0]) == 0x007f0000u);
  }
}

TEST_CASE("mx_quant exact: each difference from the reference", "[mx_quant]") {
  auto run = [](semantics s, mx_element f, rounding_mode m, std::vector<float> x, std::size_t k, bool flush = false) {
    std::vector<float> y(x.size());
    if (s == semantics::exact) {
      mx_quant<semantics::exact> op;
      op.format = f, op.rounding = m, op.block_size = k, op.flush_fp32_subnorms = flush;
      op(x, y);
    } else {
      mx_quant<> op;
      op.format = f, op.rounding = m, op.block_size = k, op.flush_fp32_subnorms = flush;
      op(x, y);
    }
    return y;
  };
  const auto R = semantics::reference, E = semantics::exact;
  const auto e4m3 = mx_element::fp8_e4m3, int8 = mx_element::int8;
  const auto nearest = rounding_mode::half_up, even = rounding_mode::half_even, tz = rounding_mode::down;
  // 1. The block exponent from the bits: 7.9999995 keeps E = 2, and is clamped to 448 * 2^-6 = 7.
  CHECK(bits(run(R, e4m3, nearest, {f32(0x40ffffff), 1.0f}, 32)[0]) == bits(8.0f));
  CHECK(bits(run(E, e4m3, nearest, {f32(0x40ffffff), 1.0f}, 32)[0]) == bits(7.0f));
  // 2. No overflow: FLT_MAX has E = 127 and gives 448 * 2^119, finite; int8 is not NaN.
  CHECK(bits(run(E, e4m3, nearest, {std::numeric_limits<float>::max()}, 32)[0]) == bits(std::ldexp(448.0f, 119)));
  CHECK(bits(run(E, int8, nearest, {std::numeric_limits<float>::max(), 1.0f}, 32)[1]) == bits(0.0f));
  // 3. The element exponent from the bits: 255.99998 in floor gives 240.
  CHECK(bits(run(E, e4m3, tz, {f32(0x437fffff), 256.0f}, 32)[0]) == bits(240.0f));
  // 4. Exact rounding: 0.49999997 of a step is 0.
  CHECK(bits(run(E, e4m3, nearest, {256.0f, f32(0x3a7fffff)}, 32)[1]) == bits(0.0f));
  // 5. Zero signs kept: -0 gives -0, an underflowing negative quotient gives -0,
  //    a flushed block keeps each sign.
  CHECK(bits(run(E, int8, nearest, {1.0f, -0.0f}, 32)[1]) == bits(-0.0f));
  CHECK(bits(run(E, e4m3, nearest, {3e38f, -1e-30f}, 32)[1]) == bits(-0.0f));
  {
    const auto y = run(E, int8, nearest, {-0x1p-130f, 0x1p-131f}, 32, true);
    CHECK(bits(y[0]) == bits(-0.0f));
    CHECK(bits(y[1]) == bits(0.0f));
  }
  // 6. A quotient below 2^-126 still rounds away in UP: one step, not 0.
  CHECK(bits(run(E, e4m3, rounding_mode::up, {3e38f, 1e-30f}, 32)[1]) == bits(std::ldexp(1.0f, -9 + 127 - 8)));
  // 7. Flush: every subnormal block, the 22 largest subnormals included.
  CHECK(bits(run(E, int8, nearest, {f32(0x007fffea)}, 32, true)[0]) == bits(0.0f));
  CHECK(bits(run(R, int8, nearest, {f32(0x007fffea)}, 32, true)[0]) != bits(0.0f));
  // 8. An all-zero int8 block gets 2^-127 (the clamp), not 2^-126.
  {
    std::vector<float> x(4, 0.0f), s(1);
    mx_quant<semantics::exact> op;
    op.format = int8;
    lowbit::mx_scales(op, x, s);
    CHECK(bits(s[0]) == 0x00400000u);
  }
  // The same: NaN and inf poison their block in both.
  for (float v : run(E, e4m3, nearest, {inf, 1.0f}, 2)) CHECK(std::isnan(v));
  // Ties to even in both: e5m2 9 in a block of max 9 gives 8.
  CHECK(run(E, mx_element::fp8_e5m2, even, {9.0f}, 32)[0] == 8.0f);
}

TEST_CASE("mx_quant: the scale rules on hand-computed blocks", "[mx_quant]") {
  auto scale = [](mx_element f, mx_scale_rule r, float amax) {
    mx_quant<semantics::exact> op;
    op.format = f;
    op.scale_rule = r;
    std::vector<float> x{amax}, s(1);
    lowbit::mx_scales(op, x, s);
    return s[0];
  };
  const auto e4m3 = mx_element::fp8_e4m3, fp4 = mx_element::fp4_e2m1;
  // amax = 500: floor 2^(8 - 8) = 1 (500 clamps to 448); ceil 2^(9 - 8) = 2;
  // even: 500 = 1.953125 * 2^8 rounds (3 bits) to 2^9: 2; round_up: 500 / 448 -> 2.
  CHECK(scale(e4m3, mx_scale_rule::floor, 500.0f) == 1.0f);
  CHECK(scale(e4m3, mx_scale_rule::ceil, 500.0f) == 2.0f);
  CHECK(scale(e4m3, mx_scale_rule::even, 500.0f) == 2.0f);
  CHECK(scale(e4m3, mx_scale_rule::round_up, 500.0f) == 2.0f);
  // amax = 400 = 1.5625 * 2^8: floor 1, ceil 2, even (1.5625 -> 1.5) 1, round_up (400 <= 448) 1.
  CHECK(scale(e4m3, mx_scale_rule::even, 400.0f) == 1.0f);
  CHECK(scale(e4m3, mx_scale_rule::round_up, 400.0f) == 1.0f);
  CHECK(scale(e4m3, mx_scale_rule::ceil, 400.0f) == 2.0f);
  // amax = 256: a power of two: ceil 1 too. 448 exactly: round_up 1; 449: 2.
  CHECK(scale(e4m3, mx_scale_rule::ceil, 256.0f) == 1.0f);
  CHECK(scale(e4m3, mx_scale_rule::round_up, 448.0f) == 1.0f);
  CHECK(scale(e4m3, mx_scale_rule::round_up, 449.0f) == 2.0f);
  // even's tie: 1.9375 * 2^8 = 496 is halfway between 1.875 and 2 (3 bits): up, 2.
  CHECK(scale(e4m3, mx_scale_rule::even, 496.0f) == 2.0f);
  CHECK(scale(e4m3, mx_scale_rule::even, f32(bits(496.0f) - 1)) == 1.0f);
  // fp4 (max 6 = 1.5 * 2^2): amax 6.5 -> round_up 2 (6.5 > 6), floor 1, even (1.625 -> 1.5) 1.
  CHECK(scale(fp4, mx_scale_rule::round_up, 6.5f) == 2.0f);
  CHECK(scale(fp4, mx_scale_rule::floor, 6.5f) == 1.0f);
  CHECK(scale(fp4, mx_scale_rule::even, 6.5f) == 1.0f);
  CHECK(scale(fp4, mx_scale_rule::even, 7.0f) == 2.0f);  // 1.75 is the tie -> 2
}

TEST_CASE("mx_quant: codes and E8M0 scales round-trip to the fake-quantized output", "[mx_quant][codes]") {
  std::uint32_t seed = 3000;
  for (mx_element f : lowbit::all_mx_elements)
    for (bool exact : {false, true}) {
      const std::vector<float> x = edge_values(6 * 50, seed++, true);
      const lowbit::shape sh{6, 50};
      const auto xv = lowbit::strided_view<const float>(x.data(), sh);
      auto round_trip = [&](auto op) {
        op.format = f;
        op.block_size = 16;
        std::vector<float> y(x.size()), back(x.size(), 7.0f);
        op(xv, lowbit::strided_view<float>(y.data(), sh));
        std::vector<std::uint8_t> codes(x.size()), scales(6 * 4);
        lowbit::quantize_codes(op, xv, lowbit::strided_view<std::uint8_t>(codes.data(), sh),
                               lowbit::strided_view<std::uint8_t>(scales.data(), {6, 4}));
        const int width = lowbit::info(f).bits;
        for (std::uint8_t c : codes) CHECK(c < (1u << width));
        // FP6 and FP4 codes pack (four in three bytes, two in one) and come back.
        if (width == 6 || width == 4) {
          const lowbit::packed_format pf = width == 6 ? lowbit::packings::fp6_e2m3 : lowbit::packings::fp4_e2m1;
          std::vector<std::uint8_t> packed(lowbit::packed_size(pf, codes.size())), un(codes.size());
          CHECK(packed.size() == codes.size() * static_cast<std::size_t>(width) / 8);
          lowbit::pack(pf, codes, packed);
          lowbit::unpack(pf, packed, un);
          CHECK(un == codes);
        }
        lowbit::dequantize(op, lowbit::strided_view<const std::uint8_t>(codes.data(), sh),
                           lowbit::strided_view<const std::uint8_t>(scales.data(), {6, 4}),
                           lowbit::strided_view<float>(back.data(), sh));
        // (An int8 code has no -0: a -0 of the int8 format comes back as +0.)
        for (std::size_t i = 0; i < x.size(); ++i)
          if (!(bits(back[i]) == bits(y[i]) || (std::isnan(back[i]) && std::isnan(y[i])) ||
                (f == mx_element::int8 && y[i] == 0.0f && bits(back[i]) == 0u))) {
            FAIL_CHECK(lowbit::to_string(f) << " exact " << exact << " [" << i << "] x " << show(x[i]) << " y "
                                            << show(y[i]) << " back " << show(back[i]) << " code " << int(codes[i]));
            break;
          }
        // The scale bytes are the E8M0 of mx_scales' float scales.
        std::vector<float> fs(scales.size());
        lowbit::mx_scales(op, xv, lowbit::strided_view<float>(fs.data(), {6, 4}));
        for (std::size_t b = 0; b < fs.size(); ++b) {
          const float v = lowbit::e8m0{scales[b]}.value();
          CHECK((bits(v) == bits(fs[b]) || (std::isnan(v) && std::isnan(fs[b]))));
        }
      };
      if (exact)
        round_trip(mx_quant<semantics::exact>{});
      else
        round_trip(mx_quant<>{});
    }
}

TEST_CASE("mx_quant: element codes in the OCP layout", "[mx_quant][codes]") {
  auto codes_of = [](mx_element f, std::vector<float> x) {
    mx_quant<> op;
    op.format = f;
    op.scale_rule = mx_scale_rule::floor;
    std::vector<std::uint8_t> c(x.size()), s(1);
    lowbit::quantize_codes(op, x, c, s);
    return std::pair{c, s[0]};
  };
  // E4M3 with amax 448 (scale 2^0): 448 = 0x7e, -1 = 0xb8, 2^-9 = 0x01, 0.5 = 0x30.
  {
    const auto [c, s] = codes_of(mx_element::fp8_e4m3, {448.0f, -1.0f, 0x1p-9f, 0.5f, -0.0f});
    CHECK(s == 127);
    CHECK(c == std::vector<std::uint8_t>{0x7e, 0xb8, 0x01, 0x30, 0x00});
  }
  // E2M1 with amax 6 (scale 1): 6 = 0x7, -0.5 = 0x9, 1.5 = 0x3.
  {
    const auto [c, s] = codes_of(mx_element::fp4_e2m1, {6.0f, -0.5f, 1.5f});
    CHECK(s == 127);
    CHECK(c == std::vector<std::uint8_t>{0x7, 0x9, 0x3});
  }
  // E3M2 max 28 = 0x1f; E2M3 max 7.5 = 0x1f; E5M2 max 57344 = 0x7b.
  CHECK(codes_of(mx_element::fp6_e3m2, {28.0f}).first[0] == 0x1f);
  CHECK(codes_of(mx_element::fp6_e2m3, {7.5f}).first[0] == 0x1f);
  CHECK(codes_of(mx_element::fp8_e5m2, {57344.0f}).first[0] == 0x7b);
  // int8: 1.5 with amax 1.5 (scale 1): 96; -1: 0xc0 (-64).
  {
    const auto [c, s] = codes_of(mx_element::int8, {1.5f, -1.0f});
    CHECK(s == 127);
    CHECK(c == std::vector<std::uint8_t>{96, 0xc0});
  }
  // A NaN block: scale 0xff, codes 0.
  {
    const auto [c, s] = codes_of(mx_element::fp8_e4m3, {qnan, 1.0f});
    CHECK(s == 255);
    CHECK(c == std::vector<std::uint8_t>{0, 0});
  }
  // e8m0 by itself.
  CHECK(lowbit::e8m0::from_exponent(-127).bits == 0);
  CHECK(bits(lowbit::e8m0{0}.value()) == 0x00400000u);
  CHECK(lowbit::e8m0{254}.value() == 0x1p127f);
  CHECK(lowbit::e8m0::from_exponent(128).is_nan());
  CHECK(std::isnan(lowbit::e8m0{255}.value()));
}

TEST_CASE("mx_quant: attributes by name, and errors before anything is written", "[mx_quant]") {
  using lowbit_test::contains_substring;
  mx_quant<> op;
  lowbit::set_attribute(op, "elem_format", "FP4_E2M1");
  CHECK(op.format == mx_element::fp4_e2m1);
  lowbit::set_attribute(op, "block_size", "16");
  CHECK(op.block_size == 16u);
  lowbit::set_attribute(op, "block_size", 64);
  CHECK(op.block_size == 64u);
  lowbit::set_attribute(op, "axis", "-2");
  CHECK(op.axis == -2);
  lowbit::set_attribute(op, "rounding", "floor");
  CHECK(op.rounding == rounding_mode::down);  // microxcaling's floor: toward zero
  lowbit::set_attribute(op, "rounding_mode", "FLOOR");
  CHECK(op.rounding == rounding_mode::floor);  // lowbit's FLOOR: toward -inf
  lowbit::set_attribute(op, "rounding", "even");
  CHECK(op.rounding == rounding_mode::half_even);
  lowbit::set_attribute(op, "scale_rule", "rceil");
  CHECK(op.scale_rule == mx_scale_rule::round_up);
  lowbit::set_attribute(op, "flush_fp32_subnorms", 1);
  CHECK(op.flush_fp32_subnorms);
  CHECK_THROWS_WITH(lowbit::set_attribute(op, "elem_format", "fp8"), contains_substring("elem_format = \"fp8\" is invalid"));
  CHECK_THROWS_WITH(lowbit::set_attribute(op, "rounding", "nearest_even"), contains_substring("nearest, even, floor or dither"));
  CHECK_THROWS_WITH(lowbit::set_attribute(op, "block_size", "-1"), contains_substring("non-negative integer"));
  CHECK_THROWS_WITH(lowbit::set_attribute(op, "block_size", "12x"), contains_substring("block_size"));
  CHECK_THROWS_WITH(lowbit::set_attribute(op, "shared_exp_method", "none"), contains_substring("not MX"));
  CHECK_THROWS_WITH(lowbit::set_attribute(op, "scale_bits", "99999999999999999999"), contains_substring("scale_bits"));
  CHECK(op.block_size == 64u);  // unchanged by the failures

  const std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  const auto xv = lowbit::strided_view<const float>(x.data(), {2, 3});
  auto untouched = [&](auto&& f, const char* needle) {
    std::vector<float> y(6, 9.0f);
    CHECK_THROWS_WITH(f(y), contains_substring(needle));
    CHECK(y == std::vector<float>(6, 9.0f));
  };
  mx_quant<> good;
  good.block_size = 2;
  untouched([&](auto& y) { auto o = good; o.axis = 2; o(xv, lowbit::strided_view<float>(y.data(), {2, 3})); },
            "axis = 2 is invalid for a tensor of rank 2; expected -2 to 1");
  untouched([&](auto& y) { auto o = good; o.axis = -3; o(xv, lowbit::strided_view<float>(y.data(), {2, 3})); },
            "axis = -3");
  untouched([&](auto& y) { auto o = good; o.block_size = 0; o(xv, lowbit::strided_view<float>(y.data(), {2, 3})); },
            "block_size = 0 is invalid");
  untouched([&](auto& y) { auto o = good; o.scale_bits = 9; o(xv, lowbit::strided_view<float>(y.data(), {2, 3})); },
            "scale_bits = 9 is invalid; expected 1 to 8");
  untouched([&](auto& y) { auto o = good; o.format = static_cast<mx_element>(42); o(xv, lowbit::strided_view<float>(y.data(), {2, 3})); },
            "elem_format = 42");
  untouched([&](auto& y) { good(xv, lowbit::strided_view<float>(y.data(), {3, 2})); }, "shape");
  // output_shape() rejects what the call rejects (it returned x's shape for
  // an axis outside x, and never read the attributes).
  CHECK(good.output_shape(xv) == lowbit::shape{2, 3});
  CHECK_THROWS_WITH([&] { auto o = good; o.axis = 2; return o.output_shape(xv); }(),
                    contains_substring("axis = 2 is invalid for a tensor of rank 2; expected -2 to 1"));
  CHECK_THROWS_WITH([&] { auto o = good; o.block_size = 0; return o.output_shape(xv); }(),
                    contains_substring("block_size = 0 is invalid"));
  {
    // y overlapping x other than in place.
    std::vector<float> buf{1, 2, 3, 4, 5, 6, 7};
    const std::vector<float> before = buf;
    CHECK_THROWS_WITH(good(std::span<const float>(buf.data(), 6), std::span<float>(buf.data() + 1, 6)),
                      contains_substring("overlaps x"));
    CHECK(buf == before);
    // In place works and equals out of place.
    std::vector<float> y(6);
    good(std::span<const float>(buf.data(), 6), y);
    good(std::span<const float>(buf.data(), 6), std::span<float>(buf.data(), 6));
    for (int i = 0; i < 6; ++i) CHECK(bits(buf[i]) == bits(y[i]));
  }
  {
    // Codes: the scales on the codes' bytes, the wrong scale shape; nothing written.
    std::vector<std::uint8_t> c(6, 9), s(4, 9);
    CHECK_THROWS_WITH(lowbit::quantize_codes(good, xv, lowbit::strided_view<std::uint8_t>(c.data(), {2, 3}),
                                             lowbit::strided_view<std::uint8_t>(c.data() + 2, {2, 2})),
                      contains_substring("overlaps codes"));
    CHECK_THROWS_WITH(lowbit::quantize_codes(good, xv, lowbit::strided_view<std::uint8_t>(c.data(), {2, 3}),
                                             lowbit::strided_view<std::uint8_t>(s.data(), {2, 1})),
                      contains_substring("scales has shape [2, 1]; expected the block shape [2, 2]"));
    CHECK(c == std::vector<std::uint8_t>(6, 9));
    CHECK(s == std::vector<std::uint8_t>(4, 9));
    // dequantize: an FP4 code above 15.
    auto o = good;
    o.format = mx_element::fp4_e2m1;
    std::vector<std::uint8_t> codes{1, 2, 16, 3, 4, 5}, sc{127, 127, 127, 127};
    std::vector<float> y(6, 9.0f);
    CHECK_THROWS_WITH(lowbit::dequantize(o, lowbit::strided_view<const std::uint8_t>(codes.data(), {2, 3}),
                                         lowbit::strided_view<const std::uint8_t>(sc.data(), {2, 2}),
                                         lowbit::strided_view<float>(y.data(), {2, 3})),
                      contains_substring("codes[0, 2] = 16 is invalid; expected a 4-bit fp4_e2m1 code"));
    CHECK(y == std::vector<float>(6, 9.0f));
  }
  // Empty tensors: nothing to do, no error.
  {
    std::vector<float> e;
    mx_quant<> o;
    o(std::span<const float>(e), std::span<float>(e));
  }
}

TEST_CASE("mx_quant: packed codes (FP4 two to a byte, FP6 four in three bytes, FP8 one)", "[mx_quant][codes]") {
  using lowbit_test::contains_substring;
  const std::vector<float> x = edge_values(3 * 40, 77, true);
  const lowbit::shape sh{3, 40};
  const auto xv = lowbit::strided_view<const float>(x.data(), sh);
  for (mx_element f : lowbit::all_mx_elements) {
    INFO(lowbit::to_string(f));
    mx_quant<> op;
    op.format = f;
    op.block_size = 16;
    std::vector<float> y(x.size()), back(x.size(), 9.0f);
    op(xv, lowbit::strided_view<float>(y.data(), sh));
    std::vector<std::uint8_t> codes(x.size()), scales(3 * 3), scales2(3 * 3);
    lowbit::quantize_codes(op, xv, lowbit::strided_view<std::uint8_t>(codes.data(), sh),
                           lowbit::strided_view<std::uint8_t>(scales.data(), {3, 3}));
    const std::size_t bytes = lowbit::mx_packed_size(f, x.size());
    CHECK(bytes == x.size() * static_cast<std::size_t>(lowbit::info(f).bits) / 8);
    std::vector<std::uint8_t> packed(bytes);
    lowbit::quantize_packed(op, xv, packed, lowbit::strided_view<std::uint8_t>(scales2.data(), {3, 3}));
    CHECK(scales2 == scales);
    // The packed bytes are lowbit::pack of the codes (or the codes themselves for 8 bits).
    if (lowbit::info(f).bits < 8) {
      std::vector<std::uint8_t> want(bytes);
      lowbit::pack(lowbit::packed_format{lowbit::info(f).bits, false, "x"}, codes, want);
      CHECK(packed == want);
    } else {
      CHECK(packed == codes);
    }
    lowbit::dequantize_packed(op, packed, lowbit::strided_view<const std::uint8_t>(scales.data(), {3, 3}),
                              lowbit::strided_view<float>(back.data(), sh));
    for (std::size_t i = 0; i < x.size(); ++i)
      CHECK((bits(back[i]) == bits(y[i]) || (std::isnan(back[i]) && std::isnan(y[i])) ||
             (f == mx_element::int8 && y[i] == 0.0f && bits(back[i]) == 0u)));
    // A packed range of the wrong size: nothing written.
    std::vector<std::uint8_t> small(bytes - 1, 0xaa), sc(9, 0xaa);
    CHECK_THROWS_WITH(lowbit::quantize_packed(op, xv, small, lowbit::strided_view<std::uint8_t>(sc.data(), {3, 3})),
                      contains_substring("packed has " + std::to_string(bytes - 1) + " bytes; expected " +
                                         std::to_string(bytes)));
    CHECK(sc == std::vector<std::uint8_t>(9, 0xaa));
  }
}
