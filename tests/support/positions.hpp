// SPDX-License-Identifier: Apache-2.0
// For the index-aware test kernels (test_elementwise.cpp, test_block.cpp):
// the output positions of a call's lanes as values of the lane type.
#ifndef LOWBIT_TESTS_POSITIONS_HPP
#define LOWBIT_TESTS_POSITIONS_HPP

#include <lowbit/detail/elementwise.hpp>

#include <cstddef>

namespace lowbit_test {

/// Lane j holds `ix.first + j * ix.step` (a scalar V: ix.first).
template <class V>
V positions(lowbit::detail::element_index ix) noexcept {
  using T = lowbit::detail::lane_t<V>;
  if constexpr (lowbit::detail::is_batch_v<V>) {
    alignas(64) T lanes[V::size];
    for (std::size_t j = 0; j < V::size; ++j)
      lanes[j] = static_cast<T>(ix.first + j * static_cast<std::size_t>(ix.step));
    return V::load_aligned(lanes);
  } else {
    return static_cast<T>(ix.first);
  }
}

}  // namespace lowbit_test

#endif  // LOWBIT_TESTS_POSITIONS_HPP
