// SPDX-License-Identifier: Apache-2.0
//
// FloatQuant throughput, and the measured choice of its exact kernel's
// rounding technique (Google Benchmark; lowbit-bench links benchmark_main).
//
//   float_quant/<semantics>/<mode>/e4m3fn/<N>   lowbit::float_quant, per-tensor scale
//   float_quant_technique/bits/<N>     exact ROUND by bits: x's significand rebuilt at
//                                      exponent -d, the ISA's round-to-integral, times 2^u
//   float_quant_technique/magic/<N>    exact ROUND by the magic number: q = (x + c) - c with
//                                      c = copysign(2^(u+23), x), which rounds to a multiple
//                                      of 2^u in the FPU's round-to-nearest-even
// Both run on the same batches in the same loop and are checked bit for bit
// against each other before they are timed. The magic number covers ROUND
// alone (the six other modes would need a change of the FPU rounding mode or
// a correction step), so the library uses it for ROUND and the bit technique
// for the rest. x is log-uniform over 2^-12 .. 2^10, random signs.
#include <benchmark/benchmark.h>

#include <lowbit/lowbit.hpp>

#include <cmath>
#include <cstddef>
#include <bit>
#include <cctype>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

namespace d = lowbit::detail;
using B = d::batch<float>;

std::vector<float> inputs(std::size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> e(-12.0f, 10.0f);
  std::vector<float> x(n);
  for (float& v : x) v = std::exp2(e(rng)) * ((rng() & 1) ? 1.0f : -1.0f);
  return x;
}

// The two techniques of the exact ROUND kernel: the library's choice
// (magic number) and the bit technique every other mode uses.
using magic_rne_kernel =
    d::float_quant_exact_kernel<lowbit::rounding_mode::half_even, true>;
using bits_rne_kernel =
    d::float_quant_exact_kernel<lowbit::rounding_mode::half_even, false>;

template <class K>
LOWBIT_ALWAYS_INLINE void run_kernel(const K& k, const float* x, float* y, std::size_t n) {
  // E4M3FN: m = 3, emin = 1 - 7 - 3 = -9, max 448, scale 1.
  const B s(1.0f), m(3.0f), emin(-9.0f), mx(448.0f);
  for (std::size_t i = 0; i + B::size <= n; i += B::size)
    k(B::load_unaligned(x + i), s, m, emin, mx).store_unaligned(y + i);
}

template <class K>
void bm_technique(benchmark::State& st) {
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  std::vector<float> x = inputs(n), y(n), ref(n);
  // Bit-exactness of the candidate on these inputs and on special values.
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), 0x1p-149f, -0x1p-140f,
                            464.0f, 465.0f, 0x1.8p-10f, 0x1p-10f, 1e30f};
  for (std::size_t i = 0; i < sizeof specials / sizeof specials[0] && i < n; ++i) x[i] = specials[i];
  run_kernel(K{}, x.data(), y.data(), n);
  run_kernel(bits_rne_kernel{}, x.data(), ref.data(), n);
  for (std::size_t i = 0; i < n; ++i)
    if (std::bit_cast<std::uint32_t>(y[i]) != std::bit_cast<std::uint32_t>(ref[i])) {
      st.SkipWithError(("the techniques differ at x = " + std::to_string(x[i])).c_str());
      return;
    }
  for (auto _ : st) {
    run_kernel(K{}, x.data(), y.data(), n);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(st.iterations() * static_cast<std::int64_t>(n));
}

template <lowbit::semantics S>
void bm_float_quant(benchmark::State& st, lowbit::rounding_mode mode) {
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  const std::vector<float> x = inputs(n);
  std::vector<float> y(n);
  const lowbit::minifloat_quant<S> q{.format = lowbit::formats::fp8_e4m3fn, .rounding = mode};
  for (auto _ : st) {
    q(x, 1.0f, y);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(st.iterations() * static_cast<std::int64_t>(n));
}

[[maybe_unused]] const bool registered = [] {
  for (std::int64_t n : {4096, 65536}) {
    benchmark::RegisterBenchmark("float_quant_technique/bits", bm_technique<bits_rne_kernel>)->Arg(n);
    benchmark::RegisterBenchmark("float_quant_technique/magic", bm_technique<magic_rne_kernel>)->Arg(n);
  }
  for (lowbit::rounding_mode m : lowbit::all_rounding_modes) {
    std::string mode(lowbit::to_string(m));
    for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::int64_t n : {4096, 65536}) {
      benchmark::RegisterBenchmark(("float_quant/reference/" + mode + "/e4m3fn").c_str(),
                                   [m](benchmark::State& st) { bm_float_quant<lowbit::semantics::reference>(st, m); })
          ->Arg(n);
      benchmark::RegisterBenchmark(("float_quant/exact/" + mode + "/e4m3fn").c_str(),
                                   [m](benchmark::State& st) { bm_float_quant<lowbit::semantics::exact>(st, m); })
          ->Arg(n);
    }
  }
  return true;
}();

}  // namespace
