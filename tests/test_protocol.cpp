// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/protocol.hpp: the operator protocol, and
// that every element-wise operator declares it consistently.
#include <lowbit/lowbit.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#include <string_view>

#include "support/catch.hpp"
#include "support/test_util.hpp"

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
// ... and declares every hook of the driver (detail/driver.hpp).
template <template <semantics> class Op>
constexpr bool complete = lowbit::detail::complete_operator<Op<semantics::reference>> &&
                          lowbit::detail::complete_operator<Op<semantics::exact>>;
static_assert(complete<lowbit::int_quant> && complete<lowbit::trunc> && complete<lowbit::trunc_v1> &&
              complete<lowbit::bipolar_quant> && complete<lowbit::float_quant>);
// Integer codes: every operator but FloatQuant, whose codes are minifloat
// bit patterns (minifloat_quant).
static_assert(lowbit::detail::protocol_access::has_codes<lowbit::int_quant<>> &&
              lowbit::detail::protocol_access::has_codes<lowbit::bipolar_quant<>> &&
              !lowbit::detail::protocol_access::has_codes<lowbit::float_quant<>>);

// A new operator, declared here the way the library's are: y = q * step,
// q = round_half_even(x / step). Its header would be all it needs: the
// driver gives it validation, broadcasting, threads, SIMD and the codes stages.
namespace ld = lowbit::detail;
template <ld::stage St>
struct toy_grid_kernel {
  template <class V>
  V operator()(V x, V step) const noexcept {
    if constexpr (St == ld::stage::dequant) return x * step;
    const V q = ld::round_integral<semantics::exact, lowbit::rounding_mode::half_even>(x / step);
    if constexpr (St == ld::stage::code) return q;
    return q * step;
  }
};

struct toy_grid {
  lowbit::execution exec{};
  static constexpr const char* name = "toy_grid";
  using inputs = names<"step">;
  using operands = names<"step">;
  static constexpr bool accepts_double = false;
  static constexpr auto attributes() { return std::tuple<>{}; }

  template <class X, class Step, class Y>
  void operator()(const X& x, const Step& step, Y&& y) const {
    ld::call(*this, std::forward<Y>(y), x, step);
  }

 private:
  friend struct ld::protocol_access;
  void check_attributes() const {}
  template <class T>
  void check_values(const ld::call_args<toy_grid, T>& a) const {
    ld::check_scale_positive(name, "step", a.template get<"step">());
  }
  template <class C, ld::stage, class T>
  bool check_codes(const ld::call_args<toy_grid, T>&) const {
    return false;
  }
  template <class T>
  struct state {
    std::array<const ld::nd<const T>*, 1> ops{};
    state(const toy_grid&, const ld::call_args<toy_grid, T>& a, const lowbit::shape&) {
      ops[operands::index<"step">] = &a.template get<"step">();
    }
    template <ld::stage St>
    void run(const ld::piece<T, 1>& pc, bool simd) const {
      ld::run_piece(toy_grid_kernel<St>{}, pc, simd);
    }
  };
};
static_assert(lowbit::detail::complete_operator<toy_grid>);
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

TEST_CASE("A new operator runs through the generic driver and codes stages", "[protocol]") {
  using lowbit_test::bits;
  // Per-channel steps over [2, 3]: the driver broadcasts them.
  const std::vector<float> x{0.26f, -1.3f, 7.9f, 2.5f, -2.5f, 0.0f};
  const std::vector<float> step{0.5f, 1.0f};
  const auto xv = lowbit::strided_view<const float>(x.data(), {2, 3});
  const auto sv = lowbit::strided_view<const float>(step.data(), {2, 1});
  std::vector<float> y(6);
  toy_grid{}(xv, sv, lowbit::strided_view<float>(y.data(), {2, 3}));
  const std::vector<float> want{0.5f, -1.5f, 8.0f, 2.0f, -2.0f, 0.0f};
  for (std::size_t i = 0; i < 6; ++i) CHECK(bits(y[i]) == bits(want[i]));
  // Codes and back, bit for bit.
  std::vector<std::int8_t> c(6);
  lowbit::quantize_codes(toy_grid{}, xv, sv, lowbit::strided_view<std::int8_t>(c.data(), {2, 3}));
  CHECK(c == std::vector<std::int8_t>{1, -3, 16, 2, -2, 0});
  std::vector<float> back(6);
  lowbit::dequantize(toy_grid{}, lowbit::strided_view<const std::int8_t>(c.data(), {2, 3}), sv,
                     lowbit::strided_view<float>(back.data(), {2, 3}));
  for (std::size_t i = 0; i < 6; ++i) CHECK(bits(back[i]) == bits(y[i]));
  // Its checks run before anything is written, with its names.
  std::vector<float> untouched(6, 7.0f);
  CHECK_THROWS_WITH(toy_grid{}(x, -1.0f, untouched), lowbit_test::contains_substring("toy_grid (exact semantics): step = -1"));
  CHECK_THROWS_WITH(toy_grid{}(x, std::vector<float>{1.0f, 2.0f}, untouched),
                    lowbit_test::contains_substring("toy_grid: shapes do not broadcast: x has shape [6] and step"));
  CHECK_THROWS_WITH(toy_grid{}(x, std::span<const float>(untouched.data(), 1), untouched),
                    lowbit_test::contains_substring("step"));
  CHECK(untouched == std::vector<float>(6, 7.0f));
  // A code that does not fit: nothing written.
  std::vector<std::int8_t> small(6, 9);
  CHECK_THROWS_WITH(lowbit::quantize_codes(toy_grid{}, x, 0.01f, small), lowbit_test::contains_substring("codes[1] would be q = -130"));
  CHECK(small == std::vector<std::int8_t>(6, 9));
}
