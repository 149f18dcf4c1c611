// SPDX-License-Identifier: Apache-2.0
// Compile-only: a minimal mock with the mdspan interface (std::mdspan /
// Kokkos::mdspan members that lowbit reads) is accepted by the operators.
// Built but never run; if this file compiles, the mdspan path works.
#include <lowbit/lowbit.hpp>

#include <array>
#include <cstddef>

namespace {

template <class T, std::size_t R>
struct mock_mdspan {
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using data_handle_type = T*;
  using reference = T&;
  using rank_type = std::size_t;
  using index_type = std::size_t;

  T* ptr;
  std::array<std::size_t, R> ext;
  std::array<std::size_t, R> str;

  static constexpr rank_type rank() noexcept { return R; }
  constexpr index_type extent(rank_type r) const noexcept { return ext[r]; }
  // As in std::mdspan and Kokkos::mdspan: the member exists for every rank,
  // but its body (the mapping's stride(), which requires rank > 0) does not
  // compile for rank 0, so lowbit must never call it there.
  constexpr index_type stride(rank_type r) const {
    static_assert(R > 0, "mock_mdspan: stride() of a rank-0 mdspan");
    return str[r];
  }
  constexpr data_handle_type data_handle() const noexcept { return ptr; }
  static constexpr bool is_always_exhaustive() noexcept { return false; }
};

static_assert(lowbit::mdspan_like<mock_mdspan<float, 4>>);
static_assert(lowbit::mdspan_like<mock_mdspan<const double, 0>>);
static_assert(lowbit::tensor_arg<mock_mdspan<const float, 2>>);

// A view whose data handle is not a raw pointer cannot feed SIMD loads.
struct fancy_handle_view : mock_mdspan<float, 1> {
  using data_handle_type = const void*;
};
static_assert(!lowbit::mdspan_like<fancy_handle_view>);

}  // namespace

void lowbit_compile_test_mdspan(float* x, float* scale, float* y) {
  mock_mdspan<const float, 4> xv{x, {2, 3, 4, 5}, {60, 20, 5, 1}};
  mock_mdspan<const float, 4> sv{scale, {1, 3, 1, 1}, {3, 1, 1, 1}};
  mock_mdspan<float, 4> yv{y, {2, 3, 4, 5}, {60, 20, 5, 1}};
  lowbit::int_quant<> op;
  op(xv, sv, 0.0f, 8.0f, yv);
  lowbit::int_quant<lowbit::semantics::exact>{}(xv, sv, mock_mdspan<const float, 0>{scale, {}, {}}, 4, yv);
}
