// SPDX-License-Identifier: Apache-2.0
// Compile-only: the bit-packing utility stands alone. packing.hpp includes
// no operator, so a program that only packs codes does not compile the
// quantizers (the include guards of every operator header are checked).
#include <lowbit/packing.hpp>

#if defined(LOWBIT_INT_QUANT_HPP) || defined(LOWBIT_TRUNC_HPP) || defined(LOWBIT_FLOAT_QUANT_HPP) || \
    defined(LOWBIT_BIPOLAR_QUANT_HPP) || defined(LOWBIT_MINIFLOAT_HPP) || defined(LOWBIT_CODES_HPP) ||   \
    defined(LOWBIT_DETAIL_ELEMENTWISE_HPP)
#error "lowbit/packing.hpp includes an operator or the engine"
#endif

#include <array>
#include <cstdint>

namespace lowbit_compile_test {
inline void pack_only() {
  const std::array<std::int8_t, 4> codes{-8, -1, 0, 7};
  std::array<std::uint8_t, 2> bytes{};
  lowbit::pack(lowbit::packings::int4, codes, bytes);
}
}  // namespace lowbit_compile_test
