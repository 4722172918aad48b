#!/usr/bin/env python3
"""Generates fp32_to_half.csv: fp32 bit patterns and what fp16 and bf16 store for them.

An independent reference for memplan's cast (src/core/cast.cpp), which must not be its own oracle:
- fp16: numpy's float16 conversion (`np.float32(x).astype(np.float16)`), which rounds to nearest
  even with subnormals and overflow to inf (IEEE 754 binary16).
- bf16: the documented round-to-nearest-even on the fp32 bits, as PyTorch's c10::BFloat16 and
  TensorFlow do it: bits + 0x7FFF + ((bits >> 16) & 1), keep the top 16 bits; NaN -> 0x7FC0 with
  the sign kept (only "is NaN" is checked for NaN rows).

Rows: `fp32_bits,fp16_bits,bf16_bits` in hex. The value set (fixed seed) mixes
  * random fp32 patterns with exponents around fp16's range (normal, subnormal, overflow edges),
  * fully random finite fp32 patterns,
  * exact midpoints between neighbouring fp16 and bf16 values, and one fp32 ulp either side
    (the ties-to-even cases),
  * hand-picked edges: +-0, +-inf, NaN, 65504, 65519.99, 65520, 2^-24, 2^-25, fp32 max/min.

Regenerate (Debian: apt-get install python3-numpy):
    /usr/bin/python3 tests/data/cast_reference/gen_cast_reference.py > tests/data/cast_reference/fp32_to_half.csv
"""
import sys

import numpy as np

rng = np.random.default_rng(20260601)


def f32_bits(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def bits_f32(b):
    return np.array([b], dtype=np.uint32).view(np.float32)[0]


def fp16_bits(b):
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        h = np.array([b], dtype=np.uint32).view(np.float32).astype(np.float16)
    return int(h.view(np.uint16)[0])


def bf16_bits(b):
    if (b & 0x7F800000) == 0x7F800000 and (b & 0x007FFFFF):
        return ((b >> 16) & 0x8000) | 0x7FC0
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


patterns = []

# Around fp16's range: biased fp32 exponents 100..145 (2^-27 .. 2^18), random mantissas and signs.
for _ in range(1200):
    e = int(rng.integers(100, 146))
    m = int(rng.integers(0, 1 << 23))
    s = int(rng.integers(0, 2))
    patterns.append((s << 31) | (e << 23) | m)

# Anywhere (finite).
for _ in range(500):
    e = int(rng.integers(0, 255))
    m = int(rng.integers(0, 1 << 23))
    s = int(rng.integers(0, 2))
    patterns.append((s << 31) | (e << 23) | m)

# fp16 ties: midpoint of fp16 patterns h and h+1 (exact in fp32), and one fp32 ulp either side.
for h in rng.integers(0, 0x7BFF, size=150):
    lo = np.array([h], dtype=np.uint16).view(np.float16).astype(np.float32)[0]
    hi = np.array([h + 1], dtype=np.uint16).view(np.float16).astype(np.float32)[0]
    mid = f32_bits((np.float64(lo) + np.float64(hi)) / 2)
    patterns += [mid, mid - 1, mid + 1, mid | 0x80000000]

# bf16 ties: low 16 bits exactly 0x8000, and either side.
for _ in range(150):
    top = int(rng.integers(0, 0x7F7F)) << 16
    patterns += [top | 0x8000, top | 0x7FFF, top | 0x8001]

edges = [0.0, -0.0, np.inf, -np.inf, 65504.0, 65519.99, 65520.0, -65520.0, 65536.0, 2.0**-24, 2.0**-25,
         2.0**-25 * 1.0000001, 2.0**-26, 3 * 2.0**-26, 2.0**-14, 2.0**-14 - 2.0**-25, 1.0, 1.0001, 0.1,
         70000.0, 1e-8, 3.4028234663852886e38, -3.4028234663852886e38, 1.1754943508222875e-38, 1e-45,
         3.3895313892515355e38, 3.3961e38]
patterns += [f32_bits(x) for x in edges]
patterns += [0x7FC00000, 0xFFC00000, 0x7F800001, 0x00000001, 0x80000001, 0x007FFFFF]

seen = set()
out = sys.stdout
out.write("fp32_bits,fp16_bits,bf16_bits\n")
for b in patterns:
    if b in seen:
        continue
    seen.add(b)
    out.write(f"0x{b:08x},0x{fp16_bits(b):04x},0x{bf16_bits(b):04x}\n")
