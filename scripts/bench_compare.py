#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Ratios of lowbit-bench results to the baselines of the same run.

    build/bench/lowbit-bench --benchmark_out=bench.json --benchmark_out_format=json
    python3 scripts/bench_compare.py bench.json

For every benchmark named .../<N> it prints items per ns and the ratios to
baseline/stream/<N> (the memory ceiling) and baseline/scalar_int_quant/<N>
(the non-vectorised scalar IntQuant) at the same N, the ratio to the hand
baseline of its kind at the same N in column /hand (baseline/hand_fp8_e4m3
for FloatQuant, baseline/hand_trunc for Trunc, baseline/hand_bipolar_quant
for BipolarQuant, baseline/hand_int_quant for IntQuant: the smallest
hand-written loops of the same bits), and, for
lowbit-bench-dispatch's dispatch/<rest> benchmarks, the ratio to
native/<rest> (the same call built with -march=native) in column /native. With repetitions, the
median aggregate is used when present, else the best (highest) run. Only
Python's standard library is needed.
"""
import argparse
import json
import re
import signal
import sys


def items_per_ns(b):
    ips = b.get("items_per_second")
    return None if ips is None else ips / 1e9


def collect(report):
    """name -> items/ns, preferring medians, else the best repetition."""
    best, median = {}, {}
    for b in report.get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        v = items_per_ns(b)
        if v is None:
            continue
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                median[name] = v
            continue
        best[name] = max(v, best.get(name, 0.0))
    best.update(median)
    return best


def hand_baseline(name):
    """The hand-written baseline a benchmark compares with, or None (codes,
    packing: other work than the hand loops do)."""
    if name.startswith(("codes/", "pack/", "unpack/")):
        return None
    if "float_quant" in name:
        return "baseline/hand_fp8_e4m3"
    if "trunc" in name:
        return "baseline/hand_trunc"
    if "bipolar_quant" in name:
        return "baseline/hand_bipolar_quant"
    if "int_quant" in name:
        return "baseline/hand_int_quant"
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="Google Benchmark JSON output of lowbit-bench")
    ap.add_argument("--filter", default="", help="only names matching this regular expression")
    args = ap.parse_args(argv)
    try:
        with open(args.json, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"bench_compare: cannot read {args.json}: {e}", file=sys.stderr)
        return 2
    rates = collect(report)
    if not rates:
        print(f"bench_compare: {args.json} has no benchmark with items_per_second", file=sys.stderr)
        return 1
    pat = re.compile(args.filter)
    rows = []
    for name, v in rates.items():
        m = re.fullmatch(r"(.*)/(\d+)", name)
        if not m or name.startswith("baseline/") or not pat.search(name):
            continue
        n = m.group(2)
        stream = rates.get(f"baseline/stream/{n}")
        scalar = rates.get(f"baseline/scalar_int_quant/{n}")
        native = rates.get("native/" + name[len("dispatch/"):]) if name.startswith("dispatch/") else None
        hb = hand_baseline(name)
        hand = rates.get(f"{hb}/{n}") if hb else None
        rows.append((int(n), m.group(1), v, stream and v / stream, scalar and v / scalar,
                     hand and v / hand, native and v / native))
    rows.sort()
    width = max([len(r[1]) for r in rows] + [9])
    show_native = any(r[6] for r in rows)
    print(f"{'benchmark':<{width}} {'N':>9} {'el/ns':>7} {'/stream':>8} {'/scalar':>8} {'/hand':>8}"
          + (f" {'/native':>8}" if show_native else ""))
    fmt = lambda x: f"{x:8.2f}" if x else f"{'-':>8}"
    for n, op, v, rs, rc, rh, rn in rows:
        print(f"{op:<{width}} {n:>9} {v:7.3f} {fmt(rs)} {fmt(rc)} {fmt(rh)}"
              + (f" {fmt(rn)}" if show_native else ""))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    sys.exit(main(sys.argv[1:]))
