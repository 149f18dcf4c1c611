// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/group_quant.hpp: group-wise IntQuant against
// int_quant with the parameters expanded per element (bit for bit), codes
// and packing, the derived parameters on hand-computed groups, and errors.
#include <lowbit/codes.hpp>
#include <lowbit/group_quant.hpp>
#include <lowbit/packing.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"
#include "support/test_util.hpp"

using lowbit::group_params_mode;
using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit::shape;
using lowbit::strided_view;
using lowbit_test::bits;
using lowbit_test::require_same_bits;
using lowbit_test::show;

namespace {

/// A tensor's layout in a buffer: kind 0 row-major, 1 column-major
/// (transposed), 2 row-major with a gap after every element (stride 2).
struct layout {
  std::vector<std::size_t> ext;
  std::vector<std::ptrdiff_t> str;
  std::size_t count() const {
    std::size_t n = 1;
    for (std::size_t e : ext) n *= e;
    return n;
  }
  /// The buffer offset of row-major position f.
  std::size_t at(std::size_t f) const {
    std::ptrdiff_t off = 0;
    for (std::size_t r = ext.size(); r-- > 0;) {
      off += static_cast<std::ptrdiff_t>(f % ext[r]) * str[r];
      f /= ext[r];
    }
    return static_cast<std::size_t>(off);
  }
  std::size_t span() const {
    std::size_t hi = 0;
    for (std::size_t f = 0; f < count(); ++f) hi = std::max(hi, at(f));
    return count() ? hi + 1 : 0;
  }
  template <class T>
  strided_view<T> view(T* p) const {
    return strided_view<T>(p, shape(ext.begin(), ext.end()), std::span<const std::ptrdiff_t>(str));
  }
};

layout make_layout(const std::vector<std::size_t>& ext, int kind) {
  layout l{ext, std::vector<std::ptrdiff_t>(ext.size())};
  std::ptrdiff_t s = kind == 2 ? 2 : 1;
  if (kind == 1) {
    for (std::size_t r = 0; r < ext.size(); ++r) {
      l.str[r] = s;
      s *= static_cast<std::ptrdiff_t>(ext[r]);
    }
  } else {
    for (std::size_t r = ext.size(); r-- > 0;) {
      l.str[r] = s;
      s *= static_cast<std::ptrdiff_t>(ext[r]);
    }
  }
  return l;
}

std::vector<std::size_t> group_ext(std::vector<std::size_t> ext, std::size_t axis, std::size_t k) {
  ext[axis] = (ext[axis] + k - 1) / k;
  return ext;
}

/// The oracle's map: the row-major group index of row-major position f.
std::size_t group_of(const std::vector<std::size_t>& ext, std::size_t axis, std::size_t k, std::size_t f) {
  std::vector<std::size_t> idx(ext.size());
  for (std::size_t r = ext.size(); r-- > 0;) {
    idx[r] = f % ext[r];
    f /= ext[r];
  }
  idx[axis] /= k;
  const std::vector<std::size_t> g = group_ext(ext, axis, k);
  std::size_t flat = 0;
  for (std::size_t r = 0; r < ext.size(); ++r) flat = flat * g[r] + idx[r];
  return flat;
}

/// Per-group parameters: scales (powers of two and others, so that both
/// of IntQuant's division paths run), zero points (integers, and a few
/// halves) for a grid of `bw` bits.
template <class T>
void make_params(std::size_t n, std::uint32_t seed, bool is_signed, int bw, std::vector<T>& s, std::vector<T>& z) {
  std::mt19937 rng(seed);
  const T scales[] = {T(0.5), T(0.1), T(0.37), T(4), T(0.0625), T(1), T(3e-3), T(1.75)};
  s.resize(n);
  z.resize(n);
  const int top = bw >= 8 ? 255 : (1 << bw) - 1;
  for (std::size_t i = 0; i < n; ++i) {
    s[i] = scales[rng() % 8];
    if (is_signed)
      z[i] = (rng() % 4 == 0) ? T(static_cast<int>(rng() % 5) - 2) : T(0);
    else
      z[i] = T(static_cast<int>(rng() % static_cast<unsigned>(top + 1)));
    if (rng() % 7 == 0) z[i] += T(0.5);
  }
}

/// Values around the grids of those scales: ties, clamping, specials.
template <class T>
std::vector<T> make_x(std::size_t n, std::uint32_t seed) {
  std::vector<T> v = lowbit_test::mixed_values<T>(n, seed);
  std::mt19937 rng(seed + 1);
  for (std::size_t i = 0; i < n; ++i)
    if (rng() % 3 == 0) v[i] = T(static_cast<int>(rng() % 81) - 40) * T(0.05);  // multiples of half of 0.1
  return v;
}

/// int_quant with scale and zero point expanded to x's shape (row-major,
/// dense): the oracle.
template <semantics S, class T>
std::vector<T> expanded_int_quant(const lowbit::group_int_quant<S>& g, const std::vector<T>& x,
                                  const std::vector<std::size_t>& ext, std::size_t axis, const std::vector<T>& s,
                                  const std::vector<T>& z, T bw) {
  const std::size_t n = x.size();
  std::vector<T> se(n), ze(n), y(n);
  for (std::size_t f = 0; f < n; ++f) {
    se[f] = s[group_of(ext, axis, g.group_size, f)];
    ze[f] = z[group_of(ext, axis, g.group_size, f)];
  }
  const shape sh(ext.begin(), ext.end());
  lowbit::int_quant<S> iq{.is_signed = g.is_signed, .narrow = g.narrow, .rounding = g.rounding};
  iq(strided_view<const T>(x.data(), sh), strided_view<const T>(se.data(), sh), strided_view<const T>(ze.data(), sh),
     bw, strided_view<T>(y.data(), sh));
  return y;
}

/// Runs g on x laid out as `lx`, parameters laid out as `lp`, into y laid
/// out as `ly`; returns y row-major.
template <semantics S, class T>
std::vector<T> run_group(const lowbit::group_int_quant<S>& g, const std::vector<T>& x, const layout& lx,
                         const std::vector<T>& s, const std::vector<T>& z, const layout& lp, const layout& ly, T bw) {
  std::vector<T> xb(lx.span(), T(-77)), sb(lp.span(), T(-1)), zb(lp.span(), T(-1));
  for (std::size_t f = 0; f < x.size(); ++f) xb[lx.at(f)] = x[f];
  for (std::size_t f = 0; f < s.size(); ++f) {
    sb[lp.at(f)] = s[f];
    zb[lp.at(f)] = z[f];
  }
  std::vector<T> yb(ly.span(), T(-99));
  g(lx.view<const T>(xb.data()), lp.view<const T>(sb.data()), lp.view<const T>(zb.data()), bw,
    ly.view<T>(yb.data()));
  std::vector<T> y(x.size());
  for (std::size_t f = 0; f < x.size(); ++f) y[f] = yb[ly.at(f)];
  return y;
}

const std::vector<std::vector<std::size_t>> shapes = {{37}, {3, 70}, {70, 3}, {4, 33, 9}, {2, 3, 64}, {1, 1}, {2, 1, 5, 7}};

}  // namespace

TEMPLATE_TEST_CASE("group_int_quant equals int_quant with the parameters expanded, bit for bit: every rank, axis, "
                   "group size (ragged, 1, above the extent), semantics and rounding mode",
                   "[group_quant]", float, double) {
  using T = TestType;
  std::uint32_t seed = 1;
  std::size_t runs = 0;
  auto one = [&](auto sem) {
    constexpr semantics S = decltype(sem)::value;
    for (const auto& ext : shapes) {
      const std::vector<T> x = make_x<T>(layout{ext, {}}.count(), seed++);
      for (std::size_t ax = 0; ax < ext.size(); ++ax) {
        for (std::size_t k : {std::size_t(1), std::size_t(4), std::size_t(7), std::size_t(32), std::size_t(128)}) {
          const std::size_t mi = (seed++) % lowbit::all_rounding_modes.size();
          for (const rounding_mode m : lowbit::all_rounding_modes) {
            // Every mode with one sign/width; the others cycle through the modes.
            const bool is_signed = (seed + static_cast<std::size_t>(m)) % 2 == 0;
            const bool narrow = (seed / 2 + static_cast<std::size_t>(m)) % 3 == 0;
            const int bw = m == lowbit::all_rounding_modes[mi] && is_signed ? 1 : (seed % 2 ? 4 : 8);
            lowbit::group_int_quant<S> g{.is_signed = is_signed, .narrow = narrow, .rounding = m, .group_size = k};
            // The axis as given, or counted from the last.
            g.axis = seed % 2 ? static_cast<int>(ax) : static_cast<int>(ax) - static_cast<int>(ext.size());
            std::vector<T> s, z;
            const std::vector<std::size_t> gx = group_ext(ext, ax, k);
            make_params<T>(layout{gx, {}}.count(), seed++, is_signed, bw, s, z);
            const std::vector<T> want = expanded_int_quant(g, x, ext, ax, s, z, T(bw));
            const std::vector<T> got = run_group(g, x, make_layout(ext, 0), s, z, make_layout(gx, 0),
                                                 make_layout(ext, 0), T(bw));
            CAPTURE(ext, ax, g.axis, k, static_cast<int>(m), is_signed, narrow, bw, S == semantics::exact);
            require_same_bits(got, want);
            ++runs;
          }
        }
      }
    }
  };
  one(std::integral_constant<semantics, semantics::reference>{});
  one(std::integral_constant<semantics, semantics::exact>{});
  CHECK(runs == 2 * 17 * 5 * 7);  // semantics, axes of every shape, group sizes, modes
}

TEST_CASE("group_int_quant: strided and transposed x, y and parameters, in place, threads 1 and 2, SIMD and scalar",
          "[group_quant]") {
  std::uint32_t seed = 100;
  for (const auto& ext : shapes) {
    const std::vector<float> x = make_x<float>(layout{ext, {}}.count(), seed++);
    for (std::size_t ax = 0; ax < ext.size(); ++ax) {
      for (std::size_t k : {std::size_t(1), std::size_t(5), std::size_t(32)}) {
        const std::vector<std::size_t> gx = group_ext(ext, ax, k);
        std::vector<float> s, z;
        make_params<float>(layout{gx, {}}.count(), seed++, false, 4, s, z);
        lowbit::group_int_quant<> g{.is_signed = false, .rounding = rounding_mode::half_up, .group_size = k};
        g.axis = static_cast<int>(ax);
        const std::vector<float> want = expanded_int_quant(g, x, ext, ax, s, z, 4.0f);
        for (int kx : {0, 1, 2})
          for (int kp : {0, 1, 2})
            for (int ky : {0, 1, 2}) {
              CAPTURE(ext, ax, k, kx, kp, ky);
              require_same_bits(run_group(g, x, make_layout(ext, kx), s, z, make_layout(gx, kp), make_layout(ext, ky), 4.0f),
                                want);
            }
        // In place: y is x itself, in each layout.
        for (int kx : {0, 1, 2}) {
          CAPTURE(ext, ax, k, kx);
          const layout lx = make_layout(ext, kx), lp = make_layout(gx, 0);
          std::vector<float> xb(lx.span(), -77.0f);
          for (std::size_t f = 0; f < x.size(); ++f) xb[lx.at(f)] = x[f];
          g(lx.view<const float>(xb.data()), lp.view<const float>(s.data()), lp.view<const float>(z.data()), 4.0f,
            lx.view<float>(xb.data()));
          std::vector<float> got(x.size());
          for (std::size_t f = 0; f < x.size(); ++f) got[f] = xb[lx.at(f)];
          require_same_bits(got, want);
        }
        // Threads (the engine splits each part of the block step) and the
        // scalar kernels: the same bits.
        for (unsigned threads : {1u, 2u})
          for (bool simd : {true, false}) {
            CAPTURE(ext, ax, k, threads, simd);
            const lowbit::detail::simd_scope scope(simd);
            lowbit::group_int_quant<> gt = g;
            gt.exec.threads = threads;
            gt.exec.min_elements_per_thread = 16;
            require_same_bits(run_group(gt, x, make_layout(ext, 0), s, z, make_layout(gx, 0), make_layout(ext, 0), 4.0f),
                              want);
          }
      }
    }
  }
}

TEST_CASE("group_int_quant: a large weight matrix, int4 in groups of 128 along the last axis, threads", "[group_quant]") {
  const std::vector<std::size_t> ext{24, 1000};  // 7 full groups and a ragged one of 104 per row
  const std::vector<float> x = make_x<float>(24 * 1000, 9);
  const std::vector<std::size_t> gx = group_ext(ext, 1, 128);
  std::vector<float> s, z;
  make_params<float>(24 * 8, 10, true, 4, s, z);
  for (unsigned threads : {1u, 2u}) {
    lowbit::group_int_quant<semantics::exact> g{.is_signed = true};
    g.exec.threads = threads;
    g.exec.min_elements_per_thread = 1024;
    const std::vector<float> want = expanded_int_quant(g, x, ext, 1, s, z, 4.0f);
    require_same_bits(run_group(g, x, make_layout(ext, 0), s, z, make_layout(gx, 0), make_layout(ext, 0), 4.0f), want);
  }
}

TEST_CASE("group_int_quant: hand-computed groups, ragged last group, group size above the extent", "[group_quant]") {
  // [2, 5] in groups of 2 along axis 1: groups {0, 1}, {2, 3}, {4} per row.
  const std::vector<float> x{0.26f, -1.3f, 7.9f, 2.5f, -2.5f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  const std::vector<float> s{0.5f, 1.0f, 0.25f, 0.5f, 1.0f, 0.125f};
  const std::vector<float> z{0.0f, 0.0f, 0.0f, 1.0f, 2.0f, 3.0f};
  std::vector<float> y(10);
  lowbit::group_int_quant<> g{.is_signed = true, .group_size = 2, .axis = 1};
  g(strided_view<const float>(x.data(), {2, 5}), strided_view<const float>(s.data(), {2, 3}),
    strided_view<const float>(z.data(), {2, 3}), 4.0f, strided_view<float>(y.data(), {2, 5}));
  // 0.52 -> 1; -2.6 -> -3; 7.9 -> 7 (clamped); 2.5 -> 2 (even); -10 -> -8 (clamped);
  // row 1: 1/0.5 + 1 = 3 -> 1.0; 1 + 2 = 3 -> 1.0; 8 + 3 = 11 -> 7: (7 - 3) * 0.125 = 0.5.
  require_same_bits(y, {0.5f, -1.5f, 7.0f, 2.0f, -2.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0.5f});
  // One group holds the whole row when group_size exceeds the extent.
  lowbit::group_int_quant<> big{.group_size = 1000, .axis = -1};
  CHECK(big.group_shape(shape{2, 5}) == shape{2, 1});
  std::vector<float> y2(10);
  big(strided_view<const float>(x.data(), {2, 5}), strided_view<const float>(s.data(), {2, 1}, {3, 1}),
      strided_view<const float>(z.data(), {2, 1}, {3, 1}), 4.0f, strided_view<float>(y2.data(), {2, 5}));
  // Row 0 with scale 0.5, zero point 0; row 1 with scale 0.5 (s[3]), zero point 1 (z[3]).
  require_same_bits(y2, {0.5f, -1.5f, 3.5f, 2.5f, -2.5f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f});
  CHECK(g.group_shape(shape{2, 5}) == shape{2, 3});
  CHECK(g.output_shape(strided_view<const float>(x.data(), {2, 5}), strided_view<const float>(s.data(), {2, 3}),
                       strided_view<const float>(z.data(), {2, 3}), 4.0f) == shape{2, 5});
  // Empty tensors: nothing to do, no error.
  std::vector<float> none;
  g(strided_view<const float>(none.data(), {0, 5}), strided_view<const float>(none.data(), {0, 3}),
    strided_view<const float>(none.data(), {0, 3}), 4.0f, strided_view<float>(none.data(), {0, 5}));
  g(strided_view<const float>(none.data(), {3, 0}), strided_view<const float>(none.data(), {3, 0}),
    strided_view<const float>(none.data(), {3, 0}), 4.0f, strided_view<float>(none.data(), {3, 0}));
}

TEST_CASE("group_int_quant: int4 codes round-trip to the fake-quantized output and pack", "[group_quant][codes]") {
  const std::vector<std::size_t> ext{6, 300};
  const std::vector<float> x = make_x<float>(1800, 21);
  std::vector<float> xf = x;
  for (float& v : xf)
    if (!std::isfinite(v) || std::fabs(v) > 1e6f) v = 1.0f;  // NaN has no code; max - min must not overflow
  for (group_params_mode mode : {group_params_mode::asymmetric, group_params_mode::symmetric}) {
    for (bool exact : {false, true}) {
      CAPTURE(static_cast<int>(mode), exact);
      const lowbit::group_int_quant<> g = lowbit::group_quantizer(mode, -1, 128);
      std::vector<float> s(6 * 3), z(6 * 3), y(1800), back(1800);
      const auto xv = strided_view<const float>(xf.data(), {6, 300});
      const auto sv = strided_view<float>(s.data(), {6, 3});
      const auto zv = strided_view<float>(z.data(), {6, 3});
      lowbit::group_params(xv, -1, 128, 4, mode, sv, zv);
      const auto sc = strided_view<const float>(s.data(), {6, 3}), zc = strided_view<const float>(z.data(), {6, 3});
      auto run = [&](const auto& op) {
        op(xv, sc, zc, 4.0f, strided_view<float>(y.data(), {6, 300}));
        const lowbit::packed_format& pf = g.is_signed ? lowbit::packings::int4 : lowbit::packings::uint4;
        std::vector<std::int8_t> c(1800), c2(1800);
        lowbit::quantize_codes(op, xv, sc, zc, 4.0f, strided_view<std::int8_t>(c.data(), {6, 300}));
        for (std::int8_t v : c) REQUIRE((g.is_signed ? (v >= -8 && v <= 7) : (v >= 0 && v <= 15)));
        std::vector<std::uint8_t> packed(lowbit::packed_size(pf, c.size()));
        lowbit::pack(pf, c, packed);
        lowbit::unpack(pf, packed, c2);
        CHECK(c2 == c);
        lowbit::dequantize(op, strided_view<const std::int8_t>(c2.data(), {6, 300}), sc, zc, 4.0f,
                           strided_view<float>(back.data(), {6, 300}));
        // Bit for bit, except that an integer code has no sign of zero, as
        // for int_quant (docs/codes.md): a -0 output (a small negative x,
        // zero point 0) comes back as +0.
        std::size_t zeros = 0;
        for (std::size_t i = 0; i < y.size(); ++i) {
          const bool neg_zero = bits(y[i]) == bits(-0.0f) && bits(back[i]) == bits(0.0f);
          zeros += neg_zero;
          if (!neg_zero && bits(back[i]) != bits(y[i])) {
            INFO(i << ": back " << show(back[i]) << ", y " << show(y[i]));
            CHECK(false);
            break;
          }
        }
        if (mode == group_params_mode::asymmetric) CHECK(zeros == 0);  // zero points > 0 here: no -0
        if (mode == group_params_mode::symmetric) CHECK(zeros > 0);
      };
      if (exact) {
        lowbit::group_int_quant<semantics::exact> ge = lowbit::group_quantizer<semantics::exact>(mode, -1, 128);
        run(ge);
      } else {
        run(g);
      }
    }
  }
  // A code that does not fit: nothing written.
  std::vector<std::int8_t> c(4, 9);
  const std::vector<float> x4{1.0f, 2.0f, 3.0f, 400.0f}, one{1.0f};
  lowbit::group_int_quant<> g8{.is_signed = false, .group_size = 4};
  REQUIRE_THROWS_WITH(lowbit::quantize_codes(g8, x4, one, std::vector<float>{0.0f}, 8.0f, c),
                      lowbit_test::contains_substring("int8 codes cannot hold the range [0, 255]"));
  CHECK(c == std::vector<std::int8_t>(4, 9));
}

TEST_CASE("group_params: hand-computed groups (AWQ's asymmetric and symmetric, GPTQ's asymmetric), degenerate groups",
          "[group_quant]") {
  // Expected values computed by hand from the references' formulas in
  // float32 (every quotient the float32 nearest the exact one).
  auto params = [](const std::vector<float>& x, std::vector<std::size_t> ext, int axis, std::size_t k,
                   group_params_mode mode, int bw) {
    lowbit::group_int_quant<> g;
    g.axis = axis;
    g.group_size = k;
    const shape gs = g.group_shape(shape(ext.begin(), ext.end()));
    std::vector<float> s(gs.count(), -1.0f), z(gs.count(), -1.0f);
    lowbit::group_params(strided_view<const float>(x.data(), shape(ext.begin(), ext.end())), axis, k, bw, mode,
                         strided_view<float>(s.data(), gs), strided_view<float>(z.data(), gs));
    return std::pair{s, z};
  };
  const float eps = 1e-5f;
  SECTION("asymmetric (AWQ): min/max of the group, 0 not added, zero point clamped") {
    // Rows of 4, groups of 4 along axis 1 (one group per row) in a [7, 4]:
    const std::vector<float> x{-1.0f, 0.5f, 2.0f, 0.25f,   // r 3: 0.2, -round(-5) = 5
                               0.0f, 1.5f, 0.75f, 0.3f,    // r 1.5: 0.1, -round(0) = +0
                               -3.0f, 0.0f, -1.0f, -2.0f,  // r 3: 0.2, -round(-15) = 15
                               5.0f, 5.0f, 5.0f, 5.0f,     // all equal: r = 1e-5, zero point -round(7.5e6) -> 0
                               0.0f, -0.0f, 0.0f, 0.0f,    // all zero: r = 1e-5, zero point +0
                               2.0f, 3.5f, 3.0f, 2.5f,     // r 1.5: 0.1, -round(20) -> 0
                               -5.0f, -5.0f, -5.0f, -5.0f};  // all equal: zero point 15
    const auto [s, z] = params(x, {7, 4}, 1, 4, group_params_mode::asymmetric, 4);
    const float tiny = lowbit_test::f32(0x3532f4fc);  // 1e-5f / 15 = 6.66666665e-07
    require_same_bits(s, {0.2f, 0.1f, 0.2f, tiny, tiny, 0.1f, tiny});
    require_same_bits(z, {5.0f, 0.0f, 15.0f, 0.0f, 0.0f, 0.0f, 15.0f});
    CHECK(bits(0.2f) == 0x3e4ccccdu);
    // Quantized with the matching operator: the grids AWQ gives these groups,
    // the degenerate ones included (a constant group comes back as +-1e-5).
    std::vector<float> y(28);
    lowbit::group_quantizer(group_params_mode::asymmetric, 1, 4)(
        strided_view<const float>(x.data(), {7, 4}), strided_view<const float>(s.data(), {7, 1}),
        strided_view<const float>(z.data(), {7, 1}), 4.0f, strided_view<float>(y.data(), {7, 4}));
    require_same_bits(y, {-1.0f, 0.6f, 2.0f, 0.2f,  //
                          0.0f, 1.5f, 0.8f, 0.3f,   //
                          -3.0f, 0.0f, -1.0f, -2.0f,  //
                          eps, eps, eps, eps,         //
                          0.0f, 0.0f, 0.0f, 0.0f,     //
                          1.5f, 1.5f, 1.5f, 1.5f,     // 2..3.5 is off AWQ's grid [0, 1.5]
                          -eps, -eps, -eps, -eps});
  }
  SECTION("symmetric (AWQ): max |x|, zero point 0, signed codes") {
    // Along axis 0 of a [3, 3] (columns are groups of 3): column 0 {-3.5, 1, 2},
    // column 1 {0.7, -0.07, 0.0}, column 2 all zero.
    const std::vector<float> x{-3.5f, 0.7f, 0.0f,  //
                               1.0f, -0.07f, -0.0f,  //
                               2.0f, 0.0f, 0.0f};
    const auto [s, z] = params(x, {3, 3}, 0, 4, group_params_mode::symmetric, 4);
    // 3.5 / 7 = 0.5; 0.7f / 7 = 0.1f; max(0, 1e-5) / 7 = 1.42857141e-06.
    require_same_bits(s, {0.5f, 0.1f, lowbit_test::f32(0x35bfbd57)});
    require_same_bits(z, {0.0f, 0.0f, 0.0f});
    std::vector<float> y(9);
    lowbit::group_quantizer(group_params_mode::symmetric, 0, 4)(
        strided_view<const float>(x.data(), {3, 3}), strided_view<const float>(s.data(), {1, 3}),
        strided_view<const float>(z.data(), {1, 3}), 4.0f, strided_view<float>(y.data(), {3, 3}));
    require_same_bits(y, {-3.5f, 0.7f, 0.0f, 1.0f, -0.1f, 0.0f, 2.0f, 0.0f, 0.0f});
    // 8 bits: 0.3 / 127.
    const auto [s8, z8] = params({0.3f, -0.3f, 0.29f}, {3}, 0, 3, group_params_mode::symmetric, 8);
    require_same_bits(s8, {lowbit_test::f32(0x3b1acf38)});  // 0.3f / 127 = 2.36220472e-03
    // The sign of a zero maximum does not matter; 2 bits is the smallest.
    const auto [s2, z2] = params({-0.0f, -0.0f}, {2}, 0, 2, group_params_mode::symmetric, 2);
    require_same_bits(s2, {eps});
  }
  SECTION("asymmetric_gptq (GPTQ's find_params): min <= 0 <= max, [-1, 1] for zeros") {
    const std::vector<float> x{-1.0f, 0.5f, 2.0f, 0.25f,  // as AWQ: 0.2, 5
                               2.0f, 3.5f, 3.0f, 2.5f,    // [0, 3.5]: 3.5 / 15 = 0.233333334, zero point +0
                               5.0f, 5.0f, 5.0f, 5.0f,    // [0, 5]: 0.333333343, +0
                               0.0f, 0.0f, -0.0f, 0.0f,   // [-1, 1]: 2 / 15 = 0.13333334, round(7.4999995) = 7
                               -3.0f, -2.0f, -2.5f, -2.0f};  // [-3, 0]: 0.2, 15
    const auto [s, z] = params(x, {5, 4}, -1, 4, group_params_mode::asymmetric_gptq, 4);
    require_same_bits(s, {0.2f, lowbit_test::f32(0x3e6eeeef), lowbit_test::f32(0x3eaaaaab),
                          lowbit_test::f32(0x3e088889), 0.2f});
    require_same_bits(z, {5.0f, 0.0f, 0.0f, 7.0f, 15.0f});
    std::vector<float> y(20);
    lowbit::group_quantizer(group_params_mode::asymmetric_gptq, -1, 4)(
        strided_view<const float>(x.data(), {5, 4}), strided_view<const float>(s.data(), {5, 1}),
        strided_view<const float>(z.data(), {5, 1}), 4.0f, strided_view<float>(y.data(), {5, 4}));
    require_same_bits(y, {-1.0f, 0.6f, 2.0f, 0.2f,                              //
                          // 9, 15, 13 and 11 steps of 0.233333334: 2.1, 3.5, 3.03333330, 2.56666660
                          lowbit_test::f32(0x40066666), 3.5f, lowbit_test::f32(0x40422222), lowbit_test::f32(0x40244444),
                          5.0f, 5.0f, 5.0f, 5.0f,                                //
                          0.0f, 0.0f, 0.0f, 0.0f,                                //
                          // -2.5 / 0.2 + 15 = 2.5 -> 2 (even): (2 - 15) * 0.2 = -2.60000014
                          -3.0f, -2.0f, lowbit_test::f32(0xc0266667), -2.0f});
  }
  SECTION("ragged groups along a middle axis, strided x and outputs") {
    // [2, 5, 2], groups of 2 along axis 1: groups {0, 1}, {2, 3}, {4}.
    std::vector<float> x(20);
    for (std::size_t i = 0; i < 20; ++i) x[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5);
    const auto [s, z] = params(x, {2, 5, 2}, 1, 2, group_params_mode::asymmetric, 8);
    REQUIRE(s.size() == 12);
    // Group [0, g, 0] holds x[0, 2g, 0] and x[0, 2g + 1, 0]; the oracle: min and max by hand.
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t g = 0; g < 3; ++g)
        for (std::size_t j = 0; j < 2; ++j) {
          float mn = 1e9f, mx = -1e9f;
          for (std::size_t e = 2 * g; e < std::min<std::size_t>(5, 2 * g + 2); ++e) {
            mn = std::min(mn, x[i * 10 + e * 2 + j]);
            mx = std::max(mx, x[i * 10 + e * 2 + j]);
          }
          const float sc = std::max(mx - mn, eps) / 255.0f;
          CAPTURE(i, g, j);
          CHECK(bits(s[i * 6 + g * 2 + j]) == bits(sc));
        }
    // The same from a transposed copy of x into transposed outputs.
    const layout lx = make_layout({2, 5, 2}, 1), lg = make_layout({2, 3, 2}, 1);
    std::vector<float> xt(lx.span()), st(lg.span(), -1.0f), zt(lg.span(), -1.0f);
    for (std::size_t f = 0; f < 20; ++f) xt[lx.at(f)] = x[f];
    lowbit::group_params(lx.view<const float>(xt.data()), -2, 2, 8, group_params_mode::asymmetric,
                         lg.view<float>(st.data()), lg.view<float>(zt.data()));
    for (std::size_t f = 0; f < 12; ++f) {
      CHECK(bits(st[lg.at(f)]) == bits(s[f]));
      CHECK(bits(zt[lg.at(f)]) == bits(z[f]));
    }
  }
  SECTION("SIMD and scalar reductions give the same parameters, double too") {
    const std::vector<float> x = [] {
      std::vector<float> v(3 * 1000);
      std::mt19937 rng(5);
      std::uniform_real_distribution<float> u(-2.0f, 3.0f);
      for (float& e : v) e = u(rng);
      return v;
    }();
    for (group_params_mode mode :
         {group_params_mode::asymmetric, group_params_mode::symmetric, group_params_mode::asymmetric_gptq})
      for (int axis : {0, 1}) {
        std::vector<float> s1, z1, s2, z2;
        {
          const lowbit::detail::simd_scope on(true);
          std::tie(s1, z1) = params(x, {3, 1000}, axis, 64, mode, 4);
        }
        {
          const lowbit::detail::simd_scope off(false);
          std::tie(s2, z2) = params(x, {3, 1000}, axis, 64, mode, 4);
        }
        require_same_bits(s1, s2);
        require_same_bits(z1, z2);
        // float64: the same steps in double.
        std::vector<double> xd(x.begin(), x.end());
        const std::size_t ng = axis == 1 ? 3 * 16 : 1000;
        std::vector<double> sd(ng), zd(ng);
        const shape gsh = axis == 1 ? shape{3, 16} : shape{1, 1000};
        lowbit::group_params(strided_view<const double>(xd.data(), {3, 1000}), axis, 64, 4, mode,
                             strided_view<double>(sd.data(), gsh), strided_view<double>(zd.data(), gsh));
        for (std::size_t i = 0; i < ng; ++i) {
          CHECK(sd[i] > 0.0);
          CHECK(zd[i] == std::nearbyint(zd[i]));
        }
      }
  }
}

TEST_CASE("group_params: NaN, infinity and overflowing ranges are rejected, naming the group; nothing written",
          "[group_quant]") {
  std::vector<float> s(6, -1.0f), z(6, -1.0f);
  auto call = [&](const std::vector<float>& x, group_params_mode mode) {
    lowbit::group_params(strided_view<const float>(x.data(), {2, 6}), 1, 2, 4, mode, strided_view<float>(s.data(), {2, 3}),
                         strided_view<float>(z.data(), {2, 3}));
  };
  std::vector<float> x(12, 1.0f);
  x[9] = lowbit_test::nan_f;
  for (group_params_mode mode :
       {group_params_mode::asymmetric, group_params_mode::symmetric, group_params_mode::asymmetric_gptq}) {
    REQUIRE_THROWS_WITH(call(x, mode), lowbit_test::contains_substring(
                                           "lowbit::group_params: x[1, 3] = nan in group [1, 1] is invalid; expected "
                                           "finite values"));
    CHECK(s == std::vector<float>(6, -1.0f));
    CHECK(z == std::vector<float>(6, -1.0f));
  }
  x[9] = 1.0f;
  x[4] = -lowbit_test::inf;
  REQUIRE_THROWS_WITH(call(x, group_params_mode::symmetric),
                      lowbit_test::contains_substring("x[0, 4] = -inf in group [0, 2] is invalid"));
  x[4] = 3e38f;
  x[5] = -3e38f;
  REQUIRE_THROWS_WITH(call(x, group_params_mode::asymmetric),
                      lowbit_test::contains_substring("group [0, 2] has max - min = 3.00000001e+38 - (-3.00000001e+38), "
                                                      "which overflows to infinity"));
  CHECK(s == std::vector<float>(6, -1.0f));
  // Symmetric has no range to overflow: 3e38 / 7.
  call(x, group_params_mode::symmetric);
  CHECK(bits(s[2]) == bits(3e38f / 7.0f));
}

TEST_CASE("group_params: invalid arguments", "[group_quant]") {
  std::vector<float> x(12, 1.0f), s(6, -1.0f), z(6, -1.0f);
  const auto xv = strided_view<const float>(x.data(), {2, 6});
  auto sv = strided_view<float>(s.data(), {2, 3});
  auto zv = strided_view<float>(z.data(), {2, 3});
  using lowbit_test::contains_substring;
  const auto A = group_params_mode::asymmetric;
  CHECK_THROWS_WITH(lowbit::group_params(xv, 2, 2, 4, A, sv, zv),
                    contains_substring("lowbit::group_params: axis = 2 is invalid for a tensor of shape [2, 6]; "
                                       "expected an axis from -2 to 1"));
  CHECK_THROWS_WITH(lowbit::group_params(xv, -3, 2, 4, A, sv, zv), contains_substring("axis = -3 is invalid"));
  CHECK_THROWS_WITH(lowbit::group_params(xv, 1, 0, 4, A, sv, zv), contains_substring("group_size = 0 is invalid"));
  CHECK_THROWS_WITH(lowbit::group_params(xv, 1, 2, 0, A, sv, zv),
                    contains_substring("bitwidth = 0 is invalid; expected an integer from 1 to 24"));
  CHECK_THROWS_WITH(lowbit::group_params(xv, 1, 2, 1, group_params_mode::symmetric, sv, zv),
                    contains_substring("bitwidth = 1 is invalid; expected an integer from 2 to 24"));
  CHECK_THROWS_WITH(lowbit::group_params(xv, 1, 2, 4, static_cast<group_params_mode>(7), sv, zv),
                    contains_substring("mode = 7 is invalid"));
  CHECK_THROWS_WITH(lowbit::group_params(xv, 1, 4, 4, A, sv, zv),
                    contains_substring("lowbit::group_params: scales has shape [2, 3]; expected the group shape [2, 2]"));
  CHECK_THROWS_WITH(lowbit::group_params(xv, 1, 2, 4, A, sv, strided_view<float>(z.data(), {3, 2})),
                    contains_substring("zeropts has shape [3, 2]; expected the group shape [2, 3]"));
  // Overlaps: the outputs with each other, with x.
  CHECK_THROWS_WITH(lowbit::group_params(xv, 1, 2, 4, A, sv, strided_view<float>(s.data(), {2, 3})),
                    contains_substring("scales (shape [2, 3], strides [3, 1]) overlaps zeropts"));
  CHECK_THROWS_WITH(lowbit::group_params(xv, 1, 2, 4, A, sv, strided_view<float>(x.data() + 6, {2, 3})),
                    contains_substring("overlaps x"));
  CHECK(s == std::vector<float>(6, -1.0f));
  CHECK(z == std::vector<float>(6, -1.0f));
}

TEST_CASE("group_int_quant: invalid arguments are rejected before anything is written", "[group_quant]") {
  using lowbit_test::check_rejected;
  std::vector<float> x(12, 1.0f), s(6, 0.5f), z(6, 0.0f), y(12, 7.0f);
  const auto xv = strided_view<const float>(x.data(), {2, 6});
  const auto sv = strided_view<const float>(s.data(), {2, 3});
  const auto zv = strided_view<const float>(z.data(), {2, 3});
  auto yv = strided_view<float>(y.data(), {2, 6});
  lowbit::group_int_quant<> g{.group_size = 2, .axis = 1};
  auto with = [&](auto change) {
    lowbit::group_int_quant<> h = g;
    change(h);
    return h;
  };
  check_rejected([&] { with([](auto& h) { h.axis = 2; })(xv, sv, zv, 4.0f, yv); }, y,
                 "lowbit::group_int_quant: axis = 2 is invalid for a tensor of shape [2, 6]; expected an axis from -2 to 1");
  check_rejected([&] { with([](auto& h) { h.axis = -3; })(xv, sv, zv, 4.0f, yv); }, y, "axis = -3 is invalid");
  check_rejected([&] { with([](auto& h) { h.group_size = 0; })(xv, sv, zv, 4.0f, yv); }, y,
                 "lowbit::group_int_quant: group_size = 0 is invalid; expected at least 1");
  check_rejected([&] { with([](auto& h) { h.rounding = static_cast<rounding_mode>(42); })(xv, sv, zv, 4.0f, yv); }, y,
                 "rounding");
  check_rejected([&] { g(xv, strided_view<const float>(s.data(), {2, 2}), zv, 4.0f, yv); }, y,
                 "lowbit::group_int_quant: scale has shape [2, 2]; expected the group shape [2, 3] (x's shape [2, 6] in "
                 "groups of 2 along axis 1: ceil(6 / 2) = 3 groups)");
  check_rejected([&] { g(xv, sv, strided_view<const float>(z.data(), {6}), 4.0f, yv); }, y,
                 "zeropt has shape [6]; expected the group shape [2, 3]");
  // A scalar scale is not broadcast: the parameters are per group.
  check_rejected([&] { g(xv, 0.5f, zv, 4.0f, yv); }, y, "scale has shape []; expected the group shape [2, 3]");
  check_rejected([&] { g(xv, sv, zv, std::vector<float>{4.0f, 4.0f}, yv); }, y,
                 "bitwidth has shape [2]; expected one value");
  check_rejected([&] { g(xv, sv, zv, 4.5f, yv); }, y, "bitwidth = 4.5 is invalid; expected an integer from 1 to 32");
  check_rejected([&] { g(xv, sv, zv, 4.0f, strided_view<float>(y.data(), {2, 5})); }, y,
                 "y has shape [2, 5]; expected the broadcast shape [2, 6]");
  // The exact semantics reject a scale that is not finite and > 0, naming it.
  {
    std::vector<float> bad = s;
    bad[4] = 0.0f;
    lowbit::group_int_quant<semantics::exact> ge{.group_size = 2, .axis = 1};
    check_rejected([&] { ge(xv, strided_view<const float>(bad.data(), {2, 3}), zv, 4.0f, yv); }, y,
                   "lowbit::group_int_quant (exact semantics): scale[1, 1] = 0 is invalid; expected a finite value > 0");
    bad[4] = lowbit_test::inf;
    check_rejected([&] { ge(xv, strided_view<const float>(bad.data(), {2, 3}), zv, 4.0f, yv); }, y, "scale[1, 1] = inf");
  }
  // Overlapping outputs: y over scale, or y over x shifted.
  {
    std::vector<float> buf(30, 0.5f);
    check_rejected([&] {
      g(xv, strided_view<const float>(buf.data(), {2, 3}), zv, 4.0f, strided_view<float>(buf.data() + 4, {2, 6}));
    }, y, "overlaps scale");
    CHECK(buf == std::vector<float>(30, 0.5f));
    check_rejected([&] {
      g(strided_view<const float>(buf.data(), {2, 6}), sv, zv, 4.0f, strided_view<float>(buf.data() + 1, {2, 6}));
    }, y, "overlaps x");
    CHECK(buf == std::vector<float>(30, 0.5f));
  }
  // output_shape() checks the same, the attributes first (a group size of 0
  // was divided by: SIGFPE, found by fuzz_blocks).
  CHECK_THROWS_WITH(g.output_shape(xv, sv, strided_view<const float>(z.data(), {2, 2}), 4.0f),
                    lowbit_test::contains_substring("zeropt has shape [2, 2]"));
  CHECK_THROWS_WITH(with([](auto& h) { h.group_size = 0; }).output_shape(xv, sv, zv, 4.0f),
                    lowbit_test::contains_substring("group_size = 0 is invalid; expected at least 1"));
  CHECK_THROWS_WITH(with([](auto& h) { h.rounding = static_cast<rounding_mode>(42); }).output_shape(xv, sv, zv, 4.0f),
                    lowbit_test::contains_substring("rounding"));
  CHECK_THROWS_WITH(g.group_shape(shape{}), lowbit_test::contains_substring("x has rank 0"));
}

TEST_CASE("group_int_quant: attributes by name, group_size and axis as integers", "[group_quant][attributes]") {
  lowbit::group_int_quant<> g;
  CHECK(g.group_size == 128);
  CHECK(g.axis == -1);
  lowbit::set_attribute(g, "group_size", "32");
  CHECK(g.group_size == 32);
  lowbit::set_attribute(g, "block_size", 64);  // ONNX QuantizeLinear's name
  CHECK(g.group_size == 64);
  lowbit::set_attribute(g, "axis", -2);
  CHECK(g.axis == -2);
  lowbit::set_attribute(g, "axis", "1");
  CHECK(g.axis == 1);
  lowbit::set_attribute(g, "signed", 0);
  lowbit::set_attribute(g, "rounding_mode", "floor");
  CHECK(!g.is_signed);
  CHECK(g.rounding == rounding_mode::floor);
  using lowbit_test::contains_substring;
  CHECK_THROWS_WITH(lowbit::set_attribute(g, "axis", "1x"),
                    contains_substring("lowbit::group_int_quant: attribute axis = \"1x\" is invalid; expected an "
                                       "integer"));
  CHECK_THROWS_WITH(lowbit::set_attribute(g, "group_size", -1),
                    contains_substring("attribute group_size = -1 is invalid; expected a non-negative integer"));
  CHECK_THROWS_WITH(lowbit::set_attribute(g, "axis", 3000000000LL), contains_substring("axis = 3000000000 is invalid"));
  CHECK_THROWS_WITH(lowbit::set_attribute(g, "axis", ""), contains_substring("axis = \"\" is invalid"));
  CHECK_THROWS_WITH(lowbit::set_attribute(g, "rounding_mode", 2), contains_substring("a string naming a rounding mode"));
  CHECK_THROWS_WITH(lowbit::set_attribute(g, "groups", 2),
                    contains_substring("expected one of: signed, narrow, rounding_mode, group_size (or block_size), axis"));
  CHECK(g.group_size == 64);
  CHECK(g.axis == 1);
}
