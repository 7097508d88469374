"""Tunable templates: a workload, its knob space, and the schedule a config makes.

A template is a function of the workload's shape giving the te computation, a
`Space` of knobs, and `schedule(config)`; a config prints as the te + sched IR it
produces (`sched_ir`), so a tuning record is replayable text. Candidates are
measured by `measure` in a worker process (autotune/measure.py): it builds the
config, runs it `repeat` times after a warm-up on random inputs, checks the output
against the untuned schedule's (a wrong answer is an error, not a time), and
returns the seconds.

Templates so far: `matmul` (C = A @ B, float32): tile sizes of i and j, split of k,
whether the inner j loop is vectorized and the outer i loop parallel, and whether
the k split sits outside the tile (loop order).
"""

from __future__ import annotations

import time

import numpy as np

from tilecraft.autotune.explore import Space


def _divisors(n: int, limit: int = 64) -> tuple[int, ...]:
    return tuple(d for d in (1, 2, 4, 8, 16, 32, 64) if d <= min(n, limit) and n % d == 0)


def matmul_space(n: int, m: int, k: int) -> Space:
    return Space({
        "tile_i": _divisors(n), "tile_j": _divisors(m, 64), "split_k": _divisors(k, 32),
        "vectorize": (0, 1), "parallel": (0, 1), "k_outside": (0, 1),
    })  # fmt: skip


def matmul_compute(n: int, m: int, k: int):
    from tilecraft import te

    A = te.placeholder((n, k), "float32", name="A")
    B = te.placeholder((k, m), "float32", name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return A, B, C


def matmul_schedule(n: int, m: int, k: int, config: dict | None):
    """The schedule of a config (None: the untuned default loop nest)."""
    from tilecraft import te

    A, B, C = matmul_compute(n, m, k)
    s = te.create_schedule(C)
    if config is None:
        return s, [A, B, C]
    i, j = s[C].op.axis
    (r,) = s[C].op.reduce_axis
    io, jo, ii, ji = s[C].tile(i, j, config["tile_i"], config["tile_j"])
    ro, ri = s[C].split(r, config["split_k"])
    if config["k_outside"]:
        s[C].reorder(io, jo, ro, ii, ri, ji)
    else:
        s[C].reorder(io, jo, ii, ro, ri, ji)
    if config["vectorize"] and config["tile_j"] > 1:
        s[C].vectorize(ji)
    if config["parallel"]:
        s[C].parallel(io)
    return s, [A, B, C]


TEMPLATES = {"matmul": (matmul_space, matmul_schedule)}


def workload_key(template: str, shape: tuple[int, ...]) -> str:
    return f"{template}{list(shape)}"


def sched_ir(template: str, shape: tuple[int, ...], config: dict) -> str:
    """The te + sched IR a config produces (what a record replays)."""
    from tilecraft.frontends.te.emit import build_module

    s, args = TEMPLATES[template][1](*shape, config)
    return str(build_module(s, args))


def lower(template: str, shape: tuple[int, ...], config: dict):
    """The loop IR of a config (what the cost model's features read)."""
    from tilecraft.api import lower_module

    s, args = TEMPLATES[template][1](*shape, config)
    return lower_module(s, args)


def measure(template: str, shape: list[int], config: dict | None, repeat: int = 5, seed: int = 0) -> list[float]:
    """Seconds of `repeat` runs of the config after a warm-up (in a worker process);
    AssertionError when its output differs from the untuned schedule's."""
    import tilecraft as tc

    schedule = TEMPLATES[template][1]
    s, args = schedule(*shape, config)
    f = tc.build(s, args)
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal([int(d) for d in t.shape]).astype(t.dtype) for t in args[:-1]]
    out = np.zeros([int(d) for d in args[-1].shape], args[-1].dtype)
    f(*inputs, out)
    if config is not None:
        s0, a0 = schedule(*shape, None)
        expected = np.zeros_like(out)
        tc.build(s0, a0)(*inputs, expected)
        if not np.allclose(out, expected, rtol=1e-4, atol=1e-4):
            raise AssertionError(f"wrong answer: max error {np.abs(out - expected).max():.3g}")
    costs = []
    for _ in range(repeat):
        start = time.perf_counter()
        f(*inputs, out)
        costs.append(time.perf_counter() - start)
    return costs
