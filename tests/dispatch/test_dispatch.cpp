// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/dispatch.hpp: runtime ISA dispatch. This file is
// compiled for the baseline (no -march, like a user's portable build) into
// its own program, lowbit-dispatch-tests, whose kernels lowbit_add_dispatch
// compiles for sse2, avx2 and avx512bw. On every architecture this CPU
// supports, lowbit::dispatch::run() must give the bits of the scalar path
// (detail::simd_scope off), for every operator, semantics, rounding mode and
// layout, and throw the same errors.
#include <lowbit/dispatch.hpp>
#include <lowbit/lowbit.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"
#include "support/test_util.hpp"

using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit::strided_view;
using lowbit_test::require_same_bits;

namespace {

/// The compiled architectures this CPU supports, lowest first.
std::vector<std::string> runnable() {
  std::vector<std::string> r;
  for (std::string_view a : lowbit::dispatch::compiled())
    if (lowbit::dispatch::supported(a)) r.emplace_back(a);
  return r;
}

/// Makes `arch` active for the scope, then goes back to the best one.
struct forced {
  explicit forced(const std::string& arch) { lowbit::dispatch::force(arch); }
  ~forced() { lowbit::dispatch::reset(); }
  forced(const forced&) = delete;
  forced& operator=(const forced&) = delete;
};

/// Runs `call(op, y)` with `op` as given through dispatch on every runnable
/// architecture (`call` uses lowbit::dispatch::run) and compares the bits to
/// `direct(op_scalar, y)`, the operator called directly with the scalar kernels
/// (detail::simd_scope).
template <class T = float, class Op, class Via, class Direct>
void same_as_scalar(Op op, std::size_t n, const Via& via, const Direct& direct) {
  std::vector<T> want(n, T(-7));
  {
    const lowbit::detail::simd_scope scalar(false);  // the scalar kernels
    direct(op, want);
  }
  for (const std::string& arch : runnable()) {
    INFO("architecture " << arch);
    const forced f(arch);
    REQUIRE(lowbit::dispatch::active() == arch);
    std::vector<T> got(n, T(-9));
    via(op, got);
    require_same_bits(got, want);
  }
}

// Lengths around every vector width (4, 8, 16 floats) and a long one.
constexpr std::size_t lengths[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 1000, 4099};

}  // namespace

TEST_CASE("dispatch: the compiled architectures and the chosen one", "[dispatch]") {
  const auto compiled = lowbit::dispatch::compiled();
  REQUIRE(compiled.size() == 3);
  CHECK(compiled[0] == "sse2");
  CHECK(compiled[1] == "avx2");
  CHECK(compiled[2] == "avx512bw");
  // x86-64 always has SSE2; the baseline runs everywhere the program runs.
  CHECK(lowbit::dispatch::supported("sse2"));
  CHECK_FALSE(lowbit::dispatch::supported("neon"));
  CHECK_FALSE(lowbit::dispatch::supported(""));
  // The best compiled one this CPU supports.
  const std::vector<std::string> r = runnable();
  REQUIRE_FALSE(r.empty());
  CHECK(lowbit::dispatch::active() == r.back());
  // AVX-512BW implies AVX2 on every CPU made, and AVX2 implies SSE2.
  if (lowbit::dispatch::supported("avx512bw")) CHECK(lowbit::dispatch::supported("avx2"));
  if (lowbit::dispatch::supported("avx2")) CHECK(lowbit::dispatch::supported("sse4_2"));
}

TEST_CASE("dispatch: force and reset", "[dispatch]") {
  const std::string best(lowbit::dispatch::active());
  {
    const forced f("sse2");
    CHECK(lowbit::dispatch::active() == "sse2");
  }
  CHECK(lowbit::dispatch::active() == best);
  // Not compiled in: an error that lists what is, and nothing changes.
  REQUIRE_THROWS_WITH(lowbit::dispatch::force("avx"),
                      lowbit_test::contains_substring("\"avx\" is not compiled in; expected one of: sse2, avx2, avx512bw"));
  REQUIRE_THROWS_AS(lowbit::dispatch::force("neon"), lowbit::error);
  CHECK(lowbit::dispatch::active() == best);
  if (!lowbit::dispatch::supported("avx512bw")) {
    REQUIRE_THROWS_WITH(lowbit::dispatch::force("avx512bw"),
                        lowbit_test::contains_substring("\"avx512bw\" is not supported by this CPU"));
    CHECK(lowbit::dispatch::active() == best);
  }
}

TEST_CASE("dispatch: int_quant equals the scalar path on every architecture", "[dispatch]") {
  for (std::size_t n : lengths) {
    INFO("n = " << n);
    const std::vector<float> x = lowbit_test::mixed_values<float>(n + 3, 11 + unsigned(n));
    // Misaligned by one float, so that no kernel finds x aligned.
    const std::span<const float> xs(x.data() + 1, n);
    for (rounding_mode m : lowbit::all_rounding_modes) {
      INFO("mode " << lowbit::to_string(m));
      for (float scale : {0.37f, 0.25f, 3.0f}) {  // 0.25: the power-of-two path
        const lowbit::int_quant<> ref{.is_signed = true, .narrow = false, .rounding = m};
        same_as_scalar(
            ref, n, [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, xs, scale, 0.0f, 4.0f, y); },
            [&](const auto& op, std::vector<float>& y) { op(xs, scale, 0.0f, 4.0f, y); });
        const lowbit::int_quant<semantics::exact> ex{.is_signed = false, .narrow = true, .rounding = m};
        same_as_scalar(
            ex, n, [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, xs, scale, 1.0f, 8.0f, y); },
            [&](const auto& op, std::vector<float>& y) { op(xs, scale, 1.0f, 8.0f, y); });
      }
    }
  }
}

TEST_CASE("dispatch: per-channel and per-element parameters, strided views, in place", "[dispatch]") {
  const std::size_t rows = 7, cols = 37;
  const std::vector<float> x = lowbit_test::mixed_values<float>(rows * cols, 3);
  std::vector<float> ch(rows), el(rows * cols), zp(rows * cols), bw(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    ch[r] = 0.1f + 0.37f * float(r);
    bw[r] = float(2 + r);
  }
  for (std::size_t i = 0; i < el.size(); ++i) {
    el[i] = 0.05f + 1e-3f * float(i);
    zp[i] = float(int(i % 5) - 2);
  }
  const strided_view<const float> xv(x.data(), {rows, cols});
  const strided_view<const float> chv(ch.data(), {rows, 1});
  const strided_view<const float> bwv(bw.data(), {rows, 1});
  const strided_view<const float> elv(el.data(), {rows, cols});
  const strided_view<const float> zpv(zp.data(), {rows, cols});
  for (rounding_mode m : {rounding_mode::half_even, rounding_mode::half_up, rounding_mode::floor}) {
    const lowbit::int_quant<> q{.rounding = m};
    same_as_scalar(
        q, rows * cols,
        [&](const auto& op, std::vector<float>& y) {
          lowbit::dispatch::run(op, xv, chv, zpv, bwv, strided_view<float>(y.data(), {rows, cols}));
        },
        [&](const auto& op, std::vector<float>& y) {
          op(xv, chv, zpv, bwv, strided_view<float>(y.data(), {rows, cols}));
        });
    same_as_scalar(
        q, rows * cols,
        [&](const auto& op, std::vector<float>& y) {
          lowbit::dispatch::run(op, xv, elv, 0.0f, 6.0f, strided_view<float>(y.data(), {rows, cols}));
        },
        [&](const auto& op, std::vector<float>& y) {
          op(xv, elv, 0.0f, 6.0f, strided_view<float>(y.data(), {rows, cols}));
        });
  }
  // A transposed (non-contiguous) x and y.
  const strided_view<const float> xt(x.data(), {cols, rows}, {1, std::ptrdiff_t(cols)});
  same_as_scalar(
      lowbit::int_quant<>{}, rows * cols,
      [&](const auto& op, std::vector<float>& y) {
        lowbit::dispatch::run(op, xt, 0.3f, 0.0f, 5.0f, strided_view<float>(y.data(), {cols, rows}, {1, std::ptrdiff_t(cols)}));
      },
      [&](const auto& op, std::vector<float>& y) {
        op(xt, 0.3f, 0.0f, 5.0f, strided_view<float>(y.data(), {cols, rows}, {1, std::ptrdiff_t(cols)}));
      });
  // In place: y is x.
  same_as_scalar(
      lowbit::int_quant<>{}, x.size(),
      [&](const auto& op, std::vector<float>& y) {
        y = x;
        lowbit::dispatch::run(op, std::span<const float>(y), 0.3f, 0.0f, 5.0f, y);
      },
      [&](const auto& op, std::vector<float>& y) { op(x, 0.3f, 0.0f, 5.0f, y); });
}

TEST_CASE("dispatch: trunc, trunc_v1 and bipolar_quant equal the scalar path", "[dispatch]") {
  for (std::size_t n : {std::size_t(0), std::size_t(5), std::size_t(17), std::size_t(1001)}) {
    INFO("n = " << n);
    const std::vector<float> x = lowbit_test::mixed_values<float>(n, 21 + unsigned(n));
    for (rounding_mode m : lowbit::all_rounding_modes) {
      INFO("mode " << lowbit::to_string(m));
      for (float scale : {0.25f, 0.7f}) {
        same_as_scalar(
            lowbit::trunc<>{.is_signed = true, .narrow = false, .rounding = m}, n,
            [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, x, scale, 0.0f, 8.0f, scale * 16, 4.0f, y); },
            [&](const auto& op, std::vector<float>& y) { op(x, scale, 0.0f, 8.0f, scale * 16, 4.0f, y); });
        same_as_scalar(
            lowbit::trunc<semantics::exact>{.is_signed = false, .rounding = m}, n,
            [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, x, scale, 2.0f, 8.0f, scale * 4, 6.0f, y); },
            [&](const auto& op, std::vector<float>& y) { op(x, scale, 2.0f, 8.0f, scale * 4, 6.0f, y); });
        same_as_scalar(
            lowbit::trunc_v1<>{.rounding = m}, n,
            [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, x, scale, 0.0f, 8.0f, 4.0f, y); },
            [&](const auto& op, std::vector<float>& y) { op(x, scale, 0.0f, 8.0f, 4.0f, y); });
      }
    }
    same_as_scalar(
        lowbit::bipolar_quant<>{}, n,
        [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, x, 0.5f, y); },
        [&](const auto& op, std::vector<float>& y) { op(x, 0.5f, y); });
    same_as_scalar(
        lowbit::bipolar_quant<semantics::exact>{}, n,
        [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, x, 0.5f, y); },
        [&](const auto& op, std::vector<float>& y) { op(x, 0.5f, y); });
  }
}

TEST_CASE("dispatch: float_quant and minifloat_quant equal the scalar path", "[dispatch]") {
  const lowbit::minifloat_format formats[] = {lowbit::formats::fp8_e4m3fn, lowbit::formats::fp8_e5m2,
                                              lowbit::formats::fp4_e2m1};
  for (std::size_t n : {std::size_t(0), std::size_t(3), std::size_t(33), std::size_t(4099)}) {
    INFO("n = " << n);
    std::vector<float> x = lowbit_test::mixed_values<float>(n, 31 + unsigned(n));
    for (std::size_t i = 0; i < n; i += 3) x[i] *= 1e-3f;  // into the formats' ranges
    for (const lowbit::minifloat_format& f : formats) {
      for (rounding_mode m : lowbit::all_rounding_modes) {
        INFO("format e" << f.exponent_bits << "m" << f.mantissa_bits << ", mode " << lowbit::to_string(m));
        lowbit::minifloat_quant<> mq{.format = f};
        mq.rounding = m;
        same_as_scalar(
            mq, n, [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, x, 0.75f, y); },
            [&](const auto& op, std::vector<float>& y) { op(x, 0.75f, y); });
        lowbit::minifloat_quant<semantics::exact> mx{.format = f};
        mx.rounding = m;
        same_as_scalar(
            mx, n, [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, x, 0.25f, y); },
            [&](const auto& op, std::vector<float>& y) { op(x, 0.25f, y); });
      }
    }
    // float_quant with its own parameters and attributes.
    same_as_scalar(
        lowbit::float_quant<>{.rounding = rounding_mode::half_even, .has_inf = true, .has_nan = true, .saturation = false},
        n, [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, x, 1.0f, 5.0f, 2.0f, 15.0f, 57344.0f, y); },
        [&](const auto& op, std::vector<float>& y) { op(x, 1.0f, 5.0f, 2.0f, 15.0f, 57344.0f, y); });
  }
}

TEST_CASE("dispatch: double tensors", "[dispatch]") {
  const std::vector<double> x = lowbit_test::mixed_values<double>(1001, 41);
  for (rounding_mode m : lowbit::all_rounding_modes) {
    INFO("mode " << lowbit::to_string(m));
    same_as_scalar<double>(
        lowbit::int_quant<>{.rounding = m}, x.size(),
        [&](const auto& op, std::vector<double>& y) { lowbit::dispatch::run(op, x, 0.3, 0.0, 7.0, y); },
        [&](const auto& op, std::vector<double>& y) { op(x, 0.3, 0.0, 7.0, y); });
  }
}

TEST_CASE("dispatch: threads and an executor pass through", "[dispatch]") {
  const std::vector<float> x = lowbit_test::mixed_values<float>(100003, 7);
  lowbit::int_quant<> q;
  q.exec.threads = 2;
  q.exec.min_elements_per_thread = 1000;
  same_as_scalar(
      q, x.size(), [&](const auto& op, std::vector<float>& y) { lowbit::dispatch::run(op, x, 0.3f, 0.0f, 5.0f, y); },
      [&](const auto& op, std::vector<float>& y) { op(x, 0.3f, 0.0f, 5.0f, y); });
  // A user's executor is the one that runs the parts.
  std::size_t parts = 0;
  q.exec.executor = [&](std::size_t n, const std::function<void(std::size_t)>& task) {
    parts += n;
    for (std::size_t i = 0; i < n; ++i) task(i);
  };
  std::vector<float> y(x.size()), want(x.size());
  lowbit::dispatch::run(q, x, 0.3f, 0.0f, 5.0f, y);
  CHECK(parts == 2);
  lowbit::int_quant<>{}(x, 0.3f, 0.0f, 5.0f, want);
  require_same_bits(y, want);
}

/// The message of the lowbit::error that `call` throws (empty if none).
template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const lowbit::error& e) {
    return e.what();
  }
  return {};
}

TEST_CASE("dispatch: the operator's errors, and y untouched", "[dispatch]") {
  const std::vector<float> x(10, 1.0f), three(3, 1.0f);
  const lowbit::int_quant<> q;
  const lowbit::int_quant<semantics::exact> qx;
  lowbit::int_quant<> bad;
  bad.rounding = static_cast<rounding_mode>(99);
  for (const std::string& arch : runnable()) {
    INFO("architecture " << arch);
    const forced f(arch);
    std::vector<float> y(10, 5.0f), short_y(9, 5.0f);
    // Each: the operator's own message, word for word, and y unchanged.
    const auto same = [&](const auto& direct, const auto& via, std::vector<float>& out) {
      const std::string want = error_of(direct);
      REQUIRE_FALSE(want.empty());
      lowbit_test::check_rejected(via, out, want.c_str());
    };
    same([&] { q(x, 0.5f, 0.0f, 0.5f, y); }, [&] { lowbit::dispatch::run(q, x, 0.5f, 0.0f, 0.5f, y); }, y);
    same([&] { q(x, three, 0.0f, 4.0f, y); }, [&] { lowbit::dispatch::run(q, x, three, 0.0f, 4.0f, y); }, y);
    same([&] { qx(x, -1.0f, 0.0f, 4.0f, y); }, [&] { lowbit::dispatch::run(qx, x, -1.0f, 0.0f, 4.0f, y); }, y);
    same([&] { bad(x, 0.5f, 0.0f, 4.0f, y); }, [&] { lowbit::dispatch::run(bad, x, 0.5f, 0.0f, 4.0f, y); }, y);
    same([&] { q(x, 0.5f, 0.0f, 4.0f, short_y); }, [&] { lowbit::dispatch::run(q, x, 0.5f, 0.0f, 4.0f, short_y); },
         short_y);
    const lowbit::minifloat_quant<semantics::exact> mq{.format = {9, 23, 255, 3e38, false, false, true}};
    same([&] { mq(x, 1.0f, y); }, [&] { lowbit::dispatch::run(mq, x, 1.0f, y); }, y);
  }
}
