// SPDX-License-Identifier: Apache-2.0
/**
 * @file parallel.hpp
 * How a call executes: lowbit::execution, the member `exec` of every
 * operator, says how many threads may share one call (opt-in), or hands the
 * work to an executor of your own, and from what size outputs are written
 * with streaming stores. Results are the same bits in every case.
 */
#ifndef LOWBIT_PARALLEL_HPP
#define LOWBIT_PARALLEL_HPP

#include <cstddef>
// std::function alone: with libstdc++, the header that defines just it
// (<functional> adds the searchers, hash tables and more, parsed by every
// translation unit).
#if defined(__GLIBCXX__) && __has_include(<bits/std_function.h>)
#include <bits/std_function.h>
#else
#include <functional>
#endif

#include "config.hpp"

LOWBIT_BEGIN_NAMESPACE

/**
 * How an operator call may split its work.
 *
 * With the defaults an operator runs on the calling thread only. With
 * `threads` above 1 (or 0 for std::thread::hardware_concurrency()), a call
 * on at least `2 * min_elements_per_thread` elements is cut into that many
 * contiguous parts (each a whole number of 512-element blocks, or of rows in
 * per-channel calls on short rows) which run at the same time: the calling
 * thread takes one, lowbit's own pool of threads the others. Every element
 * is computed by the same kernel as in a single-threaded call, so the result
 * is the same, bit for bit.
 *
 * `executor`, when set, replaces lowbit's pool: it must call `task(i)` once
 * for every i in [0, n), on any threads, and return when all have returned
 * (for example a wrapper around a TBB task group, an OpenMP loop or your own
 * pool). `threads` then gives the number of parts.
 *
 * lowbit's pool is created on first use and grows to the largest `threads`
 * asked for. A call made while the pool is busy (from another thread, or
 * from inside a task) runs on the calling thread alone.
 *
 * The pool uses std::thread, so a program that sets `threads` other than 1
 * must be built with thread support: CMake's target lowbit::lowbit links
 * Threads::Threads (and conan's package declares pthread) for you; by hand
 * or with pkg-config (lowbit.pc adds no flags) pass `-pthread`. With glibc
 * 2.34 or later the threads are in libc and the flag changes nothing; with
 * an older glibc the pool's first std::thread fails at run time without it.
 *
 * **Example**:
 * ```
 * lowbit::int_quant<> q{.rounding = lowbit::rounding_mode::half_even};
 * q.exec.threads = 2;   // large tensors now use two threads
 * q(x, 0.05f, 0.0f, 8.0f, y);
 * ```
 */
struct execution {
  /// Threads (parts) per call: 1 = the calling thread only (the default);
  /// 0 = std::thread::hardware_concurrency().
  unsigned threads = 1;
  /// No part gets fewer elements than this: smaller calls use fewer parts,
  /// and below twice this value (2^17 by default) a call never forks. The
  /// default is where two threads start to pay for IntQuant and FloatQuant
  /// on a 2-core AVX-512 machine (docs/performance.md, "Threads").
  std::size_t min_elements_per_thread = std::size_t(1) << 16;
  /// Outputs of at least this many elements that do not overlap x are
  /// written with streaming (non-temporal) stores, which skip the caches:
  /// faster once the data no longer fits in them, slower before. The
  /// default, 2^22 elements (16 MiB of float32 y, 32 MiB with x), is past
  /// the crossover measured on a 2-core AVX-512 machine (2 MiB L2) and at
  /// the size of a Zen 3 L3 (docs/performance.md, "Streaming stores");
  /// SIZE_MAX turns them off. Results are the same bits either way.
  std::size_t stream_min_elements = std::size_t(1) << 22;
  /// Runs task(i) for every i in [0, n) and returns when all are done;
  /// empty = lowbit's own thread pool.
  std::function<void(std::size_t n, const std::function<void(std::size_t)>& task)> executor;
};

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_PARALLEL_HPP
