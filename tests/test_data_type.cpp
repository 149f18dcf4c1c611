// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/data_type.hpp.
#include <lowbit/data_type.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

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
                        "FLOAT<4,,3>", "FLOAT64", "BIPOLARX", "TERNARY2", "DOUBLE"}) {
    INFO("name \"" << n << "\"");
    REQUIRE_THROWS_WITH(data_type::parse(n),
                        lowbit_test::contains_substring("lowbit::data_type: \"" + std::string(n) +
                                                        "\" is not a QONNX data type name") &&
                            lowbit_test::contains_substring("expected INT<n> or UINT<n>"));
  }
  REQUIRE_THROWS_WITH(data_type::parse("INT65"), lowbit_test::contains_substring("bit width 65 outside 1 to 64"));
  REQUIRE_THROWS_WITH(data_type::parse("FIXED<8,8>"), lowbit_test::contains_substring("integer width 8"));
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
