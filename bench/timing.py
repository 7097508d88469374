"""The timer both benchmarks use: interleaved rounds, medians, pauses between blocks."""

from __future__ import annotations

import statistics
import time


def timed(fns: dict, repeat: int, rounds: int = 5, pause: float = 0.3) -> dict[str, float]:
    """Median seconds per call of each function, in interleaved rounds: a warm-up call
    and `repeat` timed calls per function per round, with a pause before each block
    (idle BLAS/OpenMP threads spin for a while after a call and would steal the
    cores from the next function)."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            time.sleep(pause)
            fn()
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in samples.items()}
