"""Timing built functions as TVM's `time_evaluator` does."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class TimingResult:
    """What a time evaluator returns: seconds per call, `mean` over `results`."""

    results: tuple[float, ...]

    @property
    def mean(self) -> float:
        return float(np.mean(self.results))

    @property
    def median(self) -> float:
        return float(np.median(self.results))

    @property
    def min(self) -> float:
        return float(np.min(self.results))

    @property
    def max(self) -> float:
        return float(np.max(self.results))

    @property
    def std(self) -> float:
        return float(np.std(self.results))


def time_calls(call: Callable[[], None], number: int = 10, repeat: int = 1, min_repeat_ms: int = 0) -> TimingResult:
    """Seconds per call of `call`: after one warm-up call (which also compiles a
    new size), `repeat` measurements of at least `number` calls and `min_repeat_ms`."""
    if number < 1 or repeat < 1:
        raise ValueError("time_evaluator needs number >= 1 and repeat >= 1")
    call()
    results = []
    for _ in range(repeat):
        count, start = 0, time.perf_counter()
        while True:
            for _ in range(number):
                call()
            count += number
            elapsed = time.perf_counter() - start
            if elapsed * 1000 >= min_repeat_ms:
                break
        results.append(elapsed / count)
    return TimingResult(tuple(results))
