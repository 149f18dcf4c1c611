// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/packing.hpp: the ONNX int4 convention, exact round
// trips for every length 0 to 70 (body and tail, from every misalignment),
// and rejected input leaving the output untouched.
#include <lowbit/packing.hpp>
#include <lowbit/codes.hpp>  // the round trip through quantize_codes

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
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
  CHECK_THROWS_WITH(lowbit::pack(packed_format{1, true, "int1"}, c, p), contains_substring("1 or 6 bits unsigned"));
  CHECK(p == p0);
}

namespace {

constexpr packed_format all_packings[] = {packings::int4, packings::uint4, packings::int2,
                                          packings::uint2, packings::uint1, packings::fp4_e2m1};

/// Code v at position `at` of 11 zeros (8 go through the word path, 3
/// through the tail): packs iff f.min() <= v <= f.max(), and unpacks back to
/// v; otherwise the message names v as a number and nothing is written.
template <class C>
void check_code_value(const packed_format& f, long long v, std::size_t at) {
  INFO(f.name << ", " << lowbit::detail::code_type_name<C>() << " code " << v << " at " << at);
  std::vector<C> c(11, C(0));
  c[at] = static_cast<C>(v);
  REQUIRE(static_cast<long long>(c[at]) == v);
  std::vector<std::uint8_t> p(lowbit::packed_size(f, c.size()), 0x5a);
  const std::vector<std::uint8_t> p0 = p;
  if (v >= f.min() && v <= f.max()) {
    lowbit::pack(f, c, p);
    std::vector<std::int32_t> back(c.size(), 99);
    lowbit::unpack(f, p, back);
    CHECK(back[at] == v);
    CHECK(back[at ^ 1] == 0);
  } else {
    CHECK_THROWS_WITH(lowbit::pack(f, c, p),
                      lowbit_test::contains_substring("lowbit::pack: codes[" + std::to_string(at) + "] = " +
                                                      std::to_string(v) + " is invalid; expected an " + f.name +
                                                      " code from " + std::to_string(f.min()) + " to " +
                                                      std::to_string(f.max())));
    CHECK(p == p0);
  }
}

template <class C>
void check_all_code_values(const std::vector<long long>& values) {
  for (const packed_format& f : all_packings)
    for (long long v : values)
      for (std::size_t at : {3u, 9u}) check_code_value<C>(f, v, at);
}

/// Every value of C from -300 to 300, and the values near C's limits.
template <class C>
std::vector<long long> code_test_values() {
  constexpr long long lo = std::numeric_limits<C>::min(), hi = std::numeric_limits<C>::max();
  std::vector<long long> v;
  for (long long i = std::max(lo, -300LL); i <= std::min(hi, 300LL); ++i) v.push_back(i);
  for (long long d = 0; d < 8; ++d) {
    if (lo + d < -300) v.push_back(lo + d);
    if (hi - d > 300) v.push_back(hi - d);
  }
  return v;
}

}  // namespace

TEST_CASE("packing: a code is valid iff its value is in f.min()..f.max(), for every code type", "[packing]") {
  // uint8 248 and 255 are not the int4 / int2 codes -8 and -1 (the byte
  // fast path used to read them as int8).
  check_all_code_values<std::uint8_t>(code_test_values<std::uint8_t>());  // all 256
  check_all_code_values<std::int8_t>(code_test_values<std::int8_t>());    // all 256
  check_all_code_values<std::uint16_t>(code_test_values<std::uint16_t>());  // 65528 too
  check_all_code_values<std::int16_t>(code_test_values<std::int16_t>());
  check_all_code_values<std::int32_t>({INT32_MIN, INT32_MIN + 1, -65536, -256, -129, -128, -17, -9, -8, -3, -2, -1,
                                       0, 1, 2, 3, 4, 7, 8, 15, 16, 248, 255, 256, 65528, 65535, INT32_MAX});
  // One bad byte among many, in every position of the words: found.
  for (std::size_t at = 0; at < 40; ++at) {
    std::vector<std::uint8_t> c(40, 7);
    c[at] = 248;
    std::vector<std::uint8_t> p(20, 0x33);
    CHECK_THROWS_WITH(lowbit::pack(packings::int4, c, p),
                      lowbit_test::contains_substring("codes[" + std::to_string(at) + "] = 248 is invalid"));
    CHECK(p == std::vector<std::uint8_t>(20, 0x33));
  }
  // Negative codes print as negative numbers.
  std::vector<std::int8_t> c8{0, -128};
  std::vector<std::int32_t> c32{INT32_MIN, 0};
  std::vector<std::uint8_t> p(1);
  CHECK_THROWS_WITH(lowbit::pack(packings::int4, c8, p), lowbit_test::contains_substring("codes[1] = -128 is invalid"));
  CHECK_THROWS_WITH(lowbit::pack(packings::uint2, c32, p),
                    lowbit_test::contains_substring("codes[0] = -2147483648 is invalid; expected an uint2 code from 0 to 3"));
}

TEST_CASE("packing: codes and packed that share memory are rejected, nothing written", "[packing]") {
  using lowbit_test::contains_substring;
  std::vector<std::uint8_t> mem(24);
  for (std::size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<std::uint8_t>(i % 8);
  const std::vector<std::uint8_t> mem0 = mem;
  const std::span<const std::uint8_t> codes(mem.data(), 16);
  // In place, and every partial overlap from either side.
  for (std::size_t off : {0u, 1u, 7u, 15u}) {
    INFO("packed at byte " << off);
    CHECK_THROWS_WITH(lowbit::pack(packings::uint4, codes, std::span<std::uint8_t>(mem.data() + off, 8)),
                      contains_substring("lowbit::pack: codes (16 bytes) and packed (8 bytes) overlap in memory") &&
                          contains_substring("expected codes and packed to share no memory"));
    CHECK(mem == mem0);
  }
  CHECK_THROWS_WITH(lowbit::pack(packings::uint4, std::span<const std::uint8_t>(mem.data() + 8, 16),
                                 std::span<std::uint8_t>(mem.data(), 8).subspan(1, 7)),
                    contains_substring("packed has 7 bytes"));
  CHECK_THROWS_WITH(lowbit::pack(packings::uint4, std::span<const std::uint8_t>(mem.data() + 1, 16),
                                 std::span<std::uint8_t>(mem.data(), 8)),
                    contains_substring("(7 bytes in common, from byte 0 of codes and byte 1 of packed)"));
  CHECK(mem == mem0);
  // Adjacent buffers share no byte: fine.
  lowbit::pack(packings::uint4, codes, std::span<std::uint8_t>(mem.data() + 16, 8));
  CHECK(mem[16] == 0x10);
  CHECK(mem[19] == 0x76);
  // Wider codes: any byte in common counts.
  std::vector<std::int16_t> wide(8, 1);
  auto* bytes = reinterpret_cast<std::uint8_t*>(wide.data());
  CHECK_THROWS_WITH(lowbit::pack(packings::int4, std::span<const std::int16_t>(wide.data(), 4),
                                 std::span<std::uint8_t>(bytes + 7, 2)),
                    contains_substring("codes (8 bytes) and packed (2 bytes) overlap"));
  CHECK(wide == std::vector<std::int16_t>(8, 1));
  lowbit::pack(packings::int4, std::span<const std::int16_t>(wide.data(), 4), std::span<std::uint8_t>(bytes + 8, 2));
  CHECK(wide[4] == 0x1111);
  // unpack: the same, codes written over packed.
  std::vector<std::int8_t> buf(16, 0);
  buf[0] = 0x21;
  buf[1] = 0x43;
  const std::vector<std::int8_t> buf0 = buf;
  auto* b = reinterpret_cast<std::uint8_t*>(buf.data());
  CHECK_THROWS_WITH(lowbit::unpack(packings::int4, std::span<const std::uint8_t>(b, 2), std::span<std::int8_t>(buf.data() + 1, 4)),
                    contains_substring("lowbit::unpack: packed (2 bytes) and codes (4 bytes) overlap in memory"));
  CHECK_THROWS_WITH(lowbit::unpack(packings::int4, std::span<const std::uint8_t>(b, 2), std::span<std::int8_t>(buf.data(), 4)),
                    contains_substring("overlap in memory"));
  CHECK(buf == buf0);
  lowbit::unpack(packings::int4, std::span<const std::uint8_t>(b, 2), std::span<std::int8_t>(buf.data() + 2, 4));
  CHECK(std::vector<std::int8_t>(buf.begin() + 2, buf.begin() + 6) == std::vector<std::int8_t>{1, 2, 3, 4});
  // Empty ranges overlap nothing.
  lowbit::pack(packings::int4, std::span<const std::uint8_t>(mem.data(), 0), std::span<std::uint8_t>(mem.data(), 0));
}

TEST_CASE("packing: invalid formats are errors in every function, never undefined behaviour", "[packing]") {
  using lowbit_test::contains_substring;
  // Compile-time use of the valid formats still works.
  static_assert(lowbit::packed_size(packings::int4, 3) == 2);
  static_assert(lowbit::packed_size(packings::uint1, 9) == 2);
  static_assert(packings::int2.min() == -2 && packings::int2.max() == 1 && packings::uint4.max() == 15);
  static_assert(packings::uint1.per_byte() == 8 && packings::int4.per_byte() == 2);
  // The signed 1-bit case has a size and a range; pack and unpack reject it.
  const packed_format int1{1, true, "int1"};
  CHECK(lowbit::packed_size(int1, 9) == 2);
  CHECK(int1.min() == -1);
  CHECK(int1.max() == 0);
  for (int bits : {0, 3, 5, 8, 16, 31, 32, 40, 64, -1, -4, INT_MIN, INT_MAX}) {
    for (bool sgn : {true, false}) {
      const packed_format f{bits, sgn, "bogus"};
      const std::string has = "packing bogus has bits = " + std::to_string(bits) + (sgn ? " signed" : " unsigned");
      INFO(has);
      CHECK_THROWS_WITH(lowbit::packed_size(f, 5),
                        contains_substring("lowbit::packed_size: " + has + "; expected 1, 2, 4 or 6 bits"));
      CHECK_THROWS_WITH(f.per_byte(), contains_substring("lowbit::packed_format::per_byte: " + has));
      CHECK_THROWS_WITH(f.min(), contains_substring("lowbit::packed_format::min: " + has));
      CHECK_THROWS_WITH(f.max(), contains_substring("lowbit::packed_format::max: " + has));
      std::vector<std::uint8_t> p(3, 0x77);
      std::vector<std::int8_t> c(5, 0);
      CHECK_THROWS_WITH(lowbit::pack(f, c, p), contains_substring("lowbit::pack: " + has));
      CHECK_THROWS_WITH(lowbit::unpack(f, p, c), contains_substring("lowbit::unpack: " + has));
      CHECK(p == std::vector<std::uint8_t>(3, 0x77));
      CHECK(c == std::vector<std::int8_t>(5, 0));
    }
  }
  CHECK_THROWS_AS(lowbit::packed_size(packed_format{0, false, "x"}, 5), lowbit::error);
}

TEST_CASE("packing: a packing with a null name has messages that say (unnamed)", "[packing]") {
  using lowbit_test::contains_substring;
  const packed_format f{4, true, nullptr};
  std::vector<std::int8_t> c{1, 9, 2};
  std::vector<std::uint8_t> p(2, 0x44);
  CHECK_THROWS_WITH(lowbit::pack(f, c, p),
                    contains_substring("codes[1] = 9 is invalid; expected an (unnamed) code from -8 to 7"));
  std::vector<std::uint8_t> small(1, 0x44);
  CHECK_THROWS_WITH(lowbit::pack(f, c, small), contains_substring("expected 2 for 3 (unnamed) codes"));
  CHECK_THROWS_WITH(lowbit::unpack(f, small, c), contains_substring("expected 2 for 3 (unnamed) codes"));
  CHECK_THROWS_WITH(lowbit::unpack(f, std::vector<std::uint8_t>{0x11, 0x11}, c),
                    contains_substring("(the last byte holds 4 bits of (unnamed) codes)"));
  std::vector<std::uint8_t> u(3);
  CHECK_THROWS_WITH(lowbit::unpack(f, p, u), contains_substring("uint8 codes cannot hold (unnamed) codes"));
  CHECK_THROWS_WITH(lowbit::pack(packed_format{3, false, nullptr}, c, p),
                    contains_substring("packing (unnamed) has bits = 3 unsigned"));
  CHECK_THROWS_WITH(packed_format(packed_format{7, false, nullptr}).per_byte(),
                    contains_substring("packing (unnamed) has bits = 7"));
  CHECK(p == std::vector<std::uint8_t>(2, 0x44));
  CHECK(c == std::vector<std::int8_t>{1, 9, 2});
  // A valid call works with no name.
  c[1] = -1;
  lowbit::pack(f, c, p);
  CHECK(p == std::vector<std::uint8_t>{0xf1, 0x02});
}

TEST_CASE("packing: FP6 codes, four in three bytes, as a little-endian bit stream", "[packing]") {
  using lowbit_test::contains_substring;
  static_assert(lowbit::packed_size(packings::fp6_e2m3, 4) == 3);
  static_assert(lowbit::packed_size(packings::fp6_e3m2, 5) == 4);
  static_assert(lowbit::packed_size(packings::fp6_e3m2, 8) == 6);
  // Codes 0x01, 0x3f, 0x2a, 0x15: stream bits 0..5 = 000001, 6..11 = 111111,
  // 12..17 = 101010, 18..23 = 010101 -> bytes 0xc1, 0xaf, 0x56.
  const std::vector<std::uint8_t> c{0x01, 0x3f, 0x2a, 0x15};
  std::vector<std::uint8_t> p(3);
  lowbit::pack(packings::fp6_e2m3, c, p);
  CHECK(p == std::vector<std::uint8_t>{0xc1, 0xaf, 0x56});
  std::vector<std::uint8_t> back(4);
  lowbit::unpack(packings::fp6_e2m3, p, back);
  CHECK(back == c);
  // Every length 0 .. 40 round-trips against a bit-by-bit oracle.
  std::mt19937 rng(6);
  for (std::size_t n = 0; n <= 40; ++n) {
    std::vector<std::uint8_t> codes(n);
    for (auto& v : codes) v = static_cast<std::uint8_t>(rng() % 64);
    std::vector<std::uint8_t> want(lowbit::packed_size(packings::fp6_e3m2, n), 0);
    for (std::size_t i = 0; i < n; ++i)
      for (int b = 0; b < 6; ++b)
        if (codes[i] >> b & 1) want[(6 * i + b) / 8] |= static_cast<std::uint8_t>(1u << ((6 * i + b) % 8));
    std::vector<std::uint8_t> got(want.size(), 0xee);
    lowbit::pack(packings::fp6_e3m2, codes, got);
    CHECK(got == want);
    std::vector<std::uint16_t> wide(n, 0xeeee);
    lowbit::unpack(packings::fp6_e3m2, got, wide);
    for (std::size_t i = 0; i < n; ++i) CHECK(wide[i] == codes[i]);
  }
  // A code of 7 bits, unused bits set, a signed 6-bit packing: errors, nothing written.
  std::vector<std::uint8_t> bad{1, 64, 2};
  std::vector<std::uint8_t> out(3, 0x55);
  CHECK_THROWS_WITH(lowbit::pack(packings::fp6_e2m3, bad, out),
                    contains_substring("codes[1] = 64 is invalid; expected an fp6_e2m3 code from 0 to 63"));
  CHECK(out == std::vector<std::uint8_t>(3, 0x55));
  std::vector<std::uint8_t> two(2);
  CHECK_THROWS_WITH(lowbit::unpack(packings::fp6_e2m3, std::vector<std::uint8_t>{0x01, 0xf0}, two),
                    contains_substring("the last byte holds 4 bits"));
  CHECK_THROWS_WITH(lowbit::pack(packed_format{6, true, "int6"}, c, p), contains_substring("has bits = 6 signed"));
  CHECK_THROWS_WITH(packings::fp6_e2m3.per_byte(), contains_substring("per_byte"));
}
