"""Choosing what to measure next: simulated annealing over a knob space, guided by
the cost model's scores, as AutoTVM's model-based tuner does.

A `Space` is named knobs, each a list of allowed values; a config picks one value
per knob. `next_batch(space, score, batch, measured, rng)` runs `chains` parallel
annealing walks (each step: change one knob of the current config; accept a worse
score with probability exp(delta / temperature), the temperature falling linearly
to zero), keeps the best-scored configs it saw, and returns `batch` configs never
measured before: a fraction `epsilon` of them drawn at random from the whole space
(exploration: the model is wrong where it has seen nothing), the rest the best by
predicted score. `score(configs)` scores a list of configs at once (the model's
predict on their features), higher = expected faster.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tilecraft.autotune.records import config_key


@dataclass(frozen=True)
class Space:
    """`valid(config) -> bool`, when given, is a constraint: only the configs it
    accepts are in the space (`size`, `random`, `neighbour` and `contains` honour it),
    e.g. the accelerator's tiles that fit its buffers. `normalize(config) -> config`,
    when given, maps a one-knob step of `neighbour` onto the valid config that means
    the same (conv2d: flipping `algorithm` resets the knobs the other algorithm
    used), so a walk can cross between parts of the space that differ in several
    knobs."""

    knobs: dict[str, tuple]
    valid: Callable[[dict], bool] | None = field(default=None, compare=False)
    normalize: Callable[[dict], dict] | None = field(default=None, compare=False)

    def __post_init__(self):
        for name, values in self.knobs.items():
            if not values:
                raise ValueError(f"knob {name} has no values")

    @functools.cached_property
    def _configs(self) -> list[dict]:
        """Every valid config (enumerated once; only for a constrained space)."""
        names = list(self.knobs)
        every = (dict(zip(names, values)) for values in itertools.product(*self.knobs.values()))
        return [c for c in every if self.valid(c)]

    @property
    def size(self) -> int:
        if self.valid is not None:
            return len(self._configs)
        return math.prod(len(v) for v in self.knobs.values())

    def contains(self, config: dict) -> bool:
        return (set(config) == set(self.knobs) and all(config[n] in v for n, v in self.knobs.items())
                and (self.valid is None or bool(self.valid(config))))  # fmt: skip

    def random(self, rng: np.random.Generator) -> dict:
        if self.valid is not None:
            if not self._configs:
                raise ValueError("no config satisfies the space's constraint")
            return dict(self._configs[rng.integers(len(self._configs))])
        return {name: values[rng.integers(len(values))] for name, values in self.knobs.items()}

    def neighbour(self, config: dict, rng: np.random.Generator) -> dict:
        """`config` with one knob (that has a choice) set to another of its values
        (a valid config; `config` itself when no such neighbour exists)."""
        if self.valid is not None:
            near = [{**config, n: v} for n, values in self.knobs.items() for v in values if v != config[n]]
            if self.normalize is not None:
                unique = {config_key(c): c for c in map(self.normalize, near)}
                unique.pop(config_key(config), None)
                near = list(unique.values())
            near = [c for c in near if self.valid(c)]
            return near[rng.integers(len(near))] if near else dict(config)
        names = [n for n, v in self.knobs.items() if len(v) > 1]
        if not names:
            return dict(config)
        name = names[rng.integers(len(names))]
        values = [v for v in self.knobs[name] if v != config[name]]
        return {**config, name: values[rng.integers(len(values))]}


def next_batch(
    space: Space,
    score: Callable[[Sequence[dict]], np.ndarray],
    batch: int,
    measured: set[str],
    rng: np.random.Generator,
    *,
    chains: int = 16,
    steps: int = 60,
    epsilon: float = 0.1,
    temperature: float = 1.0,
) -> list[dict]:
    """Up to `batch` configs not in `measured` (config keys) to measure next."""
    chosen: dict[str, dict] = {}
    explore = int(round(batch * epsilon))
    attempts = 0
    while len(chosen) < explore and attempts < 50 * batch and len(measured) + len(chosen) < space.size:
        attempts += 1
        config = space.random(rng)
        key = config_key(config)
        if key not in measured:
            chosen.setdefault(key, config)
    current = [space.random(rng) for _ in range(chains)]
    current_scores = np.asarray(score(current), dtype=np.float64)
    seen: dict[str, tuple[float, dict]] = {}
    for c, s in zip(current, current_scores):
        seen[config_key(c)] = (float(s), c)
    for step in range(steps):
        t = temperature * (1 - step / steps) + 1e-9
        proposals = [space.neighbour(c, rng) for c in current]
        proposal_scores = np.asarray(score(proposals), dtype=np.float64)
        for k, (p, s) in enumerate(zip(proposals, proposal_scores)):
            seen.setdefault(config_key(p), (float(s), p))
            if s >= current_scores[k] or rng.random() < math.exp((s - current_scores[k]) / t):
                current[k], current_scores[k] = p, s
    for key, (_, config) in sorted(seen.items(), key=lambda item: -item[1][0]):
        if len(chosen) >= batch:
            break
        if key not in measured:
            chosen.setdefault(key, config)
    while len(chosen) < batch and len(measured) + len(chosen) < space.size and attempts < 100 * batch:
        attempts += 1  # the walks saw too few new configs: fill with random ones
        config = space.random(rng)
        key = config_key(config)
        if key not in measured:
            chosen.setdefault(key, config)
    return list(chosen.values())
