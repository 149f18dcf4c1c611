// SPDX-License-Identifier: Apache-2.0
//
// rounding_table: what every QONNX rounding mode does to a few sample values.
//
// IntQuant computes, for each element,
//     y = x / scale + zeropt,   q = round(clamp(y, min_int, max_int)),   Y = (q - zeropt) * scale
// and `rounding` chooses how round() breaks fractions. This program quantizes
// one small tensor to signed 4-bit integers (range -8..7, scale 1, zeropt 0)
// with each of the seven modes, in both of lowbit's semantics:
//   - reference: the float32 results of the QONNX reference implementation, bit for bit;
//   - exact:     what the operator definition means, without numpy's artefacts.
// A second table lists inputs on which the two semantics give different results.
#include <lowbit/lowbit.hpp>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr float nan_v = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_v = std::numeric_limits<float>::infinity();

// Shortest text that reads back as the same float: "-0" keeps its sign,
// 0.49999997f is not shown as "0.5", and any NaN prints as "nan".
std::string show(float v) {
  if (std::isnan(v)) return "nan";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Same bits, or both NaN: the way the conformance tests compare results.
bool same(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  std::uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  return ua == ub;
}

// The sample tensor: the spec's tie cases, small values around zero (both
// zeros), values beyond the int4 range (clamped to 7), and the specials.
const std::vector<float> x = {-2.5f, -1.6f, -1.1f, -0.5f, -0.3f, -0.0f, 0.0f, 0.3f,
                              0.5f,  1.1f,  1.6f,  2.5f,  5.5f,  7.9f,  nan_v, inf_v};

// One column per mode: results[mode][i] for input x[i].
using table = std::array<std::vector<float>, lowbit::all_rounding_modes.size()>;

template <lowbit::semantics S>
table quantize_all_modes() {
  table t;
  for (std::size_t m = 0; m < t.size(); ++m) {
    t[m].resize(x.size());
    const lowbit::int_quant<S> q{.is_signed = true, .narrow = false,
                                 .rounding = lowbit::all_rounding_modes[m]};
    q(x, /*scale=*/1.0f, /*zeropt=*/0.0f, /*bitwidth=*/4.0f, t[m]);
  }
  return t;
}

// Prints one table; cells that differ from `other` get a '*'.
void print(const char* title, const table& t, const table& other) {
  std::printf("\n%s\n%8s", title, "x");
  for (lowbit::rounding_mode m : lowbit::all_rounding_modes)
    std::printf(" %10s", std::string(lowbit::to_string(m)).c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::printf("%8s", show(x[i]).c_str());
    for (std::size_t m = 0; m < t.size(); ++m)
      std::printf(" %10s", (show(t[m][i]) + (same(t[m][i], other[m][i]) ? " " : "*")).c_str());
    std::printf("\n");
  }
}

// One input on which the semantics disagree, and why.
struct difference {
  lowbit::rounding_mode mode;
  bool is_signed;
  float bitwidth, x, scale;
  const char* why;
};

// Runs one case in semantics S and returns the result as text; the exact
// semantics reject a scale that is not finite and > 0 with lowbit::error.
template <lowbit::semantics S>
std::string run(const difference& d) {
  const lowbit::int_quant<S> q{.is_signed = d.is_signed, .rounding = d.mode};
  std::vector<float> y(1);
  try {
    q(std::vector<float>{d.x}, d.scale, 0.0f, d.bitwidth, y);
  } catch (const lowbit::error&) {
    return "error";
  }
  return show(y[0]);
}

}  // namespace

int main() {
  using lowbit::rounding_mode;
  const table ref = quantize_all_modes<lowbit::semantics::reference>();
  const table exact = quantize_all_modes<lowbit::semantics::exact>();
  std::printf("IntQuant, int4 signed (-8..7), scale 1, zeropt 0. '*': the semantics differ.\n");
  print("semantics::reference (QONNX float32 results)", ref, exact);
  print("semantics::exact", exact, ref);

  const difference cases[] = {
      {rounding_mode::half_up, true, 4, 0.49999997f, 1,
       "float32 |y| + 0.5 rounds up to 1.0 before QONNX takes the floor"},
      {rounding_mode::half_down, true, 4, 0.3f, 1,
       "QONNX computes sign(y) * ceil(|y| - 0.5) = 1 * ceil(-0.2) = -0"},
      {rounding_mode::half_down, false, 4, -0.5f, 1,
       "unsigned: clip gives +0, then sign(+0) = +0 times ceil(-0.5) = -0 gives -0"},
      {rounding_mode::half_even, true, 1, nan_v, 1,
       "1-bit signed is bipolar; QONNX's where(y >= 0, 1, -1) sends NaN to -1"},
      {rounding_mode::half_even, true, 4, 1.0f, 0,
       "scale 0: QONNX divides by zero (inf, clamped, times 0); exact rejects it"},
  };
  std::printf("\nWhere the semantics differ:\n%-10s %-6s %11s %5s %9s %9s  %s\n", "mode", "type", "x",
              "scale", "reference", "exact", "why");
  for (const difference& d : cases) {
    const std::string type = (d.is_signed ? "int" : "uint") + std::to_string(int(d.bitwidth));
    std::printf("%-10s %-6s %11s %5s %9s %9s  %s\n", std::string(lowbit::to_string(d.mode)).c_str(),
                type.c_str(), show(d.x).c_str(), show(d.scale).c_str(),
                run<lowbit::semantics::reference>(d).c_str(),
                run<lowbit::semantics::exact>(d).c_str(), d.why);
  }
  return 0;
}
