#!/usr/bin/env python3
"""Writes tests/conformance/extensions/rounding_extensions.qcv: IntQuant and
Trunc (opset 1) cases with lowbit's extension rounding names (QONNX rejects
them), spelled in mixed letter case, so that the conformance runner is shown
to accept them. The expected values come from the definitions in
docs/semantics.md ("Rounding modes beyond QONNX"), computed here in Python
on exactly representable float32 values (every input and result below is a
float32 with few significant bits, so Python's float64 arithmetic is exact):

  ROUND_TO_ODD   an integral y stays, else the odd one of floor(y), ceil(y)
  DPU            Brevitas's dpu_round: ties to even but negative ties -> ceil
  ROUND_TO_ZERO  DOWN (trunc)
  TIES_TO_ZERO   HALF_DOWN;  TIES_AWAY  HALF_UP
  TIES_TO_EVEN   ROUND

Zero signs: `Y` follows the reference semantics (QONNX's formulas of the
QONNX modes the aliases name: numpy's sign(0) = +0 for HALF_UP/HALF_DOWN);
`Y_exact` keeps the sign of y. Run: python3 scripts/gen_extension_vectors.py
"""
import math
import struct
import sys
from pathlib import Path

X = [-5.5, -2.5, -1.6, -1.5, -1.1, -0.5, -0.3, -0.0, 0.0, 0.3, 0.5, 1.1, 1.5, 1.6, 2.5, 4.25, 5.5, 100.0, -100.0]


# Trunc's inputs: integers (opset 1 rounds x / scale + zeropt to an integer first).
XT = [-22.0, -10.0, -7.0, -6.0, -5.0, -2.0, -1.0, -0.0, 0.0, 1.0, 2.0, 5.0, 6.0, 7.0, 10.0, 17.0, 22.0, 400.0, -400.0]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def hexf(v):
    return "%08x" % struct.unpack("<I", struct.pack("<f", v))[0]


def sign0(y):  # numpy's sign: +0 for either zero
    return 0.0 if y == 0 else math.copysign(1.0, y)


def signed_zero(r, y):  # exact semantics: the result keeps y's sign
    return math.copysign(abs(r), y) if r == 0 else r


def rnd(mode, y, exact):
    if mode == "odd":
        f = math.floor(y)
        r = y if f == y else (f + 1 if f % 2 == 0 else f)
        return signed_zero(r, y) if r == 0 else r
    if mode == "dpu":
        f = math.floor(y)
        r = math.ceil(y) if (y < 0 and y - f == 0.5) else round(y)  # Python's round: ties to even
        return signed_zero(float(r), y)
    if mode == "down":
        return signed_zero(float(math.trunc(y)), y)
    if mode == "even":
        return signed_zero(float(round(y)), y)
    if mode == "half_up":
        if exact:
            return signed_zero(float(math.floor(abs(y) + 0.5)) * (1 if y >= 0 else -1), y)
        return sign0(y) * math.floor(abs(y) + 0.5)
    if mode == "half_down":
        if exact:
            return signed_zero(float(math.ceil(abs(y) - 0.5)) * (1 if y >= 0 else -1), y)
        m = math.ceil(abs(y) - 0.5)
        m = -0.0 if m == 0 and abs(y) - 0.5 < 0 else float(m)  # numpy's ceil of a negative fraction is -0
        return sign0(y) * m
    raise ValueError(mode)


MODES = [("Round_To_Odd", "odd"), ("dpu", "dpu"), ("ROUND_TO_ZERO", "down"), ("ties_to_zero", "half_down"),
         ("Ties_Away", "half_up"), ("TIES_TO_EVEN", "even")]


def block(vals):
    out = []
    for i in range(0, len(vals), 8):
        out.append(" ".join(hexf(v) for v in vals[i:i + 8]))
    return "\n".join(out)


def intquant_case(name, mode):
    # IntQuant signed int8, scale 1, zeropt 0: y = x, clamp [-128, 127],
    # Y = (q - 0) * 1 (the zero keeps q's sign: -0 - 0 = -0).
    ys = [rnd(mode, min(max(f32(x) / 1.0 + 0.0, -128.0), 127.0), False) for x in X]
    ye = [rnd(mode, min(max(f32(x) / 1.0 + 0.0, -128.0), 127.0), True) for x in X]
    return ys, ye


def main():
    lines = ["qcv 1",
             "# lowbit's extension rounding names (QONNX rejects them): hand-defined expected values,",
             "# written by scripts/gen_extension_vectors.py from the definitions in docs/semantics.md",
             "# format: see ../data/FORMAT.md"]
    for name, mode in MODES:
        ys, ye = intquant_case(name, mode)
        differs = [hexf(v) for v in ys] != [hexf(v) for v in ye]
        lines += ["case ext_iq_%s" % mode, "op IntQuant", "attr signed 1", "attr narrow 0",
                  "attr rounding_mode %s" % name] + (["flag exact_differs"] if differs else []) + [
                  "tensor X 1 %d" % len(X), block([f32(x) for x in X]),
                  "tensor scale 0", hexf(1.0), "tensor zeropt 0", hexf(0.0), "tensor bitwidth 0", hexf(8.0),
                  "tensor Y 1 %d" % len(X), block(ys)]
        if [hexf(v) for v in ys] != [hexf(v) for v in ye]:
            lines += ["tensor Y_exact 1 %d" % len(X), block(ye)]
        lines.append("end")
        # Trunc opset 1: y = rint(x / 1 + 0) / 2^(10 - 8) with integral x, so y = x / 4
        # (exact; x = -0 gives y = +0: -0 + 0 is +0), then the mode; Y = (q - 0) * 1.
        xs = XT
        ys = [rnd(mode, (x + 0.0) / 4, False) for x in xs]
        ye = [rnd(mode, (x + 0.0) / 4, True) for x in xs]
        differs = [hexf(v) for v in ys] != [hexf(v) for v in ye]
        lines += ["case ext_trunc_v1_%s" % mode, "op TruncV1", "attr rounding_mode %s" % name] + (
                  ["flag exact_differs"] if differs else []) + ["tensor X 1 %d" % len(xs), block([f32(x) for x in xs]),
                  "tensor scale 0", hexf(1.0), "tensor zeropt 0", hexf(0.0), "tensor in_bitwidth 0", hexf(10.0),
                  "tensor out_bitwidth 0", hexf(8.0), "tensor Y 1 %d" % len(xs), block(ys)]
        if [hexf(v) for v in ys] != [hexf(v) for v in ye]:
            lines += ["tensor Y_exact 1 %d" % len(xs), block(ye)]
        lines.append("end")
    out = Path(__file__).resolve().parent.parent / "tests/conformance/extensions/rounding_extensions.qcv"
    out.write_text("\n".join(lines) + "\n")
    print("wrote", out, file=sys.stderr)


if __name__ == "__main__":
    main()
