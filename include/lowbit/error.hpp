// SPDX-License-Identifier: Apache-2.0
/**
 * @file error.hpp
 * The one exception type that lowbit throws for bad input.
 */
#ifndef LOWBIT_ERROR_HPP
#define LOWBIT_ERROR_HPP

#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "config.hpp"

LOWBIT_BEGIN_NAMESPACE

/**
 * Thrown for every kind of bad input: shapes that do not broadcast, an
 * output of the wrong shape, an invalid bit width, an unknown rounding mode,
 * and (in the `exact` semantics) parameters the operator definition rejects.
 *
 * The message names the parameter, the offending value and what was
 * expected. When an operator throws, its output has not been written.
 *
 * **Example**:
 * ```
 * try { op(x, 0.5f, 0.0f, 9.5f, y); }
 * catch (const lowbit::error& e) { std::puts(e.what()); }
 * // lowbit::int_quant: bitwidth[0] = 9.5 is invalid; expected an integer from 1 to 32
 * ```
 */
class error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {

// Messages are built by these few out-of-line functions: a message is a
// list of string views, so each call site is a short list of pointers and
// one call. String concatenation inlined at every check (C++20 instantiates
// std::string's members in every translation unit) was most of the code,
// and of the compile time, an operator call brings into a user's file.

/// The parts, concatenated.
LOWBIT_NOINLINE_COLD inline std::string cat_views(std::initializer_list<std::string_view> parts) {
  std::size_t n = 0;
  for (std::string_view p : parts) n += p.size();
  std::string s;
  s.reserve(n);
  for (std::string_view p : parts) s.append(p.data(), p.size());
  return s;
}

/// Throws lowbit::error with the parts as its message.
[[noreturn]] LOWBIT_NOINLINE_COLD inline void throw_views(std::initializer_list<std::string_view> parts) {
  throw error(cat_views(parts));
}

/// `cat("a", s, dec(3))`: the concatenation of text parts (anything a
/// std::string_view is made from).
template <class... A>
std::string cat(const A&... a) {
  return cat_views({std::string_view(a)...});
}

/// Throws lowbit::error with the concatenation of the parts.
template <class... A>
[[noreturn]] void throw_error(const A&... a) {
  throw_views({std::string_view(a)...});
}

LOWBIT_NOINLINE_COLD inline std::string dec_signed(long long v) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof buf, "%lld", v);
  return std::string(buf, static_cast<std::size_t>(n));
}
LOWBIT_NOINLINE_COLD inline std::string dec_unsigned(unsigned long long v) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof buf, "%llu", v);
  return std::string(buf, static_cast<std::size_t>(n));
}

/// An integer in decimal, for messages.
template <class I>
std::string dec(I v) {
  static_assert(std::is_integral_v<I>);
  if constexpr (std::is_signed_v<I>)
    return dec_signed(static_cast<long long>(v));
  else
    return dec_unsigned(static_cast<unsigned long long>(v));
}

}  // namespace detail

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_ERROR_HPP
