#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compile-time benchmark: what including and calling lowbit costs a translation unit.

    python3 scripts/compile_time.py [--cxx g++] [--flags "-O2 -march=native"] [--repeat 3]
        [--include-dir include] [--xsimd-include DIR] [--markdown] [--check]

It generates small programs and times their compile step (`<cxx> <flags> -c`):

  (a) xsimd          a file that only includes <xsimd/xsimd.hpp>;
  (b) lowbit.hpp     a file that only includes <lowbit/lowbit.hpp>;
  (c) <operator>     one call of one operator on std::vector<float> with
                     per-tensor scalar parameters and a rounding mode the
                     compiler cannot see (taken from argc), so that the kernels
                     of all seven modes are instantiated and kept: int_quant,
                     trunc, trunc_v1, float_quant, minifloat_quant (FP8 E4M3FN)
                     and bipolar_quant (which has no rounding mode);
  (d) all            every call of (c) in one file.

The goals (set for -O2 with g++ 12 and clang 14):

  (b) at most 1.3x (a)          including lowbit costs little beyond xsimd;
  (c) at most (b) + 3 s         for each operator;
  (d) at most (b) + 8 s         for all of them together.

How to read the numbers: the machine is shared and noisy, so every case is
compiled --repeat times (the cases interleaved, round-robin) and the minimum
wall time is kept. Compare the differences and ratios within one run, not
seconds across runs or machines. Every generated program is also linked and
run once (from the object of its first timed compile), so each case is a
complete, working program; linking is not timed. The exit status is 0
whatever the goals say, unless --check is given (then 1 when a goal fails);
2 means a compile, link or run failed. Only Python's standard library is
needed.
"""
import argparse
import datetime
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE_FLAGS = ["-std=c++20", "-O2"]
PROLOGUE = "#include <lowbit/lowbit.hpp>\n\n"
# A rounding mode the compiler cannot see: argc = 1 gives half_even.
MODE = "lowbit::all_rounding_modes[static_cast<unsigned>(argc - 1) % 7]"

# (c): one statement block per operator, each ending with a result in y.
CALLS = {
    "int_quant": """\
    lowbit::int_quant<> q{.rounding = mode};
    q(x, 0.5f, 0.0f, 4.0f, y);""",
    "trunc": """\
    lowbit::trunc<> q{.rounding = mode};
    q(x, 0.5f, 0.0f, 8.0f, 2.0f, 4.0f, y);""",
    "trunc_v1": """\
    lowbit::trunc_v1<> q{.rounding = mode};
    q(x, 1.0f, 0.0f, 8.0f, 4.0f, y);""",
    "float_quant": """\
    lowbit::float_quant<> q{.rounding = mode};
    q(x, 1.0f, 4.0f, 3.0f, 7.0f, 448.0f, y);""",
    "minifloat_quant": """\
    lowbit::minifloat_quant<> q{.format = lowbit::formats::fp8_e4m3fn, .rounding = mode};
    q(x, 1.0f, y);""",
    "bipolar_quant": """\
    lowbit::bipolar_quant<> q;
    q(x, 0.5f, y);""",
}


def program(names):
    """A main() that runs the calls `names` on one input and keeps their results."""
    blocks = "\n".join("  {\n%s\n    sink = sink + y[1];\n  }" % CALLS[n] for n in names)
    return (PROLOGUE + "#include <vector>\n\nint main(int argc, char**) {\n"
            f"  const lowbit::rounding_mode mode = {MODE};\n  (void)mode;\n"
            "  std::vector<float> x{0.3f, -1.25f, 2.5f, 7.0f}, y(x.size());\n"
            "  volatile float sink = 0.0f;\n" + blocks + "\n  return 0;\n}\n")


def cases():
    """(name, goal kind, source) in table order."""
    out = [("(a) xsimd", "a", "#include <xsimd/xsimd.hpp>\n\nint main() { return 0; }\n"),
           ("(b) lowbit.hpp", "b", PROLOGUE + "int main() { return 0; }\n")]
    out += [(f"(c) {n}", "c", program([n])) for n in CALLS]
    out.append(("(d) all", "d", program(list(CALLS))))
    return out


GOALS = {"b": "<= 1.3x (a)", "c": "<= (b) + 3 s", "d": "<= (b) + 8 s"}


def goal_met(kind, t, ta, tb):
    return {"a": None, "b": t <= 1.3 * ta, "c": t - tb <= 3.0, "d": t - tb <= 8.0}[kind]


def run(cmd, what):
    """Runs cmd; on failure prints its output and exits with status 2."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        print(f"compile_time: {what} failed: {e}", file=sys.stderr)
        sys.exit(2)
    if r.returncode != 0:
        print(f"compile_time: {what} failed ({r.returncode}): {shlex.join(cmd)}\n{r.stdout}{r.stderr}",
              file=sys.stderr)
        sys.exit(2)
    return r


def first_line(cmd, default="unknown"):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()
        return out[0] if out else default
    except OSError:
        return default


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def xsimd_version(cxx, inc):
    """XSIMD_VERSION_{MAJOR,MINOR,PATCH} as the compiler sees them (preprocessor only)."""
    r = subprocess.run([cxx, *inc, "-E", "-dM", "-x", "c++", "-"], capture_output=True, text=True,
                       input="#include <xsimd/config/xsimd_config.hpp>\n")
    v = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].startswith("XSIMD_VERSION_"):
            v[parts[1][len("XSIMD_VERSION_"):]] = parts[2]
    return ".".join(v.get(k, "?") for k in ("MAJOR", "MINOR", "PATCH")) if v else "unknown"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"), help="compiler (default: $CXX or g++)")
    ap.add_argument("--flags", default="", help=f"flags added to {' '.join(BASE_FLAGS)}")
    ap.add_argument("--repeat", type=int, default=3, help="compiles per case; the minimum is kept")
    ap.add_argument("--include-dir", default=str(Path(__file__).resolve().parent.parent / "include"),
                    help="lowbit's include directory (default: the one next to this script)")
    ap.add_argument("--xsimd-include", help="xsimd's include directory (default: the compiler's path)")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table for docs/performance.md")
    ap.add_argument("--check", action="store_true", help="exit 1 when a goal fails")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")

    flags = list(BASE_FLAGS)
    flags += [f for f in shlex.split(args.flags) if f not in flags]
    inc = ["-I", args.include_dir] + (["-isystem", args.xsimd_include] if args.xsimd_include else [])
    all_cases = cases()
    best = {}
    with tempfile.TemporaryDirectory(prefix="lowbit-compile-time-") as tmp:
        srcs = {}
        for i, (name, _, src) in enumerate(all_cases):
            srcs[name] = Path(tmp, f"case{i}.cpp")
            srcs[name].write_text(src)
        for rep in range(args.repeat):  # round-robin, so drift spreads over all cases
            for name, _, _ in all_cases:
                obj = Path(tmp, srcs[name].stem + ".o")
                cmd = [args.cxx, *flags, *inc, "-c", str(srcs[name]), "-o", str(obj)]
                t0 = time.perf_counter()
                run(cmd, f"compiling {name}")
                t = time.perf_counter() - t0
                best[name] = min(t, best.get(name, t))
                print(f"  {name:<22} run {rep + 1}/{args.repeat}: {t:6.2f} s", file=sys.stderr)
                if rep == 0:  # link and run the program once (not timed)
                    exe = obj.with_suffix("")
                    run([args.cxx, *flags, str(obj), "-o", str(exe), "-pthread"], f"linking {name}")
                    run([str(exe)], f"running {name}")

    ta, tb = best["(a) xsimd"], best["(b) lowbit.hpp"]
    rows, failed = [], False
    for name, kind, _ in all_cases:
        t = best[name]
        ok = goal_met(kind, t, ta, tb)
        failed |= ok is False
        rows.append([name, f"{t:.2f}", "" if kind in "ab" else f"{t - tb:+.2f}",
                     f"{t / ta:.2f}x" if kind == "b" else "", GOALS.get(kind, ""),
                     "" if ok is None else ("PASS" if ok else "FAIL")])

    header = ["case", "seconds", "vs (b), s", "/ (a)", "goal", "result"]
    version = first_line([args.cxx, "--version"])
    info = (f"Compiler: {version}; flags: `{' '.join(flags)}`; xsimd {xsimd_version(args.cxx, inc)}; "
            f"CPU: {cpu_model()}; {datetime.date.today().isoformat()}; "
            f"minimum of {args.repeat} compile(s) per case, wall time of `-c`.")
    if args.markdown:
        print(info + "\n")
        print("| " + " | ".join(header) + " |")
        print("|---|" + "---:|" * 3 + "---|---|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        print(info.replace("`", ""))
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
        for r in [header] + rows:
            print("  ".join(c.ljust(w) if i in (0, 4, 5) else c.rjust(w)
                            for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
