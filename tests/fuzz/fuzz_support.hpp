// SPDX-License-Identifier: Apache-2.0
/**
 * @file fuzz_support.hpp
 * What the libFuzzer targets share (docs/fuzzing.md): decoding values,
 * shapes, layouts, parameters and attributes from the input; the
 * brute-force overlap oracle; and the checks of a call (check_call: the
 * output untouched on error, nothing written outside it, the scalar kernels
 * on one thread give the same bits; run_placed: an output placed in the
 * buffer of an input against the oracle). fuzz_api.cpp drives the
 * element-wise operators, their codes and packing; fuzz_blocks.cpp the
 * block formats.
 */
#ifndef LOWBIT_TESTS_FUZZ_SUPPORT_HPP
#define LOWBIT_TESTS_FUZZ_SUPPORT_HPP

#include <lowbit/lowbit.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

namespace lowbit_fuzz {


using lowbit::semantics;

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "lowbit-fuzz: invariant violated: %s\n", what);
  std::abort();
}

/// LOWBIT_FUZZ_ONLY (unset in CI) restricts the fuzzer to one class of
/// hostile input, to measure how fast each is found (docs/fuzzing.md):
/// `pack` (pack/unpack, each in a buffer of its own: codes out of range),
/// `overlap` (the operators with y placed over x or a parameter; no y that
/// maps two indices to one element) and `self` (the operators, every y in a
/// buffer of its own). LOWBIT_FUZZ_OP=k keeps operator k only (0 to 7, as
/// decoded in LLVMFuzzerTestOneInput). Both only skip the inputs (or the
/// parts of an input) outside the class, and never decode an input another
/// way: an input that fails with them set fails without them.
enum class only_t { all, pack, overlap, self };

inline only_t only() {
  static const only_t v = [] {
    const char* e = std::getenv("LOWBIT_FUZZ_ONLY");
    const std::string s = e ? e : "";
    if (s.empty()) return only_t::all;
    if (s == "pack") return only_t::pack;
    if (s == "overlap") return only_t::overlap;
    if (s == "self") return only_t::self;
    std::fprintf(stderr, "lowbit-fuzz: LOWBIT_FUZZ_ONLY=%s; expected pack, overlap or self\n", s.c_str());
    std::exit(2);
  }();
  return v;
}

/// LOWBIT_FUZZ_OP, or -1 when unset.
inline int only_op() {
  static const int v = [] {
    const char* e = std::getenv("LOWBIT_FUZZ_OP");
    return e && *e ? std::atoi(e) : -1;
  }();
  return v;
}

/// How the hostile inputs fared, printed at exit when LOWBIT_FUZZ_STATS is
/// set (to see that both sides of each rule are reached).
struct stats_t {
  std::size_t self = 0, shared = 0, in_place = 0, disjoint = 0, both_rejected = 0, out_of_range = 0, round_trips = 0;
  ~stats_t() {
    if (std::getenv("LOWBIT_FUZZ_STATS"))
      std::fprintf(stderr,
                   "lowbit-fuzz stats: rejected: %zu outputs with two indices on one element, %zu sharing memory "
                   "with an input, %zu packs of a code out of range; accepted: %zu exactly in place, %zu disjoint "
                   "in a shared buffer (%zu more rejected there and in a buffer of their own); %zu pack/unpack "
                   "round trips\n",
                   self, shared, out_of_range, in_place, disjoint, both_rejected, round_trips);
  }
};
inline stats_t stats;

/// The same bits, except that NaN equals NaN: a NaN's sign and payload are
/// unspecified (docs/semantics.md), so SIMD and scalar code may differ there.
template <class T>
bool same_result(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}

// Guard elements before and after every buffer.
inline constexpr std::size_t guard = 8;
// At most this many elements in a tensor (keeps an input fast).
inline constexpr std::size_t max_elems = 2048;

/// A float or double from the bytes: every bit pattern, or one of the
/// values that matter (signed zeros, infinities, NaN, subnormals, ties).
template <class T>
T pick_value(FuzzedDataProvider& in) {
  const std::uint8_t k = in.ConsumeIntegral<std::uint8_t>();
  if (k < 64) {
    if constexpr (std::is_same_v<T, float>)
      return std::bit_cast<float>(in.ConsumeIntegral<std::uint32_t>());
    else
      return std::bit_cast<double>(in.ConsumeIntegral<std::uint64_t>());
  }
  if (k < 160) return static_cast<T>(static_cast<int>(k) - 112) / T(4);  // -12 .. 11.75 in quarters
  static constexpr double table[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 7.5, 448.0, 57344.0, 0.3,
                                     1e-45, 1.17549435e-38, 3.4028234663852886e38, 1e30, 4.9e-324,
                                     2147483648.0, 16777217.0, 0.1, 255.5};
  const std::size_t i = k - 160u;
  if (i < std::size(table)) return static_cast<T>(table[i]);
  switch (k % 4) {
    case 0: return std::numeric_limits<T>::infinity();
    case 1: return -std::numeric_limits<T>::infinity();
    case 2: return std::numeric_limits<T>::quiet_NaN();
    default: return -std::numeric_limits<T>::quiet_NaN();
  }
}

/// A bit width: mostly valid, sometimes 0, negative, fractional, NaN, huge.
template <class T>
T pick_bitwidth(FuzzedDataProvider& in) {
  const std::uint8_t k = in.ConsumeIntegral<std::uint8_t>();
  if (k < 200) return static_cast<T>(k % 34);  // 0 .. 33
  return pick_value<T>(in);
}

/// Offsets, in elements from element [0, ..., 0], of every index of a tensor
/// of shape `shp` and strides `str`, row-major.
inline std::vector<std::ptrdiff_t> index_offsets(const lowbit::shape& shp, const std::vector<std::ptrdiff_t>& str) {
  std::vector<std::ptrdiff_t> o;
  const std::size_t n = shp.count();
  o.reserve(n);
  std::array<std::size_t, lowbit::max_rank> idx{};
  for (std::size_t f = 0; f < n; ++f) {
    std::ptrdiff_t off = 0;
    for (std::size_t r = 0; r < shp.rank(); ++r) off += static_cast<std::ptrdiff_t>(idx[r]) * str[r];
    o.push_back(off);
    for (std::size_t r = shp.rank(); r-- > 0;) {
      if (++idx[r] < shp[r]) break;
      idx[r] = 0;
    }
  }
  return o;
}

/// Row-major strides of shape s.
inline std::vector<std::ptrdiff_t> row_major(const lowbit::shape& s) {
  std::vector<std::ptrdiff_t> st(s.rank());
  std::ptrdiff_t step = 1;
  for (std::size_t r = s.rank(); r-- > 0;) {
    st[r] = step;
    step *= static_cast<std::ptrdiff_t>(std::max<std::size_t>(s[r], 1));
  }
  return st;
}

/// A tensor in a buffer with guard zones: shape, strides and the offset of
/// element [0, ..., 0] in `mem`.
template <class T>
struct tensor {
  lowbit::shape shp;
  std::vector<std::ptrdiff_t> str;
  std::vector<T> mem;
  std::ptrdiff_t origin = 0;

  lowbit::strided_view<T> view() { return lowbit::strided_view<T>(mem.data() + origin, shp, str); }
  lowbit::strided_view<const T> cview() const {
    return lowbit::strided_view<const T>(mem.data() + origin, shp, str);
  }
  /// Offsets (from mem.data()) of every element, row-major.
  std::vector<std::ptrdiff_t> offsets() const {
    std::vector<std::ptrdiff_t> o = index_offsets(shp, str);
    for (std::ptrdiff_t& v : o) v += origin;
    return o;
  }
  /// A zeroed buffer for the strides, with guard elements on both sides.
  void fit() {
    std::ptrdiff_t lo = 0, hi = 0;
    if (shp.count() != 0)
      for (std::size_t r = 0; r < shp.rank(); ++r) {
        const std::ptrdiff_t span = static_cast<std::ptrdiff_t>(shp[r] - 1) * str[r];
        (span < 0 ? lo : hi) += span;
      }
    mem.assign(static_cast<std::size_t>(hi - lo + 1) + 2 * guard, T(0));
    origin = static_cast<std::ptrdiff_t>(guard) - lo;
  }
};

// ---- Memory: the brute-force overlap oracle ---------------------------------
//
// Every tensor is listed element by element (at most max_elems of them), so
// whether two tensors share a byte, whether one maps two indices to the
// same element, and whether y is exactly x is decided here independently
// of the library's own (closed-form) checks.

/// A tensor as bytes of a buffer: element [0, ..., 0] at byte `base`,
/// `elem` bytes per element, strides in elements.
struct region {
  std::ptrdiff_t base = 0;
  std::size_t elem = 1;
  lowbit::shape shp;
  std::vector<std::ptrdiff_t> str;
};

template <class T>
region region_of(const tensor<T>& t) {
  return {t.origin * static_cast<std::ptrdiff_t>(sizeof(T)), sizeof(T), t.shp, t.str};
}

/// The first byte of every element, row-major.
inline std::vector<std::ptrdiff_t> byte_starts(const region& r) {
  std::vector<std::ptrdiff_t> o = index_offsets(r.shp, r.str);
  for (std::ptrdiff_t& v : o) v = r.base + v * static_cast<std::ptrdiff_t>(r.elem);
  return o;
}

/// Bytes [lo, hi) relative to `base` that the elements of r cover ({0, 0}
/// for an empty tensor).
inline std::array<std::ptrdiff_t, 2> reach(const region& r) {
  const std::vector<std::ptrdiff_t> o = byte_starts(r);
  if (o.empty()) return {0, 0};
  const auto [lo, hi] = std::minmax_element(o.begin(), o.end());
  return {*lo - r.base, *hi - r.base + static_cast<std::ptrdiff_t>(r.elem)};
}

/// Two different indices of r on one byte.
inline bool self_overlaps(const region& r) {
  std::vector<std::ptrdiff_t> s = byte_starts(r);
  std::sort(s.begin(), s.end());
  for (std::size_t i = 1; i < s.size(); ++i)
    if (s[i] - s[i - 1] < static_cast<std::ptrdiff_t>(r.elem)) return true;
  return false;
}

/// a and b, in one buffer of n bytes, share a byte.
inline bool shares(const region& a, const region& b, std::size_t n) {
  std::vector<char> mark(n, 0);
  for (std::ptrdiff_t s : byte_starts(a))
    for (std::size_t k = 0; k < a.elem; ++k) mark[static_cast<std::size_t>(s) + k] = 1;
  for (std::ptrdiff_t s : byte_starts(b))
    for (std::size_t k = 0; k < b.elem; ++k)
      if (mark[static_cast<std::size_t>(s) + k]) return true;
  return false;
}

/// y is exactly x ("in place"): the same first element and, along every
/// dimension of y of extent above 1, x has that dimension (trailing-aligned,
/// not broadcast) with the same extent and stride.
inline bool same_place(const region& x, const region& y) {
  if (x.base != y.base || x.elem != y.elem || x.shp.rank() > y.shp.rank()) return false;
  const std::size_t lead = y.shp.rank() - x.shp.rank();
  for (std::size_t r = 0; r < y.shp.rank(); ++r) {
    if (y.shp[r] <= 1) continue;
    if (r < lead || x.shp[r - lead] != y.shp[r] || x.str[r - lead] != y.str[r]) return false;
  }
  return true;
}

inline void print_region(const char* name, const region& r) {
  std::string st;
  for (std::ptrdiff_t s : r.str) st += (st.empty() ? "" : ", ") + std::to_string(s);
  std::fprintf(stderr, "  %s: byte %td, %zu-byte elements, shape %s, strides [%s]\n", name, r.base, r.elem,
               r.shp.to_string().c_str(), st.c_str());
}

/// An 8-aligned buffer of bytes.
struct arena {
  std::vector<std::uint64_t> words;
  unsigned char* bytes() { return reinterpret_cast<unsigned char*>(words.data()); }
  std::size_t size() const { return words.size() * sizeof(std::uint64_t); }
};

/// A buffer and a tensor in it: what an output is placed against (x, a
/// parameter, codes or packed bytes).
struct host {
  const void* data = nullptr;
  std::size_t bytes = 0;
  region r;
};

template <class T>
host host_of(const tensor<T>& t) {
  return {t.mem.data(), t.mem.size() * sizeof(T), region_of(t)};
}

/// A copy of a host's buffer in an arena, and an output placed in it.
struct placed {
  arena a;
  region h, o;
};

inline std::ptrdiff_t floor_to(std::ptrdiff_t v, std::ptrdiff_t m) {
  return (v >= 0 ? v / m : -((-v + m - 1) / m)) * m;
}

/// Places output `o` (base ignored) against the host: its element 0 on the
/// host's (exact or partial overlap), a few of its elements off
/// (interleaved or partial), or anywhere from just before the host's first
/// byte to just after its last one. The arena holds a copy of the host's
/// buffer and guard bytes; aligned for both.
inline placed place(FuzzedDataProvider& in, const host& h, region o) {
  const auto [hlo, hhi] = reach(h.r);
  const auto [olo, ohi] = reach(o);
  const auto e = static_cast<std::ptrdiff_t>(o.elem);
  const std::uint8_t d = in.ConsumeIntegral<std::uint8_t>();
  std::ptrdiff_t delta = 0;
  if (d >= 96 && d < 192)
    delta = (d % 7 - 3) * e;
  else if (d >= 192)
    delta = in.ConsumeIntegralInRange<std::ptrdiff_t>(hlo - ohi - e, hhi - olo + e);
  const std::ptrdiff_t ob = floor_to(h.r.base + delta, e);  // in the host buffer's bytes
  const std::ptrdiff_t lo = floor_to(std::min<std::ptrdiff_t>(0, ob + olo) - 8 * guard, 8);
  const std::ptrdiff_t hi = std::max<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(h.bytes), ob + ohi) + 8 * guard;
  placed p;
  p.a.words.assign(static_cast<std::size_t>(hi - lo + 7) / 8, 0xA5A5A5A5A5A5A5A5ull);
  if (h.bytes != 0) std::memcpy(p.a.bytes() - lo, h.data, h.bytes);
  p.h = h.r;
  p.h.base -= lo;
  p.o = o;
  p.o.base = ob - lo;
  return p;
}

template <class E>
lowbit::strided_view<E> view_at(arena& a, const region& r) {
  return lowbit::strided_view<E>(reinterpret_cast<E*>(a.bytes() + r.base), r.shp, r.str);
}

template <class O>
bool same_value(O a, O b) {
  if constexpr (std::is_floating_point_v<O>)
    return same_result(a, b);
  else
    return a == b;
}

/// Runs `call` (the library call with its output at p.o and the host's
/// tensor at p.h) and checks it against the oracle: an output that maps two
/// indices to one element, or shares a byte with the host and is not
/// exactly it (`may_be_in_place`: the host is x), must be rejected with the
/// whole arena untouched; any other must give what the same call into a
/// buffer of its own gave (`ok_sep`; `sep`, the output's elements
/// row-major) and write nothing else.
template <class O, class Call>
void run_placed(const char* what, placed& p, bool may_be_in_place, bool ok_sep, const std::vector<O>& sep,
                Call&& call) {
  const bool self = self_overlaps(p.o);
  if (self && only() == only_t::overlap) return;
  const bool share = shares(p.h, p.o, p.a.size());
  const bool exact = may_be_in_place && share && same_place(p.h, p.o);
  const bool must_throw = self || (share && !exact);
  const std::vector<std::uint64_t> before = p.a.words;
  bool ok = false;
  std::string msg;
  try {
    call();
    ok = true;
  } catch (const lowbit::error& e) {
    msg = e.what();
  }
  auto describe = [&] {
    std::fprintf(stderr, "lowbit-fuzz: %s (%zu bytes): two indices on one element %d, shares a byte %d, "
                         "exactly in place %d; accepted %d, accepted in a buffer of its own %d\n",
                 what, p.a.size(), int(self), int(share), int(exact), int(ok), int(ok_sep));
    print_region("input", p.h);
    print_region("output", p.o);
    if (!msg.empty()) std::fprintf(stderr, "  error: %s\n", msg.c_str());
  };
  if (!ok && p.a.words != before) {
    describe();
    fail("lowbit::error thrown after writing into the shared buffer");
  }
  if (must_throw) {
    if (!ok) {
      ++(self ? stats.self : stats.shared);
      return;
    }
    describe();
    const std::string m = std::string(what) + (self ? ": accepted, though two of its indices are on one element"
                                                     : ": accepted, though it shares memory with an input");
    fail(m.c_str());
  }
  if (ok != ok_sep) {
    describe();
    fail(ok ? "accepted in a shared buffer, rejected in a buffer of its own"
            : "a disjoint or exactly-in-place output was rejected, accepted in a buffer of its own");
  }
  if (!ok) {
    ++stats.both_rejected;
    return;
  }
  ++(exact ? stats.in_place : stats.disjoint);
  std::vector<char> in_out(p.a.size(), 0);
  const std::vector<std::ptrdiff_t> starts = byte_starts(p.o);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    O v;
    std::memcpy(&v, p.a.bytes() + starts[i], sizeof(O));
    if (!same_value(v, sep[i])) {
      describe();
      std::fprintf(stderr, "  element %zu: %a here, %a in a buffer of its own\n", i, double(v), double(sep[i]));
      fail("a disjoint or exactly-in-place output differs from the output into a buffer of its own");
    }
    for (std::size_t k = 0; k < sizeof(O); ++k) in_out[static_cast<std::size_t>(starts[i]) + k] = 1;
  }
  const auto* b = reinterpret_cast<const unsigned char*>(before.data());
  for (std::size_t i = 0; i < p.a.size(); ++i)
    if (!in_out[i] && b[i] != p.a.bytes()[i]) {
      describe();
      std::fprintf(stderr, "  byte %zu written\n", i);
      fail("write outside the output in a shared buffer (into an input?)");
    }
}

inline std::size_t pick_extent(FuzzedDataProvider& in) {
  static constexpr std::size_t ext[] = {1, 1, 2, 3, 0, 1, 4, 5, 2, 7, 16, 33};
  return ext[in.ConsumeIntegralInRange<std::size_t>(0, std::size(ext) - 1)];
}

/// A random shape of rank 0 to 6, at most max_elems elements.
inline lowbit::shape pick_shape(FuzzedDataProvider& in) {
  const std::size_t rank = in.ConsumeIntegralInRange<std::size_t>(0, 6);
  std::vector<std::size_t> d;
  std::size_t n = 1;
  for (std::size_t r = 0; r < rank; ++r) {
    std::size_t e = pick_extent(in);
    if (n * std::max<std::size_t>(e, 1) > max_elems) e = 1;
    n *= std::max<std::size_t>(e, 1);
    d.push_back(e);
  }
  return lowbit::shape(d.begin(), d.end());
}

/// Lays out a tensor of shape `s`. Layouts: 0 row-major, 1 a permuted and
/// padded layout with random signs (distinct elements), 2 arbitrary strides
/// from -5 to 5 (elements may alias: inputs only).
template <class T>
tensor<T> make_layout(FuzzedDataProvider& in, const lowbit::shape& s, bool allow_alias) {
  tensor<T> t;
  t.shp = s;
  const std::size_t R = s.rank();
  t.str.assign(R, 0);
  const int mode = in.ConsumeIntegralInRange<int>(0, allow_alias ? 2 : 1);
  if (mode == 2) {
    for (std::size_t r = 0; r < R; ++r) t.str[r] = in.ConsumeIntegralInRange<std::ptrdiff_t>(-5, 5);
  } else {
    std::vector<std::size_t> order(R);
    for (std::size_t r = 0; r < R; ++r) order[r] = R - 1 - r;  // innermost first
    if (mode == 1)
      for (std::size_t r = 0; r + 1 < R; ++r)
        std::swap(order[r], order[in.ConsumeIntegralInRange<std::size_t>(r, R - 1)]);
    std::ptrdiff_t step = 1;
    for (std::size_t r : order) {
      const std::ptrdiff_t pad = mode == 1 ? in.ConsumeIntegralInRange<std::ptrdiff_t>(0, 2) : 0;
      const std::ptrdiff_t st = step + (mode == 1 && s[r] > 1 ? pad : 0);
      const bool neg = mode == 1 && in.ConsumeBool();
      t.str[r] = neg ? -st : st;
      step = st * static_cast<std::ptrdiff_t>(std::max<std::size_t>(s[r], 1));
    }
    // An extent-1 dimension may have any stride, zero included.
    for (std::size_t r = 0; r < R; ++r)
      if (s[r] == 1 && mode == 1 && in.ConsumeBool()) t.str[r] = in.ConsumeIntegralInRange<std::ptrdiff_t>(-3, 3);
  }
  t.fit();
  return t;
}

template <class T>
tensor<T> make_input(FuzzedDataProvider& in, const lowbit::shape& s, bool bitwidth = false) {
  tensor<T> t = make_layout<T>(in, s, true);
  for (std::ptrdiff_t o : t.offsets())
    t.mem[static_cast<std::size_t>(o)] = bitwidth ? pick_bitwidth<T>(in) : pick_value<T>(in);
  return t;
}

/// A parameter's shape for input shape x: per tensor, per channel (one
/// dimension of x, trailing-aligned), x's own shape, or a random one.
inline lowbit::shape pick_param_shape(FuzzedDataProvider& in, const lowbit::shape& x) {
  switch (in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: return lowbit::shape{};
    case 1: return lowbit::shape{1};
    case 2: {
      if (x.rank() == 0) return lowbit::shape{};
      const std::size_t keep = in.ConsumeIntegralInRange<std::size_t>(0, x.rank() - 1);
      const std::size_t first = in.ConsumeIntegralInRange<std::size_t>(0, keep);
      std::vector<std::size_t> d;
      for (std::size_t r = first; r < x.rank(); ++r) d.push_back(r == keep ? x[r] : 1);
      return lowbit::shape(d.begin(), d.end());
    }
    case 3: return x;
    default: return pick_shape(in);
  }
}

/// A parameter: a plain scalar, or a view of a tensor.
template <class T>
struct param {
  bool is_scalar = true;
  T scalar{};
  tensor<T> t;
};

template <class T>
param<T> make_param(FuzzedDataProvider& in, const lowbit::shape& x, bool scalar, bool bitwidth) {
  param<T> p;
  p.is_scalar = scalar;
  if (scalar)
    p.scalar = bitwidth ? pick_bitwidth<T>(in) : pick_value<T>(in);
  else
    p.t = make_input<T>(in, pick_param_shape(in, x), bitwidth);
  return p;
}

/// Calls f with every parameter as a scalar (all scalars) or as a view.
template <class T, class F, class... P>
void with_params(bool scalars, F&& f, P&... p) {
  if (scalars)
    f(p.scalar...);
  else
    f(p.t.cview()...);
}

/// The attribute names and values fuzz_attributes tries by default (those
/// of the element-wise operators).
inline constexpr const char* element_attribute_names[] = {"signed", "narrow", "rounding_mode", "has_inf",
                                                          "has_infinity", "has_nan", "has_subnormal", "saturation",
                                                          "", "Signed", "seed", "random_bits", "index_offset"};
inline constexpr const char* element_attribute_values[] = {"0", "1", "true", "false", "ROUND", "round", "Half_Even",
                                                           "CEIL", "floor", "UP", "down", "HALF_UP", "half_down",
                                                           "2", "", "-1", "stochastic", "Round_To_Odd", "dpu",
                                                           "ties_away", "23", "24", "18446744073709551615",
                                                           "18446744073709551616"};

/// Random attribute names and values for lowbit::set_attribute: a name of
/// `names` or a garbage string; a value of `values`, an integer, or garbage.
inline void fuzz_attributes(FuzzedDataProvider& in, auto& op,
                            std::span<const char* const> names = element_attribute_names,
                            std::span<const char* const> values = element_attribute_values) {
  const int n = in.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < n; ++i) {
    std::string name, value;
    const std::uint8_t k = in.ConsumeIntegral<std::uint8_t>();
    name = k < 240 ? names[k % names.size()] : in.ConsumeRandomLengthString(16);
    const std::uint8_t v = in.ConsumeIntegral<std::uint8_t>();
    auto before = op;
    try {
      if (v < 200)
        lowbit::set_attribute(op, name, values[v % values.size()]);
      else if (v < 230)
        lowbit::set_attribute(op, name, static_cast<int>(in.ConsumeIntegralInRange<int>(-2, 3)));
      else
        lowbit::set_attribute(op, name, in.ConsumeRandomLengthString(16));
    } catch (const lowbit::error&) {
      // op must be unchanged: compare the attribute fields we know.
      if constexpr (requires { op.rounding; })
        if (before.rounding != op.rounding) fail("set_attribute changed the operator and threw");
      if constexpr (requires { op.seed; })
        if (before.seed != op.seed || before.random_bits != op.random_bits || before.index_offset != op.index_offset)
          fail("set_attribute changed the operator and threw");
    }
  }
  // The stochastic mode's parameters: any seed and offset, bit counts in
  // and out of range (an out-of-range count must throw with nothing written).
  if constexpr (requires { op.seed; }) {
    if (in.ConsumeBool()) {
      op.seed = in.ConsumeIntegral<std::uint64_t>();
      op.random_bits = in.ConsumeIntegralInRange<int>(-1, 34);
      op.index_offset = in.ConsumeBool() ? in.ConsumeIntegral<std::uint64_t>() : 0;
    }
  }
}

inline lowbit::rounding_mode pick_rounding(FuzzedDataProvider& in) {
  const std::uint8_t k = in.ConsumeIntegral<std::uint8_t>();
  if (k < 250) return static_cast<lowbit::rounding_mode>(k % 10);  // QONNX's 7 and lowbit's 3
  return static_cast<lowbit::rounding_mode>(static_cast<int>(k) - 242);  // 8..13: some invalid
}

inline void pick_exec(FuzzedDataProvider& in, lowbit::execution& e) {
  if (in.ConsumeIntegralInRange<int>(0, 3) != 0) return;
  e.threads = 2;
  e.min_elements_per_thread = in.ConsumeIntegralInRange<std::size_t>(1, 64);
  if (in.ConsumeBool()) e.stream_min_elements = in.ConsumeIntegralInRange<std::size_t>(0, 64);
}

template <class T>
using cview = lowbit::strided_view<const T>;

/// Views of the tensor parameters (none when they are scalars).
template <class T>
std::vector<cview<T>> views_of(const std::vector<const tensor<T>*>& ps) {
  std::vector<cview<T>> v;
  for (const tensor<T>* p : ps) v.push_back(p->cview());
  return v;
}

/// Parameter i of a call: the scalar v itself, or view i of P.
template <class P, class V>
decltype(auto) pv(const P& views, std::size_t i, const V& v) {
  if constexpr (std::is_arithmetic_v<V>) {
    (void)views, (void)i;
    return (v);
  } else {
    return (views[i]);
  }
}

/// Runs call(op, x view, parameter views, y) into a fresh output and checks
/// the invariants against the same call with the scalar kernels on one
/// thread; then, now and then, with y placed in the buffer of x or of a
/// tensor parameter (`ps`), against the oracle (run_placed).
template <class T, class Op, class Call>
void check_call(FuzzedDataProvider& in, const Op& op, const lowbit::shape& want, bool want_ok, const tensor<T>& x,
                const std::vector<const tensor<T>*>& ps, Call&& call) {
  const cview<T> xv = x.cview();
  const std::vector<cview<T>> P = views_of(ps);
  // The output: the right shape (when there is one) or a random one.
  lowbit::shape ys = want;
  bool mutated = !want_ok || in.ConsumeIntegralInRange<int>(0, 15) == 0;
  if (mutated) ys = pick_shape(in);
  tensor<T> y = make_layout<T>(in, ys, false);
  // A zero stride along an extent above 1 (two indices on one element).
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0)
    for (std::size_t r = 0; r < ys.rank(); ++r)
      if (ys[r] > 1) {
        y.str[r] = 0;
        mutated = true;
        break;
      }
  // Hostile outputs, one byte (0, as in an exhausted input: none): the
  // geometry, g & 3 (1: strides from -3 to 3, which often map two indices
  // to one element; 2: the host's strides, x's own geometry for in place),
  // and the place, (g >> 2) & 3 (1 or 3: in x's buffer; 2: in a tensor
  // parameter's, or x's when they are scalars).
  const std::uint8_t g = in.ConsumeIntegral<std::uint8_t>();
  const int geometry = g & 3, where = (g >> 2) & 3;
  if (only() == only_t::overlap && (geometry == 1 || where == 0)) return;
  std::size_t host_k = 0;  // 0: x; k > 0: parameter k - 1
  if (where == 2 && !ps.empty()) host_k = 1 + in.ConsumeIntegralInRange<std::size_t>(0, ps.size() - 1);
  const tensor<T>& host = host_k == 0 ? x : *ps[host_k - 1];
  if (geometry == 1) {
    for (std::ptrdiff_t& s : y.str) s = in.ConsumeIntegralInRange<std::ptrdiff_t>(-3, 3);
    y.fit();
  } else if (geometry == 2) {
    const std::size_t R = ys.rank(), HR = host.shp.rank();
    for (std::size_t r = 0; r < R; ++r)
      if (r + HR >= R && host.shp[r + HR - R] == ys[r]) y.str[r] = host.str[r + HR - R];
    y.fit();
  }
  const bool self = self_overlaps(region_of(y));
  if (self && only() == only_t::overlap) return;

  const T sentinel = std::bit_cast<T>(std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>(
      std::is_same_v<T, float> ? 0x7fa5a5a5u : 0x7ff5a5a5a5a5a5a5ull));
  std::fill(y.mem.begin(), y.mem.end(), sentinel);
  const std::vector<T> before = y.mem;
  bool ok = false;
  try {
    call(op, xv, P, y.view());
    ok = true;
  } catch (const lowbit::error&) {
    if (std::memcmp(before.data(), y.mem.data(), before.size() * sizeof(T)) != 0)
      fail("output written before lowbit::error was thrown");
    stats.self += self;
  }
  if (ok) {
    if (self) {
      print_region("y", region_of(y));
      fail("a y with two indices on one element was accepted");
    }
    if (mutated && !(ys == want)) fail("a y of the wrong shape was accepted");
    // Nothing outside the view written.
    std::vector<char> in_view(y.mem.size(), 0);
    for (std::ptrdiff_t o : y.offsets()) in_view[static_cast<std::size_t>(o)] = 1;
    for (std::size_t i = 0; i < y.mem.size(); ++i)
      if (!in_view[i] && std::memcmp(&y.mem[i], &before[i], sizeof(T)) != 0) fail("write outside the output view");
    // The scalar path on one thread gives the same bits.
    Op ref = op;
    const lowbit::detail::simd_scope scalar(false);  // the scalar kernels, to the end of this block
    ref.exec = lowbit::execution{};
    tensor<T> y2 = y;
    y2.mem = before;
    try {
      call(ref, xv, P, y2.view());
    } catch (const lowbit::error&) {
      fail("the scalar kernels threw where the SIMD body did not");
    }
    for (std::size_t i = 0; i < y.mem.size(); ++i)
      if (!same_result(y.mem[i], y2.mem[i])) {
        std::fprintf(stderr, "element %zu of %zu: SIMD/threaded %a, scalar %a\n", i, y.mem.size(), double(y.mem[i]),
                     double(y2.mem[i]));
        fail("SIMD (or threaded) result differs from the scalar one");
      }
  }
  if (where == 0 || only() == only_t::self) return;
  // The same y in the host's buffer: against the result above.
  std::vector<T> sep;
  for (std::ptrdiff_t o : y.offsets()) sep.push_back(y.mem[static_cast<std::size_t>(o)]);
  placed p = place(in, host_of(host), region{0, sizeof(T), ys, y.str});
  const std::string what =
      host_k == 0 ? "y in x's buffer" : "y in parameter " + std::to_string(host_k - 1) + "'s buffer";
  run_placed<T>(what.c_str(), p, host_k == 0, ok, sep, [&] {
    cview<T> xv2 = xv;
    std::vector<cview<T>> P2 = P;
    (host_k == 0 ? xv2 : P2[host_k - 1]) = view_at<const T>(p.a, p.h);
    call(op, xv2, P2, view_at<T>(p.a, p.o));
  });
}

/// The codes API with hostile outputs, after quantize_codes into a buffer
/// of its own (`ok`; `codes`, of shape cs). One byte (0, as in an exhausted
/// input: none) places the codes over x (1) or a tensor parameter (2), or
/// returns 3: check_dequantize_overlap places dequantize's y later (-1:
/// LOWBIT_FUZZ_ONLY skips the rest of the input).
/// quantize(x view, parameter views, codes view) is the call.
template <class T, class C, class Quantize>
int check_codes_overlap(FuzzedDataProvider& in, const tensor<T>& x, const std::vector<const tensor<T>*>& ps,
                        const lowbit::shape& cs, bool ok, const std::vector<C>& codes, Quantize&& quantize) {
  const int choice = in.ConsumeIntegral<std::uint8_t>() % 4;
  if (choice != 0 && (only() == only_t::self || only() == only_t::overlap)) return -1;  // skip the rest
  if (choice == 0 || choice == 3) return choice;
  std::size_t k = 0;
  if (choice == 2 && !ps.empty()) k = 1 + in.ConsumeIntegralInRange<std::size_t>(0, ps.size() - 1);
  placed p = place(in, host_of(k == 0 ? x : *ps[k - 1]), region{0, sizeof(C), cs, row_major(cs)});
  const std::string what = k == 0 ? "quantize_codes' codes in x's buffer"
                                  : "quantize_codes' codes in parameter " + std::to_string(k - 1) + "'s buffer";
  run_placed<C>(what.c_str(), p, false, ok, codes, [&] {
    cview<T> xv = x.cview();
    std::vector<cview<T>> P = views_of(ps);
    (k == 0 ? xv : P[k - 1]) = view_at<const T>(p.a, p.h);
    quantize(xv, P, view_at<C>(p.a, p.o));
  });
  return choice;
}

/// dequantize's y (shape ys; `y`, its result in a buffer of its own) placed
/// over the codes (shape ys, contiguous) or a tensor parameter.
/// dequantize(codes view, parameter views, y view) is the call.
template <class T, class C, class Dequantize>
void check_dequantize_overlap(FuzzedDataProvider& in, const std::vector<const tensor<T>*>& ps,
                              const lowbit::shape& ys, const std::vector<C>& codes, const std::vector<T>& y,
                              Dequantize&& dequantize) {
  std::size_t k = 0;
  if (!ps.empty() && in.ConsumeBool()) k = 1 + in.ConsumeIntegralInRange<std::size_t>(0, ps.size() - 1);
  const region cr{0, sizeof(C), ys, row_major(ys)};
  const host h = k == 0 ? host{codes.data(), codes.size() * sizeof(C), cr} : host_of(*ps[k - 1]);
  placed p = place(in, h, region{0, sizeof(T), ys, row_major(ys)});
  const std::string what = k == 0 ? "dequantize's y in the codes' buffer"
                                  : "dequantize's y in parameter " + std::to_string(k - 1) + "'s buffer";
  run_placed<T>(what.c_str(), p, false, true, y, [&] {
    std::vector<cview<T>> P = views_of(ps);
    lowbit::strided_view<const C> cv(codes.data(), ys, cr.str);
    if (k == 0)
      cv = view_at<const C>(p.a, p.h);
    else
      P[k - 1] = view_at<const T>(p.a, p.h);
    dequantize(cv, P, view_at<T>(p.a, p.o));
  });
}

}  // namespace lowbit_fuzz

#endif  // LOWBIT_TESTS_FUZZ_SUPPORT_HPP
