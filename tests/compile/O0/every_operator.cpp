// SPDX-License-Identifier: Apache-2.0
// Compile-only test, built at -O0 (lowbit-compile-O0-tests): every operator,
// both semantics, float and double where accepted, and the codes stages
// instantiate without optimisation. GCC defines some AVX-512 intrinsics as
// macros at -O0, which xsimd 8.1's int32 select could not pass a batch to:
// FloatQuant and Trunc did not compile there on AVX-512BW targets.
#include <cstdint>
#include <vector>

#include <lowbit/lowbit.hpp>

namespace {

template <lowbit::semantics S, class T>
void every_operator(lowbit::rounding_mode mode) {
  std::vector<T> x{T(0.3), T(-1.25), T(2.5), T(7)}, y(x.size());
  std::vector<std::int8_t> codes(x.size());
  lowbit::int_quant<S> iq{.rounding = mode};
  iq(x, T(0.5), T(0), T(4), y);
  lowbit::quantize_codes(iq, x, T(0.5), T(0), T(4), codes);
  lowbit::dequantize(iq, codes, T(0.5), T(0), T(4), y);
  lowbit::trunc<S> tr{.rounding = mode};
  tr(x, T(0.5), T(0), T(8), T(2), T(4), y);
  lowbit::trunc_v1<S> tr1{.rounding = mode};
  tr1(x, T(1), T(0), T(8), T(4), y);
  lowbit::bipolar_quant<S> bq;
  bq(x, T(0.5), y);
  if constexpr (std::is_same_v<T, float>) {
    lowbit::float_quant<S> fq{.rounding = mode};
    fq(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y);
    lowbit::minifloat_quant<S> mq{.format = lowbit::formats::fp8_e4m3fn, .rounding = mode};
    mq(x, 1.0f, y);
    std::vector<std::uint8_t> bits(x.size());
    lowbit::quantize_codes(mq, x, 1.0f, bits);
    lowbit::dequantize(mq, bits, 1.0f, y);
  }
}

}  // namespace

void lowbit_compile_O0_every_operator(lowbit::rounding_mode mode) {
  every_operator<lowbit::semantics::reference, float>(mode);
  every_operator<lowbit::semantics::exact, float>(mode);
  every_operator<lowbit::semantics::reference, double>(mode);
  every_operator<lowbit::semantics::exact, double>(mode);
}
