// SPDX-License-Identifier: Apache-2.0
// Exhaustive: for one IntQuant configuration per rounding mode, the SIMD path
// equals the scalar path bit for bit on all 2^32 float32 inputs.
// Hidden ([.exhaustive]); run by the ctest "exhaustive" (label exhaustive).
#include <lowbit/int_quant.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/test_util.hpp"

namespace {

struct config {
  lowbit::rounding_mode mode;
  bool exact;
  bool is_signed;
  bool narrow;
  float scale, zeropt, bitwidth;
};

// One per mode; semantics, signedness, narrow and the parameters vary so the
// sweeps also cover the exact-semantics formulas, unsigned clamps, a zero
// point, a tiny scale and the bipolar path. (A subnormal scale is covered by
// the unit tests only: every division by it takes a microcode assist, which
// would make one sweep take longer than CI allows.)
const config configs[] = {
    {lowbit::rounding_mode::half_even, false, true, false, 0.05f, 0.0f, 8.0f},
    {lowbit::rounding_mode::ceil, true, false, false, 0.37f, 3.0f, 4.0f},
    {lowbit::rounding_mode::floor, false, true, true, 3e-5f, -2.0f, 16.0f},
    {lowbit::rounding_mode::up, true, true, false, 3.0f, 0.5f, 24.0f},
    {lowbit::rounding_mode::down, false, false, true, 0.125f, 0.0f, 2.0f},
    {lowbit::rounding_mode::half_up, false, true, false, 1.0f, 0.0f, 24.0f},
    {lowbit::rounding_mode::half_down, true, false, false, 0.7f, 1.0f, 25.0f},
    {lowbit::rounding_mode::half_up, true, true, false, 0.5f, 0.25f, 1.0f},  // bipolar
};

template <lowbit::semantics S>
void sweep_block(const config& c, std::uint64_t first, std::vector<float>& x, std::vector<float>& a,
                 std::vector<float>& b) {
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = lowbit_test::f32(static_cast<std::uint32_t>(first + i));
  lowbit::int_quant<S> op{.is_signed = c.is_signed, .narrow = c.narrow, .rounding = c.mode};
  op.use_simd = true;
  op(x, c.scale, c.zeropt, c.bitwidth, a);
  op.use_simd = false;
  op(x, c.scale, c.zeropt, c.bitwidth, b);
}

/// Returns the first input bit pattern where SIMD and scalar differ, or -1.
std::int64_t sweep(const config& c) {
  constexpr std::uint64_t block = 1u << 16;
  constexpr std::uint64_t total = std::uint64_t(1) << 32;
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::int64_t> bad{-1};
  auto worker = [&] {
    std::vector<float> x(block), a(block), b(block);
    for (;;) {
      const std::uint64_t start = next.fetch_add(block);
      if (start >= total || bad.load() >= 0) return;
      if (c.exact)
        sweep_block<lowbit::semantics::exact>(c, start, x, a, b);
      else
        sweep_block<lowbit::semantics::reference>(c, start, x, a, b);
      if (std::memcmp(a.data(), b.data(), block * sizeof(float)) != 0) {
        for (std::uint64_t i = 0; i < block; ++i)
          if (lowbit_test::bits(a[i]) != lowbit_test::bits(b[i])) {
            std::int64_t expected = -1;
            bad.compare_exchange_strong(expected, static_cast<std::int64_t>(start + i));
            return;
          }
      }
    }
  };
  std::thread t(worker);
  worker();
  t.join();
  return bad.load();
}

}  // namespace

TEST_CASE("IntQuant: SIMD equals scalar on all 2^32 float32 inputs", "[.exhaustive][int_quant]") {
  for (const config& c : configs) {
    INFO("mode " << lowbit::to_string(c.mode) << (c.exact ? " exact" : " reference")
                 << " signed " << c.is_signed << " narrow " << c.narrow << " scale " << c.scale
                 << " zeropt " << c.zeropt << " bitwidth " << c.bitwidth);
    const std::int64_t first_bad = sweep(c);
    if (first_bad >= 0) INFO("first differing input: " << lowbit_test::show(lowbit_test::f32(std::uint32_t(first_bad))));
    CHECK(first_bad == -1);
  }
}
