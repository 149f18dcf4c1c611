// SPDX-License-Identifier: Apache-2.0
// quickstart: int8 fake-quantization of a vector, per tensor and per channel.
#include <lowbit/lowbit.hpp>

#include <cstdio>
#include <vector>

int main() {
  // QONNX IntQuant with signed=1, narrow=0, rounding_mode="ROUND" (ties to even).
  const lowbit::int_quant<> q{.is_signed = true, .narrow = false,
                              .rounding = lowbit::rounding_mode::half_even};

  // Per tensor: one scale (1/16), zero point 0, 8 bits; x/scale = 4.16 -> 4 -> 0.25.
  std::vector<float> x{0.26f, -1.3f, 7.9f, 100.0f}, y(x.size());
  q(x, 0.0625f, 0.0f, 8.0f, y);
  for (float v : y) std::printf("%g ", v);  // 0.25 -1.3125 7.875 7.9375 (100 clamps to 127/16)
  std::printf("\n");

  // Per channel: x viewed as [C, N], one scale per row as a [C, 1] tensor.
  constexpr std::size_t C = 2, N = 3;
  std::vector<float> data{0.3f, 0.7f, -2.2f, 0.3f, 0.7f, -2.2f}, out(C * N);
  std::vector<float> scales{0.5f, 0.25f};
  q(lowbit::strided_view(data.data(), {C, N}), lowbit::strided_view(scales.data(), {C, 1}), 0.0f,
    8.0f, lowbit::strided_view(out.data(), {C, N}));
  for (std::size_t c = 0; c < C; ++c, std::printf("\n"))
    for (std::size_t n = 0; n < N; ++n) std::printf("%g ", out[c * N + n]);
  // row 0 (scale 0.5): 0.5 0.5 -2; row 1 (scale 0.25): 0.25 0.75 -2.25

  if (y[0] != 0.25f || out[N + 2] != -2.25f) {
    std::printf("unexpected result\n");
    return 1;
  }
  return 0;
}
