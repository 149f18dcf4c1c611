// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/codes.hpp: integer and minifloat codes, and the
// way back. The central property: dequantize(quantize_codes(x)) is the
// operator's fake-quantized output, bit for bit.
#include <lowbit/codes.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/catch.hpp"
#include "support/checks.hpp"
#include "support/test_util.hpp"

using lowbit::minifloat_format;
using lowbit::rounding_mode;
using lowbit::semantics;
using lowbit::shape;
using lowbit::strided_view;
using lowbit_test::bits;
using lowbit_test::inf;
using lowbit_test::nan_f;

namespace {

/// mixed_values without NaN (no integer code) and, if `finite`, without +-inf.
std::vector<float> code_values(std::size_t n, std::uint32_t seed, bool finite = false, float cap = 0) {
  std::vector<float> v = lowbit_test::mixed_values<float>(n, seed);
  for (float& e : v) {
    if (std::isnan(e) || (finite && std::isinf(e))) e = 1.25f;
    if (cap > 0 && !(std::fabs(e) <= cap)) e = std::copysign(cap, e);
  }
  return v;
}

/// got == want bit for bit, except that a -0 of want may come back as +0:
/// an integer code has no sign of zero (docs/codes.md). Counts those zeros.
template <class T>
std::size_t require_same_bits_but_zero_sign(const std::vector<T>& got, const std::vector<T>& want) {
  REQUIRE(got.size() == want.size());
  std::size_t zeros = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (bits(got[i]) == bits(want[i])) continue;
    if (want[i] == T(0) && std::signbit(want[i]) && bits(got[i]) == bits(T(0))) {
      ++zeros;
      continue;
    }
    INFO("first difference at " << i << ": got " << lowbit_test::show(got[i]) << ", want "
                                << lowbit_test::show(want[i]));
    CHECK(false);
    break;
  }
  return zeros;
}

/// codes stay bit-identical through a call that throws lowbit::error.
template <class C, class F>
void check_codes_rejected(F&& call, std::vector<C>& codes, const char* needle) {
  const std::vector<C> before = codes;
  REQUIRE_THROWS_AS(call(), lowbit::error);
  REQUIRE_THROWS_WITH(call(), lowbit_test::contains_substring(needle));
  CHECK(codes == before);
}

template <class C, semantics S>
void int_quant_round_trip(bool is_signed, bool narrow, rounding_mode m, float bw) {
  // [4, 33]: per-channel scale, zero point and (optionally) bit width.
  const shape xs{4, 33};
  const std::vector<float> x = code_values(xs.count(), 11 + static_cast<unsigned>(m));
  const std::vector<float> scale{0.5f, 0.3f, 2.0f, 0.0625f};
  const std::vector<float> zp = is_signed ? std::vector<float>{0.0f, 1.0f, -2.0f, 0.5f}
                                          : std::vector<float>{0.0f, 3.0f, 1.0f, 0.5f};
  const strided_view<const float> xv(x.data(), xs), sv(scale.data(), {4, 1}), zv(zp.data(), {4, 1});
  const lowbit::int_quant<S> op{.is_signed = is_signed, .narrow = narrow, .rounding = m};
  std::vector<float> want(xs.count()), got(xs.count(), -7.0f);
  op(xv, sv, zv, bw, strided_view<float>(want.data(), xs));
  std::vector<C> c(xs.count());
  lowbit::quantize_codes(op, xv, sv, zv, bw, strided_view<C>(c.data(), xs));
  lowbit::dequantize(op, strided_view<const C>(c.data(), xs), sv, zv, bw, strided_view<float>(got.data(), xs));
  INFO("signed " << is_signed << " narrow " << narrow << " mode " << static_cast<int>(m) << " bw " << bw);
  require_same_bits_but_zero_sign(got, want);
}

}  // namespace

TEST_CASE("codes: int_quant code values", "[codes]") {
  std::vector<float> x{0.26f, -1.3f, 7.9f, 100.0f, -100.0f, -0.0f};
  std::vector<std::int8_t> c(x.size());
  lowbit::quantize_codes(lowbit::int_quant<>{.is_signed = true}, x, 0.5f, 0.0f, 4.0f, c);
  CHECK(c == std::vector<std::int8_t>{1, -3, 7, 7, -8, 0});
  lowbit::quantize_codes(lowbit::int_quant<>{.is_signed = true, .narrow = true}, x, 0.5f, 0.0f, 4.0f, c);
  CHECK(c == std::vector<std::int8_t>{1, -3, 7, 7, -7, 0});
  std::vector<std::uint8_t> u(x.size());
  // The zero point is part of the code, as in ONNX QuantizeLinear.
  lowbit::quantize_codes(lowbit::int_quant<>{.is_signed = false}, x, 0.5f, 8.0f, 4.0f, u);
  CHECK(u == std::vector<std::uint8_t>{9, 5, 15, 15, 0, 8});
  lowbit::quantize_codes(lowbit::int_quant<>{.is_signed = false, .rounding = rounding_mode::floor}, x, 0.25f,
                         0.0f, 8.0f, u);
  CHECK(u == std::vector<std::uint8_t>{1, 0, 31, 255, 0, 0});
  std::vector<std::int16_t> s16(x.size());
  lowbit::quantize_codes(lowbit::int_quant<>{}, x, 1.0f / 128, 0.0f, 16.0f, s16);
  CHECK(s16 == std::vector<std::int16_t>{33, -166, 1011, 12800, -12800, 0});
}

TEST_CASE("codes: int_quant dequantize(quantize_codes(x)) is the fake-quantized output", "[codes]") {
  for (rounding_mode m : lowbit::all_rounding_modes) {
    int_quant_round_trip<std::int8_t, semantics::reference>(true, false, m, 4.0f);
    int_quant_round_trip<std::int8_t, semantics::exact>(true, true, m, 8.0f);
    int_quant_round_trip<std::uint8_t, semantics::reference>(false, false, m, 8.0f);
    int_quant_round_trip<std::uint8_t, semantics::exact>(false, true, m, 3.0f);
    int_quant_round_trip<std::int16_t, semantics::reference>(true, false, m, 16.0f);
    int_quant_round_trip<std::uint16_t, semantics::exact>(false, false, m, 16.0f);
    int_quant_round_trip<std::int32_t, semantics::reference>(true, false, m, 24.0f);
    int_quant_round_trip<std::int32_t, semantics::reference>(false, false, m, 30.0f);
    int_quant_round_trip<std::int32_t, semantics::exact>(true, false, m, 32.0f);
    int_quant_round_trip<std::int8_t, semantics::reference>(true, false, m, 1.0f);  // bipolar
    int_quant_round_trip<std::int8_t, semantics::exact>(true, false, m, 1.0f);
  }
}

TEST_CASE("codes: an integer code has no sign of zero", "[codes]") {
  // Small negative inputs fake-quantize to -0 ((-0 - 0) * scale); their
  // code is 0, which dequantizes to +0. The sign of a zero is the only
  // difference the round trip allows.
  const std::vector<float> x{-0.3f, -0.0f, 0.3f, -0.7f};
  std::vector<float> want(4), got(4);
  const lowbit::int_quant<> op{};
  op(x, 1.0f, 0.0f, 8.0f, want);
  std::vector<std::int8_t> c(4);
  lowbit::quantize_codes(op, x, 1.0f, 0.0f, 8.0f, c);
  CHECK(c == std::vector<std::int8_t>{0, 0, 0, -1});
  lowbit::dequantize(op, c, 1.0f, 0.0f, 8.0f, got);
  CHECK(bits(want[0]) == bits(-0.0f));
  CHECK(bits(got[0]) == bits(0.0f));
  // x = -0 is not one of them: -0 / 1 + 0 is +0 before rounding.
  CHECK(bits(want[1]) == bits(0.0f));
  CHECK(require_same_bits_but_zero_sign(got, want) == 1);
  // A negative scale (reference semantics, as QONNX): +0 out, -0 back.
  // 0.3 / -1 = -0.3 rounds to -0; (-0 - 0) * -1 = +0; code 0 gives (0 - 0) * -1 = -0.
  const std::vector<float> xn{0.3f, 2.0f};
  std::vector<float> wn(2), gn(2);
  std::vector<std::int8_t> c2(2);
  op(xn, -1.0f, 0.0f, 8.0f, wn);
  lowbit::quantize_codes(op, xn, -1.0f, 0.0f, 8.0f, c2);
  lowbit::dequantize(op, c2, -1.0f, 0.0f, 8.0f, gn);
  CHECK(c2 == std::vector<std::int8_t>{0, -2});
  CHECK(bits(wn[0]) == bits(0.0f));
  CHECK(bits(gn[0]) == bits(-0.0f));
  CHECK(bits(gn[1]) == bits(wn[1]));
  CHECK(bits(wn[1]) == bits(2.0f));
}

TEST_CASE("codes: per-channel bit widths and double tensors", "[codes]") {
  const shape xs{4, 9};
  const std::vector<double> x = lowbit_test::mixed_values<double>(xs.count(), 5);
  std::vector<double> xc = x;
  for (double& v : xc)
    if (std::isnan(v)) v = 0.75;
  const std::vector<double> bw{1, 2, 4, 8};  // 1: bipolar channel
  const strided_view<const double> xv(xc.data(), xs), bv(bw.data(), {4, 1});
  for (rounding_mode m : lowbit::all_rounding_modes) {
    const lowbit::int_quant<> op{.is_signed = true, .rounding = m};
    std::vector<double> want(xs.count()), got(xs.count());
    op(xv, 0.25, 0.0, bv, strided_view<double>(want.data(), xs));
    std::vector<std::int8_t> c(xs.count());
    lowbit::quantize_codes(op, xv, 0.25, 0.0, bv, strided_view<std::int8_t>(c.data(), xs));
    lowbit::dequantize(op, strided_view<const std::int8_t>(c.data(), xs), 0.25, 0.0, bv,
                       strided_view<double>(got.data(), xs));
    require_same_bits_but_zero_sign(got, want);
    for (std::size_t j = 0; j < 9; ++j) CHECK((c[j] == 1 || c[j] == -1));
  }
}

TEST_CASE("codes: strided codes and broadcast to a higher rank", "[codes]") {
  // x [3] broadcast against a per-channel scale [2, 1] -> codes [2, 3],
  // written every other element of a buffer.
  const std::vector<float> x{0.4f, -1.2f, 3.0f};
  const std::vector<float> scale{0.5f, 0.25f};
  std::vector<std::int8_t> buf(12, 99);
  const lowbit::int_quant<> op{};
  lowbit::quantize_codes(op, x, strided_view<const float>(scale.data(), {2, 1}), 0.0f, 4.0f,
                         strided_view<std::int8_t>(buf.data(), {2, 3}, {6, 2}));
  CHECK(buf == std::vector<std::int8_t>{1, 99, -2, 99, 6, 99, 2, 99, -5, 99, 7, 99});
  std::vector<float> y(6), want(6);
  lowbit::dequantize(op, strided_view<const std::int8_t>(buf.data(), {2, 3}, {6, 2}),
                     strided_view<const float>(scale.data(), {2, 1}), 0.0f, 4.0f,
                     strided_view<float>(y.data(), {2, 3}));
  op(x, strided_view<const float>(scale.data(), {2, 1}), 0.0f, 4.0f, strided_view<float>(want.data(), {2, 3}));
  lowbit_test::require_same_bits(y, want);
}

TEST_CASE("codes: code types that cannot hold the range are rejected, nothing written", "[codes]") {
  std::vector<float> x{1.0f, 2.0f};
  std::vector<std::int8_t> c{42, 43};
  std::vector<std::uint8_t> u{42, 43};
  std::vector<std::int32_t> c32{42, 43};
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::int_quant<>{}, x, 1.0f, 0.0f, 9.0f, c); }, c,
                       "int8 codes cannot hold the range [-256, 255] of bitwidth = 9 (signed)");
  check_codes_rejected(
      [&] { lowbit::quantize_codes(lowbit::int_quant<>{.is_signed = false}, x, 1.0f, 0.0f, 8.0f, c); }, c,
      "[0, 255]");
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::int_quant<>{}, x, 1.0f, 0.0f, 4.0f, u); }, u,
                       "bitwidth = 4 with uint8 codes and signed = 1");
  // QONNX's int32 maximum is 2^31 (float32), which int32 cannot hold; the
  // exact semantics' maximum 2147483520 fits.
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::int_quant<>{}, x, 1.0f, 0.0f, 32.0f, c32); }, c32,
                       "[-2147483648, 2147483648]");
  lowbit::quantize_codes(lowbit::int_quant<semantics::exact>{}, x, 1.0f, 0.0f, 32.0f, c32);
  CHECK(c32 == std::vector<std::int32_t>{1, 2});
  check_codes_rejected(
      [&] {
        lowbit::quantize_codes(lowbit::trunc<>{.is_signed = false}, x, 1.0f, 0.0f, 12.0f, 1.0f, 10.0f, u);
      },
      u, "out_bitwidth = 10 (unsigned)");
  // Bad parameters are reported as the operator reports them.
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::int_quant<>{}, x, 1.0f, 0.0f, 0.5f, c); }, c,
                       "bitwidth = 0.5 is invalid");
  std::vector<std::int8_t> wrong(3, 7);
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::int_quant<>{}, x, 1.0f, 0.0f, 4.0f, wrong); }, wrong,
                       "codes has shape [3]; expected the broadcast shape [2]");
}

TEST_CASE("codes: NaN has no integer code, except in QONNX's bipolar path", "[codes]") {
  std::vector<float> x{1.0f, nan_f, 2.0f};
  std::vector<std::int8_t> c{5, 5, 5};
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::int_quant<>{}, x, 1.0f, 0.0f, 4.0f, c); }, c,
                       "codes[1] would be q = NaN (x = nan); expected a number");
  check_codes_rejected(
      [&] { lowbit::quantize_codes(lowbit::int_quant<semantics::exact>{}, x, 1.0f, 0.0f, 1.0f, c); }, c,
      "codes[1] would be q = NaN");
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::bipolar_quant<semantics::exact>{}, x, 1.0f, c); }, c,
                       "NaN has no integer code");
  // Reference: NaN takes the -1 branch of np.where.
  lowbit::quantize_codes(lowbit::int_quant<>{}, x, 1.0f, 0.0f, 1.0f, c);
  CHECK(c == std::vector<std::int8_t>{1, -1, 1});
  lowbit::quantize_codes(lowbit::bipolar_quant<>{}, x, 1.0f, c);
  CHECK(c == std::vector<std::int8_t>{1, -1, 1});
  // 0 / 0 in the reference semantics (a zero scale) is NaN too.
  std::vector<float> z{0.0f};
  std::vector<std::int8_t> cz{3};
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::int_quant<>{}, z, 0.0f, 0.0f, 4.0f, cz); }, cz,
                       "q = NaN");
}

TEST_CASE("codes: bipolar codes as +-1 and as bits", "[codes]") {
  const std::vector<float> x{0.3f, -0.0f, -2.0f, 5.0f, -1e-30f};
  std::vector<std::int8_t> pm(x.size());
  std::vector<std::uint8_t> b(x.size());
  lowbit::bipolar_quant<> op{};
  lowbit::quantize_codes(op, x, 0.5f, pm);
  lowbit::quantize_codes(op, x, 0.5f, b);
  CHECK(pm == std::vector<std::int8_t>{1, 1, -1, 1, -1});
  CHECK(b == std::vector<std::uint8_t>{1, 1, 0, 1, 0});
  std::vector<float> y1(x.size()), y2(x.size()), want(x.size());
  op(x, 0.5f, want);
  lowbit::dequantize(op, pm, 0.5f, y1);
  lowbit::dequantize(op, b, 0.5f, y2);
  lowbit_test::require_same_bits(y1, want);
  lowbit_test::require_same_bits(y2, want);
  // Signed 1-bit IntQuant: the same bits.
  lowbit::int_quant<> iq{.is_signed = true};
  lowbit::quantize_codes(iq, x, 0.5f, 0.25f, 1.0f, b);
  CHECK(b == std::vector<std::uint8_t>{1, 1, 0, 1, 1});
  iq(x, 0.5f, 0.25f, 1.0f, want);
  lowbit::dequantize(iq, b, 0.5f, 0.25f, 1.0f, y2);
  lowbit_test::require_same_bits(y2, want);
  // A byte that is not a bit.
  std::vector<std::uint8_t> bad{1, 0, 2};
  std::vector<float> y(3, 9.0f);
  lowbit_test::check_rejected([&] { lowbit::dequantize(op, bad, 0.5f, y); }, y,
                              "codes[2] = 2 is invalid; expected a bit");
}

TEST_CASE("codes: trunc and trunc_v1 round trips", "[codes]") {
  const shape xs{3, 21};
  const std::vector<float> x = code_values(xs.count(), 21, false, 1e6f);
  const std::vector<float> out_scale{2.0f, 4.0f, 0.5f};
  const strided_view<const float> xv(x.data(), xs), ov(out_scale.data(), {3, 1});
  for (rounding_mode m : lowbit::all_rounding_modes) {
    INFO("mode " << static_cast<int>(m));
    {
      const lowbit::trunc<> op{.is_signed = true, .rounding = m};
      std::vector<float> want(xs.count()), got(xs.count());
      op(xv, 0.5f, 1.0f, 8.0f, ov, 4.0f, strided_view<float>(want.data(), xs));
      std::vector<std::int8_t> c(xs.count());
      lowbit::quantize_codes(op, xv, 0.5f, 1.0f, 8.0f, ov, 4.0f, strided_view<std::int8_t>(c.data(), xs));
      for (auto v : c) CHECK((v >= -8 && v <= 7));
      lowbit::dequantize(op, strided_view<const std::int8_t>(c.data(), xs), 0.5f, 1.0f, 8.0f, ov, 4.0f,
                         strided_view<float>(got.data(), xs));
      require_same_bits_but_zero_sign(got, want);
    }
    {
      const lowbit::trunc<semantics::exact> op{.is_signed = false, .rounding = m};
      std::vector<float> want(xs.count()), got(xs.count());
      op(xv, 0.25f, 0.0f, 8.0f, 1.0f, 6.0f, strided_view<float>(want.data(), xs));
      std::vector<std::uint8_t> c(xs.count());
      lowbit::quantize_codes(op, xv, 0.25f, 0.0f, 8.0f, 1.0f, 6.0f, strided_view<std::uint8_t>(c.data(), xs));
      lowbit::dequantize(op, strided_view<const std::uint8_t>(c.data(), xs), 0.25f, 0.0f, 8.0f, 1.0f, 6.0f,
                         strided_view<float>(got.data(), xs));
      require_same_bits_but_zero_sign(got, want);
    }
    {
      const lowbit::trunc_v1<> op{.rounding = m};
      std::vector<float> want(xs.count()), got(xs.count());
      op(xv, 1.0f, 0.0f, 12.0f, 4.0f, strided_view<float>(want.data(), xs));
      std::vector<std::int32_t> c(xs.count());
      lowbit::quantize_codes(op, xv, 1.0f, 0.0f, 12.0f, 4.0f, strided_view<std::int32_t>(c.data(), xs));
      lowbit::dequantize(op, strided_view<const std::int32_t>(c.data(), xs), 1.0f, 0.0f, 12.0f, 4.0f,
                         strided_view<float>(got.data(), xs));
      require_same_bits_but_zero_sign(got, want);
    }
  }
  // Trunc v1 does not clamp: a q beyond the code type is an error.
  std::vector<float> big{1000.0f, 1.0f};
  std::vector<std::int8_t> c{0, 0};
  check_codes_rejected(
      [&] { lowbit::quantize_codes(lowbit::trunc_v1<>{}, big, 1.0f, 0.0f, 8.0f, 8.0f, c); }, c,
      "codes[0] would be q = 1000 (x = 1000); expected an integer from -128 to 127 (int8 codes)");
}

TEST_CASE("codes: OCP FP8 bit patterns", "[codes][minifloat]") {
  namespace f = lowbit::formats;
  auto dec = [](const minifloat_format& fm, std::uint32_t c) { return lowbit::decode_minifloat(fm, c); };
  // E4M3FN: bias 7, no inf, S.1111.111 NaN.
  CHECK(bits(dec(f::fp8_e4m3fn, 0x00)) == bits(0.0f));
  CHECK(bits(dec(f::fp8_e4m3fn, 0x80)) == bits(-0.0f));
  CHECK(dec(f::fp8_e4m3fn, 0x01) == 0x1p-9f);
  CHECK(dec(f::fp8_e4m3fn, 0x07) == 7 * 0x1p-9f);
  CHECK(dec(f::fp8_e4m3fn, 0x08) == 0x1p-6f);
  CHECK(dec(f::fp8_e4m3fn, 0x38) == 1.0f);
  CHECK(dec(f::fp8_e4m3fn, 0x7e) == 448.0f);
  CHECK(dec(f::fp8_e4m3fn, 0xfe) == -448.0f);
  CHECK(dec(f::fp8_e4m3fn, 0x78) == 256.0f);
  CHECK(std::isnan(dec(f::fp8_e4m3fn, 0x7f)));
  CHECK(std::isnan(dec(f::fp8_e4m3fn, 0xff)));
  // E5M2: bias 15, IEEE-like.
  CHECK(dec(f::fp8_e5m2, 0x01) == 0x1p-16f);
  CHECK(dec(f::fp8_e5m2, 0x04) == 0x1p-14f);
  CHECK(dec(f::fp8_e5m2, 0x3c) == 1.0f);
  CHECK(dec(f::fp8_e5m2, 0x7b) == 57344.0f);
  CHECK(dec(f::fp8_e5m2, 0x7c) == inf);
  CHECK(dec(f::fp8_e5m2, 0xfc) == -inf);
  for (std::uint32_t c : {0x7du, 0x7eu, 0x7fu, 0xffu}) CHECK(std::isnan(dec(f::fp8_e5m2, c)));
  // MX FP4 E2M1 and FP6.
  const float e2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (std::uint32_t c = 0; c < 8; ++c) {
    CHECK(dec(f::fp4_e2m1, c) == e2m1[c]);
    CHECK(bits(dec(f::fp4_e2m1, c | 8)) == bits(-e2m1[c]));
  }
  CHECK(dec(f::fp6_e2m3, 0x1f) == 7.5f);
  CHECK(dec(f::fp6_e2m3, 0x01) == 0.125f);
  CHECK(dec(f::fp6_e3m2, 0x1f) == 28.0f);
  CHECK(dec(f::fp6_e3m2, 0x01) == 0.0625f);
  // encode is the inverse on every non-NaN pattern.
  for (const minifloat_format& fm : {f::fp8_e4m3fn, f::fp8_e5m2, f::fp6_e2m3, f::fp6_e3m2, f::fp4_e2m1}) {
    const std::uint32_t n = 1u << (1 + fm.exponent_bits + fm.mantissa_bits);
    for (std::uint32_t c = 0; c < n; ++c) {
      const float v = dec(fm, c);
      if (std::isnan(v)) continue;
      INFO("code " << c);
      CHECK(lowbit::encode_minifloat(fm, v) == c);
    }
  }
  CHECK(lowbit::encode_minifloat(f::fp8_e4m3fn, nan_f) == 0x7fu);
  CHECK(lowbit::encode_minifloat(f::fp8_e5m2, nan_f) == 0x7fu);
  CHECK_THROWS_WITH(lowbit::encode_minifloat(f::fp8_e4m3fn, 0.3f), lowbit_test::contains_substring("off the grid"));
  CHECK_THROWS_WITH(lowbit::encode_minifloat(f::fp8_e4m3fn, 480.0f),
                    lowbit_test::contains_substring("falls on the NaN pattern"));
  CHECK_THROWS_WITH(lowbit::encode_minifloat(f::fp8_e4m3fn, 512.0f),
                    lowbit_test::contains_substring("beyond the range"));
  CHECK_THROWS_WITH(lowbit::encode_minifloat(f::fp8_e4m3fn, inf), lowbit_test::contains_substring("no infinities"));
  CHECK_THROWS_WITH(lowbit::encode_minifloat(f::fp4_e2m1, nan_f), lowbit_test::contains_substring("has no NaN"));
  CHECK_THROWS_WITH(lowbit::encode_minifloat(f::fp8_e5m2, 65536.0f),
                    lowbit_test::contains_substring("reserved for inf and NaN"));
  CHECK_THROWS_WITH(lowbit::decode_minifloat(f::fp4_e2m1, 16), lowbit_test::contains_substring("4-bit pattern"));
}

TEST_CASE("codes: minifloat codes round trip to the fake-quantized output", "[codes][minifloat]") {
  namespace f = lowbit::formats;
  const std::vector<float> with_specials = lowbit_test::mixed_values<float>(300, 7);
  // (Below 1e30: X / scale must not overflow to inf, which the reference
  // semantics turn into NaN, and the MX formats have no NaN.)
  const std::vector<float> finite = code_values(300, 8, true, 1e30f);
  const std::vector<float> scale{1.0f, 0.5f, 3.0f};
  const strided_view<const float> sv(scale.data(), {3, 1});
  auto check = [&](auto mq, const std::vector<float>& x) {
    const strided_view<const float> xv(x.data(), {3, 100});
    std::vector<float> want(300), got(300);
    mq(xv, sv, strided_view<float>(want.data(), {3, 100}));
    std::vector<std::uint8_t> c(300);
    lowbit::quantize_codes(mq, xv, sv, strided_view<std::uint8_t>(c.data(), {3, 100}));
    lowbit::dequantize(mq, strided_view<const std::uint8_t>(c.data(), {3, 100}), sv,
                       strided_view<float>(got.data(), {3, 100}));
    lowbit_test::require_same_values(got, want);
  };
  for (rounding_mode m : lowbit::all_rounding_modes) {
    INFO("mode " << static_cast<int>(m));
    for (const minifloat_format& fm : {f::fp8_e4m3fn, f::fp8_e5m2, f::fp8_e5m2.with_saturation(false)}) {
      check(lowbit::minifloat_quant<>{.format = fm, .rounding = m}, with_specials);
      check(lowbit::minifloat_quant<semantics::exact>{.format = fm, .rounding = m}, with_specials);
    }
    for (const minifloat_format& fm : {f::fp6_e2m3, f::fp6_e3m2, f::fp4_e2m1}) {
      check(lowbit::minifloat_quant<>{.format = fm, .rounding = m}, finite);
      check(lowbit::minifloat_quant<semantics::exact>{.format = fm, .rounding = m}, finite);
    }
  }
  // OCP layout in the codes themselves.
  std::vector<float> x{0.26f, -1.3f, 7.9f, 1000.0f, -0.0f};
  std::vector<std::uint8_t> c(5);
  lowbit::quantize_codes(lowbit::minifloat_quant<>{.format = f::fp8_e4m3fn}, x, 1.0f, c);
  CHECK(c == std::vector<std::uint8_t>{0x28, 0xba, 0x50, 0x7e, 0x80});
  lowbit::quantize_codes(lowbit::minifloat_quant<>{.format = f::fp8_e5m2.with_saturation(false)}, x, 1.0f, c);
  CHECK(c[3] == 0x64);  // 1000 -> 1024 = 2^10: 0.11001.00
  // 16-bit codes: bfloat16-like E8M7 in uint16.
  const minifloat_format bf16{8, 7, 127, 3.3895313892515355e38, true, true, true};
  std::vector<std::uint16_t> c16(5);
  lowbit::quantize_codes(lowbit::minifloat_quant<>{.format = bf16}, x, 1.0f, c16);
  CHECK(c16[2] == 0x40fd);  // 7.9 -> 7.90625, bfloat16 0x40fd
  CHECK(c16[3] == 0x447a);  // 1000
}

TEST_CASE("codes: minifloat codes that do not exist are rejected, nothing written", "[codes][minifloat]") {
  namespace f = lowbit::formats;
  std::vector<float> x{1.0f, nan_f};
  std::vector<std::uint8_t> c{9, 9};
  check_codes_rejected(
      [&] { lowbit::quantize_codes(lowbit::minifloat_quant<>{.format = f::fp4_e2m1}, x, 1.0f, c); }, c,
      "codes[1] (x = nan)");
  // Reference FloatQuant maps +-inf to NaN (QUIRKS 6), which E2M1 lacks.
  std::vector<float> xi{inf, 1.0f};
  check_codes_rejected(
      [&] { lowbit::quantize_codes(lowbit::minifloat_quant<>{.format = f::fp4_e2m1}, xi, 1.0f, c); }, c,
      "has no NaN");
  // A 9-bit format in uint8.
  const minifloat_format e5m3{5, 3, 15, 122880.0, true, true, true};
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::minifloat_quant<>{.format = e5m3}, x, 1.0f, c); }, c,
                       "a code has 9 bits; expected at most 8");
  // has_inf with no mantissa bits: inf and NaN would share one pattern
  // (found by the fuzzer: NaN encoded as 0x3f decoded as inf).
  const minifloat_format e6m0{6, 0, 94, 8.0, true, true, true};
  check_codes_rejected([&] { lowbit::quantize_codes(lowbit::minifloat_quant<>{.format = e6m0}, x, 1.0f, c); }, c,
                       "has_inf with mantissa_bits = 0 leaves no bit pattern for NaN");
  REQUIRE_THROWS_WITH(lowbit::decode_minifloat(e6m0, 0x3f), lowbit_test::contains_substring("no bit pattern for NaN"));
  // Without has_inf, E6M0 has codes: NaN is the all-ones pattern.
  const minifloat_format e6m0_nan{6, 0, 40, 1.0, false, true, true};
  CHECK(lowbit::encode_minifloat(e6m0_nan, nan_f) == 0x3f);
  CHECK(std::isnan(lowbit::decode_minifloat(e6m0_nan, 0x3f)));
  CHECK(lowbit::decode_minifloat(e6m0_nan, 0x3e) == std::ldexp(1.0f, 62 - 40));
  // Decoding a pattern wider than the format.
  std::vector<std::uint8_t> wide{0x10};
  std::vector<float> y{5.0f};
  lowbit_test::check_rejected(
      [&] { lowbit::dequantize(lowbit::minifloat_quant<>{.format = f::fp4_e2m1}, wide, 1.0f, y); }, y,
      "codes[0] = 16 is invalid; expected a 4-bit pattern");
}

namespace {

/// Trunc v1 (no clamp, scale 1, in = out bit width) makes q = x for an
/// integral x: q at and just beyond the limits of C, in T.
template <class C, class T>
void check_code_limits() {
  using L = std::numeric_limits<C>;
  const std::string what = std::string(lowbit::detail::code_type_name<C>()) + " codes, " +
                           (std::is_same_v<T, float> ? "float" : "double");
  INFO(what);
  const lowbit::trunc_v1<> op{};
  // The largest and smallest T at most / at least C's limits, and the next
  // T values beyond (int32 in float: 2147483520 and 2^31, -2^31 and
  // -2147483904).
  const T top = static_cast<T>(L::max()) > static_cast<long double>(L::max())
                    ? std::nextafter(static_cast<T>(L::max()), T(0))
                    : static_cast<T>(L::max());
  const T above = std::ldexp(T(1), L::digits);  // max + 1
  const T bottom = static_cast<T>(L::min());
  const T below = bottom - T(1) != bottom ? bottom - T(1) : std::nextafter(bottom, -std::numeric_limits<T>::infinity());
  std::vector<C> c{C(5), C(5)};
  lowbit::quantize_codes(op, std::vector<T>{top, bottom}, T(1), T(0), T(8), T(8), c);
  CHECK(static_cast<long double>(c[0]) == static_cast<long double>(top));
  CHECK(c[1] == L::min());
  const std::string range = "expected an integer from " + std::to_string(static_cast<long long>(L::min())) + " to " +
                            std::to_string(static_cast<long long>(L::max())) + " (" +
                            lowbit::detail::code_type_name<C>() + " codes)";
  for (T bad : {above, below}) {
    std::vector<C> untouched{C(7), C(7)};
    INFO("x = " << lowbit_test::show(bad));
    check_codes_rejected(
        [&] { lowbit::quantize_codes(op, std::vector<T>{T(1), bad}, T(1), T(0), T(8), T(8), untouched); },
        untouched, range.c_str());
  }
}

}  // namespace

TEST_CASE("codes: the code type's range is exact for every code type, float and double (2^31 is no int32)",
          "[codes]") {
  // The reproducer of issue 17: float(INT32_MAX) rounds to 2^31, which the
  // old bound let through into an undefined conversion.
  std::vector<std::int32_t> c(1, 42);
  check_codes_rejected(
      [&] {
        lowbit::quantize_codes(lowbit::trunc_v1<>{}, std::vector<float>{2147483648.0f}, 1.0f, 0.0f, 8.0f, 8.0f, c);
      },
      c, "codes[0] would be q = 2147483648 (x = 2.14748365e+09); expected an integer from -2147483648 to 2147483647 (int32 codes)");
  check_code_limits<std::int8_t, float>();
  check_code_limits<std::uint8_t, float>();
  check_code_limits<std::int16_t, float>();
  check_code_limits<std::uint16_t, float>();
  check_code_limits<std::int32_t, float>();
  check_code_limits<std::int8_t, double>();
  check_code_limits<std::uint8_t, double>();
  check_code_limits<std::int16_t, double>();
  check_code_limits<std::uint16_t, double>();
  check_code_limits<std::int32_t, double>();
  // double holds INT32_MAX itself.
  std::vector<std::int32_t> d(2);
  lowbit::quantize_codes(lowbit::trunc_v1<>{}, std::vector<double>{2147483647.0, -2147483648.0}, 1.0, 0.0, 8.0, 8.0, d);
  CHECK(d == std::vector<std::int32_t>{INT32_MAX, INT32_MIN});
}

TEST_CASE("codes: E8M0 (bias 127, NaN, no inf) has codes in uint16: every finite value and NaN", "[codes][minifloat]") {
  // FloatQuant's model: 1 sign bit and 8 exponent bits (9-bit codes, so
  // uint16). Exponent field 0 with m = 0 holds only zero (no 2^-127); field
  // 255 with m = 0 is all NaN, so the values are +-0 and +-2^-126 ..
  // +-2^127, all float32.
  const minifloat_format e8m0{8, 0, 127, 0x1p127, false, true, true};
  CHECK(lowbit::encode_minifloat(e8m0, 0.0f) == 0u);
  CHECK(lowbit::encode_minifloat(e8m0, -0.0f) == 0x100u);
  CHECK(bits(lowbit::decode_minifloat(e8m0, 0x100u)) == bits(-0.0f));
  std::vector<float> x{0.0f, -0.0f};
  std::vector<std::uint16_t> want_codes{0, 0x100};
  for (int e = -126; e <= 127; ++e) {
    const float v = std::ldexp(1.0f, e);
    const std::uint32_t field = static_cast<std::uint32_t>(e + 127);
    INFO("2^" << e);
    CHECK(lowbit::encode_minifloat(e8m0, v) == field);
    CHECK(lowbit::encode_minifloat(e8m0, -v) == (0x100u | field));
    CHECK(bits(lowbit::decode_minifloat(e8m0, field)) == bits(v));
    CHECK(bits(lowbit::decode_minifloat(e8m0, 0x100u | field)) == bits(-v));
    x.push_back(v);
    x.push_back(-v);
    want_codes.push_back(static_cast<std::uint16_t>(field));
    want_codes.push_back(static_cast<std::uint16_t>(0x100u | field));
  }
  // NaN: the all-ones exponent, 0xff (0x1ff with the sign).
  CHECK(lowbit::encode_minifloat(e8m0, nan_f) == 0xffu);
  CHECK(std::isnan(lowbit::decode_minifloat(e8m0, 0xffu)));
  CHECK(std::isnan(lowbit::decode_minifloat(e8m0, 0x1ffu)));
  CHECK(std::signbit(lowbit::decode_minifloat(e8m0, 0x1ffu)));
  CHECK_THROWS_WITH(lowbit::encode_minifloat(e8m0, 0x1p-127f), lowbit_test::contains_substring("is off the grid"));
  CHECK_THROWS_WITH(lowbit::encode_minifloat(e8m0, 3.0f), lowbit_test::contains_substring("is off the grid"));
  CHECK_THROWS_WITH(lowbit::encode_minifloat(e8m0, inf), lowbit_test::contains_substring("no infinities"));
  CHECK_THROWS_WITH(lowbit::decode_minifloat(e8m0, 0x200u), lowbit_test::contains_substring("9-bit pattern"));
  // quantize_codes and dequantize, exact semantics: every value is its own q.
  std::vector<std::uint16_t> c(x.size());
  std::vector<float> back(x.size());
  const lowbit::minifloat_quant<semantics::exact> exact{.format = e8m0};
  lowbit::quantize_codes(exact, x, 1.0f, c);
  CHECK(c == want_codes);
  lowbit::dequantize(exact, c, 1.0f, back);
  lowbit_test::require_same_bits(back, x);
  // With NaN: code 0xff, and back to NaN.
  std::vector<float> xn{nan_f, 0.5f};
  std::vector<std::uint16_t> cn(2);
  lowbit::quantize_codes(exact, xn, 1.0f, cn);
  CHECK(cn == std::vector<std::uint16_t>{0xff, 126});
  std::vector<float> yn(2);
  lowbit::dequantize(exact, cn, 1.0f, yn);
  CHECK(std::isnan(yn[0]));
  CHECK(yn[1] == 0.5f);
  // Reference semantics: the round trip is the fake-quantized output (which
  // differs from x at 2^-126, QUIRKS.md 8).
  const lowbit::minifloat_quant<> ref{.format = e8m0};
  std::vector<float> want(x.size());
  ref(x, 1.0f, want);
  lowbit::quantize_codes(ref, x, 1.0f, c);
  lowbit::dequantize(ref, c, 1.0f, back);
  lowbit_test::require_same_bits(back, want);
  // Nine bits do not fit uint8.
  std::vector<std::uint8_t> c8(2, 9);
  check_codes_rejected([&] { lowbit::quantize_codes(exact, xn, 1.0f, c8); }, c8, "a code has 9 bits; expected at most 8");
  // Without NaN the all-ones field is 2^128, no float32: still rejected.
  const minifloat_format e8m0_no_nan{8, 0, 127, 0x1p127, false, false, true};
  std::vector<std::uint16_t> c2{3, 3};
  check_codes_rejected(
      [&] { lowbit::quantize_codes(lowbit::minifloat_quant<semantics::exact>{.format = e8m0_no_nan}, xn, 1.0f, c2); },
      c2, "largest finite values have exponent 255 - bias = 128");
  REQUIRE_THROWS_WITH(lowbit::encode_minifloat(e8m0_no_nan, 1.0f),
                      lowbit_test::contains_substring("largest finite values have exponent 255 - bias = 128"));
  // The smaller NaN-only-top formats: E4M0 bias 7 has 2^-6 .. 2^7 and NaN 0xf.
  const minifloat_format e4m0{4, 0, 7, 128.0, false, true, true};
  CHECK(lowbit::encode_minifloat(e4m0, 128.0f) == 0xeu);
  CHECK(std::isnan(lowbit::decode_minifloat(e4m0, 0xfu)));
  // And the bound is exact: E8M0 with bias 126 reaches 2^128 (rejected),
  // E8M1 with has_nan keeps finite values in field 255 (bias 128: 2^127).
  CHECK_THROWS_AS(lowbit::encode_minifloat(minifloat_format{8, 0, 126, 1.0, false, true, true}, 1.0f), lowbit::error);
  const minifloat_format e8m1{8, 1, 128, 0x1p127, false, true, true};
  CHECK(lowbit::encode_minifloat(e8m1, 0x1p127f) == 0x1feu);
  CHECK(lowbit::decode_minifloat(e8m1, 0x1feu) == 0x1p127f);
  CHECK_THROWS_AS(lowbit::encode_minifloat(minifloat_format{8, 1, 127, 1.0, false, true, true}, 1.0f), lowbit::error);
}

TEST_CASE("codes: minifloat codes of a signed code type print as themselves", "[codes][minifloat]") {
  namespace f = lowbit::formats;
  std::vector<float> y{5.0f, 5.0f};
  const lowbit::minifloat_quant<> e2m1{.format = f::fp4_e2m1};
  std::vector<std::int8_t> c8{1, -1};
  lowbit_test::check_rejected([&] { lowbit::dequantize(e2m1, c8, 1.0f, y); }, y,
                              "codes[1] = -1 is invalid; expected a 4-bit pattern (0 to 15)");
  std::vector<std::int32_t> c32{INT32_MIN, 1};
  lowbit_test::check_rejected([&] { lowbit::dequantize(e2m1, c32, 1.0f, y); }, y,
                              "codes[0] = -2147483648 is invalid; expected a 4-bit pattern (0 to 15)");
  std::vector<std::int16_t> c16{0x7e, 0x100};
  const lowbit::minifloat_quant<> e4m3{.format = f::fp8_e4m3fn};
  lowbit_test::check_rejected([&] { lowbit::dequantize(e4m3, c16, 1.0f, y); }, y,
                              "codes[1] = 256 is invalid; expected a 8-bit pattern (0 to 255)");
  // Valid codes in a signed type decode.
  c16[1] = 0xfe;
  lowbit::dequantize(e4m3, c16, 1.0f, y);
  CHECK(y == std::vector<float>{448.0f, -448.0f});
}

TEST_CASE("codes: dequantize calls its codes codes in shape errors", "[codes]") {
  const std::vector<std::int8_t> c{1, 2, 3};
  const std::vector<float> s2{1.0f, 2.0f};
  std::vector<float> y(3, 5.0f);
  const char* needle = "shapes do not broadcast: codes has shape [3] and scale has shape [2]";
  lowbit_test::check_rejected([&] { lowbit::dequantize(lowbit::int_quant<>{}, c, s2, 0.0f, 8.0f, y); }, y, needle);
  lowbit_test::check_rejected([&] { lowbit::dequantize(lowbit::int_quant<>{}, c, s2, 0.0f, 1.0f, y); }, y, needle);
  lowbit_test::check_rejected([&] { lowbit::dequantize(lowbit::int_quant<>{}, c, 1.0f, 0.0f, s2, y); }, y,
                              "shapes do not broadcast: codes has shape [3] and bitwidth has shape [2]");
  lowbit_test::check_rejected(
      [&] { lowbit::dequantize(lowbit::trunc<>{}, c, s2, 0.0f, 8.0f, 1.0f, 8.0f, y); }, y, needle);
  lowbit_test::check_rejected(
      [&] { lowbit::dequantize(lowbit::trunc_v1<>{}, c, s2, 0.0f, 8.0f, 8.0f, y); }, y, needle);
  lowbit_test::check_rejected([&] { lowbit::dequantize(lowbit::bipolar_quant<>{}, c, s2, y); }, y, needle);
  const std::vector<std::uint8_t> u{1, 2, 3};
  lowbit_test::check_rejected(
      [&] { lowbit::dequantize(lowbit::minifloat_quant<>{.format = lowbit::formats::fp4_e2m1}, u, s2, y); }, y,
      needle);
}

TEST_CASE("codes: dequantize checks y before reading the codes (2^40 codes in a broadcast view)", "[codes]") {
  // A stride-0 view of 2^40 codes is a valid input; the y of the wrong
  // shape must be reported before a scratch copy of the codes is made.
  const std::int8_t one = 1;
  const std::uint8_t bit = 1;
  const std::size_t n = std::size_t(1) << 40;
  const strided_view<const std::int8_t> huge(&one, {n}, {0});
  const strided_view<const std::uint8_t> huge_bits(&bit, {n}, {0});
  std::vector<float> y(3, 5.0f);
  const char* needle = "y has shape [3]; expected the broadcast shape [1099511627776]";
  lowbit_test::check_rejected([&] { lowbit::dequantize(lowbit::int_quant<>{}, huge, 1.0f, 0.0f, 8.0f, y); }, y, needle);
  lowbit_test::check_rejected([&] { lowbit::dequantize(lowbit::trunc<>{}, huge, 1.0f, 0.0f, 8.0f, 1.0f, 8.0f, y); },
                              y, needle);
  lowbit_test::check_rejected([&] { lowbit::dequantize(lowbit::trunc_v1<>{}, huge, 1.0f, 0.0f, 8.0f, 8.0f, y); }, y,
                              needle);
  lowbit_test::check_rejected([&] { lowbit::dequantize(lowbit::bipolar_quant<>{}, huge_bits, 1.0f, y); }, y, needle);
  lowbit_test::check_rejected(
      [&] { lowbit::dequantize(lowbit::minifloat_quant<>{.format = lowbit::formats::fp4_e2m1}, huge_bits, 1.0f, y); },
      y, needle);
}

/// require_rejected_untouched on a byte buffer that holds inputs and outputs.
template <class F>
void require_untouched_bytes(std::vector<unsigned char>& buf, const std::string& needle, F&& f) {
  lowbit_test::require_rejected_untouched(buf, needle, std::forward<F>(f));
}

TEST_CASE("codes: the codes output shares no memory with x or a parameter, for every code type",
          "[codes][overlap]") {
  // One buffer holds x (floats) and the codes; the codes start inside x.
  alignas(8) static unsigned char raw[64 * 4 + 64];
  std::vector<unsigned char> buf(sizeof raw);
  auto* xf = reinterpret_cast<float*>(buf.data());
  const strided_view<const float> x(xf, {16});
  auto try_type = [&](auto tag) {
    using C = decltype(tag);
    C* c = reinterpret_cast<C*>(buf.data() + 8);  // overlaps x[2] onward
    require_untouched_bytes(buf, "codes (shape [16], strides [1]) overlaps x", [&] {
      lowbit::quantize_codes(lowbit::int_quant<>{.is_signed = std::is_signed_v<C>}, x, 0.5f, 0.0f, 2.0f,
                             strided_view<C>(c, {16}));
    });
    // A per-element scale inside the codes' bytes.
    const strided_view<const float> s(reinterpret_cast<const float*>(buf.data() + 128), {16});
    C* c2 = reinterpret_cast<C*>(buf.data() + 128 + 4);
    std::vector<float> xo(16, 1.0f);
    require_untouched_bytes(buf, "overlaps scale", [&] {
      lowbit::quantize_codes(lowbit::int_quant<>{.is_signed = std::is_signed_v<C>}, xo, s, 0.0f, 2.0f,
                             strided_view<C>(c2, {16}));
    });
  };
  try_type(std::int8_t{});
  try_type(std::uint8_t{});
  try_type(std::int16_t{});
  try_type(std::uint16_t{});
  try_type(std::int32_t{});
  // Every operator's quantize_codes, codes over x.
  std::int8_t* c8 = reinterpret_cast<std::int8_t*>(buf.data() + 4);
  std::uint8_t* u8 = reinterpret_cast<std::uint8_t*>(buf.data() + 4);
  require_untouched_bytes(buf, "overlaps x", [&] {
    lowbit::quantize_codes(lowbit::trunc<>{}, x, 1.0f, 0.0f, 8.0f, 1.0f, 4.0f, strided_view<std::int8_t>(c8, {16}));
  });
  require_untouched_bytes(buf, "overlaps x", [&] {
    lowbit::quantize_codes(lowbit::trunc_v1<>{}, x, 1.0f, 0.0f, 8.0f, 4.0f, strided_view<std::int8_t>(c8, {16}));
  });
  require_untouched_bytes(buf, "overlaps x", [&] {
    lowbit::quantize_codes(lowbit::bipolar_quant<>{}, x, 1.0f, strided_view<std::int8_t>(c8, {16}));
  });
  require_untouched_bytes(buf, "overlaps x", [&] {
    lowbit::quantize_codes(lowbit::minifloat_quant<>{}, x, 1.0f, strided_view<std::uint8_t>(u8, {16}));
  });
  // Codes that write one element twice.
  std::vector<std::int8_t> small(8);
  std::vector<float> x6(6, 1.0f);
  REQUIRE_THROWS_WITH(lowbit::quantize_codes(lowbit::int_quant<>{}, strided_view<const float>(x6.data(), {2, 3}), 1.0f,
                                             0.0f, 8.0f, strided_view<std::int8_t>(small.data(), {2, 3}, {1, 1})),
                      lowbit_test::contains_substring("codes (shape [2, 3], strides [1, 1]) writes one element twice"));
  // Codes next to x, sharing no byte: accepted.
  std::vector<float> xs{0.26f, -1.3f, 7.9f, 0.0f};
  std::vector<unsigned char> both(4 * sizeof(float) + 4);
  std::memcpy(both.data(), xs.data(), 4 * sizeof(float));
  auto* cn = reinterpret_cast<std::int8_t*>(both.data() + 4 * sizeof(float));
  lowbit::quantize_codes(lowbit::int_quant<>{}, strided_view<const float>(reinterpret_cast<const float*>(both.data()), {4}),
                         0.5f, 0.0f, 4.0f, strided_view<std::int8_t>(cn, {4}));
  CHECK(cn[0] == 1);
  CHECK(cn[1] == -3);
  CHECK(cn[2] == 7);
  CHECK(cn[3] == 0);
}

TEST_CASE("codes: dequantize's y shares no memory with the codes or a parameter", "[codes][overlap]") {
  std::vector<unsigned char> buf(256);
  auto* yf = reinterpret_cast<float*>(buf.data());
  const std::int8_t* c = reinterpret_cast<const std::int8_t*>(buf.data() + 8);
  require_untouched_bytes(buf, "y (shape [16], strides [1]) overlaps codes (shape [16], strides [1])", [&] {
    lowbit::dequantize(lowbit::int_quant<>{}, strided_view<const std::int8_t>(c, {16}), 0.5f, 0.0f, 8.0f,
                       strided_view<float>(yf, {16}));
  });
  require_untouched_bytes(buf, "overlaps codes", [&] {
    lowbit::dequantize(lowbit::bipolar_quant<>{}, strided_view<const std::int8_t>(c, {16}), 0.5f,
                       strided_view<float>(yf, {16}));
  });
  require_untouched_bytes(buf, "overlaps codes", [&] {
    lowbit::dequantize(lowbit::minifloat_quant<>{}, strided_view<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(c), {16}),
                       0.5f, strided_view<float>(yf, {16}));
  });
  // A per-element scale in y's buffer.
  std::vector<std::int8_t> codes(16, 3);
  require_untouched_bytes(buf, "overlaps scale", [&] {
    lowbit::dequantize(lowbit::int_quant<>{}, codes, strided_view<const float>(yf + 1, {16}), 0.0f, 8.0f,
                       strided_view<float>(yf, {16}));
  });
  require_untouched_bytes(buf, "overlaps zeropt", [&] {
    lowbit::dequantize(lowbit::trunc<>{}, codes, 1.0f, strided_view<const float>(yf + 15, {16}), 8.0f, 1.0f, 4.0f,
                       strided_view<float>(yf, {16}));
  });
}
