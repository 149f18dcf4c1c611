// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/packing.hpp: the ONNX int4 convention, exact round
// trips for every length 0 to 70 (body and tail, from every misalignment),
// and rejected input leaving the output untouched.
#include <lowbit/packing.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "support/catch.hpp"

using lowbit::packed_format;
namespace packings = lowbit::packings;

namespace {

/// The packing written out bit by bit: code i at bit (i % per_byte) * bits
/// of byte i / per_byte.
template <class C>
std::vector<std::uint8_t> pack_oracle(const packed_format& f, const std::vector<C>& c) {
  std::vector<std::uint8_t> out(lowbit::packed_size(f, c.size()), 0);
  const unsigned mask = (1u << f.bits) - 1;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const unsigned v = static_cast<unsigned>(static_cast<int>(c[i])) & mask;
    out[i / f.per_byte()] = static_cast<std::uint8_t>(out[i / f.per_byte()] | (v << ((i % f.per_byte()) * f.bits)));
  }
  return out;
}

template <class C>
std::vector<C> random_codes(const packed_format& f, std::size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(f.min(), f.max());
  std::vector<C> c(n);
  for (auto& v : c) v = static_cast<C>(d(rng));
  return c;
}

template <class C>
void round_trips(const packed_format& f) {
  std::mt19937 rng(42 + f.bits);
  for (std::size_t n = 0; n <= 70; ++n) {
    // From an offset buffer, so the words start misaligned.
    for (std::size_t off : {0, 1, 3}) {
      INFO(f.name << " " << sizeof(C) << "-byte codes, n = " << n << ", offset " << off);
      const std::vector<C> c = random_codes<C>(f, n, rng);
      std::vector<C> cbuf(off + n);
      std::copy(c.begin(), c.end(), cbuf.begin() + static_cast<std::ptrdiff_t>(off));
      std::vector<std::uint8_t> pbuf(off + lowbit::packed_size(f, n) + 1, 0xa5);
      std::span<const C> cs(cbuf.data() + off, n);
      std::span<std::uint8_t> ps(pbuf.data() + off, lowbit::packed_size(f, n));
      lowbit::pack(f, cs, ps);
      CHECK(std::vector<std::uint8_t>(ps.begin(), ps.end()) == pack_oracle(f, c));
      CHECK(pbuf.back() == 0xa5);  // nothing past the end
      std::vector<C> back(off + n + 1, C(99));
      lowbit::unpack(f, std::span<const std::uint8_t>(ps), std::span<C>(back.data() + off, n));
      CHECK(std::vector<C>(back.begin() + static_cast<std::ptrdiff_t>(off), back.end() - 1) == c);
      CHECK(back.back() == C(99));
    }
  }
}

}  // namespace

TEST_CASE("packing: the ONNX int4 convention", "[packing]") {
  // First code in the low nibble; an odd count leaves the last high nibble zero.
  std::vector<std::int8_t> c{1, -3, 7};
  std::vector<std::uint8_t> p(lowbit::packed_size(packings::int4, c.size()));
  REQUIRE(p.size() == 2);
  lowbit::pack(packings::int4, c, p);
  CHECK(p == std::vector<std::uint8_t>{0xd1, 0x07});
  std::vector<std::int8_t> back(3);
  lowbit::unpack(packings::int4, p, back);
  CHECK(back == c);
  std::vector<std::uint8_t> u{15, 0, 8, 1};
  std::vector<std::uint8_t> pu(2);
  lowbit::pack(packings::uint4, u, pu);
  CHECK(pu == std::vector<std::uint8_t>{0x0f, 0x18});
  // 2-bit: four per byte, the first in bits 0-1.
  std::vector<std::int8_t> c2{-2, -1, 0, 1, 1};
  std::vector<std::uint8_t> p2(2);
  lowbit::pack(packings::int2, c2, p2);
  CHECK(p2 == std::vector<std::uint8_t>{0x4e, 0x01});
  // 1-bit: eight per byte, the first in bit 0.
  std::vector<std::uint8_t> b{1, 0, 0, 1, 1, 1, 0, 1, 1};
  std::vector<std::uint8_t> pb(2);
  lowbit::pack(packings::uint1, b, pb);
  CHECK(pb == std::vector<std::uint8_t>{0xb9, 0x01});
  CHECK(lowbit::packed_size(packings::uint1, 0) == 0);
  CHECK(lowbit::packed_size(packings::uint2, 5) == 2);
  CHECK(lowbit::packed_size(packings::fp4_e2m1, 7) == 4);
}

TEST_CASE("packing: round trips for every length 0 to 70", "[packing]") {
  for (const packed_format& f : {packings::int4, packings::int2}) {
    round_trips<std::int8_t>(f);
    round_trips<std::int16_t>(f);
    round_trips<std::int32_t>(f);
  }
  for (const packed_format& f : {packings::uint4, packings::uint2, packings::uint1, packings::fp4_e2m1}) {
    round_trips<std::uint8_t>(f);
    round_trips<std::int8_t>(f);
    round_trips<std::uint16_t>(f);
    round_trips<std::int32_t>(f);
  }
}

TEST_CASE("packing: every byte value of every packing unpacks and packs back", "[packing]") {
  for (const packed_format& f : {packings::int4, packings::uint4, packings::int2, packings::uint2, packings::uint1}) {
    std::vector<std::uint8_t> all(256);
    for (int i = 0; i < 256; ++i) all[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
    std::vector<std::int32_t> c(256 * static_cast<std::size_t>(f.per_byte()));
    lowbit::unpack(f, all, c);
    for (std::size_t i = 0; i < c.size(); ++i) {
      const int raw = (all[i / f.per_byte()] >> ((i % f.per_byte()) * f.bits)) & ((1 << f.bits) - 1);
      const int want = f.is_signed && raw >= (1 << (f.bits - 1)) ? raw - (1 << f.bits) : raw;
      REQUIRE(c[i] == want);
    }
    std::vector<std::uint8_t> again(256);
    lowbit::pack(f, c, again);
    CHECK(again == all);
  }
}

TEST_CASE("packing: FP4 E2M1 codes from quantize_codes", "[packing]") {
  std::vector<float> x{0.5f, -6.0f, 1.4f, 3.0f, 100.0f};
  std::vector<std::uint8_t> codes(x.size());
  const lowbit::minifloat_quant<> q{.format = lowbit::formats::fp4_e2m1};
  lowbit::quantize_codes(q, x, 1.0f, codes);
  CHECK(codes == std::vector<std::uint8_t>{0x1, 0xf, 0x3, 0x5, 0x7});  // 1.4 -> 1.5
  std::vector<std::uint8_t> p(3);
  lowbit::pack(packings::fp4_e2m1, codes, p);
  CHECK(p == std::vector<std::uint8_t>{0xf1, 0x53, 0x07});
  std::vector<std::uint8_t> back(5);
  lowbit::unpack(packings::fp4_e2m1, p, back);
  std::vector<float> y(5), want(5);
  lowbit::dequantize(q, back, 1.0f, y);
  q(x, 1.0f, want);
  CHECK(y == want);
}

TEST_CASE("packing: bad input is rejected, nothing written", "[packing]") {
  using lowbit_test::contains_substring;
  std::vector<std::uint8_t> p{0xaa, 0xbb};
  const std::vector<std::uint8_t> p0 = p;
  std::vector<std::int8_t> c{1, 2, 8};  // 8 is not an int4
  CHECK_THROWS_WITH(lowbit::pack(packings::int4, c, p),
                    contains_substring("codes[2] = 8 is invalid; expected an int4 code from -8 to 7"));
  CHECK(p == p0);
  std::vector<std::int16_t> c16{1, -9};
  std::vector<std::uint8_t> p1{0x11};
  CHECK_THROWS_WITH(lowbit::pack(packings::int4, c16, p1), contains_substring("codes[1] = -9"));
  CHECK(p1 == std::vector<std::uint8_t>{0x11});
  std::vector<std::uint8_t> u{1, 2, 4};
  CHECK_THROWS_WITH(lowbit::pack(packings::uint2, u, p1), contains_substring("codes[2] = 4 is invalid"));
  CHECK_THROWS_WITH(lowbit::pack(packings::int4, std::vector<std::int8_t>{1, 2}, p),
                    contains_substring("packed has 2 bytes; expected 1 for 2 int4 codes"));
  CHECK(p == p0);
  // unpack: size, padding and code type.
  std::vector<std::int8_t> out(3, 5);
  CHECK_THROWS_WITH(lowbit::unpack(packings::int4, std::vector<std::uint8_t>{0x21, 0x13}, out),
                    contains_substring("packed[1] = 19 has nonzero unused high bits"));
  CHECK(out == std::vector<std::int8_t>{5, 5, 5});
  CHECK_THROWS_WITH(lowbit::unpack(packings::int4, std::vector<std::uint8_t>{0x21}, out),
                    contains_substring("packed has 1 bytes; expected 2 for 3 int4 codes"));
  std::vector<std::uint8_t> uout(2, 5);
  CHECK_THROWS_WITH(lowbit::unpack(packings::int4, std::vector<std::uint8_t>{0x21}, uout),
                    contains_substring("uint8 codes cannot hold int4 codes"));
  CHECK(uout == std::vector<std::uint8_t>{5, 5});
  const packed_format bogus{3, true, "int3"};
  CHECK_THROWS_WITH(lowbit::pack(bogus, c, p), contains_substring("has bits = 3 signed"));
  CHECK_THROWS_WITH(lowbit::pack(packed_format{1, true, "int1"}, c, p), contains_substring("1 bit unsigned"));
  CHECK(p == p0);
}
