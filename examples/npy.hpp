// SPDX-License-Identifier: Apache-2.0
//
// npy.hpp: a small reader of numpy's .npy files, for the examples
// (rounding_benchmark --input) and tested by tests/test_npy.cpp.
//
// The format (numpy's "NPY format" specification, numpy.lib.format): the
// magic string "\x93NUMPY", a major and a minor version byte (1.0, 2.0 or
// 3.0), the header's length in bytes as a little-endian integer (2 bytes in
// version 1.0, 4 bytes in 2.0 and 3.0), the header, then the data. The
// header is a Python dict literal with exactly the keys 'descr' (the dtype),
// 'fortran_order' (True or False) and 'shape' (a tuple of non-negative
// integers), ASCII in 1.0 and 2.0 and UTF-8 in 3.0, padded with spaces and
// ended by a newline. The data is the shape's product of elements in C
// (row-major) or Fortran (column-major) order.
//
// npy::read_file reads float32 ('<f4') and float64 ('<f8', converted to
// float32 by rounding to nearest) little-endian arrays of any shape with at
// least one element, a 0-d array (shape ()) being one element. Anything
// else throws npy::error, whose message names the file, what was found and
// what was expected. Nothing is read outside the file, and nothing larger
// than the file is allocated.
#ifndef LOWBIT_EXAMPLES_NPY_HPP
#define LOWBIT_EXAMPLES_NPY_HPP

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace npy {

/// What read_file throws: "<file>: <what was found>; expected <what>".
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An array read from a .npy file.
struct array {
  std::vector<std::uint64_t> shape;  ///< Empty for a 0-d array.
  bool fortran_order = false;        ///< The data is in column-major order.
  std::string descr;                 ///< The file's dtype: "<f4" or "<f8".
  int major_version = 0, minor_version = 0;
  std::vector<float> values;         ///< Every element, in the file's order.
  std::size_t overflowed = 0;        ///< "<f8": finite values beyond float32's range (now +-inf).
  bool converted() const { return descr == "<f8"; }  ///< float64 converted to float32.
};

/// The header's length is at most this (numpy writes a few hundred bytes).
inline constexpr std::uint64_t max_header_size = 1 << 20;

namespace detail {

/// `s` for a message: printable ASCII as is, a backslash doubled, other
/// bytes as \xNN, cut after `max` bytes.
inline std::string printable(std::string_view s, std::size_t max = 48) {
  std::string r;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      r += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      r += static_cast<char>(c);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      r += b;
    }
  }
  if (s.size() > max) r += "... (" + std::to_string(s.size()) + " bytes)";
  return r;
}

/// printable(s) in single quotes.
inline std::string quote(std::string_view s, std::size_t max = 48) {
  std::string r(1, '\'');  // not "'" + ...: GCC 12's -Wrestrict false positive
  r += printable(s, max);
  r += '\'';
  return r;
}

/// A Python literal as the header writes it.
struct value {
  enum class kind { string, integer, number, boolean, none, tuple, list, dict } type = kind::none;
  std::string text;          ///< string: its characters; integer, number, boolean: as written.
  std::vector<value> items;  ///< tuple and list: the elements; dict: key, value, key, value, ...
  std::string source;        ///< The literal as written in the header.
};

/// Recursive descent over the literals a .npy header may hold: dicts,
/// tuples, lists, strings, numbers, True, False and None.
class parser {
 public:
  explicit parser(std::string_view s) : s_(s) {}

  /// The whole header: one literal, then only whitespace.
  value parse() {
    skip_space();
    value v = parse_value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected " + quote(s_.substr(pos_), 16) + " after the literal");
    return v;
  }

 private:
  static constexpr int max_depth = 32;
  std::string_view s_;
  std::size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw error("at byte " + std::to_string(pos_) + ": " + what);
  }
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_name(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
  void skip_space() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= s_.size(); }

  value parse_value(int depth) {
    if (depth > max_depth) fail("literals nested deeper than " + std::to_string(max_depth) + " levels");
    if (at_end()) fail("unexpected end of the header");
    const std::size_t start = pos_;
    value v;
    const char c = s_[pos_];
    if (c == '{') {
      v.type = value::kind::dict;
      parse_items(depth, '}', true, v);
    } else if (c == '(' || c == '[') {
      v.type = c == '(' ? value::kind::tuple : value::kind::list;
      const bool one_without_comma = parse_items(depth, c == '(' ? ')' : ']', false, v);
      // Python: (3) is the integer 3, not a tuple.
      if (c == '(' && one_without_comma) {
        value inner = std::move(v.items[0]);
        v = std::move(inner);
      }
    } else if (c == '\'' || c == '"') {
      v.type = value::kind::string;
      ++pos_;
      for (;;) {
        if (at_end()) fail("unterminated string");
        const char d = s_[pos_++];
        if (d == c) break;
        if (d == '\n') fail("unterminated string");
        if (d == '\\') {
          if (at_end()) fail("unterminated string");
          v.text += s_[pos_++];
        } else {
          v.text += d;
        }
      }
    } else if (is_digit(c) || c == '-' || c == '+' || c == '.') {
      ++pos_;
      while (!at_end() && (is_name(s_[pos_]) || s_[pos_] == '.' ||
                           ((s_[pos_] == '+' || s_[pos_] == '-') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))))
        ++pos_;
      v.text = std::string(s_.substr(start, pos_ - start));
      std::size_t i = (c == '-' || c == '+') ? 1 : 0;
      bool digits = i < v.text.size();
      for (; i < v.text.size(); ++i) digits = digits && is_digit(v.text[i]);
      v.type = digits ? value::kind::integer : value::kind::number;
    } else if (is_name(c)) {
      while (!at_end() && is_name(s_[pos_])) ++pos_;
      v.text = std::string(s_.substr(start, pos_ - start));
      if (v.text == "True" || v.text == "False")
        v.type = value::kind::boolean;
      else if (v.text == "None")
        v.type = value::kind::none;
      else {
        pos_ = start;
        fail("unexpected name " + quote(v.text, 16) + " (a literal has only strings, numbers, True, False and None)");
      }
    } else {
      fail("unexpected character " + quote(s_.substr(pos_, 1)));
    }
    v.source = std::string(s_.substr(start, pos_ - start));
    return v;
  }

  /// The items of a bracketed literal up to `close` (dict: key: value
  /// pairs); true when there was exactly one item and no comma.
  bool parse_items(int depth, char close, bool pairs, value& v) {
    ++pos_;
    bool comma = false;
    for (;;) {
      skip_space();
      if (peek() == close) {
        ++pos_;
        return v.items.size() == 1 && !comma;
      }
      v.items.push_back(parse_value(depth + 1));
      skip_space();
      if (pairs) {
        if (peek() != ':') fail("expected ':' after a dict key, found " + (at_end() ? std::string("the end") : quote(s_.substr(pos_, 1))));
        ++pos_;
        skip_space();
        v.items.push_back(parse_value(depth + 1));
        skip_space();
      }
      if (peek() == ',') {
        ++pos_;
        comma = true;
      } else if (peek() != close) {
        fail(std::string("expected ',' or '") + close + "', found " +
             (at_end() ? std::string("the end") : quote(s_.substr(pos_, 1))));
      }
    }
  }
};

/// "(2, 3)", "(3,)" or "()" as Python writes a tuple.
inline std::string shape_string(const std::vector<std::uint64_t>& shape) {
  std::string r = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) r += (i ? ", " : "") + std::to_string(shape[i]);
  return r + (shape.size() == 1 ? ",)" : ")");
}

/// A few words on a dtype that is not read, after numpy's type codes.
inline std::string describe_descr(const std::string& d) {
  if (d.size() < 2) return "";
  const char order = d[0];
  const std::string rest = d.substr(1);
  std::string what;
  if (rest == "f4") what = "float32";
  else if (rest == "f8") what = "float64";
  else if (rest == "f2") what = "float16";
  else if (rest == "f16" || rest == "f12") what = "long double";
  else if (rest[0] == 'i') what = "signed integer";
  else if (rest[0] == 'u') what = "unsigned integer";
  else if (rest[0] == 'b') what = "boolean";
  else if (rest[0] == 'c') what = "complex";
  else if (rest[0] == 'O') what = "Python objects";
  else if (rest[0] == 'S' || rest[0] == 'U' || rest[0] == 'a') what = "strings";
  else if (rest[0] == 'V') what = "raw bytes";
  else if (rest[0] == 'M' || rest[0] == 'm') what = "dates or times";
  if (what.empty()) return "";
  if (order == '>') what = "big-endian " + what;
  return " (" + what + ")";
}

inline std::uint32_t load_u32(const unsigned char* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

inline std::uint64_t load_u64(const unsigned char* p) {
  return std::uint64_t(load_u32(p)) | std::uint64_t(load_u32(p + 4)) << 32;
}

}  // namespace detail

/// Reads a float32 or float64 .npy file (see the file's comment).
/// @throws npy::error naming the file, what was found and what was expected.
inline array read_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  auto fail = [&](const std::string& what) { return error(name + ": " + what); };

  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) throw fail("cannot open the file: no such file");
  if (std::filesystem::is_directory(st)) throw fail("is a directory; expected a .npy file");
  if (!std::filesystem::is_regular_file(st)) throw fail("is not a regular file; expected a .npy file");
  const std::uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw fail("cannot read the file's size: " + ec.message());
  std::ifstream f(path, std::ios::binary);
  if (!f) throw fail("cannot open the file");

  auto read_at = [&](std::uint64_t offset, char* dst, std::uint64_t n) {
    f.seekg(static_cast<std::streamoff>(offset));
    if (!f.read(dst, static_cast<std::streamsize>(n)))
      throw fail("could not read " + std::to_string(n) + " bytes at byte " + std::to_string(offset) +
                 " (the file is " + std::to_string(file_size) + " bytes)");
  };

  // Magic string and version.
  constexpr std::string_view magic("\x93NUMPY", 6);
  std::string lead(static_cast<std::size_t>(std::min<std::uint64_t>(file_size, 10)), '\0');
  read_at(0, lead.data(), lead.size());
  const std::size_t m = std::min(lead.size(), magic.size());
  if (lead.compare(0, m, magic.substr(0, m)) != 0) {
    const bool zip = lead.rfind("PK\x03\x04", 0) == 0;
    throw fail("does not start with the .npy magic string '\\x93NUMPY' (found " + detail::quote(lead.substr(0, 6)) +
               (zip ? ", a zip archive: an .npz?" : "") + "); expected a .npy file" +
               (zip ? " (numpy.save writes one array)" : ""));
  }
  if (lead.size() < 8)
    throw fail("is truncated: it is " + std::to_string(file_size) +
               " bytes; expected the magic string and the version (8 bytes) at least");
  const int major = static_cast<unsigned char>(lead[6]), minor = static_cast<unsigned char>(lead[7]);
  if (!(major >= 1 && major <= 3 && minor == 0))
    throw fail("has .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
               "; expected 1.0, 2.0 or 3.0");
  const std::uint64_t prefix = major == 1 ? 10 : 12;
  if (file_size < prefix)
    throw fail("is truncated: it is " + std::to_string(file_size) + " bytes; a version " + std::to_string(major) +
               ".0 header starts at byte " + std::to_string(prefix));
  unsigned char len_bytes[4] = {0, 0, 0, 0};
  read_at(8, reinterpret_cast<char*>(len_bytes), prefix - 8);
  const std::uint64_t header_len = detail::load_u32(len_bytes);
  if (header_len > max_header_size)
    throw fail("has a header of " + std::to_string(header_len) + " bytes; expected at most " +
               std::to_string(max_header_size));
  if (file_size < prefix + header_len)
    throw fail("is truncated: it is " + std::to_string(file_size) + " bytes; its header ends at byte " +
               std::to_string(prefix + header_len));
  std::string header(static_cast<std::size_t>(header_len), '\0');
  read_at(prefix, header.data(), header_len);

  // The header's dict.
  detail::value dict;
  try {
    dict = detail::parser(header).parse();
  } catch (const error& e) {
    const std::size_t end = header.find_last_not_of(" \n");
    throw fail(std::string("the header does not parse (") + e.what() + "): found " +
               detail::printable(std::string_view(header).substr(0, end == std::string::npos ? 0 : end + 1), 120) +
               "; expected a Python dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (3,), }");
  }
  if (dict.type != detail::value::kind::dict)
    throw fail("the header is " + detail::printable(dict.source, 120) + ", not a dict; expected a dict with the keys "
               "'descr', 'fortran_order' and 'shape'");
  const detail::value *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const detail::value& key = dict.items[i];
    const detail::value* v = &dict.items[i + 1];
    const detail::value** slot = nullptr;
    if (key.type == detail::value::kind::string) {
      if (key.text == "descr") slot = &descr;
      else if (key.text == "fortran_order") slot = &fortran;
      else if (key.text == "shape") slot = &shape;
    }
    if (!slot)
      throw fail("the header has the key " + detail::printable(key.source) +
                 "; expected only the keys 'descr', 'fortran_order' and 'shape'");
    if (*slot) throw fail("the header has the key " + detail::printable(key.source) + " twice; expected it once");
    *slot = v;
  }
  const std::pair<const detail::value*, const char*> keys[] = {
      {descr, "descr"}, {fortran, "fortran_order"}, {shape, "shape"}};
  for (const auto& [p, k] : keys)
    if (!p)
      throw fail(std::string("the header has no key '") + k + "'; expected the keys 'descr', 'fortran_order' and 'shape'");

  array a;
  a.major_version = major;
  a.minor_version = minor;

  // descr: '<f4' or '<f8'.
  if (descr->type != detail::value::kind::string)
    throw fail("has the dtype " + detail::printable(descr->source) +
               (descr->type == detail::value::kind::list ? " (a structured dtype)" : "") +
               "; expected '<f4' (float32) or '<f8' (float64)");
  if (descr->text != "<f4" && descr->text != "<f8")
    throw fail("has the dtype " + detail::quote(descr->text) + detail::describe_descr(descr->text) +
               "; expected '<f4' (float32) or '<f8' (float64), little-endian");
  a.descr = descr->text;
  const std::uint64_t item = a.descr == "<f4" ? 4 : 8;

  // fortran_order: True or False.
  if (fortran->type != detail::value::kind::boolean)
    throw fail("has 'fortran_order': " + detail::printable(fortran->source) + "; expected True or False");
  a.fortran_order = fortran->text == "True";

  // shape: a tuple of non-negative integers whose product fits.
  auto bad_shape = [&](const std::string& what) {
    return fail("has 'shape': " + detail::printable(shape->source) + what +
                "; expected a tuple of non-negative integers such as (3,), (2, 3) or ()");
  };
  if (shape->type != detail::value::kind::tuple)
    throw bad_shape(shape->type == detail::value::kind::integer ? ", an integer (a 1-d shape is written (n,))"
                                                                : ", not a tuple");
  for (const detail::value& d : shape->items) {
    if (d.type != detail::value::kind::integer) throw bad_shape(", whose element " + detail::printable(d.source) + " is not an integer");
    if (d.text[0] == '-' && d.text.find_first_not_of("-0") != std::string::npos)
      throw bad_shape(", with the negative dimension " + d.text);
    std::uint64_t n = 0;
    for (char c : d.text) {
      if (c == '-' || c == '+') continue;
      const auto digit = static_cast<std::uint64_t>(c - '0');
      if (n > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
        throw bad_shape(", with the dimension " + d.text + ", larger than 2^64 - 1");
      n = n * 10 + digit;
    }
    a.shape.push_back(n);
  }
  std::uint64_t count = 1;
  bool overflow = false;
  for (std::uint64_t d : a.shape) {
    if (d == 0) {
      count = 0;
      overflow = false;
      break;
    }
    if (count > std::numeric_limits<std::uint64_t>::max() / d) overflow = true;
    count *= d;
  }
  if (overflow || (count && count > std::numeric_limits<std::uint64_t>::max() / item))
    throw fail("has the shape " + detail::shape_string(a.shape) +
               ", whose number of bytes overflows a 64-bit integer; expected a shape that fits in the file");
  if (count == 0)
    throw fail("has no elements (shape " + detail::shape_string(a.shape) + "); expected at least one value");

  // The data: exactly count elements.
  const std::uint64_t data_offset = prefix + header_len, data_size = file_size - data_offset, need = count * item;
  if (data_size != need)
    throw fail("has " + std::to_string(data_size) + " bytes of data after its header; expected " +
               std::to_string(need) + " bytes for the shape " + detail::shape_string(a.shape) + " of '" + a.descr +
               "'" + (data_size < need ? " (the file is truncated)" : " (extra bytes at the end)"));
  if (count > std::numeric_limits<std::size_t>::max() / item) throw fail("is too large for this machine");
  a.values.resize(static_cast<std::size_t>(count));
  std::vector<unsigned char> chunk;
  constexpr std::size_t chunk_elements = 1 << 16;
  for (std::size_t i = 0; i < a.values.size(); i += chunk_elements) {
    const std::size_t k = std::min(chunk_elements, a.values.size() - i);
    chunk.resize(k * item);
    read_at(data_offset + i * item, reinterpret_cast<char*>(chunk.data()), chunk.size());
    for (std::size_t j = 0; j < k; ++j) {
      if (item == 4) {
        a.values[i + j] = std::bit_cast<float>(detail::load_u32(chunk.data() + 4 * j));
      } else {
        const double d = std::bit_cast<double>(detail::load_u64(chunk.data() + 8 * j));
        const float v = static_cast<float>(d);
        if (std::isfinite(d) && !std::isfinite(v)) ++a.overflowed;
        a.values[i + j] = v;
      }
    }
  }
  return a;
}

}  // namespace npy

#endif  // LOWBIT_EXAMPLES_NPY_HPP
