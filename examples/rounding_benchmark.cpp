// SPDX-License-Identifier: Apache-2.0
//
// rounding_benchmark: lowbit's main job. For every rounding mode of every
// operator it measures throughput and the quantization error on normal,
// uniform and Laplace inputs from a fixed seed:
//   IntQuant   bit widths 2..8, signed, unsigned and signed narrow
//   Trunc      int8 on scale s to 2..7 bits on scale 2^(8-b) s
//   FloatQuant the OCP presets (FP8 E4M3FN, E5M2, FP6 E2M3, E3M2, FP4 E2M1)
//   BipolarQuant (no rounding mode)
// Error statistics come from lowbit::error_stats: MSE, SQNR (dB), bias (mean
// signed error), max |error| and the clipped fraction (x outside the
// quantizer's range). The scale of each quantizer spans +-3 standard
// deviations of the input (unsigned: 0..6 sigma). Throughput is the best of
// several timed runs, in elements per ns, single thread.
//
//   lowbit-example-rounding_benchmark [--csv | --json] [--plot FILE.svg] [--quick]
//
// --csv / --json print the rows in that format instead of the table,
// --plot writes an SVG of SQNR against IntQuant bit width (signed, normal
// input), one line per rounding mode, and --quick uses fewer elements.
// Progress goes to stderr.
#include <lowbit/lowbit.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

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

void print_table(const std::vector<row>& rows) {
  std::printf("%-12s %-9s %4s %-9s %-8s %7s %11s %8s %11s %9s %8s\n", "op", "variant", "bits", "mode", "input",
              "el/ns", "MSE", "SQNR dB", "bias", "max|err|", "clipped");
  for (const row& r : rows)
    std::printf("%-12s %-9s %4d %-9s %-8s %7.2f %11.4e %8.2f %11.3e %9.4f %8.5f\n", r.op.c_str(), r.variant.c_str(),
                r.bits, r.mode.c_str(), r.dist.c_str(), r.el_per_ns, r.s.mse, r.s.sqnr_db, r.s.bias,
                r.s.max_abs_error, r.s.clipped_fraction);
}

void print_csv(const std::vector<row>& rows) {
  std::printf("op,variant,bits,mode,input,el_per_ns,mse,sqnr_db,bias,max_abs_error,clipped_fraction\n");
  for (const row& r : rows)
    std::printf("%s,%s,%d,%s,%s,%.4f,%.6e,%.4f,%.6e,%.6e,%.6f\n", r.op.c_str(), r.variant.c_str(), r.bits,
                r.mode.c_str(), r.dist.c_str(), r.el_per_ns, r.s.mse, r.s.sqnr_db, r.s.bias, r.s.max_abs_error,
                r.s.clipped_fraction);
}

/// JSON number: finite values as %.6g, others as null.
std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

void print_json(const std::vector<row>& rows) {
  std::printf("[\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const row& r = rows[i];
    std::printf(
        "  {\"op\": \"%s\", \"variant\": \"%s\", \"bits\": %d, \"mode\": \"%s\", \"input\": \"%s\", "
        "\"el_per_ns\": %s, \"mse\": %s, \"sqnr_db\": %s, \"bias\": %s, \"max_abs_error\": %s, "
        "\"clipped_fraction\": %s}%s\n",
        r.op.c_str(), r.variant.c_str(), r.bits, r.mode.c_str(), r.dist.c_str(), num(r.el_per_ns).c_str(),
        num(r.s.mse).c_str(), num(r.s.sqnr_db).c_str(), num(r.s.bias).c_str(), num(r.s.max_abs_error).c_str(),
        num(r.s.clipped_fraction).c_str(), i + 1 < rows.size() ? "," : "");
  }
  std::printf("]\n");
}

/// SQNR against bit width for IntQuant signed on normal input, one polyline per mode.
bool write_svg(const std::vector<row>& rows, const char* path) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) return false;
  const double W = 640, H = 420, L = 60, R = 150, T = 30, B = 50;
  double ymax = 0;
  for (const row& r : rows)
    if (r.op == "int_quant" && r.variant == "signed" && r.dist == "normal" && std::isfinite(r.s.sqnr_db))
      ymax = std::max(ymax, r.s.sqnr_db);
  ymax = std::ceil(ymax / 10) * 10;
  auto px = [&](int bits) { return L + (bits - 2) * (W - L - R) / 6.0; };
  auto py = [&](double db) { return H - B - std::max(db, 0.0) / ymax * (H - T - B); };
  std::fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" font-family=\"sans-serif\" "
                  "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
  std::fprintf(f, "<text x=\"%g\" y=\"18\" text-anchor=\"middle\">lowbit IntQuant (signed), normal input: SQNR by "
                  "bit width and rounding mode</text>\n", (W - R + L) / 2);
  for (int b = 2; b <= 8; ++b)
    std::fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#ddd\"/><text x=\"%g\" y=\"%g\" "
                    "text-anchor=\"middle\">%d</text>\n", px(b), T, px(b), H - B, px(b), H - B + 16, b);
  for (double db = 0; db <= ymax; db += 10)
    std::fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#ddd\"/><text x=\"%g\" y=\"%g\" "
                    "text-anchor=\"end\">%g</text>\n", L, py(db), W - R, py(db), L - 6, py(db) + 4, db);
  std::fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">bit width</text>\n", (W - R + L) / 2, H - 12);
  std::fprintf(f, "<text x=\"16\" y=\"%g\" transform=\"rotate(-90 16 %g)\" text-anchor=\"middle\">SQNR (dB)</text>\n",
               H / 2, H / 2);
  const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"};
  int k = 0;
  for (lowbit::rounding_mode m : lowbit::all_rounding_modes) {
    const std::string mode = lower(lowbit::to_string(m));
    std::string pts;
    for (const row& r : rows)
      if (r.op == "int_quant" && r.variant == "signed" && r.dist == "normal" && r.mode == mode)
        pts += std::to_string(px(r.bits)) + "," + std::to_string(py(r.s.sqnr_db)) + " ";
    std::fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", colors[k], pts.c_str());
    std::fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"2\"/><text x=\"%g\" "
                    "y=\"%g\">%s</text>\n", W - R + 10, T + 10 + 18.0 * k, W - R + 30, T + 10 + 18.0 * k, colors[k],
                 W - R + 36, T + 14 + 18.0 * k, mode.c_str());
    ++k;
  }
  std::fprintf(f, "</svg>\n");
  return std::fclose(f) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  enum { table, csv, json } format = table;
  const char* plot = nullptr;
  std::size_t n = 1 << 16;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv")) {
      format = csv;
    } else if (!std::strcmp(argv[i], "--json")) {
      format = json;
    } else if (!std::strcmp(argv[i], "--quick")) {
      n = 1 << 12;
    } else if (!std::strcmp(argv[i], "--plot") && i + 1 < argc) {
      plot = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--csv | --json] [--plot FILE.svg] [--quick]\n", argv[0]);
      return 2;
    }
  }

  std::vector<row> rows;
  std::vector<float> y(n);
  const std::size_t total = 3 * (7 * 3 * 7 + 6 * 7 + 5 * 7 + 1);
  std::size_t done = 0, shown = 101;
  auto progress = [&](const std::string& what) {  // one update per percent
    const std::size_t pct = 100 * done++ / total;
    if (pct == shown) return;
    shown = pct;
    std::fprintf(stderr, "\r[%3zu%%] %-40s", pct, what.c_str());
  };
  auto add = [&](std::string op, std::string variant, int bits, std::string mode, int dist,
                 const std::vector<float>& x, double lo, double hi, const std::function<void()>& run) {
    progress(op + " " + variant + " " + std::to_string(bits) + " " + mode);
    row r{std::move(op), std::move(variant), std::move(mode), dist_names[dist], bits, 0, {}};
    r.el_per_ns = throughput(n, run);
    r.s = lowbit::error_stats(x, y, lo, hi);
    rows.push_back(std::move(r));
  };

  try {
    for (int dist = 0; dist < 3; ++dist) {
      const std::vector<float> x = make_input(dist, n);
      for (lowbit::rounding_mode m : lowbit::all_rounding_modes) {
        const std::string mode = lower(lowbit::to_string(m));
        for (int bits = 2; bits <= 8; ++bits) {
          struct variant {
            const char* name;
            bool is_signed, narrow;
          };
          for (const variant v : {variant{"signed", true, false}, variant{"unsigned", false, false},
                                  variant{"narrow", true, true}}) {
            const double lo_int = v.is_signed ? -std::ldexp(1.0, bits - 1) + (v.narrow ? 1 : 0) : 0.0;
            const double hi_int = v.is_signed ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
            // +-3 sigma (unsigned: 0..6 sigma over a zero point in the middle).
            const float scale = static_cast<float>(v.is_signed ? 3.0 / std::ldexp(1.0, bits - 1)
                                                               : 6.0 / std::ldexp(1.0, bits));
            const float zeropt = v.is_signed ? 0.0f : static_cast<float>(std::ldexp(1.0, bits - 1));
            const lowbit::int_quant<> q{.is_signed = v.is_signed, .narrow = v.narrow, .rounding = m};
            add("int_quant", v.name, bits, mode, dist, x, (lo_int - zeropt) * scale, (hi_int - zeropt) * scale,
                [&] { q(x, scale, zeropt, static_cast<float>(bits), y); });
          }
        }
        // Trunc: int8 at scale s (x already on that grid after IntQuant) down to b bits.
        std::vector<float> x8(n);
        const float s8 = 3.0f / 128.0f;
        lowbit::int_quant<>{}(x, s8, 0.0f, 8.0f, x8);
        for (int bits = 2; bits <= 7; ++bits) {
          const float os = s8 * static_cast<float>(std::ldexp(1.0, 8 - bits));
          const lowbit::trunc<> t{.is_signed = true, .narrow = false, .rounding = m};
          add("trunc", "signed", bits, mode, dist, x, -std::ldexp(1.0, bits - 1) * os,
              (std::ldexp(1.0, bits - 1) - 1) * os, [&] { t(x8, s8, 0.0f, 8.0f, os, static_cast<float>(bits), y); });
        }
        // FloatQuant presets, max at 3 sigma.
        const std::pair<const char*, lowbit::minifloat_format> presets[] = {
            {"fp8_e4m3fn", lowbit::formats::fp8_e4m3fn}, {"fp8_e5m2", lowbit::formats::fp8_e5m2},
            {"fp6_e2m3", lowbit::formats::fp6_e2m3},     {"fp6_e3m2", lowbit::formats::fp6_e3m2},
            {"fp4_e2m1", lowbit::formats::fp4_e2m1}};
        for (const auto& [name, f] : presets) {
          const float scale = static_cast<float>(3.0 / f.max_value);
          const lowbit::minifloat_quant<> q{.format = f, .rounding = m};
          const int bits = 1 + f.exponent_bits + f.mantissa_bits;
          add("float_quant", name, bits, mode, dist, x, -3.0, 3.0, [&] { q(x, scale, y); });
        }
      }
      const lowbit::bipolar_quant<> b;
      add("bipolar", "signed", 1, "none", dist, x, -1e300, 1e300, [&] { b(x, 0.8f, y); });
    }
  } catch (const lowbit::error& e) {
    std::fprintf(stderr, "\nrounding_benchmark: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "\r%-60s\r", "");

  if (format == csv)
    print_csv(rows);
  else if (format == json)
    print_json(rows);
  else
    print_table(rows);
  if (plot && !write_svg(rows, plot)) {
    std::fprintf(stderr, "rounding_benchmark: cannot write %s\n", plot);
    return 1;
  }
  return 0;
}
