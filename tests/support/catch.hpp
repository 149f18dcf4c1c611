// One include for Catch2 v3 and Catch2 v2.13 (Debian 12 ships 2.13.10).
//
//   #include "support/catch.hpp"
//
// gives TEST_CASE, TEMPLATE_TEST_CASE(_SIG), TEMPLATE_LIST_TEST_CASE,
// GENERATE (+ take/random/range/values), REQUIRE_THROWS_AS/_WITH and the
// matchers, whichever version is installed. The one name that differs between
// the versions, the substring matcher, is lowbit_test::contains_substring.
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
#  include <catch2/catch_test_macros.hpp>
#  include <catch2/catch_template_test_macros.hpp>
#  include <catch2/generators/catch_generators_all.hpp>
#  include <catch2/matchers/catch_matchers_all.hpp>
#  define LOWBIT_CATCH_MAJOR 3
#else
#  include <catch2/catch.hpp>
#  define LOWBIT_CATCH_MAJOR 2
#endif

#include <string>

namespace lowbit_test {

/// Matches strings containing `needle`:
/// REQUIRE_THROWS_WITH(f(), lowbit_test::contains_substring("scale")).
inline auto contains_substring(std::string const& needle) {
#if LOWBIT_CATCH_MAJOR >= 3
  return Catch::Matchers::ContainsSubstring(needle);
#else
  return Catch::Matchers::Contains(needle);
#endif
}

}  // namespace lowbit_test
