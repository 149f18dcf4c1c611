// SPDX-License-Identifier: Apache-2.0
/**
 * @file attributes.hpp
 * Setting an operator functor's attributes by their QONNX names, as they come
 * from an ONNX node or a text file: `set_attribute(op, "rounding_mode",
 * "FLOOR")`, `set_attribute(op, "has_infinity", 1)`.
 */
#ifndef LOWBIT_ATTRIBUTES_HPP
#define LOWBIT_ATTRIBUTES_HPP

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "config.hpp"
#include "detail/quote.hpp"
#include "error.hpp"
#include "rounding.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {

/// One attribute of functor Op: its QONNX name, an optional second spelling
/// (e.g. the spec's `has_infinity` for QONNX's `has_inf`) and the member.
template <class Op, class M>
struct attribute {
  std::string_view name;
  M Op::*member;
  std::string_view alias = {};
  /// A parser of its own for string values (e.g. MX's `rounding`, whose
  /// names are microxcaling's): true and the value set, or false; and the
  /// values it accepts, for the message.
  bool (*parse)(std::string_view, M&) = nullptr;
  const char* expected = nullptr;
};
template <class Op, class M>
attribute(std::string_view, M Op::*) -> attribute<Op, M>;
template <class Op, class M>
attribute(std::string_view, M Op::*, std::string_view) -> attribute<Op, M>;
template <class Op, class M>
attribute(std::string_view, M Op::*, std::string_view, bool (*)(std::string_view, M&), const char*)
    -> attribute<Op, M>;

/**
 * An enumeration attribute (other than rounding_mode) is parsed by
 * `parse_attribute_value(std::type_identity<M>, text, M&)`, found by
 * argument-dependent lookup next to the enumeration, with
 * `attribute_values(std::type_identity<M>)` naming the accepted values.
 */
template <class M>
concept enum_attribute = std::is_enum_v<M> && !std::is_same_v<M, rounding_mode> &&
                         requires(std::string_view v, M& m) {
                           { parse_attribute_value(std::type_identity<M>{}, v, m) } -> std::convertible_to<bool>;
                           { attribute_values(std::type_identity<M>{}) } -> std::convertible_to<const char*>;
                         };

/// Parses a decimal integer (an optional sign, then digits) of type M.
template <class M>
bool parse_integer_attribute(std::string_view v, M& out) {
  static_assert(std::is_integral_v<M> && !std::is_same_v<M, bool>);
  std::size_t i = 0;
  bool neg = false;
  if (i < v.size() && (v[i] == '-' || v[i] == '+')) neg = v[i++] == '-';
  if (i == v.size()) return false;
  // Every 64-bit value (a seed may be 2^64 - 1: 20 digits); a magnitude
  // that would overflow 64 bits is rejected as it is read.
  unsigned long long mag = 0;
  for (; i < v.size(); ++i) {
    if (v[i] < '0' || v[i] > '9') return false;
    const auto d = static_cast<unsigned long long>(v[i] - '0');
    if (mag > (std::numeric_limits<unsigned long long>::max() - d) / 10) return false;
    mag = mag * 10 + d;
  }
  if (neg) {
    if constexpr (std::is_unsigned_v<M>) {
      if (mag != 0) return false;
      out = 0;
      return true;
    } else {
      if (mag > static_cast<unsigned long long>(std::numeric_limits<M>::max()) + 1ull) return false;
      out = static_cast<M>(0 - static_cast<long long>(mag - 1) - 1);
      return true;
    }
  }
  if (mag > static_cast<unsigned long long>(std::numeric_limits<M>::max())) return false;
  out = static_cast<M>(mag);
  return true;
}

inline bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

template <class Op>
[[noreturn]] void bad_attribute_value(std::string_view name, const std::string& value, const char* expected) {
  throw error(std::string(Op::name) + ": attribute " + std::string(name) + " = " + value +
              " is invalid; expected " + expected);
}

/// Assigns a string value to a member: a flag, a rounding mode, an integer,
/// an enumeration, or through the attribute's own parser.
template <class Op, class M>
void assign_attribute(const attribute<Op, M>& at, Op& op, std::string_view value) {
  const std::string_view name = at.name;
  M Op::*member = at.member;
  if (at.parse != nullptr) {
    M v{};
    if (!at.parse(value, v)) bad_attribute_value<Op>(name, quote(value), at.expected);
    op.*member = v;
  } else if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>) {
    M v{};
    if (!parse_integer_attribute(value, v))
      bad_attribute_value<Op>(name, quote(value),
                              std::is_unsigned_v<M> ? "a non-negative integer" : "an integer");
    op.*member = v;
  } else if constexpr (enum_attribute<M>) {
    M v{};
    if (!parse_attribute_value(std::type_identity<M>{}, value, v))
      bad_attribute_value<Op>(name, quote(value), attribute_values(std::type_identity<M>{}));
    op.*member = v;
  } else if constexpr (std::is_same_v<M, bool>) {
    if (value == "1" || iequals(value, "true"))
      op.*member = true;
    else if (value == "0" || iequals(value, "false"))
      op.*member = false;
    else
      bad_attribute_value<Op>(name, quote(value), "0 or 1 (or true or false)");
  } else {
    static_assert(std::is_same_v<M, rounding_mode>);
    try {
      op.*member = parse_rounding_mode(value);
    } catch (const error&) {
      bad_attribute_value<Op>(name, quote(value),
                              "one of ROUND, HALF_EVEN, CEIL, FLOOR, UP, DOWN, HALF_UP, HALF_DOWN "
                              "(any case)");
    }
  }
}

/// An integer attribute value: whether it is 0 or 1, and its decimal text
/// (of the caller's type: an unsigned 2^64 - 1 is not -1).
struct int_attribute {
  int bit = -1;  // 0, 1, or -1 for any other value
  std::string text;
};

template <class I>
int_attribute make_int_attribute(I value) {
  if constexpr (std::is_same_v<I, bool>) {
    return {value ? 1 : 0, value ? "1" : "0"};
  } else {
    using W = std::conditional_t<std::is_signed_v<I>, long long, unsigned long long>;
    const W w = static_cast<W>(value);  // every value of I fits
    return {w == W(0) ? 0 : w == W(1) ? 1 : -1, std::to_string(w)};
  }
}

/// Assigns an integer value (ONNX's INT attributes) to a flag or an
/// integer member.
template <class Op, class M>
void assign_attribute(const attribute<Op, M>& at, Op& op, const int_attribute& value) {
  const std::string_view name = at.name;
  M Op::*member = at.member;
  if constexpr (std::is_same_v<M, bool>) {
    if (value.bit < 0) bad_attribute_value<Op>(name, value.text, "0 or 1");
    op.*member = value.bit == 1;
  } else if constexpr (std::is_integral_v<M>) {
    M v{};
    if (!parse_integer_attribute(value.text, v))
      bad_attribute_value<Op>(name, value.text,
                              std::is_unsigned_v<M> ? "a non-negative integer that fits" : "an integer that fits");
    op.*member = v;
  } else if constexpr (enum_attribute<M>) {
    bad_attribute_value<Op>(name, value.text, attribute_values(std::type_identity<M>{}));
  } else {
    bad_attribute_value<Op>(name, value.text, "a string naming a rounding mode");
  }
}

template <class Op, class V>
void set_attribute_impl(Op& op, std::string_view name, const V& value) {
  bool found = false;
  std::apply(
      [&](const auto&... a) {
        (void)((found || !(a.name == name || (!a.alias.empty() && a.alias == name))
                    ? false
                    : (assign_attribute(a, op, value), found = true)) ||
               ...);
      },
      Op::attributes());
  if (!found) {
    std::string names;
    std::apply([&](const auto&... a) {
      ((names += (names.empty() ? "" : ", ") + std::string(a.name) +
                 (a.alias.empty() ? "" : " (or " + std::string(a.alias) + ")")),
       ...);
    }, Op::attributes());
    throw error(std::string(Op::name) + ": unknown attribute " + quote(name) + "; expected " +
                (names.empty() ? std::string("none (the operator has no attributes)") : "one of: " + names));
  }
}

}  // namespace detail

/**
 * Sets the attribute called `name` (its QONNX name, or the spec's spelling
 * where it differs) of an operator functor from a string: `"0"`, `"1"`,
 * `"true"` or `"false"` for flags, a rounding-mode name (any case) for
 * `rounding_mode`.
 *
 * **Example**:
 * ```
 * lowbit::float_quant<> q;
 * lowbit::set_attribute(q, "rounding_mode", "floor");
 * lowbit::set_attribute(q, "has_infinity", "1");  // q.has_inf = true
 * ```
 * @throws lowbit::error for an unknown name (the message lists the
 *         operator's attributes) or an invalid value; `op` is unchanged then.
 *         A name or value echoed in the message is quoted with C-style
 *         escapes (a NUL as `\x00`) and cut after 64 bytes (detail::quote).
 */
template <class Op>
void set_attribute(Op& op, std::string_view name, std::string_view value) {
  detail::set_attribute_impl(op, name, value);
}

/// Sets a flag attribute from an integer (ONNX INT attributes): 0 or 1.
template <class Op, class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
void set_attribute(Op& op, std::string_view name, I value) {
  detail::set_attribute_impl(op, name, detail::make_int_attribute(value));
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_ATTRIBUTES_HPP
