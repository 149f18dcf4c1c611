// SPDX-License-Identifier: Apache-2.0
// Codes and packing (codes.hpp, packing.hpp), each against a baseline in the
// same run:
//   codes/fake/int_quant/<N>        the fake-quantizing operator (baseline)
//   codes/quantize/int_quant/<N>    quantize_codes to int8
//   codes/dequantize/int_quant/<N>  dequantize from int8
//   pack/<fmt>/plain/<N>            one code at a time, as the convention reads
//   pack/<fmt>/lowbit/<N>           lowbit::pack (eight codes per 64-bit word)
//   unpack/<fmt>/plain|lowbit/<N>   the same for unpack
// Items are codes.
#include <benchmark/benchmark.h>

#include <lowbit/codes.hpp>
#include <lowbit/packing.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace {

std::vector<float> inputs(std::size_t n) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-6.0f, 6.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = u(rng);
  return x;
}

template <class C>
std::vector<C> codes_of(const lowbit::packed_format& f, std::size_t n) {
  std::mt19937 rng(2);
  std::uniform_int_distribution<int> d(f.min(), f.max());
  std::vector<C> c(n);
  for (auto& v : c) v = static_cast<C>(d(rng));
  return c;
}

const lowbit::int_quant<> iq{.is_signed = true};

void codes_fake(benchmark::State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const auto x = inputs(n);
  std::vector<float> y(n);
  for (auto _ : st) {
    iq(x, 0.5f, 0.0f, 4.0f, y);
    benchmark::DoNotOptimize(y.data());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}

void codes_quantize(benchmark::State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const auto x = inputs(n);
  std::vector<std::int8_t> c(n);
  for (auto _ : st) {
    lowbit::quantize_codes(iq, x, 0.5f, 0.0f, 4.0f, c);
    benchmark::DoNotOptimize(c.data());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}

void codes_dequantize(benchmark::State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const auto x = inputs(n);
  std::vector<std::int8_t> c(n);
  lowbit::quantize_codes(iq, x, 0.5f, 0.0f, 4.0f, c);
  std::vector<float> y(n);
  for (auto _ : st) {
    lowbit::dequantize(iq, c, 0.5f, 0.0f, 4.0f, y);
    benchmark::DoNotOptimize(y.data());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}

/// The convention written as a plain loop: code i into its bit field.
void pack_plain(const lowbit::packed_format& f, const std::vector<std::int8_t>& c, std::vector<std::uint8_t>& out) {
  const int k = f.per_byte();
  const unsigned mask = (1u << f.bits) - 1;
  for (auto& b : out) b = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] < f.min() || c[i] > f.max()) throw lowbit::error("bad code");
    out[i / static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(
        out[i / static_cast<std::size_t>(k)] |
        ((static_cast<unsigned>(c[i]) & mask) << ((i % static_cast<std::size_t>(k)) * static_cast<unsigned>(f.bits))));
  }
}

void unpack_plain(const lowbit::packed_format& f, const std::vector<std::uint8_t>& in, std::vector<std::int8_t>& c) {
  const int k = f.per_byte();
  const unsigned mask = (1u << f.bits) - 1;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const unsigned raw =
        (in[i / static_cast<std::size_t>(k)] >> ((i % static_cast<std::size_t>(k)) * static_cast<unsigned>(f.bits))) & mask;
    c[i] = static_cast<std::int8_t>(f.is_signed && raw > static_cast<unsigned>(f.max()) ? static_cast<int>(raw) - (1 << f.bits)
                                                                                         : static_cast<int>(raw));
  }
}

void pack_bench(benchmark::State& st, lowbit::packed_format f, bool use_lowbit) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const auto c = codes_of<std::int8_t>(f, n);
  std::vector<std::uint8_t> p(lowbit::packed_size(f, n));
  for (auto _ : st) {
    if (use_lowbit) lowbit::pack(f, c, p);
    else pack_plain(f, c, p);
    benchmark::DoNotOptimize(p.data());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}

void unpack_bench(benchmark::State& st, lowbit::packed_format f, bool use_lowbit) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const auto c0 = codes_of<std::int8_t>(f, n);
  std::vector<std::uint8_t> p(lowbit::packed_size(f, n));
  lowbit::pack(f, c0, p);
  std::vector<std::int8_t> c(n);
  for (auto _ : st) {
    if (use_lowbit) lowbit::unpack(f, p, c);
    else unpack_plain(f, p, c);
    benchmark::DoNotOptimize(c.data());
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations() * n));
}

}  // namespace

BENCHMARK(codes_fake)->Name("codes/fake/int_quant")->Arg(4096)->Arg(1 << 20);
BENCHMARK(codes_quantize)->Name("codes/quantize/int_quant")->Arg(4096)->Arg(1 << 20);
BENCHMARK(codes_dequantize)->Name("codes/dequantize/int_quant")->Arg(4096)->Arg(1 << 20);

BENCHMARK_CAPTURE(pack_bench, int4_plain, lowbit::packings::int4, false)->Name("pack/int4/plain")->Arg(4096)->Arg(1 << 20);
BENCHMARK_CAPTURE(pack_bench, int4_lowbit, lowbit::packings::int4, true)->Name("pack/int4/lowbit")->Arg(4096)->Arg(1 << 20);
BENCHMARK_CAPTURE(pack_bench, uint1_plain, lowbit::packings::uint1, false)->Name("pack/uint1/plain")->Arg(4096);
BENCHMARK_CAPTURE(pack_bench, uint1_lowbit, lowbit::packings::uint1, true)->Name("pack/uint1/lowbit")->Arg(4096);
BENCHMARK_CAPTURE(unpack_bench, int4_plain, lowbit::packings::int4, false)->Name("unpack/int4/plain")->Arg(4096)->Arg(1 << 20);
BENCHMARK_CAPTURE(unpack_bench, int4_lowbit, lowbit::packings::int4, true)->Name("unpack/int4/lowbit")->Arg(4096)->Arg(1 << 20);
BENCHMARK_CAPTURE(unpack_bench, int2_plain, lowbit::packings::int2, false)->Name("unpack/int2/plain")->Arg(4096);
BENCHMARK_CAPTURE(unpack_bench, int2_lowbit, lowbit::packings::int2, true)->Name("unpack/int2/lowbit")->Arg(4096);
