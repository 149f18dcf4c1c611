// SPDX-License-Identifier: Apache-2.0
//
// rounding_benchmark: lowbit's main job. For every rounding mode of every
// operator it measures throughput and the quantization error, on normal,
// uniform and Laplace inputs from a fixed seed or on the user's own values
// (--input FILE.npy):
//   IntQuant   bit widths 2..8, signed, unsigned and signed narrow
//   Trunc      int8 on scale s to 2..7 bits on scale 2^(8-b) s
//   FloatQuant the OCP presets (FP8 E4M3FN, E5M2, FP6 E2M3, E3M2, FP4 E2M1)
//   BipolarQuant (no rounding mode)
// Error statistics come from lowbit::error_stats: MSE, SQNR (dB), bias (mean
// signed error), max |error| and the clipped fraction (x outside the
// quantizer's range). The scale of each quantizer spans +-3 standard
// deviations of the input (unsigned: 0..6 sigma); the built-in inputs have
// mean 0 and standard deviation 1. A file's values set these from their own
// mean m and standard deviation sd (of the finite values): signed IntQuant,
// Trunc and FloatQuant span +-(|m| + 3 sd), unsigned IntQuant m - 3 sd to
// m + 3 sd (the zero point rounded to an integer), BipolarQuant's scale is
// 0.8 sd. Throughput is the best of several timed runs, in elements per ns,
// single thread.
//
//   lowbit-example-rounding_benchmark [--full | --csv | --json] [--plot FILE.svg] [--quick]
//       [--input FILE.npy] [--ops LIST] [--modes LIST] [--bits LIST] [--formats LIST]
//       [--seed N] [--random-bits N] [--help]
//
// By default it prints a summary: for the first input (normal, or the file)
// one block per IntQuant signed bit width (4 and 8 unless --bits), Trunc bit
// width (4 unless --bits) and FloatQuant format (fp8_e4m3fn and fp4_e2m1
// unless --formats), and BipolarQuant, each ranking the modes by SQNR with
// bias, clipped fraction and throughput. --full prints the table of every
// row instead, --csv / --json print every row in that format, --plot writes
// an SVG of SQNR against IntQuant bit width (signed, first input), one line
// per rounding mode, and --quick uses fewer elements (with --input, the
// file's first 4096 values). Progress goes to stderr. --help has the rest.
#include <lowbit/lowbit.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "npy.hpp"

namespace {

const char usage_text[] =
    "usage: lowbit-example-rounding_benchmark [options]\n"
    "\n"
    "Throughput and quantization error of every rounding mode of lowbit's IntQuant, Trunc,\n"
    "FloatQuant and BipolarQuant, on built-in inputs or on your own values.\n"
    "\n"
    "Output (default: a summary of the first input, modes ranked by SQNR):\n"
    "  --full             the table of every row\n"
    "  --csv, --json      every row as CSV or JSON\n"
    "  --plot FILE.svg    also write an SVG of SQNR against IntQuant bit width\n"
    "                     (signed, first input), one line per mode\n"
    "  --quick            fewer elements (2^12 instead of 2^16; with --input the first 4096 values)\n"
    "\n"
    "Input (default: normal, uniform and Laplace values from a fixed seed):\n"
    "  --input FILE.npy   a numpy .npy array, float32 or float64 (converted to float32),\n"
    "                     any shape, C or Fortran order; the scales follow its mean and\n"
    "                     standard deviation\n"
    "\n"
    "Filters (comma-separated lists, any letter case):\n"
    "  --ops LIST         intquant, trunc, floatquant, bipolarquant\n"
    "  --modes LIST       rounding modes as lowbit::parse_rounding_mode reads them\n"
    "                     (round or half_even, ceil, floor, up, down, half_up, half_down, ...), or all;\n"
    "                     BipolarQuant has no mode and is not filtered by --modes\n"
    "  --bits LIST        IntQuant bit widths, 2 to 16 (default 2..8); Trunc (from int8) takes\n"
    "                     those from 2 to 7\n"
    "  --formats LIST     FloatQuant formats: fp8_e4m3fn (or e4m3fn, fp8_e4m3, e4m3),\n"
    "                     fp8_e5m2 (e5m2), fp6_e2m3 (e2m3), fp6_e3m2 (e3m2), fp4_e2m1 (e2m1)\n"
    "\n"
    "Stochastic rounding (set on the operators that have these fields):\n"
    "  --seed N           the seed of the STOCHASTIC mode's draws, 0 to 2^64 - 1 (default 0)\n"
    "  --random-bits N    random bits per element for STOCHASTIC, 1 to 23 (default 16)\n"
    "\n"
    "  --help             this text\n"
    "\n"
    "Exit status: 0 done, 1 a case failed, 2 a bad option or input file.\n";

/// A bad option: printed with "rounding_benchmark: " and a pointer to
/// --help, exit status 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A bad input file: printed with "rounding_benchmark: ", exit status 2.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct row {
  std::string op, variant, mode, dist;
  int bits = 0;
  double el_per_ns = 0;
  lowbit::error_stats_result s;
};

const char* dist_names[] = {"normal", "uniform", "laplace"};

/// n values of unit standard deviation from a fixed seed.
std::vector<float> make_input(int dist, std::size_t n) {
  std::mt19937 rng(1234u + static_cast<unsigned>(dist));
  std::vector<float> x(n);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> ud(-std::sqrt(3.0f), std::sqrt(3.0f));
  std::exponential_distribution<float> ed(std::sqrt(2.0f));
  for (float& v : x) {
    if (dist == 0)
      v = nd(rng);
    else if (dist == 1)
      v = ud(rng);
    else
      v = ed(rng) * ((rng() & 1) ? 1.0f : -1.0f);
  }
  return x;
}

/// An input: its values, the label of its rows, and the mean and standard
/// deviation the scales follow.
struct input {
  std::string name;
  std::vector<float> x;
  double mean = 0, sd = 1;
  std::string about;  ///< One line for the summary.
};

/// Best-of-several elements per ns of `run()` over n elements.
double throughput(std::size_t n, const std::function<void()>& run) {
  using clock = std::chrono::steady_clock;
  double best = 0;
  const auto stop = clock::now() + std::chrono::milliseconds(4);
  int reps = 0;
  while (reps < 3 || clock::now() < stop) {
    const auto t0 = clock::now();
    run();
    const double ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
    best = std::max(best, static_cast<double>(n) / std::max(ns, 1.0));
    ++reps;
  }
  return best;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// --- stochastic rounding's fields, on the operators that have them ----------

/// Sets op.seed when the operator has that field; otherwise does nothing.
template <class Op>
void apply_seed(Op& op, std::uint64_t seed) {
  if constexpr (requires { op.seed = seed; }) op.seed = seed;
}

/// Sets op.random_bits when the operator has that field; otherwise does nothing.
template <class Op>
void apply_random_bits(Op& op, int bits) {
  if constexpr (requires { op.random_bits = bits; }) op.random_bits = bits;
}

template <class Op>
constexpr bool has_seed_field = requires(Op& op) { op.seed; };
template <class Op>
constexpr bool has_random_bits_field = requires(Op& op) { op.random_bits; };

// --- options -----------------------------------------------------------------

struct float_format {
  const char* name;
  std::vector<std::string_view> aliases;
  lowbit::minifloat_format format;
};

const std::vector<float_format>& float_formats() {
  static const std::vector<float_format> f = {
      {"fp8_e4m3fn", {"e4m3fn", "fp8_e4m3", "e4m3"}, lowbit::formats::fp8_e4m3fn},
      {"fp8_e5m2", {"e5m2"}, lowbit::formats::fp8_e5m2},
      {"fp6_e2m3", {"e2m3"}, lowbit::formats::fp6_e2m3},
      {"fp6_e3m2", {"e3m2"}, lowbit::formats::fp6_e3m2},
      {"fp4_e2m1", {"e2m1"}, lowbit::formats::fp4_e2m1}};
  return f;
}

/// QONNX's seven modes, then lowbit's ROUND_TO_ODD, DPU and STOCHASTIC.
std::vector<lowbit::rounding_mode> every_mode() {
  std::vector<lowbit::rounding_mode> m(lowbit::all_rounding_modes.begin(), lowbit::all_rounding_modes.end());
  m.insert(m.end(), lowbit::extension_rounding_modes.begin(), lowbit::extension_rounding_modes.end());
  m.push_back(lowbit::rounding_mode::stochastic);
  return m;
}

struct options {
  enum { summary, full, csv, json } output = summary;
  std::string plot;
  bool quick = false;
  std::string input;  // empty: the built-in inputs
  bool int_quant = true, trunc = true, float_quant = true, bipolar = true;
  std::vector<lowbit::rounding_mode> modes = every_mode();
  std::vector<int> bits{2, 3, 4, 5, 6, 7, 8};
  bool bits_given = false;
  std::vector<const float_format*> formats;
  bool formats_given = false;
  std::optional<std::uint64_t> seed;
  std::optional<int> random_bits;
};

/// The items of a comma-separated list, spaces around them removed.
std::vector<std::string> split_list(const std::string& option, std::string_view list) {
  std::vector<std::string> r;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    std::string_view item = list.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) throw usage_error(option + ": an empty item in '" + std::string(list) + "'; expected a comma-separated list");
    r.emplace_back(item);
    if (end == list.size()) return r;
    start = end + 1;
  }
}

/// A whole decimal integer from lo to hi, or nothing.
template <class T>
std::optional<T> parse_integer(std::string_view s, T lo, T hi) {
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi || s.empty() || s[0] == '+')
    return std::nullopt;
  return v;
}

template <class T>
void add_once(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

options parse_options(int argc, char** argv) {
  options o;
  for (const float_format& f : float_formats()) o.formats.push_back(&f);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      inline_value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) throw usage_error(arg + " needs a value");
      return argv[++i];
    };
    auto no_value = [&] {
      if (inline_value) throw usage_error(arg + " takes no value; found '" + arg + "=" + *inline_value + "'");
    };
    if (arg == "--help" || arg == "-h") {
      no_value();
      std::fputs(usage_text, stdout);
      std::exit(0);
    } else if (arg == "--full") {
      no_value();
      o.output = options::full;
    } else if (arg == "--csv") {
      no_value();
      o.output = options::csv;
    } else if (arg == "--json") {
      no_value();
      o.output = options::json;
    } else if (arg == "--quick") {
      no_value();
      o.quick = true;
    } else if (arg == "--plot") {
      o.plot = value();
      if (o.plot.empty()) throw usage_error("--plot needs a file name");
    } else if (arg == "--input") {
      o.input = value();
      if (o.input.empty()) throw usage_error("--input needs a file name");
    } else if (arg == "--ops") {
      o.int_quant = o.trunc = o.float_quant = o.bipolar = false;
      for (const std::string& item : split_list(arg, value())) {
        const std::string s = lower(item);
        if (s == "intquant" || s == "int_quant")
          o.int_quant = true;
        else if (s == "trunc")
          o.trunc = true;
        else if (s == "floatquant" || s == "float_quant")
          o.float_quant = true;
        else if (s == "bipolarquant" || s == "bipolar_quant" || s == "bipolar")
          o.bipolar = true;
        else
          throw usage_error("--ops: '" + item + "' is unknown; expected intquant, trunc, floatquant or bipolarquant " +
                            "(any letter case; int_quant, float_quant and bipolar as the rows name them)");
      }
    } else if (arg == "--modes") {
      o.modes.clear();
      for (const std::string& item : split_list(arg, value())) {
        if (lower(item) == "all") {
          for (lowbit::rounding_mode m : every_mode()) add_once(o.modes, m);
          continue;
        }
        try {
          add_once(o.modes, lowbit::parse_rounding_mode(item));
        } catch (const lowbit::error& e) {
          throw usage_error(std::string("--modes: ") + e.what() + ", or all");
        }
      }
    } else if (arg == "--bits") {
      o.bits.clear();
      o.bits_given = true;
      for (const std::string& item : split_list(arg, value())) {
        const auto b = parse_integer<int>(item, 2, 16);
        if (!b)
          throw usage_error("--bits: '" + item + "' is not a bit width; expected integers from 2 to 16 " +
                            "(IntQuant; Trunc takes those from 2 to 7)");
        add_once(o.bits, *b);
      }
      std::sort(o.bits.begin(), o.bits.end());
    } else if (arg == "--formats") {
      o.formats.clear();
      o.formats_given = true;
      for (const std::string& item : split_list(arg, value())) {
        const std::string s = lower(item);
        const float_format* found = nullptr;
        for (const float_format& f : float_formats())
          if (s == f.name || std::find(f.aliases.begin(), f.aliases.end(), s) != f.aliases.end()) found = &f;
        if (!found)
          throw usage_error("--formats: '" + item + "' is unknown; expected fp8_e4m3fn (or e4m3fn, fp8_e4m3, " +
                            "e4m3), fp8_e5m2 (e5m2), fp6_e2m3 (e2m3), fp6_e3m2 (e3m2) or fp4_e2m1 (e2m1), any letter case");
        add_once(o.formats, found);
      }
      // The presets' order, as in the full table.
      std::sort(o.formats.begin(), o.formats.end());
    } else if (arg == "--seed") {
      const std::string v = value();
      o.seed = parse_integer<std::uint64_t>(v, 0, std::numeric_limits<std::uint64_t>::max());
      if (!o.seed) throw usage_error("--seed: '" + v + "' is not a seed; expected an integer from 0 to 18446744073709551615");
    } else if (arg == "--random-bits") {
      const std::string v = value();
      o.random_bits = parse_integer<int>(v, 1, 23);
      if (!o.random_bits) throw usage_error("--random-bits: '" + v + "' is invalid; expected an integer from 1 to 23 (float32 inputs)");
    } else {
      throw usage_error("unknown option '" + std::string(argv[i]) + "'");
    }
  }
  if (!o.plot.empty() && !o.int_quant) throw usage_error("--plot draws IntQuant, which --ops leaves out");
  return o;
}

// --- inputs ------------------------------------------------------------------

/// The file's values, or an input_error saying what is wrong.
input read_input(const std::string& path, bool quick) {
  npy::array a;
  try {
    a = npy::read_file(path);
  } catch (const npy::error& e) {
    throw input_error(std::string("--input ") + e.what());
  }
  input in;
  in.name = std::filesystem::path(path).filename().string();
  const std::size_t total = a.values.size();
  in.x = std::move(a.values);
  if (quick && in.x.size() > 4096) in.x.resize(4096);
  std::size_t finite = 0;
  double sum = 0;
  for (float v : in.x)
    if (std::isfinite(v)) {
      ++finite;
      sum += v;
    }
  if (finite == 0)
    throw input_error("--input " + path + ": has no finite values; expected some, the scales follow their mean and " +
                      "standard deviation");
  in.mean = sum / static_cast<double>(finite);
  double ss = 0;
  for (float v : in.x)
    if (std::isfinite(v)) ss += (v - in.mean) * (v - in.mean);
  in.sd = std::sqrt(ss / static_cast<double>(finite));
  char b[256];
  if (!(in.sd > 0)) {
    std::snprintf(b, sizeof b, "%.9g", in.mean);
    throw input_error("--input " + path + ": all " + std::to_string(finite) + " finite values are equal (" + b +
                      "); expected values that vary, the scales span +-3 standard deviations");
  }
  if (!std::isfinite(static_cast<float>(std::fabs(in.mean) + 3 * in.sd)))
    throw input_error("--input " + path + ": |mean| + 3 standard deviations is beyond float32's range; expected " +
                      "values whose spread a float32 scale can hold");

  std::snprintf(b, sizeof b, "%s, shape %s, ", in.name.c_str(), npy::detail::shape_string(a.shape).c_str());
  in.about = b;
  if (in.x.size() < total)
    in.about += "the first " + std::to_string(in.x.size()) + " of " + std::to_string(total) + " values (--quick)";
  else
    in.about += std::to_string(total) + (total == 1 ? " value" : " values");
  in.about += a.converted() ? ", float64 converted to float32" : ", float32";
  if (a.fortran_order) in.about += ", Fortran order";
  if (a.overflowed) in.about += " (" + std::to_string(a.overflowed) + " beyond float32's range became +-inf)";
  if (finite < in.x.size())
    in.about += "; " + std::to_string(in.x.size() - finite) + " not finite, left out of the statistics";
  std::snprintf(b, sizeof b, "; mean %.6g, standard deviation %.6g", in.mean, in.sd);
  in.about += b;
  return in;
}

// --- output ------------------------------------------------------------------

void print_table(const std::vector<row>& rows) {
  std::printf("%-12s %-9s %4s %-9s %-8s %7s %11s %8s %11s %9s %8s\n", "op", "variant", "bits", "mode", "input",
              "el/ns", "MSE", "SQNR dB", "bias", "max|err|", "clipped");
  for (const row& r : rows)
    std::printf("%-12s %-9s %4d %-9s %-8s %7.2f %11.4e %8.2f %11.3e %9.4f %8.5f\n", r.op.c_str(), r.variant.c_str(),
                r.bits, r.mode.c_str(), r.dist.c_str(), r.el_per_ns, r.s.mse, r.s.sqnr_db, r.s.bias,
                r.s.max_abs_error, r.s.clipped_fraction);
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

void print_csv(const std::vector<row>& rows) {
  std::printf("op,variant,bits,mode,input,el_per_ns,mse,sqnr_db,bias,max_abs_error,clipped_fraction\n");
  for (const row& r : rows)
    std::printf("%s,%s,%d,%s,%s,%.4f,%.6e,%.4f,%.6e,%.6e,%.6f\n", r.op.c_str(), r.variant.c_str(), r.bits,
                r.mode.c_str(), csv_field(r.dist).c_str(), r.el_per_ns, r.s.mse, r.s.sqnr_db, r.s.bias,
                r.s.max_abs_error, r.s.clipped_fraction);
}

/// JSON number: finite values as %.6g, others as null.
std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

/// The JSON string's characters: quote, backslash and control characters escaped.
std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(c));
      r += b;
    } else {
      r += c;
    }
  }
  return r;
}

void print_json(const std::vector<row>& rows) {
  std::printf("[\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const row& r = rows[i];
    std::printf(
        "  {\"op\": \"%s\", \"variant\": \"%s\", \"bits\": %d, \"mode\": \"%s\", \"input\": \"%s\", "
        "\"el_per_ns\": %s, \"mse\": %s, \"sqnr_db\": %s, \"bias\": %s, \"max_abs_error\": %s, "
        "\"clipped_fraction\": %s}%s\n",
        r.op.c_str(), r.variant.c_str(), r.bits, r.mode.c_str(), json_escape(r.dist).c_str(),
        num(r.el_per_ns).c_str(), num(r.s.mse).c_str(), num(r.s.sqnr_db).c_str(), num(r.s.bias).c_str(),
        num(r.s.max_abs_error).c_str(), num(r.s.clipped_fraction).c_str(), i + 1 < rows.size() ? "," : "");
  }
  std::printf("]\n");
}

/// The summary: for the first input, one block per IntQuant signed bit width,
/// Trunc bit width and FloatQuant format chosen for it, and BipolarQuant; in
/// each the modes ranked by SQNR.
void print_summary(const std::vector<row>& rows, const input& in, const options& o) {
  const std::vector<int> int_bits = o.bits_given ? o.bits : std::vector<int>{4, 8};
  const std::vector<int> trunc_bits = o.bits_given ? o.bits : std::vector<int>{4};
  std::vector<std::string> formats;
  if (o.formats_given)
    for (const float_format* f : o.formats) formats.push_back(f->name);
  else
    formats = {"fp8_e4m3fn", "fp4_e2m1"};
  auto in_summary = [&](const row& r) {
    if (r.dist != in.name) return false;
    auto has = [](const auto& v, const auto& x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    if (r.op == "int_quant") return r.variant == "signed" && has(int_bits, r.bits);
    if (r.op == "trunc") return has(trunc_bits, r.bits);
    if (r.op == "float_quant") return has(formats, r.variant);
    return true;
  };
  // The blocks in the order their first rows came.
  std::vector<std::vector<const row*>> blocks;
  for (const row& r : rows) {
    if (!in_summary(r)) continue;
    auto b = std::find_if(blocks.begin(), blocks.end(), [&](const auto& blk) {
      return blk[0]->op == r.op && blk[0]->variant == r.variant && blk[0]->bits == r.bits;
    });
    if (b == blocks.end())
      blocks.push_back({&r});
    else
      b->push_back(&r);
  }

  std::printf("lowbit rounding benchmark, input %s.\n", in.about.c_str());
  if (o.input.empty())
    std::printf("Scales span +-3 standard deviations (unsigned: 0..6).\n");
  else
    std::printf("Scales span +-(|mean| + 3 sd) (unsigned: mean +-3 sd); BipolarQuant's is 0.8 sd.\n");
  std::printf("Modes ranked by SQNR (higher is better); bias = mean(y - x); clipped: x outside the range;\n"
              "el/ns: elements per ns, one thread.\n");
  for (auto& blk : blocks) {
    const row& first = *blk[0];
    std::string title;
    if (first.op == "int_quant")
      title = "IntQuant signed, " + std::to_string(first.bits) + " bits";
    else if (first.op == "trunc")
      title = "Trunc int8 to " + std::to_string(first.bits) + " bits";
    else if (first.op == "float_quant")
      title = "FloatQuant " + first.variant;
    else
      title = "BipolarQuant";
    std::printf("\n%-30s %8s %11s %9s %7s\n", title.c_str(), "SQNR dB", "bias", "clipped", "el/ns");
    // Highest SQNR first, NaN last; equal SQNRs share a rank.
    std::stable_sort(blk.begin(), blk.end(), [](const row* a, const row* b) {
      constexpr double lowest = -std::numeric_limits<double>::infinity();
      const double x = std::isnan(a->s.sqnr_db) ? lowest : a->s.sqnr_db;
      const double y = std::isnan(b->s.sqnr_db) ? lowest : b->s.sqnr_db;
      return x > y;
    });
    int rank = 0;
    for (std::size_t i = 0; i < blk.size(); ++i) {
      const row& r = *blk[i];
      if (i == 0 || r.s.sqnr_db != blk[i - 1]->s.sqnr_db) rank = static_cast<int>(i) + 1;
      std::printf("  %2d %-25s %8.2f %11.3e %8.3f%% %7.2f\n", rank, r.mode.c_str(), r.s.sqnr_db, r.s.bias,
                  100 * r.s.clipped_fraction, r.el_per_ns);
    }
  }
  std::printf("\nEvery row (IntQuant unsigned and narrow, other bit widths and formats%s): --full, --csv or --json.\n",
              o.input.empty() ? ", uniform and Laplace inputs" : "");
}

/// SQNR against bit width for IntQuant signed on input `dist`, one polyline per mode.
bool write_svg(const std::vector<row>& rows, const std::string& dist, const std::vector<lowbit::rounding_mode>& modes,
               const char* path) {
  auto plotted = [&](const row& r) { return r.op == "int_quant" && r.variant == "signed" && r.dist == dist; };
  int lo_bits = 2, hi_bits = 8;
  bool any = false;
  double ymax = 0;
  for (const row& r : rows)
    if (plotted(r)) {
      lo_bits = any ? std::min(lo_bits, r.bits) : r.bits;
      hi_bits = any ? std::max(hi_bits, r.bits) : r.bits;
      any = true;
      if (std::isfinite(r.s.sqnr_db)) ymax = std::max(ymax, r.s.sqnr_db);
    }
  if (hi_bits == lo_bits) ++hi_bits;
  ymax = std::max(10.0, std::ceil(ymax / 10) * 10);
  std::FILE* f = std::fopen(path, "w");
  if (!f) return false;
  const double W = 640, H = 420, L = 60, R = 150, T = 30, B = 50;
  auto px = [&](int bits) { return L + (bits - lo_bits) * (W - L - R) / (hi_bits - lo_bits); };
  auto py = [&](double db) { return H - B - std::clamp(db, 0.0, ymax) / ymax * (H - T - B); };
  std::fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" font-family=\"sans-serif\" "
                  "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
  std::string title;  // the input's name, XML-escaped
  for (char c : dist) title += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  std::fprintf(f, "<text x=\"%g\" y=\"18\" text-anchor=\"middle\">lowbit IntQuant (signed), %s input: SQNR by "
                  "bit width and rounding mode</text>\n", (W - R + L) / 2, title.c_str());
  for (int b = lo_bits; b <= hi_bits; ++b)
    std::fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#ddd\"/><text x=\"%g\" y=\"%g\" "
                    "text-anchor=\"middle\">%d</text>\n", px(b), T, px(b), H - B, px(b), H - B + 16, b);
  for (double db = 0; db <= ymax; db += 10)
    std::fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#ddd\"/><text x=\"%g\" y=\"%g\" "
                    "text-anchor=\"end\">%g</text>\n", L, py(db), W - R, py(db), L - 6, py(db) + 4, db);
  std::fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">bit width</text>\n", (W - R + L) / 2, H - 12);
  std::fprintf(f, "<text x=\"16\" y=\"%g\" transform=\"rotate(-90 16 %g)\" text-anchor=\"middle\">SQNR (dB)</text>\n",
               H / 2, H / 2);
  const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  int k = 0;
  for (lowbit::rounding_mode m : modes) {
    const std::string mode = lower(lowbit::to_string(m));
    const char* color = colors[k % 10];
    std::string pts;
    for (const row& r : rows)
      if (plotted(r) && r.mode == mode)
        pts += std::to_string(px(r.bits)) + "," + std::to_string(py(r.s.sqnr_db)) + " ";
    std::fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", color, pts.c_str());
    std::fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"2\"/><text x=\"%g\" "
                    "y=\"%g\">%s</text>\n", W - R + 10, T + 10 + 18.0 * k, W - R + 30, T + 10 + 18.0 * k, color,
                 W - R + 36, T + 14 + 18.0 * k, mode.c_str());
    ++k;
  }
  std::fprintf(f, "</svg>\n");
  return std::fclose(f) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  std::vector<input> inputs;
  try {
    o = parse_options(argc, argv);
    if (!o.input.empty()) {
      inputs.push_back(read_input(o.input, o.quick));
    } else {
      // The summary and the plot show the first input only.
      const int count = o.output == options::summary ? 1 : 3;
      const std::size_t n = o.quick ? 1 << 12 : 1 << 16;
      for (int d = 0; d < count; ++d) {
        input in{dist_names[d], make_input(d, n), 0.0, 1.0, ""};
        in.about = in.name + ", " + std::to_string(n) + " values from a fixed seed (mean 0, standard deviation 1)";
        inputs.push_back(std::move(in));
      }
    }
  } catch (const usage_error& e) {
    std::fprintf(stderr, "rounding_benchmark: %s\n(--help prints the usage)\n", e.what());
    return 2;
  } catch (const input_error& e) {
    std::fprintf(stderr, "rounding_benchmark: %s\n", e.what());
    return 2;
  }

  std::vector<int> trunc_bits;
  for (int b : o.bits)
    if (b >= 2 && b <= 7) trunc_bits.push_back(b);
  const std::size_t per_mode = (o.int_quant ? 3 * o.bits.size() : 0) + (o.trunc ? trunc_bits.size() : 0) +
                               (o.float_quant ? o.formats.size() : 0);
  const std::size_t total = inputs.size() * (o.modes.size() * per_mode + (o.bipolar ? 1 : 0));
  if (total == 0) {
    std::fprintf(stderr, "rounding_benchmark: nothing to run: %s\n(--help prints the usage)\n",
                 o.trunc && !o.int_quant ? "Trunc takes bit widths 2 to 7, and --bits has none"
                                         : "the filters leave no operator");
    return 2;
  }
  constexpr bool has_seed = has_seed_field<lowbit::int_quant<>>;
  constexpr bool has_random_bits = has_random_bits_field<lowbit::int_quant<>>;
  if (o.seed && !has_seed) std::fprintf(stderr, "rounding_benchmark: note: --seed has no effect (no operator has a seed)\n");
  if (o.random_bits && !has_random_bits)
    std::fprintf(stderr, "rounding_benchmark: note: --random-bits has no effect (no operator has random_bits)\n");
  // The stochastic fields, when given, on an operator about to run.
  auto stochastic = [&](auto& op) {
    if (o.seed) apply_seed(op, *o.seed);
    if (o.random_bits) apply_random_bits(op, *o.random_bits);
  };

  std::vector<row> rows;
  std::vector<float> y;
  std::size_t done = 0, shown = 101, failed = 0;
  auto progress = [&](const std::string& what) {  // one update per percent
    const std::size_t pct = 100 * done++ / total;
    if (pct == shown) return;
    shown = pct;
    std::fprintf(stderr, "\r[%3zu%%] %-40s", pct, what.c_str());
  };
  // One case; a case lowbit refuses (say a mode an operator does not take)
  // is reported and left out, and the exit status is then 1.
  auto add = [&](std::string op, std::string variant, int bits, std::string mode, const input& in, double lo,
                 double hi, const std::function<void()>& run) {
    const std::string what = op + " " + variant + " " + std::to_string(bits) + " " + mode;
    progress(what);
    try {
      row r{std::move(op), std::move(variant), std::move(mode), in.name, bits, 0, {}};
      r.el_per_ns = throughput(in.x.size(), run);
      r.s = lowbit::error_stats(in.x, y, lo, hi);
      rows.push_back(std::move(r));
    } catch (const lowbit::error& e) {
      std::fprintf(stderr, "\nrounding_benchmark: %s on %s: %s\n", what.c_str(), in.name.c_str(), e.what());
      ++failed;
    }
  };

  for (const input& in : inputs) {
    const std::vector<float>& x = in.x;
    const std::size_t n = x.size();
    y.assign(n, 0.0f);
    // The scales: +-extent around 0 (signed, Trunc, FloatQuant); unsigned
    // from mean - 3 sd, 6 sd wide. The built-in inputs: extent 3, 0..6.
    const double extent = std::fabs(in.mean) + 3 * in.sd;
    // Trunc's input: x on the int8 grid of scale s8, as IntQuant gives it.
    const float s8 = static_cast<float>(extent / 128.0);
    std::vector<float> x8;
    if (o.trunc && !trunc_bits.empty()) {
      x8.resize(n);
      try {
        lowbit::int_quant<>{}(x, s8, 0.0f, 8.0f, x8);
      } catch (const lowbit::error& e) {
        std::fprintf(stderr, "\nrounding_benchmark: Trunc's int8 input on %s: %s\n", in.name.c_str(), e.what());
        ++failed;
        x8.clear();
      }
    }
    for (lowbit::rounding_mode m : o.modes) {
      const std::string mode = lower(lowbit::to_string(m));
      if (o.int_quant) {
        for (int bits : o.bits) {
          struct variant {
            const char* name;
            bool is_signed, narrow;
          };
          for (const variant v : {variant{"signed", true, false}, variant{"unsigned", false, false},
                                  variant{"narrow", true, true}}) {
            const double lo_int = v.is_signed ? -std::ldexp(1.0, bits - 1) + (v.narrow ? 1 : 0) : 0.0;
            const double hi_int = v.is_signed ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
            const float scale = static_cast<float>(v.is_signed ? extent / std::ldexp(1.0, bits - 1)
                                                               : 6 * in.sd / std::ldexp(1.0, bits));
            const float zeropt =
                v.is_signed ? 0.0f
                            : static_cast<float>(std::round((3 * in.sd - in.mean) * std::ldexp(1.0, bits) / (6 * in.sd)));
            lowbit::int_quant<> q{.is_signed = v.is_signed, .narrow = v.narrow, .rounding = m};
            stochastic(q);
            add("int_quant", v.name, bits, mode, in, (lo_int - zeropt) * scale, (hi_int - zeropt) * scale,
                [&] { q(x, scale, zeropt, static_cast<float>(bits), y); });
          }
        }
      }
      if (!x8.empty()) {
        // Trunc: int8 at scale s8 down to b bits.
        for (int bits : trunc_bits) {
          const float os = s8 * static_cast<float>(std::ldexp(1.0, 8 - bits));
          lowbit::trunc<> t{.is_signed = true, .narrow = false, .rounding = m};
          stochastic(t);
          add("trunc", "signed", bits, mode, in, -std::ldexp(1.0, bits - 1) * os, (std::ldexp(1.0, bits - 1) - 1) * os,
              [&] { t(x8, s8, 0.0f, 8.0f, os, static_cast<float>(bits), y); });
        }
      }
      if (o.float_quant) {
        // FloatQuant presets, max at +-extent.
        for (const float_format* ff : o.formats) {
          const lowbit::minifloat_format& f = ff->format;
          const float scale = static_cast<float>(extent / f.max_value);
          lowbit::minifloat_quant<> q{.format = f, .rounding = m};
          stochastic(q);
          const int bits = 1 + f.exponent_bits + f.mantissa_bits;
          add("float_quant", ff->name, bits, mode, in, -extent, extent, [&] { q(x, scale, y); });
        }
      }
    }
    if (o.bipolar) {
      const lowbit::bipolar_quant<> b;
      const float scale = static_cast<float>(0.8 * in.sd);
      add("bipolar", "signed", 1, "none", in, -1e300, 1e300, [&] { b(x, scale, y); });
    }
  }
  std::fprintf(stderr, "\r%-60s\r", "");

  if (o.output == options::csv)
    print_csv(rows);
  else if (o.output == options::json)
    print_json(rows);
  else if (o.output == options::full)
    print_table(rows);
  else
    print_summary(rows, inputs[0], o);
  if (!o.plot.empty() && !write_svg(rows, inputs[0].name, o.modes, o.plot.c_str())) {
    std::fprintf(stderr, "rounding_benchmark: cannot write %s\n", o.plot.c_str());
    return 1;
  }
  if (failed) {
    std::fprintf(stderr, "rounding_benchmark: %zu case%s failed (above)\n", failed, failed == 1 ? "" : "s");
    return 1;
  }
  return 0;
}
