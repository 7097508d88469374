"""`Port`: one argument of a model's native entry point (the loop-level `@main`).

The list of ports is the model's signature: what `CompiledModel` checks a call
against, what the compile cache and a saved model's manifest record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tilecraft.utils.symbolic import SymExpr, parse

INPUT, WEIGHT, OUTPUT = "input", "weight", "output"


@dataclass(frozen=True)
class Port:
    """One argument of the model's native entry point."""

    name: str  # the input's / output's name, or the weight's key in the store
    kind: str  # INPUT | WEIGHT | OUTPUT
    # The buffer's shape (a scalar is a one-element buffer): ints, and a SymExpr
    # for a size known when the model runs (the native entry takes it after the
    # buffer's address).
    shape: tuple[int | SymExpr, ...]
    dtype: np.dtype
    user_shape: tuple[int | SymExpr, ...]  # the shape the caller sees (() for a scalar)

    @property
    def dynamic(self) -> tuple[int, ...]:
        """The dimensions of `shape` known only when the model runs."""
        return tuple(k for k, d in enumerate(self.shape) if not isinstance(d, int))

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "shape": _to_json(self.shape),
                "dtype": self.dtype.name, "user_shape": _to_json(self.user_shape)}

    @staticmethod
    def from_json(data: Mapping) -> Port:
        return Port(str(data["name"]), str(data["kind"]), _from_json(data["shape"]),
                    np.dtype(data["dtype"]), _from_json(data["user_shape"]))


def _to_json(shape: tuple) -> list:
    return [d if isinstance(d, int) else str(d) for d in shape]


def _from_json(shape) -> tuple[int | SymExpr, ...]:
    return tuple(parse(d) if isinstance(d, str) else int(d) for d in shape)
