// SPDX-License-Identifier: Apache-2.0
//
// examples/npy.hpp, the .npy reader of rounding_benchmark --input: files
// written here byte by byte (every header version, dtype, order and shape
// the reader accepts, and each malformed case) are read back; values bit for
// bit, errors by their message.
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "npy.hpp"
#include "support/catch.hpp"

namespace {

namespace fs = std::filesystem;
using lowbit_test::contains_substring;

/// A directory of its own under the temp directory, removed at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::random_device rd;
    for (int i = 0;; ++i) {
      path = fs::temp_directory_path() / ("lowbit-test-npy-" + std::to_string(rd()) + std::to_string(i));
      if (fs::create_directory(path)) break;
    }
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  /// Writes `bytes` to the file `name` and returns its path.
  fs::path write(const std::string& name, const std::string& bytes) const {
    const fs::path p = path / name;
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }
};

std::string le(std::uint64_t v, int bytes) {
  std::string r;
  for (int i = 0; i < bytes; ++i) r += static_cast<char>((v >> (8 * i)) & 0xff);
  return r;
}

std::string f4(const std::vector<float>& v) {
  std::string r;
  for (float x : v) r += le(std::bit_cast<std::uint32_t>(x), 4);
  return r;
}

std::string f8(const std::vector<double>& v) {
  std::string r;
  for (double x : v) r += le(std::bit_cast<std::uint64_t>(x), 8);
  return r;
}

/// A .npy file as numpy writes it: magic, version, header length, the
/// header padded with spaces and a newline to a multiple of 64 bytes, data.
std::string npy_file(int major, const std::string& dict, const std::string& data) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  return std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0' + le(header.size(), major == 1 ? 2 : 4) +
         header + data;
}

std::string dict(const std::string& descr, bool fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape +
         ", }";
}

void require_bits(const std::vector<float>& got, const std::vector<float>& expected) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(expected[i]));
  }
}

/// Values whose bits are easy to get wrong: signed zeros, subnormals,
/// extremes, infinities and a NaN with a payload.
const std::vector<float> tricky_floats = {
    1.5f, -0.0f, 0.0f, std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::max(),
    std::numeric_limits<float>::infinity(), std::bit_cast<float>(std::uint32_t{0x7fc12345}), 3.0e-39f};

}  // namespace

TEST_CASE("npy: float32, every header version, C and Fortran order", "[npy]") {
  const temp_dir dir;
  for (int major : {1, 2, 3}) {
    for (bool fortran : {false, true}) {
      INFO("version " << major << ".0, fortran_order " << fortran);
      const auto p = dir.write("a.npy", npy_file(major, dict("<f4", fortran, "(2, 4)"), f4(tricky_floats)));
      const npy::array a = npy::read_file(p);
      REQUIRE(a.major_version == major);
      REQUIRE(a.minor_version == 0);
      REQUIRE(a.descr == "<f4");
      REQUIRE(!a.converted());
      REQUIRE(a.fortran_order == fortran);
      REQUIRE(a.shape == std::vector<std::uint64_t>{2, 4});
      REQUIRE(a.overflowed == 0);
      require_bits(a.values, tricky_floats);
    }
  }
}

TEST_CASE("npy: float64 is converted to float32 by rounding to nearest", "[npy]") {
  const temp_dir dir;
  const std::vector<double> d = {0.1, -1.0 / 3.0, 1e300, -1e300, 1e-50, -0.0, std::ldexp((1 << 25) - 1.0, 103),
                                 std::numeric_limits<double>::infinity(), 16777217.0};
  for (bool fortran : {false, true}) {
    const auto p = dir.write("d.npy", npy_file(1, dict("<f8", fortran, "(3, 3)"), f8(d)));
    const npy::array a = npy::read_file(p);
    REQUIRE(a.descr == "<f8");
    REQUIRE(a.converted());
    REQUIRE(a.fortran_order == fortran);
    std::vector<float> expected;
    for (double x : d) expected.push_back(static_cast<float>(x));
    require_bits(a.values, expected);
    REQUIRE(a.values[2] == std::numeric_limits<float>::infinity());
    REQUIRE(a.values[8] == 16777216.0f);  // a tie, to even
    REQUIRE(a.overflowed == 3);           // +-1e300 and FLT_MAX + ulp/2 (a tie, to even: 2^128)
  }
}

TEST_CASE("npy: shapes: 0-d, 1-d, several dimensions", "[npy]") {
  const temp_dir dir;
  SECTION("0-d: one element") {
    const npy::array a = npy::read_file(dir.write("s.npy", npy_file(1, dict("<f4", false, "()"), f4({2.5f}))));
    REQUIRE(a.shape.empty());
    require_bits(a.values, {2.5f});
  }
  SECTION("1-d") {
    const npy::array a = npy::read_file(dir.write("v.npy", npy_file(2, dict("<f4", false, "(3,)"), f4({1, 2, 3}))));
    REQUIRE(a.shape == std::vector<std::uint64_t>{3});
    require_bits(a.values, {1, 2, 3});
  }
  SECTION("4-d, a trailing comma") {
    std::vector<float> v(2 * 1 * 3 * 2);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) - 5.25f;
    const npy::array a = npy::read_file(dir.write("t.npy", npy_file(1, dict("<f4", true, "(2, 1, 3, 2,)"), f4(v))));
    REQUIRE(a.shape == std::vector<std::uint64_t>{2, 1, 3, 2});
    require_bits(a.values, v);
  }
}

TEST_CASE("npy: header literal variants", "[npy]") {
  const temp_dir dir;
  const std::string data = f4({7.0f, -7.0f});
  // Key order, double quotes, whitespace and newlines, no trailing comma,
  // no padding, a header not ending in a newline.
  for (const std::string& h : {std::string("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f4\"}"),
                               std::string("  {'descr':'<f4','fortran_order':False,'shape':(2,)}\n"),
                               std::string("{\n\t'descr' : '<f4' ,\n 'fortran_order' : False ,\n 'shape' : ( 2 , ) ,\n}")}) {
    INFO(h);
    const std::string file = std::string("\x93NUMPY\x01\x00", 8) + le(h.size(), 2) + h + data;
    const npy::array a = npy::read_file(dir.write("h.npy", file));
    REQUIRE(a.shape == std::vector<std::uint64_t>{2});
    require_bits(a.values, {7.0f, -7.0f});
  }
}

TEST_CASE("npy: a large array is read in chunks", "[npy]") {
  const temp_dir dir;
  std::vector<float> v(200003);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::ldexp(static_cast<float>(i % 977) - 400.0f, -7);
  const npy::array a = npy::read_file(dir.write("big.npy", npy_file(1, dict("<f4", false, "(200003,)"), f4(v))));
  require_bits(a.values, v);
}

TEST_CASE("npy: errors name the file, what was found and what was expected", "[npy]") {
  const temp_dir dir;
  const std::string two = f4({1.0f, 2.0f});
  struct bad {
    const char* what;
    std::string bytes;
    std::vector<std::string> message;
  };
  const std::string magic("\x93NUMPY", 6);
  const char nul_header[] = "{'descr': '<f4',\0 'fortran_order': False, 'shape': (2,)}";
  const std::string with_nul(nul_header, sizeof nul_header - 1);
  const std::vector<bad> cases = {
      {"empty 1-d", npy_file(1, dict("<f4", false, "(0,)"), ""), {"has no elements", "(0,)"}},
      {"empty 2-d", npy_file(1, dict("<f4", false, "(2, 0)"), ""), {"has no elements", "(2, 0)"}},
      {"big-endian", npy_file(1, dict(">f4", false, "(2,)"), two), {"'>f4'", "big-endian float32", "expected '<f4'"}},
      {"int32", npy_file(1, dict("<i4", false, "(2,)"), two), {"'<i4'", "signed integer", "expected '<f4'"}},
      {"float16", npy_file(1, dict("<f2", false, "(2,)"), two), {"'<f2'", "float16"}},
      {"objects", npy_file(1, dict("|O", false, "(2,)"), two), {"'|O'", "Python objects"}},
      {"structured", npy_file(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", two),
       {"structured dtype", "expected '<f4'"}},
      {"empty file", "", {"is truncated", "0 bytes"}},
      {"magic only", magic, {"is truncated", "6 bytes"}},
      {"no header length", magic + "\x01", {"is truncated"}},
      {"half a header length", magic + std::string("\x01\x00\x10", 3), {"is truncated", "byte 10"}},
      {"truncated header", npy_file(1, dict("<f4", false, "(2,)"), two).substr(0, 40), {"is truncated", "header ends at byte 128"}},
      {"truncated data", npy_file(1, dict("<f4", false, "(2,)"), two).substr(0, 128 + 5),
       {"5 bytes of data", "expected 8 bytes", "(2,)", "truncated"}},
      {"extra data", npy_file(1, dict("<f4", false, "(2,)"), two + "x"), {"9 bytes of data", "expected 8 bytes", "extra"}},
      {"float64 size", npy_file(3, dict("<f8", false, "(2,)"), two), {"8 bytes of data", "expected 16 bytes"}},
      {"bad magic", "\x93NUMPX" + npy_file(1, dict("<f4", false, "(2,)"), two).substr(6), {"magic string", "NUMPX"}},
      {"a zip archive", std::string("PK\x03\x04", 4) + std::string(60, '\0'), {"magic string", ".npz"}},
      {"a text file", "hello, world\n", {"magic string", "'hello,'"}},
      {"version 4.0", magic + std::string("\x04\x00", 2) + npy_file(1, dict("<f4", false, "(2,)"), two).substr(8),
       {"version 4.0", "expected 1.0, 2.0 or 3.0"}},
      {"version 1.1", magic + std::string("\x01\x01", 2) + npy_file(1, dict("<f4", false, "(2,)"), two).substr(8),
       {"version 1.1"}},
      {"huge header length", magic + std::string("\x02\x00\xff\xff\xff\x7f", 6), {"header of 2147483647 bytes"}},
      {"unterminated dict", npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", two),
       {"does not parse", "expected ',' or '}'", "expected a Python dict literal"}},
      {"unterminated string", npy_file(1, "{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", two),
       {"does not parse"}},
      {"not a literal", npy_file(1, "{'descr': dtype('float32'), 'fortran_order': False, 'shape': (2,)}", two),
       {"does not parse", "unexpected name 'dtype'"}},
      {"a NUL byte", npy_file(1, with_nul, two),
       {"does not parse", "\\x00"}},
      {"missing colon", npy_file(1, "{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", two),
       {"does not parse", "expected ':'"}},
      {"nested too deep", npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(200, '(') + "}",
                                   two),
       {"does not parse", "nested deeper"}},
      {"a list, not a dict", npy_file(1, "['<f4', False, (2,)]", two), {"not a dict"}},
      {"missing key", npy_file(1, "{'descr': '<f4', 'shape': (2,), }", two), {"no key 'fortran_order'"}},
      {"extra key", npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", two),
       {"the key 'x'", "expected only the keys"}},
      {"duplicate key", npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (2,)}", two),
       {"twice"}},
      {"fortran_order not a bool", npy_file(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", two),
       {"'fortran_order': 0;", "expected True or False"}},
      {"shape an integer", npy_file(1, dict("<f4", false, "(2)"), two), {"'shape': (2), an integer", "(n,)"}},
      {"shape a list", npy_file(1, dict("<f4", false, "[2]"), two), {"'shape': [2], not a tuple"}},
      {"shape negative", npy_file(1, dict("<f4", false, "(-2,)"), two), {"negative dimension -2"}},
      {"shape a float", npy_file(1, dict("<f4", false, "(2.0,)"), two), {"element 2.0 is not an integer"}},
      {"shape element too large", npy_file(1, dict("<f4", false, "(18446744073709551616,)"), two),
       {"larger than 2^64 - 1"}},
      {"shape product overflows", npy_file(1, dict("<f4", false, "(4294967296, 4294967296)"), two),
       {"(4294967296, 4294967296)", "overflows"}},
      {"shape bytes overflow", npy_file(1, dict("<f8", false, "(4611686018427387904,)"), two), {"overflows"}},
  };
  for (const bad& c : cases) {
    INFO(c.what);
    const auto p = dir.write("bad.npy", c.bytes);
    try {
      npy::read_file(p);
      FAIL("no error");
    } catch (const npy::error& e) {
      const std::string m = e.what();
      INFO(m);
      REQUIRE(m.rfind(p.string() + ": ", 0) == 0);
      for (const std::string& s : c.message) REQUIRE_THAT(m, contains_substring(s));
    }
  }
}

TEST_CASE("npy: a file that is not there or not a file", "[npy]") {
  const temp_dir dir;
  REQUIRE_THROWS_WITH(npy::read_file(dir.path / "none.npy"), contains_substring("no such file"));
  REQUIRE_THROWS_WITH(npy::read_file(dir.path), contains_substring("is a directory"));
}
