// SPDX-License-Identifier: Apache-2.0
// An independent oracle for FloatQuant's exact semantics on a minifloat
// format: it enumerates the codes of the format from their bit fields into a
// sorted table and picks, for each input, the neighbouring code the rounding
// mode asks for. It shares nothing with the library's kernels (no log2, no
// exponent arithmetic on the input, no rounding primitives).
#ifndef LOWBIT_TESTS_MINIFLOAT_ORACLE_HPP
#define LOWBIT_TESTS_MINIFLOAT_ORACLE_HPP

#include <lowbit/minifloat.hpp>
#include <lowbit/rounding.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace lowbit_test {

class minifloat_oracle {
 public:
  /// One non-negative grid point: its value and whether its mantissa field is even.
  struct code {
    double value;
    bool even;
  };

  explicit minifloat_oracle(const lowbit::minifloat_format& f) : f_(f) {
    // Every exponent field 0 .. 2^E, the last one past the layout: the grid
    // continues above the largest code, and the first point above max
    // decides overflow after rounding. Fields 0 (subnormal) and 1 share a step.
    const int fields = 1 << f.exponent_bits;
    for (int ef = 0; ef <= fields; ++ef) {
      for (int mf = 0; mf < (1 << f.mantissa_bits); ++mf) {
        const double frac = ef == 0 ? mf : (1 << f.mantissa_bits) + mf;
        const double v = std::ldexp(frac, std::max(ef, 1) - f.bias - f.mantissa_bits);
        codes_.push_back({v, (mf & 1) == 0});
      }
    }
    std::sort(codes_.begin(), codes_.end(), [](const code& a, const code& b) { return a.value < b.value; });
    // Keep the codes up to max_value and the first one above it.
    auto above = std::upper_bound(codes_.begin(), codes_.end(), f.max_value,
                                  [](double v, const code& c) { return v < c.value; });
    codes_.erase(above + (above == codes_.end() ? 0 : 1), codes_.end());
  }

  /// The non-negative codes (the last one is the first grid point above max).
  const std::vector<code>& codes() const { return codes_; }

  /// FloatQuant (exact semantics, scale 1) of x in this format.
  float operator()(float x, lowbit::rounding_mode mode) const {
    using lowbit::rounding_mode;
    if (std::isnan(x)) return std::numeric_limits<float>::quiet_NaN();
    const bool neg = std::signbit(x);
    const double a = std::fabs(static_cast<double>(x));
    double mag;
    if (std::isinf(a)) {
      mag = a;
    } else {
      // codes_[k] <= a < codes_[k + 1], or a beyond the last code.
      auto it = std::upper_bound(codes_.begin(), codes_.end(), a,
                                 [](double v, const code& c) { return v < c.value; });
      if (it == codes_.end()) {
        mag = std::numeric_limits<double>::infinity();  // beyond the first point above max
      } else {
        const code lo = *(it - 1), hi = *it;
        if (a == lo.value) {
          mag = lo.value;
        } else {
          // Magnitude direction: floor and ceil depend on the sign.
          bool up_mag = false;
          const double mid = (lo.value + hi.value) / 2;  // exact in double
          switch (mode) {
            case rounding_mode::floor: up_mag = neg; break;
            case rounding_mode::ceil: up_mag = !neg; break;
            case rounding_mode::down: up_mag = false; break;
            case rounding_mode::up: up_mag = true; break;
            case rounding_mode::half_even: up_mag = a > mid || (a == mid && hi.even); break;
            case rounding_mode::half_up: up_mag = a >= mid; break;
            case rounding_mode::half_down: up_mag = a > mid; break;
            // lowbit's extensions: the odd neighbour; ties to even but a
            // negative tie toward +inf (down in magnitude).
            case rounding_mode::odd: up_mag = !hi.even; break;
            case rounding_mode::dpu: up_mag = a > mid || (a == mid && !neg && hi.even); break;
            case rounding_mode::stochastic: up_mag = false; break;  // needs a draw: not modelled
          }
          mag = up_mag ? hi.value : lo.value;
        }
      }
    }
    float r;
    if (mag > f_.max_value) {
      if (f_.saturation)
        r = static_cast<float>(f_.max_value);
      else if (f_.has_inf)
        r = std::numeric_limits<float>::infinity();
      else
        return std::numeric_limits<float>::quiet_NaN();
    } else {
      r = static_cast<float>(mag);
    }
    return neg ? -r : r;
  }

  /// Test points: every code, every midpoint between neighbours, and one
  /// float32 ulp either side of each, on both signs, plus +-inf, NaN and
  /// float32's extremes.
  std::vector<float> probe_points() const {
    std::vector<float> p;
    auto around = [&](float v) {
      p.push_back(v);
      p.push_back(std::nextafter(v, 0.0f));
      p.push_back(std::nextafter(v, std::numeric_limits<float>::infinity()));
    };
    for (std::size_t k = 0; k < codes_.size(); ++k) {
      around(static_cast<float>(codes_[k].value));
      if (k + 1 < codes_.size()) around(static_cast<float>((codes_[k].value + codes_[k + 1].value) / 2));
    }
    for (float v : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::max(),
                    std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(),
                    static_cast<float>(codes_.back().value) * 2, 1e30f})
      around(v);
    const std::size_t n = p.size();
    for (std::size_t i = 0; i < n; ++i) p.push_back(-p[i]);
    p.push_back(std::numeric_limits<float>::quiet_NaN());
    p.push_back(-std::numeric_limits<float>::quiet_NaN());
    return p;
  }

 private:
  lowbit::minifloat_format f_;
  std::vector<code> codes_;
};

}  // namespace lowbit_test

#endif
