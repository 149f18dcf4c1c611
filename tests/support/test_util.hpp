// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the unit tests: bit-exact comparison and value makers.
#ifndef LOWBIT_TESTS_TEST_UTIL_HPP
#define LOWBIT_TESTS_TEST_UTIL_HPP

#include <bit>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace lowbit_test {

inline std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }
inline std::uint64_t bits(double v) { return std::bit_cast<std::uint64_t>(v); }
inline float f32(std::uint32_t b) { return std::bit_cast<float>(b); }

/// "0x3f800000 (1)" for failure messages.
template <class T>
std::string show(T v) {
  char buf[80];
  std::snprintf(buf, sizeof buf, "0x%0*llx (%.9g)", int(2 * sizeof(T)),
                static_cast<unsigned long long>(bits(v)), static_cast<double>(v));
  return buf;
}

/// Index of the first element whose bits differ, or -1.
template <class T>
long first_bit_difference(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (bits(a[i]) != bits(b[i])) return static_cast<long>(i);
  return -1;
}

/// Random values of every kind: small, near ties, huge, subnormal, +-0, +-inf, NaN.
template <class T>
std::vector<T> mixed_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> u(-300, 300);
  std::vector<T> v(n);
  const T specials[] = {T(0), -T(0), std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN(),
                        std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
                        std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
                        -std::numeric_limits<T>::max(), T(0.5), T(-0.5), T(1.5), T(-2.5),
                        T(0.49999997), T(8388609), T(-8388609), T(-0.3), T(-0.7), T(0.3),
                        T(-1e-30), T(-0.49999997)};
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned kind = rng() % 8;
    if (kind == 0) {
      v[i] = specials[rng() % (sizeof specials / sizeof specials[0])];
    } else if (kind == 1) {
      v[i] = T(static_cast<int>(rng() % 512) - 256) * T(0.5);  // exact ties after /0.5
    } else if (kind == 2) {
      v[i] = std::nextafter(T(static_cast<int>(rng() % 64) - 32) + T(0.5),
                            (rng() & 1) ? T(1000) : T(-1000));
    } else {
      v[i] = u(rng);
    }
  }
  return v;
}

}  // namespace lowbit_test

#endif
