// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/protocol.hpp: the operator protocol, and
// that every element-wise operator declares it consistently.
#include <lowbit/lowbit.hpp>
#include <lowbit/detail/block.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
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
              both<lowbit::bipolar_quant> && both<lowbit::float_quant> && both<lowbit::group_int_quant>);
// ... and declares every hook of the driver (detail/driver.hpp).
template <template <semantics> class Op>
constexpr bool complete = lowbit::detail::complete_operator<Op<semantics::reference>> &&
                          lowbit::detail::complete_operator<Op<semantics::exact>>;
static_assert(complete<lowbit::int_quant> && complete<lowbit::trunc> && complete<lowbit::trunc_v1> &&
              complete<lowbit::bipolar_quant> && complete<lowbit::float_quant> && complete<lowbit::group_int_quant>);
// Integer codes: every operator but FloatQuant, whose codes are minifloat
// bit patterns (minifloat_quant).
static_assert(lowbit::detail::protocol_access::has_codes<lowbit::int_quant<>> &&
              lowbit::detail::protocol_access::has_codes<lowbit::group_int_quant<>> &&
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

// A block-scaled operator with a side output, declared the same way: blocks
// of `block` elements along x's last axis (the last one ragged) share a
// step unit * 2^e, e the smallest integer with 7 * 2^e >= the block's
// max |x| (0 for a block of zeros), found by the engine's block reduction;
// q = round_half_even(x / step). Its code stage writes the codes and, as a
// second output, each block's e.
template <class T>
int toy_block_exponent(T amax) {
  if (!(amax > T(0))) return 0;
  int e = std::ilogb(amax) - 3;
  while (std::ldexp(7.0L, e) < static_cast<long double>(amax)) ++e;
  return e;
}

struct toy_block {
  lowbit::execution exec{};
  std::size_t block = 2;
  static constexpr const char* name = "toy_block";
  using inputs = names<"unit">;
  using operands = names<"step">;
  using code_outputs = names<"codes", "exponents">;
  static constexpr bool accepts_double = false;
  static constexpr auto attributes() { return std::tuple<>{}; }

  template <class X, class Unit, class Y>
  void operator()(const X& x, const Unit& unit, Y&& y) const {
    ld::call(*this, std::forward<Y>(y), x, unit);
  }

 private:
  friend struct ld::protocol_access;
  template <class T>
  using args = ld::call_args<toy_block, T>;
  void check_attributes() const {
    if (block == 0) throw lowbit::error("toy_block: block = 0; expected at least 1");
  }
  template <class T>
  void check_values(const args<T>& a) const {
    if (a.template get<"unit">().rank != 0) throw lowbit::error("toy_block: unit must be a scalar");
    if (a.x().rank == 0) throw lowbit::error("toy_block: x must have an axis");
    ld::check_scale_positive(name, "unit", a.template get<"unit">());
  }
  template <class C, ld::stage, class T>
  bool check_codes(const args<T>&) const {
    return false;
  }
  template <class T>
  std::array<lowbit::shape, 1> side_shapes(const args<T>&, const lowbit::shape& out) const {
    return {ld::block_shape(out, {out.rank() - 1, block})};
  }
  template <class T>
  struct state {
    std::array<const ld::nd<const T>*, 1> ops{};
    ld::buffer<T> amax, step;
    ld::nd<const T> step_d;
    state(const toy_block& op, const args<T>& a, const lowbit::shape& out)
        : amax(ld::block_shape(out, {out.rank() - 1, op.block}).count()), step(out.count()) {
      if (out.count() == 0) return;
      const ld::block_layout bl{out.rank() - 1, op.block};
      ld::block_reduce(a.x(), bl, amax.data(), ld::max_abs_reduction<T>{});
      const T unit = *a.template get<"unit">().data;
      const std::size_t n = out[out.rank() - 1], nb = (n + op.block - 1) / op.block;
      for (std::size_t i = 0; i < out.count(); ++i)
        step[i] = std::ldexp(unit, toy_block_exponent(amax[i / n * nb + i % n / op.block]));
      ld::set_row_major(step_d, out.rank(), out.begin());
      step_d.data = step.data();
      ops[0] = &step_d;
    }
    template <ld::stage St>
    void run(const ld::piece<T, 1>& pc, bool simd) const {
      ld::run_piece(toy_grid_kernel<St>{}, pc, simd);
    }
    template <std::size_t I>
    void side(T* values) const {
      static_assert(I == 0);
      for (std::size_t b = 0; b < amax.size(); ++b) values[b] = static_cast<T>(toy_block_exponent(amax[b]));
    }
  };
};
static_assert(lowbit::detail::complete_operator<toy_block>);
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

TEST_CASE("A code stage writes every declared output (codes and block exponents), or none", "[protocol][codes]") {
  using lowbit::strided_view;
  // Blocks of 2 along the last axis of [2, 5]: the third block of each row
  // is ragged (one element).
  const std::vector<float> x{0.3f, -2.9f, 6.0f, 0.0f, 0.75f,  //
                             100.0f, 1.0f, -0.001f, 0.0f, 0.0f};
  const auto xv = strided_view<const float>(x.data(), {2, 5});
  // e per block: 2.9 -> -1 (7 * 0.5 >= 2.9), 6 -> 0, 0.75 -> -3, 100 -> 4,
  // 0.001 -> -12, a block of zeros -> 0.
  const std::vector<std::int8_t> want_e{-1, 0, -3, 4, -12, 0};
  const std::vector<std::int8_t> want_c{1, -6, 6, 0, 6, 6, 0, -4, 0, 0};
  for (unsigned threads : {1u, 2u}) {
    INFO("threads " << threads);
    toy_block op;
    op.exec.threads = threads;
    op.exec.min_elements_per_thread = 1;
    std::vector<std::int8_t> c(10), e(6);
    lowbit::quantize_codes(op, xv, 1.0f, strided_view<std::int8_t>(c.data(), {2, 5}),
                           strided_view<std::int8_t>(e.data(), {2, 3}));
    CHECK(c == want_c);
    CHECK(e == want_e);
    // The fake-quantized output is codes * 2^e, bit for bit.
    std::vector<float> y(10);
    op(xv, 1.0f, strided_view<float>(y.data(), {2, 5}));
    for (std::size_t i = 0; i < 10; ++i) {
      INFO(i);
      CHECK(lowbit_test::bits(y[i]) == lowbit_test::bits(std::ldexp(float(want_c[i]), want_e[i / 5 * 3 + i % 5 / 2])));
    }
  }
  // Every output is validated before any is written.
  const std::vector<std::int8_t> c_init(10, 9), e_init(6, 9);
  auto codes_untouched = [&](auto&& run, const char* what) {
    INFO(what);
    std::vector<std::int8_t> c = c_init, e = e_init;
    run(c, e);
    CHECK(c == c_init);
    CHECK(e == e_init);
  };
  codes_untouched(
      [&](auto& c, auto& e) {
        CHECK_THROWS_WITH(lowbit::quantize_codes(toy_block{}, xv, 1.0f, strided_view<std::int8_t>(c.data(), {2, 5}),
                                                 strided_view<std::int8_t>(e.data(), {2, 2})),
                          lowbit_test::contains_substring("toy_block: exponents has shape [2, 2]; expected the shape [2, 3]"));
      },
      "a side output of the wrong shape");
  codes_untouched(
      [&](auto& c, auto& e) {
        // The exponents on the codes' bytes.
        CHECK_THROWS_WITH(lowbit::quantize_codes(toy_block{}, xv, 1.0f, strided_view<std::int8_t>(c.data(), {2, 5}),
                                                 strided_view<std::int8_t>(c.data() + 2, {2, 3})),
                          lowbit_test::contains_substring("toy_block: exponents (shape [2, 3], strides [3, 1]) overlaps codes"));
        (void)e;
      },
      "a side output overlapping the codes");
  {
    // The exponents on x's bytes: x is never overwritten either.
    std::vector<float> xs = x;
    std::vector<std::int8_t> c = c_init;
    CHECK_THROWS_WITH(
        lowbit::quantize_codes(toy_block{}, strided_view<const float>(xs.data(), {2, 5}), 1.0f,
                               strided_view<std::int8_t>(c.data(), {2, 5}),
                               strided_view<std::int8_t>(reinterpret_cast<std::int8_t*>(xs.data()), {2, 3})),
        lowbit_test::contains_substring("toy_block: exponents (shape [2, 3], strides [3, 1]) overlaps x"));
    CHECK(xs == x);
    CHECK(c == c_init);
  }
  {
    // A side value without a code: negative exponents in uint8.
    std::vector<std::int8_t> c = c_init;
    std::vector<std::uint8_t> e(6, 9);
    CHECK_THROWS_WITH(lowbit::quantize_codes(toy_block{}, xv, 1.0f, strided_view<std::int8_t>(c.data(), {2, 5}),
                                             strided_view<std::uint8_t>(e.data(), {2, 3})),
                      lowbit_test::contains_substring("toy_block: exponents[0, 0] would be -1; expected an integer "
                                                      "from 0 to 255 (uint8 codes)"));
    CHECK(c == c_init);
    CHECK(e == std::vector<std::uint8_t>(6, 9));
  }
  codes_untouched(
      [&](auto& c, auto& e) {
        // A q without a code (a unit of 1/64 makes q = 64 * 6): the exponents are not written either.
        CHECK_THROWS_WITH(lowbit::quantize_codes(toy_block{}, xv, 0.015625f, strided_view<std::int8_t>(c.data(), {2, 5}),
                                                 strided_view<std::int8_t>(e.data(), {2, 3})),
                          lowbit_test::contains_substring("toy_block: codes[0, 1] would be q = -371 (x = -2.9"));
      },
      "a code outside int8");
}

// ---- the per-channel route (detail::run_dense_rows) --------------------------

namespace {

/// A parameter for rows_route_bits: one value, or one per row (shape [R, 1]).
struct row_param {
  float one = 0.0f;
  std::vector<float> per_row;
};

/**
 * Requires the per-channel call `op(x, p..., y)` on dense [R, C] views (the
 * per-channel route) to give the bits of the same call with x read through
 * a view whose rows are padded (not dense: the general route's plan and
 * tiles), out of place and in place, for widths around the batch sizes.
 */
template <class Op, class... P>
void require_rows_route_bits(const Op& op, const P&... p) {
  for (const std::size_t rows : {std::size_t(3), std::size_t(17)})
    for (const std::size_t cols : {std::size_t(8), std::size_t(32), std::size_t(35), std::size_t(64), std::size_t(100)}) {
      CAPTURE(rows, cols);
      const std::size_t n = rows * cols, pad = cols + 5;
      std::vector<float> x(n), xp(rows * pad, 99.0f);
      for (std::size_t i = 0; i < n; ++i) {
        x[i] = std::ldexp(static_cast<float>(static_cast<int>((i * 2654435761u) % 20011) - 10005), -9);
        xp[i / cols * pad + i % cols] = x[i];
      }
      std::vector<std::vector<float>> held;
      auto arg = [&](const row_param& q) -> lowbit::strided_view<const float> {
        if (q.per_row.empty()) {
          held.push_back({q.one});
          return lowbit::strided_view<const float>(held.back().data(), {1, 1});
        }
        held.push_back(std::vector<float>(rows));
        for (std::size_t r = 0; r < rows; ++r) held.back()[r] = q.per_row[r % q.per_row.size()];
        return lowbit::strided_view<const float>(held.back().data(), {rows, 1});
      };
      held.reserve(sizeof...(P));
      const auto params = std::make_tuple(arg(p)...);
      std::vector<float> route(n, 42.0f), general(n, 42.0f), in_place = x;
      const lowbit::strided_view<const float> xv(x.data(), {rows, cols});
      const lowbit::strided_view<const float> xpv(xp.data(), {rows, cols},
                                                  {static_cast<std::ptrdiff_t>(pad), std::ptrdiff_t(1)});
      const lowbit::strided_view<float> rv(route.data(), {rows, cols}), gv(general.data(), {rows, cols}),
          iv(in_place.data(), {rows, cols});
      std::apply([&](const auto&... a) { op(xv, a..., rv); }, params);
      std::apply([&](const auto&... a) { op(xpv, a..., gv); }, params);
      std::apply([&](const auto&... a) { op(lowbit::strided_view<const float>(in_place.data(), {rows, cols}), a..., iv); },
                 params);
      for (std::size_t i = 0; i < n; ++i) {
        CAPTURE(i);
        REQUIRE(std::bit_cast<std::uint32_t>(route[i]) == std::bit_cast<std::uint32_t>(general[i]));
        REQUIRE(std::bit_cast<std::uint32_t>(in_place[i]) == std::bit_cast<std::uint32_t>(general[i]));
      }
    }
}

}  // namespace

TEST_CASE("A per-channel call on dense views gives the general route's bits", "[protocol][route]") {
  using lowbit::rounding_mode;
  using lowbit::semantics;
  const row_param scale{0, {0.05f, 0.75f, 3.0f, 0.125f, 1e-3f}}, zp{0, {0.0f, 1.0f, -2.0f}};
  const row_param bw{0, {4.0f, 8.0f, 2.0f}}, s1{0.0625f, {}}, z0{0.0f, {}}, b8{8.0f, {}};
  for (const rounding_mode m : {rounding_mode::half_even, rounding_mode::half_up, rounding_mode::floor,
                                rounding_mode::stochastic}) {
    CAPTURE(m);
    require_rows_route_bits(lowbit::int_quant<>{.rounding = m}, scale, zp, bw);
    require_rows_route_bits(lowbit::int_quant<semantics::exact>{.rounding = m, .seed = 7}, scale, z0, b8);
    require_rows_route_bits(lowbit::float_quant<>{.rounding = m, .seed = 3}, scale, row_param{4.0f, {}},
                            row_param{3.0f, {}}, row_param{7.0f, {}}, row_param{448.0f, {}});
    require_rows_route_bits(lowbit::float_quant<semantics::exact>{.rounding = m}, scale, row_param{5.0f, {}},
                            row_param{2.0f, {}}, row_param{15.0f, {}}, row_param{57344.0f, {}});
    // A per-channel format: max and mantissa width per row.
    require_rows_route_bits(lowbit::float_quant<semantics::exact>{.rounding = m}, s1, row_param{4.0f, {}},
                            row_param{0, {3.0f, 1.0f}}, row_param{7.0f, {}}, row_param{0, {448.0f, 6.0f, 240.0f}});
  }
  require_rows_route_bits(lowbit::trunc<>{}, scale, zp, row_param{0, {8.0f, 6.0f}}, s1, row_param{4.0f, {}});
  require_rows_route_bits(lowbit::trunc<semantics::exact>{.rounding = rounding_mode::half_even}, scale, z0, b8,
                          row_param{0, {0.5f, 2.0f}}, row_param{4.0f, {}});
  require_rows_route_bits(lowbit::bipolar_quant<>{}, scale);
  require_rows_route_bits(lowbit::bipolar_quant<semantics::exact>{}, scale);
}
