// SPDX-License-Identifier: Apache-2.0
/**
 * @file lowbit_conformance.cpp
 * `lowbit-conformance [--semantics reference|exact] [--verbose] FILE...`
 *
 * Runs every case of the given `.qcv` conformance vector files through
 * lowbit's public API and compares the outputs with the expected tensors
 * bit for bit (FORMAT.md, "Comparison rule": identical shapes; an element
 * passes iff both values are NaN or the bit patterns are equal, so +0 and -0
 * differ; no tolerance).
 *
 * Expected tensor: `reference` semantics (the default) compare with `Y_f32`
 * when present, else `Y`; `exact` semantics with `Y_exact`, else `Y_f32`,
 * else `Y`. A case flagged `exact_rejects` must throw lowbit::error in the
 * `exact` semantics; in `reference` it is computed and compared normally.
 *
 * Each operator has a handler in the table `handlers` below; operators
 * without one yet are counted as skipped. MXQuant cases (FORMAT-mx.md)
 * compare Y and the block scales SCALE, in the reference semantics only
 * (the vectors are microxcaling's results; `--semantics exact` skips them).
 *
 * Output: one block per failing case (its name, then up to five differing
 * elements), one summary line per file, and the final line
 * `N passed, N failed` (`, N skipped` appended when cases were skipped).
 * Exit status: 0 if every case passed, 1 on any failure or a file that
 * cannot be read or parsed, 2 on a usage error.
 */
#include <lowbit/lowbit.hpp>

#include "qcv.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using lowbit::semantics;

const char* semantics_name(semantics s) { return s == semantics::exact ? "exact" : "reference"; }

// ---------------------------------------------------------------------------
// Bit helpers
// ---------------------------------------------------------------------------

bool is_nan_bits(std::uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; }

float float_from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

/// FORMAT.md comparison rule for one element.
bool same_element(std::uint32_t got, std::uint32_t expected) {
  return got == expected || (is_nan_bits(got) && is_nan_bits(expected));
}

/// "3f800000 (1)": hex bits and the value with 9 significant digits.
std::string describe_bits(std::uint32_t b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%08x (%.9g)", static_cast<unsigned>(b),
                static_cast<double>(float_from_bits(b)));
  return buf;
}

// ---------------------------------------------------------------------------
// Buffers shared by the handlers
// ---------------------------------------------------------------------------

/// Pattern written into the output before the operator runs: a signalling
/// NaN that no arithmetic result can have, so unwritten elements show up.
constexpr std::uint32_t sentinel_bits = 0x7fa5a5a5u;
/// Elements after the output, to catch writes past its end.
constexpr std::size_t guard_elements = 16;

/// The output of one operator call. The runner owns it so that it can check
/// what the operator wrote (and did not write).
class output_buffer {
 public:
  /// Allocates an output of shape `s`, filled with the sentinel, and
  /// returns a row-major view of it.
  lowbit::strided_view<float> allocate(const lowbit::shape& s) {
    shape_ = s;
    count_ = s.count();
    data_.assign(count_ + guard_elements, 0.0f);
    for (float& f : data_) std::memcpy(&f, &sentinel_bits, sizeof f);
    allocated_ = true;
    return lowbit::strided_view<float>(data_.data(), shape_);
  }
  bool allocated() const { return allocated_; }
  const lowbit::shape& shape() const { return shape_; }
  std::size_t count() const { return count_; }
  std::uint32_t bits(std::size_t i) const {
    std::uint32_t b;
    std::memcpy(&b, &data_[i], sizeof b);
    return b;
  }
  /// True if no element (guard included) differs from the sentinel.
  bool untouched() const {
    for (std::size_t i = 0; i < data_.size(); ++i)
      if (bits(i) != sentinel_bits) return false;
    return true;
  }
  /// True if an element past the end was overwritten.
  bool guard_damaged() const {
    for (std::size_t i = count_; i < data_.size(); ++i)
      if (bits(i) != sentinel_bits) return true;
    return false;
  }

 private:
  lowbit::shape shape_;
  std::size_t count_ = 0;
  std::vector<float> data_;
  bool allocated_ = false;
};

/// An input tensor as float32 values, alive as long as its view is used.
class input_data {
 public:
  explicit input_data(const qcv::tensor& t)
      : shape_(t.dims.begin(), t.dims.end()), values_(t.to_floats()) {
    if (values_.empty()) values_.resize(1);  // a non-null pointer for empty tensors
  }
  lowbit::strided_view<const float> view() const {
    return lowbit::strided_view<const float>(values_.data(), shape_);
  }

 private:
  lowbit::shape shape_;
  std::vector<float> values_;
};

// ---------------------------------------------------------------------------
// Handlers: one per operator, all from one template. A handler sets the
// functor's attributes by name (lowbit::set_attribute, which also takes the
// spec's spellings such as has_infinity), builds the views of the case's
// inputs in QONNX order, asks the operator for the output shape, allocates
// the output with out.allocate(shape) and runs the operator. It lets every
// exception propagate: the caller decides whether an exception passes or
// fails.
// ---------------------------------------------------------------------------

template <template <semantics> class Op, std::size_t Inputs, semantics S>
void run_op_as(const qcv::test_case& c, output_buffer& out) {
  Op<S> op;
  for (const qcv::attribute& a : c.attributes) lowbit::set_attribute(op, a.key, a.value);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    const std::array<input_data, Inputs> in{input_data(c.input(I))...};
    const std::array<lowbit::strided_view<const float>, Inputs> v{in[I].view()...};
    auto yv = out.allocate(op.output_shape(v[I]...));
    op(v[I]..., yv);
  }(std::make_index_sequence<Inputs>{});
}

template <template <semantics> class Op, std::size_t Inputs>
void run_op(const qcv::test_case& c, semantics s, output_buffer& out, output_buffer&) {
  if (s == semantics::exact)
    run_op_as<Op, Inputs, semantics::exact>(c, out);
  else
    run_op_as<Op, Inputs, semantics::reference>(c, out);
}

/// MXQuant (FORMAT-mx.md): X alone, then Y and the block scales SCALE,
/// which the runner gets from lowbit::mx_scales (float 2^se) and compares
/// like Y. The vectors pin microxcaling's results, so there is nothing to
/// compare with in the exact semantics (their differences are listed and
/// tested in tests/test_mx_quant.cpp): those cases are skipped there.
template <semantics S>
void run_mx_as(const qcv::test_case& c, output_buffer& out, output_buffer& scale_out) {
  lowbit::mx_quant<S> op;
  for (const qcv::attribute& a : c.attributes) lowbit::set_attribute(op, a.key, a.value);
  const input_data in(c.input(0));
  const auto xv = in.view();
  auto yv = out.allocate(op.output_shape(xv));
  auto sv = scale_out.allocate(op.scales_shape(xv));
  op(xv, yv);
  lowbit::mx_scales(op, xv, sv);
}

void run_mx(const qcv::test_case& c, semantics s, output_buffer& out, output_buffer& scale_out) {
  run_mx_as<semantics::reference>(c, out, scale_out);
  (void)s;  // exact: skipped before the handler is called (run_case)
}

/// A handler computes a case's Y into `out`, and a second output (MXQuant's
/// SCALE) into `extra`.
using handler_fn = void (*)(const qcv::test_case&, semantics, output_buffer&, output_buffer&);

struct op_handler {
  std::string_view op;  ///< the `op` name as written in the file
  handler_fn run;       ///< nullptr: not implemented yet, cases are skipped
};

/// op name -> handler. Every op the parser accepts has an entry.
constexpr op_handler handlers[] = {
    {"IntQuant", &run_op<lowbit::int_quant, 4>},     // X scale zeropt bitwidth
    {"Quant", &run_op<lowbit::int_quant, 4>},        // QONNX's older name for IntQuant
    {"Trunc", &run_op<lowbit::trunc, 6>},            // X scale zeropt in_bitwidth out_scale out_bitwidth
    {"TruncV1", &run_op<lowbit::trunc_v1, 5>},       // X scale zeropt in_bitwidth out_bitwidth
    {"BipolarQuant", &run_op<lowbit::bipolar_quant, 2>},  // X scale
    {"FloatQuant", &run_op<lowbit::float_quant, 6>},  // X scale exponent_bitwidth mantissa_bitwidth
                                                      // exponent_bias max_val
    {"MXQuant", &run_mx},                             // X (FORMAT-mx.md); outputs Y and SCALE
};

const op_handler* find_handler(std::string_view op) {
  for (const op_handler& h : handlers)
    if (h.op == op) return &h;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Running and reporting one case
// ---------------------------------------------------------------------------

struct options {
  semantics sem = semantics::reference;
  bool verbose = false;
  std::vector<std::string> files;
};

struct counts {
  std::size_t passed = 0, failed = 0, skipped = 0;
  void add(const counts& o) {
    passed += o.passed;
    failed += o.failed;
    skipped += o.skipped;
  }
};

/// The tensor a case is compared with under semantics `s`.
const qcv::tensor& expected_tensor(const qcv::test_case& c, semantics s) {
  if (s == semantics::exact)
    if (const qcv::tensor* t = c.find_tensor("Y_exact")) return *t;
  if (const qcv::tensor* t = c.find_tensor("Y_f32")) return *t;
  return c.y();
}

/// "IntQuant signed=1 narrow=0 rounding_mode=HALF_UP"
std::string describe_case(const qcv::test_case& c) {
  std::string r = c.op;
  for (const qcv::attribute& a : c.attributes) r += " " + a.key + "=" + a.value;
  return r;
}

/// Prints the first line of a failure report.
void fail_header(const qcv::document& doc, const qcv::test_case& c, const std::string& what) {
  std::printf("FAIL %s (%s:%zu, %s): %s\n", c.name.c_str(), doc.path.c_str(), c.line,
              describe_case(c).c_str(), what.c_str());
}

/// Offset into tensor `t` of the element that broadcasts (numpy rules) to
/// the output element whose multi-index is `index`; false if `t` does not
/// broadcast against the output dims.
bool broadcast_offset(const qcv::tensor& t, const std::vector<std::size_t>& out_dims,
                      const std::vector<std::size_t>& index, std::size_t& offset) {
  if (t.rank() > out_dims.size()) return false;
  const std::size_t lead = out_dims.size() - t.rank();
  offset = 0;
  for (std::size_t i = 0; i < t.rank(); ++i) {
    const std::size_t d = t.dims[i];
    if (d != 1 && d != out_dims[lead + i]) return false;
    offset = offset * d + (d == 1 ? 0 : index[lead + i]);
  }
  return offset < t.count();
}

/// Compares the output with the expected tensor and prints the failure
/// report. Returns true on a pass.
bool compare_output(const qcv::document& doc, const qcv::test_case& c, const qcv::tensor& exp,
                    const output_buffer& out, semantics sem) {
  const lowbit::shape exp_shape(exp.dims.begin(), exp.dims.end());
  if (!(out.shape() == exp_shape)) {
    fail_header(doc, c,
                "output shape " + lowbit::to_string(out.shape()) + " but expected " + exp.role +
                    " has shape " + lowbit::to_string(exp_shape));
    return false;
  }
  const bool guard = out.guard_damaged();
  constexpr std::size_t max_shown = 5;
  std::size_t shown_at[max_shown];
  std::size_t n_diff = 0;
  for (std::size_t i = 0; i < exp.count(); ++i) {
    const std::uint32_t got = out.bits(i), want = exp.bits[i];
    const bool unwritten = got == sentinel_bits && want != sentinel_bits;
    if (!same_element(got, want) || unwritten) {
      if (n_diff < max_shown) shown_at[n_diff] = i;
      ++n_diff;
    }
  }
  if (n_diff == 0 && !guard) return true;

  std::string what;
  if (n_diff) {
    what = std::to_string(n_diff) + " of " + std::to_string(exp.count()) + " elements differ from " +
           exp.role + " (" + semantics_name(sem) + " semantics)";
  }
  if (guard) what += std::string(what.empty() ? "" : "; ") + "the operator wrote past the end of the output";
  fail_header(doc, c, what);

  const std::vector<std::size_t>& dims = exp.dims;
  for (std::size_t k = 0; k < std::min(n_diff, max_shown); ++k) {
    const std::size_t flat = shown_at[k];
    std::vector<std::size_t> index(dims.size());
    for (std::size_t r = dims.size(), rest = flat; r-- > 0;) {
      index[r] = rest % dims[r];
      rest /= dims[r];
    }
    std::string line = "    [" + std::to_string(flat) + "]";
    if (dims.size() > 1) {
      line += " (";
      for (std::size_t r = 0; r < index.size(); ++r) line += (r ? ", " : "") + std::to_string(index[r]);
      line += ")";
    }
    std::size_t off = 0;
    const qcv::tensor& x = c.input(0);
    line += " X " + (broadcast_offset(x, dims, index, off) ? describe_bits(x.bits[off]) : std::string("n/a"));
    line += "  expected " + describe_bits(exp.bits[flat]);
    const std::uint32_t got = out.bits(flat);
    line += "  got " + describe_bits(got);
    if (got == sentinel_bits) line += " (not written)";
    // The other inputs at this element, where they broadcast.
    std::string params;
    for (std::size_t i = 1; i < c.spec->inputs.size(); ++i) {
      const qcv::tensor& p = c.input(i);
      if (!broadcast_offset(p, dims, index, off)) continue;
      params += (params.empty() ? "" : ", ") + p.role + " " + describe_bits(p.bits[off]);
    }
    if (!params.empty()) line += "  [" + params + "]";
    std::printf("%s\n", line.c_str());
  }
  if (n_diff > max_shown) std::printf("    ... %zu more\n", n_diff - max_shown);
  return false;
}

enum class outcome { pass, fail, skip };

outcome run_case(const qcv::document& doc, const qcv::test_case& c, const options& opt) {
  const op_handler* h = find_handler(c.op);
  if (!h) {  // cannot happen for files the parser accepted
    fail_header(doc, c, "no entry for op '" + c.op + "' in the runner's handler table");
    return outcome::fail;
  }
  if (!h->run) {
    if (opt.verbose) std::printf("SKIP %s (no %s handler yet)\n", c.name.c_str(), c.op.c_str());
    return outcome::skip;
  }
  if (c.op == "MXQuant" && opt.sem == semantics::exact) {
    // The MX vectors are microxcaling's results: the reference semantics.
    if (opt.verbose) std::printf("SKIP %s (MXQuant vectors hold the reference semantics only)\n", c.name.c_str());
    return outcome::skip;
  }
  const bool must_reject = opt.sem == semantics::exact && c.has_flag("exact_rejects");
  const std::string why =
      "case flagged exact_rejects" + (c.reject_reason.empty() ? std::string() : ": " + c.reject_reason);

  output_buffer out, extra;
  try {
    h->run(c, opt.sem, out, extra);
  } catch (const lowbit::error& e) {
    if ((out.allocated() && !out.untouched()) || (extra.allocated() && !extra.untouched())) {
      fail_header(doc, c, std::string("threw lowbit::error but had written to its output: ") + e.what());
      return outcome::fail;
    }
    if (must_reject) {
      if (opt.verbose) std::printf("PASS %s (rejected: %s)\n", c.name.c_str(), e.what());
      return outcome::pass;
    }
    fail_header(doc, c, std::string("lowbit::error: ") + e.what());
    return outcome::fail;
  } catch (const std::exception& e) {
    fail_header(doc, c,
                std::string(must_reject ? "expected lowbit::error (" + why + "), got another exception: "
                                        : "unexpected exception (not lowbit::error): ") +
                    e.what());
    return outcome::fail;
  } catch (...) {
    fail_header(doc, c, "unexpected exception of unknown type");
    return outcome::fail;
  }
  if (must_reject) {
    fail_header(doc, c, "expected lowbit::error (" + why + "), but the operator returned normally");
    return outcome::fail;
  }
  if (!out.allocated()) {
    fail_header(doc, c, "internal: the handler produced no output");
    return outcome::fail;
  }
  if (!compare_output(doc, c, expected_tensor(c, opt.sem), out, opt.sem)) return outcome::fail;
  if (const qcv::tensor* scale = c.find_tensor("SCALE")) {
    if (!extra.allocated()) {
      fail_header(doc, c, "internal: the handler produced no SCALE");
      return outcome::fail;
    }
    if (!compare_output(doc, c, *scale, extra, opt.sem)) return outcome::fail;
  }
  if (opt.verbose) std::printf("PASS %s\n", c.name.c_str());
  return outcome::pass;
}

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------

void usage(std::FILE* to) {
  std::fputs(
      "usage: lowbit-conformance [--semantics reference|exact] [--verbose] FILE...\n"
      "\n"
      "Runs every case of the .qcv conformance vector files through lowbit and\n"
      "compares the outputs bit for bit (NaN matches any NaN; +0 and -0 differ).\n"
      "\n"
      "  --semantics reference  compare with Y_f32 when present, else Y (default)\n"
      "  --semantics exact      compare with Y_exact, else Y_f32, else Y; cases\n"
      "                         flagged exact_rejects must throw lowbit::error\n"
      "  --verbose              print every case with PASS, FAIL or SKIP\n"
      "  --help                 print this message and exit\n"
      "\n"
      "Exit status: 0 if every case passed, 1 on a failure or a file that cannot\n"
      "be read or parsed, 2 on a usage error.\n",
      to);
}

/// Parses the command line; returns -1 to go on, else the exit status.
int parse_args(int argc, char** argv, options& opt) {
  auto set_semantics = [&](std::string_view v) {
    if (v == "reference") {
      opt.sem = semantics::reference;
    } else if (v == "exact") {
      opt.sem = semantics::exact;
    } else {
      std::fprintf(stderr, "lowbit-conformance: --semantics must be 'reference' or 'exact', not '%.*s'\n",
                   static_cast<int>(v.size()), v.data());
      return false;
    }
    return true;
  };
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (options_done || a.empty() || a[0] != '-' || a == "-") {
      opt.files.emplace_back(a);
    } else if (a == "--") {
      options_done = true;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--verbose") {
      opt.verbose = true;
    } else if (a == "--semantics") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "lowbit-conformance: --semantics needs a value\n");
        usage(stderr);
        return 2;
      }
      if (!set_semantics(argv[++i])) {
        usage(stderr);
        return 2;
      }
    } else if (a.substr(0, 12) == "--semantics=") {
      if (!set_semantics(a.substr(12))) {
        usage(stderr);
        return 2;
      }
    } else {
      std::fprintf(stderr, "lowbit-conformance: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (opt.files.empty()) {
    std::fprintf(stderr, "lowbit-conformance: no .qcv file given\n");
    usage(stderr);
    return 2;
  }
  return -1;
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  if (const int status = parse_args(argc, argv, opt); status >= 0) return status;

  counts total;
  bool file_error = false;
  for (const std::string& path : opt.files) {
    qcv::document doc;
    try {
      doc = qcv::read_file(path);
    } catch (const std::exception& e) {  // qcv::io_error, qcv::parse_error, std::bad_alloc
      std::fflush(stdout);
      std::fprintf(stderr, "lowbit-conformance: error: %s\n", e.what());
      std::fflush(stderr);
      std::printf("%s: not run (%s)\n", base_name(path).c_str(),
                  dynamic_cast<const qcv::parse_error*>(&e) ? "parse error" : "cannot read the file");
      file_error = true;
      continue;
    }
    counts file;
    for (const qcv::test_case& c : doc.cases) {
      switch (run_case(doc, c, opt)) {
        case outcome::pass: ++file.passed; break;
        case outcome::fail: ++file.failed; break;
        case outcome::skip: ++file.skipped; break;
      }
    }
    std::printf("%s: %zu passed, %zu failed, %zu skipped (%s)\n", base_name(path).c_str(), file.passed,
                file.failed, file.skipped, semantics_name(opt.sem));
    total.add(file);
  }
  if (total.skipped)
    std::printf("%zu passed, %zu failed, %zu skipped\n", total.passed, total.failed, total.skipped);
  else
    std::printf("%zu passed, %zu failed\n", total.passed, total.failed);
  std::fflush(stdout);
  return total.failed || file_error ? 1 : 0;
}
