// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/stochastic.hpp
 * What a kernel needs for stochastic rounding: the operator's seed and
 * random-bit count, and the lanes' thresholds from each element's flat
 * output index (detail/philox.hpp draws them). The mode itself is defined
 * in docs/semantics.md ("Stochastic rounding").
 */
#ifndef LOWBIT_DETAIL_STOCHASTIC_HPP
#define LOWBIT_DETAIL_STOCHASTIC_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../config.hpp"
#include "../rounding.hpp"
#include "elementwise.hpp"
#include "philox.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// A kernel templated on mode M wants each element's index (index_aware)
/// when M is stochastic, or the run-time mode (which may be stochastic).
template <rounding_mode M>
inline constexpr bool needs_index = M == rounding_mode::stochastic || M == run_time_mode;

/// The thresholds of a block of 512 consecutive flat indices (from a
/// multiple of 512: two, four or eight whole groups of detail/philox.hpp),
/// kept by a piece's stochastic kernel so that a float batch takes its
/// thresholds with one load, the Philox rounds having run once per 16
/// counters over the block (stochastic_thresholds_group) instead of once
/// per batch. One per piece and thread (on the stack of state::run).
struct stochastic_group_cache {
  static constexpr std::size_t capacity = 512;
  alignas(64) float t[capacity];
  /// The flat index of t[0].
  std::uint64_t first = 0;
  /// A batch of L lanes at flat index i is in the block iff i - first (mod
  /// 2^64) < hits: capacity - L + 1 once filled, 0 (nothing) before.
  std::uint64_t hits = 0;
};

/// The thresholds of the L-lane float batch V at flat index i (step 1) on a
/// cache miss: the block of i filled when the batch lies inside one, else
/// (a batch across two blocks) drawn directly. Out of line, so that the
/// Philox rounds do not crowd the registers of the kernel's loop.
template <class V>
LOWBIT_NOINLINE V stochastic_cache_miss(stochastic_group_cache& c, std::uint64_t seed, int bits,
                                        std::uint64_t i) noexcept {
  constexpr std::uint64_t cap = stochastic_group_cache::capacity;
  const std::uint64_t first = i & ~(cap - 1), e = i - first;
  if (e + V::size > cap) return stochastic_threshold<V>(seed, bits, i, 1);
  const std::uint64_t G = stochastic_group_size(bits);
  stochastic_thresholds_group<typename V::arch_type>(seed, bits, first / G, c.t, static_cast<int>(cap / G));
  c.first = first;
  c.hits = cap - V::size + 1;
  return V::load_unaligned(c.t + e);
}

/// The thresholds of the draw mapping's groups for a row loop
/// (stochastic_source::for_batches), kept across its rows. With AVX-512:
/// the current group's in half `cur` of t, and the next one's being drawn
/// into the other half. Elsewhere: `count` consecutive groups from t[0]
/// (up to 512 indices, several groups per Philox call for more chains).
struct stochastic_group_buffer {
  alignas(64) float t[512];
  /// The first group held; `count` groups (none before the first fill).
  std::uint64_t group = 0, count = 0;
  int cur = 0;
#if XSIMD_WITH_AVX512F
  /// The round keys of the seed (set on first use: keys_set).
  philox_group_stepper::keys keys;
  bool keys_set = false;
#endif
};

/// The random source of a stochastic kernel: the operator's `seed`,
/// `random_bits` and `index_offset`, copied into the kernel once per piece.
struct stochastic_source {
  std::uint64_t seed = 0;
  int bits = 16;
  /// The flat index of y's element 0 in the whole tensor (the operators'
  /// `index_offset`): a tensor quantized in several calls gets the draws
  /// of one call. Indices wrap modulo 2^64.
  std::uint64_t offset = 0;
  /// The group cache of the piece (with_group_cache), or none.
  stochastic_group_cache* cache = nullptr;

  using group_buffer = stochastic_group_buffer;

  /**
   * Calls f(j, u) for the float batches B of a run of n consecutive
   * elements (n a multiple of B::size) whose first is element `first` of
   * y (flat index offset + first, a multiple of B::size): j = 0, L, 2L, ...
   * the batch's position in the run, u its lanes' thresholds, the same as
   * lanes<B>() gives. Group by group of the draw mapping, each group's
   * thresholds drawn once into `gb` (one Philox per 16 counters) and read
   * with one aligned load per batch. With AVX-512, when the run goes on
   * into the next group, that group's Philox rounds run between this
   * group's batches (philox_group_stepper), where the CPU overlaps them
   * with the batches' own work.
   */
  template <class B, class F>
  LOWBIT_ALWAYS_INLINE void for_batches(group_buffer& gb, std::uint64_t first, std::size_t n, F&& f) const noexcept {
    using A = typename B::arch_type;
    constexpr std::size_t L = B::size;
    const int glog = stochastic_group_log2(bits);
    const std::uint64_t G = std::uint64_t(1) << glog;
    // The last group (indices wrap at 2^64: group 0 comes after it).
    const std::uint64_t last = ~std::uint64_t(0) >> glog;
    std::uint64_t i = offset + first;
    std::size_t j = 0;
    while (j < n) {
      const std::uint64_t g = i >> glog, e = i & (G - 1u);
      if (g - gb.group >= gb.count) [[unlikely]] {
        // The groups the rest of the run needs, up to 512 indices, never
        // past the last group (one with the stepper, which draws the next).
        // A group held is looked up by its own number only, so a fill
        // never serves an index of another group.
        std::uint64_t want = 1;
        if constexpr (!has_philox_group_stepper<A>)
          want = std::min({std::uint64_t(512) >> glog, (e + (n - j) + G - 1u) >> glog, last - g + 1u});
        stochastic_thresholds_group<A>(seed, bits, g, gb.t + 256 * gb.cur, static_cast<int>(want));
        gb.group = g;
        gb.count = want;
      }
      // Both multiples of L: n - j by the precondition, G - e because i is.
      const std::size_t m = static_cast<std::size_t>(std::min<std::uint64_t>(n - j, G - e));
      const float* const t = gb.t + 256 * gb.cur + (g - gb.group) * G + e;
#if XSIMD_WITH_AVX512F
      if constexpr (has_philox_group_stepper<A>) {
        if (e == 0 && m == G && m < n - j) {
          // A whole group, and the run goes on into group g + 1: its ten
          // rounds run between this group's D = G / 16 batches.
          if (!gb.keys_set) {
            philox_group_stepper::set_keys(gb.keys, seed);
            gb.keys_set = true;
          }
          const std::uint64_t next = (g + 1u) & last;
          philox_group_stepper ps;
          ps.start(next);
          auto batch = [&](int b) LOWBIT_ALWAYS_INLINE_LAMBDA {
            f(j + static_cast<std::size_t>(b) * L, B::load_aligned(t + static_cast<std::size_t>(b) * L));
          };
          ps.interleave(gb.keys, static_cast<int>(m / L), batch);  // G / L batches: 4, 8 or 16
          xsimd::batch<std::uint32_t, A> wd[4][1];
          ps.words(wd);
          gb.cur ^= 1;
          stochastic_emit_group<A>(wd, bits, gb.t + 256 * gb.cur);
          gb.group = next;
          gb.count = 1;
          j += m;
          i += m;
          continue;
        }
      }
#endif
      for (std::size_t b = 0; b < m; b += L) f(j + b, B::load_aligned(t + b));
      j += m;
      i += m;
    }
  }

  /// The thresholds of the lanes at flat indices i, i + step, ...
  template <class V>
  LOWBIT_ALWAYS_INLINE V lanes(element_index idx) const noexcept {
    const std::uint64_t i = offset + idx.first;
    if constexpr (is_batch_v<V> && std::is_same_v<lane_t<V>, float>) {
      // Consecutive lanes: from the block cache (one load on a hit).
      if (cache != nullptr && idx.step == 1) [[likely]] {
        const std::uint64_t e = i - cache->first;
        if (e < cache->hits) [[likely]]
          return V::load_unaligned(cache->t + e);
        return stochastic_cache_miss<V>(*cache, seed, bits, i);
      }
    }
    return stochastic_threshold<V>(seed, bits, i, idx.step);
  }

  /// The thresholds (d + 1) 2^-bits of the lanes at `idx` (lane j: flat
  /// index idx.first + j * idx.step) for a kernel of mode M (run-time
  /// mode `mode`); V(0) when the mode is not stochastic (unused then).
  template <rounding_mode M, class V>
  LOWBIT_ALWAYS_INLINE V threshold(rounding_mode mode, element_index idx) const noexcept {
    if constexpr (M == rounding_mode::stochastic) {
      return (void)mode, lanes<V>(idx);
    } else if constexpr (M == run_time_mode) {
      if (mode == rounding_mode::stochastic) return lanes<V>(idx);
      return V(0);
    } else {
      return (void)mode, (void)idx, V(0);
    }
  }
};

/// Calls f(source) with `rnd` given a group cache of its own (on this
/// stack frame) when `mode` is stochastic, else with `rnd` as it is: what a
/// state's run() wraps its stochastic kernels in, once per piece.
template <class F>
LOWBIT_ALWAYS_INLINE decltype(auto) with_group_cache(const stochastic_source& rnd, rounding_mode mode, F&& f) {
  if (mode != rounding_mode::stochastic) [[likely]]
    return f(rnd);
  stochastic_group_cache cache;
  stochastic_source r = rnd;
  r.cache = &cache;
  return f(r);
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_STOCHASTIC_HPP
