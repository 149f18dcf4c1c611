// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/code_checks.hpp
 * The checks an operator makes before writing integer codes (codes.hpp):
 * that a code type holds the clamp range of every bit width, and that
 * unsigned codes of a signed IntQuant are bits. Used by the operators'
 * check_codes (detail/driver.hpp).
 */
#ifndef LOWBIT_DETAIL_CODE_CHECKS_HPP
#define LOWBIT_DETAIL_CODE_CHECKS_HPP

#include <cmath>
#include <limits>
#include <string>

#include "../code_type.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "elementwise.hpp"
#include "integer.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// An integral value as an integer ("2147483648"), anything else as format_value.
template <class T>
std::string format_integral(T v) {
  if (std::isnan(v)) return "NaN";
  if (v == std::trunc(v) && std::fabs(v) < T(9.2e18)) return std::to_string(static_cast<long long>(v));
  return format_value(v);
}

/// Formats a code-range mismatch for a bit-width element.
template <class C, class T>
[[noreturn]] void throw_code_range(const char* op, const std::string& where, T lo, T hi) {
  throw error(std::string(op) + ": " + code_type_name<C>() + " codes cannot hold the range [" +
              format_integral(lo) + ", " + format_integral(hi) + "] of " + where +
              "; expected a code type whose range holds it");
}

/// Checks the clamp limits of every bit-width element against C's range.
/// `bipolar_special`: a signed 1-bit element is bipolar (IntQuant, not
/// Trunc), its codes -1 and +1 (or bits 0 and 1), and is not checked.
template <class C, semantics S, class T>
void check_limits(const char* op, const char* role, const nd<const T>& b, bool is_signed, bool narrow,
                  bool bipolar_special) {
  check_elements(b, [&](T v, std::size_t i) {
    const int bw = static_cast<int>(v);
    if (bipolar_special && is_signed && bw == 1) return true;  // +-1, or bits
    const auto r = int_limits<S, T>(bw, is_signed, narrow);
    const long double lo = static_cast<long double>(r.lo), hi = static_cast<long double>(r.hi);
    if (lo < static_cast<long double>(std::numeric_limits<C>::min()) ||
        hi > static_cast<long double>(std::numeric_limits<C>::max()))
      throw_code_range<C>(op,
                          element_name(role, b, i) + " = " + format_value(v) +
                              (is_signed ? (narrow ? " (signed, narrow)" : " (signed)")
                                         : (narrow ? " (unsigned, narrow)" : " (unsigned)")),
                          r.lo, r.hi);
    return true;
  });
}

/// Unsigned codes of a signed IntQuant are bits: bit width 1 only.
template <class T>
void check_bits_bitwidth(const char* op, const char* ctype, const nd<const T>& b) {
  check_elements(b, [&](T v, std::size_t i) {
    if (v != T(1))
      throw error(std::string(op) + ": " + element_name("bitwidth", b, i) + " = " + format_value(v) + " with " +
                  ctype + " codes and signed = 1; expected bitwidth 1 (unsigned codes of a signed "
                  "IntQuant are the bits of its bipolar case) or a signed code type");
    return true;
  });
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_CODE_CHECKS_HPP
