// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/dispatch_abi.hpp
 * The interface between the code that calls lowbit::dispatch::run() (built
 * for the program's baseline) and the kernels built once per architecture
 * by lowbit_add_dispatch: plain descriptors, one attribute record, and a
 * table of function pointers per architecture.
 *
 * Everything here is in `lowbit::dispatch::abi`, a namespace that
 * LOWBIT_ARCH_NAMESPACE never wraps, so both sides name the same types. It
 * holds types and templates over the operator type only: no function that
 * an architecture's translation unit could compile under the same mangled
 * name as the baseline (docs/dispatch.md, "ODR").
 */
#ifndef LOWBIT_DETAIL_DISPATCH_ABI_HPP
#define LOWBIT_DETAIL_DISPATCH_ABI_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <tuple>

/**
 * The architectures runtime dispatch knows, lowest first (the order in which
 * the best one is chosen): `X(name, xsimd arch, CPU test)`. The xsimd arch
 * is the one xsimd picks under the flags lowbit_add_dispatch gives `name`
 * (cmake/lowbit_dispatch.cmake holds the flags); the CPU test is made of
 * `LOWBIT_DISPATCH_CPU("feature")` terms, GCC's and clang's
 * `__builtin_cpu_supports` names, which also check that the OS saves the
 * AVX and AVX-512 registers.
 */
#define LOWBIT_DISPATCH_ARCHS(X)                                                              \
  X(sse2, xsimd::sse2, LOWBIT_DISPATCH_CPU("sse2"))                                           \
  X(sse4_1, xsimd::sse4_1, LOWBIT_DISPATCH_CPU("sse4.1"))                                     \
  X(sse4_2, xsimd::sse4_2, LOWBIT_DISPATCH_CPU("sse4.2") && LOWBIT_DISPATCH_CPU("popcnt"))    \
  X(avx, xsimd::avx, LOWBIT_DISPATCH_CPU("avx"))                                              \
  X(avx2, xsimd::fma3<xsimd::avx2>, LOWBIT_DISPATCH_CPU("avx2") && LOWBIT_DISPATCH_CPU("fma")) \
  X(avx512f, xsimd::avx512f, LOWBIT_DISPATCH_CPU("avx512f"))                                  \
  X(avx512bw, xsimd::avx512bw,                                                                \
    LOWBIT_DISPATCH_CPU("avx512f") && LOWBIT_DISPATCH_CPU("avx512cd") &&                      \
        LOWBIT_DISPATCH_CPU("avx512dq") && LOWBIT_DISPATCH_CPU("avx512bw") &&                 \
        LOWBIT_DISPATCH_CPU("avx512vl"))

namespace lowbit::dispatch::abi {

/// Changes whenever a type or a signature below changes; a table built
/// against another version is refused.
inline constexpr std::uint32_t version = 3;  // 3: seed, random_bits, index_offset

/// A tensor: `rank` extents and strides (in elements), read where they lie.
template <class T>
struct tensor {
  T* data;
  std::size_t rank;
  const std::size_t* extents;
  const std::ptrdiff_t* strides;
};

/// The boolean attributes below, `X(member, QONNX name)`: to_abi, from_abi
/// and covers_attributes go through this one list.
#define LOWBIT_DETAIL_DISPATCH_FLAGS(X)                                                      \
  X(is_signed, "signed") X(narrow, "narrow") X(has_inf, "has_inf") X(has_nan, "has_nan") \
  X(has_subnormal, "has_subnormal") X(saturation, "saturation")

/// Every attribute of every operator; an operator reads the ones it has.
/// `rounding` is a lowbit::rounding_mode's value, unchecked (the operator
/// checks it, as it does when called directly).
struct attributes {
  std::int32_t rounding;
  // The stochastic mode's: `seed`, `random_bits`, `index_offset`.
  std::uint64_t seed;
  std::int32_t random_bits;
  std::uint64_t index_offset;
  bool is_signed;
  bool narrow;
  bool has_inf;
  bool has_nan;
  bool has_subnormal;
  bool saturation;
  bool use_simd;  // detail::simd_enabled() on the calling thread (tests)
  // lowbit::execution (the `exec` member), field by field: the struct
  // itself is lowbit's, so an architecture's namespace renames it. The
  // executor is a std::function, the same type on both sides; null = none.
  std::uint64_t threads;
  std::uint64_t min_elements_per_thread;
  std::uint64_t stream_min_elements;
  const std::function<void(std::size_t, const std::function<void(std::size_t)>&)>* executor;
};

/// Where an architecture's kernel reports the message of a lowbit::error.
struct error_sink {
  void* context;
  void (*report)(void* context, const char* message);
};

/// The operators runtime dispatch knows, each the name of a lowbit
/// functor template over `semantics`, in table order: `X(name)`.
#define LOWBIT_DISPATCH_OPS(X) X(int_quant) X(trunc) X(trunc_v1) X(bipolar_quant) X(float_quant)

/// The operators, as indices into a table.
#define LOWBIT_DETAIL_DISPATCH_ENUM(name) name,
enum class op_id : unsigned { LOWBIT_DISPATCH_OPS(LOWBIT_DETAIL_DISPATCH_ENUM) };
#undef LOWBIT_DETAIL_DISPATCH_ENUM
#define LOWBIT_DETAIL_DISPATCH_ONE(name) +1
inline constexpr std::size_t op_count = 0 LOWBIT_DISPATCH_OPS(LOWBIT_DETAIL_DISPATCH_ONE);
#undef LOWBIT_DETAIL_DISPATCH_ONE

/**
 * One operator in one semantics: runs `op(inputs[0], ..., inputs[n-1], y)`
 * (x, then the parameters in the operator's order). Returns 0, or 1 after
 * reporting the message of the lowbit::error the operator threw to `errors`
 * (y is then unwritten). Other exceptions (std::bad_alloc) propagate.
 */
template <class T>
using entry = int (*)(const attributes& attrs, const tensor<const T>* inputs, const tensor<T>& y,
                      const error_sink& errors);

/// The kernels of one architecture, indexed [op_id][semantics]
/// (0 = reference, 1 = exact); null where the operator has no such type.
struct table {
  std::uint32_t abi_version;
  const char* arch;
  entry<float> f32[op_count][2];
  entry<double> f64[op_count][2];
};

/// Whether every attribute `Op::attributes()` lists has a field above
/// (a new attribute must be added to `attributes`, to_abi and from_abi).
template <class Op>
constexpr bool covers_attributes() {
#define LOWBIT_DETAIL_DISPATCH_NAME(member, name) , std::string_view(name)
  constexpr std::string_view known[] = {"rounding_mode", "seed", "random_bits",
                                        "index_offset" LOWBIT_DETAIL_DISPATCH_FLAGS(LOWBIT_DETAIL_DISPATCH_NAME)};
#undef LOWBIT_DETAIL_DISPATCH_NAME
  return std::apply(
      [&](const auto&... a) {
        auto one = [&](std::string_view n) {
          for (std::string_view k : known)
            if (k == n) return true;
          return false;
        };
        (void)one;  // unused for an operator without attributes (bipolar_quant)
        return (one(a.name) && ...);
      },
      Op::attributes());
}

/// An operator functor's attributes as a record; `use_simd` is the calling
/// thread's detail::simd_enabled() (tests).
template <class Op>
attributes to_abi(const Op& op, bool use_simd) noexcept {
  static_assert(covers_attributes<Op>(), "lowbit::dispatch: an attribute has no field in abi::attributes");
  attributes a{};
  if constexpr (requires { op.rounding; }) a.rounding = static_cast<std::int32_t>(op.rounding);
  if constexpr (requires { op.seed; }) {
    a.seed = op.seed;
    a.random_bits = op.random_bits;
    a.index_offset = op.index_offset;
  }
#define LOWBIT_DETAIL_DISPATCH_TO(member, name) \
  if constexpr (requires { op.member; }) a.member = op.member;
  LOWBIT_DETAIL_DISPATCH_FLAGS(LOWBIT_DETAIL_DISPATCH_TO)
#undef LOWBIT_DETAIL_DISPATCH_TO
  a.use_simd = use_simd;
  a.threads = op.exec.threads;
  a.min_elements_per_thread = op.exec.min_elements_per_thread;
  a.stream_min_elements = op.exec.stream_min_elements;
  a.executor = op.exec.executor ? &op.exec.executor : nullptr;
  return a;
}

/// The functor `Op` with the attributes of a record (the inverse of to_abi).
template <class Op>
Op from_abi(const attributes& a) {
  Op op{};
  if constexpr (requires { op.rounding; }) op.rounding = static_cast<decltype(op.rounding)>(a.rounding);
  if constexpr (requires { op.seed; }) {
    op.seed = a.seed;
    op.random_bits = a.random_bits;
    op.index_offset = a.index_offset;
  }
#define LOWBIT_DETAIL_DISPATCH_FROM(member, name) \
  if constexpr (requires { op.member; }) op.member = a.member;
  LOWBIT_DETAIL_DISPATCH_FLAGS(LOWBIT_DETAIL_DISPATCH_FROM)
#undef LOWBIT_DETAIL_DISPATCH_FROM
  op.exec.threads = static_cast<decltype(op.exec.threads)>(a.threads);
  op.exec.min_elements_per_thread = static_cast<std::size_t>(a.min_elements_per_thread);
  op.exec.stream_min_elements = static_cast<std::size_t>(a.stream_min_elements);
  if (a.executor != nullptr) op.exec.executor = *a.executor;
  return op;
}

}  // namespace lowbit::dispatch::abi

#endif  // LOWBIT_DETAIL_DISPATCH_ABI_HPP
