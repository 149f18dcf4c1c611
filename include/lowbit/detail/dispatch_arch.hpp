// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/dispatch_arch.hpp
 * The body of one architecture's translation unit of runtime dispatch: the
 * table `lowbit::dispatch::abi::table_<arch>` of every operator in both
 * semantics, for float and (where the operator has it) double.
 *
 * Not for direct use: lowbit_add_dispatch (cmake/lowbit_dispatch.cmake)
 * generates one file per architecture that defines
 *
 *     #define LOWBIT_DISPATCH_ARCH avx2        // a name of LOWBIT_DISPATCH_ARCHS
 *     #define LOWBIT_ARCH_NAMESPACE arch_avx2  // lowbit's code gets its own names
 *     #include <lowbit/detail/dispatch_arch.hpp>
 *
 * and compiles it with that architecture's flags (none for the lowest one,
 * the program's baseline). It must be the only thing in its translation
 * unit: every lowbit function compiled here lives in
 * `lowbit::arch_<name>`, so none can stand in for a baseline one.
 */
#ifndef LOWBIT_DETAIL_DISPATCH_ARCH_HPP
#define LOWBIT_DETAIL_DISPATCH_ARCH_HPP

#if !defined(LOWBIT_DISPATCH_ARCH) || !defined(LOWBIT_ARCH_NAMESPACE)
#error "lowbit/detail/dispatch_arch.hpp is compiled by lowbit_add_dispatch, which defines LOWBIT_DISPATCH_ARCH and LOWBIT_ARCH_NAMESPACE"
#endif
#if defined(__FAST_MATH__)
#error "lowbit dispatch: this translation unit is compiled with -ffast-math (or -Ofast), which changes lowbit's results; remove it from CMAKE_CXX_FLAGS"
#endif

#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

#include "../lowbit.hpp"
#include "dispatch_abi.hpp"

#define LOWBIT_DETAIL_DISPATCH_STR2(x) #x
#define LOWBIT_DETAIL_DISPATCH_STR(x) LOWBIT_DETAIL_DISPATCH_STR2(x)
#define LOWBIT_DETAIL_DISPATCH_CAT2(a, b) a##b
#define LOWBIT_DETAIL_DISPATCH_CAT(a, b) LOWBIT_DETAIL_DISPATCH_CAT2(a, b)

LOWBIT_BEGIN_DETAIL_NAMESPACE

namespace dispatch_arch {

namespace abi = ::lowbit::dispatch::abi;

// The xsimd arch of each known name: `arch_of<tag_NAME>::type`.
#define LOWBIT_DETAIL_DISPATCH_TAG(name, xarch, cpu) \
  struct tag_##name {                                \
    using type = xarch;                              \
  };
LOWBIT_DISPATCH_ARCHS(LOWBIT_DETAIL_DISPATCH_TAG)
#undef LOWBIT_DETAIL_DISPATCH_TAG

using expected_arch = typename LOWBIT_DETAIL_DISPATCH_CAT(tag_, LOWBIT_DISPATCH_ARCH)::type;

// The kernels must use exactly the ISA the dispatcher checks the CPU for:
// no less (they would be slow) and no more (they would crash).
static_assert(std::is_same_v<xsimd::default_arch, expected_arch>,
              "lowbit dispatch: the kernels of architecture '" LOWBIT_DETAIL_DISPATCH_STR(
                  LOWBIT_DISPATCH_ARCH) "' are compiled for another instruction set. The lowest "
                                        "architecture in ARCHS is compiled without flags, so it "
                                        "must be your baseline (sse2 on x86-64); the others must "
                                        "not get -march=native or other -m flags from "
                                        "CMAKE_CXX_FLAGS.");

template <class T>
strided_view<T> view(const abi::tensor<T>& t) {
  // Not checked again: the baseline side made these from descriptors it
  // checked (lowbit::dispatch::run), and re-checking cost a tenth of a
  // 4096-element call.
  return strided_view<T>(unchecked_t{}, t.data, t.rank, t.extents, t.strides);
}

/// Runs the functor Op on descriptors; lowbit::error becomes a report.
template <class Op, class T, std::size_t... I>
int call(const abi::attributes& attrs, const abi::tensor<const T>* in, const abi::tensor<T>& y,
         const abi::error_sink& errors, std::index_sequence<I...>) {
  try {
    const Op op = abi::from_abi<Op>(attrs);
    const simd_scope simd(attrs.use_simd);  // this architecture's own flag
    op(view(in[I])..., view(y));
    return 0;
  } catch (const error& e) {  // this TU's lowbit::error, an arch-namespace type
    errors.report(errors.context, e.what());
    return 1;
  }
}

template <class Op, class T, std::size_t Inputs>
int entry(const abi::attributes& attrs, const abi::tensor<const T>* in, const abi::tensor<T>& y,
          const abi::error_sink& errors) {
  return call<Op, T>(attrs, in, y, errors, std::make_index_sequence<Inputs>{});
}

/// Fills the table's row of operator `Id`, template `Op`: both semantics,
/// float, and double where the operator has it.
template <template <semantics> class Op, abi::op_id Id>
constexpr void fill(abi::table& t) {
  // The arity and element types come from the operator's protocol.
  using R = Op<semantics::reference>;
  static_assert(element_operator<R>, "a dispatched operator follows the operator protocol (detail/protocol.hpp)");
  constexpr std::size_t inputs = input_count<R>;
  constexpr auto i = static_cast<std::size_t>(Id);
  t.f32[i][0] = &entry<Op<semantics::reference>, float, inputs>;
  t.f32[i][1] = &entry<Op<semantics::exact>, float, inputs>;
  if constexpr (R::accepts_double) {
    t.f64[i][0] = &entry<Op<semantics::reference>, double, inputs>;
    t.f64[i][1] = &entry<Op<semantics::exact>, double, inputs>;
  }
}

constexpr abi::table make_table() {
  abi::table t{};
  t.abi_version = abi::version;
  t.arch = LOWBIT_DETAIL_DISPATCH_STR(LOWBIT_DISPATCH_ARCH);
#define LOWBIT_DETAIL_DISPATCH_FILL(name) fill<::lowbit::name, abi::op_id::name>(t);
  LOWBIT_DISPATCH_OPS(LOWBIT_DETAIL_DISPATCH_FILL)
#undef LOWBIT_DETAIL_DISPATCH_FILL
  return t;
}

}  // namespace dispatch_arch

LOWBIT_END_DETAIL_NAMESPACE

namespace lowbit::dispatch::abi {
// Data only (constant-initialized), under a name of its own per architecture.
extern const table LOWBIT_DETAIL_DISPATCH_CAT(table_, LOWBIT_DISPATCH_ARCH);
constinit const table LOWBIT_DETAIL_DISPATCH_CAT(table_, LOWBIT_DISPATCH_ARCH) =
    ::lowbit::detail::dispatch_arch::make_table();
}  // namespace lowbit::dispatch::abi

#endif  // LOWBIT_DETAIL_DISPATCH_ARCH_HPP
