// SPDX-License-Identifier: Apache-2.0
// fp8_activations: emulating FP8 activations, OCP E4M3 against E5M2, with
// saturation (QONNX FloatQuant's default) and without.
#include <lowbit/lowbit.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  // Activations: ordinary values, values beyond E4M3's 448 and E5M2's 57344,
  // and a tiny one (subnormal in E4M3, whose smallest normal is 2^-6).
  const std::vector<float> x{0.3f, -1.7f, 3.14159f, 500.0f, -1000.0f, 1e5f, 0.001f};
  const lowbit::minifloat_quant<> e4m3{.format = lowbit::formats::fp8_e4m3fn};  // saturates at +-448
  const lowbit::minifloat_quant<> e5m2{.format = lowbit::formats::fp8_e5m2};    // saturates at +-57344
  const lowbit::minifloat_quant<> e5m2_inf{.format = lowbit::formats::fp8_e5m2.with_saturation(false)};

  // Scale 1: the activations are already in range (a real model calibrates it).
  std::vector<float> y4(x.size()), y5(x.size()), y5i(x.size());
  e4m3(x, 1.0f, y4);
  e5m2(x, 1.0f, y5);
  e5m2_inf(x, 1.0f, y5i);

  std::printf("%12s %12s %12s %16s\n", "x", "E4M3 (sat)", "E5M2 (sat)", "E5M2 (no sat)");
  for (std::size_t i = 0; i < x.size(); ++i)
    std::printf("%12g %12g %12g %16g\n", x[i], y4[i], y5[i], y5i[i]);

  // E4M3 has one more mantissa bit (finer steps), E5M2 more range: the
  // error statistics show the trade-off on the in-range values.
  const std::vector<float> in_range(x.begin(), x.begin() + 3), q4(y4.begin(), y4.begin() + 3),
      q5(y5.begin(), y5.begin() + 3);
  const auto s4 = lowbit::error_stats(in_range, q4), s5 = lowbit::error_stats(in_range, q5);
  std::printf("SQNR on the first three: E4M3 %.1f dB, E5M2 %.1f dB\n", s4.sqnr_db, s5.sqnr_db);

  // The bytes a deployment stores: the OCP bit patterns.
  const std::uint32_t b448 = lowbit::encode_minifloat(lowbit::formats::fp8_e4m3fn, y4[3]);
  const std::uint32_t binf = lowbit::encode_minifloat(lowbit::formats::fp8_e5m2, y5i[5]);
  std::printf("E4M3 448 is 0x%02x, E5M2 +inf is 0x%02x\n", unsigned(b448), unsigned(binf));

  // Values worked out by hand:
  //   0.3 lies in [0.25, 0.5): E4M3 steps 1/32 there, E5M2 steps 1/16; both give 0.3125.
  //   500 saturates to 448 in E4M3, and rounds to 512 (steps of 64) in E5M2.
  //   1e5 is beyond 57344: saturated, or +inf without saturation.
  //   0.001: E4M3 subnormal 2^-9 = 0.001953125; E5M2 2^-10 = 0.0009765625.
  const bool ok = y4[0] == 0.3125f && y5[0] == 0.3125f && y4[3] == 448.0f && y5[3] == 512.0f &&
                  y4[4] == -448.0f && y5[5] == 57344.0f && std::isinf(y5i[5]) && y5i[5] > 0 &&
                  y4[6] == 0.001953125f && y5[6] == 0.0009765625f && b448 == 0x7e && binf == 0x7c &&
                  s4.sqnr_db > s5.sqnr_db;
  std::printf("%s\n", ok ? "all values as expected" : "UNEXPECTED VALUE");
  return ok ? 0 : 1;
}
