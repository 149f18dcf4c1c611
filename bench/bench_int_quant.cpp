// SPDX-License-Identifier: Apache-2.0
//
// IntQuant throughput (Google Benchmark 1.7). No main(): lowbit-bench links
// benchmark::benchmark_main.
//
// Benchmarks, N = element count (float32 in, float32 out, out of place):
//   baseline/stream/<N>                  y[i] = x[i] * a, the memory ceiling
//   baseline/scalar_int_quant/<N>        the ROUND formula in a plain loop, not vectorised
//   int_quant/<mode>/<pattern>/<N>       lowbit::int_quant, every rounding mode
//   int_quant_scalar_path/round/tensor/<N>   the same with .use_simd = false
// Patterns (int8 signed, zeropt 0, x ~ U(-8, 8), scales around 0.05):
//   tensor   one scalar scale
//   channel  x [64, N/64], scale [64, 1]
//   element  scale the shape of x
//   nchw     x [1, 64, H, W] with H*W = N/64, scale [1, 64, 1, 1]
// N = 4096 (L1), 65536 (L2), 2^20 (L3); 2^25 (DRAM) too when the environment
// variable LOWBIT_BENCH_LARGE is set. Compare items_per_second within one run:
//   lowbit-bench --benchmark_min_time=0.2 --benchmark_filter='4096|65536'
#include <benchmark/benchmark.h>

#include <lowbit/lowbit.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

// Auto-vectorisation off for one function: GCC takes an attribute, clang a
// loop pragma (it ignores the GCC attribute with a warning).
#if defined(__clang__)
#define LOWBIT_BENCH_NOINLINE __attribute__((noinline))
#define LOWBIT_BENCH_NO_VECTORIZE __attribute__((noinline))
#define LOWBIT_BENCH_NO_VECTORIZE_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#elif defined(__GNUC__)
#define LOWBIT_BENCH_NOINLINE __attribute__((noinline))
#define LOWBIT_BENCH_NO_VECTORIZE __attribute__((noinline, optimize("no-tree-vectorize")))
#define LOWBIT_BENCH_NO_VECTORIZE_LOOP
#else
#define LOWBIT_BENCH_NOINLINE
#define LOWBIT_BENCH_NO_VECTORIZE
#define LOWBIT_BENCH_NO_VECTORIZE_LOOP
#endif

namespace {

constexpr std::size_t channels = 64;
constexpr float base_scale = 0.05f;
// x read, y written; the element pattern also reads a scale per element,
// which is not counted, so its bytes_per_second compares with the others.
constexpr std::int64_t bytes_per_element = 2 * sizeof(float);

enum class pattern { tensor, channel, element, nchw };

const char* name(pattern p) {
  switch (p) {
    case pattern::tensor: return "tensor";
    case pattern::channel: return "channel";
    case pattern::element: return "element";
    case pattern::nchw: return "nchw";
  }
  return "?";
}

// x ~ U(-8, 8) from a fixed seed; one copy per size, shared by all benchmarks.
const std::vector<float>& input(std::size_t n) {
  static std::map<std::size_t, std::vector<float>> cache;
  std::vector<float>& x = cache[n];
  if (x.empty()) {
    std::mt19937 rng(20240601u);
    std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
    x.resize(n);
    for (float& v : x) v = dist(rng);
  }
  return x;
}

// n scales near 0.05: 64 distinct values 0.05 .. 0.0815, cycling.
std::vector<float> scales(std::size_t n) {
  std::vector<float> s(n);
  for (std::size_t i = 0; i < n; ++i) s[i] = base_scale * (1.0f + 0.01f * float(i % 64));
  return s;
}

void set_counters(benchmark::State& st, std::size_t n) {
  const auto items = static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(n);
  st.SetItemsProcessed(items);
  st.SetBytesProcessed(items * bytes_per_element);
}

// Runs `f` once per iteration and keeps its output alive.
template <class F>
void timed_loop(benchmark::State& st, std::vector<float>& y, F&& f) {
  for (auto _ : st) {
    f();
    float* out = y.data();
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  set_counters(st, y.size());
}

// ---- baselines --------------------------------------------------------------

LOWBIT_BENCH_NOINLINE void stream(const float* __restrict x, float* __restrict y, std::size_t n,
                                  float a) {
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * a;
}

// IntQuant ROUND as a textbook loop: divide, add, clamp, nearbyint, rescale.
LOWBIT_BENCH_NO_VECTORIZE void scalar_int_quant(const float* __restrict x, float* __restrict y,
                                                std::size_t n, float s, float z, float lo,
                                                float hi) {
  LOWBIT_BENCH_NO_VECTORIZE_LOOP
  for (std::size_t i = 0; i < n; ++i) {
    float v = x[i] / s;
    v = v + z;
    v = v < lo ? lo : (v > hi ? hi : v);
    const float q = std::nearbyint(v);
    y[i] = (q - z) * s;
  }
}

void bm_stream(benchmark::State& st, std::size_t n) {
  const std::vector<float>& x = input(n);
  std::vector<float> y(n);
  float a = base_scale;
  benchmark::DoNotOptimize(a);
  timed_loop(st, y, [&] { stream(x.data(), y.data(), n, a); });
}

void bm_scalar_int_quant(benchmark::State& st, std::size_t n) {
  const std::vector<float>& x = input(n);
  std::vector<float> y(n);
  float s = base_scale, z = 0.0f;  // opaque, so z is subtracted as lowbit does
  benchmark::DoNotOptimize(s);
  benchmark::DoNotOptimize(z);
  timed_loop(st, y, [&] { scalar_int_quant(x.data(), y.data(), n, s, z, -128.0f, 127.0f); });
}

// ---- lowbit::int_quant ------------------------------------------------------

void bm_int_quant(benchmark::State& st, lowbit::rounding_mode mode, pattern p, std::size_t n,
                  bool simd) {
  const lowbit::int_quant<> q{
      .is_signed = true, .narrow = false, .rounding = mode, .use_simd = simd};
  const std::vector<float>& x = input(n);
  std::vector<float> y(n);
  const std::size_t inner = n / channels;
  switch (p) {
    case pattern::tensor:
      timed_loop(st, y, [&] { q(x, base_scale, 0.0f, 8.0f, y); });
      break;
    case pattern::channel: {
      const std::vector<float> s = scales(channels);
      const lowbit::strided_view<const float> xv(x.data(), {channels, inner});
      const lowbit::strided_view<const float> sv(s.data(), {channels, 1});
      const lowbit::strided_view<float> yv(y.data(), {channels, inner});
      timed_loop(st, y, [&] { q(xv, sv, 0.0f, 8.0f, yv); });
      break;
    }
    case pattern::element: {
      const std::vector<float> s = scales(n);
      timed_loop(st, y, [&] { q(x, s, 0.0f, 8.0f, y); });
      break;
    }
    case pattern::nchw: {
      // H*W = N/64 split as evenly as powers of two allow (8x8 ... 128x128).
      const std::size_t h = std::size_t(1) << (std::bit_width(inner) - 1) / 2, w = inner / h;
      const std::vector<float> s = scales(channels);
      const lowbit::strided_view<const float> xv(x.data(), {1, channels, h, w});
      const lowbit::strided_view<const float> sv(s.data(), {1, channels, 1, 1});
      const lowbit::strided_view<float> yv(y.data(), {1, channels, h, w});
      timed_loop(st, y, [&] { q(xv, sv, 0.0f, 8.0f, yv); });
      break;
    }
  }
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

std::vector<std::size_t> sizes() {
  std::vector<std::size_t> n{std::size_t(1) << 12, std::size_t(1) << 16, std::size_t(1) << 20};
  if (std::getenv("LOWBIT_BENCH_LARGE") != nullptr) n.push_back(std::size_t(1) << 25);
  return n;
}

// Registered from a static initializer so the names are exactly as above.
bool register_all() {
  using benchmark::RegisterBenchmark;
  const std::vector<std::size_t> ns = sizes();
  for (std::size_t n : ns) {
    const std::string ni = std::to_string(n);
    RegisterBenchmark(("baseline/stream/" + ni).c_str(), bm_stream, n);
    RegisterBenchmark(("baseline/scalar_int_quant/" + ni).c_str(), bm_scalar_int_quant, n);
  }
  for (lowbit::rounding_mode m : lowbit::all_rounding_modes)
    for (pattern p : {pattern::tensor, pattern::channel, pattern::element, pattern::nchw})
      for (std::size_t n : ns)
        RegisterBenchmark(("int_quant/" + lower(lowbit::to_string(m)) + "/" + name(p) + "/" +
                           std::to_string(n)).c_str(),
                          bm_int_quant, m, p, n, true);
  for (std::size_t n : ns)
    RegisterBenchmark(("int_quant_scalar_path/round/tensor/" + std::to_string(n)).c_str(),
                      bm_int_quant, lowbit::rounding_mode::half_even, pattern::tensor, n, false);
  return true;
}

[[maybe_unused]] const bool registered = register_all();

}  // namespace
