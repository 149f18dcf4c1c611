// SPDX-License-Identifier: Apache-2.0
// conv_weight_int4: per-output-channel int4 quantization of a conv weight
// tensor [O, I, kH, kW], stored as packed int4 codes, then read back.
#include <lowbit/lowbit.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  constexpr std::size_t O = 4, I = 3, K = 3, N = O * I * K * K;  // 108 weights
  std::vector<float> w(N);
  for (std::size_t i = 0; i < N; ++i) w[i] = std::sin(0.37f * float(i)) * float(1 + i / (I * K * K));

  // One scale per output channel: max |w| of the channel / 7, so that the
  // weight of largest magnitude lands on code 7 or -7 (symmetric: int4's -8
  // is never used).
  std::vector<float> scale(O);
  for (std::size_t o = 0; o < O; ++o) {
    const auto first = w.begin() + std::ptrdiff_t(o * I * K * K);
    float m = 0.0f;
    std::for_each(first, first + std::ptrdiff_t(I * K * K), [&](float v) { m = std::max(m, std::fabs(v)); });
    scale[o] = m / 7.0f;
  }

  // The views: the weights as [O, I, kH, kW] and the scales as [O, 1, 1, 1],
  // which broadcasts numpy-style over the other three dimensions.
  const lowbit::shape ws{O, I, K, K};
  const lowbit::strided_view<const float> wv(w.data(), ws), sv(scale.data(), {O, 1, 1, 1});
  const lowbit::int_quant<> q{.is_signed = true, .narrow = false};  // QONNX Quant, ROUND, 4 bits

  // 1. Integer codes in [-8, 7], one int8 each, then packed two per byte.
  std::vector<std::int8_t> codes(N);
  lowbit::quantize_codes(q, wv, sv, 0.0f, 4.0f, lowbit::strided_view<std::int8_t>(codes.data(), ws));
  std::vector<std::uint8_t> packed(lowbit::packed_size(lowbit::packings::int4, N));
  lowbit::pack(lowbit::packings::int4, codes, packed);
  std::printf("%zu float32 weights: %zu bytes -> %zu bytes of int4 codes + %zu scales\n", N, N * 4,
              packed.size(), O);
  std::printf("channel 0 codes:");
  for (std::size_t i = 0; i < 9; ++i) std::printf(" %d", codes[i]);
  std::printf(" ...\n");

  // 2. Deployment side: unpack and dequantize with the same scales.
  std::vector<std::int8_t> back(N);
  lowbit::unpack(lowbit::packings::int4, packed, back);
  std::vector<float> deq(N), fake(N);
  lowbit::dequantize(q, lowbit::strided_view<const std::int8_t>(back.data(), ws), sv, 0.0f, 4.0f,
                     lowbit::strided_view<float>(deq.data(), ws));

  // 3. The same as fake-quantizing the float weights directly (QONNX's
  //    output), bit for bit (except that a code cannot hold a -0).
  q(wv, sv, 0.0f, 4.0f, lowbit::strided_view<float>(fake.data(), ws));
  int bad = back != codes;
  for (std::size_t i = 0; i < N; ++i)
    if (std::bit_cast<std::uint32_t>(deq[i]) != std::bit_cast<std::uint32_t>(fake[i]) && fake[i] != 0.0f) ++bad;
  // The weight of largest magnitude of each channel has code 7 or -7.
  for (std::size_t o = 0; o < O; ++o)
    if (*std::max_element(back.begin() + std::ptrdiff_t(o * I * K * K),
                          back.begin() + std::ptrdiff_t((o + 1) * I * K * K)) != 7 &&
        *std::min_element(back.begin() + std::ptrdiff_t(o * I * K * K),
                          back.begin() + std::ptrdiff_t((o + 1) * I * K * K)) != -7)
      ++bad;
  std::printf("%s\n", bad ? "MISMATCH" : "round trip exact");
  return bad ? 1 : 0;
}
