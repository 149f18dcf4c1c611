// SPDX-License-Identifier: Apache-2.0
//
// Operator throughput (Google Benchmark 1.7). No main(): lowbit-bench links
// benchmark::benchmark_main. Names, which scripts/bench_compare.py and other
// tools parse, N = element count (float32 in, float32 out, out of place):
//   baseline/stream/<N>                  y[i] = x[i] * a, the memory ceiling
//   baseline/scalar_int_quant/<N>        the IntQuant ROUND formula in a plain loop,
//                                        auto-vectorisation disabled for that function
//   baseline/hand_int_quant/<N>          IntQuant int8 ROUND, exact semantics, per tensor,
//                                        hand-written on xsimd (bench/hand_kernels.hpp):
//                                        lowbit's bits, nothing but the arithmetic
//   baseline/hand_trunc/<N>              Trunc int8 on scale s to 4 bits on 4 s, ROUND, per
//                                        tensor, hand-written the same way: trunc/round/tensor's bits
//   baseline/hand_int_quant_<mode>/<N>   the same in mode up, half_up or half_down, reference
//   baseline/hand_trunc_<mode>/<N>       semantics (int_quant/<mode> and trunc/<mode>'s bits),
//                                        N = 4096 and 65536: what a mode costs a hand loop
//   baseline/hand_bipolar_quant/<N>      BipolarQuant, reference semantics, per tensor, the same way
//   baseline/hand_fp8_e4m3/<N>           minifloat_quant FP8 E4M3FN ROUND, exact, per
//                                        tensor, hand-written the same way
//   baseline/hand_fp8_e4m3_channel/<N>   the same per channel (the channel pattern: 64 rows,
//                                        a scale each), the hand loop once per row
//   baseline/philox/<N>                  N random uint32 words from the batch Philox4x32-10
//                                        (detail/philox.hpp), written to memory; items are words
//   baseline/philox_threshold/<N>        N float stochastic-rounding thresholds, r = 8, by
//                                        detail::stochastic_threshold (one Philox per element)
//   baseline/philox_group/<N>            the same by detail::stochastic_thresholds_group (one
//                                        Philox per 16 counters, 256 elements per group)
//   baseline/philox_block/<N>            the kernels' fill: thresholds for r = 16 (the default)
//                                        in blocks of 512 indices (four groups per call)
//   <op>/<mode>/<pattern>/<N>            op in int_quant, trunc, bipolar_quant,
//                                        float_quant_e4m3 (OCP E4M3FN), float_quant_e5m2,
//                                        float_quant_e2m1 (reference semantics), and
//                                        float_quant_exact_e4m3, _e5m2, _e2m1 (exact
//                                        semantics; tensor and channel patterns);
//                                        mode in lower case as in QONNX
//                                        (round, ceil, floor, up, down, half_up, half_down;
//                                        "none" for bipolar_quant, which has no mode), and
//                                        lowbit's round_to_odd, dpu and stochastic (seed 0,
//                                        16 random bits: compare with round of the same run)
//   int_quant/<mode>/nchw/<N>            x [1, 64, H, W], scale [1, 64, 1, 1]
//   <op>/round/nchw4/<N>                 x [4, 16, H, W], scale [1, 16, 1, 1] (a batch of
//                                        4: the scale repeats every 16 rows; the same
//                                        64 rows as channel): op int_quant, trunc,
//                                        float_quant_e4m3, float_quant_exact_e4m3 and
//                                        bipolar_quant (none)
//   trunc_v1/<mode>/<tensor|channel>/<N> Trunc opset 1, int8 to 4 bits, mode floor (its
//                                        default) or round; floor per tensor also at
//                                        N = 16, 64 and 256; trunc_v1/floor/nchw4/<N>
//   trunc_v1_pow2/<mode>/tensor/<N>      the same per tensor with scale 2^-4
//   <op>/round/channel/<N>, N = 64 W     op int_quant, float_quant_e4m3 and _exact_e4m3, rows
//                                        of W = 9, 16, 17, 24, 40, 49, 196 (not whole batches;
//                                        9: a depthwise 3 x 3), with baseline/hand_fp8_e4m3_channel/<N>
//   <op>/round/view/<N>                  op int_quant or float_quant_exact_e4m3, N = 16, 64,
//                                        256: per tensor with x and y as dense strided views
//                                        [N/16, 16] (compare with <op>/round/tensor/<N>)
//   int_quant_scalar_path/round/tensor/<N>   lowbit::int_quant on the scalar kernels (detail::simd_scope)
//   threads/<T>/<op>/round/tensor/<N>    op int_quant or float_quant_e4m3 with
//                                        exec.threads = T (1 or 2) and no minimum part
//                                        size, N = 2^13 .. 2^20 and 2^25: the threads'
//                                        crossover and speed-up
//   streaming/<on|off>/int_quant/round/tensor/<N>   streaming stores forced on or
//                                        off (exec.stream_min_elements), N = 2^16 .. 2^25
//   mx_quant/<format>/<rounding>/<N>     lowbit::mx_quant (reference semantics), blocks of
//                                        32 along the last axis of x [N/1024, 1024];
//                                        format fp8_e4m3, fp6_e3m2, fp4_e2m1 or int8,
//                                        rounding nearest (HALF_UP) or even (HALF_EVEN)
//   mx_quant_exact/<format>/<rounding>/<N>   the same, exact semantics
//   nvfp4/<N>, nvfp4_exact/<N>           lowbit::nvfp4_quant, blocks of 16 along the last
//                                        axis of [N/1024, 1024], per-tensor scale 0.01
//   group_int_quant/round/<G>/<N>        group-wise IntQuant, int4 signed (AWQ's
//                                        symmetric parameters from group_params), x a
//                                        [N/1024, 1024] weight, groups of G = 32 or 128
//                                        along the last axis: compare with
//                                        int_quant/round/tensor/<N> of the same run
//   group_int_quant_expanded/round/<G>/<N>  the same result by int_quant with scale and
//                                        zero point expanded per element first (the
//                                        expansion timed too), N <= 2^20
//   group_params/<asymmetric|symmetric>/<G>/<N>  the per-group parameters of that x
// Patterns (reference semantics, x ~ U(-8, 8), scales around 0.05):
//   tensor   one scalar scale
//   channel  x [64, N/64], scale [64, 1]
//   element  scale the shape of x
// IntQuant is int8 signed, Trunc int8 on scale s to 4 bits on 4 s, FloatQuant
// the OCP presets. N = 4096 (L1), 65536 (L2), 2^20 (L3) and 2^25 (DRAM); the
// per-tensor ROUND benchmarks and the hand baselines also at N = 16, 64 and
// 256 (the fixed cost of a call).
// Every benchmark sets items and bytes processed (x read + y written).
// Compare within one run, e.g.:
//   lowbit-bench --benchmark_filter='/4096$' --benchmark_out=b.json --benchmark_out_format=json
//   python3 scripts/bench_compare.py b.json
#include <benchmark/benchmark.h>

#include <lowbit/lowbit.hpp>
#include <lowbit/detail/philox.hpp>

#include "hand_kernels.hpp"

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <new>
#include <utility>
#include <random>
#include <string>
#include <string_view>
#include <vector>

// Auto-vectorisation off for one loop: clang takes a loop pragma; for GCC
// the index passes through an empty asm each step, which no vectoriser can
// see through. (GCC's optimize("no-tree-vectorize") attribute also changed
// how the function was compiled otherwise: its clamp became branches.)
#if defined(__clang__)
#define LOWBIT_BENCH_NOINLINE __attribute__((noinline))
#define LOWBIT_BENCH_NO_VECTORIZE __attribute__((noinline))
#define LOWBIT_BENCH_NO_VECTORIZE_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#define LOWBIT_BENCH_SCALAR_STEP(i) __asm__("" : "+r"(i))
#elif defined(__GNUC__)
#define LOWBIT_BENCH_NOINLINE __attribute__((noinline))
#define LOWBIT_BENCH_NO_VECTORIZE __attribute__((noinline))
#define LOWBIT_BENCH_NO_VECTORIZE_LOOP
#define LOWBIT_BENCH_SCALAR_STEP(i) __asm__("" : "+r"(i))
#else
#define LOWBIT_BENCH_NOINLINE
#define LOWBIT_BENCH_NO_VECTORIZE
#define LOWBIT_BENCH_NO_VECTORIZE_LOOP
#define LOWBIT_BENCH_SCALAR_STEP(i) ((void)0)
#endif

namespace {

constexpr std::size_t channels = 64;
constexpr float base_scale = 0.05f;
// x read, y written; the element pattern also reads a scale per element,
// which is not counted, so its bytes_per_second compares with the others.
constexpr std::int64_t bytes_per_element = 2 * sizeof(float);

enum class pattern { tensor, channel, element, nchw, nchw4, view };

const char* name(pattern p) {
  switch (p) {
    case pattern::tensor: return "tensor";
    case pattern::channel: return "channel";
    case pattern::element: return "element";
    case pattern::nchw: return "nchw";
    case pattern::nchw4: return "nchw4";
    case pattern::view: return "view";
  }
  return "?";
}

// Every buffer is aligned to 64 bytes (a cache line, an AVX-512 batch), so
// that no benchmark depends on where malloc put its buffers: a 16-byte
// aligned y splits every other AVX-512 store over two cache lines, and the
// hand baselines and lowbit, each with buffers of its own, swung by up to
// 1.5x between processes with it.
template <class T>
struct aligned_allocator {
  using value_type = T;
  aligned_allocator() = default;
  template <class U>
  aligned_allocator(const aligned_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const aligned_allocator<U>&) const noexcept { return true; }
};
using fvec = std::vector<float, aligned_allocator<float>>;

// x ~ U(-8, 8) from a fixed seed; one copy per size, shared by all benchmarks.
const fvec& input(std::size_t n) {
  static std::map<std::size_t, fvec> cache;
  fvec& x = cache[n];
  if (x.empty()) {
    std::mt19937 rng(20240601u);
    std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
    x.resize(n);
    for (float& v : x) v = dist(rng);
  }
  return x;
}

// n scales near 0.05: 64 distinct values 0.05 .. 0.0815, cycling.
fvec scales(std::size_t n) {
  fvec s(n);
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
void timed_loop(benchmark::State& st, fvec& y, F&& f) {
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
    LOWBIT_BENCH_SCALAR_STEP(i);
    float v = x[i] / s;
    v = v + z;
    // MAXSS / MINSS, not a compare and branch: one element in ten (x / 0.05
    // below -128) mispredicted, and the baseline swung from 0.3 to 1.4 el/ns
    // with the predictor's state.
    v = std::min(std::max(v, lo), hi);
    const float q = std::nearbyint(v);
    y[i] = (q - z) * s;
  }
}

void bm_stream(benchmark::State& st, std::size_t n) {
  const fvec& x = input(n);
  fvec y(n);
  float a = base_scale;
  benchmark::DoNotOptimize(a);
  timed_loop(st, y, [&] { stream(x.data(), y.data(), n, a); });
}

void bm_scalar_int_quant(benchmark::State& st, std::size_t n) {
  const fvec& x = input(n);
  fvec y(n);
  // Opaque, so z is subtracted as lowbit does, and the limits are values
  // rather than constants (with constants GCC clamps by compare and branch).
  float s = base_scale, z = 0.0f, lo = -128.0f, hi = 127.0f;
  benchmark::DoNotOptimize(s);
  benchmark::DoNotOptimize(z);
  benchmark::DoNotOptimize(lo);
  benchmark::DoNotOptimize(hi);
  timed_loop(st, y, [&] { scalar_int_quant(x.data(), y.data(), n, s, z, lo, hi); });
}

// A hand loop per tensor, hand(x, y, n, s), with the scale opaque to the
// compiler (a constant would fold into the loop where lowbit's cannot).
template <class Hand>
void bm_hand(benchmark::State& st, std::size_t n, const Hand& hand) {
  const fvec& x = input(n);
  fvec y(n);
  float s = base_scale;
  benchmark::DoNotOptimize(s);
  timed_loop(st, y, [&] { hand(x.data(), y.data(), n, s); });
}

void bm_hand_int_quant(benchmark::State& st, std::size_t n) {
  bm_hand(st, n, [](const float* x, float* y, std::size_t m, float s) {
    lowbit_bench::hand_int_quant(x, y, m, s, 0.0f, -128.0f, 127.0f);
  });
}

// bm_trunc's call: int8 on s to 4 bits on 4 s (t = 4).
void bm_hand_trunc(benchmark::State& st, std::size_t n) {
  bm_hand(st, n, [](const float* x, float* y, std::size_t m, float s) {
    lowbit_bench::hand_trunc(x, y, m, s, 0.0f, 4.0f, 4 * s, -8.0f, 7.0f);
  });
}

// The same loops in a rounding mode M, reference semantics (the bits of
// int_quant/<mode> and trunc/<mode>): what the mode costs a hand loop
// against its ROUND, the bound of lowbit's modes against ROUND.
template <lowbit::rounding_mode M>
void bm_hand_int_quant_mode(benchmark::State& st, std::size_t n) {
  bm_hand(st, n, [](const float* x, float* y, std::size_t m, float s) {
    lowbit_bench::hand_int_quant<lowbit::semantics::reference, M>(x, y, m, s, 0.0f, -128.0f, 127.0f);
  });
}

template <lowbit::rounding_mode M>
void bm_hand_trunc_mode(benchmark::State& st, std::size_t n) {
  bm_hand(st, n, [](const float* x, float* y, std::size_t m, float s) {
    lowbit_bench::hand_trunc<lowbit::semantics::reference, M>(x, y, m, s, 0.0f, 4.0f, 4 * s, -8.0f, 7.0f);
  });
}

void bm_hand_bipolar_quant(benchmark::State& st, std::size_t n) {
  bm_hand(st, n, lowbit_bench::hand_bipolar_quant);
}

void bm_hand_fp8_e4m3(benchmark::State& st, std::size_t n) { bm_hand(st, n, lowbit_bench::hand_fp8_e4m3); }

void bm_hand_fp8_e4m3_channel(benchmark::State& st, std::size_t n) {
  const fvec& x = input(n);
  fvec y(n);
  const fvec s = scales(channels);
  timed_loop(st, y, [&] { lowbit_bench::hand_fp8_e4m3_rows(x.data(), y.data(), channels, n / channels, s.data()); });
}

// The generator alone: Philox4x32-10 on counters (i, 0, 0, 0), one batch of
// counters per call, its four words stored.
LOWBIT_BENCH_NOINLINE void philox_words(std::uint32_t* __restrict y, std::size_t n, std::uint64_t seed) {
  using U = xsimd::batch<std::uint32_t>;
  constexpr std::size_t w = U::size;
  alignas(64) std::uint32_t iota[w];
  for (std::size_t j = 0; j < w; ++j) iota[j] = static_cast<std::uint32_t>(j);
  const U step = U::load_aligned(iota);
  const auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (std::size_t i = 0; i + 4 * w <= n; i += 4 * w) {
    U c0 = U(static_cast<std::uint32_t>(i / 4)) + step, c1(0u), c2(0u), c3(0u);
    lowbit::detail::philox4x32_10(c0, c1, c2, c3, k0, k1);
    c0.store_unaligned(y + i);
    c1.store_unaligned(y + i + w);
    c2.store_unaligned(y + i + 2 * w);
    c3.store_unaligned(y + i + 3 * w);
  }
}

LOWBIT_BENCH_NOINLINE void philox_thresholds(float* __restrict y, std::size_t n, std::uint64_t seed) {
  using F = xsimd::batch<float>;
  for (std::size_t i = 0; i + F::size <= n; i += F::size)
    lowbit::detail::stochastic_threshold<F>(seed, 8, i, 1).store_aligned(y + i);
}

LOWBIT_BENCH_NOINLINE void philox_group_thresholds(float* __restrict y, std::size_t n, std::uint64_t seed) {
  using F = xsimd::batch<float>;
  constexpr std::size_t group = 256;  // r = 8
  for (std::size_t g = 0; (g + 1) * group <= n; ++g)
    lowbit::detail::stochastic_thresholds_group<F::arch_type>(seed, 8, g, y + g * group);
}

LOWBIT_BENCH_NOINLINE void philox_block_thresholds(float* __restrict y, std::size_t n, std::uint64_t seed) {
  using F = xsimd::batch<float>;
  constexpr std::size_t block = 512, group = 128;  // r = 16
  for (std::size_t b = 0; (b + 1) * block <= n; ++b)
    lowbit::detail::stochastic_thresholds_group<F::arch_type>(seed, 16, b * (block / group), y + b * block,
                                                             block / group);
}

template <class T, void (*f)(T*, std::size_t, std::uint64_t)>
void bm_philox(benchmark::State& st, std::size_t n) {
  std::vector<T, aligned_allocator<T>> y(n);
  std::uint64_t seed = 0x243F6A8885A308D3ull;
  benchmark::DoNotOptimize(seed);
  for (auto _ : st) {
    f(y.data(), n, seed);
    T* out = y.data();
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  const auto items = static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(n);
  st.SetItemsProcessed(items);
  st.SetBytesProcessed(items * static_cast<std::int64_t>(sizeof(T)));
}

// ---- operators ---------------------------------------------------------------

/// Times `call(x, scale, y)` with x, scale and y laid out as pattern p says
/// (scale a float, or a view broadcasting against x).
template <class Call>
void bm_pattern(benchmark::State& st, pattern p, std::size_t n, const Call& call) {
  const fvec& x = input(n);
  fvec y(n);
  const std::size_t inner = n / channels;
  switch (p) {
    case pattern::tensor:
      timed_loop(st, y, [&] { call(x, base_scale, y); });
      break;
    case pattern::channel: {
      const fvec s = scales(channels);
      const lowbit::strided_view<const float> xv(x.data(), {channels, inner});
      const lowbit::strided_view<const float> sv(s.data(), {channels, 1});
      const lowbit::strided_view<float> yv(y.data(), {channels, inner});
      timed_loop(st, y, [&] { call(xv, sv, yv); });
      break;
    }
    case pattern::element: {
      const fvec s = scales(n);
      timed_loop(st, y, [&] { call(x, s, y); });
      break;
    }
    case pattern::view: {
      // Per tensor with x and y as dense 2-D strided views, [N/16, 16] (the
      // same elements as tensor): what a call with views costs.
      const lowbit::strided_view<const float> xv(x.data(), {n / 16, 16});
      const lowbit::strided_view<float> yv(y.data(), {n / 16, 16});
      timed_loop(st, y, [&] { call(xv, base_scale, yv); });
      break;
    }
    case pattern::nchw: {
      // H*W = N/64 split as evenly as powers of two allow (8x8 ... 128x128).
      const std::size_t h = std::size_t(1) << (std::bit_width(inner) - 1) / 2, w = inner / h;
      const fvec s = scales(channels);
      const lowbit::strided_view<const float> xv(x.data(), {1, channels, h, w});
      const lowbit::strided_view<const float> sv(s.data(), {1, channels, 1, 1});
      const lowbit::strided_view<float> yv(y.data(), {1, channels, h, w});
      timed_loop(st, y, [&] { call(xv, sv, yv); });
      break;
    }
    case pattern::nchw4: {
      // N = 4 images of channels / 4 channels, H*W = N/64 as for nchw.
      constexpr std::size_t batch = 4, c = channels / batch;
      const std::size_t h = std::size_t(1) << (std::bit_width(inner) - 1) / 2, w = inner / h;
      const fvec s = scales(c);
      const lowbit::strided_view<const float> xv(x.data(), {batch, c, h, w});
      const lowbit::strided_view<const float> sv(s.data(), {1, c, 1, 1});
      const lowbit::strided_view<float> yv(y.data(), {batch, c, h, w});
      timed_loop(st, y, [&] { call(xv, sv, yv); });
      break;
    }
  }
}

void bm_int_quant(benchmark::State& st, lowbit::rounding_mode mode, pattern p, std::size_t n,
                  bool simd) {
  const lowbit::int_quant<> q{.is_signed = true, .narrow = false, .rounding = mode};
  const lowbit::detail::simd_scope path(simd);  // the SIMD body or the scalar kernels
  bm_pattern(st, p, n, [&](const auto& x, const auto& s, auto& y) { q(x, s, 0.0f, 8.0f, y); });
}

void bm_trunc(benchmark::State& st, lowbit::rounding_mode mode, pattern p, std::size_t n) {
  const lowbit::trunc<> t{.is_signed = true, .narrow = false, .rounding = mode};
  bm_pattern(st, p, n, [&](const auto& x, const auto& s, auto& y) {
    t(x, s, 0.0f, 8.0f, 4 * base_scale, 4.0f, y);
  });
}

// Trunc opset 1: int8 to 4 bits (t = 2^4), on the pattern's scale.
void bm_trunc_v1(benchmark::State& st, lowbit::rounding_mode mode, pattern p, std::size_t n) {
  const lowbit::trunc_v1<> t{.rounding = mode};
  bm_pattern(st, p, n, [&](const auto& x, const auto& s, auto& y) { t(x, s, 0.0f, 8.0f, 4.0f, y); });
}

// The same per tensor with a power-of-two scale (2^-4).
void bm_trunc_v1_pow2(benchmark::State& st, lowbit::rounding_mode mode, std::size_t n) {
  const lowbit::trunc_v1<> t{.rounding = mode};
  const fvec& x = input(n);
  fvec y(n);
  timed_loop(st, y, [&] { t(x, 0.0625f, 0.0f, 8.0f, 4.0f, y); });
}

void bm_bipolar_quant(benchmark::State& st, pattern p, std::size_t n) {
  const lowbit::bipolar_quant<> b;
  bm_pattern(st, p, n, [&](const auto& x, const auto& s, auto& y) { b(x, s, y); });
}

template <lowbit::semantics S = lowbit::semantics::reference>
void bm_float_quant(benchmark::State& st, lowbit::minifloat_format f, lowbit::rounding_mode mode, pattern p,
                    std::size_t n) {
  const lowbit::minifloat_quant<S> q{.format = f, .rounding = mode};
  bm_pattern(st, p, n, [&](const auto& x, const auto& s, auto& y) { q(x, s, y); });
}

// Opt-in threads: per-tensor ROUND with `threads` parts and no minimum part
// size (min_elements_per_thread = 1), so that the crossover where a second
// thread starts to pay shows at every N.
void bm_threads(benchmark::State& st, const std::string& op, unsigned threads, std::size_t n) {
  lowbit::execution exec;
  exec.threads = threads;
  exec.min_elements_per_thread = 1;
  if (op == "int_quant") {
    lowbit::int_quant<> q{.rounding = lowbit::rounding_mode::half_even};
    q.exec = exec;
    bm_pattern(st, pattern::tensor, n, [&](const auto& x, const auto& s, auto& y) { q(x, s, 0.0f, 8.0f, y); });
  } else {
    lowbit::minifloat_quant<> q{.format = lowbit::formats::fp8_e4m3fn, .rounding = lowbit::rounding_mode::half_even};
    q.exec = exec;
    bm_pattern(st, pattern::tensor, n, [&](const auto& x, const auto& s, auto& y) { q(x, s, y); });
  }
}

// Streaming stores on (from 0 elements) or off, per-tensor ROUND IntQuant:
// where they start to pay.
void bm_streaming(benchmark::State& st, bool on, std::size_t n) {
  lowbit::int_quant<> q{.rounding = lowbit::rounding_mode::half_even};
  q.exec.stream_min_elements = on ? 0 : SIZE_MAX;
  bm_pattern(st, pattern::tensor, n, [&](const auto& x, const auto& s, auto& y) { q(x, s, 0.0f, 8.0f, y); });
}

// MX block quantization: blocks of 32 along the last axis of [N/1024, 1024].
template <lowbit::semantics S>
void bm_mx_quant(benchmark::State& st, lowbit::mx_element f, lowbit::rounding_mode mode, std::size_t n) {
  const fvec& x = input(n);
  fvec y(n);
  lowbit::mx_quant<S> q;
  q.format = f;
  q.rounding = mode;
  const std::size_t cols = n < 1024 ? n : 1024;
  const lowbit::strided_view<const float> xv(x.data(), {n / cols, cols});
  const lowbit::strided_view<float> yv(y.data(), {n / cols, cols});
  timed_loop(st, y, [&] { q(xv, yv); });
}

template <lowbit::semantics S>
void bm_nvfp4(benchmark::State& st, std::size_t n) {
  const fvec& x = input(n);
  fvec y(n);
  const lowbit::nvfp4_quant<S> q;
  const std::size_t cols = n < 1024 ? n : 1024;
  const lowbit::strided_view<const float> xv(x.data(), {n / cols, cols});
  const lowbit::strided_view<float> yv(y.data(), {n / cols, cols});
  timed_loop(st, y, [&] { q(xv, 0.01f, yv); });
}

// Group-wise IntQuant, int4 signed, on a [N/1024, 1024] weight in groups
// of g along the last axis, with AWQ's symmetric parameters for x. With
// `expanded`, int_quant does the same from scale and zero point expanded
// to x's shape in each iteration: what the block step avoids.
void bm_group_int_quant(benchmark::State& st, std::size_t g, std::size_t n, bool expanded) {
  const std::size_t cols = 1024, rows = n / cols, ng = rows * ((cols + g - 1) / g);
  const fvec& x = input(n);
  fvec y(n), s(ng), z(ng);
  const lowbit::strided_view<const float> xv(x.data(), {rows, cols});
  lowbit::group_params(xv, -1, g, 4, lowbit::group_params_mode::symmetric,
                       lowbit::strided_view<float>(s.data(), {rows, ng / rows}),
                       lowbit::strided_view<float>(z.data(), {rows, ng / rows}));
  const lowbit::group_int_quant<> q = lowbit::group_quantizer(lowbit::group_params_mode::symmetric, -1, g);
  const lowbit::strided_view<const float> sv(s.data(), {rows, ng / rows}), zv(z.data(), {rows, ng / rows});
  const lowbit::strided_view<float> yv(y.data(), {rows, cols});
  if (!expanded) {
    timed_loop(st, y, [&] { q(xv, sv, zv, 4.0f, yv); });
    return;
  }
  const lowbit::int_quant<> iq{.is_signed = true, .narrow = false, .rounding = lowbit::rounding_mode::half_even};
  fvec se(n), ze(n);
  const lowbit::strided_view<const float> sev(se.data(), {rows, cols}), zev(ze.data(), {rows, cols});
  const std::size_t per_row = ng / rows;
  timed_loop(st, y, [&] {
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < per_row; ++j) {
        const std::size_t b = r * cols + j * g, e = std::min(b + g, (r + 1) * cols);
        std::fill(se.begin() + static_cast<std::ptrdiff_t>(b), se.begin() + static_cast<std::ptrdiff_t>(e),
                  s[r * per_row + j]);
        std::fill(ze.begin() + static_cast<std::ptrdiff_t>(b), ze.begin() + static_cast<std::ptrdiff_t>(e),
                  z[r * per_row + j]);
      }
    iq(xv, sev, zev, 4.0f, yv);
  });
}

void bm_group_params(benchmark::State& st, lowbit::group_params_mode mode, std::size_t g, std::size_t n) {
  const std::size_t cols = 1024, rows = n / cols, per_row = (cols + g - 1) / g;
  const fvec& x = input(n);
  fvec s(rows * per_row), z(rows * per_row);
  const lowbit::strided_view<const float> xv(x.data(), {rows, cols});
  for (auto _ : st) {
    lowbit::group_params(xv, -1, g, 4, mode, lowbit::strided_view<float>(s.data(), {rows, per_row}),
                         lowbit::strided_view<float>(z.data(), {rows, per_row}));
    float* out = s.data();
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  const auto items = static_cast<std::int64_t>(st.iterations()) * static_cast<std::int64_t>(n);
  st.SetItemsProcessed(items);
  st.SetBytesProcessed(items * static_cast<std::int64_t>(sizeof(float)));
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

std::vector<std::size_t> sizes() {
  return {std::size_t(1) << 12, std::size_t(1) << 16, std::size_t(1) << 20, std::size_t(1) << 25};
}

// The small calls' sizes (tensor pattern, ROUND only).
std::vector<std::size_t> small_sizes() { return {16, 64, 256}; }

// Registered from a static initializer so the names are exactly as above.
bool register_all() {
  using benchmark::RegisterBenchmark;
  const std::vector<std::size_t> ns = sizes();
  for (std::size_t n : ns) {
    const std::string ni = std::to_string(n);
    RegisterBenchmark(("baseline/stream/" + ni).c_str(), bm_stream, n);
    RegisterBenchmark(("baseline/scalar_int_quant/" + ni).c_str(), bm_scalar_int_quant, n);
    RegisterBenchmark(("baseline/hand_int_quant/" + ni).c_str(), bm_hand_int_quant, n);
    RegisterBenchmark(("baseline/hand_trunc/" + ni).c_str(), bm_hand_trunc, n);
    RegisterBenchmark(("baseline/hand_bipolar_quant/" + ni).c_str(), bm_hand_bipolar_quant, n);
    RegisterBenchmark(("baseline/hand_fp8_e4m3/" + ni).c_str(), bm_hand_fp8_e4m3, n);
    RegisterBenchmark(("baseline/hand_fp8_e4m3_channel/" + ni).c_str(), bm_hand_fp8_e4m3_channel, n);
    RegisterBenchmark(("baseline/philox/" + ni).c_str(), bm_philox<std::uint32_t, philox_words>, n);
    RegisterBenchmark(("baseline/philox_threshold/" + ni).c_str(), bm_philox<float, philox_thresholds>, n);
    RegisterBenchmark(("baseline/philox_group/" + ni).c_str(), bm_philox<float, philox_group_thresholds>, n);
    RegisterBenchmark(("baseline/philox_block/" + ni).c_str(), bm_philox<float, philox_block_thresholds>, n);
  }
  const std::pair<const char*, lowbit::minifloat_format> floats[] = {
      {"float_quant_e4m3", lowbit::formats::fp8_e4m3fn},
      {"float_quant_e5m2", lowbit::formats::fp8_e5m2},
      {"float_quant_e2m1", lowbit::formats::fp4_e2m1},
      // Not saturating: overflows become +-inf.
      {"float_quant_e5m2_inf", lowbit::formats::fp8_e5m2.with_saturation(false)},
  };
  // Exact semantics, per tensor and per channel: the bits of the hand FP8 baseline.
  const std::pair<const char*, lowbit::minifloat_format> exact_floats[] = {
      {"float_quant_exact_e4m3", lowbit::formats::fp8_e4m3fn},
      {"float_quant_exact_e5m2", lowbit::formats::fp8_e5m2},
      {"float_quant_exact_e2m1", lowbit::formats::fp4_e2m1},
  };
  std::vector<lowbit::rounding_mode> modes(lowbit::all_rounding_modes.begin(), lowbit::all_rounding_modes.end());
  modes.insert(modes.end(), {lowbit::rounding_mode::odd, lowbit::rounding_mode::dpu, lowbit::rounding_mode::stochastic});
  for (lowbit::rounding_mode m : modes) {
    const std::string mode = lower(lowbit::to_string(m));
    for (pattern p : {pattern::tensor, pattern::channel, pattern::element, pattern::nchw})
      for (std::size_t n : ns) {
        const std::string tail = "/" + mode + "/" + name(p) + "/" + std::to_string(n);
        RegisterBenchmark(("int_quant" + tail).c_str(), bm_int_quant, m, p, n, true);
        if (p == pattern::nchw) continue;
        RegisterBenchmark(("trunc" + tail).c_str(), bm_trunc, m, p, n);
        for (const auto& [op, f] : floats) RegisterBenchmark((op + tail).c_str(), bm_float_quant<>, f, m, p, n);
        if (p == pattern::element) continue;
        for (const auto& [op, f] : exact_floats)
          RegisterBenchmark((op + tail).c_str(), bm_float_quant<lowbit::semantics::exact>, f, m, p, n);
      }
  }
  for (pattern p : {pattern::tensor, pattern::channel, pattern::element, pattern::nchw4})
    for (std::size_t n : ns)
      RegisterBenchmark(("bipolar_quant/none/" + std::string(name(p)) + "/" + std::to_string(n)).c_str(),
                        bm_bipolar_quant, p, n);
  // A batch of images with a scale per channel (the scale repeats every 16 rows).
  for (std::size_t n : ns) {
    const lowbit::rounding_mode m = lowbit::rounding_mode::half_even;
    const std::string tail = "/round/nchw4/" + std::to_string(n);
    RegisterBenchmark(("int_quant" + tail).c_str(), bm_int_quant, m, pattern::nchw4, n, true);
    RegisterBenchmark(("trunc" + tail).c_str(), bm_trunc, m, pattern::nchw4, n);
    RegisterBenchmark(("float_quant_e4m3" + tail).c_str(), bm_float_quant<>, floats[0].second, m, pattern::nchw4, n);
    RegisterBenchmark(("float_quant_exact_e4m3" + tail).c_str(), bm_float_quant<lowbit::semantics::exact>,
                      exact_floats[0].second, m, pattern::nchw4, n);
    RegisterBenchmark(("trunc_v1/floor/nchw4/" + std::to_string(n)).c_str(), bm_trunc_v1,
                      lowbit::rounding_mode::floor, pattern::nchw4, n);
  }
  // Trunc opset 1 in its default mode (FLOOR) and ROUND.
  for (lowbit::rounding_mode m : {lowbit::rounding_mode::floor, lowbit::rounding_mode::half_even})
    for (std::size_t n : ns) {
      const std::string tail = "/" + lower(lowbit::to_string(m)) + "/";
      for (pattern p : {pattern::tensor, pattern::channel})
        RegisterBenchmark(("trunc_v1" + tail + name(p) + "/" + std::to_string(n)).c_str(), bm_trunc_v1, m, p, n);
      RegisterBenchmark(("trunc_v1_pow2" + tail + "tensor/" + std::to_string(n)).c_str(), bm_trunc_v1_pow2, m, n);
    }
  // The hand loops in the modes that add operations to ROUND's rounding.
  for (std::size_t n : {std::size_t(4096), std::size_t(65536)}) {
    using rm = lowbit::rounding_mode;
    const std::string ni = std::to_string(n);
    RegisterBenchmark(("baseline/hand_int_quant_up/" + ni).c_str(), bm_hand_int_quant_mode<rm::up>, n);
    RegisterBenchmark(("baseline/hand_int_quant_half_up/" + ni).c_str(), bm_hand_int_quant_mode<rm::half_up>, n);
    RegisterBenchmark(("baseline/hand_int_quant_half_down/" + ni).c_str(), bm_hand_int_quant_mode<rm::half_down>, n);
    RegisterBenchmark(("baseline/hand_trunc_up/" + ni).c_str(), bm_hand_trunc_mode<rm::up>, n);
    RegisterBenchmark(("baseline/hand_trunc_half_up/" + ni).c_str(), bm_hand_trunc_mode<rm::half_up>, n);
    RegisterBenchmark(("baseline/hand_trunc_half_down/" + ni).c_str(), bm_hand_trunc_mode<rm::half_down>, n);
  }
  // Small calls, per tensor with scalar parameters: the fixed cost of a call
  // (its checks, planning and dispatch) against the hand loops of the same N.
  for (std::size_t n : small_sizes()) {
    const std::string ni = std::to_string(n);
    RegisterBenchmark(("baseline/hand_int_quant/" + ni).c_str(), bm_hand_int_quant, n);
    RegisterBenchmark(("baseline/hand_trunc/" + ni).c_str(), bm_hand_trunc, n);
    RegisterBenchmark(("baseline/hand_bipolar_quant/" + ni).c_str(), bm_hand_bipolar_quant, n);
    RegisterBenchmark(("baseline/hand_fp8_e4m3/" + ni).c_str(), bm_hand_fp8_e4m3, n);
    const lowbit::rounding_mode m = lowbit::rounding_mode::half_even;
    RegisterBenchmark(("int_quant/round/tensor/" + ni).c_str(), bm_int_quant, m, pattern::tensor, n, true);
    RegisterBenchmark(("trunc/round/tensor/" + ni).c_str(), bm_trunc, m, pattern::tensor, n);
    RegisterBenchmark(("trunc_v1/floor/tensor/" + ni).c_str(), bm_trunc_v1, lowbit::rounding_mode::floor,
                      pattern::tensor, n);
    RegisterBenchmark(("bipolar_quant/none/tensor/" + ni).c_str(), bm_bipolar_quant, pattern::tensor, n);
    RegisterBenchmark(("float_quant_e4m3/round/tensor/" + ni).c_str(), bm_float_quant<>, floats[0].second, m,
                      pattern::tensor, n);
    RegisterBenchmark(("float_quant_exact_e4m3/round/tensor/" + ni).c_str(),
                      bm_float_quant<lowbit::semantics::exact>, exact_floats[0].second, m, pattern::tensor, n);
    RegisterBenchmark(("int_quant/round/view/" + ni).c_str(), bm_int_quant, m, pattern::view, n, true);
    RegisterBenchmark(("float_quant_exact_e4m3/round/view/" + ni).c_str(),
                      bm_float_quant<lowbit::semantics::exact>, exact_floats[0].second, m, pattern::view, n);
  }
  // Per channel on rows of W = 9, 16, 17, 24, 40, 49 and 196 elements (64 rows,
  // N = 64 W): rows that are not whole batches, next to the hand loop.
  for (std::size_t w : {9, 16, 17, 24, 40, 49, 196}) {
    const std::size_t n = channels * w;
    const std::string ni = std::to_string(n);
    const lowbit::rounding_mode m = lowbit::rounding_mode::half_even;
    RegisterBenchmark(("baseline/hand_fp8_e4m3_channel/" + ni).c_str(), bm_hand_fp8_e4m3_channel, n);
    RegisterBenchmark(("int_quant/round/channel/" + ni).c_str(), bm_int_quant, m, pattern::channel, n, true);
    RegisterBenchmark(("float_quant_e4m3/round/channel/" + ni).c_str(), bm_float_quant<>, floats[0].second, m,
                      pattern::channel, n);
    RegisterBenchmark(("float_quant_exact_e4m3/round/channel/" + ni).c_str(),
                      bm_float_quant<lowbit::semantics::exact>, exact_floats[0].second, m, pattern::channel, n);
  }
  for (const std::string op : {"int_quant", "float_quant_e4m3"})
    for (unsigned t : {1u, 2u})
      for (int lg : {13, 14, 15, 16, 17, 18, 20, 25})
        RegisterBenchmark(("threads/" + std::to_string(t) + "/" + op + "/round/tensor/" +
                           std::to_string(std::size_t(1) << lg))
                              .c_str(),
                          bm_threads, op, t, std::size_t(1) << lg);
  for (const bool on : {false, true})
    for (int lg : {16, 18, 19, 20, 21, 22, 23, 25})
      RegisterBenchmark((std::string("streaming/") + (on ? "on" : "off") + "/int_quant/round/tensor/" +
                         std::to_string(std::size_t(1) << lg))
                            .c_str(),
                        bm_streaming, on, std::size_t(1) << lg);
  for (lowbit::mx_element f : {lowbit::mx_element::fp8_e4m3, lowbit::mx_element::fp6_e3m2,
                              lowbit::mx_element::fp4_e2m1, lowbit::mx_element::int8})
    for (lowbit::rounding_mode m : {lowbit::rounding_mode::half_up, lowbit::rounding_mode::half_even})
      for (std::size_t n : {std::size_t(1) << 12, std::size_t(1) << 16, std::size_t(1) << 20}) {
        std::string tail = "/";
        tail += lowbit::to_string(f);
        tail += m == lowbit::rounding_mode::half_up ? "/nearest/" : "/even/";
        tail += std::to_string(n);
        RegisterBenchmark(("mx_quant" + tail).c_str(), bm_mx_quant<lowbit::semantics::reference>, f, m, n);
        RegisterBenchmark(("mx_quant_exact" + tail).c_str(), bm_mx_quant<lowbit::semantics::exact>, f, m, n);
      }
  for (std::size_t n : {std::size_t(1) << 12, std::size_t(1) << 16, std::size_t(1) << 20}) {
    RegisterBenchmark(("nvfp4/" + std::to_string(n)).c_str(), bm_nvfp4<lowbit::semantics::reference>, n);
    RegisterBenchmark(("nvfp4_exact/" + std::to_string(n)).c_str(), bm_nvfp4<lowbit::semantics::exact>, n);
  }
  for (std::size_t n : ns)
    RegisterBenchmark(("int_quant_scalar_path/round/tensor/" + std::to_string(n)).c_str(),
                      bm_int_quant, lowbit::rounding_mode::half_even, pattern::tensor, n, false);
  for (std::size_t n : ns)
    for (std::size_t g : {std::size_t(128), std::size_t(32)}) {
      std::string tail = "/";  // appended, not "/" + ...: GCC 12 warns (-Wrestrict) on that form here
      tail += std::to_string(g);
      tail += '/';
      tail += std::to_string(n);
      RegisterBenchmark(("group_int_quant/round" + tail).c_str(), bm_group_int_quant, g, n, false);
      if (n <= (std::size_t(1) << 20))
        RegisterBenchmark(("group_int_quant_expanded/round" + tail).c_str(), bm_group_int_quant, g, n, true);
      RegisterBenchmark(("group_params/asymmetric" + tail).c_str(), bm_group_params,
                        lowbit::group_params_mode::asymmetric, g, n);
      RegisterBenchmark(("group_params/symmetric" + tail).c_str(), bm_group_params,
                        lowbit::group_params_mode::symmetric, g, n);
    }
  return true;
}

[[maybe_unused]] const bool registered = register_all();

}  // namespace
