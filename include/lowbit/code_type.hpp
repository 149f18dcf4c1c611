// SPDX-License-Identifier: Apache-2.0
/**
 * @file code_type.hpp
 * The element types integer codes can have (lowbit::code_type), shared by
 * codes.hpp and packing.hpp.
 */
#ifndef LOWBIT_CODE_TYPE_HPP
#define LOWBIT_CODE_TYPE_HPP

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "config.hpp"

LOWBIT_BEGIN_NAMESPACE

/**
 * The element types codes can have: int8, uint8, int16, uint16 and int32.
 * A signed range needs a signed type; an unsigned type holds BipolarQuant
 * (and signed 1-bit IntQuant) codes as bits: 0 for -1, 1 for +1.
 */
template <class C>
concept code_type = std::same_as<C, std::int8_t> || std::same_as<C, std::uint8_t> ||
                    std::same_as<C, std::int16_t> || std::same_as<C, std::uint16_t> ||
                    std::same_as<C, std::int32_t>;

namespace detail {

template <class C>
constexpr const char* code_type_name() noexcept {
  if constexpr (std::is_same_v<C, std::int8_t>) return "int8";
  else if constexpr (std::is_same_v<C, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<C, std::int16_t>) return "int16";
  else if constexpr (std::is_same_v<C, std::uint16_t>) return "uint16";
  else return "int32";
}

}  // namespace detail

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_CODE_TYPE_HPP
