// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/block.hpp
 * The block step of the engine, for block-scaled formats (one scale per
 * block of k elements along an axis): a per-block reduction of x (e.g. the
 * largest |x| of each block), and the element-wise step fed with each
 * element's block value as one more kernel parameter.
 *
 * A block is `k` consecutive elements along dimension `axis`; the last block
 * of each line holds the `n % k` elements left over when k does not divide
 * the extent n (a ragged block). Block values are stored row-major in
 * block_shape(): the shape with extent ceil(n / k) along the axis.
 */
#ifndef LOWBIT_DETAIL_BLOCK_HPP
#define LOWBIT_DETAIL_BLOCK_HPP

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include "../config.hpp"
#include "../error.hpp"
#include "../view.hpp"
#include "elementwise.hpp"
#include "int_lanes.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// Blocks of `k` elements along dimension `axis`.
struct block_layout {
  std::size_t axis = 0;
  std::size_t k = 32;
};

/// Checks a block layout against a shape: an axis of the shape, k >= 1.
inline void check_block_layout(const char* op, const shape& s, block_layout b) {
  if (b.axis >= s.rank())
    throw error(std::string(op) + ": axis = " + std::to_string(b.axis) + " is invalid for a tensor of shape " +
                s.to_string() + "; expected an axis from 0 to " +
                (s.rank() ? std::to_string(s.rank() - 1) : std::string("-1 (a scalar has no axis)")));
  if (b.k == 0) throw error(std::string(op) + ": block size = 0 is invalid; expected at least 1");
}

/// The shape of the block values of a tensor of shape `s`.
inline shape block_shape(const shape& s, block_layout b) {
  std::array<std::size_t, max_rank> e{};
  for (std::size_t d = 0; d < s.rank(); ++d) e[d] = s[d];
  e[b.axis] = s[b.axis] / b.k + (s[b.axis] % b.k != 0);
  return shape(e.begin(), e.begin() + s.rank());
}

/**
 * A reduction for block_reduce: `init`, `map(v)` applied to every element
 * and `combine(a, b)`, each generic over a scalar and a batch. `combine`
 * must be associative and commutative in bits (max, min, or), because the
 * SIMD path combines in a different order from the scalar one.
 */
template <class T>
struct max_abs_reduction {
  T init = T(0);
  template <class V>
  LOWBIT_ALWAYS_INLINE V map(V v) const noexcept {
    return detail::abs(v);
  }
  /// The larger value; NaN if either is NaN (a NaN poisons its block).
  template <class V>
  LOWBIT_ALWAYS_INLINE V combine(V a, V b) const noexcept {
    const V m = detail::select(a < b, b, a);
    return detail::select(detail::is_nan(a), a, detail::select(detail::is_nan(b), b, m));
  }
};

/**
 * max |x| over float32 values with the same answer as max_abs_reduction
 * (NaN if any element is NaN, else +inf if any is infinite, else the
 * largest magnitude), from one integer max per step: the bits of |x| order
 * as its values, and every NaN's bits lie above +inf's. A NaN result is
 * one of the block's NaNs (with its sign cleared).
 */
struct max_abs_bits_reduction {
  float init = 0.0f;
  template <class V>
  LOWBIT_ALWAYS_INLINE V map(V v) const noexcept {
    return detail::abs(v);
  }
  template <class V>
  LOWBIT_ALWAYS_INLINE V combine(V a, V b) const noexcept {
    return bits_float(imax(float_bits(a), float_bits(b)));
  }
};

/// The x-offset walk over every position of dimensions [0, axis) (outer)
/// or (axis, rank) (inner) of x: a plan of one operand, size-1 dimensions
/// dropped and contiguous ones merged.
template <class T>
loop_plan<1> sub_plan(const nd<const T>& x, std::size_t from, std::size_t to) {
  nd_geom g;
  g.rank = to - from;
  for (std::size_t d = from; d < to; ++d) {
    g.ext[d - from] = x.ext[d];
    g.str[d - from] = x.str[d];
  }
  return make_plan<1>(g.get_shape(), {&g});
}

/**
 * out[block] = combine over the block's elements e of map(x[e]), for every
 * block of x (see the file comment), row-major in block_shape(). With
 * `simd`, whole batches along the block (the axis is x's innermost
 * dimension and contiguous) or across the inner dimensions (contiguous
 * there); the scalar path otherwise. x must have at least one element.
 */
template <class T, class R>
void block_reduce(const nd<const T>& x, block_layout b, T* out, const R& red, bool simd = true) {
  using B = batch<T>;
  constexpr std::size_t L = B::size;
  const std::size_t a = b.axis, k = b.k, n = x.ext[a];
  const std::size_t nb = n / k + (n % k != 0);
  const std::ptrdiff_t sa = x.str[a];
  const loop_plan<1> op = sub_plan(x, 0, a), ip = sub_plan(x, a + 1, x.rank);
  const std::size_t inner = ip.count;
  // Contiguous inner positions: one run of stride 1 (or a single element).
  const bool inner_run = ip.rank == 1 && (ip.count == 1 || ip.str[0][0] == 1);
  T* o = out;
  for_each_outer(op, [&](const std::array<std::ptrdiff_t, 1>& xo) {
    const T* xl = x.data + xo[0];  // this line's first element
    for (std::size_t blk = 0; blk < nb; ++blk, o += inner) {
      const std::size_t c0 = blk * k, c1 = std::min(n, c0 + k);
      if (inner == 1) {
        // One value per block, along the axis.
        T acc = red.init;
        std::size_t c = c0;
        if (simd && sa == 1 && c1 - c0 >= L) {
          B v(red.init);
          for (; c + L <= c1; c += L) v = red.combine(v, red.map(load<B>(xl + c)));
          alignas(64) T lanes[L];
          v.store_aligned(lanes);
          // A tree of depth log2(L), not a chain of L dependent steps.
          for (std::size_t w = L / 2; w >= 1; w /= 2)
            for (std::size_t j = 0; j < w; ++j) lanes[j] = red.combine(lanes[j], lanes[j + w]);
          acc = red.combine(acc, lanes[0]);
        }
        for (; c < c1; ++c) {
          no_vectorize(c);
          acc = red.combine(acc, red.map(xl[static_cast<std::ptrdiff_t>(c) * sa]));
        }
        *o = acc;
      } else if (inner_run) {
        // A row of `inner` values per block, combined row by row.
        std::fill(o, o + inner, red.init);
        for (std::size_t c = c0; c < c1; ++c) {
          const T* row = xl + static_cast<std::ptrdiff_t>(c) * sa;
          std::size_t i = 0;
          if (simd)
            for (; i + L <= inner; i += L)
              detail::store(o + i, red.combine(load<B>(o + i), red.map(load<B>(row + i))));
          for (; i < inner; ++i) {
            no_vectorize(i);
            o[i] = red.combine(o[i], red.map(row[i]));
          }
        }
      } else {
        // Strided inner dimensions: element by element.
        std::fill(o, o + inner, red.init);
        for (std::size_t c = c0; c < c1; ++c) {
          const T* row = xl + static_cast<std::ptrdiff_t>(c) * sa;
          std::size_t i = 0;
          for_each_outer(ip, [&](const std::array<std::ptrdiff_t, 1>& xi) {
            o[i] = red.combine(o[i], red.map(row[xi[0]]));
            ++i;
          });
        }
      }
    }
  });
}

/// `g` (broadcast against a shape of rank R) as rank R + 1 with dimension
/// `axis` split into (blocks, len) from axis position `first` on: position
/// `first + blk * k + j` is at (blk, j). With `per_block`, g holds one value
/// per block (block_shape), constant over the block's elements. Adds to
/// `offset` the element offset of g at axis position `first`.
inline nd_geom split_axis(const nd_geom& g, std::size_t R, block_layout b, std::size_t blocks, std::size_t len,
                          std::size_t first, bool per_block, std::ptrdiff_t& offset) {
  nd_geom s;
  s.rank = R + 1;
  for (std::size_t d = 0, o = 0; d < R; ++d, ++o) {
    const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(d) - static_cast<std::ptrdiff_t>(R - g.rank);
    const bool has = j >= 0 && g.ext[static_cast<std::size_t>(j)] != 1;  // not broadcast along d
    const std::ptrdiff_t st = has ? g.str[static_cast<std::size_t>(j)] : 0;
    if (d != b.axis) {
      s.ext[o] = has ? g.ext[static_cast<std::size_t>(j)] : 1;
      s.str[o] = st;
      continue;
    }
    const std::size_t at = per_block ? first / b.k : first;
    const std::ptrdiff_t step = per_block ? st : st * static_cast<std::ptrdiff_t>(b.k);
    offset += st * static_cast<std::ptrdiff_t>(at);
    s.ext[o] = has ? blocks : 1;
    s.str[o] = has ? step : 0;
    ++o;
    s.ext[o] = has && !per_block ? len : 1;
    s.str[o] = has && !per_block ? st : 0;
  }
  return s;
}

/**
 * The element-wise step fed by blocks, general form: `y = kernel(x,
 * params...)` over the shape `out`, where parameter I is either broadcast
 * to `out` (numpy rules, `per_block[I]` false) or holds one value per block
 * (`per_block[I]` true: a tensor of exactly block_shape(out, b), any
 * strides), which the kernel receives for every element of the block. The
 * pieces carry each element's flat position in `out` as usual.
 *
 * Runs as at most two engine calls: the full blocks, with the axis split
 * into (blocks, k) so that a per-block value is constant along k, and the
 * ragged last blocks. `out` must have a rank below max_rank (the split adds
 * one). Nothing is allocated: the per-block tensors are read in place.
 */
template <class T, std::size_t NP, class F>
void elementwise_blocks(const shape& out, const nd<const T>& x, const std::array<const nd<const T>*, NP>& params,
                        const std::array<bool, NP>& per_block, const nd<T>& y, block_layout b, const F& f,
                        const execution& exec = {}) {
  const std::size_t R = out.rank(), n = out[b.axis];
  if (out.count() == 0) return;
  if (R >= max_rank)
    throw error("lowbit: a block-wise operator needs a rank below " + std::to_string(max_rank) +
                "; the output has shape " + out.to_string());
  const nd_geom pos = row_major_geom(out);  // output positions (piece::index)
  const std::size_t full = n / b.k, rest = n % b.k;
  // The full blocks (from axis position 0), then the ragged ones.
  for (int part = 0; part < 2; ++part) {
    const std::size_t blocks = part == 0 ? full : 1, len = part == 0 ? b.k : rest;
    if (blocks == 0 || len == 0) continue;
    const std::size_t first = part == 0 ? 0 : full * b.k;
    std::array<std::size_t, max_rank> e{};
    for (std::size_t d = 0, o = 0; d < R; ++d, ++o) {
      e[o] = d == b.axis ? blocks : out[d];
      if (d == b.axis) e[++o] = len;
    }
    std::ptrdiff_t xo = 0, yo = 0, po = 0;
    std::array<std::ptrdiff_t, NP> pofs{};
    const nd_geom xs = split_axis(x, R, b, blocks, len, first, false, xo);
    const nd_geom ys = split_axis(y, R, b, blocks, len, first, false, yo);
    const nd_geom ps = split_axis(pos, R, b, blocks, len, first, false, po);
    std::array<nd_geom, NP> pg;
    std::array<const nd_geom*, NP + 3> ops{};
    std::array<const T*, NP> pp;
    for (std::size_t I = 0; I < NP; ++I) {
      pg[I] = split_axis(*params[I], R, b, blocks, len, first, per_block[I], pofs[I]);
      pp[I] = params[I]->data + pofs[I];
      ops[1 + I] = &pg[I];
    }
    ops[0] = &xs;
    ops[NP + 1] = &ys;
    ops[NP + 2] = &ps;
    engine_plan<NP> plan;
    static_cast<loop_plan<NP + 3>&>(plan) = make_plan<NP + 3>(shape(e.begin(), e.begin() + R + 1), ops);
    plan.first_index = static_cast<std::size_t>(po);
    elementwise(plan, x.data + xo, pp, y.data + yo, f, exec);
  }
}

/**
 * The element-wise step fed by blocks: `y = kernel(x, params..., v)` over
 * the shape `out` (x, y and the NP - 1 parameters broadcast to it), where v
 * is the value of the element's block, read from `values` (row-major in
 * block_shape(out, b)). The kernel receives v as its last parameter (the
 * general form above, with one per-block parameter, last).
 */
template <class T, std::size_t NP, class F>
void elementwise_blocks(const shape& out, const nd<const T>& x, const std::array<const nd<const T>*, NP - 1>& params,
                        const T* values, const nd<T>& y, block_layout b, const F& f, const execution& exec = {}) {
  static_assert(NP >= 1, "the block value is the last parameter");
  if (out.count() == 0) return;
  if (out.rank() >= max_rank)
    throw error("lowbit: a block-wise operator needs a rank below " + std::to_string(max_rank) +
                "; the output has shape " + out.to_string());
  nd<const T> vd;  // the block values, row-major in the block shape
  set_row_major(vd, out.rank(), block_shape(out, b).begin());
  vd.data = values;
  std::array<const nd<const T>*, NP> all{};
  std::array<bool, NP> per_block{};
  for (std::size_t I = 0; I + 1 < NP; ++I) all[I] = params[I];
  all[NP - 1] = &vd;
  per_block[NP - 1] = true;
  elementwise_blocks<T, NP>(out, x, all, per_block, y, b, f, exec);
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_BLOCK_HPP
