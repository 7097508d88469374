"""Simulated annealing guided by scores (autotune/explore.py): batches of new configs,
no repeats, a share of random exploration, and better-scored configs than random."""

from __future__ import annotations

import numpy as np
import pytest

from tilecraft.autotune.explore import Space, next_batch
from tilecraft.autotune.records import config_key

SPACE = Space({"tile_x": (1, 2, 4, 8, 16, 32, 64), "tile_y": (1, 2, 4, 8, 16, 32, 64),
               "unroll": (0, 1), "order": ("ij", "ji")})  # fmt: skip


def score(configs):
    """A surface with one optimum: tile_x 16, tile_y 8, unrolled, ij."""
    return np.array([
        -abs(np.log2(c["tile_x"]) - 4) - abs(np.log2(c["tile_y"]) - 3) + c["unroll"] + (c["order"] == "ij")
        for c in configs
    ])  # fmt: skip


def test_batches_are_new_and_better_than_random():
    rng = np.random.default_rng(0)
    measured: set[str] = set()
    first = next_batch(SPACE, score, 16, measured, rng)
    assert len(first) == 16 and len({config_key(c) for c in first}) == 16
    measured |= {config_key(c) for c in first}
    second = next_batch(SPACE, score, 16, measured, rng)
    assert not {config_key(c) for c in second} & measured  # no repeats
    random = [SPACE.random(rng) for _ in range(16)]
    assert np.mean(score(first)) > np.mean(score(random)) + 1.0
    best = max(first, key=lambda c: score([c])[0])
    assert best == {"tile_x": 16, "tile_y": 8, "unroll": 1, "order": "ij"}


def test_a_small_space_is_exhausted_without_repeats():
    space = Space({"a": (1, 2), "b": ("x", "y", "z")})
    rng = np.random.default_rng(1)
    measured: set[str] = set()
    while True:
        batch = next_batch(space, lambda cs: np.zeros(len(cs)), 4, measured, rng)
        if not batch:
            break
        keys = {config_key(c) for c in batch}
        assert not keys & measured
        measured |= keys
    assert len(measured) == space.size == 6


def test_neighbours_change_one_knob_and_empty_knobs_are_refused():
    rng = np.random.default_rng(2)
    config = SPACE.random(rng)
    other = SPACE.neighbour(config, rng)
    assert sum(config[k] != other[k] for k in config) == 1
    with pytest.raises(ValueError, match="knob b has no values"):
        Space({"a": (1,), "b": ()})
