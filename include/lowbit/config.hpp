// lowbit: bit-exact QONNX quantizers for float tensors.
// SPDX-License-Identifier: Apache-2.0
/**
 * @file config.hpp
 * Version macros, limits and the semantics selector shared by every operator.
 */
#ifndef LOWBIT_CONFIG_HPP
#define LOWBIT_CONFIG_HPP

#include <cstddef>

/// Library version, `MAJOR * 10000 + MINOR * 100 + PATCH`.
#define LOWBIT_VERSION 100
#define LOWBIT_VERSION_MAJOR 0
#define LOWBIT_VERSION_MINOR 1
#define LOWBIT_VERSION_PATCH 0

/// Highest tensor rank the library handles (inputs, parameters and output).
#ifndef LOWBIT_MAX_RANK
#define LOWBIT_MAX_RANK 8
#endif

/**
 * \def LOWBIT_BEGIN_NAMESPACE
 * Opens `namespace lowbit`; `LOWBIT_END_NAMESPACE` closes it, and
 * `LOWBIT_BEGIN_DETAIL_NAMESPACE` / `LOWBIT_END_DETAIL_NAMESPACE` do the
 * same for `lowbit::detail`. Every lowbit header uses them.
 *
 * When `LOWBIT_ARCH_NAMESPACE` is defined (only in the per-architecture
 * translation units of runtime dispatch, `lowbit_add_dispatch`), everything
 * goes into the inline namespace `lowbit::LOWBIT_ARCH_NAMESPACE`, so that
 * the inline functions compiled there with `-mavx2` and the like have
 * mangled names of their own and can never stand in for the ones the rest
 * of the program compiled for baseline x86-64 (see docs/dispatch.md).
 * Otherwise it is plain `namespace lowbit`, with the usual mangled names.
 */
#ifdef LOWBIT_ARCH_NAMESPACE
#define LOWBIT_BEGIN_NAMESPACE \
  namespace lowbit {           \
  inline namespace LOWBIT_ARCH_NAMESPACE {
#define LOWBIT_END_NAMESPACE \
  }                          \
  }
#else
#define LOWBIT_BEGIN_NAMESPACE namespace lowbit {
#define LOWBIT_END_NAMESPACE }
#endif
#define LOWBIT_BEGIN_DETAIL_NAMESPACE LOWBIT_BEGIN_NAMESPACE namespace detail {
#define LOWBIT_END_DETAIL_NAMESPACE \
  }                                 \
  LOWBIT_END_NAMESPACE

#if defined(__GNUC__) || defined(__clang__)
#define LOWBIT_ALWAYS_INLINE inline __attribute__((always_inline))
/// After a lambda's parameter list: inline the lambda into its callers.
#define LOWBIT_ALWAYS_INLINE_LAMBDA __attribute__((always_inline))
/// A rarely taken path kept out of the hot loop (fewer live registers there).
#define LOWBIT_NOINLINE_COLD __attribute__((noinline, cold))
/// A function compiled once and called, not inlined into each caller.
#define LOWBIT_NOINLINE __attribute__((noinline))
#else
#define LOWBIT_ALWAYS_INLINE inline
#define LOWBIT_ALWAYS_INLINE_LAMBDA
#define LOWBIT_NOINLINE_COLD
#define LOWBIT_NOINLINE
#endif

LOWBIT_BEGIN_NAMESPACE

/// Highest supported rank, as a constant.
inline constexpr std::size_t max_rank = LOWBIT_MAX_RANK;

/**
 * Which numerical contract an operator follows.
 *
 * - `reference` (the default) reproduces the float32 results of the QONNX
 *   reference implementation bit for bit, its documented quirks included
 *   (`docs/semantics.md`, "Where the semantics differ").
 * - `exact` computes what the operator definition means: exact rounding with
 *   the sign of the argument kept, limits that stay inside the integer range,
 *   NaN propagated, and parameters that make no sense (a scale that is not a
 *   finite positive number) rejected with lowbit::error.
 */
enum class semantics { reference, exact };

/// The name of a semantics value: "reference" or "exact".
constexpr const char* to_string(semantics s) noexcept {
  return s == semantics::exact ? "exact" : "reference";
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_CONFIG_HPP
