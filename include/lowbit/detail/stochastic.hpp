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

#include <cstdint>

#include "../config.hpp"
#include "../rounding.hpp"
#include "elementwise.hpp"
#include "philox.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// A kernel templated on mode M wants each element's index (index_aware)
/// when M is stochastic, or the run-time mode (which may be stochastic).
template <rounding_mode M>
inline constexpr bool needs_index = M == rounding_mode::stochastic || M == run_time_mode;

/// The random source of a stochastic kernel: the operator's `seed`,
/// `random_bits` and `index_offset`, copied into the kernel once per piece.
struct stochastic_source {
  std::uint64_t seed = 0;
  int bits = 16;
  /// The flat index of y's element 0 in the whole tensor (the operators'
  /// `index_offset`): a tensor quantized in several calls gets the draws
  /// of one call. Indices wrap modulo 2^64.
  std::uint64_t offset = 0;

  /// The thresholds (d + 1) 2^-bits of the lanes at `idx` (lane j: flat
  /// index idx.first + j * idx.step) for a kernel of mode M (run-time
  /// mode `mode`); V(0) when the mode is not stochastic (unused then).
  template <rounding_mode M, class V>
  LOWBIT_ALWAYS_INLINE V threshold(rounding_mode mode, element_index idx) const noexcept {
    if constexpr (M == rounding_mode::stochastic) {
      return (void)mode, stochastic_threshold<V>(seed, bits, offset + idx.first, idx.step);
    } else if constexpr (M == run_time_mode) {
      if (mode == rounding_mode::stochastic) return stochastic_threshold<V>(seed, bits, offset + idx.first, idx.step);
      return V(0);
    } else {
      return (void)mode, (void)idx, V(0);
    }
  }
};

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_STOCHASTIC_HPP
