// SPDX-License-Identifier: Apache-2.0
// Determinism corpus: runs a fixed set of inputs through every operator,
// rounding mode and semantics, and writes one line per case with a 64-bit
// FNV-1a digest of the output bits. Built three times (SSE2 only, AVX2+FMA,
// -march=native); the ctest `determinism` compares the three files.
//   lowbit-det-<arch> OUT_FILE
#include <lowbit/lowbit.hpp>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

namespace {

constexpr std::size_t rows = 13, cols = 317;  // odd sizes: SIMD bodies and tails
std::FILE* out = nullptr;

std::uint64_t fnv(const void* p, std::size_t n, std::uint64_t h = 14695981039346656037ull) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/// The corpus: special values, ties and random bit patterns.
std::vector<float> corpus() {
  std::vector<float> x;
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 1.5f, -2.5f, 3.5f, 127.5f, -128.5f, 255.5f,
                            1e-45f, -1e-45f, 1.17549435e-38f, 1.1754942e-38f, 8388607.5f, 8388608.0f, 16777217.0f,
                            3.4028235e38f, -3.4028235e38f, 0.1f, 0.3f, 448.0f, 464.0f, 57344.0f, 61440.0f, 6.0f,
                            -7.0f, 1e30f, -1e-30f};
  for (float v : specials) x.push_back(v);
  x.push_back(std::bit_cast<float>(0x7f800000u));  // +inf
  x.push_back(std::bit_cast<float>(0xff800000u));  // -inf
  x.push_back(std::bit_cast<float>(0x7fc00001u));  // NaN with a payload
  x.push_back(std::bit_cast<float>(0xffc00000u));  // -NaN
  for (int k = -8; k <= 8; ++k) x.push_back(static_cast<float>(k) + 0.5f);  // ties
  std::uint64_t s = 0x2545F4914F6CDD1Dull;
  while (x.size() < rows * cols) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const auto bits = static_cast<std::uint32_t>(s >> 32);
    // Half raw bit patterns, half moderate values around the grids.
    x.push_back((s & 1) ? std::bit_cast<float>(bits) : static_cast<float>(static_cast<std::int32_t>(bits) >> 20) / 64.0f);
  }
  return x;
}

const std::vector<float> xs = corpus();
const lowbit::strided_view<const float> xv(xs.data(), {rows, cols});
// Codes have no NaN: the same corpus with NaN replaced by 0.
const std::vector<float> xs_num = [] {
  std::vector<float> v = xs;
  for (float& f : v)
    if (f != f) f = 0.0f;
  return v;
}();
const lowbit::strided_view<const float> xnv(xs_num.data(), {rows, cols});
std::vector<float> ch_scale = [] {
  std::vector<float> s(rows);
  for (std::size_t i = 0; i < rows; ++i) s[i] = 0.03f * static_cast<float>(i + 1) + 0.001f;
  return s;
}();
const lowbit::strided_view<const float> sv(ch_scale.data(), {rows, 1});

/// Runs `f(y)` into a fresh output and records its digest (or the error).
template <class F>
void record(const std::string& name, F&& f) {
  std::vector<float> y(rows * cols, 0.0f);
  std::string what = "ok";
  try {
    f(lowbit::strided_view<float>(y.data(), {rows, cols}));
  } catch (const lowbit::error&) {
    what = "error";
  }
  std::fprintf(out, "%s %s %016llx\n", name.c_str(), what.c_str(),
               static_cast<unsigned long long>(fnv(y.data(), y.size() * sizeof(float))));
}

/// QONNX's seven modes and lowbit's ROUND_TO_ODD, DPU and STOCHASTIC (seed 0,
/// 16 random bits: its draws must not depend on the ISA either).
std::vector<lowbit::rounding_mode> every_mode() {
  std::vector<lowbit::rounding_mode> v(lowbit::all_rounding_modes.begin(), lowbit::all_rounding_modes.end());
  v.insert(v.end(), lowbit::extension_rounding_modes.begin(), lowbit::extension_rounding_modes.end());
  v.push_back(lowbit::rounding_mode::stochastic);
  return v;
}

template <lowbit::semantics S>
void run_all(const char* sem) {
  for (lowbit::rounding_mode m : every_mode()) {
    const std::string base = std::string(sem) + "/" + std::string(lowbit::to_string(m));
    for (bool simd : {true, false}) {
      const std::string tag = base + (simd ? "/simd" : "/scalar");
      for (float bits : {1.0f, 2.0f, 4.0f, 8.0f, 16.0f}) {
        for (int variant = 0; variant < 3; ++variant) {  // signed, signed narrow, unsigned
          lowbit::int_quant<S> q{.is_signed = variant < 2, .narrow = variant == 1, .rounding = m};
          const lowbit::detail::simd_scope simd_91(simd);  // the SIMD body or the scalar kernels
          const std::string n = tag + "/int_quant/" + std::to_string(int(bits)) + "/" + std::to_string(variant);
          record(n + "/tensor", [&](auto y) { q(xv, 0.0625f, 0.0f, bits, y); });
          record(n + "/channel", [&](auto y) { q(xv, sv, 1.0f, bits, y); });
          if (bits == 8.0f) {
            std::vector<std::int16_t> c(rows * cols);
            record(n + "/codes", [&](auto y) {
              lowbit::quantize_codes(q, xnv, sv, 1.0f, bits, lowbit::strided_view<std::int16_t>(c.data(), {rows, cols}));
              lowbit::dequantize(q, lowbit::strided_view<const std::int16_t>(c.data(), {rows, cols}), sv, 1.0f, bits, y);
            });
          }
        }
      }
      lowbit::trunc<S> t{.rounding = m};
      const lowbit::detail::simd_scope simd_105(simd);  // the SIMD body or the scalar kernels
      record(tag + "/trunc", [&](auto y) { t(xv, 0.37f, 1.0f, 8.0f, 1.48f, 4.0f, y); });
      lowbit::trunc_v1<S> t1{.rounding = m};
      const lowbit::detail::simd_scope simd_108(simd);  // the SIMD body or the scalar kernels
      record(tag + "/trunc_v1", [&](auto y) { t1(xv, 0.37f, 1.0f, 8.0f, 4.0f, y); });
      const lowbit::minifloat_format custom{3, 4, 2, 30.0, false, true, false};
      for (const auto& [fname, f] : {std::pair{"e4m3", lowbit::formats::fp8_e4m3fn},
                                     std::pair{"e5m2", lowbit::formats::fp8_e5m2.with_saturation(false)},
                                     std::pair{"e2m1", lowbit::formats::fp4_e2m1}, std::pair{"custom", custom}}) {
        lowbit::minifloat_quant<S> mq{.format = f, .rounding = m};
        const lowbit::detail::simd_scope simd_115(simd);  // the SIMD body or the scalar kernels
        record(tag + "/float_quant/" + fname + "/tensor", [&](auto y) { mq(xv, 0.75f, y); });
        record(tag + "/float_quant/" + fname + "/channel", [&](auto y) { mq(xv, sv, y); });
      }
      // MX block quantization: blocks of 32 along the last axis (a ragged
      // last block: 317 = 9 * 32 + 29), and of 4 along the first.
      for (lowbit::mx_element f : lowbit::all_mx_elements) {
        lowbit::mx_quant<S> mx;
        mx.format = f;
        mx.rounding = m;
        const lowbit::detail::simd_scope simd_mx(simd);
        const std::string n = tag + "/mx_quant/" + std::string(lowbit::to_string(f));
        record(n + "/last", [&](auto y) { mx(xv, y); });
        mx.axis = 0;
        mx.block_size = 4;
        mx.scale_rule = lowbit::mx_scale_rule::round_up;
        record(n + "/first", [&](auto y) { mx(xv, y); });
      }
    }
  }
  for (bool simd : {true, false}) {
    // NVFP4, single- and two-level.
    lowbit::nvfp4_quant<S> nv;
    const lowbit::detail::simd_scope simd_nv(simd);
    const std::string tag = std::string(sem) + (simd ? "/simd" : "/scalar") + "/nvfp4";
    record(tag + "/1", [&](auto y) { nv(xv, y); });
    record(tag + "/p", [&](auto y) { nv(xv, 0.013f, y); });
  }
  for (bool simd : {true, false}) {
    lowbit::bipolar_quant<S> b;
    const lowbit::detail::simd_scope simd_123(simd);  // the SIMD body or the scalar kernels
    record(std::string(sem) + (simd ? "/simd" : "/scalar") + "/bipolar_quant", [&](auto y) { b(xv, sv, y); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_FILE\n", argv[0]);
    return 2;
  }
  out = std::fopen(argv[1], "w");
  if (!out) {
    std::perror(argv[1]);
    return 2;
  }
  std::printf("xsimd architecture: %s, %zu inputs\n", xsimd::default_arch::name(), xs.size());
  run_all<lowbit::semantics::reference>("reference");
  run_all<lowbit::semantics::exact>("exact");
  return std::fclose(out) == 0 ? 0 : 1;
}
