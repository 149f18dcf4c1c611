// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/protocol.hpp
 * The operator protocol: what every element-wise operator functor declares,
 * checked by a concept, so that the generic parts (validation messages,
 * runtime dispatch, the codes stages, the tests) read an operator's inputs
 * and kernel operands by name, never by a literal position.
 *
 * An operator declares
 * - `name`: its name in messages ("lowbit::int_quant");
 * - `inputs`: its named tensor inputs after x, in call order
 *   (`detail::names<"scale", "zeropt", "bitwidth">`);
 * - `operands`: the kernel's parameters after x, in order, as the engine
 *   hands them to the kernel (raw inputs, or values derived from them, such
 *   as IntQuant's clamp limits);
 * - `attributes()`: its attributes by QONNX name (lowbit::set_attribute);
 * - `accepts_double`: whether x may be a double tensor (else float only).
 * `inputs::index<"scale">` is the position of an input in a call, and
 * `operands::index<"scale">` the kernel parameter's index in a piece
 * (piece::s, piece::vary): a misspelt or missing name does not compile.
 *
 * The rest of the protocol is private to the operator and its driver
 * (detail/driver.hpp, which lists the hooks): its checks, its `state` (the
 * inputs turned into kernel operands, and the kernel run on a piece) and,
 * for integer codes, `check_codes`. `complete_operator` checks them.
 */
#ifndef LOWBIT_DETAIL_PROTOCOL_HPP
#define LOWBIT_DETAIL_PROTOCOL_HPP

#include <array>
#include <concepts>
#include <cstddef>
#include <string_view>

#include "../config.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// A string literal usable as a template argument: `names<"scale">`.
template <std::size_t N>
struct name_literal {
  char text[N]{};
  constexpr name_literal(const char (&s)[N]) noexcept {
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
  constexpr std::string_view view() const noexcept { return {text, N - 1}; }
};

/// A list of names, in order, with compile-time lookup.
template <name_literal... Names>
struct names {
  static constexpr std::size_t size = sizeof...(Names);
  /// The names, in order (for messages).
  static constexpr std::array<std::string_view, size> list{Names.view()...};
  /// The same as C strings (they are the literals themselves, NUL-terminated).
  static constexpr std::array<const char*, size> c_str{Names.text...};

  template <name_literal Name>
  static constexpr std::size_t find() noexcept {
    for (std::size_t i = 0; i < size; ++i)
      if (list[i] == Name.view()) return i;
    return size;
  }
  /// The position of `Name`; a name not in the list does not compile.
  template <name_literal Name>
    requires(find<Name>() < size)
  static constexpr std::size_t index = find<Name>();
};

template <class L>
inline constexpr bool is_names_v = false;
template <name_literal... N>
inline constexpr bool is_names_v<names<N...>> = true;

/// The names of every operand a kernel of `Op` receives after x.
template <class Op>
using operands_of = typename Op::operands;

/**
 * The operator protocol. Every lowbit operator functor (int_quant, trunc,
 * trunc_v1, bipolar_quant, float_quant) satisfies it; a new element-wise
 * operator must too (tests/test_protocol.cpp lists them).
 */
template <class Op>
concept element_operator = requires {
  { Op::name } -> std::convertible_to<const char*>;
  requires is_names_v<typename Op::inputs>;
  requires is_names_v<typename Op::operands>;
  { Op::accepts_double } -> std::convertible_to<bool>;
  Op::attributes();
};

/// How many tensors a call of `Op` reads: x and its inputs.
template <element_operator Op>
inline constexpr std::size_t input_count = 1 + Op::inputs::size;

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_PROTOCOL_HPP
