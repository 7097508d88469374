"""bench/tuning.py's expected best of a random search at N trials, against a
simulation of that search over the same measurements."""

from __future__ import annotations

import os
import random
import statistics
import sys

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, os.path.abspath(BENCH))
from tuning import expected_best  # noqa: E402  (bench/tuning.py)


def test_expected_best_is_the_mean_of_random_searches_that_start_at_the_default():
    rng = random.Random(0)
    values = [5.0] + [rng.uniform(0, 10) for _ in range(40)]
    searches = [max([values[0], *rng.sample(values[1:], 7)]) for _ in range(100_000)]
    assert abs(expected_best(values, 8) - statistics.fmean(searches)) < 0.01


def test_expected_best_without_a_default_draws_every_trial():
    rng = random.Random(1)
    values = [rng.uniform(0, 10) for _ in range(30)]
    searches = [max(rng.sample(values, 6)) for _ in range(100_000)]
    assert abs(expected_best(values, 6, default_first=False) - statistics.fmean(searches)) < 0.01
    assert expected_best([1.0, 5.0], 1, default_first=False) == 3.0  # either one, half the time
    assert expected_best([1.0, 5.0], 2, default_first=False) == 5.0


def test_expected_best_edges():
    assert expected_best([], 64) == 0.0
    assert expected_best([3.0, 1.0, 2.0], 1) == 3.0  # the default alone
    assert expected_best([1.0, 2.0, 3.0], 64) == 3.0  # more trials than configs: all of them
    assert expected_best([4.0, 1.0, 2.0], 2) == 4.0  # nothing drawn beats the default
    assert expected_best([0.0, 1.0, 3.0], 2) == 2.0  # one of the two, each half the time
