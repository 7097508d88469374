"""`Port`: one argument of a model's native entry point (the loop-level `@main`).

The list of ports is the model's signature: what `CompiledModel` checks a call
against, what the compile cache and a saved model's manifest record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

INPUT, WEIGHT, OUTPUT = "input", "weight", "output"


@dataclass(frozen=True)
class Port:
    """One argument of the model's native entry point."""

    name: str  # the input's / output's name, or the weight's key in the store
    kind: str  # INPUT | WEIGHT | OUTPUT
    shape: tuple[int, ...]  # the buffer's shape (a scalar is a one-element buffer)
    dtype: np.dtype
    user_shape: tuple[int, ...]  # the shape the caller sees (() for a scalar)

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "shape": list(self.shape),
                "dtype": self.dtype.name, "user_shape": list(self.user_shape)}

    @staticmethod
    def from_json(data: Mapping) -> Port:
        return Port(str(data["name"]), str(data["kind"]), tuple(int(n) for n in data["shape"]),
                    np.dtype(data["dtype"]), tuple(int(n) for n in data["user_shape"]))
