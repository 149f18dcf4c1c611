// SPDX-License-Identifier: Apache-2.0
/**
 * @file detail/driver.hpp
 * The generic driver: one call of any element-wise operator, in the same
 * steps for every operator and every stage (detail::stage).
 *
 * 1. The arguments are read as descriptors (call_args: x, then the
 *    operator's declared inputs, in order).
 * 2. validate(): the attributes, the output shape (the numpy broadcast of
 *    x and the inputs that take part), the output's shape and memory (a
 *    callback: y, codes or a scratch tensor each have their own rule), then
 *    the values of the inputs. Everything is validated before anything is
 *    written.
 * 3. execute(): the operator's state (its inputs turned into kernel
 *    operands, e.g. IntQuant's clamp limits) is built, the engine plans the
 *    call and runs the state's kernel on every piece.
 *
 * What an operator supplies (private, reached through protocol_access):
 * - `void check_attributes() const`: its attributes (e.g. the rounding mode);
 * - `template <class T> void check_values(const call_args<Op, T>&) const`:
 *   its inputs' values (bit widths, scales, formats);
 * - optionally `template <class T> std::array<bool, inputs::size>
 *   broadcast_inputs(const call_args<Op, T>&) const`: which inputs take
 *   part in the output shape (all, when absent; QONNX leaves out IntQuant's
 *   bipolar bit width and Trunc's in_bitwidth);
 * - optionally `template <class T> void check_shape_values(const call_args<Op, T>&) const`:
 *   value checks output_shape() also makes (IntQuant's bit widths);
 * - `template <class T> struct state`: built as `state(op, args, out)`, it
 *   holds `ops`, the kernel operands in the order of `Op::operands`, and
 *   runs a piece with `template <stage St> void run(const piece<T, NP>&, bool simd) const`;
 * - for the codes stages (codes.hpp), `template <class C, stage St, class T>
 *   bool check_codes(const call_args<Op, T>&) const`: checks that codes of
 *   type C can hold every q (St = code) or be read back (St = dequant), and
 *   says whether the codes are bits (0 for -1, 1 for +1);
 * - optionally, the scalar route's hook `template <class T> bool
 *   run_scalars(const T* x, T* y, std::size_t n, const std::array<T,
 *   inputs::size>& p, bool simd) const` (scalar_route below): a call whose
 *   inputs are all scalars p, x and y contiguous; it checks p as
 *   check_values would and writes y as the state would, or returns false,
 *   having written nothing, to leave the call to the general route;
 * - optionally, the row route's hook `template <class T> bool run_rows(const
 *   T* x, T* y, std::size_t rows, std::size_t cols, std::size_t blocks,
 *   const std::array<const T*, inputs::size>& p, const std::array<bool,
 *   inputs::size>& per_row, bool simd) const` (row_route below): a
 *   per-channel call, x and y dense, `blocks` blocks of rows x cols (rows
 *   may be 1 and cols short when nothing is per row), input i one value per
 *   row of a block at p[i] where per_row[i] (row r of every block at
 *   p[i][r]), else the one value *p[i]; it checks every value as
 *   check_values would and writes y as the state would, or returns false,
 *   having written nothing;
 * - optionally, side outputs of the code stage (a block format's scales
 *   beside its element codes): `using code_outputs = names<"codes", ...>`
 *   names them after the codes; `template <class T> std::array<shape, K>
 *   side_shapes(const call_args<Op, T>&, const shape& out) const` gives
 *   their shapes (K side outputs); and the state's `template <std::size_t I>
 *   void side(T* values) const` writes side output I's values, row-major,
 *   once the kernel has run. They are integers written to a code type,
 *   checked with the codes and written only when every value fits;
 * - optionally, for a block format whose last kernel operand is a value per
 *   block (an MX block's scale): the state declares `static constexpr bool
 *   block_fed = true`, `block_layout blocks` and `const T* block_values()
 *   const` (row-major in block_shape(out, blocks)); execute() then runs the
 *   engine's block step (detail/block.hpp), and the state's last entry of
 *   `ops` is not read;
 * - optionally, for a block-wise operator whose inputs hold one value per
 *   block of x (group-wise IntQuant's scales and zero points), the state's
 *   members `block_layout blocks` and `std::array<bool, NP> per_block`:
 *   the call then runs on the block step (block.hpp, elementwise_blocks),
 *   operand I read per block where per_block[I], broadcast otherwise. Such
 *   inputs take no part in the output shape (broadcast_inputs) and the
 *   operator checks their shapes itself (check_values).
 */
#ifndef LOWBIT_DETAIL_DRIVER_HPP
#define LOWBIT_DETAIL_DRIVER_HPP

#include <array>
#include <cstddef>
#include <concepts>
#include <cstdint>
#include <ranges>
#include <type_traits>
#include <utility>

#include "../broadcast.hpp"
#include "../config.hpp"
#include "../parallel.hpp"
#include "../view.hpp"
#include "block.hpp"
#include "elementwise.hpp"
#include "protocol.hpp"
#include "stage.hpp"

LOWBIT_BEGIN_DETAIL_NAMESPACE

/// The tensors of one call of `Op`, as descriptors: x, then the declared
/// inputs in order (`get<"scale">()`).
template <class Op, class T>
struct call_args {
  static constexpr std::size_t size = 1 + Op::inputs::size;
  std::array<const nd<const T>*, size> t{};

  const nd<const T>& x() const noexcept { return *t[0]; }
  /// The input named N; a name the operator does not declare does not compile.
  template <name_literal N>
  const nd<const T>& get() const noexcept {
    return *t[1 + Op::inputs::template index<N>];
  }
  /// The inputs with their names, for the memory checks.
  std::array<std::pair<const char*, const nd<const T>*>, Op::inputs::size> named() const noexcept {
    std::array<std::pair<const char*, const nd<const T>*>, Op::inputs::size> r{};
    for (std::size_t i = 0; i < Op::inputs::size; ++i) r[i] = {Op::inputs::c_str[i], t[1 + i]};
    return r;
  }
};

/// The operators' private protocol hooks (they befriend it).
struct protocol_access {
  /// Builds Op's state for a call and hands it to `f` (the state's type is
  /// private to the operator; its members ops and run() are public).
  template <class Op, class T, class F>
  static void with_state(const Op& op, const call_args<Op, T>& a, const shape& out, F&& f) {
    const typename Op::template state<T> st(op, a, out);
    f(st);
  }

  template <class Op>
  static void check_attributes(const Op& op) {
    op.check_attributes();
  }
  template <class Op, class T>
  static void check_values(const Op& op, const call_args<Op, T>& a) {
    op.check_values(a);
  }
  template <class Op, class T>
  static void check_shape_values(const Op& op, const call_args<Op, T>& a) {
    if constexpr (requires { op.check_shape_values(a); }) op.check_shape_values(a);
  }
  template <class Op, class T>
  static std::array<bool, Op::inputs::size> broadcast_inputs(const Op& op, const call_args<Op, T>& a) {
    if constexpr (requires { op.broadcast_inputs(a); }) {
      return op.broadcast_inputs(a);
    } else {
      std::array<bool, Op::inputs::size> all{};
      all.fill(true);
      return all;
    }
  }
  /// Whether Op declares the driver's hooks for element type T.
  template <class Op, class T>
  static constexpr bool complete =
      requires(const Op& op, const call_args<Op, T>& a, const shape& out, const piece<T, Op::operands::size>& pc) {
        op.check_attributes();
        op.check_values(a);
        requires std::is_constructible_v<typename Op::template state<T>, const Op&, const call_args<Op, T>&,
                                         const shape&>;
        { std::declval<const typename Op::template state<T>&>().ops }
            -> std::convertible_to<std::array<const nd<const T>*, Op::operands::size>>;
        std::declval<const typename Op::template state<T>&>().template run<stage::fake>(pc, true);
        std::declval<const typename Op::template state<T>&>().template run<stage::code>(pc, true);
        std::declval<const typename Op::template state<T>&>().template run<stage::dequant>(pc, true);
      };
  /// Whether Op declares the scalar route's hook (scalar_route) for T.
  template <class Op, class T>
  static constexpr bool has_scalar_route =
      requires(const Op& op, const T* x, T* y, std::size_t n, const std::array<T, Op::inputs::size>& p, bool simd) {
        { op.run_scalars(x, y, n, p, simd) } -> std::same_as<bool>;
      };
  template <class Op, class T>
  static bool run_scalars(const Op& op, const T* x, T* y, std::size_t n, const std::array<T, Op::inputs::size>& p,
                          bool simd) {
    return op.run_scalars(x, y, n, p, simd);
  }
  /// Whether Op declares the row route's hook (row_route) for T.
  template <class Op, class T>
  static constexpr bool has_row_route =
      requires(const Op& op, const T* x, T* y, std::size_t n, const std::array<const T*, Op::inputs::size>& p,
               const std::array<bool, Op::inputs::size>& per_row, bool simd) {
        { op.run_rows(x, y, n, n, n, p, per_row, simd) } -> std::same_as<bool>;
      };
  template <class Op, class T>
  static bool run_rows(const Op& op, const T* x, T* y, std::size_t rows, std::size_t cols, std::size_t blocks,
                       const std::array<const T*, Op::inputs::size>& p,
                       const std::array<bool, Op::inputs::size>& per_row, bool simd) {
    return op.run_rows(x, y, rows, cols, blocks, p, per_row, simd);
  }
  /// Whether Op has integer codes (declares check_codes).
  template <class Op>
  static constexpr bool has_codes = requires(const Op& op, const call_args<Op, float>& a) {
    op.template check_codes<std::int8_t, stage::code>(a);
  };
  template <class C, stage St, class Op, class T>
  static bool check_codes(const Op& op, const call_args<Op, T>& a) {
    return op.template check_codes<C, St>(a);
  }
  /// The shapes of Op's side outputs for a call whose output shape is `out`.
  template <class Op, class T>
  static auto side_shapes(const Op& op, const call_args<Op, T>& a, const shape& out) {
    return op.side_shapes(a, out);
  }
};

/// The outputs of Op's code stage (codes.hpp): `codes`, then the side
/// outputs Op declares in `code_outputs` (e.g. one scale per block).
template <class Op>
struct code_outputs_t {
  using type = names<"codes">;
};
template <class Op>
  requires requires { typename Op::code_outputs; }
struct code_outputs_t<Op> {
  using type = typename Op::code_outputs;
};
template <class Op>
using code_outputs_of = typename code_outputs_t<Op>::type;

/**
 * An element_operator with every private hook of the driver, for float
 * (and double where it accepts double): what a new operator must declare
 * to run through call(), output_shape() and the codes stages.
 */
template <class Op>
concept complete_operator = element_operator<Op> && protocol_access::complete<Op, float> &&
                            (!Op::accepts_double || protocol_access::complete<Op, double>);

/// The output shape of a call: the broadcast of x (named `x_name` in
/// messages) and the inputs that take part.
template <class Op, class T>
shape call_shape(const Op& op, const call_args<Op, T>& a, const char* x_name = "x") {
  constexpr std::size_t N = call_args<Op, T>::size;
  const auto part = protocol_access::broadcast_inputs(op, a);
  // The usual call: one tensor (x) and scalar inputs. Its shape is the
  // broadcast (its element count was checked when the view was read).
  const nd<const T>* only = a.t[0]->rank != 0 ? a.t[0] : nullptr;
  std::size_t tensors = only != nullptr;
  for (std::size_t i = 0; i + 1 < N; ++i)
    if (part[i] && a.t[1 + i]->rank != 0) {
      only = a.t[1 + i];
      ++tensors;
    }
  if (tensors == 0) return shape{};
  if (tensors == 1) return only->get_shape();
  // x and inputs that fit in it (each extent 1 or x's, right-aligned, a
  // per-channel scale): x's shape, without building the others' shapes.
  const nd_geom& xg = *a.t[0];
  bool fits = true;
  for (std::size_t i = 0; i + 1 < N && fits; ++i) {
    const nd_geom& g = *a.t[1 + i];
    if (!part[i] || g.rank == 0) continue;
    fits = g.rank <= xg.rank;
    for (std::size_t r = 0; r < g.rank && fits; ++r) {
      const std::size_t e = g.ext[r], xe = xg.ext[xg.rank - g.rank + r];
      fits = e == 1 || e == xe;
    }
  }
  if (fits) return xg.get_shape();
  // Several tensors: the one broadcast implementation, with the names.
  std::array<shape, N> shapes;
  std::array<const char*, N> names{};
  std::size_t k = 0;
  shapes[k] = a.x().get_shape();
  names[k++] = x_name;
  for (std::size_t i = 0; i + 1 < N; ++i)
    if (part[i]) {
      shapes[k] = a.t[1 + i]->get_shape();
      names[k++] = Op::inputs::c_str[i];
    }
  return broadcast_shapes(shapes.data(), names.data(), k, Op::name);
}

/**
 * Step 2: validates a call before anything is written. `check_out(out)`
 * checks the output (or outputs) against the output shape `out` and the
 * inputs' memory. Returns `out`.
 */
template <class Op, class T, class CheckOut>
shape validate(const Op& op, const call_args<Op, T>& a, const char* x_name, CheckOut&& check_out) {
  protocol_access::check_attributes(op);
  const shape out = call_shape(op, a, x_name);
  check_out(out);
  protocol_access::check_values(op, a);
  return out;
}

/// The output check of the operator itself: y has the output shape, is x
/// itself or shares no byte with x, and shares none with an input.
template <class Op, class T>
void check_y(const call_args<Op, T>& a, const nd<T>& y, const shape& out) {
  check_output(Op::name, y, out);
  check_output_memory<T, Op::inputs::size>(Op::name, y, a.x(), a.named());
}

/// Step 3: builds the operator's state and runs stage St of its kernel
/// over the output shape `out` (from validate) into y; then `after(state)`
/// (the codes stage computes its side outputs there, from the same state).
template <stage St, class Op, class T, class After>
void execute(const Op& op, const call_args<Op, T>& a, const shape& out, nd<T>& y, After&& after) {
  constexpr std::size_t NP = Op::operands::size;
  // The state is built even for an empty output: it may validate (FloatQuant's formats).
  protocol_access::with_state(op, a, out, [&](const auto& st) {
    if (out.count() != 0) {
      const bool simd = simd_enabled();
      const auto run = [&](const piece<T, NP>& pc) { st.template run<St>(pc, simd); };
      const piece_sink<T, NP> sink{&run, [](const void* o, const piece<T, NP>& pc) {
                                     (*static_cast<const decltype(run)*>(o))(pc);
                                   }};
      using state_t = std::remove_cvref_t<decltype(st)>;
      if constexpr (requires { state_t::block_fed; }) {
        // A block format: the last operand is each element's block value
        // (state::block_values(), row-major in the block shape of
        // state::blocks), the others broadcast as usual.
        std::array<const nd<const T>*, NP - 1> params{};
        for (std::size_t i = 0; i + 1 < NP; ++i) params[i] = st.ops[i];
        elementwise_blocks<T, NP>(out, a.x(), params, st.block_values(), y, st.blocks, sink, op.exec);
      } else if constexpr (requires { st.blocks; st.per_block; }) {
        // A block-wise operator whose inputs hold one value per block
        // (group-wise IntQuant): fed by the block step, read in place.
        elementwise_blocks<T, NP>(out, a.x(), st.ops, st.per_block, y, st.blocks, sink, op.exec);
      } else if (!run_dense_constant(out, a.x(), st.ops, y, sink, op.exec) &&
                 !run_dense_rows(out, a.x(), st.ops, y, sink, op.exec)) {
        // (The usual small call, constant operands on dense x and y, and the
        // per-channel call on dense x and y took the direct routes: the same
        // pieces, without the plan's set-up.)
        elementwise(make_engine_plan(out, a.x(), st.ops, y), a.x().data, data_of(st.ops), y.data, sink, op.exec);
      }
    }
    after(st);
  });
}

template <stage St, class Op, class T>
void execute(const Op& op, const call_args<Op, T>& a, const shape& out, nd<T>& y) {
  execute<St>(op, a, out, y, [](const auto&) {});
}

/// The element type of an input view X (x's, for a call).
template <class X>
using x_value_t = std::remove_cv_t<element_t<const X&>>;

/// x's element type for an operator: float, or double where it accepts one.
template <class Op, class X, class Y>
constexpr bool call_types_ok() {
  if constexpr (Op::accepts_double)
    return io_types_ok<X, Y, float, double>();
  else
    return io_types_ok<X, Y, float>();
}

/// Reads x and the inputs `p` of a call as descriptors and hands them to
/// `f(call_args&)`. Scalars are converted to x's element type T.
template <class Op, class T, class F, class X, class... P>
decltype(auto) read_args(F&& f, const X& x, const P&... p) {
  static_assert(sizeof...(P) == Op::inputs::size, "lowbit: wrong number of inputs for this operator");
  const tensor_in<T> xs(x);
  const std::array<tensor_in<T>, sizeof...(P)> ps{{tensor_in<T>(p)...}};
  call_args<Op, T> a;
  a.t[0] = &xs.d;
  for (std::size_t i = 0; i < sizeof...(P); ++i) a.t[1 + i] = &ps[i].d;
  return f(a);
}

/// A tensor argument that is a contiguous sized range (std::span,
/// std::vector, std::array: rank 1), not a view or a scalar.
template <class V>
constexpr bool plain_range_arg = !std::is_arithmetic_v<std::remove_cvref_t<V>> &&
                                 !is_strided_view<std::remove_cvref_t<V>>::value &&
                                 !mdspan_like<std::remove_cvref_t<V>>;

/// Whether a call of Op with these argument types may take the scalar route.
template <class Op, class T, class X, class Y, class... P>
constexpr bool scalar_call = plain_range_arg<X> && plain_range_arg<Y> &&
                             (std::is_arithmetic_v<std::remove_cvref_t<P>> && ...) &&
                             protocol_access::has_scalar_route<Op, T>;

/// Whether a call of Op with these argument types may take the scalar
/// route with x and y views: every input a scalar, x and y views (a
/// strided_view or an mdspan) or contiguous ranges, not both ranges (that
/// is scalar_call).
template <class Op, class T, class X, class Y, class... P>
constexpr bool scalar_view_call = (!plain_range_arg<X> || !plain_range_arg<Y>) &&
                                  (std::is_arithmetic_v<std::remove_cvref_t<P>> && ...) &&
                                  protocol_access::has_scalar_route<Op, T>;

/// Whether `n` bytes at address a and `m` at b share a byte.
inline bool bytes_overlap(std::uintptr_t a, std::uintptr_t n, std::uintptr_t b, std::uintptr_t m) noexcept {
  return a < b + m && b < a + n;
}

/// What the scalar and row routes need of x and y, n elements each,
/// contiguous, at xd and yd: n > 0, y equal to x or apart from it (a
/// partial overlap is the general route's error), one thread, no streaming
/// stores.
template <class Op, class T>
LOWBIT_ALWAYS_INLINE bool route_io_ok(const Op& op, const T* xd, const T* yd, std::size_t n) noexcept {
  if (n == 0 || xd == nullptr || yd == nullptr) return false;
  const auto xa = reinterpret_cast<std::uintptr_t>(xd), ya = reinterpret_cast<std::uintptr_t>(yd);
  const std::uintptr_t bytes = n * sizeof(T);  // the size of an existing tensor
  if (xa != ya && bytes_overlap(xa, bytes, ya, bytes)) return false;
  return n < op.exec.stream_min_elements && parallel_parts(op.exec, n) <= 1;
}

/// The scalar route's common part: x and y of n elements, contiguous, at
/// xd and yd, the attributes checked. Returns false, having written
/// nothing, to leave the call to the general route.
template <class Op, class T, class... P>
LOWBIT_ALWAYS_INLINE bool scalar_route_run(const Op& op, const T* xd, T* yd, std::size_t n, const P&... p) {
  if (!route_io_ok(op, xd, yd, n)) return false;
  return protocol_access::run_scalars(op, xd, yd, n, std::array<T, sizeof...(P)>{static_cast<T>(p)...},
                                      simd_enabled());
}

/**
 * The scalar route of the usual call: every input a scalar, x and y
 * contiguous ranges of the same size, y = x or apart from it, one thread,
 * no streaming stores. The operator's `run_scalars(x, y, n, p, simd)` hook
 * checks the scalars p (converted to T, as the general route converts
 * them), and returns false, having written nothing, when a check fails or
 * the call needs the general route; the general route then makes every
 * check again and throws its message. Otherwise it writes y from the
 * scalars directly (run_splat), with the bits of the general route: no
 * descriptors, state, plan or pieces, which cost two to three times a
 * 256-element IntQuant call (docs/performance.md, "Per-call cost").
 */
template <class Op, class T, class Y, class X, class... P>
LOWBIT_ALWAYS_INLINE bool scalar_route(const Op& op, Y& y, const X& x, const P&... p) {
  protocol_access::check_attributes(op);  // the general route's first check, and its message
  const auto n = static_cast<std::size_t>(std::ranges::size(x));
  if (static_cast<std::size_t>(std::ranges::size(y)) != n) return false;
  return scalar_route_run(op, std::ranges::data(x), std::ranges::data(y), n, p...);
}

/**
 * The scalar route with views: x and y strided views or mdspans (or one of
 * them a contiguous range) of the same shape, both dense row-major, every
 * input a scalar; then as scalar_route. The views are read as the general
 * route reads them (y first, then x: the same checks and messages), and a
 * call this route declines goes to the general route, which reads them
 * again. Without it such a call paid the general route's fixed cost, four
 * times the scalar route's (docs/performance.md, "Per-call cost").
 */
template <class Op, class T, class Y, class X, class... P>
LOWBIT_ALWAYS_INLINE bool scalar_view_route(const Op& op, Y& y, const X& x, const P&... p) {
  nd_geom yg, xg;
  T* yd = fill_nd(y, yg);
  const T* xd = fill_nd(x, xg);
  protocol_access::check_attributes(op);  // the general route's first check after reading the views
  // One shape, both dense row-major (the direct routes' test).
  const shape s = xg.get_shape();
  if (!dense_row_major(xg, s) || !dense_row_major(yg, s)) return false;
  return scalar_route_run(op, xd, yd, s.count(), p...);
}

/// Whether an input argument of a call on T may take the row route: a
/// scalar, or a view or contiguous range of T (any other, and the general
/// route's checks and messages apply).
template <class P, class T>
constexpr bool row_input_arg() {
  using R = std::remove_cvref_t<P>;
  if constexpr (std::is_arithmetic_v<R>)
    return true;
  else if constexpr (tensor_arg<const P&>)
    return std::is_same_v<scalar_value_t<const P&>, T>;
  else
    return false;
}

/// Whether a call of Op with these argument types may take the row route:
/// some input a tensor, every input a scalar or a tensor of x's element
/// type, x and y tensors.
template <class Op, class T, class X, class Y, class... P>
constexpr bool row_call = !(std::is_arithmetic_v<std::remove_cvref_t<P>> && ...) && (row_input_arg<P, T>() && ...) &&
                          protocol_access::has_row_route<Op, T>;

/**
 * The row route of the per-channel call: x and y dense row-major tensors of
 * the same shape, every input a scalar, a tensor of one element, or a
 * tensor of one value per row (a scale of shape [C, 1] for x of [C, W], or
 * [1, C, 1, 1] for [1, C, H, W]: rows_split and per_row_operand, the test
 * of the engine's per-channel route), dense, or of one value per row of
 * each of `blocks` blocks (the same [1, C, 1, 1] for x of [N, C, H, W]: N
 * blocks of C rows; every such input with the same block); rows of any
 * length (shorter than a batch: run_short_rows); one
 * thread, no streaming stores; y is x or shares no byte with it, and
 * shares none with any input. The views are read as the general route
 * reads them (y, x, then the inputs in order: the same checks and
 * messages). Then the operator's `run_rows` hook checks every value and
 * runs the row loop on the row-mode piece the engine would build
 * (rows_piece); with every input one value, on one row of all the elements
 * (not the scalar route's hook, whose loop of its own would be compiled
 * for every call site with a tensor parameter). A call it declines goes to
 * the general route, which reads and checks everything again and throws
 * its message. Without it a per-channel call paid the general route's
 * fixed cost, 200-300 ns (docs/performance.md, "The row route").
 */
template <class Op, class T, class Y, class X, class... P>
bool row_route(const Op& op, Y& y, const X& x, const P&... p) {
  constexpr std::size_t N = sizeof...(P);
  // The tensor inputs' geometry only (a few hundred bytes less to clear).
  constexpr std::size_t NT = (std::size_t(!std::is_arithmetic_v<std::remove_cvref_t<P>>) + ...);
  nd_geom yg, xg;
  T* yd = fill_nd(y, yg);
  const T* xd = fill_nd(x, xg);
  std::array<nd_geom, NT> tg;
  std::array<std::size_t, NT> ti{};  // input index of each tensor input
  std::array<const T*, N> pd{};
  std::array<T, N> values{};
  std::size_t i = 0, t = 0;
  const auto read = [&](const auto& v) {
    using V = std::remove_cvref_t<decltype(v)>;
    if constexpr (std::is_arithmetic_v<V>) {
      values[i] = static_cast<T>(v);
    } else {
      ti[t] = i;
      pd[i] = fill_nd(v, tg[t++]);
    }
    ++i;
  };
  (read(p), ...);
  protocol_access::check_attributes(op);  // the general route's first check after reading the arguments
  const shape s = xg.get_shape();
  if (!dense_row_major(xg, s) || !dense_row_major(yg, s)) return false;
  const std::size_t count = s.count();
  if (!route_io_ok(op, xd, yd, count)) return false;
  const auto ya = reinterpret_cast<std::uintptr_t>(yd);
  const std::uintptr_t bytes = count * sizeof(T);
  std::array<const nd_geom*, NT> gs;
  for (std::size_t j = 0; j < NT; ++j) gs[j] = &tg[j];
  std::size_t k = 0, rows = 1, cols = 1;
  if (!rows_split(s, gs.data(), NT, k, rows, cols)) return false;
  std::array<bool, N> per_row{};
  std::size_t block_rows = 0;  // the rows of a block: the per-row inputs' period, all the same
  for (std::size_t j = 0; j < NT; ++j) {
    const std::size_t in = ti[j];
    bool one = true;
    std::size_t period = 0;
    if (pd[in] == nullptr || !per_row_operand(tg[j], s, k, one, period)) return false;
    if (!one) {
      if (block_rows != 0 && period != block_rows) return false;
      block_rows = period;
    }
    per_row[in] = !one;
    // An input y writes over: the general route's error.
    if (bytes_overlap(reinterpret_cast<std::uintptr_t>(pd[in]), (one ? 1 : period) * sizeof(T), ya, bytes))
      return false;
    if (one) values[in] = *pd[in];
  }
  for (std::size_t j = 0; j < N; ++j)
    if (!per_row[j]) pd[j] = &values[j];
  // Every input one value (k = 0): one row of all the elements, on the
  // kernels the general route compiles anyway. A period divides rows (a
  // product of out's extents over the rows' last dimensions), nonzero.
  if (block_rows == 0) block_rows = rows;
  const std::size_t blocks = block_rows == rows ? 1 : rows / block_rows;
  return protocol_access::run_rows(op, xd, yd, block_rows, cols, blocks, pd, per_row, simd_enabled());
}

/// An operator's operator(): `op(x, inputs..., y)`, stage fake.
template <class Op, class Y, class X, class... P>
void call(const Op& op, Y&& y, const X& x, const P&... p) {
  static_assert(complete_operator<Op>, "lowbit: this operator does not declare the protocol's hooks (detail/driver.hpp)");
  if constexpr (call_types_ok<Op, X, Y>()) {
    using T = x_value_t<X>;
    if constexpr (scalar_call<Op, T, X, Y, P...>) {
      if (scalar_route<Op, T>(op, y, x, p...)) return;
    } else if constexpr (scalar_view_call<Op, T, X, Y, P...>) {
      if (scalar_view_route<Op, T>(op, y, x, p...)) return;
    } else if constexpr (row_call<Op, T, X, Y, P...>) {
      if (row_route<Op, T>(op, y, x, p...)) return;
    }
    nd<T> yd = output_nd<T>(std::forward<Y>(y));
    read_args<Op, T>(
        [&](const call_args<Op, T>& a) {
          const shape out = validate(op, a, "x", [&](const shape& s) { check_y(a, yd, s); });
          execute<stage::fake>(op, a, out, yd);
        },
        x, p...);
  }
}

/// An operator's output_shape(): the attributes checked as a call checks
/// them (the shape checks may read them: group_int_quant's group size), the
/// broadcast shape, and the value checks the shape depends on.
template <class Op, class X, class... P>
shape call_output_shape(const Op& op, const X& x, const P&... p) {
  if constexpr (!call_types_ok<Op, X, void>()) {
    return shape{};
  } else {
    using T = x_value_t<X>;
    return read_args<Op, T>(
        [&](const call_args<Op, T>& a) {
          protocol_access::check_attributes(op);
          const shape out = call_shape(op, a);
          protocol_access::check_shape_values(op, a);
          return out;
        },
        x, p...);
  }
}

LOWBIT_END_DETAIL_NAMESPACE  // namespace lowbit::detail

#endif  // LOWBIT_DETAIL_DRIVER_HPP
