// SPDX-License-Identifier: Apache-2.0
/**
 * @file qcv.hpp
 * A strict reader for the `.qcv` conformance vector format, version 1
 * (the format's FORMAT.md).
 *
 * The reader does not depend on lowbit. It checks everything the format
 * fixes and reports the first violation as `file:line: message`:
 *
 * - the first line is `qcv 1`;
 * - comment lines (`#` in column 1) and blank lines appear only outside
 *   cases; a `# exact_rejects: <reason>` comment before a case is kept as
 *   that case's reject reason and is required for cases flagged
 *   `exact_rejects`;
 * - a case is `case <name>`, `op <Op>`, `attr` lines, `flag` lines, `tensor`
 *   blocks and `end`, in this order, with keywords spelled exactly;
 * - case names match `[A-Za-z0-9_.-]+` and are unique in the file;
 * - every attribute of the op is present exactly once, and no other; the
 *   0/1 attributes are `0` or `1`;
 * - flags are the documented words, each at most once, and agree with the
 *   tensors (`f32_differs` iff `Y_f32`, `np2_differs` iff `Y_np2`,
 *   `exact_differs` iff `Y_exact`, no `Y_exact` with `exact_rejects`);
 * - tensors come in the op's input order, then `Y`, then optionally `Y_f32`,
 *   `Y_np2`, `Y_exact` in this order, the last three with `Y`'s dims
 *   (MXQuant, FORMAT-mx.md: `X`, `Y`, then the required `SCALE`, of `Y`'s
 *   rank);
 * - a tensor has exactly `d0*...*d(rank-1)` value tokens of exactly 8
 *   lowercase hex digits; line breaks inside a value list are free, but the
 *   list starts on the line after `tensor` and its last line holds nothing
 *   else;
 * - lines end in LF and hold printable ASCII and tabs only.
 */
#ifndef LOWBIT_TESTS_CONFORMANCE_QCV_HPP
#define LOWBIT_TESTS_CONFORMANCE_QCV_HPP

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ios>
#include <limits>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

namespace qcv {

// ---------------------------------------------------------------------------
// What the format knows about each operator
// ---------------------------------------------------------------------------

/// Inputs and attributes of one operator, as FORMAT.md lists them.
struct op_spec {
  std::string_view name;                          ///< canonical `op` name
  std::span<const std::string_view> inputs;       ///< input roles, QONNX order
  std::span<const std::string_view> attributes;   ///< every attribute of the op
  std::span<const std::string_view> outputs;      ///< the roles after Y, in file order
  bool outputs_required = false;                  ///< all of them present (MXQuant's SCALE), or each optional
};

namespace detail {
inline constexpr std::string_view int_quant_inputs[] = {"X", "scale", "zeropt", "bitwidth"};
inline constexpr std::string_view trunc_inputs[] = {"X",           "scale",     "zeropt",
                                                    "in_bitwidth", "out_scale", "out_bitwidth"};
inline constexpr std::string_view trunc_v1_inputs[] = {"X", "scale", "zeropt", "in_bitwidth",
                                                       "out_bitwidth"};
inline constexpr std::string_view bipolar_quant_inputs[] = {"X", "scale"};
inline constexpr std::string_view float_quant_inputs[] = {
    "X", "scale", "exponent_bitwidth", "mantissa_bitwidth", "exponent_bias", "max_val"};

inline constexpr std::string_view int_quant_attributes[] = {"signed", "narrow", "rounding_mode"};
inline constexpr std::string_view trunc_v1_attributes[] = {"rounding_mode"};
inline constexpr std::string_view float_quant_attributes[] = {
    "rounding_mode", "has_inf", "has_nan", "has_subnormal", "saturation"};
/// FORMAT-mx.md: MXQuant (microxcaling's quantize_mx_op).
inline constexpr std::string_view mx_quant_inputs[] = {"X"};
inline constexpr std::string_view mx_quant_attributes[] = {
    "elem_format", "block_size", "axis", "rounding", "scale_bits", "shared_exp_method", "flush_fp32_subnorms"};
inline constexpr std::string_view mx_quant_outputs[] = {"SCALE"};

/// Optional expected outputs after `Y`, in file order (the QONNX operators).
inline constexpr std::string_view optional_outputs[] = {"Y_f32", "Y_np2", "Y_exact"};
}  // namespace detail

/// The operators of the format (FORMAT.md) and MXQuant (FORMAT-mx.md).
inline constexpr op_spec op_specs[] = {
    {"IntQuant", detail::int_quant_inputs, detail::int_quant_attributes, detail::optional_outputs},
    {"Trunc", detail::trunc_inputs, detail::int_quant_attributes, detail::optional_outputs},
    {"TruncV1", detail::trunc_v1_inputs, detail::trunc_v1_attributes, detail::optional_outputs},
    {"BipolarQuant", detail::bipolar_quant_inputs, {}, detail::optional_outputs},
    {"FloatQuant", detail::float_quant_inputs, detail::float_quant_attributes, detail::optional_outputs},
    {"MXQuant", detail::mx_quant_inputs, detail::mx_quant_attributes, detail::mx_quant_outputs, true},
};

/// The operator called `name`, or nullptr. QONNX's older name `Quant` is
/// accepted for `IntQuant`.
inline const op_spec* find_op(std::string_view name) noexcept {
  if (name == "Quant") name = "IntQuant";
  for (const op_spec& s : op_specs)
    if (s.name == name) return &s;
  return nullptr;
}

/// True for the attributes whose value is `0` or `1`.
inline bool is_boolean_attribute(std::string_view key) noexcept {
  return key == "signed" || key == "narrow" || key == "has_inf" || key == "has_nan" ||
         key == "has_subnormal" || key == "saturation" || key == "flush_fp32_subnorms";
}

/// The flag words of FORMAT.md ("Flags").
inline constexpr std::string_view known_flags[] = {"f32_differs",   "np2_differs", "raw_float64_output",
                                                   "degenerate",    "exact_differs", "exact_rejects"};

// ---------------------------------------------------------------------------
// Parsed data
// ---------------------------------------------------------------------------

/// One `tensor` block.
struct tensor {
  std::string role;                  ///< X, scale, ..., Y, Y_f32, Y_np2, Y_exact
  std::vector<std::size_t> dims;     ///< extents, empty for rank 0
  std::vector<std::uint32_t> bits;   ///< binary32 bit patterns, row-major
  std::size_t line = 0;              ///< line of the `tensor` keyword

  std::size_t rank() const noexcept { return dims.size(); }
  std::size_t count() const noexcept { return bits.size(); }

  /// The values as floats (bit-for-bit copies, NaN payloads kept).
  std::vector<float> to_floats() const {
    std::vector<float> v(bits.size());
    static_assert(sizeof(float) == sizeof(std::uint32_t));
    if (!bits.empty()) std::memcpy(v.data(), bits.data(), bits.size() * sizeof(float));
    return v;
  }
};

/// One `attr` line.
struct attribute {
  std::string key;
  std::string value;
  std::size_t line = 0;
};

/// One `case ... end` block.
struct test_case {
  std::string name;
  std::string op;                    ///< as written (`Quant` stays `Quant`)
  const op_spec* spec = nullptr;     ///< never null after parsing
  std::size_t line = 0;              ///< line of the `case` keyword
  std::vector<attribute> attributes; ///< in file order
  std::vector<std::string> flags;    ///< in file order
  std::vector<tensor> tensors;       ///< inputs in spec order, then Y, then the optional outputs
  std::string reject_reason;         ///< text after `# exact_rejects:` (trimmed), or empty

  bool has_flag(std::string_view word) const noexcept {
    for (const std::string& f : flags)
      if (f == word) return true;
    return false;
  }
  const attribute* find_attribute(std::string_view key) const noexcept {
    for (const attribute& a : attributes)
      if (a.key == key) return &a;
    return nullptr;
  }
  /// The value of an attribute the op has (the parser guarantees presence).
  std::string_view attribute_value(std::string_view key) const {
    const attribute* a = find_attribute(key);
    if (!a) throw std::out_of_range("qcv: case '" + name + "' has no attribute '" + std::string(key) + "'");
    return a->value;
  }
  const tensor* find_tensor(std::string_view role) const noexcept {
    for (const tensor& t : tensors)
      if (t.role == role) return &t;
    return nullptr;
  }
  /// Input `i` in the op's input order.
  const tensor& input(std::size_t i) const { return tensors.at(i); }
  /// The mandatory expected output `Y`.
  const tensor& y() const { return tensors.at(spec->inputs.size()); }
};

/// A whole `.qcv` file.
struct document {
  std::string path;
  std::vector<test_case> cases;
};

/// A violation of the format, with its position.
class parse_error : public std::runtime_error {
 public:
  parse_error(const std::string& path, std::size_t line, const std::string& message)
      : std::runtime_error(path + ":" + std::to_string(line) + ": " + message),
        path_(path), line_(line), message_(message) {}
  const std::string& path() const noexcept { return path_; }
  std::size_t line() const noexcept { return line_; }
  const std::string& message() const noexcept { return message_; }

 private:
  std::string path_;
  std::size_t line_;
  std::string message_;
};

/// A file that cannot be opened or read.
class io_error : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------

namespace detail {

/// Highest rank the reader accepts (the format itself sets no limit).
inline constexpr std::size_t max_rank = 32;

inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

inline std::string in_quotes(std::string_view s) {
  std::string r;
  r.reserve(s.size() + 2);
  r += '\'';
  r.append(s.substr(0, 60));
  if (s.size() > 60) r += "...";
  r += '\'';
  return r;
}

inline std::string join_words(std::span<const std::string_view> words) {
  std::string r;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i) r += ", ";
    r.append(words[i]);
  }
  return r.empty() ? std::string("(none)") : r;
}

inline bool is_keyword(std::string_view w) noexcept {
  return w == "qcv" || w == "case" || w == "op" || w == "attr" || w == "flag" || w == "tensor" ||
         w == "end";
}

/// Value of one hex digit, or -1 (lowercase only).
inline int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

class parser {
 public:
  parser(std::string_view text, std::string path) : text_(text), path_(std::move(path)) {}

  document run() {
    document doc;
    doc.path = path_;
    std::string_view line;
    if (!next_line(line)) fail(1, "empty file; expected the header 'qcv 1'");
    split(line);
    if (toks_.size() == 2 && toks_[0] == "qcv" && toks_[1] != "1")
      fail(line_no_, "unsupported format version " + in_quotes(toks_[1]) + "; this reader handles 'qcv 1'");
    if (toks_.size() != 2 || toks_[0] != "qcv" || toks_[1] != "1")
      fail(line_no_, "expected the header 'qcv 1' on the first line, found " + in_quotes(line));

    std::string reason;       // from a '# exact_rejects:' comment since the last case
    bool have_reason = false;
    std::unordered_set<std::string> names;
    while (next_line(line)) {
      if (!line.empty() && line[0] == '#') {
        constexpr std::string_view tag = "# exact_rejects:";
        if (line.substr(0, tag.size()) == tag) {
          reason = std::string(trim(line.substr(tag.size())));
          have_reason = true;
        }
        continue;
      }
      split(line);
      if (toks_.empty()) continue;  // blank line between cases
      if (toks_[0] != "case") {
        if (is_keyword(toks_[0]))
          fail(line_no_, in_quotes(toks_[0]) + " outside a case; expected 'case <name>' or a '#' comment");
        fail(line_no_, "unknown keyword " + in_quotes(toks_[0]) + "; expected 'case <name>' or a '#' comment");
      }
      test_case c = parse_case(have_reason ? &reason : nullptr);
      if (!names.insert(c.name).second)
        fail(c.line, "duplicate case name " + in_quotes(c.name) + " (names are unique per file)");
      doc.cases.push_back(std::move(c));
      reason.clear();
      have_reason = false;
    }
    return doc;
  }

 private:
  std::string_view text_;
  std::string path_;
  std::size_t pos_ = 0;       // next character to read
  std::size_t next_no_ = 1;   // line number of the character at pos_
  std::size_t line_no_ = 0;   // line number of the line last returned by next_line
  std::vector<std::string_view> toks_;

  [[noreturn]] void fail(std::size_t line, const std::string& message) const {
    throw parse_error(path_, line, message);
  }

  [[noreturn]] void bad_char(std::size_t line, char c) const {
    if (c == '\r') fail(line, "carriage return (CRLF line ending?); .qcv files use LF line endings");
    char buf[64];
    std::snprintf(buf, sizeof buf, "invalid character 0x%02x; .qcv files are printable ASCII",
                  static_cast<unsigned>(static_cast<unsigned char>(c)));
    fail(line, buf);
  }

  static bool is_text_char(char c) noexcept {
    return c == '\t' || (c >= 0x20 && c <= 0x7e);
  }

  /// Reads the next line (without its LF). False at the end of the text.
  bool next_line(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t start = pos_;
    const std::size_t nl = text_.find('\n', start);
    const std::size_t stop = nl == std::string_view::npos ? text_.size() : nl;
    line = text_.substr(start, stop - start);
    line_no_ = next_no_;
    for (char c : line)
      if (!is_text_char(c)) bad_char(line_no_, c);
    pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
    ++next_no_;
    return true;
  }

  /// Splits a line into blank-separated tokens (into toks_).
  void split(std::string_view line) {
    toks_.clear();
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && is_blank(line[i])) ++i;
      const std::size_t b = i;
      while (i < line.size() && !is_blank(line[i])) ++i;
      if (i > b) toks_.push_back(line.substr(b, i - b));
    }
  }

  static std::string_view trim(std::string_view s) {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
  }

  /// A decimal integer made of digits only.
  std::size_t parse_count(std::string_view tok, const char* what) const {
    if (tok.empty() || tok.size() > 9)
      fail(line_no_, std::string("expected ") + what + " (a decimal integer), found " + in_quotes(tok));
    std::size_t v = 0;
    for (char c : tok) {
      if (c < '0' || c > '9')
        fail(line_no_, std::string("expected ") + what + " (a decimal integer), found " + in_quotes(tok));
      v = v * 10 + static_cast<std::size_t>(c - '0');
    }
    return v;
  }

  static bool valid_case_name(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (char c : s) {
      const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.' || c == '-';
      if (!ok) return false;
    }
    return true;
  }

  /// Next line of a case; end of file, blank lines and comments are errors.
  void case_line(const test_case& c, const char* expected) {
    std::string_view line;
    if (!next_line(line))
      fail(line_no_, "unexpected end of file in case " + in_quotes(c.name) + "; expected " + expected);
    if (!line.empty() && line[0] == '#')
      fail(line_no_, "comment inside case " + in_quotes(c.name) +
                         "; comments are allowed only before the first case and between cases");
    split(line);
    if (toks_.empty()) fail(line_no_, "blank line inside case " + in_quotes(c.name) + "; expected " + expected);
  }

  test_case parse_case(const std::string* reason) {
    test_case c;
    c.line = line_no_;
    if (toks_.size() != 2) fail(line_no_, "expected 'case <name>' (exactly one name)");
    if (!valid_case_name(toks_[1]))
      fail(line_no_, "invalid case name " + in_quotes(toks_[1]) + "; expected [A-Za-z0-9_.-]+");
    c.name = std::string(toks_[1]);
    if (reason) c.reject_reason = *reason;

    // op
    case_line(c, "'op <name>'");
    if (toks_[0] != "op") {
      if (is_keyword(toks_[0]))
        fail(line_no_, "expected 'op <name>' right after 'case', found " + in_quotes(toks_[0]));
      fail(line_no_, "unknown keyword " + in_quotes(toks_[0]) + "; expected 'op <name>'");
    }
    if (toks_.size() != 2) fail(line_no_, "expected 'op <name>' (exactly one name)");
    c.op = std::string(toks_[1]);
    c.spec = find_op(toks_[1]);
    if (!c.spec)
      fail(line_no_, "unknown op " + in_quotes(toks_[1]) +
                         "; expected IntQuant, Trunc, TruncV1, BipolarQuant, FloatQuant or MXQuant");
    const op_spec& spec = *c.spec;

    // Roles in file order: inputs, Y, then the op's outputs after Y
    // (required or optional).
    const std::size_t n_after = spec.outputs_required ? spec.outputs.size() : 0;
    const std::size_t n_required = spec.inputs.size() + 1 + n_after;
    const std::size_t first_after = spec.inputs.size() + 1;
    auto role_at = [&](std::size_t i) -> std::string_view {
      if (i < spec.inputs.size()) return spec.inputs[i];
      if (i == spec.inputs.size()) return "Y";
      return spec.outputs[i - first_after];
    };
    const std::size_t n_roles = first_after + spec.outputs.size();
    const std::string all_roles = [&] {
      std::string r = "Y";
      for (std::string_view o : spec.outputs) r += ", " + std::string(o);
      return r;
    }();

    enum class stage { attrs, flags, tensors } st = stage::attrs;
    std::size_t next_role = 0;

    auto check_attributes_complete = [&] {
      for (std::string_view key : spec.attributes)
        if (!c.find_attribute(key))
          fail(line_no_, "case " + in_quotes(c.name) + " lacks 'attr " + std::string(key) + "' (op " +
                             std::string(spec.name) + " needs " + join_words(spec.attributes) + ")");
    };

    for (;;) {
      case_line(c, "'attr', 'flag', 'tensor' or 'end'");
      const std::string_view kw = toks_[0];
      if (kw == "attr") {
        if (st != stage::attrs)
          fail(line_no_, std::string("'attr' after '") + (st == stage::flags ? "flag" : "tensor") +
                             "'; attributes come first");
        if (toks_.size() != 3) fail(line_no_, "expected 'attr <key> <value>'");
        const std::string_view key = toks_[1], value = toks_[2];
        bool known = false;
        for (std::string_view k : spec.attributes) known = known || k == key;
        if (!known)
          fail(line_no_, "unknown attribute " + in_quotes(key) + " for op " + std::string(spec.name) +
                             "; expected " + join_words(spec.attributes));
        if (c.find_attribute(key)) fail(line_no_, "attribute " + in_quotes(key) + " given twice");
        if (is_boolean_attribute(key) && value != "0" && value != "1")
          fail(line_no_, "attribute " + in_quotes(key) + " must be 0 or 1, found " + in_quotes(value));
        c.attributes.push_back({std::string(key), std::string(value), line_no_});
      } else if (kw == "flag") {
        if (st == stage::tensors) fail(line_no_, "'flag' after 'tensor'; flags come before the tensors");
        st = stage::flags;
        if (toks_.size() != 2) fail(line_no_, "expected 'flag <word>'");
        bool known = false;
        for (std::string_view f : known_flags) known = known || f == toks_[1];
        if (!known)
          fail(line_no_, "unknown flag " + in_quotes(toks_[1]) + "; expected " + join_words(known_flags));
        if (c.has_flag(toks_[1])) fail(line_no_, "flag " + in_quotes(toks_[1]) + " given twice");
        c.flags.emplace_back(toks_[1]);
      } else if (kw == "tensor") {
        if (st != stage::tensors) check_attributes_complete();
        st = stage::tensors;
        if (toks_.size() < 3) fail(line_no_, "expected 'tensor <role> <rank> <dims...>'");
        const std::string_view role = toks_[1];
        // Role order.
        if (next_role < n_required) {
          if (role != role_at(next_role))
            fail(line_no_, "expected tensor " + in_quotes(role_at(next_role)) + ", found " + in_quotes(role) +
                               " (op " + std::string(spec.name) + " has inputs " + join_words(spec.inputs) +
                               ", then " + all_roles + ")");
          ++next_role;
        } else {
          std::size_t found = n_roles;
          for (std::size_t i = next_role; i < n_roles; ++i)
            if (role_at(i) == role) found = i;
          if (found == n_roles) {
            bool earlier = false;
            for (std::size_t i = 0; i < next_role; ++i) earlier = earlier || role_at(i) == role;
            if (earlier)
              fail(line_no_, "tensor " + in_quotes(role) + " repeated or out of order; after " +
                                 in_quotes(role_at(next_role - 1)) + " only " +
                                 (next_role < n_roles ? join_words(spec.outputs.subspan(next_role - first_after))
                                                      : std::string("'end'")) +
                                 " may follow");
            fail(line_no_, "unknown tensor role " + in_quotes(role) + " for op " + std::string(spec.name) +
                               "; expected " + join_words(spec.inputs) + ", " + all_roles);
          }
          next_role = found + 1;
        }
        c.tensors.push_back(parse_tensor(role));
      } else if (kw == "end") {
        if (toks_.size() != 1) fail(line_no_, "expected 'end' alone on its line");
        if (st != stage::tensors) check_attributes_complete();
        if (next_role < n_required)
          fail(line_no_, "case " + in_quotes(c.name) + " ends before tensor " + in_quotes(role_at(next_role)));
        finish_case(c);
        return c;
      } else if (is_keyword(kw)) {
        fail(line_no_, in_quotes(kw) + " inside case " + in_quotes(c.name) +
                           "; expected 'attr', 'flag', 'tensor' or 'end'");
      } else {
        fail(line_no_, "unknown keyword " + in_quotes(kw) + "; expected 'attr', 'flag', 'tensor' or 'end'");
      }
    }
  }

  /// Parses `tensor <role> <rank> <dims...>` (in toks_) and its values.
  tensor parse_tensor(std::string_view role) {
    tensor t;
    t.role = std::string(role);
    t.line = line_no_;
    const std::size_t rank = parse_count(toks_[2], "the rank");
    if (rank > max_rank)
      fail(line_no_, "rank " + std::to_string(rank) + " is above this reader's limit of " +
                         std::to_string(max_rank));
    if (toks_.size() != 3 + rank)
      fail(line_no_, "tensor " + in_quotes(role) + " of rank " + std::to_string(rank) + " needs exactly " +
                         std::to_string(rank) + " dimension(s) after the rank, found " +
                         std::to_string(toks_.size() - 3) + " token(s) (the values start on the next line)");
    std::size_t count = 1;
    t.dims.reserve(rank);
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t d = parse_count(toks_[3 + i], "a dimension");
      t.dims.push_back(d);
      if (count != 0 && d != 0 && count > std::numeric_limits<std::size_t>::max() / d)
        fail(line_no_, "tensor " + in_quotes(role) + " has too many elements");
      count *= d;
    }
    read_values(t, count);
    return t;
  }

  /// Reads `count` value tokens starting on the line after the tensor line.
  void read_values(tensor& t, std::size_t count) {
    if (count == 0) return;  // no value tokens; the next line is a keyword line
    const std::size_t remaining = text_.size() - pos_;
    t.bits.reserve(count < remaining / 9 + 1 ? count : remaining / 9 + 1);
    std::size_t last_line = line_no_;
    for (std::size_t k = 0; k < count; ++k) {
      // Skip whitespace, line breaks included.
      while (pos_ < text_.size()) {
        const char c = text_[pos_];
        if (c == '\n') {
          ++next_no_;
        } else if (!is_blank(c)) {
          break;
        }
        ++pos_;
      }
      const std::size_t tok_line = next_no_;
      if (pos_ >= text_.size())
        fail(tok_line - (text_.empty() || text_.back() == '\n' ? 1 : 0),
             "unexpected end of file: tensor " + in_quotes(t.role) + " needs " + std::to_string(count) +
                 " values, found " + std::to_string(k));
      const std::size_t b = pos_;
      while (pos_ < text_.size() && text_[pos_] != '\n' && !is_blank(text_[pos_])) {
        if (!is_text_char(text_[pos_])) bad_char(tok_line, text_[pos_]);
        ++pos_;
      }
      const std::string_view tok = text_.substr(b, pos_ - b);
      std::uint32_t v = 0;
      bool ok = tok.size() == 8;
      for (std::size_t i = 0; ok && i < 8; ++i) {
        const int d = hex_digit(tok[i]);
        ok = d >= 0;
        v = (v << 4) | static_cast<std::uint32_t>(d < 0 ? 0 : d);
      }
      if (!ok) {
        if (is_keyword(tok) || tok[0] == '#')
          fail(tok_line, "tensor " + in_quotes(t.role) + " needs " + std::to_string(count) + " values, found " +
                             std::to_string(k) + " before " + in_quotes(tok));
        fail(tok_line, "value " + std::to_string(k) + " of tensor " + in_quotes(t.role) +
                           ": expected 8 lowercase hex digits, found " + in_quotes(tok));
      }
      t.bits.push_back(v);
      last_line = tok_line;
    }
    // The rest of the last value line must be empty.
    while (pos_ < text_.size() && text_[pos_] != '\n') {
      const char c = text_[pos_];
      if (!is_blank(c)) {
        if (!is_text_char(c)) bad_char(last_line, c);
        fail(last_line, "tensor " + in_quotes(t.role) + " has more than the " + std::to_string(count) +
                            " values its dims give (or a keyword follows the last value on its line)");
      }
      ++pos_;
    }
    if (pos_ < text_.size()) {  // consume the LF
      ++pos_;
      ++next_no_;
    }
    line_no_ = last_line;
  }

  /// Cross-checks of a complete case (at its `end` line).
  void finish_case(const test_case& c) const {
    const tensor& y = c.y();
    for (std::string_view role : optional_outputs) {
      const tensor* t = c.find_tensor(role);
      if (t && t->dims != y.dims)
        fail(t->line, "tensor " + in_quotes(role) + " must have the dims of 'Y'");
    }
    if (const tensor* t = c.find_tensor("SCALE"); t && t->dims.size() != y.dims.size())
      fail(t->line, "tensor 'SCALE' must have the rank of 'Y'");
    struct pairing {
      std::string_view flag, role;
    };
    constexpr pairing pairs[] = {
        {"f32_differs", "Y_f32"}, {"np2_differs", "Y_np2"}, {"exact_differs", "Y_exact"}};
    for (const pairing& p : pairs) {
      const bool f = c.has_flag(p.flag), t = c.find_tensor(p.role) != nullptr;
      if (f && !t)
        fail(line_no_, "case " + in_quotes(c.name) + " has 'flag " + std::string(p.flag) + "' but no tensor " +
                           in_quotes(p.role));
      if (t && !f)
        fail(line_no_, "case " + in_quotes(c.name) + " has tensor " + in_quotes(p.role) + " but no 'flag " +
                           std::string(p.flag) + "'");
    }
    if (c.has_flag("exact_rejects")) {
      if (c.find_tensor("Y_exact"))
        fail(line_no_, "case " + in_quotes(c.name) + " is flagged exact_rejects but has a 'Y_exact' tensor");
      if (c.reject_reason.empty())
        fail(c.line, "case " + in_quotes(c.name) +
                         " is flagged exact_rejects but not preceded by a '# exact_rejects: <reason>' comment");
    }
  }
};

}  // namespace detail

/// Parses the text of a `.qcv` file; `path` is used in error messages.
/// Throws parse_error.
inline document parse(std::string_view text, std::string path) {
  return detail::parser(text, std::move(path)).run();
}

/// Reads and parses a `.qcv` file. Throws io_error or parse_error.
inline document read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw io_error("cannot read '" + path + "': it is a directory");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw io_error("cannot open '" + path + "'" +
                   (err ? ": " + std::generic_category().message(err) : std::string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad() || text.bad()) throw io_error("cannot read '" + path + "'");
  return parse(text.str(), path);
}

}  // namespace qcv

#endif  // LOWBIT_TESTS_CONFORMANCE_QCV_HPP
