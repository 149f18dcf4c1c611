// SPDX-License-Identifier: Apache-2.0
// The driver of the exhaustive sweeps: every float32 bit pattern, in blocks,
// on two threads, stopping at the first failure.
#ifndef LOWBIT_TESTS_EXHAUSTIVE_SWEEP_HPP
#define LOWBIT_TESTS_EXHAUSTIVE_SWEEP_HPP

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "support/test_util.hpp"

namespace lowbit_test {

/**
 * Calls `simd(x, a)` and `scalar(x, b)` on every block of float32 inputs
 * (all 2^32 bit patterns in order, 2^16 per block) and returns the first
 * input whose two results differ in any bit, or -1. `check(x, b, first)`
 * may add its own test of a block (e.g. against an oracle) and returns the
 * offending index in the block or -1.
 */
template <class Simd, class Scalar, class Check>
std::int64_t sweep_all_float32(const Simd& simd, const Scalar& scalar, const Check& check) {
  constexpr std::uint64_t block = 1u << 16;
  constexpr std::uint64_t total = std::uint64_t(1) << 32;
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::int64_t> bad{-1};
  auto report = [&](std::uint64_t at) {
    std::int64_t expected = -1;
    bad.compare_exchange_strong(expected, static_cast<std::int64_t>(at));
  };
  auto worker = [&] {
    std::vector<float> x(block), a(block), b(block);
    for (;;) {
      const std::uint64_t start = next.fetch_add(block);
      if (start >= total || bad.load() >= 0) return;
      for (std::size_t i = 0; i < block; ++i) x[i] = f32(static_cast<std::uint32_t>(start + i));
      simd(x, a);
      scalar(x, b);
      if (std::memcmp(a.data(), b.data(), block * sizeof(float)) != 0) {
        for (std::uint64_t i = 0; i < block; ++i)
          if (bits(a[i]) != bits(b[i])) return report(start + i);
      }
      const long off = check(x, b, start);
      if (off >= 0) return report(start + static_cast<std::uint64_t>(off));
    }
  };
  std::thread t(worker);
  worker();
  t.join();
  return bad.load();
}

template <class Simd, class Scalar>
std::int64_t sweep_all_float32(const Simd& simd, const Scalar& scalar) {
  return sweep_all_float32(simd, scalar, [](const std::vector<float>&, const std::vector<float>&, std::uint64_t) {
    return -1L;
  });
}

}  // namespace lowbit_test

#endif
