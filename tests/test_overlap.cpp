// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/overlap.hpp: whether two strided tensors
// share memory and whether one maps two indices to the same element,
// checked against a brute-force oracle that lists every byte; and the rule
// every operator enforces with it (docs/errors.md, docs/semantics.md "In
// place"): y shares no memory with a parameter, and with x only when it is
// x itself. Each operator and each parameter position is tried, with the
// issue's reproducers, and the buffer must be untouched after the error.
// The block formats (MX, NVFP4, their codes and dequantize, group-wise
// IntQuant) are tried on random placements of every output among the
// inputs, each call judged by a byte oracle.
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

// ---- the block formats: random placements against a byte oracle -------------

namespace {

/// A tensor placed in the test's arena: geometry g (strides in elements of
/// `size` bytes), element 0 at byte `base`.
struct placed {
  nd_geom g;
  std::ptrdiff_t base = 0;
  std::size_t size = 4;
};

std::ptrdiff_t byte_of(const placed& p, std::ptrdiff_t off) {
  return p.base + off * static_cast<std::ptrdiff_t>(p.size);
}

std::set<std::ptrdiff_t> bytes_of(const placed& p) {
  std::set<std::ptrdiff_t> s;
  each_offset(p.g, [&](std::ptrdiff_t off, const auto&) {
    for (std::size_t k = 0; k < p.size; ++k) s.insert(byte_of(p, off) + static_cast<std::ptrdiff_t>(k));
  });
  return s;
}

bool shares_bytes(const placed& a, const placed& b) {
  const std::set<std::ptrdiff_t> sa = bytes_of(a);
  for (std::ptrdiff_t v : bytes_of(b))
    if (sa.count(v)) return true;
  return false;
}

bool writes_twice(const placed& p) {
  std::set<std::ptrdiff_t> seen;
  bool twice = false;
  each_offset(p.g, [&](std::ptrdiff_t off, const auto&) { twice = twice || !seen.insert(off).second; });
  return twice;
}

/// Every index of a and b at the same byte (in place).
bool same_place(const placed& a, const placed& b) {
  if (a.size != b.size || a.g.rank != b.g.rank) return false;
  std::vector<std::ptrdiff_t> oa, ob;
  each_offset(a.g, [&](std::ptrdiff_t off, const auto&) { oa.push_back(byte_of(a, off)); });
  each_offset(b.g, [&](std::ptrdiff_t off, const auto&) { ob.push_back(byte_of(b, off)); });
  return oa == ob;
}

/// A geometry of extents `ext`: row-major, column-major, random strides
/// from -3 to 3 (zeros and repeats included), or row-major with strides
/// negated or doubled at random; its lowest element at byte `low` (a
/// multiple of `size`).
placed place_random(std::mt19937& rng, const lowbit::shape& ext, std::size_t size, std::ptrdiff_t low) {
  placed p;
  p.size = size;
  p.g.rank = ext.rank();
  for (std::size_t r = 0; r < ext.rank(); ++r) p.g.ext[r] = ext[r];
  const unsigned kind = rng() % 4;
  std::ptrdiff_t s = 1;
  for (std::size_t k = 0; k < ext.rank(); ++k) {
    const std::size_t r = kind == 1 ? k : ext.rank() - 1 - k;
    p.g.str[r] = kind == 2 ? static_cast<std::ptrdiff_t>(rng() % 7) - 3 : s;
    if (kind == 3) p.g.str[r] *= (rng() % 2 ? -1 : 1) * static_cast<std::ptrdiff_t>(1 + rng() % 2);
    s *= static_cast<std::ptrdiff_t>(std::max<std::size_t>(ext[r], 1));
  }
  std::ptrdiff_t min_off = 0;
  each_offset(p.g, [&](std::ptrdiff_t off, const auto&) { min_off = std::min(min_off, off); });
  p.base = low - min_off * static_cast<std::ptrdiff_t>(size);
  return p;
}

/// The arena: float-aligned bytes, filled with a pattern.
struct arena {
  std::vector<float> store = std::vector<float>(32768);
  unsigned char* bytes() { return reinterpret_cast<unsigned char*>(store.data()); }
  std::size_t size() const { return store.size() * sizeof(float); }
  void fill() {
    for (std::size_t i = 0; i < size(); ++i) bytes()[i] = static_cast<unsigned char>(0x3c + 7 * i);
  }
  template <class T>
  strided_view<T> view(const placed& p) {
    std::array<std::ptrdiff_t, lowbit::max_rank> str{};
    for (std::size_t r = 0; r < p.g.rank; ++r) str[r] = p.g.str[r];
    using U = std::remove_const_t<T>;
    T* data = reinterpret_cast<U*>(bytes() + p.base);
    return strided_view<T>(data, lowbit::shape(p.g.ext.begin(), p.g.ext.begin() + p.g.rank),
                           std::span<const std::ptrdiff_t>(str.data(), p.g.rank));
  }
  template <class T>
  void write(const placed& p, const std::vector<T>& v) {
    std::size_t i = 0;
    each_offset(p.g, [&](std::ptrdiff_t off, const auto&) {
      std::memcpy(bytes() + byte_of(p, off), &v[i++], sizeof(T));
    });
  }
  template <class T>
  std::vector<T> read(const placed& p) {
    std::vector<T> v;
    each_offset(p.g, [&](std::ptrdiff_t off, const auto&) {
      T t;
      std::memcpy(&t, bytes() + byte_of(p, off), sizeof(T));
      v.push_back(t);
    });
    return v;
  }
};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

}  // namespace

TEST_CASE("overlap: block formats, outputs placed at random with their inputs, against a byte oracle", "[overlap]") {
  // mx_quant, nvfp4_quant, their quantize_codes and dequantize, and
  // group_int_quant with its scale and zeropt in the same arena. A call is
  // valid when no output writes an element twice, the outputs share no
  // byte, and no output shares a byte with an input unless it is y exactly
  // on x (in place). A valid call must succeed, write nothing outside its
  // outputs, and give the bits of the same call into buffers of their own;
  // an invalid one must throw lowbit::error and leave the arena untouched.
  std::mt19937 rng(20261129);
  int accepted = 0, rejected = 0, in_place = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::size_t ext[3];
    const std::size_t rank = 1 + rng() % 3;
    const bool big = rank < 3 && rng() % 3 == 0;
    for (std::size_t r = 0; r < rank; ++r) ext[r] = rng() % 10 == 0 ? 0 : 1 + rng() % (big ? 40 : 6);
    const lowbit::shape shp(ext, ext + rank);
    const std::size_t n = shp.count(), block = 1 + rng() % 6;
    const std::ptrdiff_t irank = static_cast<std::ptrdiff_t>(rank);
    const std::ptrdiff_t axis = static_cast<std::ptrdiff_t>(rng() % rank) - (rng() % 2 ? irank : 0);
    const int op = static_cast<int>(rng() % 5);
    INFO("trial " << trial << ", op " << op << ", x " << shp.to_string() << ", block " << block << ", axis " << axis);

    lowbit::mx_quant<> mx{.format = lowbit::all_mx_elements[rng() % (op == 2 || op == 3 ? 5 : 6)],
                          .block_size = block, .axis = axis};
    lowbit::nvfp4_quant<> nv{.block_size = block, .axis = axis};
    lowbit::group_int_quant<> gq{.group_size = block, .axis = static_cast<int>(axis)};
    if (rng() % 3 == 0) {
      for (lowbit::execution* e : {&mx.exec, &nv.exec, &gq.exec}) {
        e->threads = 2;
        e->min_elements_per_thread = 1;
      }
    }
    const std::vector<float> zeros(n);
    const lowbit::shape blocks = mx.scales_shape(strided_view<const float>(zeros.data(), shp));

    // x near the start; each output near x (overlapping or not) or far away.
    arena a;
    const placed px = place_random(rng, shp, 4, 4 * static_cast<std::ptrdiff_t>(64 + rng() % 16));
    auto near_or_far = [&](const lowbit::shape& s, std::size_t size) {
      if (size == 4 && s == shp && rng() % 4 == 0) return px;
      const std::ptrdiff_t low = rng() % 4 == 0 ? 65536 + 4 * static_cast<std::ptrdiff_t>(rng() % 64)
                                                : px.base + 4 * (static_cast<std::ptrdiff_t>(rng() % 40) - 20);
      return place_random(rng, s, size, std::max<std::ptrdiff_t>(0, low) / static_cast<std::ptrdiff_t>(size) *
                                            static_cast<std::ptrdiff_t>(size));
    };
    a.fill();
    a.write(px, lowbit_test::mixed_values<float>(n, static_cast<std::uint32_t>(trial)));
    const std::vector<float> xv = a.read<float>(px);  // what x holds (x may repeat elements)
    const strided_view<const float> x_own(xv.data(), shp);

    std::vector<placed> outs, ins{px};
    bool y_of_x = op != 2 && op != 3;  // the output is a y computed from x (in place allowed)
    std::function<void(arena&)> call;
    std::function<void(arena&)> check;
    if (op <= 1) {  // mx_quant, nvfp4_quant: y
      std::vector<float> want(n);
      if (op == 0)
        mx(x_own, strided_view<float>(want.data(), shp));
      else
        nv(x_own, strided_view<float>(want.data(), shp));
      outs = {near_or_far(shp, 4)};
      call = [&, op](arena& m) {
        if (op == 0)
          mx(m.view<const float>(px), m.view<float>(outs[0]));
        else
          nv(m.view<const float>(px), m.view<float>(outs[0]));
      };
      check = [&, want](arena& m) { CHECK(same_bits(m.read<float>(outs[0]), want)); };
    } else if (op <= 3) {  // quantize_codes: codes and scales
      std::vector<std::uint8_t> codes(n), scales(blocks.count());
      if (op == 2)
        lowbit::quantize_codes(mx, x_own, strided_view<std::uint8_t>(codes.data(), shp),
                               strided_view<std::uint8_t>(scales.data(), blocks));
      else
        lowbit::quantize_codes(nv, x_own, 1.0f, strided_view<std::uint8_t>(codes.data(), shp),
                               strided_view<std::uint8_t>(scales.data(), blocks));
      outs = {near_or_far(shp, 1), near_or_far(blocks, 1)};
      call = [&, op](arena& m) {
        if (op == 2)
          lowbit::quantize_codes(mx, m.view<const float>(px), m.view<std::uint8_t>(outs[0]),
                                 m.view<std::uint8_t>(outs[1]));
        else
          lowbit::quantize_codes(nv, m.view<const float>(px), 1.0f, m.view<std::uint8_t>(outs[0]),
                                 m.view<std::uint8_t>(outs[1]));
      };
      check = [&, codes, scales](arena& m) {
        CHECK(same_bits(m.read<std::uint8_t>(outs[0]), codes));
        CHECK(same_bits(m.read<std::uint8_t>(outs[1]), scales));
      };
      if (rng() % 2 == 0) {
        // dequantize instead: the codes and the scales (any geometry, apart
        // from each other) are the inputs; y is placed near them or far.
        std::vector<float> want(n);
        if (op == 2)
          lowbit::dequantize(mx, strided_view<const std::uint8_t>(codes.data(), shp),
                             strided_view<const std::uint8_t>(scales.data(), blocks),
                             strided_view<float>(want.data(), shp));
        else
          lowbit::dequantize(nv, strided_view<const std::uint8_t>(codes.data(), shp),
                             strided_view<const std::uint8_t>(scales.data(), blocks), 1.0f,
                             strided_view<float>(want.data(), shp));
        const placed pc = place_random(rng, shp, 1, 4 * 64 + static_cast<std::ptrdiff_t>(rng() % 8));
        const placed ps = place_random(rng, blocks, 1, 4 * 64 + 2048 + static_cast<std::ptrdiff_t>(rng() % 8));
        if (writes_twice(pc) || writes_twice(ps) || shares_bytes(pc, ps))
          continue;  // inputs that repeat elements or clobber each other: other values
        a.fill();
        a.write(pc, codes);
        a.write(ps, scales);
        ins = {pc, ps};
        y_of_x = false;
        // y near the codes, near the scales, or far.
        const std::ptrdiff_t near = rng() % 3 == 0 ? 65536 : rng() % 2 ? 4 * 64 : 4 * 64 + 2048;
        outs = {place_random(rng, shp, 4, near + 4 * (static_cast<std::ptrdiff_t>(rng() % 16) - 8))};
        call = [&, op, pc, ps](arena& m) {
          if (op == 2)
            lowbit::dequantize(mx, m.view<const std::uint8_t>(pc), m.view<const std::uint8_t>(ps),
                               m.view<float>(outs[0]));
          else
            lowbit::dequantize(nv, m.view<const std::uint8_t>(pc), m.view<const std::uint8_t>(ps), 1.0f,
                               m.view<float>(outs[0]));
        };
        check = [&, want](arena& m) { CHECK(same_bits(m.read<float>(outs[0]), want)); };
      }
    } else {  // group_int_quant: scale and zeropt in the arena too
      std::vector<float> sc(blocks.count()), zp(blocks.count());
      for (float& v : sc) v = 0.01f * static_cast<float>(1 + rng() % 100);
      for (float& v : zp) v = static_cast<float>(static_cast<int>(rng() % 9) - 4);
      std::vector<float> want(n);
      gq(x_own, strided_view<const float>(sc.data(), blocks), strided_view<const float>(zp.data(), blocks), 8.0f,
         strided_view<float>(want.data(), shp));
      const placed pscale = near_or_far(blocks, 4), pzero = near_or_far(blocks, 4);
      if (writes_twice(pscale) || writes_twice(pzero) || shares_bytes(pscale, pzero) || shares_bytes(pscale, px) ||
          shares_bytes(pzero, px))
        continue;  // parameters that clobber each other or x: other values
      a.write(pscale, sc);
      a.write(pzero, zp);
      ins = {px, pscale, pzero};
      outs = {near_or_far(shp, 4)};
      call = [&, pscale, pzero](arena& m) {
        gq(m.view<const float>(px), m.view<const float>(pscale), m.view<const float>(pzero), 8.0f,
           m.view<float>(outs[0]));
      };
      check = [&, want](arena& m) { CHECK(same_bits(m.read<float>(outs[0]), want)); };
    }

    bool valid = true;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      valid = valid && !writes_twice(outs[i]);
      for (std::size_t j = i + 1; j < outs.size(); ++j) valid = valid && !shares_bytes(outs[i], outs[j]);
      for (std::size_t j = 0; j < ins.size(); ++j)
        valid = valid && (!shares_bytes(outs[i], ins[j]) || (y_of_x && j == 0 && same_place(outs[i], px)));
    }
    const std::vector<float> before = a.store;
    std::string what;
    try {
      call(a);
    } catch (const lowbit::error& e) {
      what = e.what();
    }
    INFO("valid by the oracle: " << valid << "; message: " << what);
    if (!what.empty()) {
      ++rejected;
      CHECK_FALSE(valid);
      CHECK(std::memcmp(before.data(), a.store.data(), a.size()) == 0);
      continue;
    }
    ++accepted;
    REQUIRE(valid);
    in_place += y_of_x && same_place(outs[0], px) ? 1 : 0;
    std::set<std::ptrdiff_t> written;
    for (const placed& o : outs) {
      const std::set<std::ptrdiff_t> b = bytes_of(o);
      written.insert(b.begin(), b.end());
    }
    const unsigned char* pre = reinterpret_cast<const unsigned char*>(before.data());
    std::ptrdiff_t stray = -1;
    for (std::size_t i = 0; i < a.size() && stray < 0; ++i)
      if (a.bytes()[i] != pre[i] && !written.count(static_cast<std::ptrdiff_t>(i)))
        stray = static_cast<std::ptrdiff_t>(i);
    CHECK(stray == -1);
    check(a);
  }
  // Both answers, and in place, many times.
  CHECK(accepted > 1000);
  CHECK(rejected > 1000);
  CHECK(in_place > 100);
}
