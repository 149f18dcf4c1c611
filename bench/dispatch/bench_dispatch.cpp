// SPDX-License-Identifier: Apache-2.0
//
// lowbit-bench-dispatch: runtime ISA dispatch against a -march=native build,
// in one run. This file is compiled for the baseline (SSE2 on x86-64), as a
// portable program is, and calls lowbit::dispatch::run(), whose kernels
// lowbit_add_dispatch compiled for sse2, avx2 and avx512bw; native_kernels.cpp
// is the same calls compiled with -march=native. Names:
//   dispatch/<op>/<mode>/tensor/<N>   through lowbit::dispatch::run()
//   native/<op>/<mode>/tensor/<N>     the -march=native build
//   dispatch_<arch>/int_quant/round/tensor/<N>   dispatch forced to <arch>
// with the operators and parameters of lowbit-bench's per-tensor benchmarks,
// N = 4096, 65536 and 2^20. scripts/bench_compare.py prints each dispatch/
// benchmark's ratio to its native/ twin (column /native).
#include <benchmark/benchmark.h>

#include <lowbit/dispatch.hpp>
#include <lowbit/lowbit.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench_ops.inc"
#include "native_kernels.hpp"

namespace {

constexpr std::size_t sizes[] = {4096, 65536, std::size_t(1) << 20};

std::vector<float> inputs(std::size_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f);
  std::vector<float> x(n);
  for (float& v : x) v = u(rng);
  return x;
}

void finish(benchmark::State& state, std::size_t n) {
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(n));
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(n) * 2 * std::int64_t(sizeof(float)));
}

void bm_dispatch(benchmark::State& state, std::size_t id, std::size_t n, std::string arch) {
  const std::vector<float> x = inputs(n);
  std::vector<float> y(n);
  if (!arch.empty()) {
    if (!lowbit::dispatch::supported(arch)) {
      state.SkipWithError(("this CPU does not support " + arch).c_str());
      return;
    }
    lowbit::dispatch::force(arch);
  }
  const auto via_dispatch = [](const auto& op, const auto&... args) { lowbit::dispatch::run(op, args...); };
  for (auto _ : state) {
    run_bench_op(id, x, y, via_dispatch);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  lowbit::dispatch::reset();
  finish(state, n);
}

void bm_native(benchmark::State& state, std::size_t id, std::size_t n) {
  const std::vector<float> x = inputs(n);
  std::vector<float> y(n);
  for (auto _ : state) {
    lowbit_bench_dispatch::native_run(id, x.data(), y.data(), n);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  finish(state, n);
}

const bool registered = [] {
  using lowbit_bench_dispatch::names;
  for (std::size_t n : sizes)
    for (std::size_t id = 0; id < std::size(names); ++id) {
      const std::string tail = std::string(names[id]) + "/tensor/" + std::to_string(n);
      benchmark::RegisterBenchmark(("dispatch/" + tail).c_str(), bm_dispatch, id, n, std::string());
      benchmark::RegisterBenchmark(("native/" + tail).c_str(), bm_native, id, n);
    }
  for (std::string_view arch : lowbit::dispatch::compiled())
    for (std::size_t n : sizes)
      benchmark::RegisterBenchmark(
          ("dispatch_" + std::string(arch) + "/int_quant/round/tensor/" + std::to_string(n)).c_str(),
          bm_dispatch, std::size_t(0), n, std::string(arch));
  benchmark::AddCustomContext("lowbit_dispatch_active", std::string(lowbit::dispatch::active()));
  return true;
}();

}  // namespace
