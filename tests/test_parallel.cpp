// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/parallel.hpp (and the engine's multi-threaded
// split, include/lowbit/detail/thread_pool.hpp): every operator gives the
// same bits with threads as without, on every layout the engine handles.
#include <lowbit/bipolar_quant.hpp>
#include <lowbit/float_quant.hpp>
#include <lowbit/int_quant.hpp>
#include <lowbit/minifloat.hpp>
#include <lowbit/parallel.hpp>
#include <lowbit/trunc.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <span>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"
#include "support/test_util.hpp"

using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit::strided_view;
using lowbit_test::require_same_bits;

namespace {

/// Threads with a small minimum part, so that test-sized tensors split.
lowbit::execution two_threads(std::size_t min_part = 1000) {
  lowbit::execution e;
  e.threads = 2;
  e.min_elements_per_thread = min_part;
  return e;
}

/// Runs `call(op, y)` single-threaded and with `exec`, and compares the bits.
template <class Op, class Call>
void same_with_threads(Op op, std::size_t n, const lowbit::execution& exec, const Call& call) {
  std::vector<float> a(n, -1.0f), b(n, -2.0f);
  op.exec = lowbit::execution{};
  call(op, a);
  op.exec = exec;
  call(op, b);
  require_same_bits(b, a);
}

}  // namespace

TEST_CASE("every operator gives the same bits with two threads, on every layout", "[parallel]") {
  const lowbit::execution exec = two_threads();
  const std::vector<float> x = lowbit_test::mixed_values<float>(100003, 5);
  const std::vector<float> ch_scale{0.1f, 0.37f, 2.0f}, el_scale = [] {
    std::vector<float> s(100003);
    // Not periodic: a part that read another part's scales would differ.
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = 0.05f + 1e-6f * float(i);
    return s;
  }();
  for (rounding_mode m : {rounding_mode::half_even, rounding_mode::ceil, rounding_mode::half_up}) {
    INFO("mode " << lowbit::to_string(m));
    const lowbit::int_quant<> iq{.rounding = m};
    // 1-D, odd length: one tile split inside at 512-element blocks.
    same_with_threads(iq, 100003, exec, [&](const auto& op, std::vector<float>& y) {
      op(std::span<const float>(x.data(), 100003), 0.05f, 0.0f, 8.0f, y);
    });
    // Per-element scale (a loaded piece).
    same_with_threads(iq, 100003, exec, [&](const auto& op, std::vector<float>& y) {
      op(std::span<const float>(x.data(), 100003), el_scale, 1.0f, 8.0f, y);
    });
    // NCHW with a per-channel scale and rows of 70 (row mode, split at rows),
    // [2, 3, 50, 70].
    same_with_threads(iq, 2 * 3 * 50 * 70, exec, [&](const auto& op, std::vector<float>& y) {
      op(strided_view<const float>(x.data(), {2, 3, 50, 70}), strided_view<const float>(ch_scale.data(), {1, 3, 1, 1}),
         0.0f, 4.0f, strided_view<float>(y.data(), {2, 3, 50, 70}));
    });
    // [300, 70] with one scale per row: a single row-mode tile, split
    // between rows.
    same_with_threads(iq, 300 * 70, exec, [&](const auto& op, std::vector<float>& y) {
      op(strided_view<const float>(x.data(), {300, 70}), strided_view<const float>(el_scale.data(), {300, 1}), 0.0f,
         8.0f, strided_view<float>(y.data(), {300, 70}));
    });
    // A strided (every other element) input: gathered in blocks.
    same_with_threads(iq, 2 * 3 * 50 * 70, exec, [&](const auto& op, std::vector<float>& y) {
      op(strided_view<const float>(x.data(), {2 * 3 * 50 * 70}, {2}), 0.3f, 0.0f, 8.0f, y);
    });
    // Rows of 1000 with one scale each: many tiles, split between tiles.
    same_with_threads(iq, 3 * 1000, exec, [&](const auto& op, std::vector<float>& y) {
      op(strided_view<const float>(x.data(), {3, 1000}), strided_view<const float>(ch_scale.data(), {3, 1}), 0.0f,
         8.0f, strided_view<float>(y.data(), {3, 1000}));
    });
    same_with_threads(lowbit::trunc<>{.rounding = m}, 100003, exec, [&](const auto& op, std::vector<float>& y) {
      op(std::span<const float>(x.data(), 100003), 0.375f, 3.0f, 8.0f, 1.5f, 4.0f, y);
    });
    same_with_threads(lowbit::float_quant<>{.rounding = m}, 100003, exec,
                      [&](const auto& op, std::vector<float>& y) {
                        op(std::span<const float>(x.data(), 100003), 0.3f, 4.0f, 3.0f, 7.0f, 448.0f, y);
                      });
    same_with_threads(lowbit::minifloat_quant<semantics::exact>{.rounding = m}, 100003, exec,
                      [&](const auto& op, std::vector<float>& y) {
                        op(std::span<const float>(x.data(), 100003), 1.0f, y);
                      });
  }
  same_with_threads(lowbit::bipolar_quant<>{}, 100003, exec, [&](const auto& op, std::vector<float>& y) {
    op(std::span<const float>(x.data(), 100003), 0.5f, y);
  });
  // In place: each part reads and writes only its own elements.
  std::vector<float> a(x.begin(), x.begin() + 100003), b = a;
  lowbit::int_quant<> iq{};
  iq(a, 0.05f, 0.0f, 8.0f, a);
  iq.exec = exec;
  iq(b, 0.05f, 0.0f, 8.0f, b);
  require_same_bits(b, a);
}

TEST_CASE("an executor receives the parts; small calls never fork", "[parallel]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(10000, 9);
  std::vector<float> want(x.size()), got(x.size());
  lowbit::int_quant<> op{};
  op(x, 0.05f, 0.0f, 8.0f, want);

  std::size_t calls = 0, tasks = 0;
  op.exec.threads = 4;
  op.exec.min_elements_per_thread = 2000;
  op.exec.executor = [&](std::size_t n, const std::function<void(std::size_t)>& task) {
    ++calls;
    tasks += n;
    for (std::size_t i = n; i-- > 0;) task(i);  // any order
  };
  op(x, 0.05f, 0.0f, 8.0f, got);
  require_same_bits(got, want);
  CHECK(calls == 1);
  CHECK(tasks == 4);

  // 10000 elements with parts of at least 6000: one part, no fork.
  calls = tasks = 0;
  op.exec.min_elements_per_thread = 6000;
  op(x, 0.05f, 0.0f, 8.0f, got);
  CHECK(calls == 0);
  // threads = 1 (the default) never forks either.
  op.exec.threads = 1;
  op.exec.min_elements_per_thread = 1;
  op(x, 0.05f, 0.0f, 8.0f, got);
  CHECK(calls == 0);
  require_same_bits(got, want);
}

TEST_CASE("lowbit's pool: concurrent and nested calls finish with the right bits", "[parallel]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(50000, 13);
  std::vector<float> want(x.size());
  lowbit::int_quant<> single{};
  single(x, 0.05f, 0.0f, 8.0f, want);

  lowbit::int_quant<> op{};
  op.exec = two_threads();
  op.exec.threads = 0;  // hardware_concurrency()
  std::vector<float> y1(x.size()), y2(x.size());
  std::thread t([&] {
    for (int k = 0; k < 20; ++k) op(x, 0.05f, 0.0f, 8.0f, y1);
  });
  for (int k = 0; k < 20; ++k) op(x, 0.05f, 0.0f, 8.0f, y2);
  t.join();
  require_same_bits(y1, want);
  require_same_bits(y2, want);

  // A task that itself calls a threaded operator (the pool is busy: it runs
  // on its own thread).
  std::vector<float> inner(x.size());
  lowbit::int_quant<> outer{};
  outer.exec = two_threads();
  std::atomic<int> nested{0};
  outer.exec.executor = [&](std::size_t n, const std::function<void(std::size_t)>& task) {
    lowbit::detail::thread_pool::instance().run(n, [&](std::size_t i) {
      if (i == 0 && nested.fetch_add(1) == 0) op(x, 0.05f, 0.0f, 8.0f, inner);
      task(i);
    });
  };
  outer(x, 0.05f, 0.0f, 8.0f, y1);
  require_same_bits(y1, want);
  require_same_bits(inner, want);
  CHECK(nested.load() == 1);
}

TEST_CASE("streaming stores give the same bits, at every alignment and tail", "[parallel][stream]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(3000, 17);
  const std::vector<double> xd = lowbit_test::mixed_values<double>(3000, 19);
  for (std::size_t mis : {0, 1, 3, 5, 15}) {
    for (std::size_t n : {0, 1, 17, 100, 1001, 2985}) {
      INFO("misalignment " << mis << " n " << n);
      lowbit::int_quant<> op{.rounding = rounding_mode::half_even};
      std::vector<float> a(n + mis + 1, 7.0f), b = a;
      op(std::span<const float>(x.data(), n), 0.05f, 0.0f, 8.0f, std::span<float>(a.data() + mis, n));
      op.exec.stream_min_elements = 0;  // always stream
      op(std::span<const float>(x.data(), n), 0.05f, 0.0f, 8.0f, std::span<float>(b.data() + mis, n));
      require_same_bits(b, a);  // the elements outside [mis, mis + n) too
      std::vector<double> ad(n + mis + 1, 7.0), bd = ad;
      lowbit::int_quant<semantics::exact> opd{};
      opd(std::span<const double>(xd.data(), n), 0.3, 1.0, 5.0, std::span<double>(ad.data() + mis, n));
      opd.exec.stream_min_elements = 0;
      opd(std::span<const double>(xd.data(), n), 0.3, 1.0, 5.0, std::span<double>(bd.data() + mis, n));
      require_same_bits(bd, ad);
      // With threads as well.
      std::vector<float> c(n + mis + 1, 7.0f);
      op.exec.threads = 2;
      op.exec.min_elements_per_thread = 16;
      op(std::span<const float>(x.data(), n), 0.05f, 0.0f, 8.0f, std::span<float>(c.data() + mis, n));
      require_same_bits(c, a);
    }
  }
  // In place (y overlaps x): no streaming, same bits.
  std::vector<float> a(x), b(x);
  lowbit::int_quant<> op{};
  op(a, 0.05f, 0.0f, 8.0f, a);
  op.exec.stream_min_elements = 0;
  op(b, 0.05f, 0.0f, 8.0f, b);
  require_same_bits(b, a);
}

TEST_CASE("an executor that breaks its contract gets an error, and no index outside the parts runs",
          "[parallel][errors]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(10000, 9);
  std::vector<float> y(x.size() + 4096, 7.0f);  // room past the output: nothing may land there
  const std::span<float> out(y.data(), x.size());
  lowbit::int_quant<> op{};
  op.exec.threads = 4;
  op.exec.min_elements_per_thread = 2000;
  auto past_end_untouched = [&] {
    for (std::size_t i = x.size(); i < y.size(); ++i)
      if (y[i] != 7.0f) return false;
    return true;
  };
  // Indices outside [0, n): never run, reported.
  op.exec.executor = [&](std::size_t n, const std::function<void(std::size_t)>& task) {
    for (std::size_t i = 0; i < n; ++i) task(i);
    task(n);
    task(n + 1000);
  };
  REQUIRE_THROWS_WITH(op(x, 0.05f, 0.0f, 8.0f, out),
                      lowbit_test::contains_substring("executor ran 4 tasks for 4 parts and was given 2 index(es) "
                                                      "outside [0, n)"));
  CHECK(past_end_untouched());
  // A part skipped, or run twice.
  op.exec.executor = [&](std::size_t n, const std::function<void(std::size_t)>& task) {
    for (std::size_t i = 1; i < n; ++i) task(i);
  };
  REQUIRE_THROWS_WITH(op(x, 0.05f, 0.0f, 8.0f, out), lowbit_test::contains_substring("ran 3 tasks for 4 parts"));
  op.exec.executor = [&](std::size_t n, const std::function<void(std::size_t)>& task) {
    for (std::size_t i = 0; i < n; ++i) task(i);
    task(0);
  };
  REQUIRE_THROWS_WITH(op(x, 0.05f, 0.0f, 8.0f, out), lowbit_test::contains_substring("ran 5 tasks for 4 parts"));
  CHECK(past_end_untouched());
}
