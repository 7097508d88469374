"""tilecraft in five minutes: a tensor expression, a schedule, loops, native code.

Run with `python3 tasks.py demo`. It writes a matmul as a TVM user would, prints
the te + sched IR and the loop IR the schedule produces, compiles it through LLVM,
checks the result against numpy and times both.
"""

from __future__ import annotations

import time

import numpy as np

import tilecraft as tc
from tilecraft import te


def main():
    n = 512
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")

    # The schedule: register tile C.local (4 x 64) per output block, B packed per
    # column block, columns vectorized, column blocks on all cores.
    s = te.create_schedule(C)
    CL = s.cache_write(C, "local")
    BB = s.cache_read(B, "global", [CL])
    i, j = s[C].op.axis
    io, jo, ii, ji = s[C].tile(i, j, 4, 64)
    s[C].reorder(jo, io, ii, ji)
    s[CL].compute_at(s[C], io)
    s[BB].compute_at(s[C], jo)
    ci, cj = s[CL].op.axis
    (ck,) = s[CL].op.reduce_axis
    s[CL].reorder(ck, ci, cj)
    s[CL].unroll(ci)
    s[CL].vectorize(cj)
    s[C].vectorize(ji)
    s[C].parallel(jo)

    print("== te + sched IR (what is computed, and how) ==")
    print(te.build_module(s, [A, B, C], "matmul"))
    print("\n== loop IR (tilecraft.lower) ==")
    print(tc.lower(s, [A, B, C], name="matmul"))

    t0 = time.perf_counter()
    f = tc.build(s, [A, B, C], name="matmul")
    print(f"\ncompiled in {time.perf_counter() - t0:.2f} s")

    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    print("result matches numpy")

    def best(fn, repeat=10):
        fn()
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return sorted(times)[len(times) // 2]

    flops = 2 * n**3
    t_tc = best(lambda: f(a, b, c))
    time.sleep(0.3)  # let our idle threads sleep before numpy's run (bench/matmul.py does the same)
    t_np = best(lambda: np.matmul(a, b, out=c))
    print(f"tilecraft {flops / t_tc / 1e9:6.1f} GFLOP/s   numpy {flops / t_np / 1e9:6.1f} GFLOP/s "
          "(median of 10; bench/matmul.py measures this properly)")

    try:
        f(a, b[:, :-1].copy(), c)
    except ValueError as e:
        print(f"a wrong array is refused before native code runs: {e}")


if __name__ == "__main__":
    main()
