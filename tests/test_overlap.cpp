// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/overlap.hpp: whether two strided tensors
// share memory and whether one maps two indices to the same element,
// checked against a brute-force oracle that lists every byte; and the rule
// every operator enforces with it (docs/errors.md, docs/semantics.md "In
// place"): y shares no memory with a parameter, and with x only when it is
// x itself. Each operator and each parameter position is tried, with the
// issue's reproducers, and the buffer must be untouched after the error.
#include <lowbit/detail/overlap.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <lowbit/lowbit.hpp>

#include "support/catch.hpp"
#include "support/checks.hpp"
#include "support/test_util.hpp"

namespace {

using lowbit::strided_view;
using lowbit::detail::nd_geom;
using lowbit::detail::overlap_answer;

/// A geometry of `rank` extents and strides.
nd_geom geom(std::initializer_list<std::size_t> ext, std::initializer_list<std::ptrdiff_t> str) {
  nd_geom g;
  g.rank = ext.size();
  std::size_t r = 0;
  for (std::size_t e : ext) g.ext[r++] = e;
  r = 0;
  for (std::ptrdiff_t s : str) g.str[r++] = s;
  return g;
}

/// Calls f(offset in elements) for every index of g, row-major.
template <class F>
void each_offset(const nd_geom& g, F&& f) {
  std::size_t count = 1;
  for (std::size_t r = 0; r < g.rank; ++r) count *= g.ext[r];
  for (std::size_t flat = 0; flat < count; ++flat) {
    std::size_t rest = flat;
    std::ptrdiff_t off = 0;
    std::array<std::size_t, lowbit::max_rank> idx{};
    for (std::size_t r = g.rank; r-- > 0;) {
      idx[r] = rest % g.ext[r];
      rest /= g.ext[r];
      off += static_cast<std::ptrdiff_t>(idx[r]) * g.str[r];
    }
    f(off, idx);
  }
}

std::ptrdiff_t offset_of(const nd_geom& g, const std::array<std::size_t, lowbit::max_rank>& idx) {
  std::ptrdiff_t off = 0;
  for (std::size_t r = 0; r < g.rank; ++r) {
    REQUIRE(idx[r] < g.ext[r]);
    off += static_cast<std::ptrdiff_t>(idx[r]) * g.str[r];
  }
  return off;
}

/// A random geometry: rank 0 to 3, extents 0 to 5, strides -6 to 6.
nd_geom random_geom(std::mt19937& rng) {
  nd_geom g;
  g.rank = rng() % 4;
  for (std::size_t r = 0; r < g.rank; ++r) {
    g.ext[r] = rng() % 8 == 0 ? 0 : 1 + rng() % 5;
    g.str[r] = static_cast<std::ptrdiff_t>(rng() % 13) - 6;
  }
  return g;
}

}  // namespace

TEST_CASE("overlap: mem_overlap agrees with a byte-by-byte oracle", "[overlap]") {
  std::mt19937 rng(20261125);
  const std::size_t sizes[] = {1, 2, 4, 8};
  int found = 0, none = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const nd_geom ga = random_geom(rng), gb = random_geom(rng);
    const std::size_t ea = sizes[rng() % 4], eb = sizes[rng() % 4];
    // Bases in a notional arena, far enough from 0 for negative strides.
    const std::uintptr_t base_a = 4096 + rng() % 64, base_b = 4096 + rng() % 64;
    std::set<std::uintptr_t> bytes_a;
    each_offset(ga, [&](std::ptrdiff_t off, const auto&) {
      for (std::size_t k = 0; k < ea; ++k) bytes_a.insert(base_a + static_cast<std::uintptr_t>(off * static_cast<std::ptrdiff_t>(ea)) + k);
    });
    bool oracle = false;
    each_offset(gb, [&](std::ptrdiff_t off, const auto&) {
      for (std::size_t k = 0; k < eb; ++k)
        oracle = oracle || bytes_a.count(base_b + static_cast<std::uintptr_t>(off * static_cast<std::ptrdiff_t>(eb)) + k);
    });
    const lowbit::detail::mem_tensor a{"a", base_a, ea, &ga}, b{"b", base_b, eb, &gb};
    std::array<std::size_t, lowbit::max_rank> ia{}, ib{};
    const overlap_answer got = lowbit::detail::mem_overlap(a, b, ia, ib);
    INFO("trial " << trial);
    REQUIRE(got != overlap_answer::unknown);
    REQUIRE((got == overlap_answer::found) == oracle);
    if (got == overlap_answer::found) {
      ++found;
      // The witnesses are indices of the two tensors that share a byte.
      const std::uintptr_t pa = base_a + static_cast<std::uintptr_t>(offset_of(ga, ia) * static_cast<std::ptrdiff_t>(ea));
      const std::uintptr_t pb = base_b + static_cast<std::uintptr_t>(offset_of(gb, ib) * static_cast<std::ptrdiff_t>(eb));
      CHECK(pa < pb + eb);
      CHECK(pb < pa + ea);
    } else {
      ++none;
    }
  }
  // Both answers are exercised, many times.
  CHECK(found > 2000);
  CHECK(none > 2000);
}

TEST_CASE("overlap: self_overlap agrees with a brute-force oracle", "[overlap]") {
  std::mt19937 rng(7);
  int found = 0, none = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    nd_geom g = random_geom(rng);
    if (trial % 3 == 0 && g.rank > 0) g.str[0] = 0;  // zero strides too
    std::set<std::ptrdiff_t> seen;
    bool oracle = false;
    each_offset(g, [&](std::ptrdiff_t off, const auto&) { oracle = oracle || !seen.insert(off).second; });
    std::array<std::size_t, lowbit::max_rank> i1{}, i2{};
    const overlap_answer got = lowbit::detail::self_overlap(g, i1, i2);
    INFO("trial " << trial);
    REQUIRE(got != overlap_answer::unknown);
    REQUIRE((got == overlap_answer::found) == oracle);
    if (got == overlap_answer::found) {
      ++found;
      CHECK(i1 != i2);
      CHECK(offset_of(g, i1) == offset_of(g, i2));
    } else {
      ++none;
    }
  }
  CHECK(found > 2000);
  CHECK(none > 2000);
}

TEST_CASE("overlap: large views are decided without a search or at once", "[overlap]") {
  std::array<std::size_t, lowbit::max_rank> i1{}, i2{};
  // Row-major, padded and transposed layouts of 2^40 elements: nested strides.
  CHECK(lowbit::detail::self_overlap(geom({1u << 20, 1u << 20}, {1 << 20, 1}), i1, i2) == overlap_answer::none);
  CHECK(lowbit::detail::self_overlap(geom({1u << 20, 1u << 20}, {1, 1 << 20}), i1, i2) == overlap_answer::none);
  CHECK(lowbit::detail::self_overlap(geom({1u << 20, 1u << 19}, {-(1 << 21), 3}), i1, i2) == overlap_answer::none);
  // Strides that alias far away: 3 * 5 == 5 * 3.
  REQUIRE(lowbit::detail::self_overlap(geom({1000000, 1000000}, {3, 5}), i1, i2) == overlap_answer::found);
  CHECK(static_cast<std::ptrdiff_t>(i1[0]) * 3 + static_cast<std::ptrdiff_t>(i1[1]) * 5 ==
        static_cast<std::ptrdiff_t>(i2[0]) * 3 + static_cast<std::ptrdiff_t>(i2[1]) * 5);
  // Coprime strides whose sums never coincide within the extents.
  CHECK(lowbit::detail::self_overlap(geom({5, 1000000}, {1000001, 1}), i1, i2) == overlap_answer::none);

  // Two interleaved views of 2^30 floats each: even and odd elements.
  const nd_geom even = geom({1u << 30}, {2});
  const lowbit::detail::mem_tensor a{"a", 1u << 20, 4, &even}, b{"b", (1u << 20) + 4, 4, &even};
  std::array<std::size_t, lowbit::max_rank> ia{}, ib{};
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(lowbit::detail::mem_overlap(a, b, ia, ib) == overlap_answer::none);
  // A view two bytes off the odd floats does share bytes with the even ones.
  const lowbit::detail::mem_tensor c{"c", (1u << 20) + 6, 4, &even};
  CHECK(lowbit::detail::mem_overlap(a, c, ia, ib) == overlap_answer::found);
  // Not a timing test: a search over 2^30 positions would take seconds,
  // the closed form microseconds; a minute is far beyond either.
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
}

// ---- the operators ----------------------------------------------------------

namespace {

using lowbit_test::require_rejected_untouched;

/// require_rejected_untouched for the float buffers of these tests.
template <class F>
void require_rejected(std::vector<float>& buf, const std::string& substring, F&& f) {
  require_rejected_untouched(buf, substring, std::forward<F>(f));
}

}  // namespace

TEST_CASE("overlap: the issue's reproducers are rejected, nothing written", "[overlap]") {
  const std::size_t R = 8, C = 16;
  SECTION("per-channel scales stored at the front of y's buffer") {
    std::vector<float> x(R * C, 0.3f), buf(R * C);
    require_rejected(buf, "y (shape [8, 16], strides [16, 1]) overlaps scale (shape [8, 1], strides [1, 1])", [&] {
      lowbit::int_quant<>{}(strided_view<const float>(x.data(), {R, C}), strided_view<const float>(buf.data(), {R, 1}),
                            0.0f, 8.0f, strided_view<float>(buf.data(), {R, C}));
    });
  }
  SECTION("y = x shifted by one element") {
    std::vector<float> buf(1001);
    require_rejected(buf, "without being x itself", [&] {
      lowbit::int_quant<>{}(std::span<const float>(buf.data(), 1000), 0.5f, 0.0f, 8.0f,
                            std::span<float>(buf.data() + 1, 1000));
    });
    require_rejected(buf, "without being x itself", [&] {
      lowbit::int_quant<>{}(std::span<const float>(buf.data() + 1, 1000), 0.5f, 0.0f, 8.0f,
                            std::span<float>(buf.data(), 1000));
    });
  }
  SECTION("a per-element zeropt one element ahead of y") {
    std::vector<float> x(1000, 2.3f), buf(1001);
    require_rejected(buf, "overlaps zeropt", [&] {
      lowbit::int_quant<>{}(x, 1.0f, std::span<const float>(buf.data() + 1, 1000), 8.0f,
                            std::span<float>(buf.data(), 1000));
    });
  }
  SECTION("y of shape [2, 3] with strides [1, 1] writes 6 elements onto 4 floats") {
    std::vector<float> x(6, 1.0f), buf(4);
    require_rejected(buf, "y (shape [2, 3], strides [1, 1]) writes one element twice", [&] {
      lowbit::int_quant<>{}(strided_view<const float>(x.data(), {2, 3}), 1.0f, 0.0f, 8.0f,
                            strided_view<float>(buf.data(), {2, 3}, {1, 1}));
    });
  }
}

namespace {

/// One call of an operator on x [4, 8] with every parameter a [4, 8]
/// tensor: `pick` chooses which argument is placed in a shared buffer
/// (0 = x, 1.. = the parameters), the rest in buffers of their own.
struct op_case {
  const char* name;
  std::size_t params;
  const char* param_names[6];
  // Valid values for parameter k (1-based), so that only the overlap can fail.
  float value[6];
  std::function<void(strided_view<const float>, const std::vector<strided_view<const float>>&, strided_view<float>)>
      call;
};

std::vector<op_case> op_cases() {
  using V = strided_view<const float>;
  using Y = strided_view<float>;
  using P = std::vector<V>;
  return {
      {"int_quant", 3, {"scale", "zeropt", "bitwidth"}, {0.5f, 1.0f, 8.0f},
       [](V x, const P& p, Y y) { lowbit::int_quant<>{}(x, p[0], p[1], p[2], y); }},
      {"int_quant exact", 3, {"scale", "zeropt", "bitwidth"}, {0.5f, 1.0f, 8.0f},
       [](V x, const P& p, Y y) { lowbit::int_quant<lowbit::semantics::exact>{}(x, p[0], p[1], p[2], y); }},
      {"trunc", 5, {"scale", "zeropt", "in_bitwidth", "out_scale", "out_bitwidth"}, {0.5f, 0.0f, 8.0f, 2.0f, 4.0f},
       [](V x, const P& p, Y y) { lowbit::trunc<>{}(x, p[0], p[1], p[2], p[3], p[4], y); }},
      {"trunc_v1", 4, {"scale", "zeropt", "in_bitwidth", "out_bitwidth"}, {0.5f, 0.0f, 8.0f, 4.0f},
       [](V x, const P& p, Y y) { lowbit::trunc_v1<>{}(x, p[0], p[1], p[2], p[3], y); }},
      {"float_quant", 5, {"scale", "exponent_bitwidth", "mantissa_bitwidth", "exponent_bias", "max_val"},
       {0.5f, 4.0f, 3.0f, 7.0f, 448.0f},
       [](V x, const P& p, Y y) { lowbit::float_quant<>{}(x, p[0], p[1], p[2], p[3], p[4], y); }},
      {"minifloat_quant", 1, {"scale"}, {0.5f},
       [](V x, const P& p, Y y) { lowbit::minifloat_quant<>{}(x, p[0], y); }},
      {"bipolar_quant", 1, {"scale"}, {0.5f}, [](V x, const P& p, Y y) { lowbit::bipolar_quant<>{}(x, p[0], y); }},
  };
}

/// The operator's valid parameter values as rank-0 views (stored in `own`).
std::vector<strided_view<const float>> scalar_params(const op_case& oc, std::vector<std::vector<float>>& own) {
  own.assign(oc.params, {});
  std::vector<strided_view<const float>> p;
  for (std::size_t j = 0; j < oc.params; ++j) {
    own[j].assign(1, oc.value[j]);
    p.emplace_back(own[j].data(), lowbit::shape{});
  }
  return p;
}

}  // namespace

TEST_CASE("overlap: every operator rejects a y that overlaps any parameter", "[overlap]") {
  const std::size_t R = 4, C = 8, N = R * C;
  for (const op_case& oc : op_cases()) {
    for (std::size_t k = 0; k < oc.params; ++k) {
      // Parameter k lives in y's buffer at an offset that overlaps y partly
      // (shift 5) or exactly (shift 0); x and the others elsewhere.
      for (std::size_t shift : {std::size_t(0), std::size_t(5)}) {
        std::vector<float> x = lowbit_test::mixed_values<float>(N, 3);
        std::vector<std::vector<float>> own(oc.params);
        std::vector<float> buf(N + shift);
        std::vector<strided_view<const float>> p;
        for (std::size_t j = 0; j < oc.params; ++j) {
          own[j].assign(N, oc.value[j]);
          p.emplace_back(j == k ? buf.data() + shift : own[j].data(), lowbit::shape{R, C});
        }
        INFO(oc.name << ": " << oc.param_names[k] << " at shift " << shift);
        require_rejected(buf, std::string("overlaps ") + oc.param_names[k], [&] {
          oc.call(strided_view<const float>(x.data(), {R, C}), p, strided_view<float>(buf.data(), {R, C}));
        });
      }
    }
  }
}

TEST_CASE("overlap: in place gives the bits of a separate output; a broadcast or shifted x is rejected", "[overlap]") {
  const std::size_t R = 4, C = 8, N = R * C;
  for (const op_case& oc : op_cases()) {
    INFO(oc.name);
    std::vector<std::vector<float>> own(oc.params);
    std::vector<strided_view<const float>> p;
    for (std::size_t j = 0; j < oc.params; ++j) {
      own[j].assign(N, oc.value[j]);
      p.emplace_back(own[j].data(), lowbit::shape{R, C});
    }
    const std::vector<float> x = lowbit_test::mixed_values<float>(N, 11);
    std::vector<float> expected(N);
    oc.call(strided_view<const float>(x.data(), {R, C}), p, strided_view<float>(expected.data(), {R, C}));
    // In place, with a transposed (non-contiguous) geometry too.
    std::vector<float> buf = x;
    oc.call(strided_view<const float>(buf.data(), {R, C}), p, strided_view<float>(buf.data(), {R, C}));
    CHECK(lowbit_test::first_bit_difference(buf, expected) == -1);
    std::vector<float> xt(N), yt(N);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t c = 0; c < C; ++c) xt[c * R + r] = x[r * C + c];
    buf = xt;
    oc.call(strided_view<const float>(buf.data(), {R, C}, {1, static_cast<std::ptrdiff_t>(R)}), p,
            strided_view<float>(buf.data(), {R, C}, {1, static_cast<std::ptrdiff_t>(R)}));
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t c = 0; c < C; ++c) yt[r * C + c] = buf[c * R + r];
    CHECK(lowbit_test::first_bit_difference(yt, expected) == -1);
    // The same memory read in another order is not in place.
    buf = x;
    require_rejected(buf, "without being x itself", [&] {
      oc.call(strided_view<const float>(buf.data(), {R, C}, {1, static_cast<std::ptrdiff_t>(R)}), p,
              strided_view<float>(buf.data(), {R, C}));
    });
    // x [1, C] broadcast along the rows (the first parameter is [R, 1]),
    // y on x's data: x would be overwritten after its first row is done.
    std::vector<strided_view<const float>> p1;
    std::vector<std::vector<float>> own1(oc.params);
    for (std::size_t j = 0; j < oc.params; ++j) {
      own1[j].assign(R, oc.value[j]);
      p1.emplace_back(own1[j].data(), j == 0 ? lowbit::shape{R, 1} : lowbit::shape{});
    }
    buf.assign(N, 0.0f);
    require_rejected(buf, "without being x itself", [&] {
      oc.call(strided_view<const float>(buf.data(), {1, C}), p1, strided_view<float>(buf.data(), {R, C}));
    });
  }
}

TEST_CASE("overlap: interleaved views that share no element are accepted", "[overlap]") {
  const std::size_t N = 100;
  for (const op_case& oc : op_cases()) {
    INFO(oc.name);
    std::vector<std::vector<float>> own;
    const std::vector<strided_view<const float>> p = scalar_params(oc, own);
    const std::vector<float> x = lowbit_test::mixed_values<float>(N, 5);
    std::vector<float> expected(N);
    oc.call(strided_view<const float>(x.data(), {N}), p, strided_view<float>(expected.data(), {N}));
    // x on the even floats, y on the odd ones.
    std::vector<float> buf(2 * N);
    for (std::size_t i = 0; i < N; ++i) buf[2 * i] = x[i];
    oc.call(strided_view<const float>(buf.data(), {N}, {2}), p, strided_view<float>(buf.data() + 1, {N}, {2}));
    std::vector<float> got(N), xs(N);
    for (std::size_t i = 0; i < N; ++i) {
      got[i] = buf[2 * i + 1];
      xs[i] = buf[2 * i];
    }
    CHECK(lowbit_test::first_bit_difference(got, expected) == -1);
    CHECK(lowbit_test::first_bit_difference(xs, x) == -1);
  }
}

TEST_CASE("overlap: self-overlapping outputs are rejected for every operator", "[overlap]") {
  for (const op_case& oc : op_cases()) {
    INFO(oc.name);
    std::vector<std::vector<float>> own;
    const std::vector<strided_view<const float>> p = scalar_params(oc, own);
    std::vector<float> x(12, 1.0f), buf(16);
    // [3, 2] with strides [1, 2]: (1, 0) and ... no; (2, 0) and (0, 1) share offset 2.
    require_rejected(buf, "writes one element twice", [&] {
      oc.call(strided_view<const float>(x.data(), {3, 2}), p, strided_view<float>(buf.data(), {3, 2}, {1, 2}));
    });
    // Negative strides that meet: [2, 2] with strides [-1, 1] from the middle.
    require_rejected(buf, "writes one element twice", [&] {
      oc.call(strided_view<const float>(x.data(), {2, 2}), p, strided_view<float>(buf.data() + 4, {2, 2}, {-1, 1}));
    });
    // Zero stride along an extent above 1.
    require_rejected(buf, "writes one element twice", [&] {
      oc.call(strided_view<const float>(x.data(), {2, 3}), p, strided_view<float>(buf.data(), {2, 3}, {0, 1}));
    });
  }
}
