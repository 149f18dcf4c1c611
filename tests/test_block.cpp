// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/block.hpp: the per-block reduction and the
// block-fed element-wise step, against element-by-element oracles.
#include <lowbit/detail/block.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support/catch.hpp"
#include "support/positions.hpp"

namespace {

using lowbit::detail::block_layout;
using lowbit::detail::nd;

struct tensor {
  std::vector<std::size_t> ext;
  std::vector<std::ptrdiff_t> str;
  std::ptrdiff_t base = 0;  // offset of element 0 in the buffer
  std::size_t count() const {
    std::size_t n = 1;
    for (std::size_t e : ext) n *= e;
    return n;
  }
  /// Buffer offset of row-major position f.
  std::ptrdiff_t at(std::size_t f) const {
    std::ptrdiff_t off = base;
    for (std::size_t r = ext.size(); r-- > 0;) {
      off += static_cast<std::ptrdiff_t>(f % ext[r]) * str[r];
      f /= ext[r];
    }
    return off;
  }
  template <class E>
  nd<E> view(E* buf) const {
    nd<E> d;
    d.data = buf + base;
    d.rank = ext.size();
    for (std::size_t r = 0; r < ext.size(); ++r) {
      d.ext[r] = ext[r];
      d.str[r] = str[r];
    }
    return d;
  }
};

/// Row-major strides of ext, optionally transposed (reversed order) or spread.
tensor layout(std::vector<std::size_t> ext, int kind) {
  tensor t;
  t.ext = ext;
  t.str.resize(ext.size());
  std::ptrdiff_t s = kind == 2 ? 2 : 1;
  if (kind == 1) {
    for (std::size_t r = 0; r < ext.size(); ++r) {
      t.str[r] = s;
      s *= static_cast<std::ptrdiff_t>(ext[r]);
    }
  } else {
    for (std::size_t r = ext.size(); r-- > 0;) {
      t.str[r] = s;
      s *= static_cast<std::ptrdiff_t>(ext[r]);
    }
  }
  return t;
}

std::size_t span_of(const tensor& t) {
  std::ptrdiff_t hi = 0;
  for (std::size_t f = 0; f < t.count(); ++f) hi = std::max(hi, t.at(f));
  return static_cast<std::size_t>(hi) + 1;
}

/// The oracle: the block index (row-major in block_shape) of position f.
std::size_t block_of(const std::vector<std::size_t>& ext, block_layout b, std::size_t f) {
  std::vector<std::size_t> idx(ext.size());
  for (std::size_t r = ext.size(); r-- > 0;) {
    idx[r] = f % ext[r];
    f /= ext[r];
  }
  idx[b.axis] /= b.k;
  std::size_t flat = 0;
  for (std::size_t r = 0; r < ext.size(); ++r) {
    const std::size_t e = r == b.axis ? (ext[r] + b.k - 1) / b.k : ext[r];
    flat = flat * e + idx[r];
  }
  return flat;
}

}  // namespace

TEST_CASE("block_shape and check_block_layout", "[block]") {
  using lowbit::shape;
  CHECK(lowbit::detail::block_shape(shape{4, 70}, {1, 32}) == shape{4, 3});
  CHECK(lowbit::detail::block_shape(shape{64, 5}, {0, 32}) == shape{2, 5});
  CHECK(lowbit::detail::block_shape(shape{3}, {0, 1}) == shape{3});
  CHECK_THROWS_WITH(lowbit::detail::check_block_layout("op", shape{2, 3}, {2, 32}),
                    lowbit_test::contains_substring("axis = 2 is invalid for a tensor of shape [2, 3]"));
  CHECK_THROWS_WITH(lowbit::detail::check_block_layout("op", shape{2, 3}, {1, 0}),
                    lowbit_test::contains_substring("block size = 0 is invalid"));
}

TEST_CASE("block_reduce: max |x| of every block, ragged last blocks, any axis and layout, SIMD and scalar",
          "[block]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  const std::vector<std::vector<std::size_t>> shapes = {{100}, {3, 70}, {70, 3}, {4, 33, 9}, {2, 3, 64}, {1, 1}, {5, 1, 40}};
  for (const auto& ext : shapes) {
    for (std::size_t axis = 0; axis < ext.size(); ++axis) {
      for (std::size_t k : {std::size_t(1), std::size_t(4), std::size_t(16), std::size_t(32), std::size_t(7)}) {
        for (int kind : {0, 1, 2}) {
          const tensor t = layout(ext, kind);
          std::vector<float> buf(span_of(t), std::numeric_limits<float>::quiet_NaN());  // gaps are NaN: never read
          for (std::size_t f = 0; f < t.count(); ++f) buf[static_cast<std::size_t>(t.at(f))] = u(rng);
          // Subnormals, zeros and a NaN in one block when there are enough elements.
          if (t.count() > 10) {
            buf[static_cast<std::size_t>(t.at(1))] = -1e-40f;
            buf[static_cast<std::size_t>(t.at(2))] = -0.0f;
          }
          const bool with_nan = t.count() > 20;
          if (with_nan) buf[static_cast<std::size_t>(t.at(t.count() - 3))] = std::numeric_limits<float>::quiet_NaN();
          const block_layout b{axis, k};
          const lowbit::shape bs = lowbit::detail::block_shape(lowbit::shape(ext.begin(), ext.end()), b);
          std::vector<float> want(bs.count(), 0.0f);
          std::vector<bool> nan(bs.count(), false);
          for (std::size_t f = 0; f < t.count(); ++f) {
            const float v = buf[static_cast<std::size_t>(t.at(f))];
            const std::size_t blk = block_of(ext, b, f);
            if (std::isnan(v)) nan[blk] = true;
            else want[blk] = std::max(want[blk], std::fabs(v));
          }
          // An infinity in another block (it must win over finite values, lose to NaN).
          if (t.count() > 40) buf[static_cast<std::size_t>(t.at(5))] = -std::numeric_limits<float>::infinity();
          if (t.count() > 40) {
            const std::size_t blk = block_of(ext, b, 5);
            if (!nan[blk]) want[blk] = std::numeric_limits<float>::infinity();
          }
          for (int bits_form = 0; bits_form < 4; ++bits_form) {
            const bool simd = bits_form % 2 == 0;
            CAPTURE(ext, axis, k, kind, simd, bits_form);
            std::vector<float> got(bs.count(), -1.0f);
            // The NaN-aware float max, and MX's integer max over the bits of |x|.
            if (bits_form < 2)
              lowbit::detail::block_reduce(t.view<const float>(buf.data()), b, got.data(),
                                           lowbit::detail::max_abs_reduction<float>{}, simd);
            else
              lowbit::detail::block_reduce(t.view<const float>(buf.data()), b, got.data(),
                                           lowbit::detail::max_abs_bits_reduction{}, simd);
            for (std::size_t i = 0; i < got.size(); ++i) {
              if (nan[i]) {
                CHECK(std::isnan(got[i]));
              } else {
                CHECK(std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(want[i]));
              }
            }
          }
        }
      }
    }
  }
}

namespace {

/// y = x / v + p + (flat position) * 2^-20 : checks that v is the element's
/// block value, p the broadcast parameter and the position the element's own.
struct block_kernel {
  static constexpr bool index_aware = true;
  template <class V>
  V operator()(lowbit::detail::element_index ix, V x, V p, V v) const noexcept {
    using T = lowbit::detail::lane_t<V>;
    return x / v + p + lowbit_test::positions<V>(ix) * T(0x1p-20);
  }
};

}  // namespace

TEST_CASE("elementwise_blocks: each element sees its block's value and its own position", "[block][index]") {
  const std::vector<std::vector<std::size_t>> shapes = {{100}, {3, 70}, {70, 3}, {4, 33, 9}, {2, 3, 64}, {1}, {2, 1, 40}};
  for (const auto& ext : shapes) {
    for (std::size_t axis = 0; axis < ext.size(); ++axis) {
      for (std::size_t k : {std::size_t(1), std::size_t(5), std::size_t(32)}) {
        for (int kind : {0, 1}) {
          const tensor tx = layout(ext, 0), ty = layout(ext, kind);
          const lowbit::shape out(ext.begin(), ext.end());
          const block_layout b{axis, k};
          const lowbit::shape bs = lowbit::detail::block_shape(out, b);
          std::vector<double> x(tx.count()), v(bs.count());
          for (std::size_t f = 0; f < x.size(); ++f) x[f] = double(f % 97) - 40.0;
          for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::ldexp(1.0, int(i % 9) - 4);
          // p: per position along the last axis (broadcast over the others).
          std::vector<double> p(ext.back());
          for (std::size_t i = 0; i < p.size(); ++i) p[i] = 1000.0 * double(i);
          nd<const double> pd;
          pd.rank = 1;
          pd.ext[0] = ext.back();
          pd.str[0] = 1;
          pd.data = p.data();
          for (unsigned threads : {1u, 2u}) {
            for (bool simd : {true, false}) {
              CAPTURE(ext, axis, k, kind, threads, simd);
              std::vector<double> y(span_of(ty), -7.0);
              lowbit::execution ex;
              ex.threads = threads;
              ex.min_elements_per_thread = 16;
              lowbit::detail::elementwise_blocks<double, 2>(
                  out, tx.view<const double>(x.data()), {&pd}, v.data(), ty.view<double>(y.data()), b,
                  [&](const lowbit::detail::piece<double, 2>& pc) { lowbit::detail::run_piece(block_kernel{}, pc, simd); },
                  ex);
              std::size_t bad = 0;
              for (std::size_t f = 0; f < tx.count(); ++f) {
                const double want = x[f] / v[block_of(ext, b, f)] + p[f % ext.back()] + double(f) * 0x1p-20;
                bad += std::bit_cast<std::uint64_t>(y[static_cast<std::size_t>(ty.at(f))]) !=
                       std::bit_cast<std::uint64_t>(want);
              }
              CHECK(bad == 0);
            }
          }
        }
      }
    }
  }
}
