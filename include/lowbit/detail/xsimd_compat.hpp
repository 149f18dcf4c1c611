// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/xsimd_compat.hpp
 * Every difference between the xsimd versions lowbit supports (8.1 through
 * 14.x) lives here, keyed on XSIMD_VERSION_MAJOR. Nothing else in lowbit may
 * test the xsimd version.
 */
#ifndef LOWBIT_DETAIL_XSIMD_COMPAT_HPP
#define LOWBIT_DETAIL_XSIMD_COMPAT_HPP

#include <cstdint>
#include <type_traits>

#include "../config.hpp"

#include "intrinsics.hpp"  // first: GCC 12's AVX-512 warnings silenced there

LOWBIT_DETAIL_GCC12_INTRINSICS_BEGIN
#include <xsimd/xsimd.hpp>
LOWBIT_DETAIL_GCC12_INTRINSICS_END

#if !defined(XSIMD_VERSION_MAJOR) || XSIMD_VERSION_MAJOR < 8 || \
    (XSIMD_VERSION_MAJOR == 8 && XSIMD_VERSION_MINOR < 1)
#error "lowbit needs xsimd 8.1 or newer"
#endif

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// The architecture lowbit's kernels use: xsimd's best for the build flags.
using default_arch = xsimd::default_arch;

template <class T, class A = default_arch>
using batch = xsimd::batch<T, A>;

template <class V>
struct is_batch : std::false_type {};
template <class T, class A>
struct is_batch<xsimd::batch<T, A>> : std::true_type {};
template <class V>
inline constexpr bool is_batch_v = is_batch<V>::value;

/// True when the ISA has an exact round-to-integral instruction (x86
/// roundps/roundpd from SSE4.1 on, AArch64 frint*). In xsimd 8.x `avx`
/// derives from `generic`, not from `sse4_2`, so AVX is tested on its own.
template <class A>
inline constexpr bool has_native_round =
    std::is_base_of_v<xsimd::sse4_1, A> || std::is_base_of_v<xsimd::avx, A>
#if XSIMD_WITH_AVX512F
    || std::is_base_of_v<xsimd::avx512f, A>
#endif
#if XSIMD_WITH_NEON64
    || std::is_base_of_v<xsimd::neon64, A>
#endif
    ;

/// Reinterprets the lanes of a batch as another lane type of equal width
/// (`bitwise_cast<batch<U, A>>` before xsimd 11, `bitwise_cast<U>` since).
template <class U, class T, class A>
LOWBIT_ALWAYS_INLINE xsimd::batch<U, A> bit_cast_batch(const xsimd::batch<T, A>& x) noexcept {
  static_assert(sizeof(U) == sizeof(T));
#if XSIMD_VERSION_MAJOR >= 11
  return xsimd::bitwise_cast<U>(x);
#else
  return xsimd::bitwise_cast<xsimd::batch<U, A>>(x);
#endif
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_XSIMD_COMPAT_HPP
