// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/rounding.hpp.
#include <lowbit/rounding.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "support/catch.hpp"
#include "support/test_util.hpp"

using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit_test::bits;

namespace {

// The IntQuant specification's table: inputs, then one column per mode in
// enum order (half_even, ceil, floor, up, down, half_up, half_down).
struct row {
  float y;
  float out[7];
};
const row spec_table[] = {
    {5.5f, {6, 6, 5, 6, 5, 6, 5}},      {2.5f, {2, 3, 2, 3, 2, 3, 2}},
    {1.6f, {2, 2, 1, 2, 1, 2, 2}},      {1.1f, {1, 2, 1, 2, 1, 1, 1}},
    {1.0f, {1, 1, 1, 1, 1, 1, 1}},      {-1.0f, {-1, -1, -1, -1, -1, -1, -1}},
    {-1.1f, {-1, -1, -2, -2, -1, -1, -1}}, {-1.6f, {-2, -1, -2, -2, -1, -2, -2}},
    {-2.5f, {-2, -2, -3, -3, -2, -3, -2}}, {-5.5f, {-6, -5, -6, -6, -5, -6, -5}},
};

template <semantics S, class T>
void check_table() {
  for (const row& r : spec_table) {
    for (std::size_t m = 0; m < 7; ++m) {
      const rounding_mode mode = lowbit::all_rounding_modes[m];
      INFO("y = " << r.y << ", mode " << lowbit::to_string(mode) << ", " << lowbit::to_string(S));
      const T got = lowbit::round_integral<S>(static_cast<T>(r.y), mode);
      CHECK(bits(got) == bits(static_cast<T>(r.out[m])));
    }
  }
}

}  // namespace

TEST_CASE("every mode follows the IntQuant specification's rounding table", "[rounding]") {
  check_table<semantics::reference, float>();
  check_table<semantics::exact, float>();
  check_table<semantics::reference, double>();
  check_table<semantics::exact, double>();
}

TEST_CASE("mode names parse case-insensitively and print canonically", "[rounding]") {
  CHECK(lowbit::parse_rounding_mode("ROUND") == rounding_mode::half_even);
  CHECK(lowbit::parse_rounding_mode("half_even") == rounding_mode::half_even);
  CHECK(lowbit::parse_rounding_mode("hAlF_uP") == rounding_mode::half_up);
  CHECK(lowbit::parse_rounding_mode("Ceil") == rounding_mode::ceil);
  CHECK(lowbit::parse_rounding_mode("floor") == rounding_mode::floor);
  CHECK(lowbit::parse_rounding_mode("up") == rounding_mode::up);
  CHECK(lowbit::parse_rounding_mode("DOWN") == rounding_mode::down);
  CHECK(lowbit::parse_rounding_mode("half_down") == rounding_mode::half_down);
  for (rounding_mode m : lowbit::all_rounding_modes)
    CHECK(lowbit::parse_rounding_mode(lowbit::to_string(m)) == m);
  CHECK(lowbit::to_string(rounding_mode::half_even) == "ROUND");
}

TEST_CASE("lowbit's extension names: ROUND_TO_ODD, DPU, STOCHASTIC and the aliases, any case", "[rounding]") {
  using lowbit::parse_rounding_mode;
  CHECK(parse_rounding_mode("round_to_odd") == rounding_mode::odd);
  CHECK(parse_rounding_mode("Dpu") == rounding_mode::dpu);
  CHECK(parse_rounding_mode("STOCHASTIC") == rounding_mode::stochastic);
  CHECK(parse_rounding_mode("ties_to_even") == rounding_mode::half_even);
  CHECK(parse_rounding_mode("Ties_To_Zero") == rounding_mode::half_down);
  CHECK(parse_rounding_mode("TIES_AWAY") == rounding_mode::half_up);
  CHECK(parse_rounding_mode("ties_away_from_zero") == rounding_mode::half_up);
  CHECK(parse_rounding_mode("round_to_zero") == rounding_mode::down);
  for (rounding_mode m : {rounding_mode::odd, rounding_mode::dpu, rounding_mode::stochastic}) {
    CHECK(parse_rounding_mode(lowbit::to_string(m)) == m);
    CHECK(lowbit::is_valid(m));
    CHECK(!lowbit::is_qonnx_mode(m));
  }
  for (rounding_mode m : lowbit::all_rounding_modes) CHECK(lowbit::is_qonnx_mode(m));
  CHECK(lowbit::to_string(rounding_mode::odd) == "ROUND_TO_ODD");
  // Near misses stay errors.
  for (const char* bad : {"ODD", "ROUND_TO_EVEN", "TIES_AWAY_FROM", "STOCHASTIC_ROUNDING", "DPU ", "round-to-zero"})
    CHECK_THROWS_AS(parse_rounding_mode(bad), lowbit::error);
}

TEST_CASE("ROUND_TO_ODD and DPU on the specification's table and the edge values, both semantics", "[rounding]") {
  const float inf = std::numeric_limits<float>::infinity();
  struct row {
    float y, odd, dpu;
  };
  // DPU: Brevitas's dpu_round docstring gives [-1.5, -0.5, 0.5, 1.5] -> [-1, -0, 0, 2].
  const row rows[] = {{5.5f, 5, 6},          {2.5f, 3, 2},          {1.6f, 1, 2},          {1.1f, 1, 1},
                      {1.0f, 1, 1},          {-1.0f, -1, -1},       {-1.1f, -1, -1},       {-1.6f, -1, -2},
                      {-2.5f, -3, -2},       {-5.5f, -5, -5},       {1.5f, 1, 2},          {-1.5f, -1, -1},
                      {0.5f, 1, 0},          {-0.5f, -1, -0.0f},    {0.3f, 1, 0},          {-0.3f, -1, -0.0f},
                      {4.2f, 5, 4},          {-4.2f, -5, -4},       {2.0f, 2, 2},          {0.0f, 0, 0},
                      {-0.0f, -0.0f, -0.0f}, {-0.49999997f, -1, -0.0f},                    {8388607.5f, 8388607, 8388608},
                      {-8388606.5f, -8388607, -8388606},            {16777217.0f, 16777216, 16777216},
                      {inf, inf, inf},       {-inf, -inf, -inf},    {1e-45f, 1, 0},        {-1e-45f, -1, -0.0f}};
  for (const row& r : rows) {
    CAPTURE(r.y);
    for (semantics s : {semantics::reference, semantics::exact}) {
      const float o = s == semantics::exact ? lowbit::round_integral<semantics::exact>(r.y, rounding_mode::odd)
                                            : lowbit::round_integral(r.y, rounding_mode::odd);
      const float d = s == semantics::exact ? lowbit::round_integral<semantics::exact>(r.y, rounding_mode::dpu)
                                            : lowbit::round_integral(r.y, rounding_mode::dpu);
      CHECK(bits(o) == bits(r.odd));
      CHECK(bits(d) == bits(r.dpu));
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(lowbit::round_integral(nan, rounding_mode::odd)));
  CHECK(std::isnan(lowbit::round_integral(nan, rounding_mode::dpu)));
  CHECK(lowbit::round_integral(-2.5, rounding_mode::dpu) == -2.0);
  CHECK(lowbit::round_integral(-3.5, rounding_mode::dpu) == -3.0);
  CHECK(lowbit::round_integral(3.5, rounding_mode::dpu) == 4.0);
  CHECK(lowbit::round_integral(-2.5, rounding_mode::odd) == -3.0);
}

TEST_CASE("ROUND_TO_ODD and DPU against definitions from the double value, many floats", "[rounding]") {
  // odd: an integral y stays, else the odd one of floor and ceil; dpu: the
  // nearest integer, ties to even except negative ties, which go up.
  std::uint32_t state = 12345u;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float y = std::ldexp(float(state >> 8) / float(1 << 24), int(state % 30) - 6) * ((state & 1) ? -1.0f : 1.0f);
    const double v = y, f = std::floor(v), c = std::ceil(v);
    const double odd = f == v ? v : (std::fmod(f, 2.0) == 0.0 ? c : f);
    double dpu = std::nearbyint(v);  // ties to even (the default rounding direction)
    if (v < 0 && v - f == 0.5) dpu = c;
    CAPTURE(y);
    REQUIRE(double(lowbit::round_integral<semantics::exact>(y, rounding_mode::odd)) == odd);
    REQUIRE(double(lowbit::round_integral<semantics::exact>(y, rounding_mode::dpu)) == dpu);
  }
}

TEST_CASE("an unknown mode name is an error listing the accepted names", "[rounding][errors]") {
  REQUIRE_THROWS_AS(lowbit::parse_rounding_mode("NEAREST"), lowbit::error);
  REQUIRE_THROWS_WITH(lowbit::parse_rounding_mode("NEAREST"),
                      lowbit_test::contains_substring("\"NEAREST\"") &&
                          lowbit_test::contains_substring("HALF_EVEN") &&
                          lowbit_test::contains_substring("HALF_DOWN"));
  REQUIRE_THROWS_AS(lowbit::parse_rounding_mode(""), lowbit::error);
  REQUIRE_THROWS_AS(lowbit::parse_rounding_mode("ROUND "), lowbit::error);
  REQUIRE_THROWS_AS(lowbit::round_integral(1.5f, static_cast<rounding_mode>(42)), lowbit::error);
}

TEST_CASE("the run-time mode of the kernels is no user mode, and rounds as the mode it holds", "[rounding]") {
  namespace ld = lowbit::detail;
  CHECK_FALSE(lowbit::is_valid(ld::run_time_mode));
  REQUIRE_THROWS_AS(lowbit::round_integral(1.5f, ld::run_time_mode), lowbit::error);
  REQUIRE_THROWS_AS(ld::check_rounding_mode(ld::run_time_mode, "lowbit::int_quant"), lowbit::error);
  const float inf = std::numeric_limits<float>::infinity();
  const float ys[] = {-0.0f, 0.0f, 0.3f, -0.3f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f,
                      8388607.5f, -8388607.5f, 1e30f, inf, -inf, std::numeric_limits<float>::denorm_min()};
  auto same = [](float a, float b) { return lowbit_test::bits(a) == lowbit_test::bits(b); };
  for (rounding_mode m : lowbit::all_rounding_modes) {
    for (float y : ys) {
      CAPTURE(lowbit::to_string(m), y);
      CHECK(same(ld::round_step<semantics::exact, ld::run_time_mode>(y, m), lowbit::round_integral<semantics::exact>(y, m)));
      CHECK(same(ld::round_step<semantics::reference, ld::run_time_mode>(y, m),
                 lowbit::round_integral<semantics::reference>(y, m)));
      ld::with_rounding_mode(m, [&](auto mc) {
        constexpr rounding_mode M = decltype(mc)::value;
        CHECK(same(ld::round_step_any_zero<semantics::reference, ld::run_time_mode>(y, m),
                   ld::round_integral_any_zero<semantics::reference, M>(y)));
        CHECK(same(ld::round_step_any_zero<semantics::exact, ld::run_time_mode>(y, m),
                   ld::round_integral_any_zero<semantics::exact, M>(y)));
        CHECK(same(ld::round_step<semantics::reference, M>(y, rounding_mode::half_even),
                   lowbit::round_integral<semantics::reference>(y, m)));
      });
    }
  }
}

TEST_CASE("signed zeros: exact keeps the argument's sign, reference follows numpy", "[rounding]") {
  const float m03 = -0.3f, p03 = 0.3f, nz = -0.0f, pz = 0.0f;
  // exact: every mode that gives 0 keeps the sign of y.
  for (rounding_mode m : lowbit::all_rounding_modes) {
    INFO(lowbit::to_string(m));
    if (m != rounding_mode::up && m != rounding_mode::floor)
      CHECK(bits(lowbit::round_integral<semantics::exact>(m03, m)) == bits(-0.0f));
    if (m != rounding_mode::up && m != rounding_mode::ceil)
      CHECK(bits(lowbit::round_integral<semantics::exact>(p03, m)) == bits(0.0f));
    CHECK(bits(lowbit::round_integral<semantics::exact>(nz, m)) == bits(-0.0f));
    CHECK(bits(lowbit::round_integral<semantics::exact>(pz, m)) == bits(0.0f));
  }
  // reference (FORMAT.md, comparison rule 4 and QUIRKS.md 4).
  using R = semantics;
  CHECK(bits(lowbit::round_integral<R::reference>(p03, rounding_mode::half_down)) == bits(-0.0f));
  CHECK(bits(lowbit::round_integral<R::reference>(m03, rounding_mode::half_down)) == bits(0.0f));
  CHECK(bits(lowbit::round_integral<R::reference>(pz, rounding_mode::half_down)) == bits(-0.0f));
  CHECK(bits(lowbit::round_integral<R::reference>(nz, rounding_mode::half_down)) == bits(-0.0f));
  CHECK(bits(lowbit::round_integral<R::reference>(nz, rounding_mode::half_up)) == bits(0.0f));
  CHECK(bits(lowbit::round_integral<R::reference>(m03, rounding_mode::half_up)) == bits(-0.0f));
  CHECK(bits(lowbit::round_integral<R::reference>(nz, rounding_mode::up)) == bits(0.0f));
  CHECK(bits(lowbit::round_integral<R::reference>(m03, rounding_mode::half_even)) == bits(-0.0f));
  CHECK(bits(lowbit::round_integral<R::reference>(m03, rounding_mode::ceil)) == bits(-0.0f));
  CHECK(bits(lowbit::round_integral<R::reference>(m03, rounding_mode::down)) == bits(-0.0f));
}

TEST_CASE("reference HALF_UP/HALF_DOWN round |y| +- 0.5 first (QUIRKS.md 1-3)", "[rounding]") {
  using R = semantics;
  const float just_below_half = 0.49999997f;  // 3effffff
  CHECK(lowbit::round_integral<R::reference>(just_below_half, rounding_mode::half_up) == 1.0f);
  CHECK(lowbit::round_integral<R::exact>(just_below_half, rounding_mode::half_up) == 0.0f);
  CHECK(lowbit::round_integral<R::reference>(8388609.0f, rounding_mode::half_up) == 8388610.0f);
  CHECK(lowbit::round_integral<R::exact>(8388609.0f, rounding_mode::half_up) == 8388609.0f);
  CHECK(lowbit::round_integral<R::reference>(8388609.0f, rounding_mode::half_down) == 8388608.0f);
  CHECK(lowbit::round_integral<R::exact>(8388609.0f, rounding_mode::half_down) == 8388609.0f);
  CHECK(lowbit::round_integral<R::reference>(16777215.0f, rounding_mode::half_down) == 16777214.0f);
  // exact ties: away from zero for half_up, toward zero for half_down.
  CHECK(lowbit::round_integral<R::exact>(-0.5f, rounding_mode::half_up) == -1.0f);
  CHECK(bits(lowbit::round_integral<R::exact>(-0.5f, rounding_mode::half_down)) == bits(-0.0f));
  CHECK(lowbit::round_integral<R::exact>(4194304.5f, rounding_mode::half_up) == 4194305.0f);
  CHECK(lowbit::round_integral<R::exact>(4194304.5f, rounding_mode::half_down) == 4194304.0f);
}

TEST_CASE("NaN stays NaN and infinities stay infinite in every mode", "[rounding]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (rounding_mode m : lowbit::all_rounding_modes) {
    INFO(lowbit::to_string(m));
    CHECK(std::isnan(lowbit::round_integral<semantics::exact>(nan, m)));
    CHECK(std::isnan(lowbit::round_integral<semantics::reference>(nan, m)));
    CHECK(lowbit::round_integral<semantics::exact>(inf, m) == inf);
    CHECK(lowbit::round_integral<semantics::exact>(-inf, m) == -inf);
    CHECK(lowbit::round_integral<semantics::reference>(-inf, m) == -inf);
  }
}

namespace {

// round_integral_any_zero<reference, M> on y as a scalar and in every lane
// of a batch, against round_integral (numpy's sign(y) * f(|y|)).
template <class T, rounding_mode M>
void check_any_zero(T y) {
  using R = semantics;
  INFO("y = " << y << ", " << lowbit::to_string(M));
  const T want = lowbit::detail::round_integral<R::reference, M>(y);
  CHECK(bits(lowbit::detail::round_integral_any_zero<R::reference, M>(y)) == bits(want));
  using B = xsimd::batch<T>;
  const B got = lowbit::detail::round_integral_any_zero<R::reference, M>(B(y));
  for (std::size_t i = 0; i < B::size; ++i) CHECK(bits(got.get(i)) == bits(want));
}

template <class T>
void check_any_zero_all(T y) {
  check_any_zero<T, rounding_mode::up>(y);
  check_any_zero<T, rounding_mode::half_up>(y);
  check_any_zero<T, rounding_mode::half_down>(y);
}

}  // namespace

TEST_CASE("IntQuant's rounding forms equal numpy's sign(y) * f(|y|) except at y = -0", "[rounding]") {
  // Zeros of f(|y|) keep numpy's signs (HALF_DOWN(+0.3) = -0, HALF_UP(-0.3) = -0),
  // ties, the |y| +- 0.5 quirks, the end of the fraction range, infinities.
  for (float y : {0.3f, -0.3f, 0.5f, -0.5f, 1.5f, -2.5f, 0.49999997f, -0.49999997f, 8388609.0f,
                  -8388609.0f, 16777215.0f, 4194304.5f, 1e-45f, -1e-45f, 0.0f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()})
    check_any_zero_all(y);
  for (double y : {0.3, -0.3, 0.5, -2.5, 0.49999999999999994, 4503599627370497.0, -4503599627370497.0, 5e-324})
    check_any_zero_all(y);
  // y = -0, the one input where the forms may differ: a zero either way.
  using R = semantics;
  CHECK(lowbit::detail::round_integral_any_zero<R::reference, rounding_mode::half_down>(-0.0f) == 0.0f);
  CHECK(lowbit::detail::round_integral_any_zero<R::reference, rounding_mode::up>(-0.0f) == 0.0f);
  CHECK(std::isnan(lowbit::detail::round_integral_any_zero<R::reference, rounding_mode::half_up>(
      std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("exact HALF_UP by truncation of y + pred(1/2) rounds ties away and nothing else", "[rounding]") {
  using R = semantics;
  const auto hu = [](auto y) { return lowbit::round_integral<R::exact>(y, rounding_mode::half_up); };
  // The largest float below 1/2 and 3/2 and below a tie near 2^22; ties; large values.
  CHECK(bits(hu(0.49999997f)) == bits(0.0f));
  CHECK(bits(hu(-0.49999997f)) == bits(-0.0f));
  CHECK(hu(1.4999999f) == 1.0f);
  CHECK(hu(0.5f) == 1.0f);
  CHECK(hu(-1.5f) == -2.0f);
  CHECK(hu(4194304.5f) == 4194305.0f);
  CHECK(hu(4194303.5f) == 4194304.0f);
  CHECK(hu(8388609.0f) == 8388609.0f);
  CHECK(hu(16777216.0f) == 16777216.0f);
  CHECK(bits(hu(1e-45f)) == bits(0.0f));
  CHECK(hu(0.49999999999999994) == 0.0);
  CHECK(hu(0.5) == 1.0);
  CHECK(hu(2251799813685248.5) == 2251799813685249.0);
  CHECK(hu(4503599627370497.0) == 4503599627370497.0);
  // The batch form, lane by lane.
  using B = xsimd::batch<float>;
  const B got = lowbit::detail::round_integral<R::exact, rounding_mode::half_up>(B(-2.5f));
  for (std::size_t i = 0; i < B::size; ++i) CHECK(got.get(i) == -3.0f);
}

TEST_CASE("exact HALF_DOWN and UP: batches (AVX-512: a sum rounded toward zero) equal the scalar forms at the edges",
          "[rounding]") {
  using R = semantics;
  using B = xsimd::batch<float>;
  // Ties, the floats next to them, the smallest fractions, the binade tops
  // near 2^23 and 2^24, zeros, the extremes, infinities.
  const float edge[] = {0.5f,        0.50000006f, 0.49999997f, 1.5f,        1.4999999f,  1.5000001f,
                        2.5f,        0.0f,        -0.0f,       1e-45f,      1.1754942e-38f, 0.99999994f,
                        1.0f,        4194303.5f,  4194304.5f,  8388607.5f,  8388608.0f,  8388609.0f,
                        16777215.0f, 16777216.0f, 16777218.0f, 3.4028235e38f, 0.75f,     1.0000001f};
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs;
  for (float v : edge) {
    xs.push_back(v);
    xs.push_back(-v);
  }
  xs.push_back(inf);
  xs.push_back(-inf);
  while (xs.size() % B::size != 0) xs.push_back(0.25f);
  // The scalar forms, written out: ties toward zero; ceil of the magnitude.
  const auto half_down = [](float y) {
    const float t = std::trunc(y);
    return std::fabs(y - t) > 0.5f ? t + std::copysign(1.0f, y) : t;
  };
  const auto up = [](float y) { return std::copysign(std::ceil(std::fabs(y)), y); };
  for (std::size_t i = 0; i < xs.size(); i += B::size) {
    const B v = B::load_unaligned(&xs[i]);
    const B hd = lowbit::detail::round_integral<R::exact, rounding_mode::half_down>(v);
    const B u = lowbit::detail::round_integral<R::exact, rounding_mode::up>(v);
    for (std::size_t j = 0; j < B::size; ++j) {
      const float y = xs[i + j];
      INFO("y = " << y);
      CHECK(bits(hd.get(j)) == bits(half_down(y)));
      CHECK(bits(lowbit::round_integral<R::exact>(y, rounding_mode::half_down)) == bits(half_down(y)));
      CHECK(bits(u.get(j)) == bits(up(y)));
    }
  }
  // The values that tell ties toward zero from the other modes.
  CHECK(lowbit::round_integral<R::exact>(0.50000006f, rounding_mode::half_down) == 1.0f);
  CHECK(bits(lowbit::round_integral<R::exact>(0.5f, rounding_mode::half_down)) == bits(0.0f));
  CHECK(lowbit::round_integral<R::exact>(8388607.5f, rounding_mode::half_down) == 8388607.0f);
  CHECK(lowbit::round_integral<R::exact>(-2.5f, rounding_mode::half_down) == -2.0f);
}

namespace {

// The bits of v, with a NaN's quiet bit set. Whether a signalling NaN comes
// back quieted from the scalar path depends on the compiler, not on lowbit:
// on baseline x86-64, g++ inlines std::ceil as an SSE2 sequence that passes
// a NaN through unchanged, clang calls the C library's ceilf, which quiets
// it. Sign and payload must still agree.
template <class T>
auto bits_quieted(T v) {
  using U = decltype(bits(v));
  constexpr U quiet = U(1) << (std::numeric_limits<T>::digits - 2);
  return std::isnan(v) ? U(bits(v) | quiet) : bits(v);
}

// round_integral<reference, M> on batches of `xs` (padded) against the
// scalar form, lane by lane, every bit: NaN signs and payloads included
// (a signalling NaN may be quieted: bits_quieted).
template <class T, rounding_mode M>
void check_reference_batches(std::vector<T> xs) {
  using B = xsimd::batch<T>;
  while (xs.size() % B::size != 0) xs.push_back(T(0.25));
  for (std::size_t i = 0; i < xs.size(); i += B::size) {
    const B got = lowbit::detail::round_integral<semantics::reference, M>(B::load_unaligned(&xs[i]));
    for (std::size_t j = 0; j < B::size; ++j) {
      INFO("y = " << xs[i + j] << " (" << std::hex << bits(xs[i + j]) << std::dec << "), " << lowbit::to_string(M));
      CHECK(bits_quieted(got.get(j)) ==
            bits_quieted(lowbit::detail::round_integral<semantics::reference, M>(xs[i + j])));
    }
  }
}

template <class T>
std::vector<T> reference_edges() {
  using lim = std::numeric_limits<T>;
  const T edge[] = {T(0),          T(0.3),         T(0.5),       T(1),         T(1.5),
                    T(2.5),        T(0.75),        lim::denorm_min(), lim::min(), lim::max(),
                    lim::infinity(), std::nextafter(T(0.5), T(0)), std::nextafter(T(1.5), T(2)),
                    T(8388609.0),  T(16777215.0),  T(4503599627370497.0)};
  std::vector<T> xs;
  for (T v : edge) {
    xs.push_back(v);
    xs.push_back(-v);
  }
  // NaNs: quiet and signalling, both signs, a payload.
  using U = decltype(bits(T(0)));
  constexpr int frac = lim::digits - 1;
  const U exp_all = ((U(1) << (sizeof(T) * 8 - 1 - frac)) - 1) << frac, quiet = U(1) << (frac - 1);
  const U sign = U(1) << (sizeof(T) * 8 - 1);
  for (U nan : {U(exp_all | quiet), U(exp_all | quiet | 5), U(exp_all | 3)}) {
    xs.push_back(std::bit_cast<T>(nan));
    xs.push_back(std::bit_cast<T>(U(nan | sign)));
  }
  return xs;
}

}  // namespace

TEST_CASE("reference UP, HALF_UP, HALF_DOWN: batches (AVX-512: a sign factor) give the scalar bits, NaN included",
          "[rounding]") {
  check_reference_batches<float, rounding_mode::up>(reference_edges<float>());
  check_reference_batches<float, rounding_mode::half_up>(reference_edges<float>());
  check_reference_batches<float, rounding_mode::half_down>(reference_edges<float>());
  check_reference_batches<double, rounding_mode::up>(reference_edges<double>());
  check_reference_batches<double, rounding_mode::half_up>(reference_edges<double>());
  check_reference_batches<double, rounding_mode::half_down>(reference_edges<double>());
#if defined(__AVX512F__)
  // The sign factor itself: -1 for negatives and -inf, +1 for the rest
  // (both zeros and every NaN included).
  using B = xsimd::batch<float>;
  if constexpr (lowbit::detail::has_sign_factor<B>) {
    for (float y : reference_edges<float>()) {
      INFO("y = " << y << " (" << std::hex << bits(y) << ")");
      const float want = !std::isnan(y) && y < 0.0f ? -1.0f : 1.0f;
      CHECK(bits(lowbit::detail::sign_factor(B(y)).get(0)) == bits(want));
    }
  }
#endif
}

TEST_CASE("an unknown mode name is quoted with escapes, NUL included, and bounded", "[rounding][errors]") {
  using lowbit_test::contains_substring;
  auto message = [](std::string_view name) -> std::string {
    try {
      (void)lowbit::parse_rounding_mode(name);
    } catch (const lowbit::error& e) {
      return e.what();
    }
    return "(no error)";
  };
  // "FLOOR\0" is not FLOOR, and its NUL does not cut the message short.
  CHECK_THAT(message(std::string_view("FLOOR\0x", 7)),
             contains_substring("lowbit: rounding_mode \"FLOOR\\x00x\" is unknown; expected one of ROUND, HALF_EVEN"));
  CHECK_THAT(message("up\tdown\r\n\"\\\x01\xff"),
             contains_substring("rounding_mode \"up\\tdown\\r\\n\\\"\\\\\\x01\\xff\" is unknown"));
  const std::string m = message(std::string(100000, 'A'));
  CHECK_THAT(m, contains_substring("rounding_mode \"" + std::string(64, 'A') + "\"... (100000 bytes) is unknown"));
  // The quoted name is cut (64 bytes); the rest is the fixed list of
  // accepted names (QONNX's and lowbit's extensions).
  CHECK(m.size() < 400);
}
