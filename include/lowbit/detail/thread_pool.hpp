// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/thread_pool.hpp
 * The small thread pool behind lowbit::execution: the calling thread and up
 * to `threads - 1` workers share the parts of one call.
 */
#ifndef LOWBIT_DETAIL_THREAD_POOL_HPP
#define LOWBIT_DETAIL_THREAD_POOL_HPP

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

// std::thread and std::mutex. With libstdc++, the headers that define just
// these: <thread> and <mutex> also bring jthread, stop tokens, timed mutexes
// and <chrono> with the C++20 calendar, parsed by every translation unit
// that includes lowbit (docs/performance.md, "Compile time"). The spin limit
// reads the monotonic clock through POSIX clock_gettime where there is one,
// for the same reason, and through std::chrono::steady_clock elsewhere.
#if defined(__GLIBCXX__) && __has_include(<bits/std_thread.h>) && __has_include(<bits/std_mutex.h>)
#include <bits/std_mutex.h>
#include <bits/std_thread.h>
#else
#include <mutex>
#include <thread>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <time.h>
#define LOWBIT_DETAIL_CLOCK_GETTIME 1
#else
#include <chrono>
#endif

#include "../config.hpp"
#include "../error.hpp"
#include "../parallel.hpp"

#include "intrinsics.hpp"  // immintrin.h on x86

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// One spin-wait step: a pause hint where the ISA has one.
inline void spin_pause() noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#else
  std::this_thread::yield();
#endif
}

/// Nanoseconds of a monotonic clock (the origin is unspecified).
inline std::uint64_t monotonic_ns() noexcept {
#ifdef LOWBIT_DETAIL_CLOCK_GETTIME
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
#else
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
#endif
}

/**
 * The pool's threads spin for a while before they block. Blocking alone
 * costs a wake-up per call (a futex, and on a
 * virtual machine an interrupt to a halted virtual CPU), which can outweigh
 * the work of a part of a few million elements; spinning threads take the
 * next part without one (docs/performance.md, "Threads"). The limits, in
 * nanoseconds:
 */
inline constexpr std::uint64_t worker_spin_ns = 200000, caller_spin_ns = 2000000;

/**
 * A template only so that nothing of it (std::thread, the clock, the
 * atomics' waits) is instantiated in a translation unit that makes no
 * operator call; `thread_pool` is the one instance.
 */
template <class Tag = void>
class basic_thread_pool {
 public:
  /// The process-wide pool (created on first use, joined at exit).
  static basic_thread_pool& instance() {
    static basic_thread_pool pool;
    return pool;
  }

  /**
   * Calls task(i) for every i in [0, n) on the calling thread and up to
   * n - 1 workers, and returns when every call has returned. When the pool
   * is busy (a concurrent or nested call) or no thread can be started, the
   * calling thread does all the work. `task` must not throw.
   *
   * The state is guarded by the mutex. Threads that find nothing to do
   * spin, then block on an atomic (C++20 wait/notify): `work_epoch_`
   * changes, under the mutex, whenever work is published or the pool
   * stops; `done_count_` reaches n when every part is done. A waiter reads
   * the atomic under the mutex before it releases it, so no change is
   * missed.
   */
  void run(std::size_t n, const std::function<void(std::size_t)>& task) {
    if (!busy_.try_lock()) return run_here(n, task);
    const std::lock_guard<std::mutex> busy(busy_, std::adopt_lock);
    if (!grow(n - 1)) return run_here(n, task);
    m_.lock();
    task_ = &task;
    n_ = n;
    next_ = 0;
    done_ = 0;
    done_count_.store(0, std::memory_order_relaxed);
    // The epoch first: a worker that sees has_work_ while spinning finds
    // the epoch already moved and does not block.
    work_epoch_.fetch_add(1, std::memory_order_release);
    has_work_.store(true, std::memory_order_release);
    work_epoch_.notify_all();
    while (next_ < n_) {
      const std::size_t i = next_++;
      if (next_ == n_) has_work_.store(false, std::memory_order_relaxed);
      m_.unlock();
      task(i);
      m_.lock();
      ++done_;
    }
    if (done_ != n_) {
      m_.unlock();
      spin_until([&] { return done_count_.load(std::memory_order_acquire) == n; }, caller_spin_ns);
      for (std::size_t d; (d = done_count_.load(std::memory_order_acquire)) != n;) done_count_.wait(d);
      m_.lock();
    }
    n_ = 0;
    next_ = 0;
    task_ = nullptr;
    m_.unlock();
  }

  basic_thread_pool(const basic_thread_pool&) = delete;
  basic_thread_pool& operator=(const basic_thread_pool&) = delete;

  ~basic_thread_pool() {
    m_.lock();
    stop_ = true;
    stop_flag_.store(true, std::memory_order_release);
    work_epoch_.fetch_add(1, std::memory_order_release);
    m_.unlock();
    work_epoch_.notify_all();
    for (std::size_t i = 0; i < nworkers_; ++i) workers_[i].join();
    delete[] workers_;
  }

 private:
  basic_thread_pool() = default;

  static void run_here(std::size_t n, const std::function<void(std::size_t)>& task) {
    for (std::size_t i = 0; i < n; ++i) task(i);
  }

  /// Spins until pred() or `limit_ns` nanoseconds have passed.
  template <class Pred>
  static void spin_until(Pred&& pred, std::uint64_t limit_ns) {
    const std::uint64_t start = monotonic_ns();
    for (unsigned k = 0;; ++k) {
      if (pred()) return;
      spin_pause();
      if ((k & 255) == 255 && monotonic_ns() - start >= limit_ns) return;
    }
  }

  /// Ensures at least `count` workers; false if a thread cannot be started.
  bool grow(std::size_t count) {
    if (nworkers_ >= count) return true;
    try {
      if (count > capacity_) {
        std::thread* const more = new std::thread[count];
        for (std::size_t i = 0; i < nworkers_; ++i) more[i] = std::move(workers_[i]);
        delete[] workers_;
        workers_ = more;
        capacity_ = count;
      }
      for (; nworkers_ < count; ++nworkers_) workers_[nworkers_] = std::thread([this] { work(); });
    } catch (...) {  // std::bad_alloc or std::system_error: no thread could be started
      return nworkers_ != 0;
    }
    return true;
  }

  void work() {
    m_.lock();
    for (;;) {
      if (!(stop_ || next_ < n_)) {
        // Spin a while for the next call, then block until the epoch moves.
        const unsigned epoch = work_epoch_.load(std::memory_order_acquire);
        m_.unlock();
        spin_until([&] {
          return has_work_.load(std::memory_order_acquire) || stop_flag_.load(std::memory_order_acquire);
        }, worker_spin_ns);
        work_epoch_.wait(epoch, std::memory_order_acquire);
        m_.lock();
        continue;
      }
      if (stop_) break;
      const std::size_t i = next_++;
      if (next_ == n_) has_work_.store(false, std::memory_order_relaxed);
      const std::function<void(std::size_t)>* t = task_;
      m_.unlock();
      (*t)(i);
      m_.lock();
      ++done_;
      // The caller counts its own parts under the lock; this counter tells
      // a waiting caller that the workers' parts are done.
      done_count_.store(done_, std::memory_order_release);
      if (done_ == n_) done_count_.notify_all();
    }
    m_.unlock();
  }

  std::mutex busy_;  // held by the call that owns the pool
  std::mutex m_;     // guards everything below but the atomics
  // nworkers_ started, room for capacity_ (a plain pointer: a unique_ptr of
  // threads would be instantiated with the class, used or not)
  std::thread* workers_ = nullptr;
  std::size_t nworkers_ = 0, capacity_ = 0;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t n_ = 0, next_ = 0, done_ = 0;
  bool stop_ = false;
  std::atomic<bool> has_work_{false}, stop_flag_{false};
  std::atomic<unsigned> work_epoch_{0};
  std::atomic<std::size_t> done_count_{0};
};

using thread_pool = basic_thread_pool<>;

/// The number of parts a call on `count` elements is cut into.
inline std::size_t parallel_parts(const execution& exec, std::size_t count) noexcept {
  std::size_t t = exec.threads;
  if (t == 0) t = std::max(1u, std::thread::hardware_concurrency());
  if (t <= 1) return 1;
  const std::size_t min_part = std::max<std::size_t>(exec.min_elements_per_thread, 1);
  return std::max<std::size_t>(1, std::min(t, count / min_part));
}

/// Runs task(i) for i in [0, n) with exec's executor, or lowbit's pool.
/// A user's executor is held to its contract: an index outside [0, n) is
/// never run (it would write outside the output), and unless every part
/// ran exactly once, lowbit::error is thrown after it returns (the output
/// is then unspecified: parts of it may not be written).
template <class Tag = void>
void parallel_run(const execution& exec, std::size_t n, const std::function<void(std::size_t)>& task) {
  if (!exec.executor) {
    basic_thread_pool<Tag>::instance().run(n, task);
    return;
  }
  std::atomic<std::size_t> ran{0}, outside{0};
  const std::function<void(std::size_t)> guarded = [&](std::size_t i) {
    if (i >= n) {
      outside.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    task(i);
    ran.fetch_add(1, std::memory_order_relaxed);
  };
  exec.executor(n, guarded);
  const std::size_t r = ran.load(), o = outside.load();
  if (r != n || o != 0)
    throw_error("lowbit: execution::executor ran ", dec(r), " tasks for ", dec(n), " parts",
                o ? cat(" and was given ", dec(o), " index(es) outside [0, n)") : std::string(),
                "; expected task(i) called once for every i in [0, ", dec(n), ") (the output is unspecified now)");
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_THREAD_POOL_HPP
