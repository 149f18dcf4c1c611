// SPDX-License-Identifier: Apache-2.0
/**
 * @file ranges.hpp
 * The range concepts and accessors lowbit uses (std::ranges::contiguous_range,
 * sized_range, range_reference_t, data, size), without all of <ranges>:
 * with libstdc++ they live in <bits/ranges_base.h>, and <ranges> (the views)
 * costs every translation unit that includes lowbit about 0.1 s of parsing
 * (docs/performance.md, "Compile time").
 */
#ifndef LOWBIT_DETAIL_RANGES_HPP
#define LOWBIT_DETAIL_RANGES_HPP

#if defined(__GLIBCXX__) && __has_include(<bits/ranges_base.h>)
#include <bits/ranges_base.h>
#else
#include <ranges>
#endif

#endif  // LOWBIT_DETAIL_RANGES_HPP
