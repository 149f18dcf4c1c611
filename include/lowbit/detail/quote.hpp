// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/quote.hpp
 * Quoting a user-supplied string (a name from a file or an ONNX graph) for an
 * error message: every byte stays visible, and a long string stays short.
 */
#ifndef LOWBIT_DETAIL_QUOTE_HPP
#define LOWBIT_DETAIL_QUOTE_HPP

#include <cstddef>
#include <string>
#include <string_view>

#include "../config.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// Longest prefix of a string that quote() shows (in bytes of input).
inline constexpr std::size_t quote_max_bytes = 64;

/**
 * `s` in double quotes with C-style escapes, for an error message: `\"`,
 * `\\`, `\n`, `\r`, `\t`, and `\xNN` for every other byte below 0x20, for
 * 0x7f and for every byte from 0x80 on (NUL is `\x00`, so a NUL no longer
 * ends the message; non-ASCII bytes are shown one by one, never cut into an
 * invalid UTF-8 sequence). A string longer than quote_max_bytes bytes shows
 * its first quote_max_bytes bytes, then `...` and its length:
 * `"AAAA..."... (1000 bytes)`.
 *
 * **Example**: quote(std::string_view("IN\0T8", 5)) is `"IN\x00T8"`.
 */
inline std::string quote(std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  const std::size_t shown = s.size() < quote_max_bytes ? s.size() : quote_max_bytes;
  std::string r;
  r.reserve(shown + 2);
  r += '"';
  for (std::size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\r': r += "\\r"; break;
      case '\t': r += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          r += "\\x";
          r += hex[c >> 4];
          r += hex[c & 15];
        } else {
          r += static_cast<char>(c);
        }
    }
  }
  r += '"';
  if (shown < s.size()) r += "... (" + std::to_string(s.size()) + " bytes)";
  return r;
}

LOWBIT_END_DETAIL_NAMESPACE

#endif  // LOWBIT_DETAIL_QUOTE_HPP
