// SPDX-License-Identifier: Apache-2.0
// lowbit-bench-dispatch's -march=native half: what a program built for this
// machine gets, to compare runtime dispatch with. LOWBIT_ARCH_NAMESPACE
// (set by bench/CMakeLists.txt) puts lowbit's code compiled here in its own
// namespace, as lowbit_add_dispatch does for its kernels, so that it cannot
// stand in for the baseline half's.
#ifndef LOWBIT_ARCH_NAMESPACE
#error "native_kernels.cpp is compiled with LOWBIT_ARCH_NAMESPACE defined"
#endif
#include "native_kernels.hpp"

#include <lowbit/lowbit.hpp>

#include <span>

#include "bench_ops.inc"

namespace lowbit_bench_dispatch {

void native_run(std::size_t id, const float* x, float* y, std::size_t n) {
  run_bench_op(id, std::span<const float>(x, n), std::span<float>(y, n),
               [](const auto& op, const auto&... args) { op(args...); });
}

}  // namespace lowbit_bench_dispatch
