// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/intrinsics.hpp
 * The x86 intrinsic headers, for every lowbit header that uses them
 * (through xsimd or directly), included first here with GCC 12's false
 * -Wmaybe-uninitialized silenced for them: its AVX-512 intrinsics start
 * from _mm512_undefined_ps() & co., self-initialised variables, which the
 * warning reports wherever they are inlined (GCC bug 105593, fixed in GCC
 * 13), so that a user's -Wall -Werror build with AVX-512 failed in lowbit's
 * kernels. Diagnostic pragmas apply by source location, so the intrinsic
 * headers' lines keep the setting of their first inclusion: a program that
 * includes <immintrin.h> (or xsimd) before lowbit keeps its own.
 */
#ifndef LOWBIT_DETAIL_INTRINSICS_HPP
#define LOWBIT_DETAIL_INTRINSICS_HPP

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#define LOWBIT_DETAIL_GCC12_INTRINSICS_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define LOWBIT_DETAIL_GCC12_INTRINSICS_END _Pragma("GCC diagnostic pop")
#else
#define LOWBIT_DETAIL_GCC12_INTRINSICS_BEGIN
#define LOWBIT_DETAIL_GCC12_INTRINSICS_END
#endif

#if defined(__SSE2__) || defined(_M_X64)
LOWBIT_DETAIL_GCC12_INTRINSICS_BEGIN
#include <immintrin.h>
LOWBIT_DETAIL_GCC12_INTRINSICS_END
#endif

#endif  // LOWBIT_DETAIL_INTRINSICS_HPP
