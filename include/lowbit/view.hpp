// SPDX-License-Identifier: Apache-2.0
/**
 * @file view.hpp
 * Tensor shapes and views: lowbit::shape, lowbit::strided_view, and the
 * rules by which std::span, contiguous ranges, mdspan-like views and
 * scalars are read as tensors.
 */
#ifndef LOWBIT_VIEW_HPP
#define LOWBIT_VIEW_HPP

#include <array>
#include <concepts>
#include <cstdio>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "detail/ranges.hpp"
#include "error.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {

/// Selects the unchecked constructors of shape and strided_view, for
/// extents and strides that lowbit has already checked (its own tensor
/// descriptors, and runtime dispatch's architecture side). Not for users.
struct unchecked_t {
  explicit unchecked_t() = default;
};

/// r = a * b (wrapping); true when the product does not fit in std::size_t.
/// Without a division: every call re-checks every shape and view, and a
/// 64-bit division per extent was a visible part of a small call.
inline bool mul_overflows(std::size_t a, std::size_t b, std::size_t& r) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_mul_overflow(a, b, &r);
#else
  r = a * b;
  return b != 0 && a > std::numeric_limits<std::size_t>::max() / b;
#endif
}

/// The extent `v` as std::size_t, or false when it is not a non-negative
/// integer that fits (a negative, fractional, NaN or infinite value, or
/// one too large). Integers and floating-point values of any type.
template <class V>
constexpr bool to_extent(V v, std::size_t& out) noexcept {
  if constexpr (std::is_same_v<V, bool>) {
    out = v ? 1 : 0;
    return true;
  } else if constexpr (std::is_integral_v<V>) {
    if (!std::in_range<std::size_t>(v)) return false;
    out = static_cast<std::size_t>(v);
    return true;
  } else {
    static_assert(std::is_floating_point_v<V>, "lowbit: an extent must be an integer or floating-point value");
    // 2^64 as a V (exact in every binary floating-point type); NaN fails.
    constexpr V limit = static_cast<V>(static_cast<long double>(std::numeric_limits<std::size_t>::max()) + 1.0L);
    if (!(v >= V(0) && v < limit) || v != static_cast<V>(static_cast<std::size_t>(v))) return false;
    out = static_cast<std::size_t>(v);
    return true;
  }
}

/// The value of an extent for a message: integers as integers, others with
/// enough digits ("-1", "2.5", "nan").
template <class V>
std::string extent_string(V v) {
  if constexpr (std::is_integral_v<V>) {
    return dec(v);
  } else {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17Lg", static_cast<long double>(v));
    return buf;
  }
}

/// n = the product of ext[0, rank) (0 when one of them is 0); false when
/// that product does not fit in std::size_t.
inline bool checked_count(const std::size_t* ext, std::size_t rank, std::size_t& n) noexcept {
  n = 1;
  bool overflow = false;
  for (std::size_t i = 0; i < rank; ++i) {
    if (ext[i] == 0) {
      n = 0;
      return true;
    }
    // Wraps on overflow; the result is discarded then.
    if (mul_overflows(n, ext[i], n)) overflow = true;
  }
  return !overflow;
}

}  // namespace detail

/**
 * The extents of a tensor: rank 0 to lowbit::max_rank, row-major.
 *
 * **Limits**: the element count, the product of the extents, must fit in
 * std::size_t (a shape with an extent 0 has count 0 and is always valid);
 * constructing a shape whose count overflows throws lowbit::error. All
 * indexing in lowbit is done in std::size_t (positions) and std::ptrdiff_t
 * (element offsets), never in `int`, so tensors of 2^31 elements and more
 * are addressed correctly.
 *
 * **Example**:
 * ```
 * lowbit::shape s{2, 3, 4};  // s.rank() == 3, s.count() == 24
 * ```
 */
class shape {
 public:
  /// Rank 0: a scalar, one element.
  constexpr shape() = default;

  shape(std::initializer_list<std::size_t> dims) { assign(dims.begin(), dims.end()); }

  /// From any range of non-negative integers.
  template <class It>
  shape(It first, It last) {
    assign(first, last);
  }

  constexpr std::size_t rank() const noexcept { return rank_; }
  constexpr std::size_t operator[](std::size_t i) const noexcept { return dims_[i]; }
  constexpr std::size_t& operator[](std::size_t i) noexcept { return dims_[i]; }

  /// Product of the extents (1 for rank 0, 0 when any extent is 0).
  /// @throws lowbit::error if the product does not fit in std::size_t
  ///         (only possible after changing an extent with operator[]: the
  ///         constructors reject such shapes).
  std::size_t count() const {
    std::size_t n = 1;
    if (!detail::checked_count(dims_.data(), rank_, n)) [[unlikely]]
      throw_count_overflow();
    return n;
  }

  constexpr const std::size_t* begin() const noexcept { return dims_.data(); }
  constexpr const std::size_t* end() const noexcept { return dims_.data() + rank_; }

  friend constexpr bool operator==(const shape& a, const shape& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (std::size_t i = 0; i < a.rank_; ++i)
      if (a.dims_[i] != b.dims_[i]) return false;
    return true;
  }

  /// "[2, 3, 4]"; "[]" for rank 0.
  LOWBIT_NOINLINE_COLD std::string to_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < rank_; ++i) {
      if (i) s += ", ";
      s += detail::dec(dims_[i]);
    }
    return s += "]";
  }

  /// Internal: extents already known to be valid (rank <= max_rank, the
  /// count fits), not checked again. Tensor descriptors are turned into
  /// shapes several times a call.
  shape(detail::unchecked_t, const std::size_t* ext, std::size_t rank) noexcept : rank_(rank) {
    for (std::size_t i = 0; i < rank; ++i) dims_[i] = ext[i];
  }

 private:
  [[noreturn]] LOWBIT_NOINLINE_COLD void throw_count_overflow() const {
    detail::throw_error("lowbit: the element count of shape ", to_string(),
                        " overflows std::size_t; expected a product of extents of at most ",
                        detail::dec(std::numeric_limits<std::size_t>::max()));
  }

  template <class It>
  void assign(It first, It last) {
    for (; first != last; ++first) {
      if (rank_ == max_rank)
        detail::throw_error("lowbit: shape has more than ", detail::dec(max_rank),
                            " dimensions; expected a rank of at most LOWBIT_MAX_RANK");
      const auto v = *first;
      std::size_t e = 0;
      if (!detail::to_extent(v, e))
        detail::throw_error("lowbit: shape extent ", detail::extent_string(v), " in dimension ", detail::dec(rank_),
                            " is invalid; expected a non-negative integer that fits in std::size_t");
      dims_[rank_++] = e;
    }
    count();  // rejects a shape whose element count overflows std::size_t
  }

  std::array<std::size_t, max_rank> dims_{};
  std::size_t rank_ = 0;
};

/// "[2, 3, 4]".
inline std::string to_string(const shape& s) { return s.to_string(); }

namespace detail {

/// The largest element offset, in bytes, that lowbit accepts in a view:
/// pointer arithmetic is done in std::ptrdiff_t.
inline constexpr std::size_t max_span_bytes = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());

/// The message of check_span.
[[noreturn]] LOWBIT_NOINLINE_COLD inline void throw_span(const char* what, const std::size_t* ext,
                                                        const std::ptrdiff_t* str, std::size_t rank,
                                                        std::size_t elem_size, bool overflow, std::size_t span) {
  std::string strides = "[";
  for (std::size_t r = 0; r < rank; ++r) {
    if (r) strides += ", ";
    strides += dec(str[r]);
  }
  strides += "]";
  throw_error(what, ": a view of shape ", shape(ext, ext + rank).to_string(), " with strides ", strides, " spans ",
              overflow ? std::string("more than 2^64 elements")
                       : cat(dec(span), " elements of ", dec(elem_size), " bytes"),
              " between its first and last element (the sum of (extent - 1) * |stride|); expected at most ",
              dec(max_span_bytes / elem_size), " elements, so that every byte offset fits in std::ptrdiff_t");
}

/**
 * Checks that a view of `rank` extents `ext` and strides `str` (in elements
 * of `elem_size` bytes) can be addressed: its span, the distance in bytes
 * between its lowest and highest element, sum over the dimensions of
 * (extent - 1) * |stride| * elem_size, must not exceed PTRDIFF_MAX. Every
 * offset lowbit computes within such a view (also the partial sums and
 * the steps of its loops) then fits in std::ptrdiff_t. A view with an
 * extent 0 addresses nothing and is always valid.
 * @throws lowbit::error naming `what`, the shape, the strides and the span.
 */
inline void check_span(const char* what, const std::size_t* ext, const std::ptrdiff_t* str, std::size_t rank,
                       std::size_t elem_size) {
  for (std::size_t r = 0; r < rank; ++r)
    if (ext[r] == 0) return;
  constexpr std::size_t umax = std::numeric_limits<std::size_t>::max();
  std::size_t span = 0;  // in elements
  bool overflow = false;
  for (std::size_t r = 0; r < rank && !overflow; ++r) {
    // |stride| without overflow for PTRDIFF_MIN.
    const std::size_t mag = str[r] < 0 ? std::size_t(0) - static_cast<std::size_t>(str[r])
                                       : static_cast<std::size_t>(str[r]);
    const std::size_t e = ext[r] - 1;
    std::size_t reach = 0;
    if (mul_overflows(e, mag, reach) || span > umax - reach) {
      overflow = true;
      break;
    }
    span += reach;
  }
  std::size_t bytes = 0;  // span <= max_span_bytes / elem_size, without the division
  if (!overflow && !mul_overflows(span, elem_size, bytes) && bytes <= max_span_bytes) return;
  throw_span(what, ext, str, rank, elem_size, overflow, span);
}

}  // namespace detail

namespace detail {
/// Throws when a view with elements has a null data pointer (reading it
/// would crash): `what` names the view's kind in the message.
inline void check_data(const char* what, const void* data, const std::size_t* ext, std::size_t rank) {
  if (data != nullptr) return;
  std::size_t n = 1;
  if (!checked_count(ext, rank, n) || n != 0)
    throw_error(what, ": a view of shape ", shape(unchecked_t{}, ext, rank).to_string(),
                " has a null data pointer; expected a pointer to its elements (only a view with no elements may be "
                "null)");
}
}  // namespace detail

/**
 * A non-owning N-d view of `T` with arbitrary strides, counted in elements:
 * rank 0 to lowbit::max_rank, strides may be zero (a broadcast view),
 * negative or larger than the extents (a non-contiguous view).
 *
 * It has the members lowbit reads from any mdspan-like view
 * (`data_handle()`, `rank()`, `extent(r)`, `stride(r)`), so it stands in for
 * std::mdspan with `layout_stride` where the standard library has none.
 *
 * **Example**:
 * ```
 * std::vector<float> buf(2 * 8);
 * lowbit::strided_view<float> every_other(buf.data(), {2, 4}, {8, 2});
 * ```
 */
template <class T>
class strided_view {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using data_handle_type = T*;

  /// Row-major (C order) contiguous view.
  /// @throws lowbit::error if its size in bytes exceeds PTRDIFF_MAX.
  strided_view(T* data, const shape& extents) : data_(data), extents_(extents) {
    if (extents_.count() == 0) return;  // addresses nothing; the strides stay 0
    std::size_t s = 1;  // a suffix product of the count: no overflow
    for (std::size_t r = extents_.rank(); r-- > 0;) {
      if (s > detail::max_span_bytes) {  // then the span check below throws
        strides_[r] = std::numeric_limits<std::ptrdiff_t>::max();
      } else {
        strides_[r] = static_cast<std::ptrdiff_t>(s);
      }
      s *= extents_[r];
    }
    detail::check_span("lowbit::strided_view", extents_.begin(), strides_.data(), extents_.rank(),
                       sizeof(T));
    detail::check_data("lowbit::strided_view", data_, extents_.begin(), extents_.rank());
  }

  /// Internal (runtime dispatch): a descriptor that lowbit has already
  /// checked, not checked again.
  strided_view(detail::unchecked_t, T* data, std::size_t rank, const std::size_t* ext,
               const std::ptrdiff_t* str) noexcept
      : data_(data), extents_(detail::unchecked_t{}, ext, rank) {
    for (std::size_t r = 0; r < rank; ++r) strides_[r] = str[r];
  }

  /// Explicit strides, one per dimension, in elements.
  /// @throws lowbit::error if the number of strides differs from the rank.
  strided_view(T* data, const shape& extents, std::initializer_list<std::ptrdiff_t> strides)
      : strided_view(data, extents, std::span<const std::ptrdiff_t>(strides.begin(), strides.size())) {}

  /**
   * Strides known only at run time (from a DLPack tensor, numpy's buffer
   * protocol, ...), one per dimension, in elements.
   * @throws lowbit::error if the number of strides differs from the rank.
   *
   * **Example**:
   * ```
   * std::vector<std::ptrdiff_t> st{8, 2};
   * lowbit::strided_view<float> v(buf.data(), {2, 4}, st);
   * ```
   */
  strided_view(T* data, const shape& extents, std::span<const std::ptrdiff_t> strides)
      : data_(data), extents_(extents) {
    if (strides.size() != extents_.rank())
      throw error("lowbit::strided_view: " + std::to_string(strides.size()) +
                  " strides given for a view of shape " + extents_.to_string() + "; expected " +
                  std::to_string(extents_.rank()));
    std::size_t r = 0;
    for (std::ptrdiff_t s : strides) strides_[r++] = s;
    detail::check_span("lowbit::strided_view", extents_.begin(), strides_.data(), extents_.rank(),
                       sizeof(T));
    detail::check_data("lowbit::strided_view", data_, extents_.begin(), extents_.rank());
  }

  /// A const view of a mutable one.
  template <class U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
  strided_view(const strided_view<U>& v) : data_(v.data_handle()), extents_(v.extents()) {
    for (std::size_t r = 0; r < extents_.rank(); ++r) strides_[r] = v.stride(r);
  }

  constexpr T* data_handle() const noexcept { return data_; }
  constexpr std::size_t rank() const noexcept { return extents_.rank(); }
  constexpr std::size_t extent(std::size_t r) const noexcept { return extents_[r]; }
  constexpr std::ptrdiff_t stride(std::size_t r) const noexcept { return strides_[r]; }
  constexpr const shape& extents() const noexcept { return extents_; }
  std::size_t size() const { return extents_.count(); }

 private:
  T* data_ = nullptr;
  shape extents_;
  std::array<std::ptrdiff_t, max_rank> strides_{};
};

template <class T>
strided_view(T*, const shape&) -> strided_view<T>;
template <class T>
strided_view(T*, const shape&, std::initializer_list<std::ptrdiff_t>) -> strided_view<T>;

namespace detail {
template <class V>
struct is_strided_view : std::false_type {};
template <class T>
struct is_strided_view<strided_view<T>> : std::true_type {};
}  // namespace detail

/**
 * An mdspan-like view: std::mdspan, Kokkos::mdspan, or any type with the
 * same members. lowbit needs the raw pointer (for SIMD loads) and the strides,
 * so the data handle must be `element_type*` and the reference `element_type&`.
 * lowbit never indexes through the view, so both C++20 `operator()` and
 * C++23 `operator[]` mdspans work.
 */
template <class V>
concept mdspan_like = requires(const V& v, std::size_t r) {
  typename V::element_type;
  typename V::data_handle_type;
  typename V::reference;
  { V::rank() } -> std::convertible_to<std::size_t>;
  { v.extent(r) } -> std::convertible_to<std::size_t>;
  { v.stride(r) } -> std::convertible_to<std::ptrdiff_t>;
  { v.data_handle() } -> std::convertible_to<typename V::element_type*>;
} && std::is_same_v<typename V::data_handle_type, typename V::element_type*> &&
                      std::is_same_v<typename V::reference, typename V::element_type&>;

/**
 * What lowbit accepts as a tensor argument:
 * - an arithmetic scalar (rank 0; parameters only),
 * - lowbit::strided_view,
 * - an mdspan_like view,
 * - a contiguous sized range such as std::span, std::vector or std::array (rank 1).
 */
template <class V>
concept tensor_arg = std::is_arithmetic_v<std::remove_cvref_t<V>> ||
                     detail::is_strided_view<std::remove_cvref_t<V>>::value ||
                     mdspan_like<std::remove_cvref_t<V>> ||
                     (std::ranges::contiguous_range<V> && std::ranges::sized_range<V>);

namespace detail {

/// The geometry of a tensor: rank, extents and strides (in elements).
struct nd_geom {
  std::size_t rank = 0;
  std::array<std::size_t, max_rank> ext{};
  std::array<std::ptrdiff_t, max_rank> str{};

  /// The extents as a shape, not checked again: every descriptor is made
  /// from a checked shape or view (fill_nd checks the others).
  lowbit::shape get_shape() const { return lowbit::shape(unchecked_t{}, ext.data(), rank); }
};

/// A type-erased descriptor of a tensor: geometry and data pointer.
template <class E>
struct nd : nd_geom {
  E* data = nullptr;
};

template <class V>
struct view_element {
  using type = void;
};
template <class V>
  requires detail::is_strided_view<std::remove_cv_t<V>>::value || mdspan_like<std::remove_cv_t<V>>
struct view_element<V> {
  using type = typename V::element_type;
};
template <class V>
  requires(!detail::is_strided_view<std::remove_cv_t<V>>::value &&
           !mdspan_like<std::remove_cv_t<V>> && std::ranges::contiguous_range<V>)
struct view_element<V> {
  using type = std::remove_reference_t<std::ranges::range_reference_t<V>>;
};

/// The element type of a tensor argument as seen through `V&&` (const for
/// a const range), or void for a scalar.
template <class V>
using element_t = typename view_element<std::remove_reference_t<V>>::type;

template <class V>
using scalar_value_t = std::remove_cv_t<element_t<V>>;

/// Writes the geometry of a view (not a scalar) into `g` and returns its
/// data pointer. The geometry is written in place: building it in a
/// temporary and copying it made GCC reload freshly stored words as wider
/// vectors (a store-forwarding stall per argument, a tenth of a small call).
template <class V>
auto fill_nd(V&& v, nd_geom& g) {
  using R = std::remove_cvref_t<V>;
  using E = element_t<V>;
  E* data = nullptr;
  if constexpr (is_strided_view<R>::value || mdspan_like<R>) {
    if constexpr (mdspan_like<R>)
      static_assert(R::rank() <= max_rank, "lowbit: the view's rank exceeds LOWBIT_MAX_RANK");
    data = v.data_handle();
    g.rank = v.rank();
    // A generic lambda, instantiated only where it is called: a rank-0
    // mdspan has a stride() member whose body does not compile (its
    // mapping's stride() requires rank > 0), so it must never be named.
    const auto dims = [&g](const auto& w) {
      for (std::size_t r = 0; r < g.rank; ++r) {
        const auto e = w.extent(r);
        const auto st = w.stride(r);
        if (!to_extent(e, g.ext[r]))
          throw_error("lowbit: a view has extent ", extent_string(e), " in dimension ", dec(r),
                      "; expected a non-negative integer extent that fits in std::size_t");
        if constexpr (std::is_integral_v<std::remove_cv_t<decltype(st)>>) {
          if (!std::in_range<std::ptrdiff_t>(st))
            throw_error("lowbit: a view has stride ", dec(st), " in dimension ", dec(r),
                        "; expected a stride that fits in std::ptrdiff_t");
          g.str[r] = static_cast<std::ptrdiff_t>(st);
        } else {
          // A floating-point stride: an integer in std::ptrdiff_t's range, as for extents.
          using S = std::remove_cv_t<decltype(st)>;
          static_assert(std::is_floating_point_v<S>, "lowbit: a stride must be an integer or floating-point value");
          constexpr S limit = static_cast<S>(static_cast<long double>(std::numeric_limits<std::ptrdiff_t>::max()) + 1.0L);
          if (!(st >= -limit && st < limit) || st != static_cast<S>(static_cast<std::ptrdiff_t>(st)))
            throw_error("lowbit: a view has stride ", extent_string(st), " in dimension ", dec(r),
                        "; expected an integer stride that fits in std::ptrdiff_t");
          g.str[r] = static_cast<std::ptrdiff_t>(st);
        }
      }
    };
    if constexpr (!mdspan_like<R>)
      dims(v);
    else if constexpr (R::rank() > 0)
      dims(v);
    // A strided_view checked both when it was made (its extents are a
    // shape; its constructors call check_span) and cannot change since;
    // other views are checked here, on every call.
    if constexpr (!is_strided_view<R>::value) {
      (void)lowbit::shape(g.ext.begin(), g.ext.begin() + g.rank);  // throws if the count overflows
      if constexpr (!std::is_void_v<E>)
        check_span("lowbit", g.ext.data(), g.str.data(), g.rank, sizeof(E));
      check_data("lowbit", data, g.ext.data(), g.rank);
    }
  } else {
    data = std::ranges::data(v);
    g.rank = 1;
    g.ext[0] = static_cast<std::size_t>(std::ranges::size(v));
    g.str[0] = 1;
    check_data("lowbit", data, g.ext.data(), 1);
  }
  return data;
}

/// Describes a view (not a scalar) as an nd.
template <class V>
auto to_nd(V&& v) {
  nd<element_t<V>> d;
  d.data = fill_nd(std::forward<V>(v), d);
  return d;
}

}  // namespace detail
LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_VIEW_HPP
