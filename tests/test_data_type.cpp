// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/data_type.hpp.
#include <lowbit/data_type.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <lowbit/detail/quote.hpp>
#include <lowbit/minifloat.hpp>

#include "support/catch.hpp"
#include "support/test_util.hpp"

using lowbit::data_type;

namespace {
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

/// Bits of every element equal to `want`.
void require_bits(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK(lowbit_test::bits(got[i]) == lowbit_test::bits(want[i]));
  }
}
}  // namespace

TEST_CASE("data_type: canonical names round-trip", "[data_type]") {
  for (const char* n : {"INT1", "INT2", "INT8", "INT32", "INT64", "UINT2", "UINT8", "UINT64", "BINARY", "BIPOLAR",
                        "TERNARY", "FIXED<8,3>", "FIXED<16,0>", "FIXED<4,-2>", "SCALEDINT<8>", "FLOAT<4,3,7>",
                        "FLOAT<5,2,15>", "FLOAT<2,1,1>", "FLOAT<8,23,127>", "FLOAT<4,3,-3>", "FLOAT32", "FLOAT16"}) {
    INFO(n);
    const data_type t = data_type::parse(n);
    CHECK(t.name() == n);
    CHECK(lowbit::to_string(t) == n);
    CHECK(data_type::parse(t.name()) == t);
  }
  // Other spellings QONNX accepts, and their canonical names.
  CHECK(data_type::parse("UINT1").name() == "BINARY");
  CHECK(data_type::parse("UINT1") == data_type::parse("BINARY"));
  CHECK(data_type::parse("INT08").name() == "INT8");
  CHECK(data_type::parse("FIXED<8, 3>").name() == "FIXED<8,3>");
  CHECK(data_type::parse("FLOAT<4,3>").name() == "FLOAT<4,3,7>");    // IEEE-style bias 2^(e-1) - 1
  CHECK(data_type::parse("FLOAT<5,2>").name() == "FLOAT<5,2,15>");
  CHECK(data_type::parse("FLOAT<4,3,0>").name() == "FLOAT<4,3,7>");  // QONNX: a bias of 0 is the default
  CHECK(data_type().name() == "INT8");
  CHECK_FALSE(data_type::parse("INT8") == data_type::parse("UINT8"));
}

TEST_CASE("data_type: integer types", "[data_type]") {
  const data_type i8 = data_type::parse("INT8"), u4 = data_type::parse("UINT4"), i1 = data_type::parse("INT1");
  CHECK(i8.bitwidth() == 8);
  CHECK(i8.min() == -128.0);
  CHECK(i8.max() == 127.0);
  CHECK(i8.is_signed());
  CHECK(i8.is_integer());
  CHECK_FALSE(i8.is_fixed_point());
  CHECK(u4.min() == 0.0);
  CHECK(u4.max() == 15.0);
  CHECK_FALSE(u4.is_signed());
  CHECK(i1.min() == -1.0);
  CHECK(i1.max() == 0.0);
  CHECK(data_type::parse("INT32").min() == -2147483648.0);
  CHECK(data_type::parse("UINT32").max() == 4294967295.0);
  const data_type bin = data_type::parse("BINARY");
  CHECK(bin.bitwidth() == 1);
  CHECK(bin.min() == 0.0);
  CHECK(bin.max() == 1.0);
  CHECK_FALSE(bin.is_signed());

  CHECK(i8.allowed(127.0));
  CHECK(i8.allowed(-128.0));
  CHECK(i8.allowed(-0.0));
  CHECK_FALSE(i8.allowed(128.0));
  CHECK_FALSE(i8.allowed(-129.0));
  CHECK_FALSE(i8.allowed(1.5));
  CHECK_FALSE(i8.allowed(nan_v));
  CHECK_FALSE(i8.allowed(inf_v));
  CHECK_FALSE(u4.allowed(-1.0));
  CHECK(u4.allowed(15.0));
  CHECK_FALSE(u4.allowed(16.0));
  CHECK(bin.allowed(1.0));
  CHECK_FALSE(bin.allowed(-1.0));
  // 64 bits: the range is checked exactly although 2^63 - 1 is no double.
  const data_type i64 = data_type::parse("INT64"), u64 = data_type::parse("UINT64");
  CHECK(i64.allowed(-std::ldexp(1.0, 63)));
  CHECK_FALSE(i64.allowed(std::ldexp(1.0, 63)));
  CHECK(i64.allowed(std::ldexp(1.0, 63) - 1024.0));
  CHECK(u64.allowed(std::ldexp(1.0, 64) - 2048.0));
  CHECK_FALSE(u64.allowed(std::ldexp(1.0, 64)));
}

TEST_CASE("data_type: INT<n> and UINT<n> for every n", "[data_type]") {
  for (int n = 1; n <= 64; ++n) {
    INFO("n = " << n);
    const data_type s = data_type::parse("INT" + std::to_string(n));
    const data_type u = data_type::parse("UINT" + std::to_string(n));
    CHECK(s.name() == "INT" + std::to_string(n));
    CHECK(u.name() == (n == 1 ? std::string("BINARY") : "UINT" + std::to_string(n)));
    CHECK(s.type_kind() == data_type::kind::integer);
    CHECK(u.type_kind() == data_type::kind::integer);
    CHECK(s.bitwidth() == n);
    CHECK(u.bitwidth() == n);
    CHECK(s.is_signed());
    CHECK_FALSE(u.is_signed());
    CHECK(s.is_integer());
    CHECK(u.is_integer());
    CHECK_FALSE(s.is_fixed_point());
    // min is a power of two: exact for every n.
    CHECK(s.min() == -std::ldexp(1.0, n - 1));
    CHECK(u.min() == 0.0);
    if (n <= 53) {
      // Exact integers: compare with int64 arithmetic.
      const std::int64_t smax = (std::int64_t{1} << (n - 1)) - 1;
      const std::int64_t umax = n == 64 ? 0 : (std::int64_t{1} << n) - 1;
      CHECK(s.max() == static_cast<double>(smax));
      CHECK(u.max() == static_cast<double>(umax));
    }
    if (n <= 52) {
      // Boundaries: min - 1, max + 1 and the halves next to them are exact doubles.
      CHECK(s.allowed(s.min()));
      CHECK(s.allowed(s.max()));
      CHECK_FALSE(s.allowed(s.min() - 1.0));
      CHECK_FALSE(s.allowed(s.max() + 1.0));
      CHECK_FALSE(s.allowed(s.max() - 0.5));
      CHECK(u.allowed(0.0));
      CHECK(u.allowed(u.max()));
      CHECK_FALSE(u.allowed(-1.0));
      CHECK_FALSE(u.allowed(u.max() + 1.0));
      CHECK_FALSE(u.allowed(0.5));
    }
    for (const double bad : {nan_v, inf_v, -inf_v, 0.25, -0.75}) {
      CHECK_FALSE(s.allowed(bad));
      CHECK_FALSE(u.allowed(bad));
    }
  }
  CHECK(data_type::parse("UINT64").max() == std::ldexp(1.0, 64));  // 2^64 - 1 rounded to double
  CHECK(data_type::parse("INT64").max() == std::ldexp(1.0, 63));
}

TEST_CASE("data_type: BIPOLAR and TERNARY", "[data_type]") {
  const data_type b = data_type::parse("BIPOLAR"), t = data_type::parse("TERNARY");
  CHECK(b.bitwidth() == 1);
  CHECK(b.min() == -1.0);
  CHECK(b.max() == 1.0);
  CHECK(b.is_signed());
  CHECK(b.is_integer());
  CHECK(b.allowed(-1.0));
  CHECK(b.allowed(1.0));
  CHECK_FALSE(b.allowed(0.0));
  CHECK_FALSE(b.allowed(nan_v));
  CHECK(t.bitwidth() == 2);
  CHECK(t.min() == -1.0);
  CHECK(t.max() == 1.0);
  CHECK(t.allowed(0.0));
  CHECK(t.allowed(-1.0));
  CHECK_FALSE(t.allowed(2.0));
  CHECK_FALSE(t.allowed(0.5));
}

TEST_CASE("data_type: FIXED<w,i>", "[data_type]") {
  const data_type f = data_type::parse("FIXED<8,3>");
  CHECK(f.bitwidth() == 8);
  CHECK(f.int_bits() == 3);
  CHECK(f.scale_factor() == 0.03125);
  CHECK(f.min() == -4.0);
  CHECK(f.max() == 3.96875);
  CHECK(f.is_signed());
  CHECK_FALSE(f.is_integer());
  CHECK(f.is_fixed_point());
  CHECK(f.allowed(1.25));  // 40 / 32
  CHECK(f.allowed(-4.0));
  CHECK(f.allowed(3.96875));
  CHECK_FALSE(f.allowed(4.0));
  CHECK_FALSE(f.allowed(1.26));
  CHECK_FALSE(f.allowed(0.015625));  // 2^-6: finer than the step
  CHECK_FALSE(f.allowed(nan_v));
  const data_type g = data_type::parse("FIXED<4,-2>");  // step 2^-6, range [-2^-3, 7 * 2^-6]
  CHECK(g.min() == -0.125);
  CHECK(g.max() == 0.109375);
}

TEST_CASE("data_type: FIXED<w,i> grid, value by value", "[data_type]") {
  // FIXED<w,i> holds k * 2^-(w-i) for every INT<w> value k, and nothing between.
  for (const auto& [w, i] : std::vector<std::pair<int, int>>{{1, 0}, {4, -2}, {5, 2}, {6, 6 - 1}, {8, 3}, {10, -4}}) {
    const std::string name = "FIXED<" + std::to_string(w) + "," + std::to_string(i) + ">";
    INFO(name);
    const data_type t = data_type::parse(name);
    CHECK(t.name() == name);
    CHECK(t.type_kind() == data_type::kind::fixed);
    CHECK(t.bitwidth() == w);
    CHECK(t.int_bits() == i);
    const double step = std::ldexp(1.0, i - w);
    CHECK(t.scale_factor() == step);
    const std::int64_t lo = -(std::int64_t{1} << (w - 1)), hi = (std::int64_t{1} << (w - 1)) - 1;
    CHECK(t.min() == static_cast<double>(lo) * step);
    CHECK(t.max() == static_cast<double>(hi) * step);
    for (std::int64_t k = lo; k <= hi; ++k) {
      const double v = static_cast<double>(k) * step;
      INFO("k = " << k);
      CHECK(t.allowed(v));
      CHECK_FALSE(t.allowed(v + step / 2));
    }
    CHECK_FALSE(t.allowed(static_cast<double>(lo - 1) * step));
    CHECK_FALSE(t.allowed(static_cast<double>(hi + 1) * step));
    CHECK_FALSE(t.allowed(inf_v));
    CHECK_FALSE(t.allowed(-inf_v));
    CHECK_FALSE(t.allowed(nan_v));
  }
  // FIXED<1,0>: INT1 scaled by 1/2, so {-0.5, 0}.
  const data_type f10 = data_type::parse("FIXED<1,0>");
  CHECK(f10.min() == -0.5);
  CHECK(f10.max() == 0.0);
  // The widest: 64 bits, step 2^-128 (still a double power of two).
  const data_type wide = data_type::parse("FIXED<64,-64>");
  CHECK(wide.scale_factor() == std::ldexp(1.0, -128));
  CHECK(wide.min() == -std::ldexp(1.0, -65));
  CHECK(wide.allowed(std::ldexp(1.0, -128)));
  CHECK_FALSE(wide.allowed(std::ldexp(1.0, -129)));
  CHECK_FALSE(wide.allowed(1e300));  // 1e300 * 2^128 overflows to inf: not allowed, no UB
}

namespace {
/// Every non-negative value of FLOAT<e,m,b> (no pattern reserved), ascending.
std::vector<double> float_type_values(int e, int m, int b) {
  std::vector<double> v;
  for (int k = 0; k < (1 << m); ++k) v.push_back(std::ldexp(static_cast<double>(k), 1 - b - m));  // subnormals
  for (int E = 1; E < (1 << e); ++E)
    for (int k = 0; k < (1 << m); ++k) v.push_back(std::ldexp(static_cast<double>((1 << m) + k), E - b - m));
  return v;
}
}  // namespace

TEST_CASE("data_type: FLOAT<e,m,b> grid, value by value", "[data_type]") {
  // Independent of allowed()'s formula: list the format's values from its
  // layout, check each is allowed, and that the midpoints between neighbours
  // (one bit finer) and the next step beyond max are not.
  for (const auto& [e, m, b] : std::vector<std::tuple<int, int, int>>{
           {4, 3, 7}, {5, 2, 15}, {2, 1, 1}, {2, 3, 1}, {3, 2, 3}, {3, 2, -2}, {1, 2, 0}, {1, 0, 0}, {4, 0, 7}, {6, 4, 40}}) {
    const std::string name = "FLOAT<" + std::to_string(e) + "," + std::to_string(m) + "," + std::to_string(b) + ">";
    INFO(name);
    const data_type t = data_type::parse(name);
    CHECK(t.type_kind() == data_type::kind::arb_float);
    CHECK(t.bitwidth() == 1 + e + m);
    const std::vector<double> vals = float_type_values(e, m, b);
    REQUIRE(std::is_sorted(vals.begin(), vals.end()));
    CHECK(t.max() == vals.back());
    CHECK(t.min() == -vals.back());
    for (std::size_t j = 0; j < vals.size(); ++j) {
      INFO("value " << vals[j]);
      CHECK(t.allowed(vals[j]));
      CHECK(t.allowed(-vals[j]));
      if (j + 1 < vals.size()) {
        const double mid = (vals[j] + vals[j + 1]) / 2;
        CHECK_FALSE(t.allowed(mid));
        CHECK_FALSE(t.allowed(-mid));
      }
    }
    const double top_step = vals.back() - vals[vals.size() - 2];
    CHECK_FALSE(t.allowed(vals.back() + top_step));
    CHECK_FALSE(t.allowed(-vals.back() - top_step));
    CHECK_FALSE(t.allowed(inf_v));
    CHECK_FALSE(t.allowed(-inf_v));
    CHECK_FALSE(t.allowed(nan_v));
  }
}

TEST_CASE("data_type: FLOAT<e,m,b> allowed follows QONNX on float32", "[data_type]") {
  const data_type f = data_type::parse("FLOAT<4,3,7>");
  // The range is checked on the value itself: 480 + 1e-5 rounds to 480 in
  // float32, but is above max.
  CHECK_FALSE(f.allowed(480.00001));
  // The grid is checked on the float32 rounding, as QONNX does: 1 + 2^-40 is 1 in float32.
  CHECK(f.allowed(1.0 + std::ldexp(1.0, -40)));
  // A format whose largest value float32 cannot hold: FLOAT<8,23,127>
  // (binary32's layout with the inf/NaN exponent used for values).
  const data_type g = data_type::parse("FLOAT<8,23,127>");
  CHECK(g.max() == (2.0 - std::ldexp(1.0, -23)) * std::ldexp(1.0, 128));
  CHECK(g.allowed(static_cast<double>(std::numeric_limits<float>::max())));
  CHECK(g.allowed(std::ldexp(1.0, 128)));                                  // beyond float32: checked exactly
  CHECK(g.allowed(std::ldexp(1.0, 128) + std::ldexp(1.0, 105)));           // step 2^105 there
  CHECK_FALSE(g.allowed(std::ldexp(1.0, 128) + std::ldexp(1.0, 104)));     // half a step
  CHECK_FALSE(g.allowed(std::ldexp(1.0, 129)));                            // above max
  CHECK(g.allowed(std::ldexp(1.0, -149)));                                 // the smallest subnormal
  CHECK(g.allowed(static_cast<double>(std::numeric_limits<float>::denorm_min()) * 3));
  CHECK(g.allowed(static_cast<double>(std::numeric_limits<float>::min())));
}

TEST_CASE("data_type: FLOAT<e,m,b>, FLOAT32, FLOAT16", "[data_type]") {
  const data_type f = data_type::parse("FLOAT<4,3,7>");
  CHECK(f.bitwidth() == 8);
  CHECK(f.exponent_bits() == 4);
  CHECK(f.mantissa_bits() == 3);
  CHECK(f.exponent_bias() == 7);
  CHECK(f.max() == 480.0);  // 1.875 * 2^8: no pattern reserved for NaN (QONNX)
  CHECK(f.min() == -480.0);
  CHECK(f.is_signed());
  CHECK_FALSE(f.is_integer());
  CHECK_FALSE(f.is_fixed_point());
  CHECK(f.allowed(448.0));
  CHECK(f.allowed(480.0));
  CHECK(f.allowed(-480.0));
  CHECK_FALSE(f.allowed(496.0));
  CHECK(f.allowed(0.3125));
  CHECK_FALSE(f.allowed(0.3));
  CHECK(f.allowed(0.0));
  CHECK(f.allowed(-0.0));
  CHECK(f.allowed(std::ldexp(1.0, -9)));      // the smallest subnormal
  CHECK(f.allowed(3 * std::ldexp(1.0, -9)));  // a subnormal
  CHECK(f.allowed(std::ldexp(15.0, -9)));     // 1.875 * 2^-6, the largest normal binade's first value
  CHECK_FALSE(f.allowed(std::ldexp(1.0, -10)));
  CHECK_FALSE(f.allowed(std::ldexp(17.0, -9)));  // 17 * 2^-9 needs 5 significant bits
  CHECK_FALSE(f.allowed(nan_v));
  CHECK_FALSE(f.allowed(inf_v));
  CHECK(data_type::parse("FLOAT<5,2,15>").max() == 114688.0);
  CHECK(data_type::parse("FLOAT<2,1,1>").max() == 6.0);  // FP4 E2M1
  const data_type f32 = data_type::parse("FLOAT32");
  CHECK(f32.bitwidth() == 32);
  CHECK(f32.max() == static_cast<double>(std::numeric_limits<float>::max()));
  CHECK(f32.allowed(nan_v));  // as QONNX: FLOAT32 allows everything
  CHECK(data_type::parse("FLOAT16").max() == 65504.0);
}

TEST_CASE("data_type: SCALEDINT<n> has no range", "[data_type][errors]") {
  const data_type s = data_type::parse("SCALEDINT<8>");
  CHECK(s.bitwidth() == 8);
  CHECK(s.is_signed());
  CHECK_FALSE(s.is_integer());
  REQUIRE_THROWS_WITH(s.min(), lowbit_test::contains_substring("min is undefined for SCALEDINT<8>"));
  REQUIRE_THROWS_AS(s.max(), lowbit::error);
  REQUIRE_THROWS_AS(s.allowed(1.0), lowbit::error);
  REQUIRE_THROWS_AS(s.quant_params(), lowbit::error);
}

TEST_CASE("data_type: bad names are clear errors", "[data_type][errors]") {
  for (const char* n : {"", "INT", "INT0", "INT65", "INTx", "INT8 ", " INT8", "int8", "Int8", "UINT-3", "INT+8",
                        "INT99999999999999999999", "FIXED<8>", "FIXED<8,8>", "FIXED<8,3", "FIXED8,3>", "FIXED<0,-1>",
                        "FIXED<8,-65>", "FIXED<a,b>", "SCALEDINT<0>", "SCALEDINT<8,2>", "FLOAT<4,3", "FLOAT<4>",
                        "FLOAT<4,3,7,1>", "FLOAT<0,3>", "FLOAT<9,3>", "FLOAT<4,24>", "FLOAT<4,-1>", "FLOAT<4,3,256>",
                        "FLOAT<4,,3>", "FLOAT64", "BIPOLARX", "TERNARY2", "DOUBLE", "UINT", "UINT0", "INT-8",
                        "INT 8", "INT8\t", "FIXED<8,3>x", "FIXED<8,3>>", "FIXED<,>", "FIXED<99999999999,3>",
                        "FLOAT<4,3,7> ", "FLOAT<4,3,+7>", "FLOAT<>", "FLOAT<4,3,99999999999>", "SCALEDINT8",
                        "SCALEDINT<65>", "BINARY1", "float32", "FLOAT<4;3>", "FIXED<8.0,3>"}) {
    INFO("name \"" << n << "\"");
    REQUIRE_THROWS_WITH(data_type::parse(n),
                        lowbit_test::contains_substring("lowbit::data_type: " + lowbit::detail::quote(n) +
                                                        " is not a QONNX data type name") &&
                            lowbit_test::contains_substring("expected INT<n> or UINT<n>"));
  }
  REQUIRE_THROWS_WITH(data_type::parse("INT65"), lowbit_test::contains_substring("bit width 65 outside 1 to 64"));
  REQUIRE_THROWS_WITH(data_type::parse("FIXED<8,8>"), lowbit_test::contains_substring("integer width 8"));
  REQUIRE_THROWS_WITH(data_type::parse("INT0"), lowbit_test::contains_substring("bit width 0 outside 1 to 64"));
  REQUIRE_THROWS_WITH(data_type::parse("FLOAT<9,3>"), lowbit_test::contains_substring("exponent bits 9"));
  REQUIRE_THROWS_WITH(data_type::parse("FLOAT<4,3"), lowbit_test::contains_substring("expected FLOAT<e,m>"));
  // An embedded NUL is part of the name, not its end.
  const std::string with_nul("INT8\0", 5);
  REQUIRE_THROWS_AS(data_type::parse(with_nul), lowbit::error);
  // A string_view that is not NUL-terminated: only its own characters are read.
  const std::string longer = "INT8x";
  CHECK(data_type::parse(std::string_view(longer).substr(0, 4)).name() == "INT8");
  CHECK(data_type::parse(std::string_view("FIXED<8,3>>").substr(0, 10)).name() == "FIXED<8,3>");
}

TEST_CASE("data_type: IntQuant parameters give the type's values", "[data_type]") {
  auto run = [](const char* name, const std::vector<float>& x) {
    const data_type t = data_type::parse(name);
    const auto p = t.quant_params();
    std::vector<float> y(x.size());
    p.op(x, p.scale, p.zeropt, p.bitwidth, y);
    for (float v : y) {
      INFO(name << ": " << v);
      CHECK(t.allowed(v));
    }
    return y;
  };
  // ROUND is ties to even: 0.5 -> 0, 2.5 -> 2.
  require_bits(run("INT4", {-10.0f, -3.4f, 0.5f, 2.5f, 7.6f, 100.0f}), {-8.0f, -3.0f, 0.0f, 2.0f, 7.0f, 7.0f});
  require_bits(run("UINT3", {-1.0f, 3.5f, 9.0f}), {0.0f, 4.0f, 7.0f});
  require_bits(run("BINARY", {-1.0f, 0.4f, 0.6f, 3.0f}), {0.0f, 0.0f, 1.0f, 1.0f});
  require_bits(run("BIPOLAR", {-0.2f, 0.3f, 0.0f}), {-1.0f, 1.0f, 1.0f});
  require_bits(run("TERNARY", {-5.0f, 0.4f, 0.6f, 3.0f}), {-1.0f, 0.0f, 1.0f, 1.0f});
  // FIXED<6,2>: INT6 with scale 2^-4. 0.3 * 16 = 4.8 -> 5; -2.5 * 16 = -40 -> -32; 1.99 * 16 -> 32 -> 31.
  require_bits(run("FIXED<6,2>", {0.3f, -2.5f, 1.99f, 5.0f}), {0.3125f, -2.0f, 1.9375f, 1.9375f});
  const auto p = data_type::parse("FIXED<6,2>").quant_params(lowbit::rounding_mode::floor);
  CHECK(p.scale == 0.0625f);
  CHECK(p.bitwidth == 6.0f);
  CHECK(p.op.is_signed);
  CHECK_FALSE(p.op.narrow);
  CHECK(p.op.rounding == lowbit::rounding_mode::floor);
  CHECK(data_type::parse("TERNARY").quant_params().op.narrow);
  CHECK(data_type::parse("BIPOLAR").quant_params().bitwidth == 1.0f);
  CHECK(data_type::parse("BIPOLAR").quant_params().op.is_signed);
  CHECK_FALSE(data_type::parse("BINARY").quant_params().op.is_signed);
  REQUIRE_THROWS_WITH(data_type::parse("FLOAT16").quant_params(),
                      lowbit_test::contains_substring("FLOAT16 has no IntQuant parameters"));
  REQUIRE_THROWS_WITH(data_type::parse("FLOAT<4,3,7>").quant_params(),
                      lowbit_test::contains_substring("FLOAT<4,3,7> has no IntQuant parameters"));
  REQUIRE_THROWS_AS(data_type::parse("FLOAT32").quant_params(), lowbit::error);
}

TEST_CASE("data_type: FloatQuant parameters give the type's values", "[data_type]") {
  const data_type t = data_type::parse("FLOAT<4,3,7>");
  const lowbit::minifloat_format f = t.minifloat();
  CHECK(f.exponent_bits == 4);
  CHECK(f.mantissa_bits == 3);
  CHECK(f.bias == 7);
  CHECK(f.max_value == 480.0);
  CHECK(f.saturation);
  const lowbit::minifloat_quant<> q{.format = f};
  const std::vector<float> x{470.0f, 500.0f, -1e6f, 0.3f, 0.001f, -0.0f};
  std::vector<float> y(x.size());
  q(x, 1.0f, y);
  // 470 in [256, 512) steps by 32 -> 480; 500 saturates to 480; 0.001 -> 2^-9.
  require_bits(y, {480.0f, 480.0f, -480.0f, 0.3125f, 0.001953125f, -0.0f});
  for (float v : y) CHECK(t.allowed(v));
  REQUIRE_THROWS_WITH(data_type::parse("INT8").minifloat(),
                      lowbit_test::contains_substring("INT8 has no FloatQuant parameters"));
}

TEST_CASE("data_type: IntQuant outputs lie on the grid and reach min and max", "[data_type]") {
  // A dense sweep through and beyond each type's range, in every rounding mode.
  std::vector<float> x;
  for (int k = -4000; k <= 4000; ++k) x.push_back(static_cast<float>(k) * 0.0137f);
  x.push_back(std::numeric_limits<float>::max());
  x.push_back(-std::numeric_limits<float>::max());
  x.push_back(-0.0f);
  for (const char* name : {"INT1", "INT2", "INT3", "INT8", "UINT1", "UINT2", "UINT5", "BINARY", "BIPOLAR", "TERNARY",
                           "FIXED<1,0>", "FIXED<4,1>", "FIXED<6,2>", "FIXED<8,-1>", "FIXED<5,4>"}) {
    const data_type t = data_type::parse(name);
    for (const auto r : {lowbit::rounding_mode::half_even, lowbit::rounding_mode::half_up,
                         lowbit::rounding_mode::floor, lowbit::rounding_mode::ceil}) {
      INFO(name << ", rounding " << static_cast<int>(r));
      const auto p = t.quant_params(r);
      std::vector<float> y(x.size());
      p.op(x, p.scale, p.zeropt, p.bitwidth, y);
      bool all_allowed = true, saw_min = false, saw_max = false;
      for (float v : y) {
        all_allowed = all_allowed && t.allowed(v);
        saw_min = saw_min || static_cast<double>(v) == t.min();
        saw_max = saw_max || static_cast<double>(v) == t.max();
      }
      CHECK(all_allowed);
      CHECK(saw_min);
      CHECK(saw_max);
    }
  }
}

TEST_CASE("data_type: IntQuant parameters for wide integer types", "[data_type]") {
  // Up to 24 bits float32 holds every value: the clamp lands on max exactly.
  const data_type i24 = data_type::parse("INT24");
  const auto p24 = i24.quant_params();
  std::vector<float> x{1e9f, -1e9f, 12345.5f, -0.5f}, y(4);
  p24.op(x, p24.scale, p24.zeropt, p24.bitwidth, y);
  require_bits(y, {8388607.0f, -8388608.0f, 12346.0f, -0.0f});
  for (float v : y) CHECK(i24.allowed(v));
  // INT32 on float64 tensors: the bit width input takes up to 53 bits there.
  const data_type i32 = data_type::parse("INT32");
  const auto p32 = i32.quant_params();
  std::vector<double> xd{1e12, -1e12, 2147483646.5, 3.5}, yd(4);
  p32.op(xd, p32.scale, p32.zeropt, p32.bitwidth, yd);
  CHECK(lowbit_test::bits(yd[0]) == lowbit_test::bits(2147483647.0));
  CHECK(lowbit_test::bits(yd[1]) == lowbit_test::bits(-2147483648.0));
  CHECK(lowbit_test::bits(yd[2]) == lowbit_test::bits(2147483646.0));  // ties to even
  CHECK(lowbit_test::bits(yd[3]) == lowbit_test::bits(4.0));
  for (double v : yd) CHECK(i32.allowed(v));
  // Beyond what the operator takes on float32: its own error, nothing written.
  const auto p40 = data_type::parse("INT40").quant_params();
  std::vector<float> y40{7.0f};
  REQUIRE_THROWS_WITH(p40.op(std::vector<float>{1.0f}, p40.scale, p40.zeropt, p40.bitwidth, y40),
                      lowbit_test::contains_substring("bitwidth = 40"));
  CHECK(y40[0] == 7.0f);
}

TEST_CASE("data_type: minifloat parameters, sweep and float32 limits", "[data_type]") {
  std::vector<float> x;
  for (int k = -3000; k <= 3000; ++k) x.push_back(static_cast<float>(k) * 0.173f);
  for (int k = -40; k <= 40; ++k) x.push_back(std::ldexp(1.37f, k));
  x.push_back(std::numeric_limits<float>::max());
  x.push_back(-std::numeric_limits<float>::max());
  x.push_back(std::numeric_limits<float>::denorm_min());
  for (const char* name : {"FLOAT<4,3,7>", "FLOAT<5,2,15>", "FLOAT<2,1,1>", "FLOAT<3,2,3>", "FLOAT<2,3,1>",
                           "FLOAT<4,3,-3>", "FLOAT<1,2,0>", "FLOAT<8,7,127>", "FLOAT<8,23,127>"}) {
    INFO(name);
    const data_type t = data_type::parse(name);
    const lowbit::minifloat_format f = t.minifloat();
    CHECK(f.exponent_bits == t.exponent_bits());
    CHECK(f.mantissa_bits == t.mantissa_bits());
    CHECK(f.bias == t.exponent_bias());
    CHECK_FALSE(f.has_inf);
    CHECK_FALSE(f.has_nan);
    CHECK(f.saturation);
    std::vector<float> y(x.size());
    lowbit::minifloat_quant<>{.format = f}(x, 1.0f, y);
    bool all_allowed = true;
    for (float v : y) all_allowed = all_allowed && t.allowed(v);
    CHECK(all_allowed);
    CHECK(*std::max_element(y.begin(), y.end()) == static_cast<float>(f.max_value));
    CHECK(*std::min_element(y.begin(), y.end()) == -static_cast<float>(f.max_value));
  }
  // Beyond float32: FLOAT<8,7,127> (bfloat16's layout, no inf/NaN) reaches
  // 1.9921875 * 2^128; the parameters saturate at its largest float32 value.
  const data_type bf = data_type::parse("FLOAT<8,7>");
  CHECK(bf.name() == "FLOAT<8,7,127>");
  CHECK(bf.max() == 1.9921875 * std::ldexp(1.0, 128));
  CHECK(bf.minifloat().max_value == 1.9921875 * std::ldexp(1.0, 127));
  CHECK(bf.allowed(bf.minifloat().max_value));
  CHECK(data_type::parse("FLOAT<8,23,127>").minifloat().max_value ==
        static_cast<double>(std::numeric_limits<float>::max()));
  // The exact semantics take these parameters too.
  // FLT_MAX rounds to 2^128, beyond: saturates; 3e38 = 1.763.. * 2^127
  // rounds to 1.765625 * 2^127, below the largest value.
  std::vector<float> xe{std::numeric_limits<float>::max(), 3e38f, -1.0f, 0.3f}, ye(4);
  lowbit::minifloat_quant<lowbit::semantics::exact>{.format = bf.minifloat()}(xe, 1.0f, ye);
  require_bits(ye, {1.9921875f * std::ldexp(1.0f, 127), 1.765625f * std::ldexp(1.0f, 127), -1.0f, 0.30078125f});
  // No FloatQuant parameters when float32 cannot hold the type's values.
  REQUIRE_THROWS_WITH(data_type::parse("FLOAT<8,0,-255>").minifloat(),
                      lowbit_test::contains_substring("FLOAT<8,0,-255> has no FloatQuant parameters on float32"));
  REQUIRE_THROWS_WITH(data_type::parse("FLOAT<1,0,255>").minifloat(),
                      lowbit_test::contains_substring("FLOAT<1,0,255> has no FloatQuant parameters on float32"));
  REQUIRE_THROWS_AS(data_type::parse("FLOAT32").minifloat(), lowbit::error);
  REQUIRE_THROWS_AS(data_type::parse("SCALEDINT<4>").minifloat(), lowbit::error);
}

TEST_CASE("data_type: kinds, FLOAT32 and FLOAT16 answers", "[data_type]") {
  CHECK(data_type::parse("BIPOLAR").type_kind() == data_type::kind::bipolar);
  CHECK(data_type::parse("TERNARY").type_kind() == data_type::kind::ternary);
  CHECK(data_type::parse("BINARY").type_kind() == data_type::kind::integer);
  CHECK(data_type::parse("SCALEDINT<3>").type_kind() == data_type::kind::scaled_int);
  CHECK(data_type::parse("FLOAT32").type_kind() == data_type::kind::float32);
  CHECK(data_type::parse("FLOAT16").type_kind() == data_type::kind::float16);
  const data_type h = data_type::parse("FLOAT16");
  CHECK(h.bitwidth() == 16);
  CHECK(h.min() == -65504.0);
  CHECK(h.is_signed());
  CHECK_FALSE(h.is_integer());
  CHECK_FALSE(h.is_fixed_point());
  CHECK(h.allowed(1e30));  // as QONNX: FLOAT16 allows everything
  CHECK(h.allowed(-inf_v));
  const data_type f = data_type::parse("FLOAT32");
  CHECK(f.min() == -static_cast<double>(std::numeric_limits<float>::max()));
  CHECK_FALSE(f.is_integer());
  CHECK(f.allowed(0.1));
  // The non-FLOAT types answer 0 for the float fields, FIXED's for others 0 / 1.
  CHECK(data_type::parse("INT8").exponent_bits() == 0);
  CHECK(data_type::parse("INT8").int_bits() == 0);
  CHECK(data_type::parse("INT8").scale_factor() == 1.0);
  CHECK(data_type::parse("FIXED<8,3>").mantissa_bits() == 0);
  // Equality is by canonical meaning.
  CHECK(data_type::parse("FLOAT<4,3>") == data_type::parse("FLOAT<4,3,7>"));
  CHECK_FALSE(data_type::parse("FLOAT<4,3,6>") == data_type::parse("FLOAT<4,3,7>"));
  CHECK_FALSE(data_type::parse("FIXED<8,3>") == data_type::parse("FIXED<8,2>"));
  CHECK_FALSE(data_type::parse("INT1") == data_type::parse("BIPOLAR"));
  CHECK_FALSE(data_type::parse("INT2") == data_type::parse("TERNARY"));
  CHECK_FALSE(data_type::parse("INT8") == data_type::parse("SCALEDINT<8>"));
}

namespace {
/// The message of the lowbit::error that parse(name) throws, as what() gives it.
std::string parse_error(std::string_view name) {
  try {
    (void)data_type::parse(name);
  } catch (const lowbit::error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("data_type: numbers too large for an int are out of range, not 'not a number'", "[data_type][errors]") {
  using lowbit_test::contains_substring;
  const std::pair<const char*, const char*> cases[] = {
      {"INT99999999999", "(bit width 99999999999 outside 1 to 64)"},
      {"UINT2147483648", "(bit width 2147483648 outside 1 to 64)"},
      {"INT2147483647", "(bit width 2147483647 outside 1 to 64)"},
      {"FIXED<99999999999,3>", "(total width 99999999999 outside 1 to 64)"},
      {"FIXED<8,-99999999999>", "(integer width -99999999999 not from -64 to the total width - 1)"},
      {"FIXED<8, 99999999999 >", "(integer width 99999999999 not from -64 to the total width - 1)"},
      {"FIXED<8,-2147483648>", "(integer width -2147483648 not from -64 to the total width - 1)"},  // INT_MIN
      {"FIXED<8,-2147483649>", "(integer width -2147483649 not from -64 to the total width - 1)"},
      {"FIXED<8,-0004294967296>", "(integer width -0004294967296 not from -64 to the total width - 1)"},
      {"SCALEDINT<99999999999>", "(bit width 99999999999 outside 1 to 64)"},
      {"FLOAT<99999999999,3>", "(exponent bits 99999999999 outside 1 to 8)"},
      {"FLOAT<4,-99999999999>", "(mantissa bits -99999999999 outside 0 to 23)"},
      {"FLOAT<4,3,-99999999999>", "(exponent bias -99999999999 outside -255 to 255)"},
      {"FLOAT<4,3,99999999999999999999999999999999999999>",
       "(exponent bias 999999999999999999999999... (38 characters) outside -255 to 255)"},
  };
  for (const auto& [name, why] : cases) {
    INFO(name);
    const std::string msg = parse_error(name);
    CHECK_THAT(msg, contains_substring(std::string("lowbit::data_type: \"") + name + "\" is not a QONNX data type name " +
                                       why + "; expected INT<n> or UINT<n>"));
    CHECK_THAT(msg, !contains_substring("not a number"));
  }
  // Still not numbers.
  CHECK_THAT(parse_error("INT-8"), contains_substring("(the bit width is not a number)"));
  CHECK_THAT(parse_error("INTx"), contains_substring("(the bit width is not a number)"));
  CHECK_THAT(parse_error("FIXED<8,->"), contains_substring("(expected FIXED<w,i> with two integers)"));
  CHECK_THAT(parse_error("FIXED<-,3>"), contains_substring("(expected FIXED<w,i> with two integers)"));
  // Leading zeros are digits (as std::from_chars reads them).
  CHECK(lowbit::data_type::parse("INT008") == lowbit::data_type::parse("INT8"));
  CHECK(lowbit::data_type::parse("FIXED<08,-03>") == lowbit::data_type::parse("FIXED<8,-3>"));
}

TEST_CASE("data_type: a name with NUL, control or non-ASCII bytes is quoted whole, a long one bounded",
          "[data_type][errors]") {
  using lowbit_test::contains_substring;
  // The NUL no longer ends the message.
  const std::string msg = parse_error(std::string_view("INT8\0junk", 9));
  CHECK_THAT(msg, contains_substring("lowbit::data_type: \"INT8\\x00junk\" is not a QONNX data type name (the bit "
                                     "width is not a number); expected INT<n> or UINT<n>"));
  CHECK_THAT(parse_error("FLOAT<4,3>\n\"\\\t\x7f\xc3\xa9"),
             contains_substring("\"FLOAT<4,3>\\n\\\"\\\\\\t\\x7f\\xc3\\xa9\" is not"));
  // 64 bytes shown, then the length.
  const std::string long_name = "FIXED<" + std::string(1000, '8') + ",3>";
  const std::string lm = parse_error(long_name);
  CHECK_THAT(lm, contains_substring("\"FIXED<" + std::string(58, '8') + "\"... (1009 bytes) is not a QONNX"));
  CHECK_THAT(lm, contains_substring("(total width 888888888888888888888888... (1000 characters) outside 1 to 64)"));
  CHECK(lm.size() < 400);
}
