// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/error.hpp: every class of bad input of
// docs/errors.md raises lowbit::error with its message, and leaves the
// output buffer untouched, bit for bit. One TEST_CASE per table row.
//
// LOWBIT_PRINT_ERRORS=1 ./lowbit-tests "[errors-table]" prints each row's
// message (used to write docs/errors.md).
#include <lowbit/error.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <lowbit/lowbit.hpp>
#include <lowbit/data_type.hpp>

#include "support/catch.hpp"
#include "support/test_util.hpp"

namespace {

using lowbit::strided_view;
constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();

/// Fills `out` with a sentinel, runs `f`, requires lowbit::error with
/// `substring` in its message and `out` unchanged, bit for bit.
template <class T, class F>
void require_error_untouched(const char* row, std::vector<T>& out, const std::string& substring, F&& f) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>)
      out[i] = static_cast<T>(-12345.5) + static_cast<T>(i);
    else
      out[i] = static_cast<T>(0x5a ^ i);
  }
  const std::vector<T> before = out;
  std::string what;
  try {
    f();
  } catch (const lowbit::error& e) {
    what = e.what();
  }
  INFO("row " << row << ": message \"" << what << "\"");
  CHECK_THAT(what, lowbit_test::contains_substring(substring));
  CHECK(std::memcmp(before.data(), out.data(), out.size() * sizeof(T)) == 0);
  if (std::getenv("LOWBIT_PRINT_ERRORS")) std::cout << row << " | " << what << "\n";
}

}  // namespace

TEST_CASE("lowbit::error is a std::invalid_argument", "[error]") {
  const lowbit::error e("lowbit: message");
  const std::invalid_argument& base = e;
  CHECK(std::string(base.what()) == "lowbit: message");
}

TEST_CASE("errors table: shapes that do not broadcast", "[error][errors-table]") {
  std::vector<float> x(3, 1.0f), s(2, 1.0f), y(3);
  require_error_untouched("broadcast", y, "shapes do not broadcast: x has shape [3] and scale has shape [2]",
                          [&] { lowbit::int_quant<>{}(x, s, 0.0f, 8.0f, y); });
}

TEST_CASE("errors table: y of the wrong shape", "[error][errors-table]") {
  std::vector<float> x(3, 1.0f), y(4);
  require_error_untouched("y-shape", y, "y has shape [4]; expected the broadcast shape [3]",
                          [&] { lowbit::int_quant<>{}(x, 1.0f, 0.0f, 8.0f, y); });
}

TEST_CASE("errors table: y that writes an element twice", "[error][errors-table]") {
  std::vector<float> x(6, 1.0f), y(4);
  require_error_untouched("y-stride-0", y,
                          "y (shape [2, 3], strides [0, 1]) writes one element twice (stride 0 in dimension 0, extent 2), as y[0, 0] and y[1, 0]", [&] {
    lowbit::int_quant<>{}(strided_view<const float>(x.data(), {2, 3}), 1.0f, 0.0f, 8.0f,
                          strided_view<float>(y.data(), {2, 3}, {0, 1}));
  });
  // Non-zero strides that meet: 6 elements on 4 floats.
  require_error_untouched("y-self-overlap", y, "y (shape [2, 3], strides [1, 1]) writes one element twice, as y", [&] {
    lowbit::int_quant<>{}(strided_view<const float>(x.data(), {2, 3}), 1.0f, 0.0f, 8.0f,
                          strided_view<float>(y.data(), {2, 3}, {1, 1}));
  });
}

TEST_CASE("errors table: y that overlaps a parameter", "[error][errors-table]") {
  // Per-channel scales stored at the front of y's buffer.
  std::vector<float> x(8, 0.3f), buf(8);
  require_error_untouched("y-overlaps-parameter", buf,
                          "lowbit::int_quant: y (shape [4, 2], strides [2, 1]) overlaps scale (shape [4, 1], strides "
                          "[1, 1]) in memory: y[", [&] {
    lowbit::int_quant<>{}(strided_view<const float>(x.data(), {4, 2}), strided_view<const float>(buf.data(), {4, 1}),
                          0.0f, 8.0f, strided_view<float>(buf.data(), {4, 2}));
  });
}

TEST_CASE("errors table: y that overlaps x without being x", "[error][errors-table]") {
  std::vector<float> buf(5);
  require_error_untouched("y-overlaps-x", buf,
                          "lowbit::int_quant: y (shape [4], strides [1]) overlaps x (shape [4], strides [1]) in memory "
                          "without being x itself: y[", [&] {
    lowbit::int_quant<>{}(std::span<const float>(buf.data(), 4), 1.0f, 0.0f, 8.0f, std::span<float>(buf.data() + 1, 4));
  });
}

TEST_CASE("errors table: extents that are not integers, null data", "[error][errors-table]") {
  std::vector<float> unused(1);
  const std::vector<double> dims{2.0, -1.0};
  require_error_untouched("shape-extent", unused,
                          "lowbit: shape extent -1 in dimension 1 is invalid; expected a non-negative integer",
                          [&] { (void)lowbit::shape(dims.begin(), dims.end()); });
  require_error_untouched("null-data", unused, "lowbit::strided_view: a view of shape [3] has a null data pointer",
                          [&] { (void)strided_view<const float>(nullptr, {3}); });
}

TEST_CASE("errors table: bit width invalid", "[error][errors-table]") {
  std::vector<float> x(3, 1.0f), y(3), b{8.0f, 9.5f, 8.0f};
  require_error_untouched("bitwidth", y, "bitwidth[1] = 9.5 is invalid; expected an integer from 1 to 32",
                          [&] { lowbit::int_quant<>{}(x, 1.0f, 0.0f, b, y); });
  require_error_untouched("bitwidth-0", y, "bitwidth = 0 is invalid",
                          [&] { lowbit::int_quant<>{}(x, 1.0f, 0.0f, 0.0f, y); });
  require_error_untouched("bitwidth-nan", y, "bitwidth = nan is invalid",
                          [&] { lowbit::int_quant<>{}(x, 1.0f, 0.0f, nan_f, y); });
  require_error_untouched("trunc-bitwidth", y, "out_bitwidth = 40 is invalid; expected an integer from 1 to 32",
                          [&] { lowbit::trunc<>{}(x, 1.0f, 0.0f, 8.0f, 1.0f, 40.0f, y); });
}

TEST_CASE("errors table: scale not > 0 in the exact semantics", "[error][errors-table]") {
  std::vector<float> x(3, 1.0f), y(3), s{1.0f, 0.0f, 1.0f};
  require_error_untouched("scale-exact", y,
                          "lowbit::int_quant (exact semantics): scale[1] = 0 is invalid; expected a finite value > 0",
                          [&] { lowbit::int_quant<lowbit::semantics::exact>{}(x, s, 0.0f, 8.0f, y); });
  require_error_untouched("scale-exact-trunc", y, "(exact semantics): out_scale = -1 is invalid", [&] {
    lowbit::trunc<lowbit::semantics::exact>{}(x, 1.0f, 0.0f, 8.0f, -1.0f, 4.0f, y);
  });
}

TEST_CASE("errors table: Trunc's out_scale / scale not near a power of two (exact)", "[error][errors-table]") {
  std::vector<float> x(3, 1.0f), y(3);
  require_error_untouched("trunc-ratio", y, "out_scale / scale = ", [&] {
    lowbit::trunc<lowbit::semantics::exact>{}(x, 3e38f, 0.0f, 8.0f, 1e-45f, 4.0f, y);
  });
}

TEST_CASE("errors table: rounding mode not a value of the enum", "[error][errors-table]") {
  std::vector<float> x(3, 1.0f), y(3);
  require_error_untouched("rounding-enum", y, "rounding_mode = 99 is not a lowbit::rounding_mode value", [&] {
    lowbit::int_quant<>{.rounding = static_cast<lowbit::rounding_mode>(99)}(x, 1.0f, 0.0f, 8.0f, y);
  });
}

TEST_CASE("errors table: attribute names and values", "[error][errors-table]") {
  // The output here is the operator itself: it must keep its attributes.
  std::vector<float> unused(1);
  lowbit::int_quant<> q{.rounding = lowbit::rounding_mode::floor};
  require_error_untouched("attribute-name", unused, "unknown attribute \"rounding\"; expected one of: signed",
                          [&] { lowbit::set_attribute(q, "rounding", "CEIL"); });
  require_error_untouched("attribute-mode", unused, "attribute rounding_mode = \"NEAREST\" is invalid; expected one of ROUND",
                          [&] { lowbit::set_attribute(q, "rounding_mode", "NEAREST"); });
  require_error_untouched("attribute-flag", unused, "attribute signed = \"2\" is invalid; expected 0 or 1", [&] {
    lowbit::set_attribute(q, "signed", "2");
  });
  require_error_untouched("rounding-name", unused, "rounding_mode \"NEAREST\" is unknown; expected one of ROUND",
                          [&] { q.rounding = lowbit::parse_rounding_mode("NEAREST"); });
  CHECK(q.rounding == lowbit::rounding_mode::floor);
  CHECK(q.is_signed);
}

TEST_CASE("errors table: FloatQuant format parameters", "[error][errors-table]") {
  std::vector<float> x(3, 1.0f), y(3);
  lowbit::float_quant<> fq;
  require_error_untouched("fq-exponent", y, "exponent_bitwidth = 0 is invalid; expected an integer from 1 to 255",
                          [&] { fq(x, 1.0f, 0.0f, 3.0f, 7.0f, 448.0f, y); });
  require_error_untouched("fq-mantissa", y, "mantissa_bitwidth = 2.5 is invalid",
                          [&] { fq(x, 1.0f, 4.0f, 2.5f, 7.0f, 448.0f, y); });
  lowbit::float_quant<lowbit::semantics::exact> fe;
  require_error_untouched("fq-max", y, "max_val = 0 is invalid; expected a value > 0",
                          [&] { fe(x, 1.0f, 4.0f, 3.0f, 7.0f, 0.0f, y); });
  require_error_untouched("fq-step", y, "is below 2^-149; expected bias + m <= 150",
                          [&] { fe(x, 1.0f, 4.0f, 3.0f, 200.0f, 448.0f, y); });
  // A bias far beyond any integer type: the message prints it, no overflowing cast (fuzzer, UBSan).
  require_error_untouched("fq-step-huge", y, "the smallest step 2^(1 - bias - m) = 2^-3.4028234663852886e+38",
                          [&] { fe(x, 1.0f, 4.0f, 3.0f, std::numeric_limits<float>::max(), 448.0f, y); });
  require_error_untouched("fq-max-finite", y, "is not a finite float",
                          [&] { fe(x, 1.0f, 8.0f, 3.0f, -100.0f, std::numeric_limits<float>::infinity(), y); });
  lowbit::float_quant<> nosat{.has_inf = false, .has_nan = false, .saturation = false};
  require_error_untouched("fq-overflow", y, "saturation = 0 needs has_inf = 1 or has_nan = 1",
                          [&] { nosat(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y); });
}

TEST_CASE("errors table: codes", "[error][errors-table]") {
  std::vector<float> x{0.5f, 1.0f, nan_f}, xf{0.5f, 1.0f, 2.0f};
  std::vector<std::int8_t> c(3);
  lowbit::int_quant<> q;
  require_error_untouched("codes-range", c, "int8 codes", [&] { lowbit::quantize_codes(q, xf, 1.0f, 0.0f, 16.0f, c); });
  require_error_untouched("codes-nan", c, "codes", [&] { lowbit::quantize_codes(q, x, 1.0f, 0.0f, 8.0f, c); });
  std::vector<std::uint8_t> bits{0, 1, 2};
  std::vector<float> y(3);
  lowbit::bipolar_quant<> b;
  require_error_untouched("codes-bits", y, "codes", [&] { lowbit::dequantize(b, bits, 1.0f, y); });
  const lowbit::minifloat_quant<> e2m1{.format = lowbit::formats::fp4_e2m1};
  std::vector<std::uint8_t> wide{0x3, 0x1f, 0x0};
  require_error_untouched("codes-minifloat", y, "expected a 4-bit pattern",
                          [&] { lowbit::dequantize(e2m1, wide, 1.0f, y); });
}

TEST_CASE("errors table: packing", "[error][errors-table]") {
  std::vector<std::int8_t> codes{1, -3, 9};
  std::vector<std::uint8_t> packed(2), small(1);
  require_error_untouched("pack-range", packed, "codes[2] = 9 is invalid; expected an int4 code from -8 to 7",
                          [&] { lowbit::pack(lowbit::packings::int4, codes, packed); });
  require_error_untouched("pack-size", small, "packed has 1 bytes; expected 2 for 3 int4 codes",
                          [&] { lowbit::pack(lowbit::packings::int4, codes, small); });
  std::vector<std::uint8_t> bad_pad{0x21, 0xf7};
  std::vector<std::int8_t> out(3);
  require_error_untouched("unpack-padding", out, "has nonzero unused high bits",
                          [&] { lowbit::unpack(lowbit::packings::int4, bad_pad, out); });
  std::vector<std::uint8_t> uout(3);
  require_error_untouched("unpack-type", uout, "uint8 codes cannot hold int4 codes",
                          [&] { lowbit::unpack(lowbit::packings::int4, packed, uout); });
}

TEST_CASE("errors table: sizes that overflow", "[error][errors-table]") {
  std::vector<float> y(6);
  float one = 1.0f, two = 2.0f;
  const std::size_t big = std::size_t(1) << 40;
  require_error_untouched("count-overflow", y, "overflows std::size_t", [&] {
    lowbit::int_quant<>{}(strided_view<const float>(&one, {big, 1}, {0, 0}),
                          strided_view<const float>(&two, {1, big}, {0, 0}), 0.0f, 8.0f,
                          strided_view<float>(y.data(), {2, 3}));
  });
  const std::ptrdiff_t pmax = std::numeric_limits<std::ptrdiff_t>::max();
  require_error_untouched("span-overflow", y, "fits in std::ptrdiff_t", [&] {
    lowbit::int_quant<>{}(strided_view<const float>(&one, {2, 3}, {pmax / 2, 1}), 1.0f, 0.0f, 8.0f,
                          strided_view<float>(y.data(), {2, 3}));
  });
}

TEST_CASE("errors table: error_stats and data_type", "[error][errors-table]") {
  std::vector<float> x(3, 1.0f), y(4, 1.0f);
  std::vector<float> unused(1);
  require_error_untouched("stats-shape", unused, "y has shape [4]; expected x's shape [3]",
                          [&] { (void)lowbit::error_stats(x, y); });
  require_error_untouched("stats-range", unused, "expected range_lo <= range_hi",
                          [&] { (void)lowbit::error_stats(x, std::vector<float>(3), 1.0, -1.0); });
  require_error_untouched("data-type-name", unused, "\"INT0\" is not a QONNX data type name",
                          [&] { (void)lowbit::data_type::parse("INT0"); });
  require_error_untouched("data-type-undefined", unused, "min is undefined for SCALEDINT<4>",
                          [&] { (void)lowbit::data_type::parse("SCALEDINT<4>").min(); });
}
