// SPDX-License-Identifier: Apache-2.0
/**
 * @file error.hpp
 * The one exception type that lowbit throws for bad input.
 */
#ifndef LOWBIT_ERROR_HPP
#define LOWBIT_ERROR_HPP

#include <stdexcept>
#include <string>

#include "config.hpp"

LOWBIT_BEGIN_NAMESPACE

/**
 * Thrown for every kind of bad input: shapes that do not broadcast, an
 * output of the wrong shape, an invalid bit width, an unknown rounding mode,
 * and (in the `exact` semantics) parameters the operator definition rejects.
 *
 * The message names the parameter, the offending value and what was
 * expected. When an operator throws, its output has not been written.
 *
 * **Example**:
 * ```
 * try { op(x, 0.5f, 0.0f, 9.5f, y); }
 * catch (const lowbit::error& e) { std::puts(e.what()); }
 * // lowbit::int_quant: bitwidth[0] = 9.5 is invalid; expected an integer from 1 to 32
 * ```
 */
class error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_ERROR_HPP
