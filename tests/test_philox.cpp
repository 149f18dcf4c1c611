// SPDX-License-Identifier: Apache-2.0
// Tests for include/lowbit/detail/philox.hpp: Philox4x32-10 against
// Random123's known answers, the SIMD paths against the scalar one, and the
// stochastic-rounding draw mapping against its definition and against the
// draws of an independent Python implementation (tests/data/philox_draws.txt,
// written by scripts/philox_reference.py).
#include <lowbit/detail/philox.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/test_util.hpp"

namespace ld = lowbit::detail;
using lowbit_test::bits;

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
constexpr u64 top = std::numeric_limits<u64>::max();

// Random123 tests/kat_vectors, "philox4x32 10": counter, key, expected.
struct kat {
  std::array<u32, 4> ctr;
  std::array<u32, 2> key;
  std::array<u32, 4> out;
};
const kat philox_kat[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

// Runs f.template operator()<A>() for every arch this build can run: the
// default and, on x86, SSE2, AVX2 and AVX-512 batches when enabled.
template <class F>
void for_each_arch(F&& f) {
  f.template operator()<ld::default_arch>();
#if XSIMD_WITH_SSE2
  f.template operator()<xsimd::sse2>();
#endif
#if XSIMD_WITH_AVX2
  f.template operator()<xsimd::avx2>();
#endif
#if XSIMD_WITH_AVX512BW
  f.template operator()<xsimd::avx512bw>();
#endif
}

template <class T, class A>
std::array<T, xsimd::batch<T, A>::size> lanes(const xsimd::batch<T, A>& b) {
  alignas(64) std::array<T, xsimd::batch<T, A>::size> a;
  b.store_aligned(a.data());
  return a;
}

template <class T, class A>
xsimd::batch<T, A> from_lanes(const T* p) {
  return xsimd::batch<T, A>::load_unaligned(p);
}

// The definition of the threshold, computed independently of the header.
template <class T>
T expected_threshold(u64 seed, int r, u64 i) {
  return static_cast<T>(std::ldexp(static_cast<double>(ld::stochastic_draw(seed, r, i)) + 1.0, -r));
}

std::string data_path() {
#ifdef LOWBIT_TEST_DATA_DIR
  return std::string(LOWBIT_TEST_DATA_DIR) + "/philox_draws.txt";
#else
  std::string f = __FILE__;
  const auto slash = f.find_last_of("/\\");
  return (slash == std::string::npos ? std::string(".") : f.substr(0, slash)) + "/data/philox_draws.txt";
#endif
}

}  // namespace

TEST_CASE("philox4x32_10 gives Random123's known answers", "[philox]") {
  for (const kat& k : philox_kat) {
    const auto out = ld::philox4x32_10(k.ctr, k.key);
    for (int w = 0; w < 4; ++w) CHECK(out[w] == k.out[w]);
    // The generic function, scalar and portable.
    u32 c[4] = {k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]};
    ld::philox4x32_10_portable(c[0], c[1], c[2], c[3], k.key[0], k.key[1]);
    for (int w = 0; w < 4; ++w) CHECK(c[w] == k.out[w]);
    // Every lane of every arch's batch.
    for_each_arch([&]<class A>() {
      using U = xsimd::batch<u32, A>;
      U b0(k.ctr[0]), b1(k.ctr[1]), b2(k.ctr[2]), b3(k.ctr[3]);
      ld::philox4x32_10(b0, b1, b2, b3, k.key[0], k.key[1]);
      const U got[4] = {b0, b1, b2, b3};
      for (int w = 0; w < 4; ++w)
        for (u32 v : lanes(got[w])) CHECK(v == k.out[w]);
    });
  }
}

TEST_CASE("mulhilo32: the fast and the portable paths are the exact product", "[philox]") {
  std::mt19937_64 rng(21);
  std::vector<u32> xs = {0, 1, 2, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF};
  while (xs.size() < 4096) xs.push_back(static_cast<u32>(rng()));
  const u32 ms[] = {ld::philox_m0, ld::philox_m1, 0xFFFFFFFF, 1, 0x10001};
  for_each_arch([&]<class A>() {
    using U = xsimd::batch<u32, A>;
    INFO("arch " << A::name() << ", fast path " << ld::has_fast_mulhilo32<A>);
    for (u32 m : ms) {
      for (std::size_t i = 0; i + U::size <= xs.size(); i += U::size) {
        const U x = from_lanes<u32, A>(&xs[i]);
        U hi, lo, phi, plo;
        ld::mulhilo32(m, x, hi, lo);
        ld::mulhilo32_portable(m, x, phi, plo);
        const auto h = lanes(hi), l = lanes(lo), ph = lanes(phi), pl = lanes(plo);
        for (std::size_t j = 0; j < U::size; ++j) {
          const u64 p = u64(m) * xs[i + j];
          CHECK(h[j] == u32(p >> 32));
          CHECK(l[j] == u32(p));
          CHECK(ph[j] == u32(p >> 32));
          CHECK(pl[j] == u32(p));
        }
      }
    }
  });
  // The scalar portable split (the generic template, not the uint64 overload).
  for (u32 m : ms)
    for (u32 x : xs) {
      struct wrap {  // a U that is not std::uint32_t, to pick the template
        u32 v;
        explicit wrap(u32 a = 0) : v(a) {}
        wrap operator&(wrap o) const { return wrap(v & o.v); }
        wrap operator|(wrap o) const { return wrap(v | o.v); }
        wrap operator+(wrap o) const { return wrap(v + o.v); }
        wrap operator*(wrap o) const { return wrap(v * o.v); }
        wrap operator>>(int s) const { return wrap(v >> s); }
        wrap operator<<(int s) const { return wrap(v << s); }
      };
      wrap hi, lo;
      ld::mulhilo32_portable(m, wrap(x), hi, lo);
      CHECK(hi.v == u32((u64(m) * x) >> 32));
      CHECK(lo.v == u32(u64(m) * x));
    }
}

TEST_CASE("philox4x32_10 on batches equals the scalar function lane by lane", "[philox]") {
  std::mt19937_64 rng(1234);
  for_each_arch([&]<class A>() {
    using U = xsimd::batch<u32, A>;
    constexpr std::size_t n = U::size;
    INFO("arch " << A::name());
    for (int trial = 0; trial < 300; ++trial) {
      const u32 k0 = static_cast<u32>(rng()), k1 = static_cast<u32>(rng());
      alignas(64) u32 c[4][n];
      for (auto& w : c)
        for (auto& v : w) v = (trial % 3 == 0) ? static_cast<u32>(rng() % 4) : static_cast<u32>(rng());
      U b[4], p[4];
      for (int w = 0; w < 4; ++w) b[w] = p[w] = U::load_aligned(c[w]);
      ld::philox4x32_10(b[0], b[1], b[2], b[3], k0, k1);
      ld::philox4x32_10_portable(p[0], p[1], p[2], p[3], k0, k1);
      for (std::size_t j = 0; j < n; ++j) {
        const auto want = ld::philox4x32_10({c[0][j], c[1][j], c[2][j], c[3][j]}, {k0, k1});
        for (int w = 0; w < 4; ++w) {
          CHECK(lanes(b[w])[j] == want[w]);
          CHECK(lanes(p[w])[j] == want[w]);
        }
      }
    }
  });
}

TEST_CASE("stochastic_draw follows the mapping's definition", "[philox]") {
  // Recomputed here from the definition with the array Philox.
  const u64 seeds[] = {0, 0x0123456789ABCDEFull, top};
  const u64 firsts[] = {0, 250, u64(1) << 32, (u64(64) << 32) - 5, top - 300};
  for (u64 seed : seeds)
    for (int r = 1; r <= 32; ++r)
      for (u64 f : firsts)
        for (u64 i = f; i - f < 300; ++i) {
          const unsigned w = r <= 8 ? 8 : r <= 16 ? 16 : 32;
          const u64 G = 16 * 4 * (32 / w);
          const u64 g = i / G, e = i % G, u = e / 16;
          const auto out = ld::philox4x32_10({u32(e % 16), u32(g), u32(g >> 32), 0}, {u32(seed), u32(seed >> 32)});
          const u32 field = (out[u % 4] >> (w * (u / 4))) & (w == 32 ? 0xFFFFFFFFu : (1u << w) - 1);
          const u32 d = field >> (w - r);
          const u32 got = ld::stochastic_draw(seed, r, i);
          if (got != d) {
            INFO("seed " << seed << " r " << r << " i " << i);
            CHECK(got == d);
          }
          if (i == top) break;
        }
}

TEST_CASE("stochastic_draw equals the independent Python implementation's draws", "[philox]") {
  const std::string path = data_path();
  std::ifstream in(path);
  INFO("data file " << path);
  REQUIRE(in.good());
  std::string line;
  int n = 0, bad = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    u64 seed = 0, i = 0, d = 0;
    int r = 0;
    REQUIRE(static_cast<bool>(s >> seed >> r >> i >> d));
    const u32 got = ld::stochastic_draw(seed, r, i);
    if (got != d) {
      ++bad;
      INFO(line);
      CHECK(got == d);
    }
    // And through the thresholds of every path.
    if (r <= 23) {
      CHECK(bits(ld::stochastic_threshold<float>(seed, r, i, 1)) ==
            bits(std::ldexp(static_cast<float>(d + 1), -r)));
      CHECK(bits(lanes(ld::stochastic_threshold<xsimd::batch<float>>(seed, r, i, 1))[0]) ==
            bits(std::ldexp(static_cast<float>(d + 1), -r)));
    }
    CHECK(bits(ld::stochastic_threshold<double>(seed, r, i, 1)) ==
          bits(std::ldexp(static_cast<double>(d + 1), -r)));
    ++n;
  }
  CHECK(bad == 0);
  CHECK(n > 1000);
}

TEST_CASE("stochastic_draw_lanes equals stochastic_draw, scalar and batch", "[philox]") {
  const u64 seeds[] = {0, 42, top};
  const u64 firsts[] = {0, 60, 250, (u64(1) << 32) - 20, (u64(64) << 32) - 20, (u64(128) << 32) - 20,
                        (u64(256) << 32) - 20, top - 40};
  for (u64 seed : seeds)
    for (int r = 1; r <= 32; ++r)
      for (u64 f : firsts)
        for (u64 i = f; i - f < 40; ++i) {
          const u32 got = ld::stochastic_draw_lanes<u32>(seed, r, u32(i), u32(i >> 32));
          if (got != ld::stochastic_draw(seed, r, i)) {
            INFO("seed " << seed << " r " << r << " i " << i);
            CHECK(got == ld::stochastic_draw(seed, r, i));
          }
        }
  for_each_arch([&]<class A>() {
    using U = xsimd::batch<u32, A>;
    constexpr std::size_t n = U::size;
    INFO("arch " << A::name());
    for (u64 seed : seeds)
      for (int r = 1; r <= 32; ++r)
        for (u64 f : firsts)
          for (u64 i = f; i - f < 40; i += n) {
            alignas(64) u32 lo[n], hi[n];
            for (std::size_t j = 0; j < n; ++j) {
              lo[j] = u32(i + j);
              hi[j] = u32((i + j) >> 32);
            }
            const auto got = lanes(ld::stochastic_draw_lanes(seed, r, U::load_aligned(lo), U::load_aligned(hi)));
            for (std::size_t j = 0; j < n; ++j)
              if (got[j] != ld::stochastic_draw(seed, r, i + j)) {
                INFO("seed " << seed << " r " << r << " i " << i + j);
                CHECK(got[j] == ld::stochastic_draw(seed, r, i + j));
              }
          }
  });
}

TEST_CASE("stochastic_threshold: every lane is (draw + 1) * 2^-r, every width and step", "[philox]") {
  const u64 seeds[] = {0, 0x9E3779B97F4A7C15ull, top};
  // Group boundaries (64, 128, 256), 2^32, the carry from lo32(g) into
  // hi32(g) (2^32 G) and the top of the index range (wrapping past 2^64 - 1
  // is modulo 2^64 in both paths).
  const u64 firsts[] = {0,
                        1,
                        63 - 3,
                        128 - 5,
                        256 - 7,
                        (u64(1) << 32) - 9,
                        (u64(64) << 32) - 9,
                        (u64(128) << 32) - 11,
                        (u64(256) << 32) - 13,
                        top - 20,
                        top - 3};
  const std::ptrdiff_t steps[] = {1, 2, 3, 17, 0, -1, -64, 1000003};
  for_each_arch([&]<class A>() {
    using F = xsimd::batch<float, A>;
    using D = xsimd::batch<double, A>;
    INFO("arch " << A::name());
    for (u64 seed : seeds)
      for (u64 f0 : firsts)
        for (std::ptrdiff_t step : steps)
          for (u64 off = 0; off < 24; off += 3) {
            const u64 first = f0 + off;
            auto idx = [&](std::size_t j) { return first + static_cast<u64>(static_cast<std::int64_t>(j) * step); };
            for (int r = 1; r <= 23; ++r) {
              const auto got = lanes(ld::stochastic_threshold<F>(seed, r, first, step));
              for (std::size_t j = 0; j < F::size; ++j)
                if (bits(got[j]) != bits(expected_threshold<float>(seed, r, idx(j)))) {
                  INFO("float seed " << seed << " r " << r << " first " << first << " step " << step << " lane " << j);
                  CHECK(bits(got[j]) == bits(expected_threshold<float>(seed, r, idx(j))));
                }
            }
            for (int r = 1; r <= 32; ++r) {
              const auto got = lanes(ld::stochastic_threshold<D>(seed, r, first, step));
              for (std::size_t j = 0; j < D::size; ++j)
                if (bits(got[j]) != bits(expected_threshold<double>(seed, r, idx(j)))) {
                  INFO("double seed " << seed << " r " << r << " first " << first << " step " << step << " lane " << j);
                  CHECK(bits(got[j]) == bits(expected_threshold<double>(seed, r, idx(j))));
                }
            }
          }
  });
  for (u64 seed : seeds)
    for (u64 first : firsts) {
      for (int r = 1; r <= 23; ++r)
        CHECK(bits(ld::stochastic_threshold<float>(seed, r, first, 5)) ==
              bits(expected_threshold<float>(seed, r, first)));
      for (int r = 1; r <= 32; ++r)
        CHECK(bits(ld::stochastic_threshold<double>(seed, r, first, 5)) ==
              bits(expected_threshold<double>(seed, r, first)));
    }
}

TEST_CASE("stochastic thresholds do not depend on how a range is split", "[philox]") {
  // A range of 700 elements is cut into pieces at arbitrary points; each
  // piece runs batches from its start and a scalar tail, on every arch.
  const u64 seed = 0xDEADBEEFCAFEF00Dull;
  const u64 bases[] = {0, (u64(64) << 32) - 333, top - 699};
  std::mt19937 rng(7);
  for (u64 base : bases)
    for (int r : {1, 4, 8, 9, 16, 17, 23}) {
      std::vector<float> whole(700);
      for (std::size_t i = 0; i < whole.size(); ++i) whole[i] = ld::stochastic_threshold<float>(seed, r, base + i, 1);
      for_each_arch([&]<class A>() {
        using F = xsimd::batch<float, A>;
        for (int trial = 0; trial < 5; ++trial) {
          std::vector<float> got(whole.size(), -1.0f);
          std::size_t start = 0;
          while (start < got.size()) {
            const std::size_t len = std::min<std::size_t>(got.size() - start, 1 + rng() % 97);
            std::size_t i = start;
            for (; i + F::size <= start + len; i += F::size)
              ld::stochastic_threshold<F>(seed, r, base + i, 1).store_unaligned(&got[i]);
            for (; i < start + len; ++i) got[i] = ld::stochastic_threshold<float>(seed, r, base + i, 1);
            start += len;
          }
          INFO("arch " << A::name() << " r " << r << " base " << base);
          CHECK(lowbit_test::first_bit_difference(got, whole) == -1);
        }
      });
    }
}

TEST_CASE("stochastic draws look uniform (a coarse sanity check)", "[philox]") {
  // r = 8: 256 values over 256 * 400 consecutive indices; each count is
  // Binomial(102400, 1/256), mean 400, sd ~20: allow 6 sd. And each of the
  // 32 bits of r = 32 draws is set about half of the time.
  for (u64 seed : {u64(0), u64(1), top}) {
    std::vector<int> count(256, 0);
    for (u64 i = 0; i < 256 * 400; ++i) ++count[ld::stochastic_draw(seed, 8, i)];
    for (int c : count) {
      CHECK(c > 400 - 120);
      CHECK(c < 400 + 120);
    }
    int ones[32] = {};
    const int n = 40000;
    for (u64 i = 0; i < u64(n); ++i) {
      const u32 d = ld::stochastic_draw(seed, 32, i);
      for (int b = 0; b < 32; ++b) ones[b] += (d >> b) & 1;
    }
    for (int b = 0; b < 32; ++b) {
      CHECK(ones[b] > n / 2 - 600);  // sd 100
      CHECK(ones[b] < n / 2 + 600);
    }
  }
}

TEST_CASE("stochastic_thresholds_group equals stochastic_threshold on every batch of the group", "[philox]") {
  const u64 seeds[] = {0, 0x243F6A8885A308D3ull, top};
  std::size_t compared = 0;
  const u64 groups[] = {0, 1, 2, 3, 0xFFFFFFFFull, u64(1) << 32, (u64(1) << 32) + 1, top >> 6, top >> 7, top >> 8,
                        (top >> 8) - 1};
  for_each_arch([&]<class A>() {
    using F = xsimd::batch<float, A>;
    INFO("arch " << A::name());
    for (u64 seed : seeds)
      for (int r = 1; r <= 23; ++r)
        for (u64 g : groups) {
          const std::size_t G = ld::stochastic_group_size(r);
          if (g > top / G) continue;  // the group would pass 2^64
          std::vector<float> out(G);
          ld::stochastic_thresholds_group<A>(seed, r, g, out.data());
          compared += G;
          // Several groups in one call (two at a time, then one) give each
          // group's own thresholds.
          if (g <= top / G - 3) {
            std::vector<float> three(3 * G);
            ld::stochastic_thresholds_group<A>(seed, r, g, three.data(), 3);
            for (int q = 0; q < 3; ++q) {
              std::vector<float> one(G);
              ld::stochastic_thresholds_group<A>(seed, r, g + static_cast<u64>(q), one.data());
              for (std::size_t i = 0; i < G; ++i)
                if (bits(three[q * G + i]) != bits(one[i])) {
                  INFO("seed " << seed << " r " << r << " g " << g << " + " << q << " element " << i);
                  CHECK(bits(three[q * G + i]) == bits(one[i]));
                }
            }
          }
          for (std::size_t b = 0; b < G / F::size; ++b) {
            const auto got = lanes(F::load_unaligned(out.data() + b * F::size));
            const auto want = lanes(ld::stochastic_threshold<F>(seed, r, g * G + b * F::size, 1));
            for (std::size_t j = 0; j < F::size; ++j)
              if (bits(got[j]) != bits(want[j])) {
                INFO("seed " << seed << " r " << r << " g " << g << " batch " << b << " lane " << j);
                CHECK(bits(got[j]) == bits(want[j]));
              }
          }
        }
  });
  CHECK(compared > 0);
}

TEST_CASE("philox_group_stepper gives philox_group_words' words, a few rounds at a time", "[philox]") {
#if XSIMD_WITH_AVX512F
  const u64 seeds[] = {0, 0x243F6A8885A308D3ull, top};
  const u64 groups[] = {0, 1, 0xFFFFFFFFull, u64(1) << 32, top >> 6, top >> 8};
  std::size_t compared = 0;
  for_each_arch([&]<class A>() {
    if constexpr (ld::has_philox_group_stepper<A>) {
      using U = xsimd::batch<std::uint32_t, A>;
      INFO("arch " << A::name());
      for (u64 seed : seeds)
        for (u64 g : groups) {
          INFO("seed " << seed << " g " << g);
          U want[1][4][1];
          ld::philox_group_words<A, 1>(static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32), g,
                                       want);
          ld::philox_group_stepper::keys ks;
          ld::philox_group_stepper::set_keys(ks, seed);
          // The schedules for_batches uses (4, 8 and 16 batches a group),
          // and 1 and 32; each batch called once, in order.
          ld::philox_group_stepper a, b, c, d1, d32;
          int calls = 0, next = 0;
          for (auto [s, nb] : {std::pair{&a, 4}, std::pair{&b, 8}, std::pair{&c, 16}, std::pair{&d1, 1},
                               std::pair{&d32, 32}}) {
            s->start(g);
            next = 0;
            s->interleave(ks, nb, [&](int i) {
              CHECK(i == next);
              ++next;
              ++calls;
            });
            CHECK(next == nb);
          }
          CHECK(calls == 61);
          for (const auto* s : {&a, &b, &c, &d1, &d32}) {
            U got[4][1];
            s->words(got);
            for (int k = 0; k < 4; ++k) CHECK(lanes(got[k][0]) == lanes(want[0][k][0]));
            ++compared;
          }
          // Nine rounds are not ten.
          ld::philox_group_stepper d;
          d.start(g);
          for (int round = 0; round < 9; ++round) d.round_at(ks, round);
          U nine[4][1];
          d.words(nine);
          CHECK(lanes(nine[0][0]) != lanes(want[0][0][0]));
        }
    }
  });
  if (compared == 0) SUCCEED("no AVX-512 arch in this build: the stepper is not compiled");
#else
  SUCCEED("no AVX-512 in this build: the stepper is not compiled");
#endif
}
