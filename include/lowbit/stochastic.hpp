// SPDX-License-Identifier: Apache-2.0
/**
 * @file stochastic.hpp
 * Stochastic rounding of one value, as the operators do it with
 * rounding_mode::stochastic: the draw of the element at a flat index, and
 * the rounding. The definition is in docs/semantics.md ("Stochastic
 * rounding").
 */
#ifndef LOWBIT_STOCHASTIC_HPP
#define LOWBIT_STOCHASTIC_HPP

#include <cstdint>
#include <type_traits>

#include "config.hpp"
#include "detail/philox.hpp"
#include "error.hpp"
#include "rounding.hpp"

LOWBIT_BEGIN_NAMESPACE

/**
 * The `random_bits`-bit draw (0 .. 2^random_bits - 1) of the element at flat
 * output index `index` under `seed`: Philox4x32-10, the mapping of
 * docs/semantics.md. The operators draw exactly this for the element of y
 * at `index - index_offset`.
 *
 * @throws lowbit::error for random_bits outside 1..32.
 */
inline std::uint32_t stochastic_draw(std::uint64_t seed, int random_bits, std::uint64_t index) {
  if (random_bits < 1 || random_bits > 32)
    detail::throw_error("lowbit::stochastic_draw: random_bits = ", detail::dec(random_bits),
                        " is out of range; expected an integer from 1 to 32");
  return detail::stochastic_draw(seed, random_bits, index);
}

/**
 * Rounds `y` to an integral value stochastically, as the operators do for
 * the element at flat index `index`: away from zero when the fraction of
 * |y| is at least (d + 1) 2^-random_bits, d = stochastic_draw(seed,
 * random_bits, index); so with probability floor(2^r f) / 2^r. Exact; the
 * sign of y is kept, infinities and NaN pass.
 *
 * @throws lowbit::error for random_bits outside 1..23 (float) or 1..32 (double).
 *
 * **Example**:
 * ```
 * float a = lowbit::round_stochastic(2.25f, 42, 16, 0);  // 2 or 3: 3 with probability 1/4
 * ```
 */
template <class T>
T round_stochastic(T y, std::uint64_t seed, int random_bits, std::uint64_t index) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "lowbit::round_stochastic takes float or double");
  detail::check_random_bits<T>(random_bits, rounding_mode::stochastic, "lowbit::round_stochastic");
  return detail::round_stochastic(y, detail::stochastic_threshold<T>(seed, random_bits, index, 1));
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_STOCHASTIC_HPP
