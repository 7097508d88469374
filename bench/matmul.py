"""fp32 matmul: tilecraft's naive and hand-written schedules against numpy, in one run.

For each size n (C = A @ B, all n x n): the naive schedule (the default loop nest),
the hand-written schedule below, and numpy's matmul (OpenBLAS), each timed as the
median of several runs after a warm-up, reported in GFLOP/s with the ratio to
numpy; and the compile time of each tilecraft kernel (te -> loops -> LLVM -> JIT).

The hand schedule is the classic CPU GEMM recipe in TVM's primitives:
  - B is packed (cache_read) once per column block of `nr` columns, so the
    inner loop streams it contiguously;
  - the output tile C.local (mr x nr, cache_write, "local") is accumulated in
    registers: k outside, the mr rows unrolled, the nr columns vectorized;
  - column blocks run in parallel on all cores.

A kernel whose C differs from numpy's stops the bench with exit status 1.

Usage: python bench/matmul.py [--sizes 256,512,1024] [--repeat N]
The last line printed is one JSON object with the headline figures (n = 1024).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

import tilecraft as tc
from tilecraft import te

from timing import timed  # bench/timing.py, beside this script


def matmul(n: int):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def naive_schedule(n: int):
    A, B, C = matmul(n)
    return te.create_schedule(C), [A, B, C]


def hand_schedule(n: int, mr: int = 4, nr: int = 64, kc: int = 256):
    A, B, C = matmul(n)
    s = te.create_schedule(C)
    CL = s.cache_write(C, "local")
    BB = s.cache_read(B, "global", [CL])
    i, j = s[C].op.axis
    io, jo, ii, ji = s[C].tile(i, j, mr, nr)
    s[C].reorder(jo, io, ii, ji)
    s[CL].compute_at(s[C], io)
    s[BB].compute_at(s[C], jo)
    ci, cj = s[CL].op.axis
    (ck,) = s[CL].op.reduce_axis
    s[CL].reorder(ck, ci, cj)
    s[CL].unroll(ci)
    s[CL].vectorize(cj)
    s[C].vectorize(ji)
    bk, bj = s[BB].op.axis
    s[BB].vectorize(bj)
    s[C].parallel(jo)
    return s, [A, B, C]


def build(make, n: int):
    t0 = time.perf_counter()
    s, args = make(n)
    f = tc.build(s, args)
    return f, time.perf_counter() - t0


def check(label: str, c: np.ndarray, expected: np.ndarray, n: int) -> None:
    """Exit non-zero when kernel `label` computed a wrong C."""
    try:
        np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3 * n**0.5)
    except AssertionError as e:
        sys.exit(f"bench/matmul.py: the {label} kernel computes a wrong C at n = {n}:{e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,512,1024")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    rng = np.random.default_rng(0)
    print(f"cores: {os.cpu_count()}")
    print(f"{'n':>6} {'kernel':>8} {'GFLOP/s':>9} {'x numpy':>8} {'compile s':>10}")
    headline = {}
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        flops = 2.0 * n**3
        expected = a @ b
        c_numpy = np.empty((n, n), np.float32)
        kernels = {"numpy": lambda: np.matmul(a, b, out=c_numpy)}
        compile_s = {}
        for label, make in (("naive", naive_schedule), ("hand", hand_schedule)):
            f, compile_s[label] = build(make, n)
            # A fresh output per kernel, poisoned with NaN: a kernel that writes
            # nothing (or misses part of C) fails its check instead of passing on
            # what another kernel left there.
            c = np.full((n, n), np.nan, np.float32)
            f(a, b, c)
            check(label, c, expected, n)
            kernels[label] = lambda f=f, c=c: f(a, b, c)
        slow = {"naive": kernels.pop("naive")}
        times = timed(kernels, args.repeat, rounds=3)
        # The naive loop nest takes seconds at n = 1024: time it less.
        times.update(timed(slow, max(1, min(args.repeat, int(2e8 / flops))), rounds=1))
        numpy_gflops = flops / times["numpy"] / 1e9
        for label in ("numpy", "naive", "hand"):
            gflops = flops / times[label] / 1e9
            cs = f"{compile_s[label]:.2f}" if label in compile_s else "-"
            print(f"{n:>6} {label:>8} {gflops:>9.1f} {gflops / numpy_gflops:>8.2f} {cs:>10}")
        gflops = flops / times["hand"] / 1e9
        headline[n] = {
            "gflops": round(gflops, 1),
            "numpy_gflops": round(numpy_gflops, 1),
            "ratio_to_numpy": round(gflops / numpy_gflops, 3),
            "compile_s": round(compile_s["hand"], 2),
        }
    n = 1024 if 1024 in headline else max(headline)
    print(json.dumps({"bench": "matmul", "n": n, **headline[n]}))


if __name__ == "__main__":
    main()
