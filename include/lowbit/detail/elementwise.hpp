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
#include <numeric>
#include <cstdio>
#include <limits>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "../broadcast.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "../view.hpp"
#include "int_lanes.hpp"
#include "overlap.hpp"
#include "protocol.hpp"
#include "simd.hpp"
#include "thread_pool.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

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
      d.data = fill_nd(v, d);
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
  nd<T> d;
  d.data = fill_nd(v, d);
  return d;
}

/**
 * The compile-time checks of an operator's x (and y, unless Y is void):
 * each failure is one lowbit static_assert, and the result is false then,
 * so that the operator compiles its body only when every check passes
 * (`if constexpr`): one diagnostic instead of a cascade from deep inside
 * the engine. `Ts...` are the element types the operator accepts.
 */
template <class X, class Y, class... Ts>
constexpr bool io_types_ok() {
  constexpr bool x_view = !std::is_arithmetic_v<std::remove_cvref_t<X>>;
  static_assert(x_view,
                "lowbit: x must be a tensor (std::span, std::vector, std::array, lowbit::strided_view or an "
                "mdspan), not a scalar; only the parameters may be scalars");
  if constexpr (!x_view) {
    return false;
  } else {
    using T = std::remove_cv_t<element_t<const X&>>;
    constexpr bool t_ok = (std::is_same_v<T, Ts> || ...);
    static_assert(t_ok || sizeof...(Ts) != 1,
                  "lowbit: this operator works on float tensors only (x's element type must be float)");
    static_assert(t_ok || sizeof...(Ts) == 1,
                  "lowbit: this operator works on float and double tensors (x's element type must be one of them)");
    if constexpr (!t_ok || std::is_void_v<Y>) {
      return t_ok;
    } else {
      constexpr bool y_view = !std::is_arithmetic_v<std::remove_cvref_t<Y>>;
      static_assert(y_view, "lowbit: the output must be a view, not a scalar");
      if constexpr (!y_view) {
        return false;
      } else {
        using E = element_t<Y&&>;
        static_assert(!std::is_const_v<E>, "lowbit: the output view must have a non-const element type");
        static_assert(std::is_same_v<std::remove_cv_t<E>, T>, "lowbit: the output must have the same element type as x");
        return !std::is_const_v<E> && std::is_same_v<std::remove_cv_t<E>, T>;
      }
    }
  }
}

/// Sets `g` to a dense row-major geometry of extents `ext[0, rank)`, written
/// field by field (copying a just-built geometry as a whole reloads its
/// words as wider vectors, a store-forwarding stall on every call).
inline void set_row_major(nd_geom& g, std::size_t rank, const std::size_t* ext) noexcept {
  g.rank = rank;
  std::ptrdiff_t st = 1;
  for (std::size_t r = rank; r-- > 0;) {
    g.ext[r] = ext[r];
    g.str[r] = st;
    st *= static_cast<std::ptrdiff_t>(ext[r]);
  }
}

/// A row-major descriptor of shape `s` over `data`.
template <class T>
nd<const T> row_major_nd(const shape& s, const T* data) {
  nd<const T> d;
  set_row_major(d, s.rank(), s.begin());
  d.data = data;
  return d;
}

/// Small-buffer storage for K derived per-element arrays of n elements each.
template <class T, std::size_t K>
struct derived_storage {
  static constexpr std::size_t inline_elems = 16;
  std::array<T, K * inline_elems> small;  // not zero-filled either (a cost on every small call)
  std::unique_ptr<T[]> big;  // not zero-filled: every element is written before it is read
  std::array<T*, K> arr{};

  derived_storage() = default;
  explicit derived_storage(std::size_t n) { allocate(n); }
  /// Room for n elements per array (once, before use).
  void allocate(std::size_t n) {
    T* base = small.data();
    if (n > inline_elems) {
      big.reset(new T[K * n]);
      base = big.get();
    }
    for (std::size_t k = 0; k < K; ++k) arr[k] = base + k * n;
  }
  derived_storage(const derived_storage&) = delete;
  derived_storage& operator=(const derived_storage&) = delete;
};

// ---- messages ---------------------------------------------------------------

/// A value with `digits` significant digits (9 round-trip a float, 17 a double).
LOWBIT_NOINLINE_COLD inline std::string format_digits(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

/// Formats a value for an error message, with enough digits to round-trip.
template <class T>
std::string format_value(T v) {
  return format_digits(static_cast<double>(v), std::is_same_v<T, float> ? 9 : 17);
}

/// "name" for rank 0, else "name[i, j]" for the row-major flat index.
LOWBIT_NOINLINE_COLD inline std::string element_name(const char* name, const nd_geom& g, std::size_t flat) {
  if (g.rank == 0) return name;
  std::array<std::size_t, max_rank> idx{};
  for (std::size_t r = g.rank; r-- > 0;) {
    idx[r] = g.ext[r] ? flat % g.ext[r] : 0;
    flat = g.ext[r] ? flat / g.ext[r] : 0;
  }
  std::string s = cat(name, "[");
  for (std::size_t r = 0; r < g.rank; ++r) {
    if (r) s += ", ";
    s += dec(idx[r]);
  }
  return s += "]";
}

/// Throws "<head><name>[i] = <v> is invalid; expected <expected>" for the
/// element of flat index i of a tensor (head: "lowbit::op: ").
[[noreturn]] LOWBIT_NOINLINE_COLD inline void throw_invalid_element(std::string_view head, const char* name,
                                                                   const nd_geom& g, std::size_t i, double v,
                                                                   int digits, std::string_view expected) {
  throw_error(head, element_name(name, g, i), " = ", format_digits(v, digits), " is invalid; expected ", expected);
}

/// The same for a value of type T (its own round-trip digits).
template <class T>
[[noreturn]] void throw_invalid(std::string_view head, const char* name, const nd_geom& g, std::size_t i, T v,
                                std::string_view expected) {
  throw_invalid_element(head, name, g, i, static_cast<double>(v), std::is_same_v<T, float> ? 9 : 17, expected);
}

/// Calls `f(value, flat_index)` for every element of `t` in row-major order
/// (the broadcast walker, for_each_element); stops early when f returns false.
template <class T, class F>
void visit_elements(const nd<const T>& t, F&& f) {
  for_each_element(t, [&](std::size_t flat, std::ptrdiff_t off) { return f(t.data[off], flat); });
}

/**
 * Calls `f(value, flat_index)` for every distinct element of `t`, in
 * row-major order, for validation: a dimension of stride 0 (a broadcast
 * view) is visited at index 0 only, so a view of 2^40 copies of one value
 * costs one visit. `flat_index` is the element's row-major index in t's
 * shape (for messages). Stops early when f returns false.
 */
template <class T, class F>
void check_tensor_elements(const nd<const T>& t, F&& f);

template <class T, class F>
LOWBIT_ALWAYS_INLINE void check_elements(const nd<const T>& t, F&& f) {
  if (t.rank == 0)  // a scalar parameter, inline: a small call checks several
    (void)f(*t.data, std::size_t(0));
  else
    check_tensor_elements(t, f);
}

/// check_elements of a tensor of rank 1 or more.
template <class T, class F>
void check_tensor_elements(const nd<const T>& t, F&& f) {
  // The distinct elements: stride-0 dimensions at index 0 only; the
  // row-major geometry of t's whole shape (operand 1) gives the flat index.
  nd_geom distinct = t, whole;
  set_row_major(whole, t.rank, t.ext.data());
  for (std::size_t r = 0; r < t.rank; ++r) {
    if (t.ext[r] == 0) return;
    if (t.str[r] == 0) distinct.ext[r] = 1;
  }
  // Run by run (the innermost merged dimension a plain loop): a position
  // at a time through the walker cost about 3 ns an element, a fifth of a
  // per-channel FloatQuant call of 4096 elements for its 64 scales.
  const loop_plan<2> p = make_plan<2>(distinct.get_shape(), {&distinct, &whole});
  if (p.count == 0) return;
  loop_plan<2> outer = p;
  outer.rank = p.rank - 1;
  const std::size_t n = p.run_length();
  const std::ptrdiff_t s0 = p.inner_stride(0), s1 = p.inner_stride(1);
  for_each_outer(outer, [&](const std::array<std::ptrdiff_t, 2>& off) {
    const T* v = t.data + off[0];
    for (std::size_t i = 0; i < n; ++i)
      if (!f(v[static_cast<std::ptrdiff_t>(i) * s0], static_cast<std::size_t>(off[1] + static_cast<std::ptrdiff_t>(i) * s1)))
        return false;
    return true;
  });
}

/// Whether the pure predicate `ok` (taking a value, giving a bool, and a
/// batch<T>, giving its mask) holds for p[0, n): a batch at a time.
template <class T, class Ok>
LOWBIT_ALWAYS_INLINE bool all_elements(const T* p, std::size_t n, const Ok& ok) noexcept {
  using B = batch<T>;
  constexpr std::size_t L = B::size;
  std::size_t i = 0;
  bool all = true;
  for (; all && i + L <= n; i += L) all = all_lanes(ok(load<B>(p + i)));
  for (; all && i < n; ++i) all = ok(p[i]);
  return all;
}

/**
 * Validation of every element of `t` by a pure predicate: calls
 * `fail(value, flat_index)` (which throws) for the first element, in
 * row-major order, that `ok` rejects. `ok(v)` takes a value (giving a bool)
 * and a batch<T> (giving its mask). A dense tensor is checked a batch at a
 * time first (the element-by-element walk of check_elements cost about
 * 1 ns an element, a tenth of a per-channel FloatQuant call of 4096
 * elements for its 64 scales); the walk runs only to find the element that
 * failed, for the message.
 */
template <class T, class Ok, class Fail>
LOWBIT_ALWAYS_INLINE void require_elements(const nd<const T>& t, const Ok& ok, const Fail& fail) {
  if (t.rank == 0) {  // a scalar parameter, inline: a small call checks several
    if (!ok(*t.data)) fail(*t.data, std::size_t(0));
    return;
  }
  if (const std::size_t n = dense_count(t); n != 0 && all_elements(t.data, n, ok)) return;
  check_tensor_elements(t, [&](T v, std::size_t i) {
    if (!ok(v)) fail(v, i);
    return true;
  });
}

/// positive_scale of every lane (require_elements).
template <class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch_bool<T, A> positive_scale(const xsimd::batch<T, A>& v) noexcept {
  using V = xsimd::batch<T, A>;
  return mask_and(v > V(T(0)), v <= V(std::numeric_limits<T>::max()));
}

/// A scale the exact semantics accept: finite and > 0.
template <class T>
LOWBIT_ALWAYS_INLINE bool positive_scale(T v) noexcept {
  return v > T(0) && v <= std::numeric_limits<T>::max();
}

/// Exact semantics: every element of a scale tensor must be finite and > 0.
template <class T>
void check_scale_positive(const char* op, const char* name, const nd<const T>& s) {
  require_elements(s, [](auto v) { return positive_scale(v); }, [&](T v, std::size_t i) {
    throw_invalid(cat(op, " (exact semantics): "), name, s, i, v, "a finite value > 0");
  });
}

/// Whether `g` has exactly the extents of `s` (without building a shape).
inline bool has_shape(const nd_geom& g, const shape& s) noexcept {
  if (g.rank != s.rank()) return false;
  for (std::size_t r = 0; r < g.rank; ++r)
    if (g.ext[r] != s[r]) return false;
  return true;
}

/// The message of check_output for a y of the wrong shape.
[[noreturn]] LOWBIT_NOINLINE_COLD inline void throw_output_shape(const char* op, const nd_geom& y, const shape& expected,
                                                                const char* what, const char* kind) {
  throw_error(op, ": ", what, " has shape ", y.get_shape().to_string(), "; expected ", kind, " ",
              expected.to_string());
}

/// Checks that the output `y` (named `what` in messages: "y", "codes") has
/// exactly the broadcast shape and never writes one element twice (a zero
/// stride along an extent above 1, or strides that map two indices to the
/// same element).
template <class T>
void check_output(const char* op, const nd<T>& y, const shape& expected, const char* what = "y",
                  const char* kind = "the broadcast shape") {
  if (!has_shape(y, expected)) [[unlikely]]
    throw_output_shape(op, y, expected, what, kind);
  check_self_overlap(op, what, y);
}

/// The bytes [lo, hi) of a tensor's elements (mem_interval), or false when
/// it has none (mem_empty), in one pass.
template <class E>
LOWBIT_ALWAYS_INLINE bool mem_bytes(const nd<E>& d, std::uintptr_t& lo, std::uintptr_t& hi) noexcept {
  std::size_t below = 0, above = 0;
  for (std::size_t r = 0; r < d.rank; ++r) {
    const std::size_t e = d.ext[r];
    if (e == 0) return false;
    if (e == 1) continue;
    const std::ptrdiff_t s = d.str[r];
    const std::size_t mag = (s < 0 ? std::size_t(0) - static_cast<std::size_t>(s) : static_cast<std::size_t>(s)) * sizeof(E);
    (s < 0 ? below : above) += (e - 1) * mag;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(d.data);
  lo = base - below;
  hi = base + above + sizeof(E);
  return true;
}

/// check_in_place_or_disjoint and check_disjoint of descriptors, out of
/// line: the exact tests of outputs whose byte intervals meet an input's.
template <class T>
LOWBIT_NOINLINE void check_in_place_or_disjoint_of(const char* op, const char* what, const nd<T>& y,
                                                   const nd<const T>& x) {
  check_in_place_or_disjoint(op, mem_of(what, y), mem_of("x", x));
}
template <class T>
LOWBIT_NOINLINE void check_disjoint_of(const char* op, const char* what, const nd<T>& y, const char* name,
                                       const nd<const T>& in) {
  check_disjoint(op, mem_of(what, y), mem_of(name, in));
}

/**
 * Checks, before anything is written, that the output `y` shares no memory
 * with a parameter, and shares memory with `x` only when it is x itself
 * (in place: the same element at every index; see same_elements).
 * `params` are the parameters' descriptors, named as in messages.
 */
template <class T, std::size_t N>
void check_output_memory(const char* op, const nd<T>& y, const nd<const T>& x,
                         const std::array<std::pair<const char*, const nd<const T>*>, N>& params,
                         const char* what = "y") {
  // The usual case decided by byte intervals alone, y's computed once; the
  // exact tests (rare: in place, or intervals that cross) out of line.
  std::uintptr_t ylo, yhi;
  if (!mem_bytes(y, ylo, yhi)) return;  // y has no element
  auto apart = [&](const auto& t) {
    std::uintptr_t lo, hi;
    return !mem_bytes(t, lo, hi) || hi <= ylo || yhi <= lo;
  };
  if (!apart(x)) check_in_place_or_disjoint_of(op, what, y, x);
  for (const auto& [name, d] : params)
    if (!apart(*d)) check_disjoint_of(op, what, y, name, *d);
}

// ---- the engine ---------------------------------------------------------------

/// Elements per chunk when operands must be gathered, expanded or scattered.
inline constexpr std::size_t chunk_elems = 512;

/// Innermost runs shorter than this are processed two dimensions at a time
/// (a tile), so that the per-run cost does not dominate per-channel calls
/// on short rows (e.g. [64, 64] with one scale per row).
inline constexpr std::size_t short_run = 256;

/// Keeps the compiler from vectorising the loop it sits in, so that the
/// scalar path really is scalar (a baseline, and an independent check of the
/// SIMD body in the tests).
///
/// LOWBIT_DETAIL_SCALAR_MAY_VECTORIZE (tests only) lets the compiler
/// vectorise the scalar kernel: the exhaustive sweeps use it to evaluate the
/// same scalar C++ code, with the same results (no -ffast-math), several
/// times faster, while the SIMD body stays xsimd's code.
template <class I>
LOWBIT_ALWAYS_INLINE void no_vectorize(I& i) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && !defined(LOWBIT_DETAIL_SCALAR_MAY_VECTORIZE)
  __asm__("" : "+r"(i));
#else
  (void)i;
#endif
}

/**
 * Where the elements of a piece are in the output: element i of a piece
 * (row r, column c in row mode: i = r * cols + c) is the output's element
 * `first + i * step` in row-major order, whatever the thread split, the tile
 * or the SIMD width. `step` is 1 except in a block-fed call (block.hpp).
 */
struct element_index {
  std::size_t first = 0;
  std::ptrdiff_t step = 1;
};

/**
 * One contiguous piece of work handed to a kernel: `n` elements of x and y,
 * and per parameter I the constant `s[I]` (`vary[I]` false) or the
 * contiguous array `p[I]` (a loaded piece: some `vary[I]` true).
 *
 * Row mode (`rows > 0`, loaded pieces only): the piece is `rows` x `cols`
 * elements, x and y contiguous, and every parameter is constant along a
 * row, at `p[I][r * row_stride[I]]` for row r (row_stride 0 for a parameter
 * constant over the whole piece). This is per-channel quantization on short
 * rows: the parameter is broadcast once per row inside the loop, where it
 * hides behind the division, instead of being expanded. With `period`
 * nonzero the parameters' rows repeat: row r reads row r % period's values
 * (the row route's blocks: x [N, C, H, W] with a scale [1, C, 1, 1] is N
 * blocks of C rows; see row_of). run_piece_on runs such a piece a block at
 * a time: the batch loops never see a period.
 */
template <class T, std::size_t NP>
struct piece {
  const T* x = nullptr;
  T* y = nullptr;
  std::array<const T*, NP> p{};
  std::array<T, NP> s{};
  std::array<bool, NP> vary{};
  std::size_t n = 0;
  std::size_t rows = 0, cols = 0;
  std::array<std::ptrdiff_t, NP> row_stride{};
  /// Row mode: the parameters' rows repeat every `period` rows (0: never).
  std::size_t period = 0;
  /// Some parameter is an array over the piece (read from `p`).
  bool loaded = false;
  /// Write y with streaming (non-temporal) stores: a large output that
  /// does not overlap x (lowbit::execution::stream_min_elements).
  bool stream = false;
  /// The output position of element 0 (see element_index).
  element_index index{};
};

/// A kernel that wants each element's output position declares
/// `static constexpr bool index_aware = true` and is called as
/// `k(element_index, x, params...)`, where the index is that of lane 0 (lane
/// j is `first + j * step`).
template <class K>
concept index_aware_kernel = requires { requires K::index_aware; };

/// Calls the kernel on one batch or one element whose position is `idx`.
template <class K, class V, class... P>
LOWBIT_ALWAYS_INLINE V call_kernel(const K& k, element_index idx, V x, P... p) noexcept {
  if constexpr (index_aware_kernel<K>)
    return k(idx, x, p...);
  else
    return (void)idx, k(x, p...);
}

/**
 * A kernel that handles only some batches declares `static constexpr bool
 * may_decline = true` and has, beside its ordinary operator (which must
 * handle every element), `B try_batch(bool& ok, B x, B params...)`: it sets
 * `ok` false to decline a batch (the result is then ignored and nothing is
 * stored), and the runner computes that batch's elements on the scalar
 * loop. This keeps a rare, long path (FloatQuant's inputs near the top of a
 * binade) out of the batch loops, so that each mode's kernel is compiled
 * without it, and without a call inside the loop.
 */
template <class K>
concept declining_kernel = requires { requires K::may_decline; };

/// One batch at position `idx`: `ok` is left true unless a declining
/// kernel declines it.
template <class K, class B, class... P>
LOWBIT_ALWAYS_INLINE B call_batch(const K& k, bool& ok, element_index idx, B x, P... p) noexcept {
  if constexpr (declining_kernel<K>) {
    static_assert(!index_aware_kernel<K>, "a declining kernel is not index-aware (not needed yet)");
    return (void)idx, k.try_batch(ok, x, p...);
  } else {
    return (void)ok, call_kernel(k, idx, x, p...);
  }
}

/// The index of element i of a piece whose element 0 is at `base`.
LOWBIT_ALWAYS_INLINE element_index index_at(element_index base, std::size_t i) noexcept {
  return {base.first + i * static_cast<std::size_t>(base.step), base.step};
}

/// The scalar operands of a piece: parameter I of element i is `p[I][i]`
/// when `vary[I]`, else the constant `s[I]`. Passed by value, so that the
/// loops' own copies of the parameters never have their address taken (a
/// vector store may alias any memory: they would be reloaded after each).
template <class T, std::size_t NP>
struct scalar_operands {
  std::array<const T*, NP> p{};
  std::array<T, NP> s{};
  std::array<bool, NP> vary{};
};

/**
 * The scalar loop: `y[i] = k(x[i], params...)` for i in [b, e), element 0's
 * position `ix`. One out-of-line copy per kernel serves every scalar
 * element of every piece: the peel before streaming stores, the tail after
 * the batches, and the whole piece on the scalar path, so that a kernel is
 * compiled into three loops, not six.
 */
template <class K, class T, std::size_t NP, std::size_t... I>
LOWBIT_NOINLINE void run_scalar(const K& kernel, const T* x, T* y, std::size_t b, std::size_t e, element_index ix,
                                scalar_operands<T, NP> ops, std::index_sequence<I...>) {
  const K k = kernel;
  const std::array<const T*, NP> p{(ops.vary[I] ? ops.p[I] : &ops.s[I])...};
  const std::array<std::size_t, NP> st{std::size_t(ops.vary[I])...};
  for (std::size_t i = b; i < e; ++i) {
#if !defined(LOWBIT_DETAIL_SCALAR_MAY_VECTORIZE)
    no_vectorize(i);
#endif
    y[i] = call_kernel(k, index_at(ix, i), x[i], p[I][i * st[I]]...);
  }
}

/// The kernel that run_scalar runs for k: `k.scalar_kernel()` when k
/// declares one, else k itself. A kernel of one rounding mode returns the
/// kernel of every mode with its mode as a run-time value (a switch per
/// element, always predicted): the seven modes then share one scalar loop.
/// It must give every element the bits k gives it.
template <class K>
LOWBIT_ALWAYS_INLINE auto scalar_kernel_of(const K& k) noexcept {
  if constexpr (requires { k.scalar_kernel(); })
    return k.scalar_kernel();
  else
    return k;
}

/// Streaming stores need y aligned to the batch: the scalar elements before
/// the first aligned batch (0 without streaming or SIMD).
template <class T>
LOWBIT_ALWAYS_INLINE std::size_t stream_peel(bool stream, const T* y, std::size_t n) noexcept {
  using B = batch<T>;
  const auto addr = reinterpret_cast<std::uintptr_t>(y);
  return stream ? std::min(n, (sizeof(B) - addr % sizeof(B)) % sizeof(B) / sizeof(T)) : std::size_t(0);
}

/// Stores a batch, with a streaming store when `stream`.
template <class T, class B>
LOWBIT_ALWAYS_INLINE void put_batch(bool stream, T* at, const B& r) noexcept {
  if (stream)
    detail::store_stream(at, r);
  else
    detail::store(at, r);
}

/// Whether a piece is in row mode (see piece).
template <class T, std::size_t NP>
LOWBIT_ALWAYS_INLINE bool rows_mode_of(const piece<T, NP>& pc) noexcept {
  return pc.loaded && pc.rows != 0;
}

/// The row of a row-mode piece's parameters that row r reads: r, or r %
/// period when they repeat (see piece).
template <class T, std::size_t NP>
LOWBIT_ALWAYS_INLINE std::ptrdiff_t row_of(const piece<T, NP>& pc, std::size_t r) noexcept {
  return static_cast<std::ptrdiff_t>(pc.period != 0 && r >= pc.period ? r % pc.period : r);
}

/// The scalar operands of row r of a piece: row mode's values of the row,
/// else the piece's own (r = 0).
template <class T, std::size_t NP, std::size_t... I>
LOWBIT_ALWAYS_INLINE scalar_operands<T, NP> row_operands(const piece<T, NP>& pc, std::size_t r,
                                                        std::index_sequence<I...>) noexcept {
  if (!rows_mode_of(pc)) return {pc.p, pc.s, pc.vary};
  return {{}, {pc.p[I][row_of(pc, r) * pc.row_stride[I]]...}, {}};
}

/// Columns [b, e) of row r of a piece on the scalar loop of kernel SK
/// (`sk`): a piece's peel and tail, and the batches a declining kernel
/// declines.
template <class SK, class T, std::size_t NP>
LOWBIT_NOINLINE void scalar_columns(const void* sk, const piece<T, NP>& pc, std::size_t r, std::size_t b,
                                    std::size_t e) {
  const std::size_t cols = rows_mode_of(pc) ? pc.cols : pc.n;
  run_scalar(*static_cast<const SK*>(sk), pc.x + r * cols, pc.y + r * cols, b, e, index_at(pc.index, r * cols),
             row_operands(pc, r, std::make_index_sequence<NP>{}), std::make_index_sequence<NP>{});
}

/**
 * The batches a declining kernel declined (see declining_kernel), by the
 * column of their first element in their row: the batch loops note them
 * and go on, without a call inside the loop (which would make the compiler
 * keep every constant in memory), and the runner computes them on the
 * scalar loop afterwards. They were not stored, so their x is intact even
 * in place. A loop stops early, where it can resume, when `capacity` are
 * noted (inputs where most batches decline).
 */
struct declined_batches {
  static constexpr std::size_t capacity = 64;
  std::size_t row[capacity];
  std::size_t col[capacity];
  std::size_t count = 0;
};

/// A kernel's two leaves (row_batches, loaded_batches), without its type,
/// and its scalar loop (scalar_columns); `row` null: the loaded loop serves
/// every piece (run_piece_compact). A leaf runs from row r, column c (the
/// loaded loop: row r alone) and returns true when it reached the end,
/// false when it stopped at (r, c) with its declined_batches full.
template <class T, std::size_t NP>
struct batch_leaves {
  const void* kernel;
  const void* scalar_kernel;
  void (*scalar)(const void*, const piece<T, NP>&, std::size_t, std::size_t, std::size_t);
  bool (*row)(const piece<T, NP>&, const void*, std::size_t, std::size_t&, std::size_t&, declined_batches&);
  bool (*loaded)(const piece<T, NP>&, const void*, std::size_t, std::size_t&, bool, declined_batches&);
};

/**
 * A kernel of the stochastic mode (rounding_mode::stochastic fixed at
 * compile time) declares `static constexpr bool stochastic = true`. Beside
 * its index-aware operator it has `eval(u, x, params...)`, one batch given
 * its lanes' thresholds `u`, and a member `rnd` (detail::stochastic_source)
 * whose `for_batches<B>(buffer, first, n, f)` calls f(j, u) for the batches
 * of a run of consecutive, aligned flat indices, drawing whole groups of
 * thresholds itself: the row loop then asks nothing per batch.
 */
template <class K>
concept stochastic_kernel = index_aware_kernel<K> && requires { requires K::stochastic; };

/// The group buffer of a row loop that draws groups (char: none).
template <class K, bool Grouped>
struct stochastic_buffer_of {
  using type = char;
};
template <class K>
struct stochastic_buffer_of<K, true> {
  using type = typename decltype(K::rnd)::group_buffer;
};

/**
 * The row loop of kernel K (a leaf: the only code compiled per kernel,
 * beside the loaded loop), for a piece whose parameters are constant along
 * each row (a constant piece, one row of splats, or row mode) and rows of at
 * least one batch: the batches of columns [0, body) of every row, body a
 * multiple of L, then the row's last cols - body elements on the row's last
 * L elements (a batch that overlaps the one before), each parameter
 * broadcast once per row, ordinary stores. Only the parameters that change
 * between rows are read and broadcast again, by pointer steps; the per-row
 * cost is most of a short row's. A batch a declining kernel declines is
 * noted in `dec`.
 *
 * Local copies of everything the loop reads: a vector store may alias any
 * memory (xsimd's register types are may_alias), so fields read through
 * references were reloaded after every store.
 */
template <class K, class T, std::size_t NP, std::size_t... I>
LOWBIT_ALWAYS_INLINE bool row_batches_impl(const piece<T, NP>& pc, const K& kernel, std::size_t body, std::size_t& rr,
                                           std::size_t& cc, declined_batches& dec,
                                           std::index_sequence<I...>) noexcept {
  using B = batch<T>;
  constexpr std::size_t L = B::size;
  const K k = kernel;
  const bool rows_mode = pc.loaded;
  const T* x = pc.x;
  T* y = pc.y;
  const std::size_t rows = rows_mode ? pc.rows : 1, cols = rows_mode ? pc.cols : pc.n;
  const std::array<std::ptrdiff_t, NP> rstep{(rows_mode ? pc.row_stride[I] : 0)...};
  const element_index ix = pc.index;
  std::size_t r = rr, c = cc;
  std::array<const T*, NP> rp{(rows_mode ? pc.p[I] + static_cast<std::ptrdiff_t>(r) * rstep[I] : &pc.s[I])...};
  std::array<B, NP> rb{B(*rp[I])...};
  // The next row's parameters: only those that vary are read and broadcast.
  const auto next_row = [&]() LOWBIT_ALWAYS_INLINE_LAMBDA {
    ((rstep[I] != 0 ? (void)(rp[I] += rstep[I], rb[I] = B(*rp[I])) : (void)0), ...);
  };
  constexpr bool grouped = stochastic_kernel<K> && std::is_same_v<T, float>;
  [[maybe_unused]] typename stochastic_buffer_of<K, grouped>::type gb;
  // Short rows of whole batches (up to 8, a per-channel call on [C, 64]
  // floats, say) in one loop over their batches, the parameters stepped
  // after every row's last batch: the row loop below spent about a batch's
  // time a row on its own bookkeeping (the row's tail, `last`, the
  // pointers), 1.02-1.18x on [64, 64] per channel (docs/performance.md).
  // Longer rows keep it (2^20 elements ran 0.92-0.96x this way).
  if constexpr (!declining_kernel<K> && !grouped) {
    if (rows_mode && c == 0 && body == cols && r < rows && cols >= L && cols <= 8 * L) {
      const std::size_t per = cols / L, end = rows * cols;
      std::size_t i = r * cols, j = 0;
      for (;;) {
        bool ok = true;
        detail::store(y + i, call_batch(k, ok, index_at(ix, i), load<B>(x + i), rb[I]...));
        i += L;
        if (i == end) return true;  // before the step: no row after the last is read
        if (++j == per) {
          j = 0;
          next_row();
        }
      }
    }
  }
  for (;;) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    // A kernel that never declines writes the row's last elements with the
    // row's last L (below), read now, before the row is written.
    [[maybe_unused]] B last{};
    if constexpr (!declining_kernel<K>)
      if (body < cols) last = load<B>(xr + cols - L);
    if constexpr (grouped) {
      // Whole groups when the batches' flat indices are aligned (always
      // for a piece starting at a multiple of L with rows of a multiple of
      // L); else the kernel's own lookup, batch by batch.
      const std::uint64_t i = ix.first + r * cols + c;
      if (c < body && ix.step == 1 && (k.rnd.offset + i) % L == 0) {
        k.rnd.template for_batches<B>(gb, i, body - c, [&](std::size_t j, const B& u) LOWBIT_ALWAYS_INLINE_LAMBDA {
          detail::store(yr + c + j, k.eval(u, load<B>(xr + c + j), rb[I]...));
        });
        c = body;
      }
    }
    for (; c < body; c += L) {
      bool ok = true;
      const B res = call_batch(k, ok, index_at(ix, r * cols + c), load<B>(xr + c), rb[I]...);
      if (ok) [[likely]] {
        detail::store(yr + c, res);
      } else {
        dec.row[dec.count] = r;
        dec.col[dec.count] = c;
        if (++dec.count == declined_batches::capacity) {
          rr = r;
          cc = c + L;
          return false;
        }
      }
    }
    if (c < cols) {
      if constexpr (!declining_kernel<K>) {
        // The row's last cols - c < L elements: the row's last L elements
        // on one batch, read before the row was written (x may be y); the
        // lanes it shares with the batch before get the same bits again
        // (the same element, operands and index).
        bool ok = true;
        detail::store(yr + cols - L, call_batch(k, ok, index_at(ix, r * cols + cols - L), last, rb[I]...));
      } else {
        // A declining kernel: the same batch, read now (only the row's
        // last cols - c elements are kept, and they are not written yet),
        // and only those elements written, so that a declined batch before
        // it, on the scalar loop later, reads x as it was (x may be y).
        bool ok = true;
        const B res = call_batch(k, ok, index_at(ix, r * cols + cols - L), load<B>(xr + cols - L), rb[I]...);
        if (ok) [[likely]] {
          alignas(64) T buf[L];
          detail::store(buf, res);
          for (std::size_t j = L - (cols - c); j < L; ++j) yr[cols - L + j] = buf[j];
        } else {
          dec.row[dec.count] = r;
          dec.col[dec.count] = c;
          if (++dec.count == declined_batches::capacity) {
            rr = r;
            cc = cols;
            return false;
          }
        }
      }
    }
    if (++r >= rows) return true;
    c = 0;
    next_row();
  }
}

template <class K, class T, std::size_t NP>
LOWBIT_NOINLINE bool row_batches(const piece<T, NP>& pc, const void* k, std::size_t body, std::size_t& r,
                                 std::size_t& c, declined_batches& dec) {
  return row_batches_impl(pc, *static_cast<const K*>(k), body, r, c, dec, std::make_index_sequence<NP>{});
}

/**
 * The loaded loop of kernel K (the other leaf): the batches of row `r` of
 * the piece (row 0 but in a compact runner's row mode) from column i on,
 * each parameter loaded or splatted as `vary` says (a branch per batch,
 * always predicted, next to a division). A declined batch is noted in `dec`.
 */
template <class K, class T, std::size_t NP, std::size_t... I>
LOWBIT_ALWAYS_INLINE bool loaded_batches_impl(const piece<T, NP>& pc, const K& kernel, std::size_t r, std::size_t& ii,
                                              bool stream, declined_batches& dec, std::index_sequence<I...>) noexcept {
  using B = batch<T>;
  constexpr std::size_t L = B::size;
  const K k = kernel;
  const bool rows_mode = rows_mode_of(pc);
  const std::size_t n = rows_mode ? pc.cols : pc.n;
  const T* x = pc.x + r * n;
  T* y = pc.y + r * n;
  // A row-mode piece here never has a period (run_piece_on runs its blocks).
  const std::array<const T*, NP> p{
      (rows_mode ? pc.p[I] + static_cast<std::ptrdiff_t>(r) * pc.row_stride[I] : pc.p[I])...};
  const std::array<T, NP> ss{(rows_mode ? *p[I] : pc.s[I])...};
  // The vary flags as one mask: one register, not NP (the loop needs every
  // general register it can get for the parameters' pointers).
  const unsigned v = rows_mode ? 0u : (0u | ... | (unsigned(pc.vary[I]) << I));
  const element_index ix = index_at(pc.index, r * n);
  for (std::size_t i = ii; i + L <= n; i += L) {
    bool ok = true;
    const B res =
        call_batch(k, ok, index_at(ix, i), load<B>(x + i), ((v >> I & 1u) ? load<B>(p[I] + i) : B(ss[I]))...);
    if (ok) [[likely]] {
      put_batch(stream, y + i, res);
    } else {
      dec.row[dec.count] = r;
      dec.col[dec.count] = i;
      if (++dec.count == declined_batches::capacity) {
        ii = i + L;
        return false;
      }
    }
  }
  return true;
}

template <class K, class T, std::size_t NP>
LOWBIT_NOINLINE bool loaded_batches(const piece<T, NP>& pc, const void* k, std::size_t r, std::size_t& i, bool stream,
                                    declined_batches& dec) {
  return loaded_batches_impl(pc, *static_cast<const K*>(k), r, i, stream, dec, std::make_index_sequence<NP>{});
}

/**
 * A row-mode piece whose rows are shorter than a batch (the row route's
 * `[C, 9]`: a depthwise convolution's 3 x 3 weights, one scale per
 * channel), with SIMD: chunks of whole rows, each run on the loaded loop
 * as a flat piece whose per-row operands are expanded into a buffer of one
 * value per element (what tiling does for the general route), the piece's
 * last elements on the scalar loop. Out of line, so that its buffers take
 * stack only here.
 */
template <class T, std::size_t NP>
LOWBIT_NOINLINE void run_short_rows(const batch_leaves<T, NP>& lv, const piece<T, NP>& pc) {
  using B = batch<T>;
  constexpr std::size_t L = B::size, chunk = 512;
  // Each row's value is stored as a whole batch (the next row's overwrites
  // the excess): L elements of slack.
  alignas(64) T buf[NP][chunk + L];
  const std::size_t rows = pc.rows, cols = pc.cols;
  // Rows per chunk: a multiple of L / gcd(cols, L), so that a chunk is
  // whole batches (no scalar tail but the piece's last).
  const std::size_t whole = L / std::gcd(cols, L), fit = chunk / cols;
  const std::size_t per = fit >= whole ? fit / whole * whole : fit;
  declined_batches dec;
  for (std::size_t r0 = 0; r0 < rows; r0 += per) {
    const std::size_t nr = std::min(per, rows - r0), n = nr * cols;
    piece<T, NP> fp;
    fp.x = pc.x + r0 * cols;
    fp.y = pc.y + r0 * cols;
    fp.n = n;
    fp.loaded = true;
    fp.index = index_at(pc.index, r0 * cols);
    const auto first = static_cast<std::size_t>(row_of(pc, r0));
    for (std::size_t I = 0; I < NP; ++I) {
      fp.s[I] = pc.p[I][static_cast<std::ptrdiff_t>(first) * pc.row_stride[I]];
      if (pc.row_stride[I] == 0) continue;
      // The parameters' row, stepped (no division a row): wraps at period.
      for (std::size_t r = 0, pr = first; r < nr; ++r) {
        detail::store(buf[I] + r * cols, B(pc.p[I][static_cast<std::ptrdiff_t>(pr) * pc.row_stride[I]]));
        if (++pr == pc.period) pr = 0;
      }
      fp.p[I] = buf[I];
      fp.vary[I] = true;
    }
    std::size_t from = 0;
    auto flush = [&] {
      for (std::size_t j = 0; j < dec.count; ++j) lv.scalar(lv.scalar_kernel, fp, 0, dec.col[j], dec.col[j] + L);
      dec.count = 0;
    };
    while (!lv.loaded(fp, lv.kernel, 0, from, false, dec)) flush();
    flush();
    if (const std::size_t body = n / L * L; body < n) lv.scalar(lv.scalar_kernel, fp, 0, body, n);
  }
}

/**
 * The kernel loops: `y[i] = k(x[i], params...)` over a piece. With `simd`,
 * whole batches on the kernel's leaves, the scalar elements before them (a
 * peel, for streaming stores) and after them (the tail) on the scalar loop;
 * without, the scalar loop alone. This is compiled once per element type
 * and operand count, the scalar loop (scalar_columns) once per scalar
 * kernel, which the seven rounding modes of an operator share
 * (scalar_kernel_of): a mode costs its two leaves and nothing else.
 *
 * - a piece whose parameters are constant along each row (a constant
 *   piece, one row of splats, or row mode) runs on the row loop, each row's
 *   last elements in a batch too (rows shorter than a batch, and the
 *   batches a kernel declines, on the scalar loop after it: a call inside
 *   the row loop would make the compiler spill and rebuild the broadcast
 *   parameters and constants around it, every row);
 * - a piece with a parameter array along it, or that streams its stores (a
 *   large constant piece), runs on the loaded loop;
 * - without a row loop (run_piece_compact), the loaded loop serves every
 *   piece, a row at a time (a constant piece is one row);
 * - a row-mode piece of rows shorter than a batch (the row route's) runs,
 *   with SIMD, on run_short_rows; one whose operands repeat every `period`
 *   rows runs one block at a time (the leaves never see a period).
 */
template <class T, std::size_t NP>
LOWBIT_NOINLINE void run_piece_on(const batch_leaves<T, NP>& lv, const piece<T, NP>& pc, bool simd) {
  constexpr std::size_t L = batch<T>::size;
  const bool rows_mode = rows_mode_of(pc);
  if (simd && rows_mode && pc.cols != 0 && pc.cols < L) return run_short_rows(lv, pc);
  if (rows_mode && pc.period != 0 && pc.period < pc.rows) {
    // Operands that repeat every `period` rows: one block at a time, each
    // a piece without a period (so the leaves never wrap; rows is a
    // multiple of period).
    piece<T, NP> b = pc;
    b.period = 0;
    b.rows = pc.period;
    b.n = pc.period * pc.cols;
    for (std::size_t r0 = 0; r0 < pc.rows; r0 += pc.period) {
      b.x = pc.x + r0 * pc.cols;
      b.y = pc.y + r0 * pc.cols;
      b.index = index_at(pc.index, r0 * pc.cols);
      run_piece_on(lv, b, simd);
    }
    return;
  }
  // Streaming stores: never in row mode (the engine does not ask for them).
  const bool stream = simd && pc.stream && !rows_mode && reinterpret_cast<std::uintptr_t>(pc.y) % sizeof(T) == 0;
  const std::size_t rows = rows_mode ? pc.rows : 1, cols = rows_mode ? pc.cols : pc.n;
  declined_batches dec;
  // The declined batches noted so far, on the scalar loop (a row's last
  // elements, fewer than L, noted by the row loop, end at the row's end).
  auto flush = [&] {
    for (std::size_t j = 0; j < dec.count; ++j)
      lv.scalar(lv.scalar_kernel, pc, dec.row[j], dec.col[j], std::min(dec.col[j] + L, cols));
    dec.count = 0;
  };
  if (lv.row != nullptr && (!pc.loaded || rows_mode) && !stream) {
    // Rows of at least a batch on the row loop, each row's last elements
    // too (the row's last batch); shorter pieces on the scalar loop.
    const std::size_t body = simd && cols >= L ? cols / L * L : std::size_t(0);
    std::size_t r = 0, c = 0;
    if (body != 0)
      while (!lv.row(pc, lv.kernel, body, r, c, dec)) flush();
    flush();
    if (body == 0)
      for (std::size_t r = 0; r < rows; ++r) lv.scalar(lv.scalar_kernel, pc, r, 0, cols);
    return;
  }
  // The loaded loop; without a row loop also every other piece, a row at a
  // time.
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t i = 0;
    if (simd) {
      if (const std::size_t peel = stream_peel(stream, pc.y + r * cols, cols); peel != 0)
        lv.scalar(lv.scalar_kernel, pc, r, 0, i = peel);
      std::size_t from = i;
      while (!lv.loaded(pc, lv.kernel, r, from, stream, dec)) flush();
      flush();
      i += (cols - i) / L * L;
      if (stream) stream_fence();
    }
    if (i < cols) lv.scalar(lv.scalar_kernel, pc, r, i, cols);
  }
}

/// Runs kernel k over the piece on run_piece_on with k's leaves: both batch
/// loops (`Row`), or the loaded loop alone.
template <bool Row, class K, class T, std::size_t NP>
void run_piece_with(const K& k, const piece<T, NP>& pc, bool simd) {
  const auto sk = scalar_kernel_of(k);
  using SK = std::remove_const_t<decltype(sk)>;
  batch_leaves<T, NP> lv{&k, &sk, &scalar_columns<SK, T, NP>, nullptr, &loaded_batches<K, T, NP>};
  if constexpr (Row) lv.row = &row_batches<K, T, NP>;
  run_piece_on(lv, pc, simd);
}

/// Runs kernel k over the piece: its two batch loops are the code compiled
/// for k alone.
template <class K, class T, std::size_t NP>
void run_piece(const K& k, const piece<T, NP>& pc, bool simd) {
  run_piece_with<true>(k, pc, simd);
}

/// run_piece with the loaded loop alone, which then serves every piece (a
/// constant one as one row of splats, row mode a row at a time): half the
/// code, slower on constant and row-mode pieces. For kernels on a rare path,
/// or that only ever see loaded pieces.
template <class K, class T, std::size_t NP>
void run_piece_compact(const K& k, const piece<T, NP>& pc, bool simd) {
  run_piece_with<false>(k, pc, simd);
}

/**
 * Calls `f(c)` on consecutive flat pieces of at most `chunk` elements that
 * together make up the piece `pc`, in order: a row-mode piece row by row
 * (each row a constant piece), any other piece as it is, cut: for an
 * operator that handles a piece in steps over a buffer of `chunk` elements
 * (IntQuant's mixed bipolar bit widths). The chunks never stream their
 * stores.
 */
template <class T, std::size_t NP, class F>
void for_each_chunk(const piece<T, NP>& pc, std::size_t chunk, F&& f) {
  const bool rows_mode = pc.loaded && pc.rows != 0;
  const std::size_t rows = rows_mode ? pc.rows : 1, cols = rows_mode ? pc.cols : pc.n;
  for (std::size_t r = 0; r < rows; ++r) {
    piece<T, NP> row = pc;
    row.rows = row.cols = 0;
    row.row_stride = {};
    row.period = 0;
    row.stream = false;
    if (rows_mode) {
      for (std::size_t i = 0; i < NP; ++i) {
        row.p[i] = pc.p[i] + row_of(pc, r) * pc.row_stride[i];
        row.s[i] = *row.p[i];
        row.vary[i] = false;
      }
      row.loaded = false;
    }
    for (std::size_t c0 = 0; c0 < cols; c0 += chunk) {
      piece<T, NP> c = row;
      c.x = pc.x + r * cols + c0;
      c.y = pc.y + r * cols + c0;
      c.n = std::min(chunk, cols - c0);
      c.index = index_at(pc.index, r * cols + c0);
      for (std::size_t i = 0; i < NP; ++i)
        if (c.vary[i]) c.p[i] = row.p[i] + c0;
      f(c);
    }
  }
}

/// How one operand is read across a tile of `rows` x `cols` elements.
struct tile_access {
  std::ptrdiff_t row_stride = 0, col_stride = 0;
  enum kind_t { splat, contiguous, buffered } kind = splat;
};

/// Fills `a` in place (returning the struct by value made GCC store two
/// words and reload them as one, a store-forwarding stall per operand).
inline void classify(tile_access& a, std::ptrdiff_t row_stride, std::ptrdiff_t col_stride, std::size_t rows,
                     std::size_t cols) {
  a.row_stride = row_stride;
  a.col_stride = col_stride;
  const bool one_row = rows == 1;
  if (col_stride == 0 && (one_row || row_stride == 0))
    a.kind = tile_access::splat;
  else if (col_stride == 1 && (one_row || row_stride == static_cast<std::ptrdiff_t>(cols)))
    a.kind = tile_access::contiguous;
  else
    a.kind = tile_access::buffered;
}

/// buf[0, n) = v, with whole batches (a per-row parameter expanded over
/// short rows is on the hot path of per-channel calls).
template <class T>
LOWBIT_ALWAYS_INLINE void fill_splat(T* buf, std::size_t n, T v) noexcept {
  using B = batch<T>;
  constexpr std::size_t L = B::size;
  const B b(v);
  std::size_t i = 0;
  for (; i + L <= n; i += L) b.store_unaligned(buf + i);
  for (; i < n; ++i) buf[i] = v;
}

/// Copies elements [j0, j0 + m) of a tile (flat, row-major) into `buf`.
template <class T>
void gather_tile(const T* base, const tile_access& a, std::size_t cols, std::size_t j0,
                 std::size_t m, T* buf) {
  std::size_t r = j0 / cols, c = j0 % cols, done = 0;
  while (done < m) {
    const std::size_t len = std::min(cols - c, m - done);
    const T* src = base + static_cast<std::ptrdiff_t>(r) * a.row_stride +
                   static_cast<std::ptrdiff_t>(c) * a.col_stride;
    if (a.col_stride == 0)
      fill_splat(buf + done, len, *src);
    else if (a.col_stride == 1)
      std::copy_n(src, len, buf + done);
    else
      for (std::size_t i = 0; i < len; ++i) buf[done + i] = src[static_cast<std::ptrdiff_t>(i) * a.col_stride];
    done += len;
    ++r;
    c = 0;
  }
}

/// Writes `buf` to elements [j0, j0 + m) of a tile.
template <class T>
void scatter_tile(T* base, const tile_access& a, std::size_t cols, std::size_t j0, std::size_t m,
                  const T* buf) {
  std::size_t r = j0 / cols, c = j0 % cols, done = 0;
  while (done < m) {
    const std::size_t len = std::min(cols - c, m - done);
    T* dst = base + static_cast<std::ptrdiff_t>(r) * a.row_stride +
             static_cast<std::ptrdiff_t>(c) * a.col_stride;
    for (std::size_t i = 0; i < len; ++i) dst[static_cast<std::ptrdiff_t>(i) * a.col_stride] = buf[done + i];
    done += len;
    ++r;
    c = 0;
  }
}

/// Whether operands a (at pa) and b (at pb) of `plan` share any byte.
template <std::size_t N, class T>
bool overlaps(const loop_plan<N>& plan, std::size_t a, const T* pa, std::size_t b, const T* pb) noexcept {
  // Offsets within an operand's span (checked when its view was read, see
  // detail::check_span) fit in std::ptrdiff_t, in bytes too; the addresses
  // are formed in unsigned arithmetic, which cannot overflow.
  auto range = [&](std::size_t k, const T* base) {
    std::ptrdiff_t lo = 0, hi = 0;
    for (std::size_t d = 0; d < plan.rank; ++d) {
      const std::ptrdiff_t span = static_cast<std::ptrdiff_t>(plan.ext[d] - 1) * plan.str[k][d];
      (span < 0 ? lo : hi) += span;
    }
    const auto u = reinterpret_cast<std::uintptr_t>(base);
    return std::pair<std::uintptr_t, std::uintptr_t>{
        u - static_cast<std::uintptr_t>(-lo) * sizeof(T),
        u + static_cast<std::uintptr_t>(hi) * sizeof(T) + sizeof(T)};
  };
  const auto [alo, ahi] = range(a, pa);
  const auto [blo, bhi] = range(b, pb);
  return alo < bhi && blo < ahi;
}

/**
 * The engine's plan: operands 0 = x, 1..NP = the parameters, NP + 1 = y,
 * and NP + 2 = the output position (a row-major geometry with no data,
 * whose offset is an element's flat index: piece::index).
 */
template <std::size_t NP>
struct engine_plan : loop_plan<NP + 3> {
  /// Added to every position (a block-fed call runs a part of the output).
  std::size_t first_index = 0;
};

/// The row-major geometry of `out` (the position operand of an engine plan).
inline nd_geom row_major_geom(const shape& out) noexcept {
  nd_geom g;
  set_row_major(g, out.rank(), out.begin());
  return g;
}

/// The engine plan of x, the parameters and y over the broadcast shape
/// `out` (each operand must broadcast to it).
template <std::size_t NP>
engine_plan<NP> make_engine_plan(const shape& out, const nd_geom& x, const std::array<const nd_geom*, NP>& params,
                                 const nd_geom& y) {
  const nd_geom pos = row_major_geom(out);
  std::array<const nd_geom*, NP + 3> ops{};
  ops[0] = &x;
  for (std::size_t I = 0; I < NP; ++I) ops[1 + I] = params[I];
  ops[NP + 1] = &y;
  ops[NP + 2] = &pos;
  engine_plan<NP> p;
  static_cast<loop_plan<NP + 3>&>(p) = make_plan<NP + 3>(out, ops);
  return p;
}

/// The same for operands given as descriptors (filled by name, see
/// detail/protocol.hpp).
template <class T, std::size_t NP>
engine_plan<NP> make_engine_plan(const shape& out, const nd_geom& x, const std::array<const nd<const T>*, NP>& params,
                                 const nd_geom& y) {
  std::array<const nd_geom*, NP> g{};
  for (std::size_t I = 0; I < NP; ++I) g[I] = params[I];
  return make_engine_plan<NP>(out, x, g, y);
}

/// The data pointers of operand descriptors.
template <class T, std::size_t NP>
LOWBIT_ALWAYS_INLINE std::array<const T*, NP> data_of(const std::array<const nd<const T>*, NP>& params) noexcept {
  std::array<const T*, NP> d{};
  for (std::size_t I = 0; I < NP; ++I) {
    const T* p = params[I]->data;
#if defined(__GNUC__) || defined(__clang__)
    // One load each: GCC otherwise reads the NP pointers with one gather
    // (VPGATHERQQ), tens of cycles on CPUs whose microcode slows gathers
    // (Intel's Gather Data Sampling mitigation), on every call.
    __asm__("" : "+r"(p));
#endif
    d[I] = p;
  }
  return d;
}

/// A piece consumer without its type: the engine is compiled once per
/// element type and parameter count, not once per kernel or mode.
template <class T, std::size_t NP>
struct piece_sink {
  const void* obj;
  void (*call)(const void*, const piece<T, NP>&);
  void operator()(const piece<T, NP>& pc) const { call(obj, pc); }
};

/// Whether rows of `cols` elements run in row mode (tiling, run_dense_rows):
/// a batch or more. The row loop ends each row with a batch of its own
/// (row_batches_impl), so a row of L + t elements costs two batches; shorter
/// rows are gathered into chunks of many rows. (Rows under two batches were
/// gathered before the row loop took its rows' last elements in a batch:
/// per-channel calls on rows of 16 to 31 floats run 1.3-1.8 times as fast
/// in row mode now, but the reference FloatQuant kernel, which declines
/// batches, 0.88-0.96 times.)
template <class T>
constexpr bool row_mode_cols(std::size_t cols) noexcept {
  constexpr std::size_t L = batch<T>::size;
  return cols >= L;
}

/**
 * Step 1, plan to tiles: the unit of work is a tile, the innermost run, or
 * the two innermost dimensions when runs are short or every parameter is
 * constant along the rows (row mode: per-channel). Each operand is read
 * across a tile as a splat, contiguously, or through a buffer
 * (tile_access); the tiles are the positions of the remaining, outer
 * dimensions.
 */
template <class T, std::size_t NP>
struct tiling {
  static constexpr std::size_t N = NP + 3;  // x, parameters, y, position
  static constexpr std::size_t Y = NP + 1, P = NP + 2;
  std::size_t rows = 1, cols = 0, tile = 0, n_tiles = 0;
  std::array<tile_access, N> acc{};
  bool loaded = false;    // some parameter is not a splat over a tile
  bool row_mode = false;  // x and y contiguous, every parameter constant along a row
  bool direct = true;     // nothing buffered: pieces point into the operands
  bool stream = false;    // streaming stores for y
  std::size_t first_index = 0;  // engine_plan::first_index
  loop_plan<N> outer;     // the dimensions outside the tile

  tiling(const engine_plan<NP>& plan, const T* x, const T* y, const execution& exec)
      : first_index(plan.first_index), outer(plan) {
    const std::size_t r = plan.rank;
    cols = plan.ext[r - 1];
    stream = plan.count >= exec.stream_min_elements && !overlaps(plan, 0, x, Y, y);
    // A 2-D tile needs the positions contiguous over it (they are, unless
    // the caller's position operand is not row-major: a block-fed call).
    const bool can_two_d =
        r >= 2 && plan.str[P][r - 1] == 1 && plan.str[P][r - 2] == static_cast<std::ptrdiff_t>(cols);
    // Short rows always; long rows only in row mode (per-channel parameters
    // over contiguous rows: one piece for all the rows, not one per row),
    // and without streaming stores, which row mode does not make.
    if (can_two_d && (cols < short_run || !stream)) {
      classify_tile(plan, true);
      if (cols < short_run || row_mode) return;
    }
    classify_tile(plan, false);
  }

 private:
  void classify_tile(const engine_plan<NP>& plan, bool two_d) {
    const std::size_t r = plan.rank;
    rows = two_d ? plan.ext[r - 2] : 1;
    tile = rows * cols;
    for (std::size_t k = 0; k < N; ++k)
      classify(acc[k], two_d ? plan.str[k][r - 2] : 0, plan.str[k][r - 1], rows, cols);
    // x and y are always read and written through pointers; a splat x (a
    // broadcast input) is gathered like any other non-contiguous operand.
    for (std::size_t k : {std::size_t(0), Y})
      if (acc[k].kind == tile_access::splat) acc[k].kind = tile_access::buffered;
    loaded = false;
    for (std::size_t I = 0; I < NP; ++I) loaded = loaded || acc[1 + I].kind != tile_access::splat;
    row_mode = loaded && two_d && row_mode_cols<T>(cols) && acc[0].kind == tile_access::contiguous &&
               acc[Y].kind == tile_access::contiguous;
    for (std::size_t I = 0; I < NP; ++I) row_mode = row_mode && acc[1 + I].col_stride == 0;
    direct = true;
    for (std::size_t k = 0; k <= Y; ++k) direct = direct && acc[k].kind != tile_access::buffered;
    outer.rank = r - (two_d ? 2 : 1);
    n_tiles = outer_count(outer);
  }
};

/**
 * Step 2, a tile to pieces: elements [jb, je) of the tile at offsets `off`
 * (the whole tile, or a part: a multiple of `cols` in row mode, of
 * chunk_elems otherwise), handed to `sink` as contiguous pieces, gathering
 * and scattering through `buf` what is not contiguous.
 */
template <class T, std::size_t NP>
void run_tile(const tiling<T, NP>& tl, const T* x, const std::array<const T*, NP>& params, T* y,
              const std::array<std::ptrdiff_t, NP + 3>& off, std::size_t jb, std::size_t je,
              T (&buf)[NP + 2][chunk_elems], piece_sink<T, NP> sink) {
  constexpr std::size_t Y = NP + 1, P = NP + 2;
  const std::size_t cols = tl.cols;
  const T* xt = x + off[0];
  T* yt = y + off[Y];
  // Positions: contiguous over the tile, or (a 1-D tile) steps of col_stride.
  const std::ptrdiff_t step = tl.acc[P].col_stride;
  auto index_of = [&](std::size_t j) {
    return element_index{tl.first_index + static_cast<std::size_t>(off[P]) + j * static_cast<std::size_t>(step), step};
  };
  piece<T, NP> pc;
  pc.loaded = tl.loaded;
  std::array<const T*, NP> pt;
  for (std::size_t I = 0; I < NP; ++I) {
    pt[I] = params[I] + off[1 + I];
    pc.p[I] = pt[I];
    pc.s[I] = *pt[I];
    pc.vary[I] = tl.acc[1 + I].kind != tile_access::splat;
  }
  if (tl.row_mode) {
    const std::size_t r0 = jb / cols;
    pc.x = xt + jb;
    pc.y = yt + jb;
    pc.n = je - jb;
    pc.rows = (je - jb) / cols;
    pc.cols = cols;
    pc.index = index_of(jb);
    for (std::size_t I = 0; I < NP; ++I) {
      pc.row_stride[I] = tl.acc[1 + I].row_stride;
      pc.p[I] = pt[I] + static_cast<std::ptrdiff_t>(r0) * pc.row_stride[I];
    }
    sink(pc);
    return;
  }
  if (tl.direct) {
    pc.x = xt + jb;
    pc.y = yt + jb;
    pc.n = je - jb;
    pc.stream = tl.stream;
    pc.index = index_of(jb);
    for (std::size_t I = 0; I < NP; ++I)
      if (pc.vary[I]) pc.p[I] = pt[I] + jb;  // contiguous over the tile
    sink(pc);
    return;
  }
  for (std::size_t j0 = jb; j0 < je; j0 += chunk_elems) {
    const std::size_t m = std::min(chunk_elems, je - j0);
    const T* xp = xt + j0;
    if (tl.acc[0].kind == tile_access::buffered) {
      gather_tile(xt, tl.acc[0], cols, j0, m, buf[0]);
      xp = buf[0];
    }
    for (std::size_t I = 0; I < NP; ++I) {
      if (tl.acc[1 + I].kind == tile_access::contiguous) {
        pc.p[I] = pt[I] + j0;
      } else if (tl.acc[1 + I].kind == tile_access::buffered) {
        gather_tile(pt[I], tl.acc[1 + I], cols, j0, m, buf[1 + I]);
        pc.p[I] = buf[1 + I];
      }
    }
    const bool scatter = tl.acc[Y].kind == tile_access::buffered;
    pc.x = xp;
    pc.y = scatter ? buf[Y] : yt + j0;
    pc.n = m;
    pc.index = index_of(j0);
    sink(pc);
    if (scatter) scatter_tile(yt, tl.acc[Y], cols, j0, m, buf[Y]);
  }
}

/// Step 3: the elements [e0, e1) of the row-major order, tile after tile.
template <class T, std::size_t NP>
void run_range(const tiling<T, NP>& tl, const T* x, const std::array<const T*, NP>& params, T* y,
               std::size_t e0, std::size_t e1, piece_sink<T, NP> sink) {
  alignas(64) T buf[NP + 2][chunk_elems];
  const std::size_t tile = tl.tile;
  std::size_t t = e0 / tile;
  for_each_outer_range(tl.outer, t, (e1 + tile - 1) / tile, [&](const std::array<std::ptrdiff_t, NP + 3>& off) {
    const std::size_t base = t * tile;
    run_tile(tl, x, params, y, off, std::max(e0, base) - base, std::min(e1, base + tile) - base, buf, sink);
    ++t;
  });
}

/// The one piece of a flat run of n elements, x and y at stride 1 (both
/// routes below build it here): operand I at params[I], moving along the
/// run when vary[I], else constant; streaming stores from
/// exec.stream_min_elements elements when x and y share no byte.
template <class T, std::size_t NP>
LOWBIT_ALWAYS_INLINE piece<T, NP> flat_piece(const T* x, const std::array<const T*, NP>& params,
                                             const std::array<bool, NP>& vary, T* y, std::size_t n,
                                             std::size_t first_index, const execution& exec) noexcept {
  piece<T, NP> pc;
  for (std::size_t I = 0; I < NP; ++I) {
    pc.p[I] = params[I];
    pc.s[I] = *params[I];
    pc.vary[I] = vary[I];
    pc.loaded = pc.loaded || vary[I];
  }
  pc.x = x;
  pc.y = y;
  pc.n = n;
  pc.index.first = first_index;
  const auto xa = reinterpret_cast<std::uintptr_t>(x), ya = reinterpret_cast<std::uintptr_t>(y);
  const std::uintptr_t bytes = n * sizeof(T);  // within y's checked span
  pc.stream = n >= exec.stream_min_elements && !(xa < ya + bytes && ya < xa + bytes);
  return pc;
}

/// The batches of a call whose operands are all constant (`s`), x and y
/// contiguous (the scalar route, detail/driver.hpp): run_piece's row loop on
/// a flat constant piece, from element i to n, without the piece or the
/// leaves' table (a tenth of a 256-element IntQuant call). A batch the
/// kernel declines is noted in `dec` (as row_batches does; false: stopped
/// at i with `dec` full); a kernel that never declines gets no list.
template <class K, class T, std::size_t NP, std::size_t... I>
LOWBIT_NOINLINE bool splat_batches(const K& kernel, const T* x, T* y, std::size_t& ii, std::size_t n,
                                   const std::array<T, NP>& s, declined_batches* dec, std::index_sequence<I...>) {
  using B = batch<T>;
  constexpr std::size_t L = B::size;
  const K k = kernel;  // locals: a vector store may alias any memory
  const std::array<B, NP> sb{B(s[I])...};
  std::size_t i0 = ii;
  if constexpr (!declining_kernel<K>) {
    // Two batches an iteration, both computed before either is stored: the
    // loop's add, compare and branch are a third of a short kernel's
    // instructions (BipolarQuant's three). On Cascade Lake at 4096
    // elements (docs/performance.md, "Against each operator's own hand
    // loop"): one batch an iteration 0.87x the hand loop, two 0.95x, four
    // (stored as computed or at the end) 0.75-0.85x.
    bool ok = true;
    for (; i0 + 2 * L <= n; i0 += 2 * L) {
      const B a = call_batch(k, ok, element_index{}, load<B>(x + i0), sb[I]...);
      const B b = call_batch(k, ok, element_index{}, load<B>(x + i0 + L), sb[I]...);
      detail::store(y + i0, a);
      detail::store(y + i0 + L, b);
    }
  }
  for (std::size_t i = i0; i + L <= n; i += L) {
    bool ok = true;
    const B res = call_batch(k, ok, element_index{}, load<B>(x + i), sb[I]...);
    if (ok) [[likely]] {
      detail::store(y + i, res);
    } else {
      dec->col[dec->count] = i;
      if (++dec->count == declined_batches::capacity) {
        ii = i + L;
        return false;
      }
    }
  }
  return true;
}

/**
 * Runs kernel k on x[0, n) into y with every operand the constant s[I]: the
 * same bits as run_piece on the flat constant piece (the same batches, the
 * same scalar loop for declined batches, for the tail and without `simd`).
 * With `Direct`, on a batch loop of its own (splat_batches); without, or
 * for a kernel that takes each element's index, through run_piece on the
 * flat piece, whose leaves the general route compiles anyway. The scalar
 * route takes the loop of its own for each operator's default mode only: a
 * loop per kernel costs every caller's compile time (a second or more per
 * operator and call site for all seven modes), run_piece 8-12 ns a call.
 */
template <bool Direct = true, class K, class T, std::size_t NP>
void run_splat(const K& k, const T* x, T* y, std::size_t n, const std::array<T, NP>& s, bool simd) {
  constexpr std::size_t L = batch<T>::size;
  if constexpr (!Direct || index_aware_kernel<K>) {
    std::array<const T*, NP> p{};
    for (std::size_t I = 0; I < NP; ++I) p[I] = &s[I];
    run_piece(k, flat_piece(x, p, std::array<bool, NP>{}, y, n, 0, execution{}), simd);
  } else {
    auto scalar = [&](std::size_t b, std::size_t e) {
      scalar_operands<T, NP> ops;
      ops.s = s;
      run_scalar(scalar_kernel_of(k), x, y, b, e, element_index{}, ops, std::make_index_sequence<NP>{});
    };
    const std::size_t body = simd ? n / L * L : std::size_t(0);
    std::size_t i = 0;
    if constexpr (declining_kernel<K>) {
      declined_batches dec;
      auto flush = [&] {
        for (std::size_t j = 0; j < dec.count; ++j) scalar(dec.col[j], dec.col[j] + L);
        dec.count = 0;
      };
      while (!splat_batches(k, x, y, i, body, s, &dec, std::make_index_sequence<NP>{})) flush();
      flush();
    } else if (body != 0) {
      splat_batches(k, x, y, i, body, s, nullptr, std::make_index_sequence<NP>{});  // declines nothing
    }
    if (body < n) scalar(body, n);
  }
}

/// run_splat through run_piece_compact (the loaded loop alone), for the
/// kernels the general route runs so: their row loop is then compiled for
/// no caller.
template <class K, class T, std::size_t NP>
void run_splat_compact(const K& k, const T* x, T* y, std::size_t n, const std::array<T, NP>& s, bool simd) {
  std::array<const T*, NP> p{};
  for (std::size_t I = 0; I < NP; ++I) p[I] = &s[I];
  run_piece_compact(k, flat_piece(x, p, std::array<bool, NP>{}, y, n, 0, execution{}), simd);
}

/// The common case in one step (what the general walk would do with it,
/// without its set-up, which costs as much as a few hundred elements): a
/// plan of one run, x and y contiguous, every parameter constant or
/// contiguous along it, one thread. Returns false when it does not apply.
template <class T, std::size_t NP>
bool run_flat(const engine_plan<NP>& plan, const T* x, const std::array<const T*, NP>& params, T* y,
              piece_sink<T, NP> sink, const execution& exec) {
  constexpr std::size_t Y = NP + 1;
  if (!(plan.rank == 1 && plan.str[0][0] == 1 && plan.str[Y][0] == 1 && plan.str[Y + 1][0] == 1 &&
        parallel_parts(exec, plan.count) <= 1))
    return false;
  std::array<bool, NP> vary{};
  for (std::size_t I = 0; I < NP; ++I) {
    if (plan.str[1 + I][0] != 0 && plan.str[1 + I][0] != 1) return false;
    vary[I] = plan.str[1 + I][0] != 0;
  }
  sink(flat_piece(x, params, vary, y, plan.count, plan.first_index, exec));
  return true;
}

/// Whether `g` is a dense row-major tensor of shape `out` (exactly its
/// rank and extents; a dimension of extent 1 may have any stride).
inline bool dense_row_major(const nd_geom& g, const shape& out) noexcept {
  if (g.rank != out.rank()) return false;
  std::ptrdiff_t st = 1;
  for (std::size_t r = g.rank; r-- > 0;) {
    if (g.ext[r] != out[r]) return false;
    if (g.ext[r] == 1) continue;
    if (g.str[r] != st) return false;
    st *= static_cast<std::ptrdiff_t>(g.ext[r]);  // fits: the view's span was checked
  }
  return true;
}

/**
 * The direct route of the usual small call, before any plan is made: every
 * operand constant (rank 0), x and y dense row-major tensors of the output
 * shape `out`, at least two elements, one thread. make_engine_plan would
 * merge every dimension into one run with x, y and the positions at stride
 * 1 and every operand at stride 0, and run_flat would hand `sink` the same
 * piece (flat_piece builds both; tests/test_elementwise.cpp compares the two
 * routes). Returns false, having done nothing, when it does not apply.
 */
template <class T, std::size_t NP>
bool run_dense_constant(const shape& out, const nd<const T>& x, const std::array<const nd<const T>*, NP>& params,
                        const nd<T>& y, piece_sink<T, NP> sink, const execution& exec) {
  for (std::size_t I = 0; I < NP; ++I)
    if (params[I]->rank != 0) return false;
  if (!dense_row_major(x, out) || !dense_row_major(y, out)) return false;
  const std::size_t count = out.count();
  if (count < 2 || parallel_parts(exec, count) > 1) return false;
  const std::array<const T*, NP> p = data_of(params);
  sink(flat_piece(x.data, p, std::array<bool, NP>{}, y.data, count, 0, exec));
  return true;
}

/**
 * The split of a per-channel call's dimensions (run_dense_rows, and the
 * driver's row route): for an output of shape `out` and the operands `gs`
 * (right-aligned with out), `k` is the first dimension from which every
 * operand has extent 1, so that rows are out's dimensions [0, k) and
 * columns [k, rank) (k = 0: every operand one value), `rows` and `cols`
 * the products of their extents (out's count fits, so they do). False
 * when an operand has a higher rank than out (it would add dimensions).
 */
inline bool rows_split(const shape& out, const nd_geom* const* gs, std::size_t n, std::size_t& k, std::size_t& rows,
                       std::size_t& cols) noexcept {
  const std::size_t rank = out.rank();
  k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const nd_geom& g = *gs[i];
    if (g.rank > rank) return false;
    const std::size_t lead = rank - g.rank;
    for (std::size_t r = g.rank; r-- > 0;)
      if (g.ext[r] != 1) {
        k = std::max(k, lead + r + 1);
        break;
      }
  }
  // Products, not count / rows: no 64-bit division, tens of cycles on some
  // CPUs, in every per-channel call.
  rows = 1;
  cols = 1;
  for (std::size_t r = 0; r < k; ++r) rows *= out[r];
  for (std::size_t r = k; r < rank; ++r) cols *= out[r];
  return true;
}

/**
 * Whether operand `g` (rank at most out's) is, for the split of out at k
 * (rows_split), one value (extents all 1: `one` set) or one value per row
 * of a block of `period` rows: 1 over the columns, out's extents over the
 * rows' last dimensions [j, k), dense row-major over them, and 1 over the
 * rows' first dimensions [0, j) (the blocks: N of [N, C, H, W] for a scale
 * [1, C, 1, 1]), so that row r's value is at r % period, period the
 * product of out's extents over [j, k): all the rows when g varies over
 * every row dimension out does not have as 1.
 */
inline bool per_row_operand(const nd_geom& g, const shape& out, std::size_t k, bool& one,
                            std::size_t& period) noexcept {
  const std::size_t rank = out.rank();
  const std::size_t lead = rank - g.rank;
  one = true;
  for (std::size_t r = 0; r < g.rank; ++r) one = one && g.ext[r] == 1;
  period = 1;
  if (one) return true;
  std::ptrdiff_t st = 1;
  bool blocks = false;  // past the dimensions g varies over, towards the first
  for (std::size_t r = rank; r-- > 0;) {
    const std::size_t e = r >= lead ? g.ext[r - lead] : 1;
    if (r >= k) {
      if (e != 1) return false;
      continue;
    }
    if (e == 1) {
      blocks = blocks || out[r] != 1;
      continue;
    }
    if (blocks || e != out[r] || g.str[r - lead] != st) return false;
    st *= static_cast<std::ptrdiff_t>(e);
    period *= e;
  }
  return true;
}

/**
 * The row-mode piece of `blocks` blocks of `rows` rows of `cols` elements
 * of x and y, all contiguous: operand I one value per row of a block at
 * p[I] (row r of every block at p[I][r]) where `per_row[I]`, else the one
 * value *p[I]; flat indices from 0. With one block, what tiling's row mode
 * hands a sink for such a call.
 */
template <class T, std::size_t NP>
LOWBIT_ALWAYS_INLINE piece<T, NP> rows_piece(const T* x, T* y, std::size_t rows, std::size_t cols,
                                             const std::array<const T*, NP>& p, const std::array<bool, NP>& per_row,
                                             std::size_t blocks = 1) noexcept {
  // Every field given (no default-initialized piece overwritten): GCC 12
  // cleared such a piece with `rep stos` first, a few ns of every
  // per-channel call (3-8 ns on Zen 5).
  std::array<T, NP> s;
  std::array<std::ptrdiff_t, NP> row_stride;
  for (std::size_t I = 0; I < NP; ++I) {
    s[I] = *p[I];
    row_stride[I] = per_row[I] ? 1 : 0;
  }
  return piece<T, NP>{x,    y, p, s, per_row, blocks * rows * cols, blocks * rows, cols, row_stride,
                      blocks > 1 ? rows : 0, true, false, element_index{}};
}

/**
 * The operands of a row-mode piece, as the row route's hooks build them
 * (run_rows): operand k is the one value v[k] unless `operand` points it at
 * one value per row. Holds pointers into itself: not copied.
 */
template <class T, std::size_t NP>
struct row_inputs {
  std::array<T, NP> v{};
  std::array<const T*, NP> p;
  std::array<bool, NP> per_row{};
  row_inputs() noexcept {
    for (std::size_t k = 0; k < NP; ++k) p[k] = &v[k];
  }
  row_inputs(const row_inputs&) = delete;
  row_inputs& operator=(const row_inputs&) = delete;
  /// Operand k at `values`: one value per row when `varies`, else *values.
  void operand(std::size_t k, const T* values, bool varies) noexcept {
    p[k] = values;
    per_row[k] = varies;
  }
  /// rows_piece over x and y with these operands.
  piece<T, NP> piece_of(const T* x, T* y, std::size_t rows, std::size_t cols, std::size_t blocks) const noexcept {
    return rows_piece(x, y, rows, cols, p, per_row, blocks);
  }
};

/**
 * The direct route of a per-channel call, before any plan is made: x and y
 * dense row-major tensors of the output shape `out`, and every operand
 * either one value (rank 0, or extents all 1) or one value per row
 * (rows_split, per_row_operand: a scale of shape [C, 1] for x of [C, W], or
 * [1, C, 1, 1] for [1, C, H, W]). With every operand one value, it hands
 * `sink` run_flat's flat piece; otherwise the row-mode piece the general
 * route would (one tile of rows x cols: make_engine_plan merges the row and
 * the column dimensions, tiling takes row mode), and it runs only where the
 * general route takes row mode: rows of at least a batch, no streaming
 * stores, one thread. tests/test_elementwise.cpp compares the routes' pieces.
 * Returns false, having done nothing, when it does not apply.
 */
template <class T, std::size_t NP>
bool run_dense_rows(const shape& out, const nd<const T>& x, const std::array<const nd<const T>*, NP>& params,
                    const nd<T>& y, piece_sink<T, NP> sink, const execution& exec) {
  const std::size_t count = out.count();
  if (count < 2 || parallel_parts(exec, count) > 1) return false;
  if (!dense_row_major(x, out) || !dense_row_major(y, out)) return false;
  std::array<const nd_geom*, NP> gs;
  for (std::size_t I = 0; I < NP; ++I) gs[I] = params[I];
  std::size_t k = 0, rows = 1, cols = 1;
  if (!rows_split(out, gs.data(), NP, k, rows, cols)) return false;
  const std::array<const T*, NP> p = data_of(params);
  if (k == 0) {  // every operand one value: make_engine_plan merges all into one run
    sink(flat_piece(x.data, p, std::array<bool, NP>{}, y.data, count, 0, exec));
    return true;
  }
  if (!row_mode_cols<T>(cols) || count >= exec.stream_min_elements) return false;
  std::array<bool, NP> per_row{};
  for (std::size_t I = 0; I < NP; ++I) {
    bool one = true;
    std::size_t period = 0;
    // One value per row of all the rows (the engine's row mode has no blocks).
    if (!per_row_operand(*params[I], out, k, one, period) || (!one && period != rows)) return false;
    per_row[I] = !one;
  }
  sink(rows_piece(x.data, y.data, rows, cols, p, per_row));
  return true;
}

/**
 * Walks `plan` (make_engine_plan) and hands `sink` contiguous pieces (see
 * piece). An operand that is neither constant nor contiguous over a tile
 * (strided, or a per-row parameter in a 2-D tile) is gathered or expanded
 * into a stack buffer, and a non-contiguous y is scattered from one, so the
 * kernel only ever sees contiguous data. y may alias x when both have the
 * same geometry.
 *
 * With `exec` asking for threads, a large call is cut into contiguous parts
 * of the row-major order, run at the same time (lowbit::execution). Part
 * boundaries fall inside a tile only at whole rows (row mode) or whole
 * chunk_elems blocks (a multiple of every batch width and cache line), so
 * every part runs the kernel exactly as a single thread would.
 */
template <class T, std::size_t NP>
void elementwise(const engine_plan<NP>& plan, const T* x, const std::array<const T*, NP>& params, T* y,
                 piece_sink<T, NP> sink, const execution& exec) {
  if (plan.count == 0 || run_flat(plan, x, params, y, sink, exec)) return;
  const tiling<T, NP> tl(plan, x, y, exec);
  const std::size_t count = tl.n_tiles * tl.tile;
  const std::size_t parts = parallel_parts(exec, count);
  if (parts <= 1) return run_range(tl, x, params, y, 0, count, sink);
  const std::size_t grain = tl.row_mode ? tl.cols : chunk_elems;
  auto bound = [&](std::size_t i) {
    if (i >= parts) return count;
    const std::size_t e = count / parts * i + count % parts * i / parts;
    const std::size_t base = e / tl.tile * tl.tile;
    return base + (e - base) / grain * grain;
  };
  parallel_run(exec, parts, [&](std::size_t i) { run_range(tl, x, params, y, bound(i), bound(i + 1), sink); });
}

/// The same with any callable `f(const piece<T, NP>&)` as the sink.
template <class T, std::size_t NP, class F>
  requires std::is_invocable_v<const F&, const piece<T, NP>&>
void elementwise(const engine_plan<NP>& plan, const T* x, const std::array<const T*, NP>& params, T* y, const F& f,
                 const execution& exec = {}) {
  const piece_sink<T, NP> sink{&f, [](const void* o, const piece<T, NP>& pc) { (*static_cast<const F*>(o))(pc); }};
  elementwise(plan, x, params, y, sink, exec);
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_ELEMENTWISE_HPP
