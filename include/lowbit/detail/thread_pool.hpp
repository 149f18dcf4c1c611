// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/thread_pool.hpp
 * The small thread pool behind lowbit::execution: the calling thread and up
 * to `threads - 1` workers share the parts of one call.
 */
#ifndef LOWBIT_DETAIL_THREAD_POOL_HPP
#define LOWBIT_DETAIL_THREAD_POOL_HPP

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "../config.hpp"
#include "../parallel.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

class thread_pool {
 public:
  /// The process-wide pool (created on first use, joined at exit).
  static thread_pool& instance() {
    static thread_pool pool;
    return pool;
  }

  /**
   * Calls task(i) for every i in [0, n) on the calling thread and up to
   * n - 1 workers, and returns when every call has returned. When the pool
   * is busy (a concurrent or nested call) or no thread can be started, the
   * calling thread does all the work. `task` must not throw.
   */
  void run(std::size_t n, const std::function<void(std::size_t)>& task) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock() || !grow(n - 1)) {
      for (std::size_t i = 0; i < n; ++i) task(i);
      return;
    }
    std::unique_lock<std::mutex> lk(m_);
    task_ = &task;
    n_ = n;
    next_ = 0;
    done_ = 0;
    work_cv_.notify_all();
    while (next_ < n_) {
      const std::size_t i = next_++;
      lk.unlock();
      task(i);
      lk.lock();
      ++done_;
    }
    done_cv_.wait(lk, [&] { return done_ == n_; });
    n_ = 0;
    next_ = 0;
    task_ = nullptr;
  }

  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  ~thread_pool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

 private:
  thread_pool() = default;

  /// Ensures at least `count` workers; false if a thread cannot be started.
  bool grow(std::size_t count) {
    try {
      while (workers_.size() < count) workers_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      return !workers_.empty() || count == 0;
    }
    return true;
  }

  void work() {
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      work_cv_.wait(lk, [&] { return stop_ || next_ < n_; });
      if (stop_) return;
      const std::size_t i = next_++;
      const std::function<void(std::size_t)>* t = task_;
      lk.unlock();
      (*t)(i);
      lk.lock();
      if (++done_ == n_) done_cv_.notify_all();
    }
  }

  std::mutex busy_;  // held by the call that owns the pool
  std::mutex m_;     // guards everything below
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t n_ = 0, next_ = 0, done_ = 0;
  bool stop_ = false;
};

/// The number of parts a call on `count` elements is cut into.
inline std::size_t parallel_parts(const execution& exec, std::size_t count) noexcept {
  std::size_t t = exec.threads;
  if (t == 0) t = std::max(1u, std::thread::hardware_concurrency());
  if (t <= 1) return 1;
  const std::size_t min_part = std::max<std::size_t>(exec.min_elements_per_thread, 1);
  return std::max<std::size_t>(1, std::min(t, count / min_part));
}

/// Runs task(i) for i in [0, n) with exec's executor, or lowbit's pool.
inline void parallel_run(const execution& exec, std::size_t n, const std::function<void(std::size_t)>& task) {
  if (exec.executor)
    exec.executor(n, task);
  else
    thread_pool::instance().run(n, task);
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_THREAD_POOL_HPP
