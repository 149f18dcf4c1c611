// SPDX-License-Identifier: Apache-2.0
// Catch2 assertions shared by the unit tests: bit-exact comparison of result
// vectors and the error-path check (throws lowbit::error naming the culprit,
// output untouched).
#ifndef LOWBIT_TESTS_CHECKS_HPP
#define LOWBIT_TESTS_CHECKS_HPP

#include <lowbit/error.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "support/catch.hpp"
#include "support/test_util.hpp"

namespace lowbit_test {

inline constexpr float inf = std::numeric_limits<float>::infinity();
inline constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();

/// Equal bits, or both NaN (for results whose NaN payload is not specified).
template <class T>
bool same_value(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b);
}

/// got == want bit for bit (NaN payloads and zero signs included).
template <class T>
void require_same_bits(const std::vector<T>& got, const std::vector<T>& want) {
  const long i = first_bit_difference(got, want);
  if (i >= 0) {
    INFO("first difference at " << i << ": got " << show(got[i]) << ", want " << show(want[i]));
    CHECK(false);
  }
}

/// got == want bit for bit, except that any NaN matches any NaN.
template <class T>
void require_same_values(const std::vector<T>& got, const std::vector<T>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same_value(got[i], want[i])) {
      INFO("first difference at " << i << ": got " << show(got[i]) << ", want " << show(want[i]));
      CHECK(false);
      return;
    }
}

/// call() throws lowbit::error whose message contains `needle`, and y keeps its bits.
template <class F>
void check_rejected(F&& call, std::vector<float>& y, const char* needle) {
  const std::vector<float> before = y;
  REQUIRE_THROWS_AS(call(), lowbit::error);
  REQUIRE_THROWS_WITH(call(), contains_substring(needle));
  require_same_bits(y, before);
}

/// Fills `buf` with a pattern, runs f, and requires lowbit::error with
/// `needle` in its message and every element of `buf` unchanged, bit for
/// bit: for a buffer that holds the output and inputs together.
template <class T, class F>
void require_rejected_untouched(std::vector<T>& buf, const std::string& needle, F&& f) {
  for (std::size_t i = 0; i < buf.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>)
      buf[i] = static_cast<T>(0.25) * static_cast<T>(i % 37) + static_cast<T>(0.5);
    else
      buf[i] = static_cast<T>(0x3c + i);
  }
  const std::vector<T> before = buf;
  std::string what;
  try {
    f();
  } catch (const lowbit::error& e) {
    what = e.what();
  }
  INFO("message: " << what);
  CHECK_THAT(what, contains_substring(needle));
  CHECK(std::memcmp(before.data(), buf.data(), buf.size() * sizeof(T)) == 0);
}

}  // namespace lowbit_test

#endif
