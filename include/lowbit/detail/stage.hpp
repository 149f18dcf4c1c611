// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/stage.hpp
 * Which part of an operator a kernel computes: the whole fake-quantization,
 * only the integer (or minifloat) code, or only the dequantization of a code.
 * One kernel serves all three, so that `dequantize(quantize_codes(x))` runs
 * the very operations of the fake-quantized output (codes.hpp).
 */
#ifndef LOWBIT_DETAIL_STAGE_HPP
#define LOWBIT_DETAIL_STAGE_HPP

#include "../config.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// fake: x -> Y (the operator); code: x -> q, the value on the grid before
/// dequantization; dequant: q (passed as x) -> Y.
enum class stage { fake, code, dequant };

/// Befriended by the operators: lets the driver (detail/driver.hpp) reach
/// their protocol hooks.
struct protocol_access;

LOWBIT_END_DETAIL_NAMESPACE

#endif  // LOWBIT_DETAIL_STAGE_HPP
