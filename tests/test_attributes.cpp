// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/attributes.hpp.
#include <lowbit/attributes.hpp>
#include <lowbit/bipolar_quant.hpp>
#include <lowbit/float_quant.hpp>
#include <lowbit/int_quant.hpp>
#include <lowbit/trunc.hpp>

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
