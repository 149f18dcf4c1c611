// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/dispatch_registry.hpp
 * The registry of runtime dispatch: which architectures were compiled in,
 * which one this CPU gets, and the functions of lowbit/dispatch.hpp.
 *
 * Not for direct use: lowbit_add_dispatch generates one translation unit,
 * built for the baseline, that defines the architectures it compiled,
 * lowest first, and includes this file:
 *
 *     #define LOWBIT_DISPATCH_COMPILED(X) X(sse2) X(avx2) X(avx512bw)
 *     #include <lowbit/detail/dispatch_registry.hpp>
 *
 * It holds non-inline definitions, so a program has exactly one such unit.
 */
#ifndef LOWBIT_DETAIL_DISPATCH_REGISTRY_HPP
#define LOWBIT_DETAIL_DISPATCH_REGISTRY_HPP

#ifndef LOWBIT_DISPATCH_COMPILED
#error "lowbit/detail/dispatch_registry.hpp is compiled by lowbit_add_dispatch, which defines LOWBIT_DISPATCH_COMPILED"
#endif
#if !(defined(__GNUC__) || defined(__clang__)) || !(defined(__x86_64__) || defined(__i386__))
#error "lowbit runtime dispatch needs GCC or clang on x86 (__builtin_cpu_supports)"
#endif

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "../dispatch.hpp"
#include "../error.hpp"
#include "dispatch_abi.hpp"

namespace lowbit::dispatch::abi {
#define LOWBIT_DETAIL_DISPATCH_DECLARE(name) extern const table table_##name;
LOWBIT_DISPATCH_COMPILED(LOWBIT_DETAIL_DISPATCH_DECLARE)
#undef LOWBIT_DETAIL_DISPATCH_DECLARE
}  // namespace lowbit::dispatch::abi

namespace lowbit::detail {
namespace {

namespace abi = dispatch::abi;

/// The position of `arch` in LOWBIT_DISPATCH_ARCHS, or -1.
constexpr int dispatch_rank(std::string_view arch) noexcept {
  int r = 0;
#define LOWBIT_DETAIL_DISPATCH_RANK(name, xarch, cpu) \
  if (arch == #name) return r;                        \
  ++r;
  LOWBIT_DISPATCH_ARCHS(LOWBIT_DETAIL_DISPATCH_RANK)
#undef LOWBIT_DETAIL_DISPATCH_RANK
  return -1;
}

#define LOWBIT_DETAIL_DISPATCH_NAME(name) std::string_view(#name),
constexpr std::string_view dispatch_names[] = {LOWBIT_DISPATCH_COMPILED(LOWBIT_DETAIL_DISPATCH_NAME)};
#undef LOWBIT_DETAIL_DISPATCH_NAME
#define LOWBIT_DETAIL_DISPATCH_TABLE(name) &abi::table_##name,
const abi::table* const dispatch_tables[] = {LOWBIT_DISPATCH_COMPILED(LOWBIT_DETAIL_DISPATCH_TABLE)};
#undef LOWBIT_DETAIL_DISPATCH_TABLE
constexpr std::size_t dispatch_count = std::size(dispatch_names);

constexpr bool dispatch_names_ok() noexcept {
  for (std::size_t i = 0; i < dispatch_count; ++i) {
    if (dispatch_rank(dispatch_names[i]) < 0) return false;
    if (i > 0 && dispatch_rank(dispatch_names[i]) <= dispatch_rank(dispatch_names[i - 1])) return false;
  }
  return true;
}
static_assert(dispatch_names_ok(),
              "LOWBIT_DISPATCH_COMPILED must list known architectures, each once, lowest first");

/// The best compiled architecture this CPU supports; the lowest (the
/// baseline, which runs wherever the program runs) when none of the others.
const abi::table* dispatch_best() noexcept {
  const abi::table* best = dispatch_tables[0];
  for (std::size_t i = 1; i < dispatch_count; ++i)
    if (dispatch::supported(dispatch_names[i])) best = dispatch_tables[i];
  return best;
}

std::atomic<const abi::table*>& dispatch_current() noexcept {
  static std::atomic<const abi::table*> current{[] {
    // Every table comes from this build; a mismatch means headers of two
    // lowbit versions were mixed, and no table can be trusted.
    for (const abi::table* t : dispatch_tables)
      if (t->abi_version != abi::version) {
        std::fprintf(stderr, "lowbit::dispatch: the kernels of %s were built against another lowbit version\n",
                     t->arch);
        std::abort();
      }
    return dispatch_best();
  }()};
  return current;
}

std::string dispatch_list(bool only_supported) {
  std::string s;
  for (std::string_view n : dispatch_names)
    if (!only_supported || dispatch::supported(n)) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace

const abi::table& dispatch_active_table() noexcept {
  return *dispatch_current().load(std::memory_order_acquire);
}

}  // namespace lowbit::detail

namespace lowbit::dispatch {

std::span<const std::string_view> compiled() noexcept { return lowbit::detail::dispatch_names; }

bool supported(std::string_view arch) noexcept {
  __builtin_cpu_init();
#define LOWBIT_DISPATCH_CPU(feature) (__builtin_cpu_supports(feature) != 0)
#define LOWBIT_DETAIL_DISPATCH_SUPPORTED(name, xarch, cpu) \
  if (arch == #name) return cpu;
  LOWBIT_DISPATCH_ARCHS(LOWBIT_DETAIL_DISPATCH_SUPPORTED)
#undef LOWBIT_DETAIL_DISPATCH_SUPPORTED
#undef LOWBIT_DISPATCH_CPU
  return false;
}

std::string_view active() noexcept { return lowbit::detail::dispatch_active_table().arch; }

void force(std::string_view arch) {
  using namespace lowbit::detail;
  for (std::size_t i = 0; i < dispatch_count; ++i) {
    if (dispatch_names[i] != arch) continue;
    if (!supported(arch))
      throw error("lowbit::dispatch::force: architecture \"" + std::string(arch) +
                  "\" is not supported by this CPU; expected one of: " + dispatch_list(true));
    dispatch_current().store(dispatch_tables[i], std::memory_order_release);
    return;
  }
  throw error("lowbit::dispatch::force: architecture \"" + std::string(arch) +
              "\" is not compiled in; expected one of: " + dispatch_list(false) +
              " (lowbit_add_dispatch's ARCHS)");
}

void reset() noexcept {
  lowbit::detail::dispatch_current().store(lowbit::detail::dispatch_best(), std::memory_order_release);
}

}  // namespace lowbit::dispatch

#endif  // LOWBIT_DETAIL_DISPATCH_REGISTRY_HPP
