// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/overlap.hpp
 * Whether two strided tensors share memory, and whether one tensor maps two
 * of its indices to the same element: the checks that keep an output from
 * overwriting an input before it is read, or one of its own elements twice.
 *
 * Both questions are the same integer problem. A tensor's element at index
 * (i_0, ..., i_{r-1}) starts at byte `base + sum_k i_k * s_k` (s_k its byte
 * strides) and covers `size` bytes. Two tensors A and B share a byte iff
 *
 *     sum_k i_k sA_k + u - sum_k j_k sB_k - v = baseB - baseA
 *
 * has a solution with 0 <= i_k < eA_k, 0 <= j_k < eB_k, 0 <= u < sizeA and
 * 0 <= v < sizeB: a bounded linear Diophantine equation. It is solved
 * exactly, as numpy's `shares_memory` does (numpy/core/src/common/
 * mem_overlap.c describes the method; this is an independent implementation):
 * terms are made positive, equal coefficients merged, and a depth-first
 * search fixes the variables of the largest coefficients one by one, pruned
 * by the reachable range and the gcd of the remaining coefficients, and
 * solves the last two variables in closed form (extended Euclid). The
 * common layouts never reach the search: disjoint byte intervals are
 * decided at once. A search that exceeds its work budget answers
 * "unknown", which the callers treat as an overlap (and say so).
 */
#ifndef LOWBIT_DETAIL_OVERLAP_HPP
#define LOWBIT_DETAIL_OVERLAP_HPP

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../config.hpp"
#include "../error.hpp"
#include "../view.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

#if defined(__SIZEOF_INT128__)
#define LOWBIT_DETAIL_HAS_INT128 1
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;
#else
#define LOWBIT_DETAIL_HAS_INT128 0
#endif

/// What the overlap search found.
enum class overlap_answer { none, found, unknown };

/// A tensor as memory: the address of its element 0, its element size and
/// its geometry (strides in elements). `name` is used in messages.
struct mem_tensor {
  const char* name = "";
  std::uintptr_t base = 0;
  std::size_t elem = 1;
  const nd_geom* g = nullptr;
};

template <class E>
mem_tensor mem_of(const char* name, const nd<E>& d) noexcept {
  return {name, reinterpret_cast<std::uintptr_t>(d.data), sizeof(E), &d};
}

/// True when the tensor has no element.
inline bool mem_empty(const mem_tensor& t) noexcept {
  for (std::size_t r = 0; r < t.g->rank; ++r)
    if (t.g->ext[r] == 0) return true;
  return false;
}

/// The bytes [lo, hi) between the first byte of the tensor's lowest
/// element and the last byte of its highest one. Every offset fits in
/// std::ptrdiff_t (check_span), so the sums do not overflow.
inline void mem_interval(const mem_tensor& t, std::uintptr_t& lo, std::uintptr_t& hi) noexcept {
  std::size_t below = 0, above = 0;
  for (std::size_t r = 0; r < t.g->rank; ++r) {
    const std::size_t e = t.g->ext[r];
    if (e <= 1) continue;
    const std::ptrdiff_t s = t.g->str[r];
    const std::size_t mag = (s < 0 ? std::size_t(0) - static_cast<std::size_t>(s) : static_cast<std::size_t>(s)) * t.elem;
    (s < 0 ? below : above) += (e - 1) * mag;
  }
  lo = t.base - below;
  hi = t.base + above + t.elem;
}

#if LOWBIT_DETAIL_HAS_INT128

/// sum_k a_k x_k = b, 0 <= x_k <= u_k, a_k > 0: the bounded problem, with
/// the original variables each term stands for (equal coefficients merge).
struct dioph {
  static constexpr std::size_t max_vars = 2 * max_rank + 2;
  struct term {
    u128 a = 0, u = 0;
  };
  // Original variables: value = lo + (flip ? u - x : x) of its term's share.
  struct var {
    u128 a = 0;  // |coefficient|; 0 or u == 0: the variable takes no part
    i128 lo = 0;
    u128 u = 0;
    bool flip = false;
    std::size_t t = 0;  // its term after merging (max_vars: none)
    i128 value = 0;     // the solution, when one is found
  };
  std::array<var, max_vars> vars{};
  std::size_t nvars = 0;
  std::array<term, max_vars> terms{};
  std::size_t nterms = 0;
  std::array<u128, max_vars> x{};        // the solution per term
  std::array<u128, max_vars + 1> reach{};  // sum_{j >= k} a_j u_j
  std::array<u128, max_vars + 1> g{};      // gcd of a_j, j >= k
  i128 b = 0;
  std::size_t work = 0;
  static constexpr std::size_t work_limit = std::size_t(1) << 16;

  /// Adds c * v to the left-hand side, v an integer in [lo, hi].
  void add(i128 c, i128 lo, i128 hi) noexcept {
    var& v = vars[nvars++];
    v.lo = lo;
    v.u = static_cast<u128>(hi - lo);
    b -= c * lo;  // c * v = c * lo + c * x, x in [0, hi - lo]
    if (c < 0) {  // c x = |c| (u - x) - |c| u
      v.flip = true;
      b += static_cast<i128>(static_cast<u128>(-c) * v.u);
      c = -c;
    }
    v.a = static_cast<u128>(c);  // terms are merged in solve()
  }

  static u128 gcd(u128 p, u128 q) noexcept {
    while (q != 0) {
      const u128 r = p % q;
      p = q;
      q = r;
    }
    return p;
  }

  /// Two variables in closed form: a1 x1 + a2 x2 = rhs.
  bool solve2(std::size_t k, u128 rhs) noexcept {
    const u128 a1 = terms[k].a, a2 = terms[k + 1].a, u1 = terms[k].u, u2 = terms[k + 1].u;
    const u128 gg = gcd(a1, a2);
    if (rhs % gg != 0) return false;
    // x1 = (rhs / g) * inv(a1 / g) mod (a2 / g): the smallest x1 >= 0.
    const u128 m = a2 / gg, a1g = a1 / gg, bg = rhs / gg;
    u128 x1 = 0;
    if (m > 1) {
      // Extended Euclid on (a1g mod m, m) for the inverse of a1g mod m.
      i128 r0 = static_cast<i128>(m), r1 = static_cast<i128>(a1g % m), t0 = 0, t1 = 1;
      while (r1 != 0) {
        const i128 q = r0 / r1;
        i128 tmp = r0 - q * r1;
        r0 = r1;
        r1 = tmp;
        tmp = t0 - q * t1;
        t0 = t1;
        t1 = tmp;
      }
      const i128 mi = static_cast<i128>(m);
      const u128 inv = static_cast<u128>(((t0 % mi) + mi) % mi);
      x1 = mulmod(bg % m, inv, m);
    }
    if (x1 > u1) return false;
    // x2 is largest when x1 is smallest.
    const u128 used = a1 * x1;  // a1 * x1 <= a1 * u1 <= 2^64: no overflow
    if (used > rhs) return false;
    u128 x2 = (rhs - used) / a2;
    if (x2 > u2) {
      // Raise x1 by t steps of m: x2 falls by t * a1g.
      // The smallest t that brings x2 down to u2, if it leaves x2 >= 0 and
      // x1 <= u1.
      const u128 t = (x2 - u2 + a1g - 1) / a1g;
      if (t > x2 / a1g || t > (u1 - x1) / m) return false;
      x1 += t * m;
      x2 -= t * a1g;
    }
    x[k] = x1;
    x[k + 1] = x2;
    return true;
  }

  static u128 mulmod(u128 p, u128 q, u128 m) noexcept {
    // p, q < m <= 2^64 + a little: double-and-add keeps every value < 2m.
    u128 r = 0;
    p %= m;
    while (q != 0) {
      if (q & 1) {
        r += p;
        if (r >= m) r -= m;
      }
      p += p;
      if (p >= m) p -= m;
      q >>= 1;
    }
    return r;
  }

  overlap_answer dfs(std::size_t k, u128 rhs) noexcept {
    if (rhs > reach[k]) return overlap_answer::none;
    if (k == nterms) return rhs == 0 ? overlap_answer::found : overlap_answer::none;
    if (rhs % g[k] != 0) return overlap_answer::none;
    if (k + 1 == nterms) {
      if (rhs % terms[k].a != 0 || rhs / terms[k].a > terms[k].u) return overlap_answer::none;
      x[k] = rhs / terms[k].a;
      return overlap_answer::found;
    }
    if (k + 2 == nterms) return solve2(k, rhs) ? overlap_answer::found : overlap_answer::none;
    const u128 a = terms[k].a;
    u128 hi = std::min(terms[k].u, rhs / a);
    // x_k >= (rhs - reach[k + 1]) / a, rounded up.
    const u128 lo = rhs > reach[k + 1] ? (rhs - reach[k + 1] + a - 1) / a : 0;
    for (u128 v = hi + 1; v-- > lo;) {
      if (++work > work_limit) return overlap_answer::unknown;
      x[k] = v;
      const overlap_answer r = dfs(k + 1, rhs - a * v);
      if (r != overlap_answer::none) return r;
    }
    return overlap_answer::none;
  }

  overlap_answer solve() noexcept {
    if (b < 0) return overlap_answer::none;
    // Merge equal coefficients; drop zero coefficients and fixed variables.
    std::array<std::size_t, max_vars> order{};
    std::size_t n = 0;
    for (std::size_t i = 0; i < nvars; ++i) {
      vars[i].t = max_vars;
      if (vars[i].a != 0 && vars[i].u != 0) order[n++] = i;
    }
    // By decreasing coefficient: an insertion sort of at most max_vars entries.
    for (std::size_t j = 1; j < n && j < max_vars; ++j)
      for (std::size_t k = j; k > 0 && vars[order[k]].a > vars[order[k - 1]].a; --k) std::swap(order[k], order[k - 1]);
    nterms = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = order[j];
      if (nterms == 0 || terms[nterms - 1].a != vars[i].a) terms[nterms++] = term{vars[i].a, 0};
      terms[nterms - 1].u += vars[i].u;
      vars[i].t = nterms - 1;
    }
    reach[nterms] = 0;
    g[nterms] = 0;
    for (std::size_t k = nterms; k-- > 0;) {
      reach[k] = reach[k + 1] + terms[k].a * terms[k].u;
      g[k] = gcd(terms[k].a, g[k + 1]);
    }
    const overlap_answer r = dfs(0, static_cast<u128>(b));
    if (r != overlap_answer::found) return r;
    // Share each term's value among its variables, in order.
    std::array<u128, max_vars> left = x;
    for (std::size_t i = 0; i < nvars; ++i) {
      var& v = vars[i];
      u128 xi = 0;
      if (v.t != max_vars) {
        xi = std::min(left[v.t], v.u);
        left[v.t] -= xi;
      }
      v.value = v.lo + static_cast<i128>(v.flip ? v.u - xi : xi);
    }
    return overlap_answer::found;
  }
};

#endif  // LOWBIT_DETAIL_HAS_INT128

/// The index of an element as "[i, j]", or "" for rank 0.
LOWBIT_NOINLINE_COLD inline std::string index_string(const std::size_t* idx, std::size_t rank) {
  if (rank == 0) return "";
  std::string s = "[";
  for (std::size_t r = 0; r < rank; ++r) {
    if (r) s += ", ";
    s += dec(idx[r]);
  }
  return s += "]";
}

/// "shape [2, 3], strides [3, 1]" of a tensor.
LOWBIT_NOINLINE_COLD inline std::string geometry_string(const nd_geom& g) {
  std::string s = cat("shape ", shape(unchecked_t{}, g.ext.data(), g.rank).to_string(), ", strides [");
  for (std::size_t r = 0; r < g.rank; ++r) {
    if (r) s += ", ";
    s += dec(g.str[r]);
  }
  return s += "]";
}

/// mem_overlap's search, for tensors whose byte intervals overlap (in
/// place, interleaved or crossing views: rare, so compiled for size).
LOWBIT_NOINLINE_COLD inline overlap_answer mem_overlap_search(const mem_tensor& A, const mem_tensor& B,
                                                             std::array<std::size_t, max_rank>& ia,
                                                             std::array<std::size_t, max_rank>& ib) noexcept {
#if LOWBIT_DETAIL_HAS_INT128
  dioph d;
  // sum i_k sA_k + u - sum j_k sB_k - v = baseB - baseA
  d.b = static_cast<i128>(B.base) - static_cast<i128>(A.base);
  for (std::size_t r = 0; r < A.g->rank; ++r)
    d.add(static_cast<i128>(A.g->str[r]) * static_cast<i128>(A.elem), 0, static_cast<i128>(A.g->ext[r]) - 1);
  d.add(1, 0, static_cast<i128>(A.elem) - 1);
  for (std::size_t r = 0; r < B.g->rank; ++r)
    d.add(-static_cast<i128>(B.g->str[r]) * static_cast<i128>(B.elem), 0, static_cast<i128>(B.g->ext[r]) - 1);
  d.add(-1, 0, static_cast<i128>(B.elem) - 1);
  const overlap_answer r = d.solve();
  if (r == overlap_answer::found) {
    for (std::size_t k = 0; k < A.g->rank; ++k) ia[k] = static_cast<std::size_t>(d.vars[k].value);
    for (std::size_t k = 0; k < B.g->rank; ++k) ib[k] = static_cast<std::size_t>(d.vars[A.g->rank + 1 + k].value);
  }
  return r;
#else
  (void)A, (void)B, (void)ia, (void)ib;
  return overlap_answer::unknown;
#endif
}

/**
 * Whether tensors A and B share a byte. On `found`, `ia` and `ib` are the
 * indices of two elements that do.
 */
inline overlap_answer mem_overlap(const mem_tensor& A, const mem_tensor& B, std::array<std::size_t, max_rank>& ia,
                                  std::array<std::size_t, max_rank>& ib) noexcept {
  if (mem_empty(A) || mem_empty(B)) return overlap_answer::none;
  std::uintptr_t alo, ahi, blo, bhi;
  mem_interval(A, alo, ahi);
  mem_interval(B, blo, bhi);
  if (ahi <= blo || bhi <= alo) return overlap_answer::none;
  return mem_overlap_search(A, B, ia, ib);
}

/// self_overlap's search, for strides that are not nested (rare, so
/// compiled for size): `dims` are the n dimensions of extent above 1, by
/// stride magnitude.
LOWBIT_NOINLINE_COLD inline overlap_answer self_overlap_search(const nd_geom& g,
                                                              const std::array<std::size_t, max_rank>& dims,
                                                              std::size_t n, std::array<std::size_t, max_rank>& i1,
                                                              std::array<std::size_t, max_rank>& i2) noexcept {
#if LOWBIT_DETAIL_HAS_INT128
  // d = i1 - i2 != 0 with sum d_k s_k = 0; by symmetry the first nonzero
  // d_k (in dims order) is positive.
  for (std::size_t first = 0; first < n; ++first) {
    dioph d;
    for (std::size_t j = first; j < n; ++j) {
      const std::size_t r = dims[j];
      const i128 e = static_cast<i128>(g.ext[r]) - 1;
      d.add(static_cast<i128>(g.str[r]), j == first ? 1 : -e, e);
    }
    const overlap_answer a = d.solve();
    if (a == overlap_answer::unknown) return a;
    if (a == overlap_answer::found) {
      i1 = {};
      i2 = {};
      for (std::size_t j = first; j < n; ++j) {
        const i128 v = d.vars[j - first].value;
        const std::size_t r = dims[j];
        i1[r] = v > 0 ? static_cast<std::size_t>(v) : 0;
        i2[r] = v > 0 ? 0 : static_cast<std::size_t>(-v);
      }
      return a;
    }
  }
  return overlap_answer::none;
#else
  (void)g, (void)dims, (void)n, (void)i1, (void)i2;
  return overlap_answer::unknown;
#endif
}

/**
 * Whether a tensor maps two different indices to the same element. On
 * `found`, `i1` and `i2` are two such indices. Zero strides along extents
 * above 1, and the usual layouts (each stride beyond the reach of the
 * smaller ones), are decided without a search.
 */
inline overlap_answer self_overlap(const nd_geom& g, std::array<std::size_t, max_rank>& i1,
                                   std::array<std::size_t, max_rank>& i2) noexcept {
  std::array<std::size_t, max_rank> dims{};
  std::size_t n = 0;
  for (std::size_t r = 0; r < g.rank; ++r) {
    if (g.ext[r] == 0) return overlap_answer::none;
    if (g.ext[r] > 1) dims[n++] = r;
  }
  auto mag = [&](std::size_t r) {
    return g.str[r] < 0 ? std::size_t(0) - static_cast<std::size_t>(g.str[r]) : static_cast<std::size_t>(g.str[r]);
  };
  for (std::size_t j = 0; j < n; ++j)
    if (g.str[dims[j]] == 0) {
      i1 = {};
      i2 = {};
      i2[dims[j]] = 1;
      return overlap_answer::found;
    }
  // By stride magnitude: an insertion sort of at most max_rank entries
  // (std::sort made GCC 12 warn, -Warray-bounds, about an index past
  // max_rank that it could not rule out).
  for (std::size_t j = 1; j < n && j < max_rank; ++j)
    for (std::size_t k = j; k > 0 && mag(dims[k]) < mag(dims[k - 1]); --k) std::swap(dims[k], dims[k - 1]);
  std::size_t reach = 0;  // the largest offset the smaller strides reach (fits: check_span)
  bool nested = true;
  for (std::size_t j = 0; j < n && nested; ++j) {
    if (mag(dims[j]) <= reach) nested = false;
    reach += (g.ext[dims[j]] - 1) * mag(dims[j]);
  }
  if (nested) return overlap_answer::none;
  return self_overlap_search(g, dims, n, i1, i2);
}

/// The message of check_self_overlap.
[[noreturn]] LOWBIT_NOINLINE_COLD inline void throw_self_overlap(const char* op, const char* what, const nd_geom& y,
                                                                overlap_answer a,
                                                                const std::array<std::size_t, max_rank>& i1,
                                                                const std::array<std::size_t, max_rank>& i2) {
  const std::string g = geometry_string(y);
  if (a != overlap_answer::found)
    throw_error(op, ": ", what, " (", g, ") may write one element twice (its strides are too irregular to rule it "
                "out); expected an output whose elements are all distinct");
  std::string zero;
  for (std::size_t r = 0; r < y.rank; ++r)
    if (y.str[r] == 0 && y.ext[r] > 1) {
      zero = cat(" (stride 0 in dimension ", dec(r), ", extent ", dec(y.ext[r]), ")");
      break;
    }
  throw_error(op, ": ", what, " (", g, ") writes one element twice", zero, ", as ", what,
              index_string(i1.data(), y.rank), " and ", what, index_string(i2.data(), y.rank),
              "; expected an output whose elements are all distinct");
}

/// check_self_overlap past its usual case.
LOWBIT_NOINLINE inline void check_self_overlap_general(const char* op, const char* what, const nd_geom& y) {
  std::array<std::size_t, max_rank> i1{}, i2{};
  const overlap_answer a = self_overlap(y, i1, i2);
  if (a != overlap_answer::none) throw_self_overlap(op, what, y, a, i1, i2);
}

/// The element count of `g` when its elements are dense in row-major order
/// from `data` (a dimension of extent 1 may have any stride), else 0.
inline std::size_t dense_count(const nd_geom& g) noexcept {
  std::ptrdiff_t st = 1;
  for (std::size_t r = g.rank; r-- > 0;) {
    if (g.ext[r] == 1) continue;
    if (g.ext[r] == 0) return 0;
    if (g.str[r] != st) return 0;
    st *= static_cast<std::ptrdiff_t>(g.ext[r]);  // fits: the view's span was checked
  }
  return static_cast<std::size_t>(st);
}

/// Throws unless output `y` maps every index to its own element.
inline void check_self_overlap(const char* op, const char* what, const nd_geom& y) {
  // The usual output, decided at once as self_overlap would: no element,
  // or at most one dimension of extent above 1, with a nonzero stride.
  std::size_t moving = 0;
  bool zero_stride = false;
  for (std::size_t r = 0; r < y.rank; ++r) {
    if (y.ext[r] == 0) return;
    if (y.ext[r] > 1) {
      ++moving;
      zero_stride = zero_stride || y.str[r] == 0;
    }
  }
  if (moving <= 1 && !zero_stride) return;
  if (dense_count(y) != 0) return;  // a dense row-major y (a tensor's usual view)
  check_self_overlap_general(op, what, y);
}

/// The message of check_disjoint and check_in_place_or_disjoint (`in_place`:
/// y may be `in` itself).
[[noreturn]] LOWBIT_NOINLINE_COLD inline void throw_overlap(const char* op, const mem_tensor& y, const mem_tensor& in,
                                                           overlap_answer a,
                                                           const std::array<std::size_t, max_rank>& iy,
                                                           const std::array<std::size_t, max_rank>& ii,
                                                           bool in_place) {
  const std::string gy = geometry_string(*y.g), gi = geometry_string(*in.g);
  const std::string expected =
      in_place ? cat("; expected ", y.name, " to be ", in.name,
                     " exactly (same data, shape and strides: in place) or to share no memory with it")
               : std::string("; expected an output that shares no memory with its inputs");
  if (a != overlap_answer::found)
    throw_error(op, ": ", y.name, " (", gy, ") may overlap ", in.name, " (", gi,
                ") in memory (their strides are too irregular to rule it out)", expected);
  throw_error(op, ": ", y.name, " (", gy, ") overlaps ", in.name, " (", gi, ") in memory",
              in_place ? cat(" without being ", in.name, " itself") : std::string(), ": ", y.name,
              index_string(iy.data(), y.g->rank), " and ", in.name, index_string(ii.data(), in.g->rank),
              " share bytes", expected);
}

/// Throws if output `y` shares a byte with input `in`.
inline void check_disjoint(const char* op, const mem_tensor& y, const mem_tensor& in) {
  std::array<std::size_t, max_rank> iy{}, ii{};
  const overlap_answer a = mem_overlap(y, in, iy, ii);
  if (a != overlap_answer::none) throw_overlap(op, y, in, a, iy, ii, false);
}

/// True when output `y` (of the broadcast shape) is input `x` itself: the
/// same address for every element (x not broadcast along any dimension of
/// y with an extent above 1).
inline bool same_elements(const mem_tensor& y, const mem_tensor& x) noexcept {
  if (y.base != x.base || y.elem != x.elem) return false;
  const std::size_t R = y.g->rank;
  if (x.g->rank > R) return false;
  const std::size_t lead = R - x.g->rank;
  for (std::size_t d = 0; d < R; ++d) {
    if (y.g->ext[d] <= 1) continue;
    if (d < lead) return false;
    const std::size_t j = d - lead;
    if (x.g->ext[j] != y.g->ext[d] || x.g->str[j] != y.g->str[d]) return false;
  }
  return true;
}

/// Throws if output `y` shares memory with input `x`, unless y is x itself
/// (in place: same_elements).
inline void check_in_place_or_disjoint(const char* op, const mem_tensor& y, const mem_tensor& x) {
  if (mem_empty(y) || same_elements(y, x)) return;
  std::array<std::size_t, max_rank> iy{}, ix{};
  const overlap_answer a = mem_overlap(y, x, iy, ix);
  if (a != overlap_answer::none) throw_overlap(op, y, x, a, iy, ix, true);
}

LOWBIT_END_DETAIL_NAMESPACE

#endif  // LOWBIT_DETAIL_OVERLAP_HPP
