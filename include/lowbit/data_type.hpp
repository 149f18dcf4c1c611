// SPDX-License-Identifier: Apache-2.0
/**
 * @file data_type.hpp
 * QONNX data types by their canonical names: INT<n>, UINT<n>, BIPOLAR,
 * BINARY, TERNARY, FIXED<w,i>, SCALEDINT<n>, FLOAT<e,m,b>, FLOAT32 and
 * FLOAT16, with QONNX's answers to bitwidth, min, max, signed, is_integer
 * and allowed(value), and the IntQuant or FloatQuant parameters that
 * produce the type's values. The rules, name by name, are in
 * docs/data_types.md.
 *
 * **Example**:
 * ```
 * const auto t = lowbit::data_type::parse("FIXED<8,3>");
 * t.min();            // -4
 * t.max();            // 3.96875
 * t.allowed(1.25);    // true: 1.25 * 2^5 = 40 is an INT8 value
 * const auto p = t.quant_params();  // signed 8 bits, scale 2^-5
 * p.op(x, p.scale, p.zeropt, p.bitwidth, y);
 * ```
 */
#ifndef LOWBIT_DATA_TYPE_HPP
#define LOWBIT_DATA_TYPE_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "config.hpp"
#include "detail/quote.hpp"
#include "error.hpp"
#include "int_quant.hpp"
#include "minifloat.hpp"
#include "rounding.hpp"

LOWBIT_BEGIN_NAMESPACE

/// The IntQuant functor and inputs that produce a data type's values:
/// `op(x, scale, zeropt, bitwidth, y)`.
template <semantics S = semantics::reference>
struct int_quant_params {
  int_quant<S> op;
  float scale = 1.0f;
  float zeropt = 0.0f;
  float bitwidth = 8.0f;
};

/**
 * A QONNX data type (qonnx.core.datatype), parsed from its canonical name.
 * Values are `double`; integer types of more than 53 bits report min and
 * max rounded to double, but `allowed` checks their range exactly.
 */
class data_type {
 public:
  enum class kind { integer, bipolar, ternary, fixed, scaled_int, arb_float, float32, float16 };

  /// INT8, the default.
  data_type() = default;

  /**
   * Parses a canonical name as QONNX's DataType[name] does, but strictly
   * (upper case, decimal numbers without a '+', spaces only around the
   * numbers inside `<...>`, nothing before or after the name):
   * INT<n> and UINT<n> with n from 1 to 64 (UINT1 is BINARY), BIPOLAR,
   * BINARY, TERNARY, FIXED<w,i> (1 <= w <= 64, -64 <= i < w),
   * SCALEDINT<n> (1 to 64), FLOAT<e,m> or FLOAT<e,m,b> (1 <= e <= 8,
   * 0 <= m <= 23, the bias b from -255 to 255; as in QONNX, a bias of 0 or
   * none means the IEEE-style 2^(e-1) - 1), FLOAT32 and FLOAT16.
   * @throws lowbit::error naming the string and what was expected. The
   *         string is shown quoted with C-style escapes (a NUL as `\x00`)
   *         and cut after 64 bytes (detail::quote); a number too large for
   *         an int is reported as out of range, with its digits.
   */
  static data_type parse(std::string_view name) {
    data_type t;
    auto fail = [&](const std::string& why) -> data_type {
      throw error("lowbit::data_type: " + detail::quote(name) + " is not a QONNX data type name (" + why +
                  "); expected INT<n> or UINT<n> (n from 1 to 64), BIPOLAR, BINARY, TERNARY, FIXED<w,i>, "
                  "SCALEDINT<n>, FLOAT<e,m> or FLOAT<e,m,b>, FLOAT32 or FLOAT16");
    };
    if (name == "BIPOLAR") return make(kind::bipolar, 1, 0, true);
    if (name == "TERNARY") return make(kind::ternary, 2, 0, true);
    if (name == "BINARY") return make(kind::integer, 1, 0, false);
    if (name == "FLOAT32") return make(kind::float32, 32, 0, true);
    if (name == "FLOAT16") return make(kind::float16, 16, 0, true);
    int nums[3] = {};
    std::string_view texts[3];  // the digits of each number, for messages
    // A number too large for an int becomes INT_MAX (INT_MIN if negative),
    // which every range check below rejects, naming its digits.
    auto parse_int = [&](std::string_view rest, int k) -> const char* {
      // std::from_chars's rule for an int (an optional '-', then decimal
      // digits), by hand: <charconv> instantiates its to_chars for every
      // integer type in each translation unit that includes it.
      const char* const first = rest.data();
      const char* const last = rest.data() + rest.size();
      const char* p = first;
      const bool neg = p != last && *p == '-';
      if (neg) ++p;
      const char* const digits = p;
      long long v = 0;  // saturates just above the magnitude of INT_MIN
      for (; p != last && *p >= '0' && *p <= '9'; ++p) v = std::min(v * 10 + (*p - '0'), 1LL << 32);
      if (p == digits) return nullptr;
      if (neg) v = -v;
      nums[k] = v < std::numeric_limits<int>::min()   ? std::numeric_limits<int>::min()
                : v > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max()
                                                      : static_cast<int>(v);
      texts[k] = std::string_view(first, static_cast<std::size_t>(p - first));
      return p;
    };
    auto number = [&](int k) -> std::string {
      const std::string_view d = texts[k];
      if (d.size() <= 24) return std::string(d);
      return std::string(d.substr(0, 24)) + "... (" + std::to_string(d.size()) + " characters)";
    };
    auto number_list = [&](std::string_view rest, int want_min, int want_max) -> int {
      if (rest.size() < 2 || rest.front() != '<' || rest.back() != '>') return -1;
      rest = rest.substr(1, rest.size() - 2);
      int n = 0;
      while (true) {
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        if (n == 3) return -1;
        const char* p = parse_int(rest, n);
        if (p == nullptr || p == rest.data()) return -1;
        rest.remove_prefix(static_cast<std::size_t>(p - rest.data()));
        ++n;
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        if (rest.empty()) break;
        if (rest.front() != ',') return -1;
        rest.remove_prefix(1);
      }
      return n >= want_min && n <= want_max ? n : -1;
    };
    auto plain_number = [&](std::string_view digits) -> bool {
      if (digits.empty() || digits.front() < '0' || digits.front() > '9') return false;
      const char* p = parse_int(digits, 0);
      return p == digits.data() + digits.size();
    };
    if (name.starts_with("UINT") || name.starts_with("INT")) {
      const bool sgn = name.starts_with("INT");
      if (!plain_number(name.substr(sgn ? 3 : 4))) return fail("the bit width is not a number");
      if (nums[0] < 1 || nums[0] > 64) return fail("bit width " + number(0) + " outside 1 to 64");
      return make(kind::integer, nums[0], 0, sgn);
    }
    if (name.starts_with("FIXED")) {
      if (number_list(name.substr(5), 2, 2) < 0) return fail("expected FIXED<w,i> with two integers");
      if (nums[0] < 1 || nums[0] > 64) return fail("total width " + number(0) + " outside 1 to 64");
      if (nums[1] >= nums[0] || nums[1] < -64)
        return fail("integer width " + number(1) + " not from -64 to the total width - 1");
      return make(kind::fixed, nums[0], nums[1], true);
    }
    if (name.starts_with("SCALEDINT")) {
      if (number_list(name.substr(9), 1, 1) < 0) return fail("expected SCALEDINT<n> with one integer");
      if (nums[0] < 1 || nums[0] > 64) return fail("bit width " + number(0) + " outside 1 to 64");
      return make(kind::scaled_int, nums[0], 0, true);
    }
    if (name.starts_with("FLOAT")) {
      const int n = number_list(name.substr(5), 2, 3);
      if (n < 0) return fail("expected FLOAT<e,m> or FLOAT<e,m,b> with integers");
      if (nums[0] < 1 || nums[0] > 8) return fail("exponent bits " + number(0) + " outside 1 to 8");
      if (nums[1] < 0 || nums[1] > 23) return fail("mantissa bits " + number(1) + " outside 0 to 23");
      if (n == 3 && (nums[2] < -255 || nums[2] > 255))
        return fail("exponent bias " + number(2) + " outside -255 to 255");
      // QONNX: `if not exponent_bias`, so 0 also means the default.
      const int bias = n == 3 && nums[2] != 0 ? nums[2] : (1 << (nums[0] - 1)) - 1;
      t = make(kind::arb_float, 1 + nums[0] + nums[1], nums[0], true);
      t.m_ = nums[1];
      t.bias_ = bias;
      return t;
    }
    return fail("unknown name");
  }

  /// The canonical name: parse(name()) == *this.
  std::string name() const {
    switch (kind_) {
      case kind::integer:
        if (bits_ == 1 && !signed_) return "BINARY";
        return (signed_ ? "INT" : "UINT") + std::to_string(bits_);
      case kind::bipolar: return "BIPOLAR";
      case kind::ternary: return "TERNARY";
      case kind::fixed: return "FIXED<" + std::to_string(bits_) + "," + std::to_string(a_) + ">";
      case kind::scaled_int: return "SCALEDINT<" + std::to_string(bits_) + ">";
      case kind::arb_float:
        return "FLOAT<" + std::to_string(a_) + "," + std::to_string(m_) + "," + std::to_string(bias_) + ">";
      case kind::float32: return "FLOAT32";
      case kind::float16: return "FLOAT16";
    }
    return "";
  }

  kind type_kind() const noexcept { return kind_; }
  /// Bits per value (FLOAT<e,m,b>: 1 + e + m; FLOAT32: 32).
  int bitwidth() const noexcept { return bits_; }
  /// Whether negative values exist (every type but UINT<n> and BINARY).
  bool is_signed() const noexcept { return signed_; }
  /// INT, UINT, BINARY, BIPOLAR and TERNARY (not FIXED, SCALEDINT, floats).
  bool is_integer() const noexcept {
    return kind_ == kind::integer || kind_ == kind::bipolar || kind_ == kind::ternary;
  }
  /// FIXED<w,i>.
  bool is_fixed_point() const noexcept { return kind_ == kind::fixed; }
  /// FIXED<w,i>: its integer bits i (0 for the other types).
  int int_bits() const noexcept { return kind_ == kind::fixed ? a_ : 0; }
  /// FIXED<w,i>: the step 2^-(w-i); 1 for the integer types.
  double scale_factor() const noexcept { return kind_ == kind::fixed ? std::ldexp(1.0, a_ - bits_) : 1.0; }
  /// FLOAT<e,m,b>: e, m and b.
  int exponent_bits() const noexcept { return kind_ == kind::arb_float ? a_ : 0; }
  int mantissa_bits() const noexcept { return kind_ == kind::arb_float ? m_ : 0; }
  int exponent_bias() const noexcept { return kind_ == kind::arb_float ? bias_ : 0; }

  /// The smallest value. @throws lowbit::error for SCALEDINT (undefined in QONNX).
  double min() const {
    switch (kind_) {
      case kind::integer: return signed_ ? -std::ldexp(1.0, bits_ - 1) : 0.0;
      case kind::bipolar:
      case kind::ternary: return -1.0;
      case kind::fixed: return -std::ldexp(1.0, a_ - 1);
      case kind::arb_float: return -max();
      case kind::float32: return -static_cast<double>(std::numeric_limits<float>::max());
      case kind::float16: return -65504.0;
      case kind::scaled_int: break;
    }
    throw undefined("min");
  }

  /// The largest value. @throws lowbit::error for SCALEDINT.
  double max() const {
    switch (kind_) {
      case kind::integer: return std::ldexp(1.0, bits_ - (signed_ ? 1 : 0)) - 1.0;
      case kind::bipolar:
      case kind::ternary: return 1.0;
      case kind::fixed: return (std::ldexp(1.0, bits_ - 1) - 1.0) * scale_factor();
      case kind::arb_float:
        // No bit pattern reserved for inf or NaN (as QONNX).
        return detail::minifloat_largest<double>(m_, (1LL << a_) - 1 - bias_);
      case kind::float32: return static_cast<double>(std::numeric_limits<float>::max());
      case kind::float16: return 65504.0;
      case kind::scaled_int: break;
    }
    throw undefined("max");
  }

  /**
   * Whether `v` is a value of the type: an integer in range (INT, UINT,
   * BINARY), -1 or +1 (BIPOLAR), -1, 0 or +1 (TERNARY), v / 2^-(w-i) an
   * INT<w> value (FIXED), v within +-max and, rounded to float32 as QONNX
   * does, with no more significant bits than the format has at its
   * exponent, subnormals included (FLOAT<e,m,b>), anything (FLOAT32,
   * FLOAT16, as QONNX). NaN and infinities are not values of the other
   * types.
   * @throws lowbit::error for SCALEDINT (undefined in QONNX).
   */
  bool allowed(double v) const {
    switch (kind_) {
      case kind::float32:
      case kind::float16: return true;
      case kind::bipolar: return v == 1.0 || v == -1.0;
      case kind::ternary: return v == 1.0 || v == -1.0 || v == 0.0;
      case kind::integer: return int_allowed(v, bits_, signed_);
      case kind::fixed: return int_allowed(v * std::ldexp(1.0, bits_ - a_), bits_, true);  // exact: a power of two
      case kind::arb_float: {
        // The range on v itself (as QONNX), then the grid on v rounded to
        // float32 (as QONNX); v beyond float32's range is checked exactly.
        if (!(std::fabs(v) <= max())) return false;  // also NaN and inf
        const double f = std::fabs(v) <= static_cast<double>(std::numeric_limits<float>::max())
                             ? static_cast<double>(static_cast<float>(v))
                             : v;
        if (f == 0.0) return true;
        int e = 0;
        (void)std::frexp(f, &e);  // |f| in [2^(e-1), 2^e)
        // The spacing of the format's values near f: 2^(max(e-1, 1-bias) - m).
        const int step = std::max(e - 1, 1 - bias_) - m_;
        const double k = std::ldexp(f, -step);
        return k == std::trunc(k);
      }
      case kind::scaled_int: break;
    }
    throw undefined("allowed");
  }

  /**
   * The IntQuant parameters whose outputs are this type's values, for the
   * integer and fixed-point types: INT<n> / UINT<n> (signed or not, n
   * bits, scale 1), BINARY (UINT1), BIPOLAR (signed 1-bit: QONNX's bipolar
   * path, {-1, +1}), TERNARY (INT2 narrow: {-1, 0, +1}) and FIXED<w,i>
   * (INT<w>, scale 2^-(w-i)). INT1 and FIXED<1,i> ({-1, 0} times the
   * scale) are unsigned 1 bit with zero point 1, since a signed 1-bit
   * IntQuant takes the bipolar path. The bit width goes in as an input, which the
   * operator checks (1 to 32 for float32 tensors, 53 for float64). Above 24
   * bits a float32 output can leave the type: IntQuant clamps to
   * 2^(n-1) - 1, which float32 rounds up to 2^(n-1) from INT26 (UINT25)
   * on; float64 tensors hold every value up to 53 bits.
   * @throws lowbit::error for the float and SCALEDINT types.
   */
  template <semantics S = semantics::reference>
  int_quant_params<S> quant_params(rounding_mode rounding = rounding_mode::half_even) const {
    int_quant_params<S> p;
    p.op.rounding = rounding;
    p.op.is_signed = signed_;
    p.op.narrow = kind_ == kind::ternary;
    p.bitwidth = static_cast<float>(bits_);
    if ((kind_ == kind::integer || kind_ == kind::fixed) && signed_ && bits_ == 1) {
      // INT1 is {-1, 0}, but a signed 1-bit IntQuant takes QONNX's bipolar
      // path ({-1, +1}): unsigned 1 bit with zero point 1 gives {-1, 0}.
      p.op.is_signed = false;
      p.zeropt = 1.0f;
    }
    switch (kind_) {
      case kind::integer:
      case kind::bipolar:
      case kind::ternary: return p;
      case kind::fixed:
        p.scale = static_cast<float>(scale_factor());  // 2^-128 at the least: a float32
        return p;
      default: break;
    }
    throw error("lowbit::data_type: " + name() +
                " has no IntQuant parameters; expected an integer or fixed-point type (INT, UINT, BINARY, "
                "BIPOLAR, TERNARY, FIXED)");
  }

  /**
   * The minifloat format of FLOAT<e,m,b> for lowbit::minifloat_quant (and
   * FloatQuant's inputs): e, m, bias, max_val = max() (no bit pattern
   * reserved for inf or NaN, as in QONNX), saturating. When max() is
   * beyond float32 (e = 8 with a bias below 128, e.g. FLOAT<8,7,127>),
   * max_val is the type's largest value float32 holds, (2 - 2^-m) * 2^127,
   * so that saturated outputs stay finite values of the type.
   * @throws lowbit::error for the other types, and for a FLOAT<e,m,b>
   *         whose largest value float32 cannot hold (every normal value
   *         above float32's range, or a largest value below it).
   */
  minifloat_format minifloat() const {
    if (kind_ != kind::arb_float)
      throw error("lowbit::data_type: " + name() +
                  " has no FloatQuant parameters; expected a FLOAT<e,m,b> type");
    constexpr double flt_max = static_cast<double>(std::numeric_limits<float>::max());
    double mx = max();
    if (mx > flt_max) {
      if (1 - bias_ > 127)
        throw error("lowbit::data_type: " + name() + " has no FloatQuant parameters on float32: its smallest "
                    "normal value 2^" + std::to_string(1 - bias_) +
                    " is beyond float32; expected an exponent bias >= -126");
      mx = (2.0 - std::ldexp(1.0, -m_)) * std::ldexp(1.0, 127);  // a value of the type, <= FLT_MAX
    } else if (static_cast<double>(static_cast<float>(mx)) != mx) {
      throw error("lowbit::data_type: " + name() + " has no FloatQuant parameters on float32: its largest value " +
                  "(2 - 2^-" + std::to_string(m_) + ") * 2^" + std::to_string((1 << a_) - 1 - bias_) +
                  " is not a float32 value; expected a format whose largest value float32 holds");
    }
    return minifloat_format{a_, m_, bias_, mx, false, false, true};
  }

  friend bool operator==(const data_type& a, const data_type& b) noexcept {
    return a.kind_ == b.kind_ && a.bits_ == b.bits_ && a.a_ == b.a_ && a.m_ == b.m_ && a.bias_ == b.bias_ &&
           a.signed_ == b.signed_;
  }

 private:
  static data_type make(kind k, int bits, int a, bool sgn) {
    data_type t;
    t.kind_ = k;
    t.bits_ = bits;
    t.a_ = a;
    t.signed_ = sgn;
    return t;
  }
  static bool int_allowed(double v, int bits, bool sgn) noexcept {
    if (!(v == std::trunc(v))) return false;  // also NaN and inf
    const double lo = sgn ? -std::ldexp(1.0, bits - 1) : 0.0;
    const double hi = std::ldexp(1.0, bits - (sgn ? 1 : 0));  // exclusive, exact
    return v >= lo && v < hi;
  }
  error undefined(const char* what) const {
    return error("lowbit::data_type: " + std::string(what) + " is undefined for " + name() +
                 " (as in QONNX); expected a type other than SCALEDINT");
  }

  kind kind_ = kind::integer;
  int bits_ = 8;
  int a_ = 0;  // FIXED: integer bits; FLOAT: exponent bits
  int m_ = 0;
  int bias_ = 0;
  bool signed_ = true;
};

/// The canonical name of `t`.
inline std::string to_string(const data_type& t) { return t.name(); }

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_DATA_TYPE_HPP
