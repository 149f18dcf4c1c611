// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/elementwise.hpp: the helpers the
// operators validate their arguments with.
#include <lowbit/detail/elementwise.hpp>
#include <lowbit/detail/int_lanes.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <array>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/positions.hpp"

using lowbit::detail::nd;

namespace {

nd<const float> view(const float* p, std::initializer_list<std::size_t> ext,
                     std::initializer_list<std::ptrdiff_t> str) {
  nd<const float> d;
  d.data = p;
  d.rank = ext.size();
  std::size_t r = 0;
  for (std::size_t e : ext) d.ext[r++] = e;
  r = 0;
  for (std::ptrdiff_t s : str) d.str[r++] = s;
  return d;
}

}  // namespace

TEST_CASE("check_elements visits each distinct element once, with its flat index", "[elementwise]") {
  const float v[6] = {0, 1, 2, 3, 4, 5};
  std::vector<std::pair<float, std::size_t>> seen;
  auto record = [&](float x, std::size_t flat) {
    seen.emplace_back(x, flat);
    return true;
  };
  // Row-major [2, 3]: every element, in order.
  lowbit::detail::check_elements(view(v, {2, 3}, {3, 1}), record);
  REQUIRE(seen.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) CHECK(seen[i] == std::pair<float, std::size_t>(float(i), i));
  // [4, 3] with stride 0 in dimension 0: the row once, at flat 0..2.
  seen.clear();
  lowbit::detail::check_elements(view(v, {4, 3}, {0, 1}), record);
  REQUIRE(seen.size() == 3);
  CHECK(seen[2] == std::pair<float, std::size_t>(2.0f, 2));
  // [3, 2^40] with strides [2, 0]: three visits, the flat index counts the broadcast dimension.
  seen.clear();
  const std::size_t big = std::size_t(1) << 40;
  lowbit::detail::check_elements(view(v, {3, big}, {2, 0}), record);
  REQUIRE(seen.size() == 3);
  CHECK(seen[1] == std::pair<float, std::size_t>(2.0f, big));
  CHECK(seen[2] == std::pair<float, std::size_t>(4.0f, 2 * big));
  // Negative strides, an empty tensor, rank 0, early stop.
  seen.clear();
  lowbit::detail::check_elements(view(v + 5, {3}, {-2}), record);
  REQUIRE(seen.size() == 3);
  CHECK(seen[2].first == 1.0f);
  seen.clear();
  lowbit::detail::check_elements(view(v, {3, 0}, {1, 1}), record);
  CHECK(seen.empty());
  lowbit::detail::check_elements(view(v + 4, {}, {}), record);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].first == 4.0f);
  int calls = 0;
  lowbit::detail::check_elements(view(v, {6}, {1}), [&](float, std::size_t) { return ++calls < 2; });
  CHECK(calls == 2);
}

TEST_CASE("io_types_ok accepts the operators' argument types", "[elementwise]") {
  using lowbit::detail::io_types_ok;
  STATIC_REQUIRE(io_types_ok<std::vector<float>, std::vector<float>&, float, double>());
  STATIC_REQUIRE(io_types_ok<std::span<const double>, std::span<double>, float, double>());
  STATIC_REQUIRE(io_types_ok<std::vector<float>, void, float>());
  // The rejections are static_asserts (one diagnostic each), so they are
  // compile-fail cases and not instantiated here.
}

// ---- the engine: index-aware kernels ------------------------------------------

namespace {

/// Writes each element's flat output position (plus 0 * each parameter, so
/// that loaded pieces read them): y[i] == i in row-major order, exactly
/// (double holds every index here).
struct write_index {
  static constexpr bool index_aware = true;
  template <class V>
  V operator()(lowbit::detail::element_index ix, V x, V p0, V p1) const noexcept {
    using T = lowbit::detail::lane_t<V>;
    return lowbit_test::positions<V>(ix) + x * T(0) + p0 * T(0) + p1 * T(0);
  }
};

/// y = x * p0 + p1, on two paths that differ by a marker: a batch with a
/// negative lane is declined, and the scalar operator adds 0.25.
struct decline_negative {
  static constexpr bool may_decline = true;
  template <class V>
  V operator()(V x, V p0, V p1) const noexcept {
    using T = lowbit::detail::lane_t<V>;
    return x * p0 + p1 + T(0.25);
  }
  template <class B>
  B try_batch(bool& ok, B x, B p0, B p1) const noexcept {
    if (lowbit::detail::any_lane(x < B(0.0))) ok = false;
    return x * p0 + p1;
  }
};

/// y = x * p0 + p1 on whole batches; its scalar_kernel adds 0.5 (which
/// run_scalar must run: tails, peels and the scalar path).
struct scalar_marked {
  struct scalar_form {
    template <class V>
    V operator()(V x, V p0, V p1) const noexcept {
      using T = lowbit::detail::lane_t<V>;
      return x * p0 + p1 + T(0.5);
    }
  };
  template <class V>
  V operator()(V x, V p0, V p1) const noexcept {
    return x * p0 + p1;
  }
  scalar_form scalar_kernel() const noexcept { return {}; }
};

/// y = x * p0 + p1, never declining, its scalar_kernel adding 0.5: which
/// elements the scalar loop wrote.
struct mul_add_mark {
  template <class V>
  V operator()(V x, V p0, V p1) const noexcept {
    return x * p0 + p1;
  }
  scalar_marked::scalar_form scalar_kernel() const noexcept { return {}; }
};

/// Runs kernel k on the piece with runner 0 (run_piece) or 1
/// (run_piece_compact).

template <class K, class T, std::size_t NP>
void run_with(int runner, const K& k, const lowbit::detail::piece<T, NP>& pc, bool simd) {
  if (runner == 1)
    lowbit::detail::run_piece_compact(k, pc, simd);
  else
    lowbit::detail::run_piece(k, pc, simd);
}

/// y = x * p.
struct mul {
  template <class V>
  V operator()(V x, V p) const noexcept {
    return x * p;
  }
};

/// A descriptor of p with these extents and strides (E: double or const double).
template <class E>
nd<E> view_of(E* p, const std::vector<std::size_t>& ext, const std::vector<std::ptrdiff_t>& str) {
  nd<E> d;
  d.data = p;
  d.rank = ext.size();
  for (std::size_t r = 0; r < ext.size(); ++r) {
    d.ext[r] = ext[r];
    d.str[r] = str[r];
  }
  return d;
}

/// Row-major strides (elements) of `ext`.
std::vector<std::ptrdiff_t> row_major(const std::vector<std::size_t>& ext) {
  std::vector<std::ptrdiff_t> str(ext.size());
  for (std::size_t r = ext.size(), s = 1; r-- > 0;) {
    str[r] = static_cast<std::ptrdiff_t>(s);
    s *= ext[r];
  }
  return str;
}

/// The engine plan of y = k(x, p0, p1) over the extents ext: x and y
/// row-major, p0 row-major of extents pext (broadcast), p1 a scalar.
lowbit::detail::engine_plan<2> plan_x_p0_p1(const std::vector<std::size_t>& ext,
                                            const std::vector<std::size_t>& pext, const double* x,
                                            const double* p0, const double* p1, double* y) {
  const std::vector<std::ptrdiff_t> pstr = row_major(pext), xstr = row_major(ext);
  const nd<const double> xd = view_of<const double>(x, ext, xstr);
  const nd<const double> pd = view_of<const double>(p0, pext, pstr);
  nd<const double> sd;
  sd.rank = 0;
  sd.data = p1;
  const nd<double> yd = view_of<double>(y, ext, xstr);
  return lowbit::detail::make_engine_plan<2>(lowbit::shape(ext.begin(), ext.end()), xd, {&pd, &sd}, yd);
}

/// The row-major positions of `ext`, each mapped to y's element offset.
std::vector<std::ptrdiff_t> offsets(const std::vector<std::size_t>& ext, const std::vector<std::ptrdiff_t>& str) {
  std::size_t n = 1;
  for (std::size_t e : ext) n *= e;
  std::vector<std::ptrdiff_t> o(n);
  for (std::size_t f = 0; f < n; ++f) {
    std::size_t rest = f;
    std::ptrdiff_t off = 0;
    for (std::size_t r = ext.size(); r-- > 0;) {
      off += static_cast<std::ptrdiff_t>(rest % ext[r]) * str[r];
      rest /= ext[r];
    }
    o[f] = off;
  }
  return o;
}

}  // namespace

TEST_CASE("Pieces carry each element's flat output position: 1 and 2 threads, SIMD and scalar, every pattern",
          "[elementwise][index]") {
  using lowbit::shape;
  struct pattern {
    const char* name;
    std::vector<std::size_t> ext;
    std::vector<std::ptrdiff_t> ystr;          // y's strides (elements), base offset chosen so all >= 0
    std::vector<std::size_t> pext;             // parameter 0's extents (broadcast against ext)
  };
  const std::vector<pattern> patterns = {
      {"flat per-tensor", {1000}, {1}, {}},
      {"flat per-element", {1000}, {1}, {1000}},
      {"per-channel short rows (row mode)", {37, 40}, {40, 1}, {37, 1}},
      {"per-channel long rows", {5, 700}, {700, 1}, {5, 1}},
      {"per-column (2-D tile, buffered parameter)", {9, 24}, {24, 1}, {24}},
      {"transposed y (scattered)", {30, 17}, {1, 30}, {17}},
      {"strided y", {3, 4, 50}, {400, 100, 2}, {4, 1}},
      {"negative stride y", {20, 33}, {-33, 1}, {}},
      {"rank 4, broadcast middle", {2, 3, 5, 7}, {105, 35, 7, 1}, {3, 1, 1}},
      {"threads: 2^18 elements", {512, 512}, {512, 1}, {512, 1}},
      {"threads: 2^18 per-element", {1 << 18}, {1}, {1 << 18}},
  };
  for (const pattern& pt : patterns) {
    std::size_t n = 1;
    for (std::size_t e : pt.ext) n *= e;
    const std::vector<std::ptrdiff_t> yo = offsets(pt.ext, pt.ystr);
    const std::ptrdiff_t lo = *std::min_element(yo.begin(), yo.end());
    const std::ptrdiff_t hi = *std::max_element(yo.begin(), yo.end());
    std::vector<double> ybuf(static_cast<std::size_t>(hi - lo + 1));
    std::vector<double> x(n, 1.5);
    std::size_t pn = 1;
    for (std::size_t e : pt.pext) pn *= e;
    std::vector<double> p0(pn, 2.0);
    const double p1 = 3.0;
    const std::vector<std::ptrdiff_t> pstr = row_major(pt.pext), xstr = row_major(pt.ext);
    const nd<const double> xd = view_of<const double>(x.data(), pt.ext, xstr);
    const nd<const double> pd = view_of<const double>(p0.data(), pt.pext, pstr);
    nd<const double> sd;
    sd.rank = 0;
    sd.data = &p1;
    const nd<double> yd = view_of<double>(ybuf.data() - lo, pt.ext, pt.ystr);
    const shape out(pt.ext.begin(), pt.ext.end());
    const auto plan = lowbit::detail::make_engine_plan<2>(out, xd, {&pd, &sd}, yd);
    for (unsigned threads : {1u, 2u}) {
      for (bool simd : {true, false}) {
        for (int runner : {0, 1}) {  // run_piece, run_piece_compact
          CAPTURE(pt.name, threads, simd, runner);
          lowbit::execution ex;
          ex.threads = threads;
          ex.min_elements_per_thread = 1 << 16;
          std::fill(ybuf.begin(), ybuf.end(), -1.0);
          lowbit::detail::elementwise(plan, x.data(), std::array<const double*, 2>{p0.data(), &p1}, yd.data,
                                      [&](const lowbit::detail::piece<double, 2>& pc) {
                                        run_with(runner, write_index{}, pc, simd);
                                      },
                                      ex);
          std::size_t bad = 0;
          for (std::size_t f = 0; f < n; ++f) bad += ybuf[static_cast<std::size_t>(yo[f] - lo)] != double(f);
          CHECK(bad == 0);
        }
      }
    }
  }
}

TEST_CASE("A declining kernel's declined batches are computed on the scalar path, every piece kind",
          "[elementwise][decline]") {
  struct pattern {
    const char* name;
    std::vector<std::size_t> ext;
    std::vector<std::size_t> pext;  // parameter 0's extents
    std::size_t run_lo = 200, run_hi = 240;  // a run of negative x
  };
  // The long runs decline far more batches than a batch loop notes before
  // it stops (declined_batches::capacity), so that the loops stop and resume,
  // at row ends too.
  const std::vector<pattern> patterns = {
      {"flat per-tensor", {1000}, {}},
      {"flat per-element", {1000}, {1000}},
      {"per-channel short rows (row mode)", {37, 40}, {37, 1}},
      {"per-channel long rows", {5, 700}, {5, 1}},
      {"per-column (buffered parameter)", {9, 24}, {24}},
      {"flat per-tensor, most batches declined", {6000}, {}, 100, 5900},
      {"flat per-element, most batches declined", {6000}, {6000}, 100, 5900},
      {"row mode, most batches declined", {150, 40}, {150, 1}, 40, 5960},
  };
  for (const pattern& pt : patterns) {
    std::size_t n = 1;
    for (std::size_t e : pt.ext) n *= e;
    // x = +-f: negative at isolated positions, at a run (several declined
    // batches in a row, across row ends) and at the last element.
    const bool most = pt.run_hi - pt.run_lo > n / 2;
    std::vector<double> x(n);
    for (std::size_t f = 0; f < n; ++f) {
      const bool neg = f % 97 == 5 || (f >= pt.run_lo && f < pt.run_hi) || f + 1 == n;
      x[f] = neg ? -double(f) : double(f);
    }
    std::size_t pn = 1;
    for (std::size_t e : pt.pext) pn *= e;
    std::vector<double> p0(pn);
    for (std::size_t i = 0; i < pn; ++i) p0[i] = 2.0 + double(i % 5);
    const double p1 = 3.0;
    const std::vector<std::ptrdiff_t> pstr = row_major(pt.pext);
    // p0 at each output position (numpy broadcasting), for the expected values.
    const std::vector<std::ptrdiff_t> po = offsets(pt.ext, [&] {
      std::vector<std::ptrdiff_t> st(pt.ext.size(), 0);
      for (std::size_t r = 0; r < pt.pext.size(); ++r) {
        const std::size_t d = pt.ext.size() - pt.pext.size() + r;
        st[d] = pt.pext[r] == 1 ? 0 : pstr[r];
      }
      return st;
    }());
    std::vector<double> y(n);
    const auto plan = plan_x_p0_p1(pt.ext, pt.pext, x.data(), p0.data(), &p1, y.data());
    for (bool simd : {true, false}) {
      for (int runner : {0, 1}) {  // run_piece, run_piece_compact
        CAPTURE(pt.name, simd, runner);
        std::fill(y.begin(), y.end(), -1.0);
        lowbit::detail::elementwise(plan, x.data(), std::array<const double*, 2>{p0.data(), &p1}, y.data(),
                                    [&](const lowbit::detail::piece<double, 2>& pc) {
                                      run_with(runner, decline_negative{}, pc, simd);
                                    },
                                    lowbit::execution{});
        std::size_t bad = 0, scalar = 0, unmarked_negative = 0;
        for (std::size_t f = 0; f < n; ++f) {
          const double base = x[f] * p0[static_cast<std::size_t>(po[f])] + p1;
          bad += y[f] != base && y[f] != base + 0.25;
          scalar += y[f] == base + 0.25;
          unmarked_negative += x[f] < 0 && y[f] != base + 0.25;
        }
        CHECK(bad == 0);
        CHECK(unmarked_negative == 0);
        if (simd && most)
          CHECK(scalar > n / 2);  // most batches were declined
        else if (simd)
          CHECK(scalar < n / 2);  // most batches were not declined
        else
          CHECK(scalar == n);
      }
    }
  }
}

TEST_CASE("The scalar loop runs a kernel's scalar_kernel: tails, peels, declines and the scalar path",
          "[elementwise][scalar_kernel]") {
  // 1003 elements: per tensor (one piece, a tail), per element (loaded), and
  // per channel in row mode (rows of 17: a tail in every row).
  struct pattern {
    const char* name;
    std::vector<std::size_t> ext, pext;
  };
  const std::vector<pattern> patterns = {
      {"per-tensor", {1003}, {}}, {"per-element", {1003}, {1003}}, {"row mode", {59, 17}, {59, 1}}};
  for (const pattern& pt : patterns) {
    std::size_t n = 1;
    for (std::size_t e : pt.ext) n *= e;
    std::vector<double> x(n), y(n);
    for (std::size_t f = 0; f < n; ++f) x[f] = double(f);
    std::size_t pn = 1;
    for (std::size_t e : pt.pext) pn *= e;
    const std::vector<double> p0(pn, 2.0);
    const double p1 = 3.0;
    const auto plan = plan_x_p0_p1(pt.ext, pt.pext, x.data(), p0.data(), &p1, y.data());
    const std::size_t L = lowbit::detail::batch<double>::size;
    for (bool simd : {true, false}) {
      for (int runner : {0, 1}) {
        CAPTURE(pt.name, simd, runner);
        std::fill(y.begin(), y.end(), -1.0);
        lowbit::detail::elementwise(plan, x.data(), std::array<const double*, 2>{p0.data(), &p1}, y.data(),
                                    [&](const lowbit::detail::piece<double, 2>& pc) {
                                      run_with(runner, scalar_marked{}, pc, simd);
                                    },
                                    lowbit::execution{});
        std::size_t bad = 0, marked = 0;
        for (std::size_t f = 0; f < n; ++f) {
          const double base = x[f] * 2.0 + 3.0;
          bad += y[f] != base && y[f] != base + 0.5;
          marked += y[f] == base + 0.5;
        }
        CHECK(bad == 0);
        // The scalar path is all scalar_kernel. With SIMD, the loaded loop
        // (per element, and every piece on run_piece_compact) leaves the
        // tail to it (1003 and 17 are odd); the row loop (per tensor and
        // row mode on run_piece) writes each row's last elements with the
        // row's last batch, so nothing is scalar.
        const bool row_loop = runner == 0 && pt.pext.size() != 1;
        if (!simd || L == 1)
          CHECK(marked == n);
        else if (row_loop)
          CHECK(marked == 0);
        else
          CHECK((marked > 0 && marked < n));
      }
    }
  }
}

TEST_CASE("The row loop's last batch of a row: every row length, in place and not, declining or not",
          "[elementwise][decline]") {
  // Rows of 1 to 3L + 1 elements (row mode from L on, shorter rows gathered
  // into chunks; a row of kL + t ends
  // with a batch that shares L - t lanes with the one before), one p0 per
  // row. decline_negative declines a batch with a negative lane: x is
  // negative at the first lane of each row's last whole batch (declined:
  // the scalar loop writes it later, after the row's last batch, which
  // must not have changed x there when x is y) and, in every third row, at
  // the row's last element (the last batch declined too).
  const std::size_t L = lowbit::detail::batch<double>::size;
  for (std::size_t cols = 1; cols <= 3 * L + 1; ++cols) {
    const std::size_t rows = 7, n = rows * cols, body = cols / L * L;
    std::vector<double> x(n), p0(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      p0[r] = 2.0 + double(r % 5);
      for (std::size_t c = 0; c < cols; ++c) {
        const bool neg = (body >= L && c == body - L) || (r % 3 == 0 && c + 1 == cols);
        const double v = double(r * cols + c + 1);
        x[r * cols + c] = neg ? -v : v;
      }
    }
    const double p1 = 3.0;
    for (const bool in_place : {false, true}) {
      for (const bool declining : {false, true}) {
        for (const bool simd : {true, false}) {
          CAPTURE(cols, in_place, declining, simd);
          std::vector<double> out(n, -1.0), xin = x;
          const double* xp = xin.data();
          double* yp = in_place ? xin.data() : out.data();
          const auto plan = plan_x_p0_p1({rows, cols}, {rows, 1}, xp, p0.data(), &p1, yp);
          lowbit::detail::elementwise(plan, xp, std::array<const double*, 2>{p0.data(), &p1}, yp,
                                      [&](const lowbit::detail::piece<double, 2>& pc) {
                                        if (declining)
                                          lowbit::detail::run_piece(decline_negative{}, pc, simd);
                                        else
                                          lowbit::detail::run_piece(mul_add_mark{}, pc, simd);
                                      },
                                      lowbit::execution{});
          const double* y = in_place ? xin.data() : out.data();
          std::size_t bad = 0, scalar = 0;
          for (std::size_t f = 0; f < n; ++f) {
            const double base = x[f] * p0[f / cols] + p1;
            const double mark = declining ? 0.25 : 0.5;
            bad += y[f] != base && y[f] != base + mark;
            scalar += y[f] == base + mark;
            // A negative x is declined: the scalar loop's bits.
            if (declining && simd && x[f] < 0) bad += y[f] != base + mark;
          }
          CHECK(bad == 0);
          // Without SIMD, or rows shorter than a batch: all scalar. A
          // kernel that never declines: no element scalar from row mode on.
          if (!simd)
            CHECK(scalar == n);
          else if (!declining && cols >= L)
            CHECK(scalar == 0);
        }
      }
    }
  }
}

TEST_CASE("Per-channel parameters over long contiguous rows run as one row-mode piece", "[elementwise]") {
  // [5, 700] with one parameter per row: 5 rows in one piece (row mode),
  // not one piece per row; with streaming stores (a large call) per row.
  std::vector<float> x(5 * 700, 1.0f), y(5 * 700), p(5, 2.0f);
  const nd<const float> xd = view_of<const float>(x.data(), {5, 700}, {700, 1});
  const nd<const float> pd = view_of<const float>(p.data(), {5, 1}, {1, 1});
  const nd<float> yd = view_of<float>(y.data(), {5, 700}, {700, 1});
  const lowbit::shape out{5, 700};
  const auto plan = lowbit::detail::make_engine_plan<1>(out, xd, {&pd}, yd);
  for (const bool stream : {false, true}) {
    CAPTURE(stream);
    lowbit::execution ex;
    ex.stream_min_elements = stream ? 1 : std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t> rows;
    lowbit::detail::elementwise(plan, x.data(), std::array<const float*, 1>{p.data()}, y.data(),
                                [&](const lowbit::detail::piece<float, 1>& pc) {
                                  rows.push_back(pc.rows);
                                  lowbit::detail::run_piece(mul{}, pc, true);
                                },
                                ex);
    if (stream)
      CHECK(rows == std::vector<std::size_t>(5, 0));
    else
      CHECK(rows == std::vector<std::size_t>{5});
    CHECK(std::all_of(y.begin(), y.end(), [](float v) { return v == 2.0f; }));
  }
}

namespace {

/// A piece's every field, for comparing the two routes (s by its bits).
struct piece_fields {
  const float* x;
  float* y;
  std::array<const float*, 2> p;
  std::array<std::uint32_t, 2> s;
  std::array<bool, 2> vary;
  std::size_t n, rows, cols;
  std::array<std::ptrdiff_t, 2> row_stride;
  bool loaded, stream;
  std::size_t first;
  std::ptrdiff_t step;
  bool operator==(const piece_fields&) const = default;
};

piece_fields fields_of(const lowbit::detail::piece<float, 2>& pc) {
  return {pc.x,    pc.y,    pc.p,          {std::bit_cast<std::uint32_t>(pc.s[0]), std::bit_cast<std::uint32_t>(pc.s[1])},
          pc.vary, pc.n,    pc.rows,       pc.cols,
          pc.row_stride,    pc.loaded,     pc.stream,
          pc.index.first,   pc.index.step};
}

/// y = x * p0 + p1, to compare the results of the two routes.
struct mul_add {
  template <class V>
  V operator()(V x, V a, V b) const noexcept {
    return x * a + b;
  }
};

/// Runs a call on one route, the direct route `route` (run_dense_constant,
/// run_dense_rows: it must take the call) or the plan (`direct` false),
/// each piece computed with mul_add; returns the pieces' fields.
template <class Route>
std::vector<piece_fields> record_route(bool direct, Route&& route, const lowbit::shape& out,
                                       const nd<const float>& xd, const std::array<const nd<const float>*, 2>& ops,
                                       const nd<float>& yd, const lowbit::execution& ex) {
  using lowbit::detail::piece;
  std::vector<piece_fields> seen;
  auto f = [&](const piece<float, 2>& pc) {
    seen.push_back(fields_of(pc));
    lowbit::detail::run_piece(mul_add{}, pc, true);
  };
  const lowbit::detail::piece_sink<float, 2> sink{
      &f, [](const void* o, const piece<float, 2>& pc) { (*static_cast<const decltype(f)*>(o))(pc); }};
  if (direct) {
    REQUIRE(route(out, xd, ops, yd, sink, ex));
  } else {
    lowbit::detail::elementwise(lowbit::detail::make_engine_plan(out, xd, ops, yd), xd.data,
                                lowbit::detail::data_of(ops), yd.data, sink, ex);
  }
  return seen;
}

}  // namespace

TEST_CASE("A row-mode piece of blocks reads row r's operands at r % period: every loop, declining or not",
          "[elementwise][decline]") {
  // rows_piece with blocks (the row route's x [N, C, H, W] with a scale
  // [1, C, 1, 1]): p0 one value per row of a block, p1 one value; rows of 1
  // to 2L + 3 elements, blocks of 1 to 3 rows, 1 to 4 blocks; the row loop
  // (run_piece), the loaded loop alone (run_piece_compact), the scalar
  // path, and a declining kernel (x negative in every fifth row's first
  // batch: the scalar loop after the row loop, with row_operands). Each
  // element against x * p0[row % rows] + p1, exactly.
  const std::size_t L = lowbit::detail::batch<double>::size;
  for (std::size_t cols = 1; cols <= 2 * L + 3; ++cols)
    for (std::size_t rows = 1; rows <= 3; ++rows)
      for (std::size_t blocks = 1; blocks <= 4; ++blocks) {
        const std::size_t n = blocks * rows * cols;
        std::vector<double> x(n), p0(rows);
        for (std::size_t r = 0; r < rows; ++r) p0[r] = 2.0 + double(r);
        for (std::size_t f = 0; f < n; ++f) x[f] = double(f + 1) * ((f / cols) % 5 == 1 && f % cols == 0 ? -1 : 1);
        const double p1 = 0.5;
        for (int loop = 0; loop < 4; ++loop)
          for (const bool simd : {true, false}) {
            CAPTURE(cols, rows, blocks, loop, simd);
            std::vector<double> y(n, -1.0);
            const auto pc = lowbit::detail::rows_piece<double, 2>(x.data(), y.data(), rows, cols,
                                                                  {p0.data(), &p1}, {true, false}, blocks);
            REQUIRE(pc.rows == blocks * rows);
            REQUIRE(pc.period == (blocks > 1 ? rows : 0));
            if (loop == 0) lowbit::detail::run_piece(mul_add{}, pc, simd);
            if (loop == 1) lowbit::detail::run_piece_compact(mul_add{}, pc, simd);
            if (loop == 2) lowbit::detail::run_piece(decline_negative{}, pc, simd);
            if (loop == 3) lowbit::detail::for_each_chunk(pc, L + 1, [&](const auto& c) {
              lowbit::detail::run_piece(mul_add{}, c, simd);
            });
            std::size_t bad = 0;
            for (std::size_t f = 0; f < n; ++f) {
              const double want = x[f] * p0[f / cols % rows] + p1;
              // decline_negative's scalar operator adds 0.25 (its scalar
              // loop: every element without SIMD or in a row under a batch,
              // a declined batch's elements, maybe a row's last ones).
              bad += y[f] != want && !(loop == 2 && y[f] == want + 0.25);
            }
            CHECK(bad == 0);
          }
      }
}

TEST_CASE("The direct route of constant operands hands the kernel the general route's piece", "[elementwise]") {
  // Dense x and y of these shapes (extents 1 anywhere, with odd strides:
  // they do not matter), two rank-0 operands.
  struct layout {
    std::vector<std::size_t> ext;
    std::vector<std::ptrdiff_t> str;
  };
  const std::vector<layout> layouts{{{2}, {1}},          {{37}, {1}},          {{1, 300}, {5, 1}},
                                    {{3, 1, 5}, {5, 9, 1}}, {{4, 1}, {1, -3}},    {{2, 3, 64}, {192, 64, 1}}};
  std::vector<float> buf(2 * 384 + 64);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i) * 0.37f - 50.0f;
  const float a = 1.5f, b = -0.25f;
  nd<const float> ad, bd;
  ad.data = &a;
  bd.data = &b;
  for (const layout& l : layouts)
    for (const bool in_place : {false, true})
      for (const bool stream : {false, true}) {
        CAPTURE(l.ext, in_place, stream);
        const lowbit::shape out(l.ext.begin(), l.ext.end());
        const std::size_t n = out.count();
        std::vector<float> xs(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
        std::vector<float> y1(n, 7.0f);
        lowbit::execution ex;
        ex.stream_min_elements = stream ? 1 : std::numeric_limits<std::size_t>::max();
        const std::array<const nd<const float>*, 2> ops{&ad, &bd};
        auto run_route = [&](bool direct, std::vector<float>& xv, std::vector<float>& yv) {
          float* yp = in_place ? xv.data() : yv.data();
          const nd<const float> xd = view_of<const float>(xv.data(), l.ext, l.str);
          const nd<float> yd = view_of<float>(yp, l.ext, l.str);
          return record_route(
              direct, [](const auto&... a) { return lowbit::detail::run_dense_constant(a...); }, out, xd, ops, yd, ex);
        };
        const std::vector<piece_fields> direct = run_route(true, xs, y1);
        // The general route on the same buffers, refilled (the pieces'
        // pointers must be the same too).
        const std::vector<float> y1_copy = y1, xs_copy = xs;
        std::copy_n(buf.begin(), n, xs.begin());  // in place: the same buffer
        y1.assign(n, 7.0f);
        const std::vector<piece_fields> general = run_route(false, xs, y1);
        REQUIRE(direct.size() == 1);
        CHECK(direct == general);
        for (std::size_t i = 0; i < n; ++i) {
          CHECK(std::bit_cast<std::uint32_t>(xs_copy[i]) == std::bit_cast<std::uint32_t>(xs[i]));
          CHECK(std::bit_cast<std::uint32_t>(y1_copy[i]) == std::bit_cast<std::uint32_t>(y1[i]));
        }
      }
}

TEST_CASE("The direct route of per-row operands hands the kernel the general route's piece", "[elementwise]") {
  constexpr std::size_t L = lowbit::detail::batch<float>::size;
  // x and y dense of shape `out`; operand 0 of shape `p0` (dense, strides
  // row-major), operand 1 a scalar or one value of shape [1, 1].
  struct layout {
    std::vector<std::size_t> out;
    std::vector<std::size_t> p0;
    bool p1_one;  // operand 1 of shape [1, 1] instead of rank 0
  };
  const std::size_t w = 2 * L, w3 = 3 * L + 5;
  const std::vector<layout> layouts{
      {{64, 64}, {64, 1}, false},          {{5, w}, {5, 1}, true},         {{2, 3, w3}, {2, 3, 1}, false},
      {{1, 7, w}, {7, 1}, false},          {{4, 1, w}, {4, 1, 1}, true},   {{3, 2, 2, L}, {3, 1, 1, 1}, false},
      {{1, 6, 1, w3}, {1, 6, 1, 1}, false}, {{4, w3}, {1, 1}, false},       {{4, w}, {1}, true},
      {{2, 3, w}, {1, 1, 1}, true},         {{6, L}, {6, 1}, false},        {{5, L + 3}, {5, 1}, true}};
  std::vector<float> buf(2 * 64 * 64 + 64), pv(64);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i) * 0.37f - 50.0f;
  for (std::size_t i = 0; i < pv.size(); ++i) pv[i] = 0.5f + static_cast<float>(i) * 0.25f;
  const float b = -0.25f;
  for (const layout& l : layouts)
    for (const bool in_place : {false, true}) {
      CAPTURE(l.out, l.p0, l.p1_one, in_place);
      const lowbit::shape out(l.out.begin(), l.out.end());
      const std::size_t n = out.count();
      std::vector<std::ptrdiff_t> xs_str(l.out.size()), p0_str(l.p0.size());
      std::ptrdiff_t st = 1;
      for (std::size_t r = l.out.size(); r-- > 0;) {
        xs_str[r] = st;
        st *= static_cast<std::ptrdiff_t>(l.out[r]);
      }
      st = 1;
      for (std::size_t r = l.p0.size(); r-- > 0;) {
        p0_str[r] = st;
        st *= static_cast<std::ptrdiff_t>(l.p0[r]);
      }
      const nd<const float> p0d = view_of<const float>(pv.data(), l.p0, p0_str);
      nd<const float> p1d = l.p1_one ? view_of<const float>(&b, {1, 1}, {1, 1}) : nd<const float>{};
      if (!l.p1_one) p1d.data = &b;
      const std::array<const nd<const float>*, 2> ops{&p0d, &p1d};
      std::vector<float> xv(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n)), yv(n, 7.0f);
      auto run_route = [&](bool direct) {
        std::copy_n(buf.begin(), n, xv.begin());
        yv.assign(n, 7.0f);
        float* yp = in_place ? xv.data() : yv.data();
        const nd<const float> xd = view_of<const float>(xv.data(), l.out, xs_str);
        const nd<float> yd = view_of<float>(yp, l.out, xs_str);
        const auto seen = record_route(
            direct, [](const auto&... a) { return lowbit::detail::run_dense_rows(a...); }, out, xd, ops, yd, {});
        return std::pair{seen, in_place ? xv : yv};
      };
      const auto [direct, y_direct] = run_route(true);
      const auto [general, y_general] = run_route(false);
      REQUIRE(direct.size() == 1);
      CHECK(direct == general);
      // The values: y = x * p0[row] + b.
      REQUIRE(y_direct.size() == n);
      const std::size_t rows_of_p0 = [&] {
        std::size_t c = 1;
        for (std::size_t e : l.p0) c *= e;
        return c;
      }();
      for (std::size_t i = 0; i < n; ++i) {
        const float pr = pv[i / (n / rows_of_p0)];
        CHECK(std::bit_cast<std::uint32_t>(y_direct[i]) == std::bit_cast<std::uint32_t>(buf[i] * pr + b));
        CHECK(std::bit_cast<std::uint32_t>(y_general[i]) == std::bit_cast<std::uint32_t>(y_direct[i]));
      }
    }
}

TEST_CASE("The per-row route declines every call it does not cover, having done nothing", "[elementwise]") {
  using lowbit::detail::piece;
  constexpr std::size_t L = lowbit::detail::batch<float>::size;
  const std::size_t w = 2 * L;
  std::vector<float> x(16 * w, 1.0f), y(16 * w, 0.0f), p(16 * w, 2.0f);
  const float c = 3.0f;
  nd<const float> cd;
  cd.data = &c;
  bool called = false;
  auto f = [&](const piece<float, 2>&) { called = true; };
  const lowbit::detail::piece_sink<float, 2> sink{
      &f, [](const void* o, const piece<float, 2>& pc) { (*static_cast<const decltype(f)*>(o))(pc); }};
  const lowbit::execution one;
  auto declines = [&](const lowbit::shape& out, const nd<const float>& o0, const lowbit::execution& ex = {},
                      std::vector<std::ptrdiff_t> xstr = {}) {
    std::vector<std::size_t> ext(out.begin(), out.end());
    if (xstr.empty()) {
      xstr.resize(ext.size());
      std::ptrdiff_t st = 1;
      for (std::size_t r = ext.size(); r-- > 0;) {
        xstr[r] = st;
        st *= static_cast<std::ptrdiff_t>(ext[r]);
      }
    }
    const nd<const float> xd = view_of<const float>(x.data(), ext, xstr);
    std::vector<std::ptrdiff_t> ystr(ext.size());
    std::ptrdiff_t st = 1;
    for (std::size_t r = ext.size(); r-- > 0;) {
      ystr[r] = st;
      st *= static_cast<std::ptrdiff_t>(ext[r]);
    }
    const nd<float> yd = view_of<float>(y.data(), ext, ystr);
    called = false;
    const bool ran = lowbit::detail::run_dense_rows(out, xd, std::array<const nd<const float>*, 2>{&o0, &cd}, yd, sink, ex);
    return !ran && !called;
  };
  lowbit::execution two;
  two.threads = 2;
  two.min_elements_per_thread = 1;
  lowbit::execution stream;
  stream.stream_min_elements = 1;
  const lowbit::shape out{8, w};
  CHECK(declines(out, view_of<const float>(p.data(), {8, 1}, {1, 1}), two));         // threads
  CHECK(declines(out, view_of<const float>(p.data(), {8, 1}, {1, 1}), stream));      // streaming stores
  CHECK(declines(out, view_of<const float>(p.data(), {8, 1}, {2, 1})));              // rows not dense
  CHECK(declines(out, view_of<const float>(p.data(), {8, 1}, {-1, 1})));             // rows backwards
  CHECK(declines(out, view_of<const float>(p.data(), {8, w}, {w, 1})));              // per element
  CHECK(declines(out, view_of<const float>(p.data(), {1, w}, {w, 1})));              // per column
  if (L > 1) CHECK(declines({8, L - 1}, view_of<const float>(p.data(), {8, 1}, {1, 1})));  // rows under a batch
  CHECK(declines({2, 8, w}, view_of<const float>(p.data(), {8, 1}, {1, 1})));       // repeated over a leading dimension
  CHECK(declines({2, 8, w}, view_of<const float>(p.data(), {1, 8, 1}, {8, 1, 1}))); // the same, rank 3
  CHECK(declines({1, 1}, view_of<const float>(p.data(), {1, 1}, {1, 1})));          // one element
  CHECK(declines(out, view_of<const float>(p.data(), {8, 1}, {1, 1}), one, {1, 8})); // x transposed
  CHECK(std::all_of(y.begin(), y.end(), [](float v) { return v == 0.0f; }));
  // And it covers the per-channel call.
  called = false;
  const nd<const float> xd = view_of<const float>(x.data(), {8, w}, {static_cast<std::ptrdiff_t>(w), 1});
  const nd<float> yd = view_of<float>(y.data(), {8, w}, {static_cast<std::ptrdiff_t>(w), 1});
  const nd<const float> pd = view_of<const float>(p.data(), {8, 1}, {1, 1});
  CHECK(lowbit::detail::run_dense_rows(out, xd, std::array<const nd<const float>*, 2>{&pd, &cd}, yd, sink, one));
  CHECK(called);
}

TEST_CASE("require_elements reports the first element the predicate rejects, dense or not", "[elementwise]") {
  // Every length through a few batches, one bad element at each position
  // (NaN or a negative value), dense and at stride 2: the first bad element
  // in row-major order is reported, with its value and flat index.
  const auto ok = [](auto v) { return lowbit::detail::positive_scale(v); };
  constexpr std::size_t L = lowbit::detail::batch<float>::size;
  for (std::size_t n = 1; n <= 3 * L + 1; ++n)
    for (const std::ptrdiff_t stride : {std::ptrdiff_t(1), std::ptrdiff_t(2)})
      for (std::size_t bad = 0; bad <= n; ++bad)  // bad == n: none
        for (const float v : {std::numeric_limits<float>::quiet_NaN(), -1.0f, 0.0f,
                              std::numeric_limits<float>::infinity()}) {
          CAPTURE(n, stride, bad, v);
          std::vector<float> d(n * 2, 1.5f);
          if (bad < n) d[bad * static_cast<std::size_t>(stride)] = v;
          if (bad + 1 < n) d[(bad + 1) * static_cast<std::size_t>(stride)] = -2.0f;  // a later one: not reported
          // A 2-D view [n, 1] (the trailing extent 1 at any stride).
          const nd<const float> t = view_of<const float>(d.data(), {n, 1}, {stride, 7});
          std::size_t at = n;
          float seen = 0.0f;
          bool threw = false;
          try {
            lowbit::detail::require_elements(t, ok, [&](float x, std::size_t i) {
              at = i;
              seen = x;
              throw 1;
            });
          } catch (int) {
            threw = true;
          }
          if (bad < n) {
            REQUIRE(threw);
            CHECK(at == bad);
            CHECK(std::bit_cast<std::uint32_t>(seen) == std::bit_cast<std::uint32_t>(v));
          } else {
            CHECK_FALSE(threw);
          }
        }
}
TEST_CASE("The direct route declines every call it does not cover, having done nothing", "[elementwise]") {
  using lowbit::detail::piece;
  std::vector<float> x(64, 1.0f), y(64, 0.0f), p(64, 2.0f);
  const float c = 3.0f;
  nd<const float> cd;
  cd.data = &c;
  const nd<const float> pd = view_of<const float>(p.data(), {64}, {1});
  const nd<const float> p1 = view_of<const float>(p.data(), {1}, {1});  // one element, but rank 1
  bool called = false;
  auto f = [&](const piece<float, 2>&) { called = true; };
  const lowbit::detail::piece_sink<float, 2> sink{
      &f, [](const void* o, const piece<float, 2>& pc) { (*static_cast<const decltype(f)*>(o))(pc); }};
  auto declines = [&](const lowbit::shape& out, const nd<const float>& xd, const nd<const float>& o0,
                      const nd<float>& yd, const lowbit::execution& ex) {
    called = false;
    const bool ran = lowbit::detail::run_dense_constant(out, xd, std::array<const nd<const float>*, 2>{&o0, &cd}, yd,
                                                        sink, ex);
    return !ran && !called;
  };
  const lowbit::execution one;
  lowbit::execution two;
  two.threads = 2;
  two.min_elements_per_thread = 1;
  const nd<const float> xd = view_of<const float>(x.data(), {64}, {1});
  const nd<float> yd = view_of<float>(y.data(), {64}, {1});
  CHECK(declines({64}, xd, pd, yd, one));                                   // an operand along x
  CHECK(declines({64}, xd, p1, yd, one));                                   // an operand of rank 1
  CHECK(declines({32}, view_of<const float>(x.data(), {32}, {2}), cd, view_of<float>(y.data(), {32}, {1}), one));
  CHECK(declines({32}, view_of<const float>(x.data(), {32}, {1}), cd, view_of<float>(y.data(), {32}, {2}), one));
  CHECK(declines({8, 8}, view_of<const float>(x.data(), {8, 8}, {1, 8}), cd, view_of<float>(y.data(), {8, 8}, {8, 1}),
                 one));                                                     // x transposed
  CHECK(declines({8, 8}, view_of<const float>(x.data(), {8, 8}, {8, 1}), cd, view_of<float>(y.data(), {1, 8, 8}, {64, 8, 1}),
                 one));                                                     // y of another rank
  CHECK(declines({1}, view_of<const float>(x.data(), {1}, {1}), cd, view_of<float>(y.data(), {1}, {1}), one));  // one element
  CHECK(declines({0}, view_of<const float>(x.data(), {0}, {1}), cd, view_of<float>(y.data(), {0}, {1}), one));  // none
  CHECK(declines({64}, xd, cd, yd, two));                                   // threads
  CHECK(std::all_of(y.begin(), y.end(), [](float v) { return v == 0.0f; }));
  // And it covers the plain call.
  called = false;
  CHECK(lowbit::detail::run_dense_constant(lowbit::shape{64}, xd, std::array<const nd<const float>*, 2>{&cd, &cd}, yd,
                                           sink, one));
  CHECK(called);
}
