// SPDX-License-Identifier: Apache-2.0
/**
 * @file dispatch.hpp
 * Runtime ISA dispatch, opt-in: code built for baseline x86-64 runs every
 * operator with the kernels of the best architecture the CPU supports
 * (SSE4.1, AVX2, AVX-512, ...), compiled once per architecture by the CMake
 * helper lowbit_add_dispatch. Same validation, errors and results, bit for
 * bit, as calling the operator. Usage and caveats: docs/dispatch.md.
 */
#ifndef LOWBIT_DISPATCH_HPP
#define LOWBIT_DISPATCH_HPP

#ifdef LOWBIT_ARCH_NAMESPACE
#error "lowbit/dispatch.hpp belongs to the program's baseline code, not to an architecture's translation unit"
#endif

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "bipolar_quant.hpp"
#include "config.hpp"
#include "detail/dispatch_abi.hpp"
#include "detail/elementwise.hpp"
#include "error.hpp"
#include "float_quant.hpp"
#include "int_quant.hpp"
#include "minifloat.hpp"
#include "trunc.hpp"
#include "view.hpp"

namespace lowbit::detail {

/// The table of the active architecture (defined by lowbit_add_dispatch's
/// registry; an undefined reference to it means that it was not called).
const dispatch::abi::table& dispatch_active_table() noexcept;

/// Which table row an operator functor uses (none for other types).
template <class Op>
struct dispatch_op {};
#define LOWBIT_DETAIL_DISPATCH_OP(name)                                  \
  template <semantics S>                                                \
  struct dispatch_op<::lowbit::name<S>> {                               \
    static constexpr dispatch::abi::op_id id = dispatch::abi::op_id::name; \
  };
LOWBIT_DISPATCH_OPS(LOWBIT_DETAIL_DISPATCH_OP)
#undef LOWBIT_DETAIL_DISPATCH_OP

/// The operators lowbit::dispatch::run() takes as they are (minifloat_quant
/// goes through float_quant).
template <class Op>
concept dispatchable_op = requires { dispatch_op<Op>::id; };

template <template <semantics> class Op, semantics S>
constexpr std::size_t semantics_index(const Op<S>&) noexcept {
  return S == semantics::exact ? 1 : 0;
}

/// Describes the arguments as the table's entries take them, calls `entry`
/// and turns a reported error back into lowbit::error.
template <class T, class Args, std::size_t... I>
void dispatch_call(dispatch::abi::entry<T> entry, const dispatch::abi::attributes& attrs, Args&& args,
                   std::index_sequence<I...>) {
  namespace abi = dispatch::abi;
  constexpr std::size_t n = sizeof...(I);  // x and the parameters; y follows
  const tensor_in<T> in[n] = {std::get<I>(args)...};
  const nd<T> y = output_nd<T>(std::get<n>(std::move(args)));
  const abi::tensor<const T> inputs[n] = {{in[I].d.data, in[I].d.rank, in[I].d.ext.data(), in[I].d.str.data()}...};
  const abi::tensor<T> out{y.data, y.rank, y.ext.data(), y.str.data()};
  std::string message;
  const abi::error_sink errors{&message,
                               [](void* m, const char* what) { *static_cast<std::string*>(m) = what; }};
  if (entry(attrs, inputs, out, errors) != 0) throw error(message);
}

}  // namespace lowbit::detail

namespace lowbit::dispatch {

/**
 * The names of the architectures compiled in by lowbit_add_dispatch, lowest
 * (the baseline) first, e.g. `{"sse2", "avx2", "avx512bw"}`.
 */
std::span<const std::string_view> compiled() noexcept;

/**
 * Whether this CPU, and the OS (which must save the AVX and AVX-512
 * registers), can run the kernels of `arch`: one of sse2, sse4_1, sse4_2,
 * avx, avx2, avx512f, avx512bw, compiled in or not. False for other names.
 */
bool supported(std::string_view arch) noexcept;

/**
 * The architecture whose kernels run() uses: the best one compiled in that
 * this CPU supports (chosen once, at the first call of any function here),
 * or the one force() set.
 *
 * **Example**:
 * ```
 * std::printf("lowbit kernels: %s\n", std::string(lowbit::dispatch::active()).c_str());  // "avx2"
 * ```
 */
std::string_view active() noexcept;

/**
 * Makes run() use the kernels of `arch`, in every thread, until reset() or
 * the next force(): for tests and benchmarks. Calls of run() that have
 * already started finish with the architecture they started with.
 * @throws lowbit::error if `arch` was not compiled in or this CPU does not
 *         support it; the active architecture is then unchanged.
 */
void force(std::string_view arch);

/// Undoes force(): run() uses the best architecture this CPU supports again.
void reset() noexcept;

/**
 * Runs `op(x, params..., y)` with the kernels of the active architecture:
 * the same arguments (views, scalars, broadcasting, in place), the same
 * checks and the same results, bit for bit, as calling `op` itself, which
 * uses the ISA this translation unit is compiled for.
 *
 * `op` is a lowbit::int_quant, trunc, trunc_v1, bipolar_quant, float_quant
 * or minifloat_quant in either semantics; all of its attributes are used
 * (and this thread's detail::simd_scope, for tests).
 *
 * @throws lowbit::error as `op` does (the message is the same); y is then
 *         unchanged.
 *
 * **Example**:
 * ```
 * const lowbit::int_quant<> q{.is_signed = true};
 * lowbit::dispatch::run(q, x, 0.5f, 0.0f, 4.0f, y);  // what q(x, 0.5f, 0.0f, 4.0f, y) gives
 * ```
 */
template <class Op, tensor_arg X, tensor_arg... Rest>
  requires lowbit::detail::dispatchable_op<Op>
void run(const Op& op, const X& x, Rest&&... rest) {
  using T = std::remove_cv_t<lowbit::detail::element_t<const X&>>;
  constexpr abi::op_id id = lowbit::detail::dispatch_op<Op>::id;
  // The arity and element types come from the operator's protocol.
  constexpr std::size_t inputs = lowbit::detail::input_count<Op>;
  static_assert(sizeof...(Rest) == inputs,
                "lowbit::dispatch::run: expected the operator, x, each of the operator's parameters, and y");
  static_assert(std::is_same_v<T, float> || (std::is_same_v<T, double> && Op::accepts_double),
                "lowbit::dispatch::run: x must be a float tensor (or double, for every operator but "
                "float_quant)");
  const auto i = static_cast<std::size_t>(id);
  const abi::table& t = lowbit::detail::dispatch_active_table();
  const std::size_t s = lowbit::detail::semantics_index(op);
  abi::entry<T> entry;
  if constexpr (std::is_same_v<T, float>)
    entry = t.f32[i][s];
  else
    entry = t.f64[i][s];
  lowbit::detail::dispatch_call<T>(entry, abi::to_abi(op, detail::simd_enabled()), std::forward_as_tuple(x, std::forward<Rest>(rest)...),
                                   std::make_index_sequence<inputs>{});
}

/// minifloat_quant: float_quant with the format's values as its parameters,
/// as `op(x, scale, y)` computes it.
template <semantics S, tensor_arg X, tensor_arg Scale, tensor_arg Y>
void run(const minifloat_quant<S>& op, const X& x, const Scale& scale, Y&& y) {
  const minifloat_format& f = op.format;
  run(op.op(), x, scale, f.exponent_bits, f.mantissa_bits, f.bias, f.max_value, std::forward<Y>(y));
}

}  // namespace lowbit::dispatch

#endif  // LOWBIT_DISPATCH_HPP
