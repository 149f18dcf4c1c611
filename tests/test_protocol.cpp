// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/protocol.hpp: the operator protocol, and
// that every element-wise operator declares it consistently.
#include <lowbit/lowbit.hpp>

#include <string>
#include <string_view>

#include "support/catch.hpp"

namespace {

using lowbit::semantics;
using lowbit::detail::element_operator;
using lowbit::detail::names;

template <class L>
concept knows_missing = requires { L::template index<"missing">; };

using abc = names<"a", "bb", "ccc">;
static_assert(abc::size == 3 && abc::index<"a"> == 0 && abc::index<"bb"> == 1 && abc::index<"ccc"> == 2);
static_assert(!knows_missing<abc>, "an undeclared name does not compile");
static_assert(names<>::size == 0);

// Every operator of the library follows the protocol, in both semantics.
template <template <semantics> class Op>
constexpr bool both = element_operator<Op<semantics::reference>> && element_operator<Op<semantics::exact>>;
static_assert(both<lowbit::int_quant> && both<lowbit::trunc> && both<lowbit::trunc_v1> &&
              both<lowbit::bipolar_quant> && both<lowbit::float_quant>);
// A type without the declarations does not.
static_assert(!element_operator<int>);
static_assert(!element_operator<lowbit::minifloat_quant<>>, "minifloat_quant is a preset front end of float_quant");

// The kernel operands every operator's run() reads by name.
static_assert(lowbit::int_quant<>::operands::index<"bipolar"> < lowbit::int_quant<>::operands::size);
static_assert(lowbit::trunc<>::operands::index<"t"> < lowbit::trunc<>::operands::size);
static_assert(lowbit::float_quant<>::operands::index<"emin"> < lowbit::float_quant<>::operands::size);

}  // namespace

TEST_CASE("The protocol's names are the operators' parameter names, in call order", "[protocol]") {
  CHECK(abc::list[1] == "bb");
  CHECK(std::string(abc::c_str[2]) == "ccc");
  using iq = lowbit::int_quant<>::inputs;
  CHECK(iq::size == 3);
  CHECK(iq::list[0] == "scale");
  CHECK(iq::list[2] == "bitwidth");
  CHECK(lowbit::detail::input_count<lowbit::trunc<>> == 6);
  CHECK(lowbit::detail::input_count<lowbit::trunc_v1<>> == 5);
  CHECK(lowbit::detail::input_count<lowbit::bipolar_quant<>> == 2);
  CHECK(lowbit::detail::input_count<lowbit::float_quant<>> == 6);
  CHECK(lowbit::float_quant<>::inputs::list[4] == "max_val");
  CHECK_FALSE(lowbit::float_quant<>::accepts_double);
  CHECK(lowbit::int_quant<semantics::exact>::accepts_double);
  // The names in messages are the declared ones: a bad bitwidth is named so.
  std::vector<float> x{1.0f}, y(1);
  CHECK_THROWS_WITH(lowbit::int_quant<>{}(x, 1.0f, 0.0f, 0.5f, y), lowbit_test::contains_substring(std::string(iq::list[2]) + " = 0.5"));
}
