#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The speed targets of docs/performance.md ("Against the hand-written
loop"), each as a ratio to a baseline of the same run, met or missed.

    taskset -c 1 build/bench/lowbit-bench --benchmark_filter="$(python3 scripts/bench_targets.py --filter)" \\
      --benchmark_repetitions=3 --benchmark_out=t.json --benchmark_out_format=json
    build/bench/lowbit-bench --benchmark_filter="$(python3 scripts/bench_targets.py --filter-threads)" \\
      --benchmark_repetitions=3 --benchmark_out=th.json --benchmark_out_format=json
    python3 scripts/bench_targets.py t.json th.json

(one core for everything but the thread benchmarks, which need two).
Several one-core reports of the same binary (runs one after the other on a
noisy host) are pooled: each benchmark's median over all their repetitions.

Every ratio is a speed ratio (higher is faster) of two benchmarks of one
run: lowbit against the hand-written loop of the same bits
(baseline/hand_int_quant, hand_trunc, hand_bipolar_quant and
hand_fp8_e4m3 for IntQuant, Trunc, BipolarQuant and FloatQuant), a
rounding mode against ROUND, a per-channel call against the per-tensor
one, DRAM-sized tensors against baseline/stream, two threads against one. The fixed cost of a call is
printed in ns (the time of a 16-element call less the hand loop's). With
repetitions, medians are used (scripts/bench_compare.py's collect). Only
Python's standard library is needed.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_compare import collect, items_per_ns  # noqa: E402

MODES = ["round", "ceil", "floor", "up", "down", "half_up", "half_down"]
FLOATS = ["e4m3", "e5m2", "e2m1"]


def filter_regex():
    """A --benchmark_filter that runs exactly what the targets need."""
    return ("^(baseline/(hand_int_quant|hand_trunc|hand_bipolar_quant|hand_fp8_e4m3|hand_fp8_e4m3_channel|stream"
            "|hand_int_quant_[a-z_]+|hand_trunc_[a-z_]+)/.*"
            "|(int_quant|trunc)/[a-z_]+/(tensor|channel)/(4096|65536)"
            "|(int_quant|trunc|bipolar_quant/none|float_quant_e4m3|float_quant_exact_e4m3)/(round/)?tensor/(16|64|256)"
            "|bipolar_quant/none/(tensor|channel)/(4096|65536)"
            "|float_quant_exact_e[0-9m]+/[a-z_]+/(tensor|channel)/(4096|65536)"
            "|float_quant_e[0-9m]+/round/(tensor|channel)/(4096|65536)"
            "|(int_quant|trunc|bipolar_quant|float_quant_e4m3|float_quant_exact_e4m3)/(round|none)/tensor/33554432)$")


def filter_threads_regex():
    """The thread benchmarks of the targets (run them on two cores)."""
    return "^threads/[12]/(int_quant|float_quant_e4m3)/round/tensor/1048576$"


def pooled(paths, drop_slow_hand=False):
    """name -> items/ns over several reports: the median of every
    repetition of a benchmark in all of them (several runs of one binary
    on a noisy host), else collect's value (a report without repetitions).
    drop_slow_hand: a hand loop's repetitions more than twice as slow as
    its fastest are left out first (docs/performance.md, the Zen 5 table of
    2026-11-29: baseline/hand_fp8_e4m3 ran 2.5-4.7x slower in some)."""
    reps, rates = {}, {}
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        rates.update(collect(report))
        for b in report.get("benchmarks", []):
            if b.get("error_occurred") or b.get("run_type") == "aggregate":
                continue
            v = items_per_ns(b)
            if v is not None:
                reps.setdefault(b.get("run_name", b["name"]), []).append(v)
    for name, vs in reps.items():
        if drop_slow_hand and name.startswith("baseline/hand_"):
            vs = [v for v in vs if 2 * v >= max(vs)]
        vs = sorted(vs)
        k = len(vs)
        rates[name] = vs[k // 2] if k % 2 else (vs[k // 2 - 1] + vs[k // 2]) / 2
    return rates


class table:
    def __init__(self, rates):
        self.r = rates
        self.rows = []
        self.missed = 0

    def time_ns(self, name, n):
        v = self.r.get(name)
        return None if not v else n / v

    def ratio(self, label, num, den, goal):
        a, b = self.r.get(num), self.r.get(den)
        if not a or not b:
            self.rows.append((label, None, goal, "not measured"))
            return None
        x = a / b
        ok = x >= goal
        self.missed += not ok
        self.rows.append((label, x, goal, "met" if ok else "**missed**"))
        return x

    def worst(self, label, pairs, goal):
        """The smallest ratio over (num, den) pairs, with the pair named."""
        worst = None
        for num, den in pairs:
            a, b = self.r.get(num), self.r.get(den)
            if a and b and (worst is None or a / b < worst[0]):
                worst = (a / b, num)
        if worst is None:
            self.rows.append((label, None, goal, "not measured"))
            return
        ok = worst[0] >= goal
        self.missed += not ok
        self.rows.append((f"{label} (worst: `{worst[1]}`)", worst[0], goal, "met" if ok else "**missed**"))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="*", help="Google Benchmark JSON outputs (pooled: medians over all repetitions)")
    ap.add_argument("--filter", action="store_true", help="print the one-core benchmark filter and exit")
    ap.add_argument("--filter-threads", action="store_true", help="print the thread benchmarks' filter and exit")
    ap.add_argument("--drop-slow-hand", action="store_true",
                    help="leave out a hand loop's repetitions more than twice as slow as its fastest")
    args = ap.parse_args(argv)
    if args.filter:
        print(filter_regex())
        return 0
    if args.filter_threads:
        print(filter_threads_regex())
        return 0
    if not args.reports:
        ap.error("a report is needed (or --filter)")
    rates = pooled(args.reports, args.drop_slow_hand)
    t = table(rates)
    hi, hf = "baseline/hand_int_quant", "baseline/hand_fp8_e4m3"
    ops = [("int_quant/round/tensor", hi), ("trunc/round/tensor", "baseline/hand_trunc"),
           ("bipolar_quant/none/tensor", "baseline/hand_bipolar_quant"),
           ("float_quant_exact_e4m3/round/tensor", hf), ("float_quant_e4m3/round/tensor", hf)]
    # Point 2: per-call cost.
    for n, goal in ((4096, 0.90), (256, 0.60)):
        for op, base in ops:
            t.ratio(f"`{op}/{n}` / hand", f"{op}/{n}", f"{base}/{n}", goal)
    fixed = []
    for op, base in ops:
        cells = []
        for n in (16, 64, 256):
            a, b = t.time_ns(f"{op}/{n}", n), t.time_ns(f"{base}/{n}", n)
            cells.append("-" if a is None else f"{a:.0f}" + ("" if b is None else f" ({a - b:.0f})"))
        fixed.append((op, cells))
    # Point 3: FloatQuant, exact, every mode, tensor and channel.
    for fmt in FLOATS:
        for pat in ("tensor", "channel"):
            for n in (4096, 65536):
                t.worst(f"exact {fmt} {pat} {n}, every mode / hand",
                        [(f"float_quant_exact_{fmt}/{m}/{pat}/{n}", f"{hf}/{n}") for m in MODES], 0.85)
                t.worst(f"exact {fmt} {pat} {n}, modes / ROUND",
                        [(f"float_quant_exact_{fmt}/{m}/{pat}/{n}", f"float_quant_exact_{fmt}/round/{pat}/{n}")
                         for m in MODES[1:]], 0.80)
                t.ratio(f"reference {fmt} {pat} {n} ROUND / hand", f"float_quant_{fmt}/round/{pat}/{n}",
                        f"{hf}/{n}", 0.60)
    # Point 4.
    for op in ("int_quant", "trunc"):
        for pat in ("tensor", "channel"):
            for n in (4096, 65536):
                t.worst(f"{op} {pat} {n}, modes / ROUND",
                        [(f"{op}/{m}/{pat}/{n}", f"{op}/round/{pat}/{n}") for m in MODES[1:]], 0.85)
    for op in ("int_quant/round", "trunc/round", "bipolar_quant/none", "float_quant_e4m3/round",
               "float_quant_exact_e4m3/round"):
        t.ratio(f"`{op}` channel / tensor at 65536", f"{op}/channel/65536", f"{op}/tensor/65536", 0.90)
    for op in ("int_quant/round", "trunc/round", "bipolar_quant/none", "float_quant_e4m3/round",
               "float_quant_exact_e4m3/round"):
        t.ratio(f"`{op}/tensor/33554432` / stream", f"{op}/tensor/33554432", "baseline/stream/33554432", 0.95)
    for op in ("int_quant", "float_quant_e4m3"):
        t.ratio(f"{op} 2 threads / 1 thread at 2^20", f"threads/2/{op}/round/tensor/1048576",
                f"threads/1/{op}/round/tensor/1048576", 1.60)

    print("| target | ratio | goal | |")
    print("|---|---|---|---|")
    for label, x, goal, verdict in t.rows:
        print(f"| {label} | {'-' if x is None else f'{x:.2f}'} | {goal:.2f} | {verdict} |")
    print()
    print("Time of a call in ns at N = 16 / 64 / 256 (in parentheses: less the hand loop's time at that N):")
    print()
    print("| benchmark | 16 | 64 | 256 |")
    print("|---|---|---|---|")
    for op, cells in fixed:
        print(f"| `{op}` | " + " | ".join(cells) + " |")
    print()
    # Context, not a target: what per-channel scales cost a loop written by
    # hand (the hand FP8 loop once per row, 64 rows) against the same loop
    # per tensor; the per-channel targets above compare with the latter.
    cells = []
    for n in (4096, 65536):
        a, b = rates.get(f"{hf}_channel/{n}"), rates.get(f"{hf}/{n}")
        cells.append("-" if a is None or b is None else f"{a / b:.2f}")
    print("Context: the hand FP8 loop per channel / per tensor at 4096 / 65536: " + " / ".join(cells))
    print()
    # Context, not a target: the IntQuant and Trunc modes that add operations
    # to ROUND's one rounding instruction, in the hand loops (the same bits
    # as lowbit's, reference semantics), against the hand ROUND loop: what a
    # mode costs code with nothing but the arithmetic, the bound of the
    # "modes / ROUND" targets above.
    print("Context: the hand loops' modes / their ROUND (bound of the modes / ROUND targets):")
    print()
    print("| hand loop | N | up | half_up | half_down |")
    print("|---|---|---|---|---|")
    for op in ("int_quant", "trunc"):
        for n in (4096, 65536):
            base = rates.get(f"baseline/hand_{op}/{n}")
            cells = []
            for m in ("up", "half_up", "half_down"):
                a = rates.get(f"baseline/hand_{op}_{m}/{n}")
                cells.append("-" if not a or not base else f"{a / base:.2f}")
            print(f"| `hand_{op}` | {n} | " + " | ".join(cells) + " |")
    print()
    print(f"{t.missed} target(s) missed.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
