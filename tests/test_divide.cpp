// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/divide.hpp: the batch division
// (quotient), no_contract()'s portable fallback, and the power-of-two fast
// path (scale_divider) that relies on it.
//
// This file is its own program, lowbit-divide-tests (tests/CMakeLists.txt
// leaves it out of lowbit-tests): LOWBIT_DETAIL_PORTABLE_NO_CONTRACT below
// changes the body of inline functions (no_contract and everything that
// inlines it: scale_divider, the IntQuant kernels, ...). In lowbit-tests,
// whose other units see the asm version, that would be two definitions of
// the same inline functions in one program, an ODR violation (the linker
// keeps one of them, and which one is unspecified). Alone, the whole
// program agrees. It is built with -ffp-contract=fast (GCC's default), so
// that the compiler may fuse any product with a following addition that it
// can see: only no_contract stands between x * 2^-k and + zeropt.
#define LOWBIT_DETAIL_PORTABLE_NO_CONTRACT 1

#include <lowbit/detail/divide.hpp>
#include <lowbit/detail/integer.hpp>
#include <lowbit/int_quant.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/test_util.hpp"

static_assert(LOWBIT_DETAIL_NO_CONTRACT_ASM == 0,
              "LOWBIT_DETAIL_PORTABLE_NO_CONTRACT must select no_contract's portable fallback");

using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit_test::bits;
using lowbit_test::show;

namespace {

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
T from_bits(bits_t<T> b) {
  return std::bit_cast<T>(b);
}

/// Values whose bits a copy must keep: both zeros, subnormals, the limits,
/// infinities, quiet and signalling NaNs with payloads and either sign.
template <class T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  using B = bits_t<T>;
  constexpr int mbits = L::digits - 1;
  const B sign = B(1) << (sizeof(T) * 8 - 1);
  const B exp_all = ((B(1) << (sizeof(T) * 8 - 1 - mbits)) - 1) << mbits;
  const B quiet = B(1) << (mbits - 1);
  return {T(0), -T(0), L::denorm_min(), -L::denorm_min(),
          from_bits<T>((B(1) << mbits) - 1),                   // largest subnormal
          from_bits<T>(sign | B(0x5a5a5)),                      // a negative subnormal
          L::min(), -L::min(), L::max(), -L::max(), L::epsilon(), T(1), T(-1.5), T(0.1),
          L::infinity(), -L::infinity(), L::quiet_NaN(),
          from_bits<T>(exp_all | quiet | B(0x12345)),           // quiet NaN, payload
          from_bits<T>(sign | exp_all | quiet | B(1)),          // negative quiet NaN, payload
          from_bits<T>(exp_all | B(1)),                         // signalling NaN
          from_bits<T>(sign | exp_all | (quiet - 1))};          // negative signalling NaN, full payload
}

/// Power-of-two scales with exact reciprocals, and a zero point, for which
/// fl(fl(x / s) + zp) and fma(x, 1 / s, zp) differ: the product is a
/// subnormal that is not exact, and the sum lies on the coarser grid of
/// the next binades (or the product overflows, and zp = -inf).
template <class T>
struct fma_case {
  T x, scale, zp;
};

template <class T>
std::vector<fma_case<T>> fma_cases() {
  using L = std::numeric_limits<T>;
  const T tiny = L::denorm_min();
  std::vector<fma_case<T>> c;
  // x / 2^20 = (1 + 2^-20) * denorm_min: rounds to denorm_min (ties-to-even
  // does not apply: it is below the tie). zp = 2 * min: the sum's grid is
  // 2 * denorm_min, denorm_min is a tie there and goes to even (zp); the
  // exact sum is above the tie and goes up.
  const T s20 = std::ldexp(T(1), 20);
  c.push_back({tiny * s20 + tiny, s20, T(2) * L::min()});
  c.push_back({-(tiny * s20 + tiny), s20, -T(2) * L::min()});
  // x / 2^-1 overflows to inf, then inf + -inf is NaN; the fused operation
  // gives -inf.
  c.push_back({L::max(), T(0.5), -L::infinity()});
  c.push_back({-L::max(), T(0.5), L::infinity()});
  return c;
}

/// fl(fl(x / s) + zp): the division can never be fused.
template <class T>
T two_roundings(T x, T s, T zp) {
  volatile T q = x / s;
  return q + zp;
}

template <class T>
void require_same(T got, T want, const std::string& what) {
  INFO(what << ": got " << show(got) << ", want " << show(want));
  REQUIRE(bits(got) == bits(want));
}

}  // namespace

TEMPLATE_TEST_CASE("no_contract's portable fallback returns a scalar bit for bit", "[divide]", float, double) {
  using T = TestType;
  for (const T v : special_values<T>()) {
    require_same(lowbit::detail::no_contract(v), v, "no_contract");
    require_same(lowbit::detail::no_contract_portable(v), v, "no_contract_portable");
  }
}

TEMPLATE_TEST_CASE("no_contract's portable fallback returns a batch bit for bit", "[divide]", float, double) {
  using T = TestType;
  using B = xsimd::batch<T>;
  INFO("xsimd architecture " << B::arch_type::name() << ", " << B::size << " lanes");
  const std::vector<T> v = special_values<T>();
  // Every value in every lane: lane i of round r holds v[(r + i) % n].
  for (std::size_t r = 0; r < v.size(); ++r) {
    T in[B::size], out[B::size];
    for (std::size_t i = 0; i < B::size; ++i) in[i] = v[(r + i) % v.size()];
    lowbit::detail::no_contract(B::load_unaligned(in)).store_unaligned(out);
    for (std::size_t i = 0; i < B::size; ++i) require_same(out[i], in[i], "lane " + std::to_string(i));
    lowbit::detail::no_contract_portable(B::load_unaligned(in)).store_unaligned(out);
    for (std::size_t i = 0; i < B::size; ++i) require_same(out[i], in[i], "lane " + std::to_string(i));
  }
}

TEMPLATE_TEST_CASE("quotient is the IEEE division in every lane", "[divide]", float, double) {
  // xsimd divides float batches on AArch64 by a refined reciprocal
  // estimate, which is not the quotient; detail::quotient must be.
  using T = TestType;
  using B = xsimd::batch<T>;
  using U = bits_t<T>;
  std::vector<T> v = special_values<T>();
  std::mt19937 rng(42);
  for (int i = 0; i < 2000; ++i) {
    const U r = (static_cast<U>(rng()) << 16) ^ (static_cast<U>(rng()) << (sizeof(T) * 8 - 32)) ^ static_cast<U>(rng());
    v.push_back(from_bits<T>(r));                                                        // any class
    v.push_back(T(static_cast<int>(rng() % 20001) - 10000) / T(64));                     // small values
    v.push_back(std::ldexp(T(1) + T(rng() % 1000) / T(1000), -static_cast<int>(rng() % 160)));  // tiny
  }
  std::size_t checked = 0;
  for (std::size_t i = 0; i + B::size <= v.size(); i += B::size) {
    for (std::size_t shift : {std::size_t(0), std::size_t(7), std::size_t(1)}) {
      T a[B::size], b[B::size], q[B::size];
      for (std::size_t j = 0; j < B::size; ++j) {
        a[j] = v[i + j];
        b[j] = v[(i + j * 13 + shift * 101) % v.size()];
      }
      lowbit::detail::quotient(B::load_unaligned(a), B::load_unaligned(b)).store_unaligned(q);
      for (std::size_t j = 0; j < B::size; ++j) {
        volatile T bj = b[j];
        const T want = a[j] / bj;
        INFO(show(a[j]) << " / " << show(b[j]) << ": got " << show(q[j]) << ", want " << show(want));
        if (std::isnan(want))
          REQUIRE(std::isnan(q[j]));
        else
          REQUIRE(bits(q[j]) == bits(want));
        REQUIRE(bits(lowbit::detail::quotient(a[j], b[j])) == bits(want));
        ++checked;
      }
    }
  }
  REQUIRE(checked > 15000);
}

TEMPLATE_TEST_CASE("the power-of-two divider is the division, never fused with + zeropt", "[divide]", float, double) {
  using T = TestType;
  using B = xsimd::batch<T>;
  // The cases must be ones where a fused multiply-add would differ.
  for (const auto& c : fma_cases<T>()) {
    const T fused = std::fma(c.x, T(1) / c.scale, c.zp);
    INFO("x " << show(c.x) << ", scale " << show(c.scale) << ", zp " << show(c.zp));
    REQUIRE(bits(fused) != bits(two_roundings(c.x, c.scale, c.zp)));
  }
  std::vector<fma_case<T>> cases = fma_cases<T>();
  // More: random inexact subnormal quotients (x a normal with a full
  // significand, x / 2^k below the normal range) with zero points at the
  // bottom of the normal range, and plain values.
  std::mt19937 rng(1234);
  using U = bits_t<T>;
  using L = std::numeric_limits<T>;
  for (int i = 0; i < 400; ++i) {
    const int k = L::digits + static_cast<int>(rng() % 40);
    const int r = static_cast<int>(rng() % (L::digits - 2));
    const U frac = ((static_cast<U>(rng()) << 16) ^ static_cast<U>(rng())) & ((U(1) << (L::digits - 1)) - 1);
    const T m = from_bits<T>(std::bit_cast<U>(T(1)) | frac);  // in [1, 2)
    const T x = std::ldexp(m, k + L::min_exponent - 2 - r) * ((rng() & 1) ? T(1) : T(-1));
    const T zp = L::min() * T(static_cast<int>(rng() % 9) - 4);
    cases.push_back({x, std::ldexp(T(1), k), zp});
    cases.push_back({T(static_cast<int>(rng() % 2001) - 1000) / T(8), T(0.25), T(3)});
  }
  std::size_t fused_differs = 0;
  for (const auto& c : cases) {
    const auto d = lowbit::detail::scale_divider::for_scale(c.scale, true);
    REQUIRE(d.recip);
    const T want_q = c.x / c.scale;
    const T want_y = two_roundings(c.x, c.scale, c.zp);
    if (bits(std::fma(c.x, T(1) / c.scale, c.zp)) != bits(want_y)) ++fused_differs;
    INFO("x " << show(c.x) << ", scale " << show(c.scale) << ", zp " << show(c.zp));
    // The scalar instantiation and the batch one (every lane).
    require_same(d.divide(c.x, c.scale), want_q, "divide");
    require_same(lowbit::detail::scaled_input(d, c.x, c.scale, c.zp), want_y, "x / scale + zp");
    T out[B::size];
    lowbit::detail::scaled_input(d, B(c.x), B(c.scale), B(c.zp)).store_unaligned(out);
    for (std::size_t i = 0; i < B::size; ++i) require_same(out[i], want_y, "batch x / scale + zp");
  }
  INFO(fused_differs << " of " << cases.size() << " cases differ when fused");
  CHECK(fused_differs >= 40);
}

TEMPLATE_TEST_CASE("IntQuant with a power-of-two scale: SIMD (product) and scalar (division) agree", "[divide]",
                   float, double) {
  using T = TestType;
  using L = std::numeric_limits<T>;
  // A few hundred inputs: the fused-multiply-add cases, subnormals, values
  // near ties and overflowing ones, for power-of-two scales (2^20: subnormal
  // quotients; 0.5: overflowing products) and nonzero zero points.
  std::vector<T> x;
  for (const auto& c : fma_cases<T>()) x.push_back(c.x);
  for (const T v : special_values<T>()) x.push_back(v);
  std::mt19937 rng(99);
  for (int i = 0; i < 300; ++i) {
    switch (rng() % 4) {
      case 0: x.push_back(L::denorm_min() * T(static_cast<int>(rng() % 4001) - 2000)); break;
      case 1: x.push_back(T(static_cast<int>(rng() % 1001) - 500) * T(0.25)); break;
      case 2: x.push_back(L::max() / T(1 + rng() % 7) * ((rng() & 1) ? T(1) : T(-1))); break;
      default: x.push_back(std::ldexp(T(static_cast<int>(rng() % 255) - 127), -static_cast<int>(rng() % 40))); break;
    }
  }
  const T scales[] = {std::ldexp(T(1), 20), T(0.5), T(0.25), T(1), T(64)};
  const T zps[] = {T(2) * L::min(), -T(3), T(0.5), -L::infinity(), L::infinity()};
  const rounding_mode modes[] = {rounding_mode::half_even, rounding_mode::ceil, rounding_mode::floor};
  std::size_t calls = 0;
  for (const T s : scales)
    for (const T zp : zps)
      for (const rounding_mode m : modes)
        for (const bool exact : {false, true}) {
          std::vector<T> simd_y(x.size()), scalar_y(x.size());
          const auto run = [&](std::vector<T>& y) {
            if (exact)
              lowbit::int_quant<semantics::exact>{.is_signed = true, .rounding = m}(x, s, zp, T(8), y);
            else
              lowbit::int_quant<semantics::reference>{.is_signed = true, .rounding = m}(x, s, zp, T(8), y);
          };
          {
            const lowbit::detail::simd_scope on(true);
            run(simd_y);
          }
          {
            const lowbit::detail::simd_scope off(false);
            run(scalar_y);
          }
          const long i = lowbit_test::first_bit_difference(simd_y, scalar_y);
          INFO((exact ? "exact" : "reference") << ", scale " << show(s) << ", zeropt " << show(zp) << ", mode "
                                               << static_cast<int>(m));
          INFO((i < 0 ? std::string("no difference")
                      : "x " + show(x[i]) + ": SIMD " + show(simd_y[i]) + ", scalar " + show(scalar_y[i])));
          REQUIRE(i == -1);
          ++calls;
        }
  REQUIRE(calls == 5 * 5 * 3 * 2);
}
