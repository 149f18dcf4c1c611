// SPDX-License-Identifier: Apache-2.0
/**
 * @file broadcast.hpp
 * numpy broadcasting of parameter tensors against the input, and the loop
 * that walks the broadcast shape one innermost run at a time.
 */
#ifndef LOWBIT_BROADCAST_HPP
#define LOWBIT_BROADCAST_HPP

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>

#include "config.hpp"
#include "error.hpp"
#include "view.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {

/// Shape i's name in a broadcast message.
LOWBIT_NOINLINE_COLD inline std::string shape_name(const char* const* names, std::size_t n_names, std::size_t i) {
  return i < n_names ? std::string(names[i]) : "input " + dec(i);
}

[[noreturn]] LOWBIT_NOINLINE_COLD inline void throw_no_broadcast(const shape* shapes, const char* const* names,
                                                                std::size_t n_names, const char* op, std::size_t a,
                                                                std::size_t b, std::size_t d, std::size_t ea,
                                                                std::size_t eb) {
  throw_error(op, ": shapes do not broadcast: ", shape_name(names, n_names, a), " has shape ", shapes[a].to_string(),
              " and ", shape_name(names, n_names, b), " has shape ", shapes[b].to_string(), " (dimension ", dec(d),
              " of the broadcast: ", dec(ea), " vs ", dec(eb), "); expected equal extents or 1");
}

[[noreturn]] LOWBIT_NOINLINE_COLD inline void throw_count_overflow(const shape* shapes, const char* const* names,
                                                                  std::size_t n_names, std::size_t n, const char* op,
                                                                  const std::array<std::size_t, max_rank>& out,
                                                                  std::size_t rank) {
  std::string dims = "[";
  for (std::size_t d = 0; d < rank; ++d) {
    if (d) dims += ", ";
    dims += dec(out[d]);
  }
  dims += "]";
  std::string what;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) what += ", ";
    what += shape_name(names, n_names, i);
    what += " ";
    what += shapes[i].to_string();
  }
  throw_error(op, ": the broadcast of ", what, " has shape ", dims,
              ", whose element count overflows std::size_t; expected at most ",
              dec(std::numeric_limits<std::size_t>::max()), " elements");
}

/// broadcast_shape over `n` shapes, `n_names` of them named (the rest are
/// "input i" in messages): the one implementation, for the public function
/// and the operators' driver.
inline shape broadcast_shapes(const shape* shapes, const char* const* names, std::size_t n, const char* op,
                              std::size_t n_names) {
  // The usual call: scalar parameters next to one tensor, whose shape is
  // the broadcast (a count that overflows is reported below).
  const shape* only = nullptr;
  std::size_t tensors = 0;
  for (const shape& s : std::span(shapes, n))
    if (s.rank() != 0) {
      only = &s;
      ++tensors;
    }
  std::size_t n1 = 0;
  if (tensors == 0) return shape{};
  if (tensors == 1 && detail::checked_count(only->begin(), only->rank(), n1)) return *only;
  std::size_t rank = 0;
  for (const shape& s : std::span(shapes, n)) rank = std::max(rank, s.rank());
  std::array<std::size_t, max_rank> out;
  out.fill(1);
  std::array<std::size_t, max_rank> owner{};  // which input set out[d]
  std::size_t k = 0;
  for (const shape& s : std::span(shapes, n)) {
    const std::size_t off = rank - s.rank();
    for (std::size_t j = 0; j < s.rank(); ++j) {
      const std::size_t d = off + j, e = s[j];
      if (e == 1) continue;
      if (out[d] == 1) {
        out[d] = e;
        owner[d] = k;
      } else if (out[d] != e) {
        throw_no_broadcast(shapes, names, n_names, op, owner[d], k, d, out[d], e);
      }
    }
    ++k;
  }
  std::size_t count = 0;
  if (!detail::checked_count(out.data(), rank, count)) throw_count_overflow(shapes, names, n_names, n, op, out, rank);
  return shape(out.begin(), out.begin() + rank);
}

/// The same with every shape named.
inline shape broadcast_shapes(const shape* shapes, const char* const* names, std::size_t n, const char* op) {
  return broadcast_shapes(shapes, names, n, op, n);
}

}  // namespace detail

/**
 * The numpy broadcast of several shapes: shapes are aligned on their last
 * dimension, missing leading dimensions count as 1, and in each dimension
 * the extents must be equal or 1. The result's rank is the largest rank.
 *
 * @param names  the parameter names used in the error message, one per shape.
 * @throws lowbit::error naming both tensors and the dimension when two
 *         extents differ and neither is 1.
 *
 * **Example**:
 * ```
 * auto s = lowbit::broadcast_shape({{2, 3, 4}, {3, 1}});  // [2, 3, 4]
 * ```
 */
inline shape broadcast_shape(std::initializer_list<shape> shapes,
                             std::initializer_list<const char*> names = {},
                             const char* op = "lowbit::broadcast_shape") {
  return detail::broadcast_shapes(shapes.begin(), names.begin(), shapes.size(), op, names.size());
}

namespace detail {

/**
 * The iteration plan for N operands over one broadcast shape: size-1
 * dimensions dropped, dimensions that are contiguous for every operand
 * merged, so the innermost run is as long as possible. Strides are in
 * elements; a broadcast dimension has stride 0.
 */
template <std::size_t N>
struct loop_plan {
  std::size_t rank = 0;  // 0 only when the count is 0
  std::array<std::size_t, max_rank> ext{};
  std::array<std::array<std::ptrdiff_t, max_rank>, N> str{};
  std::size_t count = 0;

  std::size_t run_length() const noexcept { return rank ? ext[rank - 1] : 0; }
  std::ptrdiff_t inner_stride(std::size_t k) const noexcept { return str[k][rank - 1]; }
};

/**
 * make_plan's work, once for any number of operands: `nops` descriptors
 * `ops`, strides written to `str[k]`. Returns the plan's rank (ext holds
 * its extents); the count is the caller's. Not a template, so that a
 * translation unit compiles it once, whatever the operand counts it plans.
 */
inline std::size_t make_plan_dims(const shape& out, const nd_geom* const* ops, std::size_t nops,
                                  std::array<std::size_t, max_rank>& ext,
                                  std::array<std::ptrdiff_t, max_rank>* str) noexcept {
  const std::size_t R = out.rank();
  // Walk the broadcast dimensions from the innermost out, dropping size-1
  // dimensions and merging a dimension into the one inside it when every
  // operand steps through both as one. Collected innermost first, then
  // reversed.
  std::size_t n = 0;
  for (std::size_t d = R; d-- > 0;) {
    if (out[d] == 1) continue;
    bool merge = n > 0;
    for (std::size_t k = 0; k < nops; ++k) {
      const nd_geom& o = *ops[k];
      const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(d) - static_cast<std::ptrdiff_t>(R - o.rank);
      const std::ptrdiff_t s = (j < 0 || o.ext[static_cast<std::size_t>(j)] == 1) ? 0 : o.str[static_cast<std::size_t>(j)];
      if (merge) {
        // s == str * ext, without computing a product that overflows (a
        // stride that fits in std::ptrdiff_t never equals one that does not).
        const std::ptrdiff_t in = str[k][n - 1];
        const std::size_t e = ext[n - 1];
        constexpr std::size_t pmax = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
        const std::size_t mag = in < 0 ? std::size_t(0) - static_cast<std::size_t>(in) : static_cast<std::size_t>(in);
        merge = in == 0 ? s == 0 : e <= pmax && mag <= pmax / e && s == in * static_cast<std::ptrdiff_t>(e);
      }
      str[k][n] = s;  // slot n is free: kept only if the dimension is not merged
    }
    if (merge) {
      ext[n - 1] *= out[d];
    } else {
      ext[n] = out[d];
      ++n;
    }
  }
  if (n < max_rank)  // a merged dimension's strides were left in slot n
    for (std::size_t k = 0; k < nops; ++k) str[k][n] = 0;
  if (n == 0) {  // a single element
    ext[0] = 1;
    return 1;
  }
  for (std::size_t r = 0; r < n / 2; ++r) {
    std::swap(ext[r], ext[n - 1 - r]);
    for (std::size_t k = 0; k < nops; ++k) std::swap(str[k][r], str[k][n - 1 - r]);
  }
  return n;
}

/// Builds the plan for operands whose nd descriptors are `ops`, against the
/// broadcast shape `out` (each operand must broadcast to it).
template <std::size_t N>
loop_plan<N> make_plan(const shape& out, const std::array<const nd_geom*, N>& ops) {
  loop_plan<N> p;
  p.count = out.count();
  if (p.count == 0) return p;
  p.rank = make_plan_dims(out, ops.data(), N, p.ext, p.str.data());
  return p;
}

/**
 * Calls `f(offsets)` for the positions [first, last) of the row-major order
 * of the plan's dimensions [0, rank), where `offsets[k]` is operand k's
 * element offset there; stops early when f returns false. For tiles: the caller lowers `rank` to leave the
 * innermost dimensions out. (A part of a multi-threaded call is a range.)
 */
template <std::size_t N, class F>
void for_each_outer_range(const loop_plan<N>& p, std::size_t first, std::size_t last, F&& f) {
  if (first >= last) return;
  std::array<std::ptrdiff_t, N> off{};
  std::array<std::size_t, max_rank> idx{};
  std::size_t rest = first;
  for (std::size_t d = p.rank; d-- > 0;) {
    idx[d] = rest % p.ext[d];
    rest /= p.ext[d];
    for (std::size_t k = 0; k < N; ++k) off[k] += p.str[k][d] * static_cast<std::ptrdiff_t>(idx[d]);
  }
  for (std::size_t pos = first;;) {
    if constexpr (std::is_same_v<decltype(f(off)), bool>) {
      if (!f(off)) return;  // f asked to stop
    } else {
      f(off);
    }
    if (++pos == last) return;
    for (std::size_t d = p.rank; d-- > 0;) {
      // Step or wrap around: the offsets never leave the operand's span
      // (checked when its view was read), not even for a moment.
      if (++idx[d] < p.ext[d]) {
        for (std::size_t k = 0; k < N; ++k) off[k] += p.str[k][d];
        break;
      }
      for (std::size_t k = 0; k < N; ++k) off[k] -= p.str[k][d] * static_cast<std::ptrdiff_t>(p.ext[d] - 1);
      idx[d] = 0;
    }
  }
}

/// The number of positions of the plan's dimensions [0, rank).
template <std::size_t N>
std::size_t outer_count(const loop_plan<N>& p) noexcept {
  std::size_t n = 1;
  for (std::size_t d = 0; d < p.rank; ++d) n *= p.ext[d];
  return n;
}

/// for_each_outer_range over every position.
template <std::size_t N, class F>
void for_each_outer(const loop_plan<N>& p, F&& f) {
  for_each_outer_range(p, 0, outer_count(p), f);
}

/**
 * Calls `f(offsets, n)` once per innermost run, where `offsets[k]` is the
 * element offset of operand k at the start of the run and `n` the run's
 * length (the inner strides are the plan's inner_stride(k)).
 */
template <std::size_t N, class F>
void for_each_run(const loop_plan<N>& p, F&& f) {
  if (p.count == 0) return;
  loop_plan<N> outer = p;
  outer.rank = p.rank - 1;
  const std::size_t n = p.run_length();
  for_each_outer(outer, [&](const std::array<std::ptrdiff_t, N>& off) { f(off, n); });
}

/**
 * The broadcast walker: calls `f(flat, offsets)` for every position of the
 * shape `s` in row-major order, where `flat` is the position's row-major
 * index and `offsets[k]` the element offset of operand k (`ops[k]`
 * broadcast against s). Stops early when f returns false. Every walk over
 * broadcast tensors outside the engine (validation, derived parameters,
 * codes) goes through here.
 */
template <std::size_t N, class F>
void for_each_position(const shape& s, const std::array<const nd_geom*, N>& ops, F&& f) {
  if (s.count() == 1) {  // one position (a scalar parameter): offset 0 everywhere, no plan
    f(std::size_t(0), std::array<std::ptrdiff_t, N>{});
    return;
  }
  const loop_plan<N> p = make_plan<N>(s, ops);
  if (p.count == 0) return;
  std::size_t flat = 0;
  for_each_outer_range(p, 0, p.count, [&](const std::array<std::ptrdiff_t, N>& off) {
    if constexpr (std::is_same_v<std::invoke_result_t<F&, std::size_t, const std::array<std::ptrdiff_t, N>&>, bool>)
      return f(flat++, off);
    else
      f(flat++, off);
  });
}

/// `f(flat, offset)` for every element of `g` in row-major order (the
/// walker over one operand); stops early when f returns false.
template <class F>
void for_each_element(const nd_geom& g, F&& f) {
  if (g.rank == 0) {  // a scalar parameter: no shape, no plan
    f(std::size_t(0), std::ptrdiff_t(0));
    return;
  }
  for_each_position<1>(g.get_shape(), {&g}, [&](std::size_t flat, const std::array<std::ptrdiff_t, 1>& off) {
    return f(flat, off[0]);
  });
}

/// The offset of the element of `g` that broadcasts to row-major position
/// `flat` of `out` (one position: for messages).
inline std::ptrdiff_t broadcast_offset(const nd_geom& g, const shape& out, std::size_t flat) noexcept {
  std::ptrdiff_t off = 0;
  const std::size_t lead = out.rank() - g.rank;
  for (std::size_t r = out.rank(); r-- > 0;) {
    const std::size_t i = out[r] ? flat % out[r] : 0;
    flat = out[r] ? flat / out[r] : 0;
    if (r >= lead && g.ext[r - lead] != 1) off += static_cast<std::ptrdiff_t>(i) * g.str[r - lead];
  }
  return off;
}

}  // namespace detail
LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_BROADCAST_HPP
