// SPDX-License-Identifier: Apache-2.0
/**
 * @file packing.hpp
 * Sub-byte packing of codes: int4, uint4, int2, uint2, 1-bit, FP4 E2M1 and
 * the 6-bit FP6 codes, in the ONNX int4 convention (the first code in the
 * lowest bits of the first byte, each code's bits continuing into the next
 * byte: a little-endian bit stream; the unused high bits of a last,
 * partial byte are zero).
 *
 * **Example**:
 * ```
 * std::vector<std::int8_t> codes{1, -3, 7};
 * std::vector<std::uint8_t> bytes(lowbit::packed_size(lowbit::packings::int4, codes.size()));
 * lowbit::pack(lowbit::packings::int4, codes, bytes);    // bytes = {0xd1, 0x07}
 * lowbit::unpack(lowbit::packings::int4, bytes, codes);  // codes = {1, -3, 7}
 * ```
 */
#ifndef LOWBIT_PACKING_HPP
#define LOWBIT_PACKING_HPP

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "code_type.hpp"
#include "config.hpp"
#include "detail/ranges.hpp"
#include "error.hpp"

LOWBIT_BEGIN_NAMESPACE

namespace detail {
/// f.name for messages: "(unnamed)" for a null name.
inline const char* packing_name(const char* name) noexcept { return name ? name : "(unnamed)"; }
[[noreturn]] inline void throw_bad_packing(const char* fn, int bits, bool is_signed, const char* name,
                                           const char* expected) {
  throw error(std::string(fn) + ": packing " + packing_name(name) + " has bits = " + std::to_string(bits) +
              (is_signed ? " signed" : " unsigned") + "; expected " + expected);
}
}  // namespace detail

/**
 * A packing of codes: `bits` per code (1, 2, 4 or 6), signed (two's
 * complement) or unsigned. `name` is used in messages only (a null name
 * prints as "(unnamed)").
 *
 * A valid packing has bits 4 or 2 (signed or not), or 1 or 6 (unsigned);
 * pack and unpack throw lowbit::error for any other. min(), max() and
 * packed_size() throw lowbit::error when `bits` is not 1, 2, 4 or 6 (they
 * are defined for the signed 1-bit case: -1 and 0); per_byte() for 6 bits
 * too (four 6-bit codes take three bytes).
 */
struct packed_format {
  int bits = 4;
  bool is_signed = true;
  const char* name = "int4";

  /// Codes per byte. @throws lowbit::error unless bits is 1, 2 or 4.
  constexpr int per_byte() const {
    check_bits("lowbit::packed_format::per_byte");
    return 8 / bits;
  }
  /// Smallest code: -2^(bits-1) signed, 0 unsigned.
  /// @throws lowbit::error unless bits is 1, 2, 4 or 6.
  constexpr int min() const {
    check_bits6("lowbit::packed_format::min");
    return is_signed ? -(1 << (bits - 1)) : 0;
  }
  /// Largest code: 2^(bits-1) - 1 signed, 2^bits - 1 unsigned.
  /// @throws lowbit::error unless bits is 1, 2, 4 or 6.
  constexpr int max() const {
    check_bits6("lowbit::packed_format::max");
    return is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  }
  friend constexpr bool operator==(const packed_format& a, const packed_format& b) noexcept {
    return a.bits == b.bits && a.is_signed == b.is_signed;
  }

 private:
  constexpr void check_bits(const char* fn) const {
    if (!(bits == 1 || bits == 2 || bits == 4)) detail::throw_bad_packing(fn, bits, is_signed, name, "1, 2 or 4 bits");
  }
  constexpr void check_bits6(const char* fn) const {
    if (!(bits == 1 || bits == 2 || bits == 4 || bits == 6))
      detail::throw_bad_packing(fn, bits, is_signed, name, "1, 2, 4 or 6 bits");
  }
};

/// The packings, by the ONNX / OCP names of their codes.
namespace packings {
inline constexpr packed_format int4{4, true, "int4"};
inline constexpr packed_format uint4{4, false, "uint4"};
inline constexpr packed_format int2{2, true, "int2"};
inline constexpr packed_format uint2{2, false, "uint2"};
/// 1-bit codes: bits, e.g. BipolarQuant's (quantize_codes into uint8).
inline constexpr packed_format uint1{1, false, "uint1"};
/// FP4 E2M1 bit patterns (minifloat codes of formats::fp4_e2m1): as uint4.
inline constexpr packed_format fp4_e2m1{4, false, "fp4_e2m1"};
/// FP6 bit patterns (MX's FP6 E2M3 and E3M2 element codes): four codes in
/// three bytes, as a little-endian bit stream (code i in bits 6i .. 6i + 5).
/// Neither ONNX nor OCP MX v1.0 fixes a memory layout for FP6; this one
/// extends the int4 convention.
inline constexpr packed_format fp6_e2m3{6, false, "fp6_e2m3"};
inline constexpr packed_format fp6_e3m2{6, false, "fp6_e3m2"};
}  // namespace packings

namespace detail {
/// Throws unless `f` is a valid packing (bits 4 or 2, or 1 or 6 unsigned).
constexpr void check_packing(const packed_format& f, const char* fn) {
  if (!(f.bits == 1 || f.bits == 2 || f.bits == 4 || f.bits == 6) || ((f.bits == 1 || f.bits == 6) && f.is_signed))
    throw_bad_packing(fn, f.bits, f.is_signed, f.name, "4 or 2 bits (signed or not), or 1 or 6 bits unsigned");
}
}  // namespace detail

/// Bytes that `count` codes take in packing `f`: count * bits / 8 rounded
/// up (a partial last byte counts).
/// @throws lowbit::error if f.bits is not 1, 2, 4 or 6 (a signed 1-bit `f`,
///         which pack and unpack reject, has a size: count / 8 rounded up).
constexpr std::size_t packed_size(const packed_format& f, std::size_t count) {
  if (!(f.bits == 1 || f.bits == 2 || f.bits == 4 || f.bits == 6))
    detail::throw_bad_packing("lowbit::packed_size", f.bits, f.is_signed, f.name, "1, 2, 4 or 6 bits");
  // Whole groups of 8 codes (bits bytes each), then the rest, without
  // overflowing count * bits.
  const std::size_t b = static_cast<std::size_t>(f.bits), rest = count % 8 * b;
  return count / 8 * b + rest / 8 + (rest % 8 != 0 ? 1 : 0);
}

namespace detail {

inline constexpr std::uint64_t bytes_of(std::uint8_t b) noexcept { return 0x0101010101010101ull * b; }

/// Eight codes (bytes, little-endian in a word) into 8 * bits / 8 = `bits`
/// bytes of a word's low end: three merge steps, pairs of bytes, of 16-bit
/// and of 32-bit lanes. The same function serves the body and the
/// zero-padded tail.
inline std::uint64_t pack_word(std::uint64_t w, int bits) noexcept {
  if (bits == 6) {
    // A code is wider than half a byte: each step moves the upper half of
    // every lane alone (the shifts of the other forms would drag the lower
    // half's bits down onto themselves).
    w &= bytes_of(0x3f);
    w = (w & 0x00ff00ff00ff00ffull) | ((w & 0xff00ff00ff00ff00ull) >> 2);
    w = (w & 0x0000ffff0000ffffull) | ((w & 0xffff0000ffff0000ull) >> 4);
    return (w & 0x00000000ffffffffull) | ((w & 0xffffffff00000000ull) >> 8);
  }
  const std::uint64_t one = (std::uint64_t(1) << bits) - 1;
  w &= bytes_of(static_cast<std::uint8_t>(one));
  w = (w | (w >> (8 - bits))) & (0x0001000100010001ull * ((one << bits) | one));
  w = (w | (w >> (16 - 2 * bits))) & (0x0000000100000001ull * ((std::uint64_t(1) << (4 * bits)) - 1));
  w = (w | (w >> (32 - 4 * bits))) & ((std::uint64_t(1) << (8 * bits)) - 1);
  return w;
}

/// The inverse: `bits` bytes into eight codes, sign-extended if `sgn`.
inline std::uint64_t unpack_word(std::uint64_t w, int bits, bool sgn) noexcept {
  if (bits == 6) {  // unsigned only (check_packing)
    w = (w & 0x0000000000ffffffull) | ((w & 0x0000ffffff000000ull) << 8);
    w = (w & 0x00000fff00000fffull) | ((w & 0x00fff00000fff000ull) << 4);
    return (w & 0x003f003f003f003full) | ((w & 0x0fc00fc00fc00fc0ull) << 2);
  }
  const std::uint64_t one = (std::uint64_t(1) << bits) - 1;
  w = (w | (w << (32 - 4 * bits))) & (0x0000000100000001ull * ((std::uint64_t(1) << (4 * bits)) - 1));
  w = (w | (w << (16 - 2 * bits))) & (0x0001000100010001ull * ((one << bits) | one));
  w = (w | (w << (8 - bits))) & bytes_of(static_cast<std::uint8_t>(one));
  if (sgn) {
    // Copy each code's sign bit into the byte's high bits (no carry between
    // bytes: the product stays within the byte).
    const std::uint64_t s = w & bytes_of(static_cast<std::uint8_t>(1u << (bits - 1)));
    w |= s * ((0x100u >> (bits - 1)) - 2u);
  }
  return w;
}

/// Nonzero if some byte of w is not a code of packing (bits, sgn): the
/// bytes read as int8 (`signed_bytes`) or as uint8 codes.
inline std::uint64_t bad_bytes(std::uint64_t w, int bits, bool sgn, bool signed_bytes) noexcept {
  // Unsigned packing (either byte type: a negative int8 has its bit 7 set):
  // in range iff no bit at or above `bits`.
  const std::uint64_t high = bytes_of(static_cast<std::uint8_t>(0xffu << bits));
  if (!sgn) return w & high;
  // uint8 codes, signed packing: 0 to 2^(bits-1) - 1, no bit at or above
  // bits - 1 (248 is not -8).
  if (!signed_bytes) return w & bytes_of(static_cast<std::uint8_t>(0xffu << (bits - 1)));
  // int8 codes, signed packing: byte-wise w + 2^(bits-1) mod 256 (no carry
  // between bytes): in range iff the sum has no bit at or above `bits`.
  const std::uint64_t h = bytes_of(0x80);
  const std::uint64_t sum = ((w & ~h) + bytes_of(static_cast<std::uint8_t>(1u << (bits - 1)))) ^ (w & h);
  return sum & high;
}

/// Throws if the bytes [a, a + na) and [b, b + nb) have one in common.
inline void check_no_overlap(const char* fn, const char* a_name, const void* a, std::size_t na, const char* b_name,
                             const void* b, std::size_t nb) {
  if (na == 0 || nb == 0) return;
  const auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  if (pa < pb + nb && pb < pa + na) {
    const bool a_first = pa <= pb;
    const std::uintptr_t lo = a_first ? pb : pa, hi = std::min(pa + na, pb + nb);
    throw error(std::string(fn) + ": " + a_name + " (" + std::to_string(na) + " bytes) and " + b_name + " (" +
                std::to_string(nb) + " bytes) overlap in memory (" + std::to_string(hi - lo) +
                " bytes in common, from byte " + std::to_string(lo - pa) + " of " + a_name + " and byte " +
                std::to_string(lo - pb) + " of " + b_name + "); expected " + a_name + " and " + b_name +
                " to share no memory");
  }
}

template <class R>
using range_value = std::remove_cv_t<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

inline std::uint64_t load_word(const std::uint8_t* p, std::size_t n) noexcept {
  std::uint64_t w = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&w, p, n);
  } else {
    for (std::size_t i = 0; i < n; ++i) w |= std::uint64_t(p[i]) << (8 * i);
  }
  return w;
}

inline void store_word(std::uint8_t* p, std::uint64_t w, std::size_t n) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &w, n);
  } else {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(w >> (8 * i));
  }
}

}  // namespace detail

/**
 * Packs `codes` (a contiguous range of a lowbit::code_type, e.g. the output
 * of quantize_codes) into `packed` (a contiguous range of std::uint8_t of
 * exactly packed_size(f, codes.size()) bytes).
 * @throws lowbit::error for an invalid packing `f`, a packed of another
 *         size, codes and packed that share a byte of memory, or a code
 *         whose value is outside f.min()..f.max() (a uint8 code 248 is not
 *         the int4 -8). Nothing is written then.
 */
template <class Codes, class Packed>
  requires std::ranges::contiguous_range<const Codes&> && std::ranges::sized_range<const Codes&> &&
           std::ranges::contiguous_range<Packed&> && std::ranges::sized_range<Packed&>
void pack(const packed_format& f, const Codes& codes, Packed&& packed) {
  using C = detail::range_value<const Codes&>;
  static_assert(code_type<C>, "lowbit::pack: codes must be int8, uint8, int16, uint16 or int32");
  static_assert(std::is_same_v<std::ranges::range_reference_t<Packed&>, std::uint8_t&>,
                "lowbit::pack: packed must be a mutable contiguous range of std::uint8_t");
  detail::check_packing(f, "lowbit::pack");
  const char* const fname = detail::packing_name(f.name);
  const C* c = std::ranges::data(codes);
  const std::size_t n = std::ranges::size(codes);
  std::uint8_t* out = std::ranges::data(packed);
  const std::size_t want = packed_size(f, n);
  if (std::ranges::size(packed) != want)
    throw error(std::string("lowbit::pack: packed has ") + std::to_string(std::ranges::size(packed)) +
                " bytes; expected " + std::to_string(want) + " for " + std::to_string(n) + " " + fname + " codes");
  detail::check_no_overlap("lowbit::pack", "codes", c, n * sizeof(C), "packed", out, want);
  const int bits = f.bits;
  const bool sgn = f.is_signed;
  const long long lo = f.min(), hi = f.max();
  // Validate everything first.
  bool bad = false;
  if constexpr (sizeof(C) == 1) {
    constexpr bool signed_bytes = std::is_signed_v<C>;
    std::uint64_t acc = 0;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
      acc |= detail::bad_bytes(detail::load_word(reinterpret_cast<const std::uint8_t*>(c + i), 8), bits, sgn,
                               signed_bytes);
    if (i < n)
      acc |= detail::bad_bytes(detail::load_word(reinterpret_cast<const std::uint8_t*>(c + i), n - i), bits, sgn,
                               signed_bytes);
    bad = acc != 0;
  } else {
    for (std::size_t i = 0; i < n; ++i) bad |= static_cast<long long>(c[i]) < lo || static_cast<long long>(c[i]) > hi;
  }
  if (bad)
    for (std::size_t i = 0; i < n; ++i)
      if (static_cast<long long>(c[i]) < lo || static_cast<long long>(c[i]) > hi)
        throw error("lowbit::pack: codes[" + std::to_string(i) + "] = " + std::to_string(static_cast<long long>(c[i])) +
                    " is invalid; expected an " + fname + " code from " + std::to_string(lo) + " to " +
                    std::to_string(hi));
  // Eight codes per word, `bits` bytes out.
  const std::size_t full = n / 8;
  auto word_at = [&](std::size_t i, std::size_t k) -> std::uint64_t {
    if constexpr (sizeof(C) == 1) {
      return detail::load_word(reinterpret_cast<const std::uint8_t*>(c + i), k);
    } else {
      std::uint8_t b[8] = {};
      for (std::size_t j = 0; j < k; ++j) b[j] = static_cast<std::uint8_t>(c[i + j]);
      return detail::load_word(b, 8);
    }
  };
  const std::size_t ob = static_cast<std::size_t>(bits);  // bytes per word out
  for (std::size_t w = 0; w < full; ++w) detail::store_word(out + w * ob, detail::pack_word(word_at(8 * w, 8), bits), ob);
  if (const std::size_t rest = n - 8 * full; rest != 0)
    detail::store_word(out + full * ob, detail::pack_word(word_at(8 * full, rest), bits), want - full * ob);
}

/**
 * Unpacks `packed` (exactly packed_size(f, codes.size()) bytes) into
 * `codes`, sign-extending signed packings.
 * @throws lowbit::error for an invalid packing `f`, a packed of another
 *         size, a code type that cannot hold f's codes (unsigned for a
 *         signed packing), packed and codes that share a byte of memory, or
 *         nonzero unused high bits in the last byte. Nothing is written then.
 */
template <class Packed, class Codes>
  requires std::ranges::contiguous_range<const Packed&> && std::ranges::sized_range<const Packed&> &&
           std::ranges::contiguous_range<Codes&> && std::ranges::sized_range<Codes&>
void unpack(const packed_format& f, const Packed& packed, Codes&& codes) {
  using C = detail::range_value<Codes&>;
  static_assert(code_type<C>, "lowbit::unpack: codes must be int8, uint8, int16, uint16 or int32");
  static_assert(std::is_same_v<detail::range_value<const Packed&>, std::uint8_t>,
                "lowbit::unpack: packed must be a contiguous range of std::uint8_t");
  detail::check_packing(f, "lowbit::unpack");
  const char* const fname = detail::packing_name(f.name);
  if (f.is_signed && std::is_unsigned_v<C>)
    throw error(std::string("lowbit::unpack: ") + detail::code_type_name<C>() + " codes cannot hold " + fname +
                " codes (down to " + std::to_string(f.min()) + "); expected a signed code type");
  const std::uint8_t* in = std::ranges::data(packed);
  C* c = std::ranges::data(codes);
  const std::size_t n = std::ranges::size(codes);
  const std::size_t want = packed_size(f, n);
  if (std::ranges::size(packed) != want)
    throw error(std::string("lowbit::unpack: packed has ") + std::to_string(std::ranges::size(packed)) +
                " bytes; expected " + std::to_string(want) + " for " + std::to_string(n) + " " + fname + " codes");
  detail::check_no_overlap("lowbit::unpack", "packed", in, want, "codes", c, n * sizeof(C));
  const int bits = f.bits;
  // The bits of the last byte that hold codes (0: all eight).
  const std::size_t used_bits = n % 8 * static_cast<std::size_t>(bits) % 8;
  if (used_bits != 0 && (in[want - 1] >> used_bits) != 0)
    throw error("lowbit::unpack: packed[" + std::to_string(want - 1) + "] = " + std::to_string(in[want - 1]) +
                " has nonzero unused high bits; expected them zero (the last byte holds " + std::to_string(used_bits) +
                " bits of " + fname + " codes)");
  const std::size_t ib = static_cast<std::size_t>(bits);
  const std::size_t full = n / 8;
  auto put = [&](std::size_t i, std::uint64_t w, std::size_t k) {
    if constexpr (sizeof(C) == 1) {
      detail::store_word(reinterpret_cast<std::uint8_t*>(c + i), w, k);
    } else {
      for (std::size_t j = 0; j < k; ++j) {
        const auto b = static_cast<std::uint8_t>(w >> (8 * j));
        c[i + j] = f.is_signed ? static_cast<C>(static_cast<std::int8_t>(b)) : static_cast<C>(b);
      }
    }
  };
  for (std::size_t w = 0; w < full; ++w) put(8 * w, detail::unpack_word(detail::load_word(in + w * ib, ib), bits, f.is_signed), 8);
  if (const std::size_t rest = n - 8 * full; rest != 0)
    put(8 * full, detail::unpack_word(detail::load_word(in + full * ib, want - full * ib), bits, f.is_signed), rest);
}

LOWBIT_END_NAMESPACE  // namespace lowbit

#endif  // LOWBIT_PACKING_HPP
