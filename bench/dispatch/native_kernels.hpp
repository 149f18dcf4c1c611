// SPDX-License-Identifier: Apache-2.0
// lowbit-bench-dispatch: the -march=native half (native_kernels.cpp), which
// the baseline half (bench_dispatch.cpp) calls through these plain functions.
#ifndef LOWBIT_BENCH_NATIVE_KERNELS_HPP
#define LOWBIT_BENCH_NATIVE_KERNELS_HPP

#include <cstddef>

namespace lowbit_bench_dispatch {

/// The benchmarks, "<op>/<mode>", in the order of bench_ops.inc's cases.
inline constexpr const char* names[] = {
    "int_quant/round",        "int_quant/floor",        "int_quant/half_up",
    "trunc/round",            "bipolar_quant/none",     "float_quant_e4m3/round",
    "float_quant_e5m2/round", "float_quant_e2m1/round"};

/// Runs benchmark `id` on x[0, n) into y[0, n) with lowbit compiled for the
/// build machine (-march=native).
void native_run(std::size_t id, const float* x, float* y, std::size_t n);

}  // namespace lowbit_bench_dispatch

#endif
