#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An independent reference for include/lowbit/detail/philox.hpp.

Pure Python, written from the Philox paper (Salmon, Moraes, Dror, Shaw,
SC'11) and from the draw mapping's definition (the header's comment), not
from the C++ code:

  1. Philox4xW-R for W = 32 and 64, checked against Random123's known-answer
     vectors (tests/kat_vectors of the Random123 distribution, copied below);
  2. the W = 64 variant against numpy.random.Philox (Philox4x64-10), so the
     code shared by both word sizes is checked against a second, independent
     implementation (numpy's raw output for given keys and counters);
  3. writes tests/data/philox_draws.txt, the draws of the mapping for a few
     hundred (seed, r, index) cases, which tests/test_philox.cpp asserts.

Usage: python3 scripts/philox_reference.py [--check-only]
(needs numpy for step 2; without it the file is not written).
"""

import argparse
import os
import sys

# Philox constants (the paper, section 4.2 / Random123).
PHILOX_M = {32: (0xD2511F53, 0xCD9E8D57), 64: (0xD2E7470EE14C6C93, 0xCA5A826395121157)}
PHILOX_W = {32: (0x9E3779B9, 0xBB67AE85), 64: (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)}


def philox4(bits, ctr, key, rounds=10):
    """Philox4xW-R: counter (4 words) and key (2 words) -> 4 words."""
    mask = (1 << bits) - 1
    m0, m1 = PHILOX_M[bits]
    w0, w1 = PHILOX_W[bits]
    x0, x1, x2, x3 = ctr
    k0, k1 = key
    for rnd in range(rounds):
        if rnd:
            k0 = (k0 + w0) & mask
            k1 = (k1 + w1) & mask
        p0 = m0 * x0  # exact: Python integers
        p1 = m1 * x2
        hi0, lo0 = p0 >> bits, p0 & mask
        hi1, lo1 = p1 >> bits, p1 & mask
        x0, x1, x2, x3 = hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
    return [x0, x1, x2, x3]


# Random123 tests/kat_vectors, the Philox4x32 and 4x64 lines (R = 7 and 10):
# name rounds ctr(4) key(2) expected(4), hexadecimal.
KAT = """
philox4x32 7 00000000 00000000 00000000 00000000 00000000 00000000   5f6fb709 0d893f64 4f121f81 4f730a48
philox4x32 7 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   5207ddc2 45165e59 4d8ee751 8c52f662
philox4x32 7 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   4dfccaba 190a87f0 c47362ba b6b5242a
philox4x32 10 00000000 00000000 00000000 00000000 00000000 00000000   6627e8d5 e169c58d bc57ac4c 9b00dbd8
philox4x32 10 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   408f276d 41c83b0e a20bc7c6 6d5451fd
philox4x32 10 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   d16cfe09 94fdcceb 5001e420 24126ea1
philox4x64 7 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000   5dc8ee6268ec62cd 139bc570b6c125a0 84d6deb4fb65f49e aff7583376d378c2
philox4x64 7 ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff   071dd84367903154 48e2bbdc722b37d1 6afa9890bb89f76c 9194c8d8ada56ac7
philox4x64 7 243f6a8885a308d3 13198a2e03707344 a4093822299f31d0 082efa98ec4e6c89 452821e638d01377 be5466cf34e90c6c   513a366704edf755 f05d9924c07044d3 bef2cb9cbea74c6c 8db948de4caa1f8a
philox4x64 10 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000   16554d9eca36314c db20fe9d672d0fdc d7e772cee186176b 7e68b68aec7ba23b
philox4x64 10 ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff ffffffffffffffff   87b092c3013fe90b 438c3c67be8d0224 9cc7d7c69cd777b6 a09caebf594f0ba0
philox4x64 10 243f6a8885a308d3 13198a2e03707344 a4093822299f31d0 082efa98ec4e6c89 452821e638d01377 be5466cf34e90c6c   a528f45403e61d95 38c72dbd566e9788 a5a1610e72fd18b5 57bd43b5e52b7fe6
"""


def check_kat():
    n = 0
    for line in KAT.strip().splitlines():
        f = line.split()
        bits = int(f[0][len("philox4x"):])
        rounds = int(f[1])
        v = [int(x, 16) for x in f[2:]]
        got = philox4(bits, v[0:4], v[4:6], rounds)
        if got != v[6:10]:
            sys.exit(f"KAT failed: {line}\n  got {[hex(x) for x in got]}")
        n += 1
    print(f"Random123 KAT: {n} vectors pass (Philox4x32 and 4x64, 7 and 10 rounds)")


def check_numpy():
    """numpy.random.Philox is Philox4x64-10 with a 256-bit counter (4 words,
    word 0 lowest) that it increments *before* each block: a generator
    created with counter c outputs the words of philox(c + 1), then of
    philox(c + 2), ... Both facts are checked here, not assumed."""
    import numpy as np
    from numpy.random import Philox

    mask64 = (1 << 64) - 1
    rng = np.random.Generator(np.random.PCG64(20240521))  # just picks cases
    cases = [([0, 0, 0, 0], [0, 0]), ([mask64] * 4, [mask64] * 2),
             ([mask64, 0, 0, 0], [1, 2]), ([mask64, mask64, 0, 7], [3, 4])]
    for _ in range(40):
        cases.append(([int(x) for x in rng.integers(0, 2**64, 4, dtype=np.uint64)],
                      [int(x) for x in rng.integers(0, 2**64, 2, dtype=np.uint64)]))
    blocks = 3
    for ctr, key in cases:
        bg = Philox(counter=np.array(ctr, dtype=np.uint64), key=np.array(key, dtype=np.uint64))
        raw = [int(x) for x in bg.random_raw(4 * blocks)]
        c = sum(w << (64 * j) for j, w in enumerate(ctr))
        expect = []
        for b in range(blocks):
            cb = (c + 1 + b) % (1 << 256)
            expect += philox4(64, [(cb >> (64 * j)) & mask64 for j in range(4)], key, 10)
        if raw != expect:
            sys.exit(f"numpy Philox differs for ctr {ctr} key {key}:\n {raw}\n {expect}")
    print(f"numpy {np.__version__}: Philox.random_raw equals Philox4x64-10 of counter+1, +2, +3 "
          f"(256-bit increment before use) on {len(cases)} counter/key pairs")
    return np.__version__


# ---- the draw mapping (header comment of include/lowbit/detail/philox.hpp) ----

def stochastic_draw(seed, r, i):
    assert 1 <= r <= 32 and 0 <= seed < 2**64 and 0 <= i < 2**64
    w = 8 if r <= 8 else 16 if r <= 16 else 32
    k = 32 // w
    D = 4 * k
    G = 16 * D
    g, e = divmod(i, G)
    ctr = [e % 16, g & 0xFFFFFFFF, g >> 32, 0]
    key = [seed & 0xFFFFFFFF, seed >> 32]
    u = e // 16
    word, field = u % 4, u // 4
    out = philox4(32, ctr, key, 10)
    return (out[word] >> (w * field + w - r)) & ((1 << r) - 1)


def draw_cases():
    top = 2**64 - 1
    rs = [1, 7, 8, 9, 16, 17, 23, 32]
    cases = []
    # Indices 0..300 (group boundaries 64, 128, 256 included): all of them
    # for r = 8, every 11th for the other r; a sparser walk for two more seeds.
    for r in rs:
        cases += [(0, r, i) for i in range(0, 301, 1 if r == 8 else 11)]
    for seed in (1, 0x243F6A8885A308D3):
        cases += [(seed, r, i) for r in rs for i in range(0, 301, 37)]
    # Near 2^32 (the carry into lo32(g) does not matter there, but the split
    # of i does), near 2^32 G (the carry from lo32(g) into hi32(g) for each
    # G) and near 2^64 - 1, for seeds 0, 2^32 - 1, 2^32 and 2^64 - 1.
    near = [2**32 - 1, 2**32, 2**32 + 255]
    for g in (64, 128, 256):
        near += [2**32 * g - 1, 2**32 * g]
    near += [top - 255, top - 63, top - 16, top - 15, top - 1, top]
    for seed in (0, 0xFFFFFFFF, 0x100000000, top):
        cases += [(seed, r, i) for r in rs for i in near]
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check-only", action="store_true", help="check, do not write the data file")
    args = ap.parse_args()
    check_kat()
    try:
        np_version = check_numpy()
    except ImportError:
        sys.exit("numpy is needed to cross-check the 4x64 variant (python3-numpy); file not written")
    if args.check_only:
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "tests", "data", "philox_draws.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    cases = draw_cases()
    with open(path, "w") as f:
        f.write("# Draws of lowbit's stochastic-rounding mapping (include/lowbit/detail/philox.hpp):\n")
        f.write("# seed r index draw, decimal. Generated by scripts/philox_reference.py, a pure-Python\n")
        f.write("# Philox4x32-10 and mapping written from the definitions, checked against Random123's\n")
        f.write(f"# known-answer vectors; its shared 4xW code was cross-checked against numpy {np_version}'s\n")
        f.write("# Philox (4x64-10). Asserted by tests/test_philox.cpp.\n")
        for seed, r, i in cases:
            f.write(f"{seed} {r} {i} {stochastic_draw(seed, r, i)}\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(path, root)}")


if __name__ == "__main__":
    main()
