// SPDX-License-Identifier: Apache-2.0
// operators: one short call of every operator lowbit implements, with
// the values it gives. docs/usage.md quotes the blocks between the "readme:"
// markers, and README.md one of them; the tests docs_snippets and
// readme_snippets check that they still match this file.
#include <lowbit/lowbit.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {
int failures = 0;
void expect(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
  bool ok = got.size() == want.size();
  for (std::size_t i = 0; ok && i < got.size(); ++i)
    ok = (std::isnan(want[i]) && std::isnan(got[i])) ||
         (got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]));
  std::printf("%-26s", what);
  for (float v : got) std::printf(" %g", v);
  std::printf("%s\n", ok ? "" : "   <- unexpected");
  failures += ok ? 0 : 1;
}
}  // namespace

int main() {
  {
    // readme: int_quant
    // IntQuant: unsigned 4 bits, scale 0.5, zero point 2, rounding HALF_UP.
    lowbit::int_quant<> q{.is_signed = false, .rounding = lowbit::rounding_mode::half_up};
    std::vector<float> x{0.25f, -3.0f, 9.0f}, y(3);
    q(x, 0.5f, 2.0f, 4.0f, y);  // x/0.5 + 2 = {2.5, -4, 20} -> {3, 0, 15} -> y = {0.5, -1, 6.5}
    // readme: end
    expect("int_quant", y, {0.5f, -1.0f, 6.5f});
  }
  {
    // readme: trunc
    // Trunc (opset 2): an int8 tensor at scale 0.5 down to 4 bits at scale 2 (t = 4), FLOOR.
    lowbit::trunc<> t{.is_signed = true, .rounding = lowbit::rounding_mode::floor};
    std::vector<float> x{3.0f, -5.0f, 7.0f}, y(3);
    t(x, /*scale=*/0.5f, /*zeropt=*/0.0f, /*in_bitwidth=*/8.0f, /*out_scale=*/2.0f,
      /*out_bitwidth=*/4.0f, y);  // {6, -10, 14} / 4 -> floor {1, -3, 3} -> y = {2, -6, 6}
    // readme: end
    expect("trunc", y, {2.0f, -6.0f, 6.0f});
  }
  {
    // readme: trunc_v1
    // Trunc_v1 (opset 1): drop 8 - 4 bits, no clamp, rescaled with the input scale.
    lowbit::trunc_v1<> t{.rounding = lowbit::rounding_mode::floor};
    std::vector<float> x{1000.0f}, y(1);
    t(x, 1.0f, 0.0f, 8.0f, 4.0f, y);  // floor(1000 / 16) = 62
    // readme: end
    expect("trunc_v1", y, {62.0f});
  }
  {
    // readme: bipolar_quant
    // BipolarQuant: the sign times the scale; -0 gives +scale.
    lowbit::bipolar_quant<> b;
    std::vector<float> x{0.3f, -0.0f, -2.0f}, y(3);
    b(x, 0.5f, y);  // y = {0.5, 0.5, -0.5}
    // readme: end
    expect("bipolar_quant", y, {0.5f, 0.5f, -0.5f});
  }
  {
    // readme: float_quant
    // FloatQuant to OCP FP8 E4M3FN: E = 4, m = 3, bias 7, max 448, saturating.
    lowbit::float_quant<> f{.rounding = lowbit::rounding_mode::half_even};
    std::vector<float> x{0.3f, 464.0f, 470.0f, -1000.0f}, y(4);
    f(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y);  // y = {0.3125, 448, 448, -448}
    // readme: end
    expect("float_quant E4M3FN", y, {0.3125f, 448.0f, 448.0f, -448.0f});
  }
  {
    // readme: minifloat_quant
    // The same through a preset, and FP4 E2M1 with one scale per channel.
    lowbit::minifloat_quant<> fp4{.format = lowbit::formats::fp4_e2m1};
    std::vector<float> x{1.1f, 5.0f, 1.1f, 5.0f}, s{1.0f, 2.0f}, y(4);
    fp4(lowbit::strided_view(x.data(), {2, 2}), lowbit::strided_view(s.data(), {2, 1}),
        lowbit::strided_view(y.data(), {2, 2}));  // y = {1, 4, 1, 4}: 5 -> 4; 0.55 -> 0.5, 2.5 -> 2
    // readme: end
    expect("minifloat_quant FP4", y, {1.0f, 4.0f, 1.0f, 4.0f});
  }
  {
    // readme: mx_quant
    // OCP MXFP4: blocks of 4 share a scale 2^(floor(log2 amax) - 2), here 2^4 (amax 100).
    lowbit::mx_quant<> mx{.format = lowbit::mx_element::fp4_e2m1, .block_size = 4};
    std::vector<float> x{0.3f, -2.9f, 6.0f, 100.0f}, y(4);
    mx(x, y);  // x / 16 on E2M1's grid {0, 0.5, 1, 1.5, 2, 3, 4, 6}: y = {0, -0, 8, 96}
    // readme: end
    expect("mx_quant MXFP4", y, {0.0f, -0.0f, 8.0f, 96.0f});
  }
  {
    // readme: set_attribute
    // Attributes by their QONNX names and string values, as in an ONNX graph.
    lowbit::float_quant<> f;
    lowbit::set_attribute(f, "rounding_mode", "FLOOR");
    lowbit::set_attribute(f, "saturation", "0");
    lowbit::set_attribute(f, "has_infinity", "1");  // the spec's name for has_inf
    std::vector<float> x{500.0f, 0.3f}, y(2);
    f(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y);  // 500 floors to 480 > 448 -> inf; y = {inf, 0.28125}
    // readme: end
    expect("set_attribute", y, {INFINITY, 0.28125f});
  }
  {
    // readme: stochastic
    // Stochastic rounding (a lowbit extension): 0.25 rounds up with probability 1/4, each element
    // drawing from the seed and its index: the same bits on any machine, thread count or SIMD width.
    lowbit::int_quant<> q{.rounding = lowbit::rounding_mode::stochastic, .seed = 2024};
    std::vector<float> x(10000, 0.25f), y(10000);
    q(x, 1.0f, 0.0f, 8.0f, y);  // every y is 0 or 1, about a quarter of them 1
    // readme: end
    std::size_t ones = 0, zeros = 0;
    for (float v : y) {
      ones += v == 1.0f;
      zeros += v == 0.0f && !std::signbit(v);
    }
    std::printf("%-26s %zu of %zu are 1\n", "stochastic", ones, y.size());
    failures += ones + zeros == y.size() && ones > 2300 && ones < 2700 ? 0 : 1;
  }
  {
    // readme: group_int_quant
    // Group-wise IntQuant: unsigned 4 bits, one scale and zero point per group of 4 along the
    // last axis (the last group of each row ragged), derived from each group's min and max (AWQ).
    std::vector<float> w{-2.5f, 0.5f, 5.0f, 1.25f, -0.75f, 3.0f, 0.0f, 3.75f, 1.5f, 0.6f, -1.5f, 2.25f};
    std::vector<float> s(4), z(4), y(12);
    const auto wv = lowbit::strided_view<const float>(w.data(), {2, 6});
    lowbit::group_params(wv, -1, 4, 4, lowbit::group_params_mode::asymmetric, lowbit::strided_view(s.data(), {2, 2}),
                         lowbit::strided_view(z.data(), {2, 2}));  // s = {0.5, 0.25, 0.25, 0.25}, z = {5, 3, 0, 6}
    const auto q = lowbit::group_quantizer(lowbit::group_params_mode::asymmetric, -1, 4);
    q(wv, lowbit::strided_view<const float>(s.data(), {2, 2}), lowbit::strided_view<const float>(z.data(), {2, 2}), 4.0f,
      lowbit::strided_view(y.data(), {2, 6}));  // y = w but 1.25 -> 1.5, 0.6 -> 0.5
    // readme: end
    expect("group_int_quant scales", s, {0.5f, 0.25f, 0.25f, 0.25f});
    expect("group_int_quant zero points", z, {5.0f, 3.0f, 0.0f, 6.0f});
    expect("group_int_quant", y, {-2.5f, 0.5f, 5.0f, 1.5f, -0.75f, 3.0f, 0.0f, 3.75f, 1.5f, 0.5f, -1.5f, 2.25f});
  }
  return failures == 0 ? 0 : 1;
}
