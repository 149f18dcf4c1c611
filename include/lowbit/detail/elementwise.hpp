// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/elementwise.hpp
 * The element-wise engine every operator runs on: tensor arguments read as
 * descriptors, validation helpers, and the loop that feeds a kernel one
 * contiguous chunk at a time with each parameter either splatted (constant
 * along the run) or loaded (contiguous, gathered first if strided).
 *
 * The kernel shape follows highway's contrib/algo transform: a SIMD body
 * over whole batches and a scalar tail over the rest, both instantiating the
 * same kernel template (`V = batch<T>` and `V = T`).
 */
#ifndef LOWBIT_DETAIL_ELEMENTWISE_HPP
#define LOWBIT_DETAIL_ELEMENTWISE_HPP

#include <algorithm>
#include <cstdio>
#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "../broadcast.hpp"
#include "../error.hpp"
#include "../view.hpp"
#include "simd.hpp"

namespace lowbit::detail {

// ---- tensor arguments ------------------------------------------------------

/**
 * An input tensor argument (x or a parameter) read as an nd of `const T`.
 * A scalar argument is converted to T and stored here, as a rank-0 tensor.
 * Not copyable: `d.data` may point into the object.
 */
template <class T>
struct tensor_in {
  T storage{};
  nd<const T> d;

  template <class V>
  tensor_in(const V& v) {
    using R = std::remove_cvref_t<V>;
    if constexpr (std::is_arithmetic_v<R>) {
      storage = static_cast<T>(v);
      d.data = &storage;
      d.rank = 0;
    } else {
      static_assert(std::is_same_v<scalar_value_t<const V&>, T>,
                    "lowbit: a parameter tensor must have the same element type as x "
                    "(pass a scalar to have it converted)");
      auto n = to_nd(v);
      static_cast<nd_geom&>(d) = n;
      d.data = n.data;
    }
  }
  tensor_in(const tensor_in&) = delete;
  tensor_in& operator=(const tensor_in&) = delete;

  shape get_shape() const { return d.get_shape(); }
};

/// The output tensor argument, read as an nd of `T`.
template <class T, class V>
nd<T> output_nd(V&& v) {
  using E = element_t<V&&>;
  static_assert(!std::is_arithmetic_v<std::remove_cvref_t<V>>, "lowbit: the output must be a view");
  static_assert(!std::is_const_v<E>, "lowbit: the output view must have a non-const element type");
  static_assert(std::is_same_v<std::remove_cv_t<E>, T>,
                "lowbit: the output must have the same element type as x");
  auto n = to_nd(v);
  nd<T> d;
  static_cast<nd_geom&>(d) = n;
  d.data = n.data;
  return d;
}

// ---- messages ---------------------------------------------------------------

/// Formats a value for an error message, with enough digits to round-trip.
template <class T>
std::string format_value(T v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::is_same_v<T, float> ? "%.9g" : "%.17g", static_cast<double>(v));
  return buf;
}

/// "name" for rank 0, else "name[i, j]" for the row-major flat index.
inline std::string element_name(const char* name, const nd_geom& g, std::size_t flat) {
  if (g.rank == 0) return name;
  std::array<std::size_t, max_rank> idx{};
  for (std::size_t r = g.rank; r-- > 0;) {
    idx[r] = g.ext[r] ? flat % g.ext[r] : 0;
    flat = g.ext[r] ? flat / g.ext[r] : 0;
  }
  std::string s = std::string(name) + "[";
  for (std::size_t r = 0; r < g.rank; ++r) s += (r ? ", " : "") + std::to_string(idx[r]);
  return s + "]";
}

/// Calls `f(value, flat_index)` for every element of `t` in row-major order;
/// stops early when f returns false.
template <class T, class F>
void visit_elements(const nd<const T>& t, F&& f) {
  const shape s = t.get_shape();
  std::array<std::size_t, max_rank> idx{};
  const std::size_t count = s.count();
  for (std::size_t flat = 0; flat < count; ++flat) {
    std::ptrdiff_t off = 0;
    for (std::size_t r = 0; r < t.rank; ++r) off += static_cast<std::ptrdiff_t>(idx[r]) * t.str[r];
    if (!f(t.data[off], flat)) return;
    for (std::size_t r = t.rank; r-- > 0;) {
      if (++idx[r] < t.ext[r]) break;
      idx[r] = 0;
    }
  }
}

/// Checks that `y` has exactly the broadcast shape and never writes one
/// element twice (a zero stride along an extent above 1).
template <class T>
void check_output(const char* op, const nd<T>& y, const shape& expected) {
  const shape got = y.get_shape();
  if (!(got == expected))
    throw error(std::string(op) + ": y has shape " + got.to_string() +
                "; expected the broadcast shape " + expected.to_string());
  for (std::size_t r = 0; r < y.rank; ++r)
    if (y.str[r] == 0 && y.ext[r] > 1)
      throw error(std::string(op) + ": y has stride 0 in dimension " + std::to_string(r) +
                  " (extent " + std::to_string(y.ext[r]) +
                  "); expected an output that does not overlap itself");
}

// ---- the engine ---------------------------------------------------------------

/// Elements per chunk when operands must be gathered or scattered.
inline constexpr std::size_t chunk_elems = 256;

/// Calls `f(std::integral_constant<unsigned, M>{})` for the runtime mask
/// `m < 2^G`.
template <std::size_t G, class F, unsigned... M>
void with_mask_impl(unsigned m, F&& f, std::integer_sequence<unsigned, M...>) {
  ((m == M ? (f(std::integral_constant<unsigned, M>{}), true) : false) || ...);
}
template <std::size_t G, class F>
void with_mask(unsigned m, F&& f) {
  with_mask_impl<G>(m, std::forward<F>(f), std::make_integer_sequence<unsigned, (1u << G)>{});
}

/// Parameter I as a lane vector: loaded at element i if its group's bit is
/// set in Mask, else the splatted run constant.
template <class V, unsigned Mask, std::size_t Bit, class T>
LOWBIT_ALWAYS_INLINE V param_at(const T* p, T s, std::size_t i) noexcept {
  if constexpr (((Mask >> Bit) & 1u) != 0)
    return load<V>(p + i);
  else
    return V(s);
}

/**
 * The contiguous kernel loop: `y[i] = k(x[i], params...)` for i < n. With
 * `simd`, whole batches first, then the scalar tail; without, all scalar.
 * `Bits` gives, per parameter, the mask bit of its group.
 */
template <unsigned Mask, std::size_t... Bits, class K, class T, std::size_t NP, std::size_t... I>
LOWBIT_ALWAYS_INLINE void run_contiguous_impl(const K& k, const T* x, const std::array<const T*, NP>& p,
                                              const std::array<T, NP>& s, T* y, std::size_t n,
                                              bool simd, std::index_sequence<I...>) {
  constexpr std::array<std::size_t, NP> bit{Bits...};
  std::size_t i = 0;
  if (simd) {
    using B = batch<T>;
    constexpr std::size_t L = B::size;
    for (; i + L <= n; i += L)
      detail::store(y + i, k(load<B>(x + i), param_at<B, Mask, bit[I]>(p[I], s[I], i)...));
  }
  for (; i < n; ++i) y[i] = k(x[i], param_at<T, Mask, bit[I]>(p[I], s[I], i)...);
}

template <unsigned Mask, std::size_t... Bits, class K, class T, std::size_t NP>
void run_contiguous(const K& k, const T* x, const std::array<const T*, NP>& p,
                    const std::array<T, NP>& s, T* y, std::size_t n, bool simd) {
  static_assert(sizeof...(Bits) == NP);
  run_contiguous_impl<Mask, Bits...>(k, x, p, s, y, n, simd, std::make_index_sequence<NP>{});
}

/**
 * Walks `plan` (operands: 0 = x, 1..NP = parameters, NP+1 = y) one
 * innermost run at a time, and hands `chunk` contiguous pieces:
 * `chunk(mask_constant, x, params, splats, y, n)`. Parameter I is loaded
 * (a contiguous pointer in `params[I]`) when bit `group[I]` of the mask is
 * set, else constant along the run (`splats[I]`). Strided x, parameters and
 * y are gathered into and scattered from stack buffers, so the kernel only
 * ever sees contiguous data. y may alias x when both have the same geometry.
 */
template <std::size_t G, std::size_t NP, class T, class Chunk>
void elementwise(const loop_plan<NP + 2>& plan, const T* x, const std::array<const T*, NP>& params,
                 const std::array<unsigned, NP>& group, T* y, Chunk&& chunk) {
  if (plan.count == 0) return;
  unsigned mask = 0;
  for (std::size_t I = 0; I < NP; ++I)
    if (plan.inner_stride(1 + I) != 0) mask |= 1u << group[I];
  const std::ptrdiff_t sx = plan.inner_stride(0), sy = plan.inner_stride(NP + 1);
  bool direct = sx == 1 && sy == 1;
  for (std::size_t I = 0; I < NP; ++I) {
    const std::ptrdiff_t s = plan.inner_stride(1 + I);
    const bool loaded = ((mask >> group[I]) & 1u) != 0;
    direct = direct && (!loaded || s == 1);
  }
  with_mask<G>(mask, [&](auto mc) {
    constexpr unsigned M = decltype(mc)::value;
    for_each_run(plan, [&](const std::array<std::ptrdiff_t, NP + 2>& off, std::size_t n) {
      const T* xr = x + off[0];
      T* yr = y + off[NP + 1];
      std::array<const T*, NP> pr;
      std::array<T, NP> sv;
      for (std::size_t I = 0; I < NP; ++I) {
        pr[I] = params[I] + off[1 + I];
        sv[I] = *pr[I];
      }
      if (direct) {
        chunk(mc, xr, pr, sv, yr, n);
        return;
      }
      alignas(64) T xb[chunk_elems];
      alignas(64) T yb[chunk_elems];
      alignas(64) T pb[NP][chunk_elems];
      for (std::size_t i0 = 0; i0 < n; i0 += chunk_elems) {
        const std::size_t m = std::min(chunk_elems, n - i0);
        const std::ptrdiff_t i0s = static_cast<std::ptrdiff_t>(i0);
        const T* xp = xr + i0s * sx;
        if (sx != 1) {
          for (std::size_t i = 0; i < m; ++i) xb[i] = xp[static_cast<std::ptrdiff_t>(i) * sx];
          xp = xb;
        }
        std::array<const T*, NP> pp = pr;
        for (std::size_t I = 0; I < NP; ++I) {
          if (((M >> group[I]) & 1u) == 0) continue;
          const std::ptrdiff_t s = plan.inner_stride(1 + I);
          pp[I] = pr[I] + i0s * s;
          if (s != 1) {
            for (std::size_t i = 0; i < m; ++i) pb[I][i] = pp[I][static_cast<std::ptrdiff_t>(i) * s];
            pp[I] = pb[I];
          }
        }
        T* yp = sy == 1 ? yr + i0s : yb;
        chunk(mc, xp, pp, sv, yp, m);
        if (sy != 1) {
          T* yd = yr + i0s * sy;
          for (std::size_t i = 0; i < m; ++i) yd[static_cast<std::ptrdiff_t>(i) * sy] = yb[i];
        }
      }
    });
  });
}

}  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_ELEMENTWISE_HPP
