// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/log2_table.hpp
 * floor(fl32(log2 a)), the floor of the correctly rounded float32 log2,
 * from the bits of a: the reference semantics of FloatQuant (QONNX) and of
 * MX block scaling (microxcaling) take the exponent of a value this way.
 */
#ifndef LOWBIT_DETAIL_LOG2_TABLE_HPP
#define LOWBIT_DETAIL_LOG2_TABLE_HPP

#include <array>
#include <cmath>
#include <cstdint>

#include "../config.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/**
 * The rounding of float32 log2 near powers of two, per biased exponent `be`
 * of a normal a: floor(fl32(log2 a)) = (be - 127) + (mantissa(a) >= t[be]).
 * fl32(log2 a) is the correctly rounded float32 log2, which rounds values
 * just below 2^K up to K when the distance is below half a float32 spacing
 * at K (QUIRKS.md 7). Entries 0 and 255 never adjust.
 */
inline const std::int32_t* log2_roundup_thresholds() {
  static const std::array<std::int32_t, 256> table = [] {
    std::array<std::int32_t, 256> t{};
    t.fill(std::int32_t(1) << 23);
    const long double ln2 = std::log(2.0L);
    for (int be = 1; be <= 254; ++be) {
      const int K = be - 127 + 1;
      const float Kf = static_cast<float>(K);
      std::int32_t j = 0;
      while (j < (std::int32_t(1) << 23)) {
        // a = 2^K (1 - (j+1) 2^-24): log2 a = K + log1p(-(j+1) 2^-24) / ln 2.
        const long double l =
            static_cast<long double>(K) + std::log1p(-std::ldexp(static_cast<long double>(j + 1), -24)) / ln2;
        if (!(static_cast<float>(l) >= Kf)) break;
        ++j;
      }
      // j <= 44 for every binade (|K| <= 128): the kernel only consults the
      // table for mantissas within 64 ulps of the top.
      t[static_cast<std::size_t>(be)] = (std::int32_t(1) << 23) - j;
    }
    return t;
  }();
  return table.data();
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_LOG2_TABLE_HPP
