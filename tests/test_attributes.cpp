// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/attributes.hpp.
#include <lowbit/attributes.hpp>
#include <lowbit/detail/quote.hpp>
#include <lowbit/bipolar_quant.hpp>
#include <lowbit/float_quant.hpp>
#include <lowbit/int_quant.hpp>
#include <lowbit/trunc.hpp>

#include <string>
#include <string_view>

#include "support/catch.hpp"

using lowbit::rounding_mode;
using lowbit::set_attribute;
using lowbit_test::contains_substring;

TEST_CASE("set_attribute: QONNX names, string and integer values", "[attributes]") {
  lowbit::int_quant<> q;
  set_attribute(q, "signed", "0");
  set_attribute(q, "narrow", "TRUE");
  set_attribute(q, "rounding_mode", "hAlF_uP");
  CHECK(!q.is_signed);
  CHECK(q.narrow);
  CHECK(q.rounding == rounding_mode::half_up);
  set_attribute(q, "signed", 1);
  set_attribute(q, "narrow", false);
  CHECK(q.is_signed);
  CHECK(!q.narrow);

  lowbit::trunc<lowbit::semantics::exact> t;
  set_attribute(t, "rounding_mode", "ceil");
  set_attribute(t, "narrow", "1");
  CHECK(t.rounding == rounding_mode::ceil);
  CHECK(t.narrow);
  lowbit::trunc_v1<> t1;
  set_attribute(t1, "rounding_mode", "ROUND");
  CHECK(t1.rounding == rounding_mode::half_even);
}

TEST_CASE("set_attribute: FloatQuant takes has_inf and the spec's has_infinity", "[attributes]") {
  lowbit::float_quant<> f;
  CHECK(!f.has_inf);
  set_attribute(f, "has_infinity", "1");
  CHECK(f.has_inf);
  set_attribute(f, "has_inf", 0);
  CHECK(!f.has_inf);
  set_attribute(f, "has_nan", "true");
  set_attribute(f, "has_subnormal", "0");
  set_attribute(f, "saturation", "false");
  set_attribute(f, "rounding_mode", "down");
  CHECK(f.has_nan);
  CHECK(!f.has_subnormal);
  CHECK(!f.saturation);
  CHECK(f.rounding == rounding_mode::down);
}

TEST_CASE("set_attribute: unknown names and bad values throw and change nothing", "[attributes][errors]") {
  lowbit::float_quant<> f;
  const lowbit::float_quant<> before = f;
  auto unchanged = [&] {
    CHECK(f.rounding == before.rounding);
    CHECK(f.has_inf == before.has_inf);
    CHECK(f.has_nan == before.has_nan);
    CHECK(f.saturation == before.saturation);
  };
  REQUIRE_THROWS_WITH(set_attribute(f, "signed", "1"),
                      contains_substring("lowbit::float_quant: unknown attribute \"signed\"; expected one of: "
                                         "rounding_mode, has_inf (or has_infinity), has_nan"));
  REQUIRE_THROWS_WITH(set_attribute(f, "has_nan", "yes"),
                      contains_substring("attribute has_nan = \"yes\" is invalid; expected 0 or 1"));
  REQUIRE_THROWS_WITH(set_attribute(f, "saturation", 2),
                      contains_substring("attribute saturation = 2 is invalid; expected 0 or 1"));
  REQUIRE_THROWS_WITH(set_attribute(f, "rounding_mode", "nearest"),
                      contains_substring("attribute rounding_mode = \"nearest\" is invalid; expected one of ROUND"));
  REQUIRE_THROWS_WITH(set_attribute(f, "rounding_mode", 1),
                      contains_substring("a string naming a rounding mode"));
  REQUIRE_THROWS_AS(set_attribute(f, "Has_Inf", "1"), lowbit::error);  // names are exact
  unchanged();
  lowbit::bipolar_quant<> b;
  REQUIRE_THROWS_WITH(set_attribute(b, "rounding_mode", "ROUND"),
                      contains_substring("lowbit::bipolar_quant: unknown attribute \"rounding_mode\"; expected "
                                         "none (the operator has no attributes)"));
  lowbit::trunc_v1<> t1;
  REQUIRE_THROWS_WITH(set_attribute(t1, "narrow", "1"), contains_substring("expected one of: rounding_mode"));
}

namespace {
template <class Op, class V>
std::string attribute_error(Op& op, std::string_view name, const V& value) {
  try {
    set_attribute(op, name, value);
  } catch (const lowbit::error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("set_attribute: names and values are quoted with escapes, NUL included, and bounded",
          "[attributes][errors]") {
  lowbit::int_quant<> q{.rounding = rounding_mode::floor};
  const lowbit::int_quant<> before = q;
  // A NUL in a name or a value: not a match, and the message goes on past it.
  CHECK_THAT(attribute_error(q, std::string_view("rounding_mode\0", 14), "CEIL"),
             contains_substring("lowbit::int_quant: unknown attribute \"rounding_mode\\x00\"; expected one of: "
                                "signed, narrow, rounding_mode"));
  CHECK_THAT(attribute_error(q, "rounding_mode", std::string_view("CEIL\0", 5)),
             contains_substring("attribute rounding_mode = \"CEIL\\x00\" is invalid; expected one of ROUND"));
  CHECK_THAT(attribute_error(q, "signed", std::string_view("1\0", 2)),
             contains_substring("attribute signed = \"1\\x00\" is invalid; expected 0 or 1 (or true or false)"));
  CHECK_THAT(attribute_error(q, "narrow", "\xe2\x9c\x93\n"),
             contains_substring("attribute narrow = \"\\xe2\\x9c\\x93\\n\" is invalid"));
  const std::string long_msg = attribute_error(q, std::string(5000, 'n'), "1");
  CHECK_THAT(long_msg, contains_substring("unknown attribute \"" + std::string(64, 'n') + "\"... (5000 bytes);"));
  CHECK(long_msg.size() < 300);
  CHECK(q.rounding == before.rounding);
  CHECK(q.is_signed == before.is_signed);
  CHECK(q.narrow == before.narrow);
}

TEST_CASE("set_attribute: an integer value is printed as the caller's value, unsigned ones included",
          "[attributes][errors]") {
  lowbit::int_quant<> q{};
  const lowbit::int_quant<> before = q;
  CHECK_THAT(attribute_error(q, "signed", 18446744073709551615ull),
             contains_substring("attribute signed = 18446744073709551615 is invalid; expected 0 or 1"));
  CHECK_THAT(attribute_error(q, "narrow", 9223372036854775809ull),
             contains_substring("attribute narrow = 9223372036854775809 is invalid"));
  CHECK_THAT(attribute_error(q, "narrow", static_cast<long long>(-9223372036854775807LL - 1)),
             contains_substring("attribute narrow = -9223372036854775808 is invalid"));
  CHECK_THAT(attribute_error(q, "rounding_mode", 4294967295u),
             contains_substring("attribute rounding_mode = 4294967295 is invalid; expected a string naming"));
  CHECK_THAT(attribute_error(q, "narrow", static_cast<unsigned char>(2)), contains_substring("narrow = 2 is invalid"));
  CHECK(q.is_signed == before.is_signed);
  CHECK(q.narrow == before.narrow);
  set_attribute(q, "narrow", 1ull);
  set_attribute(q, "signed", static_cast<unsigned char>(0));
  set_attribute(q, "signed", true);
  CHECK(q.narrow);
  CHECK(q.is_signed);
}

TEST_CASE("detail::quote: C-style escapes, every byte visible, at most 64 bytes shown", "[attributes]") {
  using lowbit::detail::quote;
  CHECK(quote("") == "\"\"");
  CHECK(quote("FLOOR") == "\"FLOOR\"");
  CHECK(quote(std::string_view("a\0b", 3)) == "\"a\\x00b\"");
  CHECK(quote("\"\\\n\r\t") == "\"\\\"\\\\\\n\\r\\t\"");
  CHECK(quote("\x01\x1f\x7f\x80\xff ~") == "\"\\x01\\x1f\\x7f\\x80\\xff ~\"");
  CHECK(quote(std::string(64, 'x')) == "\"" + std::string(64, 'x') + "\"");
  CHECK(quote(std::string(65, 'x')) == "\"" + std::string(64, 'x') + "\"... (65 bytes)");
  // Escapes count the input bytes, not the output characters.
  CHECK(quote(std::string(70, '\0')) == "\"" + [] {
          std::string r;
          for (int i = 0; i < 64; ++i) r += "\\x00";
          return r;
        }() + "\"... (70 bytes)");
}
